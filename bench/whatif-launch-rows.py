#!/usr/bin/python3
"""The launch time each measured vTrain row asks for (issue 35, item 1: where the error
comes from).

    bench/whatif-launch-rows.py [--orrery PATH] [--shared DIR] [--jobs N] [--markdown]

The fit rows (even data rows) of vtrain-a100-single-node.csv, put in orrery estimate's
terms by bench/whatif-rows.sh (the mapping and A100 costs of bench/whatif-accuracy.sh),
are each estimated with --launch-us 0 (the GPU's work alone) and then bisected on
--launch-us from 0 to 200 µs until the estimate equals the measured time: H*, the one
launch time per kernel that would make that row exact (0 where the GPU's work alone is
already slower, 200 where even that is too fast).

If the host cost per kernel were all that one launch time gets wrong, H* would be the
same in every row the host bounds, and the rows bounded by the GPU would ask for
anything below it.  Prints H* by (TP, micro-batch), whose rows share their kernels'
sizes, and over the rows the host bounds clearly (measured at least twice the GPU's work
alone); --markdown prints Markdown tables (for docs/accuracy.md).

  --orrery PATH    the binary (default build/cli/orrery of this repository); a copy is
                   taken, so that a rebuild during the run changes no estimate
  --shared DIR     the shared data (default ../shared of this repository)
  --jobs N         rows bisected at once (default: every core)
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from orrery_bench import copy_binary

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "vtrain-a100-single-node.csv"
FIELDS = ("source id gpus tp pp dp cp vpp micro_batch global_batch layers hidden heads "
          "seq recompute precision gpu metric unit measured kv_heads ffn vocab attention "
          "flags costs skipped").split()
HI_US = 200.0
STEPS = 10  # bisections: 200 / 2^10 = 0.2 us
HOST_BOUND = 2.0


def parse_args():
    p = argparse.ArgumentParser(usage=argparse.SUPPRESS, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--orrery", metavar="PATH", default=os.path.join(REPO, "build/cli/orrery"))
    p.add_argument("--shared", metavar="DIR", default=os.path.join(REPO, "../shared"))
    p.add_argument("--jobs", metavar="N", type=int, default=os.cpu_count() or 1)
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args()
    if a.jobs < 1:
        p.error("--jobs must be at least 1")
    return a


def fit_rows(orrery, shared, work):
    """The expressible fit rows of SOURCE (dicts of FIELDS with 'args')."""
    subprocess.run([os.path.join(REPO, "bench/whatif-rows.sh"), orrery,
                    os.path.join(shared, "whatif"),
                    os.path.join(shared, "traces/kineto/astrasim-megatron-tp8"), "0", work],
                   check=True, stdout=subprocess.DEVNULL)
    rows, data = [], 0
    with open(os.path.join(work, "rows.tsv")) as f:
        for n, line in enumerate(f, 1):
            row = dict(zip(FIELDS, line.rstrip("\n").split("\t")))
            if row["source"] != SOURCE:
                continue
            data += 1
            if data % 2 and row["skipped"] == "-":  # data row 2k: the fit set
                with open(os.path.join(work, "args", str(n))) as a:
                    row["args"] = a.read().split("\n")[:-1]
                rows.append(row)
    return rows


def estimate_ms(orrery, row, us):
    p = subprocess.run([orrery, "estimate", *row["args"], "--launch-us", "%.3f" % us,
                        "--format=json"], capture_output=True, text=True)
    if p.returncode:
        sys.exit("bench/whatif-launch-rows.py: %s: %s" % (row["id"], p.stderr.strip()))
    return json.loads(p.stdout)["iteration_ns"] / 1e6


def bisect(orrery, row):
    """(H*, the GPU's work alone in ms) of row."""
    measured = float(row["measured"])
    gpu = estimate_ms(orrery, row, 0)
    if gpu >= measured:
        return 0.0, gpu
    lo, hi = 0.0, HI_US
    if estimate_ms(orrery, row, hi) < measured:
        return hi, gpu
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        if estimate_ms(orrery, row, mid) < measured:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2, gpu


def table(title, head, lines, markdown):
    print()
    print(title)
    print()
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in lines:
            print("| " + " | ".join(cells) + " |")
    else:
        for cells in [head] + lines:
            print("  ".join("%-12s" % c for c in cells))


def spread(values):
    v = sorted(values)
    return ["%d" % len(v), "%.1f" % v[0], "%.1f" % statistics.median(v), "%.1f" % v[-1]]


def main():
    a = parse_args()
    work = tempfile.mkdtemp(prefix="orrery-launch-rows-")
    try:
        orrery = copy_binary(a.orrery, work)
        rows = fit_rows(orrery, a.shared, work)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            found = list(ex.map(lambda r: bisect(orrery, r), rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cells = collections.defaultdict(list)
    bound, gpu_first = [], 0
    for r, (h, gpu) in zip(rows, found):
        cells[(int(r["tp"]), int(r["micro_batch"]))].append(h)
        gpu_first += h == 0
        if float(r["measured"]) >= HOST_BOUND * gpu:
            bound.append(h)
    print("%d fit rows of %s; %d already slower with the GPU's work alone (H* 0)"
          % (len(rows), SOURCE, gpu_first))
    head = ["tp", "micro-batch", "rows", "H* min", "median", "max"]
    table("H* (us per kernel) by TP and micro-batch:", head,
          [["%d" % k[0], "%d" % k[1]] + spread(v) for k, v in sorted(cells.items())],
          a.markdown)
    if bound:
        table("rows measured at least %g x the GPU's work alone (host-bound):" % HOST_BOUND,
              ["rows", "H* min", "median", "max"], [spread(bound)], a.markdown)


if __name__ == "__main__":
    main()
