/* SPDX-License-Identifier: MIT */
/*
 * Properties of the replay on every shared trace (../shared/traces/kineto, or
 * $ORR_SHARED_TRACES/kineto): each file, the directory astrasim-megatron-tp8/ as one
 * 8-rank job, and the two pyper ranks as one 2-rank job.  Not golden numbers: what must
 * hold for any trace.
 *
 *   determinism   two graph builds and two replays give the same tasks and times;
 *   identity      --scale '*=1' is bit-identical to no scale;
 *   monotonicity  every GPU duration times k >= 1 never ends a task (or a step) earlier,
 *                 k <= 1 never later;
 *   inferred      the graph without its inferred edges, waits and groups never ends a
 *                 task (or a step) later than the graph with them; members of
 *                 collectives coupled by inference through their steps only
 *                 (inferred_members() says why).
 *   critical path the path of each job step covers its predicted window, segment after
 *                 segment;
 *   waiting       waiting for peers is within exposed communication.
 *
 * A violation names the trace, rank, task index, task name and both times; every
 * input is checked before a test fails.  Skips (77) when the traces are absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orrery/replay.h"
#include "test-util.h"

#define SHOWN 5 /* violations printed per property and input */

struct tally {
	const char *what;
	const char *trace;
	size_t inputs, shown, n;
};

static struct orr_graph *build(const struct orr_trace *t, bool drop_inferred)
{
	struct orr_graph *g = NULL;
	struct orr_diag d;
	int err = orr_graph_build(t, &(struct orr_graph_options){ .drop_inferred = drop_inferred },
				  &g, &d);

	if (err)
		fail_msg("graph failed: %s: %s", orr_errname(err), d.msg);
	return g;
}

/* Replays g with every GPU task scaled by k, or with no scale at all when k == 0. */
static struct orr_replay *replay(const struct orr_graph *g, double k)
{
	struct orr_scale all = { "*", k };
	struct orr_replay *r = NULL;
	struct orr_diag d;
	int err = orr_replay_run(
		g, k ? &(struct orr_replay_options){ .scales = &all, .nscales = 1 } : NULL, &r, &d);

	if (err)
		fail_msg("replay failed: %s: %s", orr_errname(err), d.msg);
	return r;
}

static void violation(struct tally *v, const struct orr_graph *g, uint32_t task, const char *what,
		      const char *a_name, int64_t a, const char *b_name, int64_t b)
{
	char proc[64];

	v->n++;
	if (v->shown++ >= SHOWN)
		return;
	orr_graph_proc_label(g, orr_graph_tasks(g)[task].proc, proc, sizeof(proc));
	fprintf(stderr, "%s: %s: %s task %u '%.100s': %s %s %lld ns, %s %lld ns (%+lld ns)\n",
		v->what, v->trace, proc, task, orr_graph_task_name(g, task), what, a_name,
		(long long)a, b_name, (long long)b, (long long)(b - a));
}

static void step_violation(struct tally *v, size_t rank, const struct orr_replay_step *s,
			   const char *a_name, int64_t a, const char *b_name, int64_t b)
{
	v->n++;
	if (v->shown++ >= SHOWN)
		return;
	fprintf(stderr, "%s: %s: rank %zu step %lld: end %s %lld ns, %s %lld ns (%+lld ns)\n",
		v->what, v->trace, rank, (long long)s->step, a_name, (long long)a, b_name,
		(long long)b, (long long)(b - a));
}

/* The same start and end for every task of two replays of graphs with the same tasks. */
static void same_times(struct tally *v, const struct orr_replay *a, const struct orr_replay *b,
		       const char *a_name, const char *b_name)
{
	const struct orr_graph *g = orr_replay_graph(a);

	for (uint32_t i = 0; i < orr_graph_task_count(g); i++) {
		if (orr_replay_start(a, i) != orr_replay_start(b, i))
			violation(v, g, i, "start", a_name, orr_replay_start(a, i), b_name,
				  orr_replay_start(b, i));
		if (orr_replay_end(a, i) != orr_replay_end(b, i))
			violation(v, g, i, "end", a_name, orr_replay_end(a, i), b_name,
				  orr_replay_end(b, i));
	}
}

/*
 * No task and no step of `late` ends before it does in `early`.  early and late replay
 * graphs with the same tasks (two replays of one graph, or one graph with and without
 * its inferred constraints).  Tasks with exempt[i] (exempt may be NULL) are checked
 * through the steps only: where they end earlier, that goes to `noted`.
 */
static void no_earlier(struct tally *v, const struct orr_replay *early, const char *e_name,
		       const struct orr_replay *late, const char *l_name, const bool *exempt,
		       struct tally *noted)
{
	const struct orr_graph *g = orr_replay_graph(late);

	assert_int_equal(orr_graph_task_count(orr_replay_graph(early)), orr_graph_task_count(g));
	for (uint32_t i = 0; i < orr_graph_task_count(g); i++) {
		if (orr_replay_end(late, i) >= orr_replay_end(early, i))
			continue;
		violation(exempt && exempt[i] ? noted : v, g, i, "end", e_name,
			  orr_replay_end(early, i), l_name, orr_replay_end(late, i));
	}
	for (size_t rank = 0; rank < orr_graph_rank_count(g); rank++) {
		struct orr_replay_step *se, *sl;
		size_t ne, nl;

		orr_replay_steps(early, rank, &se, &ne);
		orr_replay_steps(late, rank, &sl, &nl);
		assert_int_equal(ne, nl);
		for (size_t k = 0; k < ne; k++)
			if (sl[k].predicted_end_ns < se[k].predicted_end_ns)
				step_violation(v, rank, &se[k], e_name, se[k].predicted_end_ns,
					       l_name, sl[k].predicted_end_ns);
		free(se);
		free(sl);
	}
}

/* ---- the inputs ---- */

typedef void check_fn(struct orr_trace *t, const char *name, void *data);

/* DIR/PREFIX{0,1}.json.gz as one job, through a temporary directory of links to them. */
static void pair_job(check_fn *fn, void *data, const char *dir, const char *prefix)
{
	char *tmp =
		orr_xasprintf("%s/orr-pair-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	char *job = orr_xasprintf("%s{0,1} (2 ranks)", prefix);
	struct orr_trace *t = NULL;
	struct orr_diag d;

	assert_non_null(mkdtemp(tmp));
	for (int k = 0; k < 2; k++) {
		char *from = orr_xasprintf("%s/%s%d.json.gz", dir, prefix, k);
		char *to = orr_xasprintf("%s/rank%d.json.gz", tmp, k);

		assert_int_equal(symlink(from, to), 0);
		free(from);
		free(to);
	}
	if (orr_trace_import(tmp, NULL, &t, &d))
		fail_msg("%s: %s", tmp, d.msg);
	for (int k = 0; k < 2; k++) {
		char *to = orr_xasprintf("%s/rank%d.json.gz", tmp, k);

		unlink(to);
		free(to);
	}
	rmdir(tmp);
	assert_int_equal(orr_trace_rank_count(t), 2);
	fn(t, job, data);
	orr_trace_free(t);
	free(job);
	free(tmp);
}

/* Every shared file and directory of every format, then the pyper ranks as one job. */
static void for_each_input(check_fn *fn, struct tally *v)
{
	v->inputs = for_each_shared_trace_in(fn, v, true);
	pair_job(fn, v, shared_kineto(), "hta-pyper-sampled-rank");
	v->inputs++;
	fprintf(stderr, "%s: %zu inputs, %zu violations\n", v->what, v->inputs, v->n);
	if (v->n)
		fail_msg("%s: %zu violations (first %d of each input above)", v->what, v->n, SHOWN);
}

static void begin(struct tally *v, const char *name)
{
	v->trace = name;
	v->shown = 0;
}

/* ---- the properties ---- */

/* The graph's tasks and edges, field by field. */
static void same_graph(struct tally *v, const struct orr_graph *a, const struct orr_graph *b)
{
	const struct orr_task *ta = orr_graph_tasks(a), *tb = orr_graph_tasks(b);
	struct orr_graph_stats sa, sb;

	assert_int_equal(orr_graph_task_count(a), orr_graph_task_count(b));
	assert_int_equal(orr_graph_group_count(a), orr_graph_group_count(b));
	orr_graph_get_stats(a, &sa);
	orr_graph_get_stats(b, &sb);
	assert_memory_equal(&sa, &sb, sizeof(sa));
	for (uint32_t i = 0; i < orr_graph_task_count(a); i++) {
		bool same = ta[i].dur_ns == tb[i].dur_ns && ta[i].gap_ns == tb[i].gap_ns &&
			    ta[i].proc == tb[i].proc && ta[i].aux == tb[i].aux &&
			    ta[i].ndeps == tb[i].ndeps && ta[i].flags == tb[i].flags;

		for (uint32_t d = 0; same && d < ta[i].ndeps; d++) {
			const struct orr_dep *da = &orr_graph_deps(a)[ta[i].first_dep + d];
			const struct orr_dep *db = &orr_graph_deps(b)[tb[i].first_dep + d];

			same = da->src == db->src && da->lat_ns == db->lat_ns &&
			       da->kind == db->kind && da->flags == db->flags;
		}
		if (!same)
			violation(v, a, i, "task or edges", "build 1", ta[i].dur_ns, "build 2",
				  tb[i].dur_ns);
	}
}

static void check_determinism(struct orr_trace *t, const char *name, void *data)
{
	struct tally *v = data;
	struct orr_graph *g1 = build(t, false), *g2 = build(t, false);
	struct orr_replay *a = replay(g1, 0), *b = replay(g1, 0), *c = replay(g2, 0);

	begin(v, name);
	same_graph(v, g1, g2);
	same_times(v, a, b, "replay 1", "replay 2");
	same_times(v, a, c, "replay 1", "replay of build 2");
	orr_replay_free(a);
	orr_replay_free(b);
	orr_replay_free(c);
	orr_graph_free(g1);
	orr_graph_free(g2);
}

static void test_properties_replay_is_deterministic(void **state)
{
	struct tally v = { .what = "determinism" };

	for_each_input(check_determinism, &v);
}

static void check_identity(struct orr_trace *t, const char *name, void *data)
{
	struct tally *v = data;
	struct orr_graph *g = build(t, false);
	struct orr_replay *plain = replay(g, 0), *one = replay(g, 1);

	begin(v, name);
	same_times(v, plain, one, "no scale", "'*=1'");
	orr_replay_free(plain);
	orr_replay_free(one);
	orr_graph_free(g);
}

static void test_properties_identity_scale_is_bit_identical(void **state)
{
	struct tally v = { .what = "identity" };

	for_each_input(check_identity, &v);
}

static void check_monotone(struct orr_trace *t, const char *name, void *data)
{
	static const double up[] = { 1.5, 2 }, down[] = { 0.5, 0.8 };
	struct tally *v = data;
	struct orr_graph *g = build(t, false);
	struct orr_replay *base = replay(g, 0);
	char label[32];

	begin(v, name);
	for (size_t i = 0; i < 2; i++) {
		struct orr_replay *r = replay(g, up[i]);

		snprintf(label, sizeof(label), "'*=%g'", up[i]);
		no_earlier(v, base, "no scale", r, label, NULL, NULL);
		orr_replay_free(r);
		r = replay(g, down[i]);
		snprintf(label, sizeof(label), "'*=%g'", down[i]);
		no_earlier(v, r, label, base, "no scale", NULL, NULL);
		orr_replay_free(r);
	}
	orr_replay_free(base);
	orr_graph_free(g);
}

static void test_properties_monotone_in_gpu_durations(void **state)
{
	struct tally v = { .what = "monotonicity" };

	for_each_input(check_monotone, &v);
}

/*
 * The members of collective instances coupled by inference.  Such a group is more than
 * a constraint: coupled, a member lasts the smallest measured duration of the instance
 * (DESIGN.md, "Replay semantics"); uncoupled, its own, which includes the time it
 * waited for the others in the trace.  An early member can therefore end later without
 * the group (astrasim-megatron-tp8: rank 2's first all-reduce by 10 us), so these tasks
 * are checked through the steps they belong to, not one by one.
 */
static bool *inferred_members(const struct orr_graph *g)
{
	bool *v = orr_xcalloc(orr_graph_task_count(g) + 1, sizeof(*v));

	for (size_t k = 0; k < orr_graph_group_count(g); k++) {
		const struct orr_group *gr = &orr_graph_groups(g)[k];

		for (uint32_t m = 0; m < gr->n && (gr->flags & ORR_DEP_F_INFERRED); m++)
			v[orr_graph_members(g)[gr->first + m]] = true;
	}
	return v;
}

static void check_inferred(struct orr_trace *t, const char *name, void *data)
{
	struct tally *v = data;
	struct tally noted = { .what = "inferred (a member, not asserted)", .trace = name };
	struct orr_graph *g = build(t, false), *exact = build(t, true);
	struct orr_replay *with = replay(g, 0), *without = replay(exact, 0);
	bool *members = inferred_members(g);
	struct orr_graph_stats st;

	begin(v, name);
	orr_graph_get_stats(exact, &st);
	for (int k = 0; k < ORR_DEP_COUNT; k++)
		assert_int_equal(st.inferred[k], 0);
	no_earlier(v, without, "without inferred", with, "with inferred", members, &noted);
	free(members);
	orr_replay_free(with);
	orr_replay_free(without);
	orr_graph_free(g);
	orr_graph_free(exact);
}

static void test_properties_inferred_edges_only_delay(void **state)
{
	struct tally v = { .what = "inferred" };

	for_each_input(check_inferred, &v);
}

/*
 * The critical path of every job step covers its predicted window: its segments follow
 * each other without gap or overlap from the window's start to its end.
 */
static void check_path_covers(struct orr_trace *t, const char *name, void *data)
{
	struct tally *v = data;
	struct orr_graph *g = build(t, false);
	struct orr_replay *r = replay(g, 0);
	struct orr_replay_step *job;
	size_t n;

	begin(v, name);
	orr_replay_job_steps(r, &job, &n);
	for (size_t k = 0; k < n; k++) {
		struct orr_path_seg *seg;
		size_t ns;
		int64_t at = job[k].predicted_start_ns;

		orr_replay_critical_path(r, job[k].predicted_start_ns, job[k].predicted_end_ns,
					 &seg, &ns);
		for (size_t i = 0; i < ns && at >= 0; i++) {
			if (seg[i].start_ns != at)
				step_violation(v, 0, &job[k], "path segment starts at",
					       seg[i].start_ns, "previous ends at", at);
			at = seg[i].end_ns;
		}
		if (at != job[k].predicted_end_ns)
			step_violation(v, 0, &job[k], "path ends at", at, "window ends at",
				       job[k].predicted_end_ns);
		free(seg);
	}
	free(job);
	orr_replay_free(r);
	orr_graph_free(g);
}

static void test_properties_critical_path_covers_step(void **state)
{
	struct tally v = { .what = "critical path" };

	for_each_input(check_path_covers, &v);
}

/* Waiting for peers is a part of exposed communication, on both timelines. */
static void check_waiting(struct orr_trace *t, const char *name, void *data)
{
	struct tally *v = data;
	struct orr_graph *g = build(t, false);
	struct orr_replay *r = replay(g, 0);

	begin(v, name);
	for (size_t rank = 0; rank < orr_graph_rank_count(g); rank++) {
		struct orr_replay_step *s;
		size_t n;

		orr_replay_steps(r, rank, &s, &n);
		for (size_t k = 0; k < n; k++)
			for (int predicted = 0; predicted < 2; predicted++) {
				struct orr_breakdown b;

				orr_replay_breakdown(r, rank, predicted,
						     predicted ? s[k].predicted_start_ns
							       : s[k].measured_start_ns,
						     predicted ? s[k].predicted_end_ns
							       : s[k].measured_end_ns,
						     &b);
				if (b.exposed_wait_ns < 0 || b.exposed_wait_ns > b.exposed_comm_ns)
					step_violation(v, rank, &s[k], "waiting", b.exposed_wait_ns,
						       "exposed comm", b.exposed_comm_ns);
			}
		free(s);
	}
	orr_replay_free(r);
	orr_graph_free(g);
}

static void test_properties_waiting_within_exposed_comm(void **state)
{
	struct tally v = { .what = "waiting" };

	for_each_input(check_waiting, &v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_properties_replay_is_deterministic),
		cmocka_unit_test(test_properties_identity_scale_is_bit_identical),
		cmocka_unit_test(test_properties_monotone_in_gpu_durations),
		cmocka_unit_test(test_properties_inferred_edges_only_delay),
		cmocka_unit_test(test_properties_critical_path_covers_step),
		cmocka_unit_test(test_properties_waiting_within_exposed_comm),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	return failed ? 1 : shared_kineto() ? 0 : 77;
}
