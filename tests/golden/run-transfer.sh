#!/bin/bash
# Costs of another GPU (suite golden), from the source root with $ORRERY set: the costs
# of the H200 GPT of ../shared/whatif/h200-gpt (orrery fit -o) transferred to an A100
# (docs/orrery-estimate.md, "Costs of another GPU"; 77 without ../shared):
#
#   run-transfer.sh estimate  without --transfer-costs the costs of another GPU are
#                             refused, and the message names the option; with it the
#                             estimate says where the costs come from, times every GEMM
#                             and kernel by a measured efficiency over the A100's
#                             roofline (the GPU's time, --launch-us 0: slower than the
#                             H200's own estimate, slower than the A100's peaks) and its
#                             collectives by the hardware table, and keeps the launch
#                             thread's time; the costs' own GPU with --transfer-costs is
#                             the estimate without it
#   run-transfer.sh whatif    a sweep with transferred costs says so under its best
#                             configuration
#   run-transfer.sh usage     --transfer-costs without --costs or --gpu is a usage error;
#                             with a trace it is refused
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

base=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt/base.json.gz
needs "$base"
costs=$work/h200.costs.json
model=(--layers 4 --hidden 1024 --heads 16 --seq 1024 --global-batch 16 --dp 2)

"$orrery" fit -o "$costs" "$base" >/dev/null 2>"$work/fit.err" ||
	{ cat "$work/fit.err" >&2; fail "orrery fit -o $costs $base failed"; }

# The JSON of the last run saved as $work/NAME.json.
keep() { cp "$work/out" "$work/$1.json"; }

case ${1:-} in
estimate)
	run estimate --gpu a100-80gb-sxm --costs "$costs" "${model[@]}"
	expect_rc 1
	expect_in err "its costs were fitted on h200-sxm, not a100-80gb-sxm"
	expect_in err "transfer these (--transfer-costs"
	run estimate --format=json --gpu a100-80gb-sxm --costs "$costs" --transfer-costs "${model[@]}"
	expect_rc 0
	keep moved
	run estimate --format=json --gpu h200-sxm --costs "$costs" "${model[@]}"
	expect_rc 0
	keep own
	run estimate --format=json --gpu h200-sxm --costs "$costs" --transfer-costs "${model[@]}"
	expect_rc 0
	keep own-flag
	run estimate --format=json --gpu a100-80gb-sxm "${model[@]}"
	expect_rc 0
	keep peaks
	# the GPU's time alone (these steps are bound by the launch thread the costs carry)
	run estimate --format=json --gpu a100-80gb-sxm --costs "$costs" --transfer-costs \
		--launch-us 0 "${model[@]}"
	expect_rc 0
	keep moved-gpu
	run estimate --format=json --gpu h200-sxm --costs "$costs" --launch-us 0 "${model[@]}"
	expect_rc 0
	keep own-gpu
	python3 - "$work" <<'PY' || fail "the JSON checks failed"
import json, sys
w = sys.argv[1]
moved, own, flag, peaks, moved_gpu, own_gpu = (
    json.load(open("%s/%s.json" % (w, n)))
    for n in ("moved", "own", "own-flag", "peaks", "moved-gpu", "own-gpu"))
s = moved["sources"]
assert moved["gpu"] == "a100-80gb-sxm" and s["costs_fitted_on"] == "h200-sxm", s
# every GEMM and kernel by a measured efficiency, none at the peaks or by a family
assert s["gemm"]["roofline"] > 0 and s["gemm"]["hardware_table"] == 0, s["gemm"]
assert s["kernels"]["roofline"] > 0 and s["kernels"]["hardware_table"] == 0, s["kernels"]
assert s["gemm"]["fit"] == 0 and s["kernels"]["fit"] == 0, s
# the all-reduces of dp 2 by the A100's hardware table, not by the H200 trace
c = s["collectives"]
assert c["fit"] == 0 and c["measured_bandwidth"] == 0 and c["hardware_table"] > 0, c
# the A100's roofline: slower than the H200 with the same efficiencies (the A100's
# dense bf16 peak is 312 TFLOP/s, the H200's 989), and than the A100's own peaks
a, h = moved_gpu["iteration_ns"], own_gpu["iteration_ns"]
assert a > 1.5 * h, (a, h)
assert a > peaks["iteration_ns"], (a, peaks["iteration_ns"])
# the launch thread's time is the host's: kept
assert moved["sources"]["launch_ns"] == own["sources"]["launch_ns"], moved["sources"]
# nothing to transfer on the costs' own GPU
assert "costs_fitted_on" not in own["sources"] and "costs_fitted_on" not in flag["sources"]
assert flag["iteration_ns"] == own["iteration_ns"], (flag["iteration_ns"], own["iteration_ns"])
PY
	run estimate --gpu a100-80gb-sxm --costs "$costs" --transfer-costs "${model[@]}"
	expect_rc 0
	expect_in out "  transferred  the costs were fitted on h200-sxm: GEMMs and kernels at their measured efficiency over the a100-80gb-sxm's roofline, collectives by its hardware table (--transfer-costs)"
	;;
whatif)
	run whatif --gpus 8 --gpu a100-80gb-sxm --costs "$costs" --transfer-costs --no-progress \
		--layers 4 --hidden 1024 --heads 16 --seq 1024 --global-batch 16
	expect_rc 0
	expect_in out "  transferred  the costs were fitted on h200-sxm"
	run whatif --gpus 8 --gpu a100-80gb-sxm --costs "$costs" --no-progress \
		--layers 4 --hidden 1024 --heads 16 --seq 1024 --global-batch 16
	expect_rc 1
	expect_in err "transfer these (--transfer-costs"
	;;
usage)
	run estimate --gpu a100-80gb-sxm --transfer-costs "${model[@]}"
	expect_rc 2
	expect_in err "--transfer-costs needs the costs (--costs FILE) and the GPU to transfer them to (--gpu NAME)"
	run estimate --costs "$costs" --transfer-costs "${model[@]}"
	expect_rc 2
	expect_in err "--transfer-costs needs the costs (--costs FILE) and the GPU"
	run estimate --gpu a100-80gb-sxm --costs "$costs" --transfer-costs --layers 24 "$base"
	expect_rc 1
	expect_in err "--transfer-costs: a trace is timed on its own GPU; to estimate another, describe the model without the trace (--gpu, --costs)"
	run estimate --gpu no-such-gpu --costs "$costs" --transfer-costs "${model[@]}"
	expect_rc 1
	expect_in err "--gpu no-such-gpu: no such GPU in the hardware table"
	;;
*)
	fail "usage: run-transfer.sh estimate|whatif|usage"
	;;
esac
exit 0
