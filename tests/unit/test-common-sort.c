/* SPDX-License-Identifier: MIT */
/* orr_sort_i64(): the order qsort() gives, over the whole range of int64_t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/* n values drawn by draw(), sorted both ways. */
static void check(size_t n, uint64_t seed, int64_t (*draw)(uint64_t *))
{
	int64_t *a = calloc(n + 1, sizeof(*a)), *b = calloc(n + 1, sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = draw(&seed);
	orr_sort_i64(a, n);
	qsort(b, n, sizeof(*b), cmp);
	assert_memory_equal(a, b, n * sizeof(*a));
	free(a);
	free(b);
}

static int64_t any(uint64_t *x)
{
	return (int64_t)next(x);
}

static int64_t few(uint64_t *x)
{
	return (int64_t)(next(x) % 5) - 2;
}

static int64_t extremes(uint64_t *x)
{
	static const int64_t v[] = { INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX };

	return v[next(x) % 7];
}

/* Values of a narrow range (correlation ids): fewer passes. */
static int64_t ids(uint64_t *x)
{
	return (int64_t)(next(x) % 1000000);
}

static void test_orders_as_qsort(void **state)
{
	for (size_t n = 0; n < 40; n++)
		check(n, n + 1, any);
	check(100000, 7, any);
	check(100000, 8, few);
	check(10000, 9, extremes);
	check(300000, 10, ids);
}

static void test_sorted_and_reversed(void **state)
{
	int64_t v[1000];

	for (size_t i = 0; i < 1000; i++)
		v[i] = 1000 - (int64_t)i;
	orr_sort_i64(v, 1000);
	for (size_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], (int64_t)i + 1);
	orr_sort_i64(v, 1000);
	for (size_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], (int64_t)i + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orders_as_qsort),
		cmocka_unit_test(test_sorted_and_reversed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
