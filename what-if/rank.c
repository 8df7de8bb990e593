/* SPDX-License-Identifier: MIT */
/*
 * A sweep's results summed up as they stream by (docs/orrery-whatif.md, "Output"): the
 * counts by reason, the best `top` in a heap whose root is the worst kept, each GPU
 * count's fastest for the Pareto front of GPUs against step time, and a marked result's
 * place, counted as the results that rank before it go by.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

bool orr_whatif_ranked(const struct orr_whatif_result *r)
{
	return r->why == ORR_WHATIF_FEASIBLE && isfinite(r->step_ns);
}

/* The key that sorts best first: smaller is better. */
static double key(const struct orr_whatif_result *r, enum orr_whatif_rank by)
{
	switch (by) {
	case ORR_WHATIF_RANK_TOKENS:
		return -r->tokens_per_s_per_gpu;
	case ORR_WHATIF_RANK_COST:
		return r->step_ns * (double)r->gpus;
	case ORR_WHATIF_RANK_TIME:
	default:
		return r->step_ns;
	}
}

/* Whether a ranks before b: by key, ties in the space's order. */
static bool before(enum orr_whatif_rank by, const struct orr_whatif_result *a,
		   const struct orr_whatif_result *b)
{
	double ka = key(a, by), kb = key(b, by);

	return ka != kb ? ka < kb : a->index < b->index;
}

void orr_whatif_tally_init(struct orr_whatif_tally *t, enum orr_whatif_rank by, size_t top,
			   const struct orr_whatif_result *mark)
{
	memset(t, 0, sizeof(*t));
	t->by = by;
	t->top = top;
	if (mark) {
		t->marked = true;
		t->mark = *mark;
		t->mark_place = orr_whatif_ranked(mark) ? 1 : 0;
	}
}

/* The heap of the best kept: the worst at its root. */
static void sift_down(struct orr_whatif_result *h, size_t n, enum orr_whatif_rank by, size_t i)
{
	struct orr_whatif_result tmp;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, worst = i;

		if (l < n && before(by, &h[worst], &h[l]))
			worst = l;
		if (r < n && before(by, &h[worst], &h[r]))
			worst = r;
		if (worst == i)
			return;
		tmp = h[i];
		h[i] = h[worst];
		h[worst] = tmp;
		i = worst;
	}
}

static void sift_up(struct orr_whatif_tally *t, size_t i)
{
	struct orr_whatif_result *h = t->best, tmp;

	while (i && before(t->by, &h[(i - 1) / 2], &h[i])) {
		tmp = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static void keep_best(struct orr_whatif_tally *t, const struct orr_whatif_result *r)
{
	if (!t->top || t->nbest < t->top) {
		ORR_VEC_PUSH(t->best, t->nbest, t->cap_best, *r);
		if (t->top)
			sift_up(t, t->nbest - 1);
	} else if (before(t->by, r, &t->best[0])) {
		t->best[0] = *r;
		sift_down(t->best, t->nbest, t->by, 0);
	}
}

/* Each GPU count's fastest, kept in order of the GPU count (the space's order appends). */
static void keep_fastest(struct orr_whatif_tally *t, const struct orr_whatif_result *r)
{
	size_t lo = 0, hi = t->nfront;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->front[mid].gpus < r->gpus)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nfront && t->front[lo].gpus == r->gpus) {
		const struct orr_whatif_result *f = &t->front[lo];

		if (r->step_ns < f->step_ns || (r->step_ns == f->step_ns && r->index < f->index))
			t->front[lo] = *r;
		return;
	}
	ORR_VEC_PUSH(t->front, t->nfront, t->cap_front, *r);
	memmove(&t->front[lo + 1], &t->front[lo], (t->nfront - 1 - lo) * sizeof(*t->front));
	t->front[lo] = *r;
}

void orr_whatif_tally_add(struct orr_whatif_tally *t, const struct orr_whatif_result *r)
{
	t->n++;
	if ((unsigned)r->why < ORR_WHATIF_WHY_COUNT)
		t->count[r->why]++;
	if (!orr_whatif_ranked(r))
		return;
	keep_best(t, r);
	keep_fastest(t, r);
	if (t->mark_place && r->index != t->mark.index && before(t->by, r, &t->mark))
		t->mark_place++;
}

/* The best kept, best first: a heap sort (the worst at the root goes last). */
static void sort_best(struct orr_whatif_tally *t)
{
	struct orr_whatif_result *h = t->best, tmp;

	if (!t->top) /* every one kept, not yet a heap */
		for (size_t i = t->nbest / 2; i-- > 0;)
			sift_down(h, t->nbest, t->by, i);
	for (size_t n = t->nbest; n > 1; n--) {
		tmp = h[0];
		h[0] = h[n - 1];
		h[n - 1] = tmp;
		sift_down(h, n - 1, t->by, 0);
	}
}

void orr_whatif_tally_finish(struct orr_whatif_tally *t)
{
	size_t f = 0;
	double fastest = INFINITY;

	sort_best(t);
	for (size_t i = 0; i < t->nfront; i++) {
		if (t->front[i].step_ns >= fastest)
			continue; /* fewer GPUs were as fast */
		fastest = t->front[i].step_ns;
		t->front[f++] = t->front[i];
	}
	t->nfront = f;
}

uint64_t orr_whatif_tally_place(const struct orr_whatif_tally *t, const struct orr_whatif_result *r)
{
	for (size_t i = 0; i < t->nbest; i++)
		if (t->best[i].index == r->index)
			return i + 1;
	return t->marked && r->index == t->mark.index ? t->mark_place : 0;
}

void orr_whatif_tally_release(struct orr_whatif_tally *t)
{
	free(t->best);
	free(t->front);
	memset(t, 0, sizeof(*t));
}
