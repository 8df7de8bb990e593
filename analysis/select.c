/* SPDX-License-Identifier: MIT */
/* Which rank-steps an analysis covers (struct orr_select). */
#include <stdlib.h>

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
