#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks Chakra files against an independent reading of the wire format.

    check-chakra.py ours FILE.et DUMP.jsonl   FILE.et decoded here, field by field, from
                                              Chakra's field numbers (not with protobuf
                                              or orrery's reader), equals DUMP (what
                                              chakra-dump prints of it); node ids are
                                              0..n-1, data deps name nodes of the file
                                              and leave no cycle
    check-chakra.py ref DUMP.jsonl REF.json   orrery's reading of Chakra's reference
                                              file equals Chakra's JSON of the same graph
                                              (ids, types, data deps, durations, is_cpu_op)
    check-chakra.py strings FILE.et N         every string field of FILE.et (each that
                                              chakra.proto declares `string`) is valid
                                              UTF-8, as protobuf requires, and N of them
                                              at least hold U+FFFD
"""
import json
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(number, wire type, value) of one message: ints, or bytes for length-delimited."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {wt}")
        out.append((num, wt, v))
    return out


def messages(path):
    b = open(path, "rb").read()
    i = 0
    while i < len(b):
        n, i = varint(b, i)
        yield b[i:i + n]
        i += n


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def attr(b):
    """AttributeProto: name = 1; int32_val 7, int64_val 9, bool_val 27, string_val 29."""
    name, value = None, None
    for num, _, v in fields(b):
        if num == 1:
            name = v.decode()
        elif num in (7, 9, 27):
            value = signed(v)
        elif num == 29:
            value = v.decode()
    return name, value


def node(b):
    n = {"id": 0, "name": "", "type": 0, "data_deps": [], "start_us": 0, "dur_us": 0,
         "attrs": {}}
    for num, wt, v in fields(b):
        if num == 1:
            n["id"] = v
        elif num == 2:
            n["name"] = v.decode()
        elif num == 3:
            n["type"] = v
        elif num == 5 and wt == 2:  # packed
            j = 0
            while j < len(v):
                d, j = varint(v, j)
                n["data_deps"].append(d)
        elif num == 5:
            n["data_deps"].append(v)
        elif num == 6:
            n["start_us"] = v
        elif num == 7:
            n["dur_us"] = v
        elif num == 10:
            k, val = attr(v)
            n["attrs"][k] = val
    return n


def ours(path, dump):
    msgs = list(messages(path))
    meta = dict(attr(v) for num, _, v in fields(msgs[0]) if num == 2)
    lines = [json.loads(l) for l in open(dump)]
    head, dumped = lines[0], lines[1:]
    assert meta["schema"] == head["schema"] == "1.0.2-chakra.0.0.4", (meta, head)
    assert meta["rank"] == head["rank"], (meta, head)
    nodes = [node(m) for m in msgs[1:]]
    assert len(nodes) == len(dumped) == head["nodes"], (len(nodes), len(dumped))
    for i, (n, d) in enumerate(zip(nodes, dumped)):
        a = n["attrs"]
        assert n["id"] == d["id"] == i, (i, n, d)
        for k in ("name", "type", "data_deps", "start_us", "dur_us"):
            assert n[k] == d[k], (k, n, d)
        assert a["is_cpu_op"] == d["is_cpu_op"], (n, d)
        assert a["orr_dur_ns"] == d["dur_ns"] and a["orr_gap_ns"] == d["gap_ns"], (n, d)
        for k in ("comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag"):
            assert a.get(k, -1) == d[k], (k, n, d)
        assert a.get("pg_name") == d["pg_name"], (n, d)
        assert all(dep < len(nodes) and dep != i for dep in n["data_deps"]), n
    # No cycle: every node can be issued once its data deps are done (Kahn).
    indeg = [len(n["data_deps"]) for n in nodes]
    users = [[] for _ in nodes]
    for n in nodes:
        for dep in n["data_deps"]:
            users[dep].append(n["id"])
    ready = [i for i, k in enumerate(indeg) if k == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    assert done == len(nodes), f"a cycle: {len(nodes) - done} nodes never issue"
    print(f"{path}: {len(nodes)} nodes, as decoded here")


def ref(dump, ref_json):
    lines = [json.loads(l) for l in open(dump)]
    head, dumped = lines[0], lines[1:]
    want = json.load(open(ref_json))["workload_graph"]
    assert head["nodes"] == len(want) == len(dumped), (head, len(want))
    for d, w in zip(dumped, want):
        assert d["id"] == w["Id"] and d["type"] == w["NodeType"], (d, w)
        assert d["data_deps"] == w["data_deps"], (d, w)
        assert d["dur_us"] == w.get("runtime", 0), (d, w)
        assert d["is_cpu_op"] == int(w["is_cpu_op"]), (d, w)
    print(f"{dump}: {len(dumped)} nodes, as Chakra's JSON has them")


# chakra.proto's `string` fields by message: number -> None (a string) or the message.
ATTR = {1: None, 2: None, 29: None, 30: {1: None}}
IOINFO = {1: None, 2: None, 3: None}
META = {1: None, 2: ATTR}
NODE = {2: None, 8: IOINFO, 9: IOINFO, 10: ATTR}


def strings(b, schema, out):
    """Every string field of message b, decoded strictly, appended to out."""
    for num, wt, v in fields(b):
        if num not in schema or wt != 2:
            continue
        if schema[num] is None:
            out.append(v.decode("utf-8"))  # UnicodeDecodeError: what protobuf refuses
        else:
            strings(v, schema[num], out)


def check_strings(path, want):
    out = []
    for i, m in enumerate(messages(path)):
        try:
            strings(m, NODE if i else META, out)
        except UnicodeDecodeError as e:
            sys.exit(f"{path}: message {i}: a string field is not UTF-8: {e}")
    replaced = sum("\ufffd" in s for s in out)
    assert replaced >= want, f"{replaced} strings hold U+FFFD, expected {want} or more"
    print(f"{path}: {len(out)} strings, valid UTF-8, {replaced} with U+FFFD")


if __name__ == "__main__":
    if sys.argv[1] == "strings":
        check_strings(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "ours":
        ours(sys.argv[2], sys.argv[3])
    else:
        ref(sys.argv[2], sys.argv[3])
