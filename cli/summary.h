/* SPDX-License-Identifier: MIT */
/*
 * cli/summary.h — `orrery summary`: where the time of a measured trace goes, gathered
 * once (cli/summary.c) and printed as text, JSON or CSV (cli/summary-out.c).
 */
#ifndef ORRERY_CLI_SUMMARY_H
#define ORRERY_CLI_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"

/* GPU idle time, explained (cli/summary-idle.c). */
struct sum_idle {
	int64_t idle_ns;        /* no GPU task runs */
	int64_t host_wait_ns;   /* ... and what runs next was not launched yet */
	int64_t kernel_wait_ns; /* ... it was, and waited on an event or a collective's peers */
	int64_t other_ns;       /* ... it was, without such a wait: latency, queueing */
};

/* One stream over the rank-steps shown: its idle time explained, its queue. */
struct sum_stream_idle {
	int32_t rank;
	int64_t stream;
	struct sum_idle idle;
	double queue_mean; /* launched, not started GPU tasks, time-weighted over the steps */
	int64_t queue_max;
};

/* Launch delays (GPU start less the launch call's start) of one kernel class. */
#define SUM_CLASSES 7
struct sum_delays {
	const char *name; /* gemm, attention, communication, reduction, elementwise, copy, other */
	int64_t *ns;
	size_t n, cap;
	int64_t p50, p90, max;
};

/* A rank's kernels in the steps shown, and those shorter than 10 us. */
struct sum_short {
	int32_t rank;
	size_t kernels, short_kernels;
	int64_t kernel_ns, short_ns;
};

/* One rank-step of the measured trace. */
struct sum_step {
	int32_t rank; /* global */
	int64_t step;
	int64_t step_ns;
	struct orr_breakdown b; /* measured */
	int64_t busy_ns;        /* some GPU task runs */
	int64_t copy_ns;        /* copies and sets, summed */
	struct sum_idle idle;   /* the device's (every stream's) idle time, explained */
};

/* Time spent under one name (kernels, ops) or on one stream, in the steps. */
struct sum_item {
	uint32_t name; /* kernels and ops: interned; streams: ORR_NONE */
	int32_t rank;  /* streams: global rank; else -1 */
	int64_t stream;
	size_t count;
	int64_t ns;
};

/* Collective instances of one kind, size, group and link. */
struct sum_coll {
	enum orr_coll_kind kind;
	enum orr_link link;
	double bytes; /* nccl-tests' S; NaN when unknown */
	bool sized_by_caller;
	int group;
	size_t count, alone;
	double ns;          /* summed: each instance's shortest member */
	uint32_t algo_task; /* a member, whose kernel name gives the algorithm */
};

#define SUM_MEM_BINS 200 /* a timeline's bins */

/*
 * A series over the capture in SUM_MEM_BINS bins of bin_ns from t0_ns: each bin's
 * largest value; a bin without a sample keeps the last value before it.
 */
struct sum_timeline {
	int64_t t0_ns, bin_ns;
	double v[SUM_MEM_BINS];
};

/* A rank's CUDA caching allocator over the capture (cli/summary-memory.c). */
struct sum_mem {
	int32_t rank, device;
	size_t samples;
	int64_t peak_allocated, peak_allocated_ns, peak_allocated_step; /* step -1: none */
	int64_t peak_reserved;                                          /* -1 unknown */
	struct sum_timeline allocated, reserved; /* reserved: -1 where unknown */
	/* the estimator's memory of the recorded configuration (NAN: not a transformer) */
	double model_bytes, model_state_bytes, model_activation_bytes;
	const char *model_missing; /* what the structure lacks; NULL */
};

/* A counter series of a rank over the capture (cli/summary-memory.c). */
struct sum_counter {
	int32_t rank;
	uint32_t name, series; /* interned in the trace */
	size_t samples;
	double min, max, mean;
	struct sum_timeline bins;
};

struct summary {
	const char *path;
	const struct orr_graph *g;
	size_t nranks;
	struct sum_step *steps;
	size_t nsteps;
	struct sum_item *kernels, *ops, *streams;
	size_t nkernels, nops, nstreams;
	int64_t kernel_ns, op_ns; /* totals of the lists above */
	struct sum_coll *colls;
	size_t ncolls;
	size_t colls_unknown; /* instances of unknown kind, group or size, not listed */
	int32_t straggler;    /* the rank the others wait for; -1 */
	double straggler_wait_ns, others_wait_ns; /* its mean waiting, the others' median */
	struct sum_stream_idle *stream_idle;
	size_t nstream_idle, cap_stream_idle;
	struct sum_delays delays[SUM_CLASSES];
	struct sum_short *shorts;
	size_t nshorts, cap_shorts;
	struct sum_mem *mem; /* ranks with memory samples */
	size_t nmem;
	struct sum_counter *counters; /* every rank's series */
	size_t ncounters;
};

struct cli_select;
/* What the rank-steps sel selects (NULL: all) hold. */
void summary_gather(struct summary *s, const char *path, const struct orr_replay *r,
		    const struct cli_select *sel);
void summary_release(struct summary *s);
/*
 * Each op's CPU self time on its thread: its duration less those of the ops directly
 * inside it, at least 0; per event of r (0 for the others).  malloc'ed (free()).
 */
struct orr_rank;
int64_t *summary_op_self_times(const struct orr_rank *r);
/*
 * GPU idle explained for graph rank k in its windows w[0..nw) (steps[0..nw) are its
 * rank-steps), its streams' idle and queues, launch delays and short kernels
 * (cli/summary-idle.c); then the delays' percentiles once every rank is in.
 */
struct orr_step;
void summary_idle(struct summary *s, size_t k, const struct orr_step *w, size_t nw,
		  struct sum_step *steps);
void summary_idle_finish(struct summary *s);
/*
 * The class of GPU task t: 0 gemm, 1 attention, 2 communication, 3 reduction,
 * 4 elementwise, 5 copy (copies and sets), 6 other, from the kernel's name; and its name.
 */
struct orr_graph;
size_t summary_kernel_class(const struct orr_graph *g, uint32_t t);
const char *summary_class_name(size_t c);
struct json_out;
void summary_idle_text(const struct summary *s);
/* Memory and counters (cli/summary-memory.c): gathered for the selected ranks that have them. */
void summary_memory(struct summary *s, const struct cli_select *sel);
void summary_memory_text(const struct summary *s);
void summary_memory_json(struct json_out *j, const struct summary *s);
void summary_idle_json_step(struct json_out *j, const struct sum_step *x);
void summary_idle_json(struct json_out *j, const struct summary *s);
void summary_text(const struct summary *s, size_t top);
void summary_json(const struct summary *s, size_t top);
void summary_csv(const struct summary *s);
/* "RING_LL" from "ncclDevKernel_AllReduce_Sum_f16_RING_LL(...)"; "" when none. */
void summary_algorithm(const char *kernel, char *buf, size_t size);

#endif
