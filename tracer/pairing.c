/* SPDX-License-Identifier: MIT */
/*
 * Event record -> stream wait (and event sync) pairing, from CUPTI's CUDA_EVENT and
 * SYNCHRONIZATION records (notes/capture.md 1.3).
 *
 * Exact: the sync's cudaEventSyncId equals that of the CUDA_EVENT record of the event's
 * latest record (CUPTI 12.8+).  Fallback (Kineto's rule, for records without the id):
 * the record of the same (context, event) with the largest correlation id below the
 * sync's.  Records arrive out of order across buffers, and a sync may come before the
 * record it refers to, so a sync that cannot be resolved yet is held (bounded) and
 * resolved when its record arrives, or at close by the fallback rule, or written
 * unresolved.  A fallback resolution is made at once when a candidate is already known:
 * an earlier record of the same event delivered after the sync could beat it, which the
 * per-thread ordering of CUPTI's buffers makes rare.
 *
 * Memory is bounded: each (context, event) keeps its last RING records; events live in
 * two generations of max_events each, and when the current one is full it becomes the
 * previous one and the oldest generation is forgotten (events are waited for soon after
 * they are recorded, and a job creates new event ids without end).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define RING 8

struct ev_rec {
	uint32_t corr, stream;
	uint64_t sync_id;
};

/* The last records of one event, by increasing correlation id. */
struct ev_slot {
	struct ev_rec r[RING];
	uint32_t n;
};

struct generation {
	struct orr__map map; /* (context, event) -> index into slots */
	struct ev_slot *slots;
	size_t n;
};

struct orr__pairing {
	struct generation gen[2]; /* gen[cur] is current */
	int cur;
	size_t max_events;
	struct orr__held_sync *held; /* max_held entries, `used` marks the live ones */
	size_t max_held, nheld;
	uint32_t *free_held;    /* a stack of the max_held - nheld unused entries */
	struct orr__map chains; /* (context, event) -> first held sync */
	void (*emit)(void *data, struct orr__held_sync *h, enum orr__resolution how);
	void *data;
	uint64_t lost;
};

static uint64_t key_of(uint32_t context, uint32_t event_id)
{
	return (uint64_t)context << 32 | event_id;
}

static bool valid_sync_id(uint64_t id)
{
	return id != 0 && id != ORR__INVALID32 && id != UINT64_MAX;
}

int orr__pairing_new(size_t max_events, size_t max_held,
		     void (*emit)(void *data, struct orr__held_sync *h, enum orr__resolution how),
		     void *data, struct orr__pairing **ret_p)
{
	struct orr__pairing *p = orr__tcalloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->max_events = max_events ? max_events : 1;
	p->max_held = max_held;
	p->emit = emit;
	p->data = data;
	p->held = max_held ? orr__tcalloc(max_held, sizeof(*p->held)) : NULL;
	p->free_held = max_held ? orr__tcalloc(max_held, sizeof(*p->free_held)) : NULL;
	p->gen[0].slots = orr__talloc(p->max_events * sizeof(struct ev_slot));
	if ((max_held && (!p->held || !p->free_held)) || !p->gen[0].slots) {
		orr__pairing_free(p);
		return -ENOMEM;
	}
	orr__pairing_forget_held(p);
	*ret_p = p;
	return 0;
}

static void release_generation(struct generation *g)
{
	orr__map_release(&g->map);
	free(g->slots);
	*g = (struct generation){ 0 };
}

void orr__pairing_free(struct orr__pairing *p)
{
	if (!p)
		return;
	release_generation(&p->gen[0]);
	release_generation(&p->gen[1]);
	orr__map_release(&p->chains);
	free(p->held);
	free(p->free_held);
	free(p);
}

uint64_t orr__pairing_lost(const struct orr__pairing *p)
{
	return p->lost;
}

static struct ev_slot *find_slot(struct generation *g, uint64_t key)
{
	uint64_t i;

	return orr__map_find(&g->map, key, &i) ? &g->slots[i] : NULL;
}

/* Makes room in the current generation, turning it into the previous one when full. */
static int rotate(struct orr__pairing *p)
{
	struct generation *old = &p->gen[!p->cur];
	struct ev_slot *slots = old->slots;

	if (!slots)
		slots = orr__talloc(p->max_events * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	orr__map_release(&old->map);
	old->slots = slots;
	old->n = 0;
	p->cur = !p->cur;
	return 0;
}

static struct ev_slot *slot_for(struct orr__pairing *p, uint64_t key)
{
	struct generation *g = &p->gen[p->cur];
	struct ev_slot *s = find_slot(g, key);

	if (s)
		return s;
	if (g->n == p->max_events) {
		if (rotate(p))
			return NULL;
		g = &p->gen[p->cur];
	}
	if (orr__map_put(&g->map, key, g->n))
		return NULL;
	s = &g->slots[g->n++];
	s->n = 0;
	return s;
}

static void ring_add(struct ev_slot *s, const struct ev_rec *r)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].corr == r->corr) {
			s->r[i] = *r;
			return;
		}
	if (s->n == RING) {
		if (r->corr < s->r[0].corr)
			return; /* older than every record kept */
		memmove(&s->r[0], &s->r[1], (RING - 1) * sizeof(s->r[0]));
		s->n--;
	}
	for (i = s->n; i > 0 && s->r[i - 1].corr > r->corr; i--)
		s->r[i] = s->r[i - 1];
	s->r[i] = *r;
	s->n++;
}

/* The record with this sync id, else (fallback) the latest below corr; NULL when none. */
static const struct ev_rec *lookup(struct orr__pairing *p, uint64_t key, uint64_t sync_id,
				   uint32_t corr, enum orr__resolution *ret_how)
{
	const struct ev_rec *best = NULL;

	for (int k = 0; k < 2; k++) {
		struct ev_slot *s = find_slot(&p->gen[k], key);

		for (uint32_t i = 0; s && i < s->n; i++) {
			if (valid_sync_id(sync_id) && s->r[i].sync_id == sync_id) {
				*ret_how = ORR__PAIR_EXACT;
				return &s->r[i];
			}
			if (s->r[i].corr < corr && (!best || s->r[i].corr > best->corr))
				best = &s->r[i];
		}
	}
	*ret_how = best ? ORR__PAIR_FALLBACK : ORR__PAIR_UNRESOLVED;
	return best;
}

static void emit(struct orr__pairing *p, struct orr__held_sync *h, const struct ev_rec *r,
		 enum orr__resolution how)
{
	if (r) {
		h->args.wait_on_stream = r->stream;
		h->args.event_record_corr = r->corr;
	}
	p->emit(p->data, h, how);
}

/* Unlinks held sync i from its chain and frees its entry. */
static void unhold(struct orr__pairing *p, uint32_t i)
{
	uint64_t key = key_of(p->held[i].context, p->held[i].event_id), head;

	if (orr__map_find(&p->chains, key, &head)) {
		if (head == i) {
			if (p->held[i].next == ORR_NONE)
				orr__map_remove(&p->chains, key);
			else
				orr__map_put(&p->chains, key, p->held[i].next);
		} else {
			uint32_t j = (uint32_t)head;

			while (p->held[j].next != ORR_NONE && p->held[j].next != i)
				j = p->held[j].next;
			if (p->held[j].next == i)
				p->held[j].next = p->held[i].next;
		}
	}
	p->held[i].used = false;
	p->nheld--;
	p->free_held[p->max_held - p->nheld - 1] = i;
}

void orr__pairing_event(struct orr__pairing *p, uint32_t context, uint32_t event_id, uint32_t corr,
			uint32_t stream, uint64_t sync_id)
{
	uint64_t key = key_of(context, event_id), head;
	struct ev_rec rec = { corr, stream, sync_id };
	struct ev_slot *s = slot_for(p, key);
	uint32_t i, next;

	if (s)
		ring_add(s, &rec);
	else
		p->lost++;
	if (!orr__map_find(&p->chains, key, &head))
		return;
	for (i = (uint32_t)head; i != ORR_NONE; i = next) {
		struct orr__held_sync h = p->held[i];
		bool exact = valid_sync_id(h.sync_id) && h.sync_id == sync_id;

		next = h.next;
		if (!exact && (valid_sync_id(h.sync_id) || corr >= h.corr))
			continue;
		unhold(p, i);
		emit(p, &h, &rec, exact ? ORR__PAIR_EXACT : ORR__PAIR_FALLBACK);
	}
}

static bool hold(struct orr__pairing *p, const struct orr__held_sync *h)
{
	uint64_t key = key_of(h->context, h->event_id), head;
	uint32_t i;

	if (p->nheld == p->max_held)
		return false;
	i = p->free_held[p->max_held - p->nheld - 1];
	if (!orr__map_find(&p->chains, key, &head))
		head = ORR_NONE;
	if (orr__map_put(&p->chains, key, i))
		return false;
	p->held[i] = *h;
	p->held[i].next = (uint32_t)head;
	p->held[i].used = true;
	p->nheld++;
	return true;
}

void orr__pairing_sync(struct orr__pairing *p, const struct orr__held_sync *h)
{
	uint64_t key = key_of(h->context, h->event_id);
	struct orr__held_sync copy = *h;
	enum orr__resolution how;
	const struct ev_rec *r;

	if (h->event_id == ORR__INVALID32) {
		emit(p, &copy, NULL, ORR__PAIR_UNRESOLVED);
		return;
	}
	r = lookup(p, key, h->sync_id, h->corr, &how);
	/* With a sync id only the exact record will do, until close. */
	if (how == ORR__PAIR_EXACT || (how == ORR__PAIR_FALLBACK && !valid_sync_id(h->sync_id))) {
		emit(p, &copy, r, how);
		return;
	}
	if (hold(p, h))
		return;
	emit(p, &copy, r, how);
}

void orr__pairing_flush(struct orr__pairing *p)
{
	for (uint32_t i = 0; i < p->max_held && p->nheld; i++) {
		struct orr__held_sync h = p->held[i];
		enum orr__resolution how;
		const struct ev_rec *r;

		if (!h.used)
			continue;
		unhold(p, i);
		r = lookup(p, key_of(h.context, h.event_id), h.sync_id, h.corr, &how);
		emit(p, &h, r, how);
	}
}

void orr__pairing_forget_held(struct orr__pairing *p)
{
	for (size_t i = 0; i < p->max_held; i++) {
		p->held[i].used = false;
		p->free_held[i] = (uint32_t)(p->max_held - 1 - i);
	}
	p->nheld = 0;
	orr__map_release(&p->chains);
}
