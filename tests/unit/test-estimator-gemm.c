/* SPDX-License-Identifier: MIT */
/*
 * The GEMM model: kernel families from names, exact recovery of a synthetic
 * t = a + b·FLOP + c·bytes (given as samples, and read from a trace written here), the
 * roofline fallback, the Megatron TP=8 trace's GEMMs (hidden 4096, FFN 16384, 64
 * heads, micro-batch 4 × sequence 2048 = 8192 tokens, TP 8, 40 layers), and every
 * shared trace: samples wherever a trace records GEMM shapes, none without a positive
 * FLOP count and time, and the leave-one-shape-out error printed.  Tiles, waves and the
 * batched GEMMs bound by memory: test-estimator-gemm-tiles.c.
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

#include "orrery/estimator.h"
#include "gemm-test.h"
#include "test-util.h"
#include "trace-doc.h"

/* ---- names ---- */

static void check_family(const char *name, const char *want)
{
	char buf[ORR_GEMM_FAMILY_MAX];

	if (!want) {
		assert_false(orr_gemm_kernel_family(name, buf, sizeof(buf)));
		return;
	}
	assert_true(orr_gemm_kernel_family(name, buf, sizeof(buf)));
	assert_string_equal(buf, want);
}

static void test_gemm_family_names(void **state)
{
	char small[8];

	(void)state;
	check_family("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>("
		     "cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4::Params)",
		     "cutlass_80_tensorop_s1688gemm");
	check_family("void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_relu_f16_128x128_"
		     "32x5_tn_align8>(cutlass_80_tensorop_f16_s16816gemm_relu_f16_128x128_32x5_"
		     "tn_align8::Params)",
		     "cutlass_80_tensorop_f16_s16816gemm_relu_f16");
	check_family("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
		     "ampere_fp16_s16816gemm_fp16");
	check_family("volta_sgemm_128x64_nn", "volta_sgemm");
	check_family("ampere_sgemm_32x32_sliced1x4_nt", "ampere_sgemm");
	/* The layout of xmma's names comes before their tile size, and stays. */
	check_family("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize192x128x32_stage4_warpsize4x"
		     "2x1_tensor16x8x16_kernel",
		     "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n");
	check_family("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "nvjet_tst");
	check_family("void splitKreduce_kernel<float, float, float, float, true, false, false>("
		     "cublasSplitKParams<float>, float const*, float const*, float*)",
		     "splitKreduce_kernel");
	check_family("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, "
		     "float, float, float, float, false, true, true, false, 7, false, "
		     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
		     "cublasGemvTensorStridedBatched<float const>, "
		     "cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, "
		     "cublasGemvTensorStridedBatched<float const>, float>)",
		     "internal::gemvx::kernel");
	/* Convolutions, FBGEMM's kernels and the bias epilogue are not GEMMs here. */
	check_family("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_"
		     "tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel",
		     NULL);
	check_family("cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", NULL);
	check_family("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, "
		     "int const*, int*)",
		     NULL);
	check_family("void epilogue::impl::globalKernel<float, float, float, true, true>(int)",
		     NULL);
	check_family("void at::native::vectorized_elementwise_kernel<4>(int)", NULL);
	/* Truncated to the buffer. */
	assert_true(orr_gemm_kernel_family("volta_sgemm_128x64_nn", small, sizeof(small)));
	assert_string_equal(small, "volta_s");
	/* A name that starts with its tile keeps it. */
	check_family("128x128gemm", "128x128gemm");
}

/* ---- the model on samples given ---- */

static void test_gemm_model_null(void **state)
{
	struct orr_gemm_model m;
	struct orr_gemm_sample q = gemm("k", 64, 64, 64);

	(void)state;
	assert_int_equal(orr_gemm_model_fit(NULL, 0, NULL, &m), 0);
	assert_int_equal(m.nclasses, 0);
	assert_int_equal(m.nshapes, 0);
	assert_true(isnan(m.loso_median));
	assert_true(isnan(orr_gemm_model_time(&m, &q, NULL)));
	orr_gemm_model_release(&m);
	orr_gemm_model_release(NULL);
	/* Malformed: no time, or a dtype out of range. */
	q.ns = 0;
	assert_int_equal(orr_gemm_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = gemm("k", 64, 64, 64);
	q.dtype = ORR_DTYPE_COUNT;
	assert_int_equal(orr_gemm_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = gemm("k", 64, 64, 64);
	memset(q.family, 'k', sizeof(q.family));
	assert_int_equal(orr_gemm_model_fit(&q, 1, NULL, &m), -EINVAL);
	/* One sample: one class of one shape, which nothing can predict without a GPU. */
	q = gemm("k", 64, 64, 64);
	assert_int_equal(orr_gemm_model_fit(&q, 1, NULL, &m), 0);
	assert_int_equal(m.nclasses, 1);
	assert_int_equal(m.classes[0].how, ORR_GEMM_NONE);
	assert_int_equal(m.nshapes, 1);
	assert_int_equal(m.loso_predicted, 0);
	assert_true(isnan(orr_gemm_model_time(&m, &q, NULL)));
	orr_gemm_model_release(&m);
	assert_true(orr_gemm_how_name(ORR_GEMM_POOLED) != NULL);
	assert_null(orr_gemm_how_name((enum orr_gemm_how)99));
}

/*
 * A fallback's why names the samples its efficiency is the median of: those whose
 * roofline is at most their time (model-common.c leaves out faster ones), of the class's
 * math, or of every math when none of its math counts (an FP16 GEMM faster than its
 * roofline beside fitted BF16 ones), without a gap where no math is named; of the fitted
 * classes' when one of theirs counts, else of every GEMM's, without saying that none
 * was fitted (their samples may all be faster than their roofline).
 */
static void test_gemm_model_why_fallback(void **state)
{
	const struct orr_gpu_spec *h100 = orr_gpu_spec_by_id("h100-sxm");
	static const int64_t shapes[][3] = { { 8192, 4096, 1536 },
					     { 8192, 512, 4096 },
					     { 8192, 2048, 4096 } };
	struct orr_gemm_sample s[5];
	struct orr_gemm_model m;
	char want[192];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++)
		s[n++] = gemm("fitted_128x128_tn", shapes[i][0], shapes[i][1], shapes[i][2]);
	s[n] = gemm("half_64x64_nn", 4096, 4096, 4096);
	s[n].dtype = s[n].math = ORR_DTYPE_FP16;
	s[n].ns = 0.5 * orr_gemm_roofline_ns(h100, ORR_DTYPE_FP16, s[n].flops, s[n].bytes);
	n++;
	s[n++] = gemm("few_64x64_nn", 2048, 4096, 4096);
	assert_int_equal(orr_gemm_model_fit(s, n, h100, &m), 0);
	assert_int_equal(m.nclasses, 3);
	assert_string_equal(m.classes[0].family, "few_64x64_nn");
	assert_int_equal(m.classes[0].how, ORR_GEMM_ROOFLINE);
	assert_non_null(strstr(m.classes[0].why,
			       "the median efficiency of the fitted classes' "
			       "bf16 GEMMs whose roofline is at most their time"));
	assert_string_equal(m.classes[2].family, "half_64x64_nn");
	assert_int_equal(m.classes[2].how, ORR_GEMM_ROOFLINE);
	assert_int_equal(m.efficiency[ORR_DTYPE_FP16].samples, 0);
	assert_non_null(strstr(m.classes[2].why, "the median efficiency of the fitted classes' "
						 "GEMMs whose roofline is at most their time"));
	for (size_t i = 0; i < m.nclasses; i++)
		assert_null(strstr(m.classes[i].why, "  "));
	orr_gemm_model_release(&m);

	/*
	 * A fitted class whose samples are all faster than their roofline counts for none:
	 * every bf16 GEMM's, though a class was fitted.
	 */
	for (size_t i = 0; i < 3; i++)
		s[i].ns = 0.5 * orr_gemm_roofline_ns(h100, s[i].math, s[i].flops, s[i].bytes);
	s[3] = s[4];
	assert_int_equal(orr_gemm_model_fit(s, 4, h100, &m), 0);
	assert_int_equal(m.nclasses, 2);
	assert_string_equal(m.classes[1].family, "fitted_128x128_tn");
	assert_int_equal(m.classes[1].how, ORR_GEMM_FIT);
	assert_string_equal(m.classes[0].family, "few_64x64_nn");
	assert_int_equal(m.classes[0].how, ORR_GEMM_ROOFLINE);
	assert_false(m.efficiency[ORR_DTYPE_BF16].fitted);
	assert_int_equal(m.efficiency[ORR_DTYPE_BF16].samples, 1);
	snprintf(want, sizeof(want),
		 "1 shape, fewer than 3: the h100-sxm bf16 roofline x %.3f, the median efficiency "
		 "of every bf16 GEMM whose roofline is at most its time",
		 m.efficiency[ORR_DTYPE_BF16].median);
	assert_string_equal(m.classes[0].why, want);
	orr_gemm_model_release(&m);
}

/* One class of five shapes (each twice) recovers a, b, c; one of two falls back. */
static void test_gemm_model_exact(void **state)
{
	const struct orr_gpu_spec *h100 = orr_gpu_spec_by_id("h100-sxm");
	static const int64_t shapes[][3] = {
		{ 8192, 4096, 1536 }, { 8192, 512, 4096 }, { 8192, 2048, 4096 },
		{ 1024, 1024, 1024 }, { 256, 16384, 128 },
	};
	struct orr_gemm_sample s[12], q;
	struct orr_gemm_model m;
	enum orr_gemm_how how;
	double roof, t;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		for (int rep = 0; rep < 2; rep++)
			s[n++] =
				gemm("fitted_128x128_tn", shapes[i][0], shapes[i][1], shapes[i][2]);
	s[n++] = gemm("few_64x64_nn", 4096, 4096, 4096);
	s[n++] = gemm("few_64x64_nn", 2048, 4096, 4096);
	assert_int_equal(orr_gemm_model_fit(s, n, h100, &m), 0);
	assert_int_equal(m.nclasses, 2);
	/* Classes come in family order. */
	assert_string_equal(m.classes[0].family, "few_64x64_nn");
	assert_int_equal(m.classes[0].how, ORR_GEMM_ROOFLINE);
	assert_non_null(strstr(m.classes[0].why, "2 shapes, fewer than 3"));
	assert_int_equal(m.classes[1].how, ORR_GEMM_FIT);
	assert_int_equal(m.classes[1].samples, 10);
	assert_int_equal(m.classes[1].shapes, 5);
	assert_float_equal(m.classes[1].fit.coef[0], A_NS, A_NS * 1e-6);
	assert_float_equal(m.classes[1].fit.coef[1], B_NS, B_NS * 1e-6);
	assert_float_equal(m.classes[1].fit.coef[2], C_NS, C_NS * 1e-6);
	assert_true(m.classes[1].fit.fit_max < 1e-9);
	/* Each shape of the fitted class left out leaves four: still exact. */
	assert_int_equal(m.classes[1].loso_shapes, 5);
	assert_true(m.classes[1].loso_max < 1e-9);
	/* The fallback: roofline x the fitted samples' median efficiency. */
	assert_true(m.efficiency[ORR_DTYPE_BF16].fitted);
	assert_int_equal(m.efficiency[ORR_DTYPE_BF16].samples, 10);
	assert_int_equal(m.efficiency_all.samples, 10);
	assert_int_equal(m.efficiency[ORR_DTYPE_FP16].samples, 0);
	assert_int_equal(m.below_roofline, 0);
	q = gemm("few_64x64_nn", 4096, 4096, 4096);
	roof = orr_gemm_roofline_ns(h100, ORR_DTYPE_BF16, q.flops, q.bytes);
	assert_float_equal(roof, q.flops / h100->peak_flops[ORR_DTYPE_BF16] * 1e9, 1e-6);
	t = orr_gemm_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_ROOFLINE);
	assert_float_equal(t, roof * m.efficiency[ORR_DTYPE_BF16].median, 1e-6 * t);
	/* An unknown family falls back the same way; nothing goes below the roofline. */
	snprintf(q.family, sizeof(q.family), "never_seen");
	assert_float_equal(orr_gemm_model_time(&m, &q, NULL), t, 1e-6 * t);
	assert_int_equal(m.nshapes, 7);
	assert_int_equal(m.loso_predicted, 7);
	orr_gemm_model_release(&m);

	/* Without a GPU: no roofline; the small class takes the fit over every bf16 GEMM. */
	assert_int_equal(orr_gemm_model_fit(s, n, NULL, &m), 0);
	assert_int_equal(m.classes[0].how, ORR_GEMM_POOLED);
	assert_true(isnan(m.efficiency_all.median));
	assert_int_equal(m.efficiency[ORR_DTYPE_BF16].samples, 0);
	t = orr_gemm_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_POOLED);
	assert_float_equal(t, q.ns, 1e-6 * q.ns);
	orr_gemm_model_release(&m);
}

/*
 * A plain GPT's GEMMs: one token count M, every weight with the hidden size on one
 * side, so FLOPs and bytes are both linear in the other width and the time measured
 * (here within 3 %) cannot tell them apart.  The fit takes the FLOPs alone, and a
 * shape off that line (twice the hidden size) is predicted near its FLOPs' time;
 * a fit on both terms split the time between them at random (3.7e17 ns for a
 * 0.2 ms GEMM on the H200 trace).
 */
static void test_gemm_model_collinear(void **state)
{
	const struct orr_gpu_spec *h200 = orr_gpu_spec_by_id("h200-sxm");
	static const int64_t kn[][2] = {
		{ 1024, 3072 }, { 1024, 1024 }, { 1024, 4096 }, { 4096, 1024 }, { 1024, 50304 }
	};
	static const double noise[] = { 1.03, 0.98, 1.01, 0.97, 1.02 };
	struct orr_gemm_sample s[10], q;
	struct orr_gemm_model m;
	double want, t;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		for (int rep = 0; rep < 2; rep++) {
			s[n] = gemm("nvjet_sm90_tst", 8192, kn[i][1], kn[i][0]);
			s[n].ns = (A_NS + B_NS * s[n].flops) * noise[i];
			n++;
		}
	assert_int_equal(orr_gemm_model_fit(s, n, h200, &m), 0);
	assert_int_equal(m.nclasses, 1);
	assert_int_equal(m.classes[0].how, ORR_GEMM_FIT);
	assert_float_equal(m.classes[0].fit.coef[2], 0, 0);
	q = gemm("nvjet_sm90_tst", 8192, 6144, 2048);
	want = A_NS + B_NS * q.flops;
	t = orr_gemm_model_time(&m, &q, NULL);
	assert_true(fabs(t / want - 1) < 0.05);
	orr_gemm_model_release(&m);
}

/* ---- read from a trace ---- */

static void test_gemm_observe_synthetic(void **state)
{
	static const int64_t shapes[][3] = {
		{ 4096, 1024, 1024 }, { 4096, 4096, 1024 }, { 2048, 1024, 4096 },
		{ 8192, 1024, 512 },  { 1024, 8192, 2048 },
	};
	const char *bf16 = "[\"c10::BFloat16\", \"c10::BFloat16\"]";
	static const struct {
		const char *op, *dims, *types;
		int64_t shape[4]; /* B, M, N, K */
	} other[] = {
		{ "aten::linear",
		  "[[2, 512, 1024], [256, 1024], [256]]",
		  "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]",
		  { 1, 1024, 256, 1024 } },
		{ "aten::bmm",
		  "[[8, 128, 64], [8, 64, 128]]",
		  "[\"c10::BFloat16\", \"c10::BFloat16\"]",
		  { 8, 128, 128, 64 } },
		{ "aten::matmul",
		  "[[4, 8, 128, 64], [4, 8, 64, 32]]",
		  "[\"c10::BFloat16\", \"c10::BFloat16\"]",
		  { 32, 128, 32, 64 } },
		{ "aten::mm", "[[4, 3], [5, 6]]", "[\"float\", \"float\"]", { 0, 0, 0, 0 } },
	};
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_gemm_sample *s;
	struct orr_gemm_counts c;
	struct orr_gemm_model m;
	struct orr_diag diag;
	double ts = 10, want[5];
	char dims[128];
	int corr = 1;
	size_t n;

	(void)state;
	doc_begin(&d, 0, 1);
	for (size_t i = 0; i < 5; i++) {
		struct orr_gemm_sample x = gemm("", shapes[i][0], shapes[i][1], shapes[i][2]);

		want[i] = round(x.ns / 1000 * 1000) / 1000; /* µs, as the trace writes it */
		snprintf(dims, sizeof(dims), "[[%lld, %lld], [%lld, %lld]]",
			 (long long)shapes[i][0], (long long)shapes[i][2], (long long)shapes[i][2],
			 (long long)shapes[i][1]);
		doc_op(&d, "aten::matmul", ts, 60, dims, bf16);
		doc_op(&d, "aten::mm", ts + 1, 50, dims, bf16);
		/* Split-K for the first shape: the GEMM and its reduction are one sample. */
		doc_launch(&d, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
			   ts + 2, i ? want[i] : want[i] - 1.5, &corr);
		if (!i)
			doc_launch(&d, "void splitKreduce_kernel<float>(float*)", ts + 10, 1.5,
				   &corr);
		doc_launch(&d, "void epilogue::impl::globalKernel<float>(int)", ts + 20, 3, &corr);
		ts += 20000;
	}
	/* linear, bmm and a batched matmul; then K that does not match, and no shapes. */
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		doc_op(&d, other[i].op, ts, 50, other[i].dims, other[i].types);
		doc_launch(&d, "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_tn", ts + 2, 20, &corr);
		ts += 1000;
	}
	doc_op(&d, "aten::mm", ts, 50, NULL, NULL);
	doc_launch(&d, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", ts + 2, 30, &corr);
	/* A GEMM launched outside any matrix multiply. */
	doc_launch(&d, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", ts + 100, 30, &corr);
	t = doc_import(&d, "gemm.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	n = orr_gemm_observe(g, &s, &c);
	assert_int_equal(n, 8);
	assert_int_equal(c.kernels, 12);
	assert_int_equal(c.outside, 1);
	assert_int_equal(c.ops, 10);
	assert_int_equal(c.no_shapes, 1);
	assert_int_equal(c.bad_shapes, 1);
	assert_int_equal(c.incomplete, 0);
	assert_int_equal(c.samples, 8);
	for (size_t i = 5; i < n; i++) {
		assert_string_equal(s[i].op, other[i - 5].op);
		assert_string_equal(s[i].family, "ampere_bf16_s16816gemm_bf16");
		assert_int_equal(s[i].batch, other[i - 5].shape[0]);
		assert_int_equal(s[i].m, other[i - 5].shape[1]);
		assert_int_equal(s[i].n, other[i - 5].shape[2]);
		assert_int_equal(s[i].k, other[i - 5].shape[3]);
	}
	n = 5;
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(s[i].op, "aten::mm");
		assert_string_equal(s[i].family, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
		assert_int_equal(s[i].dtype, ORR_DTYPE_BF16);
		assert_int_equal(s[i].math, ORR_DTYPE_BF16);
		assert_int_equal(s[i].m, shapes[i][0]);
		assert_int_equal(s[i].n, shapes[i][1]);
		assert_int_equal(s[i].k, shapes[i][2]);
		assert_int_equal(s[i].batch, 1);
		assert_int_equal(s[i].kernels, i ? 1 : 2);
		assert_float_equal(s[i].ns, want[i] * 1000, 0.5);
	}
	assert_int_equal(orr_gemm_model_fit(s, n, NULL, &m), 0);
	assert_int_equal(m.nclasses, 1);
	assert_int_equal(m.classes[0].how, ORR_GEMM_FIT);
	/* The trace's times are rounded to the nanosecond. */
	assert_float_equal(m.classes[0].fit.coef[0], A_NS, 1.0);
	assert_float_equal(m.classes[0].fit.coef[1], B_NS, B_NS * 1e-4);
	assert_float_equal(m.classes[0].fit.coef[2], C_NS, C_NS * 1e-3);
	assert_true(m.loso_max < 1e-4);
	orr_gemm_model_release(&m);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* ---- real traces ---- */

static void print_model(const char *name, const struct orr_gemm_model *m,
			const struct orr_gemm_counts *c)
{
	size_t by[ORR_GEMM_POOLED + 1] = { 0 };

	fprintf(stderr,
		"%s: gpu %s; %zu GEMM kernels, %zu outside a matrix multiply; %zu ops: %zu "
		"without shapes, %zu unreadable, %zu incomplete, %zu samples; %zu below the "
		"roofline\n",
		name, m->gpu ? m->gpu->id : "unknown", c->kernels, c->outside, c->ops, c->no_shapes,
		c->bad_shapes, c->incomplete, c->samples, m->below_roofline);
	for (int t = 0; t < ORR_DTYPE_COUNT; t++)
		if (m->efficiency[t].samples)
			fprintf(stderr, "  %s efficiency %.3f over %zu %s samples\n",
				orr_dtype_name(t), m->efficiency[t].median,
				m->efficiency[t].samples,
				m->efficiency[t].fitted ? "fitted" : "unfitted");
	for (size_t i = 0; i < m->nclasses; i++) {
		const struct orr_gemm_class *k = &m->classes[i];

		fprintf(stderr,
			"  %s %s: %zu samples, %zu shapes, %s; fit %.1f/%.1f %%, leave-one-out "
			"%.1f/%.1f %%, leave-one-shape-out %.1f/%.1f %% (median/max)\n",
			orr_dtype_name(k->dtype), k->family, k->samples, k->shapes, k->why,
			100 * k->fit.fit_median, 100 * k->fit.fit_max, 100 * k->fit.loo_median,
			100 * k->fit.loo_max, 100 * k->loso_median, 100 * k->loso_max);
	}
	for (size_t i = 0; i < m->nshapes; i++)
		by[m->shapes[i].how]++;
	fprintf(stderr,
		"%s: leave one shape out: %zu of %zu shapes predicted (fit %zu, roofline %zu, "
		"pooled %zu), median %.1f %%, max %.1f %%\n",
		name, m->loso_predicted, m->nshapes, by[ORR_GEMM_FIT], by[ORR_GEMM_ROOFLINE],
		by[ORR_GEMM_POOLED], 100 * m->loso_median, 100 * m->loso_max);
}

static size_t observe_fit(struct orr_trace *t, const char *name, struct orr_graph **ret_g,
			  struct orr_gemm_sample **ret, struct orr_gemm_counts *c,
			  struct orr_gemm_model *m)
{
	struct orr_diag d;
	size_t n;

	if (orr_graph_build(t, NULL, ret_g, &d))
		fail_msg("%s: %s", name, d.msg);
	n = orr_gemm_observe(*ret_g, ret, c);
	assert_int_equal(orr_gemm_model_fit(*ret, n, orr_gpu_spec_find(*ret_g), m), 0);
	print_model(name, m, c);
	return n;
}

/*
 * Megatron's GEMMs at TP 8, per rank and step: hidden h = 4096, FFN f = 16384, 64 heads
 * of 64, vocabulary V = 51200, T = micro-batch 4 x sequence 2048 = 8192 tokens.
 */
static const struct megatron_gemm {
	const char *op;
	int64_t batch, m, n, k;
	size_t per_rank;
} megatron[] = {
	{ "aten::mm", 1, 8192, 1536, 4096, 40 },     /* QKV: T x h . h x 3h/t */
	{ "aten::mm", 1, 8192, 4096, 512, 40 },      /* projection: T x h/t . h/t x h */
	{ "aten::mm", 1, 8192, 2048, 4096, 40 },     /* FC1: T x h . h x f/t */
	{ "aten::mm", 1, 8192, 4096, 2048, 40 },     /* FC2: T x f/t . f/t x h */
	{ "aten::mm", 1, 8192, 6400, 4096, 1 },      /* logits: T x h . h x V/t */
	{ "aten::baddbmm", 32, 2048, 2048, 64, 40 }, /* scores: b·a/t x (s x d . d x s) */
	{ "aten::bmm", 32, 2048, 64, 2048, 40 },     /* context: b·a/t x (s x s . s x d) */
};

#define NMEGATRON (sizeof(megatron) / sizeof(megatron[0]))

/*
 * Measured on the trace: 10.0 % (docs/accuracy.md), each shape timed as estimate times it
 * (the context's bmm left out by the scores' rate of its tiles' bytes, +17.4 %); the
 * issue's goal is 10 %.
 */
#define MEGATRON_LOSO_MEDIAN 0.10

static size_t megatron_gemm_of(const struct orr_gemm_sample *s)
{
	for (size_t i = 0; i < NMEGATRON; i++)
		if (strcmp(s->op, megatron[i].op) == 0 && s->batch == megatron[i].batch &&
		    s->m == megatron[i].m && s->n == megatron[i].n && s->k == megatron[i].k)
			return i;
	fail_msg("a GEMM that is no Megatron TP=8 GEMM: %s %lld x %lld x %lld x %lld", s->op,
		 (long long)s->batch, (long long)s->m, (long long)s->n, (long long)s->k);
	return 0;
}

/*
 * The Megatron trace's two bandwidth-bound shapes, the scores' baddbmm (K = 64) and the
 * context's bmm (N = 64), of the same FLOPs and operand bytes: at 2.11 and 1.32 x their
 * roofline, which the one cannot predict from the other (+60 %, -38 %), and at 1.28 and
 * 1.09 x their tiles' bytes at HBM's rate.  Each left out and predicted as a synthesized
 * step asks (no family) by the model fitted on the rest: within 20 % by its tiles' bytes
 * and the other's rate.
 */
static void check_megatron_bandwidth_bound(const struct orr_gemm_sample *s, size_t n,
					   const struct orr_gemm_model *all)
{
	struct orr_gemm_sample *rest = malloc((n + 1) * sizeof(*rest));
	double ratio[2];

	assert_non_null(rest);
	assert_int_equal(all->efficiency_memory[ORR_DTYPE_FP16].samples, 640);
	for (size_t k = NMEGATRON - 2; k < NMEGATRON; k++) {
		struct orr_gemm_sample q = { 0 };
		struct orr_gemm_model m;
		double measured = NAN, roof, t;
		size_t nr = 0;

		for (size_t i = 0; i < n; i++) {
			if (megatron_gemm_of(&s[i]) != k)
				rest[nr++] = s[i];
			else
				q = s[i];
		}
		for (size_t i = 0; i < all->nshapes; i++)
			if (all->shapes[i].batch == q.batch && all->shapes[i].m == q.m &&
			    all->shapes[i].n == q.n && all->shapes[i].k == q.k)
				measured = all->shapes[i].measured_ns;
		assert_int_equal(orr_gemm_model_fit(rest, nr, all->gpu, &m), 0);
		assert_int_equal(m.efficiency_memory[ORR_DTYPE_FP16].samples, 320);
		q.family[0] = '\0';
		roof = orr_gemm_roofline_ns(m.gpu, q.math, q.flops, q.bytes);
		ratio[k - (NMEGATRON - 2)] = measured / roof;
		t = orr_gemm_model_time(&m, &q, NULL);
		fprintf(stderr,
			"  %s left out: %.1f us (%.2f x its roofline), predicted %.1f us (%+.1f %%: "
			"its tiles' bytes x %.3f)\n",
			megatron[k].op, measured / 1e3, measured / roof, t / 1e3,
			100 * (t / measured - 1), m.efficiency_memory[ORR_DTYPE_FP16].median);
		assert_true(fabs(t / measured - 1) < 0.2);
		orr_gemm_model_release(&m);
	}
	assert_true(ratio[0] / ratio[1] > 1.5);
	free(rest);
}

/* Every sample is one of the Megatron GEMMs, each as often as a step runs it. */
static void check_megatron_shapes(const struct orr_graph *g, const struct orr_gemm_sample *s,
				  size_t n)
{
	size_t count[8][NMEGATRON] = { { 0 } };

	assert_int_equal(orr_graph_rank_count(g), 8);
	for (size_t i = 0; i < n; i++) {
		uint32_t rank = orr_graph_procs(g)[orr_graph_tasks(g)[s[i].task].proc].rank;
		size_t k = megatron_gemm_of(&s[i]);

		assert_int_equal(s[i].dtype, ORR_DTYPE_FP16);
		assert_int_equal(s[i].math, ORR_DTYPE_FP16);
		assert_int_equal(s[i].elem_bytes, 2);
		assert_int_equal(s[i].kernels, 1);
		assert_float_equal(s[i].flops,
				   2.0 * (double)(s[i].batch * s[i].m * s[i].n * s[i].k), 0.5);
		assert_true(rank < 8);
		count[rank][k]++;
	}
	for (size_t r = 0; r < 8; r++)
		for (size_t k = 0; k < NMEGATRON; k++)
			assert_int_equal(count[r][k], megatron[k].per_rank);
}

static void test_gemm_megatron_tp8(void **state)
{
	struct orr_trace *t = import_shared("astrasim-megatron-tp8");
	struct orr_graph *g;
	struct orr_gemm_sample *s;
	struct orr_gemm_counts c;
	struct orr_gemm_model m, p;
	size_t n = observe_fit(t, "astrasim-megatron-tp8", &g, &s, &c, &m), qkv = SIZE_MAX;

	(void)state;
	assert_int_equal(n, 8 * (6 * 40 + 1));
	assert_int_equal(c.kernels, n);
	assert_int_equal(c.outside + c.no_shapes + c.bad_shapes + c.incomplete, 0);
	check_megatron_shapes(g, s, n);
	assert_ptr_equal(m.gpu, orr_gpu_spec_by_id("a100-80gb-sxm"));
	assert_int_equal(m.below_roofline, 0);
	for (size_t i = 0; i < m.nshapes; i++) {
		const struct orr_gemm_shape *sh = &m.shapes[i];

		fprintf(stderr, "  %s %lld x %lld x %lld x %lld: %.1f us, predicted %.1f us (%s)\n",
			m.classes[sh->cls].family, (long long)sh->batch, (long long)sh->m,
			(long long)sh->n, (long long)sh->k, sh->measured_ns / 1e3,
			sh->predicted_ns / 1e3, orr_gemm_how_name(sh->how));
	}
	assert_int_equal(m.nshapes, NMEGATRON);
	assert_int_equal(m.loso_predicted, NMEGATRON);
	assert_true(m.loso_median <= MEGATRON_LOSO_MEDIAN);
	check_megatron_bandwidth_bound(s, n, &m);
	orr_gemm_model_release(&m);

	/* Three times slower QKV GEMMs are out of line with the rest, and the check says so. */
	for (size_t i = 0; i < n; i++)
		if (s[i].n == 1536)
			s[i].ns *= 3;
	assert_int_equal(orr_gemm_model_fit(s, n, m.gpu, &p), 0);
	for (size_t i = 0; i < p.nshapes; i++)
		if (p.shapes[i].n == 1536)
			qkv = i;
	assert_true(qkv != SIZE_MAX);
	assert_true(fabs(p.shapes[qkv].predicted_ns / p.shapes[qkv].measured_ns - 1) > 0.5);
	orr_gemm_model_release(&p);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Whether a rank of t has a matrix-multiply op that records operand shapes. */
static bool has_gemm_shapes(const struct orr_trace *t)
{
	static const char *const ops[] = { "aten::mm",      "aten::addmm",  "aten::bmm",
					   "aten::baddbmm", "aten::matmul", "aten::linear" };

	for (size_t ri = 0; ri < orr_trace_rank_count(t); ri++) {
		const struct orr_rank *r = orr_trace_get_rank(t, ri);

		for (size_t i = 0; i < r->nevents; i++) {
			const struct orr_event *e = &r->events[i];
			const struct orr_op_args *a;

			if (e->kind != ORR_EVENT_OP || e->args >= r->nops)
				continue;
			a = &r->ops[e->args];
			for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
				for (uint32_t j = 0;
				     strcmp(orr_trace_str(t, e->name), ops[o]) == 0 &&
				     j < a->ninputs;
				     j++)
					if (r->inputs[a->first_input + j].ndims)
						return true;
		}
	}
	return false;
}

static void each_trace(struct orr_trace *t, const char *name, void *data)
{
	struct orr_graph *g;
	struct orr_gemm_sample *s;
	struct orr_gemm_counts c;
	struct orr_gemm_model m;
	size_t n = observe_fit(t, name, &g, &s, &c, &m);

	(void)data;
	assert_int_equal(n > 0, has_gemm_shapes(t));
	assert_int_equal(c.samples, n);
	assert_int_equal(c.ops, c.no_shapes + c.bad_shapes + c.incomplete + c.samples);
	assert_true(c.kernels >= c.outside + c.ops);
	for (size_t i = 0; i < n; i++) {
		assert_true(s[i].flops > 0 && s[i].bytes > 0 && s[i].ns > 0);
		assert_true(s[i].batch > 0 && s[i].m > 0 && s[i].n > 0 && s[i].k > 0);
		assert_float_equal(s[i].flops,
				   2.0 * (double)s[i].batch * (double)s[i].m * (double)s[i].n *
					   (double)s[i].k,
				   1e-9 * s[i].flops);
		assert_true(s[i].family[0] != '\0' && s[i].kernels >= 1);
	}
	/* The peaks and the math dtypes chosen are lower bounds: nothing ran faster. */
	assert_int_equal(m.below_roofline, 0);
	/* The hardware table's SMs are those the trace's devices report. */
	for (size_t ri = 0; m.gpu && ri < orr_trace_rank_count(t); ri++) {
		const struct orr_rank *r = orr_trace_get_rank(t, ri);

		for (size_t d = 0; d < r->ndevices; d++)
			if (r->devices[d].num_sms > 0)
				assert_int_equal(r->devices[d].num_sms, m.gpu->sms);
	}
	/* the tiles model is fitted wherever the GPU is known and a GEMM has a shape */
	assert_int_equal(m.tiles.gpu != NULL, m.gpu != NULL && n > 0);
	assert_int_equal(m.nshapes > 0, n > 0);
	free(s);
	orr_gemm_model_release(&m);
	orr_graph_free(g);
}

static void test_gemm_every_shared_trace(void **state)
{
	(void)state;
	for_each_shared_trace(each_trace, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm_family_names),
		cmocka_unit_test(test_gemm_model_null),
		cmocka_unit_test(test_gemm_model_why_fallback),
		cmocka_unit_test(test_gemm_model_exact),
		cmocka_unit_test(test_gemm_model_collinear),
		cmocka_unit_test(test_gemm_observe_synthetic),
		cmocka_unit_test(test_gemm_megatron_tp8),
		cmocka_unit_test(test_gemm_every_shared_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
