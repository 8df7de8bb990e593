/* SPDX-License-Identifier: MIT */
/* Integers in order without a comparison per step: an LSD radix sort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

#define DIGIT_BITS 11
#define DIGITS     (1u << DIGIT_BITS)

/* a[0, n) into b, stably by the digit at shift of x - lo. */
static void digit_pass(const int64_t *a, int64_t *b, size_t n, int64_t lo, unsigned shift)
{
	size_t count[DIGITS] = { 0 }, sum = 0;

	for (size_t i = 0; i < n; i++)
		count[(((uint64_t)a[i] - (uint64_t)lo) >> shift) & (DIGITS - 1)]++;
	for (size_t d = 0; d < DIGITS; d++) {
		size_t c = count[d];

		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		b[count[(((uint64_t)a[i] - (uint64_t)lo) >> shift) & (DIGITS - 1)]++] = a[i];
}

void orr_sort_i64(int64_t *v, size_t n)
{
	int64_t lo = INT64_MAX, *tmp, *src = v, *dst;
	uint64_t differ = 0;

	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		lo = v[i] < lo ? v[i] : lo;
	/* Any two int64_t differ by less than 2^64: the unsigned difference keeps the order. */
	for (size_t i = 0; i < n; i++)
		differ |= (uint64_t)v[i] - (uint64_t)lo;
	tmp = orr_xmalloc(n * sizeof(*tmp));
	dst = tmp;
	for (unsigned shift = 0; shift < 64 && differ >> shift; shift += DIGIT_BITS) {
		int64_t *t = src;

		digit_pass(src, dst, n, lo, shift);
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}
