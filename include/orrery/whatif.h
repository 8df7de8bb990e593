/* SPDX-License-Identifier: MIT */
/*
 * orrery/whatif.h — sweeping layouts (docs/orrery-whatif.md): every tensor, pipeline,
 * context and data-parallel layout of a model on a GPU budget, with its micro-batch,
 * interleaving and recompute, checked as Megatron-LM checks a configuration, and each
 * feasible one estimated as `orrery estimate` does (a step synthesized and placed by the
 * replay's rules, orr_synth_time()), on a pool of threads.
 *
 * Conventions as orrery/estimator.h: negative errno on error, nothing allocated on
 * failure.  The space and the context are read-only while a sweep runs; configurations
 * are numbered in the order orr_whatif_config() decodes them, which does not depend on
 * the threads or processes that evaluate them.
 */
#ifndef ORRERY_WHATIF_H
#define ORRERY_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a configuration is not evaluated. */
enum orr_whatif_why {
	ORR_WHATIF_FEASIBLE,
	ORR_WHATIF_HEADS,      /* TP does not divide the heads or the KV groups */
	ORR_WHATIF_CROSS_NODE, /* TP larger than a node (--allow-cross-node-tp) */
	ORR_WHATIF_LAYERS,     /* PP x VPP does not divide the layers, or the uneven split */
	ORR_WHATIF_SEQUENCE,   /* 2 x CP, or TP with sequence parallelism, does not divide it */
	ORR_WHATIF_BATCH,      /* the global batch is not a multiple of DP x micro-batch */
	ORR_WHATIF_INTERLEAVE, /* interleaved 1F1B: micro-batches not a multiple of PP */
	ORR_WHATIF_MEMORY,     /* above the GPU's memory */
	ORR_WHATIF_REFUSED,    /* the synthesis refused it (named in the result) */
	ORR_WHATIF_WHY_COUNT
};

/* "feasible", "heads", "cross-node-tp", ...; NULL out of range. */
const char *orr_whatif_why_name(enum orr_whatif_why w);

/* What limits a feasible configuration most: the largest part of its step. */
enum orr_whatif_limit {
	ORR_WHATIF_LIMIT_COMPUTE,
	ORR_WHATIF_LIMIT_COMM,   /* exposed communication */
	ORR_WHATIF_LIMIT_BUBBLE, /* the pipeline's bubble */
	ORR_WHATIF_LIMIT_HOST,   /* no GPU work: the launch thread, synchronizations */
	ORR_WHATIF_LIMIT_COUNT
};

/* "compute", "communication", "pipeline bubble", "host". */
const char *orr_whatif_limit_name(enum orr_whatif_limit l);

#define ORR_WHATIF_AUTO (-1) /* a switch as the base configuration has it */

/*
 * The layouts to sweep.  A list of n 0 (v NULL) is every value that can be valid: TP
 * the powers of two up to the heads (past a node refused as cross-node-tp), PP every
 * divisor of the layers, CP 1, VPP every divisor of the layers per stage, micro-batch
 * every divisor of the global batch per DP rank, the first and last stage's layers 0
 * (an even split).  Values are tried in the order given.
 */
struct orr_whatif_list {
	const int64_t *v;
	size_t n;
};

struct orr_whatif_space {
	/* the model, precision, attention and switches; its layout is ignored */
	struct orr_train_config base;
	int64_t gpus_min, gpus_max; /* GPU counts, each tried */
	int64_t global_batch;       /* sequences per step */
	struct orr_whatif_list tp, pp, cp, vpp, micro_batch;
	/*
	 * an uneven pipeline split (orr_train_config's first_stage_layers and
	 * last_stage_layers): values 0 or more, 0 as the other stages; a value other than 0
	 * makes no configuration with PP 1, nor with a VPP above 1 from the default list
	 */
	struct orr_whatif_list first_stage, last_stage;
	unsigned recompute; /* bit (1 << enum orr_recompute) per mode tried; 0: all */
	/* 0 off, 1 on, ORR_WHATIF_AUTO as base (with TP > 1 / DP > 1 only) */
	int sequence_parallel, distributed_optimizer;
	int gpus_per_node; /* TP stays within one unless allow_cross_node_tp */
	bool allow_cross_node_tp;
};

/* A space made ready to sweep: its lists, and the GPU counts' layouts. */
struct orr_whatif_plan;

/*
 * Makes the plan of space s (which need not outlive it).  Its configurations are every
 * GPU count, then TP, PP and CP whose product divides it, then VPP, the first and the
 * last stage's layers, micro-batch and recompute tried, in that order of nesting and in
 * the lists' orders.  -EINVAL: gpus_min < 1, gpus_max < gpus_min, a global batch < 1,
 * a list value < 1 (< 0 for the stages' layers),
 * gpus_per_node < 1, a base model that is not one (a size below 1), or past 2^40
 * configurations; -E2BIG past 2^22 GPU counts x TP x PP x CP (a range of GPU counts too
 * wide to sweep).
 */
int orr_whatif_plan_new(const struct orr_whatif_space *s, struct orr_whatif_plan **ret);
void orr_whatif_plan_free(struct orr_whatif_plan *p);
/* Its configurations, feasible or not; 0 when no layout divides any GPU count. */
uint64_t orr_whatif_plan_count(const struct orr_whatif_plan *p);
/*
 * Whether some configuration of p synchronizes its checkpointed layers: the base's
 * sync_layers, and full recompute among those tried (orr_train_syncs_layers(); the
 * configurations without it have sync_layers false).
 */
bool orr_whatif_plan_syncs_layers(const struct orr_whatif_plan *p);
/*
 * Why p holds no configuration (orr_whatif_plan_count() 0), in buf[0..size): the TP, PP
 * or CP given none of whose values divides a GPU count of the budget, "--tp 3 does not
 * divide --gpus 8", else the least product of them; false when p holds a layout.
 */
bool orr_whatif_plan_why_empty(const struct orr_whatif_plan *p, char *buf, size_t size);
/*
 * The first configuration of p that orr_whatif_config() refuses for w, why in buf, in
 * the words of the check, "heads 32 is not divisible by tp 3": false when none is, or
 * for a reason the configuration alone does not give (memory, feasible).  Decodes the
 * configurations in order up to it.
 */
bool orr_whatif_plan_example(const struct orr_whatif_plan *p, enum orr_whatif_why w, char *buf,
			     size_t size);

/*
 * Configuration i of p, its layout set (DP the GPUs left, micro-batches per step from
 * the global batch), and whether Megatron would run it: a reason other than
 * ORR_WHATIF_FEASIBLE when not, its layout then as far as it could be set.  Memory is
 * not checked.  A VPP or micro-batch that a default list (n 0) tries and that does not
 * divide the layers per stage or the batch per DP rank makes no configuration:
 * ORR_WHATIF_WHY_COUNT, as does i past the count.
 */
enum orr_whatif_why orr_whatif_config(const struct orr_whatif_plan *p, uint64_t i,
				      struct orr_train_config *ret);

/* What a sweep's configurations are estimated with, shared read-only by its threads. */
/*
 * A configuration's sizes on the trace: the trace re-timed to them in its recorded
 * layout, as `orrery estimate` anchors a ratio (orr_whatif_context.anchor).
 */
struct orr_whatif_anchor {
	struct orr_train_config config; /* the recorded layout with the sizes */
	double step_ns;                 /* re-timed, without the host time the profiler added */
	double traced_ns;               /* with it (step_ns when it added none) */
	double profiler_host_ns;        /* that time, per rank and step */
	struct orr_synth synth;         /* config synthesized and placed: the ratio's base */
};

struct orr_whatif_context {
	const struct orr_gpu_spec *gpu; /* required */
	struct orr_synth_costs costs;   /* costs.gpu == gpu */
	bool forward_only;
	double reserve_bytes; /* memory set aside beyond the formulas */
	/*
	 * With a trace: its replayed step and the placed synthesized step of the
	 * configuration it recorded; a configuration's step is then the replay times its
	 * synthesized step over the recorded one's, as `orrery estimate` makes it.  NAN
	 * each without a trace: the synthesized step itself.
	 */
	double replayed_ns, recorded_synth_ns;
	/*
	 * With a trace, may be NULL: the anchor of configuration c (its sizes re-timed on
	 * the trace), valid while the context is, whose re-timed step times the ratio of
	 * c's synthesized step over its own replaces the recorded one's; -ENOENT where c
	 * has the recorded sizes, another error where the trace cannot be re-timed to them
	 * (the recorded configuration is the base, each).  Called from the threads that
	 * estimate, with anchor_arg.
	 */
	int (*anchor)(void *arg, const struct orr_train_config *c,
		      const struct orr_whatif_anchor **ret);
	void *anchor_arg;
};

/* One configuration, estimated. */
struct orr_whatif_result {
	uint64_t index; /* in the space */
	struct orr_train_config c;
	enum orr_whatif_why why; /* ORR_WHATIF_FEASIBLE: every field below is set */
	char refused[96];        /* ORR_WHATIF_REFUSED: the synthesis's reason */
	struct orr_memory memory;
	int64_t gpus;
	double step_ns;
	double tokens_per_s_per_gpu;
	double mfu; /* NAN without the GPU's peak at the precision */
	double hfu; /* with the forward work recomputed (PaLM's HFU); NAN as mfu */
	/*
	 * the step's parts on the first stage, scaled to step_ns, as orrery estimate's
	 * JSON reports them (they add up to it): compute, exposed communication less the
	 * bubble, the bubble (at most that communication), and no GPU work
	 */
	double compute_ns, exposed_comm_ns, bubble_ns, other_ns;
	enum orr_whatif_limit limit;
	struct orr_synth synth; /* the synthesized step as placed, json NULL */
	/* the ratio's base where x->anchor gave one (by value: results cross processes) */
	bool anchored;
	struct orr_whatif_anchor anchor;
};

/*
 * Estimates configuration i of p into *ret: its feasibility (orr_whatif_config()), then
 * memory (ORR_WHATIF_MEMORY when it does not fit, nothing synthesized), then the step
 * (ORR_WHATIF_REFUSED with the reason when the synthesis refuses it).  Thread-safe for
 * one p and x, each thread with its own scratch (may be NULL; orr_synth_time()).  0, or
 * -EINVAL for x without a GPU.
 */
int orr_whatif_eval(const struct orr_whatif_plan *p, const struct orr_whatif_context *x, uint64_t i,
		    struct orr_synth_scratch *scratch, struct orr_whatif_result *ret);

/*
 * Reports progress: done of total configurations considered.  Called from the thread
 * that called orr_whatif_run(), at most every 100 ms, and once at the end.
 */
typedef void (*orr_whatif_progress_fn)(void *data, uint64_t done, uint64_t total);

/*
 * Receives one result (valid during the call) from orr_whatif_run(), in the order of the
 * configurations, on the thread that called it.  Non-zero stops the sweep.
 */
typedef int (*orr_whatif_sink_fn)(void *data, const struct orr_whatif_result *r);

/*
 * The part of `parts` (a process of a sweep over several) whose share configuration i
 * is: a hash of i, modulo parts.  Not i modulo parts: neighbouring configurations differ
 * in one dimension at a time (recompute the innermost), their costs alternate with it,
 * and a modulo follows the alternation onto one process; a hash spreads them.
 */
uint64_t orr_whatif_part(uint64_t i, uint64_t parts);

/*
 * Evaluates the configurations i of p with orr_whatif_part(i, parts) == part (a
 * process's share of a sweep over several) on jobs threads (< 1: one), and hands the
 * results of those that are configurations (why not ORR_WHATIF_WHY_COUNT) to sink in
 * the order of i, as they are done: nothing is kept but a window of 4,096 results per
 * thread (3.2 MB each; the threads share it, and one may run that far ahead of the
 * oldest not handed on), so that memory does not grow with the configurations.  0,
 * what sink returned to stop it, or -EINVAL for x without a GPU or part >= parts.
 */
int orr_whatif_run(const struct orr_whatif_plan *p, const struct orr_whatif_context *x,
		   uint64_t part, uint64_t parts, int jobs, orr_whatif_progress_fn progress,
		   void *progress_data, orr_whatif_sink_fn sink, void *sink_data);

/*
 * The number of the configuration of p that has c's layout, micro-batch and recompute
 * (and, decoded, its model and switches), or UINT64_MAX: where a recorded job is in a
 * sweep.
 */
uint64_t orr_whatif_find(const struct orr_whatif_plan *p, const struct orr_train_config *c);

/* The parts of a sweep's definition that a digest tells apart. */
enum orr_whatif_digest_part {
	ORR_WHATIF_DIGEST_MODEL,  /* the base configuration: model, precision, switches */
	ORR_WHATIF_DIGEST_BUDGET, /* the GPU counts */
	ORR_WHATIF_DIGEST_SPACE,  /* the batch, the lists as made, recompute modes, switches */
	ORR_WHATIF_DIGEST_GPU,    /* the GPU's table entry, forward only, the memory reserve */
	ORR_WHATIF_DIGEST_COSTS,  /* the fitted models, bus bandwidths and launch time */
	ORR_WHATIF_DIGEST_TRACE,  /* the trace's replayed step and recorded synthesized step */
	ORR_WHATIF_DIGEST_PARTS
};

/* "model", "GPU budget", "space of layouts", "GPU", "cost model", "trace"; NULL out of range. */
const char *orr_whatif_digest_part_name(enum orr_whatif_digest_part d);

/* A sweep's definition, one 64-bit hash per part. */
struct orr_whatif_digest {
	uint64_t part[ORR_WHATIF_DIGEST_PARTS];
};

/*
 * The digest of what a sweep of p with x computes: every value of p's space (its lists as
 * made) and of x that an estimate reads, the fitted models' by value (not where they
 * are, nor the files they came from).  Equal plans and contexts give equal digests on
 * any host; any field changed changes its part (up to a hash collision).  Processes of
 * one sweep compare them before they sweep.
 */
void orr_whatif_digest(const struct orr_whatif_plan *p, const struct orr_whatif_context *x,
		       struct orr_whatif_digest *ret);
/* The first part in which a and b differ, or ORR_WHATIF_DIGEST_PARTS when none. */
enum orr_whatif_digest_part orr_whatif_digest_diff(const struct orr_whatif_digest *a,
						   const struct orr_whatif_digest *b);

/* What a sweep's configurations are ranked by. */
enum orr_whatif_rank {
	ORR_WHATIF_RANK_TIME,   /* step time, shortest first */
	ORR_WHATIF_RANK_TOKENS, /* tokens per second per GPU, most first */
	ORR_WHATIF_RANK_COST,   /* GPU time per step (GPUs x step), least first */
};

/*
 * A sweep's results summed up as they stream by (orr_whatif_tally_add()), in memory that
 * does not grow with them: the configurations counted by reason, the best `top` feasible
 * ones by `by` (ties in the space's order), the fastest of each GPU count for the Pareto
 * front, and the place of one marked result.  Fields are read-only; after
 * orr_whatif_tally_finish():
 */
struct orr_whatif_tally {
	enum orr_whatif_rank by;
	size_t top; /* kept best: 0 every feasible one (memory then grows with them) */
	uint64_t n, count[ORR_WHATIF_WHY_COUNT];
	struct orr_whatif_result *best; /* best first, nbest <= top */
	size_t nbest, cap_best;
	/*
	 * per GPU count its fastest (ties: the first), fewer GPUs first; after finish, only
	 * the Pareto front: each that no fewer GPUs are as fast as
	 */
	struct orr_whatif_result *front;
	size_t nfront, cap_front;
	bool marked;                   /* mark set (orr_whatif_tally_init()) */
	struct orr_whatif_result mark; /* e.g. the recorded configuration */
	uint64_t mark_place;           /* from 1 among the feasible; 0: not feasible */
};

/* An empty tally (release it); mark NULL, or a result whose place to count. */
void orr_whatif_tally_init(struct orr_whatif_tally *t, enum orr_whatif_rank by, size_t top,
			   const struct orr_whatif_result *mark);
void orr_whatif_tally_add(struct orr_whatif_tally *t, const struct orr_whatif_result *r);
/* Sorts the best and makes the front: once, after the last result. */
void orr_whatif_tally_finish(struct orr_whatif_tally *t);
void orr_whatif_tally_release(struct orr_whatif_tally *t);
/* r's place in the ranking from 1 when the finished tally knows it (among the best
 * kept, or the marked one's); 0 otherwise. */
uint64_t orr_whatif_tally_place(const struct orr_whatif_tally *t,
				const struct orr_whatif_result *r);
/* Whether r is ranked: feasible, with a finite step. */
bool orr_whatif_ranked(const struct orr_whatif_result *r);

#ifdef __cplusplus
}
#endif

#endif /* ORRERY_WHATIF_H */
