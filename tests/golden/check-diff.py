#!/usr/bin/env python3
"""Checks `orrery diff --format=json` output (check-diff.py DIFF.json [MODE [GLOB F]]):

- always: every GPU task is in one kernel class, so both sides' class times add up to
  their kernel times; each row's delta is b - a;
- MODE same: A against itself: every delta is 0;
- MODE scaled GLOB F: B is A's replay with --scale GLOB=F: each kernel matching GLOB
  changes by exactly (F - 1) x its measured time, and no other kernel changes, but
  communication kernels (whose replayed time includes the wait for their peers).
"""
import fnmatch
import json
import sys


def close(x, y):
    return abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y)) + 1.0


def main(argv):
    d = json.load(open(argv[0]))
    mode = argv[1] if len(argv) > 1 else ""
    for side in ("a_ns", "b_ns"):
        k = sum(r[side] for r in d["kernels"])
        c = sum(r[side] for r in d["classes"])
        if not close(k, c):
            sys.exit("%s: kernels %r, classes %r" % (side, k, c))
    for key in ("classes", "kernels", "ops"):
        for r in d[key]:
            if not close(r["delta_ns"], r["b_ns"] - r["a_ns"]):
                sys.exit("%s %s: delta %r" % (key, r["name"], r["delta_ns"]))
    if mode == "same":
        for key in ("classes", "kernels", "ops", "ranks"):
            for r in d[key]:
                if r["delta_ns"] != 0:
                    sys.exit("%s %s changed against itself" % (key, r.get("name")))
        if d["step"]["delta_ns"] != 0:
            sys.exit("the step changed against itself")
    if mode == "scaled":
        glob, f = argv[2], float(argv[3])
        hit = 0
        for r in d["kernels"]:
            if fnmatch.fnmatchcase(r["name"], glob):
                hit += 1
                if not close(r["delta_ns"], (f - 1) * r["a_ns"]):
                    sys.exit("%s: delta %r, expected %r" % (r["name"], r["delta_ns"], (f - 1) * r["a_ns"]))
            elif r["delta_ns"] != 0 and not r["name"].startswith("nccl"):
                sys.exit("%s changed (%r) though not scaled" % (r["name"], r["delta_ns"]))
        if not hit:
            sys.exit("no kernel matches %s" % glob)


if __name__ == "__main__":
    main(sys.argv[1:])
