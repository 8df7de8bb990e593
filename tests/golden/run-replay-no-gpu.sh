#!/bin/bash
# orrery replay of a rank without GPU work (suite golden), from the source root with
# $ORRERY set: a CPU-only profile, and one of an accelerator whose categories orrery does
# not read (MTIA's mtia_runtime and mtia_ccp_events, as HTA's test traces have them),
# each one step.  Replay says once, on stderr, that the rank holds no GPU task, names the
# categories its import skipped, and that its steps replay as measured; the report is
# still written.  The sample's ranks, which launch kernels, get no such warning.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

# A step of two ops on one thread, and $1 (more events, or nothing).
trace() {
	cat <<JSON
{"distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 400},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 500, "dur": 300}$1
]}
JSON
}

trace "" >"$work/cpu.json"
run replay "$work/cpu.json"
expect_rc 0
expect_in err "rank 3 holds no GPU task (kernel, copy or set): its steps replay as measured, nothing is predicted"
expect_in out "rank     step"
[[ $(grep -c warning "$work/err") == 1 ]] || fail "expected one warning"

trace ',
{"ph": "X", "cat": "mtia_runtime", "name": "mtiaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5},
{"ph": "X", "cat": "mtia_runtime", "name": "mtiaLaunchKernel", "pid": 1, "tid": 1, "ts": 520, "dur": 5},
{"ph": "X", "cat": "mtia_ccp_events", "name": "fused_linear", "pid": 2, "tid": 9, "ts": 30, "dur": 200}' \
	>"$work/mtia.json"
run replay --format=json "$work/mtia.json"
expect_rc 0
expect_in err "rank 3 holds no GPU task (kernel, copy or set), skipped categories: mtia_runtime 2, mtia_ccp_events 1: its steps replay as measured"

run replay traces/samples/tiny-2rank
expect_rc 0
if grep -q "no GPU task" "$work/err"; then
	show
	fail "a warning on ranks that launch kernels"
fi
exit 0
