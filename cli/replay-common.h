/* SPDX-License-Identifier: MIT */
/*
 * cli/replay-common.h — what `orrery replay` and `orrery critical-path` share: the
 * --scale and --comm options, loading a trace up to a finished replay, the numbers reported per
 * rank-step (cli/replay-report.c), the names of ops on a critical path (cli/op-names.c)
 * and the Perfetto timeline (cli/timeline.c).
 */
#ifndef ORRERY_CLI_REPLAY_COMMON_H
#define ORRERY_CLI_REPLAY_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "orrery/analysis.h"

/* A CPU rule, cpu:GLOB=FACTOR or cpu@RANK:GLOB=FACTOR; the glob is owned. */
struct cli_cpu_rule {
	char *glob;
	double factor;
	int32_t rank; /* global; -1: every rank */
};

/*
 * A communication rule: latency:GLOB=FACTOR multiplies the latency part of matching
 * collective kernels, bandwidth:GLOB=FACTOR their bandwidth (their transfer part is
 * divided by it); the glob is owned.
 */
struct cli_comm_rule {
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
struct cli_scales {
	struct orr_scale *v;
	size_t n, cap;
	struct cli_cpu_rule *cpu;
	size_t ncpu, cpucap;
	struct cli_comm_rule *comm;
	size_t ncomm, commcap;
};

/* Adds one rule; -1 when it is malformed or FACTOR is not from 0 to ORR_SCALE_MAX. */
int cli_scales_add(struct cli_scales *s, const char *arg);
void cli_scales_release(struct cli_scales *s);

struct cli_rule_match;
/*
 * Per task of g, the product of the CPU rules' factors that match it (NULL without CPU
 * rules), for orr_replay_options.cpu_factors: a CPU task matches when the framework op
 * of its call or the op running in the time before it (cli_op_name(),
 * cli_op_name_at()) matches the glob, on the rule's rank.  With steps_from, ret[k] is
 * what CPU rule k matched in its steps (its tasks' duration and time before them).
 */
float *cli_cpu_factors(const struct orr_graph *g, const struct cli_scales *s,
		       const struct orr_replay *steps_from, struct cli_rule_match *ret);
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
float *cli_comm_factors(const struct orr_graph *g, const struct cli_scales *s,
			const struct orr_costs *costs, const struct orr_replay *steps_from,
			struct cli_rule_match *ret);

/* The --comm GLOB options given, in order; the patterns are borrowed from argv. */
struct cli_globs {
	const char **v;
	size_t n, cap;
};

/* Adds one GLOB; -1 when it is empty. */
int cli_globs_add(struct cli_globs *g, const char *glob);
void cli_globs_release(struct cli_globs *g);

/*
 * --steps A[-B] and --ranks LIST (0,2,4-7): which rank-steps a report shows and which
 * part of the timelines --timeline writes.  Nothing given: everything.  A trace without
 * step annotations has one step, "all", which a --steps selection leaves out.  The
 * selection is a struct orr_select (include/orrery/analysis.h).
 *
 * Parses --steps (opt 'p') or --ranks (opt 'r') into s; -1 after reporting a malformed
 * value as a usage error of command cmd.
 */
int cli_select_option(struct orr_select *s, const char *cmd, int opt, const char *arg);
/* The error when s leaves no rank-step of trace (or trace has none at all). */
void cli_select_nothing(const struct orr_select *s, const char *trace);

/* A trace, its graph and its replay. */
struct cli_replay {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
};

/*
 * Imports PATH, builds its graph with the --comm globs and replays it with the scales
 * (either may be NULL).  Returns EXIT_OK, or EXIT_FAIL after reporting the failure once.
 * cli_replay_close() releases what it holds in both cases.
 */
int cli_replay_open(const char *path, const struct cli_scales *scales, const struct cli_globs *comm,
		    struct cli_replay *ret);
void cli_replay_close(struct cli_replay *cr);

/* |predicted - measured| / measured of a step; NaN when the measured time is not positive. */
double cli_step_error(const struct orr_replay_step *s);
/* "10", or "all" for the whole capture (step -1). */
const char *cli_step_label(int64_t step, char *buf, size_t size);

/* One rank-step of `orrery replay`. */
struct cli_row {
	int32_t rank; /* global rank */
	struct orr_replay_step s;
	double error;
	double busy_l1;
	struct orr_breakdown measured, predicted;
	struct orr_unexplained unexplained; /* over the measured window (the trust signal) */
	double unexplained_share;           /* total / measured step time; NaN when it is 0 */
	bool trust_low;                     /* unexplained_share > ORR_TRUST_MAX_UNEXPLAINED */
};

/* Everything `orrery replay` prints. */
struct cli_report {
	const char *path;
	const struct orr_graph *g;
	size_t nranks;
	struct cli_row *rows; /* rank-steps, by rank then step */
	size_t nrows;
	struct cli_row *job; /* job steps: s and error only */
	size_t njob;
	double mean_error, max_error;         /* over rank-steps; NaN when there is none */
	double job_mean_error, job_max_error; /* over job steps */
	size_t trust_low;                     /* rank-steps of low trust */
	double max_unexplained_share;         /* over rank-steps; NaN when there is none */
	struct orr_graph_stats stats;
};

/* The rank-steps and job steps of r that sel selects (NULL: all). */
void cli_report_init(struct cli_report *rep, const char *path, const struct orr_replay *r,
		     const struct orr_select *sel);
void cli_report_release(struct cli_report *rep);
void cli_report_text(const struct cli_report *rep);
void cli_report_json(const struct cli_report *rep);
/* A breakdown as the "measured"/"predicted" objects of the JSON reports (replay-json.c). */
struct json_out;
void cli_json_breakdown(struct json_out *j, const char *key, const struct orr_breakdown *b);
void cli_report_csv(const struct cli_report *rep);

/* ---- what-if scenarios (cli/scenario.c, cli/replay-whatif.c) ---- */

/* A what-if of `orrery replay`: a name and its --scale rules. */
struct cli_scenario {
	char *name; /* owned */
	struct cli_scales scales;
};

struct cli_scenarios {
	struct cli_scenario *v;
	size_t n, cap;
};

/*
 * The replay options of scenario rules s, and the factor arrays they hold: GPU rules as
 * scales, CPU and communication rules as per-task factors (costs: as for
 * cli_comm_factors()).  With matches (cli_rule_count(s) of them) and steps_from, what
 * each rule matches in the steps of steps_from.
 */
struct cli_scenario_replay {
	struct orr_replay_options opts;
	float *cpu, *comm;
};
void cli_scenario_options(struct cli_scenario_replay *ret, const struct orr_graph *g,
			  const struct cli_scales *s, const struct orr_costs *costs,
			  const struct orr_replay *steps_from, struct cli_rule_match *matches);
void cli_scenario_options_release(struct cli_scenario_replay *r);

/* A scenario's rules: GPU, then CPU, then communication ones. */
size_t cli_rule_count(const struct cli_scales *s);
/* Rule k of them, as written: "nccl*=0.5", "cpu@1:*=2", "latency:*=0.5". */
const char *cli_rule_label(const struct cli_scales *s, size_t k, char *buf, size_t size);

/* Moves the --scale rules given into one scenario, named after them ("nccl*=0.5"), first. */
void cli_scenarios_take_scales(struct cli_scenarios *s, struct cli_scales *scales);
/* Appends the scenarios of a --scenario FILE; -1 with the reason ("FILE:LINE: ...") in err. */
int cli_scenarios_read(struct cli_scenarios *s, const char *path, char *err, size_t size);
void cli_scenarios_release(struct cli_scenarios *s);

/*
 * What one rule matches: its tasks in the steps of their ranks and their measured time
 * (a CPU task's with the time before it).
 */
struct cli_rule_match {
	size_t tasks;
	int64_t gpu_ns;
	size_t rank_steps; /* the steps they were counted in */
	/* Communication rules: the latency part of gpu_ns, and the matched kernels that
	 * keep their time (no size, or a model that cannot split it). */
	int64_t latency_ns;
	size_t unsplit;
};

/* ret[i] for scales->v[i] (the GPU rules), over the graph of r. */
void cli_rule_matches(const struct orr_replay *r, const struct cli_scales *scales,
		      struct cli_rule_match *ret);

/* One scenario replayed: its report (predicted = the scenario) and its rules' matches. */
struct cli_whatif_run {
	const struct cli_scenario *sc;
	struct cli_report rep;
	struct cli_rule_match *matches;
	/* Of the table's steps, the one whose critical path holds the largest share of time
	 * no rule moves (orr_replay_path_fixed()): that time, its share, and the step. */
	struct orr_path_fixed fixed;
	double fixed_share;
	int64_t fixed_step;
};

/* `orrery replay` with scenarios: the trace replayed as recorded, then each scenario. */
struct cli_whatif {
	const char *path;
	bool costs; /* communication rules split by a costs file's models */
	struct cli_report base;
	struct cli_whatif_run *runs;
	size_t nruns;
};

/* Replays each scenario on the graph of base (the replay as recorded); EXIT_OK or EXIT_FAIL. */
int cli_whatif_run(struct cli_whatif *w, const char *path, const struct orr_replay *base,
		   const struct cli_scenarios *sc, const struct orr_costs *costs,
		   const struct orr_select *sel);
void cli_whatif_release(struct cli_whatif *w);
/* Rules that matched no GPU task, each with a warning; their count. */
size_t cli_whatif_unmatched(const struct cli_whatif *w);
void cli_whatif_text(const struct cli_whatif *w);
void cli_whatif_json(const struct cli_whatif *w);
void cli_whatif_csv(const struct cli_whatif *w);

/*
 * The names `orrery critical-path` lists time under (cli/op-names.c), as ids into the
 * trace's strings.  cli_op_name(): a GPU task's own name; a CPU call's framework op (the
 * op with its external id), else its own name.  cli_op_name_at(): for CPU time between
 * calls, the innermost op or annotation (not a step) running on the task's thread at
 * measured time t_ns, else ORR_STR_NONE (time outside every op: the framework's own
 * code, or code the profiler did not record).
 */
struct cli_op_names;
struct cli_op_names *cli_op_names_new(const struct orr_graph *g);
void cli_op_names_free(struct cli_op_names *n);
uint32_t cli_op_name(const struct cli_op_names *n, uint32_t task);
uint32_t cli_op_name_at(const struct cli_op_names *n, uint32_t task, int64_t t_ns);

/*
 * Writes the measured and predicted timelines of every rank as a Chrome/Perfetto
 * trace-event JSON file, as orr_outfile_open() writes (a temporary renamed when
 * complete), with each step's critical path on a track of its own (paths may be
 * NULL): of the ranks sel selects, and of their tasks those that overlap a selected
 * step's window on their timeline (sel NULL: all).  Returns 0 or a negative errno (nothing is left behind then).
 */
struct cli_step_path {
	int64_t step;
	struct orr_path_seg *segs; /* owned */
	size_t n;
};

int cli_timeline_write(const struct orr_replay *r, const struct cli_step_path *paths, size_t npaths,
		       const struct orr_select *sel, const char *path);

#endif
