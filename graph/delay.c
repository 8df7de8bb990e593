/* SPDX-License-Identifier: MIT */
/*
 * GPU tasks that waited for something the trace does not show.
 *
 * A GPU task starts once its stream is free and every dependency is met, plus the
 * launch pipeline's latency.  When it started later than everything the graph knows
 * it depends on (its launch, its stream predecessor, its cross-stream producers, a
 * kernel that held it) by more than the device's allowance (the upper decile of its
 * launch latencies), it waited for something the trace does not record: work of
 * another process or rank, a graph node CUPTI does not report, a host callback.  The
 * graph cannot say what, so, as with the CPU's gaps, the measured delay is kept: the
 * task starts that long after whichever of its dependencies ends last (its stream gap
 * and every edge into it grow by the delay).  Each such task is counted, and its delay
 * is what orr_graph_task_delay() returns, so reports can say how much of a step the
 * graph cannot explain.  With no_delays they are found and reported, not kept.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

/*
 * Per GPU task of the rank (local index), the earliest measured start its pending edges
 * and its stream predecessor (end plus the task's gap) allow; INT64_MIN for none.
 */
static int64_t *gpu_ready(const struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;
	int64_t *ready = orr_xmalloc((c->ntasks + 1) * sizeof(*ready));

	for (uint32_t l = 0; l < c->ntasks; l++)
		ready[l] = INT64_MIN;
	for (size_t i = 0; i < c->npend; i++) {
		const struct orr__pending *p = &c->pend[i];
		int64_t at = p->dep.kind == ORR_DEP_LAUNCH ? ORR__START(c, p->dep.src)
							   : ORR__END(c, p->dep.src);

		at += p->dep.lat_ns;
		if (at > ready[ORR__LOCAL(c, p->dst)])
			ready[ORR__LOCAL(c, p->dst)] = at;
	}
	for (uint32_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];

		if (pr->kind != ORR_TASK_GPU)
			continue;
		for (uint32_t t = pr->first_task + 1; t < pr->first_task + pr->ntasks; t++) {
			int64_t at = ORR__END(c, t - 1) + g->tasks[t].gap_ns;

			if (at > ready[ORR__LOCAL(c, t)])
				ready[ORR__LOCAL(c, t)] = at;
		}
	}
	return ready;
}

/* Lengthens the stream gap and every pending edge of each delayed task by its delay. */
static void keep(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	int64_t *delay = orr_xcalloc(c->ntasks + 1, sizeof(*delay));

	for (size_t i = c->first_delay; i < g->ndelays; i++) {
		g->tasks[g->delays[i].task].gap_ns += g->delays[i].ns;
		delay[ORR__LOCAL(c, g->delays[i].task)] = g->delays[i].ns;
	}
	for (size_t i = 0; i < c->npend; i++)
		c->pend[i].dep.lat_ns += delay[ORR__LOCAL(c, c->pend[i].dst)];
	free(delay);
}

void orr__late_tasks(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	int64_t *ready = gpu_ready(c);
	uint32_t *held = orr__find_holders(c, ready);

	c->first_delay = g->ndelays;
	for (uint32_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		const struct orr__device_lat *d;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		d = orr__device_lat(c, p);
		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++) {
			int64_t r = ready[ORR__LOCAL(c, t)], late;

			if (r == INT64_MIN || orr__link_holder(c, held, t, r, d))
				continue;
			late = ORR__START(c, t) - r;
			if (late <= d->late_ns)
				continue;
			ORR_VEC_PUSH(g->delays, g->ndelays, g->cap_delays,
				     ((struct orr__delay){ .task = t, .ns = late }));
			g->stats.delayed++;
			g->stats.delayed_ns += (uint64_t)late;
		}
	}
	free(ready);
	free(held);
	if (g->ndelays > c->first_delay && !g->no_delays)
		keep(c);
}

int64_t orr_graph_task_delay(const struct orr_graph *g, uint32_t task)
{
	size_t i = orr__find_task(g->delays, g->ndelays, sizeof(*g->delays), task);

	return i < g->ndelays ? g->delays[i].ns : 0;
}
