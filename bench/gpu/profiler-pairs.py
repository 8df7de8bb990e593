#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost per op of torch.profiler's option sets, from bench/gpu/profiler-pairs.sh's runs.

    python3 bench/gpu/profiler-pairs.py OUT

OUT holds one folder per configuration (base, host, or any other name) with MODE.jsonl
(gpt.py --times) for each mode and MODE.json or MODE.json.gz (the Chrome trace) for the
modes traced by torch.profiler.  Per configuration: plain's median step, the GPU's busy
time per step (the least over its traces: kernels, copies and sets summed in the median
ProfilerStep), whether plain is host-bound (its step over 1.15 x that busy time), and
per mode the median step, the ops and runtime/driver calls of a traced step (a mode
without a trace, plain or the observer alone, takes the shapes trace's), and the cost per
op, (mode - plain) / ops.  Where plain is not host-bound the cost is a lower bound (the
GPU hid part of it), and it is marked so.  Writes OUT/profiler-pairs.json and prints a
Markdown table.
"""

import importlib.util
import json
import os
import statistics
import sys

MODES = ["plain", "cpu", "shapes", "stack", "et", "shapes-et"]
HOST_BOUND = 1.15  # plain's step over the GPU's busy time: the host, not the GPU, sets it


def _profiler_cost():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "profiler_cost", os.path.join(here, "..", "profiler-cost.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_step(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    ms = [r["ms"] for r in rows if r["measured"]]
    return statistics.median(ms) if ms else None


def trace_of(d, mode):
    for suffix in (".json.gz", ".json"):
        p = os.path.join(d, mode + suffix)
        if os.path.exists(p):
            return p
    return None


def steps(pc, path):
    """(step ms, ops, calls, GPU busy ms) of the median ProfilerStep of a trace."""
    if path.endswith(".gz"):
        st = pc.steps_of(path)
    else:  # profiler-cost.py reads gzip; an uncompressed trace the same way
        import gzip
        import tempfile
        with open(path, "rb") as f, tempfile.NamedTemporaryFile(suffix=".json.gz") as t:
            with gzip.open(t.name, "wb", compresslevel=1) as g:
                g.write(f.read())
            st = pc.steps_of(t.name)
    return st[len(st) // 2] if st else None


def config(pc, d):
    runs = {m: median_step(os.path.join(d, m + ".jsonl")) for m in MODES
            if os.path.exists(os.path.join(d, m + ".jsonl"))}
    traced = {m: steps(pc, trace_of(d, m)) for m in MODES if trace_of(d, m)}
    traced = {m: t for m, t in traced.items() if t}
    if runs.get("plain") is None or not traced:
        return None
    busy = min(t[3] for t in traced.values())
    ref = traced.get("shapes") or next(iter(traced.values()))
    res = {"plain_ms": runs["plain"], "gpu_busy_ms": busy,
           "plain_host_bound": runs["plain"] > HOST_BOUND * busy, "modes": {}}
    for m, ms in runs.items():
        if m == "plain" or ms is None:
            continue
        t = traced.get(m, ref)
        res["modes"][m] = {"median_ms": ms, "ops": t[1], "calls": t[2],
                           "op_ns": (ms - runs["plain"]) * 1e6 / t[1] if t[1] else None,
                           "lower_bound": not res["plain_host_bound"]}
    # the observer's own part beside the profiler, estimator/profiler-cost.c's second row
    # (bench/observer-cost.py measures the same on a CPU)
    se, s = res["modes"].get("shapes-et"), res["modes"].get("shapes")
    if se and s and se["ops"]:
        res["observer_beside_profiler_op_ns"] = (se["median_ms"] - s["median_ms"]) * 1e6 / se["ops"]
    return res


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: profiler-pairs.py OUT")
    out = sys.argv[1]
    pc = _profiler_cost()
    res = {}
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        if os.path.isdir(d):
            r = config(pc, d)
            if r:
                res[name] = r
            else:
                print("profiler-pairs: %s: no plain run or no trace, left out" % name,
                      file=sys.stderr)
    if not res:
        sys.exit("profiler-pairs: nothing measured in %s" % out)
    with open(os.path.join(out, "profiler-pairs.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print("| configuration | plain ms | GPU busy ms | mode | step ms | ops | calls | ns per op |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in res.items():
        for m, v in r["modes"].items():
            ns = "-" if v["op_ns"] is None else "%s%.0f" % ("≥ " if v["lower_bound"] else "",
                                                          v["op_ns"])
            print("| %s | %.1f | %.1f | %s | %.1f | %d | %d | %s |"
                  % (name, r["plain_ms"], r["gpu_busy_ms"], m, v["median_ms"], v["ops"],
                     v["calls"], ns))
    for name, r in res.items():
        if "observer_beside_profiler_op_ns" in r:
            print("%s: the observer beside torch.profiler (shapes-et - shapes): %.0f ns per op"
                  % (name, r["observer_beside_profiler_op_ns"]))


if __name__ == "__main__":
    main()
