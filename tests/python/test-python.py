#!/usr/bin/env python3
"""The orrery Python package (python/) against the CLI: the same library under both, so
the tables must hold the numbers `orrery summary`, `orrery replay` (with and without
--scale) and `orrery fit` print as JSON for the sample trace.

    test-python.py SOURCE_ROOT      (ORRERY: the CLI; ORRERY_LIB: liborrery.so.0)
"""
import json
import os
import subprocess
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "python"))
import orrery  # noqa: E402

sample = os.path.join(root, "traces", "samples", "tiny-2rank")
failures = []


def cli(*args):
    out = subprocess.run([os.environ["ORRERY"], *args, "--format=json", sample], check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def rows(t):
    return t.to_dict("records") if hasattr(t, "to_dict") else t


def check(what, got, want):
    if got != want:
        failures.append("%s: %r from the package, %r from the CLI" % (what, got, want))


t = orrery.load(sample)

steps = rows(t.summary())
want = cli("summary")["steps"]
check("summary rank-steps", len(steps), len(want))
for g, w in zip(steps, want):
    for k in ("rank", "step", "step_ns", "busy_ns", "exposed_compute_ns", "copy_ns", "idle_ns"):
        check("summary %s of rank %s step %s" % (k, w["rank"], w["step"]), g[k], w[k])
    check("summary host wait", g["host_wait_ns"], w["idle"]["host_wait_ns"])

kernels = rows(t.summary("kernels"))
want = cli("summary")["kernels"]
check("summary kernels' first", (kernels[0]["name"], kernels[0]["ns"]),
      (want[0]["name"], want[0].get("ns", want[0].get("gpu_ns"))))

delays = rows(t.summary("delays"))
check("launch delays", [(d["class"], d["tasks"], d["median_ns"], d["p90_ns"], d["max_ns"])
                        for d in delays],
      [(d["class"], d["tasks"], d["median_ns"], d["p90_ns"], d["max_ns"])
       for d in cli("summary")["launch_delay"]])

rep = rows(t.replay())
want = [(r["rank"], s) for r in cli("replay")["ranks"] for s in r["steps"]]
check("replay rank-steps", len(rep), len(want))
for g, (rank, w) in zip(rep, want):
    check("replay rank", g["rank"], rank)
    for k in ("step", "measured_ns", "predicted_ns"):
        check("replay %s of rank %d step %d" % (k, rank, w["step"]), g[k], w[k])
    check("replay trust", "low" if g["trust_low"] else "high", w["trust"])

scen = rows(t.replay(scale="nccl*=0.5"))
want = [s for r in cli("replay", "--scale", "nccl*=0.5")["scenarios"][0]["ranks"]
        for s in r["steps"]]
check("what-if rank-steps", len(scen), len(want))
for g, w in zip(scen, want):
    for k in ("step", "baseline_ns", "scenario_ns"):
        check("what-if %s of step %d" % (k, w["step"]), g[k], w[k])
    # the CLI prints the change with 6 significant digits
    if not abs(g["change"] - w["change"]) <= 5e-6 * abs(w["change"]):
        check("what-if change of step %d" % w["step"], g["change"], w["change"])
if scen and not all(g["scenario_ns"] < g["baseline_ns"] for g in scen):
    failures.append("nccl*=0.5 made no step shorter")

path = rows(t.critical_path())
if not path or any(p["dur_ns"] < 0 for p in path):
    failures.append("critical path: no segment, or one that ends before it starts")

fit = {r["name"]: r for r in rows(t.fit())}
want = cli("fit")["structure"]
check("fit's values", sorted(k for k in fit if k in want), sorted(k for k in want if k in fit))
for name, w in want.items():
    if name in fit and isinstance(w, dict) and "how" in w:
        check("fit %s" % name, (fit[name]["value"] or None, fit[name]["how"], fit[name]["why"]),
              (w["value"], w["how"], w["why"]))
if "world" not in fit:
    failures.append("fit gives no world size")

same = rows(t.diff(t))
if not same or any(r["delta_ns"] != 0 for r in same):
    failures.append("a trace against itself differs")

try:
    t.replay(scale="no factor")
    failures.append("a malformed rule was accepted")
except ValueError:
    pass
try:
    orrery.load(os.path.join(root, "no-such-trace"))
    failures.append("a missing trace was loaded")
except orrery.OrreryError as e:
    if "no-such-trace" not in str(e):
        failures.append("the error does not name the trace: %s" % e)

# A path is the file system's bytes: a NUL in it is refused (C would read the path before
# it, another file), bytes and os.PathLike are taken.
try:
    orrery.load(sample + "\0other")
    failures.append("a path with a NUL byte was loaded")
except ValueError:
    pass
if orrery.load(os.fsencode(sample)).path != sample:
    failures.append("a bytes path is not the trace's path")

# ORRERY_LIB naming a library that is not liborrery: OrreryError saying so, no traceback of
# ctypes' AttributeError.
env = dict(os.environ, ORRERY_LIB="libc.so.6")
p = subprocess.run([sys.executable, "-c", "import orrery"], env=env,
                   cwd=os.path.join(root, "python"), stderr=subprocess.PIPE,
                   universal_newlines=True)
if p.returncode == 0 or "OrreryError" not in p.stderr or "not liborrery" not in p.stderr:
    failures.append("ORRERY_LIB=libc.so.6: %s" % p.stderr.strip().splitlines()[-1:])

for f in failures:
    print("FAIL: " + f, file=sys.stderr)
sys.exit(1 if failures else 0)
