#!/bin/bash
# A what-if's first traced step against its baseline (suite golden), from the source
# root with $ORRERY set:
#
#   run-whatif-handoff.sh TRACE   TRACE: a host-bound DDP trace whose autograd thread
#                                 makes its first call in the first traced step
#
# PyTorch's autograd thread waits for the main thread's backward() (a D6 edge into its
# first call: docs/replay-method.md).  A what-if replays the graph against its replay
# without factors (the baseline), so that first call starts where it did there, moved
# by as much as the call that handed it off moved; without the baseline it started no
# earlier than measured, and `cpu:*=0.5` took ~40 ms of forward pass out of
# hta-ddp-dense-rank1's step 2 but left its backward where it was (-38 %, the later
# steps -50 %).  Checked, with `--scale cpu:*=0.5`:
#   - the first job step changes as the middle ones do (within 1 point of their mean);
#   - critical-path, diff --predicted and replay --timeline give the same scenario:
#     critical-path's windows are replay's scenario steps, diff's predicted step their
#     mean, and in the timeline a thread's first call starts earlier than measured by
#     over a tenth of the first step;
#   - unchanged factors (`cpu:*=1`, `*=1`) give the baseline's step times exactly, and
#     critical-path the path it gives without --scale, segment for segment: in the plain
#     replay the autograd thread's first call starts where its anchor (its measured
#     start) and its hand-off (latency: the measured gap) coincide, and the tie goes to
#     the hand-off, as against the baseline.  When it went to the anchor, the plain path
#     of hta-ddp-dense-rank1's step 2 counted the main thread's forward pass as the
#     autograd thread's start (idle 81.571 ms, 23.6 %; 2.646 ms now).
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

trace=$1
needs "$trace"

# `orrery ARGS` into $work/NAME.
save() {
	local name=$1
	shift
	run "$@"
	expect_rc 0
	cp "$work/out" "$work/$name"
}

save replay.json replay --format=json --scale 'cpu:*=0.5' "$trace"
save path.json critical-path --format=json --top 1 --scale 'cpu:*=0.5' "$trace"
save diff.json diff --predicted --format=json --top 1 --scale 'cpu:*=0.5' "$trace"
save tl.out replay --scale 'cpu:*=0.5' --timeline "$work/tl.json" "$trace"
printf 'same-cpu cpu:*=1\nsame-gpu *=1\nsame-both cpu:*=1 *=1\n' >"$work/same.txt"
save same.csv replay --format=csv --scenario "$work/same.txt" "$trace"
save path-plain.json critical-path --format=json --top 1 "$trace"
save path-same.json critical-path --format=json --top 1 --scale 'cpu:*=1' "$trace"

python3 - "$work" <<'EOF' || fail "the what-if's first step does not move with its hand-off"
import csv, json, os, sys

work = sys.argv[1]


def load(name):
    with open(os.path.join(work, name)) as fh:
        return json.load(fh)


ok = True
job = load("replay.json")["scenarios"][0]["job"]
if len(job) < 3:
    sys.exit(f"{len(job)} job steps: a first, a last and one between are needed")
change = [r["scenario_ns"] / r["baseline_ns"] - 1 for r in job]
middle = sum(change[1:-1]) / len(change[1:-1])
print(f"cpu:*=0.5: first step {job[0]['step']} {change[0]:+.2%}, "
      f"steps between {middle:+.2%}")
if abs(change[0] - middle) > 0.01:
    print("  the first step's change is not the steps' between it and the last")
    ok = False

scenario = {r["step"]: r["scenario_ns"] for r in job}
for s in load("path.json")["steps"]:
    if s["predicted_ns"] != scenario[s["step"]]:
        print(f"  critical-path step {s['step']}: window {s['predicted_ns']} ns, "
              f"replay's scenario {scenario[s['step']]} ns")
        ok = False
mean = sum(scenario.values()) / len(scenario)
b = load("diff.json")["step"]["b_ns"]
if abs(b - mean) > 100:
    print(f"  diff --predicted: step {b} ns, replay's scenario steps' mean {mean:.0f} ns")
    ok = False

tl = load("tl.json")
events = tl["traceEvents"] if isinstance(tl, dict) else tl
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e.get("name") == "thread_name"}
first = {}
for e in events:
    if e.get("ph") == "X" and e.get("cat") != "annotation":
        k = (e["pid"], e["tid"])
        first[k] = min(first.get(k, e["ts"]), e["ts"])
measured = {names[k]: t for k, t in first.items() if k[0] == 0}
moved = max(measured[names[k]] - t for k, t in first.items()
            if k[0] == 1 and names[k].startswith("thread ") and names[k] in measured)
print(f"timeline: a thread's first call starts {moved / 1e3:.3f} ms earlier than measured")
if moved * 1e3 < 0.1 * job[0]["baseline_ns"]:
    print("  no thread's first call moved by a tenth of the first step")
    ok = False

plain = {s["step"]: s for s in load("path-plain.json")["steps"]}
for s in load("path-same.json")["steps"]:
    p = plain[s["step"]]
    if (s["predicted_start_ns"], s["predicted_ns"], s["path_ns"]) != (
            p["predicted_start_ns"], p["predicted_ns"], p["path_ns"]):
        print(f"  critical-path --scale cpu:*=1 step {s['step']}: window at "
              f"{s['predicted_start_ns']} of {s['predicted_ns']} ns, path {s['path_ns']} ns; "
              f"without --scale at {p['predicted_start_ns']} of {p['predicted_ns']} ns, "
              f"path {p['path_ns']} ns")
        ok = False
    elif s != p:
        cats = " ".join(f"{c} {p['categories'][c]['ns'] / 1e6:.3f} -> "
                        f"{s['categories'][c]['ns'] / 1e6:.3f}" for c in s["categories"]
                        if s["categories"][c] != p["categories"][c])
        print(f"  critical-path step {s['step']}: another path with --scale cpu:*=1 "
              f"({len(p['segments'])} -> {len(s['segments'])} segments; ms {cats})")
        ok = False

with open(os.path.join(work, "same.csv")) as fh:
    for r in csv.DictReader(fh):
        if r["scenario_ns"] != r["baseline_ns"]:
            print(f"  {r['scenario']} rank {r['rank']} step {r['step']}: "
                  f"{r['scenario_ns']} ns, the baseline {r['baseline_ns']} ns")
            ok = False
sys.exit(0 if ok else 1)
EOF
echo "ok: $trace"
