/* SPDX-License-Identifier: MIT */
/*
 * Re-timing a traced graph for another configuration whose step has the same tasks:
 * another tensor-parallel or data-parallel degree, micro-batch size, hidden size, FFN,
 * heads, sequence or vocabulary (docs/estimator.md, "Re-timing a trace").  Every task
 * keeps its dependencies; a GPU task whose work changes gets a factor on its measured
 * duration, the ratio of what it costs in the target to what it costs in the trace,
 * so that whatever the models miss in absolute terms cancels (notes/estimator.md, C).
 *
 *   GEMMs        labeled by role and pass (orr_gemm_label()), re-shaped
 *                (orr_gemm_reshape()): the GEMM model's time of the new shape over
 *                its time of the traced one; FLOPs over FLOPs where it cannot say.
 *   collectives  a TP collective (launched in the forward or backward pass, its group
 *                the trace's tp, T·h elements or a small multiple) carries T'·h'
 *                over t' ranks; a DP gradient collective (from the backward pass or
 *                the optimizer, its group dp) the parameters of a shard over d'
 *                ranks: the collective model's time over its time of the traced one
 *                where a constrained model covers both groups' links; else bytes ×
 *                F(n) / bandwidth over the same of the trace, the bandwidth the NIC's
 *                instead of the GPU link's when the group no longer fits in a node
 *                (B.2, B.3, B.4).
 *   other        a kernel under an op with shapes scales with its op's largest
 *                tensor when that tensor is one of the layer's activations, T·h,
 *                T·h/t, T·f/t, b·(a/t)·s² or T·V/t (B.4, B.7); fused attention with
 *                b·(a/t)·s²·d.  A kernel never gets faster than the trace's launch
 *                floor, the time of kernels that move next to nothing.
 *
 * Anything else keeps its measured time, and is counted.  What changes the tasks
 * themselves (layers, pipeline stages, micro-batches per step, recompute, context
 * parallelism, attention, how DP shares and reduces, TP or DP to or from 1, which adds
 * or removes their collectives) is refused: that is a rewrite of the graph, not a
 * re-timing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* ---- what may change ---- */

/*
 * Whether c's pipeline transfers are scattered over TP and gathered after, as the
 * synthesizer does (synth-program.c's scattered()): only between stages, with TP and
 * without sequence parallelism; elsewhere the switch changes nothing, and a trace keeps
 * its re-timing.
 */
static bool scatters_p2p(const struct orr_train_config *c)
{
	return c->scatter_gather_p2p && c->pp > 1 && c->tp > 1 && !c->sequence_parallel;
}

/* The fields a re-timing cannot change, with their names; NULL when none differs. */
static const char *structural_change(const struct orr_train_config *a,
				     const struct orr_train_config *b, bool layers)
{
	if (!layers && a->layers != b->layers)
		return "layers";
	if (a->pp != b->pp || a->vpp != b->vpp || a->first_stage_layers != b->first_stage_layers ||
	    a->last_stage_layers != b->last_stage_layers)
		return "pipeline stages";
	if (a->micro_batches != b->micro_batches)
		return "micro-batches per step";
	if (a->cp != b->cp)
		return "context parallelism";
	if (a->recompute != b->recompute)
		return "recompute";
	if (a->sequence_parallel != b->sequence_parallel)
		return "sequence parallelism";
	if (a->gated_mlp != b->gated_mlp)
		return "a gated MLP";
	if (a->precision != b->precision)
		return "precision";
	if (a->flash_attention != b->flash_attention)
		return "attention (flash or unfused)";
	if (a->untied_embeddings != b->untied_embeddings)
		return "untied embeddings";
	if (a->rope != b->rope)
		return "rotary position embeddings";
	/* How DP shares the model's state and when it reduces: other collectives, placed elsewhere */
	if (a->distributed_optimizer != b->distributed_optimizer)
		return "the distributed optimizer";
	if (a->fully_sharded != b->fully_sharded)
		return "full sharding (FSDP, ZeRO-3)";
	if (a->overlap_grad_reduce != b->overlap_grad_reduce)
		return "overlapped gradient reduction";
	if (scatters_p2p(a) != scatters_p2p(b))
		return "scatter-gather of pipeline transfers";
	if (a->sync_timers != b->sync_timers)
		return "timers that synchronize the device";
	if (orr_train_syncs_layers(a) != orr_train_syncs_layers(b))
		return "checkpointed layers that synchronize the device";
	/* Without tensor (data) parallelism a step has no TP (gradient) collectives. */
	if ((a->tp == 1) != (b->tp == 1))
		return "tensor parallelism to or from 1 (its collectives come or go)";
	if ((a->dp == 1) != (b->dp == 1))
		return "data parallelism to or from 1 (its gradient collectives come or go)";
	return NULL;
}

/* ---- GEMMs ---- */

/* The GEMMs' factors; gemm[t]: task t is a GEMM sample's, re-timed here or kept. */
static void retime_gemms(const struct orr_graph *g, const struct orr_structure *st,
			 const struct orr_train_config *from, const struct orr_train_config *to,
			 const struct orr_gemm_model *gm, float *f, bool *gemm,
			 struct orr_retime *ret)
{
	struct orr_gemm_sample *s;
	size_t n = orr_gemm_observe(g, &s, NULL);

	orr_gemm_label(st, s, n);
	for (size_t i = 0; i < n; i++) {
		struct orr_gemm_sample r;
		double old, now, d;

		gemm[s[i].task] = true;
		d = (double)orr_graph_tasks(g)[s[i].task].dur_ns;
		if (orr_gemm_reshape(&s[i], from, to, &r)) {
			ret->kept++;
			ret->kept_ns += d;
			continue;
		}
		old = gm ? orr_gemm_model_time(gm, &s[i], NULL) : NAN;
		now = gm ? orr_gemm_model_time(gm, &r, NULL) : NAN;
		if (isfinite(old) && isfinite(now) && old > 0 && now > 0) {
			f[s[i].task] = (float)(now / old);
			ret->gemms_modeled++;
		} else {
			f[s[i].task] = (float)(r.flops / s[i].flops);
		}
		ret->gemms++;
		ret->gemm_ns[s[i].role][0] += d;
		ret->gemm_ns[s[i].role][1] += d * f[s[i].task];
	}
	free(s);
}

/* ---- collectives ---- */

struct coll_ctx {
	const struct orr_graph *g;
	const struct orr_train_config *from, *to;
	const struct orr_gpu_spec *gpu;
	const struct orr_retime_models *m;
	int gpn; /* GPUs per node; 0: unknown */
	const uint32_t *parent;
	const struct orr_rank *r;
	struct orr_retime *ret;
};

/* The link class of a group of n ranks: a node's when it fits in one (or unknown). */
static enum orr_link link_of(const struct coll_ctx *c, int64_t n)
{
	return c->gpn < 1 || n <= c->gpn ? ORR_LINK_NODE : ORR_LINK_NETWORK;
}

static double link_bytes_per_s(const struct coll_ctx *c, int64_t n)
{
	const struct orr_gpu_spec *gpu = c->gpu;

	if (link_of(c, n) == ORR_LINK_NODE)
		return gpu && gpu->link_bytes_per_s > 0 ? gpu->link_bytes_per_s : 1;
	if (c->m && c->m->nic_bytes_per_s > 0)
		return c->m->nic_bytes_per_s;
	return gpu && gpu->nic_bytes_per_s > 0 ? gpu->nic_bytes_per_s : 1;
}

/*
 * The model of kind k for a group of n ranks: its link class's, or, inside a node, the
 * one of links the trace could not tell (a trace of one node); NULL when none.
 */
static const struct orr_coll_model *coll_model(const struct coll_ctx *c, enum orr_coll_kind k,
					       int64_t n)
{
	enum orr_link l = link_of(c, n);
	const struct orr_coll_model *m;

	if (!c->m)
		return NULL;
	m = c->m->coll[k][l];
	if (!m && l == ORR_LINK_NODE)
		m = c->m->coll[k][ORR_LINK_UNKNOWN];
	return m && m->constrained ? m : NULL;
}

/*
 * Time in `to` over time in the trace of a collective of `bytes` whose bytes change by
 * bytes_ratio and ranks from n0 to n1: the models' where they cover both, else bytes ×
 * F(n) / bandwidth.
 */
static double coll_ratio(struct coll_ctx *c, enum orr_coll_kind k, double bytes, double bytes_ratio,
			 int64_t n0, int64_t n1)
{
	const struct orr_coll_model *m0 = coll_model(c, k, n0), *m1 = coll_model(c, k, n1);
	double f0 = orr_coll_bus_factor(k, (int)n0), f1 = orr_coll_bus_factor(k, (int)n1);

	if (m0 && m1) {
		double t0 = orr_coll_model_time(m0, bytes, (int)n0);
		double t1 = orr_coll_model_time(m1, bytes * bytes_ratio, (int)n1);

		if (t0 > 0 && t1 > 0 && isfinite(t0) && isfinite(t1)) {
			c->ret->collectives_modeled++;
			return t1 / t0;
		}
	}
	if (!(f0 > 0))
		return 1;
	return bytes_ratio * f1 / f0 * link_bytes_per_s(c, n0) / link_bytes_per_s(c, n1);
}

/* The parameters of one tensor- and pipeline-parallel shard. */
static double shard_params(const struct orr_train_config *c)
{
	return orr_train_params(c) / (double)(c->tp * c->pp);
}

/* The ranks of collective task t: its record's group, else the members coupled. */
static int64_t group_of(const struct coll_ctx *c, uint32_t t, const struct orr_collective *co)
{
	const struct orr_task *task = &orr_graph_tasks(c->g)[t];

	if (co->group_size > 0)
		return co->group_size;
	if (task->aux != ORR_NONE && task->aux < orr_graph_group_count(c->g))
		return orr_graph_groups(c->g)[task->aux].n;
	return -1;
}

/* The factor of collective task t, or 0 when it is neither TP's nor DP's (*ret_tp: TP's). */
static double coll_factor(struct coll_ctx *c, uint32_t t, bool backward, bool optimizer,
			  bool *ret_tp)
{
	const struct orr_event *e = orr_graph_task_event(c->g, t);
	const struct orr_collective *co = &c->r->collectives[e->coll];
	enum orr_coll_kind k = orr_coll_kind_of(orr_trace_str(orr_graph_trace(c->g), co->type));
	int64_t n = group_of(c, t, co), th = c->from->micro_batch * c->from->seq * c->from->hidden;
	double bytes = co->in_bytes > 0 ? (double)co->in_bytes : (double)co->out_bytes;

	if (!(bytes > 0))
		bytes = orr__caller_bytes(c->g, c->parent, c->r, t);
	if (k == ORR_COLL_UNKNOWN || !(bytes > 0) || n < 1)
		return 0;
	*ret_tp = !optimizer && n == c->from->tp && fmod(bytes, (double)th) == 0 && bytes / th <= 8;
	if (*ret_tp)
		return coll_ratio(c, k, bytes,
				  (double)(c->to->micro_batch * c->to->seq * c->to->hidden) /
					  (double)th,
				  n, c->to->tp);
	if ((backward || optimizer) && n == c->from->dp && n > 1)
		return coll_ratio(c, k, bytes, shard_params(c->to) / shard_params(c->from), n,
				  c->to->dp);
	return 0;
}

/* Whether event e or an enclosing call is the optimizer's step. */
static bool in_optimizer(const struct orr_trace *t, const struct orr_rank *r,
			 const uint32_t *parent, uint32_t e)
{
	static const char *const globs[] = { "Optimizer.step*", "*optimizer*step*" };

	for (int depth = 0; e != ORR_NONE && e < r->nevents && depth < 64; depth++, e = parent[e])
		if (orr__name_is(orr_trace_str(t, r->events[e].name), globs, 2))
			return true;
	return false;
}

/* ---- other kernels ---- */

/* The numel of the largest tensor of the innermost op with shapes around event e. */
static double largest_tensor(const struct orr_rank *r, const uint32_t *parent, uint32_t e)
{
	for (int depth = 0; e != ORR_NONE && e < r->nevents && depth < 64; depth++, e = parent[e]) {
		const struct orr_event *ev = &r->events[e];
		const struct orr_op_args *a;
		double best = 0;

		if (ev->kind != ORR_EVENT_OP || !orr__op_has_shapes(r, ev))
			continue;
		a = &r->ops[ev->args];
		for (uint32_t i = a->first_input; i < a->first_input + a->ninputs && i < r->ninputs;
		     i++) {
			const struct orr_input *in = &r->inputs[i];
			double numel = 1;

			for (uint32_t d = 0;
			     !in->is_list && d < in->ndims && in->first_dim + d < r->ndims; d++)
				numel *= (double)r->dims[in->first_dim + d];
			if (!in->is_list && in->ndims && numel > best)
				best = numel;
		}
		return best;
	}
	return 0;
}

/* The layer's activations in c, in the order they are matched. */
static void activations(const struct orr_train_config *c, double *v)
{
	double T = (double)(c->micro_batch * c->seq), h = (double)c->hidden, t = (double)c->tp;
	double f = (double)c->ffn * (c->gated_mlp ? 2 : 1), a = (double)c->heads;
	double s = (double)c->seq;

	v[0] = T * h;
	v[1] = T * h / t;
	v[2] = T * f / t;
	v[3] = (double)c->micro_batch * a / t * s * s;
	v[4] = T * (double)c->vocab / t;
}

/* The size ratio of an op whose largest tensor has numel x, or 0 when it is none of them. */
static double activation_ratio(const struct orr_train_config *from,
			       const struct orr_train_config *to, double x, bool attention)
{
	double a[5], b[5];

	activations(from, a);
	activations(to, b);
	/*
	 * Fused attention: its query is T·h/t, its work b·(a/t)·s²·d.  Checked first: at TP
	 * 1 the query has the hidden state's size too (T·h), which grows only with T.
	 */
	if (attention && x == a[1])
		return b[1] / a[1] * (double)to->seq / (double)from->seq;
	for (int i = 0; i < 5; i++)
		if (x == a[i])
			return b[i] / a[i];
	return 0;
}

/*
 * The layer's weight matrices in c, per tensor-parallel rank: QKV, projection, FC1,
 * FC2, the word embedding (and tied output layer).
 */
static void weights(const struct orr_train_config *c, double *v)
{
	double h = (double)c->hidden, t = (double)c->tp, d = h / (double)c->heads;
	double f = (double)c->ffn;

	v[0] = h * (h + 2.0 * (double)c->kv_groups * d) / t;
	v[1] = h * h / t;
	v[2] = h * f * (c->gated_mlp ? 2 : 1) / t;
	v[3] = f * h / t;
	v[4] = (double)c->vocab * h / t;
}

/*
 * The size ratio of an op whose largest tensor has numel x when it is one of the
 * weights, or 0: a weight's cast (autocast's copy of an FP32 weight to BF16 for each
 * use), its gradient's accumulation and cast back move the weight's bytes.
 */
static double weight_ratio(const struct orr_train_config *from, const struct orr_train_config *to,
			   double x)
{
	double a[5], b[5];

	weights(from, a);
	weights(to, b);
	for (int i = 0; i < 5; i++)
		if (x == a[i])
			return b[i] / a[i];
	return 0;
}

/* ---- the graph ---- */

struct rank_ctx {
	struct coll_ctx c;
	const struct orr_kern_model *km;
	float *f;
	struct orr_retime *ret;
};

/*
 * The size ratio of a non-GEMM kernel launched from event `launch`: an optimizer's
 * kernel with the parameters of a shard (a fused or foreach optimizer's kernels sweep
 * every parameter, memory-bound); any other with the activation, else the weight,
 * its op's largest tensor is; 0 when none.
 */
static double kernel_ratio(struct rank_ctx *x, uint32_t t, uint32_t launch)
{
	const char *name = orr_graph_task_name(x->c.g, t);
	bool attention = orr_kern_classify(name, NULL, 0) == ORR_KERN_ATTENTION;
	double n = largest_tensor(x->c.r, x->c.parent, launch), r;

	if (in_optimizer(orr_graph_trace(x->c.g), x->c.r, x->c.parent, launch))
		return shard_params(x->c.to) / shard_params(x->c.from);
	r = activation_ratio(x->c.from, x->c.to, n, attention);
	return r > 0 ? r : weight_ratio(x->c.from, x->c.to, n);
}

/* A non-GEMM kernel's factor, at least the launch floor. */
static void retime_kernel(struct rank_ctx *x, uint32_t t, uint32_t launch)
{
	const struct orr_task *task = &orr_graph_tasks(x->c.g)[t];
	double r = kernel_ratio(x, t, launch);
	double d = (double)task->dur_ns, floor = x->km ? x->km->floor_ns : NAN, now;

	if (!(r > 0) || !(d > 0)) {
		x->ret->kept++;
		x->ret->kept_ns += d;
		return;
	}
	now = d * r;
	if (isfinite(floor) && now < floor)
		now = d < floor ? d : floor;
	x->f[t] = (float)(now / d);
	x->ret->kernels++;
	x->ret->kernel_ns[0] += d;
	x->ret->kernel_ns[1] += d * x->f[t];
}

static void retime_task(struct rank_ctx *x, uint32_t t)
{
	const struct orr_event *e = orr_graph_task_event(x->c.g, t);
	uint32_t launch = orr__launch_event(x->c.g, t);
	const struct orr_trace *tr = orr_graph_trace(x->c.g);
	double k, d = (double)orr_graph_tasks(x->c.g)[t].dur_ns, *sum;
	bool tp = false;

	if (e->coll < x->c.r->ncollectives) {
		k = coll_factor(&x->c, t, orr__in_backward(tr, x->c.r, x->c.parent, launch),
				in_optimizer(tr, x->c.r, x->c.parent, launch), &tp);
		if (k > 0) {
			x->f[t] = (float)k;
			x->ret->collectives++;
			sum = tp ? x->ret->tp_ns : x->ret->dp_ns;
			sum[0] += d;
			sum[1] += d * x->f[t];
		} else {
			x->ret->kept++;
			x->ret->kept_ns += d;
		}
		return;
	}
	if (e->kind == ORR_EVENT_KERNEL && launch != ORR_NONE) {
		retime_kernel(x, t, launch);
	} else {
		x->ret->kept++;
		x->ret->kept_ns += d;
	}
}

static void retime_rank(struct rank_ctx *x, size_t ri, const bool *gemm)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(x->c.g, ri);
	const struct orr_task *tasks = orr_graph_tasks(x->c.g);
	uint32_t *parent = orr__call_parents(gr->rank);

	x->c.r = gr->rank;
	x->c.parent = parent;
	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++)
		if (tasks[t].kind == ORR_TASK_GPU && !gemm[t])
			retime_task(x, t);
	free(parent);
}

int orr__retime(const struct orr_graph *g, const struct orr_structure *st,
		const struct orr_train_config *from, const struct orr_train_config *to,
		const struct orr_retime_models *m, bool layers, float *ret_factors,
		struct orr_retime *ret, const char **ret_why)
{
	size_t n = orr_graph_task_count(g);
	struct rank_ctx x = { .c = { .g = g, .from = from, .to = to, .m = m, .ret = ret },
			      .km = m ? m->kern : NULL,
			      .f = ret_factors,
			      .ret = ret };
	const char *why = structural_change(from, to, layers);
	bool *gemm;

	memset(ret, 0, sizeof(*ret));
	if (ret_why)
		*ret_why = why;
	if (why)
		return -ENOTSUP;
	if (!orr__train_config_valid(from) || !orr__train_config_valid(to))
		return -EINVAL;
	x.c.gpu = orr_gpu_spec_find(g);
	x.c.gpn = m && m->gpus_per_node > 0 ? m->gpus_per_node
		  : x.c.gpu                 ? x.c.gpu->gpus_per_node
					    : 0;
	for (size_t t = 0; t < n; t++)
		ret_factors[t] = 1;
	gemm = orr_xcalloc(n + 1, sizeof(*gemm));
	retime_gemms(g, st, from, to, m ? m->gemm : NULL, ret_factors, gemm, ret);
	for (size_t ri = 0; ri < orr_graph_rank_count(g); ri++)
		retime_rank(&x, ri, gemm);
	free(gemm);
	return 0;
}

int orr_retime(const struct orr_graph *g, const struct orr_structure *st,
	       const struct orr_train_config *from, const struct orr_train_config *to,
	       const struct orr_retime_models *m, float *ret_factors, struct orr_retime *ret,
	       const char **ret_why)
{
	return orr__retime(g, st, from, to, m, false, ret_factors, ret, ret_why);
}

const char *orr_retime_structural(const struct orr_train_config *from,
				  const struct orr_train_config *to)
{
	return structural_change(from, to, true);
}
