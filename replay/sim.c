/* SPDX-License-Identifier: MIT */
/*
 * The discrete-event simulation.  Each processor offers its next task; a task whose
 * dependencies are all done goes into a heap keyed by (start time, processor), so
 * tasks start in time order and ties break by processor index.  A task with an
 * unfinished dependency, a blocking call waiting for GPU work and a collective
 * member waiting for the other members park on the task they wait for and are woken
 * when it ends.  Popping in time order is what resolves D5: when a synchronize runs
 * at time t, every launch that started before t has run, so the work it waits for is
 * exactly the work launched so far.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

enum { ST_PENDING, ST_BLOCKED, ST_QUEUED, ST_WAITING, ST_DONE };

struct heap_item {
	int64_t t;
	uint32_t proc;
};

struct sim {
	const struct orr_graph *g;
	const struct orr_task *tasks;
	const struct orr_proc *procs;
	const struct orr_dep *deps;
	const struct orr_wait *waits;
	const struct orr_group *groups;
	const uint32_t *members;
	int64_t *start, *end;
	uint32_t *cause;
	uint8_t *state;
	uint32_t *wait_head, *wait_next; /* who waits for a task's end */
	uint32_t *head;                  /* per proc: its next task */
	uint32_t *launched;              /* per stream proc: tasks before it have been launched */
	uint32_t *launcher;              /* per GPU task: the call that launched it */
	uint32_t *snapshot;              /* per wait: the task a record recorded */
	uint32_t *arrived, *last;        /* per group: members arrived, the last to arrive */
	float *scale;                    /* per task, or NULL */
	struct heap_item *heap;
	size_t nheap, ndone;
};

/* ---- heap ---- */

static bool before(const struct heap_item *a, const struct heap_item *b)
{
	return a->t < b->t || (a->t == b->t && a->proc < b->proc);
}

static void heap_push(struct sim *s, int64_t t, uint32_t proc)
{
	size_t i = s->nheap++;

	s->heap[i] = (struct heap_item){ t, proc };
	while (i && before(&s->heap[i], &s->heap[(i - 1) / 2])) {
		struct heap_item tmp = s->heap[i];

		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct heap_item heap_pop(struct sim *s)
{
	struct heap_item top = s->heap[0], x = s->heap[--s->nheap];
	size_t i = 0, n = s->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!before(&s->heap[c], &x))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n)
		s->heap[i] = x;
	return top;
}

/* ---- tasks ---- */

static int64_t duration(const struct sim *s, uint32_t t)
{
	int64_t d = s->tasks[t].dur_ns;

	return s->scale ? (int64_t)llround((double)d * s->scale[t]) : d;
}

static bool popped(const struct sim *s, uint32_t t)
{
	return s->state[t] >= ST_WAITING;
}

static void park(struct sim *s, uint32_t on, uint32_t t)
{
	s->wait_next[t] = s->wait_head[on];
	s->wait_head[on] = t;
}

/* Offers proc p's next task: queued when its dependencies are done, else parked. */
static void offer(struct sim *s, uint32_t p)
{
	const struct orr_proc *pr = &s->procs[p];
	uint32_t t = s->head[p], c = ORR_NONE;
	const struct orr_task *task = &s->tasks[t];
	int64_t t0 = INT64_MIN;

	if (t >= pr->first_task + pr->ntasks)
		return;
	/* The processor's next task is needed after many other processors' tasks ran. */
	__builtin_prefetch(&s->tasks[t + 3]);
	__builtin_prefetch(&s->state[t + 3]);
	if (t > pr->first_task) {
		t0 = s->end[t - 1] + task->gap_ns;
		c = t - 1;
	} else if (pr->kind == ORR_TASK_CPU || !task->ndeps) {
		t0 = pr->first_start_ns;
	}
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++) {
		uint32_t src = s->deps[d].src;
		bool launch = s->deps[d].kind == ORR_DEP_LAUNCH;
		int64_t at;

		if (launch ? !popped(s, src) : s->state[src] != ST_DONE) {
			s->state[t] = ST_BLOCKED;
			park(s, src, t);
			return;
		}
		at = (launch ? s->start[src] : s->end[src]) + s->deps[d].lat_ns;
		if (at > t0) {
			t0 = at;
			c = src;
		}
	}
	s->state[t] = ST_QUEUED;
	s->start[t] = t0;
	s->cause[t] = c;
	heap_push(s, t0, p);
}

static void resolve(struct sim *s, uint32_t t);

/* Wakes whoever waits for task t: to start (launches), or to end. */
static void wake(struct sim *s, uint32_t t)
{
	uint32_t w = s->wait_head[t];

	s->wait_head[t] = ORR_NONE;
	while (w != ORR_NONE) {
		uint32_t next = s->wait_next[w];

		if (s->state[w] == ST_BLOCKED)
			offer(s, s->tasks[w].proc);
		else if (s->state[w] == ST_WAITING)
			resolve(s, w);
		w = next;
	}
}

static void finish(struct sim *s, uint32_t t, int64_t end)
{
	s->end[t] = end;
	s->state[t] = ST_DONE;
	s->ndone++;
	s->head[s->tasks[t].proc] = t + 1;
	offer(s, s->tasks[t].proc);
	wake(s, t);
}

/* The last task of stream proc q launched by time `at` (ORR_NONE if none). */
static uint32_t launched_by(struct sim *s, uint32_t q, int64_t at)
{
	const struct orr_proc *pr = &s->procs[q];
	uint32_t k = s->launched[q], end = pr->first_task + pr->ntasks;

	while (k < end && (s->launcher[k] == ORR_NONE ? popped(s, k) : popped(s, s->launcher[k])))
		k++;
	s->launched[q] = k;
	while (k > pr->first_task && s->launcher[k - 1] != ORR_NONE &&
	       s->start[s->launcher[k - 1]] > at)
		k--;
	return k > pr->first_task ? k - 1 : ORR_NONE;
}

/*
 * The GPU task a blocking call waits for, once every candidate has ended; ORR_NONE
 * with *ret_parked set when the call had to park on one still running.
 */
static uint32_t awaited(struct sim *s, uint32_t t, bool *ret_parked)
{
	const struct orr_wait *w = &s->waits[s->tasks[t].aux];
	const struct orr_graph_rank *gr = orr_graph_get_rank(s->g, s->procs[s->tasks[t].proc].rank);
	const struct orr_rank *r = gr->rank;
	uint32_t a = ORR_NONE;

	*ret_parked = false;
	switch (w->kind) {
	case ORR_WAIT_STREAM:
		a = launched_by(s, w->target, s->start[t]);
		break;
	case ORR_WAIT_EVENT:
		a = s->snapshot[s->tasks[w->target].aux];
		break;
	case ORR_WAIT_TASK:
		a = w->target;
		break;
	case ORR_WAIT_DEVICE:
		for (uint32_t q = gr->first_proc; q < gr->first_proc + gr->nprocs; q++) {
			uint32_t b;

			if (s->procs[q].kind != ORR_TASK_GPU ||
			    r->places[s->procs[q].place].device != (int32_t)w->target)
				continue;
			b = launched_by(s, q, s->start[t]);
			if (b != ORR_NONE && s->state[b] != ST_DONE) {
				park(s, b, t);
				*ret_parked = true;
				return ORR_NONE;
			}
			if (b != ORR_NONE && (a == ORR_NONE || s->end[b] > s->end[a]))
				a = b;
		}
		return a;
	default:
		break;
	}
	if (a != ORR_NONE && s->state[a] != ST_DONE) {
		park(s, a, t);
		*ret_parked = true;
		return ORR_NONE;
	}
	return a;
}

/* A blocking call ends when it is done with its own work and the GPU is done. */
static void resolve(struct sim *s, uint32_t t)
{
	const struct orr_wait *w = &s->waits[s->tasks[t].aux];
	int64_t end = s->start[t] + s->tasks[t].dur_ns;
	bool parked;
	uint32_t a = awaited(s, t, &parked);

	if (parked)
		return;
	if (a != ORR_NONE && s->end[a] + w->ret_ns > end) {
		end = s->end[a] + w->ret_ns;
		s->cause[t] = a | ORR__CAUSE_ENDS;
	}
	finish(s, t, end);
}

/* A collective member: ends with the others, at the last arrival plus the transfer. */
static void arrive(struct sim *s, uint32_t t)
{
	uint32_t gi = s->tasks[t].aux;
	const struct orr_group *gr = &s->groups[gi];
	int64_t transfer = INT64_MAX, end;

	s->state[t] = ST_WAITING;
	if (s->last[gi] == ORR_NONE || s->start[t] >= s->start[s->last[gi]])
		s->last[gi] = t;
	if (++s->arrived[gi] < gr->n)
		return;
	for (uint32_t i = 0; i < gr->n; i++) {
		int64_t d = duration(s, s->members[gr->first + i]);

		transfer = d < transfer ? d : transfer;
	}
	end = s->start[s->last[gi]] + transfer;
	for (uint32_t i = 0; i < gr->n; i++) {
		uint32_t m = s->members[gr->first + i];

		if (m != s->last[gi])
			s->cause[m] = s->last[gi] | ORR__CAUSE_ENDS;
		finish(s, m, end);
	}
}

static void run_task(struct sim *s, uint32_t t)
{
	const struct orr_task *task = &s->tasks[t];

	if (task->kind == ORR_TASK_GPU) {
		if (task->aux != ORR_NONE)
			arrive(s, t);
		else
			finish(s, t, s->start[t] + duration(s, t));
		return;
	}
	if (task->aux == ORR_NONE) {
		finish(s, t, s->start[t] + task->dur_ns);
	} else if (s->waits[task->aux].kind == ORR_WAIT_RECORD) {
		s->snapshot[task->aux] = launched_by(s, s->waits[task->aux].target, s->start[t]);
		finish(s, t, s->start[t] + task->dur_ns);
	} else {
		/* Started: what it launched may run while it waits. */
		s->state[t] = ST_WAITING;
		wake(s, t);
		resolve(s, t);
	}
}

/* ---- set-up ---- */

struct factor {
	uint32_t name;
	float factor;
};

static float name_factor(const struct orr_graph *g, const struct orr_replay_options *o,
			 uint32_t name)
{
	const char *s = orr_trace_str(orr_graph_trace(g), name);
	double f = 1;

	for (size_t i = 0; i < o->nscales; i++)
		if (fnmatch(o->scales[i].glob, s, 0) == 0)
			f *= o->scales[i].factor;
	return (float)f;
}

/* Per GPU task, the product of the factors whose glob matches its name (cached by name). */
static float *scales(const struct orr_graph *g, const struct orr_replay_options *o)
{
	size_t n = orr_graph_task_count(g), cap = 1024, used = 0;
	struct factor *tab = orr_xmalloc(cap * sizeof(*tab));
	float *f = orr_xmalloc((n + 1) * sizeof(*f));

	for (size_t i = 0; i < cap; i++)
		tab[i].name = ORR_NONE;
	for (size_t t = 0; t < n; t++) {
		uint32_t name = orr_graph_task_event(g, (uint32_t)t)->name;
		size_t h = (name * 2654435761u) & (cap - 1);

		f[t] = 1;
		if (orr_graph_tasks(g)[t].kind != ORR_TASK_GPU)
			continue;
		while (tab[h].name != ORR_NONE && tab[h].name != name)
			h = (h + 1) & (cap - 1);
		if (tab[h].name == ORR_NONE) {
			tab[h] = (struct factor){ name, name_factor(g, o, name) };
			if (++used * 2 > cap) {
				/* Start over with a larger table; the factors are recomputed once. */
				free(tab);
				cap *= 4;
				tab = orr_xmalloc(cap * sizeof(*tab));
				for (size_t i = 0; i < cap; i++)
					tab[i].name = ORR_NONE;
				used = 0;
				t = (size_t)-1;
				continue;
			}
		}
		f[t] = tab[h].factor;
	}
	free(tab);
	return f;
}

static void init_launchers(struct sim *s, size_t n)
{
	for (size_t t = 0; t < n; t++) {
		const struct orr_task *task = &s->tasks[t];

		s->launcher[t] = ORR_NONE;
		for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
			if (s->deps[d].kind == ORR_DEP_LAUNCH)
				s->launcher[t] = s->deps[d].src;
	}
}

static void sim_init(struct sim *s, struct orr_replay *r, const struct orr_replay_options *o)
{
	const struct orr_graph *g = r->g;
	size_t n = orr_graph_task_count(g), np = orr_graph_proc_count(g);
	size_t nw = 0, ng = orr_graph_group_count(g);
	struct orr_graph_stats st;

	orr_graph_get_stats(g, &st);
	for (size_t k = 0; k < ORR_WAIT_KIND_COUNT; k++)
		nw += st.waits[k];
	*s = (struct sim){
		.g = g,
		.tasks = orr_graph_tasks(g),
		.procs = orr_graph_procs(g),
		.deps = orr_graph_deps(g),
		.waits = orr_graph_waits(g),
		.groups = orr_graph_groups(g),
		.members = orr_graph_members(g),
		.start = r->start,
		.end = r->end,
		.cause = r->cause,
		.state = orr_xcalloc(n + 1, 1),
		.wait_head = orr_xmalloc((n + 1) * sizeof(uint32_t)),
		.wait_next = orr_xmalloc((n + 1) * sizeof(uint32_t)),
		.head = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.launched = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.launcher = orr_xmalloc((n + 1) * sizeof(uint32_t)),
		.snapshot = orr_xmalloc((nw + 1) * sizeof(uint32_t)),
		.arrived = orr_xcalloc(ng + 1, sizeof(uint32_t)),
		.last = orr_xmalloc((ng + 1) * sizeof(uint32_t)),
		.scale = o && o->nscales ? scales(g, o) : NULL,
		.heap = orr_xmalloc((np + 1) * sizeof(struct heap_item)),
	};
	memset(s->wait_head, 0xff, (n + 1) * sizeof(uint32_t));
	memset(s->snapshot, 0xff, (nw + 1) * sizeof(uint32_t));
	memset(s->last, 0xff, (ng + 1) * sizeof(uint32_t));
	for (size_t p = 0; p < np; p++)
		s->head[p] = s->launched[p] = s->procs[p].first_task;
	init_launchers(s, n);
}

static void sim_release(struct sim *s)
{
	free(s->state);
	free(s->wait_head);
	free(s->wait_next);
	free(s->head);
	free(s->launched);
	free(s->launcher);
	free(s->snapshot);
	free(s->arrived);
	free(s->last);
	free(s->scale);
	free(s->heap);
}

static int stuck(struct sim *s, size_t n, struct orr_diag *reterr_diag)
{
	bool *done = orr_xmalloc((n + 1) * sizeof(*done));
	int err;

	for (size_t t = 0; t < n; t++)
		done[t] = s->state[t] == ST_DONE;
	err = orr_graph_explain_stuck(s->g, done, reterr_diag);
	free(done);
	return err;
}

int orr__simulate(struct orr_replay *r, const struct orr_replay_options *opts,
		  struct orr_diag *reterr_diag)
{
	struct sim s;
	size_t n = orr_graph_task_count(r->g), np = orr_graph_proc_count(r->g);
	int err = 0;

	sim_init(&s, r, opts);
	for (uint32_t p = 0; p < np; p++)
		offer(&s, p);
	while (s.nheap) {
		struct heap_item it = heap_pop(&s);

		run_task(&s, s.head[it.proc]);
	}
	if (s.ndone < n)
		err = stuck(&s, n, reterr_diag);
	orr_debug("replay", "%zu of %zu tasks replayed", s.ndone, n);
	sim_release(&s);
	return err;
}
