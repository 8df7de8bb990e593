#!/usr/bin/env python3
"""What bench.py may call (run-compose.sh hostile, plans):

    check-bench-safe.py evil BENCH.PY PLAN.json
        hand-made hostile plans, each from the valid PLAN.json, are refused by
        `bench.py --check` (exit 1, one line naming the problem); bench.py's resolve()
        refuses what is not a torch operator (a stub torch.ops with load_library); and
        3000 random one-value changes of PLAN.json (seeded: the same every run) are each
        refused with a PlanError, never another exception, or accepted only when safe
    check-bench-safe.py plans DIR...
        for every benchmark directory: `bench.py --check` accepts the plans only if every
        op is NAMESPACE::NAME of identifiers in aten, c10d or _c10d_functional and every
        string argument is a device or a mode (checked here, apart from bench.py's code)
"""
import copy
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import types

ALLOWED = ("aten", "c10d", "_c10d_functional")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
SAFE_STRING = re.compile(r"^(cuda(:[0-9]+)?|cpu|[a-z]+(-[a-z]+)?|[LUr]|[A-Za-z., ]*->[A-Za-z. ]*)\Z")


def check(bench, d, *extra):
    r = subprocess.run([sys.executable, bench, "--check", "--dir", d] + list(extra),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stderr


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, dict) and list(v) == ["f"] and v["f"] in ("nan", "inf", "-inf"):
        return  # a float JSON has no number for, not a string bench.py passes
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)


def safe(plan):
    """Why the plan could make bench.py call something it must not, or None."""
    for it in plan["items"]:
        if it[0] != "op":
            continue
        name = it[1]
        ns, _, op = name.partition("::")
        if not (IDENT.match(ns) and IDENT.match(op)) or ns not in ALLOWED:
            return "op %r" % name
        if (op.startswith("__") and ns != "aten") or op in ("from_file", "save", "load"):
            return "op %r" % name
        if it[4] is not None and not (IDENT.match(it[4]) and not it[4].startswith("__")):
            return "overload %r" % it[4]
        for s in strings(it[5]):
            if "/" in s or not SAFE_STRING.match(s):
                return "string %r given to %s" % (s, name)
    return None


def plans(dirs):
    accepted = 0
    for d in dirs:
        rc, err = check(os.path.join(d, "bench.py"), d)
        paths = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith("rank-")]
        why = None
        for p in paths:
            try:
                why = why or safe(json.load(open(p)))
            except ValueError as e:
                why = why or "not JSON: %s" % e
        if rc == 0 and why:
            sys.exit("%s: bench.py --check accepts a plan with %s" % (d, why))
        if rc == 0:
            accepted += 1
        elif len(err.strip().splitlines()) != 1 or not err.startswith("bench.py: error: "):
            sys.exit("%s: bench.py --check: rc %d, not one line: %r" % (d, rc, err))
    print("%d of %d benchmarks accepted, every op allowed" % (accepted, len(dirs)))


def mutations(plan):
    """(name, plan): hostile changes to a valid plan, each to be refused."""
    op = next(i for i, it in enumerate(plan["items"]) if it[0] == "op")

    def edit(f):
        p = copy.deepcopy(plan)
        f(p, p["items"][op])
        return p

    yield "load_library op", edit(lambda p, it: p["items"].append(
        ["op", "load_library::__call__", None, 0, None, ["/tmp/evil.so"], []]))
    yield "dunder namespace", edit(lambda p, it: it.__setitem__(1, "__builtins__::open"))
    yield "dunder outside aten", edit(lambda p, it: it.__setitem__(1, "c10d::__call__"))
    yield "ops namespace attribute", edit(lambda p, it: it.__setitem__(1, "import_module::x"))
    yield "three parts", edit(lambda p, it: it.__setitem__(1, "aten::add::x"))
    yield "namespace not allowed", edit(lambda p, it: it.__setitem__(1, "fbgemm::fused"))
    yield "file operator", edit(lambda p, it: it.__setitem__(1, "aten::from_file"))
    yield "overload injection", edit(lambda p, it: it.__setitem__(4, 'default"],["x'))
    yield "dunder overload", edit(lambda p, it: it.__setitem__(4, "__call__"))
    yield "path argument", edit(lambda p, it: it[5].append("/etc/passwd"))
    yield "word argument", edit(lambda p, it: it[5].append("evil"))
    yield "code argument", edit(lambda p, it: it[5].append("__import__('os')"))
    yield "object argument", edit(lambda p, it: it[5].append({"t": 0, "x": 1}))
    yield "tensor out of range", edit(lambda p, it: it[5].append({"t": len(p["tensors"])}))
    yield "extra field", edit(lambda p, it: p.__setitem__("pwned", ["y"]))
    yield "item of unknown kind", edit(lambda p, it: p["items"].append(["exec", "x"]))
    yield "short item", edit(lambda p, it: p["items"].append(["op", "aten::add"]))
    yield "huge storage", edit(lambda p, it: p["storages"][0].__setitem__(0, 1 << 63))
    yield "storages over 2^42", edit(lambda p, it: p["storages"].extend(
        [[1 << 40, "cuda", 1]] * 5))
    yield "negative dim", edit(lambda p, it: p["tensors"][0][2].__setitem__(0, -5)
                               if p["tensors"][0][2] else p["tensors"][0].__setitem__(2, [-5]))
    yield "huge dim", edit(lambda p, it: p["tensors"][0].__setitem__(2, [(1 << 63) - 1]))
    yield "too many dims", edit(lambda p, it: p["tensors"][0].__setitem__(2, [1] * 65)
                                or p["tensors"][0].__setitem__(3, None))
    yield "negative offset", edit(lambda p, it: p["tensors"][0].__setitem__(1, -1))
    yield "dtype attribute", edit(lambda p, it: p["tensors"][0].__setitem__(4, "load"))
    yield "device", edit(lambda p, it: p["storages"][0].__setitem__(1, "/dev/mem"))
    yield "string steps", edit(lambda p, it: p.__setitem__("steps", "20"))


class StubOps(types.ModuleType):
    """torch.ops as PyTorch's _Ops: any namespace; load_library records its call."""
    called = []

    def __init__(self):
        super().__init__("torch.ops")

    def __getattr__(self, name):
        return types.SimpleNamespace()

    def load_library(self, path):
        StubOps.called.append(path)


def stub_resolve(bench):
    class Packet:
        pass

    class Overload:
        pass

    ops = StubOps()
    torch = types.SimpleNamespace(ops=ops, _ops=types.SimpleNamespace(
        OpOverloadPacket=Packet, OpOverload=Overload))
    for name, ov in (("load_library::__call__", None), ("aten::__class__", None),
                     ("aten::__init__", None), ("import_module::__call__", None),
                     ("aten::add", "__call__"), ("aten::add", 'x"]')):
        got = bench.resolve(torch, name, ov)
        if not isinstance(got, str):
            sys.exit("resolve(%r, %r) gave %r, not a refusal" % (name, ov, got))
    if StubOps.called:
        sys.exit("load_library ran: %r" % StubOps.called)


HOSTILE = [None, -1, 1 << 70, 1.5, float("nan"), True, "x", [], {}, [[]], [None], {"t": 0},
           {"f": 1}, ["op"], "cuda", "/etc/passwd", "load_library::__call__", "aten::__init__",
           "fbgemm::fused", 'x"],["y', "__call__", "float32", ["op", "aten::add", None, 0, None,
                                                                  ["/tmp/evil.so"], []]]


def sweep(mod, plan, n=3000):
    """n plans, each PLAN with one value replaced: refused (PlanError) or safe."""
    def paths(v, p=()):
        if p:
            yield p
        if isinstance(v, list):
            for i, x in enumerate(v):
                yield from paths(x, p + (i,))
        elif isinstance(v, dict):
            for k, x in v.items():
                yield from paths(x, p + (k,))
    by_depth = {}
    for p in paths(plan):
        by_depth.setdefault(len(p), []).append(p)
    rng = random.Random(31)
    accepted = 0
    for _ in range(n):
        p = rng.choice(by_depth[rng.choice(sorted(by_depth))])
        q = copy.deepcopy(plan)
        o = q
        for k in p[:-1]:
            o = o[k]
        o[p[-1]] = copy.deepcopy(rng.choice(HOSTILE))
        try:
            mod.check_plan("plan", q)
        except mod.PlanError:
            continue
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            sys.exit("%r changed: check_plan raised %s: %s" % (p, type(e).__name__, e))
        why = safe(q)
        if why:
            sys.exit("%r changed: check_plan accepts a plan with %s" % (p, why))
        accepted += 1
    return accepted


def evil(bench, plan_path):
    plan = json.load(open(plan_path))
    rc, err = check(bench, os.path.dirname(plan_path))
    if rc:
        sys.exit("the valid plan is refused: " + err)
    n = 0
    with tempfile.TemporaryDirectory() as d:
        for name, p in mutations(plan):
            with open(os.path.join(d, "rank-0.json"), "w") as f:
                json.dump(p, f)
            rc, err = check(bench, d)
            if rc != 1 or len(err.strip().splitlines()) != 1 \
                    or not err.startswith("bench.py: error: "):
                sys.exit("%s: bench.py --check gave rc %d: %r" % (name, rc, err))
            n += 1
        # the namespace a user allows explicitly is accepted
        p = copy.deepcopy(plan)
        next(it for it in p["items"] if it[0] == "op")[1] = "fbgemm::fused"
        with open(os.path.join(d, "rank-0.json"), "w") as f:
            json.dump(p, f)
        rc, err = check(bench, d, "--allow-namespace", "fbgemm")
        if rc:
            sys.exit("--allow-namespace fbgemm: refused: " + err)
    spec = importlib.util.spec_from_file_location("bench", bench)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    stub_resolve(mod)
    kept = sweep(mod, plan)
    print("%d hostile plans refused; of 3000 changed plans %d accepted, each safe" % (n, kept))


def main(argv):
    if argv[0] == "evil":
        evil(argv[1], argv[2])
    elif argv[0] == "plans":
        plans(argv[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
