#!/usr/bin/env python3
# Checks that a file written by `orrery replay --timeline` is a valid Chrome trace-event
# file (the JSON object form) with the tracks and events docs/orrery-replay.md promises.
# With --path (`orrery critical-path --timeline`), it must also hold a "critical path"
# process whose tracks (one per step) hold segments that follow each other without gap
# or overlap.
# Exit 0 when it is, 1 with the reasons on stderr otherwise.  Standard library only.
import json
import sys
from collections import Counter

REQUIRED = {
    "X": ("name", "cat", "ph", "pid", "tid", "ts", "dur"),
    "M": ("name", "ph", "pid", "tid", "args"),
    "s": ("name", "cat", "ph", "id", "pid", "tid", "ts"),
    "f": ("name", "cat", "ph", "id", "pid", "tid", "ts", "bp"),
}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


PATH_CATS = ("compute", "communication", "launch", "cpu", "idle")


def check_event(i, e, errors):
    ph = e.get("ph")
    if ph not in REQUIRED:
        errors.append(f"event {i}: unexpected ph {ph!r}")
        return
    for key in REQUIRED[ph]:
        if key not in e:
            errors.append(f"event {i} ({ph}): no {key!r}")
    if not isinstance(e.get("name"), str) or not isinstance(e.get("pid"), int) \
            or not isinstance(e.get("tid"), int):
        errors.append(f"event {i}: name must be a string, pid and tid integers")
    if ph in "Xsf" and not number(e.get("ts")):
        errors.append(f"event {i}: ts is not a number")
    elif ph in "Xsf" and e["ts"] < 0:
        errors.append(f"event {i}: ts {e['ts']} before the origin")
    if ph == "X":
        if e.get("cat") not in ("cpu", "gpu", "comm", "op", "annotation") + PATH_CATS:
            errors.append(f"event {i}: cat {e.get('cat')!r}")
        if not number(e.get("dur")) or e["dur"] < 0:
            errors.append(f"event {i}: dur {e.get('dur')!r} is not a non-negative number")
    if ph == "f" and e.get("bp") != "e":
        errors.append(f"event {i}: flow end without bp 'e'")
    if ph == "M" and e["name"] in ("process_name", "thread_name") \
            and not isinstance(e.get("args", {}).get("name"), str):
        errors.append(f"event {i}: {e['name']} without args.name")


def check_path(events, pid, errors):
    segs = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
    if not segs:
        errors.append("the critical path has no segment")
    for e in segs:
        if e["cat"] not in PATH_CATS:
            errors.append(f"critical path segment with cat {e['cat']!r}")
            return
    for tid in sorted({e["tid"] for e in segs}):
        ns = [(round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
              for e in segs if e["tid"] == tid]
        for (_, b), (c, _) in zip(ns, ns[1:]):
            if c != b:
                errors.append(f"critical path track {tid}: a segment ends at {b} ns, "
                              f"the next starts at {c} ns")
                return


def check_tracks(events, errors, want_path):
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    path = [pid for pid, n in processes.items() if n == "critical path"]
    if want_path and len(path) != 1:
        errors.append("no 'critical path' process")
    for pid in path:
        check_path(events, pid, errors)
        del processes[pid]
        events = [e for e in events if e["pid"] != pid]
    threads = {(e["pid"], e["tid"]) for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in events:
        if e["ph"] in "Xsf" and (e["pid"], e["tid"]) not in threads:
            errors.append(f"no thread_name for pid {e['pid']} tid {e['tid']}")
            break
    names = sorted(processes.values())
    measured = [n for n in names if n.endswith(" measured")]
    predicted = [n for n in names if n.endswith(" predicted")]
    if not measured or len(measured) != len(predicted) or len(names) != 2 * len(measured):
        errors.append(f"processes are not 'rank R measured' / 'rank R predicted' pairs: {names}")
    # tasks: ops and annotations are labels on the measured side only
    per_pid = Counter(e["pid"] for e in events
                      if e["ph"] == "X" and e["cat"] not in ("op", "annotation"))
    by_name = {processes.get(pid, "?"): n for pid, n in per_pid.items()}
    for m in measured:
        p = m[: -len("measured")] + "predicted"
        if by_name.get(m, 0) == 0 or by_name.get(m) != by_name.get(p):
            errors.append(f"'{m}' and '{p}' do not have the same, non-zero number of tasks")
    starts = Counter(e["id"] for e in events if e["ph"] == "s")
    ends = Counter(e["id"] for e in events if e["ph"] == "f")
    if starts != ends or any(n != 1 for n in starts.values()):
        errors.append("flow starts and ends do not pair up one to one by id")
    if not starts:
        errors.append("no launch flows")


def main(path, want_path=False):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    errors = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print(f"{path}: not an object with a traceEvents array", file=sys.stderr)
        return 1
    if doc.get("displayTimeUnit") != "ns":
        errors.append("displayTimeUnit is not 'ns'")
    events = doc["traceEvents"]
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            errors.append(f"event {i} is not an object")
            continue
        check_event(i, e, errors)
    if not errors:
        check_tracks(events, errors, want_path)
    for msg in errors[:20]:
        print(f"{path}: {msg}", file=sys.stderr)
    if not errors:
        kinds = Counter(e["ph"] for e in events)
        print(f"{path}: {len(events)} events, " +
              ", ".join(f"{k} {kinds[k]}" for k in sorted(kinds)), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    want = "--path" in args
    args = [a for a in args if a != "--path"]
    sys.exit(main(args[0], want))
