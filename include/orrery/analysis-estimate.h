/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-estimate.h — one training configuration estimated, as `orrery estimate`
 * reports it and `orrery whatif` starts from it (docs/orrery-estimate.md): from a trace
 * (its tasks re-timed and its graph replayed, or its replay scaled by the ratio of two
 * synthesized steps), or from a model description alone (a step synthesized and
 * replayed); the memory per GPU, tokens per second, MFU and HFU; and the account of
 * where each number came from (the sources of a synthesized step's times, the launch
 * thread's time, the memory's reserve) as data the front ends word.
 *
 * The options are orrery estimate's, by the same names (a size named as its option:
 * "tp", "kv-heads", ...).  Results are plain structs; the command line (cli/) and the
 * Python package (python/) only format them.
 *
 * Errors: 0 or a negative errno with d->msg saying what failed in one line, as orrery
 * estimate words it after "orrery: error: ".  -EINVAL with orr_estimate_missing() not
 * NULL is a description that lacks a size it needs (a usage error: d->msg names the
 * option); -ENODEV a GPU the hardware
 * table does not have (or none named); -EXDEV a GPU other than the trace's or the costs
 * file's; -EDOM a configuration Megatron refuses; -ENODATA a trace that does not give
 * its configuration; -ERANGE an option out of its range (orr_estimate_options_check());
 * else the reader's, the synthesis's or the replay's error.  Nothing
 * here prints; allocation failure is fatal.
 * Ownership: an estimate base borrows the graph (and its trace) it was opened on, which
 * must outlive it; orr_estimate_base_close() frees what it holds.  An orr_estimate holds
 * no memory of its own (its strings are the options' and the hardware table's).
 */
#ifndef ORRERY_ANALYSIS_ESTIMATE_H
#define ORRERY_ANALYSIS_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-fit.h"
#include "orrery/estimator.h"
#include "orrery/graph.h"
#include "orrery/replay.h"
#include "orrery/whatif.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the options (analysis/estimate-options.c) ---- */

/* Options that set a size: tp, pp, dp, cp, vpp, layers, ..., last-stage-layers. */
#define ORR_ESTIMATE_NSIZE 15

/* The option name of size i ("tp", "kv-heads", "micro-batch", ...); NULL out of range. */
const char *orr_estimate_size_name(size_t i);

/*
 * The least orr_estimate_options.nic_gbps the model holds for: NCCL's slowest speed of a
 * channel across nodes is 0.12 GB/s (0.96 Gb/s, search.cc); below it a channel would be
 * timed faster than its NIC.
 */
#define ORR_NIC_GBPS_MIN 1.0
/*
 * The most layers an estimate takes (--layers): the synthesized step is built and
 * replayed layer by layer, 100,000 layers 10 s and 2.2 GB (docs/limits.md); the largest
 * models trained have fewer than 200.
 */
#define ORR_ESTIMATE_MAX_LAYERS 10000

struct orr_estimate_options {
	/* the global rank whose structure is the recorded configuration, -1 the first: the
	 * caller's to find (orr_graph_rank_index()), orr_estimate_base_open() takes its index */
	int64_t rank;
	int64_t global_batch;  /* sequences per step; 0: micro-batch x dp (x micro-batches) */
	int64_t gpus_per_node; /* 0: the hardware table's */
	int64_t size[ORR_ESTIMATE_NSIZE]; /* by orr_estimate_size_name(); 0: not given */
	int recompute;                    /* -1: not given; else enum orr_recompute */
	bool sp, distopt, fsdp, overlap_grad, forward_only;
	bool p2p_scatter;   /* Megatron-DeepSpeed's scatter-gather of pipeline transfers */
	bool sync_timers;   /* Megatron's timers synchronize at the passes (orr_train_config) */
	bool sync_layers;   /* DeepSpeed's checkpointing synchronizes at each layer (same) */
	int precision;      /* -1: not given; 0 bf16, 1 fp16, 2 fp32, 3 fp8 */
	int attention;      /* -1: not given; 0 flash, 1 unfused */
	bool swiglu, untie; /* Megatron's --swiglu, --untie-embeddings-and-output-weights */
	int norm;           /* -1: not given; 0 LayerNorm, 1 RMSNorm */
	int positions;      /* -1: not given; 0 learned_absolute, 1 rope */
	double launch_us;   /* the launch thread's time per kernel; NAN: not given */
	double nic_gbps;    /* the network per GPU, Gb/s per direction; 0: the hardware table's */
	bool gemm_tiles;    /* --gemm-model tiles */
	/* --transfer-costs: costs fitted on another GPU time o->gpu by their efficiencies
	 * (orr_estimate_transfer_costs()); a model description only */
	bool transfer_costs;
	/*
	 * the file to write the estimated timeline to (NULL: none); the costs file to time by
	 * instead of fitting (NULL); the trace's name in the results (NULL: a description);
	 * the GPU (a hardware table id or a device name; NULL: the trace's or the costs')
	 */
	const char *timeline, *costs, *trace, *gpu;
	/*
	 * For a progress display (NULL: none): phase(data, what, unit) before each graph
	 * built and replay run ("replaying", "tasks"), phase(data, NULL, NULL) after it, and
	 * progress(data, done, total) as it goes.
	 */
	void (*phase)(void *data, const char *what, const char *unit);
	void (*progress)(void *data, uint64_t done, uint64_t total);
	void *progress_data;
};

/* o set to no option given. */
void orr_estimate_options_init(struct orr_estimate_options *o);
/*
 * 0, or -ERANGE with d naming the option of o out of its range: nic_gbps neither 0 nor
 * ORR_NIC_GBPS_MIN to 1e6 (NAN included), layers past ORR_ESTIMATE_MAX_LAYERS; -EINVAL
 * for transfer_costs without costs.  orr_estimate_base_open() and
 * orr_estimate_description() (so orr_estimate_describe() and orr_whatif_job_open())
 * check it first (after orr_estimate_missing()).
 */
int orr_estimate_options_check(const struct orr_estimate_options *o, struct orr_diag *d);
/* The value of size option `name` ("tp", "kv-heads"), 0 when not given or unknown. */
int64_t orr_estimate_given(const struct orr_estimate_options *o, const char *name);
/* The sizes, recompute, precision, attention, model features and switches o gives, set in c. */
void orr_estimate_apply(const struct orr_estimate_options *o, struct orr_train_config *c);
/*
 * What Megatron turns off in c because the layout leaves it nothing to do: sequence
 * parallelism at TP 1, the distributed optimizer, FSDP and overlapped gradient
 * reductions over one data-parallel rank (dp x cp 1), as whatif's configurations take
 * them.  For one configuration estimated, not a sweep's base.
 */
void orr_estimate_settle(struct orr_train_config *c);
/* 0, or -EDOM and the first of Megatron's checks c fails, named in d. */
int orr_estimate_check(const struct orr_train_config *c, struct orr_diag *d);
/* The hardware table's entry of an id or a device name; NULL. */
const struct orr_gpu_spec *orr_estimate_gpu(const char *name);

/* ---- an estimate (analysis/estimate-run.c, estimate-synth.c, estimate-describe.c) ---- */

/* One configuration's step: its time per step, and where the rank's GPU time went. */
struct orr_estimate_step {
	double step_ns;                 /* mean over the job's steps */
	struct orr_breakdown breakdown; /* the rank's, over those steps */
};

/* A synthesized step: what was made (its json released), and its replay. */
struct orr_estimate_synth {
	struct orr_synth synth;
	struct orr_estimate_step step;
};

/* How the estimate was made. */
enum orr_estimate_how {
	ORR_ESTIMATE_RETIME,      /* the trace's tasks re-timed, its graph replayed */
	ORR_ESTIMATE_SYNTH_RATIO, /* the trace's replay (less the profiler's host time) x
				     synthesized(to) / synthesized(from) */
	ORR_ESTIMATE_SYNTH,       /* a step synthesized from the description alone */
	ORR_ESTIMATE_HOW_COUNT
};

/* "retime", "synthesis-ratio", "synthesis"; NULL out of range. */
const char *orr_estimate_how_name(enum orr_estimate_how h);

/* Where the launch thread's time per kernel came from. */
enum orr_launch_from {
	ORR_LAUNCH_NONE,   /* none: the GPU never waits for its launches */
	ORR_LAUNCH_OPTION, /* --launch-us */
	ORR_LAUNCH_TRACE,  /* calibrated on the trace */
	ORR_LAUNCH_COSTS,  /* calibrated on the trace the costs file was fitted on */
};

struct orr_estimate {
	enum orr_estimate_how how;
	const char *trace; /* NULL from a description */
	const char *costs; /* the costs file, or NULL: the models fitted on the trace */
	int32_t rank;
	const struct orr_gpu_spec *gpu;
	bool forward_only;                /* the (target) step has no backward pass */
	size_t steps;                     /* job steps replayed */
	size_t ranks;                     /* in the trace */
	struct orr_train_config from, to; /* recorded (from a description: to) and target */
	struct orr_retime retime;
	double measured_ns; /* the trace's own step, mean; NAN */
	struct orr_estimate_step replayed, estimated;
	/* By retime or a ratio: the estimate with the host time the profiler added kept (0
	 * when not made), and that time per rank and step (0: none; the estimate is then the
	 * same) */
	struct orr_estimate_step traced;
	double profiler_host_ns;
	struct orr_memory memory;
	int memory_err;             /* orr_memory_estimate()'s, 0 */
	double reserve_bytes;       /* set aside beyond the formulas: 0, or calibrated ... */
	double measured_peak_bytes; /* ... on the allocator's peak the trace recorded; NAN */
	double tokens_per_s_per_gpu;
	double mfu; /* NAN without the GPU's peak */
	double hfu; /* with the forward work recomputed (PaLM's HFU); NAN as mfu */
	/*
	 * Synthesized steps: of `to` (and for a ratio, of `from`, or of `anchor` where
	 * anchored), and what timed them.
	 */
	struct orr_estimate_synth synth_from, synth_to;
	/*
	 * A ratio anchored on the trace re-timed to the target's sizes (layers, hidden,
	 * FFN, heads, KV groups, vocabulary, sequence, norm, the micro-batch size, TP and
	 * DP as a re-timing changes them) in its recorded layout:
	 * anchor, and that estimate (without and with the profiler's host time), which the
	 * ratio of the synthesized steps of `to` and `anchor` scales; false without a
	 * change of those sizes, or where the trace cannot be re-timed to them
	 * (orr_estimate_anchor()).
	 */
	bool anchored;
	struct orr_train_config anchor;
	double anchor_retimed_ns, anchor_traced_ns;
	double cpu_op_ns; /* the launch thread's time per kernel */
	enum orr_launch_from cpu_op_from;
	double cpu_op_profiler_ns; /* calibrated: removed per launch as the profiler's; NAN */
	double cpu_op_stall_ns;    /* ... as the launch threads' stalls (orr_launch_time) */
	/* the GPU the costs were fitted on when they were transferred to gpu; NULL: not */
	const struct orr_gpu_spec *costs_gpu;
};

/* A trace opened to estimate from: its models fitted (or the costs file read). */
struct orr_estimate_base {
	const struct orr_graph *g;
	size_t ri; /* the graph rank whose structure is the recorded configuration */
	struct orr_rank_fit f;
	struct orr_costs costs; /* the costs file's */
	bool have_costs, have_fit;
	struct orr_retime_models m;
	struct orr_synth_costs k;
	struct orr_estimate e; /* trace, gpu, forward_only, launches, from and to */
};

/*
 * Fits the models of graph rank ri of g (or reads o->costs), checks o->gpu and the costs'
 * GPU against the trace's, and sets b->e's recorded configuration (from) and its target
 * (to: from changed by o).  0, or the error with nothing left to close.
 */
int orr_estimate_base_open(const struct orr_estimate_options *o, const struct orr_graph *g,
			   size_t ri, struct orr_estimate_base *b, struct orr_diag *d);
void orr_estimate_base_close(struct orr_estimate_base *b);
/*
 * b->e estimated as o asks: re-timed, or by the synthesis ratio where only a new graph
 * can make the change (or o asks for forward passes of a trace that has backward ones),
 * the timeline written to o->timeline.  0 or the error.
 */
int orr_estimate_trace(const struct orr_estimate_options *o, struct orr_estimate_base *b,
		       struct orr_diag *d);
/*
 * b's trace re-timed to configuration `to`, as orr_estimate_trace() re-times a change of
 * sizes, into *ret (b->e with `to`, estimated and traced): for a sweep, which leaves
 * b as it is, writes no timeline and reports no progress, so that threads may share b.
 * -ENOTSUP where only a new graph can make the change (the synthesis ratio's), -EDOM
 * for a configuration the re-timing refuses, or the replay's error.
 */
int orr_estimate_retime_config(const struct orr_estimate_options *o,
			       const struct orr_estimate_base *b, const struct orr_train_config *to,
			       struct orr_estimate *ret);
/*
 * The anchor of a ratio from b's recorded configuration to `to` (orr_estimate.anchor):
 * b->e.from with the sizes of `to` a re-timing changes (the model's, the micro-batch
 * size, TP and DP where neither goes to or from 1; TP's vocabulary padding alone is
 * not one), and b's trace re-timed to it into *ret.  0, or -ENOENT when that is
 * b->e.from, or orr_estimate_retime_config()'s error.
 */
int orr_estimate_anchor(const struct orr_estimate_options *o, const struct orr_estimate_base *b,
			const struct orr_train_config *to, struct orr_estimate *ret);
/*
 * Whether a and b have the same sizes a re-timing changes (layers, hidden, heads, KV
 * groups, FFN, vocabulary, sequence, norm, micro-batch size, TP, DP): anchors that
 * differ in nothing else are one.
 */
bool orr_estimate_same_sizes(const struct orr_train_config *a, const struct orr_train_config *b);
/* That anchor's configuration in *ret; false when it is b->e.from (no anchor). */
bool orr_estimate_anchor_config(const struct orr_estimate_base *b,
				const struct orr_train_config *to, struct orr_train_config *ret);
/*
 * From the model o describes alone, with Megatron-LM's defaults, timed by o->costs or
 * the hardware table (a lower bound) into *ret.  0 or the error.
 */
int orr_estimate_describe(const struct orr_estimate_options *o, struct orr_estimate *ret,
			  struct orr_diag *d);

/*
 * What a sweep over b's job shares: the synthesis costs with the launch thread
 * calibrated on the trace (unless o->launch_us), the trace's replayed step (mean over
 * its job steps), that replay without the host time the profiler added (*ret_base_ns,
 * what every estimate is scaled from, as orr_estimate_trace() does; b->e.profiler_host_ns
 * that time per rank and step; b->e.replayed and estimated hold both), and
 * b->e.reserve_bytes and measured_peak_bytes
 * calibrated on the allocator's peak where the trace recorded it.  0 or the error.
 */
int orr_estimate_base_sweep(const struct orr_estimate_options *o, struct orr_estimate_base *b,
			    struct orr_synth_costs *ret_k, double *ret_replayed_ns,
			    double *ret_base_ns, struct orr_diag *d);
/*
 * The first size a description needs that o lacks ("layers", "hidden", "heads", "seq"),
 * NULL when none does: what makes orr_estimate_describe() and orr_estimate_description()
 * return -EINVAL before anything else.
 */
const char *orr_estimate_missing(const struct orr_estimate_options *o);
/* The configuration o describes, with Megatron-LM's defaults: 0 or the error. */
int orr_estimate_description(const struct orr_estimate_options *o, struct orr_train_config *c,
			     struct orr_diag *d);
/*
 * With o->transfer_costs, costs c fitted on another GPU made costs of o->gpu
 * (docs/orrery-estimate.md, "Costs of another GPU"): the GEMM and kernel models keep
 * their efficiencies (measured time over the roofline) and take o->gpu's roofline, the
 * collective models and measured bus bandwidths are dropped (the hardware table's links
 * time them), the launch thread's time is kept (the host's).  *from is set to c's own GPU,
 * NULL when nothing was transferred (no o->transfer_costs, or c of o->gpu already).  0,
 * or -EINVAL without o->gpu, -ENODEV for a GPU (o's or c's) the hardware table does not
 * have, named in d.
 */
int orr_estimate_transfer_costs(const struct orr_estimate_options *o, struct orr_costs *c,
				const struct orr_gpu_spec **from, struct orr_diag *d);
/* o->gpu, else the costs' (c may be NULL) GPU; they must agree: 0 or the error. */
int orr_estimate_pick_gpu(const struct orr_estimate_options *o, const struct orr_costs *c,
			  const struct orr_gpu_spec **ret, struct orr_diag *d);
/* k's launch thread calibrated on the trace costs c were fitted on (into e's account); o's
 * progress display (may be NULL). */
int orr_estimate_calibrate_costs(const struct orr_estimate_options *o, const struct orr_costs *c,
				 struct orr_synth_costs *k, struct orr_estimate *e,
				 struct orr_diag *d);
/* The models that re-time: c's when not NULL, else those fitted in f. */
void orr_estimate_models(const struct orr_rank_fit *f, const struct orr_costs *c, int gpus_per_node,
			 struct orr_retime_models *ret);
/* The costs a synthesis takes: models m, GPU gpu, the bandwidths f or c measured. */
void orr_estimate_synth_costs(const struct orr_retime_models *m, const struct orr_gpu_spec *gpu,
			      const struct orr_rank_fit *f, const struct orr_costs *c,
			      double cpu_op_ns, struct orr_synth_costs *ret);
/* Tokens per second per GPU, MFU and HFU of e->to at e->estimated's step time. */
void orr_estimate_rates(struct orr_estimate *e);
/* b with every part times f. */
void orr_estimate_scale(const struct orr_breakdown *b, double f, struct orr_breakdown *ret);

/* ---- what an estimate reports (analysis/estimate-parts.c) ---- */

/*
 * The breakdown of e's estimated step per step, in ns: compute (exposed and
 * overlapped), exposed communication less the bubble, the pipeline bubble (NAN when
 * unknown: a re-timed pipeline), no GPU work.
 */
void orr_estimate_parts(const struct orr_estimate *e, double ret[4]);
/* The estimate's signed change from the trace as replayed; NAN without one. */
double orr_estimate_change(const struct orr_estimate *e);

/* What changed: the GPU time of one kind of task, per rank and step, before and after. */
struct orr_estimate_delta {
	char what[32]; /* "forward GEMMs", "TP collectives", "pipeline bubble", ... */
	double before, after;
};

#define ORR_ESTIMATE_NDELTA 12

/*
 * The changes by kind of task, largest first (re-timed: by GEMM role, collective and
 * kernel; by the synthesis ratio: the synthesized steps' parts); how many.  None from a
 * description.
 */
size_t orr_estimate_deltas(const struct orr_estimate *e,
			   struct orr_estimate_delta v[ORR_ESTIMATE_NDELTA]);

/* What an estimate's reader should know beside its numbers (orr_estimate_caveats()). */
enum orr_estimate_caveat {
	/* from a description without a costs file: every GPU time is the hardware table's
	 * peak, a lower bound */
	ORR_CAVEAT_PEAKS = 1 << 0,
	/* the launch time was calibrated on a trace (or the trace of a costs file) that does
	 * not say what the profiler added: kept as recorded (cpu_op_profiler_ns NAN) */
	ORR_CAVEAT_LAUNCH_RECORDED = 1 << 1,
	/* the trace records no allocator totals: no reserve beyond the formulas */
	ORR_CAVEAT_NO_ALLOCATOR = 1 << 2,
	/* a reserve calibrated on the allocator's peak (reserve_bytes, measured_peak_bytes) */
	ORR_CAVEAT_RESERVE = 1 << 3,
	/* the memory was not estimated (memory_err) */
	ORR_CAVEAT_NO_MEMORY = 1 << 4,
	/* sync_layers asked for without full recompute: no layer is checkpointed, so none
	 * synchronizes; the estimate is the one without it (orr_train_syncs_layers()) */
	ORR_CAVEAT_SYNC_LAYERS_UNUSED = 1 << 5,
	/* the costs were fitted on another GPU (costs_gpu) and transferred to gpu: their
	 * efficiencies over its roofline, its hardware table's links */
	ORR_CAVEAT_TRANSFERRED = 1 << 6,
	/* from a trace, another hidden size with the trace's FFN size kept (Megatron's
	 * default, 4 x hidden, follows hidden; a trace's FFN is kept unless --ffn says) */
	ORR_CAVEAT_FFN_KEPT = 1 << 7,
};

#define ORR_CAVEAT_COUNT 8

/* e's caveats: ORR_CAVEAT_* bits. */
unsigned orr_estimate_caveats(const struct orr_estimate *e);
/*
 * "peaks", "launch-as-recorded", "no-allocator", "reserve", "no-memory",
 * "sync-layers-unused", "costs-transferred" of bit i (1 << i); NULL.
 */
const char *orr_estimate_caveat_name(unsigned i);

/*
 * Result r of a sweep (orr_whatif_run()) as orr_estimate_trace() or orr_estimate_describe()
 * would have estimated it: base the sweep's (its trace, GPU, launches, reserve), recorded
 * its recorded configuration's synthesized step (with a trace), replayed_ns the trace's
 * replayed step (NAN without one).
 */
void orr_estimate_of_result(const struct orr_estimate *base, bool have_trace,
			    const struct orr_synth *recorded, double replayed_ns,
			    const struct orr_whatif_result *r, struct orr_estimate *ret);

/* ---- a sweep of layouts from an estimate's inputs (orrery whatif; analysis/whatif-job.c) ---- */

/* --tp, --pp, --cp, --vpp, --micro-batch, --first-stage-layers, --last-stage-layers */
#define ORR_WHATIF_NLISTS 7

/* What a sweep tries beyond the model and the fixed options (orrery whatif's options). */
struct orr_whatif_options {
	int64_t gpus_min, gpus_max; /* the GPU budget */
	/* in the order above; n 0: every value that can be valid (struct orr_whatif_space) */
	struct orr_whatif_list list[ORR_WHATIF_NLISTS];
	unsigned recompute; /* bits (1 << enum orr_recompute); 0: every mode */
	int sp, distopt;    /* 0, 1 or ORR_WHATIF_AUTO */
	bool allow_cross_node_tp;
};

/* A sweep made ready: its inputs, made once, and its plan. */
struct orr_whatif_anchors;

struct orr_whatif_job {
	struct orr_estimate_base b; /* with a trace */
	bool have_trace;
	struct orr_costs costs; /* the costs file's, without a trace */
	bool have_costs;
	/* trace, GPU, recorded configuration, launches, memory reserve: what each
	 * configuration's estimate shares (orr_estimate_of_result()) */
	struct orr_estimate base;
	double replayed_ns;            /* the trace's replayed step; NAN */
	struct orr_synth recorded;     /* the recorded configuration's synthesized step */
	struct orr_train_config swept; /* the model swept (the recorded one, changed by o) */
	int64_t global_batch;          /* sequences per step, fixed across the sweep */
	struct orr_whatif_context x;
	struct orr_gpu_spec gpu_seen; /* a trace's GPU as its device reported it (x.gpu) */
	struct orr_whatif_plan *plan;
	uint64_t considered; /* configurations of the plan */
	/* with a trace: the anchors met, each made once (x.anchor's; j is not moved) */
	struct orr_whatif_anchors *anchors;
};

/*
 * The sweep o and w ask for, from graph rank ri of g (g NULL: from o's description,
 * which then needs o->global_batch): the inputs made once (the trace's replay, the
 * fitted costs, the recorded configuration's synthesized step) and the plan.  0 or the
 * error (-E2BIG: a GPU budget too wide to sweep with these lists); after either, the
 * caller closes j with orr_whatif_job_close().
 */
int orr_whatif_job_open(const struct orr_estimate_options *o, const struct orr_whatif_options *w,
			const struct orr_graph *g, size_t ri, struct orr_whatif_job *j,
			struct orr_diag *d);
void orr_whatif_job_close(struct orr_whatif_job *j);
/*
 * A tally for j's results (by, top as orr_whatif_tally_init() takes them), the recorded
 * configuration marked when the plan has it and it can be estimated: its number in the
 * plan, else UINT64_MAX.
 */
uint64_t orr_whatif_job_tally(const struct orr_whatif_job *j, enum orr_whatif_rank by, size_t top,
			      struct orr_whatif_tally *ret);

/* What a refusal suggests trying, in the options' terms (orr_whatif_hints()). */
enum orr_whatif_try {
	ORR_WHATIF_TRY_FSDP = 1 << 0,      /* --fsdp: weights, gradients, optimizer sharded */
	ORR_WHATIF_TRY_DISTOPT = 1 << 1,   /* --distributed-optimizer on */
	ORR_WHATIF_TRY_RECOMPUTE = 1 << 2, /* --recompute full */
	ORR_WHATIF_TRY_GPUS = 1 << 3,      /* more GPUs than the budget's most */
};

/* Why some configurations were refused, and what to change. */
struct orr_whatif_hint {
	enum orr_whatif_why why;
	uint64_t count; /* configurations refused for it */
	/*
	 * the number the suggestion names: heads (HEADS), layers (LAYERS), the sequence
	 * (SEQUENCE), the global batch (BATCH), the budget's most GPUs (MEMORY); else 0
	 */
	int64_t value;
	unsigned tries; /* MEMORY: the ORR_WHATIF_TRY_* the sweep did not try */
	/* the first configuration refused for it, why (orr_whatif_plan_example()); or "" */
	char example[160];
};

/*
 * The reasons a finished tally t of j's sweep (with w) counted, most first (ties in
 * their order), each with its suggestion: how many (at most ORR_WHATIF_WHY_COUNT).
 */
size_t orr_whatif_hints(const struct orr_whatif_job *j, const struct orr_whatif_options *w,
			const struct orr_whatif_tally *t,
			struct orr_whatif_hint v[ORR_WHATIF_WHY_COUNT]);

#ifdef __cplusplus
}
#endif

#endif
