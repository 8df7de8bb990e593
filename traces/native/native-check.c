/* SPDX-License-Identifier: MIT */
/*
 * What the native writer and reader agree on without sharing state: the magic at the
 * start of a file, and the rules an event obeys.  Part of the orr-native library, so
 * nothing here allocates or uses common's functions.
 */
#include <stdint.h>
#include <string.h>

#include "../internal.h"
#include "orrery/native.h"
#include "banned.h"

/* A zstd skippable frame: magic 0x184D2A5E, length 12, then "ORRERY\0\0" and the version. */
const unsigned char orr__native_magic[16] = { 0x5e, 0x2a, 0x4d, 0x18, 12,  0,   0,    0,
					      'O',  'R',  'R',  'E',  'R', 'Y', '\0', '\0' };

bool orr_native_detect(const void *data, size_t n)
{
	return n >= 12 && memcmp(data, orr__native_magic, 12) == 0;
}

/* Which table args refers to for each kind; -1 where it must be ORR_NONE. */
static int args_table(const struct orr_event *e, const struct orr__native_rows *n,
		      uint64_t *ret_rows)
{
	switch (e->kind) {
	case ORR_EVENT_OP:
		*ret_rows = n->ops;
		return 0;
	case ORR_EVENT_KERNEL:
		*ret_rows = n->kernels;
		return 0;
	case ORR_EVENT_MEMCPY:
	case ORR_EVENT_MEMSET:
		*ret_rows = n->copies;
		return 0;
	case ORR_EVENT_SYNC:
	case ORR_EVENT_CUDA_EVENT:
		*ret_rows = n->syncs;
		return 0;
	default:
		*ret_rows = 0;
		return -1;
	}
}

static const char *check_sub(const struct orr_event *e)
{
	switch (e->kind) {
	case ORR_EVENT_RUNTIME:
	case ORR_EVENT_DRIVER:
		return e->sub < ORR_CALL_COUNT ? NULL
					       : "expected a call class below ORR_CALL_COUNT";
	case ORR_EVENT_SYNC:
	case ORR_EVENT_CUDA_EVENT:
		return e->sub < ORR_SYNC_COUNT ? NULL : "expected a sync kind below ORR_SYNC_COUNT";
	default:
		return e->sub == 0 ? NULL : "expected sub 0 for its kind";
	}
}

const char *orr__native_check_event(const struct orr_event *e, const struct orr__native_rows *n)
{
	uint64_t rows;

	if (e->kind >= ORR_EVENT_KIND_COUNT)
		return "expected an event kind below ORR_EVENT_KIND_COUNT";
	if (e->start_ns < -ORR__NATIVE_MAX_TIME || e->start_ns > ORR__NATIVE_MAX_TIME)
		return "expected a start time within +-2^62 ns";
	if (e->dur_ns < 0 || e->dur_ns > ORR__NATIVE_MAX_TIME)
		return "expected a duration from 0 to 2^62 ns";
	if (e->name > n->strings)
		return "expected the name to be a string defined before the event";
	if (e->place >= n->places)
		return "expected the place to be a place defined before the event";
	if (args_table(e, n, &rows) < 0 && e->args != ORR_NONE)
		return "expected no args row for its kind";
	if (e->args != ORR_NONE && e->args >= rows)
		return "expected the args row to be one defined before the event";
	if (e->coll != ORR_NONE && e->coll >= n->colls)
		return "expected the collective to be one defined before the event";
	return check_sub(e);
}

const char *orr__native_check_place(const struct orr_event *e, uint8_t place_kind)
{
	bool gpu = e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
		   e->kind == ORR_EVENT_MEMSET || e->kind == ORR_EVENT_SYNC ||
		   e->kind == ORR_EVENT_CUDA_EVENT;

	if (gpu && place_kind != ORR_PLACE_STREAM)
		return "expected a GPU task or record on a stream";
	if (!gpu && place_kind != ORR_PLACE_THREAD)
		return "expected a CPU event on a thread";
	return NULL;
}
