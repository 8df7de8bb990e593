#!/bin/bash
# The tracer as NVTX's injection, without a GPU, run from the source root with $ORRERY set:
#
#   run-record-nvtx.sh CASE NVTX_JOB
#
# NVTX_JOB is tests/golden/nvtx/nvtx-job.c built with its two shared libraries, each
# with its own NVTX3 instance (one pushes ProfilerStep#N, the other runs emit_nvtx ops on
# two threads of its own per step).  Each case records it with `orrery record --skip 2
# --steps 3` and checks the .orr, converted to Chrome JSON:
#
#   window     the job never initializes CUDA: its file holds exactly steps 2-4, and
#              every op, range, mark and registered-string range of both threads of
#              each of those steps, with emit_nvtx's sequence numbers and shapes
#   late-cuda  the same when InitializeInjection() (CUDA's entry, as cuInit calls it)
#              comes after the first NVTX ranges: before the window, and inside it
#   nccl       NCCL's ranges with their extended payloads: the communicator created
#              before the window is written with its size, one all-reduce per step
#   threads    5,000 ops a thread and step, no window: every one kept, none dropped
#   child      a process the job started, with its environment (RANK and the tracer
#              included), writes a second file of rank 0 that recorded no steps: the
#              run reads as the job's one rank, the child's file skipped with a warning
#   off        the job alone with the tracer as NVTX's injection but tracing refused
#              (ORR_RECORD_DIR too long): InitializeInjectionNvtx2 returns 0, NVTX turns
#              every call into a no-op and unloads the library (which stays, -z
#              nodelete); the job runs as without it, prints the same, exits 0
set -uo pipefail

case_=${1:?usage: $0 CASE NVTX_JOB}
job=${2:?usage: $0 CASE NVTX_JOB}
# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"
command -v python3 >/dev/null || {
	echo "skipped: no python3 to read the recorded trace" >&2
	exit 77
}
unset ORR_TRACER ORR_DEBUG RANK LOCAL_RANK WORLD_SIZE
job=$(realpath "$job") || fail "no $job"
cd "$work" || fail "cd"

# record DIR ORRERY-OPTIONS... -- JOB-ARGS...: records the job into DIR, converts its
# one .orr to DIR.json.
record() {
	local dir=$1
	shift
	local opts=()
	while [[ $1 != -- ]]; do
		opts+=("$1")
		shift
	done
	shift
	run record "${opts[@]}" -o "$dir" -- "$job" "$@"
	expect_rc 0
	local files=("$dir"/*.orr)
	[[ ${#files[@]} == 1 && -f ${files[0]} ]] || {
		show
		ls -la "$dir" >&2
		fail "expected one .orr in $dir"
	}
	"$orrery" convert "${files[0]}" -o "$dir.json" >/dev/null 2>"$work/convert.err" ||
		{ cat "$work/convert.err" >&2; fail "orrery convert ${files[0]}"; }
	cp "$work/err" "$dir.err"
}

# check JSON STEPS NOPS: the steps (first..last) and, in each, every event of both threads.
check() {
	python3 - "$@" <<'EOF' || fail "the recorded trace of $1 (above)"
import json, sys
path, first, last, nops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(path))
ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") in ("X", "i")]
steps = {e["name"]: e for e in ev if e["name"].startswith("ProfilerStep#")}
want = ["ProfilerStep#%d" % s for s in range(first, last + 1)]
assert sorted(steps) == sorted(want), ("steps", sorted(steps), want)
assert len([e for e in ev if e["name"].startswith("ProfilerStep#")]) == len(want), "a step twice"
main_tid = {e["tid"] for e in steps.values()}
assert len(main_tid) == 1, main_tid
names = [e["name"] for e in ev]
by_name = {}
for e in ev:
    by_name.setdefault(e["name"], []).append(e)
for s in range(first, last + 1):
    st = steps["ProfilerStep#%d" % s]
    lo, hi = st["ts"], st["ts"] + st["dur"]
    tids = set()
    for t in (0, 1):
        for i in range(nops):
            n = "op-%d-%d-%d" % (s, t, i)
            got = by_name.get(n, [])
            assert len(got) == 1, (n, len(got))
            e = got[0]
            assert e["cat"] == "cpu_op", (n, e["cat"])
            assert e["args"]["Sequence number"] == i, (n, e["args"])
            assert e["args"]["Input Dims"] == [[4, 8], [8, 2]], (n, e["args"])
            assert lo <= e["ts"] and e["ts"] + e["dur"] <= hi, (n, "outside its step", e, st)
            tids.add(e["tid"])
        for n, cat in (("startend-%d-%d" % (s, t), "user_annotation"),
                       ("mark-%d-%d" % (s, t), "cpu_instant_event")):
            got = by_name.get(n, [])
            assert len(got) == 1 and got[0]["cat"] == cat, (n, got)
    assert len(tids) == 2 and not tids & main_tid, ("ops of step %d on threads" % s, tids)
for n in names:
    for p in ("op-", "startend-", "mark-"):
        if n.startswith(p):
            s = int(n[len(p):].split("-")[0])
            assert first <= s <= last, (n, "outside the window")
nreg = names.count("registered-op")
assert nreg == 2 * (last - first + 1), ("registered-op", nreg)
print("%s: steps %d-%d, %d events" % (path, first, last, len(ev)))
EOF
}

case $case_ in
window)
	record w --skip 2 --steps 3 -- 8 3
	check w.json 2 4 3
	expect_in err "3 steps (#2..#4)"
	expect_in err "0 records and 0 events dropped"
	# No CUDA: the log says nothing failed, and nothing of CUDA was asked for.
	grep -q "CUDA tracing disabled" w/tracer-*.log && fail "CUDA was started"
	grep -q "no step marker" w/tracer-*.log && fail "no step marker seen"
	;;
late-cuda)
	# cuInit (InitializeInjection) before the window, and inside it: the same ranges.
	for at in 1 3; do
		record c$at --skip 2 --steps 3 -- 8 3 cuda-at $at
		check c$at.json 2 4 3
		expect_in err "3 steps (#2..#4)"
		# Without a GPU CUPTI cannot start: it says so, and NVTX goes on.
		if ! grep -q "CUDA tracing disabled" c$at/tracer-*.log; then
			grep -q "tracing pid" c$at/tracer-*.log || fail "no start in the log"
		fi
	done
	;;
nccl)
	record n --skip 2 --steps 3 -- 6 1 nccl 0x1234abcd 4 1 1048576
	check n.json 2 4 1
	run info n
	expect_rc 0
	# The communicator's creation (before the window) was decoded from its payload.
	expect_in out "communicator  'nccl:000000001234abcd' size 4"
	python3 - n.json <<'EOF' || fail "NCCL's ranges"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
ar = [e for e in ev if e.get("name") == "ncclAllReduce"]
assert len(ar) == 3, len(ar)
assert not [e for e in ev if e.get("name") == "ncclCommInitRank"], "a range before the window"
EOF
	;;
threads)
	record t -- 4 5000
	check t.json 0 3 5000
	expect_in err "0 records and 0 events dropped"
	;;
child)
	RANK=0 run record --skip 2 --steps 3 -o ch -- bash -c "'$job' 8 3 && '$job' 1 1"
	expect_rc 0
	files=(ch/rank-0-*.orr)
	[[ ${#files[@]} == 2 ]] || { ls -la ch >&2; fail "expected two files of rank 0"; }
	run info ch
	expect_rc 0
	expect_in out "ch: 1 rank"
	expect_in err "process"
	expect_in err "of rank 0 recorded no steps"
	"$orrery" convert ch -o ch.json >/dev/null 2>"$work/convert.err" ||
		{ cat "$work/convert.err" >&2; fail "orrery convert ch"; }
	check ch.json 2 4 3
	# Two files of rank 0 that both recorded steps are two jobs: still an error.
	mkdir two && cp "${files[0]}" two/ && cp "${files[0]}" "two/rank-0-1.orr"
	run info two
	expect_rc 1
	expect_in err "rank 0 also comes from"
	;;
off)
	tracer=${ORR_BUILD_ROOT:?}/tracer/liborrery-tracer.so
	[[ -f $tracer ]] || fail "no $tracer"
	long=$work/$(printf 'd%.0s' {1..5000})
	NVTX_INJECTION64_PATH=$tracer ORR_RECORD_DIR=$long ORR_RECORD_STEPS=2 \
		"$job" 6 2 nccl 0x99 2 0 64 >"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 0
	[[ -s $work/out || -s $work/err ]] && { show; fail "the job printed something"; }
	NVTX_INJECTION64_PATH=$tracer ORR_RECORD_DIR=$long "$job" bench 1000 >"$work/out" 2>&1
	rc=$?
	expect_rc 0
	expect_in out "ns per push/pop pair (1000 pairs)"
	compgen -G "$work/*.orr" >/dev/null && fail "a file was written"
	;;
*)
	fail "unknown case '$case_'"
	;;
esac
echo "ok" >&2
