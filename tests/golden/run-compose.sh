#!/bin/bash
# CLI tests of `orrery compose` (suite golden), run from the source root with $ORRERY set:
#
#   run-compose.sh golden          a small trace with its execution trace: the plan
#                                  (rank-0.json) and the report equal the expected files
#   run-compose.sh roundtrip       the traces with execution traces (PARAM's linear model,
#                                  the 8 Megatron ranks): bench.py compiles, reads every
#                                  plan back as the report says (check-compose.py), and
#                                  the operators re-create most of the GPU time
#   run-compose.sh every           every shared trace: a benchmark, its coverage reported
#                                  and its plans read back
#   run-compose.sh options         --ops, --subgraph, --repeat and --step change the plan
#                                  as they say; an --et that links to no rank is said so;
#                                  a collective runs only where every member can run it
#   run-compose.sh cpu-run         the composed benchmark runs every operator on the CPU
#                                  (--device cpu), where PyTorch is installed (else skipped)
#   run-compose.sh cpu-shared      the benchmarks of the shared traces with execution
#                                  traces (Megatron TP=8 rank 0, PARAM's linear model, the
#                                  simple-add pair) and of the H200 GPT job's Kineto trace
#                                  (no ET) run every operator on the CPU, each distinct
#                                  call once (bench.py --device cpu --distinct): no
#                                  failure but those expected-and-listed here (fp16 GEMMs,
#                                  on a PyTorch without them on the CPU, as Debian's 1.13;
#                                  operators the running PyTorch lacks, checked absent from
#                                  its torch.ops: the GPT step's SDPA on 1.13), skipped only
#                                  for a stream argument or CUDA kernels only
#   run-compose.sh kineto-values   the H200 GPT job's Kineto trace (no ET; PyTorch 2.11
#                                  recorded "Concrete Inputs"): ops with scalar arguments
#                                  are operators given the recorded values (transpose's
#                                  dims, view's sizes, to's dtype), what the profiler
#                                  recorded neither as a tensor nor as a scalar is the
#                                  schema's default ({"d": null}); operators re-create at
#                                  least 90 % of the step's GPU time (41 % without the
#                                  values); tensors are views with the recorded "Input
#                                  Strides" (aten::mm's transposed operands); the plan
#                                  passes bench.py --check
#   run-compose.sh kineto-lists    lists of tensors without an ET (a made trace): an
#                                  aten::cat whose members' shapes and strides were
#                                  recorded is an operator given a list of tensors of the
#                                  dtype its kernel's OpaqueType<N> size and the trace's one
#                                  dtype of that size give; one whose kernel names no size,
#                                  or whose size two recorded dtypes share, or whose
#                                  members were not recorded, is a stand-in saying why;
#                                  on the CPU (where PyTorch is installed) the cat runs;
#                                  runs without ../shared
#   run-compose.sh gpu-check       bench/gpu/compose-check.py on a GPU run made of the
#                                  H200 GPT trace (as original and as the benchmark's
#                                  profile): kernels classed by orrery summary (nvjet
#                                  GEMMs are gemm), the observed step left out of the
#                                  original, a missing profile an error (exit 2); the
#                                  Megatron rank's compute classes (as if run on the
#                                  H200: its profile is the GPT trace's) beside the
#                                  A100's scaled by the hardware table's ratios (orrery
#                                  info's devices[].spec), its missing profile an error
#   run-compose.sh autocast        a step as autocast ran it (mk-compose-autocast.py):
#                                  the wrapper aten::linear(bf16, fp32) is not rebuilt,
#                                  its cast and inner bf16 call are; record_stream's
#                                  stream is the op's own, set_'s storage refused; on the CPU (where PyTorch is
#                                  installed) nothing fails; with a second step recorded
#                                  after the observed one, that step is composed (its GPU
#                                  work and timing) with the observed one's arguments;
#                                  runs without ../shared
#   run-compose.sh usage           usage errors, --help, an output in the way
#   run-compose.sh hostile         traces whose op names, schemas, string arguments and
#                                  shapes try to make the plan run something other than an
#                                  operator (mk-compose-hostile.py): such ops are left out
#                                  and listed, bad shapes refused naming the node; bench.py
#                                  --check refuses hand-made hostile plans
#                                  (check-bench-safe.py evil); runs without ../shared
#   run-compose.sh plans           property: every plan composed from the fuzz corpora
#                                  (et, compose) and the hostile traces that bench.py
#                                  --check accepts calls only allowed operators with
#                                  safe strings (check-bench-safe.py plans)
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
add=$shared/kineto/hta-microbench-simple-add-et-pair.json.gz
add_et=$shared/et/hta-simple-add-et.json.gz
linear=$shared/kineto/param-linear.json.gz
linear_et=$shared/et/param-linear-et.json.gz
megatron=$shared/kineto/astrasim-megatron-tp8
megatron_et=$shared/et/astrasim-megatron-tp8
case ${1:-} in hostile | plans | autocast | kineto-lists) ;; *) needs "$shared" ;; esac

# compose ARGS... into $work/$1 with a JSON report in $work/$1.json, checked.
compose_ok() {
	local name=$1
	shift
	rm -rf "${work:?}/$name"
	run compose --format=json -o "$work/$name" "$@"
	expect_rc 0
	cp "$work/out" "$work/$name.json"
	[[ -f $work/$name/bench.py ]] || fail "no bench.py in $name"
}

# A Python that imports torch (Debian's python3-torch is /usr/bin/python3's), or fails.
torch_python() {
	python_with 'import torch'
}

report() { # report NAME EXPR: a value of the JSON report
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$work/$1.json"
}

mode=${1:-}
case $mode in
golden)
	rm -rf "$work/g"
	run compose -o "$work/g" --et "$add_et" "$add"
	expect_rc 0
	sed "s|$work|DIR|g" "$work/out" >"$work/report.txt"
	# the plan names its trace by the path it was given: where the shared traces are
	sed "s|$shared|SHARED|g" "$work/g/rank-0.json" >"$work/plan.json"
	for f in report.txt:compose-simple-add.txt plan.json:compose-simple-add.json; do
		got=$work/${f%%:*} want=$golden/${f##*:}
		if [[ ${ORR_GOLDEN_UPDATE:-} == 1 ]]; then
			cp "$got" "$want"
		elif ! diff -u "$want" "$got" >&2; then
			fail "${f%%:*} differs from $want (ORR_GOLDEN_UPDATE=1 rewrites it)"
		fi
	done
	cmp -s "$work/g/bench.py" compose/bench.py || fail "bench.py is not compose/bench.py"
	;;
roundtrip)
	compose_ok linear --et "$linear_et" "$linear"
	python3 -m py_compile "$work/linear/bench.py" || fail "bench.py does not compile"
	python3 "$golden/check-compose.py" "$work/linear.json" "$work/linear" --min-coverage 0.9 ||
		fail "linear: the plan does not read back as reported"
	compose_ok megatron --et "$megatron_et" "$megatron"
	python3 "$golden/check-compose.py" "$work/megatron.json" "$work/megatron" \
		--min-recreated 0.5 || fail "megatron: the plan does not read back as reported"
	# the collectives' time is mostly their wait for the slowest peer: reported apart
	[[ $(report megatron '0 < r["shares"]["collective_wait"] < r["shares"]["collectives"]') == True ]] ||
		fail "megatron: the collectives' wait for their peers is not reported"
	# the tensor-parallel ranks run the same collectives, in the same order
	for r in 0 1 2 3 4 5 6 7; do
		python3 -c 'import json,sys
p=json.load(open(sys.argv[1]))
print(" ".join("%s/%s" % (i[1], i[5]) for i in p["items"] if i[0] == "comm"))' \
			"$work/megatron/rank-$r.json" >"$work/comms-$r"
		cmp -s "$work/comms-0" "$work/comms-$r" ||
			fail "rank $r's collectives differ from rank 0's"
	done
	[[ -s $work/comms-0 ]] || fail "no collective in the Megatron plan"
	;;
every)
	n=0
	for f in "$shared"/*/*; do
		case $f in */et/* | */chakra/*) continue ;; esac
		compose_ok every "$f"
		python3 "$golden/check-compose.py" "$work/every.json" "$work/every" ||
			fail "$f: the plan does not read back as reported"
		echo "$(basename "$f"): coverage $(report every 'r.get("coverage")')" >&2
		n=$((n + 1))
	done
	((n >= 10)) || fail "only $n shared traces"
	;;
options)
	compose_ok all --et "$megatron_et" "$megatron"
	compose_ok compute --ops compute --et "$megatron_et" "$megatron"
	compose_ok comm --ops comm --et "$megatron_et" "$megatron"
	[[ $(report compute 'sum(x["comms"] for x in r["ranks"])') == 0 ]] ||
		fail "--ops compute kept collectives"
	[[ $(report comm 'sum(x["ops"] + x["fills"] for x in r["ranks"])') == 0 ]] ||
		fail "--ops comm kept operators"
	[[ $(report all 'r["ranks"][0]["comms"]') == $(report comm 'r["ranks"][0]["comms"]') ]] ||
		fail "--ops comm lost collectives"
	[[ $(report compute 'r["ranks"][0]["dropped_ns"]') == $(report all 'r["ranks"][0]["comm_ns"]') ]] ||
		fail "--ops compute: what it left out is not the collectives' time"
	compose_ok sub --subgraph 'FusedLayerNorm*' --et "$megatron_et" "$megatron"
	[[ $(report sub 'r["ranks"][0]["comms"]') == 0 ]] || fail "--subgraph kept collectives"
	[[ $(report sub 'r["ranks"][0]["fills"] > 0 and r["ranks"][0]["fills"] < 100') == True ]] ||
		fail "--subgraph did not keep the layer norms alone"
	compose_ok rep --repeat 'FusedLayerNorm*=3' --et "$megatron_et" "$megatron"
	[[ $(report rep 'r["ranks"][0]["fills"]') == \
		$(($(report all 'r["ranks"][0]["fills"]') + 2 * $(report sub 'r["ranks"][0]["fills"]'))) ]] ||
		fail "--repeat NAME=3 did not run the regions three times"
	compose_ok step --step 3 --et "$megatron_et" "$megatron"
	[[ $(report step 'r["step"]') == 3 ]] || fail "--step 3 composed another step"
	run compose -o "$work/nostep" --step 7 "$megatron"
	expect_rc 1
	expect_in err "no step 7"
	run compose -o "$work/nosub" --subgraph 'no-such-region' "$megatron"
	expect_rc 1
	expect_in err "no-such-region"
	# An execution trace of another job links to no rank's ops: the plan is the
	# trace's alone, and compose says so (it was silent, args_step -1).
	run compose --format=json -o "$work/unlinked" --et "$linear_et" "$megatron"
	expect_rc 0
	expect_in err "no rank's ops match the execution trace's"
	compose_ok linked --et "$megatron_et" "$megatron"
	grep -qF "no rank's ops match" "$work/err" && fail "a linked execution trace said not to link"
	# Execution traces of ranks 0-6 alone: rank 7 can only sleep for its all-reduces, so
	# every member sleeps (ranks 0-6 ran real ones and waited for rank 7 forever).
	mkdir -p "$work/et7"
	for k in 0 1 2 3 4 5 6; do ln -sf "$(cd "$megatron_et" && pwd)/rank-$k.et.json.gz" "$work/et7/"; done
	compose_ok part7 --et "$work/et7" "$megatron"
	[[ $(report part7 'sum(x["comms"] for x in r["ranks"])') == 0 ]] ||
		fail "ranks with an execution trace run collectives a rank without one sleeps for"
	[[ $(report part7 '[m["tasks"] for m in r["missing"] if m["reason"].startswith("collective a member rank cannot")]') == "[588]" ]] ||
		fail "the collectives a member cannot run are not listed as missing"
	[[ $(report linked 'sorted({x["comms"] for x in r["ranks"]})') == "[84]" ]] ||
		fail "every rank with its execution trace: not 84 collectives each"
	;;
cpu-run)
	py=$(torch_python) || { echo "skipped: no PyTorch" >&2; exit 77; }
	compose_ok linear --et "$linear_et" "$linear"
	"$py" "$work/linear/bench.py" --device cpu --steps 1 --warmup 1 --json >"$work/run.json" ||
		fail "bench.py --device cpu failed"
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
if r["failed"]:
    sys.exit("operators failed: %r" % r["failed"])
if len(r["steps_ns"]) != 1 or r["steps_ns"][0] <= 0:
    sys.exit("no timed step")' "$work/run.json" || fail "the benchmark did not run every operator"
	;;
cpu-shared)
	py=$(torch_python) || { echo "skipped: no PyTorch" >&2; exit 77; }
	gpt=${shared%/traces}/whatif/h200-gpt/base.json.gz
	needs "$gpt"
	# fp16 matmul on the CPU: absent from PyTorch 1.13 ("addmm_impl_cpu_" not
	# implemented for 'Half'), where Megatron's fp16 GEMMs are the expected failures
	half=$("$py" -c 'import torch
a = torch.ones(2, 2, dtype=torch.half)
try:
    torch.mm(a, a)
    print(1)
except RuntimeError:
    print(0)')
	for c in "megatron:--et $megatron_et $megatron" "linear:--et $linear_et $linear" \
		"add:--et $add_et $add" "gpt:$gpt"; do
		name=${c%%:*}
		# shellcheck disable=SC2086 # the options and paths, split on purpose
		compose_ok "$name" ${c#*:}
		if ! why=$("$py" "$golden/cpu-gemm-time.py" "$work/$name/rank-0.json" 120); then
			echo "$name: the CPU run left out: $why" >&2
			continue
		fi
		"$py" "$work/$name/bench.py" --device cpu --distinct --json >"$work/$name-run.json" ||
			fail "$name: bench.py --device cpu --distinct failed"
		expected=
		[[ $name == megatron && $half == 0 ]] &&
			expected="aten::baddbmm aten::bmm aten::matmul"
		# operators newer than the running PyTorch (the H200 job ran 2.11): "not in
		# this PyTorch", each checked absent from torch.ops here
		absent=$("$py" -c 'import json,sys,torch
p = json.load(open(sys.argv[1]))
names = sorted({i[1] for i in p["items"] if i[0] == "op"})
print(" ".join(n for n in names if not hasattr(getattr(torch.ops, n.split("::")[0]), n.split("::")[1])))' \
			"$work/$name/rank-0.json")
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
want, absent = sys.argv[2].split(), sys.argv[3].split()
got = sorted(f["op"] for f in r["failed"])
for f in r["failed"] + r["skipped"]:
    print("  %s x%d: %s" % (f["op"], f["count"], f["reason"]), file=sys.stderr)
assert got == sorted(want + absent), ("failed operators", got, "expected", want, absent)
for f in r["failed"]:
    assert ("not implemented for \x27Half\x27" in f["reason"] if f["op"] in want
            else f["reason"] == "not in this PyTorch"), f
# on the CPU: a stream argument (record_stream), or an operator with CUDA kernels only
for f in r["skipped"]:
    assert f["reason"] in ("a stream argument (streams are CUDA\x27s)",
                           "no CPU kernel in this PyTorch"), f
assert r["distinct_calls"] > 0, r' "$work/$name-run.json" "$expected" "$absent" ||
			fail "$name: operators failed on the CPU that the test does not expect"
		echo "$name: $(report "$name" 'r["ranks"][0]["ops"]') operators run on the CPU, what failed or was skipped as expected" >&2
	done
	;;
kineto-values)
	gpt=${shared%/traces}/whatif/h200-gpt/base.json.gz
	needs "$gpt"
	compose_ok kv "$gpt"
	python3 "$golden/check-compose.py" "$work/kv.json" "$work/kv" --min-coverage 0.9 ||
		fail "the operators of the Kineto-only step do not re-create 90 % of it"
	python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
ops = {}
for i in p["items"]:
    if i[0] == "op":
        ops.setdefault(i[1], []).append(i[5])
assert all(len(a) == 3 and {type(x) for x in a[1:]} == {int} for a in ops["aten::transpose"])
assert any(isinstance(a[1], list) and len(a[1]) >= 2 for a in ops["aten::view"])
assert [15, False, False, {"d": None}] in [a[1:] for a in ops["aten::to"]], ops["aten::to"][:3]
assert any(a[2:] == [1] for a in ops["aten::add_"]), ops["aten::add_"][:3]
assert all(a[1] == {"d": None} for a in ops["aten::gelu"]), ops["aten::gelu"][:3]' \
		"$work/kv/rank-0.json" || fail "the recorded scalar values are not the operators' arguments"
	python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
t = p["tensors"]
assert all(x[3] is None or len(x[3]) == len(x[2]) for x in t)
mm = [x["t"] for i in p["items"] if i[0] == "op" and i[1] == "aten::mm" for x in i[5]
      if isinstance(x, dict) and "t" in x]
# the weights of the backward GEMMs: transposed views, as the profiler recorded them
assert any(t[k][3] == [1, t[k][2][0]] and t[k][2][1] > 1 for k in mm), [t[k] for k in mm[:4]]
assert all(t[k][3] is not None for k in mm)' \
		"$work/kv/rank-0.json" || fail "the tensors are not built with the recorded strides"
	python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
t = p["tensors"]
cats = [i[5] for i in p["items"] if i[0] == "op" and i[1] == "aten::cat"]
assert cats and all(isinstance(a[0], list) and len(a[0]) == 3 and a[1] == 2 for a in cats), cats[:2]
assert all(t[x["t"]][2:] == [[8, 1024, 1024], [1048576, 1024, 1], "bfloat16"] for a in cats for x in a[0])
r = json.load(open(sys.argv[2]))
assert "aten::cat" not in [m["name"] for m in r["missing"]], r["missing"]' \
		"$work/kv/rank-0.json" "$work/kv.json" || fail "aten::cat is not given its recorded list of tensors"
	python3 "$work/kv/bench.py" --check >/dev/null || fail "bench.py --check refuses the plan"
	;;
gpu-check)
	gpt=${shared%/traces}/whatif/h200-gpt/base.json.gz
	needs "$gpt"
	o=$work/gpu
	mkdir -p "$o/bench-prof"
	gzip -dc "$gpt" >"$o/torch-trace.json"
	cp "$o/torch-trace.json" "$o/bench-prof/rank-0.json"
	run compose --format=json --step 5 -o "$work/gpu-bench" "$gpt"
	expect_rc 0
	# as if step 5 had been traced under the observer (compose's args_step)
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
r["args_step"] = 5
json.dump(r, open(sys.argv[2], "w"))' "$work/out" "$o/compose.json"
	# step 5 ran under the observer: 1000 ms, left out of the original's 60 ms
	printf '%s\n' '{"step": 5, "ms": 1000.0, "measured": true, "observed": true}' \
		'{"step": 6, "ms": 60.0, "measured": true, "observed": false}' \
		'{"step": 7, "ms": 60.0, "measured": true, "observed": false}' >"$o/torch.jsonl"
	echo '{"median_ns": 61000000, "failed": []}' >"$o/bench-run.json"
	python3 bench/gpu/compose-check.py --orrery "$orrery" "$o" >"$work/check.json" 2>"$work/err"
	rc=$?
	((rc == 0 || rc == 1)) || fail "compose-check.py exit $rc: $(cat "$work/err")"
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert r["original_steps"] == [6, 7, 8, 9], r["original_steps"]
assert r["benchmark_steps"] == [5, 6, 7, 8, 9], r["benchmark_steps"]
assert r["step_ms"]["original"] == 60.0, r["step_ms"]
g = r["classes"]["gemm"]
assert g["gpu_ms"][0] > 5 and g["kernels"][0] > 100, ("nvjet GEMMs are gemm", g)
assert r["classes"]["attention"]["kernels"][0] > 0, r["classes"]["attention"]
assert r["checks"]["step_within_5pct"] and r["checks"]["no_failed_ops"], r["checks"]
assert r["checks"]["execution_trace_used"] and r["checks"]["no_storage_made_timed"], r["checks"]' \
		"$work/check.json" || fail "compose-check.py does not class or select as orrery summary"
	# the A100 Megatron rank 0 "run here", with the H200 GPT trace as its profile
	run compose --format=json --et "$megatron_et" -o "$work/gpu-mega" "$megatron"
	expect_rc 0
	cp "$work/out" "$o/mega-compose.json"
	cp -r "$work/gpu-mega" "$o/mega"
	echo '{"recorded_step_ns": 595380000, "median_ns": 309600000, "collectives": "stand-ins", "failed": []}' \
		>"$o/mega-run.json"
	mkdir -p "$o/mega-prof"
	cp "$o/torch-trace.json" "$o/mega-prof/rank-0.json"
	python3 bench/gpu/compose-check.py --orrery "$orrery" --mega-trace "$megatron/rank-0.json.gz" \
		"$o" >"$work/check.json" 2>"$work/err"
	rc=$?
	((rc == 0 || rc == 1)) || fail "compose-check.py --mega-trace: exit $rc: $(cat "$work/err")"
	python3 -c 'import json,sys
m = json.load(open(sys.argv[1]))["megatron_rank0"]
assert m["devices"] == ["a100-80gb-sxm", "h200-sxm"], m["devices"]
c = m["compute_classes"]
assert sorted(c) == ["attention", "copy", "elementwise", "gemm", "reduction"], sorted(c)
assert abs(c["gemm"]["ratio"] - 312 / 989.5) < 1e-9, c["gemm"]
assert abs(c["elementwise"]["ratio"] - 2.039 / 4.8) < 1e-9, c["elementwise"]
for k, v in c.items():
    assert abs(v["expected_ms"] - v["a100_ms"] * v["ratio"]) < 1e-9, (k, v)
    # the A100 time less the kernels the benchmark only sleeps for
    assert abs(v["a100_ms"] + v["stand_in_ms"] - m["classes_ms"].get(k, [0, 0])[0]) < 1e-9, (k, v)
    assert v["here_ms"] == m["classes_ms"].get(k, [0, 0])[1], (k, v)
assert c["gemm"]["a100_ms"] > 0 and c["gemm"]["here_ms"] > 0, c["gemm"]
# the fused softmax of Megatron is slept for: 17.0 of 17.3 ms of reductions
assert abs(c["reduction"]["stand_in_ms"] - 17.025) < 1e-6, c["reduction"]
assert c["gemm"]["stand_in_ms"] == 0, c["gemm"]' "$work/check.json" ||
		fail "compose-check.py does not scale the A100 classes (less stand-ins) by the hardware table"
	# The Megatron rank is a comparison: its failure is said in its place, and the
	# GPT's checks and results stay (it was exit 2 and no results at all).
	rm "$o/mega-prof/rank-0.json"
	python3 bench/gpu/compose-check.py --orrery "$orrery" --mega-trace "$megatron/rank-0.json.gz" \
		"$o" >"$work/check.json" 2>"$work/err"
	rc=$?
	((rc == 0 || rc == 1)) || fail "no profile of the Megatron rank: exit $rc, not the GPT's checks"
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert "mega-prof (bench.py --profile wrote none)" in r["megatron_rank0"]["error"], r["megatron_rank0"]
assert r["checks"]["step_within_5pct"], r["checks"]' "$work/check.json" ||
		fail "a failed Megatron rank lost the GPT comparison"
	[[ -f $o/compose-results.json ]] || fail "no compose-results.json"
	rm "$o/bench-prof/rank-0.json"
	python3 bench/gpu/compose-check.py --orrery "$orrery" "$o" >/dev/null 2>"$work/err"
	rc=$?
	((rc == 2)) || fail "no profile of the benchmark: exit $rc, not 2"
	expect_in err "no profile of the benchmark"
	;;
autocast)
	python3 "$golden/mk-compose-autocast.py" "$work/a" || fail "mk-compose-autocast.py"
	compose_ok ac --et "$work/a/et.json" "$work/a/trace.json"
	python3 "$golden/check-compose.py" "$work/ac.json" "$work/ac" --min-coverage 1 ||
		fail "the plan does not read back as reported"
	python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
ops = [i for i in p["items"] if i[0] == "op"]
names = [i[1] for i in ops]
assert names == ["aten::to", "aten::linear", "aten::record_stream"], names
lin = ops[1]
dt = [p["tensors"][a["t"]][4] for a in lin[5] if isinstance(a, dict)]
assert dt == ["bfloat16", "bfloat16"], ("the linear that ran is the bf16 one", dt)
assert ops[2][5][1] == {"s": None}, ops[2]' "$work/ac/rank-0.json" ||
		fail "the plan rebuilds autocast's wrapper (not the cast and the inner call) or set_ with a storage"
	# the step after the observed one: its timing, the observed one's arguments
	compose_ok ac2 --et "$work/a/et.json" "$work/a/trace2.json"
	python3 -c 'import json,sys
r, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert (r["step"], r["args_step"]) == (2, 1), (r["step"], r["args_step"])
x = r["ranks"][0]
assert (x["step_ns"], x["gpu_ns"], x["op_ns"]) == (187500, 20000, 20000), x
p, q = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
assert [i[1:2] + i[4:] for i in p["items"]] == [i[1:2] + i[4:] for i in q["items"]]
assert p["tensors"] == q["tensors"]' "$work/ac2.json" "$work/ac.json" "$work/ac2/rank-0.json" \
		"$work/ac/rank-0.json" || fail "the step after the observed one is not composed with its arguments"
	run compose -o "$work/ac2t" --et "$work/a/et.json" "$work/a/trace2.json"
	expect_rc 0
	expect_in out "GPU work and timing: step 2, recorded without it"
	compose_ok ac1 --step 1 --et "$work/a/et.json" "$work/a/trace2.json"
	[[ $(report ac1 '(r["step"], r["args_step"], r["ranks"][0]["step_ns"])') == "(1, 1, 375000)" ]] ||
		fail "--step 1: not the observed step itself"
	if py=$(torch_python); then
		"$py" "$work/ac/bench.py" --device cpu --steps 1 --warmup 0 --json >"$work/run.json" ||
			fail "bench.py --device cpu failed"
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert r["failed"] == [], r["failed"]
assert [s["op"] for s in r["skipped"]] == ["aten::record_stream"], r["skipped"]' \
			"$work/run.json" || fail "an operator failed on the CPU"
	else
		echo "no PyTorch: the plan checked, not run" >&2
	fi
	;;
usage)
	run compose --help
	expect_rc 0
	expect_in out "usage: orrery compose"
	run compose "$add"
	expect_rc 2
	expect_in err "no output given"
	run compose -o "$work/u" --repeat 'x=0' "$add"
	expect_rc 2
	expect_in err "--repeat"
	run compose -o "$work/u" --ops most "$add"
	expect_rc 2
	expect_in err "--ops 'most'"
	run compose -o "$work/u" --steps 0 "$add"
	expect_rc 2
	mkdir -p "$work/full" && touch "$work/full/x"
	run compose -o "$work/full" "$add"
	expect_rc 1
	expect_in err "not empty"
	;;
hostile)
	python3 "$golden/mk-compose-hostile.py" "$work/h" || fail "mk-compose-hostile.py"
	for v in rce schema json path ns; do
		rm -rf "$work/c-$v"
		run compose --format=json -o "$work/c-$v" --et "$work/h/$v-et.json" "$work/h/$v-trace.json"
		expect_rc 0
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/c-$v/rank-0.json" ||
			fail "$v: rank-0.json is not JSON"
		python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
ops = [i for i in p["items"] if i[0] == "op"]
assert "pwned" not in p and len(p["items"]) == 3, p["items"]
assert [i[1] for i in ops] == ["aten::rand", "aten::rand"], ops
assert "/etc/passwd" not in json.dumps(p["items"]) + json.dumps(p["tensors"])' \
			"$work/c-$v/rank-0.json" || fail "$v: the plan holds the hostile op or string"
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert r["ranks"][0]["ops"] == 2 and r["ranks"][0]["fills"] == 1, r["ranks"]
assert len(r["missing"]) == 1, r["missing"]
print(r["missing"][0]["name"] + ": " + r["missing"][0]["reason"])' "$work/out" >&2 ||
			fail "$v: the hostile op is not the one left out and listed"
		python3 "$work/c-$v/bench.py" --check >/dev/null || fail "$v: bench.py --check refuses the plan"
	done
	expect_in out "fbgemm not allowed (orrery compose --allow-namespace fbgemm)"
	# the control: a mode string is passed, so aten::div is rebuilt
	rm -rf "$work/c-mode"
	run compose --format=json -o "$work/c-mode" --et "$work/h/mode-et.json" "$work/h/mode-trace.json"
	expect_rc 0
	grep -q '"op","aten::div",7,8000,"Tensor_mode",\[{"t":0},{"t":1},"floor"\]' "$work/c-mode/rank-0.json" ||
		fail "mode: aten::div with its mode not in the plan"
	# a namespace allowed on both sides
	rm -rf "$work/c-ns2"
	run compose -o "$work/c-ns2" --allow-namespace fbgemm --et "$work/h/ns-et.json" "$work/h/ns-trace.json"
	expect_rc 0
	grep -q '"op","fbgemm::fused"' "$work/c-ns2/rank-0.json" || fail "--allow-namespace fbgemm left the op out"
	python3 "$work/c-ns2/bench.py" --check >/dev/null 2>"$work/err" && fail "bench.py --check ran fbgemm::fused"
	expect_in err "namespace fbgemm not allowed (bench.py --allow-namespace fbgemm)"
	python3 "$work/c-ns2/bench.py" --check --allow-namespace fbgemm >/dev/null ||
		fail "bench.py --allow-namespace fbgemm refuses the plan"
	run compose -o "$work/u" --allow-namespace 'a.b' "$work/h/ns-trace.json"
	expect_rc 2
	expect_in err "--allow-namespace 'a.b'"
	# shapes: refused, naming the node
	for v in dim-neg:"a dimension of -5" dim-max:"more than 2^40 bytes" \
		stride-neg:"a stride of -1" offset-neg:"a storage offset of -1" \
		offset-big:"more than 2^40 bytes"; do
		run compose -o "$work/s-${v%%:*}" --et "$work/h/${v%%:*}-et.json" "$work/h/${v%%:*}-trace.json"
		expect_rc 1
		expect_in err "execution trace node 4 (aten::add): a tensor with ${v#*:}"
		[[ $(wc -l <"$work/err") == 1 ]] || fail "${v%%:*}: not one line"
		[[ ! -e $work/s-${v%%:*} ]] || fail "${v%%:*}: a benchmark was written"
	done
	run compose -o "$work/s-total" --et "$work/h/total-big-et.json" "$work/h/total-big-trace.json"
	expect_rc 1
	expect_in err "rank 0: the plan's tensors need 5.5e+12 bytes, more than 2^42"
	python3 "$golden/check-bench-safe.py" evil compose/bench.py "$work/c-mode/rank-0.json" >&2 ||
		fail "bench.py --check accepts a hostile plan, or resolve() a non-operator"
	;;
plans)
	python3 "$golden/mk-compose-hostile.py" "$work/h" || fail "mk-compose-hostile.py"
	python3 -c 'import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("mk", sys.argv[1])
mk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mk)
json.dump(mk.kineto("aten::add"), open(sys.argv[2], "w"))' "$golden/mk-compose-hostile.py" "$work/k.json"
	n=0
	dirs=()
	for f in tests/fuzz/corpus/et/* "$work"/h/*-et.json; do
		n=$((n + 1))
		trace=$work/k.json
		[[ $f == *-et.json ]] && trace=${f%-et.json}-trace.json
		"$orrery" compose -o "$work/p$n" --et "$f" "$trace" >/dev/null 2>&1 && dirs+=("$work/p$n")
		"$orrery" compose -o "$work/q$n" --allow-namespace fbgemm --et "$f" "$trace" \
			>/dev/null 2>&1 && dirs+=("$work/q$n")
	done
	for f in tests/fuzz/corpus/compose/*; do
		n=$((n + 1))
		"$orrery" compose -o "$work/p$n" "$f" >/dev/null 2>&1 && dirs+=("$work/p$n")
		"$orrery" compose -o "$work/q$n" --allow-namespace fbgemm "$f" >/dev/null 2>&1 &&
			dirs+=("$work/q$n")
	done
	((${#dirs[@]} >= 10)) || fail "only ${#dirs[@]} benchmarks composed"
	python3 "$golden/check-bench-safe.py" plans "${dirs[@]}" >&2 ||
		fail "bench.py --check accepts a plan that calls something not allowed"
	;;
kineto-lists)
	# cat 1: 2-byte kernel, bf16 the trace's only 2-byte dtype; cat 2: a 4-byte kernel,
	# float and int both recorded; cat 3: a kernel naming no size; cat 4: no members
	python3 - "$work/lists.json" <<'EOF'
import json, sys
ev, n = [], 0
def op(name, types, dims, strides, kernel):
    global n
    n += 1
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": 10 * n,
               "dur": 5, "args": {"External id": n, "Input type": types,
                                  "Concrete Inputs": [""] * (len(types) - 1) + ["0"],
                                  "Input Dims": dims, "Input Strides": strides}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": 10 * n + 1, "dur": 1, "args": {"correlation": n, "External id": n}})
    ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": 10 * n + 2,
               "dur": 3, "args": {"correlation": n, "External id": n, "stream": 7, "device": 0}})
cat = "void at::native::CatArrayBatchedCopy<at::native::OpaqueType<%du>, unsigned int, 2>(int)"
op("aten::add", ["c10::BFloat16", "c10::BFloat16", "Scalar"], [[4, 3], [4, 3], []],
   [[3, 1], [3, 1], []], "add_kernel")
op("aten::cat", ["TensorList", "Scalar"], [[[4, 3], [2, 3]], []], [[[1, 4], [3, 1]], []],
   cat % 2)
op("aten::add", ["float", "int", "Scalar"], [[4], [4], []], [[1], [1], []], "add_kernel")
op("aten::cat", ["TensorList", "Scalar"], [[[4], [4]], []], [[[1], [1]], []], cat % 4)
op("aten::cat", ["TensorList", "Scalar"], [[[4, 3], [2, 3]], []], [[[3, 1], [3, 1]], []],
   "cat_kernel")
op("aten::cat", ["TensorList", "Scalar"], [[], []], [[], []], cat % 2)
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
	compose_ok lists "$work/lists.json"
	python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
t = p["tensors"]
cats = [i[5] for i in p["items"] if i[0] == "op" and i[1] == "aten::cat"]
assert len(cats) == 1, cats
assert [t[x["t"]][2:] for x in cats[0][0]] == [[[4, 3], [1, 4], "bfloat16"], [[2, 3], [3, 1], "bfloat16"]], cats
r = json.load(open(sys.argv[2]))
why = {m["reason"].split(" (")[0]: m["tasks"] for m in r["missing"] if m["name"] == "aten::cat"}
assert why == {"a list of tensors whose dtype the trace does not show": 2,
               "a list of tensors whose shapes the profiler did not record": 1}, why' \
		"$work/lists/rank-0.json" "$work/lists.json" || fail "the lists of tensors are not rebuilt as recorded"
	python3 "$work/lists/bench.py" --check >/dev/null || fail "bench.py --check refuses the plan"
	if py=$(torch_python); then
		"$py" "$work/lists/bench.py" --device cpu --steps 2 --warmup 1 --json \
			>"$work/run.json" 2>"$work/err" || fail "bench.py failed on the CPU: $(tail -3 "$work/err")"
		# Without an execution trace no storage is known to be an input: those read
		# before written (the add's int operand) are made once, in the untimed step,
		# not again (and zero-filled) in every timed one.
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
assert not r["failed"], r["failed"]
assert r["storages_made_timed"] == 0, r["storages_made_timed"]' "$work/run.json" ||
			fail "an operator failed on the CPU, or storages were made in the timed steps"
	else
		echo "no PyTorch: the plan checked, not run" >&2
	fi
	;;
*)
	echo "usage: $0 golden|roundtrip|every|options|cpu-run|cpu-shared|kineto-values|kineto-lists|gpu-check|autocast|usage|hostile|plans" >&2
	exit 2
	;;
esac
exit 0
