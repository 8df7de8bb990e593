/* SPDX-License-Identifier: MIT */
/*
 * The native reader's batches: each checks that its columns agree in length and that
 * every id and row it refers to was defined before, then appends to the rank's tables.
 * File string ids become the trace's here.
 */
#include <stdlib.h>
#include <string.h>

#include "native-read.h"
#include "banned.h"

#define SAME_LENGTH(m, a, b) ((m)->n_##a == (m)->n_##b)

static int columns_differ(struct orr__native_reader *rd, const char *what)
{
	return orr__native_fail(rd, ORR_EMALFORMED, "expected the %s columns of equal length",
				what);
}

/* A string id of the file (0 = none) as the trace's. */
static int str_id(struct orr__native_reader *rd, uint32_t id, uint32_t *ret)
{
	if (id > rd->nstrs)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"string id %u where %zu strings are defined", id,
					rd->nstrs);
	*ret = id ? rd->strs[id - 1] : ORR_STR_NONE;
	return 0;
}

/* Room for n more rows in a table whose indices are uint32_t (ORR_NONE excluded). */
static int room(struct orr__native_reader *rd, size_t have, size_t n, const char *what)
{
	if (n >= UINT32_MAX - have)
		return orr__native_fail(rd, ORR_ETOOBIG, "more than 2^32 - 1 %s", what);
	return 0;
}

/* Room for n more dims, strides, inputs or members: ORR_MAX_VALUES (traces/limits.c). */
static int values_room(struct orr__native_reader *rd, size_t have, size_t n)
{
	if (n > rd->limits->max[ORR__LIMIT_VALUES] - have)
		return orr__native_limit(rd, ORR__LIMIT_VALUES);
	return 0;
}

/* The sum of n counts, which must be exactly want. */
static int sum_is(struct orr__native_reader *rd, const uint32_t *v, size_t n, size_t want,
		  const char *what)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i];
	if (sum != want)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"the rows count %llu %s, the batch holds %zu",
					(unsigned long long)sum, what, want);
	return 0;
}

int orr__native_read_strings(struct orr__native_reader *rd, const Orrery__Native__Strings *m)
{
	int r;

	if ((r = room(rd, rd->nstrs, m->n_text, "strings")))
		return r;
	if (rd->nstrs + m->n_text > rd->strcap)
		rd->strs =
			orr_xgrow(rd->strs, sizeof(*rd->strs), &rd->strcap, rd->nstrs + m->n_text);
	for (size_t i = 0; i < m->n_text; i++)
		if ((r = orr__native_text(rd, m->text[i], &rd->strs[rd->nstrs++])))
			return r;
	return 0;
}

int orr__native_read_places(struct orr__native_reader *rd, const Orrery__Native__Places *m)
{
	size_t n = m->n_pid;
	struct orr_place *p;
	int r;

	if (!SAME_LENGTH(m, pid, tid) || !SAME_LENGTH(m, pid, name) ||
	    !SAME_LENGTH(m, pid, device) || !SAME_LENGTH(m, pid, kind))
		return columns_differ(rd, "place");
	if ((r = room(rd, rd->rb->places.n, n, "places")))
		return r;
	p = orr__vec_extend(&rd->rb->places, n);
	for (size_t i = 0; i < n; i++) {
		if (m->kind[i] > ORR_PLACE_STREAM)
			return orr__native_fail(rd, ORR_EMALFORMED,
						"place kind %u (expected 0 or 1)", m->kind[i]);
		p[i] = (struct orr_place){ .pid = m->pid[i],
					   .tid = m->tid[i],
					   .device = m->device[i],
					   .kind = (uint8_t)m->kind[i] };
		if ((r = str_id(rd, m->name[i], &p[i].name)))
			return r;
	}
	return 0;
}

static int64_t undelta(int64_t prev, int64_t d)
{
	return (int64_t)((uint64_t)prev + (uint64_t)d);
}

static uint32_t minus1(uint32_t v)
{
	return v ? v - 1 : ORR_NONE;
}

static bool events_columns_agree(const Orrery__Native__Events *m)
{
	return SAME_LENGTH(m, start, dur) && SAME_LENGTH(m, start, correlation) &&
	       SAME_LENGTH(m, start, external_id) && SAME_LENGTH(m, start, name) &&
	       SAME_LENGTH(m, start, place) && SAME_LENGTH(m, start, args) &&
	       SAME_LENGTH(m, start, coll) && SAME_LENGTH(m, start, bits);
}

int orr__native_read_events(struct orr__native_reader *rd, const Orrery__Native__Events *m)
{
	const struct orr__rank_build *rb = rd->rb;
	const struct orr__native_rows rows = { .strings = rd->nstrs,
					       .places = rb->places.n,
					       .ops = rb->ops.n,
					       .kernels = rb->kernels.n,
					       .copies = rb->copies.n,
					       .syncs = rb->syncs.n,
					       .colls = rb->colls.n };
	size_t n = m->n_start, first = rb->events.n;
	const struct orr_place *places = rb->places.p;
	int64_t start = 0, *last = rd->last;
	struct orr_event *e;

	if (!events_columns_agree(m))
		return columns_differ(rd, "event");
	for (size_t i = 0; i < 2 * ORR__NATIVE_SLOTS; i++)
		last[i] = -1;
	e = orr__vec_extend(&rd->rb->events, n);
	for (size_t i = 0; i < n; i++) {
		int64_t *p = &last[2 * orr__native_slot(m->place[i], m->bits[i] & 0xff)];
		const char *why;

		start = undelta(start, m->start[i]);
		p[0] = undelta(p[0], m->correlation[i]);
		p[1] = undelta(p[1], m->external_id[i]);
		e[i] = (struct orr_event){
			.start_ns = start,
			.dur_ns = m->dur[i],
			.correlation = p[0],
			.external_id = p[1],
			.name = m->name[i],
			.place = m->place[i],
			.args = minus1(m->args[i]),
			.coll = minus1(m->coll[i]),
			.kind = (uint8_t)(m->bits[i] & 0xff),
			.sub = (uint8_t)(m->bits[i] >> 8),
			.flags = (uint16_t)(m->bits[i] >> 16),
		};
		if ((why = orr__native_check_event(&e[i], &rows)) ||
		    (why = orr__native_check_place(&e[i], places[e[i].place].kind))) {
			rd->event = (int64_t)(first + i);
			return orr__native_fail(rd, ORR_EMALFORMED, "%s", why);
		}
		e[i].name = e[i].name ? rd->strs[e[i].name - 1] : ORR_STR_NONE;
	}
	return 0;
}

static int read_inputs(struct orr__native_reader *rd, const Orrery__Native__Ops *m)
{
	struct orr_input *in = orr__vec_extend(&rd->rb->inputs, m->n_ndims);
	uint32_t first_dim = (uint32_t)rd->rb->dims.n;
	uint32_t first_stride = (uint32_t)rd->rb->strides.n;
	int r;

	for (size_t i = 0; i < m->n_ndims; i++) {
		uint32_t ns = m->n_nstrides ? m->nstrides[i] : 0;

		if (m->ndims[i] > UINT16_MAX || m->is_list[i] > 1 || ns > UINT16_MAX)
			return orr__native_fail(rd, ORR_EMALFORMED,
						"an input of %u dims, is_list %u, %u strides "
						"(expected at most 65535, 0 or 1, at most 65535)",
						m->ndims[i], m->is_list[i], ns);
		in[i] = (struct orr_input){ .first_dim = first_dim,
					    .ndims = (uint16_t)m->ndims[i],
					    .is_list = (uint16_t)m->is_list[i],
					    .first_stride = first_stride,
					    .nstrides = (uint16_t)ns };
		if ((r = str_id(rd, m->dtype[i], &in[i].dtype)))
			return r;
		first_dim += m->ndims[i];
		first_stride += ns;
	}
	return 0;
}

int orr__native_read_ops(struct orr__native_reader *rd, const Orrery__Native__Ops *m)
{
	struct orr__rank_build *rb = rd->rb;
	uint32_t first_input = (uint32_t)rb->inputs.n;
	size_t n = m->n_sequence;
	struct orr_op_args *op;
	int r;

	if (!SAME_LENGTH(m, sequence, ninputs) || !SAME_LENGTH(m, ndims, is_list) ||
	    !SAME_LENGTH(m, ndims, dtype) || (m->n_nstrides && !SAME_LENGTH(m, ndims, nstrides)))
		return columns_differ(rd, "op");
	if ((r = values_room(rd, rb->strides.n, m->n_strides)) ||
	    (r = sum_is(rd, m->nstrides, m->n_nstrides, m->n_strides, "strides")))
		return r;
	if ((r = room(rd, rb->ops.n, n, "ops")) ||
	    (r = values_room(rd, rb->inputs.n, m->n_ndims)) ||
	    (r = values_room(rd, rb->dims.n, m->n_dims)) ||
	    (r = sum_is(rd, m->ninputs, n, m->n_ndims, "inputs")) ||
	    (r = sum_is(rd, m->ndims, m->n_ndims, m->n_dims, "dims")) || (r = read_inputs(rd, m)))
		return r;
	if (m->n_dims)
		memcpy(orr__vec_extend(&rb->dims, m->n_dims), m->dims, m->n_dims * sizeof(int64_t));
	if (m->n_strides)
		memcpy(orr__vec_extend(&rb->strides, m->n_strides), m->strides,
		       m->n_strides * sizeof(int64_t));
	for (size_t i = 0; i < m->n_ndims; i++)
		orr__input_fit_strides(rb, ORR__AT(rb->inputs, struct orr_input, first_input + i));
	op = orr__vec_extend(&rb->ops, n);
	for (size_t i = 0; i < n; i++) {
		op[i] = (struct orr_op_args){ first_input, m->ninputs[i], m->sequence[i] };
		first_input += m->ninputs[i];
	}
	return 0;
}

int orr__native_read_kernels(struct orr__native_reader *rd, const Orrery__Native__Kernels *m)
{
	size_t n = m->n_grid_x;
	struct orr_kernel_args *k;
	int r;

	if (!SAME_LENGTH(m, grid_x, grid_y) || !SAME_LENGTH(m, grid_x, grid_z) ||
	    !SAME_LENGTH(m, grid_x, block_x) || !SAME_LENGTH(m, grid_x, block_y) ||
	    !SAME_LENGTH(m, grid_x, block_z) || !SAME_LENGTH(m, grid_x, shared_bytes) ||
	    !SAME_LENGTH(m, grid_x, registers))
		return columns_differ(rd, "kernel");
	if ((r = room(rd, rd->rb->kernels.n, n, "kernels")))
		return r;
	k = orr__vec_extend(&rd->rb->kernels, n);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct orr_kernel_args){
			.grid = { m->grid_x[i], m->grid_y[i], m->grid_z[i] },
			.block = { m->block_x[i], m->block_y[i], m->block_z[i] },
			.shared_bytes = m->shared_bytes[i],
			.registers = m->registers[i],
		};
	return 0;
}

int orr__native_read_copies(struct orr__native_reader *rd, const Orrery__Native__Copies *m)
{
	struct orr_copy_args *c;
	int r;

	if ((r = room(rd, rd->rb->copies.n, m->n_bytes, "copies")))
		return r;
	c = orr__vec_extend(&rd->rb->copies, m->n_bytes);
	for (size_t i = 0; i < m->n_bytes; i++)
		c[i].bytes = m->bytes[i];
	return 0;
}

int orr__native_read_syncs(struct orr__native_reader *rd, const Orrery__Native__Syncs *m)
{
	size_t n = m->n_stream;
	struct orr_sync_args *s;
	int r;

	if (!SAME_LENGTH(m, stream, wait_on_stream) || !SAME_LENGTH(m, stream, event_record_corr) ||
	    !SAME_LENGTH(m, stream, event_id))
		return columns_differ(rd, "sync");
	if ((r = room(rd, rd->rb->syncs.n, n, "syncs")))
		return r;
	s = orr__vec_extend(&rd->rb->syncs, n);
	for (size_t i = 0; i < n; i++)
		s[i] = (struct orr_sync_args){ m->stream[i], m->wait_on_stream[i],
					       m->event_record_corr[i], m->event_id[i] };
	return 0;
}

/* Appends n members, after the checks of the rows that count them. */
static int read_members(struct orr__native_reader *rd, const int32_t *v, size_t n,
			uint32_t *ret_first)
{
	int r;

	if ((r = values_room(rd, rd->rb->members.n, n)))
		return r;
	*ret_first = (uint32_t)rd->rb->members.n;
	if (n)
		memcpy(orr__vec_extend(&rd->rb->members, n), v, n * sizeof(int32_t));
	return 0;
}

static bool collectives_columns_agree(const Orrery__Native__Collectives *m)
{
	return SAME_LENGTH(m, type, dtype) && SAME_LENGTH(m, type, pg_name) &&
	       SAME_LENGTH(m, type, pg_desc) && SAME_LENGTH(m, type, in_nelems) &&
	       SAME_LENGTH(m, type, out_nelems) && SAME_LENGTH(m, type, in_bytes) &&
	       SAME_LENGTH(m, type, out_bytes) && SAME_LENGTH(m, type, sequence) &&
	       SAME_LENGTH(m, type, group_size) && SAME_LENGTH(m, type, src_rank) &&
	       SAME_LENGTH(m, type, dst_rank) && SAME_LENGTH(m, type, nmembers);
}

int orr__native_read_collectives(struct orr__native_reader *rd,
				 const Orrery__Native__Collectives *m)
{
	size_t n = m->n_type;
	struct orr_collective *c;
	uint32_t member;
	int r;

	if (!collectives_columns_agree(m))
		return columns_differ(rd, "collective");
	if ((r = room(rd, rd->rb->colls.n, n, "collectives")) ||
	    (r = sum_is(rd, m->nmembers, n, m->n_members, "members")) ||
	    (r = read_members(rd, m->members, m->n_members, &member)))
		return r;
	c = orr__vec_extend(&rd->rb->colls, n);
	for (size_t i = 0; i < n; i++) {
		c[i] = (struct orr_collective){
			.in_nelems = m->in_nelems[i],
			.out_nelems = m->out_nelems[i],
			.in_bytes = m->in_bytes[i],
			.out_bytes = m->out_bytes[i],
			.sequence = m->sequence[i],
			.group_size = m->group_size[i],
			.src_rank = m->src_rank[i],
			.dst_rank = m->dst_rank[i],
			.first_member = member,
			.nmembers = m->nmembers[i],
		};
		member += m->nmembers[i];
		if ((r = str_id(rd, m->type[i], &c[i].type)) ||
		    (r = str_id(rd, m->dtype[i], &c[i].dtype)) ||
		    (r = str_id(rd, m->pg_name[i], &c[i].pg_name)) ||
		    (r = str_id(rd, m->pg_desc[i], &c[i].pg_desc)))
			return r;
	}
	return 0;
}

int orr__native_read_comms(struct orr__native_reader *rd, const Orrery__Native__Comms *m)
{
	size_t n = m->n_name;
	struct orr_comm *c;
	uint32_t member;
	int r;

	if (!SAME_LENGTH(m, name, desc) || !SAME_LENGTH(m, name, backend) ||
	    !SAME_LENGTH(m, name, size) || !SAME_LENGTH(m, name, nmembers))
		return columns_differ(rd, "communicator");
	if ((r = room(rd, rd->rb->comms.n, n, "communicators")) ||
	    (r = sum_is(rd, m->nmembers, n, m->n_members, "members")) ||
	    (r = read_members(rd, m->members, m->n_members, &member)))
		return r;
	c = orr__vec_extend(&rd->rb->comms, n);
	for (size_t i = 0; i < n; i++) {
		c[i] = (struct orr_comm){ .size = m->size[i],
					  .first_member = member,
					  .nmembers = m->nmembers[i] };
		member += m->nmembers[i];
		if ((r = str_id(rd, m->name[i], &c[i].name)) ||
		    (r = str_id(rd, m->desc[i], &c[i].desc)) ||
		    (r = str_id(rd, m->backend[i], &c[i].backend)))
			return r;
	}
	return 0;
}

int orr__native_read_skipped(struct orr__native_reader *rd, const Orrery__Native__Skipped *m)
{
	struct orr_skipped *s;
	int r;

	if (!SAME_LENGTH(m, category, count))
		return columns_differ(rd, "skipped");
	if ((r = room(rd, rd->rb->skipped.n, m->n_category, "skipped categories")))
		return r;
	s = orr__vec_extend(&rd->rb->skipped, m->n_category);
	for (size_t i = 0; i < m->n_category; i++) {
		s[i].count = m->count[i];
		if ((r = str_id(rd, m->category[i], &s[i].category)))
			return r;
	}
	return 0;
}
