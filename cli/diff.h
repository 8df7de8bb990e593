/* SPDX-License-Identifier: MIT */
/*
 * cli/diff.h — `orrery diff`: what a step is made of on each side (cli/diff-profile.c),
 * then compared and printed (cli/cmd-diff.c).
 */
#ifndef ORRERY_CLI_DIFF_H
#define ORRERY_CLI_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/replay.h"
#include "summary.h"

/* Time under one name (a kernel, an op, an op with its shapes), summed over rank-steps. */
struct dp_item {
	char *key;  /* the name, or "name [shapes]" */
	char *name; /* the name alone */
	int64_t ns;
	uint64_t count;
	uint64_t shaped; /* ops: how many had their shapes recorded */
};

struct dp_map {
	struct orr_strtab *ids; /* key -> index + 1 */
	struct dp_item *v;
	size_t n, cap;
};

struct dp_rank {
	int32_t rank;
	size_t steps;
	int64_t step_ns; /* summed over its steps */
	struct orr_breakdown b;
};

/* One side of a diff: a measured trace, or the predicted timeline of one. */
struct dprofile {
	const char *label;
	bool predicted;
	size_t steps; /* rank-steps */
	struct dp_rank *ranks;
	size_t nranks;
	struct dp_map kernels, ops, ops_shaped;
	int64_t class_ns[ORR_SUM_CLASSES];
	uint64_t class_count[ORR_SUM_CLASSES];
};

/* One compared item: per rank-step on each side (cli/diff-rows.c). */
struct drow {
	const char *kind; /* "kernel", "op", "class" */
	const char *key;
	double a, b; /* ns per rank-step */
	uint64_t ca, cb;
};

struct dtab {
	struct drow *v;
	size_t n, cap;
};

/* A whole side, per rank-step: the step time and the breakdown. */
struct dp_totals {
	double step, compute, comm, wait, idle;
};

struct dprofile;
/* Rows by contribution (|b - a|, then name): kernel classes, kernels, ops. */
void dp_class_rows(struct dtab *t, const struct dprofile *a, const struct dprofile *b);
void dp_union_rows(struct dtab *t, const char *kind, const struct dp_map *ma,
		   const struct dp_map *mb, const struct dprofile *a, const struct dprofile *b);
/* Ops by name and shapes where both sides recorded every op's shapes, else by name. */
void dp_op_rows(struct dtab *t, const struct dprofile *a, const struct dprofile *b);
struct dp_totals dp_totals_of(const struct dprofile *p);
/* The rank of b compared with a's i-th: the same number, or the only one of each; NULL. */
const struct dp_rank *dp_peer_rank(const struct dprofile *a, size_t i, const struct dprofile *b);
/* A rank's mean step; NaN without steps. */
double dp_rank_mean(const struct dp_rank *r);

/* The profile of r: its measured timeline, or with predicted its replay's. */
void dp_build(struct dprofile *p, const char *label, const struct orr_replay *r, bool predicted);
void dp_release(struct dprofile *p);
/* The item of key in m, or NULL. */
const struct dp_item *dp_find(const struct dp_map *m, const char *key);

#endif
