#!/bin/bash
# What estimate and whatif tell the user beside their numbers (suite golden), from the
# source root with $ORRERY set:
#
#   run-messages.sh dimension  estimate names the dimension a parallel size does not
#                              divide, from a description and from a trace (the trace
#                              part skipped without ../shared)
#   run-messages.sh caveats    whatif prints the sources and caveats estimate prints:
#                              the hardware table's lower bound, whose models (a costs
#                              file, the trace), the launch time and its source, the
#                              memory reserve; its JSON says the same
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

model=(--gpu h100-sxm --hidden 1024 --heads 16 --seq 1024)
base=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt/base.json.gz

# The last run failed with exactly one error line holding $1.
refused() {
	expect_rc 1
	expect_in err "orrery: error: a configuration Megatron refuses: $1"
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
}

case ${1:-} in
dimension)
	run estimate "${model[@]}" --layers 30 --pp 4
	refused "layers 30 is not divisible by pp 4"
	run estimate "${model[@]}" --layers 32 --tp 3
	refused "heads 16 is not divisible by tp 3"
	run estimate "${model[@]}" --layers 32 --kv-heads 6
	refused "heads 16 is not divisible by kv-heads 6"
	run estimate "${model[@]}" --layers 32 --pp 2 --vpp 2 --global-batch 3
	refused "micro-batches 3 is not divisible by pp 2 (interleaved 1F1B, vpp 2)"
	run estimate "${model[@]}" --layers 32 --cp 3
	refused "seq 1024 is not divisible by 2 x cp (6)"
	run estimate --gpu h100-sxm --hidden 1000 --heads 16 --seq 1024 --layers 32
	refused "hidden 1000 is not divisible by heads 16 (heads of one size)"
	[[ -e $base ]] || exit 0
	run estimate "$base" --layers 30 --pp 4
	refused "layers 30 is not divisible by pp 4"
	;;
caveats)
	# From a description without costs: the hardware table's peaks, a lower bound.
	run estimate "${model[@]}" --layers 8 --dp 8 --global-batch 32
	expect_rc 0
	for t in "no costs: every GPU time is the hardware table's peak, a lower bound" \
		"  launches " "  GEMMs        " "  collectives  "; do
		expect_in out "$t"
	done
	grep -E "^  (launches|no costs|GEMMs|kernels|collectives) " "$work/out" >"$work/est.txt"
	run whatif "${model[@]}" --layers 8 --global-batch 32 --gpus 8 --tp 1 --pp 1 \
		--micro-batch 1 --recompute none --distributed-optimizer off
	expect_rc 0
	expect_in out "the best configuration's sources and caveats"
	grep -E "^  (launches|no costs|GEMMs|kernels|collectives) " "$work/out" >"$work/wi.txt"
	diff -u "$work/est.txt" "$work/wi.txt" >&2 || fail "whatif's sources differ from estimate's"
	run whatif "${model[@]}" --layers 8 --global-batch 32 --gpus 8 --format=json
	expect_rc 0
	cp "$work/out" "$work/w.json"
	python3 - "$work/w.json" <<'PY' || fail "whatif's JSON lacks the sources"
import json, sys
w = json.load(open(sys.argv[1]))
for r in w["ranked"]:
    assert r["sources"]["models"].endswith("(a lower bound)"), r["sources"]
    assert "launch" in r["sources"], r["sources"]
PY
	# From a trace: the models fitted on it, the launch time measured, no reserve.
	needs "$base"
	run whatif "$base" --gpus 8
	expect_rc 0
	for t in "the best configuration's sources and caveats" "  launches " \
		"reserve 0: the trace records no allocator totals"; do
		expect_in out "$t"
	done
	expect_in out "  models       fitted on the trace"
	grep -qF "lower bound" "$work/out" && { show; fail "a lower bound said of a trace's models"; }
	# With costs fitted on the trace: both name the costs file.
	run fit -o "$work/c.json" "$base"
	expect_rc 0
	for cmd in "estimate --dp 8" "whatif --gpus 8"; do
		# shellcheck disable=SC2086 # the command and its options
		run $cmd --gpu h200-sxm --costs "$work/c.json" --layers 12 --hidden 1024 --heads 16 \
			--seq 1024 --global-batch 8
		expect_rc 0
		expect_in out "  models       the costs of $work/c.json"
		grep -qF "lower bound" "$work/out" && { show; fail "$cmd: a lower bound with costs"; }
	done
	;;
*)
	fail "usage: run-messages.sh dimension|caveats"
	;;
esac
exit 0
