/* SPDX-License-Identifier: MIT */
/*
 * liborrery.so as a user links it: public headers and the shared library only (no
 * subsystem archive), over the sample trace.  The analyses agree with each other and
 * with the trace: the summary's rank-steps are the replay report's, the kernel list adds
 * up to its total, a selection keeps what it names, a what-if that makes every GPU
 * task twice as long predicts longer steps than the baseline (a positive change), a
 * critical path's categories add up to it, a collective's bandwidths are nccl-tests',
 * a composed plan's coverage adds up its ranks', the JSON writer nests and escapes, a job
 * written as Chakra files holds the nodes counted, and a rank's manifest entry is its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orrery/analysis.h"
#include "orrery/chakra.h"
#include "orrery/compose.h"
#include "orrery/native.h"
#include "orrery/trace.h"

struct fixture {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_replay *r;
};

static int setup(void **state)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *sample = orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
	struct fixture *f = orr_xcalloc(1, sizeof(*f));
	struct orr_diag d;

	assert_int_equal(orr_trace_import(sample, NULL, &f->t, &d), 0);
	assert_int_equal(orr_graph_build(f->t, NULL, &f->g, &d), 0);
	assert_int_equal(orr_replay_run(f->g, NULL, &f->r, &d), 0);
	free(sample);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	orr_replay_free(f->r);
	orr_graph_free(f->g);
	orr_trace_free(f->t);
	free(f);
	return 0;
}

static void test_summary_matches_replay_rows(void **state)
{
	struct fixture *f = *state;
	struct orr_summary s;
	struct orr_replay_report rep;
	int64_t sum = 0;

	orr_summary_gather(&s, "tiny-2rank", f->r, NULL);
	orr_replay_report_init(&rep, "tiny-2rank", f->r, NULL);
	assert_int_equal(s.nranks, 2);
	assert_int_equal(s.nsteps, 6);
	assert_int_equal(rep.nrows, s.nsteps);
	for (size_t i = 0; i < s.nsteps; i++) {
		assert_int_equal(s.steps[i].rank, rep.rows[i].rank);
		assert_int_equal(s.steps[i].step, rep.rows[i].s.step);
		assert_int_equal(s.steps[i].step_ns,
				 rep.rows[i].s.measured_end_ns - rep.rows[i].s.measured_start_ns);
		assert_true(s.steps[i].busy_ns > 0 && s.steps[i].busy_ns <= s.steps[i].step_ns);
	}
	for (size_t i = 0; i < s.nkernels; i++)
		sum += s.kernels[i].ns;
	assert_int_equal(sum, s.kernel_ns);
	assert_true(s.nkernels > 0 && s.kernels[0].ns >= s.kernels[s.nkernels - 1].ns);
	orr_replay_report_release(&rep);
	orr_summary_release(&s);
}

static void test_select_keeps_one_rank_step(void **state)
{
	struct fixture *f = *state;
	int32_t rank = 1;
	struct orr_select sel = {
		.steps_given = true, .step_lo = 11, .step_hi = 11, .ranks = &rank, .nranks = 1
	};
	struct orr_summary s;

	orr_summary_gather(&s, "tiny-2rank", f->r, &sel);
	assert_int_equal(s.nsteps, 1);
	assert_int_equal(s.steps[0].rank, 1);
	assert_int_equal(s.steps[0].step, 11);
	orr_summary_release(&s);
}

static void test_scenario_slower_gpu_predicts_longer_steps(void **state)
{
	struct fixture *f = *state;
	struct orr_scenarios sc = { 0 };
	struct orr_scales scales = { 0 };
	struct orr_scenario_report w;
	struct orr_diag d;
	size_t n, m;
	const struct orr_replay_row *base, *run;
	struct orr_change_range c;

	assert_int_equal(orr_scales_add(&scales, "no factor"), -EINVAL);
	assert_int_equal(orr_scales_add(&scales, "*=2"), 0);
	orr_scenarios_take_scales(&sc, &scales);
	assert_int_equal(sc.n, 1);
	assert_int_equal(orr_scenario_report_run(&w, "tiny-2rank", f->r, &sc, NULL, NULL, NULL,
						 NULL, &d),
			 0);
	assert_int_equal(w.nruns, 1);
	assert_true(w.runs[0].matches[0].tasks > 0);
	base = orr_replay_report_table(&w.base, &n);
	run = orr_replay_report_table(&w.runs[0].rep, &m);
	assert_int_equal(n, m);
	assert_true(n > 0);
	for (size_t k = 0; k < n; k++) {
		int64_t b = base[k].s.predicted_end_ns - base[k].s.predicted_start_ns;
		int64_t r = run[k].s.predicted_end_ns - run[k].s.predicted_start_ns;

		assert_true(r > b);
		assert_float_equal(orr_scenario_change(&base[k], &run[k]),
				   (double)r / (double)b - 1, 1e-12);
	}
	c = orr_scenario_change_range(&w, &w.runs[0]);
	assert_true(c.min > 0 && c.min <= c.mean && c.mean <= c.max);
	assert_true(orr_scenario_trust_low(&w.runs[0]) ==
		    (w.runs[0].fixed_share > ORR_TRUST_MAX_UNEXPLAINED));
	orr_scenario_report_release(&w);
	orr_scenarios_release(&sc);
}

/* The replay of graph g under rules (each a --scale argument), as a scenario replays it. */
static struct orr_replay *replay_rules(const struct fixture *f, const char *const *rules, size_t n,
				       struct orr_rule_match *matches)
{
	struct orr_scales s = { 0 };
	struct orr_scenario_replay sr;
	struct orr_replay *r;
	struct orr_diag d;

	for (size_t i = 0; i < n; i++)
		assert_int_equal(orr_scales_add(&s, rules[i]), 0);
	orr_scenario_options(&sr, f->g, &s, NULL, f->r, matches);
	assert_int_equal(orr_replay_run(f->g, &sr.opts, &r, &d), 0);
	orr_scenario_options_release(&sr);
	orr_scales_release(&s);
	return r;
}

/*
 * gpu@RANK: rules: one per rank replays as the rule on every rank does, task by task; one
 * rank's rule leaves the other rank's kernels as long as they were and doubles its own
 * (collectives last as their instance does); the rules are described and labelled as
 * written.
 */
static void test_scenario_gpu_rank_rules(void **state)
{
	static const char *const each[] = { "gpu@0:*=2", "gpu@1:*=2" }, *const all[] = { "*=2" },
				 *const one[] = { "gpu@1:*=2" };
	struct fixture *f = *state;
	const struct orr_task *tasks = orr_graph_tasks(f->g);
	struct orr_replay *a = replay_rules(f, each, 2, NULL), *b = replay_rules(f, all, 1, NULL);
	struct orr_rule_match m[1];
	struct orr_replay *c = replay_rules(f, one, 1, m);
	struct orr_scales s = { 0 };
	size_t doubled = 0;
	char buf[64];

	for (size_t k = 0; k < orr_graph_rank_count(f->g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(f->g, k);

		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			int64_t d0 = orr_replay_end(f->r, t) - orr_replay_start(f->r, t);
			int64_t d1 = orr_replay_end(c, t) - orr_replay_start(c, t);

			assert_int_equal(orr_replay_start(a, t), orr_replay_start(b, t));
			assert_int_equal(orr_replay_end(a, t), orr_replay_end(b, t));
			if (tasks[t].kind != ORR_TASK_GPU || (tasks[t].flags & ORR_TASK_F_COMM) ||
			    tasks[t].dur_ns < 1000)
				continue;
			if (gr->rank->rank == 1) {
				assert_true(d1 >= 2 * d0 - 1);
				doubled++;
			} else {
				assert_int_equal(d1, d0);
			}
		}
	}
	assert_true(doubled > 0);
	assert_true(m[0].tasks > 0 && m[0].rank_steps == 3);
	assert_int_equal(orr_scales_add(&s, "gpu:*gemm*=0.5"), 0);
	assert_int_equal(orr_scales_add(&s, "gpu@1:*=1.5"), 0);
	assert_int_equal(orr_scales_add(&s, "cpu@0:*=2"), 0);
	assert_int_equal(orr_scales_add(&s, "latency:*=0.5"), 0);
	assert_int_equal(orr_scales_add(&s, "stalls@2:aten::*=0.5"), 0);
	assert_int_equal(orr_scales_add(&s, "stalls:*=0"), 0);
	assert_int_equal(orr_scales_add(&s, "gpu@:*=2"), -EINVAL);
	assert_int_equal(orr_scales_add(&s, "gpu@1*=2"), -EINVAL);
	assert_int_equal(orr_scales_add(&s, "gpu@1:=2"), -EINVAL);
	assert_int_equal(orr_scales_add(&s, "stalls@x:*=0"), -EINVAL);
	assert_int_equal(orr_scales_add(&s, "stalls:=0"), -EINVAL);
	assert_int_equal(orr_scales_rule_count(&s), 6);
	assert_int_equal(s.n, 1);
	assert_int_equal(orr_scales_rule(&s, 1).on, ORR_RULE_GPU);
	assert_int_equal(orr_scales_rule(&s, 1).rank, 1);
	assert_int_equal(orr_scales_rule(&s, 2).on, ORR_RULE_CPU);
	/* in order: GPU, CPU, stalls, then communication rules */
	assert_int_equal(orr_scales_rule(&s, 3).on, ORR_RULE_STALLS);
	assert_int_equal(orr_scales_rule(&s, 3).rank, 2);
	assert_int_equal(orr_scales_rule(&s, 4).on, ORR_RULE_STALLS);
	assert_int_equal(orr_scales_rule(&s, 5).on, ORR_RULE_LATENCY);
	assert_string_equal(orr_scales_rule_label(&s, 0, buf, sizeof(buf)), "*gemm*=0.5");
	assert_string_equal(orr_scales_rule_label(&s, 1, buf, sizeof(buf)), "gpu@1:*=1.5");
	assert_string_equal(orr_scales_rule_label(&s, 2, buf, sizeof(buf)), "cpu@0:*=2");
	assert_string_equal(orr_scales_rule_label(&s, 3, buf, sizeof(buf)), "stalls@2:aten::*=0.5");
	assert_string_equal(orr_scales_rule_label(&s, 4, buf, sizeof(buf)), "stalls:*=0");
	assert_string_equal(orr_scales_rule_label(&s, 5, buf, sizeof(buf)), "latency:*=0.5");
	orr_scales_release(&s);
	orr_replay_free(a);
	orr_replay_free(b);
	orr_replay_free(c);
}

static void test_path_tally_adds_up(void **state)
{
	struct fixture *f = *state;
	struct orr_op_names *names = orr_op_names_new(f->g);
	struct orr_replay_step *steps;
	size_t nsteps;

	orr_replay_job_steps(f->r, &steps, &nsteps);
	assert_int_equal(nsteps, 3);
	for (size_t k = 0; k < nsteps; k++) {
		struct orr_path_step ps = { .s = &steps[k] };
		struct orr_path_seg *segs;
		size_t n;
		int64_t cats = 0, ops = 0, by_cat[ORR_PATH_CAT_COUNT];

		orr_replay_critical_path(f->r, steps[k].predicted_start_ns,
					 steps[k].predicted_end_ns, &segs, &n);
		orr_path_step_tally(f->r, names, segs, n, &ps);
		for (int c = 0; c < ORR_PATH_CAT_COUNT; c++)
			cats += ps.by_cat[c];
		assert_int_equal(cats, ps.path_ns);
		for (int c = 0; c < ORR_PATH_CAT_COUNT; c++)
			by_cat[c] = -1;
		assert_int_equal(orr_path_cat_totals(segs, n, by_cat), ps.path_ns);
		assert_memory_equal(by_cat, ps.by_cat, sizeof(by_cat));
		assert_true(ps.path_ns > 0 && ps.nops > 0);
		for (size_t i = 0; i < ps.nops; i++) {
			ops += ps.ops[i].ns;
			assert_true(i == 0 || ps.ops[i - 1].ns >= ps.ops[i].ns);
			assert_true(ps.ops[i].by_cat[orr_path_op_category(&ps.ops[i])] > 0);
		}
		assert_true(ops <= ps.path_ns);
		orr_path_step_release(&ps);
		free(segs);
	}
	free(steps);
	orr_op_names_free(names);
}

/* A collective's bandwidths: S / t, and nccl-tests' bus factor 2(n-1)/n of an all-reduce. */
static void test_coll_bandwidths(void **state)
{
	struct orr_sum_coll c = {
		.kind = ORR_COLL_ALL_REDUCE, .bytes = 1e6, .group = 4, .count = 2, .ns = 2000
	};

	(void)state;
	assert_float_equal(orr_sum_coll_algbw(&c), 1e12, 1);
	assert_float_equal(orr_sum_coll_busbw(&c), 1.5e12, 1);
	c.bytes = NAN;
	assert_true(isnan(orr_sum_coll_algbw(&c)) && isnan(orr_sum_coll_busbw(&c)));
	c = (struct orr_sum_coll){ .kind = ORR_COLL_ALL_GATHER, .bytes = 1e6, .group = 4 };
	assert_true(isnan(orr_sum_coll_busbw(&c))); /* no instance: no time */
}

/* A composed plan's coverage adds up its ranks' numbers. */
static void test_compose_coverage(void **state)
{
	struct fixture *f = *state;
	struct orr_compose_options o = { .step = -1, .steps = 1, .producer = "test" };
	struct orr_compose_coverage cov;
	struct orr_compose *c = NULL;
	struct orr_diag d;
	int64_t gpu = 0, op = 0;

	assert_int_equal(orr_compose_build(f->g, &o, &c, &d), 0);
	orr_compose_coverage_of(c, &cov);
	assert_true(orr_compose_rank_count(c) == 2);
	for (size_t i = 0; i < orr_compose_rank_count(c); i++) {
		gpu += orr_compose_get_rank(c, i)->gpu_ns;
		op += orr_compose_get_rank(c, i)->op_ns;
	}
	assert_true(cov.gpu_ns > 0);
	assert_int_equal(cov.gpu_ns, gpu);
	assert_int_equal(cov.op_ns, op);
	assert_true(cov.op_ns + cov.comm_ns + cov.fill_ns + cov.dropped_ns <= cov.gpu_ns);
	orr_compose_free(c);
}

/* The JSON writer the reports share: nesting, commas, null for NaN, exact doubles. */
static void test_json_out(void **state)
{
	struct orr_json_out j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	orr_json_begin(&j, f);
	orr_json_str(&j, "name", "a\"b");
	orr_json_array(&j, "v");
	orr_json_int(&j, NULL, -3);
	orr_json_double(&j, NULL, NAN);
	orr_json_double_exact(&j, NULL, 0.1);
	orr_json_close_array(&j);
	orr_json_object(&j, "empty");
	orr_json_close_object(&j);
	orr_json_bool(&j, "ok", true);
	orr_json_str(&j, "none", NULL);
	orr_json_end(&j);
	fclose(f);
	assert_string_equal(buf, "{\n  \"name\": \"a\\\"b\",\n  \"v\": [\n    -3,\n    null,\n"
				 "    0.1\n  ],\n  \"empty\": {},\n  \"ok\": true,\n  \"none\": "
				 "null\n}\n");
	free(buf);
}

/* A job as Chakra files, one per rank, the totals over them; a missing directory names rank 0. */
static void test_chakra_write_graph(void **state)
{
	struct fixture *f = *state;
	char dir[] = "/tmp/test-lib-api-XXXXXX";
	struct orr_chakra_stats st;
	struct orr_diag d;
	size_t failed = 99;
	uint64_t nodes = 0;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(orr_chakra_write_graph(f->g, dir, "test", &st, &failed, &d), 0);
	for (size_t i = 0; i < orr_graph_rank_count(f->g); i++) {
		char *path = orr_xasprintf("%s/trace.%d.et", dir,
					   orr_graph_get_rank(f->g, i)->rank->rank);
		struct orr_chakra *c;

		assert_int_equal(orr_chakra_read_file(path, &c, &d), 0);
		nodes += c->nnodes;
		orr_chakra_free(c);
		assert_int_equal(unlink(path), 0);
		free(path);
	}
	assert_true(st.nodes > 0);
	assert_int_equal(nodes, st.nodes);
	assert_int_equal(rmdir(dir), 0);
	assert_true(orr_chakra_write_graph(f->g, dir, "test", &st, &failed, &d) < 0);
	assert_int_equal(failed, 0);
}

/* A rank's entry in a run directory's manifest. */
static void test_run_file_of_rank(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < orr_trace_rank_count(f->t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(f->t, i);
		struct orr_run_file e = orr_run_file_of_rank(f->t, r, "x.orr");

		assert_string_equal(e.path, "x.orr");
		assert_int_equal(e.rank, r->rank);
		assert_int_equal(e.events, r->nevents);
		assert_true(r->pid >= 0 ? e.pid == r->pid : e.pid >= -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_matches_replay_rows),
		cmocka_unit_test(test_select_keeps_one_rank_step),
		cmocka_unit_test(test_scenario_slower_gpu_predicts_longer_steps),
		cmocka_unit_test(test_scenario_gpu_rank_rules),
		cmocka_unit_test(test_path_tally_adds_up),
		cmocka_unit_test(test_coll_bandwidths),
		cmocka_unit_test(test_compose_coverage),
		cmocka_unit_test(test_json_out),
		cmocka_unit_test(test_chakra_write_graph),
		cmocka_unit_test(test_run_file_of_rank),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
