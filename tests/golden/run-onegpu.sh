#!/bin/bash
# A trace of one GPU (suite golden), from the source root with $ORRERY set: the plain
# PyTorch GPT of ../shared/whatif/h200-gpt, one process with no communicator (77 without
# ../shared):
#
#   run-onegpu.sh fit        fit says world 1 and tp = pp = dp = 1, inferred, and why
#   run-onegpu.sh estimate   estimate in place, as traced, equals the replay (and less
#                            without the profiler's host time); --layers 24, --dp 8,
#                            --tp 2 --gpus-per-node 8 change what they name and only that;
#                            --launch-us is said not to apply to the re-timed trace;
#                            another --hidden says the traced FFN is kept; no sequence
#                            parallelism at TP 1, no sharding at DP 1; the launch time calibrated on the
#                            trace is the same through its costs file
#   run-onegpu.sh whatif     a sweep of 1 GPU holds the recorded configuration, at its
#                            replay without the profiler's host time (as traced: the
#                            replay); one of 8 GPUs ranks its layouts; each row has the
#                            trace's measured step
#   run-onegpu.sh attention  its SDPA ops are fused attention: fit and estimate say so,
#                            no scores are counted in memory, and a longer sequence
#                            costs more than a larger micro-batch of the same tokens
#                            (the fused kernels' work grows with s² per sequence)
#   run-onegpu.sh dir        a directory of separate runs names a file to give; two runs
#                            named as ranks are read with a warning
#   run-onegpu.sh lost       the same trace with one NCCL all-reduce added, as a rank of
#                            a larger job whose distributedInfo was lost: its world and
#                            dp stay unknown, and estimate refuses it
#   run-onegpu.sh range      a change of sizes that would scale a kernel past what a
#                            replay takes (1e6) names the kernel and what to try, not
#                            the replay's task index; just under it, an estimate
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

runs=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt
base=$runs/base.json.gz
needs "$base"

# The JSON of the last run, checked by the Python that follows on standard input.
check_json() {
	cp "$work/out" "$work/$1.json"
	python3 - "$work/$1.json" || fail "$1: the JSON check failed"
}

# Each estimate (options ARGS...) of $base is the row of sweep JSON SWEEP with its layout,
# its vocabulary and its step to 1e-6.
estimates_are_rows() {
	local sweep=$1 args
	shift
	for args; do
		# shellcheck disable=SC2086 # the options, split
		run estimate --format=json $args "$base"
		expect_rc 0
		python3 - "$sweep" "$work/out" <<'PY' || { show; fail "whatif and estimate differ: $args"; }
import json, sys
w = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
c = e["config"]
key = lambda k: (k["tp"], k["dp"], k["micro_batch"], k["micro_batches"], k["recompute"])
row = [r for r in w["ranked"] if key(r["config"]) == key(c)]
assert len(row) == 1, (key(c), [key(r["config"]) for r in w["ranked"]])
assert row[0]["config"]["vocab"] == c["vocab"], (row[0]["config"]["vocab"], c["vocab"])
assert abs(row[0]["iteration_ns"] / e["iteration_ns"] - 1) < 1e-6, (row[0]["iteration_ns"], e["iteration_ns"])
PY
	done
}

case ${1:-} in
fit)
	run fit "$base"
	expect_rc 0
	for v in tp pp dp; do
		grep -qE "^  $v +1  inferred  world 1: one process, no communicator$" "$work/out" ||
			{ show; fail "fit: no '$v 1 inferred' of world 1"; }
	done
	grep -qE "^  world +1  inferred  one process, no communicator$" "$work/out" ||
		{ show; fail "fit: no 'world 1 inferred'"; }
	# info says the trace gives no world size (null), not a size of -1
	run info --format=json "$base"
	expect_rc 0
	check_json info <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
assert r["world_size"] is None, r["world_size"]
PY
	;;
estimate)
	run estimate --format=json "$base"
	expect_rc 0
	check_json self <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert e["method"] == "retime", e["method"]
c = e["config"]
assert (c["tp"], c["pp"], c["dp"], c["layers"]) == (1, 1, 1, 12), c
assert abs(e["traced_ns"] / e["replayed_ns"] - 1) < 1e-6, (e["traced_ns"], e["replayed_ns"])
# the estimate leaves out what the profiler added to the host
assert 0 < e["profiler_host_ns"] and e["iteration_ns"] < e["traced_ns"], e
PY
	run estimate --dp 1 --tp 1 --pp 1 --format=json "$base"
	expect_rc 0
	check_json ones <<'PY'
import json, sys
assert json.load(open(sys.argv[1]))["method"] == "retime"
PY
	# a re-timed trace keeps its own host timeline: --launch-us is said not to apply
	run estimate --launch-us 5 "$base"
	expect_rc 0
	expect_in out "host: the trace's own timeline (--launch-us does not apply"
	run estimate --launch-us 5 --format=json "$base"
	expect_rc 0
	check_json launch <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert e["method"] == "retime", e["method"]
assert e["sources"]["host"] == "the trace's own timeline (--launch-us does not apply)", e["sources"]
PY
	# Each change of structure: synthesized, the change where it was asked, the rest kept.
	for c in "layers 24" "dp 8" "tp 2"; do
		read -r what n <<<"$c"
		extra=()
		[[ $what == tp ]] && extra=(--gpus-per-node 8)
		run estimate --"$what" "$n" "${extra[@]}" --format=json "$base"
		expect_rc 0
		WHAT=$what N=$n check_json "$what" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))
what, n = os.environ["WHAT"], int(os.environ["N"])
want = {"layers": 12, "tp": 1, "pp": 1, "dp": 1, "micro_batch": 8, "hidden": 1024}
want[what] = n
c = e["config"]
assert all(c[k] == v for k, v in want.items()), (want, c)
# layers that repeat are stretched on the trace's graph; TP or DP from 1 is synthesized
assert e["method"] == ("retime" if what == "layers" else "synthesis-ratio"), e["method"]
assert e["iteration_ns"] > 0 and e["iteration_ns"] != e["replayed_ns"], e["iteration_ns"]
if what == "layers":  # twice the layers: more time, less than twice the step
    assert e["replayed_ns"] < e["iteration_ns"] < 2 * e["replayed_ns"], e["iteration_ns"]
if what in ("dp", "tp"):  # a communicator of n GPUs appears
    assert e["synthesized"]["collectives"] > 0, e["synthesized"]
PY
	done
	run estimate --layers 24 "$base"
	expect_rc 0
	grep -qE "^  layers +12 +24  changed$" "$work/out" || { show; fail "no layers 12 -> 24"; }
	grep -qF "kept: the trace's" "$work/out" && { show; fail "ffn said kept, hidden unchanged"; }
	# Another hidden keeps the traced FFN unless --ffn says, and says so; sequence
	# parallelism at TP 1 is off, as Megatron-LM turns it off.
	run estimate --hidden 2048 "$base"
	expect_rc 0
	expect_in out "  ffn                4096       4096  kept: the trace's, with another hidden (--ffn changes it)"
	run estimate --hidden 2048 --sequence-parallel --format=json "$base"
	expect_rc 0
	check_json ffn <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["ffn"] == 4096 and c["ffn_kept"] is True, c
assert c["sequence_parallel"] is False, c
PY
	# The launch time calibrated on the trace, directly and through its costs file: one
	# value (the costs file kept the fused attention the calibration synthesizes).
	run fit -o "$work/costs.json" "$base"
	expect_rc 0
	run estimate --dp 2 "$base"
	expect_rc 0
	direct=$(grep -E '^  launches ' "$work/out" | awk '{print $2}')
	run estimate --gpu h200-sxm --costs "$work/costs.json" --layers 12 --hidden 1024 --heads 16 \
		--ffn 4096 --vocab 50304 --seq 1024 --micro-batch 8 --global-batch 8 --attention flash
	expect_rc 0
	via=$(grep -E '^  launches ' "$work/out" | awk '{print $2}')
	[[ -n $direct && $direct == "$via" ]] ||
		{ show; fail "launch time from the trace $direct us, through its costs $via us"; }
	# On a change the trace's replay is scaled for, --launch-us times the ratio's two
	# synthesized steps, not the trace's host: the report says so.
	run estimate --dp 4 --launch-us 5 "$base"
	expect_rc 0
	expect_in out "(--launch-us: it times the two synthesized steps whose ratio scales the trace's replay; the trace's own host timeline is kept)"
	# Sharding over one data-parallel rank shards nothing: the trace is re-timed in place.
	run estimate --fsdp --distributed-optimizer --overlap-grad-reduce --format=json "$base"
	expect_rc 0
	check_json dp1 <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
c = e["config"]
assert e["method"] == "retime", e["method"]
assert not (c["fully_sharded"] or c["distributed_optimizer"] or c["overlap_grad_reduce"]), c
PY
	run estimate --hidden 2048 --ffn 8192 --format=json "$base"
	expect_rc 0
	check_json ffn-given <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["ffn"] == 8192 and "ffn_kept" not in c, c
PY
	;;
whatif)
	run whatif --gpus 1 --format=json "$base"
	expect_rc 0
	check_json one <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
assert w["feasible"] >= 1, w["feasible"]
rec = [r for r in w["ranked"] if r["is_recorded"]]
assert len(rec) == 1, [r["config"] for r in w["ranked"]]
# as estimate estimates it in place: without the profiler's host time, with it as traced
assert rec[0]["profiler_host_ns"] > 0, rec[0]
assert abs(rec[0]["traced_ns"] / rec[0]["replayed_ns"] - 1) < 1e-6, rec[0]
assert rec[0]["iteration_ns"] < rec[0]["traced_ns"] - rec[0]["profiler_host_ns"] / 2, rec[0]
# the trace's measured step, as estimate reports it (it was 0)
assert all(r["measured_ns"] > 0.9 * r["replayed_ns"] for r in w["ranked"]), rec[0]
PY
	run whatif --gpus 8 "$base"
	expect_rc 0
	expect_in out "recorded tp 1 pp 1 dp 1"
	expect_in out "the estimates leave out the"
	# a sweep of a trace says how each configuration is estimated from it
	expect_in out "the trace re-timed to its sizes (micro-batch, TP, DP and the model's) in the recorded layout"
	grep -q "^model description" "$work/out" && { show; fail "a trace's sweep called a description"; }
	grep -qE "^ +1 +8 " "$work/out" || { show; fail "no configuration of 8 GPUs ranked"; }
	# A global batch the recorded micro-batch (8) does not divide: the sweep's own
	# micro-batch sizes do (it was refused, "not a multiple of micro-batch x dp (8)").
	run whatif --gpus 1 --global-batch 12 --format=csv "$base"
	expect_rc 0
	python3 - "$work/out" <<'PY' || { show; fail "--global-batch 12: not its micro-batches"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mbs = sorted({int(r["micro_batch"]) for r in rows if r["feasible"] == "1"})
assert mbs and all(12 % m == 0 for m in mbs), mbs
assert all(int(r["micro_batch"]) * int(r["micro_batches"]) == 12 for r in rows if r["feasible"] == "1"), rows[:2]
PY
	;;
anchor)
	# A change of sizes and of structure: the sizes' retime times the synthesized ratio,
	# never faster than the retime alone (selective recompute was 71.2 ms against 81.7).
	run estimate --format=json --hidden 2048 --ffn 8192 "$base"
	expect_rc 0
	cp "$work/out" "$work/sizes.json"
	run estimate --format=json --hidden 2048 --ffn 8192 --recompute selective "$base"
	expect_rc 0
	check_json both <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[1].replace("both.json", "sizes.json")))
assert r["method"] == "retime" and e["method"] == "synthesis-ratio", (r["method"], e["method"])
s = e["synthesized"]
assert s["retimed_anchor_ns"] == r["iteration_ns"] and s["recorded_ns"] is None, s
assert s["anchor_ns"] > 0 and s["target_ns"] > s["anchor_ns"], s
assert r["iteration_ns"] < e["iteration_ns"] < 1.1 * r["iteration_ns"], (r["iteration_ns"], e["iteration_ns"])
PY
	run estimate --hidden 2048 --ffn 8192 --recompute selective "$base"
	expect_rc 0
	expect_in out "  re-timed         81.741 ms (the trace re-timed to the target's sizes, in its own layout)"
	# Every row of a sweep is what estimate gives its layout: re-timed sizes, then the ratio.
	run whatif --gpus 1 --global-batch 16 --top 0 --format=json "$base"
	expect_rc 0
	cp "$work/out" "$work/sweep.json"
	estimates_are_rows "$work/sweep.json" "--micro-batch 16" "--micro-batch 16 --recompute selective" \
		"--micro-batch 8 --global-batch 16" "--micro-batch 4 --global-batch 16 --recompute full"
	# Another TP: its padded vocabulary in both (whatif's rows were anchored on it alone)
	run whatif --gpus 2 --top 0 --format=json "$base"
	expect_rc 0
	cp "$work/out" "$work/tp.json"
	estimates_are_rows "$work/tp.json" "--tp 2" "--tp 2 --recompute selective" \
		"--tp 2 --micro-batch 4 --global-batch 8" "--dp 2 --micro-batch 4"
	# Forward passes of a training trace: not anchored on its training step (it was, and
	# --forward-only --hidden 2048 gave the whole training step, 81.7 ms)
	run estimate --format=json --forward-only --hidden 2048 --ffn 8192 "$base"
	expect_rc 0
	cp "$work/out" "$work/fwd.json"
	run whatif --gpus 1 --forward-only --hidden 2048 --ffn 8192 --top 0 --format=json "$base"
	expect_rc 0
	python3 - "$work/out" "$work/fwd.json" "$work/sizes.json" <<'PY' || { show; fail "--forward-only with new sizes"; }
import json, sys
w = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
t = json.load(open(sys.argv[3]))
assert f["iteration_ns"] < 0.5 * t["iteration_ns"], (f["iteration_ns"], t["iteration_ns"])
assert f["synthesized"]["retimed_anchor_ns"] is None, f["synthesized"]
row = [r for r in w["ranked"] if r["config"]["micro_batch"] == 8 and r["config"]["recompute"] == "none"]
assert len(row) == 1 and abs(row[0]["iteration_ns"] / f["iteration_ns"] - 1) < 1e-6, (row, f["iteration_ns"])
PY
	run whatif --gpus 1 --layers 24 --top 0 --format=json "$base"
	expect_rc 0
	cp "$work/out" "$work/layers.json"
	run estimate --format=json --layers 24 "$base"
	expect_rc 0
	python3 - "$work/layers.json" "$work/out" <<'PY' || { show; fail "whatif --layers 24 is not estimate's"; }
import json, sys
w = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert e["method"] == "retime", e["method"]
row = [r for r in w["ranked"] if r["config"]["micro_batch"] == 8 and r["config"]["recompute"] == "none"]
assert len(row) == 1 and abs(row[0]["iteration_ns"] / e["iteration_ns"] - 1) < 1e-6, (row, e["iteration_ns"])
assert row[0]["synthesized"]["retimed_anchor_ns"] == e["iteration_ns"], row[0]["synthesized"]
PY
	;;
attention)
	run fit --format=json "$base"
	expect_rc 0
	check_json fit <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
st = [r["structure"] for r in f["ranks"]] if "ranks" in f else [f["structure"]]
assert all(s["fused_attention"] is True for s in st), st
PY
	run estimate --format=json "$base"
	expect_rc 0
	check_json rec <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert e["recorded"]["attention"] == "flash", e["recorded"]
assert e["config"]["attention"] == "flash", e["config"]
PY
	cp "$work/rec.json" "$work/base-est.json"
	run estimate --format=json --heads 32 "$base"
	expect_rc 0
	check_json heads <<'PY'
import json, sys
# flash attention stores no b·a·s² scores: the memory does not grow with the heads
e = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[1].replace("heads.json", "base-est.json")))
assert e["memory_bytes_per_gpu"] == b["memory_bytes_per_gpu"], (e["memory_bytes_per_gpu"], b["memory_bytes_per_gpu"])
PY
	# the heads changed though no modeled GPU time did: not "the configuration is the trace's"
	run estimate --heads 32 "$base"
	expect_rc 0
	expect_in out "  none: what changed moves no modeled GPU time"
	run estimate --format=json --micro-batch 16 "$base"
	expect_rc 0
	cp "$work/out" "$work/batch.json"
	run estimate --format=json --seq 2048 "$base"
	expect_rc 0
	check_json seq <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[1].replace("seq.json", "batch.json")))
assert s["method"] == b["method"] == "retime", (s["method"], b["method"])
# the same tokens; the attention kernels' work is 4 x the base's at seq 2048, 2 x at
# micro-batch 16 (about 2.8 ms a step at the base)
assert s["iteration_ns"] > b["iteration_ns"] * 1.04, (s["iteration_ns"], b["iteration_ns"])
PY
	;;
dir)
	# Four runs of one process each, none naming its rank: not one job.
	run estimate --layers 24 "$runs"
	expect_rc 1
	expect_in err "separate runs"
	expect_in err "give one file, e.g. '$runs/base.json.gz'"
	# Two of them named as ranks of one job: read as named, with a warning (they share
	# no communicator, no collective and no moment; it was a 20.7 s step, silently).
	mkdir -p "$work/mixed"
	ln -s "$(cd "$runs" && pwd)/base.json.gz" "$work/mixed/rank0.json.gz"
	ln -s "$(cd "$runs" && pwd)/layers24.json.gz" "$work/mixed/rank1.json.gz"
	run info "$work/mixed"
	expect_rc 0
	expect_in err "its 2 ranks share no communicator, no collective and no moment"
	run info "$runs/base.json.gz"
	expect_rc 0
	grep -qF "share no communicator" "$work/err" && { show; fail "one run warned as apart"; }
	;;
lost)
	python3 - "$base" "$work/lost.json" <<'PY' || fail "cannot write the trace"
import gzip, json, sys
t = json.load(gzip.open(sys.argv[1]))
ev = t["traceEvents"]
k = min((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
host = next(e for e in ev if e.get("cat") == "cuda_runtime")
ts, corr = k["ts"] + 1, 1 << 30
ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": host["pid"],
           "tid": host["tid"], "ts": ts, "dur": 1, "args": {"correlation": corr}})
ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
           "pid": k["pid"], "tid": k["tid"], "ts": ts + 2, "dur": 10,
           "args": {"correlation": corr, "stream": k["args"]["stream"], "device": 0,
                    "Collective name": "allreduce", "Group size": 2,
                    "In msg nelems": 1024, "dtype": "BFloat16"}})
json.dump(t, open(sys.argv[2], "w"))
PY
	run fit "$work/lost.json"
	expect_rc 0
	grep -qE "^  dp +\?  unknown" "$work/out" || { show; fail "fit: dp not unknown"; }
	grep -qF "one process, no communicator" "$work/out" && { show; fail "fit: world 1"; }
	run estimate --layers 24 "$work/lost.json"
	expect_rc 1
	expect_in err "the trace does not give its dp"
	;;
range)
	# The fused attention's kernels grow by s'^2 / s^2 per sequence: 2^20 at --seq 1048576.
	run estimate --seq 1048576 "$base"
	expect_rc 1
	expect_in err "orrery: error: cannot re-time the trace: its GPU task 'cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob' (rank 0) would take 1.04858e+06 times its traced time, more than the 1e+06 a replay scales a task by; try a smaller change, or describe the model with the costs of 'orrery fit -o' (--costs) instead of the trace"
	grep -qF "of task" "$work/err" && { show; fail "the replay's task index shown"; }
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	run estimate --micro-batch 2147483647 "$base"
	expect_rc 1
	expect_in err "orrery: error: cannot re-time the trace: its GPU task '"
	expect_in err "would take 2.68435e+08 times its traced time"
	run estimate --seq 65536 "$base"
	expect_rc 0
	expect_in out "by retime"
	;;
*)
	fail "usage: run-onegpu.sh fit|estimate|whatif|attention|dir|lost|range"
	;;
esac
exit 0
