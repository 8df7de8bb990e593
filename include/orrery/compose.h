/* SPDX-License-Identifier: MIT */
/*
 * orrery/compose.h — portable benchmarks composed from a trace (Mystique's method).
 *
 * From the execution graph of a traced job, one step of every rank becomes a plan: the
 * operators to run again (with the tensors, shapes, dtypes, strides and scalars the
 * execution trace recorded, or the shapes the profiler recorded), the collectives and
 * point-to-point transfers with their sizes and groups, the cross-stream event records
 * and waits (D4) and the blocking synchronizations (D5) of the trace, in the order the
 * CPU issued them.  GPU work no operator can rebuild stays in the plan as a timed
 * stand-in of its measured duration, listed with its name and the reason.  Writing a
 * plan gives a directory with bench.py (compose/bench.py: runs it on one GPU or under
 * torchrun) and rank-R.json per rank (docs/orrery-compose.md).
 *
 * Ownership: a plan borrows the graph (and its trace), which must outlive it.
 * Errors: functions return 0 or a negative code and fill the struct orr_diag.
 * Thread safety: a built plan is immutable.
 */
#ifndef ORRERY_COMPOSE_H
#define ORRERY_COMPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the plan keeps (--ops). */
enum orr_compose_ops { ORR_COMPOSE_ALL, ORR_COMPOSE_COMPUTE, ORR_COMPOSE_COMM };

/* --repeat NAME=K: the regions whose name matches NAME run K times in a row. */
struct orr_compose_repeat {
	const char *pattern; /* fnmatch(3), borrowed */
	int count;           /* 1 .. 1000 */
};

struct orr_compose_options {
	int64_t step; /* the step to compose (ProfilerStep#N); -1: chosen (docs) */
	enum orr_compose_ops ops;
	const char *subgraph; /* fnmatch(3) of the one region to keep, or NULL */
	const struct orr_compose_repeat *repeats;
	size_t nrepeats;
	int steps, warmup;    /* bench.py's defaults: timed steps, untimed ones before */
	const char *producer; /* names the writer in the data files */
	/* Operator namespaces rebuilt besides aten (identifiers; docs/orrery-compose.md) */
	const char *const *namespaces;
	size_t nnamespaces;
};

/* One rank's plan, in numbers.  GPU times are the trace's, summed over the tasks. */
struct orr_compose_rank {
	int32_t rank;
	int64_t step, step_ns; /* the step composed and its measured length on this rank */
	/*
	 * The step whose execution trace gave the operators' arguments: the step itself, or
	 * the one traced under the observer when `step` is a later one whose ops match it
	 * (docs/orrery-compose.md, "The step it copies"); -1 without an execution trace.
	 */
	int64_t args_step;
	uint64_t ops, comms, fills, records, waits, syncs; /* items, after --repeat */
	uint64_t tensors, storages;                        /* set by orr_compose_write() */
	int64_t gpu_ns;       /* every GPU task the step's CPU work launched */
	int64_t op_ns;        /* ... re-created by operators */
	int64_t comm_ns;      /* ... re-created as collectives and transfers */
	int64_t comm_wait_ns; /* ... of which they waited for their peers (below) */
	int64_t fill_ns;      /* ... stood in for by timed sleeps */
	int64_t dropped_ns;   /* ... left out by --ops or --subgraph */
};

/* Work no operator re-creates, by name and reason, over every rank. */
struct orr_compose_missing {
	const char *name;   /* the innermost op that launched it, or "(no operator)" */
	const char *reason; /* why it is not rebuilt */
	uint64_t tasks;     /* GPU tasks */
	int64_t gpu_ns;
};

struct orr_compose;

int orr_compose_build(const struct orr_graph *g, const struct orr_compose_options *opts,
		      struct orr_compose **ret, struct orr_diag *reterr_diag);
void orr_compose_free(struct orr_compose *c);

size_t orr_compose_rank_count(const struct orr_compose *c);
const struct orr_compose_rank *orr_compose_get_rank(const struct orr_compose *c, size_t i);
/*
 * The plan's coverage: the GPU time of every rank's step, and how much of it operators,
 * collectives (and their waiting for peers), stand-ins re-create and what was left out,
 * summed over the ranks as struct orr_compose_rank counts them.
 */
struct orr_compose_coverage {
	int64_t gpu_ns, op_ns, comm_ns, comm_wait_ns, fill_ns, dropped_ns;
};
void orr_compose_coverage_of(const struct orr_compose *c, struct orr_compose_coverage *ret);
/* By GPU time, largest first. */
size_t orr_compose_missing_count(const struct orr_compose *c);
const struct orr_compose_missing *orr_compose_get_missing(const struct orr_compose *c, size_t i);

/*
 * Writes bench.py and rank-R.json for every rank into the existing directory dir, and
 * counts each rank's tensors and storages.  On failure the files written so far stay
 * (the caller writes into a temporary directory).
 */
int orr_compose_write(struct orr_compose *c, const char *dir, struct orr_diag *reterr_diag);

/* The benchmark program itself, as written (NUL-terminated). */
const char *orr_compose_bench_py(void);

#ifdef __cplusplus
}
#endif

#endif
