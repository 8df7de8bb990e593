#!/bin/bash
# CLI tests of `orrery convert` and `orrery pack` (suite golden), run from the source root
# with $ORRERY set (tests/meson.build):
#
#   run-convert.sh native-dir TRACE    convert to a run directory, then pack it: the files,
#                                      the manifest, and `info` of each equal to TRACE's
#   run-convert.sh native-file TRACE   a one-rank trace to FILE.orr; several ranks refused
#   run-convert.sh chrome TRACE        to one Chrome JSON file (check-chrome.py) and to a
#                                      directory of per-rank files that reads back as TRACE
#   run-convert.sh chrome-file TRACE   several ranks in one Chrome JSON file read back as
#                                      TRACE (info, replay, and converted to native); a
#                                      file of ranks an older orrery wrote is refused
#   run-convert.sh chain TRACE         Kineto -> native -> Chrome -> native: `info` unchanged
#   run-convert.sh launch TRACE        Kineto -> native -> Chrome: kernels' launches unchanged
#   run-convert.sh pack-formats TRACE  pack -o NAME compresses as NAME says; .zip refused
#   run-convert.sh bad FILE            convert of a missing, malformed or truncated FILE:
#                                      exit 1, one "orrery: error: " line naming FILE,
#                                      nothing written, for each kind of output
#   run-convert.sh bad-pack            pack of what is not a run: the same
#   run-convert.sh chakra TRACE DUMP   to Chakra files (DUMP: chakra-dump), checked by an
#                                      independent decoder (check-chakra.py) and against
#                                      the graph's totals; a file as OUT refused
#   run-convert.sh chakra-names TRACE DUMP  TRACE's names that are not UTF-8 written as
#                                      U+FFFD: every string field valid UTF-8, as protobuf
#                                      requires (check-chakra.py strings), decoded as DUMP
#   run-convert.sh chakra-ref DIR DUMP Chakra's reference file in DIR (../shared/traces/
#                                      chakra) read as Chakra's JSON of it says; cut short,
#                                      an error
#   run-convert.sh usage               usage errors (exit 2), --help, an OUT in the way
#
# `info --format=json` outputs are compared by same-info.py; Chrome JSON files cannot
# carry the skipped categories and the producer's flow count, so those are left out.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

# A successful conversion: exit 0, nothing on stdout, one summary line on stderr.
convert_ok() {
	run convert "$@"
	expect_rc 0
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one summary line on stderr"; }
	expect_in err " -> "
}

# `info --format=json` of $2 holds what that of $1 holds; $3: keys to leave out.
same_info() {
	"$orrery" info --format=json "$1" >"$work/a.json" || fail "info '$1' failed"
	"$orrery" info --format=json "$2" >"$work/b.json" || fail "info '$2' failed"
	python3 "$golden/same-info.py" "$work/a.json" "$work/b.json" --ignore "${3:-}" ||
		fail "'$2' does not read back as '$1'"
}

# Nothing but the names given is in $work/dir (no output, no temporary file).
only_in() {
	local dir=$1 want=$2 got

	got=$(cd "$dir" && ls -A | tr '\n' ' ')
	[[ $got == "$want" ]] || fail "'$dir' holds '$got', expected '$want'"
}

need_python() {
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
}

# One failing command: exit 1, nothing on stdout, one error line naming $1.
expect_error_naming() {
	expect_rc 1
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	[[ $(head -c 15 "$work/err") == "orrery: error: " ]] || { show; fail "no 'orrery: error: '"; }
	expect_in err "$1"
	cat "$work/err" >&2
}

mode=${1:-}
shift || true
case $mode in
native-dir)
	need_python
	trace=$1
	mkdir "$work/o"
	convert_ok "$trace" -o "$work/o/run"
	only_in "$work/o" "run "
	only_in "$work/o/run" "manifest.json rank-0.orr rank-1.orr "
	python3 - "$work/o/run/manifest.json" <<-'EOF' || fail "bad manifest"
		import json, sys
		m = json.load(open(sys.argv[1]))
		assert m["format"] == "orrery-run" and m["version"] == 1, m
		assert m["producer"].startswith("orrery convert "), m
		assert [f["path"] for f in m["files"]] == ["rank-0.orr", "rank-1.orr"], m
		assert [f["rank"] for f in m["files"]] == [0, 1] and m["world_size"] == 2, m
		assert all(f["events"] > 0 for f in m["files"]), m
	EOF
	same_info "$trace" "$work/o/run"
	# pack: RUN.tar.zst by default, -o otherwise; both read as the directory does.
	run pack "$work/o/run/"
	expect_rc 0
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	only_in "$work/o" "run run.tar.zst "
	same_info "$trace" "$work/o/run.tar.zst"
	run pack -o "$work/o/other.tar.zst" "$work/o/run"
	expect_rc 0
	cmp -s "$work/o/run.tar.zst" "$work/o/other.tar.zst" || fail "two packs of one run differ"
	# An empty directory is a fine OUT; a non-empty one is refused and left alone.
	mkdir "$work/o/empty"
	convert_ok "$trace" -o "$work/o/empty"
	only_in "$work/o/empty" "manifest.json rank-0.orr rank-1.orr "
	run convert "$trace" -o "$work/o/run"
	expect_error_naming "$work/o/run"
	expect_in err "not empty"
	only_in "$work/o/run" "manifest.json rank-0.orr rank-1.orr "
	;;
native-file)
	need_python
	dir=$1
	mkdir "$work/o"
	convert_ok "$dir/rank-1.trace.json" -o "$work/o/r1.orr"
	same_info "$dir/rank-1.trace.json" "$work/o/r1.orr"
	convert_ok "$work/o/r1.orr" -o "$work/o/again.orr"
	same_info "$dir/rank-1.trace.json" "$work/o/again.orr"
	run convert "$dir" -o "$work/o/both.orr"
	expect_error_naming "$work/o/both.orr"
	expect_in err "give a directory"
	only_in "$work/o" "again.orr r1.orr "
	# A native file cut inside its first frame, or with junk after the magic, is refused.
	head -c 30 "$work/o/r1.orr" >"$work/cut.orr"
	head -c 20 "$work/o/r1.orr" >"$work/junk.orr"
	printf 'not a zstd frame at all' >>"$work/junk.orr"
	for f in cut.orr junk.orr; do
		run convert "$work/$f" -o "$work/o/x.json"
		expect_error_naming "$work/$f"
		only_in "$work/o" "again.orr r1.orr "
	done
	;;
chrome)
	need_python
	trace=$1
	convert_ok "$trace" -o "$work/all.json"
	python3 "$golden/check-chrome.py" "$work/all.json" --ranks 0,1 --min-flows 1 \
		--min-waits 1 || fail "invalid Chrome trace"
	convert_ok --to chrome "$trace" -o "$work/ranks"
	only_in "$work/ranks" "rank-0.json rank-1.json "
	same_info "$trace" "$work/ranks" skipped,flows
	for r in 0 1; do
		python3 "$golden/check-chrome.py" "$work/ranks/rank-$r.json" --ranks $r \
			--min-flows 1 --min-waits 1 || fail "invalid Chrome trace"
	done
	convert_ok "$work/ranks/rank-0.json" -o "$work/r0.json"
	same_info "$work/ranks/rank-0.json" "$work/r0.json"
	;;
chrome-file)
	need_python
	trace=$1
	convert_ok "$trace" -o "$work/all.json"
	same_info "$trace" "$work/all.json" skipped,flows
	# replay gives every rank's steps as from TRACE (all but the line naming the input)
	"$orrery" replay "$trace" | tail -n +2 >"$work/a.txt" || fail "replay '$trace' failed"
	"$orrery" replay "$work/all.json" | tail -n +2 >"$work/b.txt" || fail "replay failed"
	diff -u "$work/a.txt" "$work/b.txt" >&2 || fail "replay of the file differs from TRACE's"
	grep -q '^1 ' "$work/b.txt" || fail "no rank 1 in the replay of the file"
	convert_ok "$work/all.json" -o "$work/run"
	only_in "$work/run" "manifest.json rank-0.orr rank-1.orr "
	same_info "$trace" "$work/run" skipped,flows
	# Processes named after two ranks without orrery's table of them: refused, saying how.
	bad=$golden/bad/ranks-in-one-file.json
	for out in x.json run2; do
		run convert "$bad" -o "$work/$out"
		expect_error_naming "$bad"
		expect_in err "named after ranks 0 and 1"
		expect_in err "write one file per rank instead (orrery convert --to chrome TRACE -o DIR)"
		[[ -e $work/$out ]] && fail "'$work/$out' was written"
	done
	;;
chain)
	need_python
	trace=$1
	convert_ok "$trace" -o "$work/native"
	convert_ok --to chrome "$work/native" -o "$work/chrome"
	convert_ok "$work/chrome" -o "$work/native2"
	same_info "$trace" "$work/native2" skipped,flows
	;;
pack-formats)
	# An archive compressed as its name says, read back as the run; a .zip refused.
	trace=$1
	convert_ok "$trace" -o "$work/run"
	for f in tar.zst:28b52ffd tar.gz:1f8b tgz:1f8b tar.xz:fd377a58 tar.bz2:425a68 \
		tar:; do
		name=$work/run.${f%%:*} magic=${f#*:}
		run pack -o "$name" "$work/run"
		expect_rc 0
		if [[ -n $magic ]]; then
			got=$(head -c 4 "$name" | od -An -tx1 | tr -d ' \n')
		else
			got=$(dd if="$name" bs=1 skip=257 count=5 2>/dev/null)
			magic=ustar
		fi
		[[ $got == "$magic"* ]] || fail "$name starts with '$got', not '$magic'"
		"$orrery" info "$name" >/dev/null || fail "info cannot read $name"
	done
	run pack -o "$work/run.zip" "$work/run"
	expect_rc 2
	expect_in err "orrery packs a tar archive"
	[[ -e $work/run.zip ]] && fail "run.zip was written"
	;;
launch)
	# Kineto -> native -> Chrome JSON: every kernel's grid, block, shared memory and
	# registers as the profiler wrote them, by correlation id.
	need_python
	trace=$1
	[[ -e $trace ]] || { echo "skipped: $trace does not exist" >&2; exit 77; }
	convert_ok "$trace" -o "$work/k.orr"
	convert_ok "$work/k.orr" -o "$work/k.json"
	python3 - "$trace" "$work/k.json" <<'PY' || fail "kernel launches differ after native and back"
import gzip, json, sys
KEYS = ("grid", "block", "shared memory", "registers per thread")
def launches(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    return {e["args"]["correlation"]: tuple(e["args"].get(k) for k in KEYS)
            for e in events if e.get("cat") == "kernel" and "grid" in e.get("args", {})}
a, b = launches(sys.argv[1]), launches(sys.argv[2])
assert a and a == b, (len(a), len(b), [k for k in a if a[k] != b.get(k)][:3])
PY
	;;
bad)
	file=$1
	mkdir "$work/o"
	for out in out.orr out.json run; do
		run convert "$file" -o "$work/o/$out"
		expect_error_naming "$file"
		only_in "$work/o" ""
	done
	;;
bad-pack)
	mkdir -p "$work/o" "$work/empty" "$work/junk" "$work/cut"
	run pack -o "$work/o/x.tar.zst" "$work/missing"
	expect_error_naming "$work/missing"
	run pack -o "$work/o/x.tar.zst" "$work/empty"
	expect_error_naming "$work/empty"
	printf '{"traceEvents": []}' >"$work/junk/rank-0.orr"
	run pack -o "$work/o/x.tar.zst" "$work/junk"
	expect_error_naming "$work/junk/rank-0.orr"
	printf 'x' >"$work/o/file"
	run pack "$work/o/file"
	expect_error_naming "$work/o/file"
	only_in "$work/o" "file "
	;;
chakra-names)
	# proto3 strings are UTF-8: Chakra's python reader refuses a file with one that is not
	need_python
	run convert --to chakra -o "$work/ck" "$1"
	expect_rc 0
	"$2" "$work/ck/trace.0.et" >"$work/dump" || fail "chakra-dump trace.0.et"
	python3 "$golden/check-chakra.py" strings "$work/ck/trace.0.et" 1 || fail "strings"
	python3 "$golden/check-chakra.py" ours "$work/ck/trace.0.et" "$work/dump" || fail "decoding"
	;;
chakra)
	# The execution graph as Chakra files, one per rank, checked against an independent
	# reading of the wire format (check-chakra.py), and their totals against the graph.
	need_python
	dump=$2
	run convert --to chakra -o "$work/ck" "$1"
	expect_rc 0
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	expect_in err "(chakra): 2 ranks"
	expect_in err "576 nodes"
	expect_in err "12 collectives, 0 sends, 0 receives"
	only_in "$work/ck" "trace.0.et trace.1.et "
	for r in 0 1; do
		"$dump" "$work/ck/trace.$r.et" >"$work/dump.$r" || fail "chakra-dump trace.$r.et"
		python3 "$golden/check-chakra.py" ours "$work/ck/trace.$r.et" "$work/dump.$r" ||
			fail "trace.$r.et"
	done
	"$orrery" info --format=json "$1" >"$work/info.json" || fail "info"
	python3 - "$work/info.json" "$work/dump.0" "$work/dump.1" <<'PY' || fail "totals"
import json, sys
info = json.load(open(sys.argv[1]))
nodes = [json.loads(l) for f in sys.argv[2:] for l in list(open(f))[1:]]
tasks = info["graph"]["tasks"]
assert len(nodes) == tasks["cpu"] + tasks["gpu"], (len(nodes), tasks)
assert sum(n["is_cpu_op"] for n in nodes) == tasks["cpu"], tasks
colls = [n for n in nodes if n["type"] == 7]
want = sum(c["count"] for r in info["ranks"] for c in r["collectives"])
assert len(colls) == want, (len(colls), want)
assert all(n["comm_type"] == 0 and n["comm_size"] > 0 and n["pg_name"] for n in colls), colls[0]
PY
	# Real jobs with blocking copies and event waits: no cycle either (a blocking call's
	# wait is its next call's deps).
	shared=${ORR_SHARED_TRACES:-../shared/traces}
	for t in astrasim-megatron-tp8 hta-recsys-gpulag-rank0.json.gz; do
		[[ -e $shared/kineto/$t ]] || continue
		rm -rf "$work/real"
		"$orrery" convert --to chakra -o "$work/real" "$shared/kineto/$t" 2>/dev/null ||
			fail "convert $t"
		"$dump" "$work/real/trace.0.et" >"$work/dump.real" || fail "chakra-dump $t"
		python3 "$golden/check-chakra.py" ours "$work/real/trace.0.et" "$work/dump.real" ||
			fail "$t"
	done
	# A file is no directory for Chakra files.
	run convert --to chakra -o "$work/x.json" "$1"
	expect_rc 2
	expect_in err "Chakra files go to a directory"
	;;
chakra-ref)
	# Chakra's own reference file, read by orrery, equals Chakra's JSON of the graph.
	need_python
	needs "$1/feeder_tests_trace.tar.gz" "$1/json_trace.tar.gz"
	dump=$2
	tar -xzf "$1/feeder_tests_trace.tar.gz" -C "$work" tests/data/chakra.0.et ||
		fail "extracting chakra.0.et"
	tar -xzf "$1/json_trace.tar.gz" -C "$work" jsonData/chakra.0.json ||
		fail "extracting chakra.0.json"
	"$dump" "$work/tests/data/chakra.0.et" >"$work/dump" || fail "chakra-dump chakra.0.et"
	head -n 1 "$work/dump" | grep -q '"schema": "1.0.1"' || fail "its schema"
	python3 "$golden/check-chakra.py" ref "$work/dump" "$work/jsonData/chakra.0.json" ||
		fail "chakra.0.et as read differs from Chakra's JSON"
	# Cut short, it is an error with the offset.
	head -c 100000 "$work/tests/data/chakra.0.et" >"$work/cut.et"
	"$dump" "$work/cut.et" >/dev/null 2>"$work/err" && fail "a cut file read"
	expect_in err "longer than the rest of the file"
	;;
usage)
	run convert
	expect_rc 2
	expect_in err "no trace given"
	expect_in err "orrery convert --help"
	run convert x.json
	expect_rc 2
	expect_in err "no output given"
	run convert --to xml -o y x
	expect_rc 2
	expect_in err "unknown format 'xml'"
	run convert --to chrome -o y.orr x
	expect_rc 2
	expect_in err "a Chrome trace goes to FILE.json"
	run convert --to native -o y.json x
	expect_rc 2
	expect_in err "a native trace goes to FILE.orr"
	run convert -o y a b
	expect_rc 2
	expect_in err "one trace at a time"
	run pack
	expect_rc 2
	expect_in err "no run directory given"
	expect_in err "orrery pack --help"
	run pack a b
	expect_rc 2
	for cmd in convert pack; do
		run "$cmd" --help
		expect_rc 0
		expect_in out "usage: orrery $cmd"
		expect_in out "--output"
		[[ -s $work/err ]] && { show; fail "output on stderr"; }
	done
	run --help
	expect_in out "convert"
	expect_in out "pack"
	;;
*)
	echo "usage: $0 native-dir|native-file|chrome|chrome-file|chain TRACE | chakra TRACE DUMP |" \
		"chakra-names TRACE DUMP | chakra-ref DIR DUMP | bad FILE | bad-pack | usage" >&2
	exit 2
	;;
esac
echo "ok" >&2
