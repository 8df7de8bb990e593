#!/usr/bin/env python3
"""Kineto traces for run-import-threads.sh: one with every kind of row the importer
makes (so that a second thread's half, appended to the first's, is checked table by
table), and hostile ones where guessing the middle of traceEvents goes wrong.

    mk-split-traces.py DIR     writes DIR/*.json
"""
import json
import os
import sys


def event_rows(n, seed):
    """n steps of a training-like job: ops with shapes, launches, kernels with launch
    args, copies, syncs, NCCL with collectives, counters, memory markers, flows, a
    category orrery skips and ids written as strings; metadata in the middle."""
    rows = []
    ts = 1_000_000 + seed
    corr = 1
    for step in range(n):
        rows.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                     "pid": 7, "tid": 7, "ts": ts, "dur": 900})
        for k in range(6):
            name = ["aten::mm", "aten::add_", "aten::copy_", "aten::softmax",
                    f"aten::op_{(step * 7 + k) % 41}", "c10d::allreduce_"][k]
            rows.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 7,
                         "tid": 7 + (k % 2), "ts": ts + 10 + k * 100, "dur": 80,
                         "args": {"External id": corr, "Sequence number": step * 10 + k,
                                  "Input Dims": [[64, 128 + k], [128 + k, 32], []],
                                  "Input type": ["c10::BFloat16", "float", "Scalar"]}})
            rows.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                         "pid": 7, "tid": 7 + (k % 2), "ts": ts + 20 + k * 100, "dur": 5,
                         "args": {"correlation": corr, "External id": corr}})
            rows.append({"ph": "s", "cat": "ac2g", "name": "launch", "id": corr,
                         "pid": 7, "tid": 7 + (k % 2), "ts": ts + 20 + k * 100})
            if k == 5:
                rows.append({"ph": "X", "cat": "kernel",
                             "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)",
                             "pid": 0, "tid": 20, "ts": ts + 40 + k * 100, "dur": 60,
                             "args": {"correlation": corr, "device": 0, "stream": 20,
                                      "grid": [2, 1, 1], "block": [512, 1, 1],
                                      "Collective name": "allreduce", "dtype": "BFloat16",
                                      "In msg nelems": 4096 + step, "Out msg nelems": 4096,
                                      "Group size": 2, "Process Group Name": f"pg{step % 3}",
                                      "Process Group Ranks": [0, 1]}})
            elif k == 2:
                rows.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)",
                             "pid": 0, "tid": "stream 7", "ts": ts + 40 + k * 100, "dur": 9,
                             "args": {"correlation": corr, "device": 0, "stream": "7",
                                      "bytes": 65536}})
            else:
                rows.append({"ph": "X", "cat": "kernel", "name": f"sm90_gemm_{(step + k) % 13}",
                             "pid": 0, "tid": 7, "ts": ts + 40 + k * 100, "dur": 30,
                             "args": {"correlation": corr, "device": 0, "stream": 7,
                                      "grid": [k + 1, 2, 1], "block": [128, 1, 1],
                                      "shared memory": 1024, "registers per thread": 96}})
            rows.append({"ph": "f", "cat": "ac2g", "name": "launch", "id": corr, "bp": "e",
                         "pid": 0, "tid": 7, "ts": ts + 40 + k * 100})
            corr += 1
        rows.append({"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7,
                     "ts": ts + 700, "dur": 3,
                     "args": {"correlation": corr, "stream": 7, "wait_on_stream": 20,
                              "wait_on_cuda_event_record_corr_id": corr - 1, "event": 3}})
        rows.append({"ph": "C", "name": "GPU Utilization", "pid": 0, "tid": 0, "ts": ts,
                     "args": {"value": (step % 10) / 10.0, "other": step}})
        rows.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                     "pid": 7, "tid": 7, "ts": ts + 5,
                     "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 1000 + step,
                              "Total Reserved": 4096 + step, "Bytes": 8}})
        rows.append({"ph": "X", "cat": "python_function", "name": "forward", "pid": 7,
                     "tid": 7, "ts": ts + 1, "dur": 2})
        if step == n // 2:
            rows.append({"ph": "M", "name": "thread_name", "pid": 7, "tid": 8,
                         "args": {"name": "pt_autograd_0"}})
        ts += 1000
    rows.append({"ph": "M", "name": "thread_name", "pid": 7, "tid": 7,
                 "args": {"name": "pt_main_thread"}})
    return rows


def write(path, top):
    with open(path, "w") as f:
        # Kineto writes one event a line: the middle of the file is between two of them
        f.write('{\n  "schemaVersion": 1,\n  "traceEvents": [\n')
        rows = top.pop("traceEvents")
        f.write(",\n".join("  " + json.dumps(r) for r in rows))
        f.write("\n  ]")
        for k, v in top.items():
            f.write(f',\n  "{k}": {json.dumps(v)}')
        f.write("\n}\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    dev = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132,
            "computeMajor": 9, "computeMinor": 0, "totalGlobalMem": 85029158912}]
    dist = {"backend": "nccl", "rank": 0, "world_size": 2}

    # Every kind of row, about 3 MB: halves of several windows each.
    write(f"{out}/rows.json", {"traceEvents": event_rows(1500, 0),
                               "deviceProperties": dev, "distributedInfo": dist})

    # The middle falls in a name full of what looks like the end of an event and the
    # start of the next: the guess is wrong, and the first thread reads on alone.
    rows = event_rows(40, 1)
    fake = '}, {"ph": "X", "cat": "kernel", "name": "fake", "pid": 0, "tid": 7, "ts": 1, "dur": 1'
    rows.insert(len(rows) // 2, {"ph": "X", "cat": "cpu_op", "pid": 7, "tid": 7,
                                 "ts": 1_020_000, "dur": 5, "name": fake * 4000})
    write(f"{out}/fake-cut.json", {"traceEvents": rows, "deviceProperties": dev})

    # A bad event in the second half: the error is the one thread's, byte and event.
    rows = event_rows(200, 2)
    rows[len(rows) * 3 // 4]["dur"] = "not a number"
    write(f"{out}/bad-second.json", {"traceEvents": rows})

    # The middle of the file lies past traceEvents, in a long value after it.
    write(f"{out}/middle-after.json", {"traceEvents": event_rows(30, 3),
                                       "deviceProperties": dev,
                                       "distributedInfo": dist,
                                       "notes": ["x" * 64] * 4000})

    # traceEvents twice (a duplicate key, read as more events): each array cut apart.
    with open(f"{out}/twice.json", "w") as f:
        f.write('{"traceEvents": [\n')
        f.write(",\n".join(json.dumps(r) for r in event_rows(60, 5)))
        f.write('\n], "traceEvents": [\n')
        f.write(",\n".join(json.dumps(r) for r in event_rows(60, 6)))
        f.write("\n]}\n")

    # Cut short in its second half.
    write(f"{out}/full.json", {"traceEvents": event_rows(200, 4)})
    with open(f"{out}/full.json", "rb") as f:
        data = f.read()
    with open(f"{out}/cut.json", "wb") as f:
        f.write(data[: len(data) * 3 // 4])
    os.remove(f"{out}/full.json")


if __name__ == "__main__":
    main()
