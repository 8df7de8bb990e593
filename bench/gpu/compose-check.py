#!/usr/bin/env python3
"""Compares a composed benchmark with the step it was composed from (bench/gpu/run.sh
compose): compose-check.py [--orrery PATH] OUT

OUT holds torch.jsonl and torch-trace.json (gpt.py under torch.profiler), compose.json
(orrery compose's report), bench-run.json and bench-prof/rank-R.json (the benchmark's
run and its own profile), and optionally mega-compose.json, mega-run.json and
mega-prof/rank-0.json (the shared A100 Megatron rank run here with --emulate-comms;
--mega-trace names the A100 rank's trace; its plan, mega/rank-0.json).  The Megatron
rank is a comparison, not a check: each compute class's GPU time here beside the A100's
less the kernels the benchmark only sleeps for (stand-ins: Megatron's fused softmax and
layer norm, Triton's kernels), scaled by the hardware table's ratio of the two GPUs
(scaled()); what fails there is written in its place (megatron_rank0.error) and changes
neither the checks nor the exit status.

The original is the job's profiled steps recorded without the ExecutionTraceObserver:
the step compose copied (its operators' arguments) ran under the observer, whose cost
is not the job's, so it is left out of both the step time (torch.jsonl's "observed"
step) and the kernel classes.  Kernels are classed by `orrery summary` itself (its JSON
"kernel_classes", the one classifier of orrery summary, orrery diff and this check),
per profiled step.  Checks: the benchmark's median step within 5 % of the original's,
each kernel class's GPU time within 10 % (classes above 1 % of the step), the same
kernel count per class, no operator failed, the execution trace used (compose linked
it: args_step >= 0) and no storage made in the timed steps.  Writes OUT/compose-results.json; exits 1 when a check fails,
and 2 (with one line) when something to compare is missing: no profile of the
benchmark, no profiled step, no orrery.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys


class Missing(Exception):
    pass


def summary(orrery, trace, skip_step=None):
    """Per profiled step (ProfilerStep#N, one rank): GPU ns and tasks per kernel class,
    as orrery summary classes them; skip_step (the observed one) left out."""
    if not os.path.exists(trace):
        raise Missing("%s does not exist" % trace)
    r = subprocess.run([orrery, "summary", "--format=json", "--top", "1", trace],
                       capture_output=True, text=True)
    if r.returncode:
        raise Missing("orrery summary %s: %s" % (trace, r.stderr.strip()))
    s = json.loads(r.stdout)
    steps = sorted({x["step"] for x in s["steps"] if x["step"] >= 0})
    if skip_step is not None and skip_step in steps:
        # again without the observed step: gpt.py observes the first profiled one
        rest = [x for x in steps if x != skip_step]
        if not rest or skip_step not in (steps[0], steps[-1]):
            raise Missing("%s: the observed step %d is not at an end of the profiled ones %r"
                          % (trace, skip_step, steps))
        r = subprocess.run([orrery, "summary", "--format=json", "--top", "1", "--steps",
                            "%d-%d" % (rest[0], rest[-1]), trace],
                           capture_output=True, text=True)
        if r.returncode:
            raise Missing("orrery summary --steps %s: %s" % (trace, r.stderr.strip()))
        s = json.loads(r.stdout)
        steps = sorted({x["step"] for x in s["steps"] if x["step"] >= 0})
    if not steps:
        raise Missing("%s: no profiled step (ProfilerStep#N)" % trace)
    n = len(steps)
    return ({c["class"]: c["ns"] / n for c in s["kernel_classes"]},
            {c["class"]: c["tasks"] / n for c in s["kernel_classes"]}, steps)


def profile_of(d):
    prof = sorted(glob.glob(os.path.join(d, "rank-*.json")))
    if not prof:
        raise Missing("no profile of the benchmark in %s (bench.py --profile wrote none)" % d)
    return prof[0]


def original_ms(out):
    rows = [json.loads(x) for x in open(os.path.join(out, "torch.jsonl"))]
    ms = [r["ms"] for r in rows if r["measured"] and not r.get("observed")]
    if not ms:
        raise Missing("torch.jsonl: no measured step recorded without the observer")
    return statistics.median(ms)


# How a kernel class's GPU time moves from one GPU to another by the hardware table
# (orrery info's devices[].spec): the classes bound by the tensor cores (GEMMs, fused
# attention) by the ratio of the dense peaks at the step's GEMM precision, those bound by
# memory (reductions, element-wise, copies and sets) by the ratio of memory bandwidths.
# An upper bound on the speed-up, not a prediction: kernels reach neither peak.  Not
# scaled: communication and "other", which in a run with --emulate-comms hold the
# collectives' and stand-ins' sleeps of their A100 durations (and kernels of no kind).
COMPUTE_CLASSES = ("gemm", "attention")
MEMORY_CLASSES = ("reduction", "elementwise", "copy")


def device_spec(orrery, trace):
    """The hardware table's entry of the trace's first device (orrery info), or Missing."""
    r = subprocess.run([orrery, "info", "--format=json", trace], capture_output=True, text=True)
    if r.returncode:
        raise Missing("orrery info %s: %s" % (trace, r.stderr.strip()))
    devs = [d for rk in json.loads(r.stdout)["ranks"] for d in rk["devices"]]
    if not devs or not devs[0].get("spec"):
        raise Missing("%s: no device of the hardware table (orrery info: devices[].spec)"
                      % trace)
    return devs[0]["spec"]


def scaled(t_from, spec_from, spec_to, dtype):
    """Per compute class: [GPU ms on the first GPU, that scaled to the second, the ratio]."""
    flops = spec_from["peak_flops"][dtype] / spec_to["peak_flops"][dtype]
    mem = spec_from["hbm_bytes_per_s"] / spec_to["hbm_bytes_per_s"]
    out = {}
    for c in COMPUTE_CLASSES + MEMORY_CLASSES:
        ratio = flops if c in COMPUTE_CLASSES else mem
        out[c] = [t_from.get(c, 0) / 1e6, t_from.get(c, 0) / 1e6 * ratio, ratio]
    return out


def stand_ins(orrery, plan, work):
    """Per kernel class (as orrery summary classes them), the GPU ns of the kernels plan
    (a rank's rank-R.json) only sleeps for: its fill items, written as a trace of one
    step for orrery summary to class."""
    try:
        items = json.load(open(plan))["items"]
    except OSError:
        raise Missing("%s does not exist (the plan the Megatron rank ran)" % plan)
    events, t = [], 0
    for it in items:
        if it[0] == "fill":
            events.append({"ph": "X", "cat": "kernel", "name": it[3], "pid": 0, "tid": 7,
                           "ts": t / 1e3, "dur": it[2] / 1e3,
                           "args": {"stream": 7, "device": 0}})
            t += it[2] + 1000
    if not events:
        return {}
    events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1,
                   "tid": 1, "ts": 0, "dur": t / 1e3})
    path = os.path.join(work, "mega-stand-ins.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    return summary(orrery, path)[0]


def megatron(orrery, out, trace, dtype):
    """The A100 Megatron rank run here: step, and per compute class its GPU time here
    beside the A100's, less its stand-ins, scaled by the hardware table."""
    try:
        mc = json.load(open(os.path.join(out, "mega-compose.json")))
        mr = json.load(open(os.path.join(out, "mega-run.json")))
    except OSError:
        return None
    res = {"recorded_a100_ms": mr["recorded_step_ns"] / 1e6,
           "here_ms": mr["median_ns"] / 1e6, "coverage": mc["coverage"],
           "shares": mc.get("shares"), "collectives": mr["collectives"],
           "failed_ops": mr["failed"]}
    if not trace:
        raise Missing("mega-run.json without --mega-trace (the A100 rank's trace)")
    prof = profile_of(os.path.join(out, "mega-prof"))
    t0, k0, _ = summary(orrery, trace)
    t1, k1, _ = summary(orrery, prof)
    # the kernels slept for run here as one "other" kernel each: not the class's work
    slept = stand_ins(orrery, os.path.join(out, "mega", "rank-0.json"), out)
    run0 = {c: max(0, v - slept.get(c, 0)) for c, v in t0.items()}
    res["classes_ms"] = {c: [t0.get(c, 0) / 1e6, t1.get(c, 0) / 1e6]
                         for c in sorted(set(t0) | set(t1))}
    res["stand_ins_ms"] = {c: v / 1e6 for c, v in sorted(slept.items()) if v > 0}
    res["kernels"] = {c: [k0.get(c, 0), k1.get(c, 0)] for c in sorted(set(k0) | set(k1))}
    a100, here = device_spec(orrery, trace), device_spec(orrery, prof)
    res["devices"] = [a100["id"], here["id"]]
    res["gemm_dtype"] = dtype
    res["compute_classes"] = {
        c: {"a100_ms": v[0], "stand_in_ms": slept.get(c, 0) / 1e6, "expected_ms": v[1],
            "ratio": v[2], "here_ms": t1.get(c, 0) / 1e6,
            "error": t1.get(c, 0) / 1e6 / v[1] - 1 if v[1] > 0 else None}
        for c, v in scaled(run0, a100, here, dtype).items()}
    return res


def compare(orrery, out, mega_trace=None, mega_dtype="fp16"):
    run = json.load(open(os.path.join(out, "bench-run.json")))
    comp = json.load(open(os.path.join(out, "compose.json")))
    orig = original_ms(out)
    bench_ms = run["median_ns"] / 1e6
    # the step traced under the observer (compose's args_step; -1: none) is not the job's
    observed = comp.get("args_step", -1)
    t0, k0, steps0 = summary(orrery, os.path.join(out, "torch-trace.json"),
                             observed if observed >= 0 else None)
    t1, k1, steps1 = summary(orrery, profile_of(os.path.join(out, "bench-prof")))
    classes = sorted(set(t0) | set(t1))
    total0 = sum(t0.values())
    res = {
        "coverage": comp.get("coverage"), "shares": comp.get("shares"),
        "composed_step": comp.get("step"), "observed_step": observed,
        "original_steps": steps0, "benchmark_steps": steps1,
        "step_ms": {"original": orig, "benchmark": bench_ms, "error": bench_ms / orig - 1},
        "classes": {c: {"gpu_ms": [t0.get(c, 0) / 1e6, t1.get(c, 0) / 1e6],
                        "kernels": [k0.get(c, 0), k1.get(c, 0)]} for c in classes},
        "failed_ops": run["failed"],
        "storages_made_timed": run.get("storages_made_timed"),
    }
    res["checks"] = {
        "step_within_5pct": abs(res["step_ms"]["error"]) <= 0.05,
        "class_time_within_10pct": all(
            abs(t1.get(c, 0) - t0.get(c, 0)) <= 0.10 * t0.get(c, 0) for c in classes
            if t0.get(c, 0) > 0.01 * total0),
        "same_kernel_counts": all(round(k0.get(c, 0)) == round(k1.get(c, 0)) for c in classes),
        "no_failed_ops": not run["failed"],
        # compose linked gpt.py's execution trace: without it the plan is the trace's
        # alone, and the checks would judge another benchmark
        "execution_trace_used": observed >= 0,
        "no_storage_made_timed": not run.get("storages_made_timed"),
    }
    try:
        mega = megatron(orrery, out, mega_trace, mega_dtype)
    except (Missing, OSError, KeyError, ValueError) as e:
        # a comparison, not a check: what failed is said in its place
        mega = {"error": str(e)}
    if mega is not None:
        res["megatron_rank0"] = mega
    return res


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orrery", default=os.environ.get("ORRERY") or shutil.which("orrery"),
                    help="the orrery binary (default: $ORRERY, else orrery on the PATH)")
    ap.add_argument("--mega-trace", metavar="TRACE",
                    help="the A100 Megatron rank's trace that mega-compose.json was made from")
    ap.add_argument("--mega-dtype", default="fp16",
                    help="its GEMMs' precision in the hardware table (default fp16: the "
                         "shared Megatron TP=8 trace's GEMM tensors are c10::Half)")
    ap.add_argument("out")
    args = ap.parse_args(argv)
    try:
        if not args.orrery or not os.access(args.orrery, os.X_OK):
            raise Missing("no orrery binary (--orrery PATH or $ORRERY)")
        res = compare(args.orrery, args.out, args.mega_trace, args.mega_dtype)
    except (Missing, OSError, KeyError, ValueError) as e:
        print("compose-check: error: %s" % e, file=sys.stderr)
        return 2
    with open(os.path.join(args.out, "compose-results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))
    failed = [k for k, ok in res["checks"].items() if not ok]
    print("compose-check: %s" % ("all checks pass" if not failed else "FAILED: " + ", ".join(failed)),
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
