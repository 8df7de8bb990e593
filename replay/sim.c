/* SPDX-License-Identifier: MIT */
/*
 * The discrete-event simulation.  Each processor offers its next task; a task whose
 * dependencies are all done goes into its rank's heap keyed by (start time,
 * processor), so a rank's tasks start in time order and ties break by processor
 * index.  Ranks run one at a time, each as far as no other rank can reach back into
 * it (run_rank()).  A task with an
 * unfinished dependency, a blocking call waiting for GPU work and a collective
 * member waiting for the other members park on the task they wait for and are woken
 * when it ends.  Popping in time order is what resolves D5: when a synchronize runs
 * at time t, every launch that started before t has run, so the work it waits for is
 * exactly the work launched so far.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sim-heap.h"
#include "banned.h"

/* Tasks between two calls of the progress callback, at least. */
#define PROGRESS_TASKS (1u << 20)

enum { ST_PENDING, ST_BLOCKED, ST_QUEUED, ST_WAITING, ST_DONE };

struct sim {
	const struct orr_graph *g;
	const struct orr_task *tasks;
	const struct orr_proc *procs;
	const struct orr_dep *deps;
	const struct orr_wait *waits;
	const struct orr_group *groups;
	const uint32_t *members;
	struct orr__tstate *ts;
	uint32_t *head;           /* per proc: its next task */
	uint32_t *wait_next;      /* per proc: the task parked after its next one */
	uint32_t *launched;       /* per stream proc: tasks before it have been launched */
	uint32_t *snapshot;       /* per wait: the task a record recorded */
	uint32_t *arrived, *last; /* per group: members arrived, the last to arrive */
	float *scale;             /* per task, or NULL */
	struct heap_item *heap;   /* one heap per rank: heap[hbase[r] .. hbase[r] + hn[r]) */
	size_t *hbase, *hn;
	int64_t *lb;       /* per proc: the earliest its waiting collective member can end */
	uint32_t *lbheap;  /* per rank, laid out as heap: procs with a finite lb, min first */
	uint32_t *lbpos;   /* per proc: its index in its rank's lbheap, or ORR_NONE */
	size_t *lbn;       /* per rank: procs in lbheap */
	int64_t *transfer; /* per group: the smallest member duration */
	size_t ndone;
	/* Which ranks to run (orr__simulate()): those changed since they last ran. */
	uint32_t running; /* the rank run_rank() runs, or ORR_NONE */
	uint32_t stale;   /* the proc atop running's heap whose task runs now, or ORR_NONE */
	uint32_t *round;  /* ranks after `running` to run in this round, min first */
	size_t nround;
	uint32_t *later; /* ranks to run in the next round */
	size_t nlater;
	uint8_t *queued;        /* per rank: in round[] or later[] */
	struct heap_item *tops; /* the heads of the ranks' heaps, some stale, earliest first */
	size_t ntops, cap_tops;
	/* Per stream proc q, of its tasks before stacked[q], those launched later than every
	 * one after them: stk[first_task(q) .. + depth[q]) (launched_by()); made when first
	 * needed. */
	uint32_t *stk, *depth, *stacked;
	/* The same graph replayed unchanged (orr_replay_options.baseline), or NULL. */
	const struct orr_replay *base;
};

/* ---- the ranks' heaps (sim-heap.h) ---- */

/*
 * Rank r changed (a task queued, a collective member's lb set): it runs again, in this
 * round if it comes after the running rank, else in the next, as when every round ran
 * every rank in order.  Only the changed ranks run: a round over all of them, for a
 * chain of collectives that frees one rank per round, made 20,000 ranks quadratic.
 */
static void touch(struct sim *s, uint32_t r)
{
	if (r == s->running || s->queued[r])
		return;
	s->queued[r] = 1;
	if (s->running != ORR_NONE && r > s->running)
		ranks_push(s->round, &s->nround, r);
	else
		s->later[s->nlater++] = r;
}

/* Queues proc (of rank r) to start at t. */
static void heap_push(struct sim *s, uint32_t r, int64_t t, uint32_t proc)
{
	struct heap_item *h = &s->heap[s->hbase[r]], x = { t, proc };

	if (s->stale != ORR_NONE && r == s->running) {
		/* The item that ran leaves first (run_rank()); when it is this proc's, its next
		 * task takes its place, one sift for a pop and a push.  The heap's items, not
		 * its layout, decide what pops next: no two are of one proc. */
		bool same = s->stale == proc;

		s->stale = ORR_NONE;
		if (same) {
			items_sift(h, s->hn[r], x);
			return;
		}
		items_pop(h, &s->hn[r]);
	}
	items_push(h, &s->hn[r], x);
	if (r != s->running) /* touch() has nothing to do for the running rank, most pushes */
		touch(s, r);
}

static struct heap_item heap_pop(struct sim *s, uint32_t r)
{
	return items_pop(&s->heap[s->hbase[r]], &s->hn[r]);
}

/*
 * ---- the smallest lb of each rank ----
 * Asked before every task a rank runs: a scan of the rank's processors made a rank of
 * 200,000 threads quadratic.  Few processors wait in a collective at once; an indexed
 * heap keeps their minimum.
 */

static void lb_swap(struct sim *s, uint32_t *h, size_t i, size_t j)
{
	uint32_t tmp = h[i];

	h[i] = h[j];
	h[j] = tmp;
	s->lbpos[h[i]] = (uint32_t)i;
	s->lbpos[h[j]] = (uint32_t)j;
}

static void lb_sift(struct sim *s, uint32_t *h, size_t n, size_t i)
{
	while (i && s->lb[h[i]] < s->lb[h[(i - 1) / 2]]) {
		lb_swap(s, h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && s->lb[h[c + 1]] < s->lb[h[c]])
			c++;
		if (s->lb[h[c]] >= s->lb[h[i]])
			break;
		lb_swap(s, h, i, c);
		i = c;
	}
}

/* lb[p] = v; INT64_MAX takes p out of its rank's heap. */
static void lb_set(struct sim *s, uint32_t p, int64_t v)
{
	uint32_t r = s->procs[p].rank, i = s->lbpos[p];
	uint32_t *h = &s->lbheap[s->hbase[r]];

	touch(s, r);
	s->lb[p] = v;
	if (v == INT64_MAX) {
		if (i == ORR_NONE)
			return;
		s->lbpos[p] = ORR_NONE;
		if (i == --s->lbn[r])
			return;
		h[i] = h[s->lbn[r]];
		s->lbpos[h[i]] = i;
		lb_sift(s, h, s->lbn[r], i);
		return;
	}
	if (i == ORR_NONE) {
		i = (uint32_t)s->lbn[r]++;
		h[i] = p;
		s->lbpos[p] = i;
	}
	lb_sift(s, h, s->lbn[r], i);
}

/* ---- tasks ---- */

static int64_t duration(const struct sim *s, uint32_t t)
{
	return s->scale ? orr__scaled(s->tasks[t].dur_ns, s->scale[t]) : s->tasks[t].dur_ns;
}

/* The time before task t on its processor: a CPU task's scaled with it. */
static int64_t gap(const struct sim *s, uint32_t t)
{
	int64_t g = s->tasks[t].gap_ns;

	if (!s->scale || s->tasks[t].kind != ORR_TASK_CPU || g <= 0)
		return g;
	return (int64_t)llround((double)g * s->scale[t]);
}

static bool popped(const struct sim *s, uint32_t t)
{
	return s->ts[t].state >= ST_WAITING;
}

/* Parks t, its processor's next task, on task `on`, not done. */
static void park(struct sim *s, uint32_t on, uint32_t t)
{
	s->wait_next[s->tasks[t].proc] = s->ts[on].wait_head;
	s->ts[on].wait_head = t;
}

/*
 * Whether a thread's first call was handed its work by another thread (D6,
 * graph/threads.c: PyTorch's autograd thread waits on its ready queue until the main
 * thread's backward() fills it).
 */
static bool handed_off(const struct sim *s, const struct orr_task *task)
{
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		if (s->deps[d].kind == ORR_DEP_CROSS_THREAD)
			return true;
	return false;
}

/*
 * A handed-off first call t, against the baseline: it starts when it did there, moved
 * by as much as the end of src, the task that handed it its work, moved (a what-if
 * that ends the forward pass earlier starts the backward earlier); at the least at
 * `at`, that task's end and the hand-off's latency.
 */
static int64_t handoff_start(const struct sim *s, uint32_t t, uint32_t src, int64_t at)
{
	int64_t moved = orr_time_add(orr_replay_start(s->base, t),
				     orr_time_sub(s->ts[src].end, orr_replay_end(s->base, src)));

	return moved > at ? moved : at;
}

/* Offers proc p's next task: queued when its dependencies are done, else parked. */
static void offer(struct sim *s, uint32_t p)
{
	const struct orr_proc *pr = &s->procs[p];
	uint32_t t = s->head[p], c = ORR_NONE;
	uint16_t via = ORR__START_ORDER;
	const struct orr_task *task = &s->tasks[t];
	int64_t t0 = INT64_MIN;
	bool handoff = false;

	if (t >= pr->first_task + pr->ntasks)
		return;
	/* The processor's next task is needed after many other processors' tasks ran. */
	__builtin_prefetch(&s->tasks[t + 3]);
	__builtin_prefetch(&s->ts[t + 3]);
	if (t > pr->first_task) {
		t0 = s->ts[t - 1].end + gap(s, t);
		c = t - 1;
	} else if (pr->kind == ORR_TASK_CPU) {
		/* A thread's first call: its start, or its step's framework work after the
		 * step's start (its gap, graph/tasks.c), scaled as any gap; against a
		 * baseline, a thread handed its work moves with its hand-off. */
		handoff = s->base && handed_off(s, task);
		if (!handoff)
			t0 = pr->first_start_ns - task->gap_ns + gap(s, t);
	} else if (!task->ndeps || s->deps[task->first_dep].kind != ORR_DEP_LAUNCH) {
		/* A stream's first task launched before the capture began: as measured. */
		t0 = pr->first_start_ns;
	}
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++) {
		uint32_t src = s->deps[d].src;
		bool launch = s->deps[d].kind == ORR_DEP_LAUNCH;
		int64_t at;

		if (launch ? !popped(s, src) : s->ts[src].state != ST_DONE) {
			s->ts[t].state = ST_BLOCKED;
			park(s, src, t);
			return;
		}
		at = (launch ? s->ts[src].start : s->ts[src].end) + s->deps[d].lat_ns;
		if (handoff && s->deps[d].kind == ORR_DEP_CROSS_THREAD)
			at = handoff_start(s, t, src, at);
		/* A hand-off that ties with its thread's anchor is the cause: the call
		 * waited for the other thread (the edge's latency is the measured gap, so
		 * as replayed they often coincide; the anchor would count that thread's
		 * work as this one's start). */
		if (at > t0 ||
		    (at == t0 && c == ORR_NONE && s->deps[d].kind == ORR_DEP_CROSS_THREAD)) {
			t0 = at;
			c = src;
			via = orr__start_dep(d - task->first_dep);
		}
	}
	s->ts[t].state = ST_QUEUED;
	s->ts[t].start = t0;
	s->ts[t].cause = c;
	s->ts[t].start_dep = via;
	heap_push(s, pr->rank, t0, p);
}

static void resolve(struct sim *s, uint32_t t);

/* Wakes the tasks parked from w on (wake(), finish()). */
static void wake_list(struct sim *s, uint32_t w)
{
	while (w != ORR_NONE) {
		uint32_t next = s->wait_next[s->tasks[w].proc];

		if (s->ts[w].state == ST_BLOCKED)
			offer(s, s->tasks[w].proc);
		else if (s->ts[w].state == ST_WAITING)
			resolve(s, w);
		w = next;
	}
}

/* Wakes whoever waits for task t, started and not done, to start (launches). */
static void wake(struct sim *s, uint32_t t)
{
	uint32_t w = s->ts[t].wait_head;

	s->ts[t].wait_head = ORR_NONE;
	wake_list(s, w);
}

/* Task t ends at `end`; whoever waits for it wakes. */
static void finish(struct sim *s, uint32_t t, int64_t end)
{
	uint32_t w = s->ts[t].wait_head; /* end takes its place; none parks on t done */

	s->ts[t].end = end;
	s->ts[t].state = ST_DONE;
	s->ndone++;
	s->head[s->tasks[t].proc] = t + 1;
	offer(s, s->tasks[t].proc);
	wake_list(s, w);
}

/* The call that launched GPU task t (its D2 edge comes first), or ORR_NONE. */
static uint32_t launcher(const struct sim *s, uint32_t t)
{
	const struct orr_task *task = &s->tasks[t];

	return task->ndeps && s->deps[task->first_dep].kind == ORR_DEP_LAUNCH
		       ? s->deps[task->first_dep].src
		       : ORR_NONE;
}

/* When GPU task t was launched: its launcher's start; INT64_MIN without a launcher. */
static int64_t launch_time(const struct sim *s, uint32_t t)
{
	uint32_t l = launcher(s, t);

	return l == ORR_NONE ? INT64_MIN : s->ts[l].start;
}

/* How far launched_by() walks back before it searches q's stack instead. */
#define WALK_BACK 16

/*
 * The last task of stream proc q launched by time `at` (ORR_NONE if none): of the
 * stream's launched tasks (a prefix of it), the last one without a launcher or whose
 * launcher started by `at`.  Usually one of the last few.  Else it is on q's stack,
 * which keeps each launched task until a later one was launched as early (a later one
 * launched by `at` would be the answer instead), so launch times increase up the stack
 * and a binary search finds it.  A walk back over every task launched since `at` made
 * many long waits on a stream fed by another thread quadratic.
 */
static uint32_t launched_by(struct sim *s, uint32_t q, int64_t at)
{
	const struct orr_proc *pr = &s->procs[q];
	uint32_t k = s->launched[q], end = pr->first_task + pr->ntasks, *stk, lo = 0, hi, j;

	while (k < end && (launcher(s, k) == ORR_NONE ? popped(s, k) : popped(s, launcher(s, k))))
		k++;
	s->launched[q] = j = k;
	while (j > pr->first_task && k - j <= WALK_BACK)
		if (launch_time(s, --j) <= at)
			return j;
	if (j == pr->first_task)
		return ORR_NONE;
	if (!s->stk)
		s->stk = orr_xmalloc((orr_graph_task_count(s->g) + 1) * sizeof(*s->stk));
	stk = &s->stk[pr->first_task];
	for (uint32_t x = pr->first_task + s->stacked[q]; x < k; x++) {
		while (s->depth[q] && launch_time(s, stk[s->depth[q] - 1]) >= launch_time(s, x))
			s->depth[q]--;
		stk[s->depth[q]++] = x;
	}
	s->stacked[q] = k - pr->first_task;
	for (hi = s->depth[q]; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (launch_time(s, stk[mid]) <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? stk[lo - 1] : ORR_NONE;
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
		a = launched_by(s, w->target, s->ts[t].start);
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
			b = launched_by(s, q, s->ts[t].start);
			if (b != ORR_NONE && s->ts[b].state != ST_DONE) {
				park(s, b, t);
				*ret_parked = true;
				return ORR_NONE;
			}
			if (b != ORR_NONE && (a == ORR_NONE || s->ts[b].end > s->ts[a].end))
				a = b;
		}
		return a;
	default:
		break;
	}
	if (a != ORR_NONE && s->ts[a].state != ST_DONE) {
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
	int64_t end = s->ts[t].start + duration(s, t);
	bool parked;
	uint32_t a = awaited(s, t, &parked);

	if (parked)
		return;
	if (a != ORR_NONE && s->ts[a].end + w->ret_ns > end) {
		end = s->ts[a].end + w->ret_ns;
		s->ts[t].cause = a | ORR__CAUSE_ENDS;
	}
	finish(s, t, end);
}

/* A collective member: ends with the others, at the last arrival plus the transfer. */
static void arrive(struct sim *s, uint32_t t)
{
	uint32_t gi = s->tasks[t].aux;
	const struct orr_group *gr = &s->groups[gi];
	int64_t end;

	s->ts[t].state = ST_WAITING;
	if (s->last[gi] == ORR_NONE || s->ts[t].start >= s->ts[s->last[gi]].start)
		s->last[gi] = t;
	if (++s->arrived[gi] < gr->n) {
		/* Whoever arrives later, the instance cannot end before this. */
		lb_set(s, s->tasks[t].proc, orr_time_add(s->ts[t].start, s->transfer[gi]));
		return;
	}
	end = s->ts[s->last[gi]].start + s->transfer[gi];
	for (uint32_t i = 0; i < gr->n; i++) {
		uint32_t m = s->members[gr->first + i];

		if (m != s->last[gi])
			s->ts[m].cause = s->last[gi] | ORR__CAUSE_ENDS;
		lb_set(s, s->tasks[m].proc, INT64_MAX);
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
			finish(s, t, s->ts[t].start + duration(s, t));
		return;
	}
	if (task->aux == ORR_NONE) {
		finish(s, t, s->ts[t].start + duration(s, t));
	} else if (s->waits[task->aux].kind == ORR_WAIT_RECORD) {
		s->snapshot[task->aux] = launched_by(s, s->waits[task->aux].target, s->ts[t].start);
		finish(s, t, s->ts[t].start + duration(s, t));
	} else {
		/* Started: what it launched may run while it waits. */
		s->ts[t].state = ST_WAITING;
		wake(s, t);
		resolve(s, t);
	}
}

/* ---- set-up ---- */

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
		.ts = r->ts,
		.head = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.wait_next = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.launched = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.depth = orr_xcalloc(np + 1, sizeof(uint32_t)),
		.stacked = orr_xcalloc(np + 1, sizeof(uint32_t)),
		.snapshot = orr_xmalloc((nw + 1) * sizeof(uint32_t)),
		.arrived = orr_xcalloc(ng + 1, sizeof(uint32_t)),
		.last = orr_xmalloc((ng + 1) * sizeof(uint32_t)),
		.scale = orr__replay_factors(g, o),
		.base = o && o->baseline && o->baseline->g == g ? o->baseline : NULL,
		.heap = orr_xmalloc((np + 1) * sizeof(struct heap_item)),
		.hbase = orr_xcalloc(orr_graph_rank_count(g) + 1, sizeof(size_t)),
		.hn = orr_xcalloc(orr_graph_rank_count(g) + 1, sizeof(size_t)),
		.lb = orr_xmalloc((np + 1) * sizeof(int64_t)),
		.lbheap = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.lbpos = orr_xmalloc((np + 1) * sizeof(uint32_t)),
		.lbn = orr_xcalloc(orr_graph_rank_count(g) + 1, sizeof(size_t)),
		.transfer = orr_xmalloc((ng + 1) * sizeof(int64_t)),
		.running = ORR_NONE,
		.stale = ORR_NONE,
		.round = orr_xmalloc((orr_graph_rank_count(g) + 1) * sizeof(uint32_t)),
		.later = orr_xmalloc((orr_graph_rank_count(g) + 1) * sizeof(uint32_t)),
		.queued = orr_xcalloc(orr_graph_rank_count(g) + 1, 1),
	};
	for (size_t t = 0; t < n; t++)
		s->ts[t] = (struct orr__tstate){ .wait_head = ORR_NONE, .state = ST_PENDING };
	memset(s->snapshot, 0xff, (nw + 1) * sizeof(uint32_t));
	memset(s->last, 0xff, (ng + 1) * sizeof(uint32_t));
	memset(s->lbpos, 0xff, (np + 1) * sizeof(uint32_t));
	for (size_t p = 0; p < np; p++) {
		s->head[p] = s->launched[p] = s->procs[p].first_task;
		s->lb[p] = INT64_MAX;
	}
	for (size_t i = 0; i < orr_graph_rank_count(g); i++)
		s->hbase[i] = orr_graph_get_rank(g, i)->first_proc;
	for (size_t gi = 0; gi < ng; gi++) {
		s->transfer[gi] = INT64_MAX;
		for (uint32_t i = 0; i < s->groups[gi].n; i++) {
			int64_t d = duration(s, s->members[s->groups[gi].first + i]);

			s->transfer[gi] = d < s->transfer[gi] ? d : s->transfer[gi];
		}
	}
}

static void sim_release(struct sim *s)
{
	free(s->head);
	free(s->wait_next);
	free(s->launched);
	free(s->stk);
	free(s->depth);
	free(s->stacked);
	free(s->snapshot);
	free(s->arrived);
	free(s->last);
	free(s->scale);
	free(s->heap);
	free(s->hbase);
	free(s->hn);
	free(s->lb);
	free(s->lbheap);
	free(s->lbpos);
	free(s->lbn);
	free(s->transfer);
	free(s->round);
	free(s->later);
	free(s->queued);
	free(s->tops);
}

/* Collective members a waiting member names, at most: enough to find a cycle. */
#define STUCK_MEMBERS 8

static void add_wait(struct orr_stuck_wait **w, size_t *n, size_t *cap, uint32_t task, uint32_t on,
		     uint8_t kind)
{
	ORR_VEC_PUSH(*w, *n, *cap, ((struct orr_stuck_wait){ task, on, kind }));
}

/* Why task t, parked on `on`, waits for it: the kind of its edge from `on`, or D5. */
static uint8_t parked_kind(const struct sim *s, uint32_t t, uint32_t on)
{
	const struct orr_task *task = &s->tasks[t];

	if (s->ts[t].state == ST_WAITING)
		return ORR_DEP_SYNC;
	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		if (s->deps[d].src == on)
			return s->deps[d].kind;
	return ORR_DEP_SYNC;
}

/*
 * What each task that never ran waits for, as the replay left it: a task after its
 * processor's next one, for the task before it; a parked task, for the task it is
 * parked on; a collective member that arrived, for members that did not.
 */
static size_t stuck_waits(const struct sim *s, size_t n, struct orr_stuck_wait **ret)
{
	size_t nw = 0, cap = 0;

	*ret = NULL;
	for (uint32_t t = 0; t < n; t++) {
		const struct orr_task *task = &s->tasks[t];

		if (s->ts[t].state == ST_DONE)
			continue;
		if (s->ts[t].state == ST_PENDING && t > s->procs[task->proc].first_task)
			add_wait(ret, &nw, &cap, t, t - 1,
				 task->kind == ORR_TASK_GPU ? ORR_DEP_STREAM : ORR_DEP_THREAD);
		for (uint32_t w = s->ts[t].wait_head; w != ORR_NONE;
		     w = s->wait_next[s->tasks[w].proc])
			add_wait(ret, &nw, &cap, w, t, parked_kind(s, w, t));
		if (s->ts[t].state == ST_WAITING && task->kind == ORR_TASK_GPU &&
		    task->aux != ORR_NONE) {
			const struct orr_group *gr = &s->groups[task->aux];
			size_t named = 0;

			for (uint32_t i = 0; i < gr->n && named < STUCK_MEMBERS; i++) {
				uint32_t m = s->members[gr->first + i];

				if (s->ts[m].state < ST_WAITING) {
					add_wait(ret, &nw, &cap, t, m, ORR_DEP_CROSS_RANK);
					named++;
				}
			}
		}
	}
	return nw;
}

/* The cycle, named in reterr_diag (only where one reads it: igraph's work is not small). */
static int stuck(struct sim *s, size_t n, struct orr_diag *reterr_diag)
{
	bool *done = orr_xmalloc((n + 1) * sizeof(*done));
	struct orr_stuck_wait *waits;
	size_t nw = stuck_waits(s, n, &waits);
	int err;

	for (size_t t = 0; t < n; t++)
		done[t] = s->ts[t].state == ST_DONE;
	err = orr_graph_explain_stuck(s->g, done, waits, nw, reterr_diag);
	free(waits);
	free(done);
	return err;
}

/* Rank r cannot be affected by another rank before this time (its waiting collectives). */
static int64_t safe_time(const struct sim *s, uint32_t r)
{
	return s->lbn[r] ? s->lb[s->lbheap[s->hbase[r]]] : INT64_MAX;
}

/*
 * Runs rank r's tasks in time order while nothing another rank does can come earlier:
 * ranks meet only at collectives, and a collective a member of r waits for ends no
 * earlier than that member's start plus the instance's transfer time.  Keeping to one
 * rank at a time keeps its tasks in the caches.
 */
static bool run_rank(struct sim *s, uint32_t r)
{
	struct heap_item *h = &s->heap[s->hbase[r]]; /* r's heap; only its size changes */
	bool any = false;

	while (s->hn[r] && h->t < safe_time(s, r)) {
		/* Popped only once it ran, unless heap_push() took it out first. */
		s->stale = h->proc;
		run_task(s, s->head[h->proc]);
		if (s->stale != ORR_NONE) {
			s->stale = ORR_NONE;
			items_pop(h, &s->hn[r]);
		}
		any = true;
	}
	return any;
}

/* Rank r ran: its head goes among the tops (the older ones of r are stale now). */
static void note_top(struct sim *s, uint32_t r)
{
	size_t nr = orr_graph_rank_count(s->g);

	if (!s->hn[r])
		return;
	if (s->ntops >= 2 * nr + 64) {
		/* Mostly stale: start over from every rank's head. */
		s->ntops = 0;
		for (uint32_t k = 0; k < nr; k++)
			if (s->hn[k] && k != r)
				items_push(s->tops, &s->ntops, s->heap[s->hbase[k]]);
	}
	s->tops = orr_xgrow(s->tops, sizeof(*s->tops), &s->cap_tops, s->ntops + 1);
	items_push(s->tops, &s->ntops, s->heap[s->hbase[r]]);
}

/*
 * When every rank waits for another, the earliest task of all is safe to run.  Every
 * rank with a task queued ran since it last changed, so its head is among the tops.
 */
static bool run_earliest(struct sim *s)
{
	while (s->ntops) {
		struct heap_item top = items_pop(s->tops, &s->ntops);
		uint32_t r = s->procs[top.proc].rank;
		const struct heap_item *head = &s->heap[s->hbase[r]];

		if (!s->hn[r] || head->t != top.t || head->proc != top.proc)
			continue; /* stale */
		run_task(s, s->head[heap_pop(s, r).proc]);
		touch(s, r);
		return true;
	}
	return false;
}

int orr__simulate(struct orr_replay *r, const struct orr_replay_options *opts,
		  struct orr_diag *reterr_diag)
{
	struct sim s;
	size_t n = orr_graph_task_count(r->g), np = orr_graph_proc_count(r->g);
	int err = 0;

	sim_init(&s, r, opts);
	if ((err = orr__check_range(r->g, s.scale, opts, reterr_diag))) {
		sim_release(&s);
		return err;
	}
	for (uint32_t p = 0; p < np; p++)
		offer(&s, p);
	/* The first round runs every rank. */
	s.nlater = 0;
	for (uint32_t rank = 0; rank < orr_graph_rank_count(r->g); rank++) {
		s.queued[rank] = 1;
		s.round[s.nround++] = rank; /* in order: already a heap */
	}
	for (size_t next = PROGRESS_TASKS;;) {
		bool any = false;

		while (s.nround) {
			s.running = ranks_pop(s.round, &s.nround);
			s.queued[s.running] = 0;
			any |= run_rank(&s, s.running);
			note_top(&s, s.running);
			s.running = ORR_NONE;
			if (s.ndone >= next && opts && opts->progress) {
				opts->progress(opts->progress_data, s.ndone, n);
				next = s.ndone + PROGRESS_TASKS;
			}
		}
		if (!any && !run_earliest(&s))
			break;
		while (s.nlater)
			ranks_push(s.round, &s.nround, s.later[--s.nlater]);
	}
	if (opts && opts->progress)
		opts->progress(opts->progress_data, s.ndone, n);
	if (s.ndone < n)
		err = reterr_diag ? stuck(&s, n, reterr_diag) : ORR_ECYCLE;
	orr_debug("replay", "%zu of %zu tasks replayed", s.ndone, n);
	sim_release(&s);
	return err;
}
