#!/usr/bin/env python3
"""Compares a composed benchmark with the step it was composed from (bench/gpu/run.sh
compose): compose-check.py OUT

OUT holds torch.jsonl and torch-trace.json (gpt.py under torch.profiler), compose.json
(orrery compose's report), bench-run.json and bench-prof/rank-R.json (the benchmark's
run and its own profile), and optionally mega-compose.json and mega-run.json (the
shared A100 Megatron rank run here).  Checks, per profiled step: the benchmark's median
step within 5 % of the original's, each kernel class's GPU time within 10 %, and the
same kernel count per class.  Writes OUT/compose-results.json; exits 1 when a check fails.
"""
import glob
import json
import re
import statistics
import sys

CLASSES = [("gemm", re.compile(r"gemm|cutlass|xmma|matmul", re.I)),
           ("attention", re.compile(r"flash|fmha|attention|sdpa", re.I)),
           ("nccl", re.compile(r"nccl", re.I)),
           ("reduce", re.compile(r"reduce|norm|softmax", re.I)),
           ("elementwise", re.compile(r"elementwise|vectorized|unrolled", re.I))]


def kclass(name):
    for c, rx in CLASSES:
        if rx.search(name):
            return c
    return "other"


def per_step(trace):
    """GPU time (ns) and kernel count per class, averaged over the profiled steps."""
    ev = json.load(open(trace))["traceEvents"]
    steps = [e for e in ev if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    n = max(len(steps), 1)
    t, k = {}, {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = kclass(e.get("name", "")) if e["cat"] == "kernel" else e["cat"]
            t[c] = t.get(c, 0.0) + e.get("dur", 0) * 1e3 / n
            k[c] = k.get(c, 0) + 1.0 / n
    return t, k


def main(out):
    orig_ms = statistics.median(r["ms"] for r in map(json.loads, open(out + "/torch.jsonl"))
                                if r["measured"])
    run = json.load(open(out + "/bench-run.json"))
    bench_ms = run["median_ns"] / 1e6
    t0, k0 = per_step(out + "/torch-trace.json")
    prof = sorted(glob.glob(out + "/bench-prof/rank-*.json"))
    t1, k1 = per_step(prof[0])
    classes = sorted(set(t0) | set(t1))
    res = {
        "coverage": json.load(open(out + "/compose.json")).get("coverage"),
        "step_ms": {"original": orig_ms, "benchmark": bench_ms,
                    "error": bench_ms / orig_ms - 1},
        "classes": {c: {"gpu_ms": [t0.get(c, 0) / 1e6, t1.get(c, 0) / 1e6],
                        "kernels": [k0.get(c, 0), k1.get(c, 0)]} for c in classes},
        "failed_ops": run["failed"],
    }
    res["checks"] = {
        "step_within_5pct": abs(res["step_ms"]["error"]) <= 0.05,
        "class_time_within_10pct": all(
            abs(t1.get(c, 0) - t0.get(c, 0)) <= 0.10 * max(t0.get(c, 0), 1) for c in classes
            if t0.get(c, 0) > 0.01 * sum(t0.values())),
        "same_kernel_counts": all(round(k0.get(c, 0)) == round(k1.get(c, 0)) for c in classes),
    }
    try:
        mc, mr = json.load(open(out + "/mega-compose.json")), json.load(open(out + "/mega-run.json"))
        res["megatron_rank0"] = {"recorded_a100_ms": mr["recorded_step_ns"] / 1e6,
                                 "here_ms": mr["median_ns"] / 1e6, "coverage": mc["coverage"],
                                 "collectives": mr["collectives"], "failed_ops": mr["failed"]}
    except OSError:
        pass
    json.dump(res, open(out + "/compose-results.json", "w"), indent=1)
    print(json.dumps(res, indent=1))
    failed = [k for k, ok in res["checks"].items() if not ok]
    print("compose-check: %s" % ("all checks pass" if not failed else "FAILED: " + ", ".join(failed)),
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
