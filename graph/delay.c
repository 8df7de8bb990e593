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

void orr__find_delays(struct orr__rank_ctx *c, const int64_t *ready)
{
	struct orr_graph *g = c->g;

	c->first_delay = g->ndelays;
	for (uint32_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		const struct orr__device_lat *d;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		d = orr__device_lat(c, p);
		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++) {
			int64_t r = ready[ORR__LOCAL(c, t)], late;

			if (r == INT64_MIN)
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
	if (g->ndelays > c->first_delay && !g->no_delays)
		keep(c);
}

int64_t orr_graph_task_delay(const struct orr_graph *g, uint32_t task)
{
	size_t lo = 0, hi = g->ndelays;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->delays[mid].task < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->ndelays && g->delays[lo].task == task ? g->delays[lo].ns : 0;
}
