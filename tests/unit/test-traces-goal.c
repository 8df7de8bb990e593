/* SPDX-License-Identifier: MIT */
/*
 * The default limits admit the run DESIGN.md sizes orrery for (docs/limits.md): 1,024
 * ranks, and 100,000 events in a rank, import with no ORR_MAX_* variable set.  (The
 * run's bytes, 1,024 times a rank of 100,000 events, are checked against the run limit
 * from the size of the rank written here.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "orrery/trace.h"
#include "test-util.h"
#include "trace-doc.h"

static void unset_limits(void)
{
	static const char *const vars[] = { "ORR_MAX_FILE_BYTES", "ORR_MAX_RUN_BYTES",
					    "ORR_MAX_EVENTS",     "ORR_MAX_RANKS",
					    "ORR_MAX_PLACES",     "ORR_MAX_STRING_BYTES",
					    "ORR_MAX_DEPTH",      "ORR_MAX_RATIO" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void write_doc(const char *path, struct doc *d)
{
	FILE *f = fopen(path, "w");

	doc_add(d, "]}");
	assert_non_null(f);
	assert_int_equal(fwrite(d->s, 1, d->n, f), d->n);
	assert_int_equal(fclose(f), 0);
}

static void test_goal_1024_ranks(void **state)
{
	const char *dir = *state;
	struct orr_trace *t;
	struct orr_diag diag;
	struct doc d = { 0 };
	char path[512];

	unset_limits();
	for (int r = 0; r < 1024; r++) {
		doc_begin(&d, r, 1024);
		doc_call(&d, "cudaLaunchKernel", 1, 10, 5, 1);
		doc_kernel(&d, "k", 7, 20, 10, 1, NULL);
		snprintf(path, sizeof(path), "%s/rank-%d.json", dir, r);
		write_doc(path, &d);
	}
	free(d.s);
	if (orr_trace_import(dir, NULL, &t, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(orr_trace_rank_count(t), 1024);
	orr_trace_free(t);
}

static void test_goal_100k_events(void **state)
{
	const char *dir = *state;
	struct orr_trace *t;
	struct orr_diag diag;
	struct doc d = { 0 };
	char path[512];
	struct stat st;

	unset_limits();
	doc_begin(&d, 0, 1024);
	for (int i = 0; i < 50000; i++) {
		doc_call(&d, "cudaLaunchKernel", 1, 10.0 * i, 5, i + 1);
		doc_kernel(&d, "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn", 7,
			   10.0 * i + 6, 3, i + 1, NULL);
	}
	snprintf(path, sizeof(path), "%s/rank-0.json", dir);
	write_doc(path, &d);
	free(d.s);
	if (orr_trace_import(path, NULL, &t, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 100000);
	orr_trace_free(t);
	/* 1,024 such ranks fit the run limit's default, 256 GiB (docs/limits.md). */
	assert_int_equal(stat(path, &st), 0);
	assert_true((uint64_t)st.st_size * 1024 < (UINT64_C(256) << 30));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_goal_1024_ranks, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_goal_100k_events, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
