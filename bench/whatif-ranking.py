#!/usr/bin/python3
"""How well `orrery whatif` ranks layouts against measured runs (../shared/whatif).

    bench/whatif-ranking.py [--orrery PATH] [--shared DIR] [--jobs N] [--launch-us US]
                            [--worst K] [--markdown]

The rows of vtrain-a100-single-node.csv, vtrain-a100-multi-node-dev.csv and
published-dev.csv are put in orrery estimate's terms by bench/whatif-rows.sh, the
mapping and A100 cost set-up of bench/whatif-accuracy.sh (whose help states the
settings), so that both benchmarks judge the same predictions.  A group is the rows of
one source and metric, at one GPU count, whose estimate options are the same but for
the layout: --tp, --pp, --dp, --cp, --vpp, --micro-batch and --recompute (so one model,
GPU, global batch, precision, attention, FSDP or not, costs).

Each group gets one `orrery whatif --gpus N --top 0 --format=csv` with those options,
its lists restricted to the values its rows take, sequence parallelism and the
distributed optimizer off (orrery estimate's defaults, which the accuracy harness
keeps), and TP allowed across nodes (the measured runs did it).  Every row is matched
to whatif's configuration of its layout; one whatif calls infeasible (memory, ...) is
counted and left out.  A group with 3 or more matched rows is evaluated:

  rho        Spearman's rank correlation of predicted and measured times (average ranks
             for ties); a throughput (tokens/s/GPU, TFLOP/s/GPU, MFU) is a time's
             inverse at one model, GPU count and global batch
  top 3      whether the measured fastest row is among the 3 fastest predicted of the
             group's matched rows (its predicted place: 1 + the rows predicted faster)
  regret     the measured time of the predicted fastest row over the measured best - 1:
             what following the ranking costs

Prints per source the groups, mean and median rho, the share with the measured best in
the top 3 and the mean regret, then every source together against the goals (mean rho
>= 0.9, top 3 for >= 90 % of groups), the K groups of lowest rho, the infeasible rows
and the rows that could not be expressed; --markdown prints them as Markdown tables
(for docs/accuracy.md).

  --orrery PATH    the binary (default build/cli/orrery of this repository); a copy is
                   taken, so that a rebuild during the run changes no prediction
  --shared DIR     the shared data (default ../shared of this repository): whatif/ and
                   the trace the costs are fitted on, traces/kineto/astrasim-megatron-tp8
  --jobs N         groups run at once (default: every core; each whatif on one thread)
  --launch-us US   the launch thread's time per kernel (default 70: the value
                   bench/whatif-accuracy.sh fits on the even vTrain single-node rows;
                   its fit runs ~20 x 720 estimates, minutes this benchmark does not
                   repeat: refit there and pass its value when the estimator changes)
  --worst K        groups listed as the worst (default 5)
  --markdown       Markdown tables
"""
import argparse
import collections
import concurrent.futures
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

from orrery_bench import copy_binary

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# rows.tsv of bench/whatif-rows.sh, in order.
FIELDS = ("source id gpus tp pp dp cp vpp micro_batch global_batch layers hidden heads "
          "seq recompute precision gpu metric unit measured kv_heads ffn vocab attention "
          "flags costs skipped").split()
# The estimate options a group's rows may differ in: whatif sweeps them (--dp follows
# from --gpus).
LAYOUT_OPTIONS = ("--tp", "--pp", "--dp", "--cp", "--vpp", "--micro-batch", "--recompute")
# The CSV columns of whatif (and fields of rows.tsv) that name a layout.
LAYOUT_FIELDS = ("tp", "pp", "dp", "cp", "vpp", "micro_batch", "recompute")
LISTS = (("--tp", "tp"), ("--pp", "pp"), ("--cp", "cp"), ("--vpp", "vpp"),
         ("--micro-batch", "micro_batch"), ("--recompute", "recompute"))
TOP = 3
MIN_ROWS = 3
GOAL_RHO = 0.9
GOAL_TOP = 0.9


def parse_args():
    # The options are described in the module's text, which --help prints.
    p = argparse.ArgumentParser(usage=argparse.SUPPRESS, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--orrery", metavar="PATH", default=os.path.join(REPO, "build/cli/orrery"))
    p.add_argument("--shared", metavar="DIR", default=os.path.join(REPO, "../shared"))
    p.add_argument("--jobs", metavar="N", type=int, default=os.cpu_count() or 1)
    p.add_argument("--launch-us", metavar="US", default="70")
    p.add_argument("--worst", metavar="K", type=int, default=5)
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args()
    if a.jobs < 1:
        p.error("--jobs must be at least 1")
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", a.launch_us):
        p.error("--launch-us '%s' is not a number of microseconds" % a.launch_us)
    return a


def prepare(orrery, shared, work):
    """The rows (dicts of FIELDS, with their estimate options as 'args' where they can
    be expressed), from bench/whatif-rows.sh run in WORK."""
    subprocess.run([os.path.join(REPO, "bench/whatif-rows.sh"), orrery,
                    os.path.join(shared, "whatif"),
                    os.path.join(shared, "traces/kineto/astrasim-megatron-tp8"), "0", work],
                   check=True, stdout=subprocess.DEVNULL)
    rows = []
    with open(os.path.join(work, "rows.tsv")) as f:
        for n, line in enumerate(f, 1):
            row = dict(zip(FIELDS, line.rstrip("\n").split("\t")))
            if row["skipped"] == "-":
                with open(os.path.join(work, "args", str(n))) as a:
                    row["args"] = a.read().split("\n")[:-1]
            rows.append(row)
    return rows


def fixed_options(args):
    """ARGS without the layout options and their values."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in LAYOUT_OPTIONS:
            skip = True
        else:
            out.append(a)
    return out


def layout(d):
    """A layout's key, from a row of rows.tsv or of whatif's CSV."""
    return tuple(d[k] if k == "recompute" else int(d[k]) for k in LAYOUT_FIELDS)


def groups_of(rows):
    """The expressible rows grouped by everything but the layout, in file order."""
    groups = {}
    for r in rows:
        if "args" in r:
            key = (r["source"], r["metric"], r["unit"], r["gpus"], tuple(fixed_options(r["args"])))
            groups.setdefault(key, []).append(r)
    return list(groups.values())


def whatif_command(orrery, group, launch_us):
    """One whatif over GROUP's layouts: its rows' fixed options, lists of their values."""
    first = group[0]
    cmd = [orrery, "whatif", *fixed_options(first["args"]), "--launch-us", launch_us,
           "--gpus", first["gpus"]]
    for option, field in LISTS:
        values = sorted({r[field] for r in group}, key=lambda v: (len(v), v))
        cmd += [option, ",".join(values)]
    return cmd + ["--sequence-parallel", "off", "--distributed-optimizer", "off",
                  "--allow-cross-node-tp", "--top", "0", "--format=csv", "--jobs", "1",
                  "--no-progress"]


def run_group(orrery, group, launch_us):
    """whatif's configurations of GROUP by layout, or its error message."""
    p = subprocess.run(whatif_command(orrery, group, launch_us), capture_output=True, text=True)
    if p.returncode != 0:
        return p.stderr.strip().split("\n")[0] or "exit status %d" % p.returncode
    return {layout(c): c for c in csv.DictReader(p.stdout.splitlines())}


def average_ranks(values):
    """1-based ranks of VALUES, tied values sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Spearman's rho (Pearson's of the average ranks); None when a side is all ties."""
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else None


def measured_time(row):
    """The row's measurement as a time: a throughput is a time's inverse within a group."""
    v = float(row["measured"])
    return v if row["metric"] == "iteration_time" else 1 / v


def evaluate(group, configs):
    """The group's result: its matched and infeasible rows, then rho, the measured best's
    predicted place and the regret, or why it is skipped."""
    res = {"group": group, "infeasible": [], "missing": [], "matched": 0, "rho": None}
    if isinstance(configs, str):
        res["error"] = configs
        res["skip"] = "whatif failed (its rows below)"
        return res
    matched = []
    for r in group:
        c = configs.get(layout(r))
        if c is None:
            res["missing"].append(r)
        elif c["feasible"] != "1":
            res["infeasible"].append((r, c["why"]))
        else:
            matched.append((float(c["iteration_ns"]), measured_time(r), r))
    res["matched"] = len(matched)
    if len(matched) < MIN_ROWS:
        res["skip"] = "fewer than %d matched rows" % MIN_ROWS
        return res
    pred = [p for p, _, _ in matched]
    meas = [m for _, m, _ in matched]
    res["rho"] = spearman(pred, meas)
    if res["rho"] is None:
        res["skip"] = "every predicted or every measured time equal"
        return res
    best = min(range(len(meas)), key=meas.__getitem__)
    chosen = min(range(len(pred)), key=pred.__getitem__)
    res["best"], res["chosen"] = matched[best][2], matched[chosen][2]
    res["best_place"] = 1 + sum(p < pred[best] for p in pred)
    res["regret"] = meas[chosen] / meas[best] - 1
    return res


def evaluated(results):
    return [r for r in results if "skip" not in r]


def in_top(ev):
    """How many of the evaluated groups EV have their measured best in the top 3."""
    return sum(r["best_place"] <= TOP for r in ev)


def goals(results):
    """Mean rho and the share of groups with the measured best in the top 3, over RESULTS'
    evaluated groups (None without one)."""
    ev = evaluated(results)
    if not ev:
        return None, None
    return statistics.fmean(r["rho"] for r in ev), in_top(ev) / len(ev)


def summary_row(name, results):
    """Groups, evaluated, skipped, rows, infeasible, mean rho, median rho, top 3, regret."""
    ev = evaluated(results)
    head = [name, len(results), len(ev), len(results) - len(ev),
            sum(len(r["group"]) for r in results), sum(len(r["infeasible"]) for r in results)]
    if not ev:
        return head + ["-"] * 4
    rhos = [r["rho"] for r in ev]
    top = in_top(ev)
    return head + ["%.3f" % statistics.fmean(rhos), "%.3f" % statistics.median(rhos),
                   "%d/%d (%.0f %%)" % (top, len(ev), 100 * top / len(ev)),
                   "%.1f %%" % (100 * statistics.fmean(r["regret"] for r in ev))]


def describe(group):
    r = group[0]
    return "%s GPUs, %s layers, hidden %s, global batch %s (%s)" % (
        r["gpus"], r["layers"], r["hidden"], r["global_batch"], r["id"])


def config_name(r):
    return "TP%s PP%s DP%s CP%s VPP%s mb%s %s" % tuple(r[k] for k in LAYOUT_FIELDS)


def table(header, rows, markdown):
    """Prints a table: Markdown, or plain columns aligned on their widest cell."""
    rows = [[str(c) for c in r] for r in rows]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    else:
        widths = [max(len(c) for c in col) for col in zip(header, *rows)]
        for r in [header] + rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print()


def heading(text, markdown):
    print(("## " if markdown else "") + text)
    print()


def report(args, rows, results):
    print(("# " if args.markdown else "") + "Layout ranking of orrery whatif against measured runs")
    print()
    print("- command: `%s`" % " ".join(["bench/whatif-ranking.py"] + sys.argv[1:]))
    print("- data: %s; the row mapping and costs of bench/whatif-accuracy.sh"
          " (bench/whatif-rows.sh); `--launch-us %s`"
          % (os.path.normpath(os.path.join(args.shared, "whatif")), args.launch_us))
    print("- a group: the rows of one source, metric and GPU count whose other estimate"
          " options are equal; evaluated with %d or more rows whatif calls feasible" % MIN_ROWS)
    print()
    per_source(rows, results, args.markdown)
    heading("Goals (every source)", args.markdown)
    mean, top = goals(results)
    table(["goal", "value", "met"],
          [["mean rho >= %.1f" % GOAL_RHO, "-" if mean is None else "%.3f" % mean,
            "yes" if mean is not None and mean >= GOAL_RHO else "no"],
           ["measured best in the predicted top %d for >= %.0f %% of groups"
            % (TOP, 100 * GOAL_TOP), "-" if top is None else "%.1f %%" % (100 * top),
            "yes" if top is not None and top >= GOAL_TOP else "no"]], args.markdown)
    heading("Worst groups (lowest rho)", args.markdown)
    table(["source", "group", "rows", "rho", "measured best", "its predicted place",
           "predicted best", "regret"],
          [[r["group"][0]["source"], describe(r["group"]), r["matched"], "%.3f" % r["rho"],
            config_name(r["best"]), r["best_place"], config_name(r["chosen"]),
            "%.1f %%" % (100 * r["regret"])]
           for r in sorted(evaluated(results), key=lambda r: r["rho"])[:args.worst]],
          args.markdown)
    left_out(rows, results, args.markdown)


def per_source(rows, results, markdown):
    heading("Per source", markdown)
    sources = dict.fromkeys(r["source"] for r in rows)
    lines = []
    for s in sources:
        mine = [g for g in results if g["group"][0]["source"] == s]
        if mine:
            lines.append(summary_row(s, mine))
    table(["source", "groups", "evaluated", "skipped", "rows", "infeasible rows", "mean rho",
           "median rho", "best in top %d" % TOP, "mean regret"],
          lines + [summary_row("all", results)], markdown)
    skips = collections.Counter(r["skip"] for r in results if "skip" in r)
    print("Skipped groups: %s." % ("; ".join("%d, %s" % (n, why) for why, n in skips.items())
                                   or "none"))
    print("The line 'all' counts the groups of published-dev.csv's vTrain rows too, which"
          " repeat rows of the vTrain files.")
    # With as many rows as places, the top 3 holds the best whatever the ranking.
    print("Groups of %d matched rows, whose measured best is in the top %d by construction: %d."
          % (TOP, TOP, sum(r["matched"] == TOP for r in evaluated(results))))
    print()


def left_out(rows, results, markdown):
    """The rows left out: infeasible for whatif, missing from its CSV, of a group whose
    whatif failed, and those bench/whatif-rows.sh cannot express."""
    infeasible = [(r, why) for g in results for r, why in g["infeasible"]]
    heading("Rows whatif calls infeasible (%d, left out)" % len(infeasible), markdown)
    if infeasible:
        table(["row", "layout", "why"],
              [[r["id"], config_name(r), why] for r, why in infeasible], markdown)
    missing = [(r, "not among whatif's configurations") for g in results for r in g["missing"]]
    missing += [(r, g["error"]) for g in results if "error" in g for r in g["group"]]
    if missing:
        heading("Rows whatif did not evaluate (%d, left out)" % len(missing), markdown)
        table(["row", "layout", "why"],
              [[r["id"], config_name(r), why] for r, why in missing], markdown)
    reasons = {}
    for r in rows:
        if "args" not in r:
            reasons.setdefault(r["skipped"], []).append(r["id"])
    heading("Rows not expressed (%d, bench/whatif-rows.sh)" % sum(map(len, reasons.values())),
            markdown)
    table(["reason", "rows", "first rows"],
          [[why, len(ids), ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")]
           for why, ids in reasons.items()], markdown)


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory() as work:
        # A copy of the binary: every whatif of the run is made by one build, even when
        # the build directory is rebuilt meanwhile.
        try:
            orrery = copy_binary(args.orrery, work)
        except OSError as e:
            sys.exit("bench/whatif-ranking.py: error: cannot copy %s: %s" % (args.orrery, e))
        try:
            rows = prepare(orrery, args.shared, work)
        except subprocess.CalledProcessError:
            sys.exit("bench/whatif-ranking.py: error: bench/whatif-rows.sh failed (above)")
        groups = groups_of(rows)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            configs = pool.map(lambda g: run_group(orrery, g, args.launch_us), groups)
            results = [evaluate(g, c) for g, c in zip(groups, configs)]
    report(args, rows, results)


if __name__ == "__main__":
    main()
