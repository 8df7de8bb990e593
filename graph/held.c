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
 *
 * The candidates are, per other stream of the device, the last task that started
 * before the late one, if it is a kernel; the one ending last is the holder (ties: the
 * first stream).  They are found for every late task at once, by one sweep over the
 * rank's GPU tasks in start order (the order of the events) that keeps, per device, a
 * max-tree over its streams of the task each started last: O(log streams) per task.
 * A scan of every stream for each late task made 20,000 streams of late kernels
 * quadratic.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* The sweep's state: per device a max-tree over its streams, leaves from size on. */
struct sweep {
	const struct orr__rank_ctx *c;
	uint32_t *slot;  /* per GPU proc of the rank: its leaf in its device's tree */
	size_t *tree_at; /* per device: where its tree starts in trees[] */
	size_t *size;    /* per device: leaves of its tree, a power of two */
	uint32_t *trees; /* tasks, ORR_NONE for none */
	uint32_t *dev;   /* per GPU proc of the rank: its device's index in c->devs */
};

/* Whether task a ends later than b, or as late on an earlier stream. */
static bool better(const struct orr__rank_ctx *c, uint32_t a, uint32_t b)
{
	if (a == ORR_NONE || b == ORR_NONE)
		return b == ORR_NONE && a != ORR_NONE;
	if (ORR__END(c, a) != ORR__END(c, b))
		return ORR__END(c, a) > ORR__END(c, b);
	return c->g->tasks[a].proc < c->g->tasks[b].proc;
}

static uint32_t best_of(const struct orr__rank_ctx *c, uint32_t a, uint32_t b)
{
	return better(c, b, a) ? b : a;
}

/* Whether GPU task t, of device d, started later than its launch latency after ready. */
static bool late_on(const struct orr__rank_ctx *c, const struct orr__device_lat *d, uint32_t t,
		    int64_t ready)
{
	return ready != INT64_MIN && ORR__START(c, t) - ready > d->launch_ns;
}

static bool is_late(const struct orr__rank_ctx *c, uint32_t t, int64_t ready)
{
	return late_on(c, orr__device_lat(c, c->g->tasks[t].proc), t, ready);
}

static void sweep_init(struct sweep *s, const struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;
	size_t np = g->nprocs - c->first_proc, total = 0;
	uint32_t *count = orr_xcalloc(c->ndevs + 1, sizeof(*count));

	*s = (struct sweep){
		.c = c,
		.slot = orr_xmalloc((np + 1) * sizeof(*s->slot)),
		.dev = orr_xmalloc((np + 1) * sizeof(*s->dev)),
		.tree_at = orr_xmalloc((c->ndevs + 1) * sizeof(*s->tree_at)),
		.size = orr_xmalloc((c->ndevs + 1) * sizeof(*s->size)),
	};
	for (uint32_t p = c->first_proc; p < g->nprocs; p++) {
		if (g->procs[p].kind != ORR_TASK_GPU)
			continue;
		/* Every stream's device has its latencies (launch.c). */
		s->dev[p - c->first_proc] = (uint32_t)orr__device_index(c, p);
		assert(s->dev[p - c->first_proc] < c->ndevs);
		s->slot[p - c->first_proc] = count[s->dev[p - c->first_proc]]++;
	}
	for (size_t i = 0; i < c->ndevs; i++) {
		for (s->size[i] = 1; s->size[i] < count[i]; s->size[i] *= 2)
			;
		s->tree_at[i] = total;
		total += 2 * s->size[i];
	}
	s->trees = orr_xmalloc((total + 1) * sizeof(*s->trees));
	memset(s->trees, 0xff, (total + 1) * sizeof(*s->trees));
	free(count);
}

static void sweep_release(struct sweep *s)
{
	free(s->slot);
	free(s->dev);
	free(s->tree_at);
	free(s->size);
	free(s->trees);
}

/* GPU task t started: the candidate of its stream is t if it is a kernel, else none. */
static void sweep_start(struct sweep *s, uint32_t t)
{
	const struct orr__rank_ctx *c = s->c;
	uint32_t p = c->g->tasks[t].proc - c->first_proc, dev = s->dev[p];
	uint32_t *tree = &s->trees[s->tree_at[dev]];
	size_t k = s->size[dev] + s->slot[p];

	tree[k] = c->r->events[c->g->tasks[t].event].kind == ORR_EVENT_KERNEL ? t : ORR_NONE;
	for (k /= 2; k; k /= 2)
		tree[k] = best_of(c, tree[2 * k], tree[2 * k + 1]);
}

/* The best candidate of t's device among streams other than t's, or ORR_NONE. */
static uint32_t sweep_best(const struct sweep *s, uint32_t t)
{
	const struct orr__rank_ctx *c = s->c;
	uint32_t p = c->g->tasks[t].proc - c->first_proc, dev = s->dev[p], best = ORR_NONE;
	const uint32_t *tree = &s->trees[s->tree_at[dev]];
	size_t own = s->size[dev] + s->slot[p];

	/* Leaves [lo, hi) of each side of t's own, bottom-up. */
	for (size_t side = 0; side < 2; side++) {
		size_t lo = side ? own + 1 : s->size[dev], hi = side ? 2 * s->size[dev] : own;

		for (; lo < hi; lo /= 2, hi /= 2) {
			if (lo & 1)
				best = best_of(c, best, tree[lo++]);
			if (hi & 1)
				best = best_of(c, best, tree[--hi]);
		}
	}
	return best;
}

uint32_t *orr__find_holders(struct orr__rank_ctx *c, const int64_t *ready)
{
	const struct orr_graph *g = c->g;
	const struct orr_rank *r = c->r;
	uint32_t *held, *task_of;
	size_t nlate = 0;
	struct sweep s;

	if (g->skip & (1u << ORR_DEP_CROSS_STREAM))
		return NULL;
	held = orr_xmalloc((c->ntasks + 1) * sizeof(*held));
	memset(held, 0xff, (c->ntasks + 1) * sizeof(*held));
	task_of = orr_xmalloc((r->nevents + 1) * sizeof(*task_of));
	memset(task_of, 0xff, (r->nevents + 1) * sizeof(*task_of));
	for (uint32_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr__device_lat *d = orr__device_lat(c, p); /* the proc's, once */

		for (uint32_t t = g->procs[p].first_task;
		     g->procs[p].kind == ORR_TASK_GPU &&
		     t < g->procs[p].first_task + g->procs[p].ntasks;
		     t++) {
			task_of[g->tasks[t].event] = t;
			nlate += late_on(c, d, t, ready[ORR__LOCAL(c, t)]);
		}
	}
	if (!nlate) {
		free(task_of);
		free(held);
		return NULL;
	}
	sweep_init(&s, c);
	for (size_t e = 0, end; e < r->nevents; e = end) {
		/* Tasks starting at one time see those that started before it, not each other. */
		for (end = e; end < r->nevents && r->events[end].start_ns == r->events[e].start_ns;
		     end++) {
			uint32_t t = task_of[end];

			if (t != ORR_NONE && is_late(c, t, ready[ORR__LOCAL(c, t)]))
				held[ORR__LOCAL(c, t)] = sweep_best(&s, t);
		}
		for (size_t k = e; k < end; k++)
			if (task_of[k] != ORR_NONE)
				sweep_start(&s, task_of[k]);
	}
	sweep_release(&s);
	free(task_of);
	return held;
}

bool orr__link_holder(struct orr__rank_ctx *c, const uint32_t *held, uint32_t t, int64_t ready,
		      const struct orr__device_lat *d)
{
	uint32_t k = held ? held[ORR__LOCAL(c, t)] : ORR_NONE;
	int64_t start = ORR__START(c, t);

	if (k == ORR_NONE || ORR__END(c, k) < orr_time_sub(start, d->launch_ns) ||
	    ORR__END(c, k) <= ready)
		return false;
	orr__add_edge(c, t, k, ORR_DEP_CROSS_STREAM, start - ORR__END(c, k),
		      ORR_DEP_F_INFERRED | ORR_DEP_F_HELD);
	return true;
}
