/* SPDX-License-Identifier: MIT */
/*
 * Kineto times (traces/kineto/scan.c, orr__scan_us_to_ns()): microseconds as written to
 * integer nanoseconds, the short form read in 64 bits and every other form in 128, with
 * one rounding rule: truncated to tens of nanoseconds, then rounded half up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "../../traces/kineto/scan.h"

static int64_t ns_of(const char *s)
{
	int64_t ns = -42;

	assert_true(orr__scan_us_to_ns(s, strlen(s), &ns));
	return ns;
}

static bool refused(const char *s)
{
	int64_t ns;

	return !orr__scan_us_to_ns(s, strlen(s), &ns);
}

static void test_forms(void **state)
{
	assert_int_equal(ns_of("5183870772.020"), 5183870772020LL);
	assert_int_equal(ns_of("1707417525512145"), 1707417525512145000LL);
	assert_int_equal(ns_of("17.558"), 17558);
	assert_int_equal(ns_of("-1.5"), -1500);
	assert_int_equal(ns_of("0"), 0);
	assert_int_equal(ns_of("12.0 \n"), 12000);
	/* the general form: exponents, a lone dot's side, more than 18 digits */
	assert_int_equal(ns_of("1.2e3"), 1200000);
	assert_int_equal(ns_of("1E-3"), 1);
	assert_int_equal(ns_of(".5"), 500);
	assert_int_equal(ns_of("12."), 12000);
	assert_int_equal(ns_of("9223372036854775.807"), INT64_MAX);
	assert_int_equal(ns_of("0.0000000000000000000001"), 0);
}

static void test_rounding(void **state)
{
	assert_int_equal(ns_of("12.3456"), 12346);
	assert_int_equal(ns_of("12.3454"), 12345);
	/* truncated to tens of ns first: .34549 is 12345.49 ns, 12345 */
	assert_int_equal(ns_of("12.34549"), 12345);
	assert_int_equal(ns_of("12.34559"), 12346);
	assert_int_equal(ns_of("-0.0005"), -1);
	assert_int_equal(ns_of("0.000999999"), 1);
	assert_int_equal(ns_of("0.0004999999999"), 0);
}

static void test_refusals(void **state)
{
	assert_true(refused(""));
	assert_true(refused("-"));
	assert_true(refused("."));
	assert_true(refused("1.2.3"));
	assert_true(refused("+5"));
	assert_true(refused("5x"));
	assert_true(refused(" 5"));
	assert_true(refused("9223372036854775.808"));
	assert_true(refused("999999999999999999"));
	assert_true(refused("1e400"));
}

/* The short form against the general one: the same digits with an exponent of 0. */
static void test_short_form_agrees(void **state)
{
	uint64_t x = 88172645463325252ULL;

	for (int i = 0; i < 200000; i++) {
		char a[64], b[72];
		int digits, point;
		size_t n = 0;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		digits = 1 + (int)(x % 18);
		point = (int)((x >> 8) % (uint64_t)(digits + 1));
		if (x >> 63)
			a[n++] = '-';
		for (int d = 0; d < digits; d++) {
			if (d == point && point > 0)
				a[n++] = '.';
			a[n++] = (char)('0' + (x >> (10 + 2 * d)) % 10);
		}
		a[n] = '\0';
		snprintf(b, sizeof(b), "%se0", a);
		{
			int64_t fast = -7, slow = -9;
			bool ok_fast = orr__scan_us_to_ns(a, n, &fast);
			bool ok_slow = orr__scan_us_to_ns(b, strlen(b), &slow);

			assert_int_equal(ok_fast, ok_slow);
			if (ok_fast)
				assert_int_equal(fast, slow);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_short_form_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
