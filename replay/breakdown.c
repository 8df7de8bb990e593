/* SPDX-License-Identifier: MIT */
/*
 * Lumos's breakdown and busy timeline of one rank's GPU.  A sweep over the starts and
 * ends of its GPU tasks, counting how many compute and how many communication tasks
 * run at each moment, cuts the rank's timeline once into pieces of one state each
 * (compute only, both, communication only, idle), with the time spent in each state
 * so far at every cut.  A communication task coupled to other ranks' (one collective
 * instance) waits for its peers from its start to the last member's start, and
 * transfers from then on: communication alone is waiting while no member transfers.  A window's breakdown is then two binary searches, and its busy
 * timeline the cuts inside it: a report of a million steps costs a sort of the tasks,
 * not a pass over every task per step.  Copies and sets count as compute (GPU work
 * that is not communication).
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

enum { COMPUTE, BOTH, COMM, WAIT, IDLE };

/* What a task's edge counts: compute, a transfer, a wait for peers. */
enum { RUN_COMPUTE, RUN_TRANSFER, RUN_WAIT, RUN_KINDS };

struct edge {
	int64_t t;
	int8_t kind, delta;
};

/*
 * A cut of the timeline, where some task starts or ends: from t to the next cut the
 * GPU is in `state`; acc[s] is the time spent in state s (but IDLE) from the first cut
 * to t, in uint64_t: two int64_t times are at most 2^64 - 1 apart.
 */
struct cut {
	int64_t t;
	uint64_t acc[IDLE];
	uint8_t state;
	bool ends;   /* every task running before t ends at t: busy until t, then not */
	bool starts; /* no task runs across t and one starts at t */
};

struct orr_gpu_timeline {
	struct cut *v;
	size_t n;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->delta > y->delta) - (x->delta < y->delta);
}

static uint8_t state_of(const int64_t running[RUN_KINDS])
{
	bool comm = running[RUN_TRANSFER] || running[RUN_WAIT];

	if (running[RUN_COMPUTE])
		return comm ? BOTH : COMPUTE;
	return running[RUN_TRANSFER] ? COMM : running[RUN_WAIT] ? WAIT : IDLE;
}

static bool any(const int64_t running[RUN_KINDS])
{
	return running[RUN_COMPUTE] || running[RUN_TRANSFER] || running[RUN_WAIT];
}

static void push(struct edge **v, size_t *n, size_t *cap, int64_t s, int64_t e, int8_t kind)
{
	if (s >= e)
		return;
	ORR_VEC_PUSH(*v, *n, *cap, ((struct edge){ s, kind, 1 }));
	ORR_VEC_PUSH(*v, *n, *cap, ((struct edge){ e, kind, -1 }));
}

/*
 * The starts and ends of the rank's GPU tasks that last and overlap [from, to), sorted
 * by time, ends first.
 */
static struct edge *gpu_edges(const struct orr_replay *r, size_t rank, bool predicted, int64_t from,
			      int64_t to, size_t *ret_n)
{
	const struct orr_graph *g = r->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, rank);
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct edge *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		int64_t s, e, a;

		if (tasks[t].kind != ORR_TASK_GPU)
			continue;
		s = predicted ? r->ts[t].start : orr_graph_task_start(g, t);
		e = predicted ? r->ts[t].end : orr_graph_task_end(g, t);
		if (s >= e || s >= to || e <= from)
			continue;
		if (!(tasks[t].flags & ORR_TASK_F_COMM)) {
			push(&v, &n, &cap, s, e, RUN_COMPUTE);
			continue;
		}
		a = tasks[t].aux == ORR_NONE ? s : r->arrival[predicted ? 0 : 1][tasks[t].aux];
		a = a < s ? s : a > e ? e : a;
		push(&v, &n, &cap, s, a, RUN_WAIT);
		push(&v, &n, &cap, a, e, RUN_TRANSFER);
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_edge);
	*ret_n = n;
	return v;
}

/* The timeline of the tasks that overlap [from, to): the same there as the whole one. */
static struct orr_gpu_timeline *timeline(const struct orr_replay *r, size_t rank, bool predicted,
					 int64_t from, int64_t to)
{
	struct orr_gpu_timeline *tl = orr_xcalloc(1, sizeof(*tl));
	size_t n;
	struct edge *e = gpu_edges(r, rank, predicted, from, to, &n);
	int64_t running[RUN_KINDS] = { 0 };

	tl->v = orr_xmalloc((n + 1) * sizeof(*tl->v));
	for (size_t i = 0; i < n;) {
		struct cut *c = &tl->v[tl->n];
		bool busy = any(running);

		*c = (struct cut){ .t = e[i].t };
		if (tl->n) {
			const struct cut *p = c - 1;

			for (int s = 0; s < IDLE; s++)
				c->acc[s] = p->acc[s];
			if (p->state != IDLE)
				c->acc[p->state] += (uint64_t)c->t - (uint64_t)p->t;
		}
		for (; i < n && e[i].t == c->t && e[i].delta < 0; i++)
			running[e[i].kind]--;
		c->ends = busy && !any(running);
		c->starts = !any(running) && i < n && e[i].t == c->t;
		for (; i < n && e[i].t == c->t; i++)
			running[e[i].kind]++;
		c->state = state_of(running);
		tl->n++;
	}
	free(e);
	return tl;
}

struct orr_gpu_timeline *orr_gpu_timeline_new(const struct orr_replay *r, size_t rank,
					      bool predicted)
{
	return timeline(r, rank, predicted, INT64_MIN, INT64_MAX);
}

void orr_gpu_timeline_free(struct orr_gpu_timeline *tl)
{
	if (!tl)
		return;
	free(tl->v);
	free(tl);
}

/* The first cut later than t (with after: at t or later), or tl->n. */
static size_t cut_after(const struct orr_gpu_timeline *tl, int64_t t, bool at)
{
	size_t lo = 0, hi = tl->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tl->v[mid].t < t || (!at && tl->v[mid].t == t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Time in each state but IDLE from the first cut to t, which is within the cuts. */
static void acc_at(const struct orr_gpu_timeline *tl, int64_t t, uint64_t ret[IDLE])
{
	const struct cut *c = &tl->v[cut_after(tl, t, false) - 1];

	for (int s = 0; s < IDLE; s++)
		ret[s] = c->acc[s];
	if (c->state != IDLE)
		ret[c->state] += (uint64_t)t - (uint64_t)c->t;
}

static int64_t clamp_ns(uint64_t ns)
{
	return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
}

void orr_gpu_timeline_breakdown(const struct orr_gpu_timeline *tl, int64_t start_ns, int64_t end_ns,
				struct orr_breakdown *ret)
{
	uint64_t a[IDLE] = { 0 }, b[IDLE] = { 0 }, len, busy = 0;

	*ret = (struct orr_breakdown){ 0 };
	if (end_ns <= start_ns)
		return;
	len = (uint64_t)end_ns - (uint64_t)start_ns;
	if (tl->n) {
		int64_t first = tl->v[0].t, last = tl->v[tl->n - 1].t;

		acc_at(tl, start_ns < first ? first : start_ns > last ? last : start_ns, a);
		acc_at(tl, end_ns < first ? first : end_ns > last ? last : end_ns, b);
	}
	for (int s = 0; s < IDLE; s++) {
		b[s] -= a[s];
		busy += b[s];
	}
	ret->exposed_compute_ns = clamp_ns(b[COMPUTE]);
	ret->overlapped_ns = clamp_ns(b[BOTH]);
	ret->exposed_comm_ns = clamp_ns(b[COMM] + b[WAIT]);
	ret->exposed_wait_ns = clamp_ns(b[WAIT]);
	ret->other_ns = clamp_ns(len - busy);
}

void orr_replay_breakdown(const struct orr_replay *r, size_t rank, bool predicted, int64_t start_ns,
			  int64_t end_ns, struct orr_breakdown *ret)
{
	struct orr_gpu_timeline *tl = timeline(r, rank, predicted, start_ns, end_ns);

	orr_gpu_timeline_breakdown(tl, start_ns, end_ns, ret);
	orr_gpu_timeline_free(tl);
}

/*
 * The busy timeline as the intervals in which any stream runs, relative to `from`:
 * [v[2i], v[2i+1]) for i < *ret_n / 2, two equal boundaries where one task ends as the
 * next starts.  As many as the cuts in [from, to), however long the step: a bin per
 * millisecond would let an 88-byte file ask for gigabytes.
 */
static uint64_t *busy_spans(const struct orr_gpu_timeline *tl, int64_t from, int64_t to,
			    size_t *ret_n)
{
	size_t lo = cut_after(tl, from, false), hi = cut_after(tl, to, true), k = 0;
	uint64_t *b = orr_xmalloc((2 * (hi > lo ? hi - lo : 0) + 3) * sizeof(*b));

	*ret_n = 0;
	if (to <= from)
		return b;
	/* Busy at from: the tasks running across it start there. */
	if (lo && tl->v[lo - 1].state != IDLE)
		b[k++] = 0;
	for (size_t i = lo; i < hi; i++) {
		if (tl->v[i].ends)
			b[k++] = (uint64_t)orr_time_sub(tl->v[i].t, from);
		if (tl->v[i].starts)
			b[k++] = (uint64_t)orr_time_sub(tl->v[i].t, from);
	}
	/* Busy until to: the tasks running across it end there. */
	if (hi && tl->v[hi - 1].state != IDLE)
		b[k++] = (uint64_t)orr_time_sub(to, from);
	*ret_n = k;
	return b;
}

/*
 * Sum over 1 ms bins of |measured busy - predicted busy|, walking only the boundaries:
 * a stretch of whole bins in which neither timeline changes adds its count at once.
 */
struct l1_sweep {
	uint64_t t;       /* swept up to here */
	int64_t d;        /* measured - predicted busy ns in t's bin so far */
	int rate;         /* measured busy (0/1) - predicted busy (0/1) */
	uint64_t whole;   /* whole bins of difference */
	uint64_t part_ns; /* |d| of bins cut by a boundary */
};

static void sweep_to(struct l1_sweep *w, uint64_t until)
{
	uint64_t rate = (uint64_t)(w->rate < 0 ? -w->rate : w->rate);

	while (w->t < until) {
		uint64_t bin_end = (w->t / ORR_BUSY_BIN_NS + 1) * ORR_BUSY_BIN_NS;
		uint64_t to = until < bin_end ? until : bin_end, k;

		w->d += w->rate * (int64_t)(to - w->t);
		w->t = to;
		if (to < bin_end)
			break;
		w->part_ns += (uint64_t)(w->d < 0 ? -w->d : w->d);
		w->d = 0;
		k = (until - w->t) / ORR_BUSY_BIN_NS;
		w->whole += k * rate;
		w->t += k * ORR_BUSY_BIN_NS;
	}
}

double orr_gpu_timeline_busy_l1(const struct orr_gpu_timeline *measured,
				const struct orr_gpu_timeline *predicted,
				const struct orr_replay_step *step)
{
	size_t nm, np, i = 0, j = 0;
	uint64_t *m = busy_spans(measured, step->measured_start_ns, step->measured_end_ns, &nm);
	uint64_t *p = busy_spans(predicted, step->predicted_start_ns, step->predicted_end_ns, &np);
	struct l1_sweep w = { 0 };

	while (i < nm || j < np) {
		uint64_t t = j == np || (i < nm && m[i] < p[j]) ? m[i] : p[j];

		sweep_to(&w, t);
		while (i < nm && m[i] == t)
			i++;
		while (j < np && p[j] == t)
			j++;
		/* Inside a measured (predicted) span after an odd number of boundaries. */
		w.rate = (int)(i & 1) - (int)(j & 1);
	}
	w.part_ns += (uint64_t)(w.d < 0 ? -w.d : w.d);
	free(m);
	free(p);
	return (double)w.whole + (double)w.part_ns / ORR_BUSY_BIN_NS;
}

double orr_replay_busy_l1(const struct orr_replay *r, size_t rank,
			  const struct orr_replay_step *step)
{
	struct orr_gpu_timeline *m =
		timeline(r, rank, false, step->measured_start_ns, step->measured_end_ns);
	struct orr_gpu_timeline *p =
		timeline(r, rank, true, step->predicted_start_ns, step->predicted_end_ns);
	double l1 = orr_gpu_timeline_busy_l1(m, p, step);

	orr_gpu_timeline_free(m);
	orr_gpu_timeline_free(p);
	return l1;
}
