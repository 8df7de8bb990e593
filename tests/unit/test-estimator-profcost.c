/* SPDX-License-Identifier: MIT */
/*
 * The profiler's cost: the options a Kineto trace shows (ops with "External id", their
 * shapes, "Call stack" or python_function, "[memory]", "flops"), the measured overhead
 * they select, and the launch threads' time per step with the profiler's part of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "orrery/estimator.h"
#include "test-util.h"
#include "trace-doc.h"

#define BASE (ORR_PROF_CPU | ORR_PROF_CUDA)

/* An op on thread 1 with its own args (JSON members after "External id"). */
static void op_with(struct doc *d, const char *name, double ts, double dur, const char *args)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": 1%s}}",
		name, ts, dur, args);
}

/* A trace of one op (with args `args`) and one launch, plus `more` (raw events). */
static void options_of(const char *args, const char *more, struct orr_prof_cost *ret)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	int corr = 1;

	doc_begin(&d, 0, 1);
	op_with(&d, "aten::add", 0, 10, args);
	doc_launch(&d, "add_kernel", 2, 3, &corr);
	if (more) {
		doc_sep(&d);
		doc_add(&d, "%s", more);
	}
	t = doc_import(&d, "options.json");
	orr_prof_cost_find(t, ret);
	orr_trace_free(t);
	free(d.s);
}

static void test_options(void **state)
{
	struct orr_prof_cost c;
	char buf[128];

	(void)state;
	options_of("", NULL, &c);
	assert_int_equal(c.options, BASE);
	assert_false(c.exact); /* measured with record_shapes only */
	assert_int_equal(c.measured_options, BASE | ORR_PROF_RECORD_SHAPES);
	assert_true(c.op_ns > 0);
	assert_non_null(c.source);

	options_of(", \"Input Dims\": [[4, 4]], \"Input type\": [\"float\"]", NULL, &c);
	assert_int_equal(c.options, BASE | ORR_PROF_RECORD_SHAPES);
	assert_true(c.exact);
	orr_prof_options_format(c.options, buf, sizeof(buf));
	assert_string_equal(buf, "cpu, cuda, record_shapes");

	options_of(", \"Call stack\": \"train.py(12): step\"", NULL, &c);
	assert_int_equal(c.options, BASE | ORR_PROF_WITH_STACK);
	options_of("",
		   "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(12): step\","
		   " \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 20, \"args\": {\"Python id\": 3}}",
		   &c);
	assert_int_equal(c.options, BASE | ORR_PROF_WITH_STACK);
	options_of(", \"flops\": 128", NULL, &c);
	assert_int_equal(c.options, BASE | ORR_PROF_WITH_FLOPS);
	options_of("",
		   "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": "
		   "\"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": {\"Total "
		   "Allocated\": 4096, \"Total Reserved\": 8192, \"Device Type\": 1, \"Device "
		   "Id\": 0, \"Bytes\": 4096}}",
		   &c);
	assert_int_equal(c.options, BASE | ORR_PROF_MEMORY);
	orr_prof_options_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	assert_string_equal(orr_prof_option_name(ORR_PROF_WITH_STACK), "with_stack");
	assert_null(orr_prof_option_name(BASE));
}

/*
 * An execution trace beside the profiler's, linked to its first op: the
 * ExecutionTraceObserver ran in the job's process (the same pid as the op's thread, or
 * none written), and its cost is added to each op in the span it recorded (the first),
 * not to one after it (the observer records a step of a capture that holds more).  One
 * of another process (pid 9) links by name alone and is not the job's: no option.
 */
static void test_options_execution_trace(void **state)
{
	const char *dir = *state;
	char *kp = orr_xasprintf("%s/rank-0.json", dir),
	     *ep = orr_xasprintf("%s/rank-0.et.json", dir);
	/* the schema and pid of each: the later schema costs more per op (profiler-cost.c) */
	static const char *const ets[] = {
		"\"1.0.1\", \"pid\": 1",
		"\"1.0.1\"",
		"\"1.1.0-chakra.0.0.4\", \"pid\": 1",
		"\"1.0.1\", \"pid\": 9",
	};
	struct orr_prof_cost plain, c;
	double schema_10 = 0;
	struct doc d = { 0 };
	int corr = 1;

	options_of(", \"Input Dims\": [[4, 4]], \"Input type\": [\"float\"]", NULL, &plain);
	doc_begin(&d, 0, 1);
	op_with(&d, "aten::add", 0, 10, ", \"Input Dims\": [[4, 4]], \"Input type\": [\"float\"]");
	doc_launch(&d, "add_kernel", 2, 3, &corr);
	op_with(&d, "aten::mul", 100, 10, "");
	doc_add(&d, "]}");
	write_text_file(kp, d.s);
	for (size_t i = 0; i < 4; i++) {
		char *et = orr_xasprintf("{\"schema\": %s, \"nodes\": [{\"name\": "
					 "\"aten::add\", \"id\": 3, \"parent\": 2}]}",
					 ets[i]);
		struct orr_trace *t = NULL;
		struct orr_diag diag;
		const struct orr_rank *r;
		int ops = 0;

		write_text_file(ep, et);
		assert_int_equal(orr_trace_import(dir, NULL, &t, &diag), 0);
		r = orr_trace_get_rank(t, 0);
		assert_int_equal(r->et->linked, 1);
		orr_prof_cost_find(t, &c);
		assert_true(c.exact);
		assert_true(c.op_ns == plain.op_ns);
		for (size_t k = 0; k < r->nevents; k++) {
			const struct orr_event *e = &r->events[k];
			bool add = !strcmp(orr_trace_str(t, e->name), "aten::add");

			if (e->kind != ORR_EVENT_OP)
				continue;
			ops++;
			assert_true(orr_prof_cost_event_ns(&c, r, e) ==
				    c.op_ns + (add ? c.observer_ns : 0));
		}
		assert_int_equal(ops, 2);
		if (i < 3) {
			assert_int_equal(c.options, plain.options | ORR_PROF_EXECUTION_TRACE);
			assert_true(c.observer_ns > 0);
			assert_non_null(c.observer_source);
			if (i < 2)
				schema_10 = c.observer_ns;
			else
				assert_true(c.observer_ns > schema_10);
		} else {
			assert_int_equal(c.options, plain.options);
			assert_true(c.observer_ns == 0);
			assert_null(c.observer_source);
		}
		orr_trace_free(t);
		free(et);
	}
	assert_string_equal(orr_prof_option_name(ORR_PROF_EXECUTION_TRACE), "execution_trace");
	free(d.s);
	free(kp);
	free(ep);
}

/* Ops without "External id" (NVTX ranges) and no ops at all: no profiler, no cost. */
static void test_not_the_profiler(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_prof_cost c;
	int corr = 1;

	(void)state;
	doc_begin(&d, 0, 1);
	doc_region(&d, "cpu_op", "aten::add", 1, 0, 10);
	doc_launch(&d, "add_kernel", 2, 3, &corr);
	t = doc_import(&d, "nvtx.json");
	orr_prof_cost_find(t, &c);
	assert_int_equal(c.options, 0);
	assert_null(c.source);
	assert_true(c.op_ns == 0 && c.call_ns == 0);
	orr_trace_free(t);
	free(d.s);
}

/*
 * Launches at 10, 110 and 210 us inside one step, ops between them: 200 us of launch
 * thread per step; the ops and calls from the first launch up to the last are what the
 * profiler added to (4 ops, 2 calls: the last launch closes the span).
 */
static void test_launch_time(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag diag;
	struct orr_prof_cost c;
	struct orr_launch_time lt;
	int corr = 1;

	(void)state;
	doc_begin(&d, 0, 1);
	doc_step(&d, 1, 0, 400);
	for (int i = 0; i < 3; i++) {
		doc_op(&d, "aten::mm", 5 + 100 * i, 10, "[[8, 8], [8, 8]]",
		       "[\"float\", \"float\"]");
		doc_launch(&d, "gemm", 10 + 100 * i, 3, &corr);
		if (i < 2)
			doc_op(&d, "aten::relu", 50 + 100 * i, 10, "[[8, 8]]", "[\"float\"]");
	}
	t = doc_import(&d, "launch.json");
	if (orr_graph_build(t, NULL, &g, &diag))
		fail_msg("graph: %s", diag.msg);
	orr_prof_cost_find(t, &c);
	assert_true(c.exact);
	orr_launch_time_measure(g, &c, &lt);
	assert_true(fabs(lt.step_ns - 200e3) < 1);
	assert_true(lt.ops == 4 && lt.calls == 2);
	assert_true(fabs(lt.profiler_ns - (4 * c.op_ns + 2 * c.call_ns)) < 1e-6);
	/* per event: an op's and a call's, nothing for a kernel */
	for (size_t i = 0; i < orr_trace_get_rank(t, 0)->nevents; i++) {
		const struct orr_event *e = &orr_trace_get_rank(t, 0)->events[i];
		double want = e->kind == ORR_EVENT_OP        ? c.op_ns
			      : e->kind == ORR_EVENT_RUNTIME ? c.call_ns
							     : 0;

		assert_true(orr_prof_cost_event_ns(&c, orr_trace_get_rank(t, 0), e) == want);
	}
	/* no profiler: nothing removed */
	c.op_ns = c.call_ns = 0;
	orr_launch_time_measure(g, &c, &lt);
	assert_true(lt.profiler_ns == 0 && fabs(lt.step_ns - 200e3) < 1);
	orr_graph_free(g);
	orr_trace_free(t);
	free(d.s);
}

/* A launch at ts on thread tid (its kernel on stream 7). */
static void launch_on(struct doc *d, int tid, double ts, int *corr)
{
	doc_call(d, "cudaLaunchKernel", tid, ts, 1, *corr);
	doc_kernel(d, "k", 7, ts + 2, 3, *corr, NULL);
	(*corr)++;
}

/*
 * Eager PyTorch's backward: the main thread launches the forward (10, 110), waits in
 * backward() while autograd's thread launches the pass (150, 250, 350), then launches
 * the optimizer (390).  The host launched over [10, 390): 380 us, not the threads' sum
 * (main 380 + autograd 200); a blocking call of 40 us on autograd's thread inside the
 * main thread's wait is no launch time of either.  Without the overlap, the sum.
 */
static void test_launch_time_threads(void **state)
{
	static const struct {
		double main_at[3], other_at[3], sync_at, want_us;
	} cases[] = {
		{ { 10, 110, 390 }, { 150, 250, 350 }, -1, 380 },
		{ { 10, 110, 390 }, { 150, 250, 350 }, 200, 380 },
		/* the other thread launches after the main thread's last launch */
		{ { 10, 110, 130 }, { 150, 250, 350 }, 200, 120 + 160 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doc d = { 0 };
		struct orr_trace *t;
		struct orr_graph *g;
		struct orr_diag diag;
		struct orr_prof_cost c = { 0 };
		struct orr_launch_time lt;
		int corr = 1;

		doc_begin(&d, 0, 1);
		doc_step(&d, 1, 0, 400);
		for (int k = 0; k < 3; k++) {
			launch_on(&d, 1, cases[i].main_at[k], &corr);
			launch_on(&d, 2, cases[i].other_at[k], &corr);
		}
		if (cases[i].sync_at >= 0)
			doc_call(&d, "cudaStreamSynchronize", 2, cases[i].sync_at, 40, corr++);
		t = doc_import(&d, "threads.json");
		if (orr_graph_build(t, NULL, &g, &diag))
			fail_msg("graph: %s", diag.msg);
		orr_launch_time_measure(g, &c, &lt);
		if (fabs(lt.step_ns - cases[i].want_us * 1e3) > 1)
			fail_msg("case %zu: %.0f ns, want %.0f us", i, lt.step_ns,
				 cases[i].want_us);
		orr_graph_free(g);
		orr_trace_free(t);
		free(d.s);
	}
}

/*
 * orr_launch_stalls() of such a trace: want_us in all, each rank's on the launch that
 * ends its stalled interval (the time before it), as much as the rank stalled there.
 */
static void check_stalls(const struct orr_graph *g, size_t i, double want_us, const int *at,
			 const double *by)
{
	double total, sum = 0;
	float *st = orr_launch_stalls(g, &total);

	assert_non_null(st);
	for (uint32_t t = 0; t < orr_graph_task_count(g); t++) {
		uint32_t r = orr_graph_procs(g)[orr_graph_tasks(g)[t].proc].rank;
		double start_us = (double)orr_graph_task_start(g, t) / 1e3;

		sum += st[t];
		if (st[t] > 0 && (fabs(start_us - (10 + 100 * (at[r] + 1) + by[r])) > 0.01 ||
				  fabs(st[t] - by[r] * 1e3) > 1))
			fail_msg("case %zu: %.0f ns of stalls on the task at %.3f us of rank %u", i,
				 (double)st[t], start_us, r);
	}
	if (fabs(total - want_us * 1e3) > 1 || fabs(sum - total) > 1)
		fail_msg("case %zu: stalls %.0f ns (on the tasks %.0f), want %.0f us", i, total,
			 sum, want_us);
	free(st);
}

/*
 * Ranks running the same program: five launches 100 us apart on each, except where a
 * rank's thread stalls (interval `at` of its four `by` us longer).  With 3 or more such
 * ranks each interval counts at most the ranks' median of it, and the rest is the
 * stalls'; with two, or where a rank launches something else or runs an op its peers do
 * not, nothing is removed against it.  The rank reported is the slowest without its
 * stalls (the first of equals).
 */
static void test_launch_time_stalls(void **state)
{
	static const struct {
		int ranks;
		int at[4];
		double by[4];
		bool other_name; /* rank 0's last launch another call: not the same program */
		bool extra_op;   /* rank 0 runs an op in its interval `at`: nor is that */
		double job_us, stall_us;
		size_t peers;
		double stalls_us; /* orr_launch_stalls(): every rank's */
	} cases[] = {
		/* one rank of four stalls 30 us: every rank's job is 400 us */
		{ 4, { 0, 0, 2, 0 }, { 0, 0, 30, 0 }, false, false, 400, 0, 4, 30 },
		/* each stalls 50 us in another interval: 50 of each rank's 450 are stalls */
		{ 4, { 0, 1, 2, 3 }, { 50, 50, 50, 50 }, false, false, 400, 50, 4, 200 },
		/* two ranks cannot tell a stall from work */
		{ 2, { 0, 1, 0, 0 }, { 0, 80, 0, 0 }, false, false, 480, 0, 0, 0 },
		/* rank 0 runs another program, kept whole; ranks 1-3 are three peers */
		{ 4, { 0, 0, 2, 0 }, { 70, 0, 40, 0 }, true, false, 470, 0, 0, 40 },
		/* rank 0's 50 us longer interval holds an op of its own: work, kept */
		{ 4, { 1, 0, 2, 0 }, { 50, 0, 30, 0 }, false, true, 450, 0, 0, 30 },
	};
	const char *dir = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doc d = { 0 };
		struct orr_trace *t = NULL;
		struct orr_graph *g;
		struct orr_diag diag;
		struct orr_prof_cost c = { 0 };
		struct orr_launch_time lt;
		char sub[PATH_MAX];

		snprintf(sub, sizeof(sub), "%s/case-%zu", dir, i);
		assert_int_equal(mkdir(sub, 0700), 0);
		for (int r = 0; r < cases[i].ranks; r++) {
			char *path = orr_xasprintf("%s/rank-%d.json", sub, r);
			FILE *f;
			int corr = 1;

			doc_begin(&d, r, cases[i].ranks);
			doc_step(&d, 1, 0, 700);
			for (int k = 0; k < 5; k++) {
				double at =
					10 + 100 * k + (k > cases[i].at[r] ? cases[i].by[r] : 0);

				doc_call(&d,
					 r == 0 && cases[i].other_name && k == 4
						 ? "cudaLaunchKernelExC"
						 : "cudaLaunchKernel",
					 1, at, 1, corr);
				doc_kernel(&d, "k", 7, at + 2, 3, corr, NULL);
				corr++;
				if (r == 0 && cases[i].extra_op && k == cases[i].at[0])
					doc_op(&d, "load", at + 20, 40, NULL, NULL);
			}
			doc_add(&d, "]}");
			assert_non_null(f = fopen(path, "w"));
			assert_int_equal(fwrite(d.s, 1, d.n, f), d.n);
			assert_int_equal(fclose(f), 0);
			free(path);
		}
		if (orr_trace_import(sub, NULL, &t, &diag))
			fail_msg("case %zu: import: %s", i, diag.msg);
		if (orr_graph_build(t, NULL, &g, &diag))
			fail_msg("case %zu: graph: %s", i, diag.msg);
		orr_launch_time_measure(g, &c, &lt);
		if (fabs(lt.step_ns - lt.stall_ns - cases[i].job_us * 1e3) > 1 ||
		    fabs(lt.stall_ns - cases[i].stall_us * 1e3) > 1 || lt.peers != cases[i].peers)
			fail_msg("case %zu: %.0f ns, %.0f of it stalls, %zu peers; want %.0f us "
				 "without stalls, %.0f of stalls, %zu peers",
				 i, lt.step_ns, lt.stall_ns, lt.peers, cases[i].job_us,
				 cases[i].stall_us, cases[i].peers);
		check_stalls(g, i, cases[i].stalls_us, cases[i].at, cases[i].by);
		orr_graph_free(g);
		orr_trace_free(t);
		free(d.s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test_setup_teardown(test_options_execution_trace, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test(test_not_the_profiler),
		cmocka_unit_test(test_launch_time),
		cmocka_unit_test(test_launch_time_threads),
		cmocka_unit_test_setup_teardown(test_launch_time_stalls, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
