/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-path.h — a critical path added up by category and by op (orrery
 * critical-path; analysis/path-ops.c, op-names.c) and the timelines as a Perfetto file
 * (orrery replay --timeline; analysis/timeline.c).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_PATH_H
#define ORRERY_ANALYSIS_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-select.h"
#include "orrery/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/*
 * The time of segs[0..n) (a path of orr_replay_critical_path()) by category into
 * by_cat[ORR_PATH_CAT_COUNT], which it sets; their sum.
 */
int64_t orr_path_cat_totals(const struct orr_path_seg *segs, size_t n, int64_t *by_cat);
/* The category an op spends most of its path time in. */
enum orr_path_cat orr_path_op_category(const struct orr_path_op *o);

#ifdef __cplusplus
}
#endif

#endif
