/* SPDX-License-Identifier: MIT */
/*
 * The inference rules for what a trace implies but does not name (docs/replay-method.md):
 * kernels of a CUDA graph without a correlation id, a stream wait whose event record
 * is missing, and a delay nothing in the trace explains.  Tiny traces written here,
 * with answers worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "orrery/replay.h"
#include "trace-doc.h"

struct run {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_graph_stats st;
};

static void run(struct orr_trace *t, const struct orr_scale *scales, size_t n, struct run *ret)
{
	struct orr_diag diag;
	int err;

	*ret = (struct run){ .t = t };
	err = orr_graph_build(t, NULL, &ret->g, &diag);
	if (!err)
		err = orr_replay_run(ret->g,
				     &(struct orr_replay_options){ .scales = scales, .nscales = n },
				     &ret->r, &diag);
	if (err)
		fail_msg("replay failed: %s: %s", orr_errname(err), diag.msg);
	orr_graph_get_stats(ret->g, &ret->st);
}

static void run_free(struct run *r)
{
	orr_replay_free(r->r);
	orr_graph_free(r->g);
}

static uint32_t task(const struct run *r, const char *name)
{
	for (uint32_t i = 0; i < orr_graph_task_count(r->g); i++)
		if (strcmp(orr_graph_task_name(r->g, i), name) == 0)
			return i;
	fail_msg("no task called '%s'", name);
	return ORR_NONE;
}

/* The source of task's D2 edge, with its flags. */
static uint32_t launcher(const struct run *r, uint32_t t, uint8_t *ret_flags)
{
	const struct orr_task *task = &orr_graph_tasks(r->g)[t];
	const struct orr_dep *d = &orr_graph_deps(r->g)[task->first_dep];

	if (!task->ndeps || d->kind != ORR_DEP_LAUNCH)
		return ORR_NONE;
	*ret_flags = d->flags;
	return d->src;
}

/*
 * Stream 7: a graph launch's first node has its correlation, the next two have none;
 * then a kernel of an ordinary launch.  Stream 8: a kernel launched before the trace
 * (no correlation, ahead of an ordinary launch) stays without a launch.  Stream 9: a
 * node without a correlation ahead of its graph launch's first traced node.
 */
static void test_graph_nodes_join_their_launch(void **state)
{
	struct doc d = { 0 };
	struct run r;
	uint8_t flags = 0;
	uint32_t graph;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_kernel(&d, "P", 8, 0, 5, -1, NULL);
	doc_call(&d, "cudaGraphLaunch", 1, 0, 10, 1);
	doc_call(&d, "cudaLaunchKernel", 1, 12, 5, 2);
	doc_call(&d, "cudaLaunchKernel", 1, 18, 5, 3);
	doc_kernel(&d, "G1", 7, 20, 10, 1, NULL);
	doc_kernel(&d, "L", 8, 25, 10, 3, NULL);
	doc_kernel(&d, "G2", 7, 31, 10, -1, NULL);
	doc_kernel(&d, "G3", 7, 42, 10, -1, NULL);
	doc_call(&d, "cudaGraphLaunch", 1, 50, 5, 4);
	doc_kernel(&d, "K", 7, 53, 10, 2, NULL);
	doc_kernel(&d, "X", 9, 60, 5, -1, NULL);
	doc_kernel(&d, "Y", 9, 70, 5, 4, NULL);
	run(doc_import(&d, "graph-nodes.json"), NULL, 0, &r);
	free(d.s);

	assert_int_equal(r.st.graph_nodes, 3);
	assert_int_equal(r.st.unlaunched, 1);
	assert_int_equal(launcher(&r, task(&r, "P"), &flags), ORR_NONE);
	graph = launcher(&r, task(&r, "G1"), &flags);
	assert_true(graph != ORR_NONE && flags == 0); /* by its correlation id */
	assert_int_equal(launcher(&r, task(&r, "G2"), &flags), graph);
	assert_true(flags & ORR_DEP_F_INFERRED);
	assert_int_equal(launcher(&r, task(&r, "G3"), &flags), graph);
	assert_true(flags & ORR_DEP_F_INFERRED);
	graph = launcher(&r, task(&r, "Y"), &flags);
	assert_int_equal(launcher(&r, task(&r, "X"), &flags), graph);
	assert_int_equal(r.st.inferred[ORR_DEP_LAUNCH], 3);
	/* Nodes run in stream order behind their launch: G2 starts when G1 ends. */
	assert_true(orr_replay_start(r.r, task(&r, "G2")) >= orr_replay_end(r.r, task(&r, "G1")));
	run_free(&r);
	orr_trace_free(r.t);
}

/*
 * Two kernels on stream 7 (K1, then Klate launched after it), a stream wait whose
 * cudaEventRecord the trace leaves out, and K2 on stream 8 that starts right when K1
 * ends.  The launch-order guess (Klate) is contradicted by K2 starting before Klate
 * ends; the timing names K1, launched before the wait.
 */
static struct orr_trace *hidden_record(void)
{
	struct doc d = { 0 };
	struct orr_trace *t;

	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_call(&d, "cudaLaunchKernel", 1, 8, 5, 2);
	doc_kernel(&d, "K1", 7, 10, 1000, 1, NULL);
	doc_call(&d, "cudaStreamWaitEvent", 1, 20, 2, 3);
	doc_call(&d, "cudaLaunchKernel", 1, 30, 5, 4);
	doc_kernel(&d, "Klate", 7, 1010, 2000, 2, NULL);
	doc_kernel(&d, "K2", 8, 1012, 10, 4, NULL);
	t = doc_import(&d, "hidden-record.json");
	free(d.s);
	return t;
}

static void test_stream_wait_found_by_timing(void **state)
{
	struct orr_trace *t = hidden_record();
	const struct orr_scale k1_twice = { "K1", 2.0 };
	struct run r;

	(void)state;
	run(t, NULL, 0, &r);
	assert_int_equal(r.st.timed_waits, 1);
	assert_int_equal(r.st.edges[ORR_DEP_CROSS_STREAM], 1);
	assert_int_equal(r.st.inferred[ORR_DEP_CROSS_STREAM], 1);
	assert_int_equal(r.st.delayed, 0);
	assert_int_equal(orr_replay_start(r.r, task(&r, "K2")), 1012 * US);
	run_free(&r);

	/* A longer K1 holds K2 back by as much. */
	run(t, &k1_twice, 1, &r);
	assert_int_equal(orr_replay_start(r.r, task(&r, "K2")), 2012 * US);
	run_free(&r);
	orr_trace_free(t);
}

/* C starts 5 ms after its launch on an idle stream, with nothing else running. */
static void test_unexplained_delay_kept(void **state)
{
	struct doc d = { 0 };
	const struct orr_scale ab_twice[] = { { "A", 2.0 }, { "B", 2.0 } };
	struct orr_trace *t;
	struct run r;

	(void)state;
	doc_begin(&d, -1, 0);
	doc_call(&d, "cudaLaunchKernel", 1, 0, 5, 1);
	doc_kernel(&d, "A", 7, 10, 10, 1, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 30, 5, 2);
	doc_kernel(&d, "B", 7, 40, 10, 2, NULL);
	doc_call(&d, "cudaLaunchKernel", 1, 60, 5, 3);
	doc_kernel(&d, "C", 7, 5070, 10, 3, NULL);
	t = doc_import(&d, "delay.json");
	free(d.s);

	run(t, NULL, 0, &r);
	assert_int_equal(r.st.delayed, 1);
	assert_int_equal(r.st.delayed_ns, 5000 * US);
	assert_int_equal(orr_graph_task_delay(r.g, task(&r, "C")), 5000 * US);
	assert_int_equal(orr_graph_task_delay(r.g, task(&r, "B")), 0);
	assert_int_equal(orr_replay_start(r.r, task(&r, "C")), 5070 * US);
	run_free(&r);

	/* The delay counts from C's last dependency, which the longer kernels leave alone. */
	run(t, ab_twice, 2, &r);
	assert_int_equal(orr_replay_start(r.r, task(&r, "C")), 5070 * US);
	run_free(&r);
	orr_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_nodes_join_their_launch),
		cmocka_unit_test(test_stream_wait_found_by_timing),
		cmocka_unit_test(test_unexplained_delay_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
