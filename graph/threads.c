/* SPDX-License-Identifier: MIT */
/*
 * D6: a thread that hands work to another thread and waits for it.
 *
 * PyTorch runs the backward pass on its autograd thread while the main thread sits
 * in loss.backward() without calling CUDA; DDP, pipeline schedules and data loaders
 * do the same with their own threads.  The heuristic: when thread A is idle between
 * two calls P and T for at least ORR__HANDOFF_MIN_GAP_NS, and thread B is idle when A
 * stops, does all of a burst of calls inside A's idle time and is idle again when A
 * resumes, then B's burst starts after P (A handed off) and T starts after B's burst
 * ends (A waited).  Each edge's latency is the measured time from its source's end to
 * its task's start, and the waiting task's own gap is cut to that latency, so the
 * wait itself comes out of the replay.
 *
 * A thread that only polls (ORR_PROC_F_POLLER, orrery/graph.h) takes no part: a
 * watchdog wakes on its own timer and queries the events of the collectives in flight,
 * and nothing waits for it.  Its burst of queries inside the main thread's idle time
 * is a coincidence, and an edge from it made the main thread wait for the watchdog's
 * measured wake-up: on the Megatron TP=8 trace a host 10 times as fast then moved the
 * step by 5.7 % where its critical path is 94 % host time.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/*
 * The calls of a thread that only polls (CUDA runtime, driver, HIP), by prefix as
 * traces/names.c matches them: whether queued work is done, the error such a query
 * leaves (PyTorch's CUDAEvent::query clears cudaErrorNotReady with cudaGetLastError),
 * and the time between two recorded events (c10d's collective timings).  A thread that
 * also reads pointer attributes or the current device does other work: a DataLoader's
 * pin-memory thread asks is_pinned() and queries the events of its pinned blocks, and
 * the main thread waits for its batches.
 */
static const char *const query_calls[] = {
	"cudaEventQuery",      "cuEventQuery",       "hipEventQuery",        "cudaStreamQuery",
	"cuStreamQuery",       "hipStreamQuery",     "cudaGetLastError",     "cudaPeekAtLastError",
	"hipGetLastError",     "hipPeekAtLastError", "cudaEventElapsedTime", "cuEventElapsedTime",
	"hipEventElapsedTime",
};

static bool is_query(const struct orr_trace *t, const struct orr_event *e)
{
	const char *name;

	if (e->sub == ORR_CALL_EVENT_QUERY)
		return true;
	if (e->sub != ORR_CALL_OTHER)
		return false;
	name = orr_trace_str(t, e->name);
	for (size_t i = 0; i < sizeof(query_calls) / sizeof(query_calls[0]); i++)
		if (!strncmp(name, query_calls[i], strlen(query_calls[i])))
			return true;
	return false;
}

void orr__mark_pollers(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	const struct orr_rank *r = c->r;
	bool *other = orr_xcalloc(r->nplaces + 1, sizeof(*other));

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if ((e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
		    !other[e->place] && !is_query(g->trace, e))
			other[e->place] = true;
	}
	for (size_t p = c->first_proc; p < g->nprocs; p++)
		if (g->procs[p].kind == ORR_TASK_CPU && !other[g->procs[p].place])
			g->procs[p].flags |= ORR_PROC_F_POLLER;
	free(other);
}

/* The first task of proc p starting at or after t_ns. */
static uint32_t first_at(const struct orr__rank_ctx *c, const struct orr_proc *p, int64_t t_ns)
{
	uint32_t lo = 0, hi = p->ntasks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ORR__START(c, p->first_task + mid) < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->first_task + lo;
}

static void wait_edge(struct orr__rank_ctx *c, uint32_t dst, uint32_t src)
{
	int64_t lat = ORR__START(c, dst) - ORR__END(c, src);
	struct orr_task *t = &c->g->tasks[dst];

	if (lat < 0)
		lat = 0;
	if (t->gap_ns > lat)
		t->gap_ns = lat;
	orr__add_edge(c, dst, src, ORR_DEP_CROSS_THREAD, lat, ORR_DEP_F_INFERRED);
}

/* Thread b's burst inside the idle time of a between tasks p and t, if it has one. */
static void handoff(struct orr__rank_ctx *c, const struct orr_proc *b, uint32_t p, uint32_t t)
{
	int64_t idle_from = ORR__END(c, p), idle_to = ORR__START(c, t);
	uint32_t first = first_at(c, b, idle_from), last = first_at(c, b, idle_to);
	uint32_t end = b->first_task + b->ntasks;

	if (first >= last)
		return; /* b does nothing while a is idle */
	last--;
	if (ORR__END(c, last) > idle_to)
		return; /* b's burst outlasts a's idle time */
	if (first > b->first_task && ORR__END(c, first - 1) > idle_from)
		return; /* b was busy when a stopped */
	if (last + 1 < end && ORR__START(c, last + 1) < idle_to)
		return;
	wait_edge(c, first, p);
	wait_edge(c, t, last);
}

void orr__link_threads(struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;

	if (g->skip & (1u << ORR_DEP_CROSS_THREAD))
		return;
	for (size_t a = c->first_proc; a < g->nprocs; a++) {
		const struct orr_proc *pa = &g->procs[a];

		if (pa->kind != ORR_TASK_CPU || (pa->flags & ORR_PROC_F_POLLER))
			continue;
		for (uint32_t t = pa->first_task + 1; t < pa->first_task + pa->ntasks; t++) {
			if (ORR__START(c, t) - ORR__END(c, t - 1) < ORR__HANDOFF_MIN_GAP_NS)
				continue;
			for (size_t b = c->first_proc; b < g->nprocs; b++)
				if (b != a && g->procs[b].kind == ORR_TASK_CPU &&
				    !(g->procs[b].flags & ORR_PROC_F_POLLER))
					handoff(c, &g->procs[b], t - 1, t);
		}
	}
}
