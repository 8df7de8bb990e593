/* SPDX-License-Identifier: MIT */
/*
 * The kernel classes orrery summary reports (orr_kernel_class_of()), which
 * bench/gpu/compose-check.py reads from it: cuBLAS's nvjet_* GEMMs on Hopper are
 * GEMMs (they name no "gemm"), cuDNN's fused SDPA kernels attention, FBGEMM's kernels
 * not GEMMs, copies and sets their own class.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "orrery/analysis.h"

static const char *class_of(enum orr_event_kind kind, const char *name)
{
	return orr_kernel_class_name(orr_kernel_class_of(kind, name));
}

static void test_kernel_names(void **state)
{
	static const struct {
		const char *name, *cls;
	} cases[] = {
		{ "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "gemm" },
		{ "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", "gemm" },
		{ "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>("
		  "cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4::Params)",
		  "gemm" },
		{ "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "gemm" },
		{ "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_"
		  "4x1x1_cga1x1x1_kernel0_0",
		  "attention" },
		{ "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_"
		  "1x4x1_cga1x1x1_kernel0_0",
		  "attention" },
		{ "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel"
		  "<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
		  "attention" },
		{ "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		  "communication" },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<"
		  "float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
		  "std::array<char*, 3ul>)",
		  "elementwise" },
		{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, "
		  "float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, "
		  "float const*, int)",
		  "reduction" },
		{ "void fbgemm_gpu::embedding_forward_kernel<float>(float*)", "other" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = class_of(ORR_EVENT_KERNEL, cases[i].name);

		if (strcmp(got, cases[i].cls))
			fail_msg("%s: %s, expected %s", cases[i].name, got, cases[i].cls);
	}
	assert_string_equal(class_of(ORR_EVENT_MEMCPY, "Memcpy HtoD (Pinned -> Device)"), "copy");
	assert_string_equal(class_of(ORR_EVENT_MEMSET, "Memset (Device)"), "copy");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
