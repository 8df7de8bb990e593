/* SPDX-License-Identifier: MIT */
/*
 * The trust signal: measured time the graph cannot explain, found once per rank while
 * the graph is built, from the measured times and the rank's edges only.
 *
 *   GPU idle     a GPU task's explicit edges (D2 from the call's start, every other
 *                edge from its source's end, each plus its latency) and its stream
 *                predecessor (end plus the stream gap) give the earliest start the
 *                graph allows, `ready`.  A task that started later than ready plus the
 *                device's launch allowance (late_ns, launch.c: a task starting within
 *                it of its last dependency is explained by the launch pipeline; sync.c
 *                uses the same bound) waited for something the graph does not hold:
 *                delay.c finds these delays, and [ready + allowance, start) is
 *                unexplained.  The replay keeps such a delay as measured, so it does
 *                not move in a what-if.  The first task of a stream without edges has
 *                nothing to explain.
 *   CPU blocked  a blocking call (stream, device or event synchronize, a polling run,
 *                a synchronous copy or a copy into pageable memory, as sync.c lists
 *                them) without a wait: its whole measured interval.  The replay keeps
 *                such a call's measured duration, so it is right on the trace but does
 *                not move when the work it waited for does; the call's own cost (a few
 *                microseconds) is counted too, which errs towards distrust.  A call that
 *                is its thread's last task and the source of no edge delays nothing in
 *                the replay (a thread polling its events until the capture ends) and
 *                is left out, as is every call of a thread that only polls
 *                (ORR_PROC_F_POLLER: a watchdog, which nothing waits for).
 *
 * Per rank the intervals of each kind, and of both, are merged into disjoint sorted
 * lists, so that a window's unexplained time is a union (two streams idle at once
 * count once) and a lookup costs a binary search plus the intervals inside it.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

struct span {
	int64_t start_ns, end_ns;
};

enum { GPU, CPU, ALL, NKINDS };

struct orr__unexplained {
	struct span *v[NKINDS]; /* disjoint, in time order */
	size_t n[NKINDS];
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static void push(struct spans *s, int64_t start_ns, int64_t end_ns)
{
	if (end_ns > start_ns)
		ORR_VEC_PUSH(s->v, s->n, s->cap, ((struct span){ start_ns, end_ns }));
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* Sorts and merges s in place; returns the merged count. */
static size_t merge(struct span *v, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].start_ns <= v[k - 1].end_ns) {
			if (v[i].end_ns > v[k - 1].end_ns)
				v[k - 1].end_ns = v[i].end_ns;
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/* The rank's delays (delay.c): each from its task's ready time plus the allowance. */
static void gpu_idle(const struct orr__rank_ctx *c, struct spans *s)
{
	const struct orr_graph *g = c->g;

	for (size_t i = c->first_delay; i < g->ndelays; i++) {
		uint32_t t = g->delays[i].task;
		int64_t start = ORR__START(c, t);

		push(s, start - g->delays[i].ns + orr__device_lat(c, g->tasks[t].proc)->late_ns,
		     start);
	}
}

/* A blocking call (sync.c marks them) that waits for nothing the graph identified. */
static bool blocks_unexplained(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &g->tasks[t];

	return (task->flags & ORR_TASK_F_BLOCKING) &&
	       (task->aux == ORR_NONE || g->waits[task->aux].kind == ORR_WAIT_RECORD);
}

static void keep(struct orr__unexplained *u, int kind, struct spans *s)
{
	u->n[kind] = merge(s->v, s->n);
	u->v[kind] = s->v;
	*s = (struct spans){ 0 };
}

/* Per task of the rank (local index), whether it is the source of an edge of the rank. */
static bool *edge_sources(const struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;
	bool *src = orr_xcalloc(c->ntasks + 1, sizeof(*src));

	for (uint32_t k = c->base; k < c->base + c->ntasks; k++)
		for (uint32_t d = g->tasks[k].first_dep;
		     d < g->tasks[k].first_dep + g->tasks[k].ndeps; d++)
			if (g->deps[d].src >= c->base && g->deps[d].src < c->base + c->ntasks)
				src[ORR__LOCAL(c, g->deps[d].src)] = true;
	return src;
}

/*
 * The blocking calls of thread pr that wait for nothing the graph identified.  *src is
 * made on the first thread that needs it (one pass over the edges, not one per thread).
 */
static void cpu_blocked(const struct orr__rank_ctx *c, const struct orr_proc *pr, struct spans *s,
			bool **src)
{
	uint32_t last = pr->first_task + pr->ntasks - 1;

	for (uint32_t t = pr->first_task; t < last; t++)
		if (blocks_unexplained(c->g, t))
			push(s, ORR__START(c, t), ORR__END(c, t));
	if (!blocks_unexplained(c->g, last))
		return;
	if (!*src)
		*src = edge_sources(c);
	if ((*src)[ORR__LOCAL(c, last)])
		push(s, ORR__START(c, last), ORR__END(c, last));
}

void orr__explain_rank(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	struct orr__unexplained *u;
	struct spans gpu = { 0 }, cpu = { 0 }, all = { 0 };
	bool *src = NULL;

	if (!g->unexplained)
		g->unexplained = orr_xcalloc(g->nranks + 1, sizeof(*g->unexplained));
	u = &g->unexplained[c->rank];
	gpu_idle(c, &gpu);
	for (uint32_t p = c->first_proc; p < g->nprocs; p++)
		if (g->procs[p].kind == ORR_TASK_CPU && !(g->procs[p].flags & ORR_PROC_F_POLLER))
			cpu_blocked(c, &g->procs[p], &cpu, &src);
	free(src);
	keep(u, GPU, &gpu);
	keep(u, CPU, &cpu);
	all.v = orr_xmalloc((u->n[GPU] + u->n[CPU] + 1) * sizeof(*all.v));
	if (u->n[GPU])
		memcpy(all.v, u->v[GPU], u->n[GPU] * sizeof(*all.v));
	if (u->n[CPU])
		memcpy(all.v + u->n[GPU], u->v[CPU], u->n[CPU] * sizeof(*all.v));
	all.n = u->n[GPU] + u->n[CPU];
	keep(u, ALL, &all);
}

void orr__explain_free(struct orr_graph *g)
{
	for (size_t i = 0; g->unexplained && i < g->nranks; i++)
		for (int k = 0; k < NKINDS; k++)
			free(g->unexplained[i].v[k]);
	free(g->unexplained);
}

/* Length of the overlap of [start_ns, end_ns) with the disjoint sorted spans v[0..n). */
static int64_t overlap(const struct span *v, size_t n, int64_t start_ns, int64_t end_ns)
{
	size_t lo = 0, hi = n;
	int64_t sum = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end_ns <= start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && v[i].start_ns < end_ns; i++) {
		int64_t a = v[i].start_ns > start_ns ? v[i].start_ns : start_ns;
		int64_t b = v[i].end_ns < end_ns ? v[i].end_ns : end_ns;

		sum += b - a;
	}
	return sum;
}

void orr_graph_unexplained(const struct orr_graph *g, size_t rank, int64_t start_ns, int64_t end_ns,
			   struct orr_unexplained *ret)
{
	const struct orr__unexplained *u = g->unexplained ? &g->unexplained[rank] : NULL;

	*ret = (struct orr_unexplained){ 0 };
	if (!u || end_ns <= start_ns)
		return;
	ret->gpu_idle_ns = overlap(u->v[GPU], u->n[GPU], start_ns, end_ns);
	ret->cpu_blocked_ns = overlap(u->v[CPU], u->n[CPU], start_ns, end_ns);
	ret->total_ns = overlap(u->v[ALL], u->n[ALL], start_ns, end_ns);
}
