#!/bin/bash
# Inputs the importer refuses (docs/limits.md, docs/inputs.md), through the CLI, in
# suite `golden`, from the source root with $ORRERY set:
#
#   run-inputs.sh fifo               a FIFO given alone or as a member of a run directory
#                                    fails at once (never waits for a writer), one line
#   run-inputs.sh limit VAR EDGE TRACE   `orrery info TRACE` passes with VAR=EDGE and
#                                    fails with VAR=EDGE-1, one line naming VAR and TRACE
#   run-inputs.sh accepted TRACE     `orrery info TRACE` exits 0 (a BOM, ._ members)
#   run-inputs.sh mixed TRACE        TRACE's files with JSON that is no trace beside them:
#                                    skipped with a warning each; alone, an error
#   run-inputs.sh nsys               Nsight Systems SQLite exports (make-nsys.py): read,
#                                    replayed, compressed, in a run directory, NCCL's
#                                    payloads; another shape, a cut file, an export
#                                    without CUDA and a .nsys-rep refused
#   run-inputs.sh et                 PyTorch execution traces linked to their ranks (--et,
#                                    or beside them in an archive); alone, an error
#   run-inputs.sh changed            a file shorter than its size said (a sysfs file: 4096
#                                    bytes by stat, fewer read) fails with "the file changed
#                                    while it was read", as one cut short while read does
#   run-inputs.sh ties               200,000 launches and their kernels at one timestamp:
#                                    imported and replayed in seconds (ties of a start were
#                                    ordered by an insertion sort: over a minute)
#   run-inputs.sh stdin              '-': garbage (1000 random bytes, endless `yes`) refused
#                                    at once, one line saying "standard input"; the copy
#                                    bounded by ORR_MAX_FILE_BYTES; SIGINT, SIGTERM, SIGHUP and
#                                    SIGKILL while `yes '{}'` feeds it leave TMPDIR empty
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

one_error_line() {
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	expect_in err "orrery: error: "
	expect_in err "$1"
}

mode=${1:-}
shift || true
case $mode in
ties)
	command -v timeout >/dev/null || { echo "skipped: no timeout" >&2; exit 77; }
	awk 'BEGIN {
		printf "{\"traceEvents\": ["
		for (i = 0; i < 200000; i++)
			printf "%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": " \
				"\"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 100, " \
				"\"dur\": 5, \"args\": {\"correlation\": %d}}, {\"ph\": \"X\", " \
				"\"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, " \
				"\"ts\": 100, \"dur\": 5, \"args\": {\"correlation\": %d}}",
				i ? ", " : "", i, i
		print "]}"
	}' >"$work/ties.json"
	for cmd in info replay; do
		echo "+ timeout 20 orrery $cmd ties.json" >&2
		timeout 20 "$orrery" "$cmd" "$work/ties.json" >"$work/out" 2>"$work/err"
		rc=$?
		[[ $rc == 124 ]] && fail "orrery $cmd: still running after 20 s"
		expect_rc 0
	done
	expect_in out "rank-steps"
	;;
changed)
	f=/sys/kernel/mm/transparent_hugepage/enabled
	[[ -r $f ]] || f=$(find /sys/kernel -maxdepth 3 -type f -readable -size 4k 2>/dev/null | head -n 1)
	[[ -n $f && -r $f ]] || { echo "skipped: no readable sysfs file" >&2; exit 77; }
	for cmd in info replay; do
		run "$cmd" "$f"
		expect_rc 1
		one_error_line "the file changed while it was read"
	done
	;;
stdin)
	command -v timeout >/dev/null || { echo "skipped: no timeout" >&2; exit 77; }
	mkdir "$work/tmp"
	export TMPDIR=$work/tmp
	no_spool() {
		[[ -z $(ls -A "$TMPDIR") ]] || { ls -la "$TMPDIR" >&2; fail "$1: left in TMPDIR"; }
	}
	stdin_error() {
		[[ $rc == 124 ]] && fail "orrery info - still running at 10 s"
		expect_rc 1
		one_error_line "cannot import "
		expect_in err "standard input"
		grep -qE "/proc/self|orrery-stdin|$TMPDIR" "$work/err" && { show; fail "names the copy"; }
		no_spool "$1"
	}
	# 1000 random bytes (the first one no JSON, gzip, tar or native start)
	{ printf '\200'; head -c 999 /dev/urandom; } >"$work/random"
	echo "+ orrery info - <1000 random bytes" >&2
	timeout 10 "$orrery" info - <"$work/random" >"$work/out" 2>"$work/err"
	rc=$?
	stdin_error "random bytes"
	expect_in err "cannot import standard input: "
	expect_in err "unrecognised trace format at byte 0"
	# garbage without end: refused from its first bytes, nothing copied
	echo "+ yes | orrery info -" >&2
	yes | head -c 64M | timeout 10 "$orrery" info - >"$work/out" 2>"$work/err"
	rc=${PIPESTATUS[2]}
	stdin_error "yes"
	expect_in err "found 'y'"
	# JSON past the file limit: the copy stops one byte past it
	echo "+ yes '{}' | ORR_MAX_FILE_BYTES=1M orrery info -" >&2
	yes '{}' | head -c 32M | ORR_MAX_FILE_BYTES=1M timeout 10 "$orrery" info - \
		>"$work/out" 2>"$work/err"
	rc=${PIPESTATUS[2]}
	stdin_error "the limit"
	expect_in err "raise the limit ORR_MAX_FILE_BYTES"
	# an archive's member is named after standard input too
	echo "+ orrery info - <corrupt-gz-member.tar" >&2
	timeout 10 "$orrery" info - <"$golden/bad/corrupt-gz-member.tar" >"$work/out" 2>"$work/err"
	rc=$?
	stdin_error "a member"
	expect_in err "'standard input:rank0.json.gz'"
	# a trace read from standard input: its ranks' source is standard input, not the copy
	echo "+ orrery info --format=json - <rank-0.trace.json" >&2
	timeout 10 "$orrery" info --format=json - <traces/samples/tiny-2rank/rank-0.trace.json \
		>"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 0
	expect_in out '"source": "standard input"'
	grep -qE "/proc/self|orrery-stdin" "$work/out" && { show; fail "info names the copy"; }
	no_spool "a trace"
	# '-' twice: standard input is read once, the second is refused as such
	timeout 10 "$orrery" diff - - <traces/samples/tiny-2rank/rank-0.trace.json \
		>"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 1
	one_error_line "can be read only once"
	no_spool "- twice"
	# a signal while the copy grows (orrery holds a file in TMPDIR): nothing left
	for sig in INT TERM HUP KILL; do
		yes '{}' | timeout 20 "$orrery" info - >/dev/null 2>"$work/err" &
		pipe=$!
		pid=
		for _ in $(seq 200); do
			pid=$(pgrep -P "$pipe" -x orrery)
			[[ -n $pid ]] && ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF "$TMPDIR/" && break
			pid=
			sleep 0.05
		done
		[[ -n $pid ]] || { kill "$pipe"; fail "SIG$sig: orrery never opened its copy in TMPDIR"; }
		kill -s "$sig" "$pid"
		wait "$pipe"
		rc=$?
		echo "+ SIG$sig to orrery info - : rc $rc" >&2
		[[ $rc == 124 ]] && fail "SIG$sig: orrery was still running at 20 s"
		no_spool "SIG$sig"
	done
	;;
fifo)
	command -v timeout >/dev/null || { echo "skipped: no timeout" >&2; exit 77; }
	mkfifo "$work/f.json" || fail "mkfifo"
	for cmd in info replay convert; do
		args=("$cmd" "$work/f.json")
		[[ $cmd == convert ]] && args=(convert -o "$work/out.json" "$work/f.json")
		echo "+ timeout 10 orrery ${args[*]}" >&2
		timeout 10 "$orrery" "${args[@]}" >"$work/out" 2>"$work/err"
		rc=$?
		[[ $rc == 124 ]] && fail "orrery $cmd waited on a FIFO"
		expect_rc 1
		one_error_line "not a regular file (a FIFO)"
	done
	# every other input file goes through the same opener: options that name a file too
	for opt in --scenario --costs --nccl-tests; do
		case $opt in
		--scenario) args=(replay --scenario "$work/f.json" traces/samples/tiny-2rank) ;;
		--costs) args=(estimate --costs "$work/f.json" --layers 4 --hidden 1024 --heads 16
			--seq 1024 --global-batch 8) ;;
		--nccl-tests) args=(fit --nccl-tests "$work/f.json" traces/samples/tiny-2rank) ;;
		esac
		echo "+ timeout 10 orrery ${args[*]}" >&2
		timeout 10 "$orrery" "${args[@]}" >"$work/out" 2>"$work/err"
		rc=$?
		[[ $rc == 124 ]] && fail "orrery $opt waited on a FIFO"
		# a file that cannot be read is bad input, the scenarios' as the others' (7fa22c0)
		expect_rc 1
		one_error_line "not a regular file (a FIFO)"
	done
	mkdir "$work/run"
	cp traces/samples/tiny-2rank/* "$work/run/"
	mkfifo "$work/run/rank9.json"
	timeout 10 "$orrery" info "$work/run" >"$work/out" 2>"$work/err"
	rc=$?
	[[ $rc == 124 ]] && fail "orrery info waited on a FIFO member"
	expect_rc 1
	one_error_line "rank9.json"
	;;
limit)
	var=$1 edge=$2 trace=$3
	export "$var=$edge"
	run info "$trace"
	expect_rc 0
	export "$var=$((edge - 1))"
	run info "$trace"
	expect_rc 1
	one_error_line "$var"
	expect_in err "$trace"
	cat "$work/err" >&2
	# a value that is no count: one line naming the variable and what it expects
	export "$var=lots"
	run info "$trace"
	expect_rc 1
	one_error_line "$var='lots': expected a positive integer"
	expect_in err "$trace"
	;;
accepted)
	run info "$1"
	expect_rc 0
	[[ -s $work/err ]] && { show; fail "output on stderr"; }
	;;
mixed)
	# A run directory (and an archive of it) that also holds JSON that is no trace: a
	# config is skipped with one warning; an execution trace pairs with the rank its name
	# says, one of a rank not in the run is skipped with one warning.
	mkdir "$work/run"
	cp "$1"/* "$work/run/"
	for r in 0 5; do
		printf '{"schema": "1.0.1", "pid": 7, "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|thread]"}]}\n' \
			>"$work/run/rank-$r-et.json"
	done
	printf '{"lr": 0.001, "steps": 10}\n' >"$work/run/config.json"
	tar -C "$work" -czf "$work/run.tar.gz" run
	for t in "$work/run" "$work/run.tar.gz"; do
		run info "$t"
		expect_rc 0
		expect_in out "2 ranks"
		expect_in out "rank-0-et.json (schema 1.0.1): 1 nodes, 0 ops and annotations; 0 linked"
		expect_in err "config.json': not a trace: no 'traceEvents' array"
		expect_in err "rank-5-et.json': an execution trace without the profiler trace of its rank"
		[[ $(wc -l <"$work/err") == 2 ]] || { show; fail "not one warning per skipped file"; }
	done
	run info "$work/run/config.json"
	expect_rc 1
	expect_in err "no 'traceEvents' array"
	rm "$work/run/"*.trace.json
	run info "$work/run"
	expect_rc 1
	expect_in err "PyTorch execution traces alone"
	rm "$work/run/"*-et.json
	run info "$work/run"
	expect_rc 1
	expect_in err "none of its 1 file is a trace"
	# A broken trace is no skipped file: a native file of another version fails the run.
	"$orrery" convert -o "$work/native" "$1" 2>/dev/null || fail "convert $1"
	printf '\143' | dd of="$work/native/rank-1.orr" bs=1 seek=16 conv=notrunc 2>/dev/null
	run info "$work/native"
	expect_rc 1
	expect_in err "rank-1.orr"
	grep -q "skipped" "$work/err" && { show; fail "a broken native file was skipped"; }
	;;
nsys)
	# Nsight Systems SQLite exports (make-nsys.py writes one as nsys lays it out).
	python3 "$golden/make-nsys.py" "$work/rank-0.sqlite" || fail "make-nsys.py"
	run info "$work/rank-0.sqlite"
	expect_rc 0
	expect_in out "device  0: NVIDIA H100 80GB HBM3, 132 SMs"
	expect_in out "thread  pid 4242 tid 4243 main: 8 events"
	expect_in out "events  12: annotation 2, runtime 4, driver 2, kernel 2, memcpy 2"
	expect_in out "calls   launch 4, memcpy 2"
	expect_in out "launches without a GPU task: 0; GPU tasks without a launch: 0"
	expect_in out "step  #1  2.000 ms"
	expect_in out "step  #2  1.800 ms"
	run replay --timeline "$work/tl.json" "$work/rank-0.sqlite"
	expect_rc 0
	expect_in out "0           2        1.800        1.800    0.00%"
	grep -q '"cudaLaunchKernel"' "$work/tl.json" || fail "the call keeps its _v7000 suffix"
	grep -q '"grid":\[864,1,1\]' "$work/tl.json" || fail "the kernel's launch is lost"
	# Stream waits: paired with the event's record before them, exact D4 edges.
	python3 "$golden/make-nsys.py" "$work/waits.sqlite" --waits || fail "make-nsys.py --waits"
	run info "$work/waits.sqlite"
	expect_rc 0
	expect_in out "events  22: annotation 2, runtime 10, driver 2, kernel 4, memcpy 2, sync 2"
	expect_in out "calls   launch 6, memcpy 2, event_record 2, stream_wait 2"
	expect_in out "D4 cross-stream           2          0"
	run info --format=json "$work/waits.sqlite"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
assert r["events"]["sync"] == 2, r["events"]' "$work/out" || fail "info --format=json of the waits"
	# Compressed, and as one rank of a run directory beside another.
	gzip -c "$work/rank-0.sqlite" >"$work/r0.sqlite.gz"
	run info "$work/r0.sqlite.gz"
	expect_rc 0
	expect_in out "step  #2  1.800 ms"
	mkdir "$work/run"
	cp "$work/rank-0.sqlite" "$work/run/rank-0.sqlite"
	cp "$work/rank-0.sqlite" "$work/run/rank-1.sqlite"
	python3 "$golden/make-nsys.py" "$work/run/notes.sqlite" --no-nsys-tables
	run info "$work/run"
	expect_rc 0
	expect_in out "2 ranks"
	expect_in err "notes.sqlite': not a trace: a SQLite database without Nsight Systems'"
	# Refused, one line each: another shape, a cut file, nsys's own report.
	python3 "$golden/make-nsys.py" "$work/broken.sqlite" --broken-kernels
	run info "$work/broken.sqlite"
	expect_rc 1
	expect_in err "table CUPTI_ACTIVITY_KIND_KERNEL: no such column: demangledName"
	head -c 3000 "$work/rank-0.sqlite" >"$work/cut.sqlite"
	run info "$work/cut.sqlite"
	expect_rc 1
	expect_in err "cut.sqlite"
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one error line"; }
	# ... and in a run directory it fails the run, it is no skipped file.
	cp "$work/cut.sqlite" "$work/run/rank-2.sqlite"
	run info "$work/run"
	expect_rc 1
	expect_in err "rank-2.sqlite"
	grep -q "skipped '.*rank-2" "$work/err" && { show; fail "a cut export was skipped"; }
	rm "$work/run/rank-2.sqlite"
	# An export of several processes is refused: they would merge into one rank.
	python3 - "$work/rank-0.sqlite" "$work/two.sqlite" <<'PY' || fail "two processes"
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
db = sqlite3.connect(sys.argv[2])
db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + (1 << 24) "
           "WHERE rowid % 2 = 0")
db.commit()
PY
	run info "$work/two.sqlite"
	expect_rc 1
	expect_in err "an Nsight Systems export of 2 processes"

	# NCCL's NVTX payloads: bytes, communicator and sequence numbers, exact D7 edges
	# between the two ranks (the export holds the communicator's creation) ...
	mkdir "$work/nccl"
	for r in 0 1; do
		python3 "$golden/make-nsys.py" "$work/nccl/rank-$r.sqlite" --nccl $r ||
			fail "make-nsys.py --nccl $r"
	done
	run info "$work/nccl"
	expect_rc 0
	expect_in out "collective  AllReduce: 2 kernels, 0.400 ms, 2097152 bytes"
	expect_in out "collective  Send: 2 kernels, 0.100 ms, 131072 bytes"
	expect_in out "collective  Recv: 2 kernels, 0.100 ms, 131072 bytes"
	expect_in out "communicator  'nccl:5eed0000cafe0001' size 2"
	expect_in out "ignored 2 'NCCL payload' values"
	expect_in out "D7 cross-rank             8          0"
	expect_in out "collective instances: 4 coupled, 0 rejected"
	run info --format=json "$work/nccl"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][1]
assert r["communicators"] == [{"name": "nccl:5eed0000cafe0001", "desc": "", "size": 2,
                               "ranks": []}], r["communicators"]
assert r["coerced"] == [{"key": "NCCL payload", "how": "ignored", "count": 2}], r["coerced"]
' "$work/out" || fail "info --format=json of the NCCL payloads"
	run replay "$work/nccl"
	expect_rc 0
	# The collectives and communicators keep through the native format.
	run convert "$work/nccl" -o "$work/nccl-native"
	expect_rc 0
	run info "$work/nccl-native"
	expect_rc 0
	expect_in out "collective  Recv: 2 kernels, 0.100 ms, 131072 bytes"
	expect_in out "communicator  'nccl:5eed0000cafe0001' size 2"
	expect_in out "D7 cross-rank             8          0"
	# ... and without the creation, the communicator couples the all-reduces by their
	# order in the step (inferred); a Send and a Recv between unknown ranks stay alone.
	for r in 0 1; do
		python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("DELETE FROM NVTX_EVENTS WHERE text = '"'ncclCommInitRank'"'")
db.commit()' "$work/nccl/rank-$r.sqlite" || fail "dropping the creation"
	done
	run info "$work/nccl"
	expect_rc 0
	expect_in out "D7 cross-rank             4          4"
	expect_in out "collective instances: 2 coupled, 0 rejected; 4 communication tasks alone"
	# A communicator made by ncclCommSplit: its calls numbered from the split (exact),
	# its size not taken from the payload (the parent's); ncclPutSignal no call.
	mkdir "$work/split" "$work/cut"
	for r in 0 1; do
		python3 "$golden/make-nsys.py" "$work/split/rank-$r.sqlite" --nccl $r --nccl-extra ||
			fail "make-nsys.py --nccl-extra"
		python3 "$golden/make-nsys.py" "$work/cut/rank-$r.sqlite" --nccl $r --nccl-cut ||
			fail "make-nsys.py --nccl-cut"
	done
	run info "$work/split"
	expect_rc 0
	expect_in out "collective  AllReduce: 4 kernels, 0.440 ms, 2105344 bytes"
	expect_in out "D7 cross-rank            12          0"
	expect_in out "collective instances: 6 coupled, 0 rejected; 0 communication tasks alone"
	grep -q "cafe0002" "$work/out" && { show; fail "the split's size was taken"; }
	# A payload cut after its communicator: counted, and that communicator's calls are no
	# longer numbered (inferred coupling).
	run info "$work/cut"
	expect_rc 0
	expect_in out "ignored 3 'NCCL payload' values"
	expect_in out "D7 cross-rank             8          8"
	# An export of a run profiled without CUDA or NVTX tracing says so; with nothing to
	# replay, replay says that rather than blaming --steps.
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT)")
db.commit()' "$work/nocuda.sqlite" || fail "an export without CUDA"
	run info "$work/nocuda.sqlite"
	expect_rc 1
	expect_in err "an Nsight Systems export without CUDA or NVTX activity"
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, text TEXT, "
           "globalTid INT, textId INT, domainId INT)")
db.execute("INSERT INTO NVTX_EVENTS VALUES (5, NULL, 34, '"'a mark'"', 1, NULL, 0)")
db.commit()' "$work/empty.sqlite" || fail "an export of one mark"
	run replay "$work/empty.sqlite"
	expect_rc 1
	expect_in err "holds no step: no CPU or GPU task was read"

	: >"$work/report.nsys-rep"
	run info "$work/report.nsys-rep"
	expect_rc 1
	expect_in err "nsys export --type sqlite"
	;;
et)
	# PyTorch execution traces: with --et, linked to every Megatron rank exactly; in an
	# archive beside the profiler's trace (the fuzz corpus's pair); alone, an error.
	shared=${ORR_SHARED_TRACES:-../shared/traces}
	[[ -d $shared/et ]] || { echo "skipped: no $shared/et" >&2; exit 77; }
	run --et "$shared/et/astrasim-megatron-tp8" info "$shared/kineto/astrasim-megatron-tp8"
	expect_rc 0
	[[ $(grep -c "5422 linked (exact); sized 84 collective kernels" "$work/out") == 8 ]] || { show; fail "not 8 exact links"; }
	run info --format=json tests/fuzz/corpus/kineto/et-pair.tar
	expect_rc 0
	python3 -c '
import json, sys
et = json.load(open(sys.argv[1]))["ranks"][0]["execution_trace"]
assert et["ops"] == 2 and et["linked"] == 2 and et["exact"] and et["schema"] == "1.0.1", et
' "$work/out" || fail "info --format=json of the pair"
	run info "$shared/et/param-linear-et.json.gz"
	expect_rc 1
	expect_in err "PyTorch execution traces alone"
	run --et "$shared/kineto/param-linear.json.gz" info "$shared/kineto/param-linear.json.gz"
	expect_rc 1
	expect_in err "not a PyTorch execution trace"
	;;
*)
	echo "usage: $0 stdin | fifo | limit VAR EDGE TRACE | accepted TRACE | mixed TRACE | nsys | et" >&2
	exit 2
	;;
esac
echo "ok" >&2
