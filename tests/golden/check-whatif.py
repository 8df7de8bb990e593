#!/usr/bin/env python3
"""Checks orrery whatif's JSON and CSV of one sweep (run-whatif.sh report).

check-whatif.py SWEEP.json SWEEP.csv

Every configuration appears once (ranked or not feasible, with a reason), the ranking
is in order of step time with ties in the space's order, ranks count from 1, the
breakdown's parts are finite and no larger than the step, MFU and tokens/s agree with
the step time, the Pareto front is what its definition says, the infeasible counts
add up, and the CSV carries the same configurations with the same numbers.
"""
import csv
import json
import math
import sys


def fail(msg):
    print("check-whatif.py: " + msg, file=sys.stderr)
    sys.exit(1)


def check_ranked(j):
    ranked = j["ranked"]
    if [r["place"] for r in ranked] != list(range(1, len(ranked) + 1)):
        fail("ranks are not 1..n")
    keys = [(r["iteration_ns"], r["index"]) for r in ranked]
    if keys != sorted(keys):
        fail("the ranking is not by step time, then the space's order")
    for r in ranked:
        c, b = r["config"], r["breakdown"]
        if r["gpus"] != c["tp"] * c["pp"] * c["dp"] * c["cp"]:
            fail("gpus != tp x pp x dp x cp at %d" % r["index"])
        if not r["fits"] or r["memory_bytes_per_gpu"] <= 0:
            fail("a ranked configuration that does not fit: %d" % r["index"])
        parts = [b["compute_ns"], b["exposed_comm_ns"], b["bubble_ns"], b["other_ns"]]
        if any(not math.isfinite(p) or p < 0 or p > r["iteration_ns"] * 1.001 for p in parts):
            fail("breakdown out of range at %d: %s" % (r["index"], b))
        sec = r["iteration_ns"] / 1e9
        want = c["micro_batch"] * c["micro_batches"] * c["dp"] * r["config"]["seq"]
        got = r["tokens_per_s_per_gpu"] * sec * r["gpus"]
        if abs(got - want) > 1e-5 * want:  # JSON's six significant digits
            fail("tokens/s per GPU disagrees with the step at %d" % r["index"])


def check_pareto(j):
    ranked = {r["index"]: r for r in j["ranked"]}
    front = [ranked[i] for i in j["pareto"]]
    best = {}
    for r in ranked.values():
        g = r["gpus"]
        if g not in best or (r["iteration_ns"], r["index"]) < best[g]:
            best[g] = (r["iteration_ns"], r["index"])
    want, fastest = [], math.inf
    for g in sorted(best):
        t, i = best[g]
        if t < fastest:
            want.append(i)
            fastest = t
    if [r["index"] for r in front] != want:
        fail("Pareto front %s, expected %s" % ([r["index"] for r in front], want))
    if any(r["pareto"] != (r["index"] in want) for r in j["ranked"]):
        fail("pareto flags disagree with the front")


def check_counts(j):
    nf = j["not_feasible"]
    if j["configurations"] != len(j["ranked"]) + len(nf):
        fail("configurations != ranked + not feasible")
    if j["feasible"] != len(j["ranked"]):
        fail("feasible != ranked")
    counts = {}
    for r in nf:
        counts[r["why"]] = counts.get(r["why"], 0) + 1
    for why, n in j["infeasible"].items():
        if counts.get(why, 0) != n:
            fail("infeasible %s: %d counted, %d listed" % (why, n, counts.get(why, 0)))
    indices = [r["index"] for r in j["ranked"]] + [r["index"] for r in nf]
    if len(set(indices)) != len(indices):
        fail("a configuration appears twice")


def check_csv(j, path):
    rows = list(csv.DictReader(open(path)))
    if len(rows) != j["configurations"]:
        fail("CSV has %d rows, JSON %d configurations" % (len(rows), j["configurations"]))
    for r, row in zip(j["ranked"], rows):
        if int(row["place"]) != r["place"] or int(row["index"]) != r["index"]:
            fail("CSV row order differs from the ranking")
        if int(row["iteration_ns"]) != r["iteration_ns"]:
            fail("CSV step differs at %d" % r["index"])
        if int(row["memory_bytes_per_gpu"]) != r["memory_bytes_per_gpu"]:
            fail("CSV memory differs at %d" % r["index"])
        if int(row["pareto"]) != r["pareto"]:
            fail("CSV pareto differs at %d" % r["index"])
        for k, v in r["breakdown"].items():
            if int(row[k]) != v:
                fail("CSV %s differs at %d: %s, JSON %s" % (k, r["index"], row[k], v))
    for row in rows[len(j["ranked"]):]:
        if row["place"] or row["feasible"] != "0" or row["why"] == "feasible":
            fail("a not feasible CSV row is ranked: %s" % row)


def main():
    if len(sys.argv) != 3:
        fail("usage: check-whatif.py SWEEP.json SWEEP.csv")
    j = json.load(open(sys.argv[1]))
    if not j["ranked"] or not j["pareto"]:
        fail("nothing ranked")
    check_ranked(j)
    check_pareto(j)
    check_counts(j)
    check_csv(j, sys.argv[2])


main()
