/* SPDX-License-Identifier: MIT */
/*
 * Bounds on what an input can ask of the model (docs/limits.md): times within
 * +-2^62 ns at import, in every field and for every way a time is written; scale
 * factors and scaled timelines in range; the busy timeline in memory proportional to
 * the tasks however long the step; and lookups that stay fast with many threads or
 * many steps at one time.  Times in the documents are microseconds, as Kineto writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "orrery/replay.h"
#include "test-util.h"
#include "trace-doc.h"

static int import_text(const char *text, struct orr_trace **ret, struct orr_diag *d)
{
	*ret = NULL;
	return orr_trace_import_buffer("bounds.json", text, strlen(text), NULL, ret, d);
}

static void expect_refused(const char *text, int64_t event, const char *what)
{
	struct orr_trace *t;
	struct orr_diag d;

	assert_int_equal(import_text(text, &t, &d), ORR_EMALFORMED);
	assert_null(t);
	assert_string_equal(d.file, "bounds.json");
	assert_int_equal(d.event, event);
	if (!strstr(d.msg, what) || !strstr(d.msg, "2^62"))
		fail_msg("unexpected message: %s", d.msg);
}

#define EV(name, ts, dur)                                                                       \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" ts \
	",\"dur\":" dur "}"

static void test_bounds_times_refused_at_import(void **state)
{
	(void)state;
	/* The reproducer: -9e15 and 9e15 us, within int64_t ns but past 2^62. */
	expect_refused("{\"traceEvents\":[" EV("a", "-9e15", "1") "," EV("b", "9e15", "1") "]}", 0,
		       "kernel 'a': expected a start");
	expect_refused("{\"traceEvents\":[" EV("a", "0", "1") "," EV("b", "5e15", "1") "]}", 1,
		       "kernel 'b': expected a start");
	expect_refused("{\"traceEvents\":[" EV("a", "0", "5e15") "]}", 0, "expected a duration");
	/* Each within, their sum past. */
	expect_refused("{\"traceEvents\":[" EV("a", "4e15", "4e15") "]}", 0, "expected an end");
	/* baseTimeNanoseconds + ts past the bound, without overflowing int64_t. */
	expect_refused("{\"baseTimeNanoseconds\":4611686018427387000,"
		       "\"traceEvents\":[" EV("a", "1000", "1") "]}",
		       0, "expected a start");
	/* The base alone past the bound, the times within. */
	expect_refused("{\"baseTimeNanoseconds\":5000000000000000000,"
		       "\"traceEvents\":[" EV("a", "-1e12", "1") "]}",
		       -1, "expected a base time");
}

static void test_bounds_times_at_the_bound_accepted(void **state)
{
	struct orr_trace *t;
	struct orr_diag d;

	(void)state;
	/* 2^62 ns = 4611686018427387.904 us: the last whole microsecond before it is fine. */
	assert_int_equal(import_text("{\"traceEvents\":[" EV("a", "-4611686018427387", "1") "," EV(
					     "b", "4611686018427386", "1") "]}",
				     &t, &d),
			 0);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 2);
	orr_trace_free(t);
}

static int replay_text(const char *text, const struct orr_scale *scales, size_t n,
		       struct orr_trace **ret_t, struct orr_graph **ret_g,
		       struct orr_replay **ret_r, struct orr_diag *d)
{
	int err = import_text(text, ret_t, d);

	*ret_g = NULL;
	*ret_r = NULL;
	if (!err)
		err = orr_graph_build(*ret_t, NULL, ret_g, d);
	if (!err)
		err = orr_replay_run(*ret_g, &(struct orr_replay_options){ scales, n }, ret_r, d);
	return err;
}

static void release(struct orr_trace *t, struct orr_graph *g, struct orr_replay *r)
{
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

static void test_bounds_scale_out_of_range(void **state)
{
	static const char *one = "{\"traceEvents\":[" EV("a", "0", "1e10") "]}";
	struct orr_scale huge[] = { { "*", 1e30 } }, nan_[] = { { "*", NAN } },
			 neg[] = { { "*", -1 } }, big[] = { { "*", 1e6 } },
			 many[] = { { "*", 1e6 }, { "a", 1e6 }, { "?", 1e6 } };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;

	(void)state;
	assert_int_equal(replay_text(one, huge, 1, &t, &g, &r, &d), -ERANGE);
	assert_non_null(strstr(d.msg, "scale factor"));
	release(t, g, r);
	assert_int_equal(replay_text(one, nan_, 1, &t, &g, &r, &d), -ERANGE);
	release(t, g, r);
	assert_int_equal(replay_text(one, neg, 1, &t, &g, &r, &d), -ERANGE);
	release(t, g, r);
	/* A factor in range, but 1e13 ns x 1e6 is past 2^62. */
	assert_int_equal(replay_text(one, big, 1, &t, &g, &r, &d), -ERANGE);
	assert_non_null(strstr(d.msg, "'a' scaled by"));
	release(t, g, r);
	/* Factors in range whose product overflows a float. */
	assert_int_equal(replay_text(one, many, 3, &t, &g, &r, &d), -ERANGE);
	release(t, g, r);
	/* Durations each within the bound that add up past it. */
	assert_int_equal(replay_text("{\"traceEvents\":[" EV("a", "-4e15", "2e15") "," EV(
					     "b", "-2e15", "2e15") "," EV("c", "0", "2e15") "]}",
				     NULL, 0, &t, &g, &r, &d),
			 -ERANGE);
	assert_non_null(strstr(d.msg, "add up"));
	release(t, g, r);
	/* The largest factor on a short task is fine. */
	assert_int_equal(replay_text("{\"traceEvents\":[" EV("a", "0", "10") "]}", big, 1, &t, &g,
				     &r, &d),
			 0);
	assert_int_equal(orr_replay_end(r, 0) - orr_replay_start(r, 0), INT64_C(10000000000));
	release(t, g, r);
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* The busy L1 of the only step of rank 0. */
static double step_l1(const struct orr_replay *r)
{
	struct orr_replay_step *s;
	size_t n;
	double l1;

	orr_replay_steps(r, 0, &s, &n);
	assert_int_equal(n, 1);
	l1 = orr_replay_busy_l1(r, 0, &s[0]);
	free(s);
	return l1;
}

/* One bin per millisecond of a 10^17 ns step would be 10^11 bins: the sweep needs none. */
static void test_bounds_busy_l1_long_step_bounded_memory(void **state)
{
	struct orr_scale half[] = { { "a", 0.5 } };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;
	long before = max_rss_kb();

	(void)state;
	assert_int_equal(
		replay_text("{\"traceEvents\":[" EV("a", "0", "1") "," EV("b", "1e14", "1") "]}",
			    NULL, 0, &t, &g, &r, &d),
		0);
	assert_true(step_l1(r) == 0);
	release(t, g, r);
	/* 10^11 ns busy, predicted half of it: 50,000 bins of difference. */
	assert_int_equal(replay_text("{\"traceEvents\":[" EV("a", "0", "1e8") "]}", half, 1, &t, &g,
				     &r, &d),
			 0);
	assert_true(fabs(step_l1(r) - 50000) < 1e-9);
	release(t, g, r);
	/*
	 * 10^13 ns, then a 500 ns task: predicted 5 * 10^12 ns earlier, it is busy in the
	 * first 500 ns of the bin the measured one runs through, and the measured one in
	 * the first 500 ns of the last bin: 5 * 10^6 - 1 whole bins, and two cut ones making one.
	 */
	assert_int_equal(replay_text("{\"traceEvents\":[" EV("a", "0", "1e10") "," EV("b", "1e10",
										      "0.5") "]}",
				     half, 1, &t, &g, &r, &d),
			 0);
	assert_true(fabs(step_l1(r) - 5e6) < 1e-6);
	release(t, g, r);
	assert_true(max_rss_kb() - before < 64 * 1024);
}

/*
 * The sweep against the bins it replaces, on overlapping kernels on two streams moved
 * by scaling: every bin's |measured - predicted| added up one by one.
 */
static double brute_l1(const struct orr_replay *r, const struct orr_replay_step *s)
{
	int64_t lm = s->measured_end_ns - s->measured_start_ns;
	int64_t lp = s->predicted_end_ns - s->predicted_start_ns;
	int64_t len = lm > lp ? lm : lp;
	char *m = calloc((size_t)len + 1, 1), *p = calloc((size_t)len + 1, 1);
	const struct orr_graph *g = orr_replay_graph(r);
	double l1 = 0;

	assert_non_null(m);
	assert_non_null(p);
	for (uint32_t k = 0; k < orr_graph_task_count(g); k++) {
		int64_t ms = orr_graph_task_start(g, k), me = orr_graph_task_end(g, k);
		int64_t ps = orr_replay_start(r, k), pe = orr_replay_end(r, k);

		if (orr_graph_tasks(g)[k].kind != ORR_TASK_GPU)
			continue;
		for (int64_t x = ms; x < me; x++)
			if (x >= s->measured_start_ns && x < s->measured_end_ns)
				m[x - s->measured_start_ns] = 1;
		for (int64_t x = ps; x < pe; x++)
			if (x >= s->predicted_start_ns && x < s->predicted_end_ns)
				p[x - s->predicted_start_ns] = 1;
	}
	for (int64_t b = 0; b * ORR_BUSY_BIN_NS < len; b++) {
		int64_t d = 0;

		for (int64_t x = b * ORR_BUSY_BIN_NS; x < (b + 1) * ORR_BUSY_BIN_NS && x < len; x++)
			d += m[x] - p[x];
		l1 += fabs((double)d) / ORR_BUSY_BIN_NS;
	}
	free(m);
	free(p);
	return l1;
}

static void test_bounds_busy_l1_same_as_bins(void **state)
{
	static const struct orr_scale scales[][2] = {
		{ { "k1", 1.7 }, { "k2", 0.3 } },
		{ { "k*", 0.5 }, { "k3", 3 } },
		{ { "k2", 2.5 }, { "none", 1 } },
	};
	struct doc doc = { 0 };

	(void)state;
	for (size_t c = 0; c < 3; c++) {
		struct orr_trace *t;
		struct orr_graph *g;
		struct orr_replay *r;
		struct orr_diag d;
		struct orr_replay_step *s;
		size_t n;

		doc_begin(&doc, -1, 0);
		doc_kernel(&doc, "k1", 7, 100, 700.5, 1, NULL);
		doc_kernel(&doc, "k2", 7, 900, 1300, 2, NULL);
		doc_kernel(&doc, "k3", 8, 500, 2100.25, 3, NULL);
		doc_kernel(&doc, "k1", 8, 3000, 999, 4, NULL);
		doc_kernel(&doc, "k2", 7, 2600, 10, 5, NULL);
		doc_add(&doc, "]}");
		assert_int_equal(orr_trace_import_buffer("l1.json", doc.s, doc.n, NULL, &t, &d), 0);
		assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
		assert_int_equal(
			orr_replay_run(g, &(struct orr_replay_options){ scales[c], 2 }, &r, &d), 0);
		orr_replay_steps(r, 0, &s, &n);
		assert_int_equal(n, 1);
		assert_true(fabs(orr_replay_busy_l1(r, 0, &s[0]) - brute_l1(r, &s[0])) < 1e-9);
		assert_true(orr_replay_busy_l1(r, 0, &s[0]) > 0);
		free(s);
		release(t, g, r);
	}
	free(doc.s);
}

/*
 * 50,000 threads, and 50,000 steps starting at one time: a lookup that scans every
 * thread, or every event at the step's start, takes minutes here instead of a second.
 */
static void test_bounds_many_threads_and_steps_stay_linear(void **state)
{
	enum { N = 50000 };
	struct doc doc = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;
	struct orr_replay_step *s;
	size_t n;

	(void)state;
	doc_begin(&doc, -1, 0);
	for (int i = 0; i < N; i++) {
		doc_region(&doc, "cpu_op", "op", 1000 + i, 100 + i, 5);
		doc_sep(&doc);
		doc_add(&doc,
			"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
			"\"args\":{\"name\":\"t%d\"}}",
			1000 + i, i);
		doc_step(&doc, i, 100, 5);
		doc_sep(&doc);
		doc_add(&doc,
			"{\"ph\":\"X\",\"cat\":\"c%d\",\"name\":\"x\",\"pid\":1,\"tid\":1,"
			"\"ts\":1,\"dur\":1}",
			i);
	}
	doc_add(&doc, "]}");
	assert_int_equal(orr_trace_import_buffer("many.json", doc.s, doc.n, NULL, &t, &d), 0);
	free(doc.s);
	assert_int_equal(orr_trace_get_rank(t, 0)->nplaces, N + 1);
	assert_int_equal(orr_trace_get_rank(t, 0)->nskipped, N);
	assert_string_equal(orr_trace_str(t, orr_trace_get_rank(t, 0)->places[N].name), "t49999");
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	orr_replay_steps(r, 0, &s, &n);
	assert_int_equal(n, N);
	assert_int_equal(s[N - 1].step, N - 1);
	free(s);
	orr_replay_job_steps(r, &s, &n);
	assert_int_equal(n, N);
	free(s);
	release(t, g, r);
}

/* Two ranks with no collective: the cross-rank keys are empty (no qsort(NULL, 0)). */
static void test_bounds_two_ranks_without_communication(void **state)
{
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_replay_step *s;
	struct orr_diag d;
	size_t n;

	for (int k = 0; k < 2; k++) {
		char *path = orr_xasprintf("%s/rank%d.json", (char *)*state, k);
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fprintf(f,
			"{\"distributedInfo\":{\"rank\":%d},\"traceEvents\":[{\"ph\":\"X\","
			"\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":1}]}",
			k);
		assert_int_equal(fclose(f), 0);
		free(path);
	}
	assert_int_equal(import_path(*state, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	orr_replay_job_steps(r, &s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns, 1000);
	free(s);
	release(t, g, r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_times_refused_at_import),
		cmocka_unit_test(test_bounds_times_at_the_bound_accepted),
		cmocka_unit_test(test_bounds_scale_out_of_range),
		cmocka_unit_test(test_bounds_busy_l1_long_step_bounded_memory),
		cmocka_unit_test(test_bounds_busy_l1_same_as_bins),
		cmocka_unit_test(test_bounds_many_threads_and_steps_stay_linear),
		cmocka_unit_test_setup_teardown(test_bounds_two_ranks_without_communication,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
