/* SPDX-License-Identifier: MIT */
/*
 * tracer/session.h — the session's state, shared by session.c (the file: opening,
 * the speculative restart, places, strings, closing) and session-records.c (what each
 * kind of record becomes).
 */
#ifndef ORRERY_TRACER_SESSION_H
#define ORRERY_TRACER_SESSION_H

#include "internal.h"

#define ORR__MAX_DEVICES      64
#define ORR__MAX_THREAD_NAMES 4096
#define ORR__EXT_SLOTS        4096       /* external correlation ids, direct-mapped */
#define ORR__MAX_CBID         (1u << 12) /* cbids cached; CUDA 13 has about 850 */

/* An NVTX range waiting for its other end. */
struct orr__range {
	struct orr_event ev; /* from the start: name, kind, place, args, start_ns */
	int64_t end_ns;
	uint64_t id;
	uint8_t have; /* ORR__MARKER_START and/or ORR__MARKER_END */
	bool keep;    /* decided at the start */
	bool used;
};

/* A GPU record after the window (or just before it), decided at close by its launch. */
struct orr__pending {
	struct orr_event ev;
	int64_t bytes;                 /* MEMCPY/MEMSET, else -1 */
	struct orr_kernel_args launch; /* KERNEL */
};

struct orr__ext {
	uint32_t corr;
	uint64_t ext;
};

struct orr__thread_name {
	uint64_t key; /* pid << 32 | tid */
	char *name;
};

struct orr__session {
	struct orr__session_config cfg;
	char *path;
	struct orr__window *win;
	struct orr_native_writer *w; /* NULL until the first event, and after a failure */
	bool open_failed;
	bool speculative; /* windowed, and written before any step marker was seen */

	/* The file's own ids: forgotten when a speculative file is thrown away. */
	struct orr__map places;              /* place key -> place index */
	struct orr__map kernels;             /* hash of the mangled name -> string id */
	struct orr__map copies;              /* memcpy/memset name key -> string id */
	uint32_t *api_ids[2];                /* [driver][cbid] -> string id + 1, 0 = not yet */
	uint8_t api_class[2][ORR__MAX_CBID]; /* enum orr_call + 1, 0 = not yet */
	uint8_t driver_query[ORR__MAX_CBID]; /* 1 kept, 2 not (a query), 0 = not yet */
	uint32_t sync_names[ORR_SYNC_COUNT];

	/* Kept across a restart: what CUPTI said about the process. */
	struct orr_native_device devices[ORR__MAX_DEVICES];
	char *device_names[ORR__MAX_DEVICES];
	size_t ndevices;
	struct orr__map ctx_device; /* context id -> device id */
	struct orr__thread_name thread_names[ORR__MAX_THREAD_NAMES];
	size_t nthread_names;
	struct orr__ext ext[ORR__EXT_SLOTS]; /* by correlation id modulo the size */
	struct orr__pairing *pairing;

	/* NVTX ranges and instant step markers. */
	struct orr__map open; /* range id -> index into ranges */
	struct orr__range *ranges;
	size_t max_ranges, nranges;
	uint32_t *free_ranges;      /* a stack of the unused entries of ranges */
	struct orr_event last_mark; /* an instant step marker waiting for the next one */
	bool has_last_mark;

	/* GPU records decided at close, and the correlation ids of the calls kept. */
	struct orr__pending *pending;
	size_t npending;
	uint32_t min_corr, max_corr;
	bool any_corr;
	int64_t last_cpu_ns; /* latest end of a CPU record kept */

	struct orr__summary sum;
};

/* ---- session.c ---- */

/* 0 when an event may be written now (opening the file on first use), else -1. */
int orr__session_ready(struct orr__session *s, int64_t t_ns);
/*
 * Throws the speculative file away once a step marker has been seen; false while every
 * record is kept (no window, or no step marker yet).
 */
bool orr__session_settle(struct orr__session *s);
/* Keep, drop or pend a record of time t_ns, throwing a speculative file away if needed. */
enum orr__verdict orr__session_verdict(struct orr__session *s, bool gpu, int64_t t_ns);
/* Writes one event; failures are counted as dropped events. */
void orr__session_put(struct orr__session *s, const struct orr_event *ev);
/* Counts a failed writer call (remembering the first error) and returns -1. */
int orr__session_fail(struct orr__session *s, int err);
int orr__session_thread(struct orr__session *s, uint32_t pid, uint32_t tid, uint32_t *ret_place);
int orr__session_stream(struct orr__session *s, int64_t device, int64_t stream,
			uint32_t *ret_place);
int orr__session_str(struct orr__session *s, const char *str, size_t len, uint32_t *ret_id);
/* The call's name and its class (orr_call_classify()). */
int orr__session_api_name(struct orr__session *s, bool driver, uint32_t cbid, uint32_t *ret_id,
			  uint8_t *ret_class);
int orr__session_kernel_name(struct orr__session *s, const char *mangled, uint32_t *ret_id);
/* Kineto's "Memcpy HtoD (Pageable -> Device)" / "Memset (Device)". */
int orr__session_copy_name(struct orr__session *s, const struct orr__trec *r, uint32_t *ret_id);
int orr__session_sync_name(struct orr__session *s, enum orr_sync_kind kind, uint32_t *ret_id);
/* The device of a CUDA context, -1 when unknown. */
int64_t orr__session_device_of(const struct orr__session *s, uint32_t context);

/* ---- session-records.c ---- */

void orr__session_cpu(struct orr__session *s, const struct orr__trec *r);
void orr__session_gpu(struct orr__session *s, const struct orr__trec *r);
void orr__session_sync(struct orr__session *s, const struct orr__trec *r);
void orr__session_marker(struct orr__session *s, const struct orr__trec *r);
/* The pairing's emit callback: writes the sync row and its event. */
void orr__session_emit_sync(void *data, struct orr__held_sync *h, enum orr__resolution how);
/* At close: the NCCL communicators whose creation the tracer saw, as comm rows. */
void orr__session_nccl_comms(struct orr__session *s);
/* At close: open ranges, the last instant step marker, pending GPU records. */
void orr__session_finish_records(struct orr__session *s);
/* Forgets ranges and the instant step marker (their ids belong to a thrown-away file). */
void orr__session_forget_ranges(struct orr__session *s);

/* ---- demangle.c ---- */

/* The demangled name (malloc'ed) or NULL when it is not a mangled C++ name. */
char *orr__demangle(const char *mangled);

#endif
