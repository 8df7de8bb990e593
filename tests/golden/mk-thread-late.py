#!/usr/bin/env python3
"""Writes a trace whose clocks contradict themselves: the thread PyTorch's autograd
engine runs the backward on (its ops named autograd::engine::evaluate_function: ...)
moved 100 ms later, its calls, flows and annotations alike, while the kernels they
launched stay where they ran.  Such a kernel then starts before its launch, and the
replay meets a cycle of waits (docs/replay-method.md).

    mk-thread-late.py IN.json[.gz] OUT.json
"""
import gzip
import json
import sys

SHIFT_US = 100000


def main():
    src, out = sys.argv[1], sys.argv[2]
    opener = gzip.open if src.endswith('.gz') else open
    with opener(src, 'rt') as f:
        doc = json.load(f)
    events = doc['traceEvents']
    ag = {(e.get('pid'), e.get('tid')) for e in events
          if str(e.get('name', '')).startswith('autograd::engine::evaluate_function')}
    if len(ag) != 1:
        sys.exit('%s: expected one autograd thread, found %d' % (src, len(ag)))
    for e in events:
        if (e.get('pid'), e.get('tid')) in ag and e.get('ph') != 'M' and 'ts' in e:
            e['ts'] = float(e['ts']) + SHIFT_US
    with open(out, 'w') as f:
        json.dump(doc, f)
    pid, tid = ag.pop()
    print(tid)


main()
