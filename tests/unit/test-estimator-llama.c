/* SPDX-License-Identifier: MIT */
/*
 * Llama shapes (docs/estimator.md, "Llama shapes"): the parameters of Llama 2 7B and
 * Llama 3 8B as their published checkpoints have them, and what each of a gated MLP,
 * untied output weights, RMSNorm and rotary positions changes in the parameters and in
 * a synthesized step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"

static struct orr_train_config llama(int64_t hidden, int64_t heads, int64_t kv, int64_t ffn,
				     int64_t vocab)
{
	return (struct orr_train_config){
		.layers = 32,
		.hidden = hidden,
		.heads = heads,
		.kv_groups = kv,
		.ffn = ffn,
		.vocab = vocab,
		.seq = 4096,
		.micro_batch = 1,
		.micro_batches = 1,
		.tp = 1,
		.pp = 1,
		.dp = 1,
		.cp = 1,
		.vpp = 1,
		.gated_mlp = true,
		.untied_embeddings = true,
		.rms_norm = true,
		.rope = true,
		.flash_attention = true,
		.precision = ORR_DTYPE_BF16,
	};
}

/*
 * The parameter counts of meta-llama/Llama-2-7b-hf (6,738,415,616) and
 * meta-llama/Meta-Llama-3-8B (8,030,261,248), as their model cards and checkpoints
 * (sum of numel) give them: SwiGLU, untied output weights, RMSNorm, no biases.
 */
static void test_published_params(void **state)
{
	struct orr_train_config l2 = llama(4096, 32, 32, 11008, 32000);
	struct orr_train_config l3 = llama(4096, 32, 8, 14336, 128256);

	(void)state;
	assert_true(orr_train_params(&l2) == 6738415616.0);
	assert_true(orr_train_params(&l3) == 8030261248.0);
}

/* Each feature's share of the parameters, by its own count. */
static void test_feature_params(void **state)
{
	struct orr_train_config c = llama(4096, 32, 32, 11008, 32000), x;
	double n = orr_train_params(&c), L = 32, h = 4096, f = 11008, V = 32000;

	(void)state;
	x = c;
	x.untied_embeddings = false; /* the output layer is the embedding */
	assert_true(n - orr_train_params(&x) == V * h);
	x = c;
	x.rms_norm = false; /* LayerNorm: a bias beside each scale, 2 norms a layer and 1 last */
	assert_true(orr_train_params(&x) - n == (2 * L + 1) * h);
	x = c;
	x.gated_mlp = false; /* FC1 f wide, not 2f */
	assert_true(n - orr_train_params(&x) == L * h * f);
	x = c;
	x.rope = false; /* no parameters */
	assert_true(orr_train_params(&x) == n);
}

static void synth(const struct orr_train_config *c, struct orr_synth *ret)
{
	struct orr_synth_costs k = { .gpu = orr_gpu_spec_by_id("h100-sxm") };
	const char *why = NULL;

	assert_int_equal(orr_synth_time(c, false, &k, NULL, ret, &why), 0);
}

/*
 * Rotary positions add a kernel on the queries and one on the keys to each layer's
 * forward pass, and their gradients' to its backward pass (the forward ones again with
 * full recompute); untied output weights add their gradients to the data-parallel
 * reduction and take the first and last stage's embedding all-reduce away.
 */
static void test_feature_steps(void **state)
{
	struct orr_train_config c = llama(4096, 32, 8, 14336, 128256), x;
	struct orr_synth a, b;

	(void)state;
	c.micro_batches = 2;
	x = c;
	x.rope = false;
	synth(&c, &a);
	synth(&x, &b);
	assert_int_equal(a.kernels - b.kernels, 4 * 32 * 2);
	assert_true(a.kern_ns > b.kern_ns && a.gemm_ns == b.gemm_ns);
	orr_synth_release(&a);
	orr_synth_release(&b);
	c.recompute = x.recompute = ORR_RECOMPUTE_FULL;
	synth(&c, &a);
	synth(&x, &b);
	assert_int_equal(a.kernels - b.kernels, 6 * 32 * 2);
	orr_synth_release(&a);
	orr_synth_release(&b);

	c = llama(4096, 32, 8, 14336, 128256);
	c.dp = 4;
	c.micro_batches = 2;
	x = c;
	x.untied_embeddings = false;
	synth(&c, &a);
	synth(&x, &b);
	assert_true(a.dp_ns > b.dp_ns);
	orr_synth_release(&a);
	orr_synth_release(&b);
	c.pp = x.pp = 2;
	synth(&c, &a);
	synth(&x, &b);
	assert_true(a.collectives < b.collectives); /* no embedding all-reduce when untied */
	orr_synth_release(&a);
	orr_synth_release(&b);
}

/* The duration of the first kernel named `name` in a synthesized step's trace, in us. */
static double kernel_us(const struct orr_synth *s, const char *name)
{
	char key[96];
	const char *at, *dur;

	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	at = strstr(s->json, key);
	assert_non_null(at);
	dur = strstr(at, "\"dur\":");
	assert_non_null(dur);
	return strtod(dur + 6, NULL);
}

/*
 * SwiGLU's activation reads FC1's 2f-wide output and writes f; its backward reads that
 * output and the f-wide gradient and writes the 2f-wide gradient: 5f against 3f, where
 * GeLU's moves 2f forward and 3f backward.  Timed at the peak by their bytes alone.
 */
static void test_gated_activation(void **state)
{
	struct orr_synth_costs k = { .gpu = orr_gpu_spec_by_id("h100-sxm") };
	struct orr_train_config c = llama(4096, 32, 8, 14336, 128256);
	struct orr_synth s;

	(void)state;
	c.layers = 2;
	for (int gated = 0; gated < 2; gated++) {
		c.gated_mlp = gated;
		assert_int_equal(orr_synth_step(&c, false, &k, &s, NULL), 0);
		assert_true(fabs(kernel_us(&s, "orrery_synth::activation_backward") /
					 kernel_us(&s, "orrery_synth::activation_forward") -
				 (gated ? 5.0 / 3 : 3.0 / 2)) < 1e-3);
		orr_synth_release(&s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_params),
		cmocka_unit_test(test_feature_params),
		cmocka_unit_test(test_feature_steps),
		cmocka_unit_test(test_gated_activation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
