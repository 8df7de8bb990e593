/* SPDX-License-Identifier: MIT */
/* Which rank-steps an analysis covers (struct orr_select). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

static int cmp_rank(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

bool orr_select_step(const struct orr_select *s, int64_t step)
{
	return !s || !s->steps_given || (step >= s->step_lo && step <= s->step_hi && step >= 0);
}

bool orr_select_rank(const struct orr_select *s, int32_t rank)
{
	return !s || !s->ranks || bsearch(&rank, s->ranks, s->nranks, sizeof(*s->ranks), cmp_rank);
}

void orr_select_release(struct orr_select *s)
{
	free(s->ranks);
	*s = (struct orr_select){ 0 };
}

/* Appends to buf[0..size) at *len; "..." in its last bytes once it does not fit. */
static void add_range(char *buf, size_t size, size_t *len, int32_t lo, int32_t hi)
{
	char one[32];
	size_t n;

	if (*len >= size)
		return;
	n = (size_t)(lo == hi ? snprintf(one, sizeof(one), "%s%d", *len ? "," : "", lo)
			      : snprintf(one, sizeof(one), "%s%d-%d", *len ? "," : "", lo, hi));
	if (*len + n + 4 > size) { /* room for "..." and the NUL */
		snprintf(buf + *len, size - *len, "...");
		*len = size;
		return;
	}
	memcpy(buf + *len, one, n + 1);
	*len += n;
}

void orr_ranks_text(const int32_t *ranks, size_t n, char *buf, size_t size)
{
	int32_t *r = orr_xmalloc((n ? n : 1) * sizeof(*r));
	size_t len = 0;

	if (!size)
		goto out;
	buf[0] = '\0';
	if (n)
		memcpy(r, ranks, n * sizeof(*r));
	qsort(r, n, sizeof(*r), cmp_rank);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && (int64_t)r[j] - r[j - 1] <= 1; j++)
			;
		add_range(buf, size, &len, r[i], r[j - 1]);
	}
out:
	free(r);
}

bool orr_select_misses(const struct orr_select *s, const struct orr_graph *g, char *have,
		       size_t size)
{
	size_t n = orr_graph_rank_count(g);
	int32_t *r;

	if (!s || !s->ranks)
		return false;
	for (size_t k = 0; k < n; k++)
		if (orr_select_rank(s, orr_graph_get_rank(g, k)->rank->rank))
			return false;
	r = orr_xmalloc((n ? n : 1) * sizeof(*r));
	for (size_t k = 0; k < n; k++)
		r[k] = orr_graph_get_rank(g, k)->rank->rank;
	orr_ranks_text(r, n, have, size);
	free(r);
	return true;
}
