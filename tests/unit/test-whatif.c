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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/whatif.h"
#include "whatif-test.h"

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

/*
 * Uneven splits when asked: each first/last pair tried on PP 2 or more (none on PP 1),
 * no VPP above 1 from the default list with one, and a pair Megatron would refuse
 * counted as layers.  8 layers on 8 GPUs, TP 1, micro-batch 1, recompute none.
 */
static void test_plan_uneven(void **state)
{
	static const int64_t tp[] = { 1 }, pp[] = { 1, 4 }, mb[] = { 1 };
	static const int64_t first[] = { 0, 3 }, last[] = { 0, 1 }, neg[] = { -1 };
	struct orr_whatif_space s = space();
	struct orr_whatif_plan *p, *q;
	size_t count[ORR_WHATIF_WHY_COUNT + 1] = { 0 };
	struct orr_train_config c;

	(void)state;
	s.tp = (struct orr_whatif_list){ tp, 1 };
	s.pp = (struct orr_whatif_list){ pp, 2 };
	s.micro_batch = (struct orr_whatif_list){ mb, 1 };
	s.recompute = 1u << ORR_RECOMPUTE_NONE;
	s.first_stage = (struct orr_whatif_list){ first, 2 };
	s.last_stage = (struct orr_whatif_list){ last, 2 };
	p = plan(&s);
	/* 2 prefixes x 4 VPP x 2 x 2 */
	assert_int_equal(orr_whatif_plan_count(p), 2 * 4 * 2 * 2);
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++) {
		enum orr_whatif_why w = orr_whatif_config(p, i, &c);

		count[w]++;
		if (w == ORR_WHATIF_WHY_COUNT)
			continue;
		assert_true(c.pp > 1 || !orr_train_uneven(&c));
		assert_true(c.vpp == 1 || !orr_train_uneven(&c));
		assert_int_equal(orr_whatif_find(p, &c), i);
		if (w == ORR_WHATIF_FEASIBLE && orr_train_uneven(&c)) {
			/* 3, 2, 2, 1 is the only uneven split of 8 layers here */
			assert_int_equal(c.first_stage_layers, 3);
			assert_int_equal(c.last_stage_layers, 1);
		}
	}
	/* PP 1: VPP 1 even; PP 4: VPP 1 and 2 even, and 3 uneven pairs at VPP 1 */
	assert_int_equal(count[ORR_WHATIF_FEASIBLE], 1 + 2 + 1);
	assert_int_equal(count[ORR_WHATIF_LAYERS], 2); /* 3/- and -/1 */
	s.last_stage = (struct orr_whatif_list){ neg, 1 };
	assert_int_equal(orr_whatif_plan_new(&s, &q), -EINVAL);
	orr_whatif_plan_free(p);
}

/*
 * The default micro-batches are the global batch's divisors, in order, found up to its
 * square root: a trace's world size of 2^31 - 1 makes a batch of that times its
 * micro-batches (a loop up to the batch took minutes; a prime near 10^12 takes hours).
 */
static void test_plan_micro_batches_divide_the_batch(void **state)
{
	static const int64_t one[] = { 1 };
	static const int64_t batches[] = { 36, INT64_C(1) << 40, INT64_C(999999999989) };
	static const int64_t want36[] = { 1, 2, 3, 4, 6, 9, 12, 18, 36 };

	(void)state;
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		struct orr_whatif_space s = space();
		struct orr_whatif_plan *p;
		struct orr_train_config c;
		uint64_t n;

		s.gpus_min = s.gpus_max = 1;
		s.tp = s.pp = s.vpp = (struct orr_whatif_list){ one, 1 };
		s.recompute = 1u << ORR_RECOMPUTE_NONE;
		s.global_batch = batches[b];
		p = plan(&s);
		n = orr_whatif_plan_count(p);
		assert_int_equal(n, b == 0 ? 9 : b == 1 ? 41 : 2);
		for (uint64_t i = 0; i < n; i++) {
			assert_true(orr_whatif_config(p, i, &c) != ORR_WHATIF_WHY_COUNT);
			if (b == 0)
				assert_int_equal(c.micro_batch, want36[i]);
			else if (b == 1)
				assert_int_equal(c.micro_batch, INT64_C(1) << i);
			else
				assert_int_equal(c.micro_batch, i ? batches[b] : 1);
		}
		orr_whatif_plan_free(p);
	}
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

/* A sink that keeps every result, in the order received. */
struct kept {
	struct orr_whatif_result *v;
	size_t n, cap;
	int stop_after; /* > 0: stop the sweep at that many */
};

static int keep(void *data, const struct orr_whatif_result *r)
{
	struct kept *k = data;

	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
		assert_non_null(k->v);
	}
	k->v[k->n++] = *r;
	return k->stop_after > 0 && k->n == (size_t)k->stop_after ? -ECANCELED : 0;
}

/* One thread, three, and three parts merged: the same results in the same order. */
static void test_run_same_everywhere(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_context x = context();
	struct orr_whatif_plan *p;
	struct kept one = { 0 }, three = { 0 }, part[3] = { 0 }, all = { 0 }, cut = { 0 };
	uint64_t last = 0;

	(void)state;
	s.gpus_min = 4;
	p = plan(&s);
	assert_int_equal(orr_whatif_run(p, &x, 0, 1, 1, NULL, NULL, keep, &one), 0);
	assert_int_equal(orr_whatif_run(p, &x, 0, 1, 3, count_progress, &last, keep, &three), 0);
	assert_true(one.n > 0);
	assert_int_equal(last, orr_whatif_plan_count(p));
	for (size_t i = 1; i < one.n; i++)
		assert_true(one.v[i - 1].index < one.v[i].index);
	assert_same(one.v, one.n, three.v, three.n);
	for (int k = 0; k < 3; k++)
		assert_int_equal(
			orr_whatif_run(p, &x, (uint64_t)k, 3, 2, NULL, NULL, keep, &part[k]), 0);
	/* a merge of the parts by index, as rank 0 merges them */
	for (size_t k0 = 0, k1 = 0, k2 = 0; k0 + k1 + k2 < part[0].n + part[1].n + part[2].n;) {
		uint64_t a = k0 < part[0].n ? part[0].v[k0].index : UINT64_MAX;
		uint64_t b = k1 < part[1].n ? part[1].v[k1].index : UINT64_MAX;
		uint64_t c = k2 < part[2].n ? part[2].v[k2].index : UINT64_MAX;

		if (a < b && a < c)
			keep(&all, &part[0].v[k0++]);
		else if (b < c)
			keep(&all, &part[1].v[k1++]);
		else
			keep(&all, &part[2].v[k2++]);
	}
	assert_same(one.v, one.n, all.v, all.n);
	assert_int_equal(orr_whatif_run(p, &x, 3, 3, 1, NULL, NULL, keep, &all), -EINVAL);
	/* a sink that stops the sweep: what it returned, nothing after */
	cut.stop_after = 5;
	assert_int_equal(orr_whatif_run(p, &x, 0, 1, 2, NULL, NULL, keep, &cut), -ECANCELED);
	assert_int_equal(cut.n, 5);
	assert_same(one.v, 5, cut.v, cut.n);
	for (int k = 0; k < 3; k++)
		free(part[k].v);
	free(all.v);
	free(one.v);
	free(three.v);
	free(cut.v);
	orr_whatif_plan_free(p);
}

/* Shares: every configuration in one, in range, the same every time, none far short. */
static void test_part(void **state)
{
	uint64_t n[3] = { 0 }, same = 0;

	(void)state;
	for (uint64_t i = 0; i < 30000; i++) {
		uint64_t k = orr_whatif_part(i, 3);

		assert_true(k < 3);
		assert_int_equal(k, orr_whatif_part(i, 3));
		assert_int_equal(orr_whatif_part(i, 1), 0);
		n[k]++;
	}
	for (int k = 0; k < 3; k++)
		assert_true(n[k] > 9500 && n[k] < 10500);
	/* not the number modulo the parts, which alternates: some neighbours share a part */
	for (uint64_t i = 0; i + 1 < 64; i++)
		same += orr_whatif_part(i, 2) == orr_whatif_part(i + 1, 2);
	assert_true(same > 8 && same < 56);
}

/* Every configuration of a plan is found at its own number; one not in it is not. */
static void test_find(void **state)
{
	struct orr_whatif_space s = space();
	struct orr_whatif_plan *p;
	struct orr_train_config c;
	size_t found = 0;

	(void)state;
	s.gpus_min = 4;
	p = plan(&s);
	for (uint64_t i = 0; i < orr_whatif_plan_count(p); i++) {
		if (orr_whatif_config(p, i, &c) == ORR_WHATIF_WHY_COUNT)
			continue;
		assert_int_equal(orr_whatif_find(p, &c), i);
		found++;
	}
	assert_true(found > 10);
	c.tp = 3; /* not in the TP list */
	assert_int_equal(orr_whatif_find(p, &c), UINT64_MAX);
	orr_whatif_config(p, 0, &c);
	c.hidden *= 2; /* another model */
	assert_int_equal(orr_whatif_find(p, &c), UINT64_MAX);
	orr_whatif_plan_free(p);
}

static struct orr_whatif_result made(uint64_t index, int64_t gpus, double ns, double tokens)
{
	return (struct orr_whatif_result){
		.index = index, .gpus = gpus, .step_ns = ns, .tokens_per_s_per_gpu = tokens
	};
}

/* A tally of v, best top kept, mark v[m] (none when m < 0). */
static void tally(struct orr_whatif_tally *t, const struct orr_whatif_result *v, size_t n,
		  enum orr_whatif_rank by, size_t top, int m)
{
	orr_whatif_tally_init(t, by, top, m >= 0 ? &v[m] : NULL);
	for (size_t i = 0; i < n; i++)
		orr_whatif_tally_add(t, &v[i]);
	orr_whatif_tally_finish(t);
}

static void test_tally(void **state)
{
	/* in the space's order: fewer GPUs first */
	struct orr_whatif_result v[7] = {
		made(0, 4, 500, 12), made(1, 4, 200, 30), made(2, 8, 300, 10), made(3, 8, 200, 9),
		made(4, 16, 250, 5), made(5, 16, 150, 4), made(6, 16, 150, 4),
	};
	struct orr_whatif_tally t;

	(void)state;
	v[1].why = ORR_WHATIF_MEMORY; /* not ranked, not on the front */
	tally(&t, v, 7, ORR_WHATIF_RANK_TIME, 3, 2);
	assert_int_equal(t.n, 7);
	assert_int_equal(t.count[ORR_WHATIF_FEASIBLE], 6);
	assert_int_equal(t.count[ORR_WHATIF_MEMORY], 1);
	assert_int_equal(t.nbest, 3);
	assert_int_equal(t.best[0].index, 5); /* 150, ties in the space's order */
	assert_int_equal(t.best[1].index, 6);
	assert_int_equal(t.best[2].index, 3);
	assert_int_equal(t.mark_place, 5); /* 300: after 150, 150, 200, 250 */
	assert_int_equal(orr_whatif_tally_place(&t, &v[5]), 1);
	assert_int_equal(orr_whatif_tally_place(&t, &v[2]), 5); /* the mark, past the best */
	assert_int_equal(orr_whatif_tally_place(&t, &v[4]), 0); /* neither */
	/* 4 GPUs: 500; 8: 200; 16: 150 (the first of two) */
	assert_int_equal(t.nfront, 3);
	assert_int_equal(t.front[0].index, 0);
	assert_int_equal(t.front[1].index, 3);
	assert_int_equal(t.front[2].index, 5);
	orr_whatif_tally_release(&t);
	tally(&t, v, 7, ORR_WHATIF_RANK_TOKENS, 1, 1);
	assert_int_equal(t.nbest, 1);
	assert_int_equal(t.best[0].index, 0);
	assert_int_equal(t.mark_place, 0); /* the marked one is not feasible */
	orr_whatif_tally_release(&t);
	tally(&t, v, 7, ORR_WHATIF_RANK_COST, 0, -1);
	assert_int_equal(t.nbest, 6);         /* every one kept */
	assert_int_equal(t.best[0].index, 3); /* 8 x 200 */
	for (size_t i = 1; i < t.nbest; i++)
		assert_true(t.best[i - 1].step_ns * (double)t.best[i - 1].gpus <=
			    t.best[i].step_ns * (double)t.best[i].gpus);
	assert_false(t.marked);
	orr_whatif_tally_release(&t);
	v[5].step_ns = v[6].step_ns = 250; /* 16 GPUs no faster than 8: off the front */
	tally(&t, v, 7, ORR_WHATIF_RANK_TIME, 10, -1);
	assert_int_equal(t.nfront, 2);
	orr_whatif_tally_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_enumerates),
		cmocka_unit_test(test_plan_reasons),
		cmocka_unit_test(test_plan_refuses),
		cmocka_unit_test(test_plan_micro_batches_divide_the_batch),
		cmocka_unit_test(test_plan_uneven),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_run_same_everywhere),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_part),
		cmocka_unit_test(test_tally),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
