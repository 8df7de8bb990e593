#!/bin/bash
# Progress on a terminal (suite golden), from the source root with $ORRERY set:
#
#   run-progress.sh TRACE   under script(1) (a terminal) with ORR_PROGRESS_AFTER_S=0,
#                           `orrery replay TRACE` shows the import, the graph build
#                           (events done of all) and the replay (tasks), each line
#                           cleared before the report; with stderr not a terminal, or
#                           on a terminal within the default 2 s, it shows nothing
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

trace=${1:?usage: run-progress.sh TRACE}
command -v script >/dev/null || { echo "skipped: no script(1)" >&2; exit 77; }

# `orrery replay TRACE` on a terminal; what it showed, each \r a new line.
on_terminal() {
	local cmd
	printf -v cmd '%q ' env "$@" "$orrery" replay "$trace"
	script -qefc "$cmd" /dev/null </dev/null | tr '\r' '\n' >"$work/tty" ||
		fail "replay under script(1) failed"
}

on_terminal ORR_PROGRESS_AFTER_S=0
for want in 'orrery: importing: ' \
	'orrery: building the graph: [0-9]+ of [0-9]+ events, .* events/s' \
	'orrery: replaying: [0-9]+ of [0-9]+ tasks, .* tasks/s'; do
	grep -qaE "$want" "$work/tty" || { cat "$work/tty" >&2; fail "no progress line /$want/"; }
done
# The last progress line is cleared: the report starts on a line of its own.
grep -qaE "^$(printf '\033')\[K$trace: " "$work/tty" ||
	{ cat -A "$work/tty" >&2; fail "the progress line is not cleared before the report"; }

on_terminal
grep -qa 'orrery: ' "$work/tty" && { cat "$work/tty" >&2; fail "progress within 2 s"; }

ORR_PROGRESS_AFTER_S=0 run replay "$trace"
expect_rc 0
[[ -s $work/err ]] && { show; fail "progress on stderr that is no terminal"; }
echo "ok"
