#!/usr/bin/env python3
"""Checks a benchmark directory orrery compose wrote against its report:
    check-compose.py REPORT.json DIR [--min-coverage F] [--min-recreated F] [--fills-none]

- every rank's GPU time is split exactly into re-created by operators, by collectives,
  stood in for, and left out;
- bench.py --check reads every rank-R.json back (with no PyTorch) and finds what the
  report says: items of each kind, tensors, storages and the GPU times (round trip);
- the coverage the report prints is the share of the step's GPU time re-created by
  operators, and its shares add up: operators, collectives, stand-ins and left out make
  the whole, the collectives' wait for their peers is part of theirs (--min-coverage:
  the operators' share at least F; --min-recreated: operators and collectives together).
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
    gpu = done = ops = wait = 0
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
        if not 0 <= r["comm_wait_ns"] <= r["comm_ns"]:
            sys.exit("rank %d: collectives waited %d ns of their %d"
                     % (r["rank"], r["comm_wait_ns"], r["comm_ns"]))
        gpu += r["gpu_ns"]
        done += r["op_ns"] + r["comm_ns"]
        ops += r["op_ns"]
        wait += r["comm_wait_ns"]
        if "--fills-none" in rest and r["fills"]:
            sys.exit("rank %d: %d stand-ins" % (r["rank"], r["fills"]))
    if len(ranks) != len(report["ranks"]):
        sys.exit("%d plans read back for %d ranks" % (len(ranks), len(report["ranks"])))
    if gpu:
        cov = ops / gpu
        if abs(report["coverage"] - cov) > 1e-5:
            sys.exit("coverage %r, expected the operators' share %r" % (report["coverage"], cov))
        sh = report["shares"]
        if abs(sum(sh[k] for k in ("operators", "collectives", "stand_ins", "left_out"))
               - 1) > 1e-5 or abs(sh["collective_wait"] - wait / gpu) > 1e-5 \
                or sh["operators"] != report["coverage"]:
            sys.exit("shares %r do not add up" % sh)
        for flag, got in (("--min-coverage", cov), ("--min-recreated", done / gpu)):
            if flag in rest:
                want = float(rest[rest.index(flag) + 1])
                if got < want:
                    sys.exit("%s: %.4f below %.4f" % (flag, got, want))
    elif "coverage" in report or "shares" in report:
        sys.exit("a coverage without GPU time")


if __name__ == "__main__":
    main(sys.argv[1:])
