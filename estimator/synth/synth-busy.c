/* SPDX-License-Identifier: MIT */
/*
 * The first stage's GPU time as placed, split as the replay's breakdown splits a rank's
 * (docs/design.md, "Breakdown"): compute alone, compute and communication at once,
 * communication alone, and nothing running, over the step's span [0, placed_ns].
 */
#include <stdlib.h>

#include "synth.h"
#include "banned.h"

struct span {
	int64_t a, b;
};

static int by_start(const void *x, const void *y)
{
	const struct span *p = x, *q = y;

	return (p->a > q->a) - (p->a < q->a);
}

/* Sorts v's n spans by their start, unless they are already (one stream's are). */
static void sort(struct span *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].a < v[i - 1].a) {
			qsort(v, n, sizeof(*v), by_start);
			return;
		}
}

/*
 * The union of v's n spans, sorted by their start, in place: the count of disjoint
 * spans left, sorted (whatever order spans of one start are in: the same union).
 */
static size_t merge(struct span *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && v[i].a <= v[k - 1].b) {
			if (v[i].b > v[k - 1].b)
				v[k - 1].b = v[i].b;
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/*
 * The spans of the communication streams, each sorted, into one array sorted by start
 * (a stream runs its tasks one after the other, so each of its lists is sorted: sort()
 * only checks): a merge of a few lists, not a sort of them all.
 */
static size_t interleave(struct span *const *runs, const size_t *n, int k, struct span *ret)
{
	size_t at[SY_STREAMS] = { 0 }, m = 0;

	for (;;) {
		int best = -1;

		for (int s = 0; s < k; s++)
			if (at[s] < n[s] && (best < 0 || runs[s][at[s]].a < runs[best][at[best]].a))
				best = s;
		if (best < 0)
			return m;
		ret[m++] = runs[best][at[best]++];
	}
}

static int64_t length(const struct span *v, size_t n)
{
	int64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i].b - v[i].a;
	return sum;
}

/* The length of the intersection of two sorted unions. */
static int64_t common(const struct span *x, size_t nx, const struct span *y, size_t ny)
{
	int64_t sum = 0;

	for (size_t i = 0, k = 0; i < nx && k < ny;) {
		int64_t a = x[i].a > y[k].a ? x[i].a : y[k].a;
		int64_t b = x[i].b < y[k].b ? x[i].b : y[k].b;

		if (b > a)
			sum += b - a;
		if (x[i].b < y[k].b)
			i++;
		else
			k++;
	}
	return sum;
}

void orr__sy_busy(const struct sy_job *j)
{
	const struct sy_rank *r = &j->ranks[0];
	struct span *comp = orr_xmalloc((r->n + 1) * sizeof(*comp));
	struct span *comm = orr_xmalloc((r->n + 1) * sizeof(*comm));
	struct span *runs[SY_STREAMS];
	size_t nc = 0, nm, nrun[SY_STREAMS] = { 0 };
	int64_t c, m, both;
	struct orr_synth *s = j->ret;

	for (int k = 0; k < SY_STREAMS; k++)
		runs[k] = orr_xmalloc((r->q[k].n + 1) * sizeof(*runs[k]));
	for (size_t i = 0; i < r->n; i++) {
		const struct sy_insn *x = &r->v[i];

		if (x->start_ns < 0 || x->end_ns <= x->start_ns)
			continue;
		if (x->op == SY_KERNEL)
			comp[nc++] = (struct span){ x->start_ns, x->end_ns };
		else if (x->op == SY_COLL)
			runs[x->stream][nrun[x->stream]++] =
				(struct span){ x->start_ns, x->end_ns };
	}
	sort(comp, nc);
	for (int k = 0; k < SY_STREAMS; k++)
		sort(runs[k], nrun[k]);
	nc = merge(comp, nc);
	nm = merge(comm, interleave(runs, nrun, SY_STREAMS, comm));
	c = length(comp, nc);
	m = length(comm, nm);
	both = common(comp, nc, comm, nm);
	s->placed_compute_ns = (double)(c - both);
	s->placed_overlapped_ns = (double)both;
	s->placed_comm_ns = (double)(m - both);
	s->placed_other_ns = s->placed_ns - (double)(c + m - both);
	if (s->placed_other_ns < 0)
		s->placed_other_ns = 0;
	for (int k = 0; k < SY_STREAMS; k++)
		free(runs[k]);
	free(comp);
	free(comm);
}
