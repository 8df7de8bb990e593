#!/usr/bin/env python3
"""Writes a copy of a Kineto trace with the CUDA allocator's "[memory]" events added
(run-memory.sh): the profiler's instants on the first CPU thread, N over the events'
span, totals rising to PEAK bytes in the middle and falling back, reserved a fixed
1.25 x allocated; plus one event of another device type (the CPU's), which orrery must
not take; and counter events ("ph": "C", as GPU metrics are written): "GPU metrics" with
two series, "SM active" i % 7 and "DRAM bandwidth" 10 x i, and "clock" with one, 1410,
one each per memory event, after its args in one of every two (key order varies).

add-memory.py IN.json[.gz] OUT.json PEAK_BYTES [N]
"""
import gzip
import json
import sys


def main(argv):
    src, out, peak = argv[0], argv[1], int(argv[2])
    n = int(argv[3]) if len(argv) > 3 else 101
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        t = json.load(f)
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    cpu = next(e for e in ev if e.get("cat") in ("cpu_op", "user_annotation", "python_function"))
    lo = min(float(e["ts"]) for e in ev)
    hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in ev)
    for i in range(n):
        # a tent: 0 .. peak .. 0 over the span, the peak at the middle sample
        alloc = peak * (1 - abs(2 * i / (n - 1) - 1))
        t["traceEvents"].append({
            "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
            "pid": cpu["pid"], "tid": cpu["tid"], "ts": lo + (hi - lo) * i / (n - 1),
            "args": {"Device Type": 1, "Device Id": 0, "Addr": 1000 + i, "Bytes": 512,
                     "Total Allocated": int(alloc), "Total Reserved": int(alloc * 1.25)}})
    for i in range(n):
        ts = lo + (hi - lo) * i / (n - 1)
        c = {"name": "GPU metrics", "ph": "C", "ts": ts, "pid": cpu["pid"],
             "args": {"SM active": i % 7, "DRAM bandwidth": 10 * i, "note": "text"}}
        if i % 2:
            c = {"args": c.pop("args"), **c}
        t["traceEvents"].append(c)
        t["traceEvents"].append({"ph": "C", "name": "clock", "pid": cpu["pid"],
                                 "tid": cpu["tid"], "ts": ts, "args": {"MHz": 1410}})
    t["traceEvents"].append({
        "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
        "pid": cpu["pid"], "tid": cpu["tid"], "ts": lo,
        "args": {"Device Type": 0, "Device Id": -1, "Total Allocated": 10 * peak,
                 "Total Reserved": 10 * peak}})
    with open(out, "w") as f:
        json.dump(t, f)


if __name__ == "__main__":
    main(sys.argv[1:])
