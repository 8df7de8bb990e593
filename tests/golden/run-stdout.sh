#!/bin/bash
# '-' as an output (suite golden), from the source root with $ORRERY set:
#
#   run-stdout.sh TRACE    each output written to '-' (convert -o, pack -o, fit -o,
#                          replay/critical-path/estimate --timeline) is on standard output
#                          alone, the same bytes as written to a file, while the command's
#                          report goes to standard error; an output that cannot be one
#                          stream (a native file of several ranks) is refused
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

trace=${1:?usage: run-stdout.sh TRACE}

# `orrery ARGS` with OUTPUT at '-' and at a file: the same bytes; the report of the
# first on stderr equal to the report of the second on stdout.  $1: the option.
same_as_file() {
	local opt=$1 file=$work/file.json
	shift
	run "$@" "$opt" - "$trace"
	expect_rc 0
	cp "$work/out" "$work/stream"
	cp "$work/err" "$work/stream-report"
	run "$@" "$opt" "$file" "$trace"
	expect_rc 0
	[[ -s $work/stream ]] || fail "$*: nothing on stdout with $opt -"
	cmp -s "$work/stream" "$file" || fail "$*: stdout with $opt - differs from the file"
	if [[ -s $work/out ]] && ! grep -qxFf "$work/out" "$work/stream-report"; then
		show
		fail "$*: the report is not on stderr with $opt -"
	fi
	rm -f "$file"
}

same_as_file --timeline replay
same_as_file --timeline replay --format=json --ranks 1
same_as_file --timeline critical-path
same_as_file -o convert --to chrome
same_as_file -o fit

# Without --to, '-' is Chrome JSON.
run convert -o - "$trace"
expect_rc 0
python3 -c 'import json, sys; json.load(sys.stdin)' <"$work/out" || fail "convert -o -: not JSON"
expect_in err "-> standard output (chrome)"

# Several ranks make no native file: refused, nothing written.
run convert --to native -o - "$trace"
expect_rc 1
[[ -s $work/out ]] && { show; fail "convert --to native -o -: output on stdout"; }
expect_in err "a native file holds one"

# A run directory packed to stdout: the archive a file gets, without a pipe's padding.
"$orrery" convert -o "$work/run" "$trace" 2>/dev/null || fail "convert to a run directory"
"$orrery" pack -o "$work/run.tar.zst" "$work/run" 2>/dev/null || fail "pack to a file"
run pack -o - "$work/run"
expect_rc 0
cmp -s "$work/out" "$work/run.tar.zst" || fail "pack -o -: not the archive pack -o FILE wrote"
expect_in err "-> standard output"
"$orrery" pack -o - "$work/run" 2>/dev/null | cat >"$work/piped" ||
	fail "pack -o - into a pipe"
cmp -s "$work/piped" "$work/run.tar.zst" || fail "pack -o - into a pipe: not the same bytes"
echo "ok"
