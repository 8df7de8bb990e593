/* SPDX-License-Identifier: MIT */
/*
 * bench/gen-job-internal.h — what gen-job.c (the simulation) and gen-job-program.c (the
 * program every rank runs, the kernel table, sizing) share.
 */
#ifndef ORRERY_BENCH_GEN_JOB_INTERNAL_H
#define ORRERY_BENCH_GEN_JOB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen-job.h"
#include "../traces/internal.h"

enum { TH_MAIN, TH_BWD, N_THREADS };
enum { ST_COMPUTE, ST_COPY, ST_TP, ST_DP, N_STREAMS };

enum kclass {
	K_EMBED,
	K_LN,
	K_GEMM_QKV,
	K_FLASH,
	K_GEMM_PROJ,
	K_ADD,
	K_GEMM_FC1,
	K_GELU,
	K_GEMM_FC2,
	K_GEMM_LOGITS,
	K_SOFTMAX,
	K_SOFTMAX_BWD,
	K_GELU_BWD,
	K_LN_BWD,
	K_FLASH_BWD,
	K_ADAM,
	K_FILL,
	N_KCLASSES
};

enum coll_type { C_ALLREDUCE, C_REDUCE_SCATTER, C_ALLGATHER, N_COLL_TYPES };

enum insn_kind {
	I_STEP_BEGIN, /* ProfilerStep annotation, batch copy */
	I_KERNEL,     /* an op launching a kernel on the compute stream */
	I_COLL,       /* a collective on its group's NCCL stream */
	I_BWD_BEGIN,  /* the main thread hands over to the autograd thread */
	I_BWD_END,    /* ... and takes over again */
	I_WAIT_DP,    /* the compute stream waits for the DP stream */
	I_STEP_END,   /* cudaStreamSynchronize of the compute stream */
};

#define F_MM_BWD 0x1 /* I_KERNEL: a GEMM of the backward pass (MmBackward0, aten::mm) */
#define F_DP     0x2 /* I_COLL: on the data-parallel group, else tensor-parallel */

struct insn {
	uint8_t kind;   /* enum insn_kind */
	uint8_t thread; /* TH_* */
	uint8_t what;   /* I_KERNEL: enum kclass; I_COLL: enum coll_type */
	uint8_t flags;  /* F_* */
	uint32_t name;  /* I_STEP_BEGIN: "ProfilerStep#k" */
	int64_t dur_ns; /* I_KERNEL: the kernel's time; I_COLL: the transfer time */
	int64_t seq;    /* I_COLL: its sequence number in its process group */
	int64_t nelems; /* I_COLL: elements of the full buffer */
};

/* What each rank's tables hold at the end: exact, they are reserved once. */
struct gen_job_counts {
	size_t events, syncs, colls, copies;
};

struct gen_job {
	struct orr_trace *t;
	uint64_t seed;
	size_t ranks, tp, dp, layers;
	bool copy_stream;
	struct insn *prog;
	size_t nprog, cap;
	struct gen_job_counts count;
	/* interned names */
	uint32_t kernel[N_KCLASSES], op[N_KCLASSES], parent[N_KCLASSES]; /* parent: or NONE */
	uint32_t mm_bwd_op, mm_bwd_parent;
	uint32_t coll_type[N_COLL_TYPES], coll_kernel[N_COLL_TYPES];
	uint32_t api_name[8], name[8];
	uint32_t bf16, nccl, device_name, pg_desc[2];
	uint32_t *tp_pg, *dp_pg; /* pg_name of each TP group, each DP group */
};

/* Checks the options, makes the trace and the program.  0 or -EINVAL. */
int gen_job_init(struct gen_job *j, const struct gen_job_options *o);
/* Frees the program and the trace if it is still there. */
void gen_job_release(struct gen_job *j);
/* Interns the simulation's own names (gen-job.c). */
void gen_job_intern(struct gen_job *j);

uint64_t gen_job_mix(uint64_t x);
int64_t gen_job_uniform(uint64_t *s, int64_t lo, int64_t hi);
int64_t gen_job_jitter(uint64_t *s, int64_t ns, int pct);

#endif
