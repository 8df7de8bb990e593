#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a small Nsight Systems SQLite export, as `nsys export --type sqlite` lays it out
(the tables and columns orrery reads), for the tests:

    make-nsys.py OUT.sqlite [--broken-kernels] [--no-nsys-tables] [--steps N] [--waits]

Two steps (NVTX ranges ProfilerStep#1 and #2) of a thread launching one kernel each
(cudaLaunchKernel_v7000, nested cuLaunchKernel) after a copy; times in ns from the
session's start.  --broken-kernels leaves the kernel table without its demangledName
column; --no-nsys-tables writes a SQLite database of something else; --steps N writes N
steps instead of 2 (bench/nsys-import.sh times the import of a large one); --waits
adds, per step, an event recorded on stream 7 after its kernel, a stream wait of stream
8 on it, and a kernel on stream 8 (SYNCHRONIZATION and CUDA_EVENT rows, as CUPTI gives).
"""
import sqlite3
import sys

GTID = (4242 << 24) | 4243  # pid 4242, tid 4243, as nsys serialises globalTid


def main():
    out = sys.argv[1]
    broken = "--broken-kernels" in sys.argv
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 2
    waits = "--waits" in sys.argv
    db = sqlite3.connect(out)
    if "--no-nsys-tables" in sys.argv:
        db.execute("CREATE TABLE settings (key TEXT, value TEXT)")
        db.commit()
        return
    db.executescript(f"""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INT, utcTime TEXT, localTime TEXT);
        CREATE TABLE TARGET_INFO_GPU (id INT, name TEXT, smCount INT, totalMemory INT,
            computeMajor INT, computeMinor INT);
        CREATE TABLE ThreadNames (nameId INT, priority INT, globalTid INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, eventClass INT,
            globalTid INT, correlationId INT, nameId INT, returnValue INT, callchainId INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT,
            contextId INT, streamId INT, correlationId INT, globalPid INT,
            {'' if broken else 'demangledName INT, '}shortName INT, gridX INT, gridY INT,
            gridZ INT, blockX INT, blockY INT, blockZ INT, staticSharedMemory INT,
            dynamicSharedMemory INT, registersPerThread INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT,
            contextId INT, streamId INT, correlationId INT, globalPid INT, bytes INT,
            copyKind INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INT, end INT, deviceId INT,
            contextId INT, streamId INT, correlationId INT, globalPid INT, syncType INT,
            eventId INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId INT, contextId INT,
            streamId INT, correlationId INT, globalPid INT, eventId INT);
        CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, rangeId INT,
            category INT, color INT, text TEXT, globalTid INT, endGlobalTid INT, textId INT,
            domainId INT);
    """)
    strings = {1: "cudaLaunchKernel_v7000", 2: "cuLaunchKernel", 3: "cudaMemcpyAsync_v3020",
               4: "saxpy(int, float, float*, float*)", 5: "main", 6: "ProfilerStep#2",
               7: "cudaEventRecord_v3020", 8: "cudaStreamWaitEvent_v3020", 9: "scale(float*)"}
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", strings.items())
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '')")
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 85045231616, 9, 0)")
    db.execute("INSERT INTO ThreadNames VALUES (5, 10, ?)", (GTID,))
    for k, t in enumerate(range(1000000, 1000000 + 2000000 * steps, 2000000)):
        corr = 10 + 2 * k
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 3, 0, NULL)",
                   (t + 10000, t + 60000, GTID, corr))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, 7, ?, ?, 4096, 1)",
                   (t + 20000, t + 40000, corr, GTID))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 1, 0, NULL)",
                   (t + 100000, t + 140000, GTID, corr + 1))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 2, 0, NULL)",
                   (t + 105000, t + 135000, GTID, corr + 1))
        cols = "(start, end, deviceId, contextId, streamId, correlationId, globalPid, " + \
            ("" if broken else "demangledName, ") + "gridX, gridY, gridZ, blockX, blockY, " + \
            "blockZ, staticSharedMemory, dynamicSharedMemory, registersPerThread)"
        vals = [t + 150000, t + 1650000, 0, 1, 7, corr + 1, GTID] + ([] if broken else [4]) + \
            [864, 1, 1, 256, 1, 1, 0, 1024, 32]
        db.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL {cols} VALUES "
                   f"({', '.join('?' * len(vals))})", vals)
        if waits:
            add_wait(db, t, 100 + 10 * k, k)
        # Step 1 by its text, step 2 by a string id, as nsys writes either.
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, "
                   "domainId) VALUES (?, ?, 59, ?, ?, ?, 0)",
                   (t, t + 1800000, f"ProfilerStep#{k + 1}" if k != 1 else None, GTID,
                    6 if k == 1 else None))
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
               "VALUES (500, NULL, 34, 'a mark', ?, 0)", (GTID,))
    db.commit()


def add_wait(db, t, corr, k):
    """Event k+1 recorded on stream 7 after the kernel, stream 8 waits on it, a kernel."""
    rt = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)"
    db.execute(rt, (t + 150000, t + 152000, GTID, corr, 7))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (0, 1, 7, ?, ?, ?)",
               (corr, GTID, k + 1))
    db.execute(rt, (t + 153000, t + 154000, GTID, corr + 1, 8))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, 0, 1, 8, ?, ?, 2, ?)",
               (t + 153000, t + 154000, corr + 1, GTID, k + 1))
    db.execute(rt, (t + 155000, t + 160000, GTID, corr + 2, 1))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
               "streamId, correlationId, globalPid, demangledName, gridX, gridY, gridZ, "
               "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
               "registersPerThread) VALUES (?, ?, 0, 1, 8, ?, ?, 9, 1, 1, 1, 32, 1, 1, 0, 0, 8)",
               (t + 1650000, t + 1700000, corr + 2, GTID))


if __name__ == "__main__":
    main()
