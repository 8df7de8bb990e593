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
#include <time.h>

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
		err = orr_replay_run(*ret_g,
				     &(struct orr_replay_options){ .scales = scales, .nscales = n },
				     ret_r, d);
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
		assert_int_equal(orr_replay_run(g,
						&(struct orr_replay_options){ .scales = scales[c],
									      .nscales = 2 },
						&r, &d),
				 0);
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

/*
 * The shapes below take seconds to minutes where a lookup scans every step, stream,
 * task or rank.  What each tests is timed against the import of its document, linear
 * work on the same machine and build (sanitizers slow both): it must cost less than
 * LINEAR_FACTOR times as much, plus a little for fixed costs.
 */
#define LINEAR_FACTOR  4.0
#define LINEAR_SLACK_S 0.05

/* CPU seconds since *t, which becomes now. */
static double lap(double *t)
{
	struct timespec ts;
	double now, d;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	d = now - *t;
	*t = now;
	return d;
}

/* What took cost_s against the linear work `ref` that took ref_s, at most factor times. */
static void expect_within(const char *what, double cost_s, const char *ref, double ref_s,
			  double factor)
{
	if (getenv("ORR_TEST_VERBOSE"))
		fprintf(stderr, "%s: %.3f s, %s %.3f s\n", what, cost_s, ref, ref_s);
	if (cost_s > factor * ref_s + LINEAR_SLACK_S)
		fail_msg("%s took %.3f s of CPU, %s %.3f s", what, cost_s, ref, ref_s);
}

static void expect_linear(const char *what, double cost_s, const char *ref, double ref_s)
{
	expect_within(what, cost_s, ref, ref_s, LINEAR_FACTOR);
}

static struct orr_trace *import_doc(struct doc *doc, const struct orr_import_options *o)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;

	if (orr_trace_import_buffer("shape.json", doc->s, doc->n, o, &t, &d))
		fail_msg("import: %s", d.msg);
	free(doc->s);
	*doc = (struct doc){ 0 };
	return t;
}

/*
 * 30,000 steps with a kernel each: every step's breakdown and busy L1 from the rank's
 * timelines, sorted once, not from a pass over every task per step; the same answers
 * as the one-window functions.
 */
static void test_bounds_many_steps_with_kernels_stay_linear(void **state)
{
	enum { N = 30000 };
	struct doc doc = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;
	struct orr_replay_step *s;
	struct orr_gpu_timeline *m, *p;
	struct orr_breakdown b, one;
	int64_t compute = 0;
	double t0 = 0, import_s;
	size_t n;

	(void)state;
	doc_begin(&doc, -1, 0);
	for (int i = 0; i < N; i++) {
		doc_step(&doc, i, 10 * i, 10);
		doc_call(&doc, "cudaLaunchKernel", 1, 10 * i + 1, 1, i + 1);
		doc_kernel(&doc, "k", 7, 10 * i + 3, 2, i + 1, NULL);
	}
	doc_add(&doc, "]}");
	lap(&t0);
	t = import_doc(&doc, NULL);
	import_s = lap(&t0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	orr_replay_steps(r, 0, &s, &n);
	assert_int_equal(n, N);
	lap(&t0);
	m = orr_gpu_timeline_new(r, 0, false);
	p = orr_gpu_timeline_new(r, 0, true);
	for (size_t k = 0; k < n; k++) {
		orr_gpu_timeline_breakdown(m, s[k].measured_start_ns, s[k].measured_end_ns, &b);
		compute += b.exposed_compute_ns;
		assert_true(orr_gpu_timeline_busy_l1(m, p, &s[k]) >= 0);
		orr_gpu_timeline_breakdown(p, s[k].predicted_start_ns, s[k].predicted_end_ns, &b);
	}
	assert_int_equal(compute, (int64_t)N * 2 * US);
	expect_linear("breakdowns and busy L1s", lap(&t0), "the import", import_s);
	for (size_t k = 0; k < n; k += n / 3) {
		orr_gpu_timeline_breakdown(p, s[k].predicted_start_ns, s[k].predicted_end_ns, &b);
		orr_replay_breakdown(r, 0, true, s[k].predicted_start_ns, s[k].predicted_end_ns,
				     &one);
		assert_memory_equal(&b, &one, sizeof(b));
		assert_true(orr_gpu_timeline_busy_l1(m, p, &s[k]) ==
			    orr_replay_busy_l1(r, 0, &s[k]));
	}
	orr_gpu_timeline_free(m);
	orr_gpu_timeline_free(p);
	free(s);
	release(t, g, r);
}

/*
 * 30,000 streams of one kernel each beside a long kernel, and 15,000 kernels of one more
 * stream that started late, each held by the long one: which kernel ran when a late one
 * started is found by one sweep, not by a look at every stream per late kernel.  Then
 * as many streams on as many devices: each stream's device latencies by a search.
 */
static void test_bounds_many_streams_stay_linear(void **state)
{
	enum { N = 30000 };
	struct orr_import_options o = { .max_places = N + 16 };
	struct orr_graph_stats st;
	struct doc doc = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag d;
	char dev[32];
	double t0 = 0, import_s;

	(void)state;
	doc_begin(&doc, -1, 0);
	for (int i = 0; i < N; i++) {
		doc_call(&doc, "cudaLaunchKernel", 1, 10 * i, 1, i + 1);
		doc_kernel(&doc, "k", 100 + i, 10 * i + 5, 2, i + 1, NULL);
	}
	doc_kernel(&doc, "hold", 99, 0, 10 * N + 100000, -1, NULL);
	for (int j = 0; j < N / 2; j++) {
		doc_call(&doc, "cudaLaunchKernel", 2, 20 * j, 1, N + j + 1);
		doc_kernel(&doc, "late", 98, 20 * j + 15, 1, N + j + 1, NULL);
	}
	doc_add(&doc, "]}");
	lap(&t0);
	t = import_doc(&doc, &o);
	import_s = lap(&t0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	expect_linear("graph of late kernels", lap(&t0), "the import", import_s);
	orr_graph_get_stats(g, &st);
	assert_int_equal(st.held, N / 2);
	orr_graph_free(g);
	orr_trace_free(t);
	doc_begin(&doc, -1, 0);
	for (int i = 0; i < N; i++) {
		snprintf(dev, sizeof(dev), ", \"device\": %d", i);
		doc_call(&doc, "cudaLaunchKernel", 1, 10 * i, 1, i + 1);
		doc_kernel(&doc, "k", 100 + i, 10 * i + 5, 2, i + 1, dev);
	}
	doc_add(&doc, "]}");
	lap(&t0);
	t = import_doc(&doc, &o);
	import_s = lap(&t0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	expect_linear("graph of as many devices", lap(&t0), "the import", import_s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/*
 * One thread launches 60,000 kernels that queue on one stream; 30,000 other threads
 * each synchronize that stream early and wait long, while the launches go on: what each
 * waits for (the last kernel launched by its start) is a search, not a walk back over
 * every kernel launched since.
 */
static void test_bounds_stream_syncs_while_launching_stay_linear(void **state)
{
	enum { N = 60000 };
	struct doc doc = { 0 };
	struct orr_graph_stats st;
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;
	double t0 = 0, import_s;

	(void)state;
	doc_begin(&doc, -1, 0);
	for (int i = 0; i < N; i++) {
		doc_call(&doc, "cudaLaunchKernel", 1, i, 0.5, i + 1);
		doc_kernel(&doc, "k", 7, 10 + 100.0 * i, 100, i + 1, NULL);
	}
	for (int i = 0; i < N / 2; i++) {
		doc_call(&doc, "cudaStreamSynchronize", 1000 + i, 2 * i + 0.2, 200 * i + 200,
			 N + i + 1);
		doc_sep(&doc);
		doc_add(&doc,
			"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0,"
			" \"tid\": 7, \"ts\": %.3f, \"dur\": 0, \"args\": {\"correlation\": %d,"
			" \"stream\": 7, \"device\": 0}}",
			2 * i + 0.3, N + i + 1);
	}
	doc_add(&doc, "]}");
	lap(&t0);
	t = import_doc(&doc, NULL);
	import_s = lap(&t0);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	orr_graph_get_stats(g, &st);
	assert_int_equal(st.waits[ORR_WAIT_STREAM], N / 2);
	lap(&t0);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	expect_linear("replay of the waits", lap(&t0), "the import", import_s);
	release(t, g, r);
}

/*
 * 20,000 ranks in one file, a chain of collectives between neighbours that completes
 * from the last rank down to the first: one rank is freed per pass over the ranks, so
 * the replay runs the ranks that changed, not every rank per pass; the file's ranks are
 * matched by a search.
 */
#define CHAIN_KERNEL                                                                               \
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce\", \"pid\": %d," \
	" \"tid\": 20, \"ts\": %lld, \"dur\": %lld, \"args\": {\"stream\": 20, \"Collective "      \
	"name\": \"allreduce\", \"Group size\": 2, \"Process Group Name\": \"p%d\", "              \
	"\"Process Group Ranks\": [%d, %d]}}"

static void test_bounds_rank_chain_stays_linear(void **state)
{
	enum { R = 20000 };
	struct doc doc = { 0 }, one = { 0 };
	struct orr_graph_stats st;
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
	struct orr_diag d;
	struct orr_replay_step *s;
	size_t n;
	double t0 = 0, one_s, split_s, build_s;

	(void)state;
	doc_add(&doc, "{\"orreryRanks\": [");
	for (int i = 0; i < R; i++)
		doc_add(&doc, "%s{\"distributedInfo\": {\"rank\": %d, \"world_size\": %d}}",
			i ? "," : "", i, R);
	doc_add(&doc, "], \"traceEvents\": [");
	doc_begin(&one, -1, 0);
	for (int i = 0; i < R; i++) {
		int64_t at = 0;

		doc_sep(&doc);
		doc_add(&doc,
			"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0,"
			" \"args\": {\"name\": \"rank %d GPU 0\", \"rank\": %d, \"device\": 0}}",
			i + 1, i, i);
		/* Group k (ranks k and k + 1) ends at (R - k) * 10 us on both. */
		for (int k = i; k >= i - 1 && k >= 0; k--) {
			int64_t end = (int64_t)(R - k) * 10;

			if (k == R - 1)
				continue;
			doc_sep(&doc);
			doc_add(&doc, CHAIN_KERNEL, i + 1, (long long)at, (long long)(end - at), k,
				k, k + 1);
			/* The same events as one rank's processes: the import to compare with. */
			doc_sep(&one);
			doc_add(&one, CHAIN_KERNEL, i + 1, (long long)at, (long long)(end - at), k,
				k, k + 1);
			at = end;
		}
	}
	doc_add(&doc, "]}");
	doc_add(&one, "]}");
	/* The least of three imports each, against a busy machine's noise. */
	one_s = split_s = 1e9;
	for (int i = 0; i < 3; i++) {
		double s1, s2;

		lap(&t0);
		assert_int_equal(orr_trace_import_buffer("one.json", one.s, one.n, NULL, &t, &d),
				 0);
		orr_trace_free(t);
		s1 = lap(&t0);
		assert_int_equal(orr_trace_import_buffer("split.json", doc.s, doc.n, NULL, &t, &d),
				 0);
		s2 = lap(&t0);
		one_s = s1 < one_s ? s1 : one_s;
		split_s = s2 < split_s ? s2 : split_s;
		if (i < 2)
			orr_trace_free(t);
	}
	free(one.s);
	free(doc.s);
	assert_int_equal(orr_trace_rank_count(t), R);
	/*
	 * A rank of its own for each of the 20,000 (its tables, places and steps) makes the
	 * split 3.6 times the one rank on a quiet machine and 5.4 times with both cores
	 * busy (CI beside another test run, the least of three); a scan of every rank per
	 * rank would be thousands of times.
	 */
	expect_within("import of the ranks of one file", split_s, "as one rank", one_s,
		      4 * LINEAR_FACTOR);
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	build_s = lap(&t0);
	orr_graph_get_stats(g, &st);
	assert_int_equal(st.groups, R - 1);
	assert_int_equal(orr_replay_run(g, NULL, &r, &d), 0);
	expect_linear("replay of the chain", lap(&t0), "the graph", build_s);
	/* Coupled, every rank ends as measured: rank 0 last. */
	orr_replay_steps(r, 0, &s, &n);
	assert_int_equal(s[0].predicted_end_ns - s[0].predicted_start_ns,
			 s[0].measured_end_ns - s[0].measured_start_ns);
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
		cmocka_unit_test(test_bounds_many_steps_with_kernels_stay_linear),
		cmocka_unit_test(test_bounds_many_streams_stay_linear),
		cmocka_unit_test(test_bounds_stream_syncs_while_launching_stay_linear),
		cmocka_unit_test(test_bounds_rank_chain_stays_linear),
		cmocka_unit_test_setup_teardown(test_bounds_two_ranks_without_communication,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
