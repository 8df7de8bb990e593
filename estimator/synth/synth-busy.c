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

/* The union of v's n spans, in place: the count of disjoint spans left, sorted. */
static size_t merge(struct span *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), by_start);
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
	size_t nc = 0, nm = 0;
	int64_t c, m, both;
	struct orr_synth *s = j->ret;

	for (size_t i = 0; i < r->n; i++) {
		const struct sy_insn *x = &r->v[i];

		if (x->start_ns < 0 || x->end_ns <= x->start_ns)
			continue;
		if (x->op == SY_KERNEL)
			comp[nc++] = (struct span){ x->start_ns, x->end_ns };
		else if (x->op == SY_COLL)
			comm[nm++] = (struct span){ x->start_ns, x->end_ns };
	}
	nc = merge(comp, nc);
	nm = merge(comm, nm);
	c = length(comp, nc);
	m = length(comm, nm);
	both = common(comp, nc, comm, nm);
	s->placed_compute_ns = (double)(c - both);
	s->placed_overlapped_ns = (double)both;
	s->placed_comm_ns = (double)(m - both);
	s->placed_other_ns = s->placed_ns - (double)(c + m - both);
	if (s->placed_other_ns < 0)
		s->placed_other_ns = 0;
	free(comp);
	free(comm);
}
