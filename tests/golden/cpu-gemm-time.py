#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whether a composed plan's distinct GEMM calls run on this CPU within a budget.

    cpu-gemm-time.py PLAN.json SECONDS

Exits 0 when they do; else prints why on stdout and exits 1.  bench.py --device cpu
--distinct runs each distinct call once, at its recorded shape and dtype.  PyTorch's CPU
GEMMs in bfloat16 or float16 are fast only where the instruction set has them
(AVX-512 BF16, AMX): elsewhere a bf16 GEMM runs at a few GFLOP/s, and the H200 GPT
step's (its logits alone are 0.8 TFLOP) would take half an hour.  The rate is measured
here, on a small GEMM of each dtype, and the plan's time is its GEMMs' FLOPs over it.
"""
import json
import sys
import time

import torch

GEMMS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
         "aten::linear")
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.half, "float32": torch.float}


def tensors_of(args, tensors):
    return [tensors[a["t"]] for a in args if isinstance(a, dict) and "t" in a]


def flops(name, ts):
    """2 m n k (times the batch) of a GEMM call from its tensors' shapes."""
    if name in ("aten::addmm", "aten::baddbmm"):
        ts = ts[1:]
    if len(ts) < 2 or not ts[0][2] or not ts[1][2]:
        return 0
    a, b = ts[0][2], ts[1][2]
    rows = 1
    for d in a[:-1]:
        rows *= d
    n = b[0] if name == "aten::linear" else b[-1]
    return 2 * rows * a[-1] * n


def rate(dtype):
    """FLOP/s of this CPU's GEMM in dtype (0: none)."""
    a = torch.ones(256, 256, dtype=dtype)
    try:
        torch.mm(a, a)
        t = time.perf_counter()
        torch.mm(a, a)
        return 2 * 256**3 / max(time.perf_counter() - t, 1e-9)
    except RuntimeError:
        return 0  # no kernel: bench.py reports the call as failed at once


def main():
    plan = json.load(open(sys.argv[1]))
    budget = float(sys.argv[2])
    tensors = plan["tensors"]
    work, seen = {}, set()
    for item in plan["items"]:
        if item[0] != "op" or item[1] not in GEMMS:
            continue
        ts = tensors_of(item[5], tensors)
        key = (item[1], tuple((tuple(t[2] or ()), tuple(t[3] or ()), t[4]) for t in ts))
        if not ts or key in seen or ts[-1][4] not in DTYPES:
            continue
        seen.add(key)
        work[ts[-1][4]] = work.get(ts[-1][4], 0) + flops(item[1], ts)
    total, parts = 0.0, []
    for name, f in sorted(work.items()):
        r = rate(DTYPES[name])
        if r and f:
            total += f / r
            parts.append("%.0f GFLOP of %s GEMMs at %.1f GFLOP/s" % (f / 1e9, name, r / 1e9))
    if total <= budget:
        return 0
    print("its distinct GEMM calls would take about %.0f s on this CPU (%s), past %.0f s"
          % (total, ", ".join(parts), budget))
    return 1


if __name__ == "__main__":
    sys.exit(main())
