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
 */
#include "internal.h"
#include "banned.h"

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

		if (pa->kind != ORR_TASK_CPU)
			continue;
		for (uint32_t t = pa->first_task + 1; t < pa->first_task + pa->ntasks; t++) {
			if (ORR__START(c, t) - ORR__END(c, t - 1) < ORR__HANDOFF_MIN_GAP_NS)
				continue;
			for (size_t b = c->first_proc; b < g->nprocs; b++)
				if (b != a && g->procs[b].kind == ORR_TASK_CPU)
					handoff(c, &g->procs[b], t - 1, t);
		}
	}
}
