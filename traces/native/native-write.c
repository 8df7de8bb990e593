/* SPDX-License-Identifier: MIT */
/*
 * The native writer.  Rows wait in plain arrays until the frame is full; then they are
 * turned into columns, packed as protobuf records into one buffer (protobuf-c packs
 * without allocating), compressed as one zstd frame and written.  This code also runs
 * inside the tracer, in someone else's process: plain malloc with every result checked,
 * no abort, no output.  An allocation failure leaves the writer as it was; a failed
 * write is remembered and returned by every later call, and close then removes the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../internal.h"
#include "native-write.h"
#include "orrery/native.h"
#include "banned.h"

int orr__arr_reserve(struct orr__arr *a, size_t elem, size_t more)
{
	size_t cap = a->cap ? a->cap : 64;
	void *p;

	if (more <= a->cap - a->n)
		return 0;
	if (a->n > SIZE_MAX / 4 / elem || more > SIZE_MAX / 4 / elem - a->n)
		return -ENOMEM;
	while (cap < a->n + more)
		cap *= 2;
	p = realloc(a->p, cap * elem);
	if (!p)
		return -ENOMEM;
	a->p = p;
	a->cap = cap;
	return 0;
}

int orr__native_write_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Compresses the records in w->raw as one frame and writes it. */
static int write_frame(struct orr_native_writer *w)
{
	size_t bound = ZSTD_compressBound(w->raw.n), z;
	int r;

	if ((r = orr__arr_reserve(&w->zbuf, 1, bound)))
		return r;
	z = ZSTD_compress2(w->cctx, w->zbuf.p, w->zbuf.cap, w->raw.p, w->raw.n);
	if (ZSTD_isError(z))
		return -ENOMEM; /* with a large enough buffer, zstd fails only for memory */
	if ((r = orr__native_write_all(w->fd, w->zbuf.p, z)))
		w->err = r;
	return r;
}

/* Packs what is pending, and the trailer when given, into one frame. */
static int flush(struct orr_native_writer *w, const Orrery__Native__Trailer *trailer)
{
	size_t raw0 = w->raw.n;
	int r;

	if (w->err)
		return w->err;
	r = orr__native_pack_pending(w);
	if (!r && trailer) {
		Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;

		rec.body_case = ORRERY__NATIVE__RECORD__BODY_TRAILER;
		rec.trailer = (Orrery__Native__Trailer *)trailer;
		r = orr__native_put_record(w, &rec);
	}
	if (!r && w->raw.n)
		r = write_frame(w);
	if (r) {
		w->raw.n = raw0;
		return r;
	}
	orr__native_pending_clear(w);
	w->raw.n = 0;
	return 0;
}

int orr_native_writer_flush(struct orr_native_writer *w)
{
	return flush(w, NULL);
}

/* Before anything is added: a sticky error, or a full frame to write first. */
static int prepare(struct orr_native_writer *w)
{
	if (w->err)
		return w->err;
	return w->pending_bytes >= w->frame_bytes ? flush(w, NULL) : 0;
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int rehash(struct orr_native_writer *w, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	const struct orr__native_str *d = w->strdefs.p;

	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id <= w->rows.strings; id++) {
		size_t i = d[id - 1].hash & (nslots - 1);

		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (uint32_t)id;
	}
	free(w->slots);
	w->slots = slots;
	w->nslots = nslots;
	return 0;
}

/* The slot of s: its id, or 0 where it would go. */
static size_t find_slot(const struct orr_native_writer *w, const char *s, size_t len, uint32_t h)
{
	const struct orr__native_str *d = w->strdefs.p;
	size_t i = h & (w->nslots - 1);

	for (; w->slots[i]; i = (i + 1) & (w->nslots - 1)) {
		const struct orr__native_str *e = &d[w->slots[i] - 1];

		if (e->hash == h && e->len == len &&
		    memcmp((const char *)w->strbytes.p + e->off, s, len) == 0)
			break;
	}
	return i;
}

int orr_native_writer_string(struct orr_native_writer *w, const char *s, size_t len,
			     uint32_t *ret_id)
{
	uint32_t h = hash_bytes(s, len);
	struct orr__native_str *d;
	size_t i;
	int r;

	if (w->err)
		return w->err;
	if (len == 0) {
		*ret_id = ORR_STR_NONE;
		return 0;
	}
	if (len > ORR__MAX_STRING_BYTES)
		return -E2BIG;
	if (memchr(s, '\0', len))
		return -EINVAL;
	i = find_slot(w, s, len, h);
	if (w->slots[i]) {
		*ret_id = w->slots[i];
		return 0;
	}
	if (w->rows.strings >= UINT32_MAX - 1)
		return -EOVERFLOW;
	if ((r = prepare(w)) || (r = orr__arr_reserve(&w->strbytes, 1, len)) ||
	    (r = orr__arr_reserve(&w->strdefs, sizeof(*d), 1)))
		return r;
	if ((w->rows.strings + 1) * 2 > w->nslots) {
		if ((r = rehash(w, w->nslots * 2)))
			return r;
		i = find_slot(w, s, len, h);
	}
	d = &((struct orr__native_str *)w->strdefs.p)[w->strdefs.n++];
	*d = (struct orr__native_str){ .off = w->strbytes.n, .len = (uint32_t)len, .hash = h };
	memcpy((char *)w->strbytes.p + w->strbytes.n, s, len);
	w->strbytes.n += len;
	w->slots[i] = (uint32_t)++w->rows.strings;
	w->pending_bytes += len + 3;
	*ret_id = w->slots[i];
	return 0;
}

/* Reserves one row of a table, after the checks that must come first. */
static int add_row(struct orr_native_writer *w, struct orr__arr *a, size_t elem, uint64_t rows)
{
	int r;

	if ((r = prepare(w)))
		return r;
	if (rows >= UINT32_MAX)
		return -EOVERFLOW;
	return orr__arr_reserve(a, elem, 1);
}

#define PUSH(arr, type) (&((type *)(arr).p)[(arr).n++])

int orr_native_writer_place(struct orr_native_writer *w, const struct orr_place *p,
			    uint32_t *ret_index)
{
	int r;

	if (p->name > w->rows.strings || p->kind > ORR_PLACE_STREAM)
		return w->err ? w->err : -EINVAL;
	if ((r = add_row(w, &w->p.places, sizeof(*p), w->rows.places)) ||
	    (r = orr__arr_reserve(&w->place_kinds, 1, 1)))
		return r;
	*PUSH(w->p.places, struct orr_place) = *p;
	*PUSH(w->place_kinds, uint8_t) = p->kind;
	w->pending_bytes += sizeof(*p);
	*ret_index = (uint32_t)w->rows.places++;
	return 0;
}

int orr_native_writer_op(struct orr_native_writer *w, int64_t sequence,
			 const struct orr_native_input *inputs, size_t ninputs, uint32_t *ret_index)
{
	size_t ndims = 0, nstrides = 0;
	struct orr_op_args *op;
	int r;

	for (size_t i = 0; i < ninputs; i++) {
		if (inputs[i].dtype > w->rows.strings || (inputs[i].ndims && !inputs[i].dims) ||
		    (inputs[i].nstrides && !inputs[i].strides))
			return w->err ? w->err : -EINVAL;
		ndims += inputs[i].ndims;
		nstrides += inputs[i].nstrides;
	}
	/* Far beyond any real op, and well inside one frame. */
	if (ninputs > ORR__NATIVE_MAX_ROW_ITEMS || ndims > ORR__NATIVE_MAX_ROW_ITEMS ||
	    nstrides > ORR__NATIVE_MAX_ROW_ITEMS)
		return -E2BIG;
	if ((r = add_row(w, &w->p.ops, sizeof(*op), w->rows.ops)) ||
	    (r = orr__arr_reserve(&w->p.inputs, sizeof(struct orr_input), ninputs)) ||
	    (r = orr__arr_reserve(&w->p.dims, sizeof(int64_t), ndims)) ||
	    (r = orr__arr_reserve(&w->p.strides, sizeof(int64_t), nstrides)))
		return r;
	op = PUSH(w->p.ops, struct orr_op_args);
	*op = (struct orr_op_args){ .ninputs = (uint32_t)ninputs, .sequence = sequence };
	for (size_t i = 0; i < ninputs; i++) {
		*PUSH(w->p.inputs, struct orr_input) = (struct orr_input){
			.ndims = inputs[i].ndims,
			.is_list = inputs[i].is_list,
			.dtype = inputs[i].dtype,
			.nstrides = inputs[i].nstrides,
		};
		if (inputs[i].ndims)
			memcpy((int64_t *)w->p.dims.p + w->p.dims.n, inputs[i].dims,
			       inputs[i].ndims * sizeof(int64_t));
		w->p.dims.n += inputs[i].ndims;
		if (inputs[i].nstrides)
			memcpy((int64_t *)w->p.strides.p + w->p.strides.n, inputs[i].strides,
			       inputs[i].nstrides * sizeof(int64_t));
		w->p.strides.n += inputs[i].nstrides;
	}
	w->pending_bytes += 12 + ninputs * 4 + ndims * 3 + nstrides * 3;
	*ret_index = (uint32_t)w->rows.ops++;
	return 0;
}

int orr_native_writer_kernel(struct orr_native_writer *w, const struct orr_kernel_args *a,
			     uint32_t *ret_index)
{
	int r;

	if ((r = add_row(w, &w->p.kernels, sizeof(*a), w->rows.kernels)))
		return r;
	*PUSH(w->p.kernels, struct orr_kernel_args) = *a;
	w->pending_bytes += 16;
	*ret_index = (uint32_t)w->rows.kernels++;
	return 0;
}

int orr_native_writer_copy(struct orr_native_writer *w, const struct orr_copy_args *a,
			   uint32_t *ret_index)
{
	int r;

	if ((r = add_row(w, &w->p.copies, sizeof(*a), w->rows.copies)))
		return r;
	*PUSH(w->p.copies, struct orr_copy_args) = *a;
	w->pending_bytes += sizeof(*a);
	*ret_index = (uint32_t)w->rows.copies++;
	return 0;
}

int orr_native_writer_sync(struct orr_native_writer *w, const struct orr_sync_args *a,
			   uint32_t *ret_index)
{
	int r;

	if ((r = add_row(w, &w->p.syncs, sizeof(*a), w->rows.syncs)))
		return r;
	*PUSH(w->p.syncs, struct orr_sync_args) = *a;
	w->pending_bytes += sizeof(*a);
	*ret_index = (uint32_t)w->rows.syncs++;
	return 0;
}

/* Members of a collective or communicator, after its row. */
static int add_members(struct orr_native_writer *w, struct orr__arr *a, const int32_t *members,
		       size_t n)
{
	if (n > ORR__NATIVE_MAX_ROW_ITEMS)
		return -E2BIG;
	if (n && !members)
		return -EINVAL;
	return orr__arr_reserve(a, sizeof(int32_t), n);
}

static void push_members(struct orr__arr *a, const int32_t *members, size_t n)
{
	if (n)
		memcpy((int32_t *)a->p + a->n, members, n * sizeof(int32_t));
	a->n += n;
}

int orr_native_writer_collective(struct orr_native_writer *w, const struct orr_collective *c,
				 const int32_t *members, size_t nmembers, uint32_t *ret_index)
{
	uint64_t ns = w->rows.strings;
	struct orr_collective *row;
	int r;

	if (c->type > ns || c->dtype > ns || c->pg_name > ns || c->pg_desc > ns)
		return w->err ? w->err : -EINVAL;
	if ((r = add_members(w, &w->p.cmembers, members, nmembers)) ||
	    (r = add_row(w, &w->p.colls, sizeof(*c), w->rows.colls)))
		return r;
	row = PUSH(w->p.colls, struct orr_collective);
	*row = *c;
	row->nmembers = (uint32_t)nmembers;
	push_members(&w->p.cmembers, members, nmembers);
	w->pending_bytes += sizeof(*c) / 2 + nmembers * 2;
	*ret_index = (uint32_t)w->rows.colls++;
	return 0;
}

int orr_native_writer_comm(struct orr_native_writer *w, const struct orr_comm *c,
			   const int32_t *members, size_t nmembers)
{
	uint64_t ns = w->rows.strings;
	struct orr_comm *row;
	int r;

	if (c->name > ns || c->desc > ns || c->backend > ns)
		return w->err ? w->err : -EINVAL;
	if ((r = add_members(w, &w->p.mmembers, members, nmembers)) ||
	    (r = add_row(w, &w->p.comms, sizeof(*c), 0)))
		return r;
	row = PUSH(w->p.comms, struct orr_comm);
	*row = *c;
	row->nmembers = (uint32_t)nmembers;
	push_members(&w->p.mmembers, members, nmembers);
	w->pending_bytes += sizeof(*c) + nmembers * 2;
	return 0;
}

int orr_native_writer_skipped(struct orr_native_writer *w, uint32_t category, uint64_t count)
{
	int r;

	if (category > w->rows.strings)
		return w->err ? w->err : -EINVAL;
	if ((r = add_row(w, &w->p.skipped, sizeof(struct orr_skipped), 0)))
		return r;
	*PUSH(w->p.skipped, struct orr_skipped) = (struct orr_skipped){ category, count };
	w->pending_bytes += 8;
	return 0;
}

static size_t varint_bytes(uint64_t v)
{
	return v ? (size_t)(64 - __builtin_clzll(v) + 6) / 7 : 1;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

int orr_native_writer_event(struct orr_native_writer *w, const struct orr_event *e)
{
	int r;

	if (orr__native_check_event(e, &w->rows) ||
	    orr__native_check_place(e, ((const uint8_t *)w->place_kinds.p)[e->place]))
		return w->err ? w->err : -EINVAL;
	if ((r = prepare(w)) || (r = orr__arr_reserve(&w->p.events, sizeof(*e), 1)))
		return r;
	*PUSH(w->p.events, struct orr_event) = *e;
	/* Close to the packed size: the start is a difference, the rest mostly small. */
	w->pending_bytes += varint_bytes(zigzag((int64_t)((uint64_t)e->start_ns -
							  (uint64_t)w->last_start_ns))) +
			    varint_bytes(zigzag(e->dur_ns)) + varint_bytes(e->name) + 12;
	w->last_start_ns = e->start_ns;
	w->nevents++;
	return 0;
}

int orr_native_writer_close(struct orr_native_writer *w, const struct orr_native_counts *c)
{
	Orrery__Native__Trailer tr = ORRERY__NATIVE__TRAILER__INIT;
	int r;

	tr.dropped_records = c->dropped_records;
	tr.dropped_events = c->dropped_events;
	tr.nflows = c->nflows;
	tr.first_step = c->first_step;
	tr.last_step = c->last_step;
	tr.events = w->nevents;
	r = flush(w, &tr);
	w->fd = -1;
	if (r)
		orr_outfile_abort(w->out);
	else
		r = orr_outfile_commit(w->out, w->fsync_on_close);
	orr__native_writer_free(w);
	return r;
}

void orr_native_writer_abort(struct orr_native_writer *w)
{
	if (!w)
		return;
	if (w->out)
		orr_outfile_abort(w->out);
	orr__native_writer_free(w);
}
