/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-diff.h — what a step is made of on two sides, compared (orrery diff;
 * analysis/diff-profile.c, diff-rows.c).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_DIFF_H
#define ORRERY_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-summary.h"
#include "orrery/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

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
