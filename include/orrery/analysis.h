/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis.h — what the front ends report, computed once: the models fitted on a
 * rank (orrery fit), where a measured trace's time goes (orrery summary), ...
 *
 * Every analysis is a function over the trace, graph and replay types that fills a plain
 * struct; the command line (cli/) and the Python package (python/) only format it.  The
 * same input gives the same struct, byte for byte in every report made of it.
 *
 * Ownership: a result borrows the graph (and its trace) or replay it was computed on,
 * which must outlive it; what it allocates is freed by its release function, which
 * accepts a zeroed struct.  Analyses do not fail on data: what a trace lacks is a field
 * left unknown (NaN, -1, ORR_NONE, NULL) as each field says.  Allocation failure is fatal
 * (orr_xmalloc()).  Nothing here prints.
 * Thread safety: analyses of different results may run at once on one graph or replay.
 */
#ifndef ORRERY_ANALYSIS_H
#define ORRERY_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"
#include "orrery/graph.h"
#include "orrery/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the models fitted on one rank (orrery fit; analysis/fit-run.c) ---- */

/* The collectives of one kind and link class, and the model fitted on them. */
struct orr_rank_fit_coll {
	enum orr_coll_kind kind;
	enum orr_link link;
	size_t samples, coupled, by_caller, sizes, groups;
	bool from_alone; /* no coupled sample: fitted on times that include waiting */
	int err;         /* the fit's error, 0 */
	struct orr_coll_model m;
	/* What was measured, for a model the samples cannot constrain. */
	double median_bytes, median_ns, median_bus_bytes_per_s;
	int group; /* the most frequent group size */
};

/* A rank's GEMMs of one role and pass, per step. */
struct orr_rank_fit_role {
	size_t gemms;
	double ns;
};

/* Everything fitted on one rank of a graph. */
struct orr_rank_fit {
	const char *trace; /* the caller's label, borrowed */
	const struct orr_graph *g;
	int32_t rank;
	const char *device;             /* its name in the trace, or NULL */
	const struct orr_gpu_spec *gpu; /* its entry in the hardware table, or NULL */
	struct orr_structure st;
	struct orr_overlap overlap;
	struct orr_parts parts; /* the rank's */
	/* The rank's GEMM samples by role and pass, summed over its steps. */
	struct orr_rank_fit_role roles[ORR_GEMM_ROLE_COUNT][ORR_GEMM_PASS_COUNT];
	size_t rank_gemms, labeled; /* its samples, and those with a role */
	struct orr_gemm_counts gemm_counts;
	struct orr_gemm_model gemm;
	int gemm_err; /* the GEMM fit's error, 0 */
	struct orr_kern_counts kern_counts;
	struct orr_kern_model kern;
	int kern_err; /* the other kernels' fit's error, 0 */
	struct orr_rank_fit_coll *coll;
	size_t ncoll, nobs;
	size_t nccl_runs, nccl_samples; /* of nobs: nccl-tests runs given, their samples */
	struct orr_prof_cost prof;      /* the profiler's options and cost per op and call */
	struct orr_launch_time launch;  /* orr_launch_time_measure() with prof */
};

/*
 * Fits everything on graph rank ri (an index), the collectives also on nt[0..nnt)'s
 * samples (nccl-tests runs); trace is a label kept in ret.  orr_rank_fit_release()
 * frees it.
 */
void orr_rank_fit_run(const struct orr_graph *g, size_t ri, const char *trace,
		      const struct orr_nccl_tests *nt, size_t nnt, struct orr_rank_fit *ret);
void orr_rank_fit_release(struct orr_rank_fit *f);
/*
 * Fits the collectives of o[0..n) of c->kind and c->link (set by the caller): on the
 * coupled instances (their times are transfers), else on those seen alone.
 */
void orr_rank_fit_coll_class(const struct orr_coll_obs *o, size_t n, struct orr_rank_fit_coll *c);
/*
 * The launch threads' time per step (orr_launch_time_measure()), with the part the
 * profiler that recorded g added (its cost in *ret_prof when not NULL).
 */
void orr_rank_fit_launch_time(const struct orr_graph *g, struct orr_launch_time *ret,
			      struct orr_prof_cost *ret_prof);
/* The hardware table's bandwidth for a link class, bytes/s per direction; 0 when unknown. */
double orr_rank_fit_spec_link(const struct orr_rank_fit *f, enum orr_link l);
/* The precision a trace ran at: its GEMM classes' operand type (BF16 without GEMMs). */
enum orr_dtype orr_gemm_precision(const struct orr_gemm_model *m);

/* ---- which rank-steps an analysis covers ---- */

/*
 * Steps A..B (steps_given) and ranks (sorted; NULL: every rank).  A NULL selection, or a
 * zeroed one, selects everything.  A trace without step annotations has one step, -1
 * ("all"), which a steps selection leaves out.
 */
struct orr_select {
	bool steps_given;
	int64_t step_lo, step_hi;
	int32_t *ranks; /* sorted; NULL: every rank; owned (orr_select_release()) */
	size_t nranks, cap;
};

bool orr_select_step(const struct orr_select *s, int64_t step);
bool orr_select_rank(const struct orr_select *s, int32_t rank);
void orr_select_release(struct orr_select *s);

/* ---- where the time of a measured trace goes (orrery summary; analysis/summary/) ---- */

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
const char *orr_kernel_class_name(size_t c);
/* "RING_LL" from "ncclDevKernel_AllReduce_Sum_f16_RING_LL(...)" in buf; "" when none. */
void orr_nccl_algorithm(const char *kernel, char *buf, size_t size);

/* ---- what a step is made of on two sides, compared (orrery diff; analysis/diff-*.c) ---- */

/* Time under one name (a kernel, an op, an op with its shapes), summed over rank-steps. */
struct orr_diff_item {
	char *key;  /* the name, or "name [shapes]" */
	char *name; /* the name alone */
	int64_t ns;
	uint64_t count;
	uint64_t shaped; /* ops: how many had their shapes recorded */
};

struct orr_diff_map {
	struct orr_strtab *ids; /* key -> index + 1 */
	struct orr_diff_item *v;
	size_t n, cap;
};

struct orr_diff_rank {
	int32_t rank;
	size_t steps;
	int64_t step_ns; /* summed over its steps */
	struct orr_breakdown b;
};

/* One side of a diff: a measured trace, or the predicted timeline of one. */
struct orr_diff_profile {
	const char *label;
	bool predicted;
	size_t steps; /* rank-steps */
	struct orr_diff_rank *ranks;
	size_t nranks;
	struct orr_diff_map kernels, ops, ops_shaped;
	int64_t class_ns[ORR_SUM_CLASSES];
	uint64_t class_count[ORR_SUM_CLASSES];
};

/* One compared item: per rank-step on each side (analysis/diff-rows.c). */
struct orr_diff_row {
	const char *kind; /* "kernel", "op", "class" */
	const char *key;
	double a, b; /* ns per rank-step */
	uint64_t ca, cb;
};

struct orr_diff_table {
	struct orr_diff_row *v;
	size_t n, cap;
};

void orr_diff_table_release(struct orr_diff_table *t);

/* A whole side, per rank-step: the step time and the breakdown. */
struct orr_diff_totals {
	double step, compute, comm, wait, idle;
};

/* Rows by contribution (|b - a|, then name): kernel classes, kernels, ops. */
void orr_diff_class_rows(struct orr_diff_table *t, const struct orr_diff_profile *a,
			 const struct orr_diff_profile *b);
void orr_diff_union_rows(struct orr_diff_table *t, const char *kind, const struct orr_diff_map *ma,
			 const struct orr_diff_map *mb, const struct orr_diff_profile *a,
			 const struct orr_diff_profile *b);
/* Ops by name and shapes where both sides recorded every op's shapes, else by name. */
void orr_diff_op_rows(struct orr_diff_table *t, const struct orr_diff_profile *a,
		      const struct orr_diff_profile *b);
struct orr_diff_totals orr_diff_totals_of(const struct orr_diff_profile *p);
/* The rank of b compared with a's i-th: the same number, or the only one of each; NULL. */
const struct orr_diff_rank *orr_diff_peer_rank(const struct orr_diff_profile *a, size_t i,
					       const struct orr_diff_profile *b);
/* A rank's mean step; NaN without steps. */
double orr_diff_rank_mean(const struct orr_diff_rank *r);

/*
 * The profile of r: its measured timeline, or with predicted its replay's; label is
 * borrowed.  orr_diff_profile_release() frees it.
 */
void orr_diff_profile_build(struct orr_diff_profile *p, const char *label,
			    const struct orr_replay *r, bool predicted);
void orr_diff_profile_release(struct orr_diff_profile *p);
/* The item of key in m, or NULL. */
const struct orr_diff_item *orr_diff_find(const struct orr_diff_map *m, const char *key);

#ifdef __cplusplus
}
#endif

#endif
