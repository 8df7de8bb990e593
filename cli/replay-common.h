/* SPDX-License-Identifier: MIT */
/*
 * cli/replay-common.h — what `orrery replay`, `critical-path`, `diff` and `report` share:
 * the --comm, --steps and --ranks options, loading a trace up to a finished replay, the
 * replay's rows and its what-if scenarios as text, JSON and CSV (their analysis:
 * orr_replay_report_init(), orr_scenario_report_run()) and the Perfetto timeline
 * (orr_timeline_write()).
 */
#ifndef ORRERY_CLI_REPLAY_COMMON_H
#define ORRERY_CLI_REPLAY_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "orrery/analysis.h"

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
/*
 * --scale RULE of replay and critical-path: adds the rule to scales; -1 after reporting a
 * malformed one as a usage error of command cmd.
 */
int cli_scale_option(struct orr_scales *scales, const char *cmd, const char *arg);
/*
 * --timeline FILE of replay, critical-path and estimate: -1 after reporting an empty name
 * or one that says compressed as a usage error of command cmd; else FILE is an output
 * (cli_output_arg()).
 */
int cli_timeline_option(const char *cmd, const char *arg);
/*
 * The error when s leaves no rank-step of trace (or trace has none at all), replayed as
 * r: the ranks r holds when s names none of them.
 */
void cli_select_nothing(const struct orr_select *s, const char *trace, const struct orr_replay *r);

/* A trace, its graph and its replay. */
struct cli_replay {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
};

/*
 * Imports PATH, builds its graph with the --comm globs and replays it with the scales
 * (either may be NULL); with rules, against its replay without them (as orrery replay's
 * what-ifs: orr_scenario_options()).  Returns EXIT_OK, or EXIT_FAIL after reporting the
 * failure once.
 * cli_replay_close() releases what it holds in both cases.
 */
int cli_replay_open(const char *path, const struct orr_scales *scales, const struct cli_globs *comm,
		    struct cli_replay *ret);
void cli_replay_close(struct cli_replay *cr);
/*
 * One warning when a rank of the graph has no GPU task (a CPU-only profile, an
 * accelerator whose categories orrery does not read): naming the first such rank, the
 * categories its import skipped and how many more ranks are alike.  Its steps replay
 * as measured; nothing of them is a prediction.
 */
void cli_warn_no_gpu(const char *path, const struct orr_graph *g);
/*
 * The host time per step the profiler that recorded g's trace added to its launch
 * threads (orr_rank_fit_launch_time()); 0 when none is known.  cli_profiler_note() says
 * it in one paragraph to stdout, and that `orrery estimate` takes it out.
 */
double cli_profiler_ns(const struct orr_graph *g);
void cli_profiler_note(const struct orr_graph *g);

/* "10", or "all" for the whole capture (step -1). */
const char *cli_step_label(int64_t step, char *buf, size_t size);

void cli_report_text(const struct orr_replay_report *rep);
void cli_report_json(const struct orr_replay_report *rep);
/* A breakdown as the "measured"/"predicted" objects of the JSON reports (replay-json.c). */
struct json_out;
void cli_json_breakdown(struct json_out *j, const char *key, const struct orr_breakdown *b);
void cli_report_csv(const struct orr_replay_report *rep);

/* ---- what-if scenarios (the analysis: analysis/scenario*.c), printed (cli/replay-whatif.c) ---- */

/*
 * orr_scenario_report_run() with progress, its failure reported once: EXIT_OK or
 * EXIT_FAIL.
 */
int cli_whatif_run(struct orr_scenario_report *w, const char *path, const struct orr_replay *base,
		   const struct orr_scenarios *sc, const struct orr_costs *costs,
		   const struct orr_select *sel);
/*
 * Rules that matched no task, each with a warning (a CPU rule naming a rank that g does
 * not hold says so, with the ranks it has); their count.
 */
size_t cli_whatif_unmatched(const struct orr_scenario_report *w, const struct orr_graph *g);
void cli_whatif_text(const struct orr_scenario_report *w);
void cli_whatif_json(const struct orr_scenario_report *w);
void cli_whatif_csv(const struct orr_scenario_report *w);

/*
 * orr_timeline_write() to the output argument path ('-': standard output), with the
 * signals that would leave a temporary behind caught.
 */
int cli_timeline_write(const struct orr_replay *r, const struct orr_step_path *paths, size_t npaths,
		       const struct orr_select *sel, const char *path);

#endif
