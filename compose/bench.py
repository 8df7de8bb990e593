#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A portable benchmark that orrery composed from a trace (orrery compose).

Runs one recorded training step again, rank by rank, without the model's code or
data: every operator with synthetic tensors of the recorded shapes, dtypes and strides,
on the recorded streams with the recorded event records and waits, and the
collectives and transfers of the recorded sizes on recreated process groups.  The plan
of each rank is rank-R.json beside this file.

    python3 bench.py                          one GPU: rank 0's plan, collectives timed
                                              stand-ins (sleeps of their recorded time)
    torchrun --nproc-per-node N bench.py      N ranks; real collectives when N is the
                                              recorded world size
    python3 bench.py --check                  check the plans against their schema and
                                              print what they hold (needs no PyTorch)

Options: --steps N, --warmup N, --rank R, --device cuda|cpu, --profile DIR (a Kineto
trace of the timed steps, DIR/rank-R.json, for orrery replay/info), --no-fill,
--emulate-comms, --allow-namespace NS, --json.  See docs/orrery-compose.md in orrery's
sources.

It calls only operators of torch.ops (OpOverloadPacket, OpOverload) in the namespaces
aten, c10d and _c10d_functional, and those --allow-namespace names, with tensors and
scalars it makes; a plan that names anything else, or holds a string argument outside
a small set of modes, is refused before anything runs (check_plan).
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("op", "comm", "fill", "sync", "record", "wait")
DEVICE_RE = re.compile(r"^cuda(:[0-9]+)?\Z")

# What a plan may hold (check_plan); orrery compose writes nothing else.
NAMESPACES = ("aten", "c10d", "_c10d_functional")  # and --allow-namespace NS
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
# operators that read or write files, refused in every namespace
FILE_OPS = frozenset(("from_file", "save", "load", "_save", "_load"))
# string arguments passed to an operator: devices (made this run's device) and modes
STRING_ARGS = frozenset((
    "cpu", "none", "mean", "sum", "prod", "amax", "amin", "add", "multiply", "tanh",
    "trunc", "floor", "left", "right", "fro", "nuc", "forward", "backward", "ortho",
    "constant", "reflect", "replicate", "circular", "zeros", "border", "reflection",
    "nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area",
    "higher", "lower", "midpoint", "L", "U", "reduced", "complete", "r", "gelsd", "gelsy",
    "gelss", "gels"))
# ... and aten::einsum's equation: letters, '.', ',', ' ' and one '->'
EINSUM_RE = re.compile(r"^[A-Za-z., ]{0,256}(->[A-Za-z. ]{0,64})?\Z")
DTYPES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4,
          "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16,
          "float8_e4m3fn": 1, "float8_e5m2": 1}  # and their sizes in bytes
COMM_KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
              "reduce", "send", "recv", "send_recv")
MAX_DIMS = 64
MAX_TENSOR_BYTES = 1 << 40  # a tensor, from its storage's start; a storage
MAX_RANK_BYTES = 1 << 42    # every storage of a plan together
MAX_VALUE_DEPTH = 16
MAX_STRING = 1 << 24  # names are only printed; the importer bounds them first
I64 = 1 << 63


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="bench.py",
        description="Run the training step orrery composed from a trace, and time it.")
    p.add_argument("--steps", type=int, help="timed steps (default: as composed)")
    p.add_argument("--warmup", type=int, help="untimed steps first (default: as composed)")
    p.add_argument("--rank", type=int, default=None,
                   help="the recorded rank to run in a single process (default: the "
                        "lowest)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu runs the operators without streams, stand-ins or "
                        "collectives: a check that they run, not a timing")
    p.add_argument("--profile", metavar="DIR",
                   help="write a Kineto trace of the timed steps to DIR/rank-R.json")
    p.add_argument("--no-fill", action="store_true",
                   help="leave out the timed stand-ins for work no operator rebuilds")
    p.add_argument("--emulate-comms", action="store_true",
                   help="stand-ins for the collectives even when the world size matches")
    p.add_argument("--check", action="store_true",
                   help="read and check the plans, print their contents as JSON; run nothing")
    p.add_argument("--allow-namespace", metavar="NS", action="append", default=[],
                   help="run the operators of namespace NS too (besides aten, c10d and "
                        "_c10d_functional); may be given several times")
    p.add_argument("--distinct", action="store_true",
                   help="a check, not a timing: one step that runs each distinct operator "
                        "call once (op, overload, every argument's value, and each "
                        "tensor's shape, strides, dtype and device); the calls alike take "
                        "its result")
    p.add_argument("--json", action="store_true", help="results as one JSON object")
    p.add_argument("--dir", default=HERE, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for k in ("steps", "warmup"):
        if getattr(args, k) is not None and getattr(args, k) < 0:
            p.error("--%s: 0 or more" % k)
    for ns in args.allow_namespace:
        if not IDENT_RE.match(ns) or ns.startswith("__"):
            p.error("--allow-namespace %r: an identifier, as in NS::op" % ns)
    args.namespaces = NAMESPACES + tuple(args.allow_namespace)
    return args


# ---- plans: reading and checking (no PyTorch) ----

class PlanError(Exception):
    pass


class NotOnCpu(Exception):
    """An operator given a CUDA stream (aten::record_stream), or one with CUDA kernels
    only: --device cpu has none."""


class Default:
    """An argument the profiler recorded neither as a tensor nor as a scalar (a string, a
    device, None; {"d": null} in a plan): the schema's default (run_op)."""


DEFAULT = Default()


def load_plan(path, namespaces=NAMESPACES):
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise PlanError("%s: %s" % (path, str(e).splitlines()[0] if str(e) else e))
    check_plan(path, plan, namespaces)
    return plan


def op_problem(name, namespaces=NAMESPACES):
    """Why an op's name is not one bench.py calls, or None."""
    if not isinstance(name, str) or name.count("::") != 1:
        return "not an operator name (NAMESPACE::NAME)"
    ns, op = name.split("::")
    if not IDENT_RE.match(ns) or not IDENT_RE.match(op) or ns.startswith("__"):
        return "not an operator name (identifiers)"
    if op.startswith("__") and ns != "aten":
        return "not an operator name (a __dunder__ outside aten)"
    if ns not in namespaces:
        return "namespace %s not allowed (bench.py --allow-namespace %s)" % (ns, ns)
    if op in FILE_OPS:
        return "an operator that reads or writes files"
    return None


def string_ok(s, name):
    return (DEVICE_RE.match(s) is not None or s in STRING_ARGS
            or (name == "aten::einsum" and EINSUM_RE.match(s) is not None))


class Schema:
    """check_plan's walk: every field of a plan, its type and its range."""

    def __init__(self, path, plan, namespaces):
        self.path, self.plan, self.namespaces = path, plan, namespaces

    def bad(self, where, msg):
        raise PlanError("%s: %s: %s" % (self.path, where, msg))

    def int_(self, where, v, lo=-I64, hi=I64 - 1, null=False):
        if v is None and null:
            return
        if type(v) is not int or not lo <= v <= hi:
            self.bad(where, "%r is not a whole number from %d to %d" % (v, lo, hi))

    def str_(self, where, v):
        if not isinstance(v, str) or len(v) > MAX_STRING:
            self.bad(where, "not a string (of at most %d characters)" % MAX_STRING)

    def list_(self, where, v, n=None):
        if not isinstance(v, list) or (n is not None and len(v) != n):
            self.bad(where, "not a list" + ("" if n is None else " of %d" % n))

    def value(self, where, v, name, nt, depth=0):
        if depth > MAX_VALUE_DEPTH:
            self.bad(where, "arguments nested more than %d deep" % MAX_VALUE_DEPTH)
        if v is None or isinstance(v, bool):
            return
        if type(v) is int:
            return self.int_(where, v)
        if type(v) is float:
            return
        if isinstance(v, str):
            if not string_ok(v, name):
                self.bad(where, "a string argument bench.py does not pass: %r" % v[:64])
            return
        if isinstance(v, list):
            for x in v:
                self.value(where, x, name, nt, depth + 1)
            return
        if isinstance(v, dict) and list(v) == ["t"]:
            return self.int_(where, v["t"], 0, nt - 1)
        if isinstance(v, dict) and list(v) == ["f"] and v["f"] in ("nan", "inf", "-inf"):
            return
        if isinstance(v, dict) and list(v) == ["s"] and v["s"] is None:
            return  # a stream: the one the op runs on
        if isinstance(v, dict) and list(v) == ["d"] and v["d"] is None:
            return  # not recorded: the schema's default
        self.bad(where, "an argument that is not a tensor, a scalar or a list: %r"
                 % (str(v)[:64],))

    def top(self):
        p = self.plan
        if not isinstance(p, dict) or p.get("format") != "orrery-compose" \
                or p.get("version") != 1:
            self.bad("plan", "not an orrery compose plan (version 1)")
        known = {"format", "version", "producer", "source", "rank", "world_size", "step",
                 "step_ns", "gpu_ns", "op_ns", "comm_ns", "fill_ns", "dropped_ns", "steps",
                 "warmup", "main_stream", "events", "groups", "items", "tensors",
                 "storages", "missing"}
        for k in known - set(p):
            self.bad("plan", "no %r" % k)
        for k in set(p) - known:
            self.bad("plan", "an unknown field %r" % k[:64])
        for k in ("groups", "items", "tensors", "storages", "missing"):
            self.list_(k, p[k])
        self.str_("producer", p["producer"])
        self.str_("source", p["source"])
        self.int_("rank", p["rank"], 0, (1 << 31) - 1)
        self.int_("world_size", p["world_size"], 1, 1 << 31)
        self.int_("step", p["step"], -1)
        for k in ("step_ns", "gpu_ns", "op_ns", "comm_ns", "fill_ns", "dropped_ns",
                  "events"):
            self.int_(k, p[k], 0)
        self.int_("steps", p["steps"], 1, (1 << 31) - 1)
        self.int_("warmup", p["warmup"], 0, (1 << 31) - 1)
        self.int_("main_stream", p["main_stream"], 0, null=True)

    def groups(self):
        self.list_("groups", self.plan["groups"])
        for i, g in enumerate(self.plan["groups"]):
            w = "group %d" % i
            if not isinstance(g, dict) or set(g) != {"name", "ranks", "size"}:
                self.bad(w, "not {name, ranks, size}")
            self.str_(w, g["name"])
            self.list_(w, g["ranks"])
            for r in g["ranks"]:
                self.int_(w, r, 0, self.plan["world_size"] - 1)
            self.int_(w, g["size"], -1, 1 << 31)

    def tensors(self):
        ns = len(self.plan["storages"])
        total = 0
        self.list_("storages", self.plan["storages"])
        for i, st in enumerate(self.plan["storages"]):
            w = "storage %d" % i
            self.list_(w, st, 3)
            self.int_(w, st[0], 0, MAX_TENSOR_BYTES)
            if st[1] not in ("cpu", "cuda") or st[2] not in (0, 1, True, False):
                self.bad(w, "not [bytes, cpu|cuda, 0|1]")
            total += st[0]
        if total > MAX_RANK_BYTES:
            self.bad("storages", "%d bytes together, more than 2^42" % total)
        self.list_("tensors", self.plan["tensors"])
        for i, t in enumerate(self.plan["tensors"]):
            w = "tensor %d" % i
            self.list_(w, t, 5)
            self.int_(w, t[0], 0, ns - 1)
            self.int_(w, t[1], 0, MAX_TENSOR_BYTES)
            self.list_(w, t[2])
            if len(t[2]) > MAX_DIMS:
                self.bad(w, "more than %d dimensions" % MAX_DIMS)
            for n in t[2]:
                self.int_(w, n, 0)
            if t[3] is not None:
                self.list_(w, t[3], len(t[2]))
                for n in t[3]:
                    self.int_(w, n, 0)
            if not isinstance(t[4], str) or t[4] not in DTYPES:
                self.bad(w, "an unknown dtype %r" % (str(t[4])[:64],))
            self.extent(w, t)

    def extent(self, w, t):
        shape, strides = t[2], t[3]
        if strides is None:
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= max(n, 1)
        if 0 in shape:
            return
        end = (t[1] + sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * DTYPES[t[4]]
        if end > MAX_TENSOR_BYTES:
            self.bad(w, "more than 2^40 bytes from its storage's start")

    def op_item(self, w, it, nt):
        """["op", NAME, STREAM, GPU_NS, OVERLOAD, ARGS, OUTS] (docs/orrery-compose.md)."""
        self.list_(w, it, 7)
        why = op_problem(it[1], self.namespaces)
        if why:
            self.bad(w, "op %r: %s" % (str(it[1])[:128], why))
        self.int_(w, it[2], 0, null=True)
        self.int_(w, it[3], 0)
        if it[4] is not None and (not isinstance(it[4], str)
                                  or not IDENT_RE.match(it[4])
                                  or it[4].startswith("__")):
            self.bad(w, "an overload that is not an identifier")
        self.list_(w, it[5])
        self.value(w, it[5], it[1], nt)
        self.list_(w, it[6])
        for o in it[6]:
            self.int_(w, o, 0, nt - 1, null=True)

    def comm_item(self, w, it, ng):
        """["comm", KIND, STREAM, FROM, GROUP, N_IN, N_OUT, DTYPE, PEER, DUR_NS, NAME]."""
        self.list_(w, it, 11)
        if it[1] not in COMM_KINDS or not isinstance(it[7], str) \
                or it[7] not in DTYPES:
            self.bad(w, "an unknown collective or dtype")
        self.int_(w, it[2], 0)
        self.int_(w, it[3], 0, null=True)
        self.int_(w, it[4], -1, ng - 1, null=True)
        self.int_(w, it[5], -1, MAX_TENSOR_BYTES // DTYPES[it[7]])
        self.int_(w, it[6], -1, MAX_TENSOR_BYTES // DTYPES[it[7]])
        self.int_(w, it[8], 0, (1 << 31) - 1, null=True)
        self.int_(w, it[9], 0)
        self.str_(w, it[10])

    def items(self):
        p = self.plan
        nt, ng = len(p["tensors"]), len(p["groups"])
        self.list_("items", p["items"])
        recorded = set()
        for i, it in enumerate(p["items"]):
            w = "item %d" % i
            if not isinstance(it, list) or not it or it[0] not in KINDS:
                self.bad(w, "not an item of a known kind")
            kind = it[0]
            if kind == "op":
                self.op_item(w, it, nt)
            elif kind == "comm":
                self.comm_item(w, it, ng)
            elif kind == "fill":
                self.list_(w, it, 4)
                self.int_(w, it[1], 0)
                self.int_(w, it[2], 0)
                self.str_(w, it[3])
            elif kind == "sync":
                self.list_(w, it, 2)
                self.int_(w, it[1], 0, null=True)
            elif kind == "record":
                self.list_(w, it, 4)
                self.int_(w, it[1], 0)
                self.int_(w, it[2], 0)
                if not isinstance(it[3], bool):
                    self.bad(w, "not [record, event, stream, bool]")
                recorded.add(it[1])
            else:
                self.list_(w, it, 4)
                self.int_(w, it[1], 0)
                self.int_(w, it[2], 0)
                if it[3] is not False:
                    self.int_(w, it[3], 0, null=True)
                if it[1] not in recorded:
                    self.bad(w, "waits for event %d before it is recorded" % it[1])

    def missing(self):
        self.list_("missing", self.plan["missing"])
        for i, m in enumerate(self.plan["missing"]):
            w = "missing %d" % i
            self.list_(w, m, 4)
            self.str_(w, m[0])
            self.str_(w, m[1])
            self.int_(w, m[2], 0)
            self.int_(w, m[3], 0)


def check_plan(path, plan, namespaces=NAMESPACES):
    """Every field of the plan: its type and range; ops and strings bench.py may pass."""
    s = Schema(path, plan, namespaces)
    s.top()
    s.groups()
    s.tensors()
    s.items()
    s.missing()


def tensor_refs(args):
    out = []
    for a in args:
        if isinstance(a, dict) and "t" in a:
            out.append(a["t"])
        elif isinstance(a, list):
            out.extend(tensor_refs(a))
    return out


def summary(plan):
    counts = {k: 0 for k in KINDS}
    for it in plan["items"]:
        counts[it[0]] += 1
    return {
        "rank": plan["rank"], "step": plan["step"], "step_ns": plan["step_ns"],
        "ops": counts["op"], "comms": counts["comm"], "fills": counts["fill"],
        "syncs": counts["sync"], "records": counts["record"], "waits": counts["wait"],
        "tensors": len(plan["tensors"]), "storages": len(plan["storages"]),
        "gpu_ns": plan["gpu_ns"], "op_ns": plan["op_ns"], "comm_ns": plan["comm_ns"],
        "fill_ns": plan["fill_ns"], "dropped_ns": plan["dropped_ns"],
    }


def plan_paths(d):
    paths = glob.glob(os.path.join(d, "rank-*.json"))
    return sorted(paths, key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))


def first_rank(d):
    paths = plan_paths(d)
    if not paths:
        raise PlanError("no rank-R.json beside bench.py in %s" % d)
    return int(re.sub(r"\D", "", os.path.basename(paths[0])))


def check_all(args):
    paths = plan_paths(args.dir)
    if not paths:
        raise PlanError("no rank-R.json beside bench.py in %s" % args.dir)
    print(json.dumps({"ranks": [summary(load_plan(p, args.namespaces)) for p in paths]},
                     sort_keys=True))
    return 0


# ---- running a plan ----

class Runner:
    namespaces = NAMESPACES

    def __init__(self, torch, plan, args, dist=None, real_comms=False):
        self.torch = torch
        self.plan = plan
        self.args = args
        self.namespaces = args.namespaces
        self.dist = dist
        self.real_comms = real_comms
        self.cpu = args.device == "cpu"
        if self.cpu:
            self.dev = torch.device("cpu")
        else:
            self.dev = torch.device("cuda", torch.cuda.current_device())
        self.failed = {}  # item index -> error
        self.skipped = {}  # item index -> why it does not run on this device
        self.same_as = {}  # --distinct: item index -> the alike call that ran
        self.seen = {}
        self.picked = {}  # (op, the kinds of its values) -> (overload, schema arguments)
        self.unresolved = {}
        self.emulated = 0
        self.cycles_per_ns = 0.0
        self._streams()
        self._groups()
        self._tensors()
        self._ops()
        self._comm_buffers()
        self.events = {}

    # streams and stand-ins
    def _streams(self):
        self.streams = {}
        if self.cpu:
            return
        main = self.plan.get("main_stream")
        for s in (s for it in self.plan["items"] for s in streams_of(it)):
            if s is None or s in self.streams:
                continue
            if s == main:
                self.streams[s] = self.torch.cuda.current_stream()
            else:
                self.streams[s] = self.torch.cuda.Stream()
        self.main = self.torch.cuda.current_stream()
        self._calibrate()

    def _calibrate(self):
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        cycles = 2_000_000
        best = None
        for _ in range(5):
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
            best = ms if best is None else min(best, ms)
        self.cycles_per_ns = cycles / max(best * 1e6, 1.0)

    def stream(self, s):
        if self.cpu:
            return None
        return self.streams.get(s, self.main) if s is not None else self.main

    def use(self, s):
        if not self.cpu and s is not None:
            st = self.stream(s)
            if st != self.torch.cuda.current_stream():
                self.torch.cuda.set_stream(st)

    def sleep(self, stream, ns):
        if self.cpu or ns <= 0:
            return
        with self.torch.cuda.stream(self.stream(stream)):
            self.torch.cuda._sleep(max(1, int(ns * self.cycles_per_ns)))

    # process groups
    def _groups(self):
        self.groups = []
        if not self.real_comms:
            return
        for g in self.plan["groups"]:
            ranks = g["ranks"]
            self.groups.append(self.dist.new_group(ranks) if ranks else None)

    # tensors: storages of bytes, views over them
    def _tensors(self):
        torch = self.torch
        plan = self.plan
        self.dtypes = {}
        self.views = {}
        self.made = 0  # storages allocated so far (none should be in a timed step)
        self.first_dtype = {}
        for t in plan["tensors"]:
            self.first_dtype.setdefault(t[0], t[4])
        # made where first used, in the untimed first step (--distinct makes only those
        # its calls use)
        self.persistent = {sid: None for sid, st in enumerate(plan["storages"]) if st[2]}
        # the last item that uses each other storage: it is released after that one
        self.release = {}
        last = {}
        for i, it in enumerate(plan["items"]):
            if it[0] != "op":
                continue
            for t in tensor_refs(it[5]) + [o for o in it[6] if o is not None]:
                last[plan["tensors"][t][0]] = i
        for sid, i in last.items():
            if sid not in self.persistent:
                self.release.setdefault(i, []).append(sid)

    def dtype(self, name):
        d = self.dtypes.get(name)
        if d is None:
            d = getattr(self.torch, name, None) or self.torch.uint8
            self.dtypes[name] = d
        return d

    def device_of(self, dev):
        return self.torch.device("cpu") if dev == "cpu" else self.dev

    def _new_storage(self, sid, nbytes, dev, dtype, init):
        torch = self.torch
        self.made += 1
        # host memory in page-locked pages on a GPU, as a job's data loader pins what it
        # copies with non_blocking=True (pageable memory would be staged by the driver,
        # and such a copy is not asynchronous); PyTorch's host allocator caches them
        pin = dev == "cpu" and not self.cpu
        buf = torch.empty(max(int(nbytes), 1), dtype=torch.uint8, device=self.device_of(dev),
                          pin_memory=pin)
        d = self.dtype(dtype) if dtype else torch.uint8
        size = torch.empty((), dtype=d).element_size()
        n = buf.numel() // size
        if n and d.is_floating_point and init:
            try:
                buf.narrow(0, 0, n * size).view(d).uniform_(0.0, 1.0)
            except RuntimeError:  # a type without uniform_ (float8): from float32
                buf.narrow(0, 0, n * size).view(d).copy_(
                    torch.rand(n, device=buf.device))
        elif not d.is_floating_point:
            buf.zero_()  # indices, masks, complex: zeros are valid everywhere
        return buf

    def view(self, tid, live):
        torch = self.torch
        sid, offset, shape, strides, dtype = self.plan["tensors"][tid]
        cached = self.views.get(tid)
        if cached is not None:
            return cached
        d = self.dtype(dtype)
        size = torch.empty((), dtype=d).element_size()
        if strides is None:
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= max(n, 1)
        extent = 1
        for n, s in zip(shape, strides):
            if n == 0:
                extent = 0
                break
            extent += (n - 1) * abs(s)
        need = (offset + extent) * size
        if extent == 0:
            return torch.empty(shape, dtype=d, device=self.device_of(
                self.plan["storages"][sid][1]))
        if sid not in self.persistent and sid not in live:
            # read before anything of the step wrote it: an input of the step (a plan
            # without an execution trace cannot say which storages are), made once as
            # the persistent ones are, not again (and zeroed again) in every step
            self.persistent[sid] = None
        persistent = sid in self.persistent
        buf = self.persistent_storage(sid) if persistent else live.get(sid)
        if buf is None or buf.numel() < need:
            nbytes, dev, _ = self.plan["storages"][sid]
            buf = self._new_storage(sid, max(nbytes, need), dev, dtype, persistent)
            if persistent:
                self.persistent[sid] = buf
            else:
                live[sid] = buf
        t = self.alias(buf, d, size, offset, shape, strides)
        if persistent:
            self.views[tid] = t
        return t

    def persistent_storage(self, sid):
        """A storage the step reads before writing it (weights, inputs): made once."""
        buf = self.persistent[sid]
        if buf is None:
            nbytes, dev, _ = self.plan["storages"][sid]
            buf = self._new_storage(sid, nbytes, dev, self.first_dtype.get(sid), True)
            self.persistent[sid] = buf
        return buf

    def alias(self, buf, d, size, offset, shape, strides):
        """A tensor of its own (not an autograd view) on buf's memory, from offset on."""
        torch = self.torch
        start = buf.storage_offset() + offset * size
        if start % size == 0:
            try:
                t = torch.empty(0, dtype=d, device=buf.device)
                if hasattr(buf, "untyped_storage"):
                    t.set_(buf.untyped_storage(), start // size, shape, strides)
                else:  # PyTorch 1.x
                    st = buf.storage()
                    raw = st.untyped() if hasattr(st, "untyped") else st._untyped()
                    t.set_(torch.storage.TypedStorage(wrap_storage=raw, dtype=d),
                           start // size, shape, strides)
                return t
            except (RuntimeError, TypeError, AttributeError):
                pass
        n = 1
        for k, st in zip(shape, strides):
            n += (k - 1) * abs(st)
        return buf.narrow(0, offset * size, n * size).view(d).as_strided(shape, strides)

    def bind(self, outs, result, live):
        flat = []
        flatten(result, flat)
        for tid, r in zip(outs, flat):
            if tid is None or not isinstance(r, self.torch.Tensor):
                continue
            sid = self.plan["tensors"][tid][0]
            if sid not in self.persistent:
                whole = self.whole_storage(r)
                if whole is not None:
                    live[sid] = whole

    def whole_storage(self, r):
        """The bytes of r's whole storage from its start (offsets count from there)."""
        torch = self.torch
        try:
            t = torch.empty(0, dtype=torch.uint8, device=r.device)
            if hasattr(r, "untyped_storage"):
                raw = r.untyped_storage()
                return t.set_(raw, 0, (raw.nbytes(),), (1,))
            st = r.storage()  # PyTorch 1.x
            raw = st.untyped() if hasattr(st, "untyped") else st._untyped()
            return t.set_(torch.storage.TypedStorage(wrap_storage=raw, dtype=torch.uint8),
                          0, (raw.nbytes(),), (1,))
        except (RuntimeError, TypeError, AttributeError):
            return None

    # operators
    def _ops(self):
        self.fns = {}
        for i, it in enumerate(self.plan["items"]):
            if it[0] != "op":
                continue
            key = (it[1], it[4])
            if key not in self.fns:
                self.fns[key] = resolve(self.torch, it[1], it[4], self.namespaces)
            if isinstance(self.fns[key], str):
                self.unresolved[i] = self.fns[key]

    def arg(self, a, live, name):
        """A value the plan gave an argument: a tensor made here, a scalar, a list of them,
        or a string of the allowed set (check_plan); anything else is refused."""
        if isinstance(a, dict):
            if "t" in a:
                return self.view(a["t"], live)
            if "s" in a:
                if self.cpu:
                    raise NotOnCpu("a stream argument (streams are CUDA's)")
                return self.torch.cuda.current_stream()
            if "d" in a:
                return DEFAULT
            return float(a["f"])
        if isinstance(a, list):
            return [self.arg(x, live, name) for x in a]
        if isinstance(a, str):
            if DEVICE_RE.match(a):
                return str(self.dev)
            if not string_ok(a, name):
                raise PlanError("a string argument bench.py does not pass: %r" % a[:64])
            return a
        if a is None or isinstance(a, (bool, int, float)):
            return a
        raise PlanError("an argument that is not a tensor or a scalar")

    def alike(self, i, it):
        """--distinct: True when an earlier call of the step was the same (then item i
        takes its result), else it is remembered."""
        key = json.dumps([it[1], it[4], call_key(self.plan, it[5])])
        j = self.seen.get(key)
        if j is None:
            self.seen[key] = i
            return False
        self.same_as[i] = j
        return True

    def settle_alike(self):
        """--distinct: each call takes the result of the alike one that ran."""
        for i, j in self.same_as.items():
            if j in self.failed:
                self.failed[i] = self.failed[j]
            if j in self.skipped:
                self.skipped[i] = self.skipped[j]

    def run_op(self, i, it, live):
        fn, schema = self.fns[(it[1], it[4])]
        args = [self.arg(a, live, it[1]) for a in it[5]]
        kwargs = {}
        if it[4] is None:  # no overload recorded: the one that takes these arguments
            fn, schema = self.overload_for(it[1], fn, args)
        if schema:
            args = [self.default(a, x) if x is DEFAULT else x
                    for x, a in zip(args, schema)] + args[len(schema):]
            pos = [x for x, a in zip(args, schema) if not a.kwarg_only]
            kwargs = {a.name: x for x, a in zip(args, schema) if a.kwarg_only}
            args = pos + args[len(schema):]
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError as e:
            if self.cpu and "'CPU' backend" in str(e):
                raise NotOnCpu("no CPU kernel in this PyTorch") from e
            raise
        self.bind(it[6], result, live)

    def overload_for(self, name, packet, args):
        """(overload, its schema's arguments) of the packet that takes args as the
        profiler recorded them: as many as the schema's arguments, each of a type that
        takes its value; (packet, None) when none does and every value was recorded
        (the packet then picks as for a call from Python)."""
        key = (name, value_kinds(self.torch, args))
        hit = self.picked.get(key)
        if hit is None:
            hit = (packet, None)
            for o in packet.overloads():
                fn = getattr(packet, o)
                schema = list(fn._schema.arguments)
                if len(schema) == len(args) and all(
                        takes(a.type, x, self.torch) for a, x in zip(schema, args)):
                    hit = (fn, schema)
                    break
            self.picked[key] = hit
        if hit[1] is None and any(x is DEFAULT for x in args):
            raise TypeError("no overload of %s in this PyTorch takes the recorded arguments"
                            % name)
        return hit

    def default(self, a, x):
        """The value of an argument the profiler did not record (x is DEFAULT): the
        running device for a device, the stream the op runs on for a stream (as {"s":
        null}), else the schema's default, else None if optional."""
        t = a.type
        inner = t.getElementType() if t.kind() == "OptionalType" else t
        if inner.kind() == "DeviceObjType":
            return self.dev
        if inner.kind() == "StreamObjType":
            return self.arg({"s": None}, None, None)
        if a.has_default_value():
            return a.default_value
        if t.kind() == "OptionalType":
            return None
        raise TypeError("argument %s (%s) was not recorded and has no default"
                        % (a.name, t))

    # collectives
    def _comm_buffers(self):
        """Which collectives run for real, and the stream each wait before one uses."""
        self.buffers = {}
        self.real = {}
        self.wait_on = {}
        items = self.plan["items"]
        for it in items:
            if it[0] == "comm":
                kind, group, peer = it[1], it[4], it[8]
                self.real[id(it)] = (self.real_comms and group is not None
                                     and kind != "send_recv"
                                     and (kind not in ("send", "recv") or peer is not None))
        for i, it in enumerate(items):
            if it[0] != "wait":
                continue
            j = i
            while j < len(items) and items[j][0] == "wait":
                j += 1
            real = j < len(items) and items[j][0] == "comm" and self.real[id(items[j])]
            self.wait_on[i] = it[3] if real and it[3] is not False else it[2]

    def buffer(self, n, dtype, role="in"):
        key = (int(n), dtype, role)
        b = self.buffers.get(key)
        if b is None:
            b = self.torch.empty(max(int(n), 1), dtype=self.dtype(dtype), device=self.dev)
            b.zero_()
            self.buffers[key] = b
        return b

    def run_comm(self, it):
        kind, stream, from_, group, n_in, n_out, dtype, peer, dur = it[1:10]
        if self.cpu:
            return None
        dist = self.dist
        if not self.real[id(it)]:
            self.emulated += 1
            self.sleep(stream, dur)
            return None
        pg = None if group == -1 else self.groups[group]
        gsize = dist.get_world_size(pg)
        n = max(n_in, n_out, 1)
        with self.torch.cuda.stream(self.stream(from_)):
            if kind == "all_reduce":
                return dist.all_reduce(self.buffer(n, dtype), group=pg, async_op=True)
            if kind == "all_gather":
                n_in = n_in if n_in > 0 else max(n_out // gsize, 1)
                inp, out = self.buffer(n_in, dtype), self.buffer(n_in * gsize, dtype, "out")
                gather = getattr(dist, "all_gather_into_tensor", None) or dist._all_gather_base
                return gather(out, inp, group=pg, async_op=True)
            if kind == "reduce_scatter":
                n_out = n_out if n_out > 0 else max(n_in // gsize, 1)
                inp, out = self.buffer(n_out * gsize, dtype), self.buffer(n_out, dtype, "out")
                scatter = (getattr(dist, "reduce_scatter_tensor", None)
                           or dist._reduce_scatter_base)
                return scatter(out, inp, group=pg, async_op=True)
            if kind == "all_to_all":
                n = -(-n // gsize) * gsize
                return dist.all_to_all_single(self.buffer(n, dtype, "out"),
                                              self.buffer(n, dtype), group=pg, async_op=True)
            root = self.plan["groups"][group]["ranks"][0] if group >= 0 else 0
            if kind == "broadcast":
                return dist.broadcast(self.buffer(n, dtype), src=root, group=pg, async_op=True)
            if kind == "reduce":
                return dist.reduce(self.buffer(n, dtype), dst=root, group=pg, async_op=True)
            if kind == "send":
                return dist.isend(self.buffer(n, dtype), peer)
            return dist.irecv(self.buffer(n, dtype, "out"), peer)

    # one step
    def op_step(self, i, it, live, probe, fill):
        """Item i, an op: run (when probing, its failure kept), or its time slept when it
        cannot run; then the tensors it used last are released."""
        if i in self.unresolved or i in self.failed or i in self.skipped:
            if fill:
                self.sleep(it[2], it[3])
        elif probe and self.args.distinct and self.alike(i, it):
            pass
        else:
            self.use(it[2])
            if probe:
                try:
                    self.run_op(i, it, live)
                except NotOnCpu as e:
                    self.skipped[i] = str(e)
                except Exception as e:  # noqa: BLE001 - any failure is reported
                    self.failed[i] = "%s: %s" % (type(e).__name__,
                                                 str(e).splitlines()[0][:200]
                                                 if str(e) else "")
            else:
                self.run_op(i, it, live)
        for sid in self.release.get(i, ()):
            live.pop(sid, None)

    def step(self, probe):
        torch = self.torch
        live = {}
        work = None
        items = self.plan["items"]
        fill = not self.args.no_fill
        for i, it in enumerate(items):
            kind = it[0]
            if kind == "op":
                self.op_step(i, it, live, probe, fill)
            elif kind == "comm":
                work = self.run_comm(it)
            elif kind == "fill":
                if fill:
                    self.sleep(it[1], it[2])
            elif kind == "sync":
                if not self.cpu:
                    if it[1] is None:
                        torch.cuda.synchronize()
                    else:
                        self.stream(it[1]).synchronize()
            elif kind == "record":
                if self.cpu:
                    continue
                if it[3] and work is not None:
                    self.events[it[1]] = work
                else:
                    ev = torch.cuda.Event()
                    ev.record(self.stream(it[2]))
                    self.events[it[1]] = ev
            elif kind == "wait":
                if self.cpu:
                    continue
                target = self.wait_on[i]
                rec = self.events.get(it[1])
                if rec is None:
                    continue
                if isinstance(rec, torch.cuda.Event):
                    self.stream(target).wait_event(rec)
                else:
                    with torch.cuda.stream(self.stream(target)):
                        rec.wait()
        if not self.cpu:
            torch.cuda.set_stream(self.main)
            torch.cuda.synchronize()


def call_key(plan, v):
    """An argument as --distinct compares it: a tensor by its shape, strides, dtype and
    storage's device (not by which buffer), anything else by its value."""
    if isinstance(v, dict) and "t" in v:
        t = plan["tensors"][v["t"]]
        return ["t", t[2], t[3], t[4], plan["storages"][t[0]][1]]
    if isinstance(v, list):
        return [call_key(plan, x) for x in v]
    return v


def value_kinds(torch, args):
    """What overload_for() matches of a call's values: their kinds, lists element-wise."""
    out = []
    for x in args:
        if isinstance(x, list):
            out.append(tuple(value_kinds(torch, x)))
        elif isinstance(x, torch.Tensor):
            out.append("t")
        else:
            out.append(type(x).__name__)
    return tuple(out)


def takes(t, x, torch):
    """Whether an argument of JIT type t takes the recorded value x."""
    k = t.kind()
    if x is DEFAULT:
        return True
    if k == "OptionalType":
        return x is None or takes(t.getElementType(), x, torch)
    if isinstance(x, torch.Tensor):
        return k == "TensorType"
    if isinstance(x, bool):
        return k in ("BoolType", "NumberType")
    if isinstance(x, int):
        return k in ("IntType", "SymIntType", "FloatType", "SymFloatType", "NumberType")
    if isinstance(x, float):
        return k in ("FloatType", "SymFloatType", "NumberType")
    if isinstance(x, list):
        return k == "ListType" and all(takes(t.getElementType(), y, torch) for y in x)
    if isinstance(x, str):
        return k in ("StringType", "DeviceObjType")
    return False


def streams_of(it):
    """The recorded streams an item uses."""
    kind = it[0]
    if kind in ("op", "record"):
        return [it[2]]
    if kind in ("fill", "sync"):
        return [it[1]]
    if kind == "wait":
        return [it[2]] + ([] if isinstance(it[3], bool) else [it[3]])
    return [it[2], it[3]]


def flatten(v, out):
    if isinstance(v, (list, tuple)):
        for x in v:
            flatten(x, out)
    else:
        out.append(v)


def op_types(torch):
    """PyTorch's operator classes (torch._ops), or (None, None)."""
    ops = getattr(torch, "_ops", None)
    return getattr(ops, "OpOverloadPacket", None), getattr(ops, "OpOverload", None)


def reads_files(schema):
    """True when an operator's schema takes a file name."""
    try:
        return any(a.name in ("filename", "path", "file") and "str" in str(a.type)
                   for a in schema.arguments)
    except (AttributeError, TypeError):
        return True


def resolve(torch, name, overload, namespaces=NAMESPACES):
    """(callable, its schema's arguments or None), or why not as a string.  Only an
    operator of torch.ops (OpOverloadPacket or OpOverload) in an allowed namespace."""
    why = op_problem(name, namespaces)
    if why:
        return why
    if overload is not None and (not isinstance(overload, str) or not IDENT_RE.match(overload)
                                 or overload.startswith("__")):
        return "an overload that is not an identifier"
    packet_t, overload_t = op_types(torch)
    if packet_t is None or overload_t is None:
        return "no torch._ops.OpOverloadPacket in this PyTorch"
    ns, op = name.split("::")
    try:
        packet = getattr(getattr(torch.ops, ns), op)
    except (AttributeError, RuntimeError):
        return "not in this PyTorch"
    if not isinstance(packet, packet_t):
        return "not an operator of torch.ops"
    try:
        overloads = [getattr(packet, o) for o in packet.overloads()]
    except (AttributeError, RuntimeError):
        return "not an operator of torch.ops"
    if any(not isinstance(o, overload_t) or reads_files(o._schema) for o in overloads):
        return "an operator that reads or writes files"
    if overload is None:
        return packet, None
    try:
        fn = getattr(packet, overload)
    except (AttributeError, RuntimeError):
        return "overload %s not in this PyTorch" % overload
    if not isinstance(fn, overload_t):
        return "overload %s is not an operator" % overload
    try:
        schema = list(fn._schema.arguments)
    except AttributeError:
        schema = None
    return fn, schema


def run(args):
    import torch

    world = int(os.environ.get("WORLD_SIZE", "1"))
    dist = None
    rank = args.rank if args.rank is not None else first_rank(args.dir)
    if world > 1:
        import torch.distributed as dist
        if args.device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
        rank = dist.get_rank()
    elif args.device == "cuda":
        if not torch.cuda.is_available():
            raise PlanError("no CUDA device (--device cpu runs the operators on the CPU)")
    path = os.path.join(args.dir, "rank-%d.json" % rank)
    if not os.path.exists(path):
        raise PlanError("%s: no plan for rank %d" % (path, rank))
    plan = load_plan(path, args.namespaces)
    real = (dist is not None and world == plan["world_size"] and not args.emulate_comms
            and args.device == "cuda")
    runner = Runner(torch, plan, args, dist, real)
    steps = args.steps if args.steps is not None else plan["steps"]
    warmup = args.warmup if args.warmup is not None else plan["warmup"]
    runner.step(probe=True)
    if args.distinct:
        runner.settle_alike()
        steps = warmup = 0
    for _ in range(max(warmup - 1, 0)):
        runner.step(probe=False)
    times = timed(torch, runner, steps, args, rank)
    report(args, plan, runner, times, real)
    if dist is not None:
        dist.barrier()
        dist.destroy_process_group()
    return 0


def timed(torch, runner, steps, args, rank):
    """The timed steps' wall times; with --profile, a Kineto trace of them with a
    ProfilerStep#N annotation each (a profiler schedule: without one torch.profiler
    marks no steps), after one untimed step that warms the profiler up."""
    times = []
    prof = None
    path = None
    if args.profile and steps > 0:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if args.device == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        os.makedirs(args.profile, exist_ok=True)
        path = os.path.join(args.profile, "rank-%d.json" % rank)
        if os.path.exists(path):
            os.remove(path)
        prof = torch.profiler.profile(
            activities=acts, record_shapes=True,
            schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(path))
        prof.__enter__()
        runner.step(probe=False)
        prof.step()
    made = runner.made
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        runner.step(probe=False)
        times.append(time.perf_counter_ns() - t0)
        if prof is not None:
            prof.step()
    runner.made_timed = runner.made - made
    if prof is not None:
        prof.__exit__(None, None, None)
        if not os.path.exists(path):
            raise PlanError("--profile: torch.profiler wrote no trace to %s" % path)
    return times


def report(args, plan, runner, times, real):
    items = plan["items"]
    failed = grouped(items, list(runner.failed.items()) + list(runner.unresolved.items()))
    skipped = grouped(items, runner.skipped.items())
    med = int(statistics.median(times)) if times else 0
    out = {
        "rank": plan["rank"], "step": plan["step"], "recorded_step_ns": plan["step_ns"],
        "steps_ns": times, "median_ns": med, "device": args.device,
        "collectives": "real" if real else "stand-ins",
        "failed": failed, "skipped": skipped,
        # storages allocated in the timed steps: each is a kernel (a zero fill) and an
        # allocation the job did not make
        "storages_made_timed": getattr(runner, "made_timed", 0),
    }
    if args.distinct:
        out["distinct_calls"] = len(runner.seen)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return
    print("rank %d: step %s recomposed: median %.3f ms over %d steps (recorded %.3f ms); "
          "collectives: %s" % (plan["rank"], plan["step"], med / 1e6, len(times),
                               plan["step_ns"] / 1e6, out["collectives"]))
    for f in out["failed"]:
        print("  not run: %s x%d (%.3f ms of GPU time): %s"
              % (f["op"], f["count"], f["gpu_ns"] / 1e6, f["reason"]))
    for f in out["skipped"]:
        print("  skipped on %s: %s x%d: %s" % (args.device, f["op"], f["count"], f["reason"]))


def grouped(items, why_of):
    """(item, why) pairs grouped by op and reason: count and GPU time, most time first."""
    out = {}
    for i, why in why_of:
        key = (items[i][1], why)
        n, ns = out.get(key, (0, 0))
        out[key] = (n + 1, ns + items[i][3])
    return [{"op": k[0], "reason": k[1], "count": v[0], "gpu_ns": v[1]}
            for k, v in sorted(out.items(), key=lambda kv: (-kv[1][1], kv[0]))]


def main(argv):
    args = parse_args(argv)
    try:
        if args.check:
            return check_all(args)
        return run(args)
    except PlanError as e:
        print("bench.py: error: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
