/* SPDX-License-Identifier: MIT */
/*
 * A Megatron-LM training step, written as the instructions each pipeline stage's launch
 * thread issues (docs/estimator.md, "A step from a model description").
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
 * vocabulary-parallel cross-entropy.  Each stage runs its passes in the order of
 * orr_pp_schedule(), receives its input before a pass and sends its output after it.
 * After the last backward pass: the gradients' reduction over DP (all-reduce, or
 * reduce-scatter with the distributed optimizer), in buckets as Megatron-Core's DDP
 * makes them and not overlapped (its default), the embedding gradients' all-reduce
 * between the first and last stages (tied embeddings), the gradient norm (a reduction,
 * an all-reduce over the model-parallel group, and the .item() that waits for it), Adam,
 * and with the distributed optimizer the parameters' all-gather; the step ends with the
 * launch thread waiting for its GPU.  The gradient buffer is zeroed when it starts.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

#define MAX_INSNS (1u << 24)
/* Megatron-Core DDP's bucket: max(40M, 1M x dp) parameters (param_and_grad_buffer.py) */
#define BUCKET_PARAMS 40e6

struct pass {
	struct sy_job *j;
	struct sy_rank *r;
	double T, Tn;        /* tokens of a micro-batch; of norms and dropouts (T / t with SP) */
	double e;            /* bytes per element */
	double h, d, al, gl; /* hidden, head dim, heads and KV groups per TP rank */
	double fl;           /* FFN per TP rank */
	double sq, sk;       /* query and key lengths per CP rank: s / cp, s */
	double vl;           /* vocabulary per TP rank */
	int tp;
	bool sp;
	bool p2p_pending; /* transfers launched that the thread has not synchronized yet */
};

static struct sy_insn *push(struct pass *p, enum sy_op op, enum sy_stream stream)
{
	struct sy_rank *r = p->r;
	struct sy_insn *i;

	if (r->n == MAX_INSNS) {
		p->j->why = "more than 2^24 instructions per stage";
		p->j->err = -E2BIG;
		return NULL;
	}
	if (r->n == r->cap)
		r->v = orr_xgrow(r->v, sizeof(*r->v), &r->cap, r->n + 1);
	i = &r->v[r->n++];
	memset(i, 0, sizeof(*i));
	i->op = (uint8_t)op;
	i->stream = (uint8_t)stream;
	i->peer = -1;
	i->partner = UINT32_MAX;
	i->coll = -1;
	i->rec = UINT32_MAX;
	return i;
}

static void wait_for(struct pass *p, enum sy_stream stream, enum sy_stream src)
{
	struct sy_insn *i = push(p, SY_WAIT, stream);

	if (i)
		i->src = (uint8_t)src;
}

static void add_kernel(struct pass *p, const char *name, double ns, bool gemm)
{
	struct sy_insn *i = push(p, SY_KERNEL, SY_COMPUTE);

	if (!i)
		return;
	i->name = name;
	i->ns = ns;
	i->gemm = gemm;
	p->j->ret->kernels++;
	if (p->r->stage == 0)
		*(gemm ? &p->j->ret->gemm_ns : &p->j->ret->kern_ns) += ns;
}

static void gemm(struct pass *p, const char *name, double batch, double m, double n, double k)
{
	add_kernel(p, name,
		   orr__sy_gemm_ns(p->j, (int64_t)batch, (int64_t)m, (int64_t)n, (int64_t)k), true);
}

static void kern(struct pass *p, const char *name, enum orr_kern_class cls, double bytes,
		 double flops)
{
	add_kernel(p, name, orr__sy_kern_ns(p->j, cls, bytes, flops), false);
}

static struct sy_insn *coll_on(struct pass *p, enum sy_stream stream, enum orr_coll_kind kind,
			       const char *name, double bytes, int group, struct sy_span sp)
{
	struct sy_insn *i = push(p, SY_COLL, stream);
	double *sum = stream == SY_TP                      ? &p->j->ret->tp_ns
		      : stream == SY_DP || stream == SY_CP ? &p->j->ret->dp_ns
							   : &p->j->ret->pp_ns;

	if (!i)
		return NULL;
	i->coll = (int8_t)kind;
	i->name = name;
	i->bytes = bytes;
	i->group = group;
	i->ns = orr__sy_coll_ns(p->j, kind, bytes, group, sp);
	p->j->ret->collectives++;
	if (p->r->stage == 0)
		*sum += i->ns;
	return i;
}

/* An event recorded on stream now, for wait_record(); its instruction's index. */
static uint32_t record(struct pass *p, enum sy_stream stream)
{
	return push(p, SY_RECORD, stream) ? (uint32_t)(p->r->n - 1) : UINT32_MAX;
}

/* Stream waits for what was on the recorded stream when rec was recorded. */
static void wait_record(struct pass *p, enum sy_stream stream, uint32_t rec)
{
	struct sy_insn *i;

	if (rec == UINT32_MAX)
		return;
	i = push(p, SY_WAIT, stream);
	if (i) {
		i->src = p->r->v[rec].stream;
		i->rec = rec;
	}
}

/* A collective the compute stream waits for, on its group's stream (ProcessGroupNCCL). */
static void blocking_coll(struct pass *p, enum sy_stream stream, enum orr_coll_kind kind,
			  const char *name, double bytes, int group, struct sy_span sp)
{
	wait_for(p, stream, SY_COMPUTE);
	coll_on(p, stream, kind, name, bytes, group, sp);
	wait_for(p, SY_COMPUTE, stream);
}

/* TP groups are t consecutive ranks. */
static struct sy_span tp_span(const struct pass *p)
{
	return orr__sy_span(p->j, p->r->rank, 1, p->tp);
}

static void tp_coll(struct pass *p, enum orr_coll_kind kind, const char *name, double bytes)
{
	if (p->tp > 1)
		blocking_coll(p, SY_TP, kind, name, bytes, p->tp, tp_span(p));
}

/*
 * The reduction of a row-parallel GEMM's output (forward), or of a column-parallel
 * GEMM's input gradient (backward).
 */
static void tp_reduce(struct pass *p)
{
	if (p->sp)
		tp_coll(p, ORR_COLL_REDUCE_SCATTER, "ncclDevKernel_ReduceScatter_Sum",
			p->T * p->h * p->e);
	else
		tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", p->T * p->h * p->e);
}

static void sp_gather(struct pass *p)
{
	if (p->sp)
		tp_coll(p, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", p->T * p->h * p->e);
}

static int cp_of(const struct pass *p)
{
	return (int)p->j->c->cp;
}

/* The ring's exchanges of keys and values (their gradients, backward) beside attention. */
static void cp_ring(struct pass *p, double times)
{
	int cp = cp_of(p);

	if (cp < 2)
		return;
	wait_for(p, SY_CP, SY_COMPUTE);
	coll_on(p, SY_CP, ORR_COLL_SEND_RECV, "ncclDevKernel_SendRecv",
		times * (cp - 1) * 2 * p->j->c->micro_batch * p->sq * p->gl * p->d * p->e, 2,
		orr__sy_span(p->j, p->r->rank, (int64_t)p->tp * (cp - 1), 2));
}

static void cp_join(struct pass *p)
{
	if (cp_of(p) > 1)
		wait_for(p, SY_COMPUTE, SY_CP);
}

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
static bool softmax_fused(const struct pass *p)
{
	int64_t sq = (int64_t)p->sq, sk = (int64_t)p->sk;
	int64_t batches = (int64_t)p->j->c->micro_batch * (int64_t)p->al;
	int64_t per_block = sk <= 128 ? 8 : 4;

	return p->j->c->precision != ORR_DTYPE_FP32 && sk > 16 && sk <= 4096 && sq % 4 == 0 &&
	       sk % 4 == 0 && batches % 4 == 0 && batches % per_block == 0;
}

static bool qk_layer_scaling(const struct pass *p)
{
	return p->j->c->precision == ORR_DTYPE_FP16 || p->j->c->precision == ORR_DTYPE_FP32;
}

/* The softmax's element size on the fallback: fp32 with query-key layer scaling. */
static double softmax_bytes(const struct pass *p)
{
	return qk_layer_scaling(p) ? 4 : p->e;
}

static void softmax_fwd(struct pass *p, double probs)
{
	double e = p->e, f = softmax_bytes(p);

	if (softmax_fused(p)) {
		kern(p, "orrery_synth::scaled_masked_softmax_forward", ORR_KERN_SOFTMAX,
		     2 * e * probs, 0);
		return;
	}
	if (f != e)
		kern(p, "orrery_synth::softmax_cast_to_fp32", ORR_KERN_ELEMENTWISE, (e + f) * probs,
		     0);
	if (qk_layer_scaling(p))
		kern(p, "orrery_synth::softmax_scale", ORR_KERN_ELEMENTWISE, 2 * f * probs, 0);
	kern(p, "orrery_synth::softmax_mask_fill", ORR_KERN_ELEMENTWISE, 2 * f * probs, 0);
	kern(p, "orrery_synth::softmax_forward", ORR_KERN_SOFTMAX, 2 * f * probs, 0);
	if (f != e)
		kern(p, "orrery_synth::softmax_cast_back", ORR_KERN_ELEMENTWISE, (e + f) * probs,
		     0);
}

static void softmax_bwd(struct pass *p, double probs)
{
	double e = p->e, f = softmax_bytes(p);

	if (softmax_fused(p)) {
		kern(p, "orrery_synth::scaled_masked_softmax_backward", ORR_KERN_SOFTMAX,
		     3 * e * probs, 0);
		return;
	}
	if (f != e)
		kern(p, "orrery_synth::softmax_cast_back_backward", ORR_KERN_ELEMENTWISE,
		     (e + f) * probs, 0);
	kern(p, "orrery_synth::softmax_backward", ORR_KERN_SOFTMAX, 3 * f * probs, 0);
	kern(p, "orrery_synth::softmax_mask_fill_backward", ORR_KERN_ELEMENTWISE, 2 * f * probs, 0);
	if (qk_layer_scaling(p))
		kern(p, "orrery_synth::softmax_scale_backward", ORR_KERN_ELEMENTWISE, 2 * f * probs,
		     0);
	if (f != e)
		kern(p, "orrery_synth::softmax_cast_to_fp32_backward", ORR_KERN_ELEMENTWISE,
		     (e + f) * probs, 0);
}

static void attention_fwd(struct pass *p)
{
	double b = (double)p->j->c->micro_batch, e = p->e;
	double probs = b * p->al * p->sq * p->sk;

	if (p->j->c->flash_attention) {
		cp_ring(p, 1);
		kern(p, "orrery_synth::flash_attention_forward", ORR_KERN_ATTENTION,
		     e * b * p->sq * (2 * p->al + 2 * p->gl * p->sk / p->sq) * p->d,
		     4 * b * p->al * p->sq * p->sk * p->d * 0.5);
		cp_join(p);
		return;
	}
	gemm(p, "orrery_synth::gemm<attention_scores,forward>", b * p->al, p->sq, p->sk, p->d);
	softmax_fwd(p, probs);
	kern(p, "orrery_synth::attention_dropout_forward", ORR_KERN_ELEMENTWISE,
	     (2 * e + 1) * probs, 0);
	gemm(p, "orrery_synth::gemm<attention_context,forward>", b * p->al, p->sq, p->d, p->sk);
}

static void attention_bwd(struct pass *p)
{
	double b = (double)p->j->c->micro_batch, e = p->e;
	double probs = b * p->al * p->sq * p->sk;

	if (p->j->c->recompute == ORR_RECOMPUTE_SELECTIVE)
		attention_fwd(p);
	if (p->j->c->flash_attention) {
		cp_ring(p, 2);
		kern(p, "orrery_synth::flash_attention_backward", ORR_KERN_ATTENTION,
		     2 * e * b * p->sq * (2 * p->al + 2 * p->gl * p->sk / p->sq) * p->d,
		     2.5 * 4 * b * p->al * p->sq * p->sk * p->d * 0.5);
		cp_join(p);
		return;
	}
	gemm(p, "orrery_synth::gemm<attention_context,dgrad>", b * p->al, p->sq, p->sk, p->d);
	gemm(p, "orrery_synth::gemm<attention_context,wgrad>", b * p->al, p->sk, p->d, p->sq);
	kern(p, "orrery_synth::attention_dropout_backward", ORR_KERN_ELEMENTWISE,
	     (2 * e + 1) * probs, 0);
	softmax_bwd(p, probs);
	gemm(p, "orrery_synth::gemm<attention_scores,dgrad>", b * p->al, p->sq, p->d, p->sk);
	gemm(p, "orrery_synth::gemm<attention_scores,wgrad>", b * p->al, p->sk, p->d, p->sq);
}

static double qkv_n(const struct pass *p)
{
	return (p->h + 2 * p->gl * p->tp * p->d) / p->tp;
}

static double fc1_n(const struct pass *p)
{
	return p->j->c->gated_mlp ? 2 * p->fl : p->fl;
}

static void layer_fwd(struct pass *p)
{
	double nh = p->Tn * p->h * p->e;

	kern(p, "orrery_synth::layer_norm_forward", ORR_KERN_NORM, 2 * nh, 0);
	sp_gather(p);
	gemm(p, "orrery_synth::gemm<qkv,forward>", 1, p->T, qkv_n(p), p->h);
	attention_fwd(p);
	gemm(p, "orrery_synth::gemm<proj,forward>", 1, p->T, p->h, p->al * p->d);
	tp_reduce(p);
	kern(p, "orrery_synth::bias_dropout_add_forward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	kern(p, "orrery_synth::layer_norm_forward", ORR_KERN_NORM, 2 * nh, 0);
	sp_gather(p);
	gemm(p, "orrery_synth::gemm<fc1,forward>", 1, p->T, fc1_n(p), p->h);
	kern(p, "orrery_synth::activation_forward", ORR_KERN_ELEMENTWISE,
	     (fc1_n(p) + p->fl) * p->T * p->e, 0);
	gemm(p, "orrery_synth::gemm<fc2,forward>", 1, p->T, p->h, p->fl);
	tp_reduce(p);
	kern(p, "orrery_synth::bias_dropout_add_forward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
}

/* A column-parallel GEMM's backward pass: its input's gradient is reduced over TP. */
static void column_bwd(struct pass *p, const char *dgrad, const char *wgrad, double n)
{
	sp_gather(p); /* the input again, for the weight gradient */
	gemm(p, dgrad, 1, p->T, p->h, n);
	gemm(p, wgrad, 1, p->h, n, p->T);
	tp_reduce(p);
}

static void layer_bwd(struct pass *p)
{
	double nh = p->Tn * p->h * p->e;

	if (p->j->c->recompute == ORR_RECOMPUTE_FULL)
		layer_fwd(p);
	kern(p, "orrery_synth::bias_dropout_add_backward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	sp_gather(p);
	gemm(p, "orrery_synth::gemm<fc2,dgrad>", 1, p->T, p->fl, p->h);
	gemm(p, "orrery_synth::gemm<fc2,wgrad>", 1, p->fl, p->h, p->T);
	kern(p, "orrery_synth::activation_backward", ORR_KERN_ELEMENTWISE,
	     (fc1_n(p) + 2 * p->fl) * p->T * p->e, 0);
	column_bwd(p, "orrery_synth::gemm<fc1,dgrad>", "orrery_synth::gemm<fc1,wgrad>", fc1_n(p));
	kern(p, "orrery_synth::layer_norm_backward", ORR_KERN_NORM, 3 * nh, 0);
	kern(p, "orrery_synth::bias_dropout_add_backward", ORR_KERN_ELEMENTWISE, 3 * nh, 0);
	sp_gather(p);
	gemm(p, "orrery_synth::gemm<proj,dgrad>", 1, p->T, p->al * p->d, p->h);
	gemm(p, "orrery_synth::gemm<proj,wgrad>", 1, p->al * p->d, p->h, p->T);
	attention_bwd(p);
	column_bwd(p, "orrery_synth::gemm<qkv,dgrad>", "orrery_synth::gemm<qkv,wgrad>", qkv_n(p));
	kern(p, "orrery_synth::layer_norm_backward", ORR_KERN_NORM, 3 * nh, 0);
}

/* Bytes per gradient element as Megatron reduces them: fp32 with bf16 (it accumulates there). */
static double grad_bytes(const struct pass *p)
{
	return p->j->dtype == ORR_DTYPE_FP16 ? 2 : 4;
}

static void embedding_fwd(struct pass *p)
{
	double th = p->T * p->h * p->e;

	kern(p, "orrery_synth::embedding_lookup", ORR_KERN_ELEMENTWISE, 2 * th, 0);
	tp_reduce(p); /* vocabulary-parallel: each rank looked its rows up */
	kern(p, "orrery_synth::embedding_dropout", ORR_KERN_ELEMENTWISE, (2 + 1 / p->e) * th, 0);
}

/*
 * PyTorch's dense embedding backward: a zero-filled gradient of the whole (vocabulary-
 * parallel) table, the token rows summed into it; then Megatron's DDP hook adds it to the
 * parameter's main_grad after every backward pass (main_grad.add_(grad)).
 */
static void embedding_bwd(struct pass *p)
{
	double th = p->T * p->h * p->e, table = p->vl * p->h;

	sp_gather(p);
	kern(p, "orrery_synth::embedding_grad_zero", ORR_KERN_COPY, table * p->e, 0);
	kern(p, "orrery_synth::embedding_backward", ORR_KERN_REDUCTION, 2 * th, 0);
	kern(p, "orrery_synth::embedding_grad_accumulate", ORR_KERN_ELEMENTWISE,
	     table * (p->e + 2 * grad_bytes(p)), 0);
}

/*
 * Megatron's vocabulary-parallel cross-entropy (_VocabParallelCrossEntropy) on the
 * logits cast to fp32: the row maximum (all-reduced over TP), its subtraction, exp, the
 * row sum (the target logit and the sum all-reduced), and the division that leaves the
 * softmax saved for the backward pass, each a kernel over the T x V/t logits.
 */
static void head_fwd(struct pass *p)
{
	double logits = p->T * p->vl;

	kern(p, "orrery_synth::layer_norm_forward", ORR_KERN_NORM, 2 * p->Tn * p->h * p->e, 0);
	sp_gather(p);
	gemm(p, "orrery_synth::gemm<logits,forward>", 1, p->T, p->vl, p->h);
	if (p->e != 4)
		kern(p, "orrery_synth::logits_to_fp32", ORR_KERN_ELEMENTWISE, (p->e + 4) * logits,
		     0);
	kern(p, "orrery_synth::cross_entropy_max", ORR_KERN_REDUCTION, 4 * logits, 0);
	tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Max", 4 * p->T);
	kern(p, "orrery_synth::cross_entropy_subtract_max", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
	kern(p, "orrery_synth::cross_entropy_exp", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
	kern(p, "orrery_synth::cross_entropy_sum", ORR_KERN_REDUCTION, 4 * logits, 0);
	tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", 4 * p->T);
	tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", 4 * p->T);
	kern(p, "orrery_synth::cross_entropy_softmax", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
}

/* The saved softmax less one at the target, times the loss's gradient; the cast back. */
static void head_bwd(struct pass *p)
{
	double logits = p->T * p->vl;

	kern(p, "orrery_synth::cross_entropy_target", ORR_KERN_ELEMENTWISE, 12 * p->T, 0);
	kern(p, "orrery_synth::cross_entropy_backward", ORR_KERN_ELEMENTWISE, 8 * logits, 0);
	if (p->e != 4)
		kern(p, "orrery_synth::logits_to_fp32_backward", ORR_KERN_ELEMENTWISE,
		     (4 + p->e) * logits, 0);
	gemm(p, "orrery_synth::gemm<logits,dgrad>", 1, p->T, p->h, p->vl);
	gemm(p, "orrery_synth::gemm<logits,wgrad>", 1, p->vl, p->h, p->T);
	tp_reduce(p);
	kern(p, "orrery_synth::layer_norm_backward", ORR_KERN_NORM, 3 * p->Tn * p->h * p->e, 0);
}

static void pass_init(struct pass *p, struct sy_job *j, struct sy_rank *r)
{
	const struct orr_train_config *c = j->c;
	double heads = (double)c->heads, kv = c->kv_groups > 0 ? (double)c->kv_groups : heads;

	memset(p, 0, sizeof(*p));
	p->j = j;
	p->r = r;
	p->tp = (int)c->tp;
	p->sp = c->sequence_parallel && c->tp > 1;
	p->e = j->elem_bytes;
	p->h = (double)c->hidden;
	p->d = p->h / heads;
	p->al = heads / (double)c->tp;
	p->gl = kv / (double)c->tp;
	p->fl = (double)c->ffn / (double)c->tp;
	p->sk = (double)c->seq;
	p->sq = p->sk / (double)c->cp;
	p->T = (double)c->micro_batch * p->sq;
	p->Tn = p->sp ? p->T / (double)c->tp : p->T;
	p->vl = (double)c->vocab / (double)c->tp;
}

/* ---- the pipeline ---- */

static int next_stage(const struct sy_job *j, int r)
{
	return r == (int)j->c->pp - 1 ? 0 : r + 1;
}

static int prev_stage(const struct sy_job *j, int r)
{
	return r == 0 ? (int)j->c->pp - 1 : r - 1;
}

static void transfer(struct pass *p, enum sy_stream stream, int peer)
{
	struct sy_job *j = p->j;
	int64_t other = (int64_t)peer * j->c->tp * j->c->dp * j->c->cp;
	struct sy_insn *i = coll_on(
		p, stream, ORR_COLL_SEND_RECV, "ncclDevKernel_SendRecv", p->Tn * p->h * p->e, 2,
		orr__sy_span(j, other < p->r->rank ? other : p->r->rank,
			     other < p->r->rank ? p->r->rank - other : other - p->r->rank, 2));

	if (!i)
		return;
	i->peer = peer;
	p->p2p_pending = true;
	j->ret->transfer_ns = i->ns;
	j->ret->collectives--;
	j->ret->transfers++;
}

/* ---- ZeRO-3 / FSDP ---- */

static int dp_of(const struct pass *p)
{
	return (int)(p->j->c->dp * p->j->c->cp);
}

static bool fully_sharded(const struct pass *p)
{
	return p->j->c->fully_sharded && dp_of(p) > 1;
}

/* Data-parallel groups are dp x cp ranks tp apart. */
static struct sy_span dp_span(const struct pass *p)
{
	return orr__sy_span(p->j, p->r->rank, p->j->c->tp, dp_of(p));
}

/* A layer's parameters on one TP rank: QKV, projection, FC1, FC2, two norms. */
static double layer_params(const struct pass *p)
{
	return p->h * qkv_n(p) + p->al * p->d * p->h + p->h * fc1_n(p) + p->fl * p->h + 2 * p->h;
}

/* The parameters outside the layers that a chunk uses: embedding; final norm, output. */
static double root_params(const struct pass *p, bool first, bool last)
{
	const struct orr_train_config *c = p->j->c;
	double n = first ? p->vl * p->h : 0;

	if (last)
		n += p->h + (c->untied_embeddings || c->pp > 1 ? p->vl * p->h : 0);
	return n;
}

/*
 * The all-gather of a unit's weights (params on this TP rank) over the data-parallel
 * ranks, on their stream once the compute launched before it has ended: FSDP keeps one
 * unit's all-gather ahead of the compute, the buffer of the unit before being free by
 * then (DeepSpeed's ZeRO-3 prefetches alike).  Its record, for the compute to wait on:
 * the reduce-scatters queued behind it are not waited for.
 */
static uint32_t fs_gather(struct pass *p, double params)
{
	if (!fully_sharded(p) || !(params > 0))
		return UINT32_MAX;
	wait_for(p, SY_DP, SY_COMPUTE);
	coll_on(p, SY_DP, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", params * p->e, dp_of(p),
		dp_span(p));
	return record(p, SY_DP);
}

/* The reduce-scatter of a unit's gradients once its backward pass has ended. */
static void fs_scatter(struct pass *p, double params)
{
	if (!fully_sharded(p) || !(params > 0))
		return;
	wait_for(p, SY_DP, SY_COMPUTE);
	coll_on(p, SY_DP, ORR_COLL_REDUCE_SCATTER, "ncclDevKernel_ReduceScatter_Sum",
		params * grad_bytes(p), dp_of(p), dp_span(p));
}

static void chunk_fwd(struct pass *p, bool first, bool last)
{
	int64_t layers = p->j->c->layers / (p->j->c->pp * p->j->c->vpp);
	uint32_t next;

	wait_record(p, SY_COMPUTE, fs_gather(p, root_params(p, first, last)));
	if (first)
		embedding_fwd(p);
	next = layers > 0 ? fs_gather(p, layer_params(p)) : UINT32_MAX;
	for (int64_t l = 0; l < layers; l++) {
		wait_record(p, SY_COMPUTE, next);
		next = l + 1 < layers ? fs_gather(p, layer_params(p)) : UINT32_MAX;
		layer_fwd(p);
	}
	if (last)
		head_fwd(p);
}

static void chunk_bwd(struct pass *p, bool first, bool last)
{
	int64_t layers = p->j->c->layers / (p->j->c->pp * p->j->c->vpp);
	double root = root_params(p, first, last);
	uint32_t next;

	wait_record(p, SY_COMPUTE, fs_gather(p, root));
	if (last)
		head_bwd(p);
	next = layers > 0 ? fs_gather(p, layer_params(p)) : UINT32_MAX;
	for (int64_t l = 0; l < layers; l++) {
		wait_record(p, SY_COMPUTE, next);
		next = l + 1 < layers ? fs_gather(p, layer_params(p)) : UINT32_MAX;
		layer_bwd(p);
		fs_scatter(p, layer_params(p));
	}
	if (first)
		embedding_bwd(p);
	fs_scatter(p, root);
}

/* The first stage's compute and blocking communication so far. */
static double busy(const struct pass *p)
{
	const struct orr_synth *s = p->j->ret;

	return s->gemm_ns + s->kern_ns + s->tp_ns + s->dp_ns;
}

/*
 * Megatron's point-to-point calls batch their sends and receives (batch_isend_irecv) and
 * then synchronize the device (ModelParallelConfig.batch_p2p_sync, default on): a send
 * and the receive that follows it before any compute are one call, so the thread waits
 * for both before it launches the next pass.  That is 1F1B's default only: with an
 * interleaved schedule Megatron turns overlap_p2p_comm on (--no-overlap-p2p-communication
 * turns it off) and batch_p2p_comm = not overlap_p2p_comm, so its transfers are posted
 * as separate isend/irecv, waited for on the GPU by the pass that needs them, and the
 * launch thread never blocks on them.
 */
static void p2p_sync(struct pass *p)
{
	if (p->p2p_pending && p->j->c->vpp == 1)
		push(p, SY_SYNC, SY_COMPUTE);
	p->p2p_pending = false;
}

static void slot(struct pass *p, const struct orr_pp_slot *s)
{
	int r = p->r->stage, pp = (int)p->j->c->pp, v = (int)p->j->c->vpp;
	bool first = r == 0 && s->chunk == 0, last = r == pp - 1 && (int)s->chunk == v - 1;
	double before = busy(p);

	if (s->pass == ORR_PP_PASS_FORWARD) {
		if (!first) {
			transfer(p, SY_RECV_PREV, prev_stage(p->j, r));
			wait_for(p, SY_COMPUTE, SY_RECV_PREV);
		}
		p2p_sync(p);
		chunk_fwd(p, first, last);
		p->j->ret->forward_ns += busy(p) - before;
		if (!last) {
			wait_for(p, SY_SEND_NEXT, SY_COMPUTE);
			transfer(p, SY_SEND_NEXT, next_stage(p->j, r));
		}
		return;
	}
	if (!last) {
		transfer(p, SY_RECV_NEXT, next_stage(p->j, r));
		wait_for(p, SY_COMPUTE, SY_RECV_NEXT);
	}
	p2p_sync(p);
	chunk_bwd(p, first, last);
	p->j->ret->backward_ns += busy(p) - before;
	if (!first) {
		wait_for(p, SY_SEND_PREV, SY_COMPUTE);
		transfer(p, SY_SEND_PREV, prev_stage(p->j, r));
	}
}

/* ---- gradients and the optimizer ---- */

/* The parameters a stage's GPU holds (one TP shard), as orr_train_params() counts them. */
static double stage_params(const struct pass *p)
{
	const struct orr_train_config *c = p->j->c;
	double n = layer_params(p) * (double)(c->layers / c->pp);
	int stage = p->r->stage;

	if (stage == 0)
		n += p->vl * p->h;
	if (stage == (int)c->pp - 1)
		n += p->h + (c->untied_embeddings || c->pp > 1 ? p->vl * p->h : 0);
	return n;
}

static void dp_buckets(struct pass *p, double params, bool gather)
{
	const struct orr_train_config *c = p->j->c;
	int dp = dp_of(p);
	double bucket = fmax(BUCKET_PARAMS, 1e6 * dp), left = params;
	struct sy_span link = dp_span(p);

	if (dp < 2)
		return;
	for (; left > 0; left -= bucket) {
		double n = fmin(left, bucket);

		if (gather)
			coll_on(p, SY_DP, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", n * p->e,
				dp, link);
		else if (c->distributed_optimizer)
			coll_on(p, SY_DP, ORR_COLL_REDUCE_SCATTER,
				"ncclDevKernel_ReduceScatter_Sum", n * grad_bytes(p), dp, link);
		else
			coll_on(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				n * grad_bytes(p), dp, link);
	}
}

static void device_sync(struct pass *p)
{
	push(p, SY_SYNC, SY_COMPUTE);
}

/* Adam over the optimizer's share: fp32 master weights, moments and gradient, half copy. */
static void optimizer(struct pass *p, double params)
{
	const struct orr_train_config *c = p->j->c;
	bool sharded = c->distributed_optimizer || c->fully_sharded;
	double mine = sharded ? params / (double)(c->dp * c->cp) : params;
	double per = p->j->dtype == ORR_DTYPE_FP32 ? 28 : 30;
	int mp = (int)(c->tp * c->pp);

	kern(p, "orrery_synth::grad_norm", ORR_KERN_REDUCTION, 4 * mine, 0);
	if (mp > 1 || (sharded && c->dp * c->cp > 1))
		blocking_coll(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum", 4,
			      sharded ? (int)(mp * c->dp * c->cp) : mp,
			      orr__sy_span(p->j, 0, 1, (int64_t)mp * c->dp * c->cp));
	device_sync(p); /* the norm's .item() */
	for (double left = mine; left > 0; left -= BUCKET_PARAMS)
		kern(p, "orrery_synth::multi_tensor_adam", ORR_KERN_OPTIMIZER,
		     per * fmin(left, BUCKET_PARAMS), 0);
	if (c->distributed_optimizer && !c->fully_sharded && c->dp * c->cp > 1) {
		wait_for(p, SY_DP, SY_COMPUTE);
		dp_buckets(p, params, true);
		wait_for(p, SY_COMPUTE, SY_DP);
	}
}

static void gradients(struct pass *p, double params)
{
	const struct orr_train_config *c = p->j->c;
	int stage = p->r->stage;

	wait_for(p, SY_DP, SY_COMPUTE);
	if (c->pp > 1 && !c->untied_embeddings && (stage == 0 || stage == (int)c->pp - 1))
		coll_on(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
			p->vl * p->h * grad_bytes(p), 2,
			orr__sy_span(p->j, 0, (c->pp - 1) * c->tp * c->dp * c->cp, 2));
	if (!c->fully_sharded) /* else reduce-scattered layer by layer */
		dp_buckets(p, params, false);
	wait_for(p, SY_COMPUTE, SY_DP);
}

static int stage_program(struct sy_job *j, struct sy_rank *r)
{
	const struct orr_train_config *c = j->c;
	struct orr_pp_slot *slots = NULL;
	size_t n = 0;
	struct pass p;
	double params;
	int err;

	pass_init(&p, j, r);
	params = stage_params(&p);
	err = orr_pp_schedule((int)c->pp, r->stage, (int)c->micro_batches, (int)c->vpp, &slots, &n);
	if (err < 0)
		return err;
	if (!j->forward_only)
		kern(&p, "orrery_synth::zero_grad_buffer", ORR_KERN_COPY,
		     params * grad_bytes(&p) / (c->fully_sharded ? (double)dp_of(&p) : 1), 0);
	for (size_t i = 0; i < n && !j->err; i++)
		if (!j->forward_only || slots[i].pass == ORR_PP_PASS_FORWARD)
			slot(&p, &slots[i]);
	p2p_sync(&p);
	free(slots);
	if (!j->forward_only) {
		gradients(&p, params);
		optimizer(&p, params);
	}
	device_sync(&p);
	return j->err;
}

int orr__sy_program(struct sy_job *j, const char **ret_why)
{
	const struct orr_train_config *c = j->c;

	if (c->cp > 1 && !c->flash_attention) {
		*ret_why = "context parallelism without flash attention (Megatron requires it)";
		return -ENOTSUP;
	}
	for (size_t i = 0; i < j->nranks; i++) {
		struct sy_rank *r = &j->ranks[i];
		int err;

		r->stage = (int)i;
		r->rank = (int64_t)i * c->tp * c->dp * c->cp;
		err = stage_program(j, r);
		if (err < 0) {
			*ret_why = j->why ? j->why : "the pipeline schedule";
			return err;
		}
	}
	return 0;
}
