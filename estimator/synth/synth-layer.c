/* SPDX-License-Identifier: MIT */
/*
 * A transformer's passes as the instructions a Megatron-LM stage's launch thread issues
 * (docs/estimator.md, "A step from a model description").
 *
 * A transformer layer's forward pass on a micro-batch of T = b x s / cp tokens, with
 * t-way tensor parallelism (Megatron's ParallelTransformerLayer, its GEMMs as
 * estimator/reshape.c shapes them):
 *
 *   norm, [SP: all-gather], QKV, attention (flash: one kernel; else the scores' batched
 *   GEMM, scale-mask-softmax, dropout, the context's batched GEMM), projection, TP
 *   all-reduce [SP: reduce-scatter], bias-dropout-add; norm, [all-gather], FC1,
 *   activation, FC2, all-reduce [reduce-scatter], bias-dropout-add.
 *
 * Its backward pass runs the same in reverse, each GEMM's data and weight gradients,
 * the TP all-reduces where the forward pass had its identity (the inputs of QKV and
 * FC1; with SP: the all-gathers' reduce-scatters, and the all-gathers again for the
 * weight gradients).  Full recompute runs the layer's forward pass again before its
 * backward pass; selective recompute the attention core.  The first stage's first chunk
 * has the embedding, the last stage's last chunk the final norm, the logits and the
 * vocabulary-parallel cross-entropy (synth-program.c strings the passes together).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

/*
 * Megatron's FusedScaleMaskSoftmax runs one fused kernel per pass when its kernel takes
 * the shape (is_kernel_available(): fp16 or bf16 scores, 16 < sk <= 4096, sq, sk and
 * b x heads multiples of 4, and with the causal mask b x heads a multiple of the
 * kernel's batches per block: 4 past 128 keys, 8 up to them); else PyTorch's ops
 * (forward_torch_softmax), each a kernel over the scores: with query-key layer scaling
 * (on for fp16 and fp32 training, where it keeps fp16 from overflowing; off with bf16)
 * a cast to fp32 of fp16 scores (it turns attention_softmax_in_fp32 on) and the scale,
 * then the mask's masked_fill and the softmax, and the cast back; autograd mirrors each
 * in the backward pass.
 */
static bool softmax_fused(const struct sy_pass *p)
{
	int64_t sq = (int64_t)p->sq, sk = (int64_t)p->sk;
	int64_t batches = (int64_t)p->j->c->micro_batch * (int64_t)p->al;
	int64_t per_block = sk <= 128 ? 8 : 4;

	return p->j->c->precision != ORR_DTYPE_FP32 && sk > 16 && sk <= 4096 && sq % 4 == 0 &&
	       sk % 4 == 0 && batches % 4 == 0 && batches % per_block == 0;
}

static bool qk_layer_scaling(const struct sy_pass *p)
{
	return p->j->c->precision == ORR_DTYPE_FP16 || p->j->c->precision == ORR_DTYPE_FP32;
}

/* The softmax's element size on the fallback: fp32 with query-key layer scaling. */
static double softmax_bytes(const struct sy_pass *p)
{
	return qk_layer_scaling(p) ? 4 : p->e;
}

static void softmax_fwd(struct sy_pass *p, double probs)
{
	double e = p->e, f = softmax_bytes(p);

	if (softmax_fused(p)) {
		orr__sy_kern(p, "orrery_synth::scaled_masked_softmax_forward", ORR_KERN_SOFTMAX,
			     2 * e * probs, 0);
		return;
	}
	if (f != e)
		orr__sy_kern(p, "orrery_synth::softmax_cast_to_fp32", ORR_KERN_ELEMENTWISE,
			     (e + f) * probs, 0);
	if (qk_layer_scaling(p))
		orr__sy_kern(p, "orrery_synth::softmax_scale", ORR_KERN_ELEMENTWISE, 2 * f * probs,
			     0);
	orr__sy_kern(p, "orrery_synth::softmax_mask_fill", ORR_KERN_ELEMENTWISE, 2 * f * probs, 0);
	orr__sy_kern(p, "orrery_synth::softmax_forward", ORR_KERN_SOFTMAX, 2 * f * probs, 0);
	if (f != e)
		orr__sy_kern(p, "orrery_synth::softmax_cast_back", ORR_KERN_ELEMENTWISE,
			     (e + f) * probs, 0);
}

static void softmax_bwd(struct sy_pass *p, double probs)
{
	double e = p->e, f = softmax_bytes(p);

	if (softmax_fused(p)) {
		orr__sy_kern(p, "orrery_synth::scaled_masked_softmax_backward", ORR_KERN_SOFTMAX,
			     3 * e * probs, 0);
		return;
	}
	if (f != e)
		orr__sy_kern(p, "orrery_synth::softmax_cast_back_backward", ORR_KERN_ELEMENTWISE,
			     (e + f) * probs, 0);
	orr__sy_kern(p, "orrery_synth::softmax_backward", ORR_KERN_SOFTMAX, 3 * f * probs, 0);
	orr__sy_kern(p, "orrery_synth::softmax_mask_fill_backward", ORR_KERN_ELEMENTWISE,
		     2 * f * probs, 0);
	if (qk_layer_scaling(p))
		orr__sy_kern(p, "orrery_synth::softmax_scale_backward", ORR_KERN_ELEMENTWISE,
			     2 * f * probs, 0);
	if (f != e)
		orr__sy_kern(p, "orrery_synth::softmax_cast_to_fp32_backward", ORR_KERN_ELEMENTWISE,
			     (e + f) * probs, 0);
}

static void attention_fwd(struct sy_pass *p)
{
	double b = (double)p->j->c->micro_batch, e = p->e;
	double probs = b * p->al * p->sq * p->sk;

	if (p->j->c->flash_attention) {
		orr__sy_cp_ring(p, 1);
		orr__sy_kern(p, "orrery_synth::flash_attention_forward", ORR_KERN_ATTENTION,
			     e * b * p->sq * (2 * p->al + 2 * p->gl * p->sk / p->sq) * p->d,
			     4 * b * p->al * p->sq * p->sk * p->d * 0.5);
		orr__sy_cp_join(p);
		return;
	}
	orr__sy_gemm(p, "orrery_synth::gemm<attention_scores,forward>", b * p->al, p->sq, p->sk,
		     p->d);
	softmax_fwd(p, probs);
	orr__sy_kern(p, "orrery_synth::attention_dropout_forward", ORR_KERN_ELEMENTWISE,
		     (2 * e + 1) * probs, 0);
	orr__sy_gemm(p, "orrery_synth::gemm<attention_context,forward>", b * p->al, p->sq, p->d,
		     p->sk);
}

static void attention_bwd(struct sy_pass *p)
{
	double b = (double)p->j->c->micro_batch, e = p->e;
	double probs = b * p->al * p->sq * p->sk;

	if (p->j->c->recompute == ORR_RECOMPUTE_SELECTIVE)
		attention_fwd(p);
	if (p->j->c->flash_attention) {
		orr__sy_cp_ring(p, 2);
		orr__sy_kern(p, "orrery_synth::flash_attention_backward", ORR_KERN_ATTENTION,
			     2 * e * b * p->sq * (2 * p->al + 2 * p->gl * p->sk / p->sq) * p->d,
			     2.5 * 4 * b * p->al * p->sq * p->sk * p->d * 0.5);
		orr__sy_cp_join(p);
		return;
	}
	orr__sy_gemm(p, "orrery_synth::gemm<attention_context,dgrad>", b * p->al, p->sq, p->sk,
		     p->d);
	orr__sy_gemm(p, "orrery_synth::gemm<attention_context,wgrad>", b * p->al, p->sk, p->d,
		     p->sq);
	orr__sy_kern(p, "orrery_synth::attention_dropout_backward", ORR_KERN_ELEMENTWISE,
		     (2 * e + 1) * probs, 0);
	softmax_bwd(p, probs);
	orr__sy_gemm(p, "orrery_synth::gemm<attention_scores,dgrad>", b * p->al, p->sq, p->d,
		     p->sk);
	orr__sy_gemm(p, "orrery_synth::gemm<attention_scores,wgrad>", b * p->al, p->sk, p->d,
		     p->sq);
}

/*
 * The norm's kernels: LayerNorm's or RMSNorm's, which read and write the same tensors
 * (RMSNorm has one reduction fewer and no bias, work a memory-bound kernel hides), so
 * only the name differs.
 */
static const char *norm_name(const struct sy_pass *p, bool forward)
{
	if (p->j->c->rms_norm)
		return forward ? "orrery_synth::rms_norm_forward"
			       : "orrery_synth::rms_norm_backward";
	return forward ? "orrery_synth::layer_norm_forward" : "orrery_synth::layer_norm_backward";
}

/*
 * Rotary position embeddings (Megatron's apply_rotary_pos_emb, called on the queries and
 * on the keys): a kernel each that reads the tensor and the s x d fp32 frequencies and
 * writes the tensor rotated; the backward pass the same on the gradients.
 */
static void rope(struct sy_pass *p, bool forward)
{
	double freqs = p->sq * p->d * 4;

	if (!p->j->c->rope)
		return;
	orr__sy_kern(p,
		     forward ? "orrery_synth::rotary_query_forward"
			     : "orrery_synth::rotary_query_backward",
		     ORR_KERN_ELEMENTWISE, 2 * p->T * p->al * p->d * p->e + freqs, 0);
	orr__sy_kern(p,
		     forward ? "orrery_synth::rotary_key_forward"
			     : "orrery_synth::rotary_key_backward",
		     ORR_KERN_ELEMENTWISE, 2 * p->T * p->gl * p->d * p->e + freqs, 0);
}

/* A layer's forward pass, its kernels and collectives only. */
static void layer_fwd(struct sy_pass *p)
{
	double nh = p->Tn * p->h * p->e;

	orr__sy_kern(p, norm_name(p, true), ORR_KERN_NORM, 2 * nh, 0);
	orr__sy_sp_gather(p);
	orr__sy_gemm(p, "orrery_synth::gemm<qkv,forward>", 1, p->T, orr__sy_qkv_n(p), p->h);
	rope(p, true);
	attention_fwd(p);
	orr__sy_gemm(p, "orrery_synth::gemm<proj,forward>", 1, p->T, p->h, p->al * p->d);
	orr__sy_tp_reduce(p);
	orr__sy_kern(p, "orrery_synth::bias_dropout_add_forward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	orr__sy_kern(p, norm_name(p, true), ORR_KERN_NORM, 2 * nh, 0);
	orr__sy_sp_gather(p);
	orr__sy_gemm(p, "orrery_synth::gemm<fc1,forward>", 1, p->T, orr__sy_fc1_n(p), p->h);
	orr__sy_kern(p, "orrery_synth::activation_forward", ORR_KERN_ELEMENTWISE,
		     (orr__sy_fc1_n(p) + p->fl) * p->T * p->e, 0);
	orr__sy_gemm(p, "orrery_synth::gemm<fc2,forward>", 1, p->T, p->h, p->fl);
	orr__sy_tp_reduce(p);
	orr__sy_kern(p, "orrery_synth::bias_dropout_add_forward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
}

static void layer_fwd_synced(struct sy_pass *p)
{
	orr__sy_layer_sync(p);
	layer_fwd(p);
	orr__sy_layer_sync(p);
}

void orr__sy_layer_fwd(struct sy_pass *p)
{
	orr__sy_again(p, SY_AGAIN_LAYER_FWD, layer_fwd_synced);
}

/* A column-parallel GEMM's backward pass: its input's gradient is reduced over TP. */
static void column_bwd(struct sy_pass *p, const char *dgrad, const char *wgrad, double n)
{
	orr__sy_sp_gather(p); /* the input again, for the weight gradient */
	orr__sy_gemm(p, dgrad, 1, p->T, p->h, n);
	orr__sy_gemm(p, wgrad, 1, p->h, n, p->T);
	orr__sy_tp_reduce(p);
}

static void layer_bwd(struct sy_pass *p)
{
	double nh = p->Tn * p->h * p->e;

	orr__sy_layer_sync(p);
	if (p->j->c->recompute == ORR_RECOMPUTE_FULL)
		layer_fwd(p);
	orr__sy_kern(p, "orrery_synth::bias_dropout_add_backward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	orr__sy_sp_gather(p);
	orr__sy_gemm(p, "orrery_synth::gemm<fc2,dgrad>", 1, p->T, p->fl, p->h);
	orr__sy_gemm(p, "orrery_synth::gemm<fc2,wgrad>", 1, p->fl, p->h, p->T);
	/* reads FC1's output and the gradient, writes the gradient of FC1's output */
	orr__sy_kern(p, "orrery_synth::activation_backward", ORR_KERN_ELEMENTWISE,
		     (2 * orr__sy_fc1_n(p) + p->fl) * p->T * p->e, 0);
	column_bwd(p, "orrery_synth::gemm<fc1,dgrad>", "orrery_synth::gemm<fc1,wgrad>",
		   orr__sy_fc1_n(p));
	orr__sy_kern(p, norm_name(p, false), ORR_KERN_NORM, 3 * nh, 0);
	orr__sy_kern(p, "orrery_synth::bias_dropout_add_backward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	orr__sy_sp_gather(p);
	orr__sy_gemm(p, "orrery_synth::gemm<proj,dgrad>", 1, p->T, p->al * p->d, p->h);
	orr__sy_gemm(p, "orrery_synth::gemm<proj,wgrad>", 1, p->al * p->d, p->h, p->T);
	attention_bwd(p);
	rope(p, false);
	column_bwd(p, "orrery_synth::gemm<qkv,dgrad>", "orrery_synth::gemm<qkv,wgrad>",
		   orr__sy_qkv_n(p));
	orr__sy_kern(p, norm_name(p, false), ORR_KERN_NORM, 3 * nh, 0);
	orr__sy_layer_sync(p);
}

void orr__sy_layer_bwd(struct sy_pass *p)
{
	orr__sy_again(p, SY_AGAIN_LAYER_BWD, layer_bwd);
}

/*
 * Megatron's get_batch, on a stage that loads data (the first, for the tokens, and the
 * last, for the labels): tensor_parallel.broadcast_data copies the batch's sizes to the
 * GPU, broadcasts them over the TP group and reads them back to the host
 * (sizes_cuda.cpu(): a copy the launch thread waits for, behind all the work queued on
 * the GPU), then broadcasts the tokens (int64, s + 1 per sequence);
 * get_ltor_masks_and_position_ids builds the causal mask (ones, tril, < 0.5), the loss
 * mask and the position ids; labels and tokens are sliced into contiguous copies.
 */
void orr__sy_get_batch(struct sy_pass *p)
{
	const struct orr_train_config *c = p->j->c;
	double b = (double)c->micro_batch, s = (double)c->seq, tokens = b * (s + 1) * 8;

	orr__sy_timer_sync(p); /* batch-generator */

	orr__sy_kern(p, "orrery_synth::batch_sizes_to_device", ORR_KERN_COPY, 64, 0);
	orr__sy_tp_coll(p, ORR_COLL_BROADCAST, "ncclDevKernel_Broadcast", 64);
	orr__sy_device_sync(p); /* sizes_cuda.cpu() */
	orr__sy_kern(p, "orrery_synth::batch_to_device", ORR_KERN_COPY, tokens, 0);
	orr__sy_tp_coll(p, ORR_COLL_BROADCAST, "ncclDevKernel_Broadcast", tokens);
	orr__sy_kern(p, "orrery_synth::labels_contiguous", ORR_KERN_COPY, 2 * tokens, 0);
	orr__sy_kern(p, "orrery_synth::tokens_contiguous", ORR_KERN_COPY, 2 * tokens, 0);
	orr__sy_kern(p, "orrery_synth::mask_ones", ORR_KERN_ELEMENTWISE, 4 * s * s, 0);
	orr__sy_kern(p, "orrery_synth::mask_tril", ORR_KERN_ELEMENTWISE, 8 * s * s, 0);
	orr__sy_kern(p, "orrery_synth::loss_mask_ones", ORR_KERN_ELEMENTWISE, 4 * b * s, 0);
	orr__sy_kern(p, "orrery_synth::position_ids", ORR_KERN_ELEMENTWISE, 8 * s, 0);
	orr__sy_kern(p, "orrery_synth::mask_lt", ORR_KERN_ELEMENTWISE, 5 * s * s, 0);
	orr__sy_timer_sync(p);
}

void orr__sy_embedding_fwd(struct sy_pass *p)
{
	double th = p->T * p->h * p->e;

	orr__sy_kern(p, "orrery_synth::embedding_lookup", ORR_KERN_ELEMENTWISE, 2 * th, 0);
	orr__sy_tp_reduce(p); /* vocabulary-parallel: each rank looked its rows up */
	orr__sy_kern(p, "orrery_synth::embedding_dropout", ORR_KERN_ELEMENTWISE,
		     (2 + 1 / p->e) * th, 0);
}

/*
 * PyTorch's dense embedding backward: a zero-filled gradient of the whole (vocabulary-
 * parallel) table, the token rows summed into it; then Megatron's DDP hook adds it to the
 * parameter's main_grad after every backward pass (main_grad.add_(grad)).
 */
void orr__sy_embedding_bwd(struct sy_pass *p)
{
	double th = p->T * p->h * p->e, table = p->vl * p->h;

	orr__sy_sp_gather(p);
	orr__sy_kern(p, "orrery_synth::embedding_grad_zero", ORR_KERN_COPY, table * p->e, 0);
	orr__sy_kern(p, "orrery_synth::embedding_backward", ORR_KERN_REDUCTION, 2 * th, 0);
	orr__sy_kern(p, "orrery_synth::embedding_grad_accumulate", ORR_KERN_ELEMENTWISE,
		     table * (p->e + 2 * orr__sy_grad_bytes(p)), 0);
}

/*
 * The loss of a micro-batch from the per-token losses (pretrain_gpt.py's loss_func and
 * forward_step of the schedule, Megatron-DeepSpeed and Megatron-LM alike): the losses
 * (fp32, one a token) times the loss mask, their sum over the mask's sum; the loss
 * averaged over the data-parallel group for the log
 * (average_losses_across_data_parallel_group: clone, cat, an all-reduce of 4 bytes that
 * the compute stream waits for, the division by the group's size); the loss divided by
 * the micro-batches of the step.  A few kernels of a few bytes and one collective, each a
 * launch, on the last stage at every micro-batch.
 */
static void loss_fwd(struct sy_pass *p)
{
	int dp = orr__sy_dp_of(p);

	orr__sy_kern(p, "orrery_synth::loss_times_mask", ORR_KERN_ELEMENTWISE, 12 * p->T, 0);
	orr__sy_kern(p, "orrery_synth::loss_sum", ORR_KERN_REDUCTION, 4 * p->T, 0);
	orr__sy_kern(p, "orrery_synth::loss_mask_sum", ORR_KERN_REDUCTION, 4 * p->T, 0);
	orr__sy_kern(p, "orrery_synth::loss_divide", ORR_KERN_ELEMENTWISE, 12, 0);
	orr__sy_kern(p, "orrery_synth::loss_clone", ORR_KERN_COPY, 8, 0);
	orr__sy_kern(p, "orrery_synth::loss_cat", ORR_KERN_COPY, 8, 0);
	if (dp > 1)
		orr__sy_blocking_coll(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				      4, dp, orr__sy_dp_span(p));
	orr__sy_kern(p, "orrery_synth::loss_average", ORR_KERN_ELEMENTWISE, 8, 0);
	orr__sy_kern(p, "orrery_synth::loss_over_micro_batches", ORR_KERN_ELEMENTWISE, 8, 0);
}

/*
 * Its backward pass: the optimizer's loss scaling (scale_loss(), the scale times the
 * loss, before torch.autograd.backward), autograd's seed gradient, then each of the
 * forward pass's operations in reverse (the scale, the division by the micro-batches and
 * by the mask's sum, the mask's product, the sum's gradient being a view).
 */
static void loss_bwd(struct sy_pass *p)
{
	orr__sy_kern(p, "orrery_synth::loss_scale", ORR_KERN_ELEMENTWISE, 8, 0);
	orr__sy_kern(p, "orrery_synth::loss_grad_seed", ORR_KERN_COPY, 4, 0);
	orr__sy_kern(p, "orrery_synth::loss_scale_backward", ORR_KERN_ELEMENTWISE, 8, 0);
	orr__sy_kern(p, "orrery_synth::loss_over_micro_batches_backward", ORR_KERN_ELEMENTWISE, 8,
		     0);
	orr__sy_kern(p, "orrery_synth::loss_divide_backward", ORR_KERN_ELEMENTWISE, 12, 0);
	orr__sy_kern(p, "orrery_synth::loss_times_mask_backward", ORR_KERN_ELEMENTWISE, 8 * p->T,
		     0);
}

/*
 * Megatron's vocabulary-parallel cross-entropy (_VocabParallelCrossEntropy) on the
 * logits cast to fp32: the row maximum (all-reduced over TP), its subtraction, exp, the
 * row sum (the target logit and the sum all-reduced), and the division that leaves the
 * softmax saved for the backward pass, each a kernel over the T x V/t logits.
 */
void orr__sy_head_fwd(struct sy_pass *p)
{
	double logits = p->T * p->vl;

	orr__sy_kern(p, norm_name(p, true), ORR_KERN_NORM, 2 * p->Tn * p->h * p->e, 0);
	orr__sy_sp_gather(p);
	orr__sy_gemm(p, "orrery_synth::gemm<logits,forward>", 1, p->T, p->vl, p->h);
	if (p->e != 4)
		orr__sy_kern(p, "orrery_synth::logits_to_fp32", ORR_KERN_ELEMENTWISE,
			     (p->e + 4) * logits, 0);
	orr__sy_kern(p, "orrery_synth::cross_entropy_max", ORR_KERN_REDUCTION, 4 * logits, 0);
	orr__sy_tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Max", 4 * p->T);
	orr__sy_kern(p, "orrery_synth::cross_entropy_subtract_max", ORR_KERN_ELEMENTWISE,
		     8 * logits, 0);
	orr__sy_kern(p, "orrery_synth::cross_entropy_exp", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
	orr__sy_kern(p, "orrery_synth::cross_entropy_sum", ORR_KERN_REDUCTION, 4 * logits, 0);
	orr__sy_tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", 4 * p->T);
	orr__sy_tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", 4 * p->T);
	orr__sy_kern(p, "orrery_synth::cross_entropy_softmax", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
	loss_fwd(p);
}

/* The saved softmax less one at the target, times the loss's gradient; the cast back. */
void orr__sy_head_bwd(struct sy_pass *p)
{
	double logits = p->T * p->vl;

	loss_bwd(p);
	orr__sy_kern(p, "orrery_synth::cross_entropy_target", ORR_KERN_ELEMENTWISE, 12 * p->T, 0);
	orr__sy_kern(p, "orrery_synth::cross_entropy_backward", ORR_KERN_ELEMENTWISE, 8 * logits,
		     0);
	if (p->e != 4)
		orr__sy_kern(p, "orrery_synth::logits_to_fp32_backward", ORR_KERN_ELEMENTWISE,
			     (4 + p->e) * logits, 0);
	orr__sy_gemm(p, "orrery_synth::gemm<logits,dgrad>", 1, p->T, p->h, p->vl);
	orr__sy_gemm(p, "orrery_synth::gemm<logits,wgrad>", 1, p->vl, p->h, p->T);
	orr__sy_tp_reduce(p);
	orr__sy_kern(p, norm_name(p, false), ORR_KERN_NORM, 3 * p->Tn * p->h * p->e, 0);
}
