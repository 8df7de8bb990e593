#!/bin/bash
# The profiler's cost (suite golden), from the source root with $ORRERY set, on the A100
# Megatron trace (recorded by torch.profiler with record_shapes):
#
#   run-profcost.sh fit       fit says what the profiler added to the launch threads and
#                             writes it in the costs file beside the time as recorded
#   run-profcost.sh estimate  estimate --costs carries the launch time without the
#                             profiler, says where it came from and what was removed
#                             (text and JSON); --launch-us overrides it; a costs file
#                             that does not say what the profiler added is used as
#                             recorded, and said so; no costs: "none"
#   run-profcost.sh whatif    whatif's text and JSON say the same, from a description
#                             with --costs, without, and from the trace itself
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

megatron=${ORR_SHARED_TRACES:-../shared/traces}/kineto/astrasim-megatron-tp8
needs "$megatron"
# GPT-3 13B on 64 A100 (Megatron-LM's layout of the 13B run)
model=(--gpu a100-80gb-sxm --layers 40 --hidden 5120 --heads 40 --seq 2048 --global-batch 512)
layout=(--tp 8 --pp 1 --dp 8 --micro-batch 1)

fit_costs() {
	run fit -o "$work/a100.json" "$megatron"
	expect_rc 0
}

# The launch line's value and what it says was removed, in us: "V R S" (the profiler's,
# the host stalls').
launch_of() {
	sed -n 's/.*launch.* \([0-9.]*\) us of the launch thread per kernel (.*profiler overhead removed \([0-9.]*\) us, host stalls removed \([0-9.]*\) us).*/\1 \2 \3/p' "$work/out" | head -1
}

case ${1:-} in
fit)
	fit_costs
	expect_in out "profiler (cpu, cuda, record_shapes): "
	python3 - "$work/a100.json" <<'PY' || fail "the costs file's launch is wrong"
import json, sys
l = json.load(open(sys.argv[1]))["launch"]
assert l["profiler_options"] == "cpu, cuda, record_shapes", l
assert l["profiler_ns"] > 0 and l["profiler_op_ns"] > 0 and l["ops_per_step"] > 0, l
assert abs(l["step_ns"] - l["profiler_ns"] - l["profiler_free_step_ns"]) < 1, l
assert l["profiler_source"], l
# the 8 ranks run the same launches: one rank's thread stalling where the others do not
# is no work of the job's
assert l["stall_peers"] == 8 and 0 < l["stall_ns"] < l["profiler_free_step_ns"], l
assert abs(l["step_ns"] - l["profiler_ns"] - l["stall_ns"] - l["job_step_ns"]) < 1, l
PY
	expect_in out "  stalls: "
	expect_in out " ms of it beyond the median of 8 ranks running the same launches"
	# with its execution traces (recorded in the same process, the same step): the
	# ExecutionTraceObserver's cost per op is taken out of the launch time too (the
	# execution traces also size 3 more collectives: the collectives' fit moves too)
	et=${ORR_SHARED_TRACES:-../shared/traces}/et/astrasim-megatron-tp8
	needs "$et"
	cp "$work/a100.json" "$work/plain.json"
	run --et "$et" fit -o "$work/a100.json" "$megatron"
	expect_rc 0
	expect_in out "profiler (cpu, cuda, record_shapes, execution_trace): "
	expect_in out " ops observed x 6.74 us (the ExecutionTraceObserver (schema 1.0) beside torch.profiler"
	python3 - "$work/plain.json" "$work/a100.json" <<'PY' || fail "the observer's cost is wrong"
import json, sys
a, b = (json.load(open(f))["launch"] for f in sys.argv[1:])
assert b["profiler_options"] == "cpu, cuda, record_shapes, execution_trace", b
assert b["profiler_op_ns"] == a["profiler_op_ns"] and a["observer_op_ns"] == 0, (a, b)
assert b["observer_op_ns"] > 0 and b["observer_source"], b
# one step, every op of it observed
assert b["observed_ops_per_step"] == b["ops_per_step"] == a["ops_per_step"], (a, b)
assert abs(b["profiler_ns"] - a["profiler_ns"] - b["observed_ops_per_step"] * b["observer_op_ns"]) < 1, (a, b)
assert b["step_ns"] == a["step_ns"] and b["stall_ns"] == a["stall_ns"], (a, b)
assert 0 < b["job_step_ns"] < a["job_step_ns"], (a, b)
PY
	# replay's note says the same
	run --et "$et" replay "$megatron"
	expect_rc 0
	expect_in out " + 5332 ops observed by the ExecutionTraceObserver x 6.74 us, docs/estimator.md)"
	;;
estimate)
	fit_costs
	run estimate "${model[@]}" "${layout[@]}" --costs "$work/a100.json"
	expect_rc 0
	expect_in out "(costs file: calibrated on the trace it was fitted on, profiler overhead removed "
	read -r us removed stalls <<<"$(launch_of)"
	[[ -n ${us:-} && -n ${removed:-} && -n ${stalls:-} ]] ||
		fail "no launch line with the removed overhead and stalls"
	# the value as recorded (the profiler's and the stalls included) is the sum; what was
	# removed counts
	python3 -c "import sys; u, r, s = map(float, sys.argv[1:]); sys.exit(not (r > 1 and s > 1 and u > 0))" \
		"$us" "$removed" "$stalls" || fail "launch $us us, removed $removed and $stalls us"
	# a file that does not say what the profiler added: as recorded, and said so
	python3 - "$work/a100.json" "$work/old.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["launch"] = {"step_ns": c["launch"]["step_ns"]}
json.dump(c, open(sys.argv[2], "w"))
PY
	run estimate "${model[@]}" "${layout[@]}" --costs "$work/old.json"
	expect_rc 0
	expect_in out "(costs file: calibrated on the trace it was fitted on, as recorded: the file does not say what the profiler added"
	old=$(sed -n 's/.*launches *\([0-9.]*\) us.*/\1/p' "$work/out")
	python3 -c "import sys; u, r, s, o = map(float, sys.argv[1:]); sys.exit(abs(u + r + s - o) > 0.2)" \
		"$us" "$removed" "$stalls" "$old" ||
		fail "$us + $removed + $stalls us is not the $old us as recorded"
	# a file written before the stalls were found: the profiler's part alone removed
	python3 - "$work/a100.json" "$work/nostall.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
l = c["launch"]
c["launch"] = {"step_ns": l["step_ns"], "profiler_ns": l["profiler_ns"]}
json.dump(c, open(sys.argv[2], "w"))
PY
	run estimate "${model[@]}" "${layout[@]}" --costs "$work/nostall.json"
	expect_rc 0
	grep -q "host stalls removed" "$work/out" && fail "stalls removed that the file does not give"
	nostall=$(sed -n 's/.*launches *\([0-9.]*\) us.*/\1/p' "$work/out")
	python3 -c "import sys; u, s, n = map(float, sys.argv[1:]); sys.exit(abs(u + s - n) > 0.2)" \
		"$us" "$stalls" "$nostall" || fail "$us + $stalls us is not the $nostall us without stalls"
	run estimate "${model[@]}" "${layout[@]}" --costs "$work/a100.json" --format=json
	expect_rc 0
	python3 - "$work/out" "$us" <<'PY' || fail "the JSON's launch differs from the text's"
import json, sys
s = json.load(open(sys.argv[1]))["sources"]
assert "profiler overhead removed" in s["launch"], s
assert abs(s["launch_ns"] / 1e3 - float(sys.argv[2])) < 0.1, s
assert s["launch_profiler_ns"] > 0 and s["launch_stall_ns"] > 0, s
PY
	run estimate "${model[@]}" "${layout[@]}" --costs "$work/a100.json" --launch-us 70
	expect_rc 0
	expect_in out "70.0 us of the launch thread per kernel (--launch-us)"
	run estimate "${model[@]}" "${layout[@]}"
	expect_rc 0
	expect_in out "0.0 us of the launch thread per kernel (none)"
	;;
whatif)
	fit_costs
	run whatif "${model[@]}" --gpus 64 --tp 8 --pp 1 --micro-batch 1 --costs "$work/a100.json"
	expect_rc 0
	expect_in out "  launches     "
	expect_in out "(costs file: calibrated on the trace it was fitted on, profiler overhead removed "
	run whatif "${model[@]}" --gpus 64 --tp 8 --pp 1 --micro-batch 1 --costs "$work/a100.json" \
		--format=json
	expect_rc 0
	python3 - "$work/out" <<'PY' || fail "whatif's JSON lacks the launch source"
import json, sys
w = json.load(open(sys.argv[1]))
assert w["launch_ns"] > 0 and "profiler overhead removed" in w["launch"], w["launch"]
assert w["ranked"][0]["sources"]["launch"] == w["launch"], w["ranked"][0]["sources"]
PY
	run whatif "${model[@]}" --gpus 64 --tp 8 --pp 1 --micro-batch 1
	expect_rc 0
	expect_in out "  launches     0.0 us of the launch thread per kernel (none)"
	run whatif --gpus 8 --tp 4,8 --global-batch 8 "$megatron"
	expect_rc 0
	expect_in out "(trace calibrated, profiler overhead removed "
	;;
*)
	fail "usage: run-profcost.sh fit|estimate|whatif"
	;;
esac
exit 0
