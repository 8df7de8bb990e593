/* SPDX-License-Identifier: MIT */
/*
 * The estimate and the sweep's inputs as liborrery.so gives them (include/orrery/
 * analysis-estimate.h), linked as a user links it.  A description is estimated by
 * synthesis with its rates from its own step (tokens per second per GPU are the tokens
 * of a step over its time and GPUs; its breakdown adds up to its step); what a
 * description lacks is a usage error naming the option, an unknown GPU -ENODEV, a layout
 * Megatron refuses -EDOM; a trace's own configuration re-timed keeps its replayed step;
 * a sweep that finds nothing feasible says why, most first, with the numbers its
 * suggestions name.
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

#include "orrery/analysis-estimate.h"
#include "orrery/trace.h"

static void describe(struct orr_estimate_options *o, const char *gpu)
{
	orr_estimate_options_init(o);
	o->gpu = gpu;
	for (size_t i = 0; orr_estimate_size_name(i); i++) {
		const char *n = orr_estimate_size_name(i);

		o->size[i] = !strcmp(n, "layers")   ? 24
			     : !strcmp(n, "hidden") ? 2048
			     : !strcmp(n, "heads")  ? 16
			     : !strcmp(n, "seq")    ? 2048
			     : !strcmp(n, "tp")     ? 2
			     : !strcmp(n, "dp")     ? 4
						    : 0;
	}
}

static void test_describe(void **state)
{
	struct orr_estimate_options o;
	struct orr_estimate e;
	struct orr_diag d;
	double parts[4], sum = 0;

	(void)state;
	describe(&o, "h100-sxm");
	assert_int_equal(orr_estimate_describe(&o, &e, &d), 0);
	assert_int_equal(e.how, ORR_ESTIMATE_SYNTH);
	assert_string_equal(orr_estimate_how_name(e.how), "synthesis");
	assert_int_equal(e.to.tp, 2);
	assert_int_equal(e.to.dp, 4);
	assert_int_equal(e.to.ffn, 4 * 2048);
	assert_true(e.estimated.step_ns > 0);
	/* one sequence per micro-batch, one micro-batch, 4 DP ranks, 8 GPUs */
	assert_true(fabs(e.tokens_per_s_per_gpu - 4.0 * 2048 / (e.estimated.step_ns / 1e9) / 8) <
		    1e-6 * e.tokens_per_s_per_gpu);
	assert_true(e.mfu > 0 && e.mfu < 1 && e.hfu >= e.mfu);
	assert_int_equal(e.cpu_op_from, ORR_LAUNCH_NONE);
	/* no costs file: the hardware table's peaks, a lower bound */
	assert_int_equal(orr_estimate_caveats(&e), ORR_CAVEAT_PEAKS);
	assert_string_equal(orr_estimate_caveat_name(0), "peaks");
	assert_null(orr_estimate_caveat_name(ORR_CAVEAT_COUNT));
	assert_true(isnan(orr_estimate_change(&e)));
	orr_estimate_parts(&e, parts);
	for (int i = 0; i < 4; i++)
		sum += parts[i];
	assert_true(fabs(sum - e.estimated.step_ns) < 1e-3 * e.estimated.step_ns);
	assert_int_equal(orr_estimate_deltas(&e, (struct orr_estimate_delta[12]){ 0 }), 0);
}

static void test_describe_refused(void **state)
{
	struct orr_estimate_options o;
	struct orr_estimate e;
	struct orr_diag d;

	(void)state;
	describe(&o, "h100-sxm");
	o.size[5] = 0; /* layers */
	assert_string_equal(orr_estimate_size_name(5), "layers");
	assert_string_equal(orr_estimate_missing(&o), "layers");
	o.costs = "/no/such/costs.json"; /* what the options lack is said first */
	assert_int_equal(orr_estimate_describe(&o, &e, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "--layers is missing"));
	o.size[5] = 24;
	assert_null(orr_estimate_missing(&o));
	assert_int_not_equal(orr_estimate_describe(&o, &e, &d), 0);
	assert_non_null(strstr(d.msg, "/no/such/costs.json"));
	describe(&o, "no-such-gpu");
	assert_int_equal(orr_estimate_describe(&o, &e, &d), -ENODEV);
	assert_non_null(strstr(d.msg, "no-such-gpu"));
	describe(&o, "h100-sxm");
	o.size[0] = 3; /* tp 3 does not divide 16 heads */
	assert_int_equal(orr_estimate_describe(&o, &e, &d), -EDOM);
	assert_non_null(strstr(d.msg, "Megatron refuses"));
}

/*
 * The network's rate is refused out of ORR_NIC_GBPS_MIN to 1e6 Gb/s by the library, as
 * every front end takes it: 0 is the hardware table's.
 */
static void test_describe_nic_out_of_range(void **state)
{
	static const double bad[] = { 0.5, -1, 2e6, NAN }, good[] = { 0, 1, 100, 1e6 };
	struct orr_estimate_options o;
	struct orr_estimate e;
	struct orr_diag d;

	(void)state;
	describe(&o, "h100-sxm");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.nic_gbps = bad[i];
		assert_int_equal(orr_estimate_options_check(&o, &d), -ERANGE);
		assert_non_null(strstr(d.msg, "nic_gbps"));
	}
	o.nic_gbps = 0.5;
	assert_int_equal(orr_estimate_describe(&o, &e, &d), -ERANGE);
	assert_non_null(strstr(d.msg, "nic_gbps 0.5 is out of range"));
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		o.nic_gbps = good[i];
		assert_int_equal(orr_estimate_options_check(&o, &d), 0);
	}
	o.nic_gbps = ORR_NIC_GBPS_MIN;
	assert_int_equal(orr_estimate_describe(&o, &e, &d), 0);
}

/*
 * Layers past ORR_ESTIMATE_MAX_LAYERS are refused by the library before a step is
 * synthesized (100,000 took 10 s and 2.2 GB, layer by layer); the limit itself is taken.
 */
static void test_describe_layers_past_the_limit(void **state)
{
	struct orr_estimate_options o;
	struct orr_diag d;

	(void)state;
	describe(&o, "h100-sxm");
	o.size[5] = ORR_ESTIMATE_MAX_LAYERS + 1; /* layers */
	assert_int_equal(orr_estimate_options_check(&o, &d), -ERANGE);
	assert_non_null(strstr(d.msg, "layers 10001 is past orrery's limit of 10000"));
	o.size[5] = ORR_ESTIMATE_MAX_LAYERS;
	assert_int_equal(orr_estimate_options_check(&o, &d), 0);
}

static void test_trace_as_recorded(void **state)
{
	const char *shared = getenv("ORR_SHARED_TRACES");
	char *path = orr_xasprintf("%s/kineto/astrasim-megatron-tp8",
				   shared ? shared : "../shared/traces");
	struct orr_estimate_options o;
	struct orr_estimate_base b;
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_diag d;

	(void)state;
	if (orr_trace_import(path, NULL, &t, &d)) {
		free(path);
		skip(); /* ../shared is absent */
	}
	assert_int_equal(orr_graph_build(t, NULL, &g, &d), 0);
	orr_estimate_options_init(&o);
	o.trace = path;
	assert_int_equal(orr_estimate_base_open(&o, g, orr_graph_rank_index(g, -1), &b, &d), 0);
	assert_int_equal(orr_estimate_trace(&o, &b, &d), 0);
	assert_int_equal(b.e.how, ORR_ESTIMATE_RETIME);
	assert_int_equal(b.e.to.tp, b.e.from.tp);
	/* nothing changed: the estimate is the replay, up to the profiler's host time */
	assert_true(fabs(b.e.traced.step_ns - b.e.replayed.step_ns) <= 1e-9 * b.e.replayed.step_ns);
	assert_true(b.e.estimated.step_ns <= b.e.replayed.step_ns);
	/* the trace has no allocator totals: no reserve; its launch time is not used */
	assert_int_equal(orr_estimate_caveats(&b.e), ORR_CAVEAT_NO_ALLOCATOR);
	orr_estimate_base_close(&b);
	o.gpu = "h100-sxm"; /* the trace ran on an A100 */
	assert_int_equal(orr_estimate_base_open(&o, g, 0, &b, &d), -EXDEV);
	orr_graph_free(g);
	orr_trace_free(t);
	free(path);
}

static void test_sweep_hints(void **state)
{
	struct orr_estimate_options o;
	struct orr_whatif_options w = { .gpus_min = 2,
					.gpus_max = 2,
					.sp = ORR_WHATIF_AUTO,
					.distopt = 0,
					.recompute = 1u << ORR_RECOMPUTE_SELECTIVE };
	struct orr_whatif_job j;
	struct orr_whatif_tally t;
	struct orr_whatif_hint h[ORR_WHATIF_WHY_COUNT];
	struct orr_diag d;
	uint64_t i;
	size_t n;

	(void)state;
	describe(&o, "a100-80gb-sxm");
	o.size[0] = o.size[2] = 0; /* tp, dp: swept */
	o.size[5] = 96;            /* GPT-3 175B on 2 GPUs: nothing fits */
	o.size[6] = 12288;
	o.size[7] = 96;
	assert_int_equal(orr_whatif_job_open(&o, &w, NULL, 0, &j, &d), -EINVAL);
	orr_whatif_job_close(&j);
	o.global_batch = 64;
	assert_int_equal(orr_whatif_job_open(&o, &w, NULL, 0, &j, &d), 0);
	assert_true(j.considered > 0);
	assert_int_equal(orr_whatif_job_tally(&j, ORR_WHATIF_RANK_TIME, 10, &t), UINT64_MAX);
	for (i = 0; i < j.considered; i++) {
		struct orr_whatif_result r;

		assert_int_equal(orr_whatif_eval(j.plan, &j.x, i, NULL, &r), 0);
		if (r.why != ORR_WHATIF_WHY_COUNT)
			orr_whatif_tally_add(&t, &r);
	}
	orr_whatif_tally_finish(&t);
	assert_int_equal(t.count[ORR_WHATIF_FEASIBLE], 0);
	n = orr_whatif_hints(&j, &w, &t, h);
	assert_true(n >= 1);
	assert_int_equal(h[0].why, ORR_WHATIF_MEMORY);
	assert_int_equal(h[0].value, 2);
	assert_int_equal(h[0].tries, ORR_WHATIF_TRY_FSDP | ORR_WHATIF_TRY_DISTOPT |
					     ORR_WHATIF_TRY_RECOMPUTE | ORR_WHATIF_TRY_GPUS);
	for (size_t k = 1; k < n; k++)
		assert_true(h[k].count <= h[k - 1].count);
	orr_whatif_tally_release(&t);
	orr_whatif_job_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_describe_refused),
		cmocka_unit_test(test_describe_nic_out_of_range),
		cmocka_unit_test(test_describe_layers_past_the_limit),
		cmocka_unit_test(test_trace_as_recorded),
		cmocka_unit_test(test_sweep_hints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
