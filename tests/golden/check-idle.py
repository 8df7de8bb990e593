#!/usr/bin/env python3
"""The GPU idle time `orrery summary --format=json` explains (check-idle.py SUMMARY.json):
per rank-step and per stream, host wait + kernel wait + other equals the idle time, and
per rank-step that idle time is the breakdown's (idle_ns: the step less the busy time);
queues and short-kernel counts are within their bounds."""
import json
import sys


def parts(i):
    return i["host_wait_ns"] + i["kernel_wait_ns"] + i["other_ns"]


def main(path):
    d = json.load(open(path))
    for s in d["steps"]:
        i = s["idle"]
        if parts(i) != i["idle_ns"] or min(i.values()) < 0:
            sys.exit("rank %d step %d: %r do not add up" % (s["rank"], s["step"], i))
        if i["idle_ns"] != s["idle_ns"]:
            sys.exit("rank %d step %d: idle %d explained, %d in the breakdown"
                     % (s["rank"], s["step"], i["idle_ns"], s["idle_ns"]))
    for s in d["streams_idle"]:
        i = s["idle"]
        if parts(i) != i["idle_ns"] or min(i.values()) < 0:
            sys.exit("rank %d stream %d: %r do not add up" % (s["rank"], s["stream"], i))
        if s["queue_max"] < 0 or s["queue_mean"] < 0 or s["queue_mean"] > s["queue_max"]:
            sys.exit("rank %d stream %d: queue mean %r, max %r"
                     % (s["rank"], s["stream"], s["queue_mean"], s["queue_max"]))
    for r in d["short_kernels"]["ranks"]:
        if not 0 <= r["short"] <= r["kernels"] or not 0 <= r["short_ns"] <= r["kernel_ns"]:
            sys.exit("rank %d: short kernels %r" % (r["rank"], r))
    for c in d["launch_delay"]:
        if not c["median_ns"] <= c["p90_ns"] <= c["max_ns"]:
            sys.exit("launch delay of %s: %r" % (c["class"], c))


if __name__ == "__main__":
    main(sys.argv[1])
