#!/bin/bash
# Checks that a public header compiles on its own, with nothing included before it:
#   header-alone.sh SOURCE_ROOT HEADER [COMPILER...]
# HEADER is a name under include/orrery/, e.g. trace.h; COMPILER defaults to cc.
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 SOURCE_ROOT HEADER [COMPILER...]" >&2
	exit 2
fi
root=$1
header=$2
shift 2
(($#)) || set -- cc

if ! printf '#include <orrery/%s>\n' "$header" |
	"$@" -x c -std=gnu17 -Wall -Wextra -Werror -fsyntax-only -I "$root/include" -; then
	echo "include/orrery/$header does not compile alone: include what it uses" >&2
	exit 1
fi
