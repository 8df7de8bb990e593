#!/usr/bin/env python3
"""mk-compose-autocast.py OUTDIR: a profiler trace and its PyTorch execution trace of
one step as autocast runs it (run-compose.sh autocast).  Writes OUTDIR/trace.json and
OUTDIR/et.json, and OUTDIR/trace2.json: the same with a second step, alike, recorded
after the one the execution trace observed (ProfilerStep#1 under the observer, its ops
over 375 us; ProfilerStep#2 without it, 187.5 us, its kernels half as long):

  aten::linear(x bf16, w fp32)         autocast's wrapper kernel, which calls
    aten::to(w, bfloat16)              a cast (one kernel) and
    aten::linear(x bf16, w' bf16)      the op again with the cast arguments (one kernel)
  aten::record_stream(y, stream)       the stream as the execution trace writes it (an
                                       integer of type Stream)
  aten::set_(y, storage)               a storage, an integer of type Storage: not an
                                       argument bench.py can make (not rebuilt)

The outer aten::linear run alone refuses its arguments ("mat1 and mat2 must have the
same dtype"): compose rebuilds the cast and the inner call.
"""
import json
import os
import sys

LINEAR = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"
TO = ("aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, "
      "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)")
RECORD = "aten::record_stream(Tensor(a!) self, Stream s) -> ()"
SET = "aten::set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)"
BF16 = 15  # c10::ScalarType::BFloat16


def tensor(tid, sid, shape, dtype):
    size = 2 if dtype == "c10::BFloat16" else 4
    numel = 1
    for n in shape:
        numel *= n
    strides = [shape[1], 1]
    return [tid, sid, 0, numel, size, "cuda:0"], list(shape), strides, "Tensor(%s)" % dtype


X = tensor(10, 11, (4, 8), "c10::BFloat16")
W = tensor(12, 13, (8, 8), "float")
WB = tensor(14, 15, (8, 8), "c10::BFloat16")
Y = tensor(16, 17, (4, 8), "c10::BFloat16")
NONE = ("<None>", [], [], "None")

# name, schema, inputs, outputs, start and length (us), kernel launched (or None)
OPS = [
    ("aten::linear", LINEAR, [X, W, NONE], [Y], 100, 300, None),
    ("aten::to", TO, [W, (BF16, [], [], "Int"), (False, [], [], "Bool"),
                      (False, [], [], "Bool"), NONE], [WB], 110, 50, "copy_kernel"),
    ("aten::linear", LINEAR, [X, WB, NONE], [Y], 200, 150, "nvjet_sm90_tst_gemm"),
    ("aten::record_stream", RECORD, [Y, (7, [], [], "Stream")], [], 450, 10, None),
    ("aten::set_", SET, [Y, (17, [], [], "Storage")], [Y], 470, 5, None),
]


def step(n, at, scale):
    """ProfilerStep#n from `at` (us); times (and kernels) scale times as long."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 1,
           "tid": 1, "ts": at, "dur": 1000 * scale}]
    for i, (name, _, _, _, ts, dur, kernel) in enumerate(OPS):
        ext, ts = 10 * n + i + 1, at + ts * scale
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts,
                   "dur": dur * scale, "args": {"External id": ext}})
        if kernel:
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                    "tid": 1, "ts": ts + 5 * scale, "dur": 5 * scale,
                    "args": {"correlation": 100 * n + i, "External id": ext}},
                   {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7,
                    "ts": ts + 20 * scale, "dur": 20 * scale,
                    "args": {"correlation": 100 * n + i, "device": 0, "stream": 7}}]
    return ev


def kineto(steps=1):
    ev = step(1, 0, 1)
    if steps > 1:
        ev += step(2, 1000, 0.5)
    return {"schemaVersion": 1, "traceEvents": ev}


def side(vals):
    return {"values": [v[0] for v in vals], "shapes": [v[1] for v in vals],
            "strides": [v[2] for v in vals], "types": [v[3] for v in vals]}


def et():
    nodes = [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1,
              "inputs": side([]), "outputs": side([]), "attrs": []}]
    for i, (name, schema, inputs, outputs, _, _, _) in enumerate(OPS):
        nodes.append({"id": i + 2, "name": name, "ctrl_deps": 1, "inputs": side(inputs),
                      "outputs": side(outputs),
                      "attrs": [{"name": "op_schema", "type": "string", "value": schema},
                                {"name": "rf_id", "type": "uint64", "value": i + 1}]})
    return {"schema": "1.1.0-chakra.0.0.4", "pid": 7, "time": "2024-01-01 00:00:00",
            "start_ts": 1, "finish_ts": 2, "nodes": nodes}


def main(out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "trace.json"), "w") as f:
        json.dump(kineto(), f)
    with open(os.path.join(out, "et.json"), "w") as f:
        json.dump(et(), f)
    with open(os.path.join(out, "trace2.json"), "w") as f:
        json.dump(kineto(2), f)


if __name__ == "__main__":
    main(sys.argv[1])
