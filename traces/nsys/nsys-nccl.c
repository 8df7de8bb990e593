/* SPDX-License-Identifier: MIT */
/*
 * Nsight Systems: NCCL's NVTX payloads.  NCCL (2.16 on) opens a range in its NVTX
 * domain around each API call ("ncclAllReduce", "ncclSend", "ncclCommInitRank", ...)
 * with a payload its schemas describe (NCCL's src/include/nvtx_payload_schemas.h).  The
 * export keeps each schema's entries (NVTX_PAYLOAD_SCHEMA_ENTRIES: name, type, offset)
 * and each range's bytes (NVTX_EVENTS.binaryData: a 32-byte header, the schema id in
 * bytes 8-15 and the payload's size in bytes 16-23, then the payload).  Entries are
 * found by NCCL's names, so that the layouts of every NCCL version read alike:
 *
 *   "NCCL communicator ID"  the communicator, named "nccl:<16 hex digits>" as the
 *                           tracer names it (NCCL's commHash: the same on every member)
 *   "Message size [bytes]"  the call's bytes: AllGather's input, ReduceScatter's output
 *   "Peer rank"             Send and Recv: the other rank, in the communicator
 *   "No. of ranks", "Rank"  CommInitRank and its variants, CommDestroy, CommAbort:
 *                           the group's size and this process's rank in it
 *
 * A CommSplit creates its communicator, but its payload holds the parent's size and
 * rank (NCCL's init.cc), which are not taken; a CommShrink's holds the parent's id and
 * is not read.  Only NCCL's collectives and Send/Recv are calls (the tracer's list).
 *
 * A kernel launch inside a call's range, on the call's thread, gets the call's
 * collective; orr__rank_finish() then gives it to the NCCL kernel launched, as for the
 * tracer's files.  A grouped call (ncclGroupStart ... ncclGroupEnd) launches in
 * ncclGroupEnd, outside its own range: its kernel keeps what its name says.
 *
 * Sequence numbers (exact coupling across ranks, graph/ranks.c) only where the export
 * holds the communicator's creation: the k-th call on a communicator since then is the
 * same call on every member (Send and Recv: per pair of ranks).  Otherwise the
 * communicator's name couples a step's calls by their order, as for Kineto traces.
 * A payload that does not decode (no such schema, too few bytes for its entries) is
 * counted as an ignored 'NCCL payload' value (orrery info lists it); its range stays an
 * annotation, and the calls on its communicator are no longer numbered (one is missing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsys-read.h"
#include "banned.h"

#define HEADER_BYTES 32 /* binaryData's header before the payload */

enum field { F_COMM, F_BYTES, F_PEER, F_NRANKS, F_RANK, F_COUNT };

static const char *const field_names[F_COUNT] = {
	[F_COMM] = "NCCL communicator ID",
	[F_BYTES] = "Message size [bytes]",
	[F_PEER] = "Peer rank",
	[F_NRANKS] = "No. of ranks",
	[F_RANK] = "Rank",
};

struct entry {
	uint32_t off; /* into the payload */
	uint8_t size; /* 0: not in the schema, or not an integer */
	bool is_signed;
};

struct schema {
	int64_t id, domain;
	int64_t end; /* of the entries so far, -1 once one of unknown size came */
	struct entry f[F_COUNT];
};

/* One NCCL call with a size, in the order of the export's start times. */
struct call {
	int64_t start, end, gtid;
	uint64_t comm;
	int64_t bytes, peer;
	uint32_t type, coll; /* coll: ORR_NONE until a launch takes it */
	bool has_comm, p2p;
	/* numbered (number()) */
	int64_t seq;
	uint32_t pg_name;
	int32_t group, src, dst;
};

/* A communicator: when it was created, and who this rank is in it. */
struct comm {
	uint64_t id;
	int64_t created_at;     /* INT64_MAX when the export does not hold its creation */
	int32_t nranks, myrank; /* -1 when unknown */
	int64_t calls;          /* numbered so far */
	size_t order;           /* of the range that told, until merged */
	bool lost;              /* a call on it did not decode: not numbered */
};

struct pair {
	uint64_t comm;
	int32_t lo, hi;
	int64_t calls;
};

struct nccl {
	struct orr__nsys *n;
	struct schema *schemas;
	size_t nschemas, cap_schemas;
	struct call *calls;
	size_t ncalls, cap_calls;
	struct comm *comms;
	size_t ncomms, cap_comms;
	struct pair *pairs;
	size_t npairs, cap_pairs;
};

/* ---- schemas ---- */

/* The bytes of NVTX_PAYLOAD_ENTRY_TYPE_* (nvToolsExtPayload.h) on LP64; 0 for others. */
static uint8_t type_size(int64_t type, bool *ret_signed)
{
	static const uint8_t size[] = { 0, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 1,
					1, 2, 2, 4, 4, 8, 8, 0, 0, 0, 8, 8 };

	*ret_signed = type >= 1 && type <= 17 && type % 2 == 1;
	return type >= 0 && type < (int64_t)sizeof(size) ? size[type] : 0;
}

static int cmp_schema(const void *a, const void *b)
{
	const struct schema *x = a, *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->domain > y->domain) - (x->domain < y->domain);
}

static struct schema *schema_of(struct nccl *c, int64_t domain, int64_t id)
{
	struct schema *s = c->nschemas ? &c->schemas[c->nschemas - 1] : NULL;

	if (!s || s->id != id || s->domain != domain) {
		if (c->nschemas >= c->n->lim->max[ORR__LIMIT_EVENTS])
			return NULL;
		ORR_VEC_PUSH(c->schemas, c->nschemas, c->cap_schemas,
			     ((struct schema){ .id = id, .domain = domain }));
		s = &c->schemas[c->nschemas - 1];
	}
	return s;
}

/*
 * One entry, in index order: where it is (an offset of 0 past the first entry is NVTX's
 * "at the next naturally aligned place"), and whether it is one orrery reads.
 */
static void add_entry(struct schema *s, int64_t idx, int64_t type, const char *name, bool has_off,
		      int64_t off)
{
	bool sig;
	uint8_t size = type_size(type, &sig);

	if ((!has_off || off == 0) && idx > 0)
		off = s->end < 0 || !size ? -1 : (s->end + size - 1) / size * size;
	if (off < 0 || off > UINT32_MAX) {
		s->end = -1;
		return;
	}
	s->end = size ? off + size : -1;
	for (int f = 0; name && size && f < F_COUNT; f++)
		if (!strcmp(name, field_names[f]))
			s->f[f] = (struct entry){ (uint32_t)off, size, sig };
}

static int read_schemas(struct nccl *c)
{
	static const char table[] = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
	sqlite3_stmt *st;
	int r = 0, rc;

	if (!(st = orr__nsys_query(
		      c->n, table,
		      "SELECT domainId, schemaId, idx, type, name, offset "
		      "FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY domainId, schemaId, idx",
		      &r)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct schema *s =
			schema_of(c, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));

		if (!s) {
			sqlite3_finalize(st);
			return orr__limit_fail(c->n->lim, ORR__LIMIT_EVENTS, c->n->diag, c->n->name,
					       -1, -1);
		}
		add_entry(s, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
			  (const char *)sqlite3_column_text(st, 4),
			  sqlite3_column_type(st, 5) != SQLITE_NULL, sqlite3_column_int64(st, 5));
	}
	if (c->nschemas)
		qsort(c->schemas, c->nschemas, sizeof(*c->schemas), cmp_schema);
	return orr__nsys_done(c->n, table, st, rc, 0);
}

/* The first schema at or past (id, domain) in sort order. */
static size_t schema_at(const struct nccl *c, int64_t domain, int64_t id)
{
	struct schema key = { .id = id, .domain = domain };
	size_t lo = 0, hi = c->nschemas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_schema(&c->schemas[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The schema id in the range's domain, else in any; NULL when none. */
static const struct schema *find_schema(const struct nccl *c, int64_t domain, int64_t id)
{
	size_t i = schema_at(c, domain, id);

	if (i < c->nschemas && c->schemas[i].id == id && c->schemas[i].domain == domain)
		return &c->schemas[i];
	i = schema_at(c, INT64_MIN, id);
	return i < c->nschemas && c->schemas[i].id == id ? &c->schemas[i] : NULL;
}

/* ---- payloads ---- */

static uint64_t read_le(const unsigned char *p, size_t size)
{
	uint64_t v = 0;

	for (size_t i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* Entry f of payload p (len bytes); false when the schema or the payload lacks it. */
static bool field(const struct schema *s, enum field f, const unsigned char *p, size_t len,
		  int64_t *ret)
{
	const struct entry *e = &s->f[f];
	uint64_t v;

	if (!e->size || e->off > len || len - e->off < e->size)
		return false;
	v = read_le(p + e->off, e->size);
	if (e->is_signed && e->size < 8 && (v >> (8 * e->size - 1) & 1))
		v |= ~UINT64_C(0) << (8 * e->size);
	*ret = (int64_t)v;
	return true;
}

static int push_comm(struct nccl *c, struct comm cm)
{
	if (c->ncomms >= c->n->lim->max[ORR__LIMIT_EVENTS])
		return orr__limit_fail(c->n->lim, ORR__LIMIT_EVENTS, c->n->diag, c->n->name, -1,
				       -1);
	cm.order = c->ncomms;
	ORR_VEC_PUSH(c->comms, c->ncomms, c->cap_comms, cm);
	return 0;
}

/* What a communicator's creation or end says of it (merged by merge_comms()). */
static int comm_info(struct nccl *c, const char *name, const struct schema *s,
		     const unsigned char *p, size_t len, int64_t start)
{
	struct comm cm = { .created_at = INT64_MAX, .nranks = -1, .myrank = -1 };
	int64_t id, nranks, rank;

	if (!strncmp(name, "ncclCommShrink", 14) || !field(s, F_COMM, p, len, &id))
		return 0;
	cm.id = (uint64_t)id;
	if (!strncmp(name, "ncclCommSplit", 13)) {
		cm.created_at = start;
		return push_comm(c, cm);
	}
	if (!field(s, F_NRANKS, p, len, &nranks) || !field(s, F_RANK, p, len, &rank) ||
	    nranks < 1 || nranks > INT32_MAX || rank < 0 || rank >= nranks)
		return 0;
	cm.nranks = (int32_t)nranks;
	cm.myrank = (int32_t)rank;
	if (!strncmp(name, "ncclCommInit", 12))
		cm.created_at = start;
	return push_comm(c, cm);
}

/* NCCL's calls that move data between ranks (the tracer's list): "AllReduce", ... */
static bool known_call(const char *type)
{
	static const char *const calls[] = { "AllGather", "AllReduce", "Broadcast", "ReduceScatter",
					     "Reduce",    "Send",      "Recv",      "AlltoAll",
					     "Gather",    "Scatter" };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(type, calls[i]))
			return true;
	return false;
}

/* Whether the schema has an entry the payload is too short for. */
static bool cut_short(const struct schema *s, size_t len)
{
	for (int f = 0; f < F_COUNT; f++)
		if (s->f[f].size && (s->f[f].off > len || len - s->f[f].off < s->f[f].size))
			return true;
	return false;
}

/* The schema of a payload's header (its id in 64 bits, else in the low 32), and the payload. */
static const struct schema *header(const struct nccl *c, int64_t domain, const unsigned char *blob,
				   size_t len, size_t *ret_plen)
{
	const struct schema *s;
	uint64_t id, size;

	if (len < HEADER_BYTES)
		return NULL;
	id = read_le(blob + 8, 8);
	if (!(s = find_schema(c, domain, (int64_t)id)))
		s = find_schema(c, domain, (int64_t)(id & 0xffffffff));
	size = read_le(blob + 16, 8);
	*ret_plen = size <= len - HEADER_BYTES ? (size_t)size : len - HEADER_BYTES;
	return s;
}

static void ignored(struct nccl *c)
{
	orr__count_coerced(c->n->rb, orr__nsys_intern(c->n, "NCCL payload"), ORR_COERCION_IGNORED);
}

/* One NCCL range with a payload: a call with a size, a communicator's creation, or neither. */
static int add_range(struct nccl *c, sqlite3_stmt *st, const char *name)
{
	const unsigned char *blob = sqlite3_column_blob(st, 6);
	size_t plen = 0;
	struct orr_event ev = { 0 };
	const struct schema *s;
	int64_t v = sqlite3_column_int64(st, 2);
	struct call call = { .gtid = orr__nsys_pid(v) << 24 | orr__nsys_tid(v),
			     .peer = -1,
			     .coll = ORR_NONE };

	s = header(c, sqlite3_column_int64(st, 5), blob, (size_t)sqlite3_column_bytes(st, 6),
		   &plen);
	if (!s || cut_short(s, plen)) {
		ignored(c);
		/* A call missing from its communicator's count: stop numbering it. */
		if (s && field(s, F_COMM, blob + HEADER_BYTES, plen, &v) && known_call(name + 4))
			return push_comm(c, (struct comm){ .id = (uint64_t)v,
							   .created_at = INT64_MAX,
							   .nranks = -1,
							   .myrank = -1,
							   .lost = true });
		return 0;
	}
	blob += HEADER_BYTES;
	if (!orr__nsys_span(c->n, st, &ev))
		return 0;
	if (s->f[F_NRANKS].size)
		return comm_info(c, name, s, blob, plen, ev.start_ns);
	if (!known_call(name + 4) || !field(s, F_BYTES, blob, plen, &call.bytes) || call.bytes < 0)
		return 0;
	call.start = ev.start_ns;
	call.end = orr_time_add(ev.start_ns, ev.dur_ns);
	call.type = orr__nsys_intern(c->n, name + 4);
	call.has_comm = field(s, F_COMM, blob, plen, &v);
	call.comm = (uint64_t)v;
	call.p2p = !strcmp(name + 4, "Send") || !strcmp(name + 4, "Recv");
	if (call.p2p && !field(s, F_PEER, blob, plen, &call.peer))
		call.peer = -1;
	if (c->ncalls >= c->n->lim->max[ORR__LIMIT_EVENTS])
		return orr__limit_fail(c->n->lim, ORR__LIMIT_EVENTS, c->n->diag, c->n->name, -1,
				       -1);
	ORR_VEC_PUSH(c->calls, c->ncalls, c->cap_calls, call);
	return 0;
}

static int read_ranges(struct nccl *c)
{
	static const char table[] = "NVTX_EVENTS";
	sqlite3_stmt *st;
	int r = 0, rc;

	if (!(st = orr__nsys_query(
		      c->n, table,
		      "SELECT start, end, globalTid, text, textId, domainId, binaryData "
		      "FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND "
		      "binaryData IS NOT NULL ORDER BY start",
		      &r)))
		return r;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 3);
		uint32_t id = text ? ORR_STR_NONE : orr__nsys_string(c->n, st, 4);
		const char *name = text ? text : orr_trace_str(c->n->t, id);

		if (name && !strncmp(name, "nccl", 4) && name[4])
			r = add_range(c, st, name);
	}
	return orr__nsys_done(c->n, table, st, rc, r);
}

/* ---- numbering, collectives ---- */

static int cmp_comm(const void *a, const void *b)
{
	const struct comm *x = a, *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->order > y->order) - (x->order < y->order);
}

/*
 * One communicator per id: created at its earliest creation, its size and rank as the
 * last range that said them, lost when a call on it was.
 */
static void merge_comms(struct nccl *c)
{
	size_t k = 0;

	if (c->ncomms)
		qsort(c->comms, c->ncomms, sizeof(*c->comms), cmp_comm);
	for (size_t i = 0; i < c->ncomms; i++) {
		struct comm *m = k ? &c->comms[k - 1] : NULL, *x = &c->comms[i];

		if (!m || m->id != x->id) {
			c->comms[k++] = *x;
			continue;
		}
		if (x->created_at < m->created_at)
			m->created_at = x->created_at;
		if (x->nranks > 0) {
			m->nranks = x->nranks;
			m->myrank = x->myrank;
		}
		m->lost |= x->lost;
	}
	c->ncomms = k;
}

static int cmp_comm_id(const void *a, const void *b)
{
	const struct comm *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* After merge_comms(): one per id. */
static struct comm *find_comm(struct nccl *c, uint64_t id)
{
	struct comm key = { .id = id };

	return c->ncomms ? bsearch(&key, c->comms, c->ncomms, sizeof(*c->comms), cmp_comm_id)
			 : NULL;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->comm != y->comm)
		return (x->comm > y->comm) - (x->comm < y->comm);
	if (x->lo != y->lo)
		return (x->lo > y->lo) - (x->lo < y->lo);
	return (x->hi > y->hi) - (x->hi < y->hi);
}

/* The pair of ranks of a Send or Recv on cm; peer is not cm's own rank. */
static struct pair pair_key(const struct comm *cm, int64_t peer)
{
	int32_t a = cm->myrank, b = (int32_t)peer;

	return (struct pair){ cm->id, a < b ? a : b, a < b ? b : a, 0 };
}

static bool numbered_p2p(const struct call *k, const struct comm *cm)
{
	return k->p2p && cm && cm->myrank >= 0 && k->peer >= 0 && k->peer < cm->nranks &&
	       k->peer != cm->myrank;
}

/* Every pair of ranks a Send or Recv names, once each, sorted. */
static void collect_pairs(struct nccl *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->ncalls; i++) {
		struct comm *cm = c->calls[i].has_comm ? find_comm(c, c->calls[i].comm) : NULL;

		if (numbered_p2p(&c->calls[i], cm))
			ORR_VEC_PUSH(c->pairs, c->npairs, c->cap_pairs,
				     pair_key(cm, c->calls[i].peer));
	}
	if (c->npairs)
		qsort(c->pairs, c->npairs, sizeof(*c->pairs), cmp_pair);
	for (size_t i = 0; i < c->npairs; i++)
		if (!k || cmp_pair(&c->pairs[k - 1], &c->pairs[i]))
			c->pairs[k++] = c->pairs[i];
	c->npairs = k;
}

/* Bytes in and out of this rank; NCCL's size is AllGather's input, ReduceScatter's output. */
static void call_bytes(const struct orr__nsys *n, const struct call *k, int32_t nranks,
		       struct orr_collective *co)
{
	const char *type = orr_trace_str(n->t, k->type);

	co->in_bytes = co->out_bytes = k->bytes;
	if (nranks < 1 || k->bytes > INT64_MAX / nranks)
		return;
	if (!strcmp(type, "AllGather"))
		co->out_bytes = k->bytes * nranks;
	else if (!strcmp(type, "ReduceScatter"))
		co->in_bytes = k->bytes * nranks;
}

/*
 * Call k's communicator name, size, ranks and sequence number: numbered on its
 * communicator (or pair of ranks) when the export holds the communicator's creation and
 * every call on it decoded.  In start order.
 */
static void number(struct nccl *c, struct call *k)
{
	struct comm *cm = k->has_comm ? find_comm(c, k->comm) : NULL;
	bool numbered = cm && !cm->lost && cm->created_at <= k->start;
	char name[64];

	k->seq = -1;
	k->group = cm ? cm->nranks : -1;
	k->src = k->dst = -1;
	k->pg_name = ORR_STR_NONE;
	if (numbered_p2p(k, cm)) {
		bool send = !strcmp(orr_trace_str(c->n->t, k->type), "Send");
		struct pair key = pair_key(cm, k->peer), *p;

		k->src = send ? cm->myrank : (int32_t)k->peer;
		k->dst = send ? (int32_t)k->peer : cm->myrank;
		snprintf(name, sizeof(name), "nccl:%016llx:%d-%d", (unsigned long long)k->comm,
			 key.lo, key.hi);
		p = bsearch(&key, c->pairs, c->npairs, sizeof(*c->pairs), cmp_pair);
		if (p && numbered)
			k->seq = p->calls++;
	} else if (k->has_comm && !k->p2p) {
		snprintf(name, sizeof(name), "nccl:%016llx", (unsigned long long)k->comm);
		if (numbered)
			k->seq = cm->calls++;
	} else {
		return; /* no communicator (NCCL before 2.25), or a Send or Recv between unknown ranks */
	}
	k->pg_name = orr__nsys_intern(c->n, name);
}

/* Call k's collective, made when a launch first takes it. */
static uint32_t collective(struct nccl *c, struct call *k)
{
	struct orr_collective *co;

	if (k->coll != ORR_NONE)
		return k->coll;
	co = orr__vec_push(&c->n->rb->colls);
	*co = (struct orr_collective){ .type = k->type,
				       .pg_name = k->pg_name,
				       .in_nelems = -1,
				       .out_nelems = -1,
				       .sequence = k->seq,
				       .group_size = k->group,
				       .src_rank = k->src,
				       .dst_rank = k->dst };
	call_bytes(c->n, k, k->group, co);
	k->coll = (uint32_t)(c->n->rb->colls.n - 1);
	return k->coll;
}

static int cmp_call(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	if (x->gtid != y->gtid)
		return (x->gtid > y->gtid) - (x->gtid < y->gtid);
	return (x->start > y->start) - (x->start < y->start);
}

/* The call on thread (pid, tid) whose range holds [start, end]; NULL when none. */
static struct call *call_around(struct nccl *c, int64_t pid, int64_t tid, int64_t start,
				int64_t end)
{
	int64_t g = pid << 24 | tid;
	size_t lo = 0, hi = c->ncalls;

	while (lo < hi) { /* the first call past (g, start) */
		size_t mid = lo + (hi - lo) / 2;
		const struct call *k = &c->calls[mid];

		if (k->gtid < g || (k->gtid == g && k->start <= start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || c->calls[lo - 1].gtid != g || c->calls[lo - 1].end < end)
		return NULL;
	return &c->calls[lo - 1];
}

/* Kernel launches inside a call's range take its collective. */
static void give_launches(struct nccl *c)
{
	struct orr__rank_build *rb = c->n->rb;
	struct orr_event *ev = rb->events.p;
	const struct orr_place *pl = rb->places.p;

	if (!c->ncalls)
		return;
	qsort(c->calls, c->ncalls, sizeof(*c->calls), cmp_call);
	for (size_t i = 0; i < rb->events.n; i++) {
		struct call *k;

		if ((ev[i].kind != ORR_EVENT_RUNTIME && ev[i].kind != ORR_EVENT_DRIVER) ||
		    ev[i].sub != ORR_CALL_LAUNCH || ev[i].place >= rb->places.n)
			continue;
		k = call_around(c, pl[ev[i].place].pid, pl[ev[i].place].tid, ev[i].start_ns,
				orr_time_add(ev[i].start_ns, ev[i].dur_ns));
		if (k)
			ev[i].coll = collective(c, k);
	}
}

static void add_comms(struct nccl *c)
{
	char name[32];

	for (size_t i = 0; i < c->ncomms; i++) {
		if (c->comms[i].nranks < 1)
			continue; /* a split's: its size is not in the export */
		snprintf(name, sizeof(name), "nccl:%016llx", (unsigned long long)c->comms[i].id);
		*(struct orr_comm *)orr__vec_push(&c->n->rb->comms) = (struct orr_comm){
			.name = orr__nsys_intern(c->n, name),
			.backend = orr__nsys_intern(c->n, "nccl"),
			.size = c->comms[i].nranks,
		};
	}
}

int orr__nsys_read_nccl(struct orr__nsys *n)
{
	struct nccl c = { .n = n };
	int r;

	static const char *const columns[] = { "domainId", "schemaId", "idx",
					       "type",     "name",     "offset" };

	/* Optional data: an export without it, or of another shape, is read without it. */
	if (!orr__nsys_has_column(n, "NVTX_EVENTS", "binaryData") ||
	    !orr__nsys_has_column(n, "NVTX_EVENTS", "domainId"))
		return 0;
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		if (!orr__nsys_has_column(n, "NVTX_PAYLOAD_SCHEMA_ENTRIES", columns[i]))
			return 0;
	if (!(r = read_schemas(&c)) && !(r = read_ranges(&c))) {
		merge_comms(&c);
		collect_pairs(&c);
		for (size_t i = 0; i < c.ncalls; i++) /* in start order */
			number(&c, &c.calls[i]);
		give_launches(&c);
		add_comms(&c);
	}
	free(c.schemas);
	free(c.calls);
	free(c.comms);
	free(c.pairs);
	return r;
}
