#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The profiler's cost per op, measured on jobs run with and without torch.profiler.

    python3 bench/profiler-cost.py [SHARED]      (SHARED: ../shared by default)

Reads the H200 GPT runs of SHARED/whatif/h200-gpt (NAME.json.gz: torch.profiler with
CPU, CUDA and record_shapes, 5 ProfilerSteps; NAME.plain.jsonl: the same configuration
without any profiler) and SHARED/gpu-runs/h200-2026-11-27/record-results.json (run.sh's
medians of the base configuration: plain, torch.profiler over 20 steps).  For each
traced configuration: the median ProfilerStep, and in it the ops (cpu_op), runtime and
driver calls and the GPU's busy time (kernels, copies, sets: their durations summed).

The measurement (estimator/profiler-cost.c's table): on base, host-bound both ways (its
traced step is 1.8 x its GPU time, its plain step within 6 % of it), the per-op cost is
(traced - plain) / ops per traced step.  The checks: each other configuration's plain
step predicted as max(traced - ops x per-op cost, GPU busy), and run.sh's torch.profiler
median predicted as its plain median + ops x per-op cost.  Prints one table, Markdown.

Then, per rank of SHARED/traces/kineto/astrasim-megatron-tp8 (the A100 trace `fit`
calibrates the launch time on), its main thread inside the ProfilerStep: the ops and
calls, their exclusive (self) time, the part of it in instances of 1 ms or more, the
self time with each instance at most its name's median, and the gaps between top-level
events: where the launch thread's time goes besides the profiler's ops.  Last, the
ranks compared position by position (they run the same program): the median over the
ranks of each top-level event and the gap before it, and where one rank alone takes a
millisecond or more (the stalls estimator/launch-time.c takes out).
"""

import gzip
import json
import os
import statistics
import sys

NAMES = ["base", "layers24", "hidden2048", "batch16"]


def steps_of(path):
    """(step ms, ops, calls, GPU busy ms) of each ProfilerStep of the main thread."""
    with gzip.open(path) as f:
        ev = json.load(f)["traceEvents"]
    longest = {}
    for e in ev:
        if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep"):
            if e["dur"] > longest.get(e["name"], {"dur": -1})["dur"]:
                longest[e["name"]] = e
    out = []
    for s in longest.values():
        a, b = s["ts"], s["ts"] + s["dur"]
        inside = [e for e in ev if e.get("ph") == "X" and a <= e.get("ts", -1) < b]
        ops = sum(1 for e in inside if e.get("cat") == "cpu_op")
        calls = sum(1 for e in inside if e.get("cat") in ("cuda_runtime", "cuda_driver"))
        gpu = sum(e["dur"] for e in inside if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
        out.append((s["dur"] / 1e3, ops, calls, gpu / 1e3))
    return sorted(out)


def plain_ms(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return statistics.median(r["ms"] for r in rows if r["measured"])


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else "../shared"
    d = os.path.join(shared, "whatif", "h200-gpt")
    runs = {}
    for n in NAMES:
        st = steps_of(os.path.join(d, n + ".json.gz"))
        step, ops, calls, gpu = st[len(st) // 2]
        runs[n] = dict(traced=step, ops=ops, calls=calls, gpu=gpu,
                       plain=plain_ms(os.path.join(d, n + ".plain.jsonl")))
    b = runs["base"]
    op_ns = (b["traced"] - b["plain"]) * 1e6 / b["ops"]
    print("per op: (%.3f - %.3f ms) / %d ops = %.0f ns (%d calls per step, %.2f ops per call)"
          % (b["traced"], b["plain"], b["ops"], op_ns, b["calls"], b["ops"] / b["calls"]))
    print()
    print("| configuration | traced ms | ops | calls | GPU busy ms | plain ms | predicted plain ms | error |")
    print("|---|---|---|---|---|---|---|---|")
    for n in NAMES:
        r = runs[n]
        pred = max(r["traced"] - r["ops"] * op_ns / 1e6, r["gpu"])
        print("| %s | %.1f | %d | %d | %.1f | %.1f | %.1f | %+.1f %% |"
              % (n, r["traced"], r["ops"], r["calls"], r["gpu"], r["plain"], pred,
                 100 * (pred / r["plain"] - 1)))
    rr = os.path.join(shared, "gpu-runs", "h200-2026-11-27", "record-results.json")
    with open(rr) as f:
        med = json.load(f)["median_step_ms"]
    pred = med["plain"] + b["ops"] * op_ns / 1e6
    print("| base, run.sh (20 profiled steps): torch.profiler | %.1f | %d | | | %.1f | traced predicted %.1f | %+.1f %% |"
          % (med["torch_profiler"], b["ops"], med["plain"], pred,
             100 * (pred / med["torch_profiler"] - 1)))
    print()
    print("run.sh's pair alone gives %.0f ns per op"
          % ((med["torch_profiler"] - med["plain"]) * 1e6 / b["ops"]))
    a100(shared)


def first_step(path):
    """The trace's events and its first ProfilerStep."""
    with gzip.open(path) as f:
        ev = json.load(f)["traceEvents"]
    return ev, next(e for e in ev if e.get("cat") == "user_annotation"
                    and e.get("name", "").startswith("ProfilerStep"))


def host_of(path):
    """(ops, calls, self ms, instances >= 1 ms and their ms, capped at the name's median, gaps ms)."""
    ev, step = first_step(path)
    a, b = step["ts"], step["ts"] + step["dur"]
    threads = {}
    for e in ev:
        if e.get("cat") == "cpu_op":
            threads[(e["pid"], e["tid"])] = threads.get((e["pid"], e["tid"]), 0) + 1
    main = max(threads, key=threads.get)
    cpu = sorted((e for e in ev if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) == main
                  and e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver")
                  and a <= e["ts"] < b), key=lambda e: (e["ts"], -e["dur"]))
    own = [e["dur"] for e in cpu]
    stack = []
    for i, e in enumerate(cpu):
        while stack and cpu[stack[-1]]["ts"] + cpu[stack[-1]]["dur"] <= e["ts"]:
            stack.pop()
        if stack:
            own[stack[-1]] -= e["dur"]
        stack.append(i)
    by_name = {}
    for e, o in zip(cpu, own):
        by_name.setdefault(e["name"], []).append(o)
    med = {k: statistics.median(v) for k, v in by_name.items()}
    top, end = [], -1
    for e in cpu:
        if e["ts"] >= end:
            top.append(e)
            end = e["ts"] + e["dur"]
    gaps = sum(top[i + 1]["ts"] - top[i]["ts"] - top[i]["dur"] for i in range(len(top) - 1))
    ops = sum(1 for e in cpu if e["cat"] == "cpu_op")
    return (ops, len(cpu) - ops, sum(own) / 1e3, sum(1 for o in own if o >= 1000),
            sum(o for o in own if o >= 1000) / 1e3,
            sum(min(o, med[e["name"]]) for e, o in zip(cpu, own)) / 1e3, gaps / 1e3)


def top_level(path):
    """The main thread's top-level events in the ProfilerStep: (name, gap before, dur) in us."""
    ev, step = first_step(path)
    a, b = step["ts"], step["ts"] + step["dur"]
    cpu = sorted((e for e in ev if e.get("ph") == "X" and e.get("tid") == step["tid"]
                  and e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver",
                                       "user_annotation")
                  and a <= e["ts"] < b and e is not step),
                 key=lambda e: (e["ts"], -e["dur"]))
    out, end = [], a
    for e in cpu:
        if e["ts"] >= end:
            out.append((e["name"], e["ts"] - end, e["dur"]))
            end = e["ts"] + e["dur"]
    return out


def peers(d):
    """The ranks' top-level events position by position: the same program on every rank?"""
    ranks = [top_level(os.path.join(d, "rank-%d.json.gz" % r)) for r in range(8)]
    n = len(ranks[0])
    if any(len(t) != n or [x[0] for x in t] != [x[0] for x in ranks[0]] for t in ranks):
        print("the ranks' top-level events differ: no position-by-position comparison")
        return
    med = sum(statistics.median(t[i][1] + t[i][2] for t in ranks) for i in range(n)) / 1e3
    slow = [i for i in range(n) if max(t[i][1] + t[i][2] for t in ranks) >= 1000]
    alone = sum(1 for i in slow if sum(t[i][1] + t[i][2] >= 1000 for t in ranks) == 1)
    print()
    print("the same %d top-level events, in the same order, on all 8 ranks; per position the"
          " median over the ranks (the event and the gap before it) sums to %.1f ms a step;"
          " %d positions take 1 ms or more on some rank, %d of them on that rank alone"
          % (n, med, len(slow), alone))


def a100(shared):
    d = os.path.join(shared, "traces", "kineto", "astrasim-megatron-tp8")
    print()
    print("| A100 rank | ops | calls | self ms | instances >= 1 ms | their self ms | self, each at most its name's median, ms | gaps between top-level events ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in range(8):
        print("| %d | %d | %d | %.1f | %d | %.1f | %.1f | %.1f |"
              % ((r,) + host_of(os.path.join(d, "rank-%d.json.gz" % r))))
    peers(d)


if __name__ == "__main__":
    main()
