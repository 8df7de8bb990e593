#!/bin/bash
# `orrery estimate --nic-gbps` (suite golden), from the source root with $ORRERY set: a
# described GPT at TP 16 on A100 (two DGX A100 nodes per TP group) by the hardware table:
#
#   - the default is the table's reference node: --nic-gbps 200 (the DGX A100's HDR NIC
#     per GPU) gives the same step to the nanosecond;
#   - half the network per GPU makes the step longer by at least a tenth of its exposed
#     communication at 200 (the blocking TP all-reduces: NCCL's model halves the ring's
#     bus bandwidth, its latency stays), and by no more than that time;
#   - a job whose groups all stay in a node (TP 8 on 8 GPUs) does not move;
#   - 0, a word, a rate below 1 Gb/s (NCCL's slowest speed across nodes, 0.12 GB/s: the
#     model would time a channel faster than its NIC) or a number that is not decimal
#     (0x10, " 7") is a usage error.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

model=(--gpu a100-80gb-sxm --layers 4 --hidden 3072 --heads 32 --seq 2048 --vocab 50257
	--precision fp16 --attention unfused --recompute full --micro-batch 8 --pp 1
	--launch-us 70 --format=json)

# The value of a top-level number field of the last JSON output.
field() {
	sed -n "s/^  \"$1\": \\([0-9.e+-]*\\),\$/\\1/p" "$work/out" | head -1
}

# iteration_ns and the exposed communication (breakdown) of `estimate ARGS`.
step() {
	run estimate "${model[@]}" "$@"
	expect_rc 0
	it=$(field iteration_ns)
	tp=$(sed -n 's/^ *"exposed_comm_ns": \([0-9.e+-]*\),*$/\1/p' "$work/out" | head -1)
	[[ -n $it ]] || fail "no iteration_ns"
}

step --tp 16 --dp 1 --global-batch 32
base=$it base_tp=$tp
step --tp 16 --dp 1 --global-batch 32 --nic-gbps 200
[[ $it == "$base" ]] || fail "--nic-gbps 200 gives $it ns, the default $base ns"
step --tp 16 --dp 1 --global-batch 32 --nic-gbps 100
half=$it
[[ -n $base_tp ]] || fail "no exposed_comm_ns in the estimate"
awk -v b="$base" -v h="$half" -v t="$base_tp" 'BEGIN { exit !(h - b >= 0.1 * t && h - b <= t) }' ||
	fail "--nic-gbps 100: step $half ns against $base ns, exposed communication $base_tp ns at 200"

step --tp 8 --dp 1 --global-batch 32
inside=$it
step --tp 8 --dp 1 --global-batch 32 --nic-gbps 100
[[ $it == "$inside" ]] || fail "TP 8 in one node moved with --nic-gbps: $it against $inside ns"

run estimate "${model[@]}" --tp 16 --dp 1 --global-batch 32 --nic-gbps 0
expect_rc 2
expect_in err "bad --nic-gbps '0'"
run estimate "${model[@]}" --tp 16 --dp 1 --global-batch 32 --nic-gbps fast
expect_rc 2
expect_in err "bad --nic-gbps 'fast'"
for v in 0.5 1e-30 0x10 " 7" 1e999 nan; do
	run estimate "${model[@]}" --tp 16 --dp 1 --global-batch 32 --nic-gbps "$v"
	expect_rc 2
	expect_in err "bad --nic-gbps '$v'"
done
run estimate "${model[@]}" --tp 16 --dp 1 --global-batch 32 --launch-us 0x10
expect_rc 2
expect_in err "bad --launch-us '0x10'"
run estimate "${model[@]}" --tp 16 --dp 1 --global-batch 32 --nic-gbps 1
expect_rc 0
exit 0
