/* SPDX-License-Identifier: MIT */
/*
 * The GEMM model's tiles and waves: the quantized time of a GEMM's tiles over an A100's
 * SMs (waves, split-K), the fit of a fixed cost and an efficiency on it, the bytes its
 * tiles move, and the batched GEMMs bound by memory (attention's scores and context),
 * predicted by their tiles' bytes at the rate of the trace's such samples.
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
#include "gemm-test.h"

/* ---- tiles and waves ---- */

/* An A100's SMs and fp16 peak; no HBM rate (0): nothing is bound by memory. */
static const struct orr_gpu_spec tiles_gpu = {
	.id = "test-a100",
	.peak_flops = { [ORR_DTYPE_FP16] = 312e12 },
	.sms = 108,
};

static double quantized(const struct orr_gpu_spec *gpu, int64_t batch, int64_t m, int64_t n,
			int64_t k)
{
	return orr_gemm_tiles_quantized_ns(gpu, ORR_DTYPE_FP16, 2, batch, m, n, k);
}

/* One tile's time at an SM's share of the peak. */
static double one_tile_ns(int64_t m, int64_t n, int64_t k)
{
	return 2.0 * (double)(m * n * k) / (312e12 / 108) * 1e9;
}

static void test_gemm_tiles_quantization(void **state)
{
	struct orr_gpu_spec gpu = tiles_gpu;
	double wave, more;

	(void)state;
	/*
	 * K = 32, one main-loop iteration: neither split-K nor stream-K can balance the
	 * tiles.  108 tiles of 64 x 64 are one full wave; one tile more takes a whole
	 * wave more, whichever tile the model picks (55 of 128 x 64 are one wave of tiles
	 * twice as long).
	 */
	wave = quantized(&gpu, 1, 64 * 108, 64, 32);
	more = quantized(&gpu, 1, 64 * 109, 64, 32);
	assert_float_equal(wave, one_tile_ns(64, 64, 32), 1e-9 * wave);
	assert_float_equal(more, 2 * wave, 1e-9 * more);
	/* the same GEMM batched 108 and 109 times */
	assert_float_equal(quantized(&gpu, 109, 64, 64, 32), 2 * quantized(&gpu, 108, 64, 64, 32),
			   1e-9 * more);
	/* a full wave of the largest tiles runs at the peak: the roofline */
	assert_float_equal(quantized(&gpu, 1, 256 * 12, 128 * 9, 4096),
			   2.0 * 256 * 12 * 128 * 9 * 4096 / 312e12 * 1e9, 1e-6 * wave);
	/*
	 * One 64 x 64 tile with a long K: split in 108 slices (of 128), one per SM, it
	 * runs at the peak; unsplit it would take 108 times as long.
	 */
	assert_float_equal(quantized(&gpu, 1, 64, 64, 128 * 108),
			   2.0 * 64 * 64 * 128 * 108 / 312e12 * 1e9, 1e-9 * wave);
	/* bound by memory: with a HBM rate, at least the bytes moved at it */
	gpu.hbm_bytes_per_s = 1e12;
	assert_true(quantized(&gpu, 32, 2048, 2048, 64) >=
		    2.0 * 32 * (2048.0 * 64 * 2 + 2048.0 * 2048) / 1e12 * 1e9);
	/* no SMs, no peak for the math, an empty shape: no answer */
	gpu.sms = 0;
	assert_true(isnan(quantized(&gpu, 1, 64, 64, 64)));
	assert_true(
		isnan(orr_gemm_tiles_quantized_ns(&tiles_gpu, ORR_DTYPE_BF16, 2, 1, 64, 64, 64)));
	assert_true(isnan(quantized(&tiles_gpu, 1, 0, 64, 64)));
}

/* A sample of fp16 batch x (m x k . k x n) taking a + b x its quantized time. */
static struct orr_gemm_sample tiles_sample(int64_t batch, int64_t m, int64_t n, int64_t k, double a,
					   double b)
{
	struct orr_gemm_sample s = { .op = "aten::mm",
				     .family = "k",
				     .dtype = ORR_DTYPE_FP16,
				     .math = ORR_DTYPE_FP16,
				     .elem_bytes = 2,
				     .batch = batch,
				     .m = m,
				     .n = n,
				     .k = k,
				     .kernels = 1 };

	s.flops = 2.0 * (double)(batch * m * n * k);
	s.bytes = 2.0 * (double)(batch * (m * k + k * n + m * n));
	s.ns = a + b * quantized(&tiles_gpu, batch, m, n, k);
	return s;
}

static void test_gemm_tiles_fit(void **state)
{
	static const int64_t shapes[][4] = {
		{ 1, 1024, 384, 1024 },  { 1, 2048, 1024, 1024 }, { 16, 1024, 1024, 64 },
		{ 1, 4096, 4096, 1024 }, { 1, 8192, 3072, 4096 }, { 1, 1024, 4096, 4096 },
	};
	struct orr_gemm_sample s[6];
	struct orr_gemm_tiles m;

	(void)state;
	/* small and large shapes: the fixed cost and the efficiency are both recovered */
	for (size_t i = 0; i < 6; i++)
		s[i] = tiles_sample(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], 3000,
				    1.25);
	assert_int_equal(orr_gemm_tiles_fit(&tiles_gpu, s, 6, &m), 0);
	assert_int_equal(m.samples[ORR_DTYPE_FP16], 6);
	assert_float_equal(m.fixed_ns[ORR_DTYPE_FP16], 3000, 1e-3);
	assert_float_equal(m.ns_per_ns[ORR_DTYPE_FP16], 1.25, 1e-9);
	assert_float_equal(orr_gemm_tiles_time(&m, &s[0]), s[0].ns, 1e-6 * s[0].ns);
	/*
	 * Large shapes that a plane fits as well with or without an intercept, but for
	 * noise: the intercept is no kernel's fixed cost, and is kept only where it
	 * predicts shapes left out better (here it does not: 0 and the median ratio).
	 */
	for (size_t i = 0; i < 3; i++)
		s[i] = tiles_sample(1, 8192, 4096 * (int64_t)(i + 1), 4096, 0,
				    1.3 * (i == 1 ? 1.02 : 1));
	assert_int_equal(orr_gemm_tiles_fit(&tiles_gpu, s, 3, &m), 0);
	assert_float_equal(m.fixed_ns[ORR_DTYPE_FP16], 0, 0);
	assert_float_equal(m.ns_per_ns[ORR_DTYPE_FP16], 1.3, 1e-9);
	/* a math it has no sample of, a GPU without SMs, no sample at all */
	s[0].math = ORR_DTYPE_BF16;
	assert_true(isnan(orr_gemm_tiles_time(&m, &s[0])));
	assert_int_equal(orr_gemm_tiles_fit(&(struct orr_gpu_spec){ .id = "x" }, s, 3, &m),
			 -EINVAL);
	assert_int_equal(orr_gemm_tiles_fit(&tiles_gpu, s, 0, &m), -ENODATA);
}

/* ---- bound by memory ---- */

/*
 * The tiles' bytes: A read once per column of tiles, B once per row, C once, with the
 * tile that moves the fewest.  Attention's scores (32 x 2048 x 2048 x 64): 256 x 128
 * tiles read A 16 times and B 8 times.  A batch of 64 x 64 x 64 fits one tile: the
 * operands' bytes.
 */
static void test_gemm_tile_traffic(void **state)
{
	double scores = 2.0 * 32 * (2048.0 * 64 * 16 + 64.0 * 2048 * 8 + 2048.0 * 2048);

	(void)state;
	assert_float_equal(orr_gemm_tile_traffic_bytes(2, 32, 2048, 2048, 64), scores, 0.5);
	assert_float_equal(orr_gemm_tile_traffic_bytes(2, 4, 64, 64, 64), 2.0 * 4 * 3 * 4096, 0.5);
	/* the context (32 x 2048 x 64 x 2048): B read once per row of 256, A once */
	assert_float_equal(orr_gemm_tile_traffic_bytes(2, 32, 2048, 64, 2048),
			   2.0 * 32 * (2048.0 * 2048 + 2048.0 * 64 * 8 + 2048.0 * 64), 0.5);
	assert_true(isnan(orr_gemm_tile_traffic_bytes(2, 0, 64, 64, 64)));
	assert_true(isnan(orr_gemm_tile_traffic_bytes(0, 1, 64, 64, 64)));
}

/* A batched sample of batch x (m x k . k x n) at x times its tiles' bytes at HBM's rate. */
static struct orr_gemm_sample batched(const struct orr_gpu_spec *gpu, int64_t batch, int64_t m,
				      int64_t n, int64_t k, double x)
{
	struct orr_gemm_sample s = gemm("bmm", m, n, k);

	s.op = "aten::bmm";
	s.batch = batch;
	s.flops *= (double)batch;
	s.bytes *= (double)batch;
	s.ns = x * orr_gemm_tile_traffic_bytes(2, batch, m, n, k) / gpu->hbm_bytes_per_s * 1e9;
	return s;
}

/*
 * What fit reports of test_gemm_model_bandwidth_bound()'s model is what predicts: the
 * batched class says its tiles' bytes x 2.0, and each of its shapes left out is predicted
 * by the other's rate (2.0 x its tiles' bytes, its time), as estimate would.
 */
static void check_bandwidth_bound_report(const struct orr_gemm_model *m)
{
	size_t left_out = 0;

	for (size_t i = 0; i < m->nclasses; i++)
		if (strcmp(m->classes[i].family, "bmm") == 0)
			assert_non_null(strstr(m->classes[i].why,
					       "bound by memory: the bytes its "
					       "tiles move at the a100-80gb-sxm's "
					       "HBM rate x 2.000"));
	for (size_t i = 0; i < m->nshapes; i++) {
		const struct orr_gemm_shape *sh = &m->shapes[i];

		if (sh->batch != 32)
			continue;
		assert_int_equal(sh->how, ORR_GEMM_ROOFLINE);
		assert_float_equal(sh->predicted_ns, sh->measured_ns, 1e-6 * sh->measured_ns);
		left_out++;
	}
	assert_int_equal(left_out, 2);
}

/*
 * A batched GEMM whose roofline is HBM's (attention's scores and context, K or N the head
 * dimension) falls back on its tiles' bytes at the rate of the trace's such samples, not
 * on the compute-bound ones' efficiency: three compute-bound shapes at 1.2 x their
 * roofline (each its own family: none fitted) and two batched K = 64 and N = 64 shapes
 * at 2.0 x their tiles' bytes.  A batched one never seen takes 2.0 x its tiles' bytes; a
 * plain GEMM bandwidth-bound (a K = 128 projection: cuBLAS's multistage kernels) and a
 * compute-bound one the math's median x the roofline.
 */
static void test_gemm_model_bandwidth_bound(void **state)
{
	const struct orr_gpu_spec *a100 = orr_gpu_spec_by_id("a100-80gb-sxm");
	static const int64_t big[][3] = { { 8192, 4096, 4096 },
					  { 8192, 1536, 4096 },
					  { 4096, 4096, 2048 } };
	struct orr_gemm_sample s[5], q;
	struct orr_gemm_model m;
	enum orr_gemm_how how;
	size_t n = 0;
	double roof, t;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char fam[16];

		snprintf(fam, sizeof(fam), "big%zu", i);
		s[n] = gemm(fam, big[i][0], big[i][1], big[i][2]);
		s[n].ns = 1.2 * orr_gemm_roofline_ns(a100, s[n].math, s[n].flops, s[n].bytes);
		n++;
	}
	s[n++] = batched(a100, 32, 2048, 2048, 64, 2.0);
	s[n++] = batched(a100, 32, 2048, 64, 2048, 2.0);
	assert_int_equal(orr_gemm_model_fit(s, n, a100, &m), 0);
	assert_int_equal(m.efficiency_memory[ORR_DTYPE_BF16].samples, 2);
	assert_float_equal(m.efficiency_memory[ORR_DTYPE_BF16].median, 2.0, 1e-9);
	assert_int_equal(m.efficiency_memory[ORR_DTYPE_FP16].samples, 0);
	/* a scores GEMM of another sequence and head dimension: 2.0 x its tiles' bytes */
	q = batched(a100, 64, 1024, 1024, 128, 1);
	q.family[0] = '\0';
	assert_true(q.bytes / a100->hbm_bytes_per_s > q.flops / a100->peak_flops[q.math]);
	t = orr_gemm_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_ROOFLINE);
	assert_float_equal(t, 2.0 * q.ns, 1e-6 * t);
	assert_true(t > 2.0 * orr_gemm_roofline_ns(a100, q.math, q.flops, q.bytes));
	/* a plain bandwidth-bound GEMM and a compute-bound one: the math's median, unchanged */
	for (int i = 0; i < 2; i++) {
		q = i ? gemm("", 2048, 2048, 2048) : gemm("", 1024, 1024, 128);
		roof = orr_gemm_roofline_ns(a100, q.math, q.flops, q.bytes);
		assert_true(i ||
			    q.bytes / a100->hbm_bytes_per_s > q.flops / a100->peak_flops[q.math]);
		t = orr_gemm_model_time(&m, &q, &how);
		assert_int_equal(how, ORR_GEMM_ROOFLINE);
		assert_float_equal(t, m.efficiency[ORR_DTYPE_BF16].median * roof, 1e-6 * t);
	}
	check_bandwidth_bound_report(&m);
	orr_gemm_model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_tile_traffic),
		cmocka_unit_test(test_gemm_model_bandwidth_bound),
		cmocka_unit_test(test_gemm_tiles_quantization),
		cmocka_unit_test(test_gemm_tiles_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
