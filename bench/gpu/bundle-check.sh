#!/bin/bash
# orrery on a GPU machine from a relocatable bundle, in about seven minutes of device time
# (issue 32; docs/tracer.md, "The relocatable bundle"): nothing is built there.
#
#   bash bench/gpu/bundle-check.sh BUNDLE.tar.gz [OUT]
#
# Made for the device machine of a session: `make bundle` here, then run it there with the
# tarball carried (it is under the ignored build folder), e.g.
#   run(command="bash bench/gpu/bundle-check.sh build-bundle/orrery-0.1.0-x86_64.tar.gz $OUT",
#       carry=["build-bundle/orrery-0.1.0-x86_64.tar.gz"], timeout_s=600)
#
# 1. The bundle extracted and moved; `orrery --version` with an empty environment; ldd of
#    orrery and of the tracer (no library "not found" but libcupti, which the job brings).
# 2. bench/gpu/nvtx-check.sh with the bundle's orrery (NVTX injection, steps, ops; ~1 min).
# 3. bench/gpu/run.sh with BUNDLE= (plain, orrery record, torch.profiler; its four checks),
#    ROUNDS=1, WARMUP=5, STEPS=10 unless set.
# 4. The tracer's log lines of the recorded run (driver query calls turned off, buffers
#    allocated on the job's threads, dropped records) and its driver calls by name.
# 5. bench/gpu/run.sh ops with BUNDLE= (the cost per op of ops none/nvtx/profiler against
#    plain and torch.profiler; OUT/ops/ops-results.json), OPS_ROUNDS=1, WARMUP=5, STEPS=15
#    unless set: five runs of gpt.py, about two minutes.
# Everything goes to OUT (default ./bundle-check), with log.txt; exits 1 when a part fails.
set -uo pipefail

bundle=${1:?usage: $0 BUNDLE.tar.gz [OUT]}
out=${2:-$PWD/bundle-check}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${PYTHON:-python3}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0))s] bundle-check: $*"; }
failed=()

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
work=$(mktemp -d)
tar -C "$work" -xzf "$bundle" || { say "cannot extract $bundle"; exit 1; }
mv "$work"/orrery-* "$work/moved"
orrery=$work/moved/bin/orrery

say "1: the bundle alone"
env -i PATH=/usr/bin:/bin "$orrery" --version || failed+=(version)
for f in "$orrery" "$work/moved/lib/orrery/liborrery-tracer.so"; do
	if ldd "$f" | grep "not found" | grep -v libcupti; then failed+=("ldd $(basename "$f")"); fi
done
if [[ ! -e /usr/local/cuda/lib64/libcupti.so.13 ]]; then
	# the tracer needs libcupti.so.13: PyTorch's wheel has one
	c=$("$python" -c 'import glob, os, nvidia
print(sorted(glob.glob(os.path.join(os.path.dirname(nvidia.__path__[0]), "nvidia", "**",
                                    "libcupti.so.13*"), recursive=True))[0])' 2>/dev/null)
	say "libcupti from the wheel: ${c:-none}"
	if [[ -n $c ]]; then
		LD_LIBRARY_PATH=$(dirname "$c")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
	fi
fi

say "2: nvtx-check.sh"
timeout 120 bash "$root/bench/gpu/nvtx-check.sh" "$orrery" "$out/nvtx" || failed+=(nvtx-check)

say "3: run.sh from the bundle"
BUNDLE=$work/moved OUT=$out/run ROUNDS=${ROUNDS:-1} WARMUP=${WARMUP:-5} STEPS=${STEPS:-10} \
	timeout 240 bash "$root/bench/gpu/run.sh" || failed+=(run.sh)

say "4: the tracer's log and driver calls"
cat "$out"/run/run-1/tracer-*.log 2>/dev/null
if [[ -f $out/run/run-1.json ]]; then
	"$python" - "$out/run/run-1.json" <<'EOF'
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
c = collections.Counter(e["name"] for e in ev if e.get("cat") == "cuda_driver")
print("driver calls recorded:", sum(c.values()), dict(c.most_common(10)))
EOF
fi

say "5: run.sh ops from the bundle"
BUNDLE=$work/moved OUT=$out/ops ROUNDS=${OPS_ROUNDS:-1} WARMUP=${WARMUP:-5} STEPS=${STEPS:-15} \
	timeout 240 bash "$root/bench/gpu/run.sh" ops || failed+=(ops)
rm -f "$out"/run/torch-trace-*.json "$out"/run/run-1.json # large; run.tar.zst keeps the run
rm -f "$out"/ops/torch-trace-*.json
rm -rf "$work"
say "done: ${failed[*]:-every part passed}"
((${#failed[@]} == 0))
