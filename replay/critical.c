/* SPDX-License-Identifier: MIT */
/*
 * The critical path of a predicted window: from the task that ends last in it, back
 * through what decided each task's time (replay's causes).  A task whose start was
 * decided contributes its whole run; a blocking call whose end was decided by the
 * GPU contributes only its return after the GPU work; a collective member held by a
 * late peer contributes the transfer after that peer's arrival and the path goes on
 * through the peer.  Time between a cause's end and its effect's start is CPU time
 * when both are on one thread (framework code), idle time otherwise (latencies);
 * before a thread's first call, the call's gap (the framework's work since the
 * thread's step began) is CPU time and the time before it idle: the thread had not
 * started, which no what-if moves.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct path {
	struct orr_path_seg *v;
	size_t n, cap;
	int64_t from;
	uint8_t via; /* of the segments pushed now: enum orr_dep_kind, 0 */
};

static enum orr_path_cat category(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];

	if (task->kind == ORR_TASK_GPU)
		return task->flags & ORR_TASK_F_COMM ? ORR_PATH_COMM : ORR_PATH_COMPUTE;
	return task->flags & ORR_TASK_F_LAUNCH ? ORR_PATH_LAUNCH : ORR_PATH_CPU;
}

static void push(struct path *p, uint32_t task, enum orr_path_cat cat, int64_t s, int64_t e)
{
	s = s < p->from ? p->from : s;
	if (s >= e)
		return;
	ORR_VEC_PUSH(p->v, p->n, p->cap,
		     ((struct orr_path_seg){ .task = task,
					     .cat = (uint8_t)cat,
					     .via = p->via,
					     .start_ns = s,
					     .end_ns = e }));
}

/* Whether task t runs on a thread that only polls: nothing waits for it, it ends nothing. */
static bool on_poller(const struct orr_graph *g, uint32_t t)
{
	return orr_graph_procs(g)[orr_graph_tasks(g)[t].proc].flags & ORR_PROC_F_POLLER;
}

static uint32_t last_task(const struct orr_replay *r, int64_t from, int64_t to)
{
	uint32_t best = ORR_NONE;

	for (uint32_t t = 0; t < orr_graph_task_count(r->g); t++)
		if (r->ts[t].end <= to && r->ts[t].end > from && !on_poller(r->g, t) &&
		    (best == ORR_NONE || r->ts[t].end > r->ts[best].end))
			best = t;
	return best;
}

/* A task running across the end of [from, to) (none ends inside it): the latest to start. */
static uint32_t spanning_task(const struct orr_replay *r, int64_t from, int64_t to)
{
	uint32_t best = ORR_NONE;

	for (uint32_t t = 0; t < orr_graph_task_count(r->g); t++)
		if (r->ts[t].start < to && r->ts[t].end > to && r->ts[t].end > from &&
		    !on_poller(r->g, t) && (best == ORR_NONE || r->ts[t].start > r->ts[best].start))
			best = t;
	return best;
}

static bool same_group(const struct orr_graph *g, uint32_t a, uint32_t b)
{
	const struct orr_task *ta = &orr_graph_tasks(g)[a], *tb = &orr_graph_tasks(g)[b];

	return ta->kind == ORR_TASK_GPU && tb->kind == ORR_TASK_GPU && ta->aux != ORR_NONE &&
	       ta->aux == tb->aux;
}

/*
 * What decided task t's start.  The replay keeps one cause per task, its end's where
 * something else decided it (a blocking call's awaited GPU work, a late peer); what
 * decided the start is kept beside it (replay/sim.c, offer()): the processor's order
 * (the previous task with its gap, scaled as the replay scaled it, or the processor's
 * anchor before its first task) or one of the task's dependencies.
 */
static uint32_t start_cause(const struct orr_replay *r, uint32_t t)
{
	const struct orr_graph *g = r->g;
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_dep *deps = orr_graph_deps(g);
	uint32_t sd = r->ts[t].start_dep, c;
	int64_t t0 = INT64_MIN;
	bool binds_end;

	c = orr_replay_cause(r, t, &binds_end);
	if (!binds_end)
		return c;
	if (sd == ORR__START_ORDER)
		return t > orr_graph_procs(g)[task->proc].first_task ? t - 1 : ORR_NONE;
	if (sd < ORR__START_DEPS)
		return deps[task->first_dep + sd].src;
	/* Past the 65,534th of its dependencies: the latest of those, as the replay chose. */
	c = ORR_NONE;
	for (uint32_t d = task->first_dep + ORR__START_DEPS; d < task->first_dep + task->ndeps;
	     d++) {
		uint32_t src = deps[d].src;
		int64_t at = orr_time_add(deps[d].kind == ORR_DEP_LAUNCH ? r->ts[src].start
									 : r->ts[src].end,
					  deps[d].lat_ns);

		if (at > t0) {
			t0 = at;
			c = src;
		}
	}
	return c;
}

/* The kind of the dependency by which task c decided task t's start. */
static uint8_t start_via(const struct orr_graph *g, uint32_t c, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_dep *deps = orr_graph_deps(g);

	if (c == ORR_NONE)
		return 0;
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		if (deps[d].src == c)
			return deps[d].kind;
	if (orr_graph_tasks(g)[c].proc == task->proc)
		return task->kind == ORR_TASK_CPU ? ORR_DEP_THREAD : ORR_DEP_STREAM;
	return 0;
}

/* From the start of task t (at or before hi) to its start cause; returns the next task. */
static uint32_t before_start(const struct orr_replay *r, struct path *p, uint32_t t, int64_t *hi)
{
	const struct orr_graph *g = r->g;
	uint32_t c = start_cause(r, t);
	int64_t s = r->ts[t].start < *hi ? r->ts[t].start : *hi;
	bool thread = c != ORR_NONE && orr_graph_tasks(g)[c].proc == orr_graph_tasks(g)[t].proc &&
		      orr_graph_tasks(g)[t].kind == ORR_TASK_CPU;

	if (c == ORR_NONE) {
		/* Before a thread's first call: the framework's work since its step began
		 * there (the call's gap, graph/tasks.c); before that the thread had not
		 * started, and nothing on the path runs. */
		int64_t anchor = s;

		if (orr_graph_tasks(g)[t].kind == ORR_TASK_CPU) {
			const struct orr_proc *pr = &orr_graph_procs(g)[orr_graph_tasks(g)[t].proc];

			anchor = pr->first_start_ns - orr_graph_tasks(g)[t].gap_ns;
			anchor = anchor < s ? anchor : s;
			push(p, t, ORR_PATH_CPU, anchor, s);
		}
		push(p, ORR_NONE, ORR_PATH_IDLE, p->from, anchor);
		*hi = p->from;
		return ORR_NONE;
	}
	if (r->ts[c].end < s)
		push(p, thread ? t : ORR_NONE, thread ? ORR_PATH_CPU : ORR_PATH_IDLE, r->ts[c].end,
		     s);
	*hi = r->ts[c].end < s ? r->ts[c].end : s;
	return c;
}

void orr_replay_critical_path(const struct orr_replay *r, int64_t start_ns, int64_t end_ns,
			      struct orr_path_seg **ret_segs, size_t *ret_n)
{
	const struct orr_graph *g = r->g;
	struct path p = { .from = start_ns };
	uint32_t cur = last_task(r, start_ns, end_ns);
	int64_t hi = end_ns;

	if (cur != ORR_NONE) {
		push(&p, ORR_NONE, ORR_PATH_IDLE, r->ts[cur].end, end_ns);
	} else if (end_ns > start_ns) {
		/* Nothing ends in the window: a task runs across it, or nothing does. */
		uint32_t t = spanning_task(r, start_ns, end_ns);

		push(&p, t, t == ORR_NONE ? ORR_PATH_IDLE : category(g, t), start_ns, end_ns);
	}
	/* Each step moves hi back or leaves it where a new task takes over: bounded. */
	for (size_t steps = 0;
	     cur != ORR_NONE && hi > start_ns && steps <= 4 * orr_graph_task_count(g); steps++) {
		bool binds_end;
		uint32_t c = orr_replay_cause(r, cur, &binds_end);
		int64_t e = r->ts[cur].end < hi ? r->ts[cur].end : hi;

		/* Entered mid-task (a kernel starts while its call runs): only its start matters. */
		binds_end = binds_end && r->ts[cur].end <= hi;
		if (binds_end && same_group(g, cur, c)) {
			/* Held by a late peer: the transfer after its arrival, then the peer. */
			p.via = ORR_DEP_CROSS_RANK;
			push(&p, cur, ORR_PATH_COMM, r->ts[c].start, e);
			hi = r->ts[c].start < e ? r->ts[c].start : e;
			p.via = start_via(g, start_cause(r, c), c);
			cur = before_start(r, &p, c, &hi);
		} else if (binds_end) {
			p.via = ORR_DEP_SYNC;
			push(&p, cur, category(g, cur), r->ts[c].end, e);
			hi = r->ts[c].end < e ? r->ts[c].end : e;
			cur = c;
		} else {
			p.via = start_via(g, start_cause(r, cur), cur);
			push(&p, cur, category(g, cur), r->ts[cur].start, e);
			hi = r->ts[cur].start < e ? r->ts[cur].start : e;
			cur = before_start(r, &p, cur, &hi);
		}
	}
	/* Segments were found backwards. */
	for (size_t i = 0; i < p.n / 2; i++) {
		struct orr_path_seg tmp = p.v[i];

		p.v[i] = p.v[p.n - 1 - i];
		p.v[p.n - 1 - i] = tmp;
	}
	*ret_segs = p.v;
	*ret_n = p.n;
}

const char *orr_path_cat_name(enum orr_path_cat cat)
{
	static const char *const names[ORR_PATH_CAT_COUNT] = {
		[ORR_PATH_COMPUTE] = "compute", [ORR_PATH_COMM] = "communication",
		[ORR_PATH_LAUNCH] = "launch",   [ORR_PATH_CPU] = "cpu",
		[ORR_PATH_IDLE] = "idle",
	};

	return cat < ORR_PATH_CAT_COUNT ? names[cat] : "?";
}
