/* SPDX-License-Identifier: MIT */
/*
 * traces/native/native-read.h — the native reader's state, shared by native-read.c (frames,
 * records, header, trailer) and native-tables.c (the batches of rows).
 */
#ifndef ORRERY_TRACES_NATIVE_READ_H
#define ORRERY_TRACES_NATIVE_READ_H

#include <zstd.h>

#include "../internal.h"
#include "orrery.pb-c.h"

struct orr__native_reader {
	struct orr_trace *t;
	struct orr__rank_build *rb;
	const char *name;
	struct orr_diag *diag;
	const struct orr_import_options *opts;
	const struct orr__limits *limits;
	uint64_t total;      /* decompressed bytes so far */
	uint64_t *run_bytes; /* of the whole import */
	int64_t frame_off;   /* where the frame being read starts in the file */
	size_t record;       /* its record being read, SIZE_MAX between records */
	int64_t event;       /* the event at fault, -1 */
	size_t nframes;      /* complete frames read */
	bool header, trailer;
	int64_t *last;  /* correlation, external id per slot: 2 * ORR__NATIVE_SLOTS */
	uint32_t *strs; /* the file's string id - 1 -> the trace's */
	size_t nstrs, strcap;
	ZSTD_DCtx *dctx;
	uint8_t *out; /* the decompressed frame */
	size_t outcap;
};

/* Fills the diag (file, frame offset, record, event) and returns err. */
int orr__native_fail(struct orr__native_reader *rd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a limit passed (orr__limit_fail()). */
int orr__native_limit(struct orr__native_reader *rd, enum orr__limit which);
/* Checks bytes of the file and interns them. */
int orr__native_text(struct orr__native_reader *rd, ProtobufCBinaryData b, uint32_t *ret_id);

int orr__native_read_strings(struct orr__native_reader *rd, const Orrery__Native__Strings *m);
int orr__native_read_places(struct orr__native_reader *rd, const Orrery__Native__Places *m);
int orr__native_read_events(struct orr__native_reader *rd, const Orrery__Native__Events *m);
int orr__native_read_ops(struct orr__native_reader *rd, const Orrery__Native__Ops *m);
int orr__native_read_kernels(struct orr__native_reader *rd, const Orrery__Native__Kernels *m);
int orr__native_read_copies(struct orr__native_reader *rd, const Orrery__Native__Copies *m);
int orr__native_read_syncs(struct orr__native_reader *rd, const Orrery__Native__Syncs *m);
int orr__native_read_collectives(struct orr__native_reader *rd,
				 const Orrery__Native__Collectives *m);
int orr__native_read_comms(struct orr__native_reader *rd, const Orrery__Native__Comms *m);
int orr__native_read_skipped(struct orr__native_reader *rd, const Orrery__Native__Skipped *m);

#endif
