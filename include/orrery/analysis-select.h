/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-select.h — which rank-steps an analysis covers: steps A..B and a list of
 * ranks (orrery replay, summary, critical-path, info --steps and --ranks).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_SELECT_H
#define ORRERY_ANALYSIS_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

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

struct orr_graph;
/*
 * ranks[0..n) (in any order, repeats once) as compact ranges in buf[0..size), "0-3,8",
 * cut short with "..." where it does not fit.
 */
void orr_ranks_text(const int32_t *ranks, size_t n, char *buf, size_t size);
/*
 * Whether s names ranks (not every rank) and g holds none of them; then g's global
 * ranks as orr_ranks_text() writes them in have[0..size).
 */
bool orr_select_misses(const struct orr_select *s, const struct orr_graph *g, char *have,
		       size_t size);

#ifdef __cplusplus
}
#endif

#endif
