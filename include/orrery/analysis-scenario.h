/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-scenario.h — what-if rules and scenarios (orrery replay --scale, --scenario;
 * analysis/scales.c, scenario.c, scenario-run.c).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_SCENARIO_H
#define ORRERY_ANALYSIS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-replay.h"
#include "orrery/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A GPU rule of one rank, gpu@RANK:GLOB=FACTOR: that rank's GPU tasks whose name matches
 * (a slower or faster GPU: a straggler, a throttled or newer part); the glob is owned.
 */
struct orr_gpu_rule {
	char *glob;
	double factor;
	int32_t rank; /* global */
};

/*
 * A CPU rule, cpu:GLOB=FACTOR or cpu@RANK:GLOB=FACTOR, or a stall rule, stalls:GLOB=FACTOR
 * or stalls@RANK:GLOB=FACTOR (the part of a CPU task's time its thread was not running,
 * orr_launch_stalls()); the glob is owned.
 */
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
 * The --scale rules given, in order: GLOB=FACTOR (or gpu:GLOB=FACTOR) on GPU tasks (v,
 * for the replay), gpu@RANK:GLOB=FACTOR on one rank's GPU tasks (gpu), cpu:GLOB=FACTOR /
 * cpu@RANK:GLOB=FACTOR on CPU tasks (cpu), stalls:GLOB=FACTOR / stalls@RANK:GLOB=FACTOR
 * on their stalls (stall), latency:GLOB=FACTOR and bandwidth:GLOB=FACTOR on collective
 * kernels (comm); globs are owned.  A scenario's rules are numbered in that order: v,
 * gpu, cpu, stall, then comm (orr_scales_rule()).
 */
struct orr_scales {
	struct orr_scale *v;
	size_t n, cap;
	struct orr_gpu_rule *gpu;
	size_t ngpu, gpucap;
	struct orr_cpu_rule *cpu;
	size_t ncpu, cpucap;
	struct orr_cpu_rule *stall;
	size_t nstall, stallcap;
	struct orr_comm_rule *comm;
	size_t ncomm, commcap;
};

/* Adds one rule as written; -EINVAL when it is malformed or FACTOR is not from 0 to ORR_SCALE_MAX. */
int orr_scales_add(struct orr_scales *s, const char *arg);
void orr_scales_release(struct orr_scales *s);

struct orr_rule_match;
/*
 * Per task of g, the product of the factors of the GPU rules of one rank that match it
 * (NULL without such rules), for orr_replay_options.task_factors: a GPU task of the
 * rule's rank whose name matches the glob.  With steps_from, ret[k] is what rank rule k
 * (s->gpu[k]) matched in its steps.
 */
float *orr_gpu_factors(const struct orr_graph *g, const struct orr_scales *s,
		       const struct orr_replay *steps_from, struct orr_rule_match *ret);
/*
 * Per task of g, the product of the CPU rules' factors that match it (NULL without CPU
 * or stall rules), for orr_replay_options.cpu_factors: a CPU task matches when the
 * framework op of its call or the op running in the time before it (orr_op_name(),
 * orr_op_name_at()) matches the glob, on the rule's rank.  A stall rule's factor
 * multiplies only the part of the task's time that was a stall (orr_launch_stalls()):
 * its factor is 1 - stall x (1 - FACTOR) / time, and a task without a stall matches
 * none.  With steps_from, ret[k] is what CPU rule k, then stall rule k, matched in its
 * steps (the tasks' duration and time before them; for a stall rule, their stalls).
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
 * The replay options of scenario rules s, and the factor arrays they hold: GPU rules of
 * every rank as scales; those of one rank, CPU and communication rules as per-task
 * factors (task: the GPU and communication ones multiplied; costs: as for
 * orr_comm_factors()).  base is g replayed without factors (or NULL): the scenario's
 * baseline (orr_replay_options.baseline: a thread's first call handed its work by
 * another thread moves with its hand-off); with matches (orr_scales_rule_count(s) of
 * them), what each rule matches in the steps of base.
 */
struct orr_scenario_replay {
	struct orr_replay_options opts;
	float *cpu, *task;
};
void orr_scenario_options(struct orr_scenario_replay *ret, const struct orr_graph *g,
			  const struct orr_scales *s, const struct orr_costs *costs,
			  const struct orr_replay *base, struct orr_rule_match *matches);
void orr_scenario_options_release(struct orr_scenario_replay *r);

/*
 * A scenario's rules: GPU (every rank's, then one rank's), CPU, stalls, then
 * communication ones.
 */
size_t orr_scales_rule_count(const struct orr_scales *s);
/* Rule k of them, described: what it applies to, its glob, factor and rank. */
enum orr_rule_on {
	ORR_RULE_GPU,
	ORR_RULE_CPU,
	ORR_RULE_STALLS,
	ORR_RULE_LATENCY, /* from here on: communication rules */
	ORR_RULE_BANDWIDTH
};
struct orr_rule {
	enum orr_rule_on on;
	const char *glob;
	double factor;
	int32_t rank; /* global; -1: every rank */
};
struct orr_rule orr_scales_rule(const struct orr_scales *s, size_t k);
/*
 * "gpu", "cpu", "stalls", "latency" or "bandwidth": as the rule is written, and in JSON
 * reports.
 */
const char *orr_rule_on_name(enum orr_rule_on on);
/*
 * Rule k of them, as written: "nccl*=0.5", "gpu@3:*=1.2", "cpu@1:*=2", "stalls:*=0",
 * "latency:*=0.5".
 */
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
 * are w->base) against base, its rules' factors from orr_scenario_options() (costs may
 * be NULL); progress, when not NULL, is every replay's progress callback.  0, or the error of
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
 * A step's change under a scenario: its predicted time in sc over that in base (the same
 * step replayed as recorded), less 1; NaN when base's is not positive.
 */
double orr_scenario_change(const struct orr_replay_row *base, const struct orr_replay_row *sc);

/* The mean, least and largest change over a table's steps; NaN without a finite one. */
struct orr_change_range {
	double mean, min, max;
};

/* Over the rows of run's table (orr_replay_report_table()) against w->base's. */
struct orr_change_range orr_scenario_change_range(const struct orr_scenario_report *w,
						  const struct orr_scenario_run *run);
/*
 * A scenario's trust: low when the time no rule moves (fixed) is over
 * ORR_TRUST_MAX_UNEXPLAINED of its step's critical path, as a replay's step is low when
 * its unexplained time is.
 */
bool orr_scenario_trust_low(const struct orr_scenario_run *run);

#ifdef __cplusplus
}
#endif

#endif
