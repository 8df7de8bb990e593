/* SPDX-License-Identifier: MIT */
/*
 * The collectives of a graph as samples for the collective model.
 *
 * An instance coupled across ranks (D7) gives one sample whose time is its members'
 * shortest kernel: every member waits in its kernel for the last to arrive, so the
 * last to arrive, the shortest, is the transfer itself (replay's rule, DESIGN.md).  A
 * collective seen on one rank alone gives its kernel's time, which includes waiting
 * for the others: such samples are marked, and the fit prefers the coupled ones.
 *
 * S is nccl-tests' whole buffer: the input of all-reduce, broadcast, reduce and
 * all-to-all, the gathered output of all-gather, the scattered input of reduce-scatter
 * (per-rank sizes times the group where only those are known).  A trace without
 * sizes (no record_param_comms) still shows the op that called the collective: for
 * the in-place kinds (all-reduce, broadcast, reduce), whose buffer is their caller's
 * tensor, S is the tensor of the innermost op around the launch that records tensor
 * shapes, when that op has exactly one (PyTorch's c10d ops record a TensorList
 * without shapes, so this is the framework's op that called them: Megatron's
 * _ReduceFromModelParallelRegion).  The link class is the
 * node's fabric when every member was traced on one host, the network when members
 * were traced on different hosts, and unknown otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

const char *orr_link_name(enum orr_link l)
{
	switch (l) {
	case ORR_LINK_NODE:
		return "node";
	case ORR_LINK_NETWORK:
		return "network";
	case ORR_LINK_UNKNOWN:
		return "unknown";
	}
	return NULL;
}

/* nccl-tests' S for collective co of kind k over n ranks; <= 0 when unknown. */
static double buffer_bytes(enum orr_coll_kind k, const struct orr_collective *co, int n)
{
	double in = (double)co->in_bytes, out = (double)co->out_bytes;

	switch (k) {
	case ORR_COLL_ALL_GATHER:
		return out > 0 ? out : in > 0 ? in * n : -1;
	case ORR_COLL_REDUCE_SCATTER:
		return in > 0 ? in : out > 0 ? out * n : -1;
	default:
		return in > 0 ? in : out;
	}
}

struct member {
	const struct orr_rank *rank;
	const struct orr_collective *co;
	int64_t dur_ns;
	double caller_bytes; /* from the op around the launch, <= 0 when none */
};

/* Call trees, one per graph rank, made when first needed. */
struct trees {
	const struct orr_graph *g;
	uint32_t **parents;
};

static const uint32_t *parents_of(struct trees *tr, uint32_t rank)
{
	if (!tr->parents)
		tr->parents = orr_xcalloc(orr_graph_rank_count(tr->g), sizeof(*tr->parents));
	if (!tr->parents[rank])
		tr->parents[rank] = orr__call_parents(orr_graph_get_rank(tr->g, rank)->rank);
	return tr->parents[rank];
}

static void trees_free(struct trees *tr)
{
	for (size_t i = 0; tr->parents && i < orr_graph_rank_count(tr->g); i++)
		free(tr->parents[i]);
	free(tr->parents);
}

uint32_t orr__launch_event(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_dep *deps = orr_graph_deps(g);

	for (uint32_t d = task->first_dep; d < task->first_dep + task->ndeps; d++)
		if (deps[d].kind == ORR_DEP_LAUNCH)
			return orr_graph_tasks(g)[deps[d].src].event;
	return ORR_NONE;
}

/*
 * Bytes of op event e's tensor when it has exactly one input with a shape (and a known
 * dtype): the framework's wrapper of one collective (Megatron's mappings take the one
 * tensor they reduce).  An op with several tensors cannot say which one went to the
 * collective (Megatron's cross-entropy all-reduces a per-token maximum, not its logits
 * input), so it gives none.  *ret_has_tensor: e records any tensor shape at all.
 */
static double tensor_bytes(const struct orr_trace *t, const struct orr_rank *r,
			   const struct orr_event *e, bool *ret_has_tensor)
{
	const struct orr_input *one = NULL;
	const struct orr_op_args *a;
	double n = 1;
	int size;

	*ret_has_tensor = false;
	if (e->kind != ORR_EVENT_OP || e->args >= r->nops)
		return -1;
	a = &r->ops[e->args];
	for (uint32_t i = a->first_input; i < a->first_input + a->ninputs && i < r->ninputs; i++) {
		const struct orr_input *in = &r->inputs[i];

		if (in->is_list || in->ndims == 0)
			continue;
		if (one)
			return -1; /* two tensors */
		one = in;
		*ret_has_tensor = true;
	}
	if (!one || one->dtype == ORR_STR_NONE)
		return -1;
	size = orr_dtype_bytes(orr_trace_str(t, one->dtype));
	for (uint32_t d = 0; d < one->ndims && one->first_dim + d < r->ndims; d++)
		n *= (double)r->dims[one->first_dim + d];
	return size > 0 ? n * size : -1;
}

/* S from the innermost op around GPU task t's launch that records a tensor; <= 0. */
double orr__caller_bytes(const struct orr_graph *g, const uint32_t *parent,
			 const struct orr_rank *r, uint32_t t)
{
	uint32_t e = orr__launch_event(g, t);

	if (e == ORR_NONE || e >= r->nevents)
		return -1;
	for (int depth = 0; depth < 16 && (e = parent[e]) != ORR_NONE; depth++) {
		bool has_tensor;
		double b = tensor_bytes(orr_graph_trace(g), r, &r->events[e], &has_tensor);

		if (has_tensor)
			return b;
	}
	return -1;
}

static double caller_bytes(struct trees *tr, uint32_t t, uint32_t rank)
{
	return orr__caller_bytes(tr->g, parents_of(tr, rank), orr_graph_get_rank(tr->g, rank)->rank,
				 t);
}

/* Task t's rank and collective, when it has one. */
static bool member_of(struct trees *tr, uint32_t t, struct member *m)
{
	const struct orr_graph *g = tr->g;
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_proc *p = &orr_graph_procs(g)[task->proc];
	const struct orr_rank *r = orr_graph_get_rank(g, p->rank)->rank;
	const struct orr_event *e = &r->events[task->event];
	const struct orr_collective *co;
	enum orr_coll_kind k;

	if (task->kind != ORR_TASK_GPU || e->coll >= r->ncollectives)
		return false;
	co = &r->collectives[e->coll];
	*m = (struct member){ r, co, task->dur_ns, -1 };
	k = orr_coll_kind_of(orr_trace_str(orr_graph_trace(g), co->type));
	if (co->in_bytes <= 0 && co->out_bytes <= 0 &&
	    (k == ORR_COLL_ALL_REDUCE || k == ORR_COLL_BROADCAST || k == ORR_COLL_REDUCE))
		m->caller_bytes = caller_bytes(tr, t, p->rank);
	return true;
}

/* One sample from members ms[0..n) of one instance; false when it cannot be one. */
static bool observe(const struct orr_trace *t, const struct member *ms, size_t n, uint32_t task,
		    struct orr_coll_obs *o)
{
	const struct orr_collective *co = ms[0].co;
	int group = co->group_size > 0 ? co->group_size : n > 1 ? (int)n : -1;
	int64_t dur = ms[0].dur_ns;
	uint32_t host = ms[0].rank->host;
	bool one_host = host != ORR_STR_NONE;

	memset(o, 0, sizeof(*o));
	o->kind = orr_coll_kind_of(orr_trace_str(t, co->type));
	if (o->kind == ORR_COLL_UNKNOWN || group < 1 || orr_coll_bus_factor(o->kind, group) <= 0)
		return false;
	for (size_t i = 1; i < n; i++) {
		dur = ms[i].dur_ns < dur ? ms[i].dur_ns : dur;
		if (ms[i].rank->host == ORR_STR_NONE)
			one_host = false;
		else if (host != ORR_STR_NONE && ms[i].rank->host != host)
			o->link = ORR_LINK_NETWORK;
	}
	if (o->link != ORR_LINK_NETWORK && one_host && (int)n == group)
		o->link = ORR_LINK_NODE;
	o->alone = n < 2;
	o->task = task;
	o->s = (struct orr_coll_sample){ buffer_bytes(o->kind, co, group), group, (double)dur };
	for (size_t i = 0; i < n && !(o->s.bytes > 0); i++) {
		o->s.bytes = ms[i].caller_bytes;
		o->sized_by_caller = true;
	}
	return o->s.bytes > 0 && o->s.ns > 0;
}

size_t orr_coll_observe(const struct orr_graph *g, struct orr_coll_obs **ret)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_group *groups = orr_graph_groups(g);
	const uint32_t *members = orr_graph_members(g);
	struct orr_coll_obs *v = NULL, o;
	struct member *ms = NULL;
	struct trees tr = { g, NULL };
	size_t n = 0, cap = 0, mcap = 0;

	for (size_t gi = 0; gi < orr_graph_group_count(g); gi++) {
		const struct orr_group *gr = &groups[gi];
		size_t nm = 0;

		if (gr->n > mcap)
			ms = orr_xgrow(ms, sizeof(*ms), &mcap, gr->n);
		for (uint32_t i = 0; i < gr->n; i++)
			nm += member_of(&tr, members[gr->first + i], &ms[nm]);
		if (nm && observe(orr_graph_trace(g), ms, nm, members[gr->first], &o))
			ORR_VEC_PUSH(v, n, cap, o);
	}
	for (uint32_t t = 0; t < orr_graph_task_count(g); t++) {
		struct member m;

		if (tasks[t].aux != ORR_NONE || !(tasks[t].flags & ORR_TASK_F_COMM) ||
		    !member_of(&tr, t, &m))
			continue;
		if (observe(orr_graph_trace(g), &m, 1, t, &o))
			ORR_VEC_PUSH(v, n, cap, o);
	}
	free(ms);
	trees_free(&tr);
	*ret = v;
	return n;
}
