#!/bin/bash
# Checks that the documentation stands alone: README.md and docs/*.md cite no notes
# outside the repository, and every page they link or name exists.
#   docs-alone.sh SOURCE_ROOT
# Shared traces and measured runs (../shared/traces, ../shared/whatif) are data a
# command reads, not documentation, and may be named.
set -euo pipefail

if (($# != 1)); then
	echo "usage: $0 SOURCE_ROOT" >&2
	exit 2
fi
cd "$1"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo "not a git checkout: no tracked pages to check" >&2
	exit 77
fi
mapfile -t pages < <(git ls-files -- README.md 'docs/*.md')
status=0

# Notes and house documents kept beside the checkout, not in it.
hits=$(grep -nE 'shared/(notes|repro)|(^|[^[:alnum:]_/])(DESIGN|STYLE)\.md' "${pages[@]}" || true)
if [ -n "$hits" ]; then
	echo "pages cite documents outside the repository (cite docs/ or the public source):" >&2
	echo "$hits" >&2
	status=1
fi

# Relative links [text](target) and pages named as `docs/NAME.md`.
for page in "${pages[@]}"; do
	dir=$(dirname "$page")
	while IFS= read -r target; do
		target=${target%%#*}
		[ -z "$target" ] && continue
		case $target in http://* | https://* | mailto:*) continue ;; esac
		if [ ! -e "$dir/$target" ]; then
			echo "$page: link to a missing file: $target" >&2
			status=1
		fi
	done < <(grep -oE '\]\([^) ]+\)' "$page" | sed -E 's/^\]\((.*)\)$/\1/')
	while IFS= read -r named; do
		if [ ! -e "$named" ]; then
			echo "$page: names a missing page: $named" >&2
			status=1
		fi
	done < <(grep -oE '(^|[^[:alnum:]_./])docs/[[:alnum:]_.-]+\.md' "$page" |
		sed -E 's/^[^d]*//' | sort -u)
done
exit $status
