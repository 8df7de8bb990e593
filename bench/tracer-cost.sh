#!/bin/bash
# The tracer's cost without a GPU (docs/performance.md, "The tracer's cost"); `make bench`
# runs it.
#
#   bench/tracer-cost.sh
#
# 1. bench-tracer (bench/bench-tracer.c), BENCH_RUNS times: the writer thread's CPU time
#    per CUPTI record and per step of a synthetic stream shaped as a step of
#    bench/gpu/gpt.py on the H200 (as CUPTI now delivers it, with the driver queries it
#    delivered before they were turned off, and with those written as before), and on the
#    job's threads the buffer request and completion and the first write of 4 MiB of
#    records into a reserved buffer against a freshly allocated one.
# 2. An NVTX range's cost to the job: `nvtx-job bench N` (tests/golden/nvtx, built with
#    the tests) times N push/pop pairs of an emit_nvtx-like name, plain and under
#    `orrery record` (the tracer as NVTX's injection, its writer draining beside it).
# Prints the medians (with their ranges), then one JSON line.
#
# Environment: BUILD_DIR (default build), BENCH_RUNS (default 5), BENCH_NVTX_PAIRS
# (default 200000).
set -euo pipefail

cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
runs=${BENCH_RUNS:-5}
pairs=${BENCH_NVTX_PAIRS:-200000}
bench=$build/bench/bench-tracer
job=$build/tests/golden/nvtx-job
orrery=$build/cli/orrery

die() {
	echo "bench/tracer-cost.sh: error: $*" >&2
	exit 1
}

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "BENCH_NVTX_PAIRS must be a positive integer, not '$pairs'"
[[ -f $build/build.ninja ]] || die "'$build' is not configured: run 'make build' first"
if [[ ! -x $bench ]]; then
	echo "bench/tracer-cost.sh: no $bench (the tracer is built only with CUPTI): skipped" >&2
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for r in $(seq "$runs"); do
	"$bench" --json >>"$work/bench.jsonl"
done
if [[ -x $job && -x $orrery ]]; then
	for r in $(seq "$runs"); do
		"$job" bench "$pairs" | awk '{ print $1 }' >>"$work/plain.txt"
		(cd "$work" && env -u CUDA_INJECTION64_PATH "$OLDPWD/$orrery" record -q \
			-o "run-$r" -- "$OLDPWD/$job" bench "$pairs") | awk '{ print $1 }' >>"$work/traced.txt"
	done
fi

python3 - "$work" <<'EOF'
import json, os, statistics, sys
work = sys.argv[1]
runs = [json.loads(l) for l in open(os.path.join(work, "bench.jsonl"))]
med = statistics.median
def span(v):
    return "%.0f-%.0f" % (min(v), max(v))
out = {"runs": len(runs), "steps": runs[0]["steps"], "writer": [], "job_threads": {}}
for i, w in enumerate(runs[0]["writer"]):
    ns = [r["writer"][i]["ns_per_record"] for r in runs]
    ms = [r["writer"][i]["cpu_ms_per_step"] for r in runs]
    out["writer"].append({"stream": w["stream"], "records_per_step": w["records_per_step"],
                          "events_per_step": w["events"] // runs[0]["steps"],
                          "ns_per_record": med(ns), "cpu_ms_per_step": med(ms)})
    print("writer, %s: %d records per step, %.0f ns per record (%s), %.3f ms CPU per step"
          % (w["stream"], w["records_per_step"], med(ns), span(ns), med(ms)))
for k in runs[0]["job_threads"]:
    out["job_threads"][k] = med([r["job_threads"][k] for r in runs])
j = out["job_threads"]
print("job's threads: buffer request + completion %.0f ns; 4 MiB of records into a reserved "
      "buffer %.0f us, into one allocated at the request %.0f us"
      % (j["buffer_handoff_ns"], j["fill_reserved_us"], j["fill_fresh_us"]))
nvtx = {}
for name in ("plain", "traced"):
    p = os.path.join(work, name + ".txt")
    if os.path.exists(p):
        v = [float(x) for x in open(p).read().split()]
        nvtx[name] = med(v)
        print("NVTX push/pop pair, %s: %.1f ns (%s)" % (name, med(v), span(v)))
if nvtx:
    out["nvtx_pair_ns"] = nvtx
print(json.dumps(out))
EOF
