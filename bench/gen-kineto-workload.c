/* SPDX-License-Identifier: MIT */
/* The workload tables of gen-kineto: see gen-kineto.h. */
#include "gen-kineto.h"

const struct api_desc apis[] = {
	[API_RT] = { "cuda_runtime", "cudaLaunchKernel", 211, 4600, true },
	[API_EXC] = { "cuda_runtime", "cudaLaunchKernelExC", 430, 7400, true },
	[API_DRV] = { "cuda_driver", "cuLaunchKernel", 307, 5200, true },
	[API_NCCL] = { "cuda_driver", "cuLaunchKernelEx", 652, 9300, true },
	[API_MEMCPY] = { "cuda_runtime", "cudaMemcpyAsync", 41, 6400, true },
	[API_MEMSET] = { "cuda_runtime", "cudaMemsetAsync", 51, 4800, true },
	[API_RECORD] = { "cuda_runtime", "cudaEventRecord", 135, 1700, false },
	[API_WAIT] = { "cuda_runtime", "cudaStreamWaitEvent", 147, 1900, true },
	[API_SYNC] = { "cuda_runtime", "cudaStreamSynchronize", 131, 2400, true },
	[API_CAPTURING] = { "cuda_runtime", "cudaStreamIsCapturing", 317, 1100, false },
	[API_OCCUPANCY] = { "cuda_runtime",
			    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 251, 2000,
			    false },
};

#define VEC_KERNEL(f, n)                                                                        \
	"void at::native::vectorized_elementwise_kernel<4, " f ", at::detail::Array<char*, " #n \
	"> >(int, " f ", at::detail::Array<char*, " #n ">)"
#define MTA_KERNEL(meta, f)                                                               \
	"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"  \
	"(anonymous namespace)::TensorListMetadata<" #meta ">, at::native::(anonymous "   \
	"namespace)::" f ">(at::native::(anonymous namespace)::TensorListMetadata<" #meta \
	">, at::native::(anonymous namespace)::" f ")"
#define SILU                                                                                      \
	"at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::" \
	"operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}"
#define MUL_BF16                                                                  \
	"at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, " \
	"at::native::binary_internal::MulFunctor<float> >"
/* A CUTLASS 3 (sm90) GEMM: real names from Transformer Engine or torch.compile are this long. */
#define CUTLASS3_GEMM                                                                          \
	"cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "               \
	"cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpeci" \
	"alizedCooperative<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, "              \
	"cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<256>, "      \
	"cute::C<128>, cute::C<64> >, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, "     \
	"long>, cutlass::bfloat16_t, cute::tuple<long, cute::C<1>, long>, "                    \
	"cute::TiledMMA<cute::MMA_Atom<cute::SM90_64x128x16_F32BF16BF16_SS<(cute::GMMA::Major" \
	")0, (cute::GMMA::Major)0, (cute::GMMA::ScaleIn)1, (cute::GMMA::ScaleIn)1> >, "        \
	"cute::Layout<cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, "                      \
	"cute::tuple<cute::C<1>, cute::C<0>, cute::C<0> > >, cute::tuple<cute::Underscore, "   \
	"cute::Underscore, cute::Underscore> >, cute::SM90_TMA_LOAD, "                         \
	"cute::ComposedLayout<cute::Swizzle<3, 4, 3>, cute::smem_ptr_flag_bits<16>, "          \
	"cute::Layout<cute::tuple<cute::C<8>, cute::C<64> >, cute::tuple<cute::C<64>, "        \
	"cute::C<1> > > >, void, cute::identity, cute::SM90_TMA_LOAD_MULTICAST, "              \
	"cute::ComposedLayout<cute::Swizzle<3, 4, 3>, cute::smem_ptr_flag_bits<16>, "          \
	"cute::Layout<cute::tuple<cute::C<8>, cute::C<64> >, cute::tuple<cute::C<64>, "        \
	"cute::C<1> > > >, void, cute::identity>, "                                            \
	"cutlass::epilogue::collective::CollectiveEpilogue<cutlass::epilogue::Sm90TmaWarpSpec" \
	"ialized<1, 2, 32, true, false>, cute::tuple<cute::C<128>, cute::C<128>, "             \
	"cute::C<64> >, cute::tuple<cute::C<64>, cute::C<32> >, cutlass::bfloat16_t, "         \
	"cute::tuple<long, cute::C<1>, long>, cutlass::bfloat16_t, cute::tuple<long, "         \
	"cute::C<1>, long>, "                                                                  \
	"cutlass::epilogue::fusion::LinearCombination<cutlass::bfloat16_t, float, "            \
	"cutlass::bfloat16_t, float, (cutlass::FloatRoundStyle)2>, cute::SM90_TMA_LOAD, "      \
	"cute::ComposedLayout<cute::Swizzle<2, 4, 3>, cute::smem_ptr_flag_bits<16>, "          \
	"cute::Layout<cute::tuple<cute::C<8>, cute::C<32> >, cute::tuple<cute::C<32>, "        \
	"cute::C<1> > > >, cute::SM75_U32x4_LDSM_N, cute::SM90_TMA_STORE, "                    \
	"cute::ComposedLayout<cute::Swizzle<2, 4, 3>, cute::smem_ptr_flag_bits<16>, "          \
	"cute::Layout<cute::tuple<cute::C<8>, cute::C<32> >, cute::tuple<cute::C<32>, "        \
	"cute::C<1> > > >, cute::SM90_U32x4_STSM_N>, void, void>"

const struct kernel kernels[N_KERNELS] = {
	[K_GEMM_NVJET] = { "nvjet_tst_256x128_64x4_2x1_v_bz_coopB_TNN", 182, API_RT, 132, 384, 168,
			   213000 },
	[K_GEMM_XMMA] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_"
			  "warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
			  236, API_RT, 264, 384, 168, 221184 },
	[K_GEMM_XMMA_NT] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_"
			     "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
			     211, API_RT, 512, 256, 168, 196608 },
	[K_GEMM_CUTLASS3] = { "void cutlass::device_kernel<" CUTLASS3_GEMM ">(" CUTLASS3_GEMM
			      "::Params)",
			      163, API_EXC, 132, 384, 168, 227328 },
	[K_FLASH_FWD] = { "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, "
			  "64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, "
			  "128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, "
			  "true, false, false>(pytorch_flash::Flash_fwd_params)",
			  287, API_RT, 512, 128, 255, 49152 },
	[K_FLASH_BWD] = { "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<"
			  "Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
			  "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
			  "cutlass::bfloat16_t> >, true, false, false, false, false, true, false, "
			  "false>(pytorch_flash::Flash_bwd_params)",
			  392, API_RT, 1024, 256, 255, 147456 },
	[K_RMSNORM] = { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<"
			"c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 "
			"const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
			21, API_RT, 8192, 256, 32, 0 },
	[K_MUL] = { VEC_KERNEL(MUL_BF16, 3), 19, API_RT, 32768, 128, 22, 0 },
	[K_SILU] = { VEC_KERNEL(SILU, 2), 33, API_RT, 65536, 128, 24, 0 },
	[K_ADD] = { VEC_KERNEL("at::native::CUDAFunctor_add<c10::BFloat16>", 3), 17, API_RT, 32768,
		    128, 22, 0 },
	[K_COPY] = { "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel"
		     "_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()"
		     "#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
		     "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, "
		     "unsigned int>, at::native::memory::LoadWithCast<1>, "
		     "at::native::memory::StoreWithCast<1> >(int, "
		     "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}:"
		     ":operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
		     "at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, "
		     "TrivialOffsetCalculator<1, unsigned int>, "
		     "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
		     14, API_RT, 16384, 128, 30, 0 },
	[K_TRITON_POI] = { "triton_poi_fused__to_copy_add_mean_mul_pow_rsqrt_0", 16, API_DRV, 8192,
			   256, 28, 0 },
	[K_TRITON_RED] = { "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_sum_3", 31, API_DRV,
			   4096, 512, 40, 2048 },
	[K_SUM] = { "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
		    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
		    "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
		    "unsigned int, float, 4, 4> >(at::native::ReduceOp<float, "
		    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
		    "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
		    "unsigned int, float, 4, 4>)",
		    27, API_RT, 264, 512, 40, 4096 },
	[K_SOFTMAX] = { "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, "
			"c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::"
			"LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
			118, API_RT, 8192, 1024, 38, 128 },
	[K_EMBED] = { "void at::native::(anonymous namespace)::indexSelectLargeIndex<"
		      "c10::BFloat16, long, unsigned int, 2, 2, -2, true>("
		      "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
		      "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
		      "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, "
		      "unsigned int, unsigned int, long)",
		      24, API_RT, 8192, 128, 32, 0 },
	[K_FILL] = { VEC_KERNEL("at::native::FillFunctor<c10::BFloat16>", 1), 9, API_RT, 4096, 128,
		     16, 0 },
	[K_ADAM_LERP] = { MTA_KERNEL(2, "TernaryOpScalarFunctor<float, 2, 2, 0>, "
					"at::native::LerpFunctor<float>, float"),
			  141, API_RT, 2304, 512, 32, 0 },
	[K_ADAM_ADDCMUL] = { MTA_KERNEL(3, "PointwiseOpScalarFunctor<float, 3, 3, 0>, "
					   "std::multiplies<float>, float"),
			     152, API_RT, 2304, 512, 38, 0 },
	[K_ADAM_ADDCDIV] = { MTA_KERNEL(4, "PointwiseOpScalarListFunctor<float, 4, 3, 0>, "
					   "std::divides<float>, float"),
			     188, API_RT, 2304, 512, 40, 0 },
	[K_ALLREDUCE] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL("
			  "ncclDevKernelArgsStorage<4096ul>)",
			  0, API_NCCL, 32, 640, 96, 0 },
	[K_ALLGATHER] = { "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0,
			  API_NCCL, 32, 640, 72, 0 },
};

/* One Llama-style decoder layer, forward on the main thread, repeated. */
const struct op fwd_ops[] = {
	{ "aten::linear", "aten::mm", K_GEMM_NVJET, "[" X_DIMS ", [6144, 4096]]", T2_BF16 },
	{ "CompiledFunction", "triton_poi_fused__to_copy_add_mean_mul_pow_rsqrt_0", K_TRITON_POI,
	  NULL, NULL },
	{ "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
	  K_FLASH_FWD, "[[2, 32, 4096, 128], [2, 8, 4096, 128], [2, 8, 4096, 128], [], []]",
	  "[" BF16 ", " BF16 ", " BF16 ", \"Scalar\", \"\"]" },
	{ "aten::linear", "aten::mm", K_GEMM_CUTLASS3, "[" X_DIMS ", [4096, 4096]]", T2_BF16 },
	{ NULL, "aten::add", K_ADD, "[" X_DIMS ", " X_DIMS ", []]", T3_BF16 },
	{ "CompiledFunction", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_sum_3",
	  K_TRITON_RED, NULL, NULL },
	{ "aten::linear", "aten::mm", K_GEMM_XMMA, "[" X_DIMS ", [28672, 4096]]", T2_BF16 },
	{ NULL, "aten::silu", K_SILU, "[[2, 4096, 14336]]", "[" BF16 "]" },
	{ NULL, "aten::mul", K_MUL, "[[2, 4096, 14336], [2, 4096, 14336]]", T2_BF16 },
	{ "aten::linear", "aten::mm", K_GEMM_XMMA, "[[2, 4096, 14336], [4096, 14336]]", T2_BF16 },
	{ NULL, "aten::add", K_ADD, "[" X_DIMS ", " X_DIMS ", []]", T3_BF16 },
	{ "aten::to", "aten::copy_", K_COPY, "[" X_DIMS ", " X_DIMS ", []]", T3_BF16 },
};

/* Its backward on the autograd thread: evaluate_function, then the aten op. */
#define EVAL "autograd::engine::evaluate_function: "
const struct op bwd_ops[] = {
	{ EVAL "ToCopyBackward0", "aten::copy_", K_COPY, NULL, NULL },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_XMMA, "[[8192, 4096], [4096, 14336]]", T2_BF16 },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_XMMA_NT, "[[4096, 8192], [8192, 14336]]",
	  T2_BF16 },
	{ EVAL "MulBackward0", "aten::mul", K_MUL, "[[2, 4096, 14336], [2, 4096, 14336]]",
	  T2_BF16 },
	{ EVAL "SiluBackward0", "aten::silu_backward", K_SILU,
	  "[[2, 4096, 14336], [2, 4096, 14336]]", T2_BF16 },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_XMMA, "[[8192, 28672], [28672, 4096]]", T2_BF16 },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_XMMA_NT, "[[28672, 8192], [8192, 4096]]",
	  T2_BF16 },
	{ EVAL "CompiledFunctionBackward", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_sum_3",
	  K_TRITON_RED, NULL, NULL },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_NVJET, "[[8192, 4096], [4096, 4096]]", T2_BF16 },
	{ EVAL "ScaledDotProductFlashAttentionBackward0",
	  "aten::_scaled_dot_product_flash_attention_backward", K_FLASH_BWD,
	  "[[2, 32, 4096, 128], [2, 32, 4096, 128], [2, 8, 4096, 128], [2, 8, 4096, 128]]",
	  "[" BF16 ", " BF16 ", " BF16 ", " BF16 "]" },
	{ EVAL "MmBackward0", "aten::mm", K_GEMM_XMMA_NT, "[[6144, 8192], [8192, 4096]]", T2_BF16 },
	{ EVAL "AddBackward0", "aten::sum", K_SUM, "[[2, 4096, 4096], [], [], []]",
	  "[" BF16 ", \"\", \"Scalar\", \"\"]" },
};

/* AdamW (foreach) on the main thread. */
#define TLISTS "[\"TensorList\", \"TensorList\", \"TensorList\", \"Scalar\"]"
const struct op opt_ops[] = {
	{ NULL, "aten::_foreach_lerp_", K_ADAM_LERP, "[[], [], [], []]", TLISTS },
	{ NULL, "aten::_foreach_mul_", K_FILL, "[[], []]", "[\"TensorList\", \"Scalar\"]" },
	{ NULL, "aten::_foreach_addcmul_", K_ADAM_ADDCMUL, "[[], [], [], []]", TLISTS },
	{ NULL, "aten::_foreach_addcdiv_", K_ADAM_ADDCDIV, "[[], [], [], []]", TLISTS },
};

const size_t n_fwd_ops = sizeof(fwd_ops) / sizeof(fwd_ops[0]);
const size_t n_bwd_ops = sizeof(bwd_ops) / sizeof(bwd_ops[0]);
const size_t n_opt_ops = sizeof(opt_ops) / sizeof(opt_ops[0]);
