#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a small Nsight Systems SQLite export, as `nsys export --type sqlite` lays it out
(the tables and columns orrery reads), for the tests:

    make-nsys.py OUT.sqlite [--broken-kernels] [--no-nsys-tables] [--steps N] [--waits]
                 [--nccl RANK [--nccl-extra] [--nccl-cut]]

Two steps (NVTX ranges ProfilerStep#1 and #2) of a thread launching one kernel each
(cudaLaunchKernel_v7000, nested cuLaunchKernel) after a copy; times in ns from the
session's start.  --broken-kernels leaves the kernel table without its demangledName
column; --no-nsys-tables writes a SQLite database of something else; --steps N writes N
steps instead of 2 (bench/nsys-import.sh times the import of a large one); --waits
adds, per step, an event recorded on stream 7 after its kernel, a stream wait of stream
8 on it, and a kernel on stream 8 (SYNCHRONIZATION and CUDA_EVENT rows, as CUPTI gives).
--nccl RANK makes it rank RANK of 2 of an NCCL job, with NCCL's NVTX payloads as nsys
exports them (NVTX_PAYLOAD_SCHEMA_ENTRIES, NVTX_EVENTS.binaryData: a 32-byte header
holding the schema id at byte 8, then the payload): a communicator created before the
steps, and per step an ncclAllReduce of 1 MiB and an ncclSend (rank 0) or ncclRecv
(rank 1) of 64 KiB, each launching its kernel on stream 9 inside its range, and an
ncclBroadcast range whose payload is cut short.  --nccl-extra adds a communicator made
by ncclCommSplit (its payload holding the parent's size and rank, as NCCL writes it)
with an ncclAllReduce of its own per step, and an ncclPutSignal per step; --nccl-cut
cuts the first step's ncclAllReduce payload after the communicator id.
"""
import sqlite3
import struct
import sys

GTID = (4242 << 24) | 4243  # pid 4242, tid 4243, as nsys serialises globalTid
COMM = 0x5EED0000CAFE0001  # NCCL's commHash: the same on both ranks
COMM2 = 0x5EED0000CAFE0002  # a communicator split from it
S_INIT, S_ALLREDUCE, S_P2P = 0x1000000, 0x1000005, 0x1000009  # NCCL's static schema ids
S_SPLIT, S_PUT = 0x100000D, 0x1000014


def main():
    out = sys.argv[1]
    broken = "--broken-kernels" in sys.argv
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 2
    waits = "--waits" in sys.argv
    nccl = int(sys.argv[sys.argv.index("--nccl") + 1]) if "--nccl" in sys.argv else None
    extra, cut = "--nccl-extra" in sys.argv, "--nccl-cut" in sys.argv
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
            domainId INT{', jsonTextId INT, jsonText TEXT, binaryData BLOB' if nccl is not None else ''});
    """)
    strings = {1: "cudaLaunchKernel_v7000", 2: "cuLaunchKernel", 3: "cudaMemcpyAsync_v3020",
               4: "saxpy(int, float, float*, float*)", 5: "main", 6: "ProfilerStep#2",
               7: "cudaEventRecord_v3020", 8: "cudaStreamWaitEvent_v3020", 9: "scale(float*)",
               10: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
               11: "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"}
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
        if nccl is not None:
            add_nccl_step(db, t, 200 + 10 * k, nccl, cut and k == 0)
            if extra:
                add_nccl_extra(db, t, 300 + 10 * k, nccl)
        # Step 1 by its text, step 2 by a string id, as nsys writes either.
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, "
                   "domainId) VALUES (?, ?, 59, ?, ?, ?, 0)",
                   (t, t + 1800000, f"ProfilerStep#{k + 1}" if k != 1 else None, GTID,
                    6 if k == 1 else None))
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
               "VALUES (500, NULL, 34, 'a mark', ?, 0)", (GTID,))
    if nccl is not None:
        add_nccl_schemas(db, nccl, extra)
    db.commit()


def blob(schema, payload):
    """binaryData: domain, schema id, payload size, header size (8 bytes each), payload."""
    return struct.pack("<QQQQ", 1, schema, len(payload), 32) + payload


def add_nccl_schemas(db, rank, extra):
    """NCCL 2.25's schemas: explicit offsets, but the peer's left to natural alignment."""
    db.executescript("""
        CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INT, schemaId INT, name TEXT, type INT,
            flags INT, numEntries INT, payloadSize INT, alignTo INT);
        CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INT NOT NULL, schemaId INT NOT NULL,
            idx INT NOT NULL, flags INT, type INT, name TEXT, description TEXT,
            arrayOrUnionDetail INT, offset INT);
    """)
    entries = [(S_INIT, 0, 18, "NCCL communicator ID", None), (S_INIT, 1, 5, "No. of ranks", 8),
               (S_INIT, 2, 5, "Rank", 12), (S_INIT, 3, 5, "CUDA device", 16),
               (S_ALLREDUCE, 0, 18, "NCCL communicator ID", None),
               (S_ALLREDUCE, 1, 22, "Message size [bytes]", 8),
               (S_ALLREDUCE, 2, 0x1000100, "Reduction operation", 16),
               (S_P2P, 0, 18, "NCCL communicator ID", None),
               (S_P2P, 1, 22, "Message size [bytes]", 8), (S_P2P, 2, 5, "Peer rank", 0),
               (S_SPLIT, 0, 18, "NCCL communicator ID", None),
               (S_SPLIT, 1, 18, "Parent NCCL communicator ID", 8),
               (S_SPLIT, 2, 5, "No. of ranks", 16), (S_SPLIT, 3, 5, "Rank", 20),
               (S_PUT, 0, 18, "NCCL communicator ID", None),
               (S_PUT, 1, 22, "Message size [bytes]", 8), (S_PUT, 2, 5, "Peer rank", 16)]
    db.executemany("INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, ?, ?, NULL, ?, ?, NULL, "
                   "NULL, ?)", entries)
    db.executemany("INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, ?, NULL, 1, NULL, ?, ?, NULL)",
                   [(S_INIT, 4, 24), (S_ALLREDUCE, 3, 24), (S_P2P, 3, 24), (S_SPLIT, 4, 40),
                    (S_PUT, 3, 24)])
    nvtx_range(db, 500, 900, "ncclCommInitRank",
               blob(S_INIT, struct.pack("<Qiiii", COMM, 2, rank, 0, 0)))
    if extra:  # the parent's size and rank, as NCCL's init.cc writes a split's
        nvtx_range(db, 910, 990, "ncclCommSplit",
                   blob(S_SPLIT, struct.pack("<QQiiiii", COMM2, COMM, 2, rank, 0, 0, 0)))


def nvtx_range(db, start, end, text, data):
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, "
               "binaryData) VALUES (?, ?, 59, ?, ?, 1, ?)", (start, end, text, GTID, data))


def add_nccl_step(db, t, corr, rank, cut):
    """An all-reduce, a send or receive, each launching its kernel; a cut payload."""
    rt = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 1, 0, NULL)"
    kern = ("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
            "correlationId, globalPid, demangledName, gridX, gridY, gridZ, blockX, blockY, "
            "blockZ, staticSharedMemory, dynamicSharedMemory, registersPerThread) VALUES "
            "(?, ?, 0, 1, 9, ?, ?, ?, 2, 1, 1, 640, 1, 1, 0, 0, 96)")
    payload = struct.pack("<QQii", COMM, 1 << 20, 0, 0)
    nvtx_range(db, t + 200000, t + 260000, "ncclAllReduce",
               blob(S_ALLREDUCE, payload[:12] if cut else payload))
    db.execute(rt, (t + 210000, t + 250000, GTID, corr))
    db.execute(kern, (t + 300000, t + 500000, corr, GTID, 10))
    peer = 1 - rank
    nvtx_range(db, t + 270000, t + 290000, "ncclSend" if rank == 0 else "ncclRecv",
               blob(S_P2P, struct.pack("<QQii", COMM, 1 << 16, peer, 0)))
    db.execute(rt, (t + 275000, t + 285000, GTID, corr + 1))
    db.execute(kern, (t + 510000, t + 560000, corr + 1, GTID, 11))
    nvtx_range(db, t + 600000, t + 610000, "ncclBroadcast", blob(S_P2P, b"\0" * 4)[:20])


def add_nccl_extra(db, t, corr, rank):
    """An all-reduce on the split communicator, launching its kernel; a put-signal."""
    nvtx_range(db, t + 620000, t + 660000, "ncclAllReduce",
               blob(S_ALLREDUCE, struct.pack("<QQii", COMM2, 1 << 12, 0, 0)))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 1, 0, NULL)",
               (t + 630000, t + 650000, GTID, corr))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
               "streamId, correlationId, globalPid, demangledName, gridX, gridY, gridZ, "
               "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
               "registersPerThread) VALUES (?, ?, 0, 1, 9, ?, ?, 10, 2, 1, 1, 640, 1, 1, 0, "
               "0, 96)", (t + 700000, t + 720000, corr, GTID))
    nvtx_range(db, t + 670000, t + 680000, "ncclPutSignal",
               blob(S_PUT, struct.pack("<QQii", COMM, 1 << 10, 1 - rank, 0)))


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
