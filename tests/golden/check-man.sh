#!/bin/bash
# Checks the man pages written at build time (docs/man/):
#   check-man.sh ORRERY MANDIR
# every command `orrery --help` lists has a page, named for it, whose NAME line is the
# command's one-line description, and every option its --help prints is in it; when
# groff is installed, each page formats without a warning.
set -euo pipefail

if (($# != 2)); then
	echo "usage: $0 ORRERY MANDIR" >&2
	exit 2
fi
orrery=$1
mandir=$2
[ -e "$mandir/orrery.1" ] || {
	echo "no man pages in $mandir (built without python3: -Dman=disabled?)" >&2
	exit 77
}
status=0
fail() {
	echo "$*" >&2
	status=1
}

commands=$("$orrery" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$commands" ] || fail "orrery --help lists no commands"
for c in "" $commands; do
	page=$mandir/orrery${c:+-$c}.1
	if [ ! -s "$page" ]; then
		fail "no man page for '${c:-orrery}': $page"
		continue
	fi
	grep -q "^\.TH ORRERY${c:+-${c^^}} 1 " "$page" || fail "$page: no .TH ORRERY${c:+-${c^^}}"
	if [ -n "$c" ]; then
		desc=$("$orrery" --help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
		want="orrery\\-${c//-/\\-} \\- ${desc//-/\\-}"
		grep -qxF "$want" "$page" || fail "$page: NAME is not '$want'"
		help=$("$orrery" "$c" --help)
	else
		help=$("$orrery" --help)
	fi
	for opt in $(grep -oE '(^|[ [,])--?[[:alnum:]][[:alnum:]-]*' <<<"$help" |
		sed -E 's/^[ [,]//' | sort -u); do
		grep -qF "${opt//-/\\-}" "$page" || fail "$page: option $opt of --help is missing"
	done
	if command -v groff >/dev/null; then
		warn=$(groff -man -ww -z "$page" 2>&1) || true
		[ -z "$warn" ] || fail "$page: groff warns: $warn"
	fi
done
exit $status
