/* SPDX-License-Identifier: MIT */
/*
 * Memory per GPU (estimator/memory.c): GPT-2 small's published parameter count,
 * activations computed by hand from Korthikanti's Table 2, how the pipeline terms,
 * the distributed optimizer and data parallelism move the estimate, capacity, every
 * configuration Megatron would refuse, and the layouts of Megatron-LM's SC'21 Table 1,
 * which ran on A100 80GB and must fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "orrery/estimator.h"

#define GIB 1073741824.0

/* A GPT (FFN 4h, tied embeddings) on one GPU, micro-batch 1, bf16: tests set the rest. */
static struct orr_train_config gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab,
				   int64_t seq)
{
	struct orr_train_config c = { .ffn = 4 * hidden, .vocab = vocab, .seq = seq };

	c.layers = layers;
	c.hidden = hidden;
	c.heads = heads;
	c.micro_batch = c.micro_batches = 1;
	c.tp = c.pp = c.dp = c.cp = c.vpp = 1;
	c.precision = ORR_DTYPE_BF16;
	return c;
}

/* GPT-2 small: 12 layers, h 768, 12 heads, FFN 3072, vocabulary 50257. */
static struct orr_train_config gpt2(void)
{
	return gpt(12, 768, 12, 50257, 1024);
}

/* GPT-3 175B (Brown et al. 2020, Table 2.1) on one GPU: cannot fit in 80 GB. */
static struct orr_train_config gpt3(void)
{
	struct orr_train_config c = gpt(96, 12288, 96, 51200, 2048);

	c.recompute = ORR_RECOMPUTE_FULL;
	return c;
}

/* A pipelined layout to move one knob at a time from. */
static struct orr_train_config piped(void)
{
	struct orr_train_config c = gpt(16, 1024, 16, 32000, 2048);

	c.micro_batch = 2;
	c.micro_batches = 8;
	c.tp = 2;
	c.pp = 4;
	c.dp = 4;
	c.sequence_parallel = true;
	c.recompute = ORR_RECOMPUTE_SELECTIVE;
	return c;
}

static struct orr_memory estimate(const struct orr_train_config *c, const char *gpu)
{
	struct orr_memory m;

	assert_int_equal(orr_memory_estimate(c, gpu ? orr_gpu_spec_by_id(gpu) : NULL, 0, &m), 0);
	return m;
}

static void assert_rel(double got, double want, double tol)
{
	if (!(fabs(got / want - 1) <= tol))
		fail_msg("%.17g is not within %g of %.17g", got, tol, want);
}

/*
 * 124,439,808 parameters (Radford et al. 2019; Hugging Face gpt2 model card).  Megatron's
 * count leaves out the learned position embeddings (1024 x 768) and the biases of QKV
 * (3h), the projection (h), FC1 (4h) and FC2 (h) in each of the 12 layers: exactly the
 * difference, so the formula is 0.70 % low.
 */
static void test_memory_gpt2_params(void **state)
{
	const struct orr_train_config c = gpt2();
	double n = orr_train_params(&c);

	(void)state;
	assert_true(n == 123570432.0);
	assert_true(n + 1024.0 * 768 + 12 * 9.0 * 768 == 124439808.0);
	assert_rel(n, 124439808.0, 0.015);
	/* Without pipelining or TP the one GPU holds the whole model. */
	assert_true(estimate(&c, NULL).params == n);
}

/*
 * Korthikanti's Table 2 by hand, p = 1, f = 4h, every value a dyadic rational, so the
 * sums are exact: with SP and selective recompute 34·sbh/t per layer, without SP or
 * recompute sbh·(10 + 24/t + 5as/(ht)); both plus the embedding's input and dropout
 * (8sb + sbh)/t and the output layer's and loss's inputs 4sbh(1 + V/h)/t.
 */
static void test_memory_activations_by_hand(void **state)
{
	struct orr_train_config c = piped();
	double l = 8, s = 2048, b = 2, h = 1024, a = 16, t = 4, v = 50304;
	double extra = (8 * s * b + s * b * h) / t + 4 * s * b * h * (1 + v / h) / t;

	(void)state;
	c.layers = 8;
	c.vocab = 50304;
	c.tp = 4;
	c.pp = 1;
	assert_true(estimate(&c, NULL).activation_bytes == l * 34 * s * b * h / t + extra);
	c.sequence_parallel = false;
	c.recompute = ORR_RECOMPUTE_NONE;
	assert_true(estimate(&c, NULL).activation_bytes ==
		    l * s * b * h * (10 + 24 / t + 5 * a * s / (h * t)) + extra);
	/* Flash attention stores no scores: selective's figure without SP. */
	c.flash_attention = true;
	assert_true(estimate(&c, NULL).activation_bytes == l * s * b * h * (10 + 24 / t) + extra);
	/* Full recompute keeps each layer's input, split by SP. */
	c.recompute = ORR_RECOMPUTE_FULL;
	assert_true(estimate(&c, NULL).activation_bytes == l * 2 * s * b * h + extra);
	c.sequence_parallel = true;
	assert_true(estimate(&c, NULL).activation_bytes == l * 2 * s * b * h / t + extra);
	/*
	 * The first of p = 4 stages: p micro-batches of L/p layers (L layers' worth) and
	 * p micro-batches' embedding input and dropout, no output layer.
	 */
	c.recompute = ORR_RECOMPUTE_SELECTIVE;
	c.pp = 4;
	assert_true(estimate(&c, NULL).activation_bytes ==
		    l * 34 * s * b * h / t + (8 * s * b * 4 + s * b * h * 4) / t);
}

/* Context parallelism divides the sequence: at cp 2, sequence 4096 is sequence 2048. */
static void test_memory_cp_splits_sequence(void **state)
{
	struct orr_train_config c = piped(), half = piped();

	(void)state;
	c.seq = 4096;
	c.cp = 2;
	c.dp = 2;
	assert_true(estimate(&c, NULL).activation_bytes == estimate(&half, NULL).activation_bytes);
}

/* Interleaving keeps 1 + (p - 1)/(p·v) times the activations; m < p keeps m/p. */
static void test_memory_pipeline_factors(void **state)
{
	const struct orr_train_config base_c = piped();
	struct orr_train_config c = base_c;
	double base = estimate(&base_c, NULL).activation_bytes;

	(void)state;
	c.vpp = 2;
	assert_rel(estimate(&c, NULL).activation_bytes, base * (1 + 3.0 / (4 * 2)), 1e-14);
	c.vpp = 4;
	assert_rel(estimate(&c, NULL).activation_bytes, base * (1 + 3.0 / (4 * 4)), 1e-14);
	c = piped();
	c.micro_batches = 2;
	assert_rel(estimate(&c, NULL).activation_bytes, base * 2 / 4, 1e-14);
	c.micro_batches = 4;
	assert_true(estimate(&c, NULL).activation_bytes == base);
	/* More stages: fewer layers and the same in-flight activations (L layers' worth). */
	c = piped();
	c.pp = 8;
	assert_true(estimate(&c, NULL).params < estimate(&base_c, NULL).params);
}

/*
 * An uneven split: each stage by the same formulas with its own layers and p - k
 * micro-batches in flight, the most loaded reported.  piped() has 16 layers on 4 stages.
 */
static void test_memory_uneven_split(void **state)
{
	struct orr_train_config c = piped(), e = piped();
	struct orr_memory even = estimate(&e, NULL), m;

	(void)state;
	assert_int_equal(even.stage, 0);
	/* the first stage as given, as the even split's: the same first stage */
	c.first_stage_layers = 4;
	m = estimate(&c, NULL);
	assert_int_equal(m.stage, 0);
	assert_true(m.total_bytes == even.total_bytes);
	assert_int_equal(orr_train_stage_layers(&c, 2), 4);
	/* 2 layers first: the second stage's 14/3 is not whole; 1, then 5 each */
	c.first_stage_layers = 2;
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &m), -EINVAL);
	c.first_stage_layers = 1;
	m = estimate(&c, NULL);
	/* stage 1 holds 5 layers for 3 micro-batches in flight: 15 layers' worth, against
	 * the first's 4 (one layer) and the even split's 16 */
	assert_int_equal(m.stage, 1);
	assert_true(m.activation_bytes < even.activation_bytes);
	assert_true(m.params < even.params); /* 5 layers, no embedding: less than 4 and it */
	/* fewer layers last: the first stage holds more */
	c = piped();
	c.first_stage_layers = 6;
	c.last_stage_layers = 2;
	m = estimate(&c, NULL);
	assert_int_equal(m.stage, 0);
	assert_rel(m.activation_bytes, even.activation_bytes * 6 / 4, 0.01);
	/* not with interleaving, nor with one stage */
	c.vpp = 2;
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &m), -EINVAL);
	c = piped();
	c.pp = 1;
	c.last_stage_layers = 4;
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &m), -EINVAL);
}

/* B.10's table: 18, 20, 16 bytes; 6 + 12/d, 4 + 16/d, 8 + 8/d distributed. */
static void test_memory_bytes_per_param(void **state)
{
	static const struct {
		enum orr_dtype precision;
		double plain, fixed, sharded;
	} table[] = {
		{ ORR_DTYPE_BF16, 18, 6, 12 },
		{ ORR_DTYPE_FP16, 20, 4, 16 },
		{ ORR_DTYPE_FP32, 16, 8, 8 },
	};
	struct orr_train_config c = piped();

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		c.precision = table[i].precision;
		c.distributed_optimizer = false;
		assert_true(estimate(&c, NULL).bytes_per_param == table[i].plain);
		c.distributed_optimizer = true;
		assert_true(estimate(&c, NULL).bytes_per_param ==
			    table[i].fixed + table[i].sharded / 4);
		assert_true(estimate(&c, NULL).bytes_per_param < table[i].plain);
		/* Megatron-Core shards over the data-parallel ranks with the CP ones. */
		c.cp = 2;
		assert_true(estimate(&c, NULL).bytes_per_param ==
			    table[i].fixed + table[i].sharded / 8);
		c.cp = 1;
	}
}

/* Data parallelism replicates the model: more of it never costs memory. */
static void test_memory_dp_never_increases(void **state)
{
	struct orr_train_config c = piped();

	(void)state;
	for (int dist = 0; dist < 2; dist++) {
		double last = INFINITY;

		c.distributed_optimizer = dist;
		for (c.dp = 1; c.dp <= 4096; c.dp *= 2) {
			double total = estimate(&c, NULL).total_bytes;

			assert_true(total <= last);
			assert_true(dist || c.dp == 1 || total == last);
			last = total;
		}
	}
}

static void test_memory_capacity(void **state)
{
	const struct orr_gpu_spec *a100 = orr_gpu_spec_by_id("a100-80gb-sxm");
	const struct orr_train_config big = gpt3(), small = gpt2();
	struct orr_gpu_spec unknown = *a100;
	struct orr_memory m;
	double left;

	(void)state;
	m = estimate(&big, "a100-80gb-sxm");
	assert_false(m.fits);
	assert_true(m.capacity_bytes == 80 * GIB);
	assert_true(m.total_bytes > 2000 * GIB);
	assert_non_null(strstr(m.why, "above the a100-80gb-sxm's capacity of 80.00 GiB"));
	m = estimate(&small, "a100-80gb-sxm");
	assert_true(m.fits);
	assert_non_null(strstr(m.why, "within"));
	/* The reserve counts: 8 KiB more of it tips GPT-2 over. */
	left = 80 * GIB - m.total_bytes;
	assert_int_equal(orr_memory_estimate(&small, a100, left - 4096, &m), 0);
	assert_true(m.fits);
	assert_true(m.reserve_bytes == left - 4096);
	assert_true(m.total_bytes == m.model_bytes + m.activation_bytes + m.reserve_bytes);
	assert_int_equal(orr_memory_estimate(&small, a100, left + 4096, &m), 0);
	assert_false(m.fits);
	/* Capacity unknown: it fits, and says why. */
	m = estimate(&big, NULL);
	assert_true(m.fits);
	assert_true(m.capacity_bytes == 0);
	assert_non_null(strstr(m.why, "unknown"));
	unknown.hbm_bytes = 0;
	assert_int_equal(orr_memory_estimate(&big, &unknown, 0, &m), 0);
	assert_true(m.fits);
	assert_non_null(strstr(m.why, "unknown"));
}

/* -EINVAL, ret untouched, and no parameter count. */
static void assert_rejected(const struct orr_train_config *c, double reserve_bytes)
{
	struct orr_memory m, before;

	memset(&before, 0x5a, sizeof(before));
	m = before;
	assert_int_equal(orr_memory_estimate(c, NULL, reserve_bytes, &m), -EINVAL);
	assert_memory_equal(&m, &before, sizeof(m));
}

/* What is no configuration, or no reserve. */
static void test_memory_rejects_values(void **state)
{
	struct orr_train_config c = piped();
	int64_t *sizes[] = { &c.layers,      &c.hidden,        &c.heads, &c.ffn, &c.vocab, &c.seq,
			     &c.micro_batch, &c.micro_batches, &c.tp,    &c.pp,  &c.dp,    &c.cp,
			     &c.vpp };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int64_t bad = -1; bad <= 0; bad++) {
			c = piped();
			*sizes[i] = bad;
			assert_rejected(&c, 0);
			assert_true(isnan(orr_train_params(&c)));
		}
	}
	c = piped();
	c.kv_groups = -2;
	assert_rejected(&c, 0);
	c = piped();
	c.precision = ORR_DTYPE_INT8; /* no row in the table */
	assert_rejected(&c, 0);
	c = piped();
	c.precision = ORR_DTYPE_FP8; /* Transformer Engine: BF16 weights, as BF16 */
	{
		struct orr_memory fp8, bf16;
		struct orr_train_config b = piped();

		b.precision = ORR_DTYPE_BF16;
		assert_int_equal(orr_memory_estimate(&c, NULL, 0, &fp8), 0);
		assert_int_equal(orr_memory_estimate(&b, NULL, 0, &bf16), 0);
		assert_true(fp8.model_bytes == bf16.model_bytes);
	}
	c = piped();
	c.recompute = ORR_RECOMPUTE_COUNT;
	assert_rejected(&c, 0);
	c = piped();
	assert_rejected(&c, -1);
	assert_rejected(&c, NAN);
	assert_rejected(&c, INFINITY);
}

/* Each layout Megatron refuses, and what those rules allow. */
static void test_memory_rejects_layouts(void **state)
{
	static const struct {
		size_t field;
		int64_t value;
	} bad[] = {
		{ offsetof(struct orr_train_config, hidden), 1000 }, /* hidden % heads */
		{ offsetof(struct orr_train_config, tp), 3 },        /* heads % tp */
		{ offsetof(struct orr_train_config, kv_groups), 1 }, /* kv_groups % tp */
		{ offsetof(struct orr_train_config, kv_groups), 6 }, /* heads % kv_groups */
		{ offsetof(struct orr_train_config, pp), 3 },        /* layers % pp */
		{ offsetof(struct orr_train_config, vpp), 8 },       /* layers % (pp·vpp) */
	};
	struct orr_train_config c;
	struct orr_memory m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = piped();
		*(int64_t *)((char *)&c + bad[i].field) = bad[i].value;
		assert_rejected(&c, 0);
		assert_true(isnan(orr_train_params(&c)));
	}
	c = piped();
	c.vpp = 2; /* interleaved: micro_batches % pp */
	c.micro_batches = 6;
	assert_rejected(&c, 0);
	c.micro_batches = 8;
	c.kv_groups = 8;
	assert_int_equal(orr_memory_estimate(&c, NULL, 0, &m), 0);
	assert_false(isnan(orr_train_params(&c)));
}

/*
 * Each of Megatron's checks names the dimension and the size that does not divide it,
 * with its kind (what orrery whatif counts); the valid layout passes with no reason.
 */
static void test_train_check_names_the_dimension(void **state)
{
	static const struct {
		size_t field;
		int64_t value;
		enum orr_train_flaw flaw;
		const char *why;
	} bad[] = {
		{ offsetof(struct orr_train_config, seq), 0, ORR_TRAIN_SIZE, "seq 0 is below 1" },
		{ offsetof(struct orr_train_config, hidden), 1000, ORR_TRAIN_HEADS,
		  "hidden 1000 is not divisible by heads 16 (heads of one size)" },
		{ offsetof(struct orr_train_config, tp), 3, ORR_TRAIN_HEADS,
		  "heads 16 is not divisible by tp 3" },
		{ offsetof(struct orr_train_config, kv_groups), 6, ORR_TRAIN_HEADS,
		  "heads 16 is not divisible by kv-heads 6" },
		{ offsetof(struct orr_train_config, kv_groups), 1, ORR_TRAIN_HEADS,
		  "kv-heads 1 is not divisible by tp 2" },
		{ offsetof(struct orr_train_config, ffn), 4097, ORR_TRAIN_HEADS,
		  "ffn 4097 is not divisible by tp 2" },
		{ offsetof(struct orr_train_config, layers), 30, ORR_TRAIN_LAYERS,
		  "layers 30 is not divisible by pp 4" },
		{ offsetof(struct orr_train_config, vpp), 8, ORR_TRAIN_LAYERS,
		  "the 4 layers of a stage (layers 16 / pp 4) are not divisible by vpp 8" },
		{ offsetof(struct orr_train_config, first_stage_layers), 3, ORR_TRAIN_LAYERS,
		  "the 13 layers left by the first and last stages are not divisible by the 3 "
		  "other stages, at least one each" },
		{ offsetof(struct orr_train_config, cp), 3, ORR_TRAIN_SEQUENCE,
		  "seq 2048 is not divisible by 2 x cp (6)" },
		{ offsetof(struct orr_train_config, seq), 2047, ORR_TRAIN_SEQUENCE,
		  "seq / cp (2047) is not divisible by tp 2 (sequence parallelism)" },
		{ offsetof(struct orr_train_config, micro_batches), 6, ORR_TRAIN_INTERLEAVE,
		  "micro-batches 6 is not divisible by pp 4 (interleaved 1F1B, vpp 2)" },
	};
	struct orr_train_config c;
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = piped();
		if (bad[i].flaw == ORR_TRAIN_INTERLEAVE)
			c.vpp = 2;
		*(int64_t *)((char *)&c + bad[i].field) = bad[i].value;
		assert_int_equal(orr_train_check(&c, why, sizeof(why)), bad[i].flaw);
		assert_string_equal(why, bad[i].why);
		assert_false(orr_train_split_valid(&c) && bad[i].flaw == ORR_TRAIN_LAYERS);
	}
	c = piped();
	c.pp = 1;
	c.vpp = 2; /* interleaving with one stage */
	c.layers = 16;
	assert_int_equal(orr_train_check(&c, why, sizeof(why)), ORR_TRAIN_INTERLEAVE);
	assert_string_equal(why, "vpp 2 (interleaved 1F1B) needs pp 2 or more, not 1");
	c = piped();
	assert_int_equal(orr_train_check(&c, why, sizeof(why)), ORR_TRAIN_VALID);
	assert_string_equal(why, "");
	assert_int_equal(orr_train_check(&c, NULL, 0), ORR_TRAIN_VALID);
}

/* Grouped-query attention shrinks K and V: 2h²(1 + g/a) per layer for QKV and projection. */
static void test_memory_gqa_and_gating(void **state)
{
	const struct orr_train_config base = piped();
	struct orr_train_config c = base;
	double h = 1024, l = 16, mha = orr_train_params(&base);

	(void)state;
	c.kv_groups = 4;
	assert_rel(mha - orr_train_params(&c), 2 * l * h * h * (1 - 4.0 / 16), 1e-14);
	c = piped();
	c.gated_mlp = true;
	assert_rel(orr_train_params(&c) - mha, l * h * 4096, 1e-14);
	c = piped();
	c.untied_embeddings = true;
	assert_rel(orr_train_params(&c) - mha, h * 32000, 1e-14);
	/* Untied, the output layer is on the last stage, not the first... */
	assert_true(estimate(&c, NULL).params == estimate(&base, NULL).params);
	/* ...unless the first stage is the last. */
	c.pp = 1;
	c.micro_batches = 1;
	assert_rel(estimate(&c, NULL).params, orr_train_params(&c) / 2, 1e-14);
}

static void test_memory_recompute_names(void **state)
{
	(void)state;
	assert_string_equal(orr_recompute_name(ORR_RECOMPUTE_NONE), "none");
	assert_string_equal(orr_recompute_name(ORR_RECOMPUTE_SELECTIVE), "selective");
	assert_string_equal(orr_recompute_name(ORR_RECOMPUTE_FULL), "full");
	assert_null(orr_recompute_name(ORR_RECOMPUTE_COUNT));
	assert_null(orr_recompute_name((enum orr_recompute) - 1));
}

/*
 * Megatron-LM SC'21 (Narayanan et al., arXiv 2104.04473) Table 1, as in
 * ../shared/whatif/published-dev.csv: GPT models of 1.7B to 1T parameters trained on
 * A100 80GB with mixed fp16, full recompute, the plain optimizer, the interleaved
 * schedule where pipelined (v not stated), sequence 2048 and vocabulary 51,200.  They
 * ran, so each must fit.  Not stated, and taken as: micro-batch 1, the least memory (so
 * this is a necessary condition); v the smallest above 1 dividing L/p, the most memory
 * of an interleaved schedule; no reserve.
 */
static void test_memory_sc21_table1_fits(void **state)
{
	static const struct {
		int64_t layers, hidden, heads, tp, pp, dp, batch;
	} rows[] = {
		{ 24, 2304, 24, 1, 1, 32, 512 },     { 30, 3072, 32, 2, 1, 32, 512 },
		{ 36, 4096, 32, 4, 1, 32, 512 },     { 40, 6144, 48, 8, 1, 32, 1024 },
		{ 48, 8192, 64, 8, 2, 32, 1536 },    { 60, 10240, 80, 8, 4, 32, 1792 },
		{ 80, 12288, 96, 8, 8, 24, 2304 },   { 96, 16384, 128, 8, 16, 15, 2160 },
		{ 105, 20480, 128, 8, 35, 9, 2520 }, { 128, 25600, 160, 8, 64, 6, 3072 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct orr_train_config c =
			gpt(rows[i].layers, rows[i].hidden, rows[i].heads, 51200, 2048);
		struct orr_memory m;

		c.micro_batches = rows[i].batch / rows[i].dp;
		c.tp = rows[i].tp;
		c.pp = rows[i].pp;
		c.dp = rows[i].dp;
		c.recompute = ORR_RECOMPUTE_FULL;
		c.precision = ORR_DTYPE_FP16;
		for (int64_t v = 2; c.pp > 1 && c.vpp == 1; v++)
			if ((c.layers / c.pp) % v == 0)
				c.vpp = v;
		m = estimate(&c, "a100-80gb-sxm");
		if (!m.fits)
			fail_msg("SC'21, %" PRId64 " layers: %s", c.layers, m.why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_gpt2_params),
		cmocka_unit_test(test_memory_activations_by_hand),
		cmocka_unit_test(test_memory_cp_splits_sequence),
		cmocka_unit_test(test_memory_pipeline_factors),
		cmocka_unit_test(test_memory_uneven_split),
		cmocka_unit_test(test_memory_bytes_per_param),
		cmocka_unit_test(test_memory_dp_never_increases),
		cmocka_unit_test(test_memory_capacity),
		cmocka_unit_test(test_memory_rejects_values),
		cmocka_unit_test(test_memory_rejects_layouts),
		cmocka_unit_test(test_train_check_names_the_dimension),
		cmocka_unit_test(test_memory_gqa_and_gating),
		cmocka_unit_test(test_memory_recompute_names),
		cmocka_unit_test(test_memory_sc21_table1_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
