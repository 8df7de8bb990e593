#!/bin/bash
# Host-bound steps (suite golden), from the source root with $ORRERY set: each neighbour
# of the plain PyTorch GPT of ../shared/whatif/h200-gpt (layers24, hidden2048, batch16)
# predicted from base.json.gz alone by re-timing its graph (the layers stretched on the
# host timeline, the profiler's host time taken out), within 5 % of the runs without a
# profiler on average and 9 % at most; the same runs described by options and timed by
# the costs `fit` writes from base.json.gz within 15 % on average (bench/h200-gpt.sh;
# docs/accuracy.md records the tables).  77 without ../shared.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

runs=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt
needs "$runs/base.json.gz" "$runs/layers24.plain.jsonl" "$runs/hidden2048.plain.jsonl" \
	"$runs/batch16.plain.jsonl"

ORRERY=$orrery MAX_MEAN=5 MAX_ABS=9 MAX_OPTIONS_MEAN=15 bash bench/h200-gpt.sh "$runs" >"$work/out" 2>"$work/err" ||
	{ show; fail "bench/h200-gpt.sh: the errors exceed the goal"; }
# Every neighbour by re-timing the trace, none by synthesis.
[[ $(grep -c '| retime |$' "$work/out") == 3 ]] || { show; fail "a neighbour not re-timed"; }
cat "$work/out" >&2
