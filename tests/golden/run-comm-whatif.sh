#!/bin/bash
# Communication what-ifs of `orrery replay` (suite golden), from the source root with
# $ORRERY set:
#
#   run-comm-whatif.sh TRACE     on a trace whose collectives the fit can split:
#                                latency:G=0.5 with bandwidth:G=2 replays as G=0.5 does
#                                (both halve every matched kernel); factors of 1 change
#                                nothing; less bandwidth or more latency never shortens
#                                a step
#   run-comm-whatif.sh costs TRACE NCCL_TESTS   on a trace of one collective size (no
#                                split): every matched kernel unsplit and no change;
#                                with --costs fitted on nccl-tests output, they split,
#                                the latency per kernel is the model's
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

# `orrery replay --format=json ARGS` into $work/NAME.json.
replay_json() {
	local name=$1
	shift
	run replay --format=json "$@"
	expect_rc 0
	cp "$work/out" "$work/$name.json"
}

# Python assertions ($1) on the JSON files, read with load(NAME); $2 says what failed.
check() {
	python3 -c "
import json, os, sys
work = sys.argv[1]
def load(name):
    with open(os.path.join(work, name + '.json')) as f:
        return json.load(f)
def steps(d):
    return [s for r in d['scenarios'][0]['ranks'] for s in r['steps']]
$1" "$work" || fail "$2"
}

if [[ ${1:-} == costs ]]; then
	trace=$2 nccl=$3
	[[ -e $trace ]] || { echo "skipped: $trace does not exist" >&2; exit 77; }
	replay_json plain --scale 'latency:*=0' "$trace"
	check '
r = load("plain")["scenarios"][0]["rules"][0]
assert r["tasks"] > 0 and r["unsplit"] == r["tasks"] and r["latency_ns"] == 0, r
assert r["models"] == "trace", r
assert all(s["scenario_ns"] == s["baseline_ns"] for s in steps(load("plain")))
' "one size: something split or changed"
	"$orrery" fit --nccl-tests "$nccl" -o "$work/costs.json" "$trace" >/dev/null ||
		fail "orrery fit --nccl-tests $nccl -o costs.json $trace"
	replay_json costs --costs "$work/costs.json" --scale 'latency:*=0' "$trace"
	check '
r = load("costs")["scenarios"][0]["rules"][0]
split = r["tasks"] - r["unsplit"]
assert r["models"] == "costs" and split > 0, r
# The hand-written nccl-tests output is 30 us + S x F(n) / 200 GB/s exactly.
assert abs(r["latency_ns"] / split - 30000) < 30, r
assert all(s["scenario_ns"] <= s["baseline_ns"] for s in steps(load("costs")))
' "not split by the costs file's model"
	echo "ok"
	exit 0
fi

trace=${1:?usage: run-comm-whatif.sh TRACE | costs TRACE NCCL_TESTS}
replay_json split --scale 'latency:nccl*=0.5' --scale 'bandwidth:nccl*=2' "$trace"
replay_json half --scale 'nccl*=0.5' "$trace"
check '
a, b = load("split"), load("half")
for r in a["scenarios"][0]["rules"]:
    assert r["tasks"] > 0 and r["unsplit"] == 0 and 0 < r["latency_ns"] < r["ns"], r
assert len(steps(a)) == len(steps(b)) > 0
for x, y in zip(steps(a), steps(b)):
    assert abs(x["scenario_ns"] - y["scenario_ns"]) <= 2, (x, y)
' "latency x0.5 with bandwidth x2 is not nccl* x0.5"
replay_json same --scale 'latency:*=1' --scale 'bandwidth:*=1' "$trace"
check '
assert all(s["scenario_ns"] == s["baseline_ns"] for s in steps(load("same")))
' "factors of 1 changed a step"
for slower in 'bandwidth:*=0.5' 'latency:*=3'; do
	replay_json slower --scale "$slower" "$trace"
	check '
assert all(s["scenario_ns"] >= s["baseline_ns"] for s in steps(load("slower")))
assert any(s["scenario_ns"] > s["baseline_ns"] for s in steps(load("slower")))
' "$slower did not lengthen the steps"
done
echo "ok"
