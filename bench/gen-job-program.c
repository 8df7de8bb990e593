/* SPDX-License-Identifier: MIT */
/*
 * The program every rank of gen-job runs (see gen-job.h): the kernels of a GPT-style
 * layer, forward and backward, the collectives, and the layer count that gives the
 * requested number of events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-job-internal.h"
#include "../common/banned.h"

#define TP_NELEMS 8388608  /* 2048 tokens x 4096 hidden: the activations */
#define DP_NELEMS 50331648 /* two layers' parameters of a TP shard: a gradient bucket */

#define EVAL "autograd::engine::evaluate_function: "
#define VEC_KERNEL(f, n)                                                                        \
	"void at::native::vectorized_elementwise_kernel<4, " f ", at::detail::Array<char*, " #n \
	"> >(int, " f ", at::detail::Array<char*, " #n ">)"

/* Kernel, op, parent op (or NULL), and the range its time is drawn from. */
static const struct {
	const char *kernel, *op, *parent;
	int64_t min_ns, max_ns;
} kclasses[N_KCLASSES] = {
	[K_EMBED] = { "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, "
		      "long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<"
		      "c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
		      "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned "
		      "int>, int, int, unsigned int, unsigned int, long)",
		      "aten::index_select", "aten::embedding", 10000, 20000 },
	[K_LN] = { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<"
		   "c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, "
		   "c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
		   "aten::native_layer_norm", "aten::layer_norm", 8000, 20000 },
	[K_GEMM_QKV] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_"
			 "warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
			 "aten::mm", "aten::linear", 120000, 220000 },
	[K_FLASH] = { "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, "
		      "4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, "
		      "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
		      "false>(pytorch_flash::Flash_fwd_params)",
		      "aten::_scaled_dot_product_flash_attention",
		      "aten::scaled_dot_product_attention", 200000, 400000 },
	[K_GEMM_PROJ] = { "nvjet_tst_256x128_64x4_2x1_v_bz_coopB_TNN", "aten::mm", "aten::linear",
			  50000, 120000 },
	[K_ADD] = { VEC_KERNEL("at::native::CUDAFunctor_add<c10::BFloat16>", 3), "aten::add", NULL,
		    3000, 10000 },
	[K_GEMM_FC1] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_"
			 "warpgroupsize2x1x1_execute_segment_k_on_kernel__5x_cublas",
			 "aten::mm", "aten::linear", 250000, 500000 },
	[K_GELU] = { VEC_KERNEL("at::native::GeluCUDAKernelImpl<c10::BFloat16>", 2), "aten::gelu",
		     NULL, 8000, 20000 },
	[K_GEMM_FC2] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_"
			 "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
			 "aten::mm", "aten::linear", 250000, 500000 },
	[K_GEMM_LOGITS] = { "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT", "aten::mm", "aten::linear",
			    300000, 500000 },
	[K_SOFTMAX] = { "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, "
			"c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::"
			"LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
			"aten::_log_softmax", "aten::log_softmax", 15000, 20000 },
	[K_SOFTMAX_BWD] = { "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, "
			    "c10::BFloat16, float, c10::BFloat16, at::native::(anonymous "
			    "namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, "
			    "c10::BFloat16 const*, c10::BFloat16 const*, int)",
			    "aten::_log_softmax_backward_data", EVAL "LogSoftmaxBackward0", 15000,
			    20000 },
	[K_GELU_BWD] = { VEC_KERNEL("at::native::GeluBackwardCUDAKernelImpl<c10::BFloat16>", 3),
			 "aten::gelu_backward", EVAL "GeluBackward0", 10000, 20000 },
	[K_LN_BWD] = { "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_"
		       "vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 "
		       "const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, "
		       "int)",
		       "aten::native_layer_norm_backward", EVAL "NativeLayerNormBackward0", 12000,
		       20000 },
	[K_FLASH_BWD] = { "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<"
			  "Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
			  "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
			  "cutlass::bfloat16_t> >, true, false, false, false, false, true, false, "
			  "false>(pytorch_flash::Flash_bwd_params)",
			  "aten::_scaled_dot_product_flash_attention_backward",
			  EVAL "ScaledDotProductFlashAttentionBackward0", 350000, 500000 },
	[K_ADAM] = { "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
		     "at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::"
		     "(anonymous namespace)::PointwiseOpScalarListFunctor<float, 4, 3, 0>, "
		     "std::divides<float>, float>(at::native::(anonymous namespace)::"
		     "TensorListMetadata<4>, at::native::(anonymous namespace)::"
		     "PointwiseOpScalarListFunctor<float, 4, 3, 0>, std::divides<float>, float)",
		     "aten::_foreach_addcdiv_", "Optimizer.step#AdamW.step", 60000, 150000 },
	[K_FILL] = { VEC_KERNEL("at::native::FillFunctor<c10::BFloat16>", 1), "aten::fill_",
		     "aten::zero_", 2000, 5000 },
};

static const char *const coll_types[N_COLL_TYPES] = { "allreduce", "reduce_scatter", "allgather" };
static const char *const coll_kernels[N_COLL_TYPES] = {
	"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
};

static uint32_t intern(struct gen_job *j, const char *s)
{
	return s ? orr_strtab_intern(j->t->strs, s, strlen(s)) : ORR_STR_NONE;
}

/* Process groups are named as PyTorch names them: by creation order, the same on all ranks. */
static void intern_names(struct gen_job *j)
{
	char name[32];

	for (int k = 0; k < N_KCLASSES; k++) {
		j->kernel[k] = intern(j, kclasses[k].kernel);
		j->op[k] = intern(j, kclasses[k].op);
		j->parent[k] = intern(j, kclasses[k].parent);
	}
	j->mm_bwd_op = intern(j, "aten::mm");
	j->mm_bwd_parent = intern(j, EVAL "MmBackward0");
	for (int c = 0; c < N_COLL_TYPES; c++) {
		j->coll_type[c] = intern(j, coll_types[c]);
		j->coll_kernel[c] = intern(j, coll_kernels[c]);
	}
	j->bf16 = intern(j, "BFloat16");
	j->nccl = intern(j, "nccl");
	j->device_name = intern(j, "NVIDIA H100 80GB HBM3");
	j->pg_desc[0] = intern(j, "tp");
	j->pg_desc[1] = intern(j, "dp");
	j->tp_pg = orr_xcalloc(j->dp, sizeof(*j->tp_pg));
	j->dp_pg = orr_xcalloc(j->tp, sizeof(*j->dp_pg));
	for (size_t g = 0; g < j->dp + j->tp; g++) {
		int n = snprintf(name, sizeof(name), "%zu", g + 1);

		*(g < j->dp ? &j->tp_pg[g] : &j->dp_pg[g - j->dp]) =
			orr_strtab_intern(j->t->strs, name, (size_t)n);
	}
	gen_job_intern(j);
}

/* ---- the program -------------------------------------------------------------------------- */

struct builder {
	struct gen_job *j;
	uint64_t rng;
	int64_t kernel_ns[N_KCLASSES];
	int64_t seq[2]; /* the next sequence number of the rank's TP and DP groups */
};

static void emit(struct builder *b, struct insn in)
{
	ORR_VEC_PUSH(b->j->prog, b->j->nprog, b->j->cap, in);
}

static void kernel(struct builder *b, int th, enum kclass k, uint8_t flags)
{
	emit(b, (struct insn){ .kind = I_KERNEL,
			       .thread = (uint8_t)th,
			       .what = (uint8_t)k,
			       .flags = flags,
			       .dur_ns = b->kernel_ns[k] });
}

static void coll(struct builder *b, int th, enum coll_type type, bool dp, int64_t nelems,
		 int64_t min_ns, int64_t max_ns)
{
	if ((dp ? b->j->dp : b->j->tp) < 2)
		return;
	emit(b, (struct insn){ .kind = I_COLL,
			       .thread = (uint8_t)th,
			       .what = (uint8_t)type,
			       .flags = dp ? F_DP : 0,
			       .dur_ns = gen_job_uniform(&b->rng, min_ns, max_ns),
			       .seq = b->seq[dp]++,
			       .nelems = nelems });
}

static void mark(struct builder *b, enum insn_kind kind, int th)
{
	emit(b, (struct insn){ .kind = (uint8_t)kind, .thread = (uint8_t)th });
}

/* Attention, TP all-reduce, MLP, TP all-reduce (Megatron's layer). */
static void forward_layer(struct builder *b)
{
	static const uint8_t attn[] = { K_LN, K_GEMM_QKV, K_FLASH, K_GEMM_PROJ };
	static const uint8_t mlp[] = { K_ADD, K_LN, K_GEMM_FC1, K_GELU, K_GEMM_FC2 };

	for (size_t i = 0; i < sizeof(attn); i++)
		kernel(b, TH_MAIN, attn[i], 0);
	coll(b, TH_MAIN, C_ALLREDUCE, false, TP_NELEMS, 60000, 150000);
	for (size_t i = 0; i < sizeof(mlp); i++)
		kernel(b, TH_MAIN, mlp[i], 0);
	coll(b, TH_MAIN, C_ALLREDUCE, false, TP_NELEMS, 60000, 150000);
	kernel(b, TH_MAIN, K_ADD, 0);
}

/* The same reversed: data and weight gradients of every GEMM. */
static void backward_layer(struct builder *b)
{
	static const uint8_t mlp[] = { K_GEMM_FC2, K_GEMM_FC2, K_GELU_BWD, K_GEMM_FC1, K_GEMM_FC1 };
	static const uint8_t attn[] = { K_LN_BWD,    K_GEMM_PROJ, K_GEMM_PROJ,
					K_FLASH_BWD, K_GEMM_QKV,  K_GEMM_QKV };

	for (size_t i = 0; i < sizeof(mlp); i++)
		kernel(b, TH_BWD, mlp[i], mlp[i] == K_GELU_BWD ? 0 : F_MM_BWD);
	coll(b, TH_BWD, C_ALLREDUCE, false, TP_NELEMS, 60000, 150000);
	for (size_t i = 0; i < sizeof(attn); i++)
		kernel(b, TH_BWD, attn[i],
		       attn[i] == K_LN_BWD || attn[i] == K_FLASH_BWD ? 0 : F_MM_BWD);
	coll(b, TH_BWD, C_ALLREDUCE, false, TP_NELEMS, 60000, 150000);
	kernel(b, TH_BWD, K_LN_BWD, 0);
	kernel(b, TH_BWD, K_ADD, 0);
}

static void step(struct builder *b, int64_t k)
{
	struct gen_job *j = b->j;
	char name[40];
	int n = snprintf(name, sizeof(name), "ProfilerStep#%" PRId64, k);

	emit(b, (struct insn){ .kind = I_STEP_BEGIN,
			       .thread = TH_MAIN,
			       .name = orr_strtab_intern(j->t->strs, name, (size_t)n) });
	kernel(b, TH_MAIN, K_EMBED, 0);
	for (size_t l = 0; l < j->layers; l++)
		forward_layer(b);
	kernel(b, TH_MAIN, K_GEMM_LOGITS, 0);
	kernel(b, TH_MAIN, K_SOFTMAX, 0);
	mark(b, I_BWD_BEGIN, TH_MAIN);
	kernel(b, TH_BWD, K_SOFTMAX_BWD, 0);
	kernel(b, TH_BWD, K_GEMM_LOGITS, F_MM_BWD);
	kernel(b, TH_BWD, K_GEMM_LOGITS, F_MM_BWD);
	for (size_t l = 0; l < j->layers; l++) {
		backward_layer(b);
		if (l % 2 == 1 || l + 1 == j->layers)
			coll(b, TH_BWD, C_REDUCE_SCATTER, true, DP_NELEMS, 1500000, 3000000);
	}
	mark(b, I_BWD_END, TH_MAIN);
	if (j->dp > 1)
		mark(b, I_WAIT_DP, TH_MAIN);
	for (int i = 0; i < 4; i++)
		kernel(b, TH_MAIN, K_ADAM, 0);
	coll(b, TH_MAIN, C_ALLGATHER, true, DP_NELEMS, 2000000, 3500000);
	if (j->dp > 1)
		mark(b, I_WAIT_DP, TH_MAIN);
	kernel(b, TH_MAIN, K_FILL, 0);
	mark(b, I_STEP_END, TH_MAIN);
}

/* What one instruction adds to a rank's tables; gen-job.c's exec_*() add exactly this. */
static void count_insn(const struct gen_job *j, const struct insn *in, struct gen_job_counts *c)
{
	bool tp = !(in->flags & F_DP);

	switch ((enum insn_kind)in->kind) {
	case I_STEP_BEGIN: /* annotation, op, call, copy [, record, wait, sync] */
		c->events += 4 + 3 * j->copy_stream;
		c->syncs += j->copy_stream;
		c->copies++;
		break;
	case I_KERNEL: /* [parent,] op, call, kernel */
		c->events += 3 + ((in->flags & F_MM_BWD) || j->parent[in->what] != ORR_STR_NONE);
		break;
	case I_COLL: /* op, record, wait, sync, call, kernel [, record, wait, sync] */
		c->events += 6 + 3 * tp;
		c->syncs += 1 + tp;
		c->colls++;
		break;
	case I_BWD_BEGIN:
		c->events++;
		break;
	case I_BWD_END:
		break;
	case I_WAIT_DP:
		c->events += 3;
		c->syncs++;
		break;
	case I_STEP_END: /* call, sync */
		c->events += 2;
		c->syncs++;
		break;
	}
}

static void build(struct gen_job *j, size_t layers, size_t steps)
{
	struct builder b = { .j = j, .rng = gen_job_mix(j->seed ^ 0x70726f67ull) };

	for (int k = 0; k < N_KCLASSES; k++)
		b.kernel_ns[k] = gen_job_uniform(&b.rng, kclasses[k].min_ns, kclasses[k].max_ns);
	j->layers = layers;
	j->nprog = 0;
	for (size_t s = 0; s < steps; s++)
		step(&b, (int64_t)s + 1);
	j->count = (struct gen_job_counts){ 0 };
	for (size_t i = 0; i < j->nprog; i++)
		count_insn(j, &j->prog[i], &j->count);
}

/* The layer count that gives about events_per_rank, from the sizes of 1 and 3 layers. */
static int size_program(struct gen_job *j, const struct gen_job_options *o)
{
	size_t per_step = o->events_per_rank / o->steps, one, per_layer;

	build(j, 1, 1);
	one = j->count.events;
	build(j, 3, 1);
	per_layer = (j->count.events - one) / 2;
	if (per_step < one)
		return -EINVAL;
	build(j, 1 + (per_step - one + per_layer / 2) / per_layer, o->steps);
	return 0;
}

static size_t default_tp(size_t ranks)
{
	size_t tp = 8;

	while (ranks % tp)
		tp /= 2;
	return tp;
}

int gen_job_init(struct gen_job *j, const struct gen_job_options *o)
{
	size_t tp = o->tp ? o->tp : default_tp(o->ranks);
	int r;

	if (!o->ranks || o->ranks > INT32_MAX / 2 || !o->steps || o->steps > 1000000 ||
	    o->events_per_rank > UINT32_MAX / 2 || o->ranks % tp)
		return -EINVAL;
	*j = (struct gen_job){ .seed = o->seed,
			       .ranks = o->ranks,
			       .tp = tp,
			       .dp = o->ranks / tp,
			       .copy_stream = !o->no_copy_stream };
	j->t = orr__trace_new();
	intern_names(j);
	r = size_program(j, o);
	if (r < 0)
		gen_job_release(j);
	return r;
}

void gen_job_release(struct gen_job *j)
{
	free(j->prog);
	free(j->tp_pg);
	free(j->dp_pg);
	orr_trace_free(j->t);
	*j = (struct gen_job){ 0 };
}
