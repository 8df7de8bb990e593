/* SPDX-License-Identifier: MIT */
/*
 * A Megatron-LM training step per pipeline stage (docs/estimator.md, "A step from a
 * model description"): the passes of its schedule (synth-layer.c's layers, embedding
 * and head), the transfers between stages, ZeRO-3/FSDP's per-layer all-gathers and
 * reduce-scatters, the gradients' reduction and the optimizer.
 *
 * Each stage runs its passes in the order of orr_pp_schedule(), receives its input
 * before a pass (an interleaved schedule one call ahead) and sends its output after
 * it.  The gradients' reduction over DP (all-reduce, or reduce-scatter with the
 * distributed optimizer) in buckets as Megatron-Core's DDP makes them, after the last
 * backward pass (its default) or during it (overlap_grad_reduce); with full sharding,
 * per layer instead.  After the last backward pass: the embedding gradients'
 * all-reduce between the first and last stages (tied embeddings), the gradient norm (a
 * reduction, an all-reduce over the model-parallel group, and the .item() that waits
 * for it), Adam, and with the distributed optimizer the parameters' all-gather; the
 * step ends with the launch thread waiting for its GPU.  The gradient buffer is zeroed
 * when it starts.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

/* Megatron-Core DDP's bucket: max(40M, 1M x dp) parameters (param_and_grad_buffer.py) */
#define BUCKET_PARAMS 40e6

/* ---- the pipeline ---- */

static int next_stage(const struct sy_job *j, int r)
{
	return r == (int)j->c->pp - 1 ? 0 : r + 1;
}

static int prev_stage(const struct sy_job *j, int r)
{
	return r == 0 ? (int)j->c->pp - 1 : r - 1;
}

/*
 * --scatter-gather-tensors-in-pipeline (Megatron-DeepSpeed's and Megatron-LM's before
 * Megatron-Core, on by default; not with sequence parallelism, whose tensors are split
 * already): each TP rank sends its 1/tp of the output (split_tensor_into_1d_equal_chunks,
 * a view), each over its own GPU's NIC, and the receiver gathers the whole over TP
 * (gather_split_1d_tensor: torch.distributed.all_gather into views of one buffer, which
 * ProcessGroupNCCL gathers into a flat buffer of its own and copies out on its stream).
 */
static double scattered(const struct sy_pass *p)
{
	return p->j->c->scatter_gather_p2p && !p->sp && p->tp > 1 ? p->tp : 1;
}

static void gather_received(struct sy_pass *p, enum sy_stream stream)
{
	double all = p->T * p->h * p->e;

	orr__sy_wait_for(p, SY_TP, stream);
	orr__sy_tp_coll(p, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", all);
	orr__sy_kern(p, "orrery_synth::p2p_gather_copy", ORR_KERN_COPY, 2 * all, 0);
}

static void transfer(struct sy_pass *p, enum sy_stream stream, int peer)
{
	struct sy_job *j = p->j;
	int64_t other = (int64_t)peer * j->c->tp * j->c->dp * j->c->cp;
	struct sy_insn *i = orr__sy_coll_on(
		p, stream, ORR_COLL_SEND_RECV, "ncclDevKernel_SendRecv",
		p->Tn * p->h * p->e / scattered(p), 2,
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

/* A receive, and with scattered transfers the gather of what it received. */
static void receive(struct sy_pass *p, enum sy_stream stream, int peer)
{
	transfer(p, stream, peer);
	if (scattered(p) > 1)
		gather_received(p, stream);
}

/* ---- data parallelism: buckets, ZeRO-3 / FSDP ---- */

/* Megatron-Core DDP's bucket size in parameters. */
static double bucket_params(const struct sy_pass *p)
{
	return fmax(BUCKET_PARAMS, 1e6 * orr__sy_dp_of(p));
}

/* One bucket of n parameters: its gradients reduced, or its parameters gathered. */
static void dp_bucket(struct sy_pass *p, double n, bool gather)
{
	int dp = orr__sy_dp_of(p);
	struct sy_span link = orr__sy_dp_span(p);

	if (gather)
		orr__sy_coll_on(p, SY_DP, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", n * p->e,
				dp, link);
	else if (p->j->c->distributed_optimizer)
		orr__sy_coll_on(p, SY_DP, ORR_COLL_REDUCE_SCATTER,
				"ncclDevKernel_ReduceScatter_Sum", n * orr__sy_grad_bytes(p), dp,
				link);
	else
		orr__sy_coll_on(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				n * orr__sy_grad_bytes(p), dp, link);
}

/*
 * --overlap-grad-reduce: Megatron's DDP launches a bucket's reduction as soon as the
 * last micro-batch's backward pass has produced every gradient in it (its hooks count
 * them), on the data-parallel stream beside the rest of the backward pass; a model
 * chunk's last bucket goes when its backward pass ends (flush).
 */
static bool overlapped_reduce(const struct sy_pass *p)
{
	const struct orr_train_config *c = p->j->c;

	return c->overlap_grad_reduce && !c->fully_sharded && orr__sy_dp_of(p) > 1;
}

static void grads_ready(struct sy_pass *p, bool reduce, double params, bool flush)
{
	double bucket = bucket_params(p), full;

	if (!reduce || !overlapped_reduce(p))
		return;
	p->grads_pending += params;
	if (p->grads_pending < bucket && !(flush && p->grads_pending > 0))
		return;
	orr__sy_wait_for(p, SY_DP, SY_COMPUTE);
	/*
	 * Counted, not subtracted: past 2^53 buckets' worth a subtraction leaves the sum as
	 * it was; orr__sy_bound() has bounded the count.
	 */
	full = floor(p->grads_pending / bucket);
	for (double b = 0; b < full && !p->j->err; b++)
		dp_bucket(p, bucket, false);
	p->grads_pending -= full * bucket;
	if (flush && p->grads_pending > 0)
		dp_bucket(p, p->grads_pending, false);
	if (flush)
		p->grads_pending = 0;
}

/* ---- ZeRO-3 / FSDP ---- */

static bool fully_sharded(const struct sy_pass *p)
{
	return p->j->c->fully_sharded && orr__sy_dp_of(p) > 1;
}

/* The parameters outside the layers that a chunk uses: embedding; final norm, output. */
static double root_params(const struct sy_pass *p, bool first, bool last)
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
static uint32_t fs_gather(struct sy_pass *p, double params)
{
	if (!fully_sharded(p) || !(params > 0))
		return UINT32_MAX;
	orr__sy_wait_for(p, SY_DP, SY_COMPUTE);
	orr__sy_coll_on(p, SY_DP, ORR_COLL_ALL_GATHER, "ncclDevKernel_AllGather", params * p->e,
			orr__sy_dp_of(p), orr__sy_dp_span(p));
	return orr__sy_record(p, SY_DP);
}

/* The reduce-scatter of a unit's gradients once its backward pass has ended. */
static void fs_scatter(struct sy_pass *p, double params)
{
	if (!fully_sharded(p) || !(params > 0))
		return;
	orr__sy_wait_for(p, SY_DP, SY_COMPUTE);
	orr__sy_coll_on(p, SY_DP, ORR_COLL_REDUCE_SCATTER, "ncclDevKernel_ReduceScatter_Sum",
			params * orr__sy_grad_bytes(p), orr__sy_dp_of(p), orr__sy_dp_span(p));
}

/* The layers of one of this stage's chunks: its layers over its virtual stages. */
static int64_t chunk_layers(const struct sy_pass *p)
{
	return orr_train_stage_layers(p->j->c, p->r->stage) / p->j->c->vpp;
}

static void chunk_fwd(struct sy_pass *p, bool first, bool last)
{
	int64_t layers = chunk_layers(p);
	uint32_t next;

	orr__sy_wait_record(p, SY_COMPUTE, fs_gather(p, root_params(p, first, last)));
	if (first)
		orr__sy_embedding_fwd(p);
	next = layers > 0 ? fs_gather(p, orr__sy_layer_params(p)) : UINT32_MAX;
	for (int64_t l = 0; l < layers && !p->j->err; l++) {
		orr__sy_wait_record(p, SY_COMPUTE, next);
		next = l + 1 < layers ? fs_gather(p, orr__sy_layer_params(p)) : UINT32_MAX;
		orr__sy_layer_fwd(p);
	}
	if (last)
		orr__sy_head_fwd(p);
}

/* reduce: the chunk's last micro-batch, whose gradients an overlapped reduction takes */
static void chunk_bwd(struct sy_pass *p, bool first, bool last, bool reduce)
{
	int64_t layers = chunk_layers(p);
	double root = root_params(p, first, last);
	uint32_t next;

	orr__sy_wait_record(p, SY_COMPUTE, fs_gather(p, root));
	if (last) {
		orr__sy_head_bwd(p);
		grads_ready(p, reduce, root_params(p, false, true), false);
	}
	next = layers > 0 ? fs_gather(p, orr__sy_layer_params(p)) : UINT32_MAX;
	for (int64_t l = 0; l < layers && !p->j->err; l++) {
		orr__sy_wait_record(p, SY_COMPUTE, next);
		next = l + 1 < layers ? fs_gather(p, orr__sy_layer_params(p)) : UINT32_MAX;
		orr__sy_layer_bwd(p);
		fs_scatter(p, orr__sy_layer_params(p));
		grads_ready(p, reduce, orr__sy_layer_params(p), false);
	}
	if (first)
		orr__sy_embedding_bwd(p);
	fs_scatter(p, root);
	grads_ready(p, reduce, first ? p->vl * p->h : 0, true);
}

/* The first stage's compute and blocking communication so far. */
static double busy(const struct sy_pass *p)
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
 * as separate isend/irecv, one call ahead and waited for on the GPU, and the launch
 * thread never blocks on them (slots_ahead() below).
 */
static void p2p_sync(struct sy_pass *p)
{
	if (p->p2p_pending && p->j->c->vpp == 1)
		orr__sy_push(p, SY_SYNC, SY_COMPUTE);
	p->p2p_pending = false;
}

/*
 * A pass of 1F1B (vpp 1): its input received just before it, its output sent after it;
 * a receive, as a send, behind the compute launched before it (ProcessGroupNCCL's
 * syncStream() puts the batched call behind an event of the current stream).
 */
static void slot(struct sy_pass *p, const struct orr_pp_slot *s)
{
	int r = p->r->stage, pp = (int)p->j->c->pp, v = (int)p->j->c->vpp;
	bool first = r == 0 && s->chunk == 0, last = r == pp - 1 && (int)s->chunk == v - 1;
	double before = busy(p);

	if (s->pass == ORR_PP_PASS_FORWARD) {
		if (!first) {
			orr__sy_wait_for(p, SY_RECV_PREV, SY_COMPUTE);
			receive(p, SY_RECV_PREV, prev_stage(p->j, r));
			orr__sy_wait_for(p, SY_COMPUTE, SY_RECV_PREV);
		}
		p2p_sync(p);
		orr__sy_timer_sync(p); /* forward-compute */
		if (first || last)
			orr__sy_get_batch(p);
		chunk_fwd(p, first, last);
		orr__sy_timer_sync(p);
		p->j->ret->forward_ns += busy(p) - before;
		if (!last) {
			orr__sy_wait_for(p, SY_SEND_NEXT, SY_COMPUTE);
			transfer(p, SY_SEND_NEXT, next_stage(p->j, r));
		}
		return;
	}
	if (!last) {
		orr__sy_wait_for(p, SY_RECV_NEXT, SY_COMPUTE);
		receive(p, SY_RECV_NEXT, next_stage(p->j, r));
		orr__sy_wait_for(p, SY_COMPUTE, SY_RECV_NEXT);
	}
	p2p_sync(p);
	orr__sy_timer_sync(p); /* backward-compute */
	chunk_bwd(p, first, last, s->micro_batch + 1 == p->j->c->micro_batches);
	orr__sy_timer_sync(p);
	p->j->ret->backward_ns += busy(p) - before;
	if (!first) {
		orr__sy_wait_for(p, SY_SEND_PREV, SY_COMPUTE);
		transfer(p, SY_SEND_PREV, prev_stage(p->j, r));
	}
}

/*
 * ---- an interleaved schedule ----
 *
 * Megatron's interleaved schedule (forward_backward_pipelining_with_interleaving, with
 * its defaults: overlap_p2p_comm on, batch_p2p_comm off, overlap_p2p_comm_warmup_flush
 * off, and deallocate_pipeline_outputs on, as megatron/training sets it) posts a pass's
 * input one call ahead: send_forward_recv_forward() after forward pass k posts its
 * output's isend and the irecv of the next forward pass's input,
 * send_backward_recv_backward() after a backward pass the same towards the previous
 * stage; the first forward pass's input is received before the first pass
 * (recv_forward), the first backward pass's after the last warm-up forward pass.  Each
 * isend and irecv goes on its communicator's stream once what the compute stream has
 * launched has run (ProcessGroupNCCL's syncStream), and Work.wait() makes the compute
 * stream wait for it on the GPU (the launch thread goes on): the warm-up's and the
 * cool-down's calls wait for their transfers at once (wait_on_reqs), a steady-state
 * call's receive is waited for before the pass that needs it, so that it spans the pass
 * of the other kind in between, its forward send at once (deallocate_pipeline_outputs),
 * its backward send after the next backward call (send_prev_wait_handle).  Every stage
 * has posted both sides of each transfer before it synchronizes again, so a
 * torch.cuda.synchronize() (a timer of --timing-log-level 2, around each pass and each of
 * these calls; DeepSpeed's at each checkpointed layer) waits for transfers the peer has
 * posted or posts before its own next synchronization, and the step runs.
 */

/* A stage's point-to-point calls in an interleaved step, as slots_ahead() writes them. */
struct ahead {
	size_t warmup; /* forward passes before the first backward pass's input is posted */
	size_t steady; /* backward passes whose calls overlap: all but the cool-down's */
	size_t forwards, backwards; /* passes written so far */
	/* a receive a steady-state call posted, which the compute stream waits for before
	 * the pass that needs it: the next forward pass's input, the next backward pass's */
	bool pending[2];
	uint32_t send_prev; /* the last backward send a steady-state call posted, recorded */
};

/* Whether pass s of this stage receives its input (or its output's gradient). */
static bool receives(const struct sy_pass *p, const struct orr_pp_slot *s)
{
	int r = p->r->stage, pp = (int)p->j->c->pp, v = (int)p->j->c->vpp;

	if (s->pass == ORR_PP_PASS_FORWARD)
		return !(r == 0 && s->chunk == 0);
	return !(r == pp - 1 && (int)s->chunk == v - 1);
}

/* Whether pass s of this stage sends its output (or its input's gradient). */
static bool sends(const struct sy_pass *p, const struct orr_pp_slot *s)
{
	int r = p->r->stage, pp = (int)p->j->c->pp, v = (int)p->j->c->vpp;

	if (s->pass == ORR_PP_PASS_FORWARD)
		return !(r == pp - 1 && (int)s->chunk == v - 1);
	return !(r == 0 && s->chunk == 0);
}

/*
 * One of Megatron's point-to-point calls in one direction: the isend of the pass that
 * has just run and the irecv of the next pass's input, in _p2p_ops()'s order (an even
 * stage sends first, an odd one receives first), each after what the compute stream has
 * launched, between the synchronizations of the call's timer (forward-send-forward-recv,
 * backward-send-backward-recv: log level 2, as the passes').  blocking: the call waits
 * for its transfers (wait_on_reqs, inside the timer); else the schedule waits for them
 * after it as the struct ahead above says.
 */
static void p2p_call(struct sy_pass *p, struct ahead *a, bool forward, bool send, bool recv,
		     bool blocking)
{
	int r = p->r->stage;
	enum sy_stream out = forward ? SY_SEND_NEXT : SY_SEND_PREV;
	enum sy_stream in = forward ? SY_RECV_PREV : SY_RECV_NEXT;
	int to = forward ? next_stage(p->j, r) : prev_stage(p->j, r);
	int from = forward ? prev_stage(p->j, r) : next_stage(p->j, r);

	orr__sy_timer_sync(p);
	for (int k = 0; k < 2; k++) {
		if (recv && k != r % 2) {
			orr__sy_wait_for(p, in, SY_COMPUTE);
			transfer(p, in, from);
		}
		if (send && k == r % 2) {
			orr__sy_wait_for(p, out, SY_COMPUTE);
			transfer(p, out, to);
		}
	}
	if (blocking && send)
		orr__sy_wait_for(p, SY_COMPUTE, out);
	if (blocking && recv)
		orr__sy_wait_for(p, SY_COMPUTE, in);
	orr__sy_timer_sync(p);
	a->pending[forward ? 0 : 1] = recv && !blocking;
	if (blocking)
		return;
	if (forward && send) { /* deallocate_pipeline_outputs: the output is freed after it */
		orr__sy_wait_for(p, SY_COMPUTE, out);
		return;
	}
	if (forward)
		return;
	orr__sy_wait_record(p, SY_COMPUTE, a->send_prev);
	a->send_prev = send ? orr__sy_record(p, out) : UINT32_MAX;
}

/* A pass whose input was posted ahead: the compute waits for it if not yet, then runs. */
static void slot_ahead(struct sy_pass *p, struct ahead *a, const struct orr_pp_slot *s)
{
	int r = p->r->stage, pp = (int)p->j->c->pp, v = (int)p->j->c->vpp;
	bool first = r == 0 && s->chunk == 0, last = r == pp - 1 && (int)s->chunk == v - 1;
	bool forward = s->pass == ORR_PP_PASS_FORWARD;
	enum sy_stream in = forward ? SY_RECV_PREV : SY_RECV_NEXT;
	double before = busy(p);

	if (receives(p, s)) {
		if (scattered(p) > 1)
			gather_received(p, in);
		if (a->pending[forward ? 0 : 1])
			orr__sy_wait_for(p, SY_COMPUTE, in);
	}
	a->pending[forward ? 0 : 1] = false;
	orr__sy_timer_sync(p); /* forward-compute, backward-compute */
	if (forward && (first || last))
		orr__sy_get_batch(p);
	if (forward)
		chunk_fwd(p, first, last);
	else
		chunk_bwd(p, first, last, s->micro_batch + 1 == p->j->c->micro_batches);
	orr__sy_timer_sync(p);
	if (forward)
		p->j->ret->forward_ns += busy(p) - before;
	else
		p->j->ret->backward_ns += busy(p) - before;
}

/* The slot after i running a pass of the same kind, or n. */
static size_t next_of_kind(const struct orr_pp_slot *slots, size_t n, size_t i)
{
	size_t k = i + 1;

	while (k < n && slots[k].pass != slots[i].pass)
		k++;
	return k;
}

/*
 * Forward passes before the first backward pass's input is received: the warm-up's
 * (get_pp_rank_microbatches(), as estimator/schedule.c counts them), all of them when
 * the warm-up takes every micro-batch.
 */
static size_t warmup_forwards(const struct sy_pass *p)
{
	const struct orr_train_config *c = p->j->c;
	size_t total = (size_t)c->micro_batches * (size_t)c->vpp;
	size_t w = 2 * (size_t)(c->pp - 1 - p->r->stage) + (size_t)(c->vpp - 1) * (size_t)c->pp;

	return w < total ? w : total;
}

/*
 * The first backward pass's input, received after the warm-up's last forward pass: by
 * send_backward_recv_backward() (overlapped) after a warm-up that leaves a steady state,
 * by the cool-down's recv_backward() (blocking) after one that takes every micro-batch.
 */
static void first_backward_input(struct sy_pass *p, struct ahead *a,
				 const struct orr_pp_slot *slots, size_t n)
{
	size_t b = 0;
	bool all_warmup = a->steady == 0;

	while (b < n && slots[b].pass != ORR_PP_PASS_BACKWARD)
		b++;
	if (b == n)
		return;
	if (all_warmup && !receives(p, &slots[b]))
		return; /* recv_backward() on the last stage: no call, no timer */
	p2p_call(p, a, false, false, receives(p, &slots[b]), all_warmup);
}

static void slots_ahead(struct sy_pass *p, const struct orr_pp_slot *slots, size_t n)
{
	size_t total = (size_t)p->j->c->micro_batches * (size_t)p->j->c->vpp;
	struct ahead a = { .warmup = warmup_forwards(p), .send_prev = UINT32_MAX };

	a.steady = total - a.warmup;
	if (n > 0 && receives(p, &slots[0])) /* recv_forward(), blocking */
		p2p_call(p, &a, true, false, true, true);
	for (size_t i = 0; i < n && !p->j->err; i++) {
		size_t next = next_of_kind(slots, n, i);
		bool forward = slots[i].pass == ORR_PP_PASS_FORWARD;
		bool recv = next < n && receives(p, &slots[next]), blocking;

		if (!forward && p->j->forward_only)
			continue;
		slot_ahead(p, &a, &slots[i]);
		if (forward)
			blocking = ++a.forwards <= a.warmup;
		else
			blocking = ++a.backwards > a.steady;
		p2p_call(p, &a, forward, sends(p, &slots[i]), recv, blocking);
		if (forward && a.forwards == a.warmup && !p->j->forward_only)
			first_backward_input(p, &a, slots, n);
	}
	/* the last steady-state backward send, waited for after the cool-down */
	orr__sy_wait_record(p, SY_COMPUTE, a.send_prev);
}

/* ---- gradients and the optimizer ---- */

/* The parameters a stage's GPU holds (one TP shard), as orr_train_params() counts them. */
static double stage_params(const struct sy_pass *p)
{
	const struct orr_train_config *c = p->j->c;
	double n = orr__sy_layer_params(p) * (double)orr_train_stage_layers(c, p->r->stage);
	int stage = p->r->stage;

	if (stage == 0)
		n += p->vl * p->h;
	if (stage == (int)c->pp - 1)
		n += p->h + (c->untied_embeddings || c->pp > 1 ? p->vl * p->h : 0);
	return n;
}

/*
 * The buckets of params, counted first (orr__sy_bound() bounds the count): a loop that
 * subtracts a bucket at a time from 10^19 parameters would not end.
 */
static void dp_buckets(struct sy_pass *p, double params, bool gather)
{
	double bucket = bucket_params(p), n = params > 0 ? ceil(params / bucket) : 0;

	if (orr__sy_dp_of(p) < 2)
		return;
	for (double b = 0; b < n && !p->j->err; b++)
		dp_bucket(p, b + 1 < n ? bucket : params - b * bucket, gather);
}

/* Adam's kernels over mine parameters: one per BUCKET_PARAMS. */
static double adam_kernels(double mine)
{
	return mine > 0 ? ceil(mine / BUCKET_PARAMS) : 0;
}

/* Adam over the optimizer's share: fp32 master weights, moments and gradient, half copy. */
static void optimizer(struct sy_pass *p, double params)
{
	const struct orr_train_config *c = p->j->c;
	bool sharded = c->distributed_optimizer || c->fully_sharded;
	double mine = sharded ? params / (double)(c->dp * c->cp) : params;
	double per = p->j->dtype == ORR_DTYPE_FP32 ? 28 : 30;
	int mp = (int)(c->tp * c->pp);

	orr__sy_kern(p, "orrery_synth::grad_norm", ORR_KERN_REDUCTION, 4 * mine, 0);
	if (mp > 1 || (sharded && c->dp * c->cp > 1))
		orr__sy_blocking_coll(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				      4, sharded ? (int)(mp * c->dp * c->cp) : mp,
				      orr__sy_span(p->j, 0, 1, (int64_t)mp * c->dp * c->cp));
	orr__sy_device_sync(p); /* the norm's .item() */
	for (double b = 0, n = adam_kernels(mine); b < n && !p->j->err; b++)
		orr__sy_kern(p, "orrery_synth::multi_tensor_adam", ORR_KERN_OPTIMIZER,
			     per * (b + 1 < n ? BUCKET_PARAMS : mine - b * BUCKET_PARAMS), 0);
	if (c->distributed_optimizer && !c->fully_sharded && c->dp * c->cp > 1) {
		orr__sy_wait_for(p, SY_DP, SY_COMPUTE);
		dp_buckets(p, params, true);
		orr__sy_wait_for(p, SY_COMPUTE, SY_DP);
	}
}

static void gradients(struct sy_pass *p, double params)
{
	const struct orr_train_config *c = p->j->c;
	int stage = p->r->stage;

	orr__sy_wait_for(p, SY_DP, SY_COMPUTE);
	if (c->pp > 1 && !c->untied_embeddings && (stage == 0 || stage == (int)c->pp - 1))
		orr__sy_coll_on(p, SY_DP, ORR_COLL_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum",
				p->vl * p->h * orr__sy_grad_bytes(p), 2,
				orr__sy_span(p->j, 0, (c->pp - 1) * c->tp * c->dp * c->cp, 2));
	if (!c->fully_sharded && !overlapped_reduce(p)) /* else during the backward pass */
		dp_buckets(p, params, false);
	orr__sy_wait_for(p, SY_COMPUTE, SY_DP);
}

static int stage_program(struct sy_job *j, struct sy_rank *r)
{
	const struct orr_train_config *c = j->c;
	struct orr_pp_slot *slots = NULL;
	size_t n = 0;
	struct sy_pass p;
	double params;
	int err;

	orr__sy_pass_init(&p, j, r);
	params = stage_params(&p);
	err = orr_pp_schedule((int)c->pp, r->stage, (int)c->micro_batches, (int)c->vpp, &slots, &n);
	if (err < 0)
		return err;
	if (!j->forward_only)
		orr__sy_kern(&p, "orrery_synth::zero_grad_buffer", ORR_KERN_COPY,
			     params * orr__sy_grad_bytes(&p) /
				     (c->fully_sharded ? (double)orr__sy_dp_of(&p) : 1),
			     0);
	if (c->vpp > 1)
		slots_ahead(&p, slots, n);
	for (size_t i = 0; i < n && !j->err && c->vpp == 1; i++)
		if (!j->forward_only || slots[i].pass == ORR_PP_PASS_FORWARD)
			slot(&p, &slots[i]);
	p2p_sync(&p);
	free(slots);
	if (!j->forward_only) {
		gradients(&p, params);
		optimizer(&p, params);
	}
	orr__sy_device_sync(&p);
	return j->err;
}

/* ---- the instruction count, bounded before anything is written ---- */

/* The instructions of one layer's forward and backward passes, written once to count. */
static void layer_insns(struct sy_job *j, double *ret_fwd, double *ret_bwd)
{
	struct orr_synth sums = { 0 };
	struct sy_job probe = *j;
	struct sy_rank r = { 0 };
	struct sy_pass p;

	probe.ret = &sums;
	orr__sy_rank_init(&r, 0, 0);
	orr__sy_pass_init(&p, &probe, &r);
	orr__sy_layer_fwd(&p);
	*ret_fwd = (double)r.n;
	orr__sy_layer_bwd(&p);
	*ret_bwd = (double)r.n - *ret_fwd;
	orr__sy_rank_release(&r);
}

/*
 * At least the instructions stage writes: its layers' passes per micro-batch, one per
 * slot of its schedule (a transfer, a batch, a pass), the gradients' buckets and Adam's
 * kernels.  In doubles: a hostile configuration's count is far past 2^64.
 */
static double stage_insns(struct sy_job *j, int stage, double fwd, double bwd)
{
	const struct orr_train_config *c = j->c;
	struct sy_rank r = { .stage = stage };
	struct sy_pass p;
	double mb = (double)c->micro_batches, layers, params, n;

	orr__sy_pass_init(&p, j, &r);
	layers = (double)(chunk_layers(&p) * c->vpp);
	n = mb * (double)c->vpp * (j->forward_only ? 1 : 2) + mb * layers * fwd;
	if (j->forward_only)
		return n;
	params = stage_params(&p);
	n += mb * layers * bwd + adam_kernels(params / (double)(c->dp * c->cp));
	if (!c->fully_sharded && orr__sy_dp_of(&p) > 1)
		n += floor(params / bucket_params(&p));
	return n;
}

int orr__sy_bound(struct sy_job *j, const char **ret_why)
{
	double fwd, bwd, all = 0;

	layer_insns(j, &fwd, &bwd);
	for (int64_t s = 0; s < j->c->pp; s++) {
		double n = stage_insns(j, (int)s, fwd, bwd);

		all += n;
		if (n > SY_MAX_INSNS) {
			*ret_why = "more than 2^24 instructions per stage";
			return -E2BIG;
		}
		if (all > (double)j->max_insns) {
			*ret_why = j->too_many;
			return -E2BIG;
		}
	}
	return 0;
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

		orr__sy_rank_init(r, (int)i, (int64_t)i * c->tp * c->dp * c->cp);
		err = stage_program(j, r);
		if (err < 0) {
			*ret_why = j->why ? j->why : "the pipeline schedule";
			return err;
		}
	}
	return 0;
}
