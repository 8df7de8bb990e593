#!/bin/bash
# orrery summary on cases that once came out wrong (suite golden), from the source root;
# CASE is
#   collectives  --steps and --ranks select the collectives too: tiny-2rank's step 10 of
#                rank 1 holds one instance of each of its two all-reduces (every step's
#                three were counted)
#   straggler    a rank whose steps hold no collective (tiny-2rank's rank 1 without its
#                NCCL kernels, as rank 0 of three) waits for no one and is no straggler;
#                rank 2 (tiny-2rank's rank 1) is, as in tiny-2rank (rank 0 was named)
#   unlaunched   idle before a collective kernel no call in the trace launched is other
#                throughout, not kernel wait (docs/orrery-summary.md)
#   queue        a stream's queue of five kernels launched 2e15 us before they start:
#                mean 5 (depth x time overflowed int64: -4.2)
#   counter      a counter of two samples of 1e308: mean 1e308 (their sum was inf)
#   empty-rank   tiny-2rank with rank 1's events gone but its metadata: rank 0's three
#                rank-steps, and no row of step -1 and 0 ns for rank 1
#   copy-past    a 5 ms copy launched in the first of two 1 ms steps: 0.8 ms of it in
#                step 1, 1 ms in step 2 (its stream's), the rest in none (5 ms counted in
#                step 1, a stream busy 5 ms in a 1 ms step)
#   comm-classes with --comm matching tiny-2rank's GEMMs, the kernel classes count them as
#                communication, as the launch delays' classes do (6 and 96 against 90
#                and 12 GEMMs were in the two tables)
# 77 without python3.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

case=${1:?usage: $0 collectives|straggler|unlaunched|queue|counter|empty-rank|copy-past|comm-classes}
tiny=traces/samples/tiny-2rank
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }

# json_get EXPR: evaluates EXPR on the JSON document d of stdout, prints the result.
json_get() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$work/out"
}

case $case in
collectives)
	run summary --format=json --steps 10 --ranks 1 "$tiny"
	expect_rc 0
	[[ $(json_get "[c['count'] for c in d['collectives']]") == "[1, 1]" ]] ||
		{ show; fail "the collectives of one rank-step: $(json_get "d['collectives']")"; }
	run summary --format=json "$tiny"
	[[ $(json_get "[c['count'] for c in d['collectives']]") == "[3, 3]" ]] ||
		{ show; fail "the collectives of every step"; }
	;;
straggler)
	mkdir "$work/job"
	python3 - "$tiny" "$work/job" <<'PY' || fail "cannot write the job"
import json, sys
src, out = sys.argv[1:3]
for new, old in ((1, 0), (2, 1)):
    d = json.load(open("%s/rank-%d.trace.json" % (src, old)))
    d["distributedInfo"].update(rank=new, world_size=3)
    for pg in d["distributedInfo"]["pg_config"]:
        pg["ranks"] = [1, 2]
    json.dump(d, open("%s/rank-%d.trace.json" % (out, new), "w"))
d = json.load(open("%s/rank-1.trace.json" % src))
d["distributedInfo"].update(rank=0, world_size=3)
ev = d["traceEvents"]
drop = {e["args"].get("correlation") for e in ev
        if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()}
d["traceEvents"] = [e for e in ev if not (
    (e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower())
    or (e.get("cat") in ("cuda_runtime", "cuda_driver")
        and e.get("args", {}).get("correlation") in drop)
    or (e.get("cat") == "ac2g" and e.get("id") in drop)
    or e.get("name") == "record_param_comms")]
json.dump(d, open("%s/rank-0.trace.json" % out, "w"))
PY
	run summary "$work/job"
	expect_rc 0
	expect_in out "straggler: rank 2: its collectives wait 0.000 ms per step"
	;;
unlaunched)
	python3 - "$work/t.json" <<'PY' || fail "cannot write the trace"
import json, sys
ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
       "ts": 50, "dur": 2, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7, "ts": 100,
       "dur": 100, "args": {"correlation": 1, "stream": 7, "device": 0}},
      {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 50, "cat": "ac2g", "name": "ac2g"},
      {"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 100, "cat": "ac2g", "name": "ac2g",
       "bp": "e"},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",
       "pid": 0, "tid": 7, "ts": 500, "dur": 100, "args": {"stream": 7, "device": 0}}]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
	run summary --format=json "$work/t.json"
	expect_rc 0
	i="[(s['idle']['idle_ns'], s['idle']['kernel_wait_ns'], s['idle']['other_ns']) for s in d['steps']]"
	[[ $(json_get "$i") == "[(350000, 0, 350000)]" ]] ||
		{ show; fail "the gap before the collective: $(json_get "$i")"; }
	;;
queue)
	python3 - "$work/t.json" <<'PY' || fail "cannot write the trace"
import json, sys
ev = []
for i in range(5):
    c = 100 + i
    ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": i, "dur": 0.5, "args": {"correlation": c}},
           {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2e15 + i,
            "dur": 0.5, "args": {"correlation": c, "stream": 7, "device": 0}},
           {"ph": "s", "id": c, "pid": 1, "tid": 1, "ts": i, "cat": "ac2g", "name": "ac2g"},
           {"ph": "f", "id": c, "pid": 0, "tid": 7, "ts": 2e15 + i, "cat": "ac2g",
            "name": "ac2g", "bp": "e"}]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
	run summary --format=json "$work/t.json"
	expect_rc 0
	q=$(json_get "d['streams_idle'][0]['queue_mean']")
	python3 -c "import sys; assert 4.9 < float(sys.argv[1]) <= 5" "$q" ||
		{ show; fail "queue mean $q, not about 5"; }
	;;
counter)
	cat >"$work/t.json" <<'JSON'
{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 10, "args": {"stream": 7}},
{"ph": "C", "name": "GPU metrics", "pid": 0, "tid": 0, "ts": 1, "args": {"big": 1e308}},
{"ph": "C", "name": "GPU metrics", "pid": 0, "tid": 0, "ts": 2, "args": {"big": 1e308}}]}
JSON
	run summary --format=json "$work/t.json"
	expect_rc 0
	[[ $(json_get "d['counters'][0]['mean']") == 1e+308 ]] ||
		{ show; fail "the counter's mean: $(json_get "d['counters'][0]['mean']")"; }
	;;
empty-rank)
	mkdir "$work/job"
	cp "$tiny/rank-0.trace.json" "$work/job/"
	python3 - "$tiny/rank-1.trace.json" "$work/job/rank-1.trace.json" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if e.get("ph") == "M"]
json.dump(d, open(sys.argv[2], "w"))
PY
		fail "cannot write the job"
	run summary --format=json "$work/job"
	expect_rc 0
	[[ $(json_get "[(s['rank'], s['step']) for s in d['steps']]") == "[(0, 10), (0, 11), (0, 12)]" ]] ||
		{ show; fail "the rank-steps: $(json_get "[(s['rank'], s['step']) for s in d['steps']]")"; }
	;;
copy-past)
	python3 - "$work/t.json" <<'PY' || fail "cannot write the trace"
import json, sys
def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}
def flow(c, launch, start, stream):
    return [{"ph": "s", "id": c, "pid": 1, "tid": 1, "ts": launch, "cat": "ac2g", "name": "ac2g"},
            {"ph": "f", "id": c, "pid": 0, "tid": stream, "ts": start, "cat": "ac2g",
             "name": "ac2g", "bp": "e"}]
ev = [x("user_annotation", "ProfilerStep#1", 1, 1, 1000, 1000),
      x("user_annotation", "ProfilerStep#2", 1, 1, 2000, 1000),
      x("cuda_runtime", "cudaMemcpyAsync", 1, 1, 1100, 2, correlation=1000),
      x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 0, 13, 1200, 5000, device=0, stream=13,
        correlation=1000),
      x("cuda_runtime", "cudaLaunchKernel", 1, 1, 2100, 2, correlation=1001),
      x("kernel", "gemm_k", 0, 7, 2200, 100, device=0, stream=7, correlation=1001)]
ev += flow(1000, 1100, 1200, 13) + flow(1001, 2100, 2200, 7)
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
	run summary --format=json "$work/t.json"
	expect_rc 0
	[[ $(json_get "[(s['step'], s['copy_ns'], s['busy_ns']) for s in d['steps']]") == \
		"[(1, 800000, 800000), (2, 1000000, 1000000)]" ]] ||
		{ show; fail "the copy's time per step: $(json_get "d['steps']")"; }
	run summary --format=json --steps 1 "$work/t.json"
	[[ $(json_get "[(s['stream'], s['busy_ns']) for s in d['streams']]") == "[(13, 800000)]" ]] ||
		{ show; fail "the copy's stream in step 1: $(json_get "d['streams']")"; }
	;;
comm-classes)
	run summary --format=json --comm 'sm90_xmma_gemm*' "$tiny"
	expect_rc 0
	a=$(json_get "[(c['class'], c['tasks']) for c in d['kernel_classes']]")
	b=$(json_get "[(c['class'], c['tasks']) for c in d['launch_delay']]")
	[[ $a == "$b" && $a == *"('communication', 96)"* ]] ||
		{ show; fail "kernel classes $a, launch delays' $b"; }
	;;
*) fail "unknown case '$case'" ;;
esac
echo ok >&2
