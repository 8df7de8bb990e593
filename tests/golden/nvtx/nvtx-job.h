/* SPDX-License-Identifier: MIT */
/* The two NVTX libraries of nvtx-job (each has its own NVTX3 instance). */
#ifndef NVTX_JOB_H
#define NVTX_JOB_H

#include <stdint.h>

/* nvtx-steps.c: ProfilerStep#<step> pushed and popped on the calling thread. */
void nvtx_steps_begin(int step);
void nvtx_steps_end(void);
/*
 * nvtx-steps.c: n push/pop pairs of one emit_nvtx-like name; the ns they took, and the
 * calling thread's CPU ns in *ret_cpu_ns (page faults included, waits for a CPU not).
 */
int64_t nvtx_steps_bench(int64_t n, int64_t *ret_cpu_ns);

/*
 * nvtx-ops.c: one step's ops, run on two threads of their own: per thread `nops`
 * emit_nvtx ranges (push/pop, Ex and A) named op-<step>-<thread>-<i>, one start/end
 * range, one mark, one range in domain "ops" with a registered string.
 */
void nvtx_ops_run(int step, int nops);
/*
 * nvtx-ops.c: NCCL's ranges as NCCL >= 2.25 pushes them on domain "NCCL", with their
 * extended payloads: a communicator's creation, and an all-reduce of `bytes`.
 */
void nvtx_ops_nccl_init(uint64_t comm, int nranks, int rank);
void nvtx_ops_allreduce(uint64_t comm, uint64_t bytes);

#endif
