# SPDX-License-Identifier: MIT
"""The cost of op names per op, from `run.sh ops` (bench/gpu/README.md).

  ops-check.py --orrery ORRERY OUT

OUT holds, per round R, the step times of gpt.py plain (plain-R.jsonl), under
`orrery record` with orrery_record's three ways to ops (orrery-none-R.jsonl,
orrery-nvtx-R.jsonl, orrery-profiler-R.jsonl, their run directories run-MODE-R/) and
under torch.profiler with CPU, CUDA and shapes (torch-R.jsonl, torch-trace-R.json).
From round 1's recordings it counts the ops per recorded step, those with input shapes,
and the kernel launches that lie inside an op on their thread (as orrery reads the run:
for "profiler", the ops-PID.json merged into the tracer's file); from every round's
times the median step per mode.  The cost per op of a way is its median step less the
steps-only one (orrery none), over its ops per step; torch.profiler's is its median less
plain's over its own ops per step.  Writes OUT/ops-results.json; exits 1 when a check
fails.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

MODES = ("none", "nvtx", "profiler")


def median_ms(paths):
    ms = [r["ms"] for p in paths for r in map(json.loads, open(p)) if r["measured"]]
    return statistics.median(ms) if ms else None


def chrome_of(orrery, src, dst):
    subprocess.run([orrery, "convert", "--to", "chrome", "-o", dst, src], check=True,
                   stdout=subprocess.DEVNULL)
    with open(dst) as f:
        return json.load(f)


def is_launch(e):
    return e.get("cat") in ("cuda_runtime", "cuda_driver") and "Launch" in e.get("name", "")


def ops_of(doc, steps):
    """Ops per step, the share with input shapes, the share of launches inside an op."""
    ev = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    by_tid = {}
    for e in ops:
        t0 = float(e["ts"])
        by_tid.setdefault((e.get("pid"), e.get("tid")), []).append((t0, t0 + float(e["dur"])))
    for v in by_tid.values():
        v.sort()
    launches = [e for e in ev if is_launch(e)]
    inside = 0
    for e in launches:
        t = float(e["ts"])
        spans = by_tid.get((e.get("pid"), e.get("tid")), [])
        inside += any(lo <= t < hi for lo, hi in spans)
    shaped = sum(1 for e in ops if any(e.get("args", {}).get("Input Dims") or []))
    return {
        "ops": len(ops),
        "ops_per_step": len(ops) / steps if steps else None,
        "ops_with_shapes": shaped / len(ops) if ops else None,
        "launches": len(launches),
        "launches_inside_an_op": inside / len(launches) if launches else None,
        "op_names": len({e["name"] for e in ops}),
    }


def recorded_steps(orrery, run):
    info = json.loads(subprocess.run([orrery, "info", "--format=json", run], check=True,
                                     capture_output=True, text=True).stdout)
    return [s["step"] for s in info["ranks"][0]["steps"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orrery", required=True)
    ap.add_argument("out")
    a = ap.parse_args()
    out = a.out
    files = sorted(os.listdir(out))
    rounds = sorted({f.rsplit("-", 1)[1].split(".")[0] for f in files
                     if f.startswith("plain-") and f.endswith(".jsonl")})
    med = {"plain": median_ms(["%s/plain-%s.jsonl" % (out, r) for r in rounds]),
           "torch_profiler": median_ms(["%s/torch-%s.jsonl" % (out, r) for r in rounds])}
    for m in MODES:
        med["orrery_" + m] = median_ms(["%s/orrery-%s-%s.jsonl" % (out, m, r) for r in rounds])
    res = {"rounds": len(rounds), "median_step_ms": med,
           "overhead_vs_plain": {k: v / med["plain"] - 1 for k, v in med.items()
                                 if k != "plain"}}
    ops = {}
    steps = None
    for m in MODES:
        run = "%s/run-%s-1" % (out, m)
        st = recorded_steps(a.orrery, run)
        steps = steps or len(st)
        ops[m] = ops_of(chrome_of(a.orrery, run, "%s/run-%s-1.json" % (out, m)), len(st))
        ops[m]["recorded_steps"] = st
        os.remove("%s/run-%s-1.json" % (out, m))
    with open("%s/torch-trace-1.json" % out) as f:
        ops["torch_profiler"] = ops_of(json.load(f), steps)
    res["ops"] = ops
    per_op = {}
    for m in ("nvtx", "profiler"):
        n = ops[m]["ops_per_step"]
        per_op[m] = (med["orrery_" + m] - med["orrery_none"]) * 1e3 / n if n else None
    n = ops["torch_profiler"]["ops_per_step"]
    per_op["torch_profiler"] = (med["torch_profiler"] - med["plain"]) * 1e3 / n if n else None
    res["cost_per_op_us"] = per_op
    ov = res["overhead_vs_plain"]
    res["checks"] = {
        "steps_only_overhead_le_1pct": ov["orrery_none"] <= 0.01,
        "nvtx_ops_recorded": bool(ops["nvtx"]["ops"]) and bool(ops["nvtx"]["launches_inside_an_op"]),
        "profiler_ops_recorded": bool(ops["profiler"]["ops"])
        and bool(ops["profiler"]["launches_inside_an_op"]),
        "profiler_ops_with_shapes": bool(ops["profiler"]["ops_with_shapes"]),
        "nvtx_le_torch_profiler": ov["orrery_nvtx"] <= ov["torch_profiler"],
        "profiler_le_torch_profiler": ov["orrery_profiler"] <= ov["torch_profiler"],
    }
    try:
        res["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                     "--format=csv,noheader"], capture_output=True,
                                    text=True).stdout.strip() or None
    except OSError:
        res["gpu"] = None
    with open("%s/ops-results.json" % out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))
    failed = [k for k, ok in res["checks"].items() if not ok]
    print("ops-check.py: %s" % ("all checks pass" if not failed else
                                 "FAILED: " + ", ".join(failed)), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
