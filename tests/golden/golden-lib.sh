#!/bin/bash
# What the CLI test scripts of suite `golden` share; sourced by run-golden.sh,
# run-convert.sh and run-record.sh, from the source root with $ORRERY set.
#   run ARGS...         runs orrery; sets rc, leaves $work/out and $work/err
#   show                prints the start of both outputs (on a failure)
#   fail MSG            fails the test
#   expect_rc N         the last run exited N
#   expect_in out|err TEXT   the last run printed TEXT (grep -F) there
#   needs PATH...       skips the test (77) unless every PATH exists: the shared traces
#                       beside the checkout, absent from a bare clone
#   python_with CODE    prints the first of python3 and /usr/bin/python3 that runs
#                       `-c CODE` without error ('import torch'); fails when none
# shellcheck disable=SC2034 # golden is used by the scripts that source this

golden=tests/golden
orrery=${ORRERY:?ORRERY is not set (run through meson test)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

needs() {
	local p
	for p in "$@"; do
		[[ -e $p ]] || {
			echo "skipped: $p does not exist" >&2
			exit 77
		}
	done
}

python_with() {
	local p
	for p in python3 /usr/bin/python3; do
		if "$p" -c "$1" 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

run() {
	echo "+ orrery $*" >&2
	"$orrery" "$@" >"$work/out" 2>"$work/err"
	rc=$?
}

show() {
	echo "--- stdout:" >&2
	head -n 30 "$work/out" >&2
	echo "--- stderr:" >&2
	head -n 30 "$work/err" >&2
}

expect_rc() {
	if [[ $rc != "$1" ]]; then
		show
		fail "exit status $rc, expected $1"
	fi
}

expect_in() {
	if ! grep -qF -- "$2" "$work/$1"; then
		show
		fail "std$1 lacks '$2'"
	fi
}
