# SPDX-License-Identifier: MIT
"""A small GPT training loop in plain PyTorch, for bench/gpu/run.sh (one GPU).

12 layers, hidden 1024, 16 heads, sequence 1024, batch 8, bf16 autocast, AdamW (fused
where available).  A side CUDA stream copies the next batch from pinned host memory and
records an event; the compute stream waits on it, so the trace has a cross-stream
dependency of the kind real data loaders make.

Modes (every one runs warmup + steps + 1 steps; the last one only closes the window):
  plain           no tracing
  orrery          steps marked with orrery_record.step(), op names with
                  orrery_record.enable(ops=--ops: nvtx, profiler or none); run it under
                  `orrery record --skip W --steps S`
  torch-profiler  torch.profiler (CPU + CUDA) over the same S steps after W; writes the
                  Chrome trace (--trace) and the kernel counts by name (--counts);
                  --with-stack adds Python stacks to each op

--times OUT gets one JSON line per step: {"step", "ms", "measured", "observed"}, where ms
is the wall time of the step with the GPU synchronized at its end, measured is true for
the S steps after the W warm-up steps, and observed for the one step --et traced under
the ExecutionTraceObserver (the first measured one; the profiler's first step too; with
--et-all every measured step, to measure the observer's own cost per op).  --et also goes
with --mode plain: the observer alone.
Under --mode orrery the time is taken inside orrery_record.step(), as the tracer's step
is: what --ops profiler does at the window's edges (start its session, write its trace)
is not in a step.
"""

import argparse
import collections
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 50304


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, d, heads, seq):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)
        self.head.weight = self.tok.weight  # tied, as GPT-2
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def make_optimizer(model):
    try:
        return torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    except (TypeError, RuntimeError):
        return torch.optim.AdamW(model.parameters(), lr=3e-4)


class Loader:
    """Batches in pinned host memory, copied ahead on a side stream."""

    def __init__(self, batch, seq, device, nbuf=4):
        g = torch.Generator().manual_seed(0)
        self.host = [torch.randint(0, VOCAB, (batch, seq + 1), generator=g).pin_memory()
                     for _ in range(nbuf)]
        self.device = device
        self.stream = torch.cuda.Stream(device)
        self.i = 0
        self.next = self._copy()

    def _copy(self):
        with torch.cuda.stream(self.stream):
            dev = self.host[self.i % len(self.host)].to(self.device, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(self.stream)
        self.i += 1
        return dev, ready

    def get(self):
        """The batch copied ahead (the compute stream waits for it), and the next copy."""
        dev, ready = self.next
        compute = torch.cuda.current_stream(self.device)
        compute.wait_event(ready)
        dev.record_stream(compute)
        self.next = self._copy()
        return dev[:, :-1], dev[:, 1:]


def train_step(model, opt, loader):
    x, y = loader.get()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def kernel_counts(trace_path):
    with open(trace_path) as f:
        trace = json.load(f)
    counts = collections.Counter(e.get("name", "") for e in trace.get("traceEvents", [])
                                 if e.get("cat") == "kernel" and e.get("ph") == "X")
    return {"total": sum(counts.values()), "by_name": dict(sorted(counts.items()))}


def import_orrery_record():
    try:
        import orrery_record
    except ImportError:  # not under `orrery record`: the module beside the sources
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "tracer", "python"))
        import orrery_record
    return orrery_record


def run(args):
    torch.manual_seed(0)
    device = torch.device("cuda", torch.cuda.current_device())
    torch.backends.cuda.matmul.allow_tf32 = True
    model = GPT(args.layers, args.hidden, args.heads, args.seq).to(device)
    opt = make_optimizer(model)
    loader = Loader(args.batch, args.seq, device)
    total = args.warmup + args.steps + 1
    rec = prof = None
    if args.mode == "orrery":
        rec = import_orrery_record()
        if not rec.active():
            print("gpt.py: warning: --mode orrery outside `orrery record`", file=sys.stderr)
        if args.ops != "none" and not rec.enable(record_shapes=True, ops=args.ops):
            print("gpt.py: warning: orrery_record.enable(ops=%r) recorded no ops" % args.ops,
                  file=sys.stderr)
    elif args.mode == "torch-profiler":
        from torch.profiler import ProfilerActivity, profile, schedule
        if args.warmup < 1:
            sys.exit("gpt.py: --mode torch-profiler needs --warmup 1 or more")
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(skip_first=args.warmup - 1, wait=0, warmup=1,
                                         active=args.steps, repeat=1),
                       on_trace_ready=lambda p: p.export_chrome_trace(args.trace),
                       record_shapes=not args.no_ops, with_stack=args.with_stack)
        prof.__enter__()
    et = None
    if args.et:
        if args.mode == "orrery":
            sys.exit("gpt.py: --et goes with --mode torch-profiler or plain")
        from torch.profiler import ExecutionTraceObserver
        et = ExecutionTraceObserver()
        et.register_callback(args.et)
    times = []
    torch.cuda.synchronize()
    for i in range(total):
        if et and i == args.warmup:
            et.start()
        if rec:
            with rec.step(i):
                t0 = time.perf_counter()
                loss = train_step(model, opt, loader)
                torch.cuda.synchronize()
                ms = (time.perf_counter() - t0) * 1e3
        else:
            t0 = time.perf_counter()
            loss = train_step(model, opt, loader)
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t0) * 1e3
        # observed: under the ExecutionTraceObserver (its cost is not the job's)
        last = args.warmup + args.steps - 1 if args.et_all else args.warmup
        times.append({"step": i, "ms": ms,
                      "measured": args.warmup <= i < args.warmup + args.steps,
                      "observed": bool(et) and args.warmup <= i <= last})
        if et and i == last:
            et.stop()
            et.unregister_callback()
        if prof:
            prof.step()
    if prof:
        prof.__exit__(None, None, None)
    final = float(loss)
    if not math.isfinite(final):
        sys.exit("gpt.py: the loss is %r" % final)
    if args.times:
        with open(args.times, "w") as f:
            for t in times:
                f.write(json.dumps(t) + "\n")
    if prof and args.counts:
        with open(args.counts, "w") as f:
            json.dump(kernel_counts(args.trace), f, indent=1)
    measured = sorted(t["ms"] for t in times if t["measured"])
    print(json.dumps({"mode": args.mode, "steps": len(measured),
                      "median_ms": measured[len(measured) // 2] if measured else None,
                      "loss": final}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["plain", "orrery", "torch-profiler"], default="plain")
    ap.add_argument("--warmup", type=int, default=10, help="steps before the measured ones")
    ap.add_argument("--steps", type=int, default=20, help="measured (and recorded) steps")
    ap.add_argument("--times", help="per-step times, JSON lines")
    ap.add_argument("--trace", default="torch-trace.json", help="torch-profiler: Chrome trace")
    ap.add_argument("--counts", help="torch-profiler: kernel counts by name, JSON")
    ap.add_argument("--et", help="torch-profiler: a PyTorch execution trace of the first "
                                 "measured step (for orrery compose)")
    ap.add_argument("--et-all", action="store_true",
                    help="--et: observe every measured step, not only the first")
    ap.add_argument("--with-stack", action="store_true",
                    help="torch-profiler: record each op's Python stack (with_stack=True)")
    ap.add_argument("--no-ops", action="store_true",
                    help="no op names (orrery: --ops none; torch-profiler: no shapes)")
    ap.add_argument("--ops", choices=["nvtx", "profiler", "none"], default="nvtx",
                    help="orrery: how op names and shapes are recorded (orrery_record)")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    if args.no_ops:
        args.ops = "none"
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be 1 or more and --warmup 0 or more")
    if args.et_all and not args.et:
        ap.error("--et-all goes with --et")
    if args.with_stack and args.mode != "torch-profiler":
        ap.error("--with-stack goes with --mode torch-profiler")
    if not torch.cuda.is_available():
        sys.exit("gpt.py: CUDA is not available")
    run(args)


if __name__ == "__main__":
    main()
