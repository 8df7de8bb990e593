/* SPDX-License-Identifier: MIT */
/*
 * The replay object, and moving measured time points onto the predicted timeline:
 * step boundaries are annotations on a thread, so they move with the thread's tasks
 * (a point inside a task keeps its offset into it; a point between tasks keeps its
 * distance from the task before it, up to the next task's start, unless the graph
 * cut that gap to a wait's wake-up latency and the point lies in the work after the
 * wake-up: then it keeps its distance to the next task).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static void map_places(struct orr_replay *r)
{
	const struct orr_graph *g = r->g;
	size_t nr = orr_graph_rank_count(g), total = 0;

	r->place_base = orr_xmalloc((nr + 1) * sizeof(*r->place_base));
	for (size_t i = 0; i < nr; i++) {
		r->place_base[i] = total;
		total += orr_graph_get_rank(g, i)->rank->nplaces;
	}
	r->place_proc = orr_xmalloc((total + 1) * sizeof(*r->place_proc));
	memset(r->place_proc, 0xff, (total + 1) * sizeof(*r->place_proc));
	for (size_t p = 0; p < orr_graph_proc_count(g); p++) {
		const struct orr_proc *pr = &orr_graph_procs(g)[p];

		r->place_proc[r->place_base[pr->rank] + pr->place] = (uint32_t)p;
	}
}

/* When each collective instance's last member started, predicted [0] and measured [1]. */
static void arrivals(struct orr_replay *r)
{
	const struct orr_graph *g = r->g;
	const struct orr_group *groups = orr_graph_groups(g);
	const uint32_t *members = orr_graph_members(g);
	size_t n = orr_graph_group_count(g);

	for (int k = 0; k < 2; k++)
		r->arrival[k] = orr_xmalloc((n + 1) * sizeof(*r->arrival[k]));
	for (size_t i = 0; i < n; i++) {
		int64_t pred = INT64_MIN, meas = INT64_MIN;

		for (uint32_t m = 0; m < groups[i].n; m++) {
			uint32_t t = members[groups[i].first + m];
			int64_t s = orr_graph_task_start(g, t);

			pred = r->ts[t].start > pred ? r->ts[t].start : pred;
			meas = s > meas ? s : meas;
		}
		r->arrival[0][i] = pred;
		r->arrival[1][i] = meas;
	}
}

int orr_replay_run(const struct orr_graph *g, const struct orr_replay_options *opts,
		   struct orr_replay **ret_replay, struct orr_diag *reterr_diag)
{
	struct orr_replay *r = orr_xcalloc(1, sizeof(*r));
	size_t n = orr_graph_task_count(g);
	int err;

	r->g = g;
	r->ts = orr_xmalloc((n + 1) * sizeof(*r->ts));
	err = orr__simulate(r, opts, reterr_diag);
	if (err < 0) {
		orr_replay_free(r);
		return err;
	}
	map_places(r);
	arrivals(r);
	*ret_replay = r;
	return 0;
}

void orr_replay_free(struct orr_replay *r)
{
	if (!r)
		return;
	free(r->ts);
	free(r->place_proc);
	free(r->place_base);
	free(r->arrival[0]);
	free(r->arrival[1]);
	free(r);
}

const struct orr_graph *orr_replay_graph(const struct orr_replay *r)
{
	return r->g;
}

int64_t orr_replay_start(const struct orr_replay *r, uint32_t task)
{
	return r->ts[task].start;
}

int64_t orr_replay_end(const struct orr_replay *r, uint32_t task)
{
	return r->ts[task].end;
}

uint32_t orr_replay_cause(const struct orr_replay *r, uint32_t task, bool *ret_binds_end)
{
	uint32_t c = r->ts[task].cause;

	if (ret_binds_end)
		*ret_binds_end = c != ORR_NONE && (c & ORR__CAUSE_ENDS);
	return c == ORR_NONE ? ORR_NONE : c & ~ORR__CAUSE_ENDS;
}

/* The last task of proc p starting at or before t_ns (measured), or ORR_NONE. */
static uint32_t task_at(const struct orr_graph *g, const struct orr_proc *p, int64_t t_ns)
{
	uint32_t lo = 0, hi = p->ntasks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (orr_graph_task_start(g, p->first_task + mid) <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? p->first_task + lo - 1 : ORR_NONE;
}

int64_t orr_replay_map_time(const struct orr_replay *r, size_t rank, uint32_t place, int64_t t_ns)
{
	const struct orr_graph *g = r->g;
	uint32_t p = r->place_proc[r->place_base[rank] + place], t;
	const struct orr_proc *pr;
	int64_t mstart, mend, mapped, to_next;

	if (p == ORR_NONE)
		return t_ns; /* nothing on this place moves */
	pr = &orr_graph_procs(g)[p];
	t = task_at(g, pr, t_ns);
	if (t == ORR_NONE && pr->kind == ORR_TASK_CPU &&
	    orr_graph_tasks(g)[pr->first_task].gap_ns) {
		/* In or before a first call's gap, from the thread's step start (its anchor,
		 * which does not move): a point keeps its distance from the anchor, up to
		 * the call's start. */
		mapped = r->ts[pr->first_task].start;
		return t_ns < mapped ? t_ns : mapped;
	}
	if (t == ORR_NONE)
		return orr_time_sub(r->ts[pr->first_task].start,
				    orr_time_sub(orr_graph_task_start(g, pr->first_task), t_ns));
	mstart = orr_graph_task_start(g, t);
	mend = orr_graph_task_end(g, t);
	if (t_ns < mend) {
		mapped = orr_time_add(r->ts[t].start, orr_time_sub(t_ns, mstart));
		return mapped < r->ts[t].end ? mapped : r->ts[t].end;
	}
	if (t + 1 == pr->first_task + pr->ntasks)
		return orr_time_add(r->ts[t].end, orr_time_sub(t_ns, mend));
	/*
	 * A gap the graph cut to a wake-up latency (a wait on another thread or a kernel)
	 * was a wait followed by that much work: a point in the work keeps its distance
	 * to the next task, a point in the wait its distance from the task before.
	 */
	to_next = orr_time_sub(orr_graph_task_start(g, t + 1), t_ns);
	if (to_next <= orr_graph_tasks(g)[t + 1].gap_ns &&
	    orr_graph_tasks(g)[t + 1].gap_ns < orr_time_sub(orr_graph_task_start(g, t + 1), mend))
		return orr_time_sub(r->ts[t + 1].start, to_next);
	/* Measured points are bounded (ORR_TIME_MAX), predicted ones may not be: saturate. */
	mapped = orr_time_add(r->ts[t].end, orr_time_sub(t_ns, mend));
	return mapped < r->ts[t + 1].start ? mapped : r->ts[t + 1].start;
}
