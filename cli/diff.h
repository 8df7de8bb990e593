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
	int64_t class_ns[SUM_CLASSES];
	uint64_t class_count[SUM_CLASSES];
};

/* The profile of r: its measured timeline, or with predicted its replay's. */
void dp_build(struct dprofile *p, const char *label, const struct orr_replay *r, bool predicted);
void dp_release(struct dprofile *p);
/* The item of key in m, or NULL. */
const struct dp_item *dp_find(const struct dp_map *m, const char *key);

#endif
