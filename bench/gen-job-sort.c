/* SPDX-License-Identifier: MIT */
/*
 * gen-job's events in the trace model's order (traces/model.c, cmp_event) before
 * orr__rank_finish() sorts them, which then sorts sorted input: an LSD radix sort of
 * (start, index) keys, the events gathered in that order into a spare buffer, which
 * becomes the rank's (its old one the next spare), and ties of equal start put in order.
 */
#include <stdlib.h>
#include <string.h>

#include "gen-job-internal.h"
#include "../common/banned.h"

#define RADIX_BITS 11

struct gen_job_key {
	uint64_t key; /* start - the rank's first start */
	uint32_t index;
};

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* traces/model.c's order after the start: longer first, place, kind, then the rest. */
static int cmp_tie(const struct orr_event *a, const struct orr_event *b)
{
	int c;

	if ((c = cmp_i64(b->dur_ns, a->dur_ns)) || (c = cmp_i64(a->place, b->place)) ||
	    (c = cmp_i64(a->kind, b->kind)) || (c = cmp_i64(a->correlation, b->correlation)) ||
	    (c = cmp_i64(a->external_id, b->external_id)) || (c = cmp_i64(a->name, b->name)) ||
	    (c = cmp_i64(a->args, b->args)))
		return c;
	return cmp_i64(a->coll, b->coll);
}

/* Sorts a[0..n) by key, using b; returns whichever holds the result. */
static struct gen_job_key *radix(struct gen_job_key *a, struct gen_job_key *b, size_t n,
				 uint64_t max)
{
	size_t count[1u << RADIX_BITS];

	for (unsigned shift = 0; shift < 64 && (max >> shift); shift += RADIX_BITS) {
		struct gen_job_key *t;
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(a[i].key >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < (1u << RADIX_BITS); d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i].key >> shift) & ((1u << RADIX_BITS) - 1)]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	return a;
}

/* Insertion sort of each run of equal starts: runs are short, mostly of one. */
static void order_ties(struct orr_event *ev, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct orr_event e = ev[i];
		size_t k = i;

		while (k > 0 && ev[k - 1].start_ns == e.start_ns && cmp_tie(&ev[k - 1], &e) > 0) {
			ev[k] = ev[k - 1];
			k--;
		}
		ev[k] = e;
	}
}

void gen_job_sort(struct gen_job_sorter *s, struct orr__vec *events)
{
	struct orr_event *ev = events->p, *out;
	struct gen_job_key *keys;
	int64_t min = INT64_MAX, max = INT64_MIN;
	size_t n = events->n, cap;

	if (n > s->cap) {
		s->keys = orr_xrealloc(s->keys, n * 2 * sizeof(*s->keys));
		s->cap = n;
	}
	if (s->spare_cap < events->cap) {
		free(s->spare);
		s->spare = orr_xmalloc(events->cap * sizeof(*ev));
		s->spare_cap = events->cap;
	}
	for (size_t i = 0; i < n; i++) {
		min = ev[i].start_ns < min ? ev[i].start_ns : min;
		max = ev[i].start_ns > max ? ev[i].start_ns : max;
	}
	for (size_t i = 0; i < n; i++)
		s->keys[i] = (struct gen_job_key){ (uint64_t)(ev[i].start_ns - min), (uint32_t)i };
	keys = radix(s->keys, s->keys + n, n, n ? (uint64_t)(max - min) : 0);
	out = s->spare;
	for (size_t i = 0; i < n; i++)
		out[i] = ev[keys[i].index];
	order_ties(out, n);
	/* the sorted copy becomes the rank's table, its old one the next spare */
	cap = events->cap;
	events->p = out;
	events->cap = s->spare_cap;
	s->spare = ev;
	s->spare_cap = cap;
}

void gen_job_sorter_release(struct gen_job_sorter *s)
{
	free(s->keys);
	free(s->spare);
	*s = (struct gen_job_sorter){ 0 };
}
