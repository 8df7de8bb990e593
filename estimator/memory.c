/* SPDX-License-Identifier: MIT */
/*
 * Memory per GPU of a Megatron-style training job: what the first pipeline stage, the
 * most loaded, holds at its peak (notes/estimator.md, B.10 and C.5).
 *
 * Sources.  The parameter count and the most loaded shard follow Megatron-LM's
 * megatron/training/theoretical_memory_usage.py (compute_weight_and_optimizer_memory);
 * the bytes per parameter are the table of Megatron-Core's distributed optimizer guide
 * (docs/user-guide/features/dist_optimizer.md); the activations are Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models" (MLSys 2023, arXiv
 * 2205.05198), Table 2, in the per-layer form and with the pipeline terms of the same
 * file's compute_activation_memory.
 *
 * What the formulas leave out, and the reserve is for: allocator fragmentation and
 * cached blocks, temporary buffers (GEMM workspaces, the all-gathered input of a
 * sequence-parallel layer, the gradients of the loss), the CUDA context and NCCL's
 * buffers; also biases and learned position embeddings (Megatron's count has none).
 * A gated MLP's FC1 output is 2f wide, but the activation formula, Megatron's too,
 * keeps the 4f/h term of a plain MLP: its activations are underestimated.  The
 * activation bytes are those of 16-bit activations (Korthikanti's), whatever the
 * precision of the weights.  Adam is the optimizer.  With an even split only the
 * first stage is estimated: with pipelining the last holds the output layer and the
 * loss instead of p micro-batches in flight, and with few layers per stage and a large
 * vocabulary it can hold more.  With an uneven split (Megatron-Core's
 * --decoder-first/last-pipeline-num-layers) the first, a middle and the last stage are
 * estimated by the same formulas with their own layers, micro-batches in flight (p - k
 * at stage k under 1F1B), embedding and output layer, and the most loaded is reported.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "internal.h"
#include "banned.h"

#define GIB 1073741824.0

const char *orr_recompute_name(enum orr_recompute r)
{
	static const char *const names[] = { "none", "selective", "full" };

	return r >= 0 && r < ORR_RECOMPUTE_COUNT ? names[r] : NULL;
}

/*
 * Parameters of the transformer layers and the final norm, 2·L·h²·((1 + g/a) + f/h
 * (3f/2h gated) + n/h + n/(2·L·h)): per layer QKV and the output projection, 2h²(1 + g/a)
 * with heads of h/a (Megatron's (1 + g/a)·(a·d/h) with d = h/a); the MLP, 2hf (3hf
 * gated); two norms of n·h each, n 2 for LayerNorm (scale and bias), 1 for RMSNorm
 * (a scale: Megatron's norm_size); and the final norm, n·h.
 */
static double layer_params(const struct orr_train_config *c)
{
	double l = c->layers, h = c->hidden, a = c->heads, n = c->rms_norm ? 1 : 2;
	double g = c->kv_groups ? c->kv_groups : a;
	double mlp = (double)c->ffn / h * (c->gated_mlp ? 1.5 : 1);

	return 2 * l * h * h * ((1 + g / a) + mlp + n / h + n / (2 * l * h));
}

static double embedding_params(const struct orr_train_config *c)
{
	return (double)c->hidden * c->vocab;
}

int64_t orr_train_pad_vocab(int64_t v, int64_t tp)
{
	int64_t m = 128 * tp;

	return (v + m - 1) / m * m;
}

double orr_train_params(const struct orr_train_config *c)
{
	if (!orr__train_config_valid(c))
		return NAN;
	return layer_params(c) + embedding_params(c) * (c->untied_embeddings ? 2 : 1);
}

/*
 * Stage k's: its layers and the embedding (the first), split over tp; the last stage's
 * output layer (its own weights, or with pipelining the copy of tied ones) is counted
 * for the first only without pipelining, as Megatron's count does: with an even split
 * the first stage is the one estimated.
 */
static double shard_params(const struct orr_train_config *c, int64_t k)
{
	double t = c->tp, e = embedding_params(c);
	double layers =
		orr_train_uneven(c)
			? layer_params(c) * (double)orr_train_stage_layers(c, k) / (double)c->layers
			: layer_params(c) / c->pp;
	double n = (layers + (k == 0 ? e : 0)) / t;

	if (k == c->pp - 1 && (c->untied_embeddings || (c->pp > 1 && k > 0)))
		n += e / t;
	return n;
}

/* Weights, gradients and Adam's state per parameter, nothing sharded. */
static double state_bytes_unsharded(const struct orr_train_config *c)
{
	switch (c->precision) {
	case ORR_DTYPE_BF16:
	case ORR_DTYPE_FP8:
		return 18;
	case ORR_DTYPE_FP16:
		return 20;
	case ORR_DTYPE_FP32:
		return 16;
	default:
		return 0; /* orr__train_config_valid() refuses it */
	}
}

/*
 * Weights, gradients and Adam's state (fp32 master weights, two moments) per
 * parameter.  ZeRO-3 and FSDP shard all of it over the data-parallel ranks.  The
 * distributed optimizer shards what is fp32 over them, which in Megatron-Core include
 * the context-parallel ones (its DDP shards over intra_dp_cp_group;
 * theoretical_memory_usage.py, older than CP, divides by dp).
 */
static double state_bytes(const struct orr_train_config *c)
{
	double d = (double)c->dp * c->cp;

	if (c->fully_sharded)
		return state_bytes_unsharded(c) / d;
	if (!c->distributed_optimizer)
		return state_bytes_unsharded(c);
	switch (c->precision) {
	case ORR_DTYPE_BF16: /* bf16 weights, fp32 gradients */
	case ORR_DTYPE_FP8:  /* Transformer Engine keeps bf16 weights; FP8 copies are transient */
		return 6 + 12 / d;
	case ORR_DTYPE_FP16: /* fp16 weights and gradients, an fp32 copy of the gradients */
		return 4 + 16 / d;
	case ORR_DTYPE_FP32:
		return 8 + 8 / d;
	default:
		return 0; /* orr__train_config_valid() refuses it */
	}
}

/*
 * Bytes per s'·b·h of one layer's activations (s' = s/cp), Korthikanti's Table 2 in
 * Megatron's form: 10 replicated unless sequence parallelism splits them (the inputs
 * of the two norms, of attention and of the MLP; two dropout masks), 8 + 4f/h split by
 * tp (Q, K, V and the projection's input; FC1's output and its activation's), and the
 * attention scores, softmax output and dropout, 5·a·s'/h split by tp, unless recomputed
 * or never stored (flash attention).  Full recompute keeps only the layer's input.
 */
static double layer_factor(const struct orr_train_config *c, double seq)
{
	double t = c->tp, h = c->hidden;
	double x;

	if (c->recompute == ORR_RECOMPUTE_FULL)
		return c->sequence_parallel ? 2 / t : 2;
	x = (c->sequence_parallel ? 10 / t : 10) + (8 + 4 * (double)c->ffn / h) / t;
	if (c->recompute == ORR_RECOMPUTE_NONE && !c->flash_attention)
		x += 5 * (double)c->heads * seq / (h * t);
	return x;
}

/*
 * Stage k's activations at its peak under 1F1B: p - k micro-batches of its layers in
 * flight (for the first stage of an even split, L layers' worth), the first stage's
 * p micro-batches' embedding input (8 bytes a token) and dropout mask (s'·b·h); more
 * with interleaving, fewer when there are fewer micro-batches than that; the last
 * stage's output layer's and loss's inputs, counted without pipelining (with an even
 * split the first stage is the one estimated).
 */
static double activation_bytes(const struct orr_train_config *c, int64_t k)
{
	double t = c->tp, p = c->pp, b = c->micro_batch, h = c->hidden;
	double s = (double)c->seq / c->cp, n = (double)(c->pp - k);
	double a = s * b * h * layer_factor(c, s) *
		   (double)(orr_train_stage_layers(c, k) * (c->pp - k));

	if (k == 0)
		a += (8 * s * b * p + s * b * h * p) / t;
	if (c->vpp > 1)
		a *= 1 + (p - 1) / (p * c->vpp);
	else if (c->pp > 1 && c->micro_batches < c->pp - k)
		a *= c->micro_batches / n;
	if (k == c->pp - 1)
		a += 4 * s * b * h * (1 + c->vocab / h) / t;
	return a;
}

static void say_fits(struct orr_memory *m, const struct orr_gpu_spec *gpu)
{
	const char *id = gpu && gpu->id ? gpu->id : "GPU";

	if (m->capacity_bytes <= 0)
		snprintf(m->why, sizeof(m->why),
			 "%.2f GiB needed; the GPU's capacity is unknown, so it is taken to fit",
			 m->total_bytes / GIB);
	else
		snprintf(m->why, sizeof(m->why),
			 "%.2f GiB needed (model state %.2f, activations %.2f, reserve %.2f) "
			 "%s the %s's capacity of %.2f GiB",
			 m->total_bytes / GIB, m->model_bytes / GIB, m->activation_bytes / GIB,
			 m->reserve_bytes / GIB, m->fits ? "within" : "is above", id,
			 m->capacity_bytes / GIB);
}

/*
 * ZeRO-3 and FSDP: the layers' weights gathered whole at a time, the one running and
 * the next one prefetched, and one layer's whole gradient before its reduce-scatter.
 */
static double gathered_bytes(const struct orr_train_config *c)
{
	double layer = layer_params(c) / (double)c->layers / (double)c->tp;
	double e = c->precision == ORR_DTYPE_FP32 ? 4 : 2;
	double g = c->precision == ORR_DTYPE_FP16 ? 2 : 4;

	return c->fully_sharded ? layer * (2 * e + g) : 0;
}

/* Stage k's model state and activations into m, its reserve set. */
static void stage_memory(const struct orr_train_config *c, int64_t k, struct orr_memory *m)
{
	m->stage = k;
	m->params = shard_params(c, k);
	m->bytes_per_param = state_bytes(c);
	m->model_bytes = m->params * m->bytes_per_param + gathered_bytes(c);
	m->activation_bytes = activation_bytes(c, k);
	m->total_bytes = m->model_bytes + m->activation_bytes + m->reserve_bytes;
}

int orr_memory_estimate(const struct orr_train_config *c, const struct orr_gpu_spec *gpu,
			double reserve_bytes, struct orr_memory *ret)
{
	struct orr_memory m = { .reserve_bytes = reserve_bytes };

	if (!orr__train_config_valid(c) || !isfinite(reserve_bytes) || reserve_bytes < 0)
		return -EINVAL;
	stage_memory(c, 0, &m);
	/* an uneven split: the first, a middle and the last stage differ; the most loaded */
	for (int64_t k = 1; orr_train_uneven(c) && k < c->pp;
	     k = k == 1 && c->pp > 2 ? c->pp - 1 : c->pp) {
		struct orr_memory o = m;

		stage_memory(c, k, &o);
		if (o.total_bytes > m.total_bytes)
			m = o;
	}
	m.capacity_bytes = gpu && gpu->hbm_bytes > 0 ? gpu->hbm_bytes : 0;
	m.fits = m.capacity_bytes <= 0 || m.total_bytes <= m.capacity_bytes;
	say_fits(&m, gpu);
	*ret = m;
	return 0;
}
