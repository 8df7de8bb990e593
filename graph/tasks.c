/* SPDX-License-Identifier: MIT */
/*
 * A rank's processors and tasks.  Calls nested in a call of the same thread (a driver
 * call inside a runtime call) fold into it: they are part of its measured time, and
 * their correlation ids point to it.  Consecutive cudaEventQuery calls of a thread
 * fold into one polling task; sync.c decides what it waits for.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* A task being found: the event it starts with, and the folded run's extent. */
struct item {
	uint32_t ev, place, last_ev;
	uint32_t npolls;
	int64_t end_ns;
	int64_t poll_lo; /* start of the next-to-last poll */
};

struct fold {
	int64_t corr;
	uint32_t item;
};

struct scan {
	struct item *items;
	size_t nitems, cap_items;
	struct fold *folds;
	size_t nfolds, cap_folds;
	uint32_t *cur; /* per place: its current top-level item, or ORR_NONE */
	uint64_t nested;
};

static bool is_call(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER;
}

static bool is_gpu(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET;
}

static void push_fold(struct scan *s, uint32_t it, const struct orr_event *e)
{
	if (e->correlation >= 0)
		ORR_VEC_PUSH(s->folds, s->nfolds, s->cap_folds,
			     ((struct fold){ e->correlation, it }));
}

static bool continues_poll(const struct scan *s, const struct orr_rank *r, uint32_t it,
			   const struct orr_event *e)
{
	const struct orr_event *head = &r->events[s->items[it].ev];

	return is_call(e) && e->sub == ORR_CALL_EVENT_QUERY && is_call(head) &&
	       head->sub == ORR_CALL_EVENT_QUERY;
}

static void scan_event(struct scan *s, const struct orr_rank *r, uint32_t ev)
{
	const struct orr_event *e = &r->events[ev];
	const struct orr_place *pl = &r->places[e->place];
	uint32_t it = s->cur[e->place];

	if (is_call(e) && pl->kind == ORR_PLACE_THREAD) {
		if (it != ORR_NONE && e->start_ns < s->items[it].end_ns) {
			push_fold(s, it, e); /* nested */
			s->nested++;
			return;
		}
		if (it != ORR_NONE && continues_poll(s, r, it, e)) {
			struct item *p = &s->items[it];

			p->poll_lo = r->events[p->last_ev].start_ns;
			p->npolls++;
			p->end_ns = e->start_ns + e->dur_ns;
			p->last_ev = ev;
			push_fold(s, it, e);
			return;
		}
	} else if (!is_gpu(e) || pl->kind != ORR_PLACE_STREAM) {
		return;
	}
	ORR_VEC_PUSH(s->items, s->nitems, s->cap_items,
		     ((struct item){ .ev = ev,
				     .place = e->place,
				     .last_ev = ev,
				     .npolls = 1,
				     .end_ns = e->start_ns + e->dur_ns,
				     .poll_lo = -1 }));
	if (is_call(e))
		s->cur[e->place] = (uint32_t)(s->nitems - 1);
}

/* Lays items out by place (stable), creating one proc per place that has tasks. */
static uint32_t *lay_out(struct orr__rank_ctx *c, const struct scan *s)
{
	struct orr_graph *g = c->g;
	const struct orr_rank *r = c->r;
	uint32_t *next = orr_xcalloc(r->nplaces + 1, sizeof(*next));
	uint32_t *item_task = orr_xmalloc((s->nitems + 1) * sizeof(*item_task));
	uint32_t pos = c->base;

	for (size_t i = 0; i < s->nitems; i++)
		next[s->items[i].place]++;
	c->first_proc = (uint32_t)g->nprocs;
	for (size_t p = 0; p < r->nplaces; p++) {
		uint32_t n = next[p];

		c->place_proc[p] = ORR_NONE;
		next[p] = pos;
		if (!n)
			continue;
		c->place_proc[p] = (uint32_t)g->nprocs;
		ORR_VEC_PUSH(g->procs, g->nprocs, g->cap_procs,
			     ((struct orr_proc){
				     .rank = c->rank,
				     .place = (uint32_t)p,
				     .first_task = pos,
				     .ntasks = n,
				     .kind = r->places[p].kind == ORR_PLACE_THREAD ? ORR_TASK_CPU
										   : ORR_TASK_GPU,
			     }));
		pos += n;
	}
	for (size_t i = 0; i < s->nitems; i++)
		item_task[i] = next[s->items[i].place]++;
	free(next);
	return item_task;
}

static void fill_task(struct orr__rank_ctx *c, const struct item *it, uint32_t t)
{
	const struct orr_event *e = &c->r->events[it->ev];
	struct orr_task *task = &c->g->tasks[t];
	uint32_t l = ORR__LOCAL(c, t);

	*task = (struct orr_task){
		.dur_ns = it->end_ns - e->start_ns,
		.event = it->ev,
		.proc = c->place_proc[it->place],
		.aux = ORR_NONE,
		.kind = c->r->places[it->place].kind == ORR_PLACE_THREAD ? ORR_TASK_CPU
									 : ORR_TASK_GPU,
		.flags = it->npolls > 1 ? ORR_TASK_F_POLL : 0,
	};
	if (task->kind == ORR_TASK_GPU && e->coll != ORR_NONE)
		task->flags |= ORR_TASK_F_COMM;
	c->end[l] = it->end_ns;
	c->poll_lo[l] = it->npolls > 1 ? it->poll_lo : -1;
	c->last_ev[l] = it->last_ev;
	c->launcher[l] = ORR_NONE;
	c->lstart[l] = e->start_ns;
	if (it->npolls > 1)
		c->g->stats.polls++;
}

/*
 * The gap of each thread's first call: the time since the start of the step annotation
 * on its own thread that encloses the call, if one does.  The framework's step began
 * there on that thread, and what the thread did until its first call is the
 * framework's work, as between two calls; before it, or without such an annotation,
 * the thread had not started its work in the window (a thread waiting for work, a
 * watchdog's timer, another rank's step still running) and its first call is its start.
 */
static void set_first_gaps(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	const struct orr_rank *r = c->r;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		uint32_t p = c->place_proc[e->place];
		int64_t first, gap;

		if ((e->kind != ORR_EVENT_ANNOTATION && e->kind != ORR_EVENT_OP) || p == ORR_NONE ||
		    g->procs[p].kind != ORR_TASK_CPU)
			continue;
		first = ORR__START(c, g->procs[p].first_task);
		gap = first - e->start_ns;
		if (gap <= 0 || first >= e->start_ns + e->dur_ns ||
		    orr_step_number(orr_trace_str(g->trace, e->name)) < 0)
			continue;
		if (!g->tasks[g->procs[p].first_task].gap_ns ||
		    gap < g->tasks[g->procs[p].first_task].gap_ns)
			g->tasks[g->procs[p].first_task].gap_ns = gap;
	}
}

/* CPU gaps: the measured time since the thread's previous task ended. */
static void set_cpu_gaps(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;

	for (size_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];

		g->procs[p].first_start_ns = ORR__START(c, pr->first_task);
		if (pr->kind != ORR_TASK_CPU)
			continue;
		for (uint32_t t = pr->first_task + 1; t < pr->first_task + pr->ntasks; t++) {
			int64_t gap = ORR__START(c, t) - ORR__END(c, t - 1);

			g->tasks[t].gap_ns = gap > 0 ? gap : 0;
		}
	}
}

static void map_correlations(struct orr__rank_ctx *c, const struct scan *s,
			     const uint32_t *item_task)
{
	struct orr__corr_map *m = &c->corrs;
	size_t n = 0;

	m->v = orr_xmalloc((s->nitems + s->nfolds + 1) * sizeof(*m->v));
	for (size_t i = 0; i < s->nitems; i++) {
		const struct orr_event *e = &c->r->events[s->items[i].ev];

		if (is_call(e) && e->correlation >= 0)
			m->v[n++] = (struct orr__corr){ e->correlation, item_task[i] };
	}
	for (size_t i = 0; i < s->nfolds; i++)
		m->v[n++] = (struct orr__corr){ s->folds[i].corr, item_task[s->folds[i].item] };
	m->n = n;
	orr__corr_map_index(m);
}

void orr__collect_tasks(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	struct scan s = { 0 };
	uint32_t *item_task;

	s.cur = orr_xmalloc((c->r->nplaces + 1) * sizeof(*s.cur));
	/* At most an item an event: made once, not grown and copied as it fills (only the
	 * pages filled are touched). */
	s.cap_items = c->r->nevents + 1;
	s.items = orr_xmalloc(s.cap_items * sizeof(*s.items));
	for (size_t p = 0; p < c->r->nplaces; p++)
		s.cur[p] = ORR_NONE;
	for (size_t i = 0; i < c->r->nevents; i++)
		scan_event(&s, c->r, (uint32_t)i);
	g->stats.folded_calls += s.nested;

	c->base = (uint32_t)g->ntasks;
	c->ntasks = (uint32_t)s.nitems;
	g->tasks = orr_xgrow(g->tasks, sizeof(*g->tasks), &g->cap_tasks, g->ntasks + s.nitems + 1);
	g->ntasks += s.nitems;
	c->place_proc = orr_xmalloc((c->r->nplaces + 1) * sizeof(*c->place_proc));
	c->end = orr_xmalloc((s.nitems + 1) * sizeof(*c->end));
	c->poll_lo = orr_xmalloc((s.nitems + 1) * sizeof(*c->poll_lo));
	c->lstart = orr_xmalloc((s.nitems + 1) * sizeof(*c->lstart));
	c->last_ev = orr_xmalloc((s.nitems + 1) * sizeof(*c->last_ev));
	c->launcher = orr_xmalloc((s.nitems + 1) * sizeof(*c->launcher));

	item_task = lay_out(c, &s);
	for (size_t i = 0; i < s.nitems; i++)
		fill_task(c, &s.items[i], item_task[i]);
	set_cpu_gaps(c);
	set_first_gaps(c);
	map_correlations(c, &s, item_task);
	free(item_task);
	free(s.items);
	free(s.folds);
	free(s.cur);
}
