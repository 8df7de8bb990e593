/* SPDX-License-Identifier: MIT */
/*
 * graph/internal.h — what the graph builder's files share: the graph object and the
 * per-rank state used while one rank's tasks and edges are found.
 */
#ifndef ORRERY_GRAPH_INTERNAL_H
#define ORRERY_GRAPH_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "orrery/graph.h"

/*
 * D6: a thread idle this long between two calls, while another thread does all its
 * work inside that idle time, is taken to hand off to that thread and wait for it.
 * A millisecond is far above the microseconds of framework code between two
 * launches and far below a forward or backward pass.
 */
#define ORR__HANDOFF_MIN_GAP_NS 1000000

/* D4 heuristic: how many launches back to look for the producer on another stream. */
#define ORR__WAIT_LOOKBACK 64

/*
 * D5 without a call (spin.c): a gap between two calls inside one op is taken for a wait
 * on a communication kernel the op launched when it is at least ORR__SPIN_MIN_GAP_NS and
 * ORR__SPIN_GAP_FACTOR times the thread's median gap long (framework code between two
 * launches takes microseconds), and that kernel ended in the gap's last tenth, at most
 * ORR__SPIN_WAKE_NS before the next call (a poll of mapped host memory sees the flag
 * within a microsecond or two; the library then allocates its outputs and calls again).
 */
#define ORR__SPIN_MIN_GAP_NS 100000
#define ORR__SPIN_GAP_FACTOR 10
#define ORR__SPIN_WAKE_NS    50000

struct orr_graph {
	const struct orr_trace *trace;
	struct orr_graph_rank *ranks;
	size_t nranks;
	struct orr_task *tasks;
	size_t ntasks, cap_tasks;
	struct orr_proc *procs;
	size_t nprocs, cap_procs;
	struct orr_dep *deps;
	size_t ndeps, cap_deps;
	struct orr_wait *waits;
	size_t nwaits, cap_waits;
	struct orr_group *groups;
	size_t ngroups, cap_groups;
	uint32_t *members;
	size_t nmembers, cap_members;
	struct orr_graph_stats stats;
	uint32_t skip; /* 1u << ORR_DEP_* not built */
	/* During orr_graph_build(): communication kernel names (comm.c). */
	struct orr__comm_names *comm_names;
	struct orr__unexplained *unexplained; /* per rank: what it cannot explain (explain.c) */
	bool drop_inferred;
	bool no_delays;
	/* drop_inferred: the CPU tasks whose inferred wait was left out, in task order */
	struct orr__unwaited *unwaited;
	size_t nunwaited, cap_unwaited;
	/* GPU tasks that waited for what the trace does not show, in task order (delay.c) */
	struct orr__delay *delays;
	size_t ndelays, cap_delays;
};

/* Records found with orr__find_task() start with their task. */
struct orr__delay {
	uint32_t task;
	int64_t ns;
};

/* A CPU task no longer tied to its wait, which still gives its measured span. */
struct orr__unwaited {
	uint32_t task, wait;
};

/* An edge waiting for its task's edges to be laid out. */
struct orr__pending {
	uint32_t dst;
	struct orr_dep dep;
};

/* A measured correlation id and the task it belongs to (folded calls map to their parent). */
struct orr__corr {
	int64_t corr;
	uint32_t task;
};

/*
 * Correlation ids to tasks: the records sorted by id, then task, and, when the ids are
 * dense (a rank's ids grow by one per call), a table indexed by id - lo that gives the
 * first record's task at once (orr__find_corr()); the same answer as the search.
 */
struct orr__corr_map {
	struct orr__corr *v;
	size_t n;
	uint32_t *at; /* NULL, or per id in [lo, lo + nat): its first record's task, or ORR_NONE */
	int64_t lo;
	size_t nat;
};

/* A stream's id and its proc (sync.c). */
struct orr__stream {
	int64_t id;
	uint32_t proc;
};

/* Per device, measured on the rank's tasks (launch.c). */
struct orr__device_lat {
	int32_t device;
	int64_t launch_ns; /* launching call's start -> its task's start, on an idle stream */
	int64_t gap_ns;    /* a task's end -> the next queued task's start on its stream */
	/* The launch pipeline's allowance: a task starting within this of its last known
	 * dependency is explained by it.  Twice the median launch latency: the upper tail
	 * of the measured latencies is no measure of the pipeline, since it holds the very
	 * waits the graph looks for. */
	int64_t late_ns;
};

/* One rank while it is built; task and proc indices are graph-wide. */
struct orr__rank_ctx {
	struct orr_graph *g;
	const struct orr_rank *r;
	uint32_t rank;        /* graph rank index */
	uint32_t base;        /* first task of the rank */
	uint32_t ntasks;      /* tasks of the rank */
	uint32_t first_proc;  /* first proc of the rank */
	uint32_t *place_proc; /* per place: its proc, or ORR_NONE */
	int64_t *end;         /* per task (local index): measured end */
	int64_t *poll_lo;     /* per task: start of the next-to-last poll of a folded run, or -1 */
	uint32_t *last_ev;    /* per task: its last folded event */
	uint32_t *launcher;   /* per task: GPU: the call that launched it; CPU: first GPU task */
	uint8_t *by_graph; /* per task: GPU: its launcher is a CUDA-graph launch by stream order */
	/* per GPU task: its launcher's start; without one, the earlier of its own start and
	 * its launcher's start of the next launched task of its stream (launch.c) */
	int64_t *lstart;
	struct orr__corr_map corrs; /* calls by correlation id */
	struct orr__corr_map syncs; /* SYNC records by correlation: task field = event index */
	struct orr__pending *pend;
	size_t npend, cap_pend;
	struct orr__device_lat *devs;
	size_t ndevs;
	size_t first_delay;          /* the rank's delays: g->delays[first_delay .. g->ndelays) */
	struct orr__stream *streams; /* stream procs by id, then proc; made when first asked */
	size_t nstreams;
};

#define ORR__LOCAL(c, task) ((task) - (c)->base)
#define ORR__START(c, task) ((c)->r->events[(c)->g->tasks[task].event].start_ns)
#define ORR__END(c, task)   ((c)->end[ORR__LOCAL(c, task)])

/* build.c */
void orr__add_edge(struct orr__rank_ctx *c, uint32_t dst, uint32_t src, enum orr_dep_kind kind,
		   int64_t lat_ns, uint8_t flags);
/* Sorts m->v[0 .. m->n) by id, then task, and makes its table where the ids are dense. */
void orr__corr_map_index(struct orr__corr_map *m);
void orr__corr_map_free(struct orr__corr_map *m);
/* The task of the first record of id corr, or ORR_NONE. */
uint32_t orr__find_corr(const struct orr__corr_map *m, int64_t corr);
/* The record of v[0..n) (each `size` bytes, starting with its uint32_t task, sorted by
 * it) whose task is `task`, or n. */
size_t orr__find_task(const void *v, size_t n, size_t size, uint32_t task);
uint32_t orr__new_wait(struct orr_graph *g, enum orr_wait_kind kind, uint32_t target,
		       bool inferred);

/*
 * v[0, n), elements of `size` bytes whose runs v[at[i] .. at[i + 1]) (i < nruns) are each
 * in cmp's order (qsort_r()'s), in that order: the runs merged pairwise, n log nruns
 * comparisons where a sort makes n log n; of two equal elements, the earlier run's first.
 * Returns the sorted array, v or a buffer of n + 1 elements from orr_xmalloc(), and frees
 * the other; at[] is used up.  Inline: each caller's size and cmp are constants, so that
 * its elements are moved and compared as by a loop of their own type.
 */
static inline void *orr__merge_runs(void *v, size_t n, size_t size, size_t *at, size_t nruns,
				    int (*cmp)(const void *, const void *, void *), void *data)
{
	char *src = v, *dst;

	if (nruns < 2)
		return v;
	dst = orr_xmalloc((n + 1) * size);
	while (nruns > 1) {
		size_t k = 0;
		char *tmp;

		for (size_t i = 0; i < nruns; i += 2) {
			const char *a = src + at[i] * size, *am = src + at[i + 1] * size, *b = am;
			const char *bm = i + 1 < nruns ? src + at[i + 2] * size : am;
			char *o = dst + at[i] * size;

			for (; a < am && b < bm; o += size) {
				bool later = cmp(b, a, data) < 0;

				memcpy(o, later ? b : a, size);
				b += later ? size : 0;
				a += later ? 0 : size;
			}
			memcpy(o, a, (size_t)(am - a));
			memcpy(o + (am - a), b, (size_t)(bm - b));
			at[k++] = at[i];
		}
		at[k] = at[nruns];
		nruns = k;
		tmp = src;
		src = dst;
		dst = tmp;
	}
	free(dst);
	return src;
}

/* tasks.c: the rank's processors and tasks, in order, and its correlation map. */
void orr__collect_tasks(struct orr__rank_ctx *c);

/* launch.c: D2 and the GPU latencies. */
void orr__link_launches(struct orr__rank_ctx *c);
void orr__set_gpu_latencies(struct orr__rank_ctx *c);
const struct orr__device_lat *orr__device_lat(const struct orr__rank_ctx *c, uint32_t proc);
/* The index in c->devs of proc's device, or c->ndevs (a thread's, say). */
size_t orr__device_index(const struct orr__rank_ctx *c, uint32_t proc);
/* The last GPU task of stream proc p launched before t_ns, or ORR_NONE. */
uint32_t orr__launched_before(const struct orr__rank_ctx *c, uint32_t p, int64_t t_ns);
/* The first GPU task of stream proc p launched after t_ns, or ORR_NONE. */
uint32_t orr__launched_after(const struct orr__rank_ctx *c, uint32_t p, int64_t t_ns);
/* How many tasks of stream pr ended by t_ns. */
uint32_t orr__ended_by(const struct orr__rank_ctx *c, const struct orr_proc *pr, int64_t t_ns);
/* The stream proc of the last GPU task launched by thread task `task` or before it. */
uint32_t orr__last_launch_stream(const struct orr__rank_ctx *c, uint32_t task);

/* sync.c: D4 edges and D5 waits. */
void orr__link_stream_waits(struct orr__rank_ctx *c);
void orr__add_waits(struct orr__rank_ctx *c);

/* held.c: per GPU task (local index) later than its ready time (delay.c) by more than
 * the launch latency, the kernel of another stream of its device that started last
 * before it and ends last, or ORR_NONE; NULL when no task is that late (free()). */
uint32_t *orr__find_holders(struct orr__rank_ctx *c, const int64_t *ready);
/* Whether GPU task t, with the holders found above, was held back by a kernel of
 * another stream still running (the edge is added). */
bool orr__link_holder(struct orr__rank_ctx *c, const uint32_t *held, uint32_t t, int64_t ready,
		      const struct orr__device_lat *d);

/* delay.c: GPU tasks that started late: held by a full GPU, else a delay kept. */
void orr__late_tasks(struct orr__rank_ctx *c);

/* threads.c: the threads that only poll (ORR_PROC_F_POLLER), and D6 among the others. */
void orr__mark_pollers(struct orr__rank_ctx *c);
void orr__link_threads(struct orr__rank_ctx *c);

/* spin.c: D5 edges for gaps in which a thread spins on a flag a kernel writes. */
void orr__link_spins(struct orr__rank_ctx *c);

/*
 * comm.c: communication kernels by name (built-in patterns and the options' globs),
 * matched once per name id over the whole build.
 */
struct orr__comm_names *orr__comm_names_new(const struct orr_graph_options *opts);
void orr__comm_names_free(struct orr__comm_names *n);
void orr__mark_comm(struct orr__rank_ctx *c);

/* explain.c: the rank's measured time its edges cannot explain (the trust signal). */
void orr__explain_rank(struct orr__rank_ctx *c);
void orr__explain_free(struct orr_graph *g);

/* ranks.c: D7 over all ranks once every rank is built. */
void orr__link_ranks(struct orr_graph *g);

#endif
