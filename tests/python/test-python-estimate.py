#!/usr/bin/env python3
"""orrery.estimate(), Trace.estimate(), orrery.whatif() and Trace.whatif() against the CLI:
the same library under both, so the package must give the numbers `orrery estimate
--format=json` and `orrery whatif --format=csv` (every value) and `--format=json` (the
ranked configurations) print, from a model description and from the shared Megatron TP=8
trace (skipped, exit 77, without ../shared).

    test-python-estimate.py SOURCE_ROOT  (ORRERY: the CLI; ORRERY_LIB: liborrery.so.0;
                                          ORR_SHARED_TRACES: the shared traces)
"""
import csv
import io
import json
import os
import subprocess
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "python"))
import orrery  # noqa: E402

failures = []
MODEL = {"gpu": "h100-sxm", "layers": 24, "hidden": 2048, "heads": 16, "seq": 2048}


def flags(options):
    """Keyword options as the CLI's: tp=2 -> --tp 2, swiglu=True -> --swiglu."""
    out = []
    for k, v in options.items():
        name = "--" + k.replace("_", "-")
        if v is True:
            out.append(name)
        elif isinstance(v, (list, tuple)):
            out += [name, ",".join(str(x) for x in v)]
        else:
            out += [name, str(v)]
    return out


def cli(*args):
    return subprocess.run([os.environ["ORRERY"], *args], check=True,
                          stdout=subprocess.PIPE).stdout.decode()


def plain(v):
    """A DataFrame's cell as the lists of dicts hold it: a numpy scalar as Python's, a
    missing value (NaN in a column of numbers) as None."""
    v = v.item() if hasattr(v, "item") else v
    return None if isinstance(v, float) and v != v else v


def rows(t):
    if hasattr(t, "to_dict"):
        return [{k: plain(v) for k, v in r.items()} for r in t.to_dict("records")]
    return t


def check(what, got, want):
    if got != want:
        failures.append("%s: %r from the package, %r from the CLI" % (what, got, want))


def g6(v):
    """A double as the JSON writes it (%.6g)."""
    return None if v is None else float("%.6g" % v)


def same_estimate(what, got, want):
    for k in ("method", "trace", "gpu", "rank", "steps", "iteration_ns", "measured_ns",
              "replayed_ns", "traced_ns", "profiler_host_ns", "memory_bytes_per_gpu", "fits",
              "fits_why", "memory_reserve_bytes", "memory_measured_peak_bytes"):
        check("%s: %s" % (what, k), got[k], want[k])
    for k in ("change", "tokens_per_s_per_gpu", "mfu", "hfu"):
        check("%s: %s" % (what, k), g6(got[k]), want[k])
    for k, v in want["breakdown"].items():
        check("%s: breakdown %s" % (what, k), got[k], v)
    for k, v in want["config"].items():
        if k in got:
            check("%s: config %s" % (what, k), got[k], v)


def csv_value(v):
    if v == "":
        return None
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def same_sweep(what, got, csv_text, js):
    want = list(csv.DictReader(io.StringIO(csv_text)))
    check("%s: configurations" % what, len(got), len(want))
    for g, w in zip(got, want):
        for k, v in w.items():
            gv = g[k]
            if isinstance(gv, bool):
                gv = int(gv)
            if gv != csv_value(v):
                failures.append("%s: configuration %s, %s: %r from the package, %r in the CSV"
                                % (what, w["index"], k, gv, v))
                break
    by_index = {g["index"]: g for g in got}
    for r in js["ranked"]:
        g = by_index.get(r["index"], {})
        check("%s: ranked %d iteration_ns" % (what, r["index"]), g.get("iteration_ns"),
              r["iteration_ns"])
        check("%s: ranked %d mfu" % (what, r["index"]), g6(g.get("mfu")), r["mfu"])
    rec = (js.get("recorded") or {}).get("index")
    check("%s: recorded" % what, [g["index"] for g in got if g["recorded"]],
          [] if rec is None else [rec])


# From a description (no trace).
for options in ({"tp": 2, "dp": 4}, {"pp": 2, "micro_batch": 2, "global_batch": 16,
                                     "recompute": "full", "launch_us": 5},
                {"tp": 2, "pp": 2, "global_batch": 16, "p2p_scatter_gather": True,
                 "sync_timers": True},
                {"tp": 2, "micro_batch": 2, "global_batch": 16, "recompute": "full",
                 "sync_layers": True, "launch_us": 20}):
    o = dict(MODEL, **options)
    got = rows(orrery.estimate(**o))[0]
    same_estimate("estimate %s" % options, got,
                  json.loads(cli("estimate", "--format=json", *flags(o))))

check("a description's caveats", rows(orrery.estimate(**MODEL))[0]["caveats"], ["peaks"])

sweep = dict(MODEL, global_batch=64, tp=[1, 2, 4], recompute=["none", "full"])
got = rows(orrery.whatif(8, **sweep))
same_sweep("whatif described", got, cli("whatif", "--gpus", "8", "--format=csv", *flags(sweep)),
           json.loads(cli("whatif", "--gpus", "8", "--format=json", *flags(sweep))))
if not any(g["feasible"] for g in got):
    failures.append("whatif described: no feasible configuration")


# An exception while a row is made stops the sweep and reaches the caller, rather than
# being printed by ctypes with the row left out.
class RowFailed(Exception):
    pass


def failing_row(*args):
    raise RowFailed("row")


made_row, orrery._whatif_row = orrery._whatif_row, failing_row
try:
    orrery.whatif(8, **sweep)
    failures.append("whatif: an exception in a row was not raised")
except RowFailed:
    pass
finally:
    orrery._whatif_row = made_row

try:
    orrery.estimate(gpu="h100-sxm", hidden=2048, heads=16, seq=2048)
    failures.append("a description without its layers was estimated")
except ValueError as e:
    if "--layers" not in str(e):
        failures.append("the error does not name --layers: %s" % e)
for rate in (0.5, 1e-30, float("nan")):
    try:
        orrery.estimate(**dict(MODEL, nic_gbps=rate))
        failures.append("nic_gbps=%r was estimated" % rate)
    except ValueError as e:
        if "nic_gbps" not in str(e):
            failures.append("the error does not name nic_gbps: %s" % e)
        # the library's range (orr_estimate_options_check()), not a copy of it here
        if "out of range" not in str(e):
            failures.append("the error is not the library's: %s" % e)
try:
    orrery.estimate(**dict(MODEL, gpu="no-such-gpu"))
    failures.append("an unknown GPU was estimated")
except orrery.OrreryError as e:
    if "no-such-gpu" not in str(e):
        failures.append("the error does not name the GPU: %s" % e)
try:
    orrery.estimate(**dict(MODEL, no_such_option=1))
    failures.append("an unknown option was accepted")
except TypeError:
    pass

# From the shared Megatron trace.
shared = os.environ.get("ORR_SHARED_TRACES", os.path.join(root, "..", "shared", "traces"))
megatron = os.path.join(shared, "kineto", "astrasim-megatron-tp8")
if os.path.isdir(megatron):
    t = orrery.load(megatron)
    for options in ({}, {"tp": 4}, {"micro_batch": 8}, {"layers": 48}, {"forward_only": True},
                    {"pp": 2, "launch_us": 5}):
        got = rows(t.estimate(**options))[0]
        same_estimate("Trace.estimate %s" % options, got,
                      json.loads(cli("estimate", "--format=json", *flags(options), megatron)))
    check("the trace's caveats", rows(t.estimate())[0]["caveats"], ["no-allocator"])
    check("another hidden's caveats", rows(t.estimate(hidden=8192))[0]["caveats"],
          ["no-allocator", "ffn-kept"])
    methods = {rows(t.estimate(**o))[0]["method"] for o in ({"tp": 4}, {"pp": 2})}
    check("Trace.estimate methods", methods, {"retime", "synthesis-ratio"})
    # the trace's costs transferred to another GPU (--transfer-costs): the CLI's numbers
    costs = os.path.join(os.environ.get("TMPDIR", "/tmp"), "orrery-py-a100-%d.json" % os.getpid())
    cli("fit", "-o", costs, megatron)
    moved = dict(MODEL, global_batch=16, tp=2, costs=costs, transfer_costs=True)
    got = rows(orrery.estimate(**moved))[0]
    same_estimate("estimate transferred", got,
                  json.loads(cli("estimate", "--format=json", *flags(moved))))
    check("transferred costs' caveats", got["caveats"], ["costs-transferred"])
    os.unlink(costs)
    got = rows(t.whatif((8, 16)))
    same_sweep("Trace.whatif", got,
               cli("whatif", "--gpus", "8-16", "--format=csv", megatron),
               json.loads(cli("whatif", "--gpus", "8-16", "--format=json", megatron)))
    try:
        t.estimate(gpu="h100-sxm")
        failures.append("a trace of an A100 was estimated on an H100")
    except orrery.OrreryError as e:
        if "h100-sxm" not in str(e):
            failures.append("the error does not name the GPU: %s" % e)

for f in failures:
    print("FAIL: " + f, file=sys.stderr)
if failures:
    sys.exit(1)
if not os.path.isdir(megatron):
    print("skipped the trace's checks: %s is absent (the shared traces)" % megatron)
    sys.exit(77)
