#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The host cost per op of torch.profiler's options and of the ExecutionTraceObserver,
measured on a CPU: no GPU needed, any PyTorch (Debian 12's python3-torch 1.13 has the
observer as ExecutionGraphObserver, PyTorch 2 as ExecutionTraceObserver).

    python3 bench/observer-cost.py [--rounds R] [--steps N] [--json FILE]

A small GPT-like model (12 layers, hidden 64, 4 heads, sequence 16, batch 1: forward,
backward and an SGD step) runs on one CPU thread, where every op takes about a
microsecond, so the step is its host's time and what a recorder adds per op shows whole.
Each mode runs in its own process, the modes one after another, R rounds of them
(default 5); per mode the median over rounds of each run's median step of N steps
(default 100, after 20 unrecorded ones); about 12 minutes on 2 cores.  Modes:

  plain       nothing recorded
  cpu         torch.profiler, CPU activity only (no CUDA here: CUPTI's part is not in it;
              a PyTorch built without Kineto, as Debian's 1.13, runs the legacy profiler)
  shapes      the same with record_shapes
  stack       the same with record_shapes and with_stack
  et          the execution trace observer alone, over every measured step
  shapes-et   torch.profiler with record_shapes and the observer together (how the shared
              A100 Megatron trace and its execution trace were recorded, in one process)

The cost per op of a mode is (its step - plain's) / ops per step, the ops counted by the
profiler (every recorded op, nested ones too: what the observer records as well).  The
observer's own part beside the profiler, (shapes-et - shapes) / ops, is the value
estimator/profiler-cost.c adds to a trace linked to its execution trace (docs/estimator.md,
"The profiler's cost").  Prints a Markdown table; --json FILE writes every run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["plain", "cpu", "shapes", "stack", "et", "shapes-et"]
WARMUP = 20


def model(torch):
    nn = torch.nn
    hidden, seq, heads, layers = 64, 16, 4, 12

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
            self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            def split(t):
                return t.view(1, seq, heads, hidden // heads).transpose(1, 2)

            q, k, v = map(split, self.qkv(self.ln1(x)).split(hidden, dim=-1))
            a = torch.softmax(q @ k.transpose(-1, -2) * (hidden // heads) ** -0.5, dim=-1) @ v
            x = x + self.proj(a.transpose(1, 2).reshape(1, seq, hidden))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    m = nn.Sequential(*[Block() for _ in range(layers)])
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    x = torch.randn(1, seq, hidden)

    def step():
        opt.zero_grad(set_to_none=True)
        m(x).square().mean().backward()
        opt.step()

    return step


def observer(torch):
    p = torch.profiler
    cls = getattr(p, "ExecutionTraceObserver", None) or getattr(p, "ExecutionGraphObserver")
    return cls()


def count_nodes(path):
    """The nodes of an execution trace, counted by their "rf_id" (every schema writes one
    per node) in chunks: the file of 100 steps is hundreds of MB."""
    key, n, tail = b'"rf_id"', 0, b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 24)
            if not chunk:
                return n
            buf = tail + chunk
            n += buf.count(key)
            # a key cut at the chunk's end is whole in the next buf; the tail is too
            # short to hold a whole (counted) one
            tail = buf[-(len(key) - 1):]


def child(mode, steps):
    """One run: prints {"mode", "median_ns", "ops_per_step", "nodes_per_step"}."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(1)
    torch.manual_seed(0)
    step = model(torch)
    for _ in range(WARMUP):
        step()
    et, et_path = None, None
    if mode.endswith("et"):
        fd, et_path = tempfile.mkstemp(suffix=".et.json")
        os.close(fd)
        et = observer(torch)
        et.register_callback(et_path)
        et.start()
    times, ops = [], 0
    prof = None
    if mode != "plain" and mode != "et":
        prof = profile(activities=[ProfilerActivity.CPU], record_shapes=mode != "cpu",
                       with_stack=mode == "stack")
        prof.__enter__()
    for _ in range(steps):
        t = time.perf_counter_ns()
        step()
        times.append(time.perf_counter_ns() - t)
    if prof:
        prof.__exit__(None, None, None)
        if mode == "cpu":  # the same ops in every mode; events() is slow with stacks
            ops = len(prof.events()) / steps
    nodes = 0
    if et:
        et.stop()
        et.unregister_callback()
        nodes = count_nodes(et_path) / steps
        os.unlink(et_path)
    print(json.dumps({"mode": mode, "median_ns": statistics.median(times),
                      "ops_per_step": ops, "nodes_per_step": nodes,
                      "torch": torch.__version__}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="runs of every mode (default 5)")
    ap.add_argument("--steps", type=int, default=100, help="measured steps a run (default 100)")
    ap.add_argument("--json", help="write every run and the table's values to FILE")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.steps)
        return 0
    try:
        import torch  # noqa: F401  (only to fail here, with a clear line, when missing)
    except ImportError:
        print("bench/observer-cost.py: error: PyTorch is not installed for %s "
              "(Debian: apt install python3-torch)" % sys.executable, file=sys.stderr)
        return 1
    runs = []
    for r in range(a.rounds):
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--child", mode,
                                  "--steps", str(a.steps)],
                                 capture_output=True, text=True, check=False)
            if out.returncode:
                print("bench/observer-cost.py: error: mode %s failed:\n%s"
                      % (mode, out.stderr[-2000:]), file=sys.stderr)
                return 1
            run = json.loads(out.stdout.strip().splitlines()[-1])
            run["round"] = r
            runs.append(run)
            print("round %d/%d %-9s %8.3f ms" % (r + 1, a.rounds, mode, run["median_ns"] / 1e6),
                  file=sys.stderr)
    med = {m: statistics.median(x["median_ns"] for x in runs if x["mode"] == m) for m in MODES}
    counted = [x["ops_per_step"] for x in runs if x["ops_per_step"]]
    if not counted:
        print("bench/observer-cost.py: error: the profiler recorded no ops", file=sys.stderr)
        return 1
    ops = statistics.median(counted)
    nodes = statistics.median([x["nodes_per_step"] for x in runs if x["nodes_per_step"]] or [0])
    print("PyTorch %s, %s; %d ops per step recorded by the profiler, %d nodes by the observer"
          % (runs[0]["torch"], os.uname().machine, round(ops), round(nodes)))
    print()
    print("| mode | step ms (median of %d rounds) | added ms | added ns per op |" % a.rounds)
    print("|---|---|---|---|")
    per_op = {}
    for m in MODES:
        per_op[m] = (med[m] - med["plain"]) / ops
        print("| %s | %.3f | %+.3f | %.0f |" % (m, med[m] / 1e6, (med[m] - med["plain"]) / 1e6,
                                                 per_op[m]))
    et_beside = (med["shapes-et"] - med["shapes"]) / ops
    print()
    print("the observer beside torch.profiler (shapes-et - shapes): %.0f ns per op%s"
          % (et_beside, ", %.1f times the profiler's own with record_shapes"
             % (et_beside / per_op["shapes"]) if per_op["shapes"] > 0 else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "median_ns": med, "ops_per_step": ops,
                       "nodes_per_step": nodes, "ns_per_op": per_op,
                       "observer_beside_profiler_ns_per_op": et_beside}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
