#!/bin/bash
# Checks that every option a command accepts is in its --help: the long names of the
# getopt_long tables and the letters of getopt_long()'s option strings in cli/orrery.c
# (against `orrery --help`) and in cli/cmd-CMD.c and cli/CMD-options.c (against
# `orrery CMD --help`), for every command `orrery --help` lists.  The man pages are
# made from --help, so an option missing there is missing from them too.
#   help-options.sh ORRERY SOURCE_ROOT
set -euo pipefail

if (($# != 2)); then
	echo "usage: $0 ORRERY SOURCE_ROOT" >&2
	exit 2
fi
orrery=$1
cli=$2/cli
status=0

# The long option names of the getopt_long tables in the files given.
long_options() {
	grep -ohE '\{ *"[a-z0-9-]+", *(no|required|optional)_argument' "$@" |
		sed -E 's/^\{ *"([^"]+)".*/\1/' | sort -u
}

# The short options of getopt_long()'s option strings in the files given, one a line.
short_options() {
	grep -ohE 'getopt_long\([^,]+, *[^,]+, *"[^"]*"' "$@" |
		sed -E 's/.*"([^"]*)"$/\1/' | tr -d '+:\n' | fold -w1 | sort -u
}

# check NAME HELP FILE...: every long option of FILE... is named in HELP.
check() {
	local name=$1 help=$2 opts o
	shift 2
	opts=$(long_options "$@")
	if [ -z "$opts" ]; then
		echo "$name: no getopt_long table found in $*" >&2
		status=1
		return
	fi
	for o in $opts; do
		grep -qE -- "--$o([^a-z0-9-]|$)" <<<"$help" ||
			{
				echo "$name accepts --$o, which its --help does not name" >&2
				status=1
			}
	done
	# a short option as its own word: "-o FILE", "-h, --help"
	for o in $(short_options "$@"); do
		grep -qE -- "(^|[ [])-$o([ ,]|$)" <<<"$help" ||
			{
				echo "$name accepts -$o, which its --help does not name" >&2
				status=1
			}
	done
}

check orrery "$("$orrery" --help)" "$cli/orrery.c"
commands=$("$orrery" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$commands" ] || {
	echo "orrery --help lists no commands" >&2
	exit 1
}
for c in $commands; do
	files=("$cli/cmd-$c.c")
	[ -f "$cli/$c-options.c" ] && files+=("$cli/$c-options.c")
	check "orrery $c" "$("$orrery" "$c" --help)" "${files[@]}"
done
exit $status
