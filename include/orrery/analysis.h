/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis.h — what the front ends report, computed once: which rank-steps an
 * analysis covers (orr_select), the models fitted on a rank (orrery fit), where a
 * measured trace's time goes (orrery summary), the replay against the measured trace per
 * rank-step and its what-if scenarios (orrery replay), two sides compared (orrery diff),
 * the Perfetto timelines, what each rank holds (orrery info), and the layout of these
 * structs for bindings.
 *
 * Every analysis is a function over the trace, graph and replay types that fills a plain
 * struct; the command line (cli/) and the Python package (python/) only format it.  The
 * same input gives the same struct, byte for byte in every report made of it.
 *
 * Ownership: a result borrows the graph (and its trace) or replay it was computed on,
 * which must outlive it; what it allocates is freed by its release function, which
 * accepts a zeroed struct.  Analyses do not fail on data: what a trace lacks is a field
 * left unknown (NaN, -1, ORR_NONE, NULL) as each field says.  Those that replay or write
 * (orr_scenario_report_run(), orr_timeline_write()) return 0 or a negative code, the
 * replay's with its struct orr_diag.  Allocation failure is fatal (orr_xmalloc()).
 * Nothing here prints.
 * Thread safety: analyses only read the graph and replay they are given; several may run
 * at once on one of them, each into a result of its own.
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
/* The graph index of global rank `rank` (-1: the first); SIZE_MAX when absent. */
size_t orr_graph_rank_index(const struct orr_graph *g, int64_t rank);
/* A structure value with its name ("layers", "tp", ...). */
struct orr_named_value {
	const char *name;
	const struct orr_value *v; /* borrowed from the structure */
};
/* The structure's values in report order (as orrery fit prints them) into v (room for
 * 20); how many. */
size_t orr_structure_values(const struct orr_structure *s, struct orr_named_value *v);

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

/* ---- a replay against the measured trace, per rank-step (orrery replay; analysis/replay-rows.c) ---- */

/* |predicted - measured| / measured of a step; NaN when the measured time is not positive. */
double orr_step_error(const struct orr_replay_step *s);
/* One rank-step of `orrery replay`. */
struct orr_replay_row {
	int32_t rank; /* global rank */
	struct orr_replay_step s;
	double error;
	double busy_l1;
	struct orr_breakdown measured, predicted;
	struct orr_unexplained unexplained; /* over the measured window (the trust signal) */
	double unexplained_share;           /* total / measured step time; NaN when it is 0 */
	bool trust_low;                     /* unexplained_share > ORR_TRUST_MAX_UNEXPLAINED */
};

/* Everything `orrery replay` prints; path is the caller's label, borrowed. */
struct orr_replay_report {
	const char *path;
	const struct orr_graph *g;
	size_t nranks;
	struct orr_replay_row *rows; /* rank-steps, by rank then step */
	size_t nrows;
	struct orr_replay_row *job; /* job steps: s and error only */
	size_t njob;
	double mean_error, max_error;         /* over rank-steps; NaN when there is none */
	double job_mean_error, job_max_error; /* over job steps */
	size_t trust_low;                     /* rank-steps of low trust */
	double max_unexplained_share;         /* over rank-steps; NaN when there is none */
	struct orr_graph_stats stats;
};

/* The rank-steps and job steps of r that sel selects (NULL: all). */
void orr_replay_report_init(struct orr_replay_report *rep, const char *path,
			    const struct orr_replay *r, const struct orr_select *sel);
void orr_replay_report_release(struct orr_replay_report *rep);
/* The rows a table of steps shows: the job steps, or a one-rank trace's own steps. */
const struct orr_replay_row *orr_replay_report_table(const struct orr_replay_report *rep,
						     size_t *ret_n);

/* ---- what-if rules and scenarios (orrery replay --scale, --scenario; analysis/scenario*.c) ---- */

/* A CPU rule, cpu:GLOB=FACTOR or cpu@RANK:GLOB=FACTOR; the glob is owned. */
struct orr_cpu_rule {
	char *glob;
	double factor;
	int32_t rank; /* global; -1: every rank */
};

/*
 * A communication rule: latency:GLOB=FACTOR multiplies the latency part of matching
 * collective kernels, bandwidth:GLOB=FACTOR their bandwidth (their transfer part is
 * divided by it); the glob is owned.
 */
struct orr_comm_rule {
	char *glob;
	double factor;
	bool bandwidth;
};

/*
 * The --scale rules given, in order: GLOB=FACTOR on GPU tasks (v, for the replay),
 * cpu:GLOB=FACTOR / cpu@RANK:GLOB=FACTOR on CPU tasks (cpu), latency:GLOB=FACTOR and
 * bandwidth:GLOB=FACTOR on collective kernels (comm); globs are owned.  A scenario's
 * rules are numbered in that order: v, then cpu, then comm.
 */
struct orr_scales {
	struct orr_scale *v;
	size_t n, cap;
	struct orr_cpu_rule *cpu;
	size_t ncpu, cpucap;
	struct orr_comm_rule *comm;
	size_t ncomm, commcap;
};

/* Adds one rule as written; -EINVAL when it is malformed or FACTOR is not from 0 to ORR_SCALE_MAX. */
int orr_scales_add(struct orr_scales *s, const char *arg);
void orr_scales_release(struct orr_scales *s);

struct orr_rule_match;
/*
 * Per task of g, the product of the CPU rules' factors that match it (NULL without CPU
 * rules), for orr_replay_options.cpu_factors: a CPU task matches when the framework op
 * of its call or the op running in the time before it (orr_op_name(),
 * orr_op_name_at()) matches the glob, on the rule's rank.  With steps_from, ret[k] is
 * what CPU rule k matched in its steps (its tasks' duration and time before them).
 */
float *orr_cpu_factors(const struct orr_graph *g, const struct orr_scales *s,
		       const struct orr_replay *steps_from, struct orr_rule_match *ret);
/*
 * Per task of g, the factor the communication rules give its duration (NULL without
 * such rules), for orr_replay_options.task_factors (cli/scenario.c): a collective
 * kernel's time d is its latency L plus its transfer, L from the model of its kind and
 * link fitted on the trace's own collectives (orrery fit), or from costs (orrery fit
 * -o, with --nccl-tests runs) when given, at most d; its factor is
 * (L·latency + (d - L) / bandwidth) / d, the rules' factors that match its name
 * multiplied.  A kernel whose collective has no size, kind or group, or whose model
 * cannot separate latency from bandwidth, keeps its time (counted as unsplit).  With
 * steps_from, ret[k] is what communication rule k matched in its steps.
 */
struct orr_costs;
float *orr_comm_factors(const struct orr_graph *g, const struct orr_scales *s,
			const struct orr_costs *costs, const struct orr_replay *steps_from,
			struct orr_rule_match *ret);

/* A what-if of `orrery replay`: a name and its --scale rules. */
struct orr_scenario {
	char *name; /* owned */
	struct orr_scales scales;
};

struct orr_scenarios {
	struct orr_scenario *v;
	size_t n, cap;
};

/*
 * The replay options of scenario rules s, and the factor arrays they hold: GPU rules as
 * scales, CPU and communication rules as per-task factors (costs: as for
 * orr_comm_factors()).  With matches (orr_scales_rule_count(s) of them) and steps_from, what
 * each rule matches in the steps of steps_from.
 */
struct orr_scenario_replay {
	struct orr_replay_options opts;
	float *cpu, *comm;
};
void orr_scenario_options(struct orr_scenario_replay *ret, const struct orr_graph *g,
			  const struct orr_scales *s, const struct orr_costs *costs,
			  const struct orr_replay *steps_from, struct orr_rule_match *matches);
void orr_scenario_options_release(struct orr_scenario_replay *r);

/* A scenario's rules: GPU, then CPU, then communication ones. */
size_t orr_scales_rule_count(const struct orr_scales *s);
/* Rule k of them, as written: "nccl*=0.5", "cpu@1:*=2", "latency:*=0.5". */
const char *orr_scales_rule_label(const struct orr_scales *s, size_t k, char *buf, size_t size);

/* Moves the --scale rules given into one scenario, named after them ("nccl*=0.5"), first. */
void orr_scenarios_take_scales(struct orr_scenarios *s, struct orr_scales *scales);
/* Appends the scenarios of a --scenario FILE; -1 with the reason ("FILE:LINE: ...") in err. */
int orr_scenarios_read(struct orr_scenarios *s, const char *path, char *err, size_t size);
void orr_scenarios_release(struct orr_scenarios *s);

/*
 * What one rule matches: its tasks in the steps of their ranks and their measured time
 * (a CPU task's with the time before it).
 */
struct orr_rule_match {
	size_t tasks;
	int64_t gpu_ns;
	size_t rank_steps; /* the steps they were counted in */
	/* Communication rules: the latency part of gpu_ns, and the matched kernels that
	 * keep their time (no size, or a model that cannot split it). */
	int64_t latency_ns;
	size_t unsplit;
};

/* ret[i] for scales->v[i] (the GPU rules), over the graph of r. */
void orr_rule_matches(const struct orr_replay *r, const struct orr_scales *scales,
		      struct orr_rule_match *ret);

/* One scenario replayed: its report (predicted = the scenario) and its rules' matches. */
struct orr_scenario_run {
	const struct orr_scenario *sc;
	struct orr_replay_report rep;
	struct orr_rule_match *matches;
	/* Of the table's steps, the one whose critical path holds the largest share of time
	 * no rule moves (orr_replay_path_fixed()): that time, its share, and the step. */
	struct orr_path_fixed fixed;
	double fixed_share;
	int64_t fixed_step;
};

/* `orrery replay` with scenarios: the trace replayed as recorded, then each scenario. */
struct orr_scenario_report {
	const char *path;
	bool costs; /* communication rules split by a costs file's models */
	struct orr_replay_report base;
	struct orr_scenario_run *runs;
	size_t nruns;
};

/*
 * Replays each scenario of sc on the graph of base (the replay as recorded, whose rows
 * are w->base), its rules' factors from orr_scenario_options() (costs may be NULL);
 * progress, when not NULL, is every replay's progress callback.  0, or the error of
 * the replay of scenario sc->v[w->nruns] with reterr_diag; w holds the runs before it
 * either way (orr_scenario_report_release()).
 */
int orr_scenario_report_run(struct orr_scenario_report *w, const char *path,
			    const struct orr_replay *base, const struct orr_scenarios *sc,
			    const struct orr_costs *costs, const struct orr_select *sel,
			    void (*progress)(void *data, uint64_t done, uint64_t total),
			    void *progress_data, struct orr_diag *reterr_diag);
void orr_scenario_report_release(struct orr_scenario_report *w);

/*
 * The names `orrery critical-path` lists time under (analysis/op-names.c), as ids into the
 * trace's strings.  orr_op_name(): a GPU task's own name; a CPU call's framework op (the
 * op with its external id), else its own name.  orr_op_name_at(): for CPU time between
 * calls, the innermost op or annotation (not a step) running on the task's thread at
 * measured time t_ns, else ORR_STR_NONE (time outside every op: the framework's own
 * code, or code the profiler did not record).
 */
struct orr_op_names;
struct orr_op_names *orr_op_names_new(const struct orr_graph *g);
void orr_op_names_free(struct orr_op_names *n);
uint32_t orr_op_name(const struct orr_op_names *n, uint32_t task);
uint32_t orr_op_name_at(const struct orr_op_names *n, uint32_t task, int64_t t_ns);

/* ---- what each rank of a trace holds (orrery info; analysis/rank-stats.c) ---- */

/* Per-rank numbers that take a pass over the events; per place: indexed as r->places. */
struct orr_rank_stats {
	size_t by_kind[ORR_EVENT_KIND_COUNT];
	size_t by_call[ORR_CALL_COUNT];
	size_t *place_events;
	int64_t *place_busy_ns;
	size_t launches_without_task, tasks_without_launch, flow_linked;
};

struct orr_coll_row {
	uint32_t type;
	size_t count;
	int64_t dur_ns, bytes; /* bytes: of the kernels whose collective gives its size */
	size_t unsized;        /* kernels whose collective gives no size */
};

/* Counts the events of r into st; release it with orr_rank_stats_release(). */
void orr_rank_stats_count(const struct orr_rank *r, struct orr_rank_stats *st);
void orr_rank_stats_release(struct orr_rank_stats *st);
/* NCCL kernels by collective type, in order of first appearance; *ret is to be freed. */
size_t orr_rank_collective_rows(const struct orr_rank *r, struct orr_coll_row **ret);
/* A rank read from a native file knows its process and how the capture went. */
bool orr_rank_has_capture(const struct orr_rank *r);
/* Keeps the steps of s[0..n) that sel selects, in order; how many. */
size_t orr_select_steps(const struct orr_select *sel, struct orr_step *s, size_t n);

/* ---- the timelines as a Perfetto file (orrery replay --timeline; analysis/timeline.c) ---- */

/*
 * Writes the measured and predicted timelines of every rank as a Chrome/Perfetto
 * trace-event JSON file, as orr_outfile_open() writes (a temporary renamed when
 * complete), with each step's critical path on a track of its own (paths may be
 * NULL): of the ranks sel selects, and of their tasks those that overlap a selected
 * step's window on their timeline (sel NULL: all), to the file path.  Returns 0 or a
 * negative errno (nothing is left behind then).  A front end that wants no temporary
 * left behind by a signal catches them (orr_outfile_catch_signals(), common.h).
 */
struct orr_step_path {
	int64_t step;
	struct orr_path_seg *segs; /* owned by the caller */
	size_t n;
};

int orr_timeline_write(const struct orr_replay *r, const struct orr_step_path *paths, size_t npaths,
		       const struct orr_select *sel, const char *path);

/* ---- a critical path added up by op (orrery critical-path; analysis/path-ops.c) ---- */

/* What the path spends in one op (by name) on one thread or stream. */
struct orr_path_op {
	uint32_t name;   /* interned in the trace */
	uint32_t proc;   /* the graph's processor */
	bool before;     /* CPU time outside every op, before the call name names */
	const char *str; /* the name itself, borrowed from the trace */
	int64_t ns;
	int64_t by_cat[ORR_PATH_CAT_COUNT];
	size_t count;
};

/* A step's path added up; s is set by the caller (borrowed). */
struct orr_path_step {
	const struct orr_replay_step *s;
	int64_t path_ns;
	int64_t by_cat[ORR_PATH_CAT_COUNT];
	struct orr_path_op *ops; /* most time first, then by name */
	size_t nops;
};

/*
 * The name a segment of a path of r is listed under (orr_op_name(), orr_op_name_at() of
 * names); *ret_before when it is CPU time outside every op, listed as "(no op) before"
 * the call that follows it.
 */
uint32_t orr_path_seg_name(const struct orr_replay *r, const struct orr_op_names *names,
			   const struct orr_path_seg *seg, bool *ret_before);
/*
 * Adds up segs[0..n) (orr_replay_critical_path()) into ps: by category, and by op merged
 * by name, whether before, and processor.  orr_path_step_release() frees ps->ops.
 */
void orr_path_step_tally(const struct orr_replay *r, const struct orr_op_names *names,
			 const struct orr_path_seg *segs, size_t n, struct orr_path_step *ps);
void orr_path_step_release(struct orr_path_step *ps);
/* The category an op spends most of its path time in. */
enum orr_path_cat orr_path_op_category(const struct orr_path_op *o);

/* ---- for bindings (analysis/layout.c) ---- */

/*
 * sizeof(struct TYPE) with field NULL, else offsetof(struct TYPE, FIELD), for the
 * structs of this header (and the replay's and graph's they hold) that python/orrery
 * reads with ctypes; SIZE_MAX for one it does not list.  TYPE without "struct ":
 * "orr_summary".
 */
size_t orr_analysis_layout(const char *type, const char *field);

#ifdef __cplusplus
}
#endif

#endif
