/* SPDX-License-Identifier: MIT */
/*
 * Re-timing the Megatron TP=8 trace for other configurations (estimator/retime.c): at
 * its own configuration nothing changes, so its estimate is its replay; more tensor
 * parallelism at the same batch never gives a GPU more compute; the TP all-reduces
 * carry the same bytes over other groups; and what only a rewrite of the graph can do
 * is refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"
#include "test-util.h"

struct job {
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_structure st;
	struct orr_train_config from;
	struct orr_gemm_model gm;
	float *f;
};

static void job_open(struct job *j)
{
	struct orr_gemm_sample *s;
	struct orr_diag d;
	size_t n;

	j->t = import_shared("astrasim-megatron-tp8");
	if (orr_graph_build(j->t, NULL, &j->g, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(orr_structure_recover(j->g, 0, &j->st), 0);
	assert_int_equal(orr_train_config_from_structure(&j->st, &j->from, NULL), 0);
	j->from.precision = ORR_DTYPE_FP16;
	n = orr_gemm_observe(j->g, &s, NULL);
	assert_int_equal(orr_gemm_model_fit(s, n, orr_gpu_spec_find(j->g), &j->gm), 0);
	free(s);
	j->f = orr_xmalloc(orr_graph_task_count(j->g) * sizeof(*j->f));
}

static void job_close(struct job *j)
{
	free(j->f);
	orr_gemm_model_release(&j->gm);
	orr_graph_free(j->g);
	orr_trace_free(j->t);
}

static int retime(struct job *j, const struct orr_train_config *to, bool model,
		  struct orr_retime *r, const char **why)
{
	struct orr_retime_models m = { .gemm = model ? &j->gm : NULL };

	return orr_retime(j->g, &j->st, &j->from, to, &m, j->f, r, why);
}

/* The mean job step of the graph replayed with factors f (NULL: none). */
static double step_ns(const struct orr_graph *g, const float *f)
{
	const struct orr_replay_options o = { .task_factors = f };
	struct orr_replay_step *s;
	struct orr_replay *r;
	struct orr_diag d;
	double sum = 0;
	size_t n;

	if (orr_replay_run(g, f ? &o : NULL, &r, &d))
		fail_msg("%s", d.msg);
	orr_replay_job_steps(r, &s, &n);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++)
		sum += (double)(s[i].predicted_end_ns - s[i].predicted_start_ns);
	free(s);
	orr_replay_free(r);
	return sum / (double)n;
}

/* At its own configuration every factor is 1 and the estimate is the replay. */
static void test_retime_itself(void **state)
{
	struct job j;
	struct orr_retime r;

	(void)state;
	job_open(&j);
	assert_int_equal(retime(&j, &j.from, true, &r, NULL), 0);
	for (size_t t = 0; t < orr_graph_task_count(j.g); t++)
		if (j.f[t] != 1)
			fail_msg("task %zu: factor %g at the trace's own configuration", t,
				 (double)j.f[t]);
	assert_int_equal(r.gemms, 241 * 8);
	assert_int_equal(r.gemms_modeled, r.gemms);
	/* The time summed by kind of task is what was measured, unchanged. */
	for (int k = 0; k < ORR_GEMM_ROLE_COUNT; k++)
		assert_float_equal(r.gemm_ns[k][1], r.gemm_ns[k][0], 0);
	assert_true(r.gemm_ns[ORR_GEMM_ROLE_FC1][0] > 0 && r.tp_ns[0] > 0 && r.kernel_ns[0] > 0);
	assert_float_equal(r.tp_ns[1], r.tp_ns[0], 0);
	assert_float_equal(r.kernel_ns[1], r.kernel_ns[0], 0);
	assert_float_equal(r.dp_ns[0], 0, 0);
	assert_true(r.collectives >= 81 * 8);
	assert_float_equal(step_ns(j.g, j.f), step_ns(j.g, NULL), 0);
	job_close(&j);
}

/* The compute of rank 0's GPU, its collectives aside, re-timed. */
static double compute_ns(const struct job *j)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(j->g, 0);
	const struct orr_task *tasks = orr_graph_tasks(j->g);
	double sum = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_event *e = orr_graph_task_event(j->g, t);

		if (tasks[t].kind == ORR_TASK_GPU && e->coll >= gr->rank->ncollectives)
			sum += (double)tasks[t].dur_ns * j->f[t];
	}
	return sum;
}

/*
 * TP 4, 8, 16 at the same batch: each GPU computes less as there are more of them.
 * Without the GEMM model a GEMM's FLOPs give its factor: 2 at TP 4 for every role.
 * The TP all-reduces carry T·h bytes whatever the TP: F(4)/F(8) at TP 4 inside the
 * node, and over the NIC at TP 16 (more than a node's 8 GPUs).
 */
static void test_retime_tp(void **state)
{
	const double f4 = 2.0 * 3 / 4, f8 = 2.0 * 7 / 8, f16 = 2.0 * 15 / 16;
	const struct orr_gpu_spec *a100 = orr_gpu_spec_by_id("a100-80gb-sxm");
	struct orr_train_config to;
	struct orr_retime r;
	double c4, c8, c16;
	size_t gemms = 0, reduces = 0;
	struct job j;

	(void)state;
	job_open(&j);
	to = j.from;
	to.tp = 4;
	assert_int_equal(retime(&j, &to, true, &r, NULL), 0);
	c4 = compute_ns(&j);
	to.tp = 16;
	assert_int_equal(retime(&j, &to, true, &r, NULL), 0);
	c16 = compute_ns(&j);
	assert_int_equal(retime(&j, &j.from, true, &r, NULL), 0);
	c8 = compute_ns(&j);
	if (!(c4 > c8 && c8 > c16))
		fail_msg("compute per GPU: TP 4 %.0f, TP 8 %.0f, TP 16 %.0f ns", c4, c8, c16);

	to.tp = 4;
	assert_int_equal(retime(&j, &to, false, &r, NULL), 0);
	assert_int_equal(r.gemms_modeled, 0);
	for (size_t t = 0; t < orr_graph_task_count(j.g); t++) {
		const char *name = orr_graph_task_name(j.g, (uint32_t)t);

		if (strstr(name, "gemm") && j.f[t] != 1) {
			assert_float_equal(j.f[t], 2, 1e-6);
			gemms++;
		}
		if (strstr(name, "AllReduce") && j.f[t] != 1) {
			assert_float_equal(j.f[t], f4 / f8, 1e-6);
			reduces++;
		}
	}
	assert_int_equal(gemms, r.gemms);
	assert_int_equal(reduces, 81 * 8);
	for (int k = ORR_GEMM_ROLE_QKV; k < ORR_GEMM_ROLE_COUNT; k++)
		assert_float_equal(r.gemm_ns[k][1], 2 * r.gemm_ns[k][0], 1e-6 * r.gemm_ns[k][0]);
	assert_float_equal(r.tp_ns[1], f4 / f8 * r.tp_ns[0], 1e-6 * r.tp_ns[0]);
	to.tp = 16;
	assert_int_equal(retime(&j, &to, false, &r, NULL), 0);
	reduces = 0;
	for (size_t t = 0; t < orr_graph_task_count(j.g); t++)
		if (strstr(orr_graph_task_name(j.g, (uint32_t)t), "AllReduce") && j.f[t] != 1) {
			assert_float_equal(
				j.f[t], f16 / f8 * a100->link_bytes_per_s / a100->nic_bytes_per_s,
				1e-5);
			reduces++;
		}
	assert_int_equal(reduces, 81 * 8);
	job_close(&j);
}

/*
 * With a constrained all-reduce model (made here: 10 us + S·F(n) / 200 GB/s over 2 to
 * 8 ranks) the TP all-reduces take its time ratio; past the node (TP 16) with no
 * network model, bandwidth again; with 16 GPUs per node, the model again.
 */
static void test_retime_collective_model(void **state)
{
	struct orr_coll_sample cs[48];
	struct orr_coll_model cm;
	struct orr_retime_models m = { 0 };
	struct orr_train_config to;
	struct orr_retime r;
	struct job j;
	double ratio;
	size_t n = 0, seen = 0;

	(void)state;
	for (int g = 2; g <= 8; g *= 2)
		for (int k = 0; k < 16; k++) {
			double bytes = (double)(1 << 20) * (1 << (k % 8)) * (1 + k / 8);

			cs[n++] = (struct orr_coll_sample){
				bytes, g,
				1e4 + bytes * orr_coll_bus_factor(ORR_COLL_ALL_REDUCE, g) / 200e9 *
						1e9
			};
		}
	assert_int_equal(orr_coll_model_fit(ORR_COLL_ALL_REDUCE, cs, n, &cm), 0);
	assert_true(cm.constrained);
	job_open(&j);
	m.coll[ORR_COLL_ALL_REDUCE][ORR_LINK_UNKNOWN] = &cm;
	to = j.from;
	to.tp = 4;
	assert_int_equal(orr_retime(j.g, &j.st, &j.from, &to, &m, j.f, &r, NULL), 0);
	assert_int_equal(r.collectives_modeled, 81 * 8);
	/* 64 MiB, the Megatron job's T·h in fp16. */
	ratio = orr_coll_model_time(&cm, 64.0 * (1 << 20), 4) /
		orr_coll_model_time(&cm, 64.0 * (1 << 20), 8);
	for (size_t t = 0; t < orr_graph_task_count(j.g); t++)
		if (strstr(orr_graph_task_name(j.g, (uint32_t)t), "AllReduce") && j.f[t] != 1) {
			assert_float_equal(j.f[t], ratio, 1e-6);
			seen++;
		}
	assert_int_equal(seen, 81 * 8);
	to.tp = 16;
	assert_int_equal(orr_retime(j.g, &j.st, &j.from, &to, &m, j.f, &r, NULL), 0);
	assert_int_equal(r.collectives_modeled, 0);
	m.gpus_per_node = 16;
	assert_int_equal(orr_retime(j.g, &j.st, &j.from, &to, &m, j.f, &r, NULL), 0);
	assert_int_equal(r.collectives_modeled, 81 * 8);
	job_close(&j);
}

/* What changes the tasks themselves is refused by name; so is a layout Megatron refuses. */
static void test_retime_refuses(void **state)
{
	static const struct {
		size_t offset;
		int64_t value;
		const char *why;
	} cases[] = {
		{ offsetof(struct orr_train_config, layers), 20, "layers" },
		{ offsetof(struct orr_train_config, pp), 2, "pipeline stages" },
		{ offsetof(struct orr_train_config, micro_batches), 4, "micro-batches per step" },
		{ offsetof(struct orr_train_config, cp), 2, "context parallelism" },
	};
	struct orr_train_config to;
	struct orr_retime r;
	const char *why;
	struct job j, k;

	(void)state;
	job_open(&j);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		to = j.from;
		*(int64_t *)((char *)&to + cases[i].offset) = cases[i].value;
		why = NULL;
		assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
		assert_string_equal(why, cases[i].why);
	}
	to = j.from;
	to.recompute = ORR_RECOMPUTE_FULL;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	assert_string_equal(why, "recompute");
	to = j.from;
	to.sequence_parallel = true;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	/* how DP shares the state and when it reduces: other collectives */
	to = j.from;
	to.fully_sharded = true;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	assert_string_equal(why, "full sharding (FSDP, ZeRO-3)");
	to = j.from;
	to.overlap_grad_reduce = true;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	to = j.from;
	to.flash_attention = !to.flash_attention;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	/* timers that synchronize add waits to every pass */
	to = j.from;
	to.sync_timers = true;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	assert_string_equal(why, "timers that synchronize the device");
	/* checkpointed layers that synchronize: none without full recompute, nothing changes */
	to = j.from;
	assert_int_equal(to.recompute, ORR_RECOMPUTE_NONE);
	to.sync_layers = true;
	why = "unset";
	assert_int_equal(retime(&j, &to, true, &r, &why), 0);
	assert_null(why);
	/* with full recompute on both sides, they come in: a structural change */
	k = j;
	k.from.recompute = ORR_RECOMPUTE_FULL;
	to = k.from;
	to.sync_layers = true;
	assert_int_equal(retime(&k, &to, true, &r, &why), -ENOTSUP);
	assert_string_equal(why, "checkpointed layers that synchronize the device");
	/* the scatter-gather of pipeline transfers: none at PP 1, so nothing changes */
	to = j.from;
	assert_int_equal(to.pp, 1);
	to.scatter_gather_p2p = true;
	why = "unset";
	assert_int_equal(retime(&j, &to, true, &r, &why), 0);
	assert_null(why);
	/* TP 1 has no TP collectives to re-time; DP 2 would need gradient collectives. */
	to = j.from;
	to.tp = 1;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	assert_non_null(strstr(why, "tensor parallelism"));
	to = j.from;
	to.dp = 2;
	assert_int_equal(retime(&j, &to, true, &r, &why), -ENOTSUP);
	assert_non_null(strstr(why, "data parallelism"));
	to = j.from;
	to.tp = 3;
	assert_int_equal(retime(&j, &to, true, &r, &why), -EINVAL);
	job_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retime_itself),
		cmocka_unit_test(test_retime_tp),
		cmocka_unit_test(test_retime_collective_model),
		cmocka_unit_test(test_retime_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
