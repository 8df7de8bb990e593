#!/usr/bin/env python3
"""Checks a benchmark directory orrery compose wrote against its report:
    check-compose.py REPORT.json DIR [--min-coverage F] [--fills-none]

- every rank's GPU time is split exactly into re-created by operators, by collectives,
  stood in for, and left out;
- bench.py --check reads every rank-R.json back (with no PyTorch) and finds what the
  report says: items of each kind, tensors, storages and the GPU times (round trip);
- the coverage the report prints is the share of the step's GPU time re-created.
"""
import json
import subprocess
import sys


def main(argv):
    report = json.load(open(argv[0]))
    d = argv[1]
    rest = argv[2:]
    back = subprocess.run([sys.executable, d + "/bench.py", "--check"], capture_output=True,
                          text=True)
    if back.returncode:
        sys.exit("bench.py --check failed: " + back.stderr)
    ranks = {r["rank"]: r for r in json.loads(back.stdout)["ranks"]}
    gpu = done = 0
    for r in report["ranks"]:
        parts = r["op_ns"] + r["comm_ns"] + r["fill_ns"] + r["dropped_ns"]
        if parts != r["gpu_ns"]:
            sys.exit("rank %d: GPU time %d is not the sum of its parts %d"
                     % (r["rank"], r["gpu_ns"], parts))
        b = ranks.get(r["rank"])
        if b is None:
            sys.exit("rank %d: no rank-%d.json read back" % (r["rank"], r["rank"]))
        for k, v in b.items():
            if r[k] != v:
                sys.exit("rank %d: %s is %r in the report, %r read back" % (r["rank"], k, r[k], v))
        gpu += r["gpu_ns"]
        done += r["op_ns"] + r["comm_ns"]
        if "--fills-none" in rest and r["fills"]:
            sys.exit("rank %d: %d stand-ins" % (r["rank"], r["fills"]))
    if len(ranks) != len(report["ranks"]):
        sys.exit("%d plans read back for %d ranks" % (len(ranks), len(report["ranks"])))
    if gpu:
        cov = done / gpu
        if abs(report["coverage"] - cov) > 1e-5:
            sys.exit("coverage %r, expected %r" % (report["coverage"], cov))
        if "--min-coverage" in rest:
            want = float(rest[rest.index("--min-coverage") + 1])
            if cov < want:
                sys.exit("coverage %.4f below %.4f" % (cov, want))
    elif "coverage" in report:
        sys.exit("a coverage without GPU time")


if __name__ == "__main__":
    main(sys.argv[1:])
