/* SPDX-License-Identifier: MIT */
/*
 * The native reader: frames, records, and the header and trailer.  The file is the
 * finished model of one rank, so nothing is derived here: every field is checked and
 * copied (native-tables.c).  A frame is only read whole: its size comes from the zstd
 * frame header, so a file cut short is seen as a frame that runs past the end, and
 * everything before it is kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "native-read.h"
#include "orrery/native.h"
#include "banned.h"

int orr__native_fail(struct orr__native_reader *rd, int err, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rd->record == SIZE_MAX)
		return orr_diag_set(rd->diag, err, rd->name, rd->frame_off, rd->event, "%s", msg);
	return orr_diag_set(rd->diag, err, rd->name, rd->frame_off, rd->event,
			    "record %zu of the frame: %s", rd->record, msg);
}

int orr__native_limit(struct orr__native_reader *rd, enum orr__limit which)
{
	struct orr_diag d;

	orr__limit_fail(rd->limits, which, &d, rd->name, -1, -1);
	return orr__native_fail(rd, ORR_ETOOBIG, "%s", d.msg);
}

/* Bytes from the file: no NUL (the model's strings are C strings), bounded length. */
int orr__native_text(struct orr__native_reader *rd, ProtobufCBinaryData b, uint32_t *ret_id)
{
	if (b.len > rd->limits->max[ORR__LIMIT_STRING_BYTES])
		return orr__native_limit(rd, ORR__LIMIT_STRING_BYTES);
	if (b.len && memchr(b.data, '\0', b.len))
		return orr__native_fail(rd, ORR_EMALFORMED, "expected a string without NUL bytes");
	*ret_id = orr_strtab_intern(rd->t->strs, (const char *)b.data, b.len);
	return 0;
}

static int read_devices(struct orr__native_reader *rd, const Orrery__Native__Header *m)
{
	struct orr_device *d;
	int r;

	if (m->n_devices > 4096)
		return orr__native_fail(rd, ORR_ETOOBIG, "%zu devices (at most 4096)",
					m->n_devices);
	d = orr__vec_extend(&rd->rb->devices, m->n_devices);
	for (size_t i = 0; i < m->n_devices; i++) {
		const Orrery__Native__Device *dev = m->devices[i];

		d[i] = (struct orr_device){
			.id = dev->id,
			.num_sms = dev->num_sms,
			.compute_major = dev->compute_major,
			.compute_minor = dev->compute_minor,
			.total_mem_bytes = dev->total_mem_bytes,
		};
		if ((r = orr__native_text(rd, dev->name, &d[i].name)))
			return r;
	}
	return 0;
}

static int read_header(struct orr__native_reader *rd, const Orrery__Native__Header *m)
{
	struct orr_rank *p = &rd->rb->pub;
	uint32_t ignored;
	int r;

	if (m->format_version != ORR_NATIVE_VERSION)
		return orr__native_fail(rd, ORR_EFORMAT,
					"the header says format version %u, the preamble %d",
					m->format_version, ORR_NATIVE_VERSION);
	if (m->rank < -1 || m->local_rank < -1 || m->world_size < -1 || m->world_size == 0)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"expected a rank, local rank and world size of -1 "
					"(unknown) or more, and a world size not 0");
	p->rank = m->rank;
	rd->rb->has_rank = m->rank >= 0;
	p->world_size = m->world_size;
	p->local_rank = m->local_rank;
	p->pid = m->pid;
	p->base_time_ns = m->base_time_ns;
	p->cupti_version = m->cupti_version;
	p->cuda_driver_version = m->cuda_driver_version;
	p->cuda_runtime_version = m->cuda_runtime_version;
	/* source names the file the events came from; the rank's source is this file. */
	if ((r = orr__native_text(rd, m->host, &p->host)) ||
	    (r = orr__native_text(rd, m->producer, &p->producer)) ||
	    (r = orr__native_text(rd, m->clock_source, &p->clock_source)) ||
	    (r = orr__native_text(rd, m->backend, &p->backend)) ||
	    (r = orr__native_text(rd, m->source, &ignored)))
		return r;
	rd->header = true;
	return read_devices(rd, m);
}

static int read_trailer(struct orr__native_reader *rd, const Orrery__Native__Trailer *m)
{
	struct orr_rank *p = &rd->rb->pub;

	if (m->events != rd->rb->events.n)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"the trailer counts %llu events, the file holds %zu",
					(unsigned long long)m->events, rd->rb->events.n);
	if (m->first_step < -1 || m->last_step < -1)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"expected steps of -1 (not windowed) or more");
	p->dropped_records = m->dropped_records;
	p->dropped_events = m->dropped_events;
	p->nflows = m->nflows;
	p->first_step = m->first_step;
	p->last_step = m->last_step;
	rd->trailer = true;
	return 0;
}

static int read_record(struct orr__native_reader *rd, const Orrery__Native__Record *m)
{
	if (rd->trailer)
		return orr__native_fail(rd, ORR_EMALFORMED, "expected nothing after the trailer");
	if (!rd->header && m->body_case != ORRERY__NATIVE__RECORD__BODY_HEADER)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"expected the header as the first record");
	switch (m->body_case) {
	case ORRERY__NATIVE__RECORD__BODY_HEADER:
		if (rd->header)
			return orr__native_fail(rd, ORR_EMALFORMED, "expected one header only");
		return read_header(rd, m->header);
	case ORRERY__NATIVE__RECORD__BODY_STRINGS:
		return orr__native_read_strings(rd, m->strings);
	case ORRERY__NATIVE__RECORD__BODY_PLACES:
		return orr__native_read_places(rd, m->places);
	case ORRERY__NATIVE__RECORD__BODY_EVENTS:
		return orr__native_read_events(rd, m->events);
	case ORRERY__NATIVE__RECORD__BODY_OPS:
		return orr__native_read_ops(rd, m->ops);
	case ORRERY__NATIVE__RECORD__BODY_KERNELS:
		return orr__native_read_kernels(rd, m->kernels);
	case ORRERY__NATIVE__RECORD__BODY_COPIES:
		return orr__native_read_copies(rd, m->copies);
	case ORRERY__NATIVE__RECORD__BODY_SYNCS:
		return orr__native_read_syncs(rd, m->syncs);
	case ORRERY__NATIVE__RECORD__BODY_COLLECTIVES:
		return orr__native_read_collectives(rd, m->collectives);
	case ORRERY__NATIVE__RECORD__BODY_COMMS:
		return orr__native_read_comms(rd, m->comms);
	case ORRERY__NATIVE__RECORD__BODY_SKIPPED:
		return orr__native_read_skipped(rd, m->skipped);
	case ORRERY__NATIVE__RECORD__BODY_TRAILER:
		return read_trailer(rd, m->trailer);
	default:
		return orr__native_fail(rd, ORR_EMALFORMED, "expected a known record type");
	}
}

static void *pb_alloc(void *data, size_t size)
{
	return orr_xmalloc(size ? size : 1);
}

static void pb_free(void *data, void *p)
{
	free(p);
}

static ProtobufCAllocator pb_allocator = { pb_alloc, pb_free, NULL };

/* The records of one decompressed frame: a varint length, then a Record, repeated. */
static int read_records(struct orr__native_reader *rd, const uint8_t *p, size_t n)
{
	size_t pos = 0;

	for (rd->record = 0; pos < n; rd->record++) {
		Orrery__Native__Record *m;
		uint64_t len = 0;
		int shift = 0, r;
		uint8_t b;

		do {
			if (pos >= n || shift > 63)
				return orr__native_fail(rd, ORR_EMALFORMED,
							"expected a record length (a varint)");
			b = p[pos++];
			len |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		} while (b & 0x80);
		if (len > n - pos)
			return orr__native_fail(
				rd, ORR_EMALFORMED,
				"a record of %llu bytes where the frame has %zu left",
				(unsigned long long)len, n - pos);
		m = orrery__native__record__unpack(&pb_allocator, (size_t)len, p + pos);
		if (!m)
			return orr__native_fail(rd, ORR_EMALFORMED,
						"expected a protobuf Record (orrery.proto)");
		r = read_record(rd, m);
		orrery__native__record__free_unpacked(m, &pb_allocator);
		if (r)
			return r;
		/* Checked per record: a frame of 256 MiB holds tens of millions of rows. */
		if (rd->rb->events.n > rd->limits->max[ORR__LIMIT_EVENTS])
			return orr__native_limit(rd, ORR__LIMIT_EVENTS);
		if (rd->rb->places.n > rd->limits->max[ORR__LIMIT_PLACES])
			return orr__native_limit(rd, ORR__LIMIT_PLACES);
		pos += (size_t)len;
	}
	rd->record = SIZE_MAX;
	return 0;
}

/* A frame that cannot be read whole: keep what came before, unless that is nothing. */
static int truncated(struct orr__native_reader *rd, size_t off, const char *why)
{
	char msg[1024];

	rd->record = SIZE_MAX;
	rd->frame_off = (int64_t)off;
	if (!rd->header)
		return orr__native_fail(rd, ORR_ETRUNCATED,
					"cut short inside its first frame (%s): nothing to keep",
					why);
	rd->rb->pub.truncated = true;
	if (rd->opts && rd->opts->warn) {
		snprintf(msg, sizeof(msg),
			 "'%s': truncated at byte %zu (%s): kept %zu events from the %zu "
			 "complete frame%s before it",
			 rd->name, off, why, rd->rb->events.n, rd->nframes,
			 rd->nframes == 1 ? "" : "s");
		rd->opts->warn(rd->opts->warn_data, msg);
	}
	return 0;
}

static int decompress(struct orr__native_reader *rd, const uint8_t *p, size_t csize)
{
	unsigned long long size = ZSTD_getFrameContentSize(p, csize);
	size_t z;

	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR)
		return orr__native_fail(rd, ORR_EMALFORMED,
					"expected a zstd frame that declares its size");
	if (size > ORR__NATIVE_MAX_FRAME_BYTES)
		return orr__native_fail(rd, ORR_ETOOBIG,
					"a frame of %llu bytes once decompressed (the format "
					"allows %u)",
					size, ORR__NATIVE_MAX_FRAME_BYTES);
	if (size > ORR__RATIO_FLOOR_BYTES && size / csize > rd->limits->max[ORR__LIMIT_RATIO])
		return orr__native_limit(rd, ORR__LIMIT_RATIO);
	if (size > rd->limits->max[ORR__LIMIT_FILE_BYTES] - rd->total)
		return orr__native_limit(rd, ORR__LIMIT_FILE_BYTES);
	if (size > rd->limits->max[ORR__LIMIT_RUN_BYTES] - *rd->run_bytes)
		return orr__native_limit(rd, ORR__LIMIT_RUN_BYTES);
	if (size + 1 > rd->outcap) {
		free(rd->out);
		rd->outcap = (size_t)size + 1;
		rd->out = orr_xmalloc(rd->outcap);
	}
	z = ZSTD_decompressDCtx(rd->dctx, rd->out, (size_t)size, p, csize);
	if (ZSTD_isError(z) || z != size)
		return orr__native_fail(rd, ORR_EMALFORMED, "the frame does not decompress: %s",
					ZSTD_isError(z) ? ZSTD_getErrorName(z)
							: "not the size its header declares");
	rd->total += size;
	*rd->run_bytes += size;
	return read_records(rd, rd->out, (size_t)size);
}

static bool skippable(const uint8_t *p)
{
	uint32_t magic = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24;

	return (magic & 0xFFFFFFF0u) == ZSTD_MAGIC_SKIPPABLE_START;
}

static int read_frames(struct orr__native_reader *rd, const uint8_t *p, size_t len)
{
	size_t off = ORR__NATIVE_PREAMBLE_BYTES;
	int r;

	while (off < len) {
		size_t csize = ZSTD_findFrameCompressedSize(p + off, len - off);

		rd->frame_off = (int64_t)off;
		rd->record = SIZE_MAX;
		if (rd->trailer)
			return orr__native_fail(rd, ORR_EMALFORMED,
						"expected the end of the file after the trailer");
		if (ZSTD_isError(csize) && ZSTD_getErrorCode(csize) == ZSTD_error_srcSize_wrong)
			return truncated(rd, off, "a frame runs past the end of the file");
		if (ZSTD_isError(csize))
			return orr__native_fail(rd, ORR_EMALFORMED, "expected a zstd frame: %s",
						ZSTD_getErrorName(csize));
		if (!skippable(p + off)) {
			if ((r = decompress(rd, p + off, csize)))
				return r;
			rd->nframes++;
		}
		off += csize;
	}
	return rd->trailer ? 0 : truncated(rd, off, "no trailer");
}

static int check_preamble(struct orr__native_reader *rd, const uint8_t *p, size_t len)
{
	uint32_t version;

	rd->frame_off = 0;
	if (len < ORR__NATIVE_PREAMBLE_BYTES)
		return orr__native_fail(rd, ORR_ETRUNCATED,
					"expected a %d-byte preamble, the file has %zu bytes",
					ORR__NATIVE_PREAMBLE_BYTES, len);
	if (memcmp(p, orr__native_magic, 16) != 0)
		return orr__native_fail(rd, ORR_EFORMAT,
					"expected the native preamble (\"ORRERY\" in a zstd "
					"skippable frame)");
	version = (uint32_t)p[16] | (uint32_t)p[17] << 8 | (uint32_t)p[18] << 16 |
		  (uint32_t)p[19] << 24;
	if (version != ORR_NATIVE_VERSION)
		return orr__native_fail(rd, ORR_EFORMAT,
					"unsupported native format version %u (this orrery reads "
					"%d)",
					version, ORR_NATIVE_VERSION);
	return 0;
}

int orr__native_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
		      const void *data, size_t len, const struct orr__limits *limits,
		      uint64_t *run_bytes, const struct orr_import_options *opts,
		      struct orr_diag *diag)
{
	struct orr__native_reader rd = {
		.t = t,
		.rb = rb,
		.name = name,
		.diag = diag,
		.opts = opts,
		.limits = limits,
		.run_bytes = run_bytes,
		.record = SIZE_MAX,
		.event = -1,
	};
	int r;

	if ((r = check_preamble(&rd, data, len)))
		return r;
	rd.dctx = ZSTD_createDCtx();
	if (!rd.dctx)
		return orr_diag_set(diag, -ENOMEM, name, -1, -1, "cannot start zstd");
	rd.last = orr_xmalloc(2 * ORR__NATIVE_SLOTS * sizeof(*rd.last));
	r = read_frames(&rd, data, len);
	free(rd.last);
	ZSTD_freeDCtx(rd.dctx);
	free(rd.out);
	free(rd.strs);
	return r;
}
