/* SPDX-License-Identifier: MIT */
/*
 * NCCL's NVTX payloads: decoding them (in the NVTX callback, while the caller's stack
 * still holds them), numbering collectives per communicator, and remembering the calls
 * for the writer thread.  No CUPTI here; cupti.c calls it.
 *
 * Layouts (NCCL src/include/nvtx_payload_schemas.h, and collectives.cc before 2.25), on
 * LP64 with ncclRedOp_t an int:
 *   2.25+:      {uint64 comm; size_t bytes; int a; int b}   16 or 24 bytes
 *   2.16-2.24:  {size_t bytes; int a; int b}                8 or 16 bytes
 * where a, b are the call's root, peer or reduction op.  Communicator creation (2.25+):
 *   CommInitRank & co: {uint64 newcomm; int nranks; int myrank; int cudaDev}   24 bytes
 * The size tells the versions apart; a payload of any other size is not decoded.
 * CommSplit's and CommShrink's payloads are not decoded either: NCCL (init.cc) writes
 * the parent's size and rank into a split's, and the parent's id into a shrink's, so
 * they say nothing true of the new communicator (its calls are numbered all the same).
 *
 * A collective's sequence is its ordinal among the calls this process made on its
 * communicator since the tracer started (at cuInit, before any communicator exists), so
 * it is the same number on every rank of the communicator.  Send and Recv are numbered
 * per pair of ranks instead, since the other ranks make no matching call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

enum layout {
	L_BYTES,     /* AllGather, AlltoAll */
	L_BYTES_OP,  /* AllReduce, ReduceScatter */
	L_ROOT,      /* Broadcast, Gather, Scatter */
	L_ROOT_OP,   /* Reduce */
	L_PEER,      /* Send, Recv */
	L_COMM_INIT, /* CommInitRank, its variants, CommDestroy, CommAbort, CommRevoke */
	L_COMM_SPLIT,
	L_COMM_SHRINK,
};

static const struct schema {
	uint32_t sid; /* NVTX_SID_* of NCCL's nvtx.h */
	const char *type;
	enum layout layout;
} schemas[] = {
	{ 0, "CommInitRank", L_COMM_INIT },
	{ 2, "CommDestroy", L_COMM_INIT },
	{ 3, "CommAbort", L_COMM_INIT },
	{ 4, "AllGather", L_BYTES },
	{ 5, "AllReduce", L_BYTES_OP },
	{ 6, "Broadcast", L_ROOT },
	{ 7, "ReduceScatter", L_BYTES_OP },
	{ 8, "Reduce", L_ROOT_OP },
	{ 9, "Send", L_PEER },
	{ 10, "Recv", L_PEER },
	{ 11, "CommInitRankConfig", L_COMM_INIT },
	{ 12, "CommInitRankScalable", L_COMM_INIT },
	{ 13, "CommSplit", L_COMM_SPLIT },
	{ 15, "CommShrink", L_COMM_SHRINK },
	{ 16, "AlltoAll", L_BYTES },
	{ 17, "Gather", L_ROOT },
	{ 18, "Scatter", L_ROOT },
	{ 19, "CommRevoke", L_COMM_INIT },
};

static uint64_t rd64(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static int32_t rd32(const void *p, size_t off)
{
	int32_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static const struct schema *schema_of(uint64_t schema_id)
{
	if (schema_id < ORR__NVTX_SCHEMA_STATIC_START)
		return NULL;
	for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (schema_id - ORR__NVTX_SCHEMA_STATIC_START == schemas[i].sid)
			return &schemas[i];
	return NULL;
}

static bool decode_comm(const struct schema *sc, size_t size, const void *p,
			struct orr__nccl_call *c)
{
	if (sc->layout != L_COMM_INIT || size != 24)
		return false;
	c->comm_info = c->has_comm = true;
	c->comm = rd64(p, 0);
	c->nranks = rd32(p, 8);
	c->myrank = rd32(p, 12);
	return c->nranks > 0 && c->myrank >= 0 && c->myrank < c->nranks;
}

/* The int after the bytes is the root (L_ROOT*) or peer (L_PEER); the op is not kept. */
static bool decode_call(const struct schema *sc, size_t size, const void *p,
			struct orr__nccl_call *c)
{
	size_t bytes_at;
	uint64_t bytes;

	if (size == (sc->layout == L_BYTES ? 16u : 24u))
		bytes_at = 8;
	else if (size == (sc->layout == L_BYTES ? 8u : 16u))
		bytes_at = 0;
	else
		return false;
	c->has_comm = bytes_at == 8;
	c->comm = c->has_comm ? rd64(p, 0) : 0;
	bytes = rd64(p, bytes_at);
	c->bytes = bytes <= INT64_MAX ? (int64_t)bytes : -1;
	if (sc->layout == L_ROOT || sc->layout == L_ROOT_OP)
		c->root = rd32(p, bytes_at + 8);
	if (sc->layout == L_PEER) {
		c->p2p = true;
		c->peer = rd32(p, bytes_at + 8);
	}
	return true;
}

bool orr__nccl_decode(const struct orr__nvtx_payload *pd, struct orr__nccl_call *ret)
{
	const struct schema *sc = pd ? schema_of(pd->schema_id) : NULL;

	*ret = (struct orr__nccl_call){
		.bytes = -1, .root = -1, .peer = -1, .nranks = -1, .myrank = -1, .sequence = -1
	};
	if (!sc || !pd->payload)
		return false;
	ret->type = sc->type;
	if (sc->layout >= L_COMM_INIT)
		return decode_comm(sc, pd->size, pd->payload, ret);
	return decode_call(sc, pd->size, pd->payload, ret);
}

/* ---- numbering ---- */

int orr__nccl_init(struct orr__nccl *n)
{
	int r;

	memset(n, 0, sizeof(*n));
	if ((r = pthread_mutex_init(&n->lock, NULL)))
		return -r;
	n->calls = orr__tcalloc(ORR__NCCL_CALLS, sizeof(*n->calls));
	return 0; /* without the table, calls are counted but not remembered */
}

void orr__nccl_release(struct orr__nccl *n)
{
	pthread_mutex_destroy(&n->lock);
	free(n->calls);
	n->calls = NULL;
}

static size_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

static struct orr__nccl_comm *comm_slot(struct orr__nccl *n, uint64_t hash)
{
	for (size_t k = 0, i = mix(hash); k < ORR__NCCL_COMMS; k++, i++) {
		struct orr__nccl_comm *c = &n->comms[i % ORR__NCCL_COMMS];

		if (!c->used)
			*c = (struct orr__nccl_comm){
				.hash = hash, .nranks = -1, .myrank = -1, .used = true
			};
		if (c->hash == hash)
			return c;
	}
	return NULL;
}

static struct orr__nccl_pair *pair_slot(struct orr__nccl *n, uint64_t comm, int32_t a, int32_t b)
{
	int32_t lo = a < b ? a : b, hi = a < b ? b : a;
	size_t h = mix(comm ^ ((uint64_t)(uint32_t)lo << 32 | (uint32_t)hi));

	for (size_t k = 0; k < ORR__NCCL_PAIRS; k++, h++) {
		struct orr__nccl_pair *p = &n->pairs[h % ORR__NCCL_PAIRS];

		if (!p->used)
			*p = (struct orr__nccl_pair){
				.comm = comm, .lo = lo, .hi = hi, .used = true
			};
		if (p->comm == comm && p->lo == lo && p->hi == hi)
			return p;
	}
	return NULL;
}

/* The sequence, nranks and myrank of a collective on a known communicator. */
static void number(struct orr__nccl *n, struct orr__nccl_call *c)
{
	struct orr__nccl_comm *cm = comm_slot(n, c->comm);
	struct orr__nccl_pair *p;

	if (!cm)
		return;
	c->nranks = cm->nranks;
	c->myrank = cm->myrank;
	if (!c->p2p) {
		c->sequence = cm->calls++;
		return;
	}
	if (cm->myrank < 0 || c->peer < 0 || c->peer == cm->myrank)
		return;
	if ((p = pair_slot(n, c->comm, cm->myrank, c->peer)))
		c->sequence = p->calls++;
}

uint64_t orr__nccl_add(struct orr__nccl *n, struct orr__nccl_call *c)
{
	struct orr__nccl_comm *cm;

	pthread_mutex_lock(&n->lock);
	if (c->comm_info) {
		if ((cm = comm_slot(n, c->comm))) {
			cm->nranks = c->nranks;
			cm->myrank = c->myrank;
		}
		pthread_mutex_unlock(&n->lock);
		return 0;
	}
	if (c->has_comm)
		number(n, c);
	c->id = ORR__NCCL_EXT_TAG | ++n->next;
	if (n->calls)
		n->calls[n->next % ORR__NCCL_CALLS] = *c;
	else
		n->lost++;
	pthread_mutex_unlock(&n->lock);
	return n->calls ? c->id : 0;
}

bool orr__nccl_find(struct orr__nccl *n, uint64_t id, struct orr__nccl_call *ret)
{
	bool found = false;

	if (!(id & ORR__NCCL_EXT_TAG))
		return false;
	pthread_mutex_lock(&n->lock);
	if (n->calls && n->calls[(id & ~ORR__NCCL_EXT_TAG) % ORR__NCCL_CALLS].id == id) {
		*ret = n->calls[(id & ~ORR__NCCL_EXT_TAG) % ORR__NCCL_CALLS];
		found = true;
	} else {
		n->lost++;
	}
	pthread_mutex_unlock(&n->lock);
	return found;
}

uint64_t orr__nccl_lost(struct orr__nccl *n)
{
	uint64_t lost;

	pthread_mutex_lock(&n->lock);
	lost = n->lost;
	pthread_mutex_unlock(&n->lock);
	return lost;
}

size_t orr__nccl_comms(struct orr__nccl *n, struct orr__nccl_comm *out, size_t max)
{
	size_t k = 0;

	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < ORR__NCCL_COMMS && k < max; i++)
		if (n->comms[i].used && n->comms[i].nranks > 0)
			out[k++] = n->comms[i];
	pthread_mutex_unlock(&n->lock);
	return k;
}

/* ---- the ranges open on this thread ---- */

static _Thread_local uint64_t range_pushed; /* bit d: the range at depth d pushed an id */
static _Thread_local uint32_t range_depth;

bool orr__nccl_range_full(void)
{
	return range_depth >= ORR__NCCL_MAX_DEPTH;
}

void orr__nccl_range_push(bool pushed)
{
	if (range_depth < ORR__NCCL_MAX_DEPTH) {
		if (pushed)
			range_pushed |= UINT64_C(1) << range_depth;
		else
			range_pushed &= ~(UINT64_C(1) << range_depth);
	}
	if (range_depth < UINT32_MAX)
		range_depth++;
}

bool orr__nccl_range_pop(void)
{
	bool pushed;

	if (!range_depth)
		return false;
	range_depth--;
	if (range_depth >= ORR__NCCL_MAX_DEPTH)
		return false;
	pushed = range_pushed >> range_depth & 1;
	range_pushed &= ~(UINT64_C(1) << range_depth);
	return pushed;
}
