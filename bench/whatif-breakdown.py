#!/usr/bin/env python3
"""Where the single-node what-if error comes from: each estimated step split into parts.

    bench/whatif-breakdown.py ROWS.tsv [--orrery BIN] [--whatif DIR] [--costs-trace T]
                              [--estimate-args "ARGS"] [--worst N] [--jobs N]
                              [--all-kinds] [--rows-of FILE] [--families]
                              [--parts JSON]

ROWS.tsv is what `bench/whatif-accuracy.sh --out FILE` wrote (every row, its prediction
and split), with the same --launch-us and ESTIMATE_ARGS given here (the launch time is
read from nothing: pass it in --estimate-args, e.g. "--launch-us 70").  Each row of
vtrain-a100-single-node.csv is estimated again with --timeline (options from
bench/whatif-rows.sh, the costs fitted on the same trace), and the first stage's
predicted step is split into parts that add up to it:

  gemm        GEMM kernels but attention's (QKV, projection, FC1, FC2, logits: all passes)
  attention   unfused attention: the scores' and context's batched GEMMs, the softmax
              (fused, or PyTorch's kernels), the attention dropout
  elementwise every other compute kernel (norms, activations, bias-dropout-adds, casts,
              cross-entropy, embedding, optimizer, ...)
  tp          the TP stream's collectives, where no compute kernel runs
  dp, pp      the DP stream's, the point-to-point streams' (the same)
  host        no GPU work at all: the GPU waits for the launch thread (and the syncs)

Prints Markdown:
  1. per what-if kind (tp, micro_batch, hidden; every kind with --all-kinds), over the
     pairs of held-out rows (both odd data rows) that differ in that field alone: the
     ratio error as now, and with one part's time scaled by the factor that fits the
     fit rows best (least squares of |measured / predicted - 1| over the even rows,
     each part alone): the part whose scaling removes most of a kind's error is where
     that kind's error comes from;
  2. the same pairs split into those with a launch-bound row (host over 10 % of its
     step) and the others, with their mean ratio errors;
  3. the N worst held-out pairs of each kind (default 3) with their parts.
With --families, instead: per family of the pp 1 rows (one hidden size, TP and
micro-batch), the slope of the measured step and of each part over layers x micro-batches
per step (a least-squares line, so a fixed cost per step is left out): ms per layer and
micro-batch, where the model's parts can be set beside what was measured.
With --parts JSON the parts are read from JSON (a row missing there is estimated and
the file written again): a second look at the same rows takes seconds.
Nothing is fitted that an estimate uses: the factors are a diagnosis, not a model.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

PARTS = ("gemm", "attention", "elementwise", "tp", "dp", "pp", "host")
KINDS = ("tp", "pp", "dp", "micro_batch", "global_batch", "layers", "hidden")
# stream ids of a synthesized trace (estimator/synth/synth-emit.c: 7 + enum sy_stream)
STREAM_PART = {7: "compute", 8: "tp", 9: "dp", 10: "dp", 11: "pp", 12: "pp", 13: "pp", 14: "pp"}
ATTENTION = ("attention_scores", "attention_context", "softmax", "attention_dropout",
             "flash_attention")


def kernel_part(name):
    short = name.split("::", 1)[-1]
    if any(w in short for w in ATTENTION):
        return "attention"
    if short.startswith("gemm<"):
        return "gemm"
    return "elementwise"


def union(spans):
    spans.sort()
    out = []
    for a, b in spans:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(spans):
    return sum(b - a for a, b in spans)


def minus(spans, cover):
    """Length of the union `spans` outside the union `cover` (both sorted, disjoint)."""
    total, k = 0.0, 0
    for a, b in spans:
        cur = a
        while k < len(cover) and cover[k][1] <= cur:
            k += 1
        j = k
        while j < len(cover) and cover[j][0] < b:
            if cover[j][0] > cur:
                total += cover[j][0] - cur
            cur = max(cur, cover[j][1])
            j += 1
        if cur < b:
            total += b - cur
    return total


def parts_of(timeline):
    """The first stage's step (ms) split into PARTS: the synthesized trace as placed
    (the timeline's "measured" rank, which its replay reproduces within 0.5 %)."""
    with open(timeline) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    pid = None
    streams = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "process_name" and \
                e["args"]["name"] == "rank 0 measured":
            pid = e["pid"]
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == pid:
            words = e["args"]["name"].split()
            if words[0] == "stream":
                streams[e["tid"]] = int(words[1])
    step = None
    kern = {p: 0.0 for p in PARTS}
    spans = {"compute": [], "tp": [], "dp": [], "pp": []}
    for e in ev:
        if e.get("ph") != "X" or e.get("pid") != pid:
            continue
        if e.get("cat") == "annotation" and e["name"].startswith("ProfilerStep"):
            step = (e["ts"], e["ts"] + e["dur"])
            continue
        if e["tid"] not in streams or e.get("cat") not in ("gpu", "comm", "kernel"):
            continue
        part = STREAM_PART.get(streams[e["tid"]], "compute")
        span = (e["ts"], e["ts"] + e["dur"])
        spans[part].append(span)
        if part == "compute":
            kern[kernel_part(e["name"])] += e["dur"]
    out = dict(kern)
    cover = union(spans["compute"])
    for p in ("tp", "dp", "pp"):
        mine = union(spans[p])
        out[p] = minus(mine, cover)
        cover = union(cover + mine)
    out["host"] = (step[1] - step[0]) - length(cover)
    out["step"] = step[1] - step[0]
    return {k: v / 1e3 for k, v in out.items()}


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def estimate_parts(orrery, args_file, extra, work, n):
    with open(args_file) as f:
        args = [l.rstrip("\n") for l in f if l.strip()]
    tl = os.path.join(work, "tl-%d.json" % n)
    run([orrery, "estimate"] + args + extra + ["--timeline", tl])
    p = parts_of(tl)
    os.unlink(tl)
    return p


HOST_BOUND = 10  # percent of the step


def host_bound(r):
    return r["parts"]["host"] > HOST_BOUND / 100 * r["parts"]["step"]


def pairs_of(rows, kind):
    """Pairs (a, b) of rows differing in `kind` alone (a: its smaller value)."""
    groups = {}
    for r in rows:
        key = tuple(r[k] for k in KINDS if k != kind)
        groups.setdefault(key, []).append(r)
    out = []
    for g in groups.values():
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                a, b = g[i], g[j]
                if a[kind] == b[kind]:
                    continue
                if a[kind] > b[kind]:
                    a, b = b, a
                out.append((a, b))
    return out


def predicted(r, scale):
    return r["parts"]["step"] + sum((scale.get(p, 1) - 1) * r["parts"][p] for p in PARTS)


def ratio_error(a, b, scale):
    return (predicted(a, scale) / predicted(b, scale)) / (a["measured"] / b["measured"]) - 1


def best_factor(rows, part):
    """The factor x of one part minimizing sum (pred(x)/meas - 1)^2 over rows (closed form)."""
    num = den = 0.0
    for r in rows:
        c = r["parts"][part] / r["measured"]
        resid = r["parts"]["step"] / r["measured"] - 1
        num += c * resid
        den += c * c
    return 1 - num / den if den > 0 else 1.0


def stats(v):
    v = sorted(abs(x) for x in v)
    if not v:
        return 0, float("nan"), float("nan")
    p90 = v[max(0, -(-9 * len(v) // 10) - 1)]
    return len(v), 100 * sum(v) / len(v), 100 * p90


def each_row(rows):
    """Every row: its layout, measured and predicted ms, error and parts."""
    print("| row | gpus | tp x pp x dp | mb | gb | measured ms | predicted ms | error | " +
          " | ".join(PARTS) + " |")
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(PARTS))
    for r in rows:
        print("| %s | %d | %d x %d x %d | %d | %d | %.0f | %.0f | %+.1f %% | %s |" % (
            r["id"].split(":")[-1], r["tp"] * r["pp"] * r["dp"], r["tp"], r["pp"], r["dp"],
            r["micro_batch"], r["global_batch"], r["measured"], r["predicted"],
            100 * (r["predicted"] / r["measured"] - 1),
            " | ".join("%.0f" % r["parts"][p] for p in PARTS)))


def slope(xs, ys):
    """The least-squares slope of ys over xs (None with fewer than 2 distinct xs)."""
    mx = sum(xs) / len(xs)
    den = sum((x - mx) ** 2 for x in xs)
    if den == 0:
        return None
    my = sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den


def layer_microbatches(r):
    return r["layers"] * r["global_batch"] // (r["micro_batch"] * r["dp"])


def families(rows):
    """Per (hidden, tp, micro_batch) of the pp 1 rows: slopes over layers x micro-batches."""
    groups = {}
    for r in rows:
        if r["pp"] == 1:
            groups.setdefault((r["hidden"], r["tp"], r["micro_batch"]), []).append(r)
    print("ms per layer and micro-batch: the slope over layers x micro-batches per step of")
    print("each family's pp 1 rows.")
    print()
    print("| hidden, tp, micro-batch | rows | measured | step | " + " | ".join(PARTS) + " |")
    print("|---|---|---|---|" + "---|" * len(PARTS))
    for key in sorted(groups):
        g = groups[key]
        xs = [layer_microbatches(r) for r in g]
        m = slope(xs, [r["measured"] for r in g])
        if m is None:
            continue
        cells = [slope(xs, [r["parts"][p] for r in g]) for p in ("step",) + PARTS]
        print("| %d, %d, %d | %d | %.2f | %s |" % (key[0], key[1], key[2], len(g), m,
                                                 " | ".join("%.2f" % (c if abs(c) >= 0.005 else 0)
                                                            for c in cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows")
    ap.add_argument("--orrery", default="build/cli/orrery")
    ap.add_argument("--whatif", default="../shared/whatif")
    ap.add_argument("--costs-trace", default="../shared/traces/kineto/astrasim-megatron-tp8")
    ap.add_argument("--estimate-args", default="--launch-us 70")
    ap.add_argument("--worst", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--all-kinds", action="store_true")
    ap.add_argument("--parts", metavar="JSON",
                    help="read the rows' parts from JSON if it exists, else write them there")
    ap.add_argument("--rows-of", metavar="FILE",
                    help="instead: every row of this what-if file (e.g. "
                    "vtrain-a100-multi-node-dev.csv) with its layout, error and parts")
    ap.add_argument("--families", action="store_true",
                    help="instead: per family of pp 1 single-node rows, ms per layer and "
                    "micro-batch measured and by part")
    o = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    extra = o.estimate_args.split()

    with open(o.rows) as f:
        head = f.readline().rstrip("\n").split("\t")
        table = [dict(zip(head, l.rstrip("\n").split("\t"))) for l in f]
    with tempfile.TemporaryDirectory() as work:
        run(["bash", os.path.join(here, "whatif-rows.sh"), o.orrery, o.whatif,
             o.costs_trace, "0", work])
        rows = []
        for n, r in enumerate(table, 1):
            want = o.rows_of or "vtrain-a100-single-node"
            if not r["source"].startswith(want) or r["skipped"] != "-" or r["predicted"] == "-":
                continue
            if o.families and int(r["pp"]) != 1:
                continue
            rows.append({"n": n, "id": r["id"], "split": r["split"],
                         "measured": float(r["measured"]), "predicted": float(r["predicted"]),
                         **{k: int(r[k]) for k in KINDS}})
        saved = {}
        if o.parts and os.path.exists(o.parts):
            with open(o.parts) as f:
                saved = json.load(f)
        todo = [r for r in rows if str(r["n"]) not in saved]
        with ThreadPoolExecutor(max_workers=o.jobs) as ex:
            got = ex.map(lambda r: estimate_parts(o.orrery, os.path.join(work, "args", str(r["n"])),
                                                  extra, work, r["n"]), todo)
            for r, p in zip(todo, got):
                saved[str(r["n"])] = p
        for r in rows:
            r["parts"] = saved[str(r["n"])]
        if o.parts and todo:
            with open(o.parts, "w") as f:
                json.dump(saved, f)
    bad = [r["id"] for r in rows if abs(r["parts"]["step"] / r["predicted"] - 1) > 1e-3]
    if bad:
        sys.exit("bench/whatif-breakdown.py: the timelines' steps are not ROWS.tsv's "
                 "predictions (other options?): %s" % ", ".join(bad[:3]))
    if o.rows_of:
        each_row(rows)
        return
    if o.families:
        families(rows)
        return
    fit = [r for r in rows if r["split"] == "fit"]
    factor = {p: best_factor(fit, p) for p in PARTS}
    mean = {p: sum(r["parts"][p] for r in rows) / len(rows) for p in PARTS + ("step",)}

    print("## The first stage's estimated step, by part (vTrain single-node, %d rows)" % len(rows))
    print()
    print("Mean ms per row, its share of the step, and the factor on that part alone that fits")
    print("the %d fit rows best (least squares of predicted/measured - 1)." % len(fit))
    print()
    print("| part | mean ms | share | best factor alone |")
    print("|---|---|---|---|")
    for p in PARTS:
        print("| %s | %.2f | %.1f %% | %.2f |" % (p, mean[p], 100 * mean[p] / mean["step"], factor[p]))
    print()
    kinds = KINDS if o.all_kinds else ("tp", "micro_batch", "hidden")
    held = [r for r in rows if r["split"] == "held-out"]
    print("## Ratio error per kind over held-out pairs, one part scaled by its factor")
    print()
    print("| kind | pairs | now: mean | p90 | " + " | ".join("x %s" % p for p in PARTS) + " |")
    print("|---|---|---|---|" + "---|" * len(PARTS))
    for kind in kinds:
        pairs = pairs_of(held, kind)
        n, m, p90 = stats([ratio_error(a, b, {}) for a, b in pairs])
        cells = []
        for p in PARTS:
            _, mp, _ = stats([ratio_error(a, b, {p: factor[p]}) for a, b in pairs])
            cells.append("%.2f %%" % mp)
        print("| %s | %d | %.2f %% | %.2f %% | %s |" % (kind, n, m, p90, " | ".join(cells)))
    print()
    print("## Held-out pairs with a launch-bound row, and the others")
    print()
    print("A row is launch-bound where its host part (the GPU waiting for launches) is over")
    print("%d %% of its step." % HOST_BOUND)
    print()
    print("| kind | pairs with a launch-bound row | their mean | pairs of GPU-bound rows | their mean |")
    print("|---|---|---|---|---|")
    for kind in kinds:
        pairs = pairs_of(held, kind)
        bound = [ab for ab in pairs if any(host_bound(r) for r in ab)]
        other = [ab for ab in pairs if not any(host_bound(r) for r in ab)]
        nb, mb, _ = stats([ratio_error(a, b, {}) for a, b in bound])
        no, mo, _ = stats([ratio_error(a, b, {}) for a, b in other])
        print("| %s | %d | %.2f %% | %d | %.2f %% |" % (kind, nb, mb, no, mo))
    print()
    print("## The worst held-out pairs of each kind")
    print()
    print("| kind | rows a -> b | measured b/a | predicted b/a | error | " +
          " | ".join("%s ms a -> b" % p for p in PARTS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(PARTS))
    for kind in kinds:
        pairs = sorted(pairs_of(held, kind), key=lambda ab: -abs(ratio_error(ab[0], ab[1], {})))
        for a, b in pairs[:o.worst]:
            cells = " | ".join("%.1f -> %.1f" % (a["parts"][p], b["parts"][p]) for p in PARTS)
            print("| %s | %s -> %s (%s %d -> %d) | %.3f | %.3f | %+.1f %% | %s |" % (
                kind, a["id"].split(":")[-1], b["id"].split(":")[-1], kind, a[kind], b[kind],
                b["measured"] / a["measured"], b["predicted"] / a["predicted"],
                100 * ratio_error(a, b, {}), cells))


if __name__ == "__main__":
    main()
