/* SPDX-License-Identifier: MIT */
/*
 * A rank's collectives as its finish derives them (traces/model.c): an NCCL kernel whose
 * launch carries a collective takes it, one without gets a collective of the type its
 * name gives, and each collective its size in bytes from its element counts and dtype.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* The collective type of the kernel named name: memo[name] - 2, or ORR_NONE (memo 1). */
static uint32_t nccl_type(struct orr_trace *t, uint32_t *memo, uint32_t name)
{
	const char *op;
	size_t len;

	if (!memo[name])
		memo[name] = orr_nccl_kernel_type(orr_strtab_get(t->strs, name), &op, &len)
				     ? orr_strtab_intern(t->strs, op, len) + 2
				     : 1;
	return memo[name] == 1 ? ORR_NONE : memo[name] - 2;
}

/*
 * "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "AllReduce".  Each name is looked at
 * once (kernel names repeat, and are long to search).
 */
void orr__collectives_from_names(struct orr_trace *t, struct orr__rank_build *rb)
{
	struct orr_event *ev = rb->events.p;
	size_t nnames = orr_strtab_count(t->strs);
	uint32_t *memo = orr_xcalloc(nnames, sizeof(*memo));

	for (size_t i = 0; i < rb->events.n; i++) {
		struct orr_collective *c;
		uint32_t type;

		if (ev[i].kind != ORR_EVENT_KERNEL || ev[i].coll != ORR_NONE ||
		    ev[i].name >= nnames || (type = nccl_type(t, memo, ev[i].name)) == ORR_NONE)
			continue;
		c = orr__vec_push(&rb->colls);
		*c = (struct orr_collective){ .type = type,
					      .in_nelems = -1,
					      .out_nelems = -1,
					      .in_bytes = -1,
					      .out_bytes = -1,
					      .sequence = -1,
					      .group_size = -1,
					      .src_rank = -1,
					      .dst_rank = -1 };
		ev[i].coll = (uint32_t)(rb->colls.n - 1);
	}
	free(memo);
}

struct launch_coll {
	int64_t corr;
	uint32_t coll;
};

static int cmp_launch_coll(const void *pa, const void *pb)
{
	const struct launch_coll *a = pa, *b = pb;

	return (a->corr > b->corr) - (a->corr < b->corr);
}

static bool launch_with_coll(const struct orr_event *e)
{
	return (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
	       e->sub == ORR_CALL_LAUNCH && e->coll != ORR_NONE && e->correlation >= 0;
}

/* Removes the collectives no event refers to (a kernel's, replaced by its launch's). */
static void drop_unused_collectives(struct orr__rank_build *rb)
{
	struct orr_event *ev = rb->events.p;
	struct orr_collective *c = rb->colls.p;
	uint32_t *map = orr_xcalloc(rb->colls.n ? rb->colls.n : 1, sizeof(*map));
	size_t kept = 0;

	for (size_t i = 0; i < rb->events.n; i++)
		if (ev[i].coll < rb->colls.n)
			map[ev[i].coll] = 1;
	for (size_t j = 0; j < rb->colls.n; j++) {
		if (!map[j])
			continue;
		c[kept] = c[j];
		map[j] = (uint32_t)kept++;
	}
	for (size_t i = 0; i < rb->events.n; i++)
		if (ev[i].coll < rb->colls.n)
			ev[i].coll = map[ev[i].coll];
	rb->colls.n = kept;
	free(map);
}

/*
 * An NCCL kernel whose launch carries a collective (the tracer gives a launch inside an
 * NCCL call the call's communicator, sequence and bytes) takes the launch's.
 */
void orr__collectives_from_launches(struct orr_trace *t, struct orr__rank_build *rb)
{
	struct orr_event *ev = rb->events.p;
	struct launch_coll *lc, key, *hit;
	size_t n = 0;
	bool replaced = false;

	for (size_t i = 0; i < rb->events.n; i++)
		n += launch_with_coll(&ev[i]);
	if (!n)
		return;
	lc = orr_xmalloc(n * sizeof(*lc));
	n = 0;
	for (size_t i = 0; i < rb->events.n; i++)
		if (launch_with_coll(&ev[i]))
			lc[n++] = (struct launch_coll){ ev[i].correlation, ev[i].coll };
	qsort(lc, n, sizeof(*lc), cmp_launch_coll);
	for (size_t i = 0; i < rb->events.n; i++) {
		const char *type;
		size_t len;

		if (ev[i].kind != ORR_EVENT_KERNEL || ev[i].correlation < 0)
			continue;
		key.corr = ev[i].correlation;
		hit = bsearch(&key, lc, n, sizeof(*lc), cmp_launch_coll);
		if (hit && hit->coll != ev[i].coll &&
		    orr_nccl_kernel_type(orr_strtab_get(t->strs, ev[i].name), &type, &len)) {
			ev[i].coll = hit->coll;
			replaced = true;
		}
	}
	free(lc);
	if (replaced)
		drop_unused_collectives(rb);
}

void orr__collective_bytes(struct orr_trace *t, struct orr__rank_build *rb)
{
	struct orr_collective *c = rb->colls.p;

	for (size_t i = 0; i < rb->colls.n; i++) {
		int size = orr_dtype_bytes(orr_strtab_get(t->strs, c[i].dtype));

		if (size && c[i].in_nelems >= 0 && c[i].in_nelems <= INT64_MAX / size)
			c[i].in_bytes = c[i].in_nelems * size;
		if (size && c[i].out_nelems >= 0 && c[i].out_nelems <= INT64_MAX / size)
			c[i].out_bytes = c[i].out_nelems * size;
	}
}
