#!/bin/bash
# `orrery record` without a GPU, run from the source root with $ORRERY set:
#
#   run-record.sh CASE TRACER_BUILT
#
# CASE is usage, tracer, env, status, signal, signal-masked, start, no-cuda or
# summary; TRACER_BUILT is yes or no (whether meson built
# liborrery-tracer.so).  The commands recorded here never touch CUDA, so the tracer is
# never loaded: what is checked is what orrery record controls (the environment, the run
# directory, statuses, signals, what a start loads, the summary and manifest).
# shellcheck disable=SC2016 # the recorded commands expand their own variables
set -uo pipefail

case_=${1:?usage: $0 CASE yes|no}
built=${2:?usage: $0 CASE yes|no}
root=$PWD
# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

expect_not_in() {
	grep -qF -- "$2" "$work/$1" && { show; fail "std$1 has '$2'"; }
	return 0
}

# The value of VAR in an `env` dump.
env_of() {
	sed -n "s/^$2=//p" "$1"
}

# A fake tracer, so that the cases below run whether the tracer was built or not.
fake_tracer() {
	: >"$work/fake-tracer.so"
	export ORR_TRACER=$work/fake-tracer.so
}

case $case_ in
usage)
	fake_tracer
	run record
	expect_rc 2
	expect_in err "no command given"
	expect_in err "orrery record --help"
	run record -o "$work/d"
	expect_rc 2
	expect_in err "no command given"
	for bad in x -1 '' 1x 99999999999 +3; do
		run record --steps "$bad" -- true
		expect_rc 2
		expect_in err "bad --steps '$bad'"
		run record --skip "$bad" -- true
		expect_rc 2
		expect_in err "bad --skip '$bad'"
	done
	run record -o '' -- true
	expect_rc 2
	expect_in err "empty run directory name"
	run record --step-prefix '' -- true
	expect_rc 2
	expect_in err "empty --step-prefix"
	# past what the tracer takes (ORR_RECORD_STEP_PREFIX_MAX, 127 bytes; it would
	# record with ProfilerStep# while orrery_record.step() named steps with it)
	run record --step-prefix "$(printf 'p%.0s' {1..128})" -o "$work/d" -- true
	expect_rc 2
	expect_in err "bad --step-prefix: 128 bytes (at most 127, the tracer's limit)"
	run record --ops cupti -- true
	expect_rc 2
	expect_in err "bad --ops 'cupti' (nvtx, profiler or none)"
	run record --frobnicate -- true
	expect_rc 2
	expect_in err "orrery record --help"
	[[ -e $work/d ]] && fail "a usage error created the run directory"
	run record --help
	expect_rc 0
	expect_in out "usage: orrery record"
	for opt in --steps --skip --step-prefix --ops -o -q; do
		expect_in out "$opt"
	done
	[[ -s $work/err ]] && { show; fail "output on stderr"; }
	run --help
	expect_in out "record"
	;;
tracer)
	# Without ORR_TRACER: the tracer of this build, or one clear line when there is none.
	unset ORR_TRACER
	cd "$work" || fail "cd"
	if [[ $built == no ]]; then
		run record -o d -- true
		expect_rc 1
		[[ $(cat "$work/err") == "orrery: error: this orrery was built without CUPTI (no CUDA toolkit found at build time); rebuild with -Dcupti=enabled -Dcudadir=..." ]] ||
			{ show; fail "not the one line about a build without CUPTI"; }
		[[ -e d ]] && fail "the run directory was created"
		# A tracer named by ORR_TRACER is all it needs (it finds libcupti itself).
		: >t.so
		ORR_TRACER=t.so run record -o d -- sh -c 'env >"$ORR_RECORD_DIR/../env.txt"'
		expect_rc 1 # nothing used CUDA
		[[ $(env_of env.txt NVTX_INJECTION64_PATH) == "$work/t.so" ]] ||
			fail "NVTX_INJECTION64_PATH is not ORR_TRACER"
	else
		run record -o d -- sh -c 'env >"$ORR_RECORD_DIR/../env.txt"'
		expect_rc 1 # nothing used CUDA or NVTX
		tracer=$(env_of env.txt CUDA_INJECTION64_PATH)
		[[ $tracer == /* && -f $tracer && $(basename "$tracer") == liborrery-tracer.so ]] ||
			fail "CUDA_INJECTION64_PATH='$tracer' is not this build's tracer"
		# The tracer is NVTX's injection too (InitializeInjectionNvtx2), not libcupti.
		[[ $(env_of env.txt NVTX_INJECTION64_PATH) == "$tracer" ]] ||
			fail "NVTX_INJECTION64_PATH='$(env_of env.txt NVTX_INJECTION64_PATH)' is not the tracer"
	fi
	# A missing ORR_TRACER file is an error, whatever the build.
	ORR_TRACER=$work/none.so run record -o d2 -- true
	expect_rc 1
	expect_in err "ORR_TRACER='$work/none.so' is not a file"
	;;
env)
	fake_tracer
	cd "$work" || fail "cd"
	export PYTHONPATH=/old/path
	export CUDA_INJECTION64_PATH=/other/tool.so
	run record --skip 10 --steps 5 --step-prefix 'iteration ' --ops profiler -o runs/r1 -- \
		sh -c 'env >"$ORR_RECORD_DIR/../env.txt"'
	expect_rc 1
	expect_in err "no process initialized CUDA"
	expect_in err "CUDA_INJECTION64_PATH was '/other/tool.so'"
	e=runs/env.txt
	[[ -f $e ]] || fail "the command did not run"
	[[ $(env_of $e CUDA_INJECTION64_PATH) == "$work/fake-tracer.so" ]] || fail "CUDA_INJECTION64_PATH"
	[[ $(env_of $e NVTX_INJECTION64_PATH) == "$work/fake-tracer.so" ]] || fail "NVTX_INJECTION64_PATH"
	# (r1 itself is gone: nothing was recorded.)
	[[ $(env_of $e ORR_RECORD_DIR) == "$(cd runs && pwd -P)/r1" ]] || fail "ORR_RECORD_DIR"
	[[ $(env_of $e ORR_RECORD_SKIP) == 10 ]] || fail "ORR_RECORD_SKIP"
	[[ $(env_of $e ORR_RECORD_STEPS) == 5 ]] || fail "ORR_RECORD_STEPS"
	[[ $(env_of $e ORR_RECORD_STEP_PREFIX) == "iteration " ]] || fail "ORR_RECORD_STEP_PREFIX"
	[[ $(env_of $e ORR_RECORD_OPS) == profiler ]] || fail "ORR_RECORD_OPS"
	pp=$(env_of $e PYTHONPATH)
	[[ $pp == */tracer/python:/old/path && -f ${pp%%:*}/orrery_record.py ]] ||
		fail "PYTHONPATH='$pp'"
	# The defaults; a default-named run directory in the current directory.
	unset PYTHONPATH
	run record -q -- sh -c 'env >"$ORR_RECORD_DIR/../env2.txt"'
	expect_rc 1
	[[ $(env_of env2.txt ORR_RECORD_SKIP) == 0 && $(env_of env2.txt ORR_RECORD_STEPS) == 0 ]] ||
		fail "default ORR_RECORD_SKIP/STEPS"
	[[ $(env_of env2.txt ORR_RECORD_STEP_PREFIX) == "ProfilerStep#" ]] || fail "default prefix"
	grep -q '^ORR_RECORD_OPS=' env2.txt && fail "ORR_RECORD_OPS set without --ops"
	[[ $(env_of env2.txt PYTHONPATH) == */tracer/python ]] || fail "PYTHONPATH without an old one"
	d=$(env_of env2.txt ORR_RECORD_DIR)
	[[ $(basename "$d") =~ ^orrery-run-[0-9]{8}-[0-9]{6}$ && $(dirname "$d") == "$(pwd -P)" ]] ||
		fail "default run directory '$d'"
	# The module imports under orrery record.
	if command -v python3 >/dev/null; then
		run record -o r3 -- python3 -c 'import orrery_record; assert orrery_record.active()'
		expect_rc 1
		expect_in err "no process initialized CUDA"
		expect_not_in err "Error"
	fi
	;;
status)
	fake_tracer
	cd "$work" || fail "cd"
	run record -q -o s1 -- sh -c 'exit 3'
	expect_rc 3
	run record -q -o s2 -- sh -c 'kill -TERM $$'
	expect_rc 143
	expect_in err "no process initialized CUDA"
	run record -o s3 -- ./no-such-command
	expect_rc 127
	expect_in err "orrery: error: cannot run './no-such-command': No such file or directory"
	[[ -e s3 ]] && fail "the run directory of a command that never ran was left"
	: >not-exec
	run record -o s4 -- ./not-exec
	expect_rc 126
	expect_in err "cannot run './not-exec'"
	# A directory in the way: not empty, or not a directory.
	mkdir full && : >full/x
	run record -o full -- true
	expect_rc 1
	expect_in err "'full' exists and is not empty"
	expect_in err "-o"
	run record -o not-exec -- true
	expect_rc 1
	expect_in err "'not-exec' exists and is not a directory"
	mkdir empty
	run record -q -o empty -- true
	expect_rc 1
	expect_in err "no process initialized CUDA"
	# A command that recorded nothing leaves nothing (no directory holding only a manifest).
	[[ -e s1 || -e s2 ]] && fail "the run directory of an empty recording was left"
	[[ -d empty && ! -e empty/manifest.json ]] || fail "the given empty directory changed"
	;;
signal)
	# Signals as on a terminal, whatever whoever started the tests blocks or ignores (a
	# blocked or ignored signal stays so through fork and exec, and orrery record, like a
	# shell, keeps it so for its command): the case runs again with none blocked or
	# ignored.  With SIGINT blocked, the Ctrl-C below waited for the sleep, 30 s.
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
	if [[ -z ${ORR_SIGNALS_CLEARED-} ]]; then
		ORR_SIGNALS_CLEARED=1 python3 -c 'import signal, subprocess, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(s, signal.SIG_DFL)
sys.exit(subprocess.run(["bash"] + sys.argv[1:],
                        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, [])).returncode)' \
			"${BASH_SOURCE[0]}" signal "$built"
		exit $?
	fi
	fake_tracer
	cd "$work" || fail "cd"
	# Every wait below is on an event (a file the command writes once its sleep runs, a
	# process ending) with a deadline that fails the test with a reason, never on time.
	# A SIGTERM sent to orrery alone reaches the command, which decides how to end.  Its
	# output goes to files: a sleep the trap could not reach (dash's child between the
	# fork and the exec still runs the parent's TERM trap) must not hold the test's own
	# stdout, which meson waits on; it is killed at the end by the pid it wrote.
	"$orrery" record -q -o g1 -- sh -c \
		'trap "kill \$! && echo term >>got; exit 42" TERM; sleep 30 & echo $! >r.tmp; mv r.tmp ready; wait' \
		>"$work/out" 2>"$work/err" &
	pid=$!
	for _ in $(seq 400); do [[ -s ready ]] && break; sleep 0.05; done
	[[ -s ready ]] || fail "the command did not start in 20 s"
	kill -TERM $pid
	for _ in $(seq 400); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "orrery did not end 20 s after its SIGTERM"; }
	wait $pid
	rc=$?
	kill -KILL "$(cat ready)" 2>/dev/null
	expect_rc 42
	[[ $(cat got) == term ]] || fail "the command got '$(cat got)', expected one TERM"
	# Ctrl-C on a terminal reaches the command directly (it is in orrery's process group);
	# orrery outlives it and exits with its status.  (Whether orrery also forwarded it
	# cannot be seen from here: the two SIGINTs would merge while pending.)  The trap's
	# $! is expanded when it runs (single quotes) and got2 is written once its kill found
	# the sleep: the sleep dies of the trap's TERM, not only of the hangup when orrery, the
	# session leader, ends.  ready2 is written once the
	# sleep runs, so Ctrl-C comes when the trap can reach it, with no delay to guess.
	rc=$(python3 - "$orrery" "$work" <<'EOF'
import os, pty, select, signal, sys, time
orrery, work = sys.argv[1:3]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(work)
    # As on a terminal, whatever this test inherited: a shell that started it in the
    # background ignores SIGINT, and an ignored or blocked SIGINT stays so through exec.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.execv(orrery, [orrery, "record", "-q", "-o", "g2", "--", "sh", "-c",
                      "trap 'kill $! && echo int >>got2; exit 43' INT; "
                      "sleep 30 & echo $! >r2.tmp; mv r2.tmp ready2; wait"])


def give_up(why):
    os.system("ps -o pid,pgid,stat,args -s %d >&2" % pid)
    os.killpg(pid, signal.SIGKILL)
    print(why)
    sys.exit(0)


ready2 = os.path.join(work, "ready2")
deadline = time.monotonic() + 20
while not (os.path.exists(ready2) and os.path.getsize(ready2)):
    if time.monotonic() > deadline:
        give_up("no ready2 20 s after the start")
    time.sleep(0.02)
os.write(fd, b"\x03")
deadline = time.monotonic() + 20
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        give_up("the terminal was still open 20 s after Ctrl-C")
    if not select.select([fd], [], [], left)[0]:
        continue
    try:
        if not os.read(fd, 4096):
            break
    except OSError:
        break
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
EOF
	)
	[[ -s ready2 ]] && kill -KILL "$(cat ready2)" 2>/dev/null
	expect_rc 43
	[[ $(cat got2) == int ]] || fail "the command got '$(cat got2)', expected INT"
	;;
signal-masked)
	# The signal case where whoever started the tests blocks SIGINT, SIGTERM and SIGHUP
	# and ignores SIGQUIT, as some launchers do: the same, and in as little time.
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
	timeout 20 python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
signal.signal(signal.SIGQUIT, signal.SIG_IGN)
os.execvp("bash", ["bash"] + sys.argv[1:])' "${BASH_SOURCE[0]}" signal "$built"
	rc=$?
	[[ $rc == 124 ]] && fail "the signal case took more than 20 s with signals blocked"
	exit $rc
	;;
start)
	# A start loads no BLAS or MPI and starts no thread (LAPACKE is loaded at the first
	# fit, igraph is linked without its BLAS, MPI by whatif): the recording orrery, seen
	# from its command, has one thread and no BLAS, LAPACK, Fortran runtime or MPI mapped.
	# The command gets OPENBLAS_NUM_THREADS as it was given, set or not.
	fake_tracer
	cd "$work" || fail "cd"
	peek='ls /proc/$PPID/task | wc -l >"$0.tasks"; cat /proc/$PPID/maps >"$0.maps"
		echo "${OPENBLAS_NUM_THREADS-unset}" >"$0.blas"'
	OPENBLAS_NUM_THREADS=3 run record -q -o p1 -- sh -c "$peek" p1
	expect_rc 1
	[[ $(cat p1.tasks) == 1 ]] || fail "the recording orrery has $(cat p1.tasks) threads, expected 1"
	grep -E 'lib(open)?blas|liblapack|libgfortran|libmpi|libopen-pal' p1.maps &&
		fail "a start loaded BLAS or MPI (above)"
	[[ $(cat p1.blas) == 3 ]] || fail "the command got OPENBLAS_NUM_THREADS='$(cat p1.blas)', expected 3"
	(
		unset OPENBLAS_NUM_THREADS
		run record -q -o p2 -- sh -c "$peek" p2
		expect_rc 1
	) || exit 1
	[[ $(cat p2.blas) == unset ]] || fail "the command got OPENBLAS_NUM_THREADS='$(cat p2.blas)', expected none"
	[[ $(cat p2.tasks) == 1 ]] || fail "the recording orrery has $(cat p2.tasks) threads, expected 1"
	;;
no-cuda)
	fake_tracer
	cd "$work" || fail "cd"
	run record -o n1 -- true
	expect_rc 1
	expect_in err "orrery: error: no process initialized CUDA under the tracer: 'n1' holds no .orr file"
	expect_in err "CUPTI version"
	expect_in err "torch.profiler"
	expect_not_in err "orrery replay"
	# The tracer's log lines are shown, prefixed with its pid.
	run record -q -o n2 -- sh -c 'printf "CUPTI 130001 does not match\nsecond\n" >"$ORR_RECORD_DIR/tracer-4242.log"; exit 5'
	expect_rc 5
	expect_in err "orrery: tracer[4242]: CUPTI 130001 does not match"
	expect_in err "orrery: tracer[4242]: second"
	expect_in err "no process initialized CUDA"
	;;
summary)
	# A native file made by `orrery convert` inside the recorded command stands in for
	# the tracer's; one left under its temporary name by a dead process is recovered.
	fake_tracer
	"$orrery" convert --help >/dev/null 2>&1 || { echo "skipped: no orrery convert" >&2; exit 77; }
	sample=$root/traces/samples/tiny-2rank
	r0=$sample/rank-0.trace.json
	r1=$sample/rank-1.trace.json
	cd "$work" || fail "cd"
	"$orrery" convert "$r1" -o r1.orr >/dev/null 2>&1 || fail "orrery convert $r1"
	run record --skip 1 --steps 2 -o m1 -- sh -c '
		"$0" convert "$1" -o "$ORR_RECORD_DIR/rank-0-1.orr" || exit 9
		cp "$2" "$ORR_RECORD_DIR/.rank-1-$$.orr.tmp.$$.abcdefghijkl"
		echo "tracer says hello" >"$ORR_RECORD_DIR/tracer-1.log"' "$orrery" "$r0" r1.orr
	expect_rc 0
	expect_in err "orrery: recorded 2 processes in 'm1'"
	expect_in err "  rank 0  pid "
	expect_in err "  rank 1  pid "
	expect_in err "kernels"
	expect_in err "orrery: tracer[1]: tracer says hello"
	expect_in err "orrery: replay it with: orrery replay m1"
	compgen -G 'm1/.*.tmp.*' >/dev/null && fail "the unfinished file was not renamed"
	[[ $(ls m1/*.orr | wc -l) == 2 ]] || fail "expected 2 native files in m1"
	command -v python3 >/dev/null || { echo "skipped: no python3 for the manifest" >&2; exit 77; }
	python3 - m1/manifest.json "$work/out" "$work/err" <<'EOF' || fail "manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["format"] == "orrery-run" and m["version"] == 1, m
assert m["producer"].startswith("orrery record "), m["producer"]
assert m["command"][0] == "sh" and m["command"][1] == "-c", m["command"]
assert m["skip_steps"] == 1 and m["steps"] == 2 and m["exit_status"] == 0, m
assert m["world_size"] == 2, m["world_size"]
assert m["created_unix_ns"] > 1.6e18, m["created_unix_ns"]
files = sorted(m["files"], key=lambda f: f["rank"])
assert [f["rank"] for f in files] == [0, 1], files
assert files[0]["path"] == "rank-0-1.orr", files[0]
assert files[1]["path"].startswith("rank-1-") and files[1]["path"].endswith(".orr"), files[1]
err = open(sys.argv[3]).read()
for f in files:
    assert f["events"] > 0 and f["dropped_records"] == 0, f
    assert ("%d events" % f["events"]) in err, (f, err)
EOF
	# The run directory replays like any trace.
	run replay m1
	expect_rc 0
	# A temporary file of a process still running is left alone.
	run record -o m2 -- sh -c 'cp "$1" "$ORR_RECORD_DIR/rank-0-7.orr"
		: >"$ORR_RECORD_DIR/.rank-3-$2.orr.tmp.$2.abcdefghijkl"' sh r1.orr $$
	expect_rc 0
	expect_in err "orrery: warning: process $$ is still writing 'm2/.rank-3-$$.orr.tmp.$$.abcdefghijkl'"
	expect_in err "orrery: recorded 1 process in 'm2'"
	[[ -e m2/.rank-3-$$.orr.tmp.$$.abcdefghijkl ]] || fail "the file of a running process was moved"
	# An unreadable native file fails the recording, without hiding the others.
	run record -o m3 -- sh -c 'cp "$1" "$ORR_RECORD_DIR/rank-0-7.orr"
		echo junk >"$ORR_RECORD_DIR/rank-1-8.orr"' sh r1.orr
	expect_rc 1
	expect_in err "orrery: error: cannot import 'm3/rank-1-8.orr'"
	expect_in err "orrery: recorded 1 process in 'm3'"
	expect_not_in err "no process initialized CUDA"
	;;
*)
	fail "unknown case '$case_'"
	;;
esac
echo "ok" >&2
