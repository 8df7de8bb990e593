#!/bin/bash
# CLI tests of suite `golden` for hostile names and broken standard output, run from the
# source root with $ORRERY set (docs/limits.md, "Names and text output"):
#
#   run-names.sh outputs TRACE   info, replay, critical-path and diff of TRACE, whose names hold
#                                terminal escapes and bytes that are not UTF-8: text
#                                without control characters, valid JSON, CSV with a
#                                constant column count, valid Chrome JSON (timeline, convert)
#   run-names.sh error           a trace whose file name holds a newline and an ESC: one
#                                error line, the characters escaped
#   run-names.sh stdout TRACE    standard output full (/dev/full), closed (>&-) or a
#                                closed pipe: exit 1 and one message (none for the pipe)
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }

# golden-lib.sh's run, with the arguments quoted: the log shows, not obeys, their escapes
run() {
	echo "+ orrery$(printf ' %q' "$@")" >&2
	"$orrery" "$@" >"$work/out" 2>"$work/err"
	rc=$?
}
check=$golden/check-names.py

# check MODE FILE: check-names.py, failing the test with its reason
check() {
	python3 "$check" "$1" "$2" || { show; fail "$2 ($1)"; }
}

mode=${1:-}
shift || true
case $mode in
outputs)
	trace=$1
	for cmd in info replay critical-path; do
		run "$cmd" "$trace"
		expect_rc 0
		check text "$work/out"
		check text "$work/err"
		run "$cmd" --format=json "$trace"
		expect_rc 0
		check json "$work/out"
		check text "$work/err"
	done
	run replay --format=csv "$trace"
	expect_rc 0
	check csv "$work/out"
	run diff --format=csv "$trace" "$trace"
	expect_rc 0
	check csv "$work/out"
	run replay --timeline "$work/timeline.json" "$trace"
	expect_rc 0
	check json "$work/timeline.json"
	run convert --to chrome -o "$work/chrome.json" "$trace"
	expect_rc 0
	check json "$work/chrome.json"
	check text "$work/err"
	;;
error)
	dir=$work/$'evil\ndir\e[2J'
	mkdir "$dir" || fail "cannot make $dir"
	name=$dir/$'rank\n0\e]0;pwned\a.json'
	printf '{"traceEvents": [' >"$name"
	shown=$'evil\\ndir\\x1b[2J/rank\\n0\\x1b]0;pwned\\x07.json'
	for cmd in info replay critical-path; do
		for f in "$name" "$name.missing"; do
			run "$cmd" "$f"
			expect_rc 1
			[[ -s $work/out ]] && { show; fail "output on stdout"; }
			[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
			expect_in err "orrery: error: "
			expect_in err "$shown"
			check text "$work/err"
		done
	done
	# usage errors and unknown commands name what the user typed
	run info --format=$'x\e[2J\ny'
	expect_rc 2
	expect_in err 'unknown format '\''x\x1b[2J\ny'\'
	check text "$work/err"
	run $'inf\e[2J'
	expect_rc 2
	check text "$work/err"
	;;
stdout)
	trace=$1
	: >"$work/out" # what show prints: the report went to the broken output
	if [[ -w /dev/full ]]; then
		for cmd in info replay critical-path; do
			"$orrery" "$cmd" "$trace" >/dev/full 2>"$work/err"
			rc=$?
			expect_rc 1
			[[ $(cat "$work/err") == "orrery: error: cannot write standard output: No space left on device" ]] ||
				{ show; fail "wrong message for a full disk"; }
		done
		"$orrery" --help >/dev/full 2>"$work/err"
		rc=$?
		expect_rc 1
		expect_in err "cannot write standard output"
	else
		echo "no /dev/full: the full-disk case is not checked" >&2
	fi
	"$orrery" info "$trace" >&- 2>"$work/err"
	rc=$?
	expect_rc 1
	expect_in err "orrery: error: cannot write standard output: Bad file descriptor"
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	python3 "$check" epipe "$orrery" info "$trace" || fail "closed pipe"
	# nothing written, nothing to report
	"$orrery" convert --to chrome -o "$work/c.json" "$trace" >&- 2>"$work/err"
	rc=$?
	expect_rc 0
	;;
*)
	echo "usage: $0 outputs TRACE | error | stdout TRACE" >&2
	exit 2
	;;
esac
echo "ok" >&2
