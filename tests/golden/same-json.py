#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two JSON files hold the same values, numbers equal to a relative 1e-9.

    same-json.py EXPECTED ACTUAL

The fits behind some golden outputs come from OpenBLAS, whose kernels (picked for the
CPU at run time: AVX2, AVX-512, ...) round differently in the last digits; a golden
JSON output that differs from the expected file only there still matches.  Integers,
strings, keys and their order must be equal.  Prints the first difference.
"""
import json
import math
import sys

REL = 1e-9


def same(a, b, where):
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or a is None:
        return None if a == b and type(a) is type(b) else where
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return None if a == b else where
        return None if math.isclose(a, b, rel_tol=REL, abs_tol=1e-300) else where
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return where + " (length)"
        for i, (x, y) in enumerate(zip(a, b)):
            r = same(x, y, "%s[%d]" % (where, i))
            if r:
                return r
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return where + " (keys)"
        for k in a:
            r = same(a[k], b[k], "%s.%s" % (where, k))
            if r:
                return r
        return None
    return where + " (type)"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: same-json.py EXPECTED ACTUAL")
    with open(sys.argv[1], encoding="utf-8") as f:
        a = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        b = json.load(f)
    r = same(a, b, "$")
    if r:
        sys.exit("differs at " + r)


if __name__ == "__main__":
    main()
