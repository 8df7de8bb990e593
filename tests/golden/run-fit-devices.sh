#!/bin/bash
# A trace whose ranks ran on different GPUs (traces/samples/tiny-2rank with rank 1's
# device renamed an A100): `orrery fit --rank 1 -o` writes costs whose GEMM and kernel
# models are over rank 1's GPU, the one the file names as its device, and they read
# back (the costs reader refuses a model of another GPU than the device's).  Before,
# the models took the trace's first GPU (rank 0's H100) under rank 1's A100 device.
# In suite `golden`, from the source root with $ORRERY set.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

cp -r traces/samples/tiny-2rank "$work/mixed" || fail "cannot copy the sample"
sed -i 's/NVIDIA H100 80GB HBM3/NVIDIA A100-SXM4-80GB/' "$work/mixed/rank-1.trace.json"
grep -q 'A100-SXM4-80GB' "$work/mixed/rank-1.trace.json" || fail "rank 1's device not renamed"

model=(--layers 2 --hidden 512 --heads 8 --seq 512 --global-batch 8 --dp 1)
for rank in 0 1; do
	run fit --rank "$rank" -o "$work/c$rank.json" "$work/mixed"
	expect_rc 0
	python3 - "$work/c$rank.json" "$rank" <<'PY' || fail "rank $rank: the models are not over the device's GPU"
import json, sys
c = json.load(open(sys.argv[1]))
want = {"0": "h100-sxm", "1": "a100-80gb-sxm"}[sys.argv[2]]
got = [c["device"].get("spec")] + [c[m]["spec"] for m in ("gemm", "kernels") if c[m]["fitted"]]
print(sys.argv[2], got, file=sys.stderr)
sys.exit(len(got) < 3 or any(g != want for g in got))
PY
	gpu=$([[ $rank == 0 ]] && echo h100-sxm || echo a100-80gb-sxm)
	run estimate --costs "$work/c$rank.json" --gpu "$gpu" "${model[@]}"
	expect_rc 0
	expect_in out "estimated"
done
# A rank whose file names no device (no deviceProperties): the job's GPU, the one rank 0
# names, is its device and its models' (before, the models were over it and the device
# named none, which the costs reader now refuses: nothing checked those models against
# the estimated GPU).
cp -r traces/samples/tiny-2rank "$work/nodev" || fail "cannot copy the sample"
python3 - "$work/nodev/rank-1.trace.json" <<'PY' || fail "cannot drop rank 1's devices"
import json, sys
d = json.load(open(sys.argv[1]))
del d["deviceProperties"]
json.dump(d, open(sys.argv[1], "w"))
PY
run fit --rank 1 -o "$work/nodev.json" "$work/nodev"
expect_rc 0
python3 - "$work/nodev.json" <<'PY' || fail "rank 1 without a device: not the job's GPU"
import json, sys
c = json.load(open(sys.argv[1]))
got = [c["device"].get("spec")] + [c[m]["spec"] for m in ("gemm", "kernels") if c[m]["fitted"]]
print(got, file=sys.stderr)
sys.exit(len(got) < 3 or any(g != "h100-sxm" for g in got))
PY
run estimate --costs "$work/nodev.json" --gpu h100-sxm "${model[@]}"
expect_rc 0
expect_in out "estimated"
run estimate --costs "$work/nodev.json" --gpu a100-80gb-sxm "${model[@]}"
expect_rc 1
expect_in err "its costs were fitted on h100-sxm, not a100-80gb-sxm"
echo "ok: each rank's costs are over its own GPU (the job's where it names none) and read back"
