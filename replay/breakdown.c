/* SPDX-License-Identifier: MIT */
/*
 * Lumos's breakdown and busy timeline of one rank's GPU: a sweep over the starts and
 * ends of its GPU tasks, counting how many compute and how many communication tasks
 * run at each moment.  Copies and sets count as compute (GPU work that is not
 * communication).
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct edge {
	int64_t t;
	int8_t comm, delta;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->delta > y->delta) - (x->delta < y->delta);
}

/* The starts and ends of the rank's GPU tasks, clipped to [from, to), sorted. */
static struct edge *gpu_edges(const struct orr_replay *r, size_t rank, bool predicted, int64_t from,
			      int64_t to, size_t *ret_n)
{
	const struct orr_graph *g = r->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, rank);
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct edge *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		int64_t s, e;
		int8_t comm = (tasks[t].flags & ORR_TASK_F_COMM) != 0;

		if (tasks[t].kind != ORR_TASK_GPU)
			continue;
		s = predicted ? r->ts[t].start : orr_graph_task_start(g, t);
		e = predicted ? r->ts[t].end : orr_graph_task_end(g, t);
		s = s < from ? from : s;
		e = e > to ? to : e;
		if (s >= e)
			continue;
		ORR_VEC_PUSH(v, n, cap, ((struct edge){ s, comm, 1 }));
		ORR_VEC_PUSH(v, n, cap, ((struct edge){ e, comm, -1 }));
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_edge);
	*ret_n = n;
	return v;
}

void orr_replay_breakdown(const struct orr_replay *r, size_t rank, bool predicted, int64_t start_ns,
			  int64_t end_ns, struct orr_breakdown *ret)
{
	size_t n;
	struct edge *v = gpu_edges(r, rank, predicted, start_ns, end_ns, &n);
	int64_t running[2] = { 0, 0 }, prev = start_ns;

	*ret = (struct orr_breakdown){ 0 };
	for (size_t i = 0; i <= n; i++) {
		int64_t t = i < n ? v[i].t : end_ns, span = orr_time_sub(t, prev);
		int64_t *to = running[0] && running[1] ? &ret->overlapped_ns
			      : running[0]             ? &ret->exposed_compute_ns
			      : running[1]             ? &ret->exposed_comm_ns
						       : &ret->other_ns;

		/* Predicted windows are not bounded as measured ones are: saturate. */
		if (span > 0)
			*to = orr_time_add(*to, span);
		prev = t > prev ? t : prev;
		if (i < n)
			running[v[i].comm] += v[i].delta;
	}
	free(v);
}

/*
 * The busy timeline as the intervals in which any stream runs, merged, relative to
 * `from`: [v[2i], v[2i+1]) for i < *ret_n / 2.  As many as the tasks, however long
 * the step: a bin per millisecond would let an 88-byte file ask for gigabytes.
 */
static uint64_t *busy_spans(const struct orr_replay *r, size_t rank, bool predicted, int64_t from,
			    int64_t to, size_t *ret_n)
{
	size_t n, k = 0;
	struct edge *v = gpu_edges(r, rank, predicted, from, to, &n);
	uint64_t *b = orr_xmalloc((n + 1) * sizeof(*b));
	int64_t running = 0;

	for (size_t i = 0; i < n; i++) {
		bool was = running > 0;

		running += v[i].delta;
		/* Times are clipped to [from, to): the difference is never negative. */
		if (was != (running > 0))
			b[k++] = (uint64_t)orr_time_sub(v[i].t, from);
	}
	free(v);
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

double orr_replay_busy_l1(const struct orr_replay *r, size_t rank,
			  const struct orr_replay_step *step)
{
	size_t nm, np, i = 0, j = 0;
	uint64_t *m =
		busy_spans(r, rank, false, step->measured_start_ns, step->measured_end_ns, &nm);
	uint64_t *p =
		busy_spans(r, rank, true, step->predicted_start_ns, step->predicted_end_ns, &np);
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
