/* SPDX-License-Identifier: MIT */
/* A sweep's results ranked, and its Pareto front of GPUs against step time. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct keyed {
	double key;
	uint64_t index;
	size_t at;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
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

static bool ranked(const struct orr_whatif_result *r)
{
	return r->why == ORR_WHATIF_FEASIBLE && isfinite(r->step_ns);
}

void orr_whatif_rank(const struct orr_whatif_result *v, size_t n, enum orr_whatif_rank by,
		     size_t **ret, size_t *ret_n)
{
	struct keyed *k = orr_xmalloc((n + 1) * sizeof(*k));
	size_t m = 0, *out;

	for (size_t i = 0; i < n; i++)
		if (ranked(&v[i]))
			k[m++] = (struct keyed){ key(&v[i], by), v[i].index, i };
	qsort(k, m, sizeof(*k), by_key);
	out = orr_xmalloc((m + 1) * sizeof(*out));
	for (size_t i = 0; i < m; i++)
		out[i] = k[i].at;
	free(k);
	*ret = out;
	*ret_n = m;
}

static int by_gpus_then_time(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->index != y->index) /* the GPU count, here */
		return x->index < y->index ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

void orr_whatif_pareto(const struct orr_whatif_result *v, size_t n, size_t **ret, size_t *ret_n)
{
	struct keyed *k = orr_xmalloc((n + 1) * sizeof(*k));
	size_t m = 0, f = 0, *out;
	double best = INFINITY;

	for (size_t i = 0; i < n; i++)
		if (ranked(&v[i]))
			k[m++] = (struct keyed){ v[i].step_ns, (uint64_t)v[i].gpus, i };
	qsort(k, m, sizeof(*k), by_gpus_then_time);
	out = orr_xmalloc((m + 1) * sizeof(*out));
	for (size_t i = 0; i < m; i++) {
		if (i && k[i].index == k[i - 1].index)
			continue; /* not the fastest of its GPU count */
		if (k[i].key >= best)
			continue; /* fewer GPUs were as fast */
		best = k[i].key;
		out[f++] = k[i].at;
	}
	free(k);
	*ret = out;
	*ret_n = f;
}
