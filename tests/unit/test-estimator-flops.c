/* SPDX-License-Identifier: MIT */
/*
 * FLOPs of a step (estimator/flops.c): the model's as Megatron-LM counts them, checked
 * against the same count built here another way (from the weights the GEMMs multiply)
 * and against what Megatron-Bridge published; MFU <= 1 and HFU >= MFU (equal without
 * recompute) for synthesized steps timed at the hardware table's peaks, over a grid of
 * shapes, layouts, recompute modes and sequences up to 128k.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "orrery/estimator.h"

struct shape {
	int64_t layers, hidden, heads, kv_groups, ffn, vocab;
	bool gated;
};

static const struct shape shapes[] = {
	{ 4, 1024, 16, 0, 4096, 50304, false },   /* GPT, heads of 64 */
	{ 4, 4096, 32, 8, 14336, 128256, true },  /* Llama 3 8B's layer, GQA 4:1 */
	{ 2, 8192, 64, 8, 28672, 128256, true },  /* Llama 3 70B's layer */
	{ 3, 2048, 16, 16, 5632, 32000, true },   /* a gated MLP, no GQA */
	{ 2, 12288, 96, 0, 49152, 51200, false }, /* GPT-3's layer */
};

static const int64_t seqs[] = { 1024, 4096, 16384, 32768, 65536, 131072 };

/*
 * The same count from the weights: each layer multiplies QKV (h x (h + 2·g·h/a)), the
 * projection (h x h), FC1 (h x f, 2f gated) and FC2 (f x h), the head the logits
 * (h x V); 2 FLOPs per weight per token forward, 6 in training.  The attention core
 * per sequence: QKᵀ and the scores times V, 2·s·s·h each, half of it under the causal
 * mask.  Recompute adds the layers' forward (full) or the core's (selective).
 */
static void count(const struct orr_train_config *c, double *ret_model, double *ret_hw)
{
	double h = (double)c->hidden, a = (double)c->heads, s = (double)c->seq;
	double g = c->kv_groups ? (double)c->kv_groups : a, f = (double)c->ffn;
	double seqs_per_step = (double)(c->micro_batch * c->micro_batches * c->dp);
	double w_layer = h * (h + 2 * g * h / a) + h * h + h * f * (c->gated_mlp ? 2 : 1) + f * h;
	double w = (double)c->layers * w_layer + h * (double)c->vocab;
	double core = (double)c->layers * 2 * (2 * s * s * h) / 2; /* per sequence, forward */
	double fwd = seqs_per_step * (2 * s * w + core);

	*ret_model = 3 * fwd;
	*ret_hw = *ret_model;
	if (c->recompute == ORR_RECOMPUTE_FULL)
		*ret_hw += seqs_per_step * (2 * s * (double)c->layers * w_layer + core);
	else if (c->recompute == ORR_RECOMPUTE_SELECTIVE)
		*ret_hw += seqs_per_step * core;
}

static struct orr_train_config config(const struct shape *sh, int64_t seq, int64_t tp, int64_t pp,
				      enum orr_recompute r, bool flash)
{
	return (struct orr_train_config){
		.layers = sh->layers,
		.hidden = sh->hidden,
		.heads = sh->heads,
		.kv_groups = sh->kv_groups,
		.ffn = sh->ffn,
		.vocab = orr_train_pad_vocab(sh->vocab, tp),
		.seq = seq,
		.micro_batch = 1,
		.micro_batches = pp > 1 ? 2 * pp : 2,
		.tp = tp,
		.pp = pp,
		.dp = 2,
		.cp = 1,
		.vpp = 1,
		.gated_mlp = sh->gated,
		.sequence_parallel = tp > 1,
		.distributed_optimizer = true,
		.flash_attention = flash,
		.recompute = r,
		.precision = ORR_DTYPE_BF16,
	};
}

static void test_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
			for (int r = 0; r < ORR_RECOMPUTE_COUNT; r++) {
				struct orr_train_config c = config(&shapes[i], seqs[k], 1, 1,
								   (enum orr_recompute)r, true);
				double model, hw, got = orr_train_model_flops(&c, false);
				double got_hw = orr_train_hardware_flops(&c, false);

				count(&c, &model, &hw);
				assert_true(fabs(got / model - 1) < 1e-12);
				assert_true(fabs(got_hw / hw - 1) < 1e-12);
				/* forward only: one pass, nothing recomputed */
				assert_true(fabs(orr_train_model_flops(&c, true) / (model / 3) -
						 1) < 1e-12);
				assert_true(orr_train_hardware_flops(&c, true) ==
					    orr_train_model_flops(&c, true));
			}
}

/*
 * Megatron-Bridge's performance archive (docs/performance-summary-archive.md, DGX-H100,
 * ../shared/whatif/published-dev.csv) gives Llama 3 70B at 1619 tokens/s and 727 model
 * TFLOP/s per GPU (449.04 GFLOP a token) and Llama 3.1 405B at 302 and 763 (2526.5),
 * both at seq 8192, TP 4 and 8: Megatron's count, to the rounding of its table.
 */
static void test_published(void **state)
{
	struct shape l70 = { 80, 8192, 64, 8, 28672, 128256, true };
	struct shape l405 = { 126, 16384, 128, 8, 53248, 128256, true };
	struct orr_train_config c;
	double per_token;

	(void)state;
	c = config(&l70, 8192, 4, 1, ORR_RECOMPUTE_NONE, true);
	per_token = orr_train_model_flops(&c, false) / (double)(2 * 2 * 8192);
	assert_true(fabs(per_token / (727e12 / 1619) - 1) < 2e-3);
	c = config(&l405, 8192, 8, 1, ORR_RECOMPUTE_NONE, true);
	per_token = orr_train_model_flops(&c, false) / (double)(2 * 2 * 8192);
	assert_true(fabs(per_token / (763e12 / 302) - 1) < 2e-3);
}

/* A step synthesized and timed at the peaks: its MFU and HFU. */
static void utilization(const struct orr_train_config *c, struct orr_synth_scratch *scratch,
			double *ret_mfu, double *ret_hfu)
{
	const struct orr_gpu_spec *gpu = orr_gpu_spec_by_id("h100-sxm");
	struct orr_synth_costs k = { .gpu = gpu };
	struct orr_synth s;
	const char *why = NULL;
	double peak = gpu->peak_flops[c->precision], gpus = (double)(c->tp * c->pp * c->dp);

	assert_int_equal(orr_synth_time(c, false, &k, scratch, &s, &why), 0);
	*ret_mfu = orr_train_model_flops(c, false) / (s.placed_ns / 1e9 * gpus * peak);
	*ret_hfu = orr_train_hardware_flops(c, false) / (s.placed_ns / 1e9 * gpus * peak);
	orr_synth_release(&s);
}

static void test_bounds(void **state)
{
	static const int64_t layouts[][2] = { { 1, 1 }, { 2, 1 }, { 1, 2 } };
	struct orr_synth_scratch *scratch = orr_synth_scratch_new();
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
			for (size_t l = 0; l < 3; l++)
				for (int r = 0; r < ORR_RECOMPUTE_COUNT; r++)
					for (int flash = 0; flash < 2; flash++) {
						struct orr_train_config c =
							config(&shapes[i], seqs[k], layouts[l][0],
							       layouts[l][1], (enum orr_recompute)r,
							       flash);
						double mfu, hfu;

						if (c.layers % c.pp)
							continue;
						utilization(&c, scratch, &mfu, &hfu);
						if (!(mfu > 0 && mfu <= 1 && hfu >= mfu &&
						      hfu <= 1))
							fail_msg(
								"h %lld s %lld tp %lld pp %lld %s %s: "
								"MFU %.4f HFU %.4f",
								(long long)c.hidden,
								(long long)c.seq, (long long)c.tp,
								(long long)c.pp,
								orr_recompute_name(c.recompute),
								flash ? "flash" : "unfused", mfu,
								hfu);
						if (c.recompute == ORR_RECOMPUTE_NONE)
							assert_true(hfu == mfu);
						else
							assert_true(hfu > mfu);
						n++;
					}
	assert_true(n > 400);
	orr_synth_scratch_free(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_published),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
