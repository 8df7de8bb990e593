/* SPDX-License-Identifier: MIT */
/*
 * One rank under construction appended to another: the second half of a Kineto file,
 * parsed by a second thread against its own strings (traces/kineto/kineto-window.cpp),
 * joins the first.  Strings are interned and places found in the order the second half
 * made them, so every id comes out as one thread reading the whole file would give it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* The destination's id of each of from's strings, in from's order. */
static uint32_t *string_map(struct orr_trace *t, const struct orr_trace *from)
{
	size_t n = orr_strtab_count(from->strs);
	uint32_t *map = orr_xcalloc(n ? n : 1, sizeof(*map));

	for (size_t i = 1; i < n; i++)
		map[i] = orr_strtab_intern(t->strs, orr_strtab_get(from->strs, (uint32_t)i),
					   orr_strtab_len(from->strs, (uint32_t)i));
	return map;
}

/* The destination's place of each of src's, found or made in src's order. */
static uint32_t *place_map(struct orr__rank_build *dst, const struct orr__rank_build *src,
			   const uint32_t *smap)
{
	const struct orr_place *p = src->places.p;
	uint32_t *map = orr_xcalloc(src->places.n ? src->places.n : 1, sizeof(*map));

	for (size_t i = 0; i < src->places.n; i++) {
		map[i] = orr__place(dst, (enum orr_place_kind)p[i].kind, p[i].pid, p[i].tid,
				    p[i].device);
		if (p[i].name != ORR_STR_NONE)
			ORR__AT(dst->places, struct orr_place, map[i])->name = smap[p[i].name];
	}
	return map;
}

/* The index of table name among a rank's 19 (tables() in model.c: places first). */
#define TABLE(name)                                                                            \
	((offsetof(struct orr__rank_build, name) - offsetof(struct orr__rank_build, places)) / \
	 sizeof(struct orr__vec))
#define NTABLES 19

/* The table an event's args index, by its kind (store() in kineto-json.cpp), or -1. */
static int args_table(uint8_t kind)
{
	switch (kind) {
	case ORR_EVENT_OP:
		return TABLE(ops);
	case ORR_EVENT_KERNEL:
		return TABLE(kernels);
	case ORR_EVENT_MEMCPY:
	case ORR_EVENT_MEMSET:
		return TABLE(copies);
	case ORR_EVENT_SYNC:
	case ORR_EVENT_CUDA_EVENT:
		return TABLE(syncs);
	default:
		return -1;
	}
}

/* src's rows of v appended to dst's v as they are; the first new row's index. */
static size_t append_rows(struct orr__vec *dst, const struct orr__vec *src)
{
	size_t base = dst->n;

	if (src->n)
		memcpy(orr__vec_extend(dst, src->n), src->p, src->n * src->elem);
	return base;
}

static void append_events(struct orr__rank_build *dst, const struct orr__rank_build *src,
			  const uint32_t *smap, const uint32_t *pmap, const size_t *base_of)
{
	struct orr_event *e = ORR__AT(dst->events, struct orr_event, base_of[TABLE(events)]);

	for (size_t i = 0; i < src->events.n; i++, e++) {
		int table = args_table(e->kind);

		e->name = smap[e->name];
		e->place = pmap[e->place];
		if (e->args != ORR_NONE && table >= 0)
			e->args += (uint32_t)base_of[table];
		if (e->coll != ORR_NONE)
			e->coll += (uint32_t)base_of[TABLE(colls)];
	}
}

static void append_args(struct orr__rank_build *dst, const struct orr__rank_build *src,
			const uint32_t *smap, const size_t *base_of)
{
	struct orr_op_args *op = ORR__AT(dst->ops, struct orr_op_args, base_of[TABLE(ops)]);
	struct orr_input *in = ORR__AT(dst->inputs, struct orr_input, base_of[TABLE(inputs)]);
	struct orr_collective *c =
		ORR__AT(dst->colls, struct orr_collective, base_of[TABLE(colls)]);
	struct orr_comm *cm = ORR__AT(dst->comms, struct orr_comm, base_of[TABLE(comms)]);
	struct orr_device *d = ORR__AT(dst->devices, struct orr_device, base_of[TABLE(devices)]);
	uint32_t inputs = (uint32_t)base_of[TABLE(inputs)];
	uint32_t dims = (uint32_t)base_of[TABLE(dims)];
	uint32_t strides = (uint32_t)base_of[TABLE(strides)];
	uint32_t members = (uint32_t)base_of[TABLE(members)];

	for (size_t i = 0; i < src->ops.n; i++)
		op[i].first_input += inputs;
	for (size_t i = 0; i < src->inputs.n; i++) {
		in[i].first_dim += dims;
		in[i].first_stride += strides;
		in[i].dtype = smap[in[i].dtype];
		in[i].value = smap[in[i].value];
	}
	for (size_t i = 0; i < src->colls.n; i++) {
		c[i].type = smap[c[i].type];
		c[i].dtype = smap[c[i].dtype];
		c[i].pg_name = smap[c[i].pg_name];
		c[i].pg_desc = smap[c[i].pg_desc];
		c[i].first_member += members;
	}
	for (size_t i = 0; i < src->comms.n; i++) {
		cm[i].name = smap[cm[i].name];
		cm[i].desc = smap[cm[i].desc];
		cm[i].backend = smap[cm[i].backend];
		cm[i].first_member += members;
	}
	for (size_t i = 0; i < src->devices.n; i++)
		d[i].name = smap[d[i].name];
}

static void append_samples(struct orr__rank_build *dst, const struct orr__rank_build *src,
			   const uint32_t *smap, const uint32_t *pmap, const size_t *base_of)
{
	struct orr_mem_sample *m = ORR__AT(dst->mems, struct orr_mem_sample, base_of[TABLE(mems)]);
	struct orr_counter_sample *c =
		ORR__AT(dst->counters, struct orr_counter_sample, base_of[TABLE(counters)]);
	struct orr_coerced *k = ORR__AT(dst->coerced, struct orr_coerced, base_of[TABLE(coerced)]);
	struct orr__meta *mt = ORR__AT(dst->metas, struct orr__meta, base_of[TABLE(metas)]);

	for (size_t i = 0; i < src->mems.n; i++)
		m[i].place = pmap[m[i].place];
	for (size_t i = 0; i < src->counters.n; i++) {
		c[i].name = smap[c[i].name];
		c[i].series = smap[c[i].series];
		c[i].place = pmap[c[i].place];
	}
	for (size_t i = 0; i < src->coerced.n; i++)
		k[i].key = smap[k[i].key];
	for (size_t i = 0; i < src->metas.n; i++)
		mt[i].name = smap[mt[i].name];
}

/* Skipped categories are counted in one row each: src's counts are added to dst's. */
static void append_skipped(struct orr__rank_build *dst, const struct orr__rank_build *src,
			   const uint32_t *smap)
{
	const struct orr_skipped *s = src->skipped.p;

	for (size_t i = 0; i < src->skipped.n; i++)
		orr__count_skipped_by(dst, smap[s[i].category], s[i].count);
}

void orr__rank_append(struct orr_trace *t, struct orr__rank_build *dst,
		      const struct orr_trace *from, const struct orr__rank_build *src)
{
	size_t base_of[NTABLES];
	const struct orr__vec *sv = &src->places;
	struct orr__vec *dv = &dst->places;
	uint32_t *smap = string_map(t, from);
	uint32_t *pmap = place_map(dst, src, smap);

	/* Every table but places (mapped) and skipped (counted) is appended whole. */
	for (size_t i = 0; i < NTABLES; i++) {
		if (i == TABLE(places) || i == TABLE(skipped))
			base_of[i] = 0;
		else
			base_of[i] = append_rows(&dv[i], &sv[i]);
	}
	append_events(dst, src, smap, pmap, base_of);
	append_args(dst, src, smap, base_of);
	append_samples(dst, src, smap, pmap, base_of);
	append_skipped(dst, src, smap);

	dst->gpu_device_arg |= src->gpu_device_arg;
	dst->pub.ops_with_stack += src->pub.ops_with_stack;
	dst->pub.ops_with_flops += src->pub.ops_with_flops;
	if (src->pub.mem_peak_allocated_bytes > dst->pub.mem_peak_allocated_bytes)
		dst->pub.mem_peak_allocated_bytes = src->pub.mem_peak_allocated_bytes;
	if (src->pub.mem_peak_reserved_bytes > dst->pub.mem_peak_reserved_bytes)
		dst->pub.mem_peak_reserved_bytes = src->pub.mem_peak_reserved_bytes;
	free(pmap);
	free(smap);
}
