#!/usr/bin/env python3
"""Checks orrery whatif's JSON and CSV of one sweep (run-whatif.sh report).

check-whatif.py SWEEP.json SWEEP.csv TOP

Every configuration appears once in the space's order (feasible, or not with a reason),
the ranking is the TOP best by step time with ties in the space's order and its rows
are the results', ranks count from 1, the breakdown's parts are finite and no larger
than the step, tokens/s agrees with the step time, the Pareto front is what its
definition says, the infeasible counts add up, and the CSV carries the same
configurations in the same order with the same numbers.
"""
import csv
import json
import math
import sys


def fail(msg):
    print("check-whatif.py: " + msg, file=sys.stderr)
    sys.exit(1)


def feasible(j):
    return [r for r in j["results"] if r["why"] == "feasible"]


def check_results(j):
    res = j["results"]
    indices = [r["index"] for r in res]
    if indices != sorted(set(indices)):
        fail("results are not every configuration once, in the space's order")
    for r in feasible(j):
        c, b = r["config"], r["breakdown"]
        if r["gpus"] != c["tp"] * c["pp"] * c["dp"] * c["cp"]:
            fail("gpus != tp x pp x dp x cp at %d" % r["index"])
        if not r["fits"] or r["memory_bytes_per_gpu"] <= 0:
            fail("a feasible configuration that does not fit: %d" % r["index"])
        parts = [b["compute_ns"], b["exposed_comm_ns"], b["bubble_ns"], b["other_ns"]]
        if any(not math.isfinite(p) or p < 0 or p > r["iteration_ns"] * 1.001 for p in parts):
            fail("breakdown out of range at %d: %s" % (r["index"], b))
        sec = r["iteration_ns"] / 1e9
        want = c["micro_batch"] * c["micro_batches"] * c["dp"] * r["config"]["seq"]
        got = r["tokens_per_s_per_gpu"] * sec * r["gpus"]
        if abs(got - want) > 1e-5 * want:  # JSON's six significant digits
            fail("tokens/s per GPU disagrees with the step at %d" % r["index"])


def check_ranked(j, top):
    ranked = j["ranked"]
    if [r["place"] for r in ranked] != list(range(1, len(ranked) + 1)):
        fail("ranks are not 1..n")
    want = sorted(feasible(j), key=lambda r: (r["iteration_ns"], r["index"]))[:top]
    if [r["index"] for r in ranked] != [r["index"] for r in want]:
        fail("the ranking is not the %d best by step time, then the space's order" % top)
    for r, w in zip(ranked, want):
        same = {k: v for k, v in r.items() if k not in ("place", "pareto")}
        if same != w:
            fail("ranked %d differs from its result" % r["index"])


def check_pareto(j):
    best = {}
    for r in feasible(j):
        g = r["gpus"]
        if g not in best or (r["iteration_ns"], r["index"]) < best[g]:
            best[g] = (r["iteration_ns"], r["index"])
    want, fastest = [], math.inf
    for g in sorted(best):
        t, i = best[g]
        if t < fastest:
            want.append(i)
            fastest = t
    if j["pareto"] != want:
        fail("Pareto front %s, expected %s" % (j["pareto"], want))
    if any(r["pareto"] != (r["index"] in want) for r in j["ranked"]):
        fail("pareto flags disagree with the front")


def check_counts(j):
    res = j["results"]
    if j["configurations"] != len(res):
        fail("configurations != results")
    if j["feasible"] != len(feasible(j)):
        fail("feasible != the feasible results")
    counts = {}
    for r in res:
        counts[r["why"]] = counts.get(r["why"], 0) + 1
    for why, n in j["infeasible"].items():
        if counts.get(why, 0) != n:
            fail("infeasible %s: %d counted, %d listed" % (why, n, counts.get(why, 0)))


def check_csv(j, path):
    rows = list(csv.DictReader(open(path)))
    if len(rows) != j["configurations"]:
        fail("CSV has %d rows, JSON %d configurations" % (len(rows), j["configurations"]))
    for r, row in zip(j["results"], rows):
        if int(row["index"]) != r["index"] or row["why"] != r["why"]:
            fail("CSV row order differs from the results at %d" % r["index"])
        if int(row["recorded"]) != r["is_recorded"]:
            fail("CSV recorded differs at %d" % r["index"])
        if r["why"] != "feasible":
            if row["feasible"] != "0" or row["iteration_ns"]:
                fail("a not feasible CSV row has a step: %s" % row)
            continue
        if int(row["iteration_ns"]) != r["iteration_ns"]:
            fail("CSV step differs at %d" % r["index"])
        if int(row["memory_bytes_per_gpu"]) != r["memory_bytes_per_gpu"]:
            fail("CSV memory differs at %d" % r["index"])
        for k, v in r["breakdown"].items():
            if int(row[k]) != v:
                fail("CSV %s differs at %d: %s, JSON %s" % (k, r["index"], row[k], v))


def main():
    if len(sys.argv) != 4:
        fail("usage: check-whatif.py SWEEP.json SWEEP.csv TOP")
    j = json.load(open(sys.argv[1]))
    if not j["ranked"] or not j["pareto"]:
        fail("nothing ranked")
    check_results(j)
    check_ranked(j, int(sys.argv[3]))
    check_pareto(j)
    check_counts(j)
    check_csv(j, sys.argv[2])


main()
