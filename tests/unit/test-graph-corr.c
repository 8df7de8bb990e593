/* SPDX-License-Identifier: MIT */
/*
 * The graph's map from correlation ids to tasks (graph/build.c): with the ids dense
 * enough for its table and too sparse for it, in order and out of order, an id given
 * twice (its first record, by task, answers) and ids outside the range.  Every answer
 * is checked against a plain walk over the records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "../../graph/internal.h"

/* The task of corr's record of the lowest task, or ORR_NONE: what the map must say. */
static uint32_t walk(const struct orr__corr *v, size_t n, int64_t corr)
{
	uint32_t best = ORR_NONE;

	for (size_t i = 0; i < n; i++)
		if (v[i].corr == corr && (best == ORR_NONE || v[i].task < best))
			best = v[i].task;
	return best;
}

/* Indexes a copy of v[0..n) and asks every id from lo - 3 to hi + 3. */
static void check(const struct orr__corr *v, size_t n, bool want_table)
{
	struct orr__corr_map m = { .v = malloc((n + 1) * sizeof(*v)), .n = n };
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; i < n; i++) {
		m.v[i] = v[i];
		lo = v[i].corr < lo ? v[i].corr : lo;
		hi = v[i].corr > hi ? v[i].corr : hi;
	}
	orr__corr_map_index(&m);
	assert_int_equal(m.at != NULL, want_table);
	for (size_t i = 1; i < n; i++)
		assert_true(m.v[i - 1].corr < m.v[i].corr ||
			    (m.v[i - 1].corr == m.v[i].corr && m.v[i - 1].task < m.v[i].task));
	for (int64_t c = lo - 3; c <= hi + 3; c++)
		assert_int_equal(orr__find_corr(&m, c), walk(v, n, c));
	orr__corr_map_free(&m);
}

static void test_corr_dense(void **state)
{
	/* out of order; id 12 twice, its lower task written second */
	const struct orr__corr v[] = { { 10, 4 }, { 12, 9 }, { 11, 5 }, { 12, 7 },
				       { 14, 2 }, { 13, 8 }, { 16, 1 } };

	(void)state;
	check(v, sizeof(v) / sizeof(v[0]), true);
}

static void test_corr_sparse(void **state)
{
	/* a range of 8 ids a record or more: searched, not tabled */
	const struct orr__corr v[] = { { 3, 1 }, { 40, 2 }, { 40, 0 }, { 27, 3 } };

	(void)state;
	check(v, sizeof(v) / sizeof(v[0]), false);
}

static void test_corr_one_and_none(void **state)
{
	const struct orr__corr v[] = { { 0, 6 } };
	struct orr__corr_map m = { .v = malloc(sizeof(struct orr__corr)), .n = 0 };

	(void)state;
	check(v, 1, true);
	orr__corr_map_index(&m);
	assert_int_equal(orr__find_corr(&m, 0), ORR_NONE);
	orr__corr_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corr_dense),
		cmocka_unit_test(test_corr_sparse),
		cmocka_unit_test(test_corr_one_and_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
