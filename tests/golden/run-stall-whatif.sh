#!/bin/bash
# The stalls what-if of `orrery replay` (suite golden), from the source root with
# $ORRERY set:
#
#   run-stall-whatif.sh MEGATRON TINY   stalls:*=0 on MEGATRON (ranks that run the same
#                                       launches, whose threads stall where their peers
#                                       do not) moves its step a lot; stalls:*=1 not at
#                                       all, stalls:*=0.5 in between; on TINY (two
#                                       ranks: no stall can be told from work) the rule
#                                       matches nothing and says why; orrery summary
#                                       says how long they are
#
# docs/orrery-replay.md (stalls: rules), docs/estimator.md ("Host stalls").
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

megatron=$1
tiny=$2
needs "$megatron"

for f in 0 0.5 1; do
	run replay --format=json --scale "stalls:*=$f" "$megatron"
	expect_rc 0
	cp "$work/out" "$work/stalls-$f.json"
done
python3 - "$work" <<'PY' || fail "stalls:*=F does not move the Megatron step as it should"
import json, os, sys

work = sys.argv[1]
sc = {f: json.load(open(os.path.join(work, "stalls-%s.json" % f)))["scenarios"][0]
      for f in ("0", "0.5", "1")}
rule = sc["0"]["rules"][0]
assert rule["on"] == "stalls" and rule["glob"] == "*" and rule["rank"] == -1, rule
# every rank's launch threads stall: hundreds of ms a rank-step (fit: 438.6 ms on the
# slowest rank without them)
per = rule["ns"] / rule["rank_steps"]
print("stalls matched: %d tasks, %.3f ms a rank-step" % (rule["tasks"], per / 1e6))
assert rule["tasks"] > 0 and per > 100e6, rule
step = {f: s["job"][0] for f, s in sc.items()}
base, none, half, kept = (step["0"]["baseline_ns"], step["0"]["scenario_ns"],
                          step["0.5"]["scenario_ns"], step["1"]["scenario_ns"])
print("job step: %.3f ms as recorded, %.3f without the stalls, %.3f with half of them, "
      "%.3f with all" % (base / 1e6, none / 1e6, half / 1e6, kept / 1e6))
assert kept == base, (kept, base)
assert none < half < base, (none, half, base)
# the ranks wait for one another's stalls at every collective: without them the step
# is at least 30 % shorter
assert none < 0.7 * base, (none, base)
PY

run replay --scale 'stalls:*=0' "$tiny"
expect_rc 0
expect_in err "rule 'stalls:*=0' matches no stall in the trace's steps (stalls are found where 3 or more ranks run the same launches"
run replay --strict --scale 'stalls:*=0' "$tiny"
expect_rc 1
run replay --scale 'stalls@x:*=0' "$tiny"
expect_rc 2
expect_in err "stalls[@RANK]:"
run critical-path --scale 'stalls:*=0' "$megatron"
expect_rc 0
expect_in out "critical path of 1 job step"
# orrery summary names them, with the what-if that removes them
run summary "$megatron"
expect_rc 0
expect_in out "host stalls: 8 ranks' launch threads were not running "
expect_in out " ms per step where their peers ran the same launches; orrery replay --scale 'stalls:*=0' replays the job without them"
run summary --format=json "$megatron"
expect_rc 0
python3 - "$work/out" <<'PY' || fail "summary's stalls are wrong"
import json, sys
s = json.load(open(sys.argv[1]))["stalls"]
assert s["ranks"] == 8 and 100e6 < s["min_ns_per_step"] <= s["max_ns_per_step"], s
PY
run summary --format=json "$tiny"
expect_rc 0
expect_in out '"stalls": null'
