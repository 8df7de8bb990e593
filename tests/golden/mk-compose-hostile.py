#!/usr/bin/env python3
"""mk-compose-hostile.py OUTDIR: small profiler traces with their PyTorch execution
traces whose ops try to make orrery compose write a plan that runs something other than
an operator (run-compose.sh hostile).  Writes OUTDIR/V-trace.json and OUTDIR/V-et.json
for each variant V:

  rce       an op named load_library::__call__ given a path (torch.ops.load_library)
  schema    an op_schema whose overload carries a whole plan item (JSON injection)
  json      an op_schema whose overload holds a quote
  path      aten::div given a file path where it takes its rounding mode
  mode      aten::div given the mode "floor" (rebuilt: the control)
  ns        fbgemm::fused, an operator outside aten
  dim-neg, dim-max, stride-neg, offset-neg, offset-big
            aten::add's first input: a dimension of -5, of INT64_MAX, a stride of -1,
            a storage offset of -1, of 2^62
  total-big aten::cat of five tensors of 2^40 bytes each: 5 TiB in one rank's plan

Each trace is aten::rand twice, then the op under test, each launching one kernel.
"""
import json
import os
import sys

I64 = (1 << 63) - 1
SO = "/nonexistent/evil.so"
ADD = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
DIV = "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"
RAND = ("aten::rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor")


def kineto(name):
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
           "ts": 0, "dur": 1000}]
    for i, (op, ts) in enumerate((("aten::rand", 10), ("aten::rand", 40), (name, 100))):
        ev += [{"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts,
                "dur": 30, "args": {"External id": i + 1}},
               {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                "tid": 1, "ts": ts + 2, "dur": 5,
                "args": {"correlation": 100 + i, "External id": i + 1}},
               {"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7,
                "ts": ts + 10, "dur": 8,
                "args": {"correlation": 100 + i, "device": 0, "stream": 7}}]
    return {"schemaVersion": 1, "traceEvents": ev}


def tensor(tid, sid, offset=0, shape=(4, 4), strides=(4, 1)):
    return [tid, sid, offset, 16, 4, "cuda:0"], list(shape), list(strides), "Tensor(float)"


def node(nid, rf, name, schema, inputs, outputs):
    def side(vals):
        return {"values": [v[0] for v in vals], "shapes": [v[1] for v in vals],
                "strides": [v[2] for v in vals], "types": [v[3] for v in vals]}
    return {"id": nid, "name": name, "ctrl_deps": 1, "inputs": side(inputs),
            "outputs": side(outputs),
            "attrs": [{"name": "op_schema", "type": "string", "value": schema},
                      {"name": "rf_id", "type": "uint64", "value": rf}]}


def et(name, schema, inputs, outputs):
    size = ([4, 4], [[], []], [], "GenericList[Int,Int]")
    none = ("<None>", [], [], "None")
    dev = ("cuda:0", [], [], "Device")
    nodes = [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1,
              "inputs": {"values": [], "shapes": [], "types": []},
              "outputs": {"values": [], "shapes": [], "types": []}, "attrs": []},
             node(2, 1, "aten::rand", RAND, [size, none, none, dev], [tensor(10, 11)]),
             node(3, 2, "aten::rand", RAND, [size, none, none, dev], [tensor(12, 13)]),
             node(4, 3, name, schema, inputs, outputs)]
    return {"schema": "1.1.0-chakra.0.0.4", "pid": 7, "time": "2024-01-01 00:00:00",
            "start_ts": 1, "finish_ts": 2, "nodes": nodes}


def string(s):
    return (s, [], [], "String")


def variants():
    a, b, out = tensor(10, 11), tensor(12, 13), [tensor(14, 15)]
    yield "rce", "load_library::__call__", "z(str path) -> ()", [string(SO)], []
    item = ('",[],[]],["op","load_library::__call__",null,0,null,%s,[]],["op","aten::add",'
            'null,0,"Tensor' % json.dumps([SO]))
    yield "schema", "aten::add", "aten::add.Tensor" + item + ADD[16:], [a, b], out
    yield "json", "aten::add", 'aten::add.x"],"pwned":["y' + ADD[16:], [a, b], out
    yield "path", "aten::div", DIV, [a, b, string("/etc/passwd")], out
    yield "mode", "aten::div", DIV, [a, b, string("floor")], out
    yield "ns", "fbgemm::fused", "fbgemm::fused(Tensor self, Tensor other) -> Tensor", [a, b], out
    yield "dim-neg", "aten::add", ADD, [tensor(10, 11, shape=(-5, 4)), b], out
    yield "dim-max", "aten::add", ADD, [tensor(10, 11, shape=(I64, 4)), b], out
    yield "stride-neg", "aten::add", ADD, [tensor(10, 11, strides=(-1, 1)), b], out
    yield "offset-neg", "aten::add", ADD, [tensor(10, 11, offset=-1), b], out
    yield "offset-big", "aten::add", ADD, [tensor(10, 11, offset=1 << 62), b], out
    big = [tensor(20 + i, 30 + i, shape=(1 << 38,), strides=(1,)) for i in range(5)]
    cat = ([v[0] for v in big], [v[1] for v in big], [v[2] for v in big],
           "GenericList[%s]" % ",".join(v[3] for v in big))
    yield "total-big", "aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", \
        [cat, (0, [], [], "Int")], out


def main(out):
    os.makedirs(out, exist_ok=True)
    for v, name, schema, inputs, outputs in variants():
        with open(os.path.join(out, v + "-trace.json"), "w") as f:
            json.dump(kineto(name), f)
        with open(os.path.join(out, v + "-et.json"), "w") as f:
            json.dump(et(name, schema, inputs, outputs), f)


if __name__ == "__main__":
    main(sys.argv[1])
