/* SPDX-License-Identifier: MIT */
/*
 * Sweeps of layouts (what-if/): the plan enumerates what Megatron-LM would run and names
 * why it would not run the rest, a configuration is estimated as its synthesized step
 * placed, the result does not depend on the threads or on how the configurations are
 * shared among processes, and the ranking and Pareto front are what they say.
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

#include "orrery/whatif.h"

/* A small GPT: 8 layers, h 1024, 16 heads, s 1024. */
static struct orr_whatif_space space(void)
{
	return (struct orr_whatif_space){
		.base = { .layers = 8,
			  .hidden = 1024,
			  .heads = 16,
			  .kv_groups = 16,
			  .ffn = 4096,
			  .vocab = 50257,
			  .seq = 1024,
			  .flash_attention = true,
			  .precision = ORR_DTYPE_BF16,
			  .sequence_parallel = true,
			  .distributed_optimizer = true },
		.gpus_min = 8,
		.gpus_max = 8,
		.global_batch = 16,
		.sequence_parallel = ORR_WHATIF_AUTO,
		.distributed_optimizer = ORR_WHATIF_AUTO,
		.gpus_per_node = 8,
	};
}

static struct orr_whatif_context context(void)
{
	const struct orr_gpu_spec *gpu = orr_gpu_spec_by_id("a100-80gb-sxm");

	return (struct orr_whatif_context){
		.gpu = gpu,
		.costs = { .gpu = gpu, .cpu_op_ns = 5000 },
		.replayed_ns = NAN,
		.recorded_synth_ns = NAN,
	};
}

static struct orr_whatif_plan *plan(const struct orr_whatif_space *s)
{
	struct orr_whatif_plan *p = NULL;

	assert_int_equal(orr_whatif_plan_new(s, &p), 0);
	return p;
}

/* Default lists: TP 1..16 by powers of two, PP 1, 2, 4, 8, VPP and micro-batch divisors. */
static void test_plan_enumerates(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_plan *p = plan(&s);
	uint64_t n = orr_whatif_plan_count(p), feasible = 0;
	bool seen_recorded = false;

	(void)state;
	/* TP x PP dividing 8: (1,1..8) (2,1..4) (4,1..2) (8,1) = 10 prefixes, x 4 vpp x 5
	 * micro-batches x 3 recompute */
	assert_int_equal(n, 10 * 4 * 5 * 3);
	for (uint64_t i = 0; i < n; i++) {
		struct orr_train_config c;
		enum orr_whatif_why w = orr_whatif_config(p, i, &c);

		if (w == ORR_WHATIF_WHY_COUNT)
			continue;
		assert_int_equal(c.tp * c.pp * c.dp * c.cp, 8);
		assert_int_equal(c.vocab % (128 * c.tp), 0);
		assert_true(c.vocab >= 50257);
		assert_int_equal(c.sequence_parallel, c.tp > 1);
		assert_int_equal(c.distributed_optimizer, c.dp > 1);
		if (w != ORR_WHATIF_FEASIBLE)
			continue;
		feasible++;
		assert_int_equal(c.micro_batch * c.micro_batches * c.dp, 16);
		assert_int_equal(c.layers % (c.pp * c.vpp), 0);
		assert_true(c.vpp == 1 || (c.pp > 1 && c.micro_batches % c.pp == 0));
		seen_recorded |= c.tp == 2 && c.pp == 2 && c.dp == 2 && c.micro_batch == 2;
	}
	assert_true(feasible > 0 && seen_recorded);
	assert_int_equal(orr_whatif_config(p, n, &(struct orr_train_config){ 0 }),
			 ORR_WHATIF_WHY_COUNT);
	orr_whatif_plan_free(p);
}

/* Given lists: each reason Megatron would give, counted. */
static void test_plan_reasons(void **state)
{
	static const int64_t tp[] = { 3, 16 }, pp[] = { 2 }, vpp[] = { 2, 3 }, mb[] = { 1, 3 };
	static const int64_t cp[] = { 2 }, tp1[] = { 1 };
	struct orr_whatif_space s = space();
	struct orr_whatif_plan *p;
	size_t count[ORR_WHATIF_WHY_COUNT + 1] = { 0 };
	struct orr_train_config c;

	(void)state;
	s.gpus_min = s.gpus_max = 32;
	s.tp = (struct orr_whatif_list){ tp, 2 };
	s.pp = (struct orr_whatif_list){ pp, 1 };
	s.vpp = (struct orr_whatif_list){ vpp, 2 };
	s.micro_batch = (struct orr_whatif_list){ mb, 2 };
	s.recompute = 1u << ORR_RECOMPUTE_NONE;
	s.global_batch = 32;
	/* tp 3 leaves no layout of 32 GPUs; tp 16 is past a node */
	p = plan(&s);
	assert_int_equal(orr_whatif_plan_count(p), 1 * 2 * 2);
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++)
		count[orr_whatif_config(p, i, &c)]++;
	assert_int_equal(count[ORR_WHATIF_CROSS_NODE], 4);
	orr_whatif_plan_free(p);
	s.allow_cross_node_tp = true;
	p = plan(&s);
	memset(count, 0, sizeof(count));
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++)
		count[orr_whatif_config(p, i, &c)]++;
	/* 32 GPUs = 16 x 2 x 1: vpp 3 does not divide 4 layers per stage; micro-batch 3 not
	 * the batch; vpp 2 with 32 micro-batches of 1 over pp 2 is fine */
	assert_int_equal(count[ORR_WHATIF_HEADS], 0);
	assert_int_equal(count[ORR_WHATIF_LAYERS], 2);
	assert_int_equal(count[ORR_WHATIF_BATCH], 1);
	assert_int_equal(count[ORR_WHATIF_FEASIBLE], 1);
	orr_whatif_plan_free(p);
	/* TP 16 splits 16 heads but not an FFN of 4104; CP 2 needs a sequence of 4 */
	s.base.ffn = 4104;
	s.vpp = (struct orr_whatif_list){ tp1, 1 };
	s.micro_batch = (struct orr_whatif_list){ tp1, 1 };
	p = plan(&s);
	assert_int_equal(orr_whatif_config(p, 0, &c), ORR_WHATIF_HEADS);
	orr_whatif_plan_free(p);
	s = space();
	s.cp = (struct orr_whatif_list){ cp, 1 };
	s.tp = (struct orr_whatif_list){ tp1, 1 };
	s.base.seq = 1026;
	p = plan(&s);
	assert_int_equal(orr_whatif_config(p, 0, &c), ORR_WHATIF_SEQUENCE);
	orr_whatif_plan_free(p);
}

static void test_plan_refuses(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_plan *p = NULL;
	static const int64_t zero[] = { 0 };

	(void)state;
	s.gpus_min = 0;
	assert_int_equal(orr_whatif_plan_new(&s, &p), -EINVAL);
	s = space();
	s.gpus_max = 4;
	assert_int_equal(orr_whatif_plan_new(&s, &p), -EINVAL);
	s = space();
	s.global_batch = 0;
	assert_int_equal(orr_whatif_plan_new(&s, &p), -EINVAL);
	s = space();
	s.pp = (struct orr_whatif_list){ zero, 1 };
	assert_int_equal(orr_whatif_plan_new(&s, &p), -EINVAL);
	s = space();
	s.base.hidden = 1000; /* not a multiple of 16 heads */
	assert_int_equal(orr_whatif_plan_new(&s, &p), -EINVAL);
	assert_null(p);
}

/* A configuration's step is its synthesized step placed; memory is checked first. */
static void test_eval(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_context x = context();
	struct orr_whatif_plan *p = plan(&s);
	struct orr_whatif_result r;
	struct orr_synth full;
	uint64_t i = 0;

	(void)state;
	while (orr_whatif_config(p, i, &r.c) != ORR_WHATIF_FEASIBLE)
		i++;
	assert_int_equal(orr_whatif_eval(p, &x, i, NULL, &r), 0);
	assert_int_equal(r.why, ORR_WHATIF_FEASIBLE);
	assert_int_equal(r.index, i);
	assert_int_equal(orr_synth_step(&r.c, false, &x.costs, &full, NULL), 0);
	assert_true(r.step_ns == full.placed_ns);
	orr_synth_release(&full);
	assert_true(r.compute_ns > 0 && r.tokens_per_s_per_gpu > 0 && r.mfu > 0 && r.mfu < 1);
	assert_true(r.memory.fits && r.memory.total_bytes > 0);
	/* with a trace: its replay x the ratio of the synthesized steps */
	x.replayed_ns = 2 * r.synth.placed_ns;
	x.recorded_synth_ns = r.synth.placed_ns;
	assert_int_equal(orr_whatif_eval(p, &x, i, NULL, &r), 0);
	assert_true(fabs(r.step_ns / (2 * r.synth.placed_ns) - 1) < 1e-12);
	assert_true(fabs(r.compute_ns + r.exposed_comm_ns + r.bubble_ns + r.other_ns - r.step_ns) <
		    1e-6 * r.step_ns);
	/* memory: a GPU far too small */
	x = context();
	x.reserve_bytes = 1e15;
	assert_int_equal(orr_whatif_eval(p, &x, i, NULL, &r), 0);
	assert_int_equal(r.why, ORR_WHATIF_MEMORY);
	assert_true(isnan(r.step_ns));
	x.gpu = NULL;
	assert_int_equal(orr_whatif_eval(p, &x, i, NULL, &r), -EINVAL);
	orr_whatif_plan_free(p);
}

static void assert_same(const struct orr_whatif_result *a, size_t na,
			const struct orr_whatif_result *b, size_t nb)
{
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(a[i].index, b[i].index);
		assert_int_equal(a[i].why, b[i].why);
		assert_true(a[i].step_ns == b[i].step_ns ||
			    (isnan(a[i].step_ns) && isnan(b[i].step_ns)));
	}
}

static void count_progress(void *data, uint64_t done, uint64_t total)
{
	uint64_t *last = data;

	assert_true(done <= total);
	*last = done;
}

/* One thread, three, and three parts gathered: the same results in the same order. */
static void test_run_same_everywhere(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_context x = context();
	struct orr_whatif_plan *p;
	struct orr_whatif_result *one, *three, *part[3], *all;
	size_t n1, n3, np[3], n = 0;
	uint64_t last = 0;

	(void)state;
	s.gpus_min = 4;
	p = plan(&s);
	assert_int_equal(orr_whatif_run(p, &x, 0, 1, 1, NULL, NULL, &one, &n1), 0);
	assert_int_equal(orr_whatif_run(p, &x, 0, 1, 3, count_progress, &last, &three, &n3), 0);
	assert_true(n1 > 0);
	assert_int_equal(last, orr_whatif_plan_count(p));
	assert_same(one, n1, three, n3);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(
			orr_whatif_run(p, &x, (uint64_t)k, 3, 2, NULL, NULL, &part[k], &np[k]), 0);
		n += np[k];
	}
	all = malloc(n * sizeof(*all));
	assert_non_null(all);
	/* a merge of the parts by index, as rank 0 gathers them */
	for (size_t i = 0, k0 = 0, k1 = 0, k2 = 0; i < n; i++) {
		uint64_t a = k0 < np[0] ? part[0][k0].index : UINT64_MAX;
		uint64_t b = k1 < np[1] ? part[1][k1].index : UINT64_MAX;
		uint64_t c = k2 < np[2] ? part[2][k2].index : UINT64_MAX;

		if (a < b && a < c)
			all[i] = part[0][k0++];
		else if (b < c)
			all[i] = part[1][k1++];
		else
			all[i] = part[2][k2++];
	}
	assert_same(one, n1, all, n);
	assert_int_equal(orr_whatif_run(p, &x, 3, 3, 1, NULL, NULL, &all, &n), -EINVAL);
	for (int k = 0; k < 3; k++)
		free(part[k]);
	free(all);
	free(one);
	free(three);
	orr_whatif_plan_free(p);
}

static struct orr_whatif_result made(uint64_t index, int64_t gpus, double ns, double tokens)
{
	return (struct orr_whatif_result){
		.index = index, .gpus = gpus, .step_ns = ns, .tokens_per_s_per_gpu = tokens
	};
}

static void test_rank_and_pareto(void **state)
{
	struct orr_whatif_result v[6] = {
		made(0, 8, 300, 10), made(1, 4, 500, 12), made(2, 8, 200, 9),
		made(3, 16, 250, 5), made(4, 16, 150, 4), made(5, 4, 200, 30),
	};
	size_t *r, n;

	(void)state;
	v[5].why = ORR_WHATIF_MEMORY; /* not ranked, not on the front */
	orr_whatif_rank(v, 6, ORR_WHATIF_RANK_TIME, &r, &n);
	assert_int_equal(n, 5);
	assert_int_equal(r[0], 4);
	assert_int_equal(r[1], 2);
	assert_int_equal(r[2], 3);
	free(r);
	orr_whatif_rank(v, 6, ORR_WHATIF_RANK_TOKENS, &r, &n);
	assert_int_equal(r[0], 1);
	free(r);
	orr_whatif_rank(v, 6, ORR_WHATIF_RANK_COST, &r, &n);
	assert_int_equal(r[0], 2); /* 8 x 200 */
	free(r);
	orr_whatif_pareto(v, 6, &r, &n);
	/* 4 GPUs: 500; 8: 200; 16: 150 */
	assert_int_equal(n, 3);
	assert_int_equal(r[0], 1);
	assert_int_equal(r[1], 2);
	assert_int_equal(r[2], 4);
	free(r);
	v[4].step_ns = 250; /* 16 GPUs no faster than 8: off the front */
	v[3].step_ns = 260;
	orr_whatif_pareto(v, 6, &r, &n);
	assert_int_equal(n, 2);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_enumerates),     cmocka_unit_test(test_plan_reasons),
		cmocka_unit_test(test_plan_refuses),        cmocka_unit_test(test_eval),
		cmocka_unit_test(test_run_same_everywhere), cmocka_unit_test(test_rank_and_pareto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
