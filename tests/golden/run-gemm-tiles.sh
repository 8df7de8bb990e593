#!/bin/bash
# The GEMM model of tiles and waves end to end (suite golden), from the source root with
# $ORRERY set: orrery fit writes it in the costs (gemm.tiles, fp16 on the Megatron TP=8
# trace), estimate --gemm-model tiles times every synthesized GEMM by it (the sources
# say so) and a step of small GEMMs comes out slower than by the roofline x the
# efficiency (its tiles fill a fraction of the A100's 108 SMs); costs without the key
# time as the default; whatif takes the option too; a bad model name is a usage error.
# 77 without ../shared.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

trace=${ORR_SHARED_TRACES:-../shared/traces}/kineto/astrasim-megatron-tp8
needs "$trace"

run fit -o "$work/costs.json" "$trace"
expect_rc 0
grep -q '"tiles": \[' "$work/costs.json" || fail "the costs have no gemm.tiles"
grep -A3 '"tiles": \[' "$work/costs.json" | grep -q '"math": "fp16"' ||
	fail "gemm.tiles has no fp16 model"

# vTrain's smallest layout: hidden 1024 at TP 8, micro-batch 1 (QKV: 1024 x 384 x 1024)
row=(estimate --gpu a100-80gb-sxm --layers 12 --hidden 1024 --heads 16 --seq 1024 --tp 8
	--pp 1 --dp 1 --micro-batch 1 --global-batch 1 --vocab 50257 --recompute full
	--precision fp16 --attention unfused --launch-us 0 --costs "$work/costs.json")
ms() { sed -n 's/^  estimated *\([0-9.]*\) ms.*/\1/p' "$work/out"; }

run "${row[@]}"
expect_rc 0
roofline=$(ms)
run "${row[@]}" --gemm-model tiles
expect_rc 0
expect_in out "by tiles and waves (--gemm-model tiles)"
tiles=$(ms)
[[ -n $roofline && -n $tiles ]] || { show; fail "no estimated time"; }
awk -v a="$roofline" -v b="$tiles" 'BEGIN { exit !(b > a) }' ||
	fail "tiles $tiles ms is not slower than roofline $roofline ms on small GEMMs"
run "${row[@]}" --gemm-model roofline
expect_rc 0
[[ $(ms) == "$roofline" ]] || fail "--gemm-model roofline is not the default"

# costs written before the model: read, and timed as the default
sed '/"tiles": \[/,/^    \],$/d' "$work/costs.json" >"$work/old.json"
! grep -q '"tiles"' "$work/old.json" || fail "the test could not remove gemm.tiles"
row[${#row[@]} - 1]=$work/old.json
run "${row[@]}" --gemm-model tiles
expect_rc 0
[[ $(ms) == "$roofline" ]] || { show; fail "costs without gemm.tiles: $(ms) ms, not $roofline"; }

# whatif takes it as estimate does
run whatif --gpu a100-80gb-sxm --layers 12 --hidden 1024 --heads 16 --seq 1024 --gpus 8 \
	--tp 1,2 --pp 1 --micro-batch 1 --global-batch 8 --recompute full --precision fp16 \
	--attention unfused --launch-us 0 --costs "$work/costs.json" --gemm-model tiles
expect_rc 0
expect_in out "by tiles and waves (--gemm-model tiles)"

run "${row[@]}" --gemm-model waves
expect_rc 2
expect_in err "bad --gemm-model 'waves' (roofline or tiles)"
