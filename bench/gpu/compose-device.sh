#!/bin/bash
# The fidelity of orrery compose on a GPU from a relocatable bundle, in under five minutes
# of device time (issue 34, item 6; docs/orrery-compose.md): nothing is built there.
#
#   bash bench/gpu/compose-device.sh BUNDLE.tar.gz TRACES [OUT]
#
# TRACES holds kineto/astrasim-megatron-tp8 and et/astrasim-megatron-tp8 (a copy of the
# shared traces'; the device machine has no ../shared).  Made for a session's device
# machine: `make bundle` (or scripts/bundle.sh BUILD_DIR) and the copy here, both under an
# ignored build folder, carried, e.g.
#   mkdir -p build-x/traces/kineto build-x/traces/et
#   cp -r ../shared/traces/kineto/astrasim-megatron-tp8 build-x/traces/kineto/
#   cp -r ../shared/traces/et/astrasim-megatron-tp8 build-x/traces/et/
#   run(command="bash bench/gpu/compose-device.sh build-x/orrery-0.1.0-x86_64.tar.gz
#       build-x/traces $OUT", carry=["build-x"], timeout_s=420)
#
# It runs bench/gpu/run.sh compose with BUNDLE= (WARMUP=5, STEPS=10 and MEGA_STEPS=3
# unless set): gpt.py under torch.profiler with an execution trace of its first measured
# step; the benchmark composed from them run with --profile; compose-check.py: the median
# step within 5 % of gpt.py's profiled steps recorded without the observer, each kernel
# class's GPU time within 10 %, the same kernel counts per class; then the A100 Megatron
# TP=8 rank 0 composed and run here with --emulate-comms, its compute classes beside the
# A100's scaled by the hardware table.  OUT (default ./compose-device) gets log.txt and
# compose-results.json with the run's small files.  The GPT's comparison is written
# before the Megatron rank runs, so that a failure there or the time limit keeps it.
# Exits by compose-results.json alone: 0 every check passes, 1 a check failed, 2 nothing
# was compared (no compose-results.json: log.txt says which step failed, or that the
# time ran out).
set -uo pipefail

bundle=${1:?usage: $0 BUNDLE.tar.gz TRACES [OUT]}
traces=${2:?usage: $0 BUNDLE.tar.gz TRACES [OUT]}
out=${3:-$PWD/compose-device}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${PYTHON:-python3}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0))s] compose-device: $*"; }

[[ -d $traces/kineto/astrasim-megatron-tp8 && -d $traces/et/astrasim-megatron-tp8 ]] ||
	{ say "$traces holds no kineto/ and et/astrasim-megatron-tp8"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
say "run.sh compose from the bundle"
BUNDLE=$(cd "$(dirname "$bundle")" && pwd)/$(basename "$bundle") \
	ORR_SHARED_TRACES=$(cd "$traces" && pwd) OUT=$out/run WARMUP=${WARMUP:-5} \
	STEPS=${STEPS:-10} MEGA_STEPS=${MEGA_STEPS:-3} PYTHON=$python \
	timeout 270 bash "$root/bench/gpu/run.sh" compose
rc=$?
case $rc in
124) say "run.sh compose: out of time (270 s)" ;;
*) say "run.sh compose: exit $rc" ;;
esac
if [[ -f $out/run/compose-results.json ]]; then
	"$python" -c 'import json, sys
checks = json.load(open(sys.argv[1]))["checks"]
print("checks:", ", ".join("%s %s" % (k, "ok" if v else "FAILED") for k, v in checks.items()))
sys.exit(0 if all(checks.values()) else 1)' "$out/run/compose-results.json"
	rc=$?
else
	say "nothing was compared: no compose-results.json"
	rc=2
fi
# what comes back: the results and the small files, not the traces and benchmarks
for f in compose-results.json compose.json bench-run.json mega-compose.json mega-run.json \
	torch.jsonl; do
	[[ -f $out/run/$f ]] && cp "$out/run/$f" "$out/"
done
rm -rf "$out/run" "$out/.orrery-bundle"
say "done"
exit "$rc"
