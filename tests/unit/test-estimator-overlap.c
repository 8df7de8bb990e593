/* SPDX-License-Identifier: MIT */
/*
 * The slowdown of kernels beside a collective: a kernel 1.5 times longer while an NCCL
 * kernel runs on another stream of its GPU gives 1.5; a kernel seen overlapped only
 * once, or beside a collective on its own stream, does not count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "orrery/estimator.h"
#include "test-util.h"
#include "trace-doc.h"

static void test_overlap_slowdown(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_overlap o;
	double ts = 0;

	(void)state;
	doc_begin(&d, 0, 2);
	/* "gemm": 4 alone at 10 us, 4 beside an all-reduce on stream 20 at 15 us. */
	for (int i = 0; i < 4; i++) {
		doc_kernel(&d, "gemm", 7, ts, 10, -1, NULL);
		ts += 20;
	}
	for (int i = 0; i < 4; i++) {
		doc_kernel(&d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, ts, 30, -1, NULL);
		doc_kernel(&d, "gemm", 7, ts + 5, 15, -1, NULL);
		ts += 40;
	}
	/* "norm": overlapped once only; "relu": beside a collective on its own stream. */
	doc_kernel(&d, "norm", 7, ts, 10, -1, NULL);
	doc_kernel(&d, "norm", 7, ts + 20, 10, -1, NULL);
	doc_kernel(&d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, ts + 40, 30, -1, NULL);
	doc_kernel(&d, "norm", 7, ts + 45, 12, -1, NULL);
	ts += 100;
	for (int i = 0; i < 4; i++) {
		doc_kernel(&d, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 9, ts, 30, -1, NULL);
		doc_kernel(&d, "relu", 9, ts + 31, 10, -1, NULL);
		doc_kernel(&d, "relu", 9, ts + 45, 10, -1, NULL);
		ts += 60;
	}
	t = doc_import(&d, "overlap.json");
	orr_overlap_slowdown(orr_trace_get_rank(t, 0), &o);
	assert_int_equal(o.names, 1);
	assert_int_equal(o.kernels_compared, 8);
	assert_int_equal(o.overlapped, 5); /* 4 gemm, 1 norm */
	assert_true(fabs(o.slowdown - 1.5) < 1e-12);
	orr_trace_free(t);
	free(d.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap_slowdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
