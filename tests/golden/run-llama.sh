#!/bin/bash
# Llama shapes and FLOPs utilization (suite golden), from the source root with $ORRERY set:
#
#   run-llama.sh estimate   Llama 2 7B described with Megatron-LM's options: the text
#                           names them (mlp swiglu, embeddings untied, norm RMSNorm,
#                           positions rope) and counts its 6,738,415,616 parameters; the
#                           JSON's config has them; a GPT's says gelu, tied, LayerNorm,
#                           learned_absolute
#   run-llama.sh mfu        issue 33's 111.7 % case: MFU below 1, HFU above MFU with
#                           full recompute, equal without, in text and JSON
#   run-llama.sh whatif     whatif takes the options: its model line and every
#                           result's config carry them
#   run-llama.sh fit        fit's JSON has swiglu and untie_embeddings_and_output_weights
#                           (null: a trace does not tell)
#   run-llama.sh usage      bad --normalization and --position-embedding-type: exit 2
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

llama2=(--gpu h100-sxm --layers 32 --hidden 4096 --heads 32 --ffn 11008 --vocab 32000
	--seq 4096 --swiglu --untie-embeddings-and-output-weights --normalization RMSNorm
	--position-embedding-type rope)

# The JSON of the last run, checked by the Python that follows on standard input.
check_json() {
	cp "$work/out" "$work/$1.json"
	python3 - "$work/$1.json" || fail "$1: the JSON check failed"
}

# A text row "  NAME   VALUE" of the last run.
expect_row() {
	grep -qE "^  $1 +$2\$" "$work/out" || {
		show
		fail "no row '$1 $2'"
	}
}

case ${1:-} in
estimate)
	run estimate "${llama2[@]}" --dp 8 --global-batch 64 --distributed-optimizer
	expect_rc 0
	expect_row mlp swiglu
	expect_row embeddings untied
	expect_row norm RMSNorm
	expect_row positions rope
	expect_in out "(6738415616 parameters x "
	run estimate --format=json "${llama2[@]}" --dp 8 --global-batch 64 --distributed-optimizer
	expect_rc 0
	check_json llama <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
want = {"swiglu": True, "untie_embeddings_and_output_weights": True,
        "normalization": "RMSNorm", "position_embedding_type": "rope", "ffn": 11008}
for k, v in want.items():
    assert c[k] == v, (k, c[k], v)
PY
	run estimate --gpu h100-sxm --layers 4 --hidden 1024 --heads 16 --seq 1024
	expect_rc 0
	expect_row mlp gelu
	expect_row embeddings tied
	expect_row norm LayerNorm
	expect_row positions learned_absolute
	;;
mfu)
	issue=(--gpu h100-sxm --layers 32 --hidden 4096 --heads 32 --seq 16384 --dp 8
		--micro-batch 1 --global-batch 64 --distributed-optimizer)
	run estimate "${issue[@]}" --recompute full
	expect_rc 0
	grep -qE '^  tokens/s per GPU [0-9]+, MFU [0-9.]+ %, HFU [0-9.]+ %$' "$work/out" ||
		{ show; fail "no 'MFU x %, HFU y %'"; }
	for r in full none; do
		run estimate --format=json "${issue[@]}" --recompute $r
		expect_rc 0
		check_json $r <<PY
import json, sys
e = json.load(open(sys.argv[1]))
mfu, hfu = e["mfu"], e["hfu"]
assert 0 < mfu <= 1 and hfu <= 1, (mfu, hfu)
assert (hfu > mfu) if "$r" == "full" else (hfu == mfu), ("$r", mfu, hfu)
PY
	done
	;;
whatif)
	run whatif "${llama2[@]}" --global-batch 16 --gpus 8 --tp 1,2 --pp 1 --top 3
	expect_rc 0
	expect_in out ", swiglu, untied embeddings, RMSNorm, rope"
	expect_in out "HFU %"
	run whatif --format=json "${llama2[@]}" --global-batch 16 --gpus 8 --tp 1,2 --pp 1
	expect_rc 0
	check_json sweep <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ok = [r for r in j["results"] if r["why"] == "feasible"]
assert ok, "no feasible configuration"
for r in ok:
    c = r["config"]
    assert c["swiglu"] and c["untie_embeddings_and_output_weights"], c
    assert c["normalization"] == "RMSNorm" and c["position_embedding_type"] == "rope", c
    none = c["recompute"] == "none"
    assert (r["hfu"] == r["mfu"]) if none else (r["hfu"] > r["mfu"]), (c["recompute"], r)
PY
	;;
fit)
	run fit --format=json traces/samples/tiny-2rank
	expect_rc 0
	check_json fit <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["structure"]
assert s["swiglu"] is s["gated_mlp"], s
assert "untie_embeddings_and_output_weights" in s and s["untie_embeddings_and_output_weights"] is None
PY
	;;
usage)
	run estimate --gpu h100-sxm --layers 2 --hidden 64 --heads 2 --seq 16 --normalization rms
	expect_rc 2
	expect_in err "bad --normalization 'rms' (LayerNorm or RMSNorm)"
	run whatif --gpu h100-sxm --layers 2 --hidden 64 --heads 2 --seq 16 --global-batch 8 \
		--gpus 2 --position-embedding-type alibi
	expect_rc 2
	expect_in err "bad --position-embedding-type 'alibi' (learned_absolute or rope)"
	;;
*)
	fail "usage: run-llama.sh estimate|mfu|whatif|fit|usage"
	;;
esac
exit 0
