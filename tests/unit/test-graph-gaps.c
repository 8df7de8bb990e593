/* SPDX-License-Identifier: MIT */
/*
 * The device's stream gap (graph/launch.c) on a tiny trace written here, with answers
 * worked out by hand: a task queued behind its stream predecessor keeps its own
 * measured gap when it is within the allowance (a copy or set after a kernel, the nodes
 * of a CUDA graph: the front end's time depends on the pair); a longer one is a delay.
 * A stream's first task that started after the next task's call returned (the stream
 * was backed up when the capture began) is no sample of the launch latency.  Times
 * below are microseconds as Kineto writes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/replay.h"
#include "trace-doc.h"

struct run {
	struct orr_graph *g;
	struct orr_replay *r;
};

static void run_ok(struct orr_trace *t, const struct orr_scale *scales, size_t n, struct run *ret)
{
	struct orr_diag diag;
	int err = orr_graph_build(t, &(struct orr_graph_options){ 0 }, &ret->g, &diag);

	if (!err)
		err = orr_replay_run(ret->g,
				     &(struct orr_replay_options){ .scales = scales, .nscales = n },
				     &ret->r, &diag);
	if (err)
		fail_msg("replay failed: %s: %s", orr_errname(err), diag.msg);
}

static void run_free(struct run *r)
{
	orr_replay_free(r->r);
	orr_graph_free(r->g);
}

static int64_t pstart(const struct run *r, const char *name)
{
	for (uint32_t i = 0; i < orr_graph_task_count(r->g); i++)
		if (strcmp(orr_graph_task_name(r->g, i), name) == 0)
			return orr_replay_start(r->r, i);
	fail_msg("no task called '%s'", name);
	return -1;
}

/*
 * Stream 7: A runs [5, 105); B and C, launched long before, queued behind it and
 * started 4 us and 1 us after their predecessors (the device's gap, the lower decile,
 * is 1 us); D starts 5 us after its call on the idle stream (the launch latency, so an
 * allowance of 10 us); E, queued behind D, started 25 us after it: past the allowance,
 * a delay the trace does not explain.
 */
static struct orr_trace *queued(void)
{
	struct doc d = { 0 };
	struct orr_trace *t;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "A", 7, 5, 100, 1, NULL);
	doc_call(&d, "cudaMemsetAsync", 1, 10, 5, 2);
	doc_kernel(&d, "B", 7, 109, 10, 2, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 20, 5, 3);
	doc_kernel(&d, "C", 7, 120, 10, 3, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 200, 5, 4);
	doc_kernel(&d, "D", 7, 205, 10, 4, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 210, 2, 5);
	doc_kernel(&d, "E", 7, 240, 10, 5, NULL);
	t = doc_import(&d, "queued.json");
	free(d.s);
	return t;
}

static void test_queued_task_keeps_its_gap(void **state)
{
	struct orr_trace *t = queued();
	struct orr_scale half = { "A", 0.5 };
	struct orr_graph_stats st;
	struct run r;

	(void)state;
	run_ok(t, NULL, 0, &r);
	/* As measured: B 4 us after A, C 1 us after B (with the device's 1 us gap for
	 * both, B started at 106 and C at 117). */
	assert_int_equal(pstart(&r, "B"), 109 * US);
	assert_int_equal(pstart(&r, "C"), 120 * US);
	assert_int_equal(pstart(&r, "D"), 205 * US);
	/* E's 25 us is a delay, kept and counted, not a gap. */
	assert_int_equal(pstart(&r, "E"), 240 * US);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.delayed, 1);
	assert_int_equal(st.delayed_ns, 24 * US);
	run_free(&r);

	/* A ends at 55: B keeps its 4 us after it, C its 1 us after B. */
	run_ok(t, &half, 1, &r);
	assert_int_equal(pstart(&r, "B"), 59 * US);
	assert_int_equal(pstart(&r, "C"), 70 * US);
	run_free(&r);
	orr_trace_free(t);
}

/*
 * The GPU lags the host: A, the stream's first task in the capture, starts 1 ms after
 * its call, and B, launched at 500, was queued behind it before A started (the stream
 * was backed up: work launched before the capture ran first).  A's 1 ms is no launch
 * latency: with it, B would wait until 1500.  It is a delay the trace does not explain.
 */
static void test_backed_up_first_task_is_no_latency_sample(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph_stats st;
	struct orr_replay_step *s;
	size_t n;
	struct run r;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "A", 7, 1000, 10, 1, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 500, 5, 2);
	doc_kernel(&d, "B", 7, 1011, 10, 2, NULL);
	t = doc_import(&d, "lagging.json");
	free(d.s);

	run_ok(t, NULL, 0, &r);
	assert_int_equal(pstart(&r, "A"), 1000 * US);
	assert_int_equal(pstart(&r, "B"), 1011 * US);
	orr_replay_steps(r.r, 0, &s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns,
			 s[0].measured_end_ns - s[0].measured_start_ns);
	free(s);
	orr_graph_get_stats(r.g, &st);
	assert_int_equal(st.delayed, 1);
	assert_int_equal(st.delayed_ns, 1000 * US);
	run_free(&r);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queued_task_keeps_its_gap),
		cmocka_unit_test(test_backed_up_first_task_is_no_latency_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
