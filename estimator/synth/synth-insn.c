/* SPDX-License-Identifier: MIT */
/*
 * The instructions a synthesized stage's launch thread issues (docs/estimator.md, "A
 * step from a model description"): kernels timed by the cost models, collectives on
 * their communicator's stream, waits between streams (now, or on an event recorded
 * before), device synchronizations; and what a pass over a micro-batch knows of the
 * configuration, per TP rank.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

void orr__sy_rank_init(struct sy_rank *r, int stage, int64_t rank)
{
	r->stage = stage;
	r->rank = rank;
	r->n = 0;
	for (int s = 0; s < SY_STREAMS; s++) {
		r->q[s].n = 0;
		r->last[s] = UINT32_MAX;
	}
	for (int k = 0; k < SY_AGAINS; k++)
		r->again[k].ok = false;
}

void orr__sy_rank_release(struct sy_rank *r)
{
	free(r->v);
	free(r->l);
	for (int s = 0; s < SY_STREAMS; s++)
		free(r->q[s].at);
}

struct sy_insn *orr__sy_push(struct sy_pass *p, enum sy_op op, enum sy_stream stream)
{
	struct sy_rank *r = p->r;
	struct sy_insn *i;
	uint32_t at = (uint32_t)r->n;

	if (r->n == SY_MAX_INSNS || p->j->insns >= p->j->max_insns) {
		p->j->why = r->n == SY_MAX_INSNS ? "more than 2^24 instructions per stage"
						 : p->j->too_many;
		p->j->err = -E2BIG;
		return NULL;
	}
	p->j->insns++;
	if (r->n == r->cap)
		r->v = orr_xgrow(r->v, sizeof(*r->v), &r->cap, r->n + 1);
	if (p->j->labelled) {
		if (r->n == r->lcap)
			r->l = orr_xgrow(r->l, sizeof(*r->l), &r->lcap, r->n + 1);
		r->l[r->n] = (struct sy_label){ .coll = -1 };
	}
	i = &r->v[r->n++];
	memset(i, 0, sizeof(*i));
	i->op = (uint8_t)op;
	i->stream = (uint8_t)stream;
	i->peer = -1;
	i->partner = UINT32_MAX;
	i->rec = UINT32_MAX;
	i->start_ns = i->end_ns = -1;
	if (op == SY_SYNC || op == SY_RECORD)
		return i;
	ORR_VEC_PUSH(r->q[stream].at, r->q[stream].n, r->q[stream].cap, at);
	if (op != SY_WAIT)
		r->last[stream] = at;
	return i;
}

struct sy_label *orr__sy_label(struct sy_pass *p, const struct sy_insn *i)
{
	return p->j->labelled ? &p->r->l[i - p->r->v] : &p->j->sink;
}

void orr__sy_timed(struct sy_job *j, struct sy_insn *i, double ns)
{
	i->ns = ns;
	if (!(ns >= 0) || !isfinite(ns))
		j->ns_bad = true;
	else
		j->ns_sum += ns;
}

void orr__sy_wait_for(struct sy_pass *p, enum sy_stream stream, enum sy_stream src)
{
	struct sy_insn *i = orr__sy_push(p, SY_WAIT, stream);

	if (!i)
		return;
	i->src = (uint8_t)src;
	i->partner = p->r->last[src]; /* the last task launched on src before it */
}

/* The first stage's kernel or collective i, added to its GPU time's sums. */
static void summed(struct sy_pass *p, const struct sy_insn *i)
{
	struct orr_synth *s = p->j->ret;

	if (p->r->stage != 0)
		return;
	if (i->op == SY_KERNEL)
		*(i->gemm ? &s->gemm_ns : &s->kern_ns) += i->ns;
	else if (i->stream == SY_TP)
		s->tp_ns += i->ns;
	else if (i->stream == SY_DP || i->stream == SY_CP)
		s->dp_ns += i->ns;
	else
		s->pp_ns += i->ns;
}

static void add_kernel(struct sy_pass *p, const char *name, double ns, bool gemm)
{
	struct sy_insn *i = orr__sy_push(p, SY_KERNEL, SY_COMPUTE);

	if (!i)
		return;
	orr__sy_label(p, i)->name = name;
	orr__sy_timed(p->j, i, ns);
	i->gemm = gemm;
	p->j->ret->kernels++;
	summed(p, i);
}

void orr__sy_gemm(struct sy_pass *p, const char *name, double batch, double m, double n, double k)
{
	add_kernel(p, name,
		   orr__sy_gemm_ns(p->j, (int64_t)batch, (int64_t)m, (int64_t)n, (int64_t)k), true);
}

void orr__sy_kern(struct sy_pass *p, const char *name, enum orr_kern_class cls, double bytes,
		  double flops)
{
	add_kernel(p, name, orr__sy_kern_ns(p->j, cls, bytes, flops), false);
}

struct sy_insn *orr__sy_coll_on(struct sy_pass *p, enum sy_stream stream, enum orr_coll_kind kind,
				const char *name, double bytes, int group, struct sy_span sp)
{
	struct sy_insn *i = orr__sy_push(p, SY_COLL, stream);
	struct sy_label *l;

	if (!i)
		return NULL;
	l = orr__sy_label(p, i);
	l->coll = (int8_t)kind;
	l->name = name;
	l->bytes = bytes;
	l->group = group;
	orr__sy_timed(p->j, i, orr__sy_coll_ns(p->j, kind, bytes, group, sp));
	p->j->ret->collectives++;
	summed(p, i);
	return i;
}

/* An event recorded on stream now, for orr__sy_wait_record(); its instruction's index. */
uint32_t orr__sy_record(struct sy_pass *p, enum sy_stream stream)
{
	struct sy_insn *i = orr__sy_push(p, SY_RECORD, stream);

	if (!i)
		return UINT32_MAX;
	i->partner = p->r->last[stream]; /* what a wait for it waits for */
	return (uint32_t)(p->r->n - 1);
}

/* Stream waits for what was on the recorded stream when rec was recorded. */
void orr__sy_wait_record(struct sy_pass *p, enum sy_stream stream, uint32_t rec)
{
	struct sy_insn *i;

	if (rec == UINT32_MAX)
		return;
	i = orr__sy_push(p, SY_WAIT, stream);
	if (i) {
		i->src = p->r->v[rec].stream;
		i->rec = rec;
		i->partner = p->r->v[rec].partner;
	}
}

/* A collective the compute stream waits for, on its group's stream (ProcessGroupNCCL). */
void orr__sy_blocking_coll(struct sy_pass *p, enum sy_stream stream, enum orr_coll_kind kind,
			   const char *name, double bytes, int group, struct sy_span sp)
{
	orr__sy_wait_for(p, stream, SY_COMPUTE);
	orr__sy_coll_on(p, stream, kind, name, bytes, group, sp);
	orr__sy_wait_for(p, SY_COMPUTE, stream);
}

/* TP groups are t consecutive ranks. */
static struct sy_span tp_span(const struct sy_pass *p)
{
	return orr__sy_span(p->j, p->r->rank, 1, p->tp);
}

void orr__sy_tp_coll(struct sy_pass *p, enum orr_coll_kind kind, const char *name, double bytes)
{
	if (p->tp > 1)
		orr__sy_blocking_coll(p, SY_TP, kind, name, bytes, p->tp, tp_span(p));
}

/*
 * The reduction of a row-parallel GEMM's output (forward), or of a column-parallel
 * GEMM's input gradient (backward).
 */
void orr__sy_tp_reduce(struct sy_pass *p)
{
	if (p->sp)
		orr__sy_tp_coll(p, ORR_COLL_REDUCE_SCATTER, "ncclDevKernel_ReduceScatter_Sum",
				p->T * p->h * p->e);
	else
		orr__sy_tp_coll(p, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				p->T * p->h * p->e);
}

void orr__sy_sp_gather(struct sy_pass *p)
{
	if (p->sp)
		orr__sy_tp_coll(p, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather",
				p->T * p->h * p->e);
}

static int cp_of(const struct sy_pass *p)
{
	return (int)p->j->c->cp;
}

/* The ring's exchanges of keys and values (their gradients, backward) beside attention. */
void orr__sy_cp_ring(struct sy_pass *p, double times)
{
	int cp = cp_of(p);

	if (cp < 2)
		return;
	orr__sy_wait_for(p, SY_CP, SY_COMPUTE);
	orr__sy_coll_on(p, SY_CP, ORR_COLL_SEND_RECV, "ncclDevKernel_SendRecv",
			times * (cp - 1) * 2 * p->j->c->micro_batch * p->sq * p->gl * p->d * p->e,
			2, orr__sy_span(p->j, p->r->rank, (int64_t)p->tp * (cp - 1), 2));
}

void orr__sy_cp_join(struct sy_pass *p)
{
	if (cp_of(p) > 1)
		orr__sy_wait_for(p, SY_COMPUTE, SY_CP);
}

double orr__sy_qkv_n(const struct sy_pass *p)
{
	return (p->h + 2 * p->gl * p->tp * p->d) / p->tp;
}

double orr__sy_fc1_n(const struct sy_pass *p)
{
	return p->j->c->gated_mlp ? 2 * p->fl : p->fl;
}

/* Bytes per gradient element as Megatron reduces them: fp32 with bf16 (it accumulates there). */
double orr__sy_grad_bytes(const struct sy_pass *p)
{
	return p->j->dtype == ORR_DTYPE_FP16 ? 2 : 4;
}

void orr__sy_pass_init(struct sy_pass *p, struct sy_job *j, struct sy_rank *r)
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

int orr__sy_dp_of(const struct sy_pass *p)
{
	return (int)(p->j->c->dp * p->j->c->cp);
}

/* Data-parallel groups are dp x cp ranks tp apart. */
struct sy_span orr__sy_dp_span(const struct sy_pass *p)
{
	return orr__sy_span(p->j, p->r->rank, p->j->c->tp, orr__sy_dp_of(p));
}

/* A layer's parameters on one TP rank: QKV, projection, FC1, FC2, two norms. */
double orr__sy_layer_params(const struct sy_pass *p)
{
	return p->h * orr__sy_qkv_n(p) + p->al * p->d * p->h + p->h * orr__sy_fc1_n(p) +
	       p->fl * p->h + 2 * p->h;
}

void orr__sy_device_sync(struct sy_pass *p)
{
	orr__sy_push(p, SY_SYNC, SY_COMPUTE);
}

/*
 * sync_timers: Megatron's timers that synchronize the device when they start and stop
 * (megatron/global_vars.py's _Timer in Megatron-DeepSpeed before its July 2023 rebase,
 * every timer; after it and in Megatron-LM since its timing levels, only the timers of
 * --timing-log-level and below, the passes' being level 2).
 */
void orr__sy_timer_sync(struct sy_pass *p)
{
	if (p->j->c->sync_timers)
		orr__sy_device_sync(p);
}

/*
 * sync_layers: DeepSpeed's CheckpointFunction (deepspeed/runtime/activation_checkpointing/
 * checkpointing.py) calls torch.cuda.synchronize() at the start and the end of its forward()
 * and of its backward() (the recompute and the layer's backward pass) when configured with
 * synchronize (Megatron-DeepSpeed's --synchronize-each-layer, or the DeepSpeed config's
 * synchronize_checkpoint_boundary); Megatron's own CheckpointFunction never synchronizes.
 * Only checkpointed layers run it: full recompute, one layer a checkpoint.
 */
void orr__sy_layer_sync(struct sy_pass *p)
{
	if (orr_train_syncs_layers(p->j->c))
		orr__sy_device_sync(p);
}

/* ---- passes written once, copied after ---- */

/* The job's source counts, each a size_t: after - before added to sum. */
_Static_assert(sizeof(struct orr_synth_sources) % sizeof(size_t) == 0,
	       "the sources are counts, each a size_t");

static void sources_add(struct orr_synth_sources *sum, const struct orr_synth_sources *after,
			const struct orr_synth_sources *before)
{
	size_t n = sizeof(*sum) / sizeof(size_t), s[sizeof(*sum) / sizeof(size_t)];
	size_t a[sizeof(*sum) / sizeof(size_t)], b[sizeof(*sum) / sizeof(size_t)];

	memcpy(s, sum, sizeof(s));
	memcpy(a, after, sizeof(a));
	memcpy(b, before, sizeof(b));
	for (size_t k = 0; k < n; k++)
		s[k] += a[k] - b[k];
	memcpy(sum, s, sizeof(s));
}

/*
 * Pass written first at r->v[t->at, t->at + t->n): copyable when each of its waits
 * names its producer as the last task on a stream (no event record, recorded in it or
 * before) and it has no transfer (paired by the placement with another stage's).
 */
static bool copyable(const struct sy_rank *r, const struct sy_again *t)
{
	for (size_t k = t->at; k < t->at + t->n; k++) {
		const struct sy_insn *x = &r->v[k];

		if (x->op == SY_RECORD || x->rec != UINT32_MAX || x->peer >= 0)
			return false;
	}
	return true;
}

/* Queue s of r grown to hold n more. */
static void queue_room(struct sy_queue *q, size_t n)
{
	if (q->n + n > q->cap)
		q->at = orr_xgrow(q->at, sizeof(*q->at), &q->cap, q->n + n);
}

/*
 * The pass's instructions copied to the end of p->r, each as orr__sy_push() and its
 * writer would have left it; false, nothing copied, past a limit.  Moved by `by`: its
 * queues' entries, its streams' last tasks, and each wait's producer written in it; a
 * wait for a task before it waits for the last on its stream now, as written.  Its
 * counts added, its times to j->ns_sum at once (a sum in another order: what it checks
 * allows for it, synth.c's times_bounded()), and on the first stage to its sums task by
 * task in order.
 */
static bool copy(struct sy_pass *p, const struct sy_again *t)
{
	struct sy_rank *r = p->r;
	struct sy_job *j = p->j;
	size_t at = r->n;
	uint32_t by = (uint32_t)(at - t->at), last[SY_STREAMS];

	if (r->n + t->n > SY_MAX_INSNS || j->insns + t->n > j->max_insns)
		return false;
	if (r->n + t->n > r->cap)
		r->v = orr_xgrow(r->v, sizeof(*r->v), &r->cap, r->n + t->n);
	memcpy(&r->v[at], &r->v[t->at], t->n * sizeof(*r->v));
	if (j->labelled) {
		if (r->n + t->n > r->lcap)
			r->l = orr_xgrow(r->l, sizeof(*r->l), &r->lcap, r->n + t->n);
		memcpy(&r->l[at], &r->l[t->at], t->n * sizeof(*r->l));
	}
	r->n += t->n;
	j->insns += t->n;
	memcpy(last, r->last, sizeof(last));
	for (int s = 0; s < SY_STREAMS; s++) {
		struct sy_queue *q = &r->q[s];

		queue_room(q, t->qn[s]);
		for (size_t k = 0; k < t->qn[s]; k++)
			q->at[q->n + k] = q->at[t->q[s] + k] + by;
		q->n += t->qn[s];
		if (t->last[s] != UINT32_MAX)
			r->last[s] = t->last[s] + by;
	}
	for (size_t k = at; k < r->n; k++) {
		struct sy_insn *x = &r->v[k];

		if (x->op == SY_WAIT)
			x->partner = x->partner != UINT32_MAX && x->partner >= t->at
					     ? x->partner + by
					     : last[x->src];
		else if (r->stage == 0 && x->op != SY_SYNC)
			summed(p, x);
	}
	j->ns_sum += t->ns_sum;
	j->ret->kernels += t->kernels;
	j->ret->collectives += t->collectives;
	sources_add(&j->ret->sources, &t->sources, &(struct orr_synth_sources){ 0 });
	return true;
}

/* What copy() needs of the pass just written at r->v[t->at, t->at + t->n). */
static void written(const struct sy_rank *r, const size_t *queued, struct sy_again *t)
{
	for (int s = 0; s < SY_STREAMS; s++) {
		t->q[s] = queued[s];
		t->qn[s] = r->q[s].n - queued[s];
		t->last[s] = r->last[s] != UINT32_MAX && r->last[s] >= t->at ? r->last[s]
									     : UINT32_MAX;
	}
	for (size_t k = t->at; k < t->at + t->n; k++)
		if (r->v[k].op == SY_KERNEL || r->v[k].op == SY_COLL)
			t->ns_sum += r->v[k].ns;
}

void orr__sy_again(struct sy_pass *p, enum sy_pass_kind kind, void (*pass)(struct sy_pass *p))
{
	struct sy_again *t = &p->r->again[kind];
	struct orr_synth *s = p->j->ret;
	struct orr_synth_sources sources = s->sources;
	size_t at = p->r->n, kernels = s->kernels, collectives = s->collectives;
	size_t queued[SY_STREAMS];

	if (t->ok && copy(p, t))
		return;
	for (int k = 0; k < SY_STREAMS; k++)
		queued[k] = p->r->q[k].n;
	pass(p);
	if (t->ok || p->j->err)
		return;
	*t = (struct sy_again){ .at = at, .n = p->r->n - at };
	t->kernels = s->kernels - kernels;
	t->collectives = s->collectives - collectives;
	sources_add(&t->sources, &s->sources, &sources);
	t->ok = copyable(p->r, t);
	if (t->ok)
		written(p->r, queued, t);
}
