/* SPDX-License-Identifier: MIT */
/*
 * The names `orrery critical-path` lists CPU time under (cli/op-names.c): the innermost
 * op running on the thread at a measured moment, found however many ops of the thread
 * ended before it (a walk back over them, capped at 100,000, made a long thread
 * quadratic and then gave the wrong name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>

#include "orrery/graph.h"
#include "orrery/analysis.h"
#include "trace-doc.h"

/* CPU seconds of this process so far. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The graph's only CPU task (the trace's one runtime call). */
static uint32_t the_call(const struct orr_graph *g)
{
	for (uint32_t k = 0; k < orr_graph_task_count(g); k++)
		if (orr_graph_tasks(g)[k].kind == ORR_TASK_CPU)
			return k;
	fail_msg("no CPU task");
	return ORR_NONE;
}

static const char *name_at(const struct orr_trace *t, const struct orr_op_names *n, uint32_t task,
			   double at_us)
{
	return orr_trace_str(t, orr_op_name_at(n, task, (int64_t)(at_us * US)));
}

/*
 * An op `outer` over 150,000 short ops that all end before a call: 50,000 moments
 * after them are in `outer`.  Walking back over the short ops would take 7.5e9 steps.
 */
static void test_op_names_innermost_past_many_ended_ops(void **state)
{
	enum { N = 150000, M = 50000 };
	struct doc doc = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag d;
	struct orr_op_names *n;
	uint32_t call;
	double t0;

	(void)state;
	doc_begin(&doc, -1, 0);
	doc_region(&doc, "cpu_op", "outer", 1, 0, 4 * N);
	for (int i = 0; i < N; i++)
		doc_region(&doc, "cpu_op", i % 2 ? "odd" : "even", 1, 1 + 2 * i, 1);
	doc_region(&doc, "user_annotation", "late", 1, 3 * N, 10);
	doc_call(&doc, "cudaLaunchKernel", 1, 3 * N + 100, 5, 1);
	doc_kernel(&doc, "k", 7, 3 * N + 200, 5, 1, NULL);
	t = doc_import(&doc, "ops.json");
	free(doc.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	call = the_call(g);
	n = orr_op_names_new(g);
	t0 = cpu_s();
	for (int k = 0; k < M; k++)
		assert_string_equal(name_at(t, n, call, 2 * N + 10 + k), "outer");
	/* Linear walks take minutes here; the tree a few tens of milliseconds. */
	assert_true(cpu_s() - t0 < 5);
	assert_string_equal(name_at(t, n, call, 1.5), "even");
	assert_string_equal(name_at(t, n, call, 3.5), "odd");
	assert_string_equal(name_at(t, n, call, 2 * N + 0.5), "outer");
	assert_string_equal(name_at(t, n, call, 3 * N + 5), "late");
	/* Before the first op and after `outer`: outside every op, no name. */
	assert_int_equal(orr_op_name_at(n, call, -1 * US), ORR_STR_NONE);
	assert_int_equal(orr_op_name_at(n, call, (4 * N + 1) * US), ORR_STR_NONE);
	orr_op_names_free(n);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Nested and overlapping ops: the one that started last and still runs is named. */
static void test_op_names_innermost_of_nested(void **state)
{
	struct doc doc = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag d;
	struct orr_op_names *n;
	uint32_t call;

	(void)state;
	doc_begin(&doc, -1, 0);
	doc_region(&doc, "cpu_op", "a", 1, 0, 100);
	doc_region(&doc, "cpu_op", "b", 1, 10, 20);
	doc_region(&doc, "cpu_op", "c", 1, 15, 2);
	doc_region(&doc, "cpu_op", "d", 1, 25, 50);
	doc_step(&doc, 0, 0, 200);
	doc_region(&doc, "cpu_op", "other thread", 2, 0, 200);
	doc_call(&doc, "cudaLaunchKernel", 1, 150, 5, 1);
	doc_kernel(&doc, "k", 7, 160, 5, 1, NULL);
	t = doc_import(&doc, "nested.json");
	free(doc.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	call = the_call(g);
	n = orr_op_names_new(g);
	assert_string_equal(name_at(t, n, call, 5), "a");
	assert_string_equal(name_at(t, n, call, 16), "c");
	assert_string_equal(name_at(t, n, call, 17), "b");
	assert_string_equal(name_at(t, n, call, 27), "d"); /* b still runs, d started later */
	assert_string_equal(name_at(t, n, call, 30), "d");
	assert_string_equal(name_at(t, n, call, 80), "a");
	/* Step annotations name nothing; other threads' ops neither. */
	assert_int_equal(orr_op_name_at(n, call, 120 * US), ORR_STR_NONE);
	orr_op_names_free(n);
	orr_graph_free(g);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_names_innermost_past_many_ended_ops),
		cmocka_unit_test(test_op_names_innermost_of_nested),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
