/* SPDX-License-Identifier: MIT */
/*
 * traces/native/native-write.h — the native writer's state, shared by native-write.c (the
 * API: rows in, frames out) and native-pack.c (opening, and rows -> protobuf records).
 */
#ifndef ORRERY_TRACES_NATIVE_WRITE_H
#define ORRERY_TRACES_NATIVE_WRITE_H

#include <zstd.h>

#include "../internal.h"
#include "orrery.pb-c.h"

/* A growable array that reports allocation failure instead of aborting. */
struct orr__arr {
	void *p;
	size_t n, cap;
};

/* Makes room for `more` elements of elem bytes: 0 or -ENOMEM (a is then unchanged). */
int orr__arr_reserve(struct orr__arr *a, size_t elem, size_t more);

/* A string of the file: bytes in strbytes[off .. off+len). */
struct orr__native_str {
	uint64_t off;
	uint32_t len, hash;
};

/* Rows added since the last frame, as the public structs (index fields unused). */
struct orr__native_pending {
	struct orr__arr places;   /* struct orr_place */
	struct orr__arr ops;      /* struct orr_op_args: ninputs, sequence */
	struct orr__arr inputs;   /* struct orr_input of the ops, in order */
	struct orr__arr dims;     /* int64_t of the inputs, in order */
	struct orr__arr strides;  /* int64_t of the inputs, in order */
	struct orr__arr kernels;  /* struct orr_kernel_args */
	struct orr__arr copies;   /* struct orr_copy_args */
	struct orr__arr syncs;    /* struct orr_sync_args */
	struct orr__arr colls;    /* struct orr_collective: nmembers */
	struct orr__arr cmembers; /* int32_t */
	struct orr__arr comms;    /* struct orr_comm: nmembers */
	struct orr__arr mmembers; /* int32_t */
	struct orr__arr skipped;  /* struct orr_skipped */
	struct orr__arr events;   /* struct orr_event */
};

struct orr_native_writer {
	int fd;                  /* out's, -1 once closed */
	int err;                 /* a failed write: every later call returns it */
	struct orr_outfile *out; /* the temporary and the final name (common/outfile.c) */
	bool fsync_on_close;
	size_t frame_bytes, pending_bytes;
	ZSTD_CCtx *cctx;
	struct orr__arr raw;     /* records of the frame being built */
	struct orr__arr zbuf;    /* the compressed frame */
	struct orr__arr scratch; /* columns of one batch */
	/* Strings: ids 1..rows.strings; those above strings_flushed are pending. */
	struct orr__arr strbytes, strdefs;
	uint32_t *slots; /* id, 0 = empty; nslots is a power of two */
	size_t nslots;
	uint64_t strings_flushed;
	struct orr__native_rows rows; /* rows defined so far, pending included */
	struct orr__arr place_kinds;  /* uint8_t per place */
	uint64_t nevents;
	int64_t last_start_ns;
	struct orr__native_pending p;
};

/* Writes all of data, through short writes and EINTR: 0 or -errno. */
int orr__native_write_all(int fd, const void *data, size_t n);
/* Appends a varint length and the packed record to w->raw. */
int orr__native_put_record(struct orr_native_writer *w, const Orrery__Native__Record *rec);
/* Appends the pending rows to w->raw as records: strings, places, tables, events. */
int orr__native_pack_pending(struct orr_native_writer *w);
/* Forgets the pending rows once their frame is written. */
void orr__native_pending_clear(struct orr_native_writer *w);
void orr__native_writer_free(struct orr_native_writer *w);

#endif
