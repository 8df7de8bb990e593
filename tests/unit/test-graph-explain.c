/* SPDX-License-Identifier: MIT */
/*
 * The trust signal (orr_graph_unexplained()) on tiny traces written here, with answers
 * worked out by hand: a kernel that starts milliseconds after its launch for no reason
 * the trace shows, two such kernels on two streams at once, a synchronize whose stream
 * cannot be found, and one whose wait is known.  Times below are microseconds as
 * Kineto writes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "orrery/graph.h"
#include "trace-doc.h"

#define ORIGIN 0
#define FAR    (1000000 * US)

static void call(struct doc *d, const char *name, double ts, double dur, int corr)
{
	doc_call(d, name, 1, ts, dur, corr);
}

static void kernel(struct doc *d, const char *name, int stream, double ts, double dur, int corr)
{
	doc_kernel(d, name, stream, ts, dur, corr, NULL);
}

/* A call and its kernel on stream 7 `lat` later, lasting 1 us. */
static void launch(struct doc *d, const char *name, double ts, double lat, int corr)
{
	call(d, "cudaLaunchKernel", ts, 5, corr);
	kernel(d, name, 7, ts + lat, 1, corr);
}

/*
 * Twenty kernels launched onto an idle stream 7 over [0, 200), each 5 us after its
 * call: the device's launch latency, and its allowance (the upper decile), are 5 us.
 */
static void begin(struct doc *d)
{
	doc_begin(d, -1, 0);
	for (int k = 0; k < 20; k++)
		launch(d, "warm", 10 * k, 5, 100 + k);
}

static struct orr_graph *build(struct doc *d, uint32_t skip, struct orr_trace **ret_trace)
{
	struct orr_graph *g = NULL;
	struct orr_diag diag;
	int r;

	*ret_trace = doc_import(d, "explain.json");
	r = orr_graph_build(*ret_trace, &(struct orr_graph_options){ .skip_deps = skip }, &g,
			    &diag);
	if (r)
		fail_msg("graph failed: %s: %s", orr_errname(r), diag.msg);
	free(d->s);
	*d = (struct doc){ 0 };
	return g;
}

static struct orr_unexplained unexplained(const struct orr_graph *g, int64_t from_us, int64_t to_us)
{
	struct orr_unexplained u;

	orr_graph_unexplained(g, 0, from_us * US, to_us * US, &u);
	return u;
}

/*
 * The device's allowance for its launch pipeline (graph/explain.c) is a few launch
 * latencies at most: a task later than that after its last dependency is unexplained.
 */
#define ALLOW_MAX_US (2 * 5)

/*
 * Launched at 300, `late` starts at 5300 on an idle stream: ready at 305 (the call's
 * start plus the launch latency), so [305 + allowance, 5300) is unexplained.  The
 * kernels before it start 5 us after their calls: nothing.
 */
static void test_explain_late_kernel_is_idle(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_unexplained u;

	begin(&d);
	launch(&d, "late", 300, 5000, 9);
	g = build(&d, 0, &t);
	u = unexplained(g, ORIGIN, FAR);
	assert_in_range(u.gpu_idle_ns, (4995 - ALLOW_MAX_US) * US, 4995 * US);
	assert_int_equal(u.cpu_blocked_ns, 0);
	assert_int_equal(u.total_ns, u.gpu_idle_ns);
	/* Windows clip it; before the late kernel's launch there is nothing. */
	assert_int_equal(unexplained(g, ORIGIN, 300).total_ns, 0);
	assert_int_equal(unexplained(g, 1000, 2000).gpu_idle_ns, 1000 * US);
	assert_int_equal(unexplained(g, 5000, 5000).total_ns, 0);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * Two late kernels on streams 7 and 8, idle over [305 + a, 5300) and [315 + a, 5400)
 * for the allowance a: their union once, not the sum.
 */
static void test_explain_two_streams_count_once(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_unexplained u;

	begin(&d);
	launch(&d, "late7", 300, 5000, 9);
	call(&d, "cudaLaunchKernel", 310, 5, 10);
	kernel(&d, "late8", 8, 5400, 1, 10);
	g = build(&d, 0, &t);
	u = unexplained(g, ORIGIN, FAR);
	assert_in_range(u.gpu_idle_ns, (5095 - ALLOW_MAX_US) * US, 5095 * US);
	assert_int_equal(u.total_ns, u.gpu_idle_ns);
	/* Each stream alone: the second one's interval starts 10 us after the first's. */
	assert_int_equal(unexplained(g, 5300, 5400).gpu_idle_ns, 100 * US);
	assert_int_equal(unexplained(g, ORIGIN, 5300).gpu_idle_ns, u.gpu_idle_ns - 100 * US);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* No launch before it: the stream a synchronize waits for cannot be found. */
static void test_explain_sync_without_stream_is_blocked(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_unexplained u;

	doc_begin(&d, -1, 0);
	call(&d, "cudaStreamSynchronize", 0, 100, 1);
	call(&d, "cudaLaunchKernel", 200, 5, 2);
	kernel(&d, "after", 7, 205, 1, 2);
	g = build(&d, 0, &t);
	u = unexplained(g, ORIGIN, FAR);
	assert_int_equal(u.cpu_blocked_ns, 100 * US);
	assert_int_equal(u.gpu_idle_ns, 0);
	assert_int_equal(u.total_ns, 100 * US);
	assert_int_equal(unexplained(g, 50, 1000).cpu_blocked_ns, 50 * US);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * A synchronize that waits for the 1 ms kernel before it: explained.  The kernel after
 * it starts 5 us after its call.  Without D5 the graph no longer knows what the
 * synchronize waited for: its 996 us are unexplained.
 */
static void test_explain_sync_with_wait_is_explained(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;

	for (int skip = 0; skip < 2; skip++) {
		d.n = 0;
		doc_begin(&d, -1, 0);
		call(&d, "cudaLaunchKernel", 0, 5, 1);
		kernel(&d, "gemm", 7, 5, 1000, 1);
		call(&d, "cudaDeviceSynchronize", 10, 996, 2);
		call(&d, "cudaLaunchKernel", 1010, 5, 3);
		kernel(&d, "tail", 7, 1015, 1, 3);
		g = build(&d, skip ? 1u << ORR_DEP_SYNC : 0, &t);
		assert_int_equal(unexplained(g, ORIGIN, FAR).cpu_blocked_ns, skip ? 996 * US : 0);
		assert_int_equal(unexplained(g, ORIGIN, FAR).gpu_idle_ns, 0);
		orr_graph_free(g);
		orr_trace_free(t);
	}
}

/* A blocking copy into pageable memory waits for its copy; an async one does not block. */
static void test_explain_copies(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;

	doc_begin(&d, -1, 0);
	call(&d, "cudaMemcpy", 0, 300, 1);
	doc_sep(&d);
	doc_add(&d, "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> "
		    "Pageable)\", \"pid\": 0, \"tid\": 7, \"ts\": 100, \"dur\": 199, \"args\": "
		    "{\"correlation\": 1, \"stream\": 7, \"device\": 0}}");
	call(&d, "cudaMemcpyAsync", 400, 300, 2); /* no copy in the trace: not blocking */
	call(&d, "cudaMemcpy", 800, 300, 3);      /* synchronous, its copy missing */
	call(&d, "cudaLaunchKernel", 1200, 5, 4);
	kernel(&d, "after", 7, 1205, 1, 4);
	g = build(&d, 0, &t);
	assert_int_equal(unexplained(g, ORIGIN, FAR).cpu_blocked_ns, 300 * US);
	assert_int_equal(unexplained(g, 800, 1100).cpu_blocked_ns, 300 * US);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * A thread's last task delays nothing: a watchdog polling until the capture ends.  The
 * same polls followed by a launch hold that launch back: unexplained.
 */
static void test_explain_trailing_poll_delays_nothing(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;

	for (int more = 0; more < 2; more++) {
		d.n = 0;
		doc_begin(&d, -1, 0);
		call(&d, "cudaLaunchKernel", 0, 5, 1);
		kernel(&d, "k", 7, 5, 1, 1);
		for (int k = 0; k < 3; k++)
			call(&d, "cudaEventQuery", 100 + 100 * k, 2, 2 + k);
		if (more) {
			call(&d, "cudaLaunchKernel", 400, 5, 9);
			kernel(&d, "after", 7, 405, 1, 9);
		}
		g = build(&d, 0, &t);
		assert_int_equal(orr_graph_task_count(g), more ? 5 : 3);
		assert_int_equal(unexplained(g, ORIGIN, FAR).cpu_blocked_ns, more ? 202 * US : 0);
		orr_graph_free(g);
		orr_trace_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_late_kernel_is_idle),
		cmocka_unit_test(test_explain_two_streams_count_once),
		cmocka_unit_test(test_explain_sync_without_stream_is_blocked),
		cmocka_unit_test(test_explain_sync_with_wait_is_explained),
		cmocka_unit_test(test_explain_copies),
		cmocka_unit_test(test_explain_trailing_poll_delays_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
