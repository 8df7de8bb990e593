#!/usr/bin/env python3
# Checks a Chrome trace-event file written by `orrery convert --to chrome` (or
# orr_trace_write_chrome): valid JSON in the object form, the fields Perfetto and Kineto
# readers need on every event, every ac2g flow start with its end and the other way
# round, every flow v2 end (bind_id, flow_in) with its start, and one named process per
# pid, named after its rank.  Standard library only.
#
#   check-chrome.py FILE [--ranks 0,1] [--min-flows N] [--min-waits N]
#
# --ranks: the ranks the process names must cover, exactly.  --min-flows / --min-waits:
# at least that many ac2g pairs / flow v2 arrows.  Exit 0 when it holds, 1 with the
# reasons on stderr otherwise.
import argparse
import json
import re
import sys
from collections import Counter


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_event(i, e, errors):
    ph = e.get("ph")
    if ph not in ("X", "i", "M", "s", "f"):
        errors.append(f"event {i}: unexpected ph {ph!r}")
        return
    if not isinstance(e.get("name"), str):
        errors.append(f"event {i}: no string name")
    if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
        errors.append(f"event {i}: pid and tid must be integers")
    if ph in "Xisf" and not number(e.get("ts")):
        errors.append(f"event {i}: ts is not a number")
    if ph == "X" and (not number(e.get("dur")) or e["dur"] < 0):
        errors.append(f"event {i}: dur {e.get('dur')!r}")
    if ph in "Xi" and (not isinstance(e.get("cat"), str) or not isinstance(e.get("args"), dict)):
        errors.append(f"event {i}: no cat or args")
    if ph in "sf" and (e.get("cat") != "ac2g" or not isinstance(e.get("id"), int)):
        errors.append(f"event {i}: flow without cat ac2g and an integer id")
    if ph == "f" and e.get("bp") != "e":
        errors.append(f"event {i}: flow end without bp 'e'")


def check(doc, args):
    errors = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not an object with a traceEvents array"], ""
    events = doc["traceEvents"]
    for i, e in enumerate(events):
        check_event(i, e, errors)
    starts = Counter(e["id"] for e in events if e.get("ph") == "s")
    ends = Counter(e["id"] for e in events if e.get("ph") == "f")
    if set(starts) != set(ends):
        errors.append(f"{len(set(starts) ^ set(ends))} ac2g flows without their other end")
    outs = Counter(e["bind_id"] for e in events if e.get("flow_out"))
    ins = Counter(e["bind_id"] for e in events if e.get("flow_in"))
    if any(n != 1 for n in outs.values()) or set(ins) - set(outs) or set(outs) - set(ins):
        errors.append("flow v2: every bind_id needs one flow_out and at least one flow_in")
    procs = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            if e["pid"] in procs:
                errors.append(f"pid {e['pid']} named twice")
            procs[e["pid"]] = e["args"]["name"]
    used = {e["pid"] for e in events if e.get("ph") in ("X", "i")}
    if used - set(procs):
        errors.append(f"pids without a process name: {sorted(used - set(procs))[:5]}")
    ranks = set()
    for name in procs.values():
        m = re.fullmatch(r"rank (-?\d+)( GPU -?\d+)?", name)
        if not m:
            errors.append(f"process name {name!r} is not 'rank R' or 'rank R GPU D'")
        else:
            ranks.add(int(m.group(1)))
    if args.ranks is not None and ranks != set(args.ranks):
        errors.append(f"ranks {sorted(ranks)}, expected {sorted(args.ranks)}")
    if len(starts) < args.min_flows:
        errors.append(f"{len(starts)} ac2g flows, expected at least {args.min_flows}")
    if sum(ins.values()) < args.min_waits:
        errors.append(f"{sum(ins.values())} wait arrows, expected at least {args.min_waits}")
    summary = (f"{len(events)} events, {len(procs)} processes, {len(starts)} ac2g flows, "
               f"{sum(ins.values())} wait arrows")
    return errors, summary


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--ranks", type=lambda s: [int(x) for x in s.split(",") if x])
    p.add_argument("--min-flows", type=int, default=0)
    p.add_argument("--min-waits", type=int, default=0)
    args = p.parse_args()
    try:
        with open(args.file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    errors, summary = check(doc, args)
    for e in errors[:20]:
        print(f"{args.file}: {e}", file=sys.stderr)
    if not errors:
        print(f"{args.file}: {summary}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
