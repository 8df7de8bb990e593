/* SPDX-License-Identifier: MIT */
/*
 * The model of the kernels other than GEMMs: families and classes from real kernel
 * names, exact recovery of a synthetic t = a + c·bytes (given as samples, and read from
 * a trace written here, with attention's FLOPs), the roofline fallback, and the element
 * sizes of dtype names.  The real traces are in test-estimator-kernels-real.c.
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
#include "test-util.h"
#include "trace-doc.h"

/* ---- names ---- */

static void check_family(const char *name, const char *want)
{
	char buf[ORR_KERN_FAMILY_MAX];

	orr_kern_family(name, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

/* Real names from the shared traces, and what a launch of them would see around it. */
static void test_kern_family_names(void **state)
{
	char small[8];

	(void)state;
	check_family("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, "
		     "float>(int, float, float const*, float const*, float const*, float*, "
		     "float*, float*)",
		     "at::native::vectorized_layer_norm_kernel");
	check_family("void cuApplyLayerNorm<c10::Half, float, c10::Half>(c10::Half*, float*, "
		     "float*, c10::Half const*, int, int, float, c10::Half const*, c10::Half "
		     "const*)",
		     "cuApplyLayerNorm");
	check_family("void (anonymous namespace)::scaled_upper_triang_masked_softmax_warp_forward<"
		     "c10::Half, c10::Half, float, 11>(c10::Half*, c10::Half const*, float, int, "
		     "int, int)",
		     "scaled_upper_triang_masked_softmax_warp_forward");
	check_family("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<"
		     "float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
		     "at::detail::Array<char*, 1>)",
		     "at::native::vectorized_elementwise_kernel");
	check_family("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
		     "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float "
		     "const*, float*)",
		     "cudnn::ops::nchwToNhwcKernel");
	check_family("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
		     "AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::"
		     "Params)",
		     "fmha_cutlassF_f32_aligned_64x64_rf_sm80");
	check_family("triton__0d1d2d3de", "triton__0d1d2d3de");
	check_family("Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)");
	check_family("Memset (Device)", "Memset (Device)");
	check_family("", "");
	orr_kern_family("void cuApplyLayerNorm<c10::Half>(c10::Half*)", small, sizeof(small));
	assert_string_equal(small, "cuApply");
}

static const char ln_fwd[] = "void cuApplyLayerNorm<c10::Half, float, c10::Half>(c10::Half*, "
			     "float*, float*, c10::Half const*, int, int, float, c10::Half "
			     "const*, c10::Half const*)";
static const char softmax_fwd[] = "void (anonymous namespace)::scaled_upper_triang_masked_"
				  "softmax_warp_forward<c10::Half, c10::Half, float, 11>("
				  "c10::Half*, c10::Half const*, float, int, int, int)";
static const char half_copy[] =
	"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::"
	"native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
	"const::{lambda()#10}::operator()() const::{lambda(c10::Half)#1}>(at::"
	"TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{"
	"lambda()#2}::operator()() const::{lambda()#10}::operator()() const::{lambda(c10::Half)"
	"#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::"
	"direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{"
	"lambda()#10}::operator()() const::{lambda(c10::Half)#1}>(at::TensorIteratorBase&, at::"
	"native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
	"const::{lambda()#10}::operator()() const::{lambda(c10::Half)#1} const&)::{lambda(int)"
	"#1})";
static const char fill[] = "void at::native::vectorized_elementwise_kernel<4, at::native::"
			   "FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::"
			   "FillFunctor<float>, at::detail::Array<char*, 1>)";
static const char add_half[] = "void at::native::vectorized_elementwise_kernel<4, at::native::"
			       "CUDAFunctor_add<c10::Half>, at::detail::Array<char*, 3> >(int, "
			       "at::native::CUDAFunctor_add<c10::Half>, at::detail::Array<char*, "
			       "3>)";

#define CALLERS(...)                            \
	((const char *const[]){ __VA_ARGS__ }), \
		(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

static void test_kern_classify_names(void **state)
{
	(void)state;
	/* Megatron TP=8: layer norm, fused softmax, the compiled GeLU and adds, a copy. */
	assert_int_equal(orr_kern_classify(ln_fwd, CALLERS("FusedLayerNormAffineFunction")),
			 ORR_KERN_NORM);
	assert_int_equal(orr_kern_classify(softmax_fwd, CALLERS("ScaledUpperTriangMaskedSoftmax")),
			 ORR_KERN_ATTENTION);
	assert_int_equal(orr_kern_classify("triton__0d1d2d3de",
					   CALLERS("triton_poi_fused_add_mul_tanh_0",
						   "Torch-Compiled Region", "GeLUFunction")),
			 ORR_KERN_ELEMENTWISE);
	assert_int_equal(orr_kern_classify("triton__0d1d2d3d4de",
					   CALLERS("triton_poi_fused_add_0",
						   "Torch-Compiled Region", "ProfilerStep#3")),
			 ORR_KERN_ELEMENTWISE);
	assert_int_equal(orr_kern_classify(half_copy, CALLERS("aten::copy_", "aten::contiguous")),
			 ORR_KERN_COPY);
	assert_int_equal(orr_kern_classify(add_half, CALLERS("aten::add")), ORR_KERN_ELEMENTWISE);
	/* The recommenders and ResNet. */
	assert_int_equal(orr_kern_classify(
				 "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor"
				 "<float>, float, float, float, float, float, float, adamMode_t, "
				 "float, int, int>(int, int volatile*, TensorListMetadata<4>, "
				 "AdamFunctor<float>, float, float, float, float, float, float, "
				 "adamMode_t, float, int, int)",
				 CALLERS("Optimizer.step#FusedAdam.step", "## optimizer ##")),
			 ORR_KERN_OPTIMIZER);
	/* A non-fused optimizer's elementwise kernels are the optimizer's. */
	assert_int_equal(orr_kern_classify(fill, CALLERS("aten::fill_", "Optimizer.step#SGD.step")),
			 ORR_KERN_OPTIMIZER);
	assert_int_equal(orr_kern_classify(fill, CALLERS("aten::fill_", "aten::zeros")),
			 ORR_KERN_ELEMENTWISE);
	assert_int_equal(
		orr_kern_classify("void at::native::(anonymous namespace)::"
				  "GammaBetaBackwardCUDAKernel<float, float>(long, long, "
				  "float const*, float const*, float const*, float const*, "
				  "float*, float*)",
				  CALLERS("aten::native_layer_norm_backward")),
		ORR_KERN_NORM);
	assert_int_equal(orr_kern_classify("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, "
					   "1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)",
					   CALLERS("aten::cudnn_batch_norm")),
			 ORR_KERN_NORM);
	assert_int_equal(
		orr_kern_classify("void at::native::(anonymous namespace)::"
				  "CatArrayBatchedCopy<int, unsigned int, 1, 128, 1>(int*)",
				  CALLERS("aten::cat")),
		ORR_KERN_COPY);
	assert_int_equal(
		orr_kern_classify("void at::native::reduce_kernel<512, 1, at::native::"
				  "ReduceOp<float, at::native::MaxOps<float>, unsigned "
				  "int, float, 4> >(at::native::ReduceOp<float, at::native::"
				  "MaxOps<float>, unsigned int, float, 4>)",
				  CALLERS("aten::max")),
		ORR_KERN_REDUCTION);
	assert_int_equal(orr_kern_classify("void at::native::(anonymous namespace)::cunn_SoftMax"
					   "Forward<4, float, float, float, at::native::(anonymous "
					   "namespace)::LogSoftMaxForwardEpilogue>(float*, float "
					   "const*, int)",
					   CALLERS("aten::_log_softmax", "aten::log_softmax")),
			 ORR_KERN_SOFTMAX);
	assert_int_equal(
		orr_kern_classify("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorch"
				  "MemEffAttention::AttentionKernel<float, cutlass::arch::"
				  "Sm80, true, 64, 64, 64, true, true>::Params)",
				  CALLERS("aten::_scaled_dot_product_efficient_attention")),
		ORR_KERN_ATTENTION);
	assert_int_equal(
		orr_kern_classify("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, "
				  "64, 4, false, false, cutlass::bfloat16_t>, false, true, "
				  "false, false, true, true, false, false>(Flash_fwd_params)",
				  NULL, 0),
		ORR_KERN_ATTENTION);
	/* Convolutions' helpers and gathers are none of the classes. */
	assert_int_equal(orr_kern_classify("void cudnn::ops::nchwToNhwcKernel<float, float, float, "
					   "false, true, (cudnnKernelDataType_t)2>(cudnn::ops::"
					   "nchw2nhwc_params_t<float>, float const*, float*)",
					   CALLERS("aten::cudnn_convolution", "aten::convolution")),
			 ORR_KERN_OTHER);
	assert_int_equal(
		orr_kern_classify("void at::native::(anonymous namespace)::"
				  "indexSelectLargeIndex<long, long, unsigned int, 1, 1, -2, "
				  "true>(long)",
				  CALLERS("aten::index_select", "aten::embedding")),
		ORR_KERN_OTHER);
	/* Triton's prefixes: a cast is elementwise, a softmax softmax. */
	assert_int_equal(orr_kern_classify("triton_poi_fused__to_copy_add_0", NULL, 0),
			 ORR_KERN_ELEMENTWISE);
	assert_int_equal(orr_kern_classify("triton_red_fused_sum_1", NULL, 0), ORR_KERN_REDUCTION);
	assert_int_equal(orr_kern_classify("triton_per_fused__softmax_2", NULL, 0),
			 ORR_KERN_SOFTMAX);
	assert_int_equal(orr_kern_classify("triton_per_fused_native_layer_norm_3", NULL, 0),
			 ORR_KERN_NORM);
	/* Copies by direction. */
	assert_int_equal(orr_kern_classify("Memcpy HtoD (Pinned -> Device)", NULL, 0),
			 ORR_KERN_TRANSFER);
	assert_int_equal(orr_kern_classify("Memcpy DtoH (Device -> Pageable)", NULL, 0),
			 ORR_KERN_TRANSFER);
	assert_int_equal(orr_kern_classify("Memcpy PtoP (Device -> Device)", NULL, 0),
			 ORR_KERN_TRANSFER);
	assert_int_equal(orr_kern_classify("Memcpy DtoD (Device -> Device)", NULL, 0),
			 ORR_KERN_COPY);
	assert_int_equal(orr_kern_classify("Memset (Device)", CALLERS("aten::mm")), ORR_KERN_COPY);
	assert_int_equal(orr_kern_classify("Kernel", CALLERS("op1")), ORR_KERN_OTHER);
	assert_string_equal(orr_kern_class_name(ORR_KERN_TRANSFER), "transfer");
	assert_null(orr_kern_class_name(ORR_KERN_CLASS_COUNT));
}

/* ---- the model on samples given ---- */

#define A_NS 3000.0
#define B_NS (1.0 / 100e3) /* ns per FLOP: 100 TFLOP/s */
#define C_NS (1.0 / 1500)  /* ns per byte: 1.5 TB/s */

static struct orr_kern_sample kern(enum orr_kern_class cls, const char *family, double bytes,
				   double flops)
{
	struct orr_kern_sample s = { .cls = cls,
				     .op = "aten::op",
				     .dtype = ORR_DTYPE_BF16,
				     .bytes = bytes,
				     .flops = flops,
				     .kernels = 1 };

	snprintf(s.family, sizeof(s.family), "%s", family);
	s.ns = A_NS + B_NS * flops + C_NS * bytes;
	return s;
}

static void test_kern_model_null(void **state)
{
	struct orr_kern_model m;
	struct orr_kern_sample q = kern(ORR_KERN_NORM, "k", 1e6, 0);

	(void)state;
	assert_int_equal(orr_kern_model_fit(NULL, 0, NULL, &m), 0);
	assert_int_equal(m.nfamilies, 0);
	assert_int_equal(m.nsizes, 0);
	assert_true(isnan(m.loso_median));
	assert_true(isnan(orr_kern_model_time(&m, &q, NULL)));
	orr_kern_model_release(&m);
	orr_kern_model_release(NULL);
	/* Malformed: no bytes, no time, negative FLOPs, a class or dtype out of range. */
	q.bytes = 0;
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = kern(ORR_KERN_NORM, "k", 1e6, 0);
	q.ns = NAN;
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = kern(ORR_KERN_NORM, "k", 1e6, -1);
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = kern(ORR_KERN_CLASS_COUNT, "k", 1e6, 0);
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = kern(ORR_KERN_NORM, "k", 1e6, 0);
	q.dtype = ORR_DTYPE_COUNT + 1;
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	q = kern(ORR_KERN_NORM, "k", 1e6, 0);
	memset(q.family, 'k', sizeof(q.family));
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), -EINVAL);
	/* One copy (no dtype): one family of one size, which nothing predicts without a GPU. */
	q = kern(ORR_KERN_COPY, "Memset (Device)", 4096, 0);
	q.dtype = ORR_DTYPE_COUNT;
	assert_int_equal(orr_kern_model_fit(&q, 1, NULL, &m), 0);
	assert_int_equal(m.nfamilies, 1);
	assert_int_equal(m.families[0].how, ORR_GEMM_NONE);
	assert_int_equal(m.nsizes, 1);
	assert_int_equal(m.loso_predicted, 0);
	assert_true(isnan(orr_kern_model_time(&m, &q, NULL)));
	orr_kern_model_release(&m);
}

/* Two families of five sizes recover a, (b,) c; one of two sizes falls back. */
static void test_kern_model_exact(void **state)
{
	const struct orr_gpu_spec *h100 = orr_gpu_spec_by_id("h100-sxm");
	static const double mib[] = { 1, 4, 16, 64, 256 };
	static const double attn[][2] = { /* b·h, s with d = 128 */
					  { 16, 512 },
					  { 32, 1024 },
					  { 64, 256 },
					  { 16, 2048 },
					  { 128, 128 }
	};
	struct orr_kern_sample s[24], q;
	struct orr_kern_model m;
	enum orr_gemm_how how;
	double roof, t;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		double bytes = mib[i] * 1048576;

		s[n++] = kern(ORR_KERN_NORM, "ln", bytes, 0);
		s[n++] = kern(ORR_KERN_NORM, "ln", bytes, 0);
		s[n++] = kern(ORR_KERN_ATTENTION, "flash_fwd_kernel",
			      4 * 2 * attn[i][0] * attn[i][1] * 128,
			      4 * attn[i][0] * attn[i][1] * attn[i][1] * 128);
	}
	s[n++] = kern(ORR_KERN_NORM, "rms", 8 * 1048576, 0);
	s[n++] = kern(ORR_KERN_NORM, "rms", 32 * 1048576, 0);
	assert_int_equal(orr_kern_model_fit(s, n, h100, &m), 0);
	assert_int_equal(m.nfamilies, 3);
	/* Families come in class order, then family name. */
	assert_int_equal(m.families[0].cls, ORR_KERN_ATTENTION);
	assert_true(m.families[0].flops);
	assert_int_equal(m.families[0].how, ORR_GEMM_FIT);
	assert_float_equal(m.families[0].fit.coef[0], A_NS, A_NS * 1e-6);
	assert_float_equal(m.families[0].fit.coef[1], B_NS, B_NS * 1e-6);
	assert_float_equal(m.families[0].fit.coef[2], C_NS, C_NS * 1e-6);
	assert_string_equal(m.families[1].name, "ln");
	assert_false(m.families[1].flops);
	assert_int_equal(m.families[1].how, ORR_GEMM_FIT);
	assert_int_equal(m.families[1].samples, 10);
	assert_int_equal(m.families[1].sizes, 5);
	assert_int_equal(m.families[1].fit.nparams, 2);
	assert_float_equal(m.families[1].fit.coef[0], A_NS, A_NS * 1e-6);
	assert_float_equal(m.families[1].fit.coef[1], C_NS, C_NS * 1e-6);
	assert_true(m.families[1].fit.fit_max < 1e-9);
	/* Each size of a fitted family left out leaves four: still exact. */
	assert_int_equal(m.families[1].loso_sizes, 5);
	assert_true(m.families[1].loso_max < 1e-9);
	assert_true(m.families[0].loso_max < 1e-9);
	assert_int_equal(m.classes[ORR_KERN_NORM].families, 2);
	assert_int_equal(m.classes[ORR_KERN_NORM].fitted, 1);
	assert_int_equal(m.classes[ORR_KERN_NORM].samples, 12);
	assert_int_equal(m.classes[ORR_KERN_NORM].sizes, 7);
	/* The fallback: the HBM roofline x the fitted norms' median efficiency. */
	assert_string_equal(m.families[2].name, "rms");
	assert_int_equal(m.families[2].how, ORR_GEMM_ROOFLINE);
	assert_non_null(strstr(m.families[2].why, "2 sizes, fewer than 3"));
	assert_true(m.efficiency[ORR_KERN_NORM].fitted);
	assert_int_equal(m.below_roofline, 0);
	/* The floor: the median time of the samples whose roofline is below the shortest. */
	assert_true(m.floor_ns >= s[0].ns && m.floor_ns <= s[3].ns);
	q = kern(ORR_KERN_NORM, "rms", 128 * 1048576, 0);
	roof = 128 * 1048576 / h100->hbm_bytes_per_s * 1e9;
	t = orr_kern_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_ROOFLINE);
	assert_float_equal(t, roof * m.efficiency[ORR_KERN_NORM].median, 1e-6 * t);
	/* A family never seen falls back the same way; a tiny one to the floor. */
	snprintf(q.family, sizeof(q.family), "never_seen");
	assert_float_equal(orr_kern_model_time(&m, &q, NULL), t, 1e-6 * t);
	q.bytes = 1024;
	assert_float_equal(orr_kern_model_time(&m, &q, NULL), m.floor_ns, 1e-6);
	assert_int_equal(m.nsizes, 12);
	assert_int_equal(m.loso_predicted, 12);
	orr_kern_model_release(&m);

	/* Without a GPU: no roofline; the small family takes the fit over every norm. */
	assert_int_equal(orr_kern_model_fit(s, n, NULL, &m), 0);
	assert_int_equal(m.families[2].how, ORR_GEMM_POOLED);
	assert_int_equal(m.efficiency[ORR_KERN_NORM].samples, 0);
	q = kern(ORR_KERN_NORM, "rms", 128 * 1048576, 0);
	t = orr_kern_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_POOLED);
	assert_float_equal(t, q.ns, 1e-6 * q.ns);
	orr_kern_model_release(&m);
}

/*
 * A kernel measured faster than its bytes at HBM's rate moved fewer bytes than counted
 * (a broadcast operand, data still in L2): its measured / roofline says nothing of a
 * kernel that streams its bytes, so the fallback's efficiency leaves it out.  Here a
 * fitted family of four sizes runs at a tenth of its roofline and an unfitted one of two
 * sizes at 1.5 times it: a family never seen takes 1.5, not the fitted family's 0.1.
 */
static void test_kern_model_below_roofline(void **state)
{
	const struct orr_gpu_spec *a100 = orr_gpu_spec_by_id("a100-80gb-sxm");
	static const double mib[] = { 64, 128, 256, 512 };
	struct orr_kern_sample s[8], q;
	struct orr_kern_model m;
	enum orr_gemm_how how;
	size_t n = 0;
	double t;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		s[n] = kern(ORR_KERN_ELEMENTWISE, "broadcast_add", mib[i] * 1048576, 0);
		s[n].ns = 0.1 * s[n].bytes / a100->hbm_bytes_per_s * 1e9;
		n++;
	}
	for (size_t i = 0; i < 2; i++) {
		s[n] = kern(ORR_KERN_ELEMENTWISE, "dropout", mib[i] * 1048576, 0);
		s[n].ns = 1.5 * s[n].bytes / a100->hbm_bytes_per_s * 1e9;
		n++;
	}
	assert_int_equal(orr_kern_model_fit(s, n, a100, &m), 0);
	assert_int_equal(m.below_roofline, 4);
	assert_int_equal(m.efficiency[ORR_KERN_ELEMENTWISE].samples, 2);
	assert_false(m.efficiency[ORR_KERN_ELEMENTWISE].fitted);
	assert_float_equal(m.efficiency[ORR_KERN_ELEMENTWISE].median, 1.5, 1e-9);
	q = kern(ORR_KERN_ELEMENTWISE, "never_seen", 100 * 1048576, 0);
	t = orr_kern_model_time(&m, &q, &how);
	assert_int_equal(how, ORR_GEMM_ROOFLINE);
	assert_float_equal(t, 1.5 * q.bytes / a100->hbm_bytes_per_s * 1e9, 1e-6 * t);
	orr_kern_model_release(&m);
}

/* ---- read from a trace ---- */

/* A copy or memset of `bytes` (none when negative) and the call that made it. */
static void doc_copy_bytes(struct doc *d, const char *cat, const char *name, double ts, double dur,
			   long long bytes, int *corr)
{
	doc_call(d, strcmp(cat, "gpu_memset") ? "cudaMemcpyAsync" : "cudaMemsetAsync", 1, ts, 1,
		 *corr);
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"correlation\": %d, \"stream\": 7,"
		" \"device\": 0",
		cat, name, ts + 2, dur, *corr);
	if (bytes >= 0)
		doc_add(d, ", \"bytes\": %lld", bytes);
	doc_add(d, "}}");
	(*corr)++;
}

#define BF16_3 "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]"
#define BF16_4 "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]"

/* An attention op of q, k, v (and more) given, under `around` when not NULL. */
struct attention_op {
	const char *around, *op, *dims, *types, *kernel;
	double flops;
};

static const struct attention_op attention_ops[] = {
	{ NULL, "aten::_scaled_dot_product_flash_attention",
	  "[[2, 16, 1024, 64], [2, 16, 1024, 64], [2, 16, 1024, 64]]", BF16_3,
	  "void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >(Flash_fwd_params)",
	  4.0 * 2 * 16 * 1024 * 1024 * 64 },
	/* flash's own op is [b, s, h, d]; backward does 2.5 times the forward's work */
	{ NULL, "aten::_flash_attention_backward",
	  "[[2, 1024, 16, 64], [2, 1024, 16, 64], [2, 1024, 16, 64], [2, 1024, 16, 64]]", BF16_4,
	  "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64> >("
	  "Flash_bwd_params)",
	  2.5 * 4.0 * 2 * 16 * 1024 * 1024 * 64 },
	/* a module that says it is causal */
	{ "nn.Module: CausalSelfAttention", "aten::_scaled_dot_product_flash_attention",
	  "[[4, 8, 512, 128], [4, 8, 512, 128], [4, 8, 512, 128]]", BF16_3,
	  "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(Flash_fwd_params)",
	  0.5 * 4.0 * 4 * 8 * 512 * 512 * 128 },
	/* an op of no known layout: the longer middle dimension is the sequence */
	{ NULL, "MyAttention", "[[2, 2048, 16, 64], [2, 2048, 16, 64], [2, 2048, 16, 64]]", BF16_3,
	  "my_fmha_kernel", 4.0 * 2 * 16 * 2048 * 2048 * 64 },
};

#define NATTENTION (sizeof(attention_ops) / sizeof(attention_ops[0]))

static const char ln_kernel[] = "void at::native::(anonymous namespace)::vectorized_layer_norm_"
				"kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*)";

/* Layer norms of t = A + C·bytes, with their bytes; returns the next free time. */
static double doc_layer_norms(struct doc *d, double ts, int *corr, double *bytes, double *want)
{
	static const int rows[] = { 512, 1024, 2048, 4096, 8192 };
	char dims[128];

	for (size_t i = 0; i < 5; i++, ts += 2000) {
		bytes[i] = 2.0 * (rows[i] * 1024 + 2 * 1024) + 2.0 * rows[i] * 1024;
		want[i] = round(A_NS + C_NS * bytes[i]); /* ns, as the trace's µs give it */
		snprintf(dims, sizeof(dims), "[[%d, 1024], [1024], [1024]]", rows[i]);
		doc_op(d, "aten::native_layer_norm", ts, 1000, dims, BF16_3);
		doc_launch(d, ln_kernel, ts + 100, want[i] / 1000, corr);
	}
	return ts;
}

/* Everything else a sample can or cannot come from; returns the next free time. */
static double doc_others(struct doc *d, double ts, int *corr)
{
	for (size_t i = 0; i < NATTENTION; i++, ts += 2000) {
		if (attention_ops[i].around)
			doc_region(d, "user_annotation", attention_ops[i].around, 1, ts, 1000);
		doc_op(d, attention_ops[i].op, ts + 1, 900, attention_ops[i].dims,
		       attention_ops[i].types);
		doc_launch(d, attention_ops[i].kernel, ts + 100, 100, corr);
	}
	/* Layer norm's backward: two kernels, one sample. */
	doc_op(d, "aten::native_layer_norm_backward", ts, 1000,
	       "[[8, 1024], [8, 1024], [8, 1], [8, 1], [1024], [1024]]",
	       "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\"]");
	doc_launch(d,
		   "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, "
		   "float>(float const*)",
		   ts + 100, 10, corr);
	doc_launch(d,
		   "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, "
		   "float>(long)",
		   ts + 400, 20, corr);
	ts += 2000;
	/* A linear's bias epilogue beside its GEMM: the op is composite. */
	doc_op(d, "aten::linear", ts, 1000, "[[64, 1024], [1024, 1024], [1024]]",
	       "[\"float\", \"float\", \"float\"]");
	doc_launch(d, "ampere_sgemm_128x64_tn", ts + 100, 50, corr);
	doc_launch(d, "void epilogue::impl::globalKernel<float>(int)", ts + 400, 3, corr);
	ts += 2000;
	/* No shapes; no op at all; an element type of unknown size. */
	doc_op(d, "aten::add", ts, 1000, NULL, NULL);
	doc_launch(d, add_half, ts + 100, 5, corr);
	doc_launch(d, fill, ts + 1500, 5, corr);
	ts += 2000;
	doc_op(d, "aten::mul", ts, 1000, "[[4, 4]]", "[\"c10::Float8_e8m0fnu\"]");
	doc_launch(d, "void at::native::vectorized_elementwise_kernel<4>(int)", ts + 100, 5, corr);
	ts += 2000;
	/*
	 * Compiled graphs: AOTAutograd's function records the graph's inputs, and a region of
	 * two kernels gives the op around it the inputs of both; Megatron's GeLU, one kernel
	 * in a region, gives a sample.
	 */
	doc_op(d, "CompiledFunction", ts, 1000, "[[64, 64], [64, 64]]", "[\"float\", \"float\"]");
	doc_launch(d, "triton__0d1d2d", ts + 100, 5, corr);
	ts += 2000;
	doc_op(d, "BiasDropoutAdd", ts, 1000, "[[128, 256], [256]]",
	       "[\"c10::BFloat16\", \"c10::BFloat16\"]");
	doc_op(d, "Torch-Compiled Region", ts + 10, 900, NULL, NULL);
	doc_op(d, "triton_poi_fused_add_0", ts + 20, 300, NULL, NULL);
	doc_launch(d, "triton__0d1d2d3d", ts + 100, 5, corr);
	doc_op(d, "triton_poi_fused_add_1", ts + 400, 300, NULL, NULL);
	doc_launch(d, "triton__0d1d2d3d", ts + 500, 5, corr);
	ts += 2000;
	doc_op(d, "GeLUFunction", ts, 1000, "[[128, 256], [256]]",
	       "[\"c10::BFloat16\", \"c10::BFloat16\"]");
	doc_op(d, "Torch-Compiled Region", ts + 10, 900, NULL, NULL);
	doc_op(d, "triton_poi_fused_gelu_0", ts + 20, 800, NULL, NULL);
	doc_launch(d, "triton__0d1d2de", ts + 100, 5, corr);
	ts += 2000;
	/* Copies: sized by the trace, or not at all. */
	doc_op(d, "aten::copy_", ts, 400, "[[262144], [262144], []]",
	       "[\"float\", \"float\", \"Scalar\"]");
	doc_copy_bytes(d, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", ts + 10, 90, 1048576,
		       corr);
	doc_op(d, "aten::zeros", ts + 500, 1000, "[[1024]]", "[\"float\"]");
	doc_copy_bytes(d, "gpu_memset", "Memset (Device)", ts + 600, 2, 4096, corr);
	doc_copy_bytes(d, "gpu_memcpy", "Memcpy DtoD (Device -> Device)", ts + 1700, 2, -1, corr);
	ts += 2000;
	/* A reduction (no output counted), and an optimizer's add. */
	doc_op(d, "aten::sum", ts, 1000, "[[1024, 1024], []]", "[\"float\", \"\"]");
	doc_launch(d, "void at::native::reduce_kernel<512, 1>(int)", ts + 100, 10, corr);
	ts += 2000;
	doc_region(d, "user_annotation", "Optimizer.step#SGD.step", 1, ts, 1000);
	doc_op(d, "aten::add_", ts + 1, 900, "[[1024], [1024], []]",
	       "[\"float\", \"float\", \"Scalar\"]");
	doc_launch(d, add_half, ts + 100, 3, corr);
	return ts + 2000;
}

static const struct orr_kern_sample *find_sample(const struct orr_kern_sample *s, size_t n,
						 const char *op, const char *family)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].op && strcmp(s[i].op, op) == 0 && strcmp(s[i].family, family) == 0)
			return &s[i];
	fail_msg("no sample of %s, %s", op, family);
	return NULL;
}

static void check_others(const struct orr_kern_sample *s, size_t n)
{
	const struct orr_kern_sample *x;

	for (size_t i = 0; i < NATTENTION; i++) {
		char family[ORR_KERN_FAMILY_MAX];

		orr_kern_family(attention_ops[i].kernel, family, sizeof(family));
		x = find_sample(s, n, attention_ops[i].op, family);
		if (i == 2) /* the second of its op and family */
			x = find_sample(x + 1, n - (size_t)(x + 1 - s), attention_ops[i].op,
					family);
		assert_int_equal(x->cls, ORR_KERN_ATTENTION);
		assert_float_equal(x->flops, attention_ops[i].flops, 1);
	}
	x = find_sample(s, n, "aten::native_layer_norm_backward",
			"at::native::GammaBetaBackwardCUDAKernel");
	assert_int_equal(x->cls, ORR_KERN_NORM);
	assert_int_equal(x->kernels, 2);
	assert_float_equal(x->ns, 30000, 0.5);
	assert_float_equal(x->bytes, 4.0 * (2 * 8 * 1024 + 2 * 8 + 2 * 1024) + 4 * 8 * 1024, 0.5);
	assert_int_equal(x->dtype, ORR_DTYPE_FP32);
	x = find_sample(s, n, "GeLUFunction", "triton__0d1d2de");
	assert_int_equal(x->cls, ORR_KERN_ELEMENTWISE);
	assert_float_equal(x->bytes, 2.0 * (128 * 256 + 256) + 2.0 * 128 * 256, 0.5);
	assert_int_equal(x->dtype, ORR_DTYPE_BF16);
	x = find_sample(s, n, "aten::copy_", "Memcpy HtoD (Pinned -> Device)");
	assert_int_equal(x->cls, ORR_KERN_TRANSFER);
	assert_float_equal(x->bytes, 1048576, 0.5);
	assert_int_equal(x->dtype, ORR_DTYPE_COUNT);
	x = find_sample(s, n, "aten::zeros", "Memset (Device)");
	assert_int_equal(x->cls, ORR_KERN_COPY);
	assert_float_equal(x->bytes, 4096, 0.5);
	x = find_sample(s, n, "aten::sum", "at::native::reduce_kernel");
	assert_int_equal(x->cls, ORR_KERN_REDUCTION);
	assert_float_equal(x->bytes, 4.0 * 1024 * 1024, 0.5);
	x = find_sample(s, n, "aten::add_", "at::native::vectorized_elementwise_kernel");
	assert_int_equal(x->cls, ORR_KERN_OPTIMIZER);
	assert_float_equal(x->bytes, 3 * 4096, 0.5);
}

static void test_kern_observe_synthetic(void **state)
{
	struct doc d = { 0 };
	struct orr_trace *t;
	struct orr_graph *g;
	struct orr_kern_sample *s;
	struct orr_kern_counts c;
	struct orr_kern_model m;
	struct orr_diag diag;
	double bytes[5], want[5], ts;
	const struct orr_kern_family *ln = NULL;
	int corr = 1;
	size_t n, k = 0;

	(void)state;
	doc_begin(&d, 0, 1);
	ts = doc_layer_norms(&d, 10, &corr, bytes, want);
	doc_others(&d, ts, &corr);
	t = doc_import(&d, "kernels.json");
	free(d.s);
	assert_int_equal(orr_graph_build(t, NULL, &g, &diag), 0);
	n = orr_kern_observe(g, &s, &c);
	assert_int_equal(n, 15);
	assert_int_equal(c.samples, 15);
	assert_int_equal(c.kernels, 24);
	assert_int_equal(c.sampled, 16);
	assert_int_equal(c.composite, 4);
	assert_int_equal(c.no_shapes, 1);
	assert_int_equal(c.outside, 1);
	assert_int_equal(c.bad_shapes, 1);
	assert_int_equal(c.no_bytes, 1);
	assert_int_equal(c.no_time, 0);
	assert_int_equal(c.layout_guessed, 1);
	assert_int_equal(c.by_class[ORR_KERN_NORM], 7);
	assert_int_equal(c.by_class[ORR_KERN_ATTENTION], 4);
	assert_int_equal(c.by_class[ORR_KERN_ELEMENTWISE], 6);
	assert_int_equal(c.by_class[ORR_KERN_OTHER], 2);
	assert_int_equal(c.by_class[ORR_KERN_COPY], 2);
	assert_int_equal(c.by_class[ORR_KERN_TRANSFER], 1);
	assert_int_equal(c.by_class[ORR_KERN_REDUCTION], 1);
	assert_int_equal(c.by_class[ORR_KERN_OPTIMIZER], 1);
	assert_int_equal(c.samples_by_class[ORR_KERN_NORM], 6);
	/* The layer norms, in the order of their ops. */
	for (size_t i = 0; i < n; i++) {
		const struct orr_kern_sample *x = &s[i];

		if (!x->op || strcmp(x->op, "aten::native_layer_norm") != 0)
			continue;
		assert_true(k < 5);
		assert_string_equal(x->family, "at::native::vectorized_layer_norm_kernel");
		assert_int_equal(x->cls, ORR_KERN_NORM);
		assert_int_equal(x->dtype, ORR_DTYPE_BF16);
		assert_int_equal(x->kernels, 1);
		assert_float_equal(x->bytes, bytes[k], 0.5);
		assert_float_equal(x->ns, want[k], 0.5);
		assert_true(x->flops == 0);
		k++;
	}
	assert_int_equal(k, 5);
	check_others(s, n);
	assert_int_equal(orr_kern_model_fit(s, n, NULL, &m), 0);
	for (size_t i = 0; i < m.nfamilies; i++)
		if (strcmp(m.families[i].name, "at::native::vectorized_layer_norm_kernel") == 0)
			ln = &m.families[i];
	assert_non_null(ln);
	assert_int_equal(ln->how, ORR_GEMM_FIT);
	/* The trace's times are rounded to the nanosecond. */
	assert_float_equal(ln->fit.coef[0], A_NS, 1.0);
	assert_float_equal(ln->fit.coef[1], C_NS, C_NS * 1e-4);
	assert_true(ln->loso_max < 1e-3);
	orr_kern_model_release(&m);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
}

/* Element sizes of the dtype names the profiler writes, PyTorch's and C++'s. */
static void test_dtype_bytes(void **state)
{
	static const struct {
		const char *name;
		int bytes;
	} names[] = {
		{ "c10::Half", 2 },
		{ "c10::BFloat16", 2 },
		{ "float", 4 },
		{ "double", 8 },
		{ "long int", 8 },
		{ "long", 8 },
		{ "int", 4 },
		{ "bool", 1 },
		{ "unsigned char", 1 },
		{ "signed char", 1 },
		{ "short int", 2 },
		{ "c10::complex<float>", 8 },
		{ "c10::complex<double>", 16 },
		{ "c10::Float8_e4m3fn", 1 },
		{ "Scalar", 0 },
		{ "TensorList", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (orr_dtype_bytes(names[i].name) != names[i].bytes)
			fail_msg("%s: %d, not %d", names[i].name, orr_dtype_bytes(names[i].name),
				 names[i].bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtype_bytes),
		cmocka_unit_test(test_kern_family_names),
		cmocka_unit_test(test_kern_classify_names),
		cmocka_unit_test(test_kern_model_null),
		cmocka_unit_test(test_kern_model_exact),
		cmocka_unit_test(test_kern_model_below_roofline),
		cmocka_unit_test(test_kern_observe_synthetic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
