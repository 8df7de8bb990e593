/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-summary.h — where the time of a measured trace goes (orrery summary;
 * analysis/summary/): per rank-step, kernels, ops, collectives, idle explained,
 * launch delays, memory and counters.
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_SUMMARY_H
#define ORRERY_ANALYSIS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-select.h"
#include "orrery/estimator.h"
#include "orrery/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPU idle time, explained (analysis/summary/summary-idle.c). */
struct orr_sum_idle {
	int64_t idle_ns;        /* no GPU task runs */
	int64_t host_wait_ns;   /* ... and what runs next was not launched yet */
	int64_t kernel_wait_ns; /* ... it was, and waited on an event or a collective's peers */
	int64_t other_ns;       /* ... it was, without such a wait: latency, queueing */
};

/* One stream over the rank-steps shown: its idle time explained, its queue. */
struct orr_sum_stream_idle {
	int32_t rank;
	int64_t stream;
	struct orr_sum_idle idle;
	double queue_mean; /* launched, not started GPU tasks, time-weighted over the steps */
	int64_t queue_max;
};

/* Launch delays (GPU start less the launch call's start) of one kernel class. */
#define ORR_SUM_CLASSES         7
#define ORR_SUM_SHORT_KERNEL_NS 10000 /* a kernel shorter than this is launch-bound territory */
struct orr_sum_delays {
	const char *name; /* gemm, attention, communication, reduction, elementwise, copy, other */
	int64_t *ns;
	size_t n, cap;
	int64_t p50, p90, max;
};

/* A rank's kernels in the steps shown, and those shorter than 10 us. */
struct orr_sum_short {
	int32_t rank;
	size_t kernels, short_kernels;
	int64_t kernel_ns, short_ns;
};

/* One rank-step of the measured trace. */
struct orr_sum_step {
	int32_t rank; /* global */
	int64_t step;
	int64_t step_ns;
	struct orr_breakdown b;   /* measured */
	int64_t busy_ns;          /* some GPU task runs */
	int64_t copy_ns;          /* copies and sets, summed */
	struct orr_sum_idle idle; /* the device's (every stream's) idle time, explained */
};

/* Time spent under one name (kernels, ops) or on one stream, in the steps. */
struct orr_sum_item {
	uint32_t name; /* kernels and ops: interned; streams: ORR_NONE */
	int32_t rank;  /* streams: global rank; else -1 */
	int64_t stream;
	size_t count;
	int64_t ns;
};

/* Collective instances of one kind, size, group and link. */
struct orr_sum_coll {
	enum orr_coll_kind kind;
	enum orr_link link;
	double bytes; /* nccl-tests' S; NaN when unknown */
	bool sized_by_caller;
	int group;
	size_t count, alone;
	double ns;          /* summed: each instance's shortest member */
	uint32_t algo_task; /* a member, whose kernel name gives the algorithm */
};

/*
 * The bandwidths of an instance of c, bytes/s: algbw, its size over its mean time
 * (nccl-tests' S / t); busbw, algbw times nccl-tests' bus factor of its kind and group
 * (orr_coll_bus_factor()).  NaN when the size or the time is unknown.
 */
double orr_sum_coll_algbw(const struct orr_sum_coll *c);
double orr_sum_coll_busbw(const struct orr_sum_coll *c);

#define ORR_SUM_MEM_BINS 200 /* a timeline's bins */

/*
 * A series over the capture in ORR_SUM_MEM_BINS bins of bin_ns from t0_ns: each bin's
 * largest value; a bin without a sample keeps the last value before it.
 */
struct orr_sum_timeline {
	int64_t t0_ns, bin_ns;
	double v[ORR_SUM_MEM_BINS];
};

/* A rank's CUDA caching allocator over the capture (analysis/summary/summary-memory.c). */
struct orr_sum_mem {
	int32_t rank, device;
	size_t samples;
	int64_t peak_allocated, peak_allocated_ns, peak_allocated_step; /* step -1: none */
	int64_t peak_reserved;                                          /* -1 unknown */
	struct orr_sum_timeline allocated, reserved; /* reserved: -1 where unknown */
	/* the estimator's memory of the recorded configuration (NAN: not a transformer) */
	double model_bytes, model_state_bytes, model_activation_bytes;
	const char *model_missing; /* what the structure lacks; NULL */
};

/* A counter series of a rank over the capture (analysis/summary/summary-memory.c). */
struct orr_sum_counter {
	int32_t rank;
	uint32_t name, series; /* interned in the trace */
	size_t samples;
	double min, max, mean;
	struct orr_sum_timeline bins;
};

/* Everything orrery summary reports, over the rank-steps selected. */
struct orr_summary {
	const char *path; /* the caller's label, borrowed */
	const struct orr_graph *g;
	size_t nranks;
	struct orr_sum_step *steps;
	size_t nsteps;
	struct orr_sum_item *kernels, *ops, *streams;
	size_t nkernels, nops, nstreams;
	int64_t kernel_ns, op_ns; /* totals of the lists above */
	/* the GPU tasks of the selected rank-steps per class (orr_kernel_class_of()) */
	size_t class_tasks[ORR_SUM_CLASSES];
	int64_t class_ns[ORR_SUM_CLASSES];
	struct orr_sum_coll *colls;
	size_t ncolls;
	size_t colls_unknown; /* instances of unknown kind, group or size, not listed */
	int32_t straggler;    /* the rank the others wait for; -1 */
	double straggler_wait_ns, others_wait_ns; /* its mean waiting, the others' median */
	struct orr_sum_stream_idle *stream_idle;
	size_t nstream_idle, cap_stream_idle;
	struct orr_sum_delays delays[ORR_SUM_CLASSES];
	struct orr_sum_short *shorts;
	size_t nshorts, cap_shorts;
	struct orr_sum_mem *mem; /* ranks with memory samples */
	size_t nmem;
	struct orr_sum_counter *counters; /* every rank's series */
	size_t ncounters;
	/* The launch threads' stalls (orr_launch_stalls(), docs/estimator.md "Host stalls")
	 * per job step, over the ranks shown that have any: how many, the least and the most
	 * of one rank; stall_ranks 0: none found. */
	size_t stall_ranks;
	double stall_min_ns, stall_max_ns;
};

/*
 * Where the measured time of r's trace goes in the rank-steps sel selects (NULL: all):
 * per rank-step the breakdown, GPU busy time and copies, idle explained; kernels by GPU
 * time, ops by CPU self time, streams; collective instances by kind, size, group and
 * link; the straggler; launch delays per kernel class; short kernels; memory and
 * counters (docs/orrery-summary.md).  path is a label kept in s (the fit of memory's
 * model is named by it).  orr_summary_release() frees it.
 */
void orr_summary_gather(struct orr_summary *s, const char *path, const struct orr_replay *r,
			const struct orr_select *sel);
void orr_summary_release(struct orr_summary *s);
/*
 * Each op's CPU self time on its thread: its duration less those of the ops directly
 * inside it, at least 0; per event of r (0 for the others).  malloc'ed (free()).
 */
int64_t *orr_op_self_times(const struct orr_rank *r);
/*
 * The class of GPU task t: 0 gemm, 1 attention, 2 communication, 3 reduction,
 * 4 elementwise, 5 copy (copies and sets), 6 other, from the kernel's name; and its name
 * (NULL past ORR_SUM_CLASSES).
 */
size_t orr_kernel_class(const struct orr_graph *g, uint32_t t);
/*
 * The same from a GPU event's kind and name alone (communication by its name): GEMMs
 * as the estimator knows them (orr_gemm_kernel_family(): cuBLAS's nvjet_* too) unless
 * attention's names come first (cuDNN's fused SDPA, flash, fmha).
 */
size_t orr_kernel_class_of(enum orr_event_kind kind, const char *name);
const char *orr_kernel_class_name(size_t c);
/* "RING_LL" from "ncclDevKernel_AllReduce_Sum_f16_RING_LL(...)" in buf; "" when none. */
void orr_nccl_algorithm(const char *kernel, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
