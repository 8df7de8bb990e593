#!/bin/bash
# orrery fit on shapes that once misled it (suite golden), from the source root; CASE is
#   attention   the H200 GPT's trace with one forward attention op of batch 16 among
#               eleven of batch 8: the sequence and head size are the most frequent
#               shape's (the rarest last one was taken, and the attention batch then
#               contradicted micro-batch x heads: no transformer)
#   nologits    the same trace without its logits GEMMs (a first pipeline stage at tp 1):
#               the attention projection (T x h . h x h) is not taken for the logits
#               (vocabulary 1024, 12 micro-batches, 1 layer were)
#   huge        a one-layer transformer of hidden and tokens 2^32 with an all-reduce:
#               no transformer, exit 0 (T x h wrapped to 0 and divided: SIGFPE)
# 77 without ../shared (attention, nologits) or python3.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

case=${1:?usage: $0 attention|nologits|huge}
base=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt/base.json.gz
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
[[ $case == huge ]] || needs "$base"

# rewrite IN OUT KIND: the trace IN with one change, written to OUT (plain JSON).
rewrite() {
	python3 - "$@" <<'PY'
import gzip, json, sys
src, out, kind = sys.argv[1:4]
doc = json.load(gzip.open(src))
ev = doc["traceEvents"]
if kind == "attention":
    fwd = sorted((e for e in ev if e.get("name") == "aten::_scaled_dot_product_cudnn_attention"),
                 key=lambda e: e["ts"])
    fwd[0]["args"]["Input Dims"][0][0] = 16
else:
    doc["traceEvents"] = [e for e in ev if not (e.get("name") == "aten::mm" and "50304" in
                          json.dumps(e.get("args", {}).get("Input Dims")))]
json.dump(doc, open(out, "w"))
PY
}

case $case in
attention)
	rewrite "$base" "$work/t.json" attention || fail "cannot rewrite the trace"
	run fit "$work/t.json"
	expect_rc 0
	expect_in out "attention's queries [B, s, d] = [128, 1024, 64]"
	expect_in out "layers               12"
	expect_in out "heads                16"
	;;
nologits)
	rewrite "$base" "$work/t.json" nologits || fail "cannot rewrite the trace"
	run fit "$work/t.json"
	expect_rc 0
	expect_in out "layers               12  inferred  QKV GEMMs"
	expect_in out "vocab                 ?  unknown   no logits GEMM"
	expect_in out "micro_batches         1"
	;;
huge)
	python3 - "$work/t.json" <<'PY' || fail "cannot write the trace"
import json, sys
h = T = 1 << 32
s, d = 1 << 20, 64
B = (T // s) * (h // d)
ev, ts = [], 100.0
def op(name, dims):
    global ts
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts,
               "dur": 5, "args": {"External id": len(ev) + 1, "Input Dims": dims,
                                  "Input type": ["c10::BFloat16"] * len(dims)}})
    ts += 10
op("aten::layer_norm", [[T, h]])
op("aten::mm", [[T, h], [h, 3 * h]])
op("aten::bmm", [[B, s, d], [B, d, s]])
op("aten::mm", [[T, h], [h, h]])
op("aten::layer_norm", [[T, h]])
op("aten::mm", [[T, h], [h, 4 * h]])
op("aten::mm", [[T, 4 * h], [4 * h, h]])
ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
           "ts": ts, "dur": 5, "args": {"correlation": 1}})
ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
           "pid": 0, "tid": 20, "ts": ts + 10, "dur": 10,
           "args": {"correlation": 1, "stream": 20, "device": 0, "Collective name": "allreduce",
                    "Process Group Name": "0", "Group size": 2, "In msg nelems": 4,
                    "dtype": "Float"}})
json.dump({"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": ev},
          open(sys.argv[1], "w"))
PY
	run fit "$work/t.json"
	expect_rc 0
	expect_in out "the shapes do not fit a transformer layer"
	;;
*) fail "unknown case '$case'" ;;
esac
echo ok >&2
