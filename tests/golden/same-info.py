#!/usr/bin/env python3
# Compares two `orrery info --format=json` outputs of the same trace in two formats:
# every key of the first (the reference) must have the same value in the second, which
# may hold more (a native file says more about its process).  --ignore KEY,... leaves
# keys out at any depth (the trace's path and "source" always are).  Exit 0 when they
# agree, 1 with the first differences on stderr.  Standard library only.
import argparse
import json
import sys


def diff(a, b, path, ignore, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k, v in a.items():
            if k in ignore:
                continue
            if k not in b:
                out.append(f"{path}/{k}: missing")
            else:
                diff(v, b[k], f"{path}/{k}", ignore, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} elements vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", ignore, out)
    elif a != b:
        out.append(f"{path}: {a!r} vs {b!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("reference")
    p.add_argument("other")
    p.add_argument("--ignore", default="")
    args = p.parse_args()
    ignore = {"trace", "source"} | {k for k in args.ignore.split(",") if k}
    with open(args.reference) as f:
        a = json.load(f)
    with open(args.other) as f:
        b = json.load(f)
    out = []
    diff(a, b, "", ignore, out)
    for line in out[:20]:
        print(f"{args.other}: {line}", file=sys.stderr)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
