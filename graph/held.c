/* SPDX-License-Identifier: MIT */
/*
 * Kernels held back by a full GPU.  Kernels of different streams run side by side
 * only while the GPU has room: a kernel whose blocks fill every SM keeps the next
 * stream's kernel waiting until its last wave leaves room.  When a GPU task started
 * later than everything it depends on allows (its launch plus the device's launch
 * latency, its stream predecessor plus the stream gap, its cross-stream producers)
 * by more than the device's launch latency, and a kernel of another stream of the
 * same device was running when it started, the task is taken to have waited for that
 * kernel: a D4 edge flagged ORR_DEP_F_HELD | ORR_DEP_F_INFERRED, whose latency is the
 * measured time from the holder's end to the task's start (negative when the task
 * slipped into the holder's last wave).  A longer holder then holds it longer.
 */
#include "internal.h"
#include "banned.h"

/* The last task of proc q starting before t_ns, or ORR_NONE. */
static uint32_t started_before(const struct orr__rank_ctx *c, uint32_t q, int64_t t_ns)
{
	const struct orr_proc *pr = &c->g->procs[q];
	uint32_t lo = 0, hi = pr->ntasks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ORR__START(c, pr->first_task + mid) < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? pr->first_task + lo - 1 : ORR_NONE;
}

/* The kernel of another stream of t's device running when t started, ending last. */
static uint32_t holder(const struct orr__rank_ctx *c, uint32_t t, int64_t ready, int64_t slack)
{
	const struct orr_graph *g = c->g;
	int32_t device = c->r->places[g->procs[g->tasks[t].proc].place].device;
	int64_t start = ORR__START(c, t);
	uint32_t best = ORR_NONE;

	for (uint32_t q = c->first_proc; q < g->nprocs; q++) {
		uint32_t k;

		if (q == g->tasks[t].proc || g->procs[q].kind != ORR_TASK_GPU ||
		    c->r->places[g->procs[q].place].device != device)
			continue;
		k = started_before(c, q, start);
		if (k == ORR_NONE || ORR__END(c, k) < orr_time_sub(start, slack) ||
		    ORR__END(c, k) <= ready)
			continue;
		if (c->r->events[g->tasks[k].event].kind != ORR_EVENT_KERNEL)
			continue;
		if (best == ORR_NONE || ORR__END(c, k) > ORR__END(c, best))
			best = k;
	}
	return best;
}

bool orr__link_holder(struct orr__rank_ctx *c, uint32_t t, int64_t ready,
		      const struct orr__device_lat *d)
{
	uint32_t k;

	if ((c->g->skip & (1u << ORR_DEP_CROSS_STREAM)) || ORR__START(c, t) - ready <= d->launch_ns)
		return false;
	k = holder(c, t, ready, d->launch_ns);
	if (k == ORR_NONE)
		return false;
	orr__add_edge(c, t, k, ORR_DEP_CROSS_STREAM, ORR__START(c, t) - ORR__END(c, k),
		      ORR_DEP_F_INFERRED | ORR_DEP_F_HELD);
	return true;
}
