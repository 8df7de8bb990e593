/* SPDX-License-Identifier: MIT */
/*
 * The names `orrery critical-path` lists time under.  A GPU task is its kernel, copy
 * or set.  A CPU call is the framework op that issued it: the op with the call's
 * external id (Kineto links an op to its runtime calls so).  The CPU time between two
 * calls of a thread belongs to none of them; it is listed under the innermost op or
 * annotation that was running on the thread at that moment of the measured timeline,
 * e.g. a data loader's `enumerate(DataLoader)#...`, not under the call that follows.
 *
 * That op is the last one of the thread, in start order, that started by then and had
 * not ended: a max-tree over the ends of the spans in that order finds it in O(log n),
 * however many ops ended before (a walk back over them made a thread of 100,000 short
 * ops followed by 100,000 calls quadratic).
 */
#include <stdlib.h>

#include "orrery/analysis.h"
#include "banned.h"

struct ext_op {
	int64_t external_id;
	uint32_t event;
};

struct span {
	uint32_t place;
	uint32_t event;
};

struct orr_op_names {
	const struct orr_graph *g;
	struct ext_op **ext; /* per graph rank: ops by external id, then event */
	size_t *n_ext;
	struct span **spans; /* per graph rank: ops and annotations by place, then start */
	size_t *n_spans;
	/* per graph rank: the ends of spans[] in a max-tree, leaves from index size[] on */
	int64_t **ends;
	size_t *size;
};

static int cmp_ext(const void *a, const void *b)
{
	const struct ext_op *x = a, *y = b;

	if (x->external_id != y->external_id)
		return (x->external_id > y->external_id) - (x->external_id < y->external_id);
	return (x->event > y->event) - (x->event < y->event);
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->place != y->place)
		return (x->place > y->place) - (x->place < y->place);
	return (x->event > y->event) - (x->event < y->event); /* events are in start order */
}

static void index_rank(struct orr_op_names *n, size_t i)
{
	const struct orr_trace *t = orr_graph_trace(n->g);
	const struct orr_rank *r = orr_graph_get_rank(n->g, i)->rank;
	size_t cap_ext = 0, cap_spans = 0;

	for (uint32_t e = 0; e < r->nevents; e++) {
		const struct orr_event *ev = &r->events[e];

		if (ev->kind == ORR_EVENT_OP && ev->external_id >= 0)
			ORR_VEC_PUSH(n->ext[i], n->n_ext[i], cap_ext,
				     ((struct ext_op){ ev->external_id, e }));
		/* Step annotations hold everything: they would name every gap. */
		if (ev->kind == ORR_EVENT_OP || (ev->kind == ORR_EVENT_ANNOTATION &&
						 orr_step_number(orr_trace_str(t, ev->name)) < 0))
			ORR_VEC_PUSH(n->spans[i], n->n_spans[i], cap_spans,
				     ((struct span){ ev->place, e }));
	}
	if (n->n_ext[i])
		qsort(n->ext[i], n->n_ext[i], sizeof(*n->ext[i]), cmp_ext);
	if (n->n_spans[i])
		qsort(n->spans[i], n->n_spans[i], sizeof(*n->spans[i]), cmp_span);
	for (n->size[i] = 1; n->size[i] < n->n_spans[i]; n->size[i] *= 2)
		;
	n->ends[i] = orr_xmalloc(2 * n->size[i] * sizeof(*n->ends[i]));
	for (size_t k = 0; k < n->size[i]; k++) {
		const struct orr_event *e = k < n->n_spans[i] ? &r->events[n->spans[i][k].event]
							      : NULL;

		n->ends[i][n->size[i] + k] = e ? e->start_ns + e->dur_ns : INT64_MIN;
	}
	for (size_t k = n->size[i] - 1; k > 0; k--)
		n->ends[i][k] = n->ends[i][2 * k] > n->ends[i][2 * k + 1] ? n->ends[i][2 * k]
									  : n->ends[i][2 * k + 1];
}

struct orr_op_names *orr_op_names_new(const struct orr_graph *g)
{
	struct orr_op_names *n = orr_xcalloc(1, sizeof(*n));
	size_t nranks = orr_graph_rank_count(g);

	n->g = g;
	n->ext = orr_xcalloc(nranks + 1, sizeof(*n->ext));
	n->n_ext = orr_xcalloc(nranks + 1, sizeof(*n->n_ext));
	n->spans = orr_xcalloc(nranks + 1, sizeof(*n->spans));
	n->n_spans = orr_xcalloc(nranks + 1, sizeof(*n->n_spans));
	n->ends = orr_xcalloc(nranks + 1, sizeof(*n->ends));
	n->size = orr_xcalloc(nranks + 1, sizeof(*n->size));
	for (size_t i = 0; i < nranks; i++)
		index_rank(n, i);
	return n;
}

void orr_op_names_free(struct orr_op_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < orr_graph_rank_count(n->g); i++) {
		free(n->ext[i]);
		free(n->spans[i]);
		free(n->ends[i]);
	}
	free(n->ext);
	free(n->n_ext);
	free(n->spans);
	free(n->n_spans);
	free(n->ends);
	free(n->size);
	free(n);
}

static size_t rank_of(const struct orr_op_names *n, uint32_t task)
{
	return orr_graph_procs(n->g)[orr_graph_tasks(n->g)[task].proc].rank;
}

uint32_t orr_op_name(const struct orr_op_names *n, uint32_t task)
{
	const struct orr_event *e = orr_graph_task_event(n->g, task);
	size_t rank = rank_of(n, task), lo = 0, hi = n->n_ext[rank];
	const struct ext_op *v = n->ext[rank];

	if (orr_graph_tasks(n->g)[task].kind != ORR_TASK_CPU || e->external_id < 0)
		return e->name;
	while (lo < hi) { /* the first op with this external id */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].external_id < e->external_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n->n_ext[rank] && v[lo].external_id == e->external_id)
		return orr_graph_get_rank(n->g, rank)->rank->events[v[lo].event].name;
	return e->name;
}

/*
 * The last of the spans [from, to) whose end is later than t_ns, or SIZE_MAX: node k of
 * the max-tree covers spans [lo, hi).  A subtree is entered only when it holds such an
 * end, so past the two paths along the range's ends every descent finds one.
 */
static size_t last_running(const struct orr_op_names *n, size_t rank, size_t k, size_t lo,
			   size_t hi, size_t from, size_t to, int64_t t_ns)
{
	size_t mid = lo + (hi - lo) / 2, at;

	if (hi <= from || to <= lo || n->ends[rank][k] <= t_ns)
		return SIZE_MAX;
	if (hi - lo == 1)
		return lo;
	at = last_running(n, rank, 2 * k + 1, mid, hi, from, to, t_ns);
	return at != SIZE_MAX ? at : last_running(n, rank, 2 * k, lo, mid, from, to, t_ns);
}

uint32_t orr_op_name_at(const struct orr_op_names *n, uint32_t task, int64_t t_ns)
{
	size_t rank = rank_of(n, task);
	const struct orr_rank *r = orr_graph_get_rank(n->g, rank)->rank;
	const struct span *v = n->spans[rank];
	uint32_t place = orr_graph_task_event(n->g, task)->place;
	size_t lo = 0, hi = n->n_spans[rank], first, at;

	while (lo < hi) { /* the first span of the place */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].place < place)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = n->n_spans[rank];
	while (lo < hi) { /* past the last span of the place starting at or before t_ns */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].place == place && r->events[v[mid].event].start_ns <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* In start order, the last span still running at t_ns is the innermost. */
	at = last_running(n, rank, 1, 0, n->size[rank], first, lo, t_ns);
	return at != SIZE_MAX ? r->events[v[at].event].name : ORR_STR_NONE;
}
