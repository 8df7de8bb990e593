#!/bin/bash
# GPU idle explained (`orrery summary`), on the project's sample and every shared trace:
# check-idle.py's properties hold for each (suite golden, from the source root).
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
needs "$shared"
n=0
for f in traces/samples/tiny-2rank "$shared"/*/*; do
	case $f in */et/* | */chakra/*) continue ;; esac
	run summary --format=json "$f"
	expect_rc 0
	python3 "$golden/check-idle.py" "$work/out" || fail "$f: GPU idle not explained"
	n=$((n + 1))
done
((n >= 10)) || fail "only $n traces"
