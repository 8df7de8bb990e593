/* SPDX-License-Identifier: MIT */
/*
 * The native writer's other half: opening a file (preamble and header), and turning the
 * pending rows into columnar protobuf records.  Columns live in one scratch buffer
 * reused by every batch; protobuf-c packs from them without allocating.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native-write.h"
#include "orrery/native.h"
#include "banned.h"

int orr__native_put_record(struct orr_native_writer *w, const Orrery__Native__Record *rec)
{
	size_t n = orrery__native__record__get_packed_size(rec), k = 0;
	uint64_t v = n;
	uint8_t *p;
	int r;

	if (n > ORR__NATIVE_MAX_FRAME_BYTES - 16 - w->raw.n)
		return -E2BIG; /* cannot happen below the writer's own frame limit */
	if ((r = orr__arr_reserve(&w->raw, 1, n + 10)))
		return r;
	p = (uint8_t *)w->raw.p + w->raw.n;
	do {
		p[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	orrery__native__record__pack(rec, p + k);
	w->raw.n += k + n;
	return 0;
}

/* Scratch (counted in bytes) for one batch's columns: nl 8-byte elements, ns 4-byte ones. */
static int columns(struct orr_native_writer *w, size_t nl, size_t ns, int64_t **ret_l,
		   uint32_t **ret_s)
{
	int r = orr__arr_reserve(&w->scratch, 1, nl * 8 + ns * 4);

	if (r)
		return r;
	*ret_l = w->scratch.p;
	*ret_s = (uint32_t *)(*ret_l + nl);
	return 0;
}

/* The difference b - a, wrapping: the reader adds it back the same way. */
static int64_t delta(int64_t b, int64_t a)
{
	return (int64_t)((uint64_t)b - (uint64_t)a);
}

static uint32_t plus1(uint32_t index)
{
	return index == ORR_NONE ? 0 : index + 1;
}

static int pack_strings(struct orr_native_writer *w)
{
	Orrery__Native__Strings m = ORRERY__NATIVE__STRINGS__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr__native_str *d = w->strdefs.p;
	size_t n = (size_t)(w->rows.strings - w->strings_flushed);
	ProtobufCBinaryData *text;
	int r;

	if (!n)
		return 0;
	if ((r = orr__arr_reserve(&w->scratch, 1, n * sizeof(*text))))
		return r;
	text = w->scratch.p;
	for (size_t i = 0; i < n; i++) {
		const struct orr__native_str *s = &d[w->strings_flushed + i];

		text[i] = (ProtobufCBinaryData){ s->len, (uint8_t *)w->strbytes.p + s->off };
	}
	m.n_text = n;
	m.text = text;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_STRINGS;
	rec.strings = &m;
	return orr__native_put_record(w, &rec);
}

static int pack_places(struct orr_native_writer *w)
{
	Orrery__Native__Places m = ORRERY__NATIVE__PLACES__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_place *p = w->p.places.p;
	size_t n = w->p.places.n;
	int64_t *l;
	uint32_t *s;
	int r;

	if (!n)
		return 0;
	if ((r = columns(w, 2 * n, 3 * n, &l, &s)))
		return r;
	m.n_pid = m.n_tid = m.n_name = m.n_device = m.n_kind = n;
	m.pid = l, m.tid = l + n;
	m.name = s, m.device = (int32_t *)s + n, m.kind = s + 2 * n;
	for (size_t i = 0; i < n; i++) {
		m.pid[i] = p[i].pid;
		m.tid[i] = p[i].tid;
		m.name[i] = p[i].name;
		m.device[i] = p[i].device;
		m.kind[i] = p[i].kind;
	}
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_PLACES;
	rec.places = &m;
	return orr__native_put_record(w, &rec);
}

static int pack_ops(struct orr_native_writer *w)
{
	Orrery__Native__Ops m = ORRERY__NATIVE__OPS__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_op_args *op = w->p.ops.p;
	const struct orr_input *in = w->p.inputs.p;
	size_t n = w->p.ops.n, ni = w->p.inputs.n;
	/* nstrides only when some input has strides: files without stay as they were */
	size_t ns = w->p.strides.n ? ni : 0;
	int64_t *l;
	uint32_t *s;
	int r;

	if (!n)
		return 0;
	/* n rows of sequence and ninputs, then ni of ndims, is_list and dtype, ns of nstrides. */
	if ((r = columns(w, n, n + 3 * ni + ns, &l, &s)))
		return r;
	m.n_sequence = m.n_ninputs = n;
	m.n_ndims = m.n_is_list = m.n_dtype = ni;
	m.sequence = l;
	m.ninputs = s, m.ndims = s + n, m.is_list = s + n + ni, m.dtype = s + n + 2 * ni;
	for (size_t i = 0; i < n; i++) {
		m.sequence[i] = op[i].sequence;
		m.ninputs[i] = op[i].ninputs;
	}
	for (size_t i = 0; i < ni; i++) {
		m.ndims[i] = in[i].ndims;
		m.is_list[i] = in[i].is_list;
		m.dtype[i] = in[i].dtype;
	}
	m.n_nstrides = ns;
	m.nstrides = s + n + 3 * ni;
	for (size_t i = 0; i < ns; i++)
		m.nstrides[i] = in[i].nstrides;
	m.n_dims = w->p.dims.n;
	m.dims = w->p.dims.p;
	m.n_strides = w->p.strides.n;
	m.strides = w->p.strides.p;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_OPS;
	rec.ops = &m;
	return orr__native_put_record(w, &rec);
}

static int pack_kernels(struct orr_native_writer *w)
{
	Orrery__Native__Kernels m = ORRERY__NATIVE__KERNELS__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_kernel_args *a = w->p.kernels.p;
	size_t n = w->p.kernels.n;
	uint32_t *s, *col[8];
	int64_t *l;
	int r = 0;

	if (!n || (r = columns(w, 0, 8 * n, &l, &s)))
		return r;
	for (size_t k = 0; k < 8; k++)
		col[k] = s + k * n;
	m.n_grid_x = m.n_grid_y = m.n_grid_z = m.n_block_x = m.n_block_y = m.n_block_z = n;
	m.n_shared_bytes = m.n_registers = n;
	m.grid_x = col[0], m.grid_y = col[1], m.grid_z = col[2];
	m.block_x = col[3], m.block_y = col[4], m.block_z = col[5];
	m.shared_bytes = col[6], m.registers = col[7];
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < 3; k++) {
			col[k][i] = a[i].grid[k];
			col[3 + k][i] = a[i].block[k];
		}
		col[6][i] = a[i].shared_bytes;
		col[7][i] = a[i].registers;
	}
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_KERNELS;
	rec.kernels = &m;
	return orr__native_put_record(w, &rec);
}

static int pack_copies_syncs(struct orr_native_writer *w)
{
	Orrery__Native__Copies mc = ORRERY__NATIVE__COPIES__INIT;
	Orrery__Native__Syncs ms = ORRERY__NATIVE__SYNCS__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_sync_args *a = w->p.syncs.p;
	size_t n = w->p.syncs.n;
	int64_t *l;
	uint32_t *s;
	int r = 0;

	if (w->p.copies.n) {
		/* struct orr_copy_args is one int64_t: the rows are the column. */
		mc.n_bytes = w->p.copies.n;
		mc.bytes = w->p.copies.p;
		rec.body_case = ORRERY__NATIVE__RECORD__BODY_COPIES;
		rec.copies = &mc;
		if ((r = orr__native_put_record(w, &rec)))
			return r;
	}
	if (!n || (r = columns(w, 4 * n, 0, &l, &s)))
		return r;
	ms.n_stream = ms.n_wait_on_stream = ms.n_event_record_corr = ms.n_event_id = n;
	ms.stream = l, ms.wait_on_stream = l + n, ms.event_record_corr = l + 2 * n;
	ms.event_id = l + 3 * n;
	for (size_t i = 0; i < n; i++) {
		ms.stream[i] = a[i].stream;
		ms.wait_on_stream[i] = a[i].wait_on_stream;
		ms.event_record_corr[i] = a[i].event_record_corr;
		ms.event_id[i] = a[i].event_id;
	}
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_SYNCS;
	rec.syncs = &ms;
	return orr__native_put_record(w, &rec);
}

static void fill_collectives(Orrery__Native__Collectives *m, const struct orr_collective *c,
			     size_t n, int64_t *l, uint32_t *s)
{
	m->n_in_nelems = m->n_out_nelems = m->n_in_bytes = m->n_out_bytes = m->n_sequence = n;
	m->n_type = m->n_dtype = m->n_pg_name = m->n_pg_desc = m->n_nmembers = n;
	m->n_group_size = m->n_src_rank = m->n_dst_rank = n;
	m->in_nelems = l, m->out_nelems = l + n, m->in_bytes = l + 2 * n;
	m->out_bytes = l + 3 * n, m->sequence = l + 4 * n;
	m->type = s, m->dtype = s + n, m->pg_name = s + 2 * n, m->pg_desc = s + 3 * n;
	m->nmembers = s + 4 * n, m->group_size = (int32_t *)s + 5 * n;
	m->src_rank = (int32_t *)s + 6 * n, m->dst_rank = (int32_t *)s + 7 * n;
	for (size_t i = 0; i < n; i++) {
		m->in_nelems[i] = c[i].in_nelems;
		m->out_nelems[i] = c[i].out_nelems;
		m->in_bytes[i] = c[i].in_bytes;
		m->out_bytes[i] = c[i].out_bytes;
		m->sequence[i] = c[i].sequence;
		m->type[i] = c[i].type;
		m->dtype[i] = c[i].dtype;
		m->pg_name[i] = c[i].pg_name;
		m->pg_desc[i] = c[i].pg_desc;
		m->nmembers[i] = c[i].nmembers;
		m->group_size[i] = c[i].group_size;
		m->src_rank[i] = c[i].src_rank;
		m->dst_rank[i] = c[i].dst_rank;
	}
}

static int pack_collectives(struct orr_native_writer *w)
{
	Orrery__Native__Collectives m = ORRERY__NATIVE__COLLECTIVES__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	size_t n = w->p.colls.n;
	int64_t *l;
	uint32_t *s;
	int r;

	if (!n)
		return 0;
	if ((r = columns(w, 5 * n, 8 * n, &l, &s)))
		return r;
	fill_collectives(&m, w->p.colls.p, n, l, s);
	m.n_members = w->p.cmembers.n;
	m.members = w->p.cmembers.p;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_COLLECTIVES;
	rec.collectives = &m;
	return orr__native_put_record(w, &rec);
}

static int pack_comms_skipped(struct orr_native_writer *w)
{
	Orrery__Native__Comms mc = ORRERY__NATIVE__COMMS__INIT;
	Orrery__Native__Skipped ms = ORRERY__NATIVE__SKIPPED__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_comm *c = w->p.comms.p;
	const struct orr_skipped *k = w->p.skipped.p;
	size_t n = w->p.comms.n, nk = w->p.skipped.n;
	int64_t *l;
	uint32_t *s;
	int r = 0;

	if (n) {
		if ((r = columns(w, 0, 5 * n, &l, &s)))
			return r;
		mc.n_name = mc.n_desc = mc.n_backend = mc.n_size = mc.n_nmembers = n;
		mc.name = s, mc.desc = s + n, mc.backend = s + 2 * n;
		mc.size = (int32_t *)s + 3 * n, mc.nmembers = s + 4 * n;
		for (size_t i = 0; i < n; i++) {
			mc.name[i] = c[i].name;
			mc.desc[i] = c[i].desc;
			mc.backend[i] = c[i].backend;
			mc.size[i] = c[i].size;
			mc.nmembers[i] = c[i].nmembers;
		}
		mc.n_members = w->p.mmembers.n;
		mc.members = w->p.mmembers.p;
		rec.body_case = ORRERY__NATIVE__RECORD__BODY_COMMS;
		rec.comms = &mc;
		if ((r = orr__native_put_record(w, &rec)))
			return r;
	}
	if (!nk || (r = columns(w, nk, nk, &l, &s)))
		return r;
	ms.n_count = ms.n_category = nk;
	ms.count = (uint64_t *)l, ms.category = s;
	for (size_t i = 0; i < nk; i++) {
		ms.count[i] = k[i].count;
		ms.category[i] = k[i].category;
	}
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_SKIPPED;
	rec.skipped = &ms;
	return orr__native_put_record(w, &rec);
}

static int pack_events(struct orr_native_writer *w)
{
	Orrery__Native__Events m = ORRERY__NATIVE__EVENTS__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	const struct orr_event *e = w->p.events.p;
	size_t n = w->p.events.n;
	int64_t start = 0, *l, *last; /* last: correlation, external id per slot */
	uint32_t *s;
	int r;

	if (!n)
		return 0;
	if ((r = columns(w, 4 * n + 2 * ORR__NATIVE_SLOTS, 5 * n, &l, &s)))
		return r;
	m.n_start = m.n_dur = m.n_correlation = m.n_external_id = n;
	m.n_name = m.n_place = m.n_args = m.n_coll = m.n_bits = n;
	m.start = l, m.dur = l + n, m.correlation = l + 2 * n, m.external_id = l + 3 * n;
	m.name = s, m.place = s + n, m.args = s + 2 * n, m.coll = s + 3 * n, m.bits = s + 4 * n;
	last = l + 4 * n;
	for (size_t i = 0; i < 2 * ORR__NATIVE_SLOTS; i++)
		last[i] = -1;
	for (size_t i = 0; i < n; i++) {
		int64_t *p = &last[2 * orr__native_slot(e[i].place, e[i].kind)];

		m.start[i] = delta(e[i].start_ns, start);
		m.dur[i] = e[i].dur_ns;
		m.correlation[i] = delta(e[i].correlation, p[0]);
		m.external_id[i] = delta(e[i].external_id, p[1]);
		start = e[i].start_ns, p[0] = e[i].correlation, p[1] = e[i].external_id;
		m.name[i] = e[i].name;
		m.place[i] = e[i].place;
		m.args[i] = plus1(e[i].args);
		m.coll[i] = plus1(e[i].coll);
		m.bits[i] = e[i].kind | (uint32_t)e[i].sub << 8 | (uint32_t)e[i].flags << 16;
	}
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_EVENTS;
	rec.events = &m;
	return orr__native_put_record(w, &rec);
}

/* Definitions first, so that every reference points back. */
int orr__native_pack_pending(struct orr_native_writer *w)
{
	int r;

	if ((r = pack_strings(w)) || (r = pack_places(w)) || (r = pack_ops(w)) ||
	    (r = pack_kernels(w)) || (r = pack_copies_syncs(w)) || (r = pack_collectives(w)) ||
	    (r = pack_comms_skipped(w)))
		return r;
	return pack_events(w);
}

void orr__native_pending_clear(struct orr_native_writer *w)
{
	struct orr__arr *a = &w->p.places;

	for (size_t i = 0; i < sizeof(w->p) / sizeof(*a); i++)
		a[i].n = 0;
	w->strings_flushed = w->rows.strings;
	w->pending_bytes = 0;
}

void orr__native_writer_free(struct orr_native_writer *w)
{
	struct orr__arr *a = &w->p.places;

	for (size_t i = 0; i < sizeof(w->p) / sizeof(*a); i++)
		free(a[i].p);
	free(w->raw.p);
	free(w->zbuf.p);
	free(w->scratch.p);
	free(w->strbytes.p);
	free(w->strdefs.p);
	free(w->slots);
	free(w->place_kinds.p);
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w);
}

static ProtobufCBinaryData bin(const char *s)
{
	return (ProtobufCBinaryData){ s ? strlen(s) : 0, (uint8_t *)s };
}

static void header_fields(Orrery__Native__Header *m, const struct orr_native_header *h)
{
	m->format_version = ORR_NATIVE_VERSION;
	m->rank = h->rank;
	m->world_size = h->world_size;
	m->local_rank = h->local_rank;
	m->pid = h->pid;
	m->host = bin(h->host);
	m->producer = bin(h->producer);
	m->clock_source = bin(h->clock_source);
	m->source = bin(h->source);
	m->backend = bin(h->backend);
	m->base_time_ns = h->base_time_ns;
	m->cupti_version = h->cupti_version;
	m->cuda_driver_version = h->cuda_driver_version;
	m->cuda_runtime_version = h->cuda_runtime_version;
}

/* The header record goes into w->raw: the first record of the first frame. */
static int put_header(struct orr_native_writer *w, const struct orr_native_header *h)
{
	Orrery__Native__Header m = ORRERY__NATIVE__HEADER__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	Orrery__Native__Device *devs = NULL, **ptrs = NULL;
	const char *strs[] = { h->host, h->producer, h->clock_source, h->source, h->backend };
	int r;

	for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++)
		if (strs[i] && strlen(strs[i]) > ORR__MAX_STRING_BYTES)
			return -E2BIG;
	if (h->ndevices > 4096)
		return -E2BIG;
	for (size_t i = 0; i < h->ndevices; i++)
		if (h->devices[i].name && strlen(h->devices[i].name) > ORR__MAX_STRING_BYTES)
			return -E2BIG;
	header_fields(&m, h);
	if (h->ndevices) {
		devs = malloc(h->ndevices * (sizeof(*devs) + sizeof(*ptrs)));
		if (!devs)
			return -ENOMEM;
		ptrs = (Orrery__Native__Device **)(devs + h->ndevices);
	}
	for (size_t i = 0; i < h->ndevices; i++) {
		const struct orr_native_device *d = &h->devices[i];

		devs[i] = (Orrery__Native__Device)ORRERY__NATIVE__DEVICE__INIT;
		devs[i].id = d->id;
		devs[i].name = bin(d->name);
		devs[i].num_sms = d->num_sms;
		devs[i].compute_major = d->compute_major;
		devs[i].compute_minor = d->compute_minor;
		devs[i].total_mem_bytes = d->total_mem_bytes;
		ptrs[i] = &devs[i];
	}
	m.n_devices = h->ndevices;
	m.devices = ptrs;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_HEADER;
	rec.header = &m;
	r = orr__native_put_record(w, &rec);
	free(devs);
	return r;
}

static int writer_new(const char *path, const struct orr_native_writer_options *opts,
		      struct orr_native_writer **ret_w)
{
	struct orr_native_writer *w = calloc(1, sizeof(*w));
	int level = opts && opts->zstd_level ? opts->zstd_level : 3;

	if (!w)
		return -ENOMEM;
	w->fd = -1;
	*ret_w = w;
	w->frame_bytes = opts && opts->frame_bytes ? opts->frame_bytes : 1u << 20;
	if (w->frame_bytes > ORR__NATIVE_MAX_WRITE_FRAME)
		w->frame_bytes = ORR__NATIVE_MAX_WRITE_FRAME;
	w->fsync_on_close = opts && opts->fsync_on_close;
	w->nslots = 1024;
	w->slots = calloc(w->nslots, sizeof(*w->slots));
	w->out = calloc(1, sizeof(*w->out));
	w->cctx = ZSTD_createCCtx();
	if (!w->slots || !w->out || !w->cctx)
		return -ENOMEM;
	/* One frame per call of ZSTD_compress2(): the content size goes into its header. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	return 0;
}

int orr_native_writer_open(const char *path, const struct orr_native_header *h,
			   const struct orr_native_writer_options *opts,
			   struct orr_native_writer **ret_w)
{
	unsigned char pre[ORR__NATIVE_PREAMBLE_BYTES];
	struct orr_native_writer *w = NULL;
	int r;

	memcpy(pre, orr__native_magic, 16);
	pre[16] = ORR_NATIVE_VERSION & 0xff;
	pre[17] = (ORR_NATIVE_VERSION >> 8) & 0xff;
	pre[18] = pre[19] = 0;
	if ((r = writer_new(path, opts, &w)) || (r = put_header(w, h)))
		goto out;
	if ((r = orr_outfile_open(w->out, path,
				  opts && opts->regular_only ? ORR_OUTFILE_REGULAR : 0)))
		goto out;
	w->fd = orr_outfile_fd(w->out);
	if ((r = orr__native_write_all(w->fd, pre, sizeof(pre))))
		goto out;
	*ret_w = w;
	w = NULL;
out:
	orr_native_writer_abort(w);
	return r;
}
