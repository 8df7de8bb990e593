/* SPDX-License-Identifier: MIT */
/*
 * cli/summary.h — `orrery summary`: where the time of a measured trace goes, gathered
 * once (cli/summary.c) and printed as text, JSON or CSV (cli/summary-out.c).
 */
#ifndef ORRERY_CLI_SUMMARY_H
#define ORRERY_CLI_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"

/* One rank-step of the measured trace. */
struct sum_step {
	int32_t rank; /* global */
	int64_t step;
	int64_t step_ns;
	struct orr_breakdown b; /* measured */
	int64_t busy_ns;        /* some GPU task runs */
	int64_t copy_ns;        /* copies and sets, summed */
};

/* Time spent under one name (kernels, ops) or on one stream, in the steps. */
struct sum_item {
	uint32_t name; /* kernels and ops: interned; streams: ORR_NONE */
	int32_t rank;  /* streams: global rank; else -1 */
	int64_t stream;
	size_t count;
	int64_t ns;
};

/* Collective instances of one kind, size, group and link. */
struct sum_coll {
	enum orr_coll_kind kind;
	enum orr_link link;
	double bytes; /* nccl-tests' S; NaN when unknown */
	bool sized_by_caller;
	int group;
	size_t count, alone;
	double ns;          /* summed: each instance's shortest member */
	uint32_t algo_task; /* a member, whose kernel name gives the algorithm */
};

struct summary {
	const char *path;
	const struct orr_graph *g;
	size_t nranks;
	struct sum_step *steps;
	size_t nsteps;
	struct sum_item *kernels, *ops, *streams;
	size_t nkernels, nops, nstreams;
	int64_t kernel_ns, op_ns; /* totals of the lists above */
	struct sum_coll *colls;
	size_t ncolls;
	size_t colls_unknown; /* instances of unknown kind, group or size, not listed */
	int32_t straggler;    /* the rank the others wait for; -1 */
	double straggler_wait_ns, others_wait_ns; /* its mean waiting, the others' median */
};

struct cli_select;
/* What the rank-steps sel selects (NULL: all) hold. */
void summary_gather(struct summary *s, const char *path, const struct orr_replay *r,
		    const struct cli_select *sel);
void summary_release(struct summary *s);
void summary_text(const struct summary *s, size_t top);
void summary_json(const struct summary *s, size_t top);
void summary_csv(const struct summary *s);
/* "RING_LL" from "ncclDevKernel_AllReduce_Sum_f16_RING_LL(...)"; "" when none. */
void summary_algorithm(const char *kernel, char *buf, size_t size);

#endif
