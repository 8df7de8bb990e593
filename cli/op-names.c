/* SPDX-License-Identifier: MIT */
/*
 * The names `orrery critical-path` lists time under.  A GPU task is its kernel, copy
 * or set.  A CPU call is the framework op that issued it: the op with the call's
 * external id (Kineto links an op to its runtime calls so).  The CPU time between two
 * calls of a thread belongs to none of them; it is listed under the innermost op or
 * annotation that was running on the thread at that moment of the measured timeline,
 * e.g. a data loader's `enumerate(DataLoader)#...`, not under the call that follows.
 */
#include <stdlib.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

/* Enough to find any op of a normal trace; a bound, so that a pathological one stays fast. */
#define MAX_SCAN 100000

struct ext_op {
	int64_t external_id;
	uint32_t event;
};

struct span {
	uint32_t place;
	uint32_t event;
};

struct cli_op_names {
	const struct orr_graph *g;
	struct ext_op **ext; /* per graph rank: ops by external id, then event */
	size_t *n_ext;
	struct span **spans; /* per graph rank: ops and annotations by place, then start */
	size_t *n_spans;
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

static void index_rank(struct cli_op_names *n, size_t i)
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
}

struct cli_op_names *cli_op_names_new(const struct orr_graph *g)
{
	struct cli_op_names *n = orr_xcalloc(1, sizeof(*n));
	size_t nranks = orr_graph_rank_count(g);

	n->g = g;
	n->ext = orr_xcalloc(nranks + 1, sizeof(*n->ext));
	n->n_ext = orr_xcalloc(nranks + 1, sizeof(*n->n_ext));
	n->spans = orr_xcalloc(nranks + 1, sizeof(*n->spans));
	n->n_spans = orr_xcalloc(nranks + 1, sizeof(*n->n_spans));
	for (size_t i = 0; i < nranks; i++)
		index_rank(n, i);
	return n;
}

void cli_op_names_free(struct cli_op_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < orr_graph_rank_count(n->g); i++) {
		free(n->ext[i]);
		free(n->spans[i]);
	}
	free(n->ext);
	free(n->n_ext);
	free(n->spans);
	free(n->n_spans);
	free(n);
}

static size_t rank_of(const struct cli_op_names *n, uint32_t task)
{
	return orr_graph_procs(n->g)[orr_graph_tasks(n->g)[task].proc].rank;
}

uint32_t cli_op_name(const struct cli_op_names *n, uint32_t task)
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

uint32_t cli_op_name_at(const struct cli_op_names *n, uint32_t task, int64_t t_ns)
{
	const struct orr_rank *r = orr_graph_get_rank(n->g, rank_of(n, task))->rank;
	const struct span *v = n->spans[rank_of(n, task)];
	uint32_t place = orr_graph_task_event(n->g, task)->place;
	size_t lo = 0, hi = n->n_spans[rank_of(n, task)];

	while (lo < hi) { /* past the last span of the place starting at or before t_ns */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].place < place ||
		    (v[mid].place == place && r->events[v[mid].event].start_ns <= t_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Going back in start order, the first span still running at t_ns is the innermost. */
	for (size_t k = 0; lo > 0 && k < MAX_SCAN; k++) {
		const struct orr_event *e = &r->events[v[--lo].event];

		if (v[lo].place != place)
			break;
		if (e->start_ns + e->dur_ns > t_ns)
			return e->name;
	}
	return cli_op_name(n, task);
}
