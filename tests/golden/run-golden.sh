#!/bin/bash
# CLI tests of suite `golden`, run from the source root with $ORRERY set (tests/meson.build):
#
#   run-golden.sh expect EXPECTED ARGS...  `orrery ARGS` exits 0 and prints exactly
#                                          tests/golden/EXPECTED on stdout (skipped when
#                                          the last of ARGS, the trace, is not there);
#                                          JSON numbers to a relative 1e-9 (same-json.py)
#   run-golden.sh expect-model EXPECTED ARGS...  the same for ARGS naming no trace
#   run-golden.sh bad FILE [COMMAND]       `orrery COMMAND FILE` (info by default) exits 1,
#                                          prints nothing on stdout and one
#                                          "orrery: error: " line naming FILE
#   run-golden.sh missing FILE             the same for a FILE that does not exist
#   run-golden.sh timeline TRACE           `orrery replay --timeline OUT TRACE` writes a valid
#                                          Chrome trace file (check-timeline.py), atomically;
#                                          an OUT that cannot be written fails cleanly
#   run-golden.sh usage CASE               usage errors (exit 2), --help, --version
#
# ORR_GOLDEN_UPDATE=1 rewrites the expected files instead of comparing.  Paths in the
# commands are relative to the source root so that the expected output holds none of
# the checkout's own.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

mode=${1:-}
shift || true
case $mode in
expect | expect-model)
	# expect-model: the arguments name no trace (orrery estimate from a description)
	expected=$golden/$1
	shift
	trace=${*: -1}
	if [[ $mode == expect && ! -e $trace ]]; then
		echo "skipped: $trace does not exist" >&2
		exit 77
	fi
	run "$@"
	expect_rc 0
	[[ -s $work/err ]] && { show; fail "unexpected output on stderr"; }
	if [[ ${ORR_GOLDEN_UPDATE:-} == 1 ]]; then
		cp "$work/out" "$expected"
		echo "updated $expected" >&2
		exit 0
	fi
	[[ -f $expected ]] || fail "$expected is missing (ORR_GOLDEN_UPDATE=1 writes it)"
	if ! diff -q "$expected" "$work/out" >/dev/null; then
		# JSON numbers may differ in their last digits with the CPU's BLAS kernels.
		if [[ $expected == *.json ]] &&
			python3 "$golden/same-json.py" "$expected" "$work/out" 2>/dev/null; then
			echo "equal to $expected within float rounding (same-json.py)" >&2
			exit 0
		fi
		diff -u "$expected" "$work/out" >&2
		fail "output differs from $expected (ORR_GOLDEN_UPDATE=1 to accept the new output)"
	fi
	;;
bad | missing)
	file=$1
	cmd=${2:-info}
	if [[ $mode == bad ]]; then
		[[ -e $file ]] || fail "$file does not exist"
	else
		[[ -e $file ]] && fail "$file exists"
	fi
	run "$cmd" "$file"
	expect_rc 1
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	lines=$(wc -l <"$work/err")
	[[ $lines == 1 ]] || { show; fail "$lines lines on stderr, expected one"; }
	[[ $(head -c 15 "$work/err") == "orrery: error: " ]] || { show; fail "stderr does not start with 'orrery: error: '"; }
	expect_in err "$file"
	cat "$work/err" >&2
	;;
timeline)
	trace=$1
	[[ -e $trace ]] || fail "$trace does not exist"
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
	run replay --timeline "$work/timeline.json" "$trace"
	expect_rc 0
	[[ -s $work/err ]] && { show; fail "unexpected output on stderr"; }
	expect_in out "error over"
	compgen -G "$work/.timeline.json.tmp.*" >/dev/null && fail "the temporary file was left behind"
	python3 "$golden/check-timeline.py" "$work/timeline.json" || fail "invalid timeline"
	# --steps and --ranks cut the timeline to what they select.
	run replay --steps 11 --ranks 0 --timeline "$work/cut.json" "$trace"
	expect_rc 0
	python3 "$golden/check-timeline.py" "$work/cut.json" || fail "invalid cut timeline"
	[[ $(stat -c %s "$work/cut.json") -lt $(stat -c %s "$work/timeline.json") ]] ||
		fail "--steps 11 --ranks 0 did not cut the timeline"
	# The critical path on a track of its own.
	run critical-path --top 1 --timeline "$work/path.json" "$trace"
	expect_rc 0
	[[ -s $work/err ]] && { show; fail "unexpected output on stderr"; }
	python3 "$golden/check-timeline.py" --path "$work/path.json" || fail "invalid path timeline"
	# Where it cannot be written: one error line, nothing on stdout, nothing left.
	run replay --timeline "$work/no-such-dir/timeline.json" "$trace"
	expect_rc 1
	[[ -s $work/out ]] && { show; fail "output on stdout"; }
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	expect_in err "orrery: error: cannot write '$work/no-such-dir/timeline.json'"
	;;
usage)
	case $1 in
	no-argument)
		run
		expect_rc 2
		expect_in err "usage: orrery"
		;;
	unknown-option)
		run --frobnicate info x
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "orrery: error: bad option '--frobnicate' (unknown, or missing its value); see 'orrery --help'"
		run -C
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "orrery: error: bad option '-C' (unknown, or missing its value); see 'orrery --help'"
		run info --frobnicate x
		expect_rc 2
		expect_in err "orrery: error: "
		expect_in err "orrery info --help"
		;;
	info-without-trace)
		run info
		expect_rc 2
		expect_in err "no trace given"
		run info --format=xml x
		expect_rc 2
		expect_in err "unknown format 'xml'"
		run info --ranks x y
		expect_rc 2
		expect_in err "bad --ranks 'x'"
		# --ranks and --steps cut the per-rank sections and the step lists.
		run info --ranks 1 --steps 11 traces/samples/tiny-2rank
		expect_rc 0
		expect_in out "rank 1 of 2"
		expect_in out "step  #11"
		grep -q "^rank 0" "$work/out" && { show; fail "rank 0 shown with --ranks 1"; }
		grep -q "step  #10" "$work/out" && { show; fail "step 10 shown with --steps 11"; }
		run info --ranks 7 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "orrery: error: no rank 7 in 'traces/samples/tiny-2rank'; its ranks are 0-1"
		;;
	replay-usage)
		run replay
		expect_rc 2
		expect_in err "no trace given"
		expect_in err "orrery replay --help"
		run replay --format=xml x
		expect_rc 2
		expect_in err "unknown format 'xml'"
		for bad in nccl '=2' 'nccl*=' 'nccl*=x' 'nccl*=-1' 'nccl*=inf' 'nccl*=nan' \
			'*=1e30' 'nccl*=1e12' '*=1000001' '*=1e-400x' 'cpu:=2' 'cpu@x:*=2' \
			'cpu@1*=2' 'cpu@99999999999:*=2' 'gpu:=2' 'gpu@:*=2' 'gpu@x:*=2' \
			'gpu@1*=2' 'gpu@99999999999:*=2' 'latency:=2' 'bandwidth:=2' \
			'bandwidth:*=0' 'latency:*=-1' '*=0x10' '*= 2' '*=0x1p3'; do
			run replay --scale "$bad" x
			expect_rc 2
			expect_in err "bad --scale '$bad'"
		done
		# a bandwidth divides the transfer: its range is said, 0 being refused
		run replay --scale 'bandwidth:*=0' x
		expect_in err "FACTOR from 0 to 1e6, a bandwidth's from 1e-6)"
		run replay --costs c.json --scale 'nccl*=2' x
		expect_rc 2
		expect_in err "--costs gives models to latency: and bandwidth: rules"
		run replay --timeline= x
		expect_rc 2
		expect_in err "empty --timeline"
		run replay --comm= x
		expect_rc 2
		expect_in err "empty --comm pattern"
		run replay a b
		expect_rc 2
		expect_in err "one trace at a time"
		for bad in '' x 3- -3 5-2 1x 99999999999999999999; do
			run replay --steps "$bad" x
			expect_rc 2
			expect_in err "bad --steps '$bad'"
		done
		for bad in '' x 1, ,1 1-x 3-1 0-99999999; do
			run replay --ranks "$bad" x
			expect_rc 2
			expect_in err "bad --ranks '$bad'"
		done
		for name in x.json.gz x.zst x.tar x.tgz; do
			run replay --timeline "$name" x
			expect_rc 2
			expect_in err "orrery writes plain JSON"
		done
		run convert -o out.json.gz x
		expect_rc 2
		expect_in err "orrery writes plain files"
		# '-': the trace from standard input, plain, compressed or an archive
		run replay --format=csv - <traces/samples/tiny-2rank/rank-0.trace.json
		expect_rc 0
		expect_in out "0,10,"
		tar -C traces/samples -cf - tiny-2rank | gzip >"$work/tiny.tar.gz"
		run info - <"$work/tiny.tar.gz"
		expect_rc 0
		expect_in out "2 ranks"
		run info - </dev/null
		expect_rc 1
		expect_in err "standard input is empty"
		run replay --steps 99 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "--steps and --ranks select no rank-step"
		# what-if scenarios: a rule that matches nothing warns, or fails with --strict
		run replay --scale 'nosuch*=2' --scale 'ncclDevKernel*=2' traces/samples/tiny-2rank
		expect_rc 0
		expect_in err "rule 'nosuch*=2' matches no GPU task"
		expect_in out "scenario 'nosuch*=2 ncclDevKernel*=2'"
		run replay --scale 'cpu@7:*=2' traces/samples/tiny-2rank
		expect_rc 0
		expect_in err "rule 'cpu@7:*=2' names rank 7, which 'traces/samples/tiny-2rank' does not hold; its ranks are 0-1"
		run replay --strict --scale 'nosuch*=2' traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "--strict: a rule matches nothing"
		# what a scenario file holds is data: its errors exit 1, usage errors still 2
		printf 'a x*=2\nb\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:2 (byte 7): scenario 'b' has no rule"
		printf 'x*=2\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:1 (byte 0): a scenario starts with its name"
		printf 'a x*=two\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:1 (byte 2): bad rule 'x*=two'"
		printf 'a bandwidth:x*=0\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "bad rule 'bandwidth:x*=0' ([gpu[@RANK]:|cpu[@RANK]:|stalls[@RANK]:|latency:|bandwidth:]GLOB=FACTOR, FACTOR 0 to 1e6, a bandwidth's from 1e-6)"
		printf 'a x*=2\nb y*=3\na z*=4\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:3 (byte 14): a second scenario named 'a'"
		# found at once after 300,000 names (each was compared with all before it: over
		# two minutes; 0.6 s now)
		awk 'BEGIN { for (i = 0; i < 300000; i++) printf "s%d x*=2\n", i; print "s7 x*=2" }' \
			>"$work/sc"
		timeout 20 "$orrery" replay --scenario "$work/sc" x >"$work/out" 2>"$work/err"
		rc=$?
		expect_rc 1
		expect_in err "sc:300001 (byte 3788890): a second scenario named 's7'"
		# the line's NUL and a line too long, with their byte
		printf 'a x*=2\n  b \0y*=3\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:2 (byte 11): a NUL byte"
		{ printf 'a x*=2\n'; head -c 5000 /dev/zero | tr '\0' x; } >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "sc:2 (byte 4101): line longer than 4094 bytes"
		printf '# nothing\n\n' >"$work/sc"
		run replay --scenario "$work/sc" x
		expect_rc 1
		expect_in err "no scenario"
		run replay --scenario "$work/none" x
		expect_rc 1
		expect_in err "cannot read"
		printf 'a x*=two\n' >"$work/sc"
		run replay --scenario "$work/sc" --format=xml x
		expect_rc 2
		expect_in err "unknown format 'xml'"
		run replay --scenario "$work/sc"
		expect_rc 2
		expect_in err "no trace given"
		run replay --scenario '' x
		expect_rc 2
		expect_in err "empty --scenario file name"
		printf 'a x*=2\nb y*=3\n' >"$work/sc"
		run replay --scenario "$work/sc" --timeline "$work/t.json" x
		expect_rc 2
		expect_in err "--timeline shows one scenario; 2 were given"
		;;
	fit-usage)
		run fit
		expect_rc 2
		expect_in err "no trace given"
		expect_in err "orrery fit --help"
		run fit --format=csv x
		expect_rc 2
		expect_in err "unknown format 'csv'"
		run fit -o costs.json.gz x
		expect_rc 2
		expect_in err "-o 'costs.json.gz': orrery writes plain JSON"
		run fit -o '' x
		expect_rc 2
		expect_in err "empty output name"
		for bad in -1 x 3x '' 99999999999; do
			run fit --rank "$bad" x
			expect_rc 2
			expect_in err "bad --rank '$bad'"
		done
		run fit a b
		expect_rc 2
		expect_in err "one trace at a time"
		run fit --help
		expect_rc 0
		expect_in out "usage: orrery fit"
		run fit --rank 5 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "no rank 5 in 'traces/samples/tiny-2rank'; its ranks are 0-1"
		# -o: the JSON report, in a file; never inside the trace.
		run fit -o traces/samples/tiny-2rank/costs.json traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "is inside the trace"
		[[ -e traces/samples/tiny-2rank/costs.json ]] && fail "costs written into the trace"
		run fit --format=json traces/samples/tiny-2rank
		expect_rc 0
		cp "$work/out" "$work/want.json"
		run fit -o "$work/costs.json" traces/samples/tiny-2rank
		expect_rc 0
		cmp -s "$work/costs.json" "$work/want.json" || fail "-o differs from --format=json"
		# --nccl-tests: a run's samples join the trace's collectives.
		nccl=tests/fuzz/corpus/nccl-tests
		run fit --nccl-tests "$nccl/all-gather-2host.txt" traces/samples/tiny-2rank
		expect_rc 0
		expect_in out "4 of them from 1 nccl-tests run (--nccl-tests)"
		expect_in out "AllGather, link network: 4 samples"
		run fit --format=json --nccl-tests "$nccl/all-gather-2host.txt" traces/samples/tiny-2rank
		expect_rc 0
		expect_in out '"runs": 1,'
		run fit --nccl-tests "$nccl/bad-time.txt" traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "bad-time.txt"
		expect_in err "time (sixth field) is not a positive number"
		run fit --nccl-tests "$work/none.txt" traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "none.txt"
		grep -v "Collective test starting" "$nccl/all-reduce-4gpu.txt" >"$work/ar.txt"
		run fit --nccl-tests "$work/ar.txt" traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "name it: KIND=FILE"
		run fit --nccl-tests "all_reduce=$work/ar.txt" traces/samples/tiny-2rank
		expect_rc 0
		expect_in out "AllReduce, link node"
		for bad in '' all_reduce=; do
			run fit --nccl-tests "$bad" traces/samples/tiny-2rank
			expect_rc 2
			expect_in err "--nccl-tests '$bad': empty file name"
		done
		;;
	estimate-usage)
		run estimate
		expect_rc 2
		expect_in err "no trace: give the model, --layers is missing"
		expect_in err "orrery estimate --help"
		model=(--layers 2 --hidden 64 --heads 2 --seq 16)
		run estimate "${model[@]}"
		expect_rc 1
		expect_in err "no trace: name the GPU with --gpu"
		expect_in err "a100-80gb-sxm"
		# layers past the limit (docs/limits.md): refused at once, whatif's too; at it, taken
		run estimate --gpu h100-sxm --hidden 64 --heads 2 --seq 16 --layers 10001
		expect_rc 2
		expect_in err "bad --layers '10001' (at most 10000: a step is synthesized layer by layer"
		run whatif --gpu h100-sxm --hidden 64 --heads 2 --seq 16 --global-batch 8 --gpus 8 \
			--layers 100000
		expect_rc 2
		expect_in err "bad --layers '100000' (at most 10000"
		run estimate --gpu h100-sxm --hidden 64 --heads 2 --seq 16 --layers 10000
		expect_rc 0
		run estimate --timeline '' "${model[@]}"
		expect_rc 2
		expect_in err "empty --timeline file name"
		run estimate --gpu nosuch "${model[@]}"
		expect_rc 1
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "--gpu nosuch: no such GPU in the hardware table; the hardware table has: b200 "
		expect_in err " h100-sxm "
		run estimate --gpu h100-sxm --attention paged "${model[@]}"
		expect_rc 2
		expect_in err "bad --attention 'paged'"
		for bad in -1 x '' 1e9 nan; do
			run estimate --gpu h100-sxm --launch-us "$bad" "${model[@]}"
			expect_rc 2
			expect_in err "bad --launch-us '$bad' (microseconds, 0 to 1e6)"
		done
		run estimate --gpu h100-sxm --pp 2 --layers 3 --hidden 64 --heads 2 --seq 16
		expect_rc 1
		expect_in err "a configuration Megatron refuses: layers 3 is not divisible by pp 2"
		run estimate --gpu h100-sxm --micro-batch 2 --global-batch 3 "${model[@]}"
		expect_rc 1
		expect_in err "--global-batch 3 is not a multiple of micro-batch x dp (2)"
		run estimate --gpu h100-sxm --pp 2 --timeline "$work/synth.json" "${model[@]}"
		expect_rc 0
		expect_in out "by synthesis"
		# the synchronizations asked for are in the text's configuration, as in JSON's
		run estimate --gpu h100-sxm --recompute full --sync-layers --sync-timers "${model[@]}"
		expect_rc 0
		expect_in out "  synchronize  passes,layers"
		# without full recompute no layer is checkpointed: --sync-layers is said to
		# change nothing, and the estimate, the text and JSON are those without it
		run estimate --gpu h100-sxm --sync-layers "${model[@]}"
		expect_rc 0
		expect_in out "  synchronize        none  (--sync-layers does not apply"
		run estimate --gpu h100-sxm --sync-layers --format=json "${model[@]}"
		expect_rc 0
		cp "$work/out" "$work/sync-unused.json"
		run estimate --gpu h100-sxm --format=json "${model[@]}"
		expect_rc 0
		if command -v python3 >/dev/null; then
			python3 -c 'import json,sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["config"].pop("sync_layers_unused") is True, a["config"]
assert a == b, (a, b)' "$work/sync-unused.json" "$work/out" || fail "--sync-layers without full recompute"
		fi
		if command -v python3 >/dev/null; then
			python3 "$golden/check-timeline.py" "$work/synth.json" ||
				fail "invalid synthesized timeline"
		fi
		run estimate --gpu h100-sxm --precision fp32 --format=json "${model[@]}"
		expect_rc 0
		expect_in out '"method": "synthesis"'
		expect_in out '"hardware_table"'
		run estimate --gpu a100-80gb-sxm --costs "$work/none.json" "${model[@]}"
		expect_rc 1
		expect_in err "cannot read its costs"
		run estimate --format=csv x
		expect_rc 2
		expect_in err "unknown format 'csv'"
		for bad in 0 -1 x 3x '' 99999999999; do
			run estimate --tp "$bad" x
			expect_rc 2
			expect_in err "bad --tp '$bad'"
		done
		for opt in dp micro-batch hidden layers pp global-batch gpus-per-node; do
			run estimate --$opt 0 x
			expect_rc 2
			expect_in err "bad --$opt '0'"
		done
		run estimate --recompute some x
		expect_rc 2
		expect_in err "bad --recompute 'some'"
		run estimate --help
		expect_rc 0
		expect_in out "usage: orrery estimate"
		# No transformer in the sample trace: nothing to estimate, and why.
		run estimate traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "the trace does not give its layers"
		run estimate --timeline traces/samples/tiny-2rank/t.json traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "is inside the trace"
		# --costs: a file that is no costs file.
		echo '{}' >"$work/bad-costs.json"
		run estimate --costs "$work/bad-costs.json" traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "cannot read its costs: key 'orrery_costs': missing"
		# --costs not JSON: the byte (line, column) where it stops being JSON, and why.
		printf '{"orrery_costs": 1\n  "gemm": {}}\n' >"$work/syntax-costs.json"
		want="syntax-costs.json: cannot read its costs at byte 21: not JSON, line 2 column 3:"
		want+=" expected ',' or '}'"
		for cmd in estimate "whatif --gpus 8"; do
			run $cmd --costs "$work/syntax-costs.json" traces/samples/tiny-2rank
			expect_rc 1
			expect_in err "$want"
		done
		;;
	estimate-megatron)
		# --costs of another GPU and of the same trace, --timeline: on the Megatron
		# trace, several estimates (a test of its own: slow under ASan).
		megatron=../shared/traces/kineto/astrasim-megatron-tp8
		if [[ ! -e $megatron ]]; then
			echo "skipped: $megatron does not exist" >&2
			exit 77
		fi
		run fit -o "$work/h100.json" traces/samples/tiny-2rank
		expect_rc 0
		run estimate --tp 4 --costs "$work/h100.json" "$megatron"
		expect_rc 1
		expect_in err "fitted on h100-sxm, the trace ran on a100-80gb-sxm"
		run fit -o "$work/a100.json" "$megatron"
		expect_rc 0
		run estimate --tp 4 --format=json "$megatron"
		cp "$work/out" "$work/fitted.json"
		run estimate --tp 4 --format=json --costs "$work/a100.json" "$megatron"
		expect_rc 0
		grep -v '"gemm"\|"costs"' "$work/out" >"$work/a" || true
		grep -v '"gemm"\|"costs"' "$work/fitted.json" >"$work/b" || true
		cmp -s "$work/a" "$work/b" || fail "--costs of the same trace estimates otherwise"
		# Layers that repeat on the trace's threads: stretched on its own graph.
		run estimate --layers 20 --format=json "$megatron"
		expect_rc 0
		expect_in out '"method": "retime"'
		# A change of structure: by the ratio of two synthesized steps.
		run estimate --recompute full --format=json "$megatron"
		expect_rc 0
		expect_in out '"method": "synthesis-ratio"'
		run estimate --gpu h100-sxm --layers 20 "$megatron"
		expect_rc 1
		expect_in err "the trace ran on a100-80gb-sxm"
		# The trace's own model and layout synthesized from its description alone,
		# timed by its costs.  Without the profiler's part and the stalls of its
		# launch threads (one rank not running where its 7 peers ran the same
		# launches), the job's host is faster than its GPU: the step is the GPU's,
		# within 5 % of the same synthesized with no launch time at all, and of the
		# measured step less those two parts where that is longer (docs/accuracy.md).
		measured=$(sed -n 's/^  "measured_ns": \([0-9]*\),$/\1/p' "$work/fitted.json")
		profiler=$(sed -n 's/^    "profiler_ns": \([0-9]*\),$/\1/p' "$work/a100.json")
		stalls=$(sed -n 's/^    "stall_ns": \([0-9]*\),$/\1/p' "$work/a100.json")
		launch=$(sed -n 's/^    "step_ns": \([0-9]*\),$/\1/p' "$work/a100.json")
		[[ -n $measured && -n $profiler && -n $stalls && -n $launch ]] ||
			fail "no measured step, launch time, profiler_ns or stall_ns"
		described=(--gpu a100-80gb-sxm --layers 40 --hidden 4096 --heads 64 --seq 2048
			--tp 8 --micro-batch 4 --vocab 51200 --precision fp16 --attention unfused
			--forward-only --format=json)
		step_of() { sed -n 's/^  "iteration_ns": \([0-9]*\),$/\1/p' "$work/out"; }
		within5() {
			awk -v a="$1" -v b="$2" \
				'BEGIN { e = a / b - 1; if (e < 0) e = -e; exit !(e < 0.05) }' ||
				fail "$3: $1 ns is not within 5 % of $2 ns"
		}
		run estimate --costs "$work/a100.json" --launch-us 0 "${described[@]}"
		expect_rc 0
		gpu=$(step_of)
		run estimate --costs "$work/a100.json" "${described[@]}"
		expect_rc 0
		synthesized=$(step_of)
		[[ -n $gpu && -n $synthesized ]] || fail "no step time in the JSON"
		job=$((measured - profiler - stalls))
		((job > gpu)) || job=$gpu
		within5 "$synthesized" "$job" "synthesized"
		# A costs file that does not give the stalls keeps them: the synthesized step
		# is then its launch threads' time, as the trace spent it less the profiler's.
		python3 - "$work/a100.json" "$work/kept.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
del c["launch"]["stall_ns"]
json.dump(c, open(sys.argv[2], "w"))
PY
		run estimate --costs "$work/kept.json" "${described[@]}"
		expect_rc 0
		within5 "$(step_of)" "$((launch - profiler))" "synthesized with the stalls kept"
		# --timeline: the estimated timeline, as replay writes one.
		run estimate --tp 4 --timeline "$work/est.json" "$megatron"
		expect_rc 0
		expect_in out "estimated"
		if command -v python3 >/dev/null; then
			python3 "$golden/check-timeline.py" "$work/est.json" ||
				fail "invalid estimated timeline"
		fi
		run estimate --tp 4 --timeline "$work/no-such-dir/t.json" "$megatron"
		expect_rc 1
		expect_in err "cannot write '$work/no-such-dir/t.json'"
		;;
	critical-path-usage)
		run critical-path
		expect_rc 2
		expect_in err "no trace given"
		expect_in err "orrery critical-path --help"
		run critical-path --format=csv x
		expect_rc 2
		expect_in err "unknown format 'csv'"
		for bad in -1 x 3x '' 99999999999; do
			run critical-path --top "$bad" x
			expect_rc 2
			expect_in err "bad --top '$bad'"
		done
		run critical-path --scale '*=' x
		expect_rc 2
		expect_in err "bad --scale"
		run critical-path --scale '*=1e30' x
		expect_rc 2
		expect_in err "FACTOR from 0 to 1e6"
		run critical-path --comm '' x
		expect_rc 2
		expect_in err "empty --comm pattern"
		run critical-path --timeline '' x
		expect_rc 2
		expect_in err "empty --timeline"
		;;
	summary-usage)
		run summary
		expect_rc 2
		expect_in err "no trace given"
		expect_in err "orrery summary --help"
		run summary --format=xml x
		expect_rc 2
		expect_in err "unknown format 'xml'"
		for bad in -1 x ''; do
			run summary --top "$bad" x
			expect_rc 2
			expect_in err "bad --top '$bad'"
		done
		run summary --comm '' x
		expect_rc 2
		expect_in err "empty --comm pattern"
		run summary a b
		expect_rc 2
		expect_in err "one trace at a time"
		run summary --help
		expect_rc 0
		expect_in out "usage: orrery summary"
		# --ranks (or --rank) naming no rank of the trace: the ranks it has, compact
		run summary --rank 5 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "orrery: error: no rank 5 in 'traces/samples/tiny-2rank'; its ranks are 0-1"
		run replay --ranks 5,7-9 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "orrery: error: no rank of 5,7-9 in 'traces/samples/tiny-2rank'; its ranks are 0-1"
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		run summary --ranks 1 --steps 900 traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "--steps and --ranks select no rank-step"
		# The Megatron TP=8 job: rank 0 is the one the others wait for.
		megatron=${ORR_SHARED_TRACES:-../shared/traces}/kineto/astrasim-megatron-tp8
		if [[ -d $megatron ]]; then
			run summary --top 1 "$megatron"
			expect_rc 0
			expect_in out "straggler: rank 0"
			expect_in out "AllReduce"
			expect_in out "RING_LL"
			# The vocabulary-parallel loss's 3 small all-reduces have no size: listed so.
			expect_in out "AllReduce             unknown     8 unknown       3"
			if grep -q "no known kind" "$work/out"; then
				show
				fail "an all-reduce of unknown size left out"
			fi
			# Kinds from NCCL's kernel names where the trace has no record.
			recsys=${ORR_SHARED_TRACES:-../shared/traces}/kineto/hta-recsys-rank3.json.gz
			run summary --top 1 "$recsys"
			expect_rc 0
			expect_in out "SendRecv              unknown     ? unknown      42"
		fi
		;;
	step-range)
		# Steps from other annotations: renumbered from 1, the trace's own not steps.
		run --step-range 'ProfilerStep#1[01]' info traces/samples/tiny-2rank
		expect_rc 0
		expect_in out "step  #1  8.453 ms"
		expect_in out "step  #2  8.357 ms"
		grep -q "step  #1[0-2]" "$work/out" && { show; fail "a ProfilerStep#N kept as a step"; }
		run --step-range 'ProfilerStep#1[01]' replay traces/samples/tiny-2rank
		expect_rc 0
		expect_in out "job         2"
		# a pattern that matches nothing is an error naming the trace's annotations
		run --step-range 'no such range' info traces/samples/tiny-2rank
		expect_rc 1
		expect_in err "no annotation matches --step-range: 'no such range' (annotations: 'ProfilerStep#10', "
		expect_in err "give a pattern of the steps' annotation, or no --step-range"
		[[ -s $work/out ]] && { show; fail "a report of a step range that matched nothing"; }
		run --step-range '' info traces/samples/tiny-2rank
		expect_rc 2
		expect_in err "empty --step-range"
		;;
	help-command)
		run help replay
		expect_rc 0
		expect_in out "usage: orrery replay"
		run help
		expect_rc 0
		expect_in out "orrery help COMMAND"
		run help sumary
		expect_rc 2
		expect_in err "did you mean 'summary'?"
		run help a b
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "help takes one command; see 'orrery --help'"
		run replay --frob x
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "bad option '--frob' (unknown, or missing its value); see 'orrery replay --help'"
		# a known long option without its value, or with one it does not take: said so
		run replay x --scale
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "orrery: error: option '--scale' needs a value; see 'orrery replay --help'"
		run estimate --sync-layers=yes x
		expect_rc 2
		expect_in err "option '--sync-layers' takes no value ('--sync-layers=yes')"
		# a prefix of several long options lists them; whatif's forwarded ones share a
		# value, and getopt_long() took the first, --sync-timers
		model=(--gpu h100-sxm --layers 2 --hidden 64 --heads 2 --seq 16)
		for c in estimate whatif; do
			# the GPU budget is whatif's alone
			gpus=()
			[[ $c == whatif ]] && gpus=(--gpus 8)
			run "$c" "${model[@]}" --global-batch 8 "${gpus[@]}" --sync
			expect_rc 2
			[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "$c: not one line on stderr"; }
			expect_in err "orrery: error: option '--sync' is ambiguous: --sync-layers, --sync-timers; see 'orrery $c --help'"
		done
		run whatif "${model[@]}" --global-batch 8 --gpus 8 --sync=1
		expect_rc 2
		expect_in err "option '--sync' is ambiguous: --sync-layers, --sync-timers"
		run replay --s x
		expect_rc 2
		expect_in err "option '--s' is ambiguous: --scale, --scenario, --steps, --strict"
		run --v
		expect_rc 2
		expect_in err "option '--v' is ambiguous: --verbose, --version"
		# one option's prefix is that option
		run estimate "${model[@]}" --sync-t --format=json
		expect_rc 0
		expect_in out '"sync_timers": true'
		# but not whatif's --gpus (the GPU budget), which estimate took for --gpus-per-node
		for g in "--gpus 8" "--gpus=8"; do
			run estimate "${model[@]}" --global-batch 8 $g
			expect_rc 2
			[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "estimate $g: not one line on stderr"; }
			expect_in err "orrery: error: option '--gpus' is whatif's, not estimate's (here a prefix of --gpus-per-node: write that whole); see 'orrery estimate --help'"
		done
		run estimate "${model[@]}" --gpus-per 0
		expect_rc 2
		expect_in err "bad --gpus-per-node '0'"
		;;
	unknown-command)
		run inof x
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "orrery: error: 'inof' is not an orrery command (did you mean 'info'?); see 'orrery --help'"
		run frobnicate
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "orrery: error: 'frobnicate' is not an orrery command; see 'orrery --help'"
		grep -q "did you mean" "$work/err" && { show; fail "a suggestion for 'frobnicate'"; }
		;;
	help)
		run --help
		expect_rc 0
		expect_in out "usage: orrery"
		expect_in out "info"
		[[ -s $work/err ]] && { show; fail "output on stderr"; }
		expect_in out "replay"
		expect_in out "critical-path"
		for cmd in info replay critical-path; do
			run "$cmd" --help
			expect_rc 0
			expect_in out "usage: orrery $cmd"
			expect_in out "--format"
			[[ -s $work/err ]] && { show; fail "output on stderr"; }
		done
		expect_in out "--top"
		run replay --help
		expect_in out "--scale"
		expect_in out "--timeline"
		;;
	version)
		run --version
		expect_rc 0
		grep -qE '^orrery [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" || { show; fail "no version line"; }
		;;
	*)
		fail "unknown usage case '$1'"
		;;
	esac
	;;
*)
	echo "usage: $0 expect EXPECTED ARGS... | bad FILE [COMMAND] | missing FILE | timeline TRACE | usage CASE" >&2
	exit 2
	;;
esac
echo "ok" >&2
