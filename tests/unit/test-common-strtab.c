/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "orrery/common.h"

static void test_strtab_empty_is_id_zero(void **state)
{
	struct orr_strtab *t = orr_strtab_new();

	assert_int_equal(orr_strtab_intern(t, "", 0), ORR_STR_NONE);
	assert_string_equal(orr_strtab_get(t, 0), "");
	assert_int_equal(orr_strtab_count(t), 1);
	orr_strtab_free(t);
}

static void test_strtab_interns_once(void **state)
{
	struct orr_strtab *t = orr_strtab_new();
	uint32_t a = orr_strtab_intern(t, "kernel", 6);
	uint32_t b = orr_strtab_intern(t, "kernelX", 6);

	assert_int_equal(a, b);
	assert_int_not_equal(a, orr_strtab_intern(t, "kern", 4));
	assert_int_equal(orr_strtab_find(t, "kernel", 6), a);
	assert_int_equal(orr_strtab_find(t, "absent", 6), UINT32_MAX);
	assert_string_equal(orr_strtab_get(t, a), "kernel");
	orr_strtab_free(t);
}

static void test_strtab_survives_rehash(void **state)
{
	struct orr_strtab *t = orr_strtab_new();
	char buf[32];

	for (int i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%d", i);
		assert_int_equal(orr_strtab_intern(t, buf, (size_t)n), (uint32_t)i + 1);
	}
	for (int i = 0; i < 20000; i += 997) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		assert_string_equal(orr_strtab_get(t, (uint32_t)i + 1), buf);
	}
	orr_strtab_free(t);
}

static void test_errors_have_names(void **state)
{
	assert_string_equal(orr_errname(ORR_EMALFORMED), "EMALFORMED");
	assert_string_equal(orr_strerror(ORR_ETRUNCATED), "truncated input");
	assert_string_equal(orr_errname(-2), "ENOENT");
}

static void test_diag_format_names_file_and_offset(void **state)
{
	struct orr_diag d;
	char buf[256];

	orr_diag_clear(&d);
	assert_int_equal(orr_diag_set(&d, ORR_EMALFORMED, "r.json", 12, 3, "expected '%c'", ','),
			 ORR_EMALFORMED);
	orr_diag_format(&d, ORR_EMALFORMED, buf, sizeof(buf));
	assert_non_null(strstr(buf, "'r.json'"));
	assert_non_null(strstr(buf, "byte 12"));
	assert_non_null(strstr(buf, "expected ','"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strtab_empty_is_id_zero),
		cmocka_unit_test(test_strtab_interns_once),
		cmocka_unit_test(test_strtab_survives_rehash),
		cmocka_unit_test(test_errors_have_names),
		cmocka_unit_test(test_diag_format_names_file_and_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
