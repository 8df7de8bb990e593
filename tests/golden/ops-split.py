# SPDX-License-Identifier: MIT
"""A Kineto trace of one process cut in the two files `orrery record` writes in the
profiler mode of orrery_record (docs/tracer.md, "Ops from a CPU-only torch.profiler"),
and the check that the ops they merge into are the trace's.  For run-import-ops.sh.

  ops-split.py split TRACE OPS REST   OPS: what a CPU-only torch.profiler session
                                      records (cpu_op, user_annotation but the steps,
                                      with the file's header and thread names); REST:
                                      the rest (CUDA's calls and GPU work, the steps:
                                      what the tracer records), to convert to .orr
  ops-split.py enclosing A B          A and B (Chrome exports of orrery convert): every
                                      runtime or driver call has the same innermost
                                      enclosing op (name, input dims and types) on its
                                      thread in both; exit 1 with the first difference
"""

import json
import sys


def is_profiler_event(e):
    if e.get("ph") == "M":
        return False
    if e.get("cat") == "cpu_op":
        return True
    return e.get("cat") == "user_annotation" and not e.get("name", "").startswith(
        "ProfilerStep#")


def split(src, ops_out, rest_out):
    with open(src) as f:
        d = json.load(f)
    ops = {k: v for k, v in d.items() if k != "traceEvents"}
    rest = dict(ops)
    meta = [e for e in d["traceEvents"] if e.get("ph") == "M"]
    ops["traceEvents"] = [e for e in d["traceEvents"] if is_profiler_event(e)] + meta
    rest["traceEvents"] = [e for e in d["traceEvents"] if not is_profiler_event(e)]
    for out, doc in ((ops_out, ops), (rest_out, rest)):
        with open(out, "w") as f:
            json.dump(doc, f)


def calls_in_ops(path):
    """(tid, start ns, call, correlation, innermost enclosing op or None) per call."""
    with open(path) as f:
        d = json.load(f)
    base = d.get("baseTimeNanoseconds", 0)
    ops, calls = {}, []
    for e in d["traceEvents"]:
        if e.get("ph") != "X":
            continue
        t0 = base + round(float(e["ts"]) * 1000)
        if e.get("cat") == "cpu_op":
            a = e.get("args", {})
            ops.setdefault(e["tid"], []).append(
                (t0, t0 + round(float(e["dur"]) * 1000), e["name"],
                 json.dumps(a.get("Input Dims")), json.dumps(a.get("Input type"))))
        elif e.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls.append((e["tid"], t0, e["name"], e.get("args", {}).get("correlation")))
    out = []
    for tid, t, name, corr in sorted(calls, key=lambda c: (c[1], c[0], c[3] or 0)):
        inner = None
        for o in ops.get(tid, []):
            if o[0] <= t < o[1] and (inner is None or o[0] >= inner[0]):
                inner = o
        out.append((tid, t, name, corr, inner[2:] if inner else None))
    return out


def enclosing(a_path, b_path):
    a, b = calls_in_ops(a_path), calls_in_ops(b_path)
    inside = sum(1 for c in a if c[4])
    print("%d calls, %d inside an op" % (len(a), inside))
    if not inside:
        print("no call inside an op in %s" % a_path)
        return 1
    if len(a) != len(b):
        print("%d calls in %s, %d in %s" % (len(a), a_path, len(b), b_path))
        return 1
    for x, y in zip(a, b):
        if x != y:
            print("differs:\n  %s\n  %s" % (x, y))
            return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "split":
        split(*sys.argv[2:5])
    else:
        sys.exit(enclosing(*sys.argv[2:4]))
