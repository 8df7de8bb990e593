/* SPDX-License-Identifier: MIT */
/*
 * cli/estimate.h — `orrery estimate`'s result and its text and JSON reports
 * (cli/estimate-report.c; docs/orrery-estimate.md).
 */
#ifndef ORRERY_CLI_ESTIMATE_H
#define ORRERY_CLI_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"

#include "fit.h"

/* One configuration's step: its time per step, and where the rank's GPU time went. */
struct cli_estimate_step {
	double step_ns;                 /* mean over the job's steps */
	struct orr_breakdown breakdown; /* the rank's, over those steps */
};

/* A synthesized step (cli/estimate-synth.c): what was made, and its replay. */
struct cli_synth_run {
	struct orr_synth synth; /* json NULL: released */
	struct cli_estimate_step step;
};

/* How the estimate was made. */
enum cli_estimate_how {
	CLI_ESTIMATE_RETIME,      /* the trace's tasks re-timed, its graph replayed */
	CLI_ESTIMATE_SYNTH_RATIO, /* the trace's replay x synthesized(to) / synthesized(from) */
	CLI_ESTIMATE_SYNTH,       /* a step synthesized from the description alone */
};

struct cli_estimate {
	enum cli_estimate_how how;
	const char *trace; /* NULL from a description */
	const char *costs; /* --costs FILE, or NULL: the models fitted on trace */
	int32_t rank;
	const struct orr_gpu_spec *gpu;
	bool forward_only; /* the trace has no backward pass */
	size_t steps;      /* job steps replayed */
	size_t ranks;      /* in the trace */
	struct orr_train_config from, to;
	struct orr_retime retime;
	double measured_ns; /* the trace's own step, mean */
	struct cli_estimate_step replayed, estimated;
	/* By retime: the estimate with the host time the profiler added kept, and that time
	 * per rank and step (0: none; the estimate is then the same) */
	struct cli_estimate_step traced;
	double profiler_host_ns;
	struct orr_memory memory;
	int memory_err;             /* orr_memory_estimate()'s, 0 */
	double reserve_bytes;       /* set aside beyond the formulas: 0, or calibrated ... */
	double measured_peak_bytes; /* ... on the allocator's peak the trace recorded; NAN */
	double tokens_per_s_per_gpu;
	double mfu; /* NAN without the GPU's peak */
	double hfu; /* with the forward work recomputed (PaLM's HFU); NAN as mfu */
	/* Synthesized steps: of `to` (and of `from` for a ratio), and what timed them. */
	struct cli_synth_run synth_from, synth_to;
	double cpu_op_ns;
	const char *cpu_op_from;   /* "--launch-us", "trace", "costs", "none" */
	double cpu_op_profiler_ns; /* calibrated: removed per launch as the profiler's; NAN */
};

/* ---- the options (cli/estimate-options.c) ---- */

#define CLI_ESTIMATE_NSIZE 15 /* options that set a size: --tp, ..., --last-stage-layers */

struct cli_estimate_options {
	int format;
	int64_t rank, global_batch, gpus_per_node;
	int64_t size[CLI_ESTIMATE_NSIZE]; /* 0: not given */
	int recompute;                    /* -1: not given */
	bool sp, distopt, fsdp, overlap_grad, forward_only;
	int precision;      /* -1: not given; 0 bf16, 1 fp16, 2 fp32, 3 fp8 */
	int attention;      /* -1: not given; 0 flash, 1 unfused */
	bool swiglu, untie; /* Megatron's --swiglu, --untie-embeddings-and-output-weights */
	int norm;           /* -1: not given; 0 LayerNorm, 1 RMSNorm */
	int positions;      /* -1: not given; 0 learned_absolute, 1 rope */
	double launch_us;   /* NAN: not given */
	bool gemm_tiles;    /* --gemm-model tiles */
	const char *timeline, *costs, *trace, *gpu;
};

extern const char cli_estimate_usage[];
/* Parses argv into o (set to its defaults first); -1 to go on, else the exit status. */
int cli_estimate_parse(int argc, char **argv, struct cli_estimate_options *o);
/* The same for command cmd (its name in errors), e.g. orrery whatif's model options. */
int cli_estimate_parse_as(const char *cmd, int argc, char **argv, struct cli_estimate_options *o);
/* The value of size option `name` ("tp", "kv-heads"), 0 when not given. */
int64_t cli_estimate_given(const struct cli_estimate_options *o, const char *name);
/* The sizes, recompute, precision, attention, model and flags o gives, set in c. */
void cli_estimate_apply(const struct cli_estimate_options *o, struct orr_train_config *c);
/* EXIT_OK, or EXIT_FAIL and the first check of Megatron's that c fails, named. */
int cli_estimate_check(const struct orr_train_config *c);

/*
 * The sources and caveats of e's numbers, as orrery estimate prints them (where each
 * kind of task's time came from, the launch thread's time and where it came from, the
 * lower bound of the hardware table's peaks, the memory's reserve): orrery whatif
 * prints its best configuration's with them.
 */
void cli_estimate_caveats(const struct cli_estimate *e, FILE *f);

/* From a model description alone (cli/estimate-describe.c): the exit status. */
int cli_estimate_describe(const struct cli_estimate_options *o);
/* The configuration o describes, with Megatron-LM's defaults: EXIT_OK, or said. */
int cli_estimate_description(const struct cli_estimate_options *o, struct orr_train_config *c);
/* --gpu, else the costs' (c may be NULL) GPU; they must agree: EXIT_OK, or said. */
int cli_estimate_pick_gpu(const struct cli_estimate_options *o, const struct orr_costs *c,
			  const struct orr_gpu_spec **ret);
/* k's launch thread calibrated on the trace c was fitted on: EXIT_OK or EXIT_FAIL, said. */
int cli_estimate_calibrate_costs(const struct orr_costs *c, struct orr_synth_costs *k,
				 struct cli_estimate *e);

/* `orrery estimate` (cli/cmd-estimate.c). */
int cmd_estimate(int argc, char **argv);

/* A trace opened to estimate from, its models fitted (cli/cmd-estimate.c). */
struct cli_estimate_base {
	struct orr_trace *t;
	struct orr_graph *g;
	size_t ri; /* the graph rank whose structure is the recorded configuration */
	struct orr_rank_fit f;
	struct orr_costs costs; /* --costs */
	bool have_costs, have_fit;
	struct orr_retime_models m;
	struct orr_synth_costs k;
	struct cli_estimate e; /* trace, gpu, forward_only, launches, from and to */
};

/*
 * Opens o->trace, fits its models (or reads --costs), checks --gpu and --costs against
 * it, and sets b->e's recorded configuration (from) and its target (to: from changed by
 * o).  EXIT_OK, or the exit status with the error said and nothing to close.
 */
int cli_estimate_base_open(const struct cli_estimate_options *o, struct cli_estimate_base *b);
void cli_estimate_base_close(struct cli_estimate_base *b);
/*
 * What a sweep over b's job shares: the synthesis costs with the launch thread
 * calibrated on the trace (unless --launch-us), the trace's replayed step (mean over
 * its job steps), and b->e.reserve_bytes and measured_peak_bytes calibrated on the
 * allocator's peak where the trace recorded it.  EXIT_OK or EXIT_FAIL, said.
 */
int cli_estimate_base_sweep(const struct cli_estimate_options *o, struct cli_estimate_base *b,
			    struct orr_synth_costs *ret_k, double *ret_replayed_ns);

/* The costs a synthesis takes: models m, GPU gpu, the bandwidths f or c measured. */
void cli_synth_costs(const struct orr_retime_models *m, const struct orr_gpu_spec *gpu,
		     const struct orr_rank_fit *f, const struct orr_costs *c, double cpu_op_ns,
		     struct orr_synth_costs *ret);
/* Synthesizes c's step, replays it (and writes its timeline): EXIT_OK or EXIT_FAIL, said. */
int cli_synth_run(const struct orr_train_config *c, bool forward_only,
		  const struct orr_synth_costs *k, const char *timeline, struct cli_synth_run *ret);
/* The models that re-time: c's (--costs) when not NULL, else those fitted in f. */
void cli_estimate_models(const struct orr_rank_fit *f, const struct orr_costs *c, int gpus_per_node,
			 struct orr_retime_models *ret);
/* The hardware table's entry of an id or a device name; NULL. */
const struct orr_gpu_spec *cli_estimate_gpu(const char *name);
/* Tokens per second per GPU and MFU of e->to at e->estimated's step time. */
void cli_estimate_rates(struct cli_estimate *e);
/* b with every part times f. */
void cli_estimate_scale(const struct orr_breakdown *b, double f, struct orr_breakdown *ret);
/*
 * Sets k->cpu_op_ns (and e's account of it, from: "trace" or "costs") so that the
 * synthesized step of rec, the configuration a trace recorded, spends step_ns -
 * profiler_ns launching, as the trace's launch threads did per step without what the
 * profiler added (orr_launch_time_measure(); profiler_ns NAN: not known, nothing
 * removed); nothing when step_ns is unknown.  EXIT_OK or EXIT_FAIL, said.
 */
int cli_synth_calibrate(const struct orr_train_config *rec, bool forward_only, double step_ns,
			double profiler_ns, const char *from, struct orr_synth_costs *k,
			struct cli_estimate *e);
/* Which launch time e used and where it came from, in words, written to buf. */
const char *cli_launch_source(const struct cli_estimate *e, char *buf, size_t size);

/*
 * The JSON's breakdown of e's step: compute, exposed communication (less the bubble),
 * the pipeline bubble (NAN when unknown: a re-timed pipeline), no GPU work; in ns.
 */
void cli_estimate_parts(const struct cli_estimate *e, double ret[4]);
void cli_estimate_text(const struct cli_estimate *e);
void cli_estimate_json(const struct cli_estimate *e);
/* Its fields, into the object j has open (orrery whatif's configurations). */
void cli_estimate_json_fields(struct json_out *j, const struct cli_estimate *e);
/* One of them by format (CLI_FORMAT_*). */
void cli_estimate_report(const struct cli_estimate *e, int format);

#endif
