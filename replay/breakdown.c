/* SPDX-License-Identifier: MIT */
/*
 * Lumos's breakdown and busy timeline of one rank's GPU: a sweep over the starts and
 * ends of its GPU tasks, counting how many compute and how many communication tasks
 * run at each moment.  Copies and sets count as compute (GPU work that is not
 * communication).
 */
#include <math.h>
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
		int64_t t = i < n ? v[i].t : end_ns, span = t - prev;

		if (span > 0) {
			if (running[0] && running[1])
				ret->overlapped_ns += span;
			else if (running[0])
				ret->exposed_compute_ns += span;
			else if (running[1])
				ret->exposed_comm_ns += span;
			else
				ret->other_ns += span;
		}
		prev = t > prev ? t : prev;
		if (i < n)
			running[v[i].comm] += v[i].delta;
	}
	free(v);
}

/* Busy nanoseconds of each bin of [from, to), the bins counted from `from`. */
static void busy_bins(const struct orr_replay *r, size_t rank, bool predicted, int64_t from,
		      int64_t to, int64_t *bins)
{
	size_t n;
	struct edge *v = gpu_edges(r, rank, predicted, from, to, &n);
	int64_t running = 0, prev = from;

	for (size_t i = 0; i < n; i++) {
		if (running > 0) {
			/* Busy over [prev, v[i].t): spread it over the bins it touches. */
			for (int64_t t = prev; t < v[i].t;) {
				size_t b = (size_t)((t - from) / ORR_BUSY_BIN_NS);
				int64_t bin_end = from + (int64_t)(b + 1) * ORR_BUSY_BIN_NS;
				int64_t until = v[i].t < bin_end ? v[i].t : bin_end;

				bins[b] += until - t;
				t = until;
			}
		}
		prev = v[i].t;
		running += v[i].delta;
	}
	free(v);
}

double orr_replay_busy_l1(const struct orr_replay *r, size_t rank,
			  const struct orr_replay_step *step)
{
	int64_t lm = step->measured_end_ns - step->measured_start_ns;
	int64_t lp = step->predicted_end_ns - step->predicted_start_ns;
	int64_t len = lm > lp ? lm : lp;
	size_t nbins = len > 0 ? (size_t)((len + ORR_BUSY_BIN_NS - 1) / ORR_BUSY_BIN_NS) : 0;
	int64_t *m = orr_xcalloc(nbins + 1, sizeof(*m)), *p = orr_xcalloc(nbins + 1, sizeof(*p));
	double l1 = 0;

	busy_bins(r, rank, false, step->measured_start_ns, step->measured_end_ns, m);
	busy_bins(r, rank, true, step->predicted_start_ns, step->predicted_end_ns, p);
	for (size_t b = 0; b < nbins; b++)
		l1 += fabs((double)(m[b] - p[b])) / ORR_BUSY_BIN_NS;
	free(m);
	free(p);
	return l1;
}
