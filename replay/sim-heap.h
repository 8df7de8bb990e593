/* SPDX-License-Identifier: MIT */
/*
 * replay/sim-heap.h — the simulation's binary heaps (replay/sim.c alone includes it): a
 * heap of (time, processor) items, earliest first and ties by processor, which orders a
 * rank's queued tasks and the ranks' heads; and a heap of rank indices, smallest first,
 * the ranks still to run in a round.  Static inline: they run for every task, in the
 * simulation's own translation unit.
 */
#ifndef ORRERY_REPLAY_SIM_HEAP_H
#define ORRERY_REPLAY_SIM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_item {
	int64_t t;
	uint32_t proc;
};

static inline bool before(const struct heap_item *a, const struct heap_item *b)
{
	return a->t < b->t || (a->t == b->t && a->proc < b->proc);
}

static inline void items_push(struct heap_item *h, size_t *n, struct heap_item x)
{
	size_t i = (*n)++;

	/* The parents later than x move down and x is written once, where the swaps would
	 * leave it. */
	for (; i && before(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

/* Puts x in heap h of n items whose first is free. */
static inline void items_sift(struct heap_item *h, size_t n, struct heap_item x)
{
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static inline struct heap_item items_pop(struct heap_item *h, size_t *n)
{
	struct heap_item top = h[0], x = h[--*n];

	if (*n)
		items_sift(h, *n, x);
	return top;
}

static inline void ranks_push(uint32_t *h, size_t *n, uint32_t r)
{
	size_t i = (*n)++;

	for (; i && r < h[(i - 1) / 2]; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = r;
}

static inline uint32_t ranks_pop(uint32_t *h, size_t *n)
{
	uint32_t top = h[0], x = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

#endif
