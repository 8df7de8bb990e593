/* SPDX-License-Identifier: MIT */
/*
 * Why a sweep refused what it refused, in words that name the value and what it does
 * not divide: the TP, PP or CP given that divides none of the GPU counts when the plan
 * holds no configuration, and the first configuration refused for a reason.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"
#include "banned.h"

#define LL(x) ((long long)(x))

/* Appends to buf[0..size) at *len, never past its end. */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? size : *len + (size_t)n;
}

/* Whether v divides some GPU count of p's budget (gpus_min..gpus_max). */
static bool divides_some(const struct orr_whatif_plan *p, int64_t v)
{
	return v >= 1 && p->s.gpus_max / v * v >= p->s.gpus_min;
}

/* The budget as the user wrote it: "--gpus 8", or "any of --gpus 8-12". */
static void budget(const struct orr_whatif_plan *p, char *buf, size_t size, size_t *len)
{
	if (p->s.gpus_min == p->s.gpus_max)
		add(buf, size, len, "--gpus %lld", LL(p->s.gpus_min));
	else
		add(buf, size, len, "any of --gpus %lld-%lld", LL(p->s.gpus_min),
		    LL(p->s.gpus_max));
}

/* A list none of whose values divides a GPU count: "--tp 3 does not divide --gpus 8". */
static bool list_at_fault(const struct orr_whatif_plan *p, const char *name,
			  const struct wi_list *l, char *buf, size_t size)
{
	size_t len = 0;

	for (size_t i = 0; i < l->n; i++)
		if (divides_some(p, l->v[i]))
			return false;
	if (!l->n)
		return false;
	add(buf, size, &len, "%s%s ", l->n > 1 ? "none of " : "", name);
	for (size_t i = 0; i < l->n; i++)
		add(buf, size, &len, "%s%lld", i ? "," : "", LL(l->v[i]));
	add(buf, size, &len, " %s ", l->n > 1 ? "divides" : "does not divide");
	budget(p, buf, size, &len);
	return true;
}

/* The least product TP x PP x CP of the lists (each divides a GPU count, their product none). */
static void least_product(const struct orr_whatif_plan *p, char *buf, size_t size)
{
	int64_t best = 0, bt = 1, bq = 1, bk = 1, x;
	bool one = p->tp.n == 1 && p->pp.n == 1 && p->cp.n == 1;
	size_t len = 0;

	for (size_t a = 0; a < p->tp.n; a++)
		for (size_t b = 0; b < p->pp.n; b++)
			for (size_t c = 0; c < p->cp.n; c++) {
				int64_t t = p->tp.v[a], q = p->pp.v[b], k = p->cp.v[c];

				if (__builtin_mul_overflow(t, q, &x) ||
				    __builtin_mul_overflow(x, k, &x))
					continue;
				if (!best || x < best) {
					best = x;
					bt = t;
					bq = q;
					bk = k;
				}
			}
	if (!one)
		add(buf, size, &len, "no product of the --tp, --pp and --cp given divides ");
	if (!one)
		budget(p, buf, size, &len);
	add(buf, size, &len, "%s--tp %lld x --pp %lld", one ? "" : "; the least, ", LL(bt), LL(bq));
	if (bk != 1)
		add(buf, size, &len, " x --cp %lld", LL(bk));
	add(buf, size, &len, " (%lld)", LL(best));
	if (one) {
		add(buf, size, &len, " does not divide ");
		budget(p, buf, size, &len);
	}
}

bool orr_whatif_plan_why_empty(const struct orr_whatif_plan *p, char *buf, size_t size)
{
	if (p->nprefix)
		return false;
	if (list_at_fault(p, "--tp", &p->tp, buf, size) ||
	    list_at_fault(p, "--pp", &p->pp, buf, size) ||
	    list_at_fault(p, "--cp", &p->cp, buf, size))
		return true;
	least_product(p, buf, size);
	return true;
}

/* Why c was refused for w, in the words of the check that refused it. */
static void reason(const struct orr_whatif_plan *p, const struct orr_train_config *c,
		   enum orr_whatif_why w, char *buf, size_t size)
{
	switch (w) {
	case ORR_WHATIF_CROSS_NODE:
		snprintf(buf, size, "tp %lld is more than the %d GPUs of a node", LL(c->tp),
			 p->s.gpus_per_node);
		break;
	case ORR_WHATIF_BATCH:
		snprintf(buf, size,
			 "global batch %lld is not divisible by dp %lld x micro-batch %lld",
			 LL(p->s.global_batch), LL(c->dp), LL(c->micro_batch));
		break;
	default:
		orr_train_check_layout(c, buf, size);
		break;
	}
}

bool orr_whatif_plan_example(const struct orr_whatif_plan *p, enum orr_whatif_why w, char *buf,
			     size_t size)
{
	struct orr_train_config c;

	if (w == ORR_WHATIF_FEASIBLE || w == ORR_WHATIF_MEMORY || w == ORR_WHATIF_REFUSED ||
	    (unsigned)w >= ORR_WHATIF_WHY_COUNT)
		return false;
	for (uint64_t i = 0; i < p->count; i++)
		if (orr_whatif_config(p, i, &c) == w) {
			reason(p, &c, w, buf, size);
			return true;
		}
	return false;
}
