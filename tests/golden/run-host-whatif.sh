#!/bin/bash
# Host what-ifs of `orrery replay` against the critical path (suite golden), from the
# source root with $ORRERY set:
#
#   run-host-whatif.sh TRACE F...   for each factor F, `--scale cpu:*=F` moves every job
#                                   step of TRACE as its critical paths say it can:
#
# The replay is a longest path over a graph that scaling does not change, and cpu:*=F
# multiplies every CPU duration and gap by F, nothing else.  So, per job step of
# baseline time T, with C the CPU time (categories cpu and launch) on its baseline
# critical path and C' that on the scaled one (orrery critical-path --format=json):
#
#   the baseline path still runs, (1 - F) * C shorter:   T - T' <= (1 - F) * C
#   the scaled path ran at its F = 1 length in the baseline, at most T:
#                                                        T - T' >= (1 - F) / F * C'
#
# A scaled path sitting on time the replay cannot move but calls CPU (a watchdog's
# wait counted as its framework time) breaks the second; time it cannot move is idle or
# a wait for unknown work, which the scenario's trust (`fixed`) counts: its delays and
# thread starts lie within the path's idle time, its waits within the path's CPU time.
# 1 % of T is allowed: a step boundary inside a gap keeps its distance from the task
# before it (docs/replay-method.md, "Reports"), so a window's ends are not quite on a
# path of the graph (on traces/samples/tiny-2rank the second bound misses by 0.6 %).
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

trace=$1
shift
needs "$trace"

# `orrery ARGS` into $work/NAME.json.
json() {
	local name=$1
	shift
	run "$@"
	expect_rc 0
	cp "$work/out" "$work/$name.json"
}

json path critical-path --format=json "$trace"
for f in "$@"; do
	json "path-$f" critical-path --format=json --scale "cpu:*=$f" "$trace"
	json "replay-$f" replay --format=json --scale "cpu:*=$f" "$trace"
	python3 - "$work" "$f" <<'EOF' || fail "cpu:*=$f does not move the step as its critical path says"
import json, os, sys

work, f = sys.argv[1], float(sys.argv[2])


def load(name):
    with open(os.path.join(work, name + ".json")) as fh:
        return json.load(fh)


def cpu(step):
    return step["categories"]["cpu"]["ns"] + step["categories"]["launch"]["ns"]


base = {s["step"]: s for s in load("path")["steps"]}
scaled = {s["step"]: s for s in load("path-" + sys.argv[2])["steps"]}
sc = load("replay-" + sys.argv[2])["scenarios"][0]
ok = True
for row in sc["job"]:
    k, t, t2 = row["step"], row["baseline_ns"], row["scenario_ns"]
    c, c2 = cpu(base[k]), cpu(scaled[k])
    gain, tol = t - t2, 0.01 * t
    hi, lo = (1 - f) * c, (1 - f) / f * c2
    print(f"cpu:*={f} step {k}: {t / 1e6:.3f} -> {t2 / 1e6:.3f} ms ({-gain / t:+.2%}); "
          f"CPU on the path {c / t:.1%} -> {c2 / t2:.1%}: the gain must lie in "
          f"[{lo / t:.2%}, {hi / t:.2%}] of the step")
    if gain > hi + tol or gain < lo - tol:
        ok = False
    fx = sc["fixed"]
    if fx["step"] == k:
        idle = scaled[k]["categories"]["idle"]["ns"]
        print(f"  fixed: {fx['ns'] / 1e6:.3f} ms ({fx['share']:.1%}, trust {fx['trust']}); "
              f"path idle {idle / 1e6:.3f} ms, CPU {c2 / 1e6:.3f} ms")
        ok &= fx["delays_ns"] + fx["starts_ns"] <= idle and fx["waits_ns"] <= c2
        ok &= (fx["trust"] == "low") == (fx["share"] > 0.03)
sys.exit(0 if ok else 1)
EOF
done
echo "ok: cpu:* what-ifs move $trace as its critical paths say"
