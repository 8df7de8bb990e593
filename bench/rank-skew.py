#!/usr/bin/env python3
"""How much the ranks of one job differ in GPU speed, and what that would cost at scale.

    bench/rank-skew.py JOB_DIR [--min-us N]

JOB_DIR holds one Kineto JSON trace per rank (rank-R.json or .json.gz), as
../shared/traces/kineto/astrasim-megatron-tp8 does; every rank must run the same compute
kernels in the same order (a TP group does).  Communication kernels (names with "nccl")
are left out.  Prints:

  1. each rank's compute kernel time and their coefficient of variation (a GPU that is
     slower throughout: clocks, power, placement);
  2. per kernel launched on every rank (aligned by order, names equal, at least --min-us
     on average), the slowest rank's duration over the mean and the coefficient of
     variation: what a collective that waits for every member costs per kernel;
  3. with the ranks' speeds normal with that coefficient of variation, the expected
     slowest of N GPUs over the mean, E[max of N] = 1 + cv * e(N) with e(N) the expected
     maximum of N standard normals (numerically), for N from 8 to 1,024: a step that
     synchronizes N GPUs runs at the slowest one's speed.

issue 35, item 3 (docs/accuracy.md, "Stragglers"): the measured spread bounds how much of
the multi-node bias stragglers could explain.
"""
import argparse
import glob
import gzip
import json
import math
import os
import re
import statistics
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def compute_kernels(events):
    k = [e for e in events if e.get("cat") == "kernel" and "nccl" not in e.get("name", "").lower()]
    k.sort(key=lambda e: e["ts"])
    return [(e["name"], float(e["dur"])) for e in k]


def expected_max(n, steps=20000):
    """E[max of n standard normals] by integrating x * n * phi(x) * Phi(x)^(n-1)."""
    lo, hi = -8.0, 8.0
    h = (hi - lo) / steps
    total = 0.0
    for i in range(steps + 1):
        x = lo + i * h
        phi = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        cdf = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        w = 0.5 if i in (0, steps) else 1.0
        total += w * x * n * phi * cdf ** (n - 1)
    return total * h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("job", help="a directory of rank-R Kineto traces")
    ap.add_argument("--min-us", type=float, default=20.0,
                    help="kernels shorter than this on average are left out of 2 (20)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.job, "rank-*.json*")),
                   key=lambda p: int(re.search(r"rank-(\d+)", p).group(1)))
    if len(files) < 2:
        sys.exit("rank-skew: %s holds fewer than two rank-R.json[.gz] traces" % a.job)
    per = [compute_kernels(load(p)) for p in files]
    n = min(len(p) for p in per)
    if n == 0:
        sys.exit("rank-skew: no compute kernels")
    totals = [sum(d for _, d in p[:n]) for p in per]
    mean = statistics.mean(totals)
    cv_rank = statistics.pstdev(totals) / mean
    print("ranks: %d, compute kernels each: %s" % (len(per), sorted({len(p) for p in per})))
    print("1. compute time per rank, ms: %s" % " ".join("%.2f" % (t / 1e3) for t in totals))
    print("   coefficient of variation %.3f %%, slowest over mean %.3f %%"
          % (100 * cv_rank, 100 * (max(totals) / mean - 1)))
    ratios, cvs = [], []
    for i in range(n):
        if len({p[i][0] for p in per}) != 1:
            continue
        ds = [p[i][1] for p in per]
        mu = statistics.mean(ds)
        if mu < a.min_us:
            continue
        ratios.append(max(ds) / mu)
        cvs.append(statistics.pstdev(ds) / mu)
    if ratios:
        print("2. %d kernels aligned on every rank (at least %g us): slowest over mean, "
              "median %.3f %% (mean %.3f %%); coefficient of variation median %.3f %%"
              % (len(ratios), a.min_us, 100 * (statistics.median(ratios) - 1),
                 100 * (statistics.mean(ratios) - 1), 100 * statistics.median(cvs)))
    print("3. the slowest of N GPUs whose speeds vary by cv %.3f %%, over the mean:" % (100 * cv_rank))
    base = expected_max(len(per))
    for g in (8, 16, 64, 256, 1024):
        e = expected_max(g)
        print("   N %5d: e(N) %.3f, +%.3f %% (+%.3f %% over N = %d)"
              % (g, e, 100 * cv_rank * e, 100 * cv_rank * (e - base), len(per)))


if __name__ == "__main__":
    main()
