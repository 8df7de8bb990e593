/* SPDX-License-Identifier: MIT */
/*
 * FLOPs of a training step (docs/estimator.md, "FLOPs, MFU and HFU"): the model's, what
 * MFU is measured against, and the hardware's, the model's plus the forward work that
 * recomputation runs again (HFU, Chowdhery et al., "PaLM", 2022, appendix B).
 *
 * The model's are counted as Megatron-LM counts them for the throughput it logs
 * (num_floating_point_operations() in megatron/training/training.py, its
 * transformer_flops() for a dense GPT of unpacked sequences, NVIDIA/Megatron-LM
 * d98e8a6): each GEMM of the model three times (forward, data and weight gradients),
 * 2 FLOPs a multiply-add; per token and layer the QKV and output projections,
 * 2·h·(q + 2·k) + 2·q·h with q = h and k = h·g/a; the MLP, 2·h·f·2 (·3 gated: FC1 is
 * 2f wide); the logits, 2·h·V over the padded vocabulary; and the attention core, QKᵀ
 * and the scores times V, 2·2·s·q per token, halved for the causal mask ("only half of
 * the mask is non-zero", since Megatron-LM 8873b55, 2025-03).  PaLM's 6N + 12·L·H·Q·T
 * counts the same GEMMs (6N) but the attention over the full T×T square, twice this
 * term.  Recomputation is never counted: a step with full recompute does the same
 * model FLOPs, so MFU = model FLOPs / (step × GPUs × peak) <= 1 whenever no kernel runs
 * faster than the peak and the step executes at least these FLOPs, which it does: the
 * causal flash-attention kernel computes half the scores, the unfused path all of
 * them, and its backward pass 2.5 times its forward.
 */
#include "internal.h"
#include "banned.h"

/* Forward FLOPs per token of one layer's GEMMs, attention core aside. */
static double layer_linear_flops(const struct orr_train_config *c)
{
	double h = (double)c->hidden, a = (double)c->heads;
	double g = c->kv_groups ? (double)c->kv_groups : a;
	double q = h, k = h * g / a, f = (double)c->ffn;

	return 2 * h * (q + 2 * k) + 2 * q * h + 2 * h * f * (c->gated_mlp ? 3 : 2);
}

/* Forward FLOPs per token of one layer's attention core, causal: QKᵀ and scores·V, halved. */
static double layer_core_flops(const struct orr_train_config *c)
{
	return 2 * 2 * (double)c->seq * (double)c->hidden / 2;
}

static double tokens(const struct orr_train_config *c)
{
	return (double)(c->micro_batch * c->micro_batches * c->dp) * (double)c->seq;
}

double orr_train_model_flops(const struct orr_train_config *c, bool forward_only)
{
	double L = (double)c->layers, h = (double)c->hidden, V = (double)c->vocab;
	double pass = tokens(c) * (L * (layer_linear_flops(c) + layer_core_flops(c)) + 2 * h * V);

	return forward_only ? pass : 3 * pass;
}

/*
 * Recompute runs forward work again before the backward pass: full, each layer's
 * forward pass (not the embedding's, the logits' or the loss's, which Megatron does not
 * checkpoint); selective, the attention core.  A forward-only step recomputes nothing.
 */
double orr_train_hardware_flops(const struct orr_train_config *c, bool forward_only)
{
	double again = 0, L = (double)c->layers;

	if (!forward_only && c->recompute == ORR_RECOMPUTE_FULL)
		again = L * (layer_linear_flops(c) + layer_core_flops(c));
	else if (!forward_only && c->recompute == ORR_RECOMPUTE_SELECTIVE)
		again = L * layer_core_flops(c);
	return orr_train_model_flops(c, forward_only) + tokens(c) * again;
}
