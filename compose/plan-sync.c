/* SPDX-License-Identifier: MIT */
/*
 * Cross-stream dependencies (D4) as event records and waits, then --repeat, --subgraph
 * and --ops (docs/orrery-compose.md).
 *
 * A D4 edge from GPU task a (stream A) to task b (stream B) becomes a record on A
 * after the item a belongs to, and a wait on B before the item of b: the record and
 * the wait the program made, at the granularity of items.  An edge inside one item, or
 * against the issue order, adds nothing.  A wait before a collective is made, when the
 * benchmark runs real collectives, on the stream it is issued from: the process group
 * makes its own stream wait for that one.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct pair {
	uint32_t src, dst;
	int64_t src_stream, dst_stream;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->dst != y->dst)
		return (x->dst > y->dst) - (x->dst < y->dst);
	return (x->src > y->src) - (x->src < y->src);
}

static size_t find_pairs(const struct orr_compose *c, const struct crank *cr,
			 const uint32_t *item_of, struct pair **ret)
{
	const struct orr_graph *g = c->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, cr->grank);
	struct pair *p = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_task *tk = &orr_graph_tasks(g)[t];

		for (uint32_t d = tk->first_dep; d < tk->first_dep + tk->ndeps; d++) {
			const struct orr_dep *dep = &orr_graph_deps(g)[d];
			uint32_t si, di;

			if (dep->kind != ORR_DEP_CROSS_STREAM || dep->src < gr->first_task ||
			    dep->src >= gr->first_task + gr->ntasks)
				continue;
			si = item_of[dep->src - gr->first_task];
			di = item_of[t - gr->first_task];
			if (si == ORR_NONE || di == ORR_NONE || si >= di)
				continue;
			ORR_VEC_PUSH(p, n, cap,
				     ((struct pair){ si, di,
						     orr__compose_stream(g, cr->r, dep->src),
						     orr__compose_stream(g, cr->r, t) }));
		}
	}
	if (n)
		qsort(p, n, sizeof(*p), cmp_pair);
	for (size_t i = 0; i < n; i++)
		if (!k || p[k - 1].src != p[i].src || p[k - 1].dst != p[i].dst)
			p[k++] = p[i];
	*ret = p;
	return k;
}

static bool dropped_by_ops(const struct orr_compose *c, const struct citem *it)
{
	if (c->o.ops == ORR_COMPOSE_COMPUTE)
		return it->kind == CI_COMM;
	if (c->o.ops == ORR_COMPOSE_COMM)
		return it->kind == CI_OP || it->kind == CI_FILL;
	return false;
}

/* What the base items stand for, and which are kept. */
static void count_base(const struct orr_compose *c, struct crank *cr, bool *kept)
{
	for (size_t i = 0; i < cr->nitems; i++) {
		const struct citem *it = &cr->items[i];

		kept[i] = it->keep && !dropped_by_ops(c, it);
		if (!kept[i])
			cr->st.dropped_ns = orr_time_add(cr->st.dropped_ns, it->gpu_ns);
		else if (it->kind == CI_OP)
			cr->st.op_ns = orr_time_add(cr->st.op_ns, it->gpu_ns);
		else if (it->kind == CI_COMM) {
			cr->st.comm_ns = orr_time_add(cr->st.comm_ns, it->gpu_ns);
			cr->st.comm_wait_ns = orr_time_add(cr->st.comm_wait_ns, it->wait_ns);
		} else if (it->kind == CI_FILL)
			cr->st.fill_ns = orr_time_add(cr->st.fill_ns, it->gpu_ns);
	}
}

static struct citem mark(const struct citem *of, enum citem_kind kind, uint32_t ev, int64_t stream)
{
	struct citem m = *of;

	m.kind = (uint8_t)kind;
	m.ev = ev;
	m.stream = stream;
	m.gpu_ns = m.dur_ns = 0;
	m.comm = false;
	return m;
}

/* The kept items with their waits before and records after, in issue order. */
static void with_events(struct crank *cr, const struct pair *p, size_t np, const bool *kept,
			struct citem **ret, size_t *ret_n)
{
	uint32_t *ev_of = orr_xmalloc((cr->nitems ? cr->nitems : 1) * sizeof(*ev_of));
	int64_t *rec_stream = orr_xmalloc((cr->nitems ? cr->nitems : 1) * sizeof(*rec_stream));
	struct citem *out = NULL;
	size_t n = 0, cap = 0, k = 0;
	uint32_t next_ev = 0;

	for (size_t i = 0; i < cr->nitems; i++)
		ev_of[i] = ORR_NONE;
	for (size_t i = 0; i < np; i++) {
		if (!kept[p[i].src] || !kept[p[i].dst])
			continue;
		if (ev_of[p[i].src] == ORR_NONE) {
			ev_of[p[i].src] = next_ev++;
			rec_stream[p[i].src] = p[i].src_stream;
		}
		if (cr->items[p[i].dst].kind == CI_COMM && cr->items[p[i].dst].from < 0)
			cr->items[p[i].dst].from = p[i].src_stream;
	}
	for (uint32_t i = 0; i < cr->nitems; i++) {
		const struct citem *it = &cr->items[i];

		for (; k < np && p[k].dst == i; k++) {
			struct citem w;

			if (!kept[p[k].src] || !kept[i])
				continue;
			w = mark(it, CI_WAIT, ev_of[p[k].src], p[k].dst_stream);
			w.comm = it->kind == CI_COMM;
			w.from = it->from;
			ORR_VEC_PUSH(out, n, cap, w);
		}
		if (!kept[i])
			continue;
		ORR_VEC_PUSH(out, n, cap, *it);
		if (ev_of[i] != ORR_NONE) {
			struct citem rec = mark(it, CI_RECORD, ev_of[i], rec_stream[i]);

			rec.comm = it->kind == CI_COMM;
			ORR_VEC_PUSH(out, n, cap, rec);
		}
	}
	cr->nevents_waited = next_ev;
	free(ev_of);
	free(rec_stream);
	*ret = out;
	*ret_n = n;
}

/* Each run of items of one --repeat region, that many times in a row. */
static void repeat(struct crank *cr, const struct citem *in, size_t n)
{
	struct citem *out = NULL;
	size_t nout = 0, cap = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (in[i].region != ORR_NONE && j < n && in[j].region == in[i].region)
			j++;
		for (uint32_t k = 0; k < (in[i].region == ORR_NONE ? 1 : in[i].regions); k++)
			for (size_t m = i; m < j; m++)
				ORR_VEC_PUSH(out, nout, cap, in[m]);
		i = j;
	}
	free(cr->items);
	cr->items = out;
	cr->nitems = nout;
	cr->cap = cap;
	for (size_t i = 0; i < nout; i++) {
		cr->st.ops += out[i].kind == CI_OP;
		cr->st.comms += out[i].kind == CI_COMM;
		cr->st.fills += out[i].kind == CI_FILL;
		cr->st.syncs += out[i].kind == CI_SYNC;
		cr->st.records += out[i].kind == CI_RECORD;
		cr->st.waits += out[i].kind == CI_WAIT;
	}
}

void orr__compose_sync(struct orr_compose *c, struct crank *cr, const uint32_t *item_of)
{
	bool *kept = orr_xcalloc(cr->nitems ? cr->nitems : 1, sizeof(*kept));
	struct pair *p;
	size_t np = find_pairs(c, cr, item_of, &p), n;
	struct citem *seq;

	count_base(c, cr, kept);
	with_events(cr, p, np, kept, &seq, &n);
	repeat(cr, seq, n);
	free(seq);
	free(p);
	free(kept);
}
