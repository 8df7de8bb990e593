/* SPDX-License-Identifier: MIT */
/*
 * An execution trace linked to its rank's profiler trace of the same step
 * (docs/inputs.md): each node that stands for an op or an annotation (not the root and
 * thread nodes, not the "## ... ##" markers) gets the rank's op or annotation event it
 * is, so that it carries a measured CPU span and, through the event, its launches,
 * kernels and streams.
 *
 * Both run in one order: the ET's node ids are given as the ops start, and the rank's
 * events are sorted by start (a parent before the child that starts with it).  The ET
 * covers one step of a capture that may hold several, alike, so the link starts where
 * the longest run of the ET's first ops appears in a row among the events, then walks both
 * in step: the same name links; otherwise the nearest pair ahead, within WINDOW of each,
 * whose names agree resynchronises (what lies between stays unlinked); with none, the
 * link resumes at the next place ahead where ANCHOR of the ET's names from this node
 * appear in a row, else the node stays unlinked (and the next ones try that resumption
 * alone, a hash lookup, until one links).  Names compare exactly.  The link is exact when every node
 * and every event of the ET's span link one to one.
 *
 * What the ET then adds: the size of a collective the profiler's trace leaves unsized.
 * A linked record_param_comms node (PyTorch's c10d wrapper around each collective call)
 * holds the tensors the collective reads and writes; an NCCL kernel launched inside its
 * op whose collective has no size takes their bytes (elements times element size).
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "banned.h"

#define WINDOW     64
#define ANCHOR     8
#define CANDIDATES 1024

struct orr__et_build *orr__et_new(void)
{
	struct orr__et_build *eb = orr_xcalloc(1, sizeof(*eb));

	eb->nodes.elem = sizeof(struct orr_et_node);
	eb->values.elem = sizeof(struct orr_et_value);
	eb->dims.elem = sizeof(int64_t);
	eb->groups.elem = sizeof(struct orr_et_group);
	eb->group_ranks.elem = sizeof(int32_t);
	eb->rank = -1;
	eb->pub.pid = eb->pub.start_ts = eb->pub.finish_ts = -1;
	return eb;
}

void orr__et_free(struct orr__et_build *eb)
{
	if (!eb)
		return;
	free(eb->nodes.p);
	free(eb->values.p);
	free(eb->dims.p);
	free(eb->groups.p);
	free(eb->group_ranks.p);
	free(eb);
}

/* A node for an op or a record_function annotation, not a root or a marker. */
static bool is_op_node(const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(name, "[pytorch|profiler|execution_", 28))
		return false;
	return !(n >= 6 && !strncmp(name, "## ", 3) && !strcmp(name + n - 3, " ##"));
}

struct by_id {
	int64_t id;
	uint32_t node;
};

static int cmp_id(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->node > y->node) - (x->node < y->node);
}

/*
 * Where the ET's names e[0..ne) start among the event names v[0..nv): of the places
 * where its first ANCHOR names appear in a row (the first CANDIDATES of them), the one
 * where the most of them follow in a row, the first of equals; nv if none.
 */
static size_t anchor(const uint32_t *e, size_t ne, const uint32_t *v, size_t nv)
{
	size_t run = ne < ANCHOR ? ne : ANCHOR, best = nv, best_len = 0, tried = 0;

	for (size_t j = 0; j + run <= nv && tried < CANDIDATES; j++) {
		size_t k = 0;

		while (k < ne && j + k < nv && v[j + k] == e[k])
			k++;
		if (k < run)
			continue;
		tried++;
		if (k > best_len) {
			best = j;
			best_len = k;
		}
		if (best_len == ne)
			break;
	}
	return best;
}

/* Runs of ANCHOR event names, by a hash of them, for finding where the ET resumes. */
struct run {
	uint64_t hash;
	uint32_t pos;
};

static uint64_t run_hash(const uint32_t *names)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t k = 0; k < ANCHOR; k++)
		h = (h ^ names[k]) * 1099511628211ull;
	return h;
}

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->hash != y->hash)
		return (x->hash > y->hash) - (x->hash < y->hash);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Every run of the events' names, sorted; *ret_n of them. */
static struct run *index_runs(const uint32_t *v, size_t nv, size_t *ret_n)
{
	size_t n = nv >= ANCHOR ? nv - ANCHOR + 1 : 0;
	struct run *r = orr_xmalloc((n + 1) * sizeof(*r));

	for (size_t j = 0; j < n; j++)
		r[j] = (struct run){ run_hash(v + j), (uint32_t)j };
	if (n)
		qsort(r, n, sizeof(*r), cmp_run);
	*ret_n = n;
	return r;
}

/* The first place at or after j where the ET's names from i appear ANCHOR in a row; nv if none. */
static size_t reanchor(const uint32_t *e, size_t ne, size_t i, const uint32_t *v, size_t nv,
		       size_t j, const struct run *runs, size_t nruns)
{
	struct run key;
	size_t lo = 0, hi = nruns;

	if (i + ANCHOR > ne)
		return nv;
	key = (struct run){ run_hash(e + i), (uint32_t)j };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_run(&runs[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nruns && runs[lo].hash == key.hash; lo++)
		if (!memcmp(v + runs[lo].pos, e + i, ANCHOR * sizeof(*e)))
			return runs[lo].pos;
	return nv;
}

/* The nearest (di, dj), by di + dj, with e[i + di] == v[j + dj]; false when none. */
static bool resync(const uint32_t *e, size_t ne, size_t i, const uint32_t *v, size_t nv, size_t j,
		   size_t *ret_di, size_t *ret_dj)
{
	for (size_t sum = 1; sum < 2 * WINDOW; sum++)
		for (size_t di = 0; di <= sum && di < WINDOW; di++) {
			size_t dj = sum - di;

			if (dj < WINDOW && i + di < ne && j + dj < nv && e[i + di] == v[j + dj]) {
				*ret_di = di;
				*ret_dj = dj;
				return true;
			}
		}
	return false;
}

/* Bytes of the tensors of value v (a tensor, or a list of them); -1 when none. */
static int64_t tensor_bytes(const struct orr__et_build *eb, const struct orr_et_value *v)
{
	const struct orr_et_value *vals = eb->values.p;
	int64_t sum = -1;

	if (v->kind == ORR_ET_TENSOR)
		return v->numel >= 0 && v->itemsize > 0 && v->numel <= INT64_MAX / v->itemsize
			       ? v->numel * v->itemsize
			       : -1;
	if (v->kind != ORR_ET_LIST)
		return -1;
	for (uint32_t i = v->first_elem; i < v->first_elem + v->nelems && i < eb->values.n; i++) {
		int64_t b = vals[i].kind == ORR_ET_TENSOR ? tensor_bytes(eb, &vals[i]) : -1;

		if (b >= 0)
			sum = sum < 0 ? b : sum > INT64_MAX - b ? -1 : sum + b;
	}
	return sum;
}

struct corr_kernel {
	int64_t corr;
	uint32_t event;
};

static int cmp_corr(const void *a, const void *b)
{
	const struct corr_kernel *x = a, *y = b;

	return (x->corr > y->corr) - (x->corr < y->corr);
}

/*
 * The kernels launched inside node's op whose collective has no size take in, out; and
 * its group's size and name (1.1.x schemas) where they have none.
 */
static size_t size_launched(struct orr__rank_build *rb, const struct corr_kernel *k, size_t nk,
			    const struct orr_et_node *node, int64_t in, int64_t out)
{
	uint32_t e = node->event;
	struct orr_event *ev = rb->events.p;
	struct orr_collective *co = rb->colls.p;
	int64_t end = orr_time_add(ev[e].start_ns, ev[e].dur_ns);
	size_t n = 0;

	for (size_t i = e + 1; i < rb->events.n && ev[i].start_ns <= end; i++) {
		struct corr_kernel key = { ev[i].correlation, 0 }, *hit;

		if (ev[i].place != ev[e].place || ev[i].sub != ORR_CALL_LAUNCH ||
		    (ev[i].kind != ORR_EVENT_RUNTIME && ev[i].kind != ORR_EVENT_DRIVER) ||
		    !(hit = bsearch(&key, k, nk, sizeof(*k), cmp_corr)))
			continue;
		struct orr_collective *c = &co[ev[hit->event].coll];

		if (c->in_bytes < 0 && c->out_bytes < 0) {
			c->in_bytes = in;
			c->out_bytes = out;
			n++;
		}
		if (c->group_size < 0 && node->pg_size > 0)
			c->group_size = node->pg_size;
		if (c->pg_name == ORR_STR_NONE)
			c->pg_name = node->pg_name;
	}
	return n;
}

/* Sizes from the linked record_param_comms nodes (see the top of the file). */
static void comm_sizes(const struct orr_trace *t, struct orr__rank_build *rb,
		       struct orr__et_build *eb)
{
	const struct orr_et_node *nodes = eb->nodes.p;
	const struct orr_et_value *vals = eb->values.p;
	const struct orr_event *ev = rb->events.p;
	uint32_t name = orr_strtab_find(t->strs, "record_param_comms", 18);
	struct corr_kernel *k = NULL;
	size_t nk = 0, cap = 0;

	if (name == ORR_STR_NONE)
		return;
	for (size_t i = 0; i < rb->events.n; i++)
		if (ev[i].kind == ORR_EVENT_KERNEL && ev[i].coll < rb->colls.n &&
		    ev[i].correlation >= 0)
			ORR_VEC_PUSH(k, nk, cap,
				     ((struct corr_kernel){ ev[i].correlation, (uint32_t)i }));
	if (nk)
		qsort(k, nk, sizeof(*k), cmp_corr);
	for (size_t i = 0; i < eb->nodes.n && nk; i++) {
		const struct orr_et_node *n = &nodes[i];
		int64_t in = n->ninputs ? tensor_bytes(eb, &vals[n->first_input]) : -1,
			out = n->noutputs ? tensor_bytes(eb, &vals[n->first_output]) : -1;

		if (n->name != name || n->event == ORR_NONE || (in < 0 && out < 0))
			continue;
		eb->pub.sized += size_launched(rb, k, nk, n, in, out);
	}
	free(k);
}

/* A rank without communicators (no pg_config) takes the ET's process groups. */
static void add_groups(struct orr__rank_build *rb, const struct orr__et_build *eb)
{
	const struct orr_et_group *g = eb->groups.p;
	const int32_t *ranks = eb->group_ranks.p;

	if (rb->comms.n)
		return;
	for (size_t i = 0; i < eb->groups.n; i++) {
		struct orr_comm *c = orr__vec_push(&rb->comms);

		*c = (struct orr_comm){ .name = g[i].name,
					.desc = g[i].desc,
					.backend = g[i].backend,
					.size = g[i].size,
					.first_member = (uint32_t)rb->members.n };
		for (uint32_t r = g[i].first_rank; r < g[i].first_rank + g[i].nranks; r++)
			*(int32_t *)orr__vec_push(&rb->members) = ranks[r];
		ORR__AT(rb->comms, struct orr_comm, i)->nmembers = g[i].nranks;
	}
	rb->pub.comms = rb->comms.p;
	rb->pub.ncomms = rb->comms.n;
	rb->pub.members = rb->members.p;
	rb->pub.nmembers = rb->members.n;
}

/* What is linked: the ET's op nodes by id and the rank's op events, each with its names. */
struct link_lists {
	struct by_id *eo;  /* ET op nodes, by id */
	uint32_t *en;      /* their names */
	uint32_t *vo, *vn; /* the rank's op events and their names */
	size_t ne, nv;
};

static void lists_init(const struct orr_trace *t, const struct orr__rank_build *rb,
		       const struct orr__et_build *eb, struct link_lists *l)
{
	const struct orr_et_node *nodes = eb->nodes.p;
	const struct orr_event *ev = rb->pub.events;

	*l = (struct link_lists){ .eo = orr_xmalloc((eb->nodes.n + 1) * sizeof(*l->eo)) };
	for (size_t k = 0; k < eb->nodes.n; k++)
		if (is_op_node(orr_strtab_get(t->strs, nodes[k].name)))
			l->eo[l->ne++] = (struct by_id){ nodes[k].id, (uint32_t)k };
	if (l->ne)
		qsort(l->eo, l->ne, sizeof(*l->eo), cmp_id);
	l->en = orr_xmalloc((l->ne + 1) * sizeof(*l->en));
	for (size_t k = 0; k < l->ne; k++)
		l->en[k] = nodes[l->eo[k].node].name;
	l->vo = orr_xmalloc((rb->pub.nevents + 1) * sizeof(*l->vo));
	l->vn = orr_xmalloc((rb->pub.nevents + 1) * sizeof(*l->vn));
	for (size_t k = 0; k < rb->pub.nevents; k++)
		if (ev[k].kind == ORR_EVENT_OP || ev[k].kind == ORR_EVENT_ANNOTATION) {
			l->vo[l->nv] = (uint32_t)k;
			l->vn[l->nv++] = ev[k].name;
		}
}

static void lists_release(struct link_lists *l)
{
	free(l->eo);
	free(l->en);
	free(l->vo);
	free(l->vn);
}

/*
 * Walks both lists in order, linking each node to the event of its name: across a small
 * gap by resync(), across a wider one by reanchor(); a node found nowhere is stepped
 * over.  Counts the links and the rank's ops from the first linked to the last.
 */
static void link_walk(const struct link_lists *l, struct orr__et_build *eb)
{
	struct orr_et_node *nodes = eb->nodes.p;
	const uint32_t *en = l->en, *vn = l->vn;
	size_t ne = l->ne, nv = l->nv, i = 0, j, first = SIZE_MAX, last = 0, nruns;
	struct run *runs;
	bool lost = false; /* no resync since a node was stepped over: re-anchor only */

	j = anchor(en, ne, vn, nv);
	runs = index_runs(vn, nv, &nruns);
	while (i < ne && j < nv) {
		size_t di, dj, at;

		if (en[i] != vn[j] && !lost && resync(en, ne, i, vn, nv, j, &di, &dj)) {
			i += di;
			j += dj;
		}
		if (en[i] != vn[j]) {
			/* A gap wider than the window: resume where a run of names is next. */
			if ((at = reanchor(en, ne, i, vn, nv, j, runs, nruns)) < nv) {
				j = at;
				lost = false;
				continue;
			}
			i++; /* not in the profiler's trace */
			lost = true;
			continue;
		}
		lost = false;
		nodes[l->eo[i].node].event = l->vo[j];
		eb->pub.linked++;
		first = first < j ? first : j;
		last = j;
		i++, j++;
	}
	eb->pub.ops = ne;
	eb->pub.rank_ops = first == SIZE_MAX ? 0 : last - first + 1;
	eb->pub.exact = ne && eb->pub.linked == ne && eb->pub.linked == eb->pub.rank_ops;
	free(runs);
}

/* The span of the events linked: where the observer was recording on the rank. */
static void linked_span(const struct orr__rank_build *rb, struct orr__et_build *eb)
{
	const struct orr_et_node *nodes = eb->nodes.p;
	const struct orr_event *ev = rb->pub.events;
	int64_t lo = INT64_MAX, hi = INT64_MIN, end;

	for (size_t k = 0; k < eb->nodes.n; k++) {
		const struct orr_event *e;

		if (nodes[k].event == ORR_NONE)
			continue;
		e = &ev[nodes[k].event];
		end = orr_time_add(e->start_ns, e->dur_ns > 0 ? e->dur_ns : 1);
		lo = e->start_ns < lo ? e->start_ns : lo;
		hi = end > hi ? end : hi;
	}
	eb->pub.linked_from_ns = lo <= hi ? lo : 0;
	eb->pub.linked_to_ns = lo <= hi ? hi : 0;
}

void orr__et_link(const struct orr_trace *t, struct orr__rank_build *rb, struct orr__et_build *eb)
{
	struct link_lists l;

	lists_init(t, rb, eb, &l);
	link_walk(&l, eb);
	lists_release(&l);
	linked_span(rb, eb);
	comm_sizes(t, rb, eb);
	add_groups(rb, eb);
	eb->pub.nodes = eb->nodes.p;
	eb->pub.nnodes = eb->nodes.n;
	eb->pub.values = eb->values.p;
	eb->pub.nvalues = eb->values.n;
	eb->pub.dims = eb->dims.p;
	eb->pub.ndims = eb->dims.n;
	eb->pub.groups = eb->groups.p;
	eb->pub.ngroups = eb->groups.n;
	eb->pub.group_ranks = eb->group_ranks.p;
	eb->pub.ngroup_ranks = eb->group_ranks.n;
	rb->pub.et = &eb->pub;
}
