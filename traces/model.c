/* SPDX-License-Identifier: MIT */
/* The trace object: ranks under construction, their tables, and finishing them. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

void *orr__vec_push(struct orr__vec *v)
{
	void *e;

	if (v->n == v->cap)
		v->p = orr_xgrow(v->p, v->elem, &v->cap, v->n + 1);
	e = (char *)v->p + v->n * v->elem;
	memset(e, 0, v->elem);
	v->n++;
	return e;
}

void *orr__vec_extend(struct orr__vec *v, size_t n)
{
	void *e;

	if (!n)
		return v->p;
	if (n > v->cap - v->n)
		v->p = orr_xgrow(v->p, v->elem, &v->cap, v->n + n);
	e = (char *)v->p + v->n * v->elem;
	v->n += n;
	return e;
}

/* The 19 tables are declared together, places first and metas last: walk them as one array. */
_Static_assert(offsetof(struct orr__rank_build, metas) - offsetof(struct orr__rank_build, places) ==
		       18 * sizeof(struct orr__vec),
	       "struct orr__rank_build: the tables must be contiguous");
_Static_assert(sizeof(((struct orr__mark *)0)->n) == 19 * sizeof(size_t), "a mark per table");

static struct orr__vec *tables(struct orr__rank_build *rb, size_t *ret_n)
{
	*ret_n = 19;
	return &rb->places;
}

void orr__input_fit_strides(const struct orr__rank_build *rb, struct orr_input *in)
{
	const int64_t *d, *s;
	uint32_t i = 0;

	if (!in->nstrides)
		return;
	if (in->nstrides != in->ndims || (size_t)in->first_dim + in->ndims > rb->dims.n ||
	    (size_t)in->first_stride + in->nstrides > rb->strides.n) {
		in->nstrides = 0;
		return;
	}
	d = ORR__AT(rb->dims, int64_t, in->first_dim);
	s = ORR__AT(rb->strides, int64_t, in->first_stride);
	/* a list: the same count before each member */
	while (in->is_list && i < in->ndims) {
		if (d[i] != s[i] || d[i] < 0 || d[i] >= in->ndims - i) {
			in->nstrides = 0;
			return;
		}
		i += 1 + (uint32_t)d[i];
	}
}

void orr__rank_mark(struct orr__rank_build *rb, struct orr__mark *m)
{
	size_t n;
	const struct orr__vec *v = tables(rb, &n);

	for (size_t i = 0; i < n; i++)
		m->n[i] = v[i].n;
	m->ops_with_stack = rb->pub.ops_with_stack;
	m->ops_with_flops = rb->pub.ops_with_flops;
	rb->skipped_undo.n = 0;
}

void orr__rank_rollback(struct orr__rank_build *rb, const struct orr__mark *m)
{
	size_t n;
	struct orr__vec *v = tables(rb, &n);

	for (size_t i = 0; i < n; i++)
		v[i].n = m->n[i];
	rb->pub.ops_with_stack = m->ops_with_stack;
	rb->pub.ops_with_flops = m->ops_with_flops;
	/* the rows kept (the mark's first) take back what was counted since */
	for (size_t i = 0; i < rb->skipped_undo.n; i++) {
		const struct orr__skip_undo *u =
			ORR__AT(rb->skipped_undo, struct orr__skip_undo, i);

		if (u->row < rb->skipped.n)
			ORR__AT(rb->skipped, struct orr_skipped, u->row)->count -= u->count;
	}
	rb->skipped_undo.n = 0;
	rb->last_place = UINT32_MAX;
}

/* ---- hash indexes: a lookup per event must not scan every thread or category ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0x7fb5d329728ea185);
	x ^= x >> 27;
	x *= UINT64_C(0x81dadef4bc2dd44d);
	return x ^ (x >> 33);
}

static uint64_t place_key(enum orr_place_kind kind, int64_t pid, int64_t tid)
{
	return mix(mix((uint64_t)pid ^ ((uint64_t)kind << 63)) ^ (uint64_t)tid);
}

static uint64_t place_hash(const struct orr__vec *v, size_t i)
{
	const struct orr_place *p = ORR__AT(*v, struct orr_place, i);

	return place_key((enum orr_place_kind)p->kind, p->pid, p->tid);
}

static uint64_t skipped_hash(const struct orr__vec *v, size_t i)
{
	return mix(ORR__AT(*v, struct orr_skipped, i)->category);
}

static void index_put(struct orr__index *ix, uint64_t h, size_t row)
{
	size_t k = (size_t)h & (ix->cap - 1);

	while (ix->slot[k])
		k = (k + 1) & (ix->cap - 1);
	ix->slot[k] = (uint32_t)row + 1;
	ix->used++;
}

/* Indexes the rows of v not indexed yet (pushed since, or after a rollback). */
static void index_sync(struct orr__index *ix, const struct orr__vec *v,
		       uint64_t (*hash)(const struct orr__vec *, size_t))
{
	if (ix->n > v->n)
		ix->n = v->n;
	for (; ix->n < v->n; ix->n++) {
		if ((ix->used + 1) * 2 > ix->cap) {
			/* Rebuilt from the live rows: stale slots go. */
			ix->cap = ix->cap ? ix->cap * 2 : 64;
			free(ix->slot);
			ix->slot = orr_xcalloc(ix->cap, sizeof(*ix->slot));
			ix->used = 0;
			for (size_t i = 0; i < ix->n; i++)
				index_put(ix, hash(v, i), i);
		}
		index_put(ix, hash(v, ix->n), ix->n);
	}
}

static uint32_t find_place(struct orr__rank_build *rb, enum orr_place_kind kind, int64_t pid,
			   int64_t tid)
{
	const struct orr_place *p = rb->places.p;
	struct orr__index *ix = &rb->place_index;

	index_sync(ix, &rb->places, place_hash);
	if (!ix->cap)
		return UINT32_MAX;
	for (size_t k = (size_t)place_key(kind, pid, tid) & (ix->cap - 1); ix->slot[k];
	     k = (k + 1) & (ix->cap - 1)) {
		uint32_t i = ix->slot[k] - 1;

		if (i < rb->places.n && p[i].kind == kind && p[i].pid == pid && p[i].tid == tid)
			return i;
	}
	return UINT32_MAX;
}

uint32_t orr__place(struct orr__rank_build *rb, enum orr_place_kind kind, int64_t pid, int64_t tid,
		    int32_t device)
{
	struct orr_place *p = rb->places.p;
	struct orr_place *np;
	uint32_t i = rb->last_place;

	if (i < rb->places.n && p[i].kind == kind && p[i].pid == pid && p[i].tid == tid)
		return i;
	i = find_place(rb, kind, pid, tid);
	if (i != UINT32_MAX) {
		rb->last_place = i;
		return i;
	}
	np = orr__vec_push(&rb->places);
	*np = (struct orr_place){ .kind = kind, .pid = pid, .tid = tid, .device = device };
	rb->last_place = (uint32_t)(rb->places.n - 1);
	return rb->last_place;
}

void orr__count_skipped(struct orr__rank_build *rb, uint32_t category)
{
	orr__count_skipped_by(rb, category, 1);
}

void orr__count_skipped_by(struct orr__rank_build *rb, uint32_t category, uint64_t count)
{
	struct orr_skipped *s = rb->skipped.p;
	struct orr__index *ix = &rb->skipped_index;

	index_sync(ix, &rb->skipped, skipped_hash);
	for (size_t k = ix->cap ? (size_t)mix(category) & (ix->cap - 1) : 0; ix->cap && ix->slot[k];
	     k = (k + 1) & (ix->cap - 1)) {
		uint32_t i = ix->slot[k] - 1;

		if (i < rb->skipped.n && s[i].category == category) {
			s[i].count += count;
			*(struct orr__skip_undo *)orr__vec_push(&rb->skipped_undo) =
				(struct orr__skip_undo){ i, count };
			return;
		}
	}
	s = orr__vec_push(&rb->skipped);
	s->category = category;
	s->count = count;
}

/* One row per value while parsing (a failed window's rows roll back); merged at finish. */
void orr__count_coerced(struct orr__rank_build *rb, uint32_t key, uint32_t how)
{
	*(struct orr_coerced *)orr__vec_push(&rb->coerced) = (struct orr_coerced){ key, how, 1 };
}

static int cmp_coerced(const void *a, const void *b)
{
	const struct orr_coerced *x = a, *y = b;

	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->how > y->how) - (x->how < y->how);
}

static void merge_coerced(struct orr__rank_build *rb)
{
	struct orr_coerced *c = rb->coerced.p;
	size_t k = 0;

	if (!rb->coerced.n)
		return;
	qsort(c, rb->coerced.n, sizeof(*c), cmp_coerced);
	for (size_t i = 1; i < rb->coerced.n; i++)
		if (c[i].key == c[k].key && c[i].how == c[k].how)
			c[k].count += c[i].count;
		else
			c[++k] = c[i];
	rb->coerced.n = k + 1;
}

struct orr_trace *orr__trace_new(void)
{
	struct orr_trace *t = orr_xcalloc(1, sizeof(*t));

	t->strs = orr_strtab_new();
	return t;
}

static struct orr__rank_build *rank_alloc(uint32_t source)
{
	struct orr__rank_build *rb = orr_xcalloc(1, sizeof(*rb));

	rb->pub.rank = -1;
	rb->pub.world_size = -1;
	rb->pub.pid = -1;
	rb->pub.local_rank = -1;
	rb->pub.first_step = -1;
	rb->pub.mem_peak_allocated_bytes = -1;
	rb->pub.mem_peak_reserved_bytes = -1;
	rb->pub.last_step = -1;
	rb->pub.source = source;
	rb->last_place = UINT32_MAX;
	rb->places.elem = sizeof(struct orr_place);
	rb->events.elem = sizeof(struct orr_event);
	rb->ops.elem = sizeof(struct orr_op_args);
	rb->inputs.elem = sizeof(struct orr_input);
	rb->dims.elem = sizeof(int64_t);
	rb->strides.elem = sizeof(int64_t);
	rb->kernels.elem = sizeof(struct orr_kernel_args);
	rb->copies.elem = sizeof(struct orr_copy_args);
	rb->syncs.elem = sizeof(struct orr_sync_args);
	rb->colls.elem = sizeof(struct orr_collective);
	rb->members.elem = sizeof(int32_t);
	rb->comms.elem = sizeof(struct orr_comm);
	rb->devices.elem = sizeof(struct orr_device);
	rb->skipped.elem = sizeof(struct orr_skipped);
	rb->skipped_undo.elem = sizeof(struct orr__skip_undo);
	rb->coerced.elem = sizeof(struct orr_coerced);
	rb->mems.elem = sizeof(struct orr_mem_sample);
	rb->counters.elem = sizeof(struct orr_counter_sample);
	rb->flows.elem = sizeof(struct orr__flow);
	rb->metas.elem = sizeof(struct orr__meta);
	return rb;
}

struct orr__rank_build *orr__rank_new(struct orr_trace *t, uint32_t source)
{
	struct orr__rank_build *rb = rank_alloc(source);

	ORR_VEC_PUSH(t->ranks, t->nranks, t->cap, rb);
	return rb;
}

struct orr__rank_build *orr__rank_new_part(struct orr__rank_build *rb)
{
	struct orr__rank_build *part = rank_alloc(rb->pub.source);

	ORR_VEC_PUSH(rb->parts, rb->nparts, rb->parts_cap, part);
	return part;
}

void orr__rank_free(struct orr__rank_build *rb)
{
	size_t n;
	struct orr__vec *v;

	if (!rb)
		return;
	v = tables(rb, &n);
	for (size_t i = 0; i < n; i++)
		free(v[i].p);
	for (size_t i = 0; i < rb->nparts; i++)
		orr__rank_free(rb->parts[i]);
	free(rb->place_index.slot);
	free(rb->skipped_index.slot);
	free(rb->skipped_undo.p);
	free(rb->parts);
	free(rb);
}

void orr_trace_free(struct orr_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nranks; i++)
		orr__rank_free(t->ranks[i]);
	free(t->ranks);
	for (size_t i = 0; i < t->nets; i++)
		orr__et_free(t->ets[i]);
	free(t->ets);
	orr_strtab_free(t->strs);
	free(t);
}

size_t orr_trace_rank_count(const struct orr_trace *t)
{
	return t->nranks;
}

const struct orr_rank *orr_trace_get_rank(const struct orr_trace *t, size_t i)
{
	return &t->ranks[i]->pub;
}

const char *orr_trace_str(const struct orr_trace *t, uint32_t id)
{
	return orr_strtab_get(t->strs, id);
}

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* A total order on event contents, so that sorting is deterministic. */
static inline int event_order(const struct orr_event *a, const struct orr_event *b)
{
	int c;

	if ((c = cmp_i64(a->start_ns, b->start_ns)) || (c = cmp_i64(b->dur_ns, a->dur_ns)) ||
	    (c = cmp_i64(a->place, b->place)) || (c = cmp_i64(a->kind, b->kind)) ||
	    (c = cmp_i64(a->correlation, b->correlation)) ||
	    (c = cmp_i64(a->external_id, b->external_id)) || (c = cmp_i64(a->name, b->name)) ||
	    (c = cmp_i64(a->args, b->args)))
		return c;
	return cmp_i64(a->coll, b->coll);
}

/* An event's start, less the rank's earliest, and its index in the file's order. */
struct event_key {
	uint64_t start;
	size_t at;
};

#define RADIX_BITS 11
#define RADIX      (1u << RADIX_BITS)

/* keys in out, stably by the digit of start at shift (a counting sort). */
static void radix_pass(const struct event_key *keys, struct event_key *out, size_t n,
		       unsigned shift)
{
	size_t count[RADIX] = { 0 }, sum = 0;

	for (size_t i = 0; i < n; i++)
		count[(keys[i].start >> shift) & (RADIX - 1)]++;
	for (size_t d = 0; d < RADIX; d++) {
		size_t c = count[d];

		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		out[count[(keys[i].start >> shift) & (RADIX - 1)]++] = keys[i];
}

/* Two keys of one start by the rest of event_order(), then where they were (stable). */
static int cmp_tie(const void *pa, const void *pb, void *data)
{
	const struct event_key *a = pa, *b = pb;
	const struct orr_event *ev = data;
	int c = event_order(&ev[a->at], &ev[b->at]);

	return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

/* Past this many ties, sorted in O(n log n): an insertion sort of them is quadratic. */
#define TIES_INSERTION_MAX 32

/*
 * keys[lo, hi) (one start) by the rest of event_order(): an insertion sort, ties being
 * few; many (200,000 launches at one timestamp took minutes) by qsort_r() with the
 * original order as the last key, which gives what the insertion sort gives.
 */
static void order_ties(const struct orr_event *ev, struct event_key *keys, size_t lo, size_t hi)
{
	if (hi - lo > TIES_INSERTION_MAX) {
		qsort_r(keys + lo, hi - lo, sizeof(*keys), cmp_tie, (void *)ev);
		return;
	}
	for (size_t i = lo + 1; i < hi; i++) {
		struct event_key k = keys[i];
		size_t j = i;

		for (; j > lo && event_order(&ev[keys[j - 1].at], &ev[k.at]) > 0; j--)
			keys[j] = keys[j - 1];
		keys[j] = k;
	}
}

/*
 * ev[i] = the event at keys[i].at, for every i, in place: each cycle of the permutation
 * is followed from its first place, one event held aside (keys[].at is set to its own
 * place as it is filled).  A new table would be first-touched, a page fault per 4 KiB
 * of every rank's events (docs/performance.md).
 */
static void permute(struct orr_event *ev, struct event_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct orr_event held;
		size_t j = i;

		if (keys[i].at == i)
			continue;
		held = ev[i];
		for (;;) {
			size_t k = keys[j].at;

			keys[j].at = j;
			if (k == i) {
				ev[j] = held;
				break;
			}
			ev[j] = ev[k];
			j = k;
		}
	}
}

/*
 * The events in the order of event_order(): an LSD radix sort of their starts (11 bits
 * at a time, as far as they differ), each run of equal starts by the rest of the order,
 * then each event moved to its place in the same table (permute()).  A trace's events come a few at a time from each thread and stream (a
 * quarter of a generated trace's events start a new run), so qsort() compared through a
 * pointer and moved each 56-byte event about log2(n) times: a tenth of an import.  In
 * order already (a file written from a model): one pass.
 */
static void sort_events(struct orr__vec *events)
{
	struct orr_event *ev = events->p;
	size_t n = events->n;
	struct event_key *keys, *tmp;
	int64_t lo = INT64_MAX;
	uint64_t differ = 0;
	size_t i;

	for (i = 1; i < n && event_order(&ev[i - 1], &ev[i]) <= 0; i++)
		;
	if (i >= n)
		return;
	for (i = 0; i < n; i++)
		lo = ev[i].start_ns < lo ? ev[i].start_ns : lo;
	keys = orr_xmalloc(2 * n * sizeof(*keys));
	tmp = keys + n;
	for (i = 0; i < n; i++) {
		/* Any two int64_t differ by less than 2^64: the unsigned difference keeps the order. */
		keys[i] = (struct event_key){ (uint64_t)ev[i].start_ns - (uint64_t)lo, i };
		differ |= keys[i].start;
	}
	for (unsigned shift = 0; shift < 64 && differ >> shift; shift += RADIX_BITS) {
		struct event_key *t = keys;

		radix_pass(keys, tmp, n, shift);
		keys = tmp;
		tmp = t;
	}
	for (size_t at = 0; at < n;) {
		size_t end = at + 1;

		while (end < n && keys[end].start == keys[at].start)
			end++;
		if (end - at > 1)
			order_ties(ev, keys, at, end);
		at = end;
	}
	permute(ev, keys, n);
	free(keys < tmp ? keys : tmp);
}

static int cmp_flow(const void *pa, const void *pb)
{
	const struct orr__flow *a = pa, *b = pb;
	int c;

	if ((c = cmp_i64(a->pid, b->pid)) || (c = cmp_i64(a->tid, b->tid)) ||
	    (c = cmp_i64(a->ts_ns, b->ts_ns)))
		return c;
	return cmp_i64(a->id, b->id);
}

static bool takes_flow(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER ||
	       e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET || e->kind == ORR_EVENT_SYNC;
}

/* Old traces carry the correlation only on the flow arrow: take it from there. */
static void link_flows(struct orr__rank_build *rb)
{
	struct orr__flow *f = rb->flows.p;
	struct orr_event *ev = rb->events.p;
	const struct orr_place *pl = rb->places.p;
	size_t nf = rb->flows.n;

	size_t need = 0;

	for (size_t i = 0; i < rb->events.n; i++)
		need += ev[i].correlation < 0 && takes_flow(&ev[i]);
	if (!nf || !need)
		return;
	qsort(f, nf, sizeof(*f), cmp_flow);
	for (size_t i = 0; i < rb->events.n; i++) {
		struct orr__flow key = { .pid = pl[ev[i].place].pid,
					 .tid = pl[ev[i].place].tid,
					 .ts_ns = ev[i].start_ns,
					 .id = INT64_MIN };
		size_t lo = 0, hi = nf;

		if (ev[i].correlation >= 0 || !takes_flow(&ev[i]))
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_flow(&f[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nf && f[lo].pid == key.pid && f[lo].tid == key.tid &&
		    f[lo].ts_ns == key.ts_ns) {
			ev[i].correlation = f[lo].id;
			ev[i].flags |= ORR_EVENT_F_FLOW_LINKED;
		}
	}
}

static void name_places(struct orr__rank_build *rb)
{
	const struct orr__meta *m = rb->metas.p;
	struct orr_place *p = rb->places.p;

	/* Names threads and streams alike (Kineto names a stream's row so); the last wins. */
	for (size_t i = 0; i < rb->metas.n; i++) {
		uint32_t j;

		if (!m[i].thread)
			continue;
		if ((j = find_place(rb, ORR_PLACE_THREAD, m[i].pid, m[i].tid)) != UINT32_MAX)
			p[j].name = m[i].name;
		if ((j = find_place(rb, ORR_PLACE_STREAM, m[i].pid, m[i].tid)) != UINT32_MAX)
			p[j].name = m[i].name;
	}
}

#define VIEW(field, vec, type)                         \
	do {                                           \
		rb->pub.field = (const type *)(vec).p; \
		rb->pub.n##field = (vec).n;            \
	} while (0)

static void make_views(struct orr__rank_build *rb)
{
	free(rb->flows.p);
	free(rb->metas.p);
	free(rb->place_index.slot);
	free(rb->skipped_index.slot);
	memset(&rb->flows, 0, sizeof(rb->flows));
	memset(&rb->metas, 0, sizeof(rb->metas));
	memset(&rb->place_index, 0, sizeof(rb->place_index));
	memset(&rb->skipped_index, 0, sizeof(rb->skipped_index));
	VIEW(places, rb->places, struct orr_place);
	VIEW(events, rb->events, struct orr_event);
	VIEW(ops, rb->ops, struct orr_op_args);
	VIEW(inputs, rb->inputs, struct orr_input);
	VIEW(dims, rb->dims, int64_t);
	VIEW(strides, rb->strides, int64_t);
	VIEW(kernels, rb->kernels, struct orr_kernel_args);
	VIEW(copies, rb->copies, struct orr_copy_args);
	VIEW(syncs, rb->syncs, struct orr_sync_args);
	VIEW(members, rb->members, int32_t);
	VIEW(comms, rb->comms, struct orr_comm);
	VIEW(devices, rb->devices, struct orr_device);
	VIEW(skipped, rb->skipped, struct orr_skipped);
	VIEW(coerced, rb->coerced, struct orr_coerced);
	VIEW(mems, rb->mems, struct orr_mem_sample);
	VIEW(counters, rb->counters, struct orr_counter_sample);
	VIEW(collectives, rb->colls, struct orr_collective);
}

static const char *time_problem(const struct orr_event *e)
{
	if (e->start_ns < -ORR_TIME_MAX || e->start_ns > ORR_TIME_MAX)
		return "a start within +-2^62 ns";
	if (e->dur_ns < 0 || e->dur_ns > ORR_TIME_MAX)
		return "a duration from 0 to 2^62 ns";
	if (e->start_ns + e->dur_ns > ORR_TIME_MAX) /* cannot overflow: both are bounded */
		return "an end (start + duration) of at most 2^62 ns";
	return NULL;
}

/*
 * One check for every format, so that no sum or difference of two times overflows
 * downstream.  Before sorting, the events are in the file's order: the index is the
 * event's among those the model keeps (the file's own index when it has no metadata or
 * skipped categories before it), and the kind and name say which it is.
 */
int orr__rank_check_times(const struct orr_trace *t, const struct orr__rank_build *rb,
			  const char *name, struct orr_diag *diag)
{
	const struct orr_event *ev = rb->events.p;

	if (rb->pub.base_time_ns < -ORR_TIME_MAX || rb->pub.base_time_ns > ORR_TIME_MAX)
		return orr_diag_set(diag, ORR_EMALFORMED, name, -1, -1,
				    "expected a base time within +-2^62 ns (about 146 years), got "
				    "%lld ns",
				    (long long)rb->pub.base_time_ns);
	for (size_t i = 0; i < rb->events.n; i++) {
		const char *what = time_problem(&ev[i]);

		if (what)
			return orr_diag_set(diag, ORR_EMALFORMED, name, -1, (int64_t)i,
					    "%s '%.64s': expected %s (about 146 years), "
					    "got start %lld ns, duration %lld ns",
					    orr_event_kind_name((enum orr_event_kind)ev[i].kind),
					    orr_trace_str(t, ev[i].name), what,
					    (long long)ev[i].start_ns, (long long)ev[i].dur_ns);
	}
	return 0;
}

int orr__rank_check_values(const struct orr__rank_build *rb, const struct orr__limits *l,
			   const char *name, struct orr_diag *diag)
{
	uint64_t max = l->max[ORR__LIMIT_VALUES];

	if (rb->dims.n > max || rb->strides.n > max || rb->inputs.n > max || rb->members.n > max)
		return orr__limit_fail(l, ORR__LIMIT_VALUES, diag, name, -1, -1);
	return 0;
}

void orr__rank_finish(struct orr_trace *t, struct orr__rank_build *rb)
{
	link_flows(rb);
	name_places(rb);
	orr__collectives_from_launches(t, rb);
	orr__collectives_from_names(t, rb);
	orr__collective_bytes(t, rb);
	sort_events(&rb->events);
	rb->pub.nflows = rb->flows.n;
	merge_coerced(rb);
	make_views(rb);
}

/*
 * The model's order is start, longer first, place, then input order: a file written
 * from a model is in it already and stays as it is (string ids, which event_order() also
 * compares, differ from one string table to another).  Anything else gets the total
 * order of event_order().
 */
void orr__rank_finish_native(struct orr_trace *t, struct orr__rank_build *rb)
{
	const struct orr_event *ev = rb->events.p;
	bool in_order = true;

	for (size_t i = 1; i < rb->events.n && in_order; i++) {
		const struct orr_event *a = &ev[i - 1], *b = &ev[i];
		int c;

		if (!(c = cmp_i64(a->start_ns, b->start_ns)) &&
		    !(c = cmp_i64(b->dur_ns, a->dur_ns)))
			c = cmp_i64(a->place, b->place);
		in_order = c <= 0;
	}
	if (!in_order)
		sort_events(&rb->events);
	orr__collectives_from_launches(t, rb);
	make_views(rb);
}
