/* SPDX-License-Identifier: MIT */
/*
 * tracer/internal.h — what the tracer's files share.
 *
 * liborrery-tracer.so runs inside someone else's training job.  tracer/cupti.c is the
 * only file that includes <cupti.h> and calls CUPTI; tracer/cupti-records.c turns CUDA 13
 * activity records into the flat struct orr__trec below without calling CUPTI.  Everything
 * else is the CUPTI-free pipeline the unit tests drive directly: the step window
 * (window.c), emit_nvtx name parsing (nvtx-parse.c), event record -> stream wait pairing
 * (pairing.c), the buffer pool and queue (queue.c), the environment (env.c), the log
 * (log.c) and the session that writes the native file (session*.c).
 *
 * Rules: nothing aborts and nothing is fatal: allocation goes through orr__talloc() and
 * friends (which the tests can make fail) and a failure drops the record and counts it.
 * Nothing prints to stdout or stderr unless ORR_DEBUG names "tracer" (or "all").
 *
 * Threads: CUPTI's buffer callbacks and the NVTX callback run on the job's threads and
 * touch only the queue and the window; one writer thread owns the session.
 */
#ifndef ORRERY_TRACER_INTERNAL_H
#define ORRERY_TRACER_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/native.h"

/* ---- allocation (alloc.c) ---- */

void *orr__talloc(size_t size);
void *orr__tcalloc(size_t n, size_t size);
void *orr__trealloc(void *p, size_t size);
void *orr__talloc_aligned(size_t align, size_t size);
char *orr__tstrndup(const char *s, size_t n);
/* Test hook: `after` more allocations succeed, then every one fails; -1 = never fail. */
void orr__talloc_fail_after(int64_t after);

/* ---- a map from uint64 keys to uint64 values (map.c) ---- */

#define ORR__MAP_EMPTY UINT64_MAX /* the one key that cannot be stored */

struct orr__map {
	uint64_t *keys, *vals;
	size_t cap, n; /* cap is 0 or a power of two */
};

bool orr__map_find(const struct orr__map *m, uint64_t key, uint64_t *ret_val);
/* Inserts or replaces: 0, -ENOMEM (m unchanged) or -EINVAL for ORR__MAP_EMPTY. */
int orr__map_put(struct orr__map *m, uint64_t key, uint64_t val);
bool orr__map_remove(struct orr__map *m, uint64_t key);
void orr__map_release(struct orr__map *m);

/* FNV-1a, for strings that are cached by content. */
uint64_t orr__hash64(const char *s, size_t len);

/* ---- the log (log.c) ---- */

/*
 * Lines go to DIR/tracer-PID.log (appended), and to stderr as well when to_stderr.
 * Before orr__log_open() and after orr__log_close() lines are discarded.
 */
void orr__log_open(const char *dir, int64_t pid, bool to_stderr);
void orr__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void orr__log_close(void);

/* ---- configuration from the environment (env.c) ---- */

#define ORR__PATH_MAX 4096

struct orr__config {
	char dir[ORR__PATH_MAX];  /* ORR_RECORD_DIR, default "." */
	char path[ORR__PATH_MAX]; /* DIR/rank-R-PID.orr or DIR/pid-PID.orr */
	char host[256];
	char step_prefix[ORR_RECORD_STEP_PREFIX_MAX + 1]; /* ORR_RECORD_STEP_PREFIX */
	int32_t rank, world_size, local_rank;             /* -1 when unknown */
	int64_t pid;
	int64_t skip, steps; /* ORR_RECORD_SKIP, ORR_RECORD_STEPS: 0 by default */
	bool debug;          /* ORR_DEBUG names "tracer" or "all" */
	bool path_too_long;  /* ORR_RECORD_DIR did not fit: nothing can be written */
};

/* Reads the environment; bad numbers fall back to the defaults and are noted in bad[]. */
void orr__config_from_env(struct orr__config *c, char *bad, size_t bad_size);

/* ---- the step window (window.c) ---- */

enum orr__verdict { ORR__KEEP, ORR__DROP, ORR__PEND };

/* GPU records this close before the window's start are decided by their launch. */
#define ORR__WINDOW_SLACK_NS 1000000
/* After the window ends, tracing stops at the next step marker or after this long. */
#define ORR__WINDOW_LINGER_NS 10000000000LL

struct orr__window {
	int64_t skip, steps;
	bool windowed; /* skip or steps given */
	char prefix[128];
	size_t prefix_len;
	pthread_mutex_t lock;                  /* step markers: rare, from any thread */
	_Atomic int64_t seen;                  /* step markers seen so far */
	_Atomic int64_t start_ns, end_ns;      /* INT64_MAX until known */
	_Atomic int64_t first_step, last_step; /* step numbers of the window, -1 */
	_Atomic bool stop;                     /* a step began after the window ended */
};

void orr__window_init(struct orr__window *w, int64_t skip, int64_t steps, const char *prefix);
void orr__window_release(struct orr__window *w);
/* The step number when NAME is a step marker ("ProfilerStep#12, op_id = 3" -> 12), else -1. */
int64_t orr__window_step_of(const struct orr__window *w, const char *name, size_t len);
/* Counts a step marker seen at ts_ns; true when tracing should now stop. */
bool orr__window_marker(struct orr__window *w, int64_t step, int64_t ts_ns);
/* Keep, drop, or (GPU records after the end or just before the start) decide at close. */
enum orr__verdict orr__window_check(const struct orr__window *w, bool gpu, int64_t t_ns);
/* True when step marker STEP is one of the window's steps (kept whatever its time). */
bool orr__window_has_step(const struct orr__window *w, int64_t step);
/* The window ended and a later step began, or it ended long enough before now_ns. */
bool orr__window_done(const struct orr__window *w, int64_t now_ns);

/* ---- emit_nvtx names (nvtx-parse.c) ---- */

#define ORR__NVTX_MAX_INPUTS 64
#define ORR__NVTX_MAX_DIMS   512

/*
 * "aten::mm, seq = 12, op_id = 3, sizes = [[4, 8], [8, 2]], input_op_ids = [...]":
 * name "aten::mm", emit_nvtx, seq 12, two inputs of two dims.  A name without those
 * fields is kept whole.  Shapes that do not parse (or exceed the limits) are left out.
 */
struct orr__nvtx_name {
	const char *name;
	size_t len;
	bool emit_nvtx;
	int64_t seq; /* -1 when absent */
	size_t ninputs, ndims;
	struct orr_native_input inputs[ORR__NVTX_MAX_INPUTS]; /* dims point into dims[] */
	int64_t dims[ORR__NVTX_MAX_DIMS];
};

void orr__nvtx_parse(const char *s, struct orr__nvtx_name *ret);

/* ---- NCCL's NVTX payloads (nccl.c) ---- */

/*
 * NCCL (2.16.2 and later) pushes each API call as an NVTX range on its "NCCL" domain with
 * an extended payload: nvtxPayloadData_t {schemaId, size, payload}, schemaId =
 * NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + NVTX_SID_<call>.  The payload points into the
 * caller's stack, so it is decoded in the NVTX callback.  Each decoded collective gets a
 * number (its external id, ORR__NCCL_EXT_TAG | n) that the callback pushes as CUPTI's
 * external correlation id while the range is open: the kernel launch inside the call
 * carries it, and the session attaches the call's collective to that launch.
 */
#define ORR__NVTX_SCHEMA_STATIC_START (UINT64_C(1) << 24)
#define ORR__NCCL_EXT_TAG             (UINT64_C(1) << 62)
#define ORR__NCCL_CALLS               16384 /* calls remembered for the writer thread */
#define ORR__NCCL_COMMS               256
#define ORR__NCCL_PAIRS               1024
#define ORR__NCCL_MAX_DEPTH           64 /* NCCL ranges open on one thread, tracked */

/* nvtxPayloadData_t as nvToolsExtPayload.h lays it out. */
struct orr__nvtx_payload {
	uint64_t schema_id;
	size_t size;
	const void *payload;
};

struct orr__nccl_call {
	uint64_t id;      /* ORR__NCCL_EXT_TAG | n once numbered; 0 = not numbered */
	const char *type; /* static: "AllReduce", "Send", "CommInitRank", ... */
	bool comm_info;   /* a communicator's creation (or end): comm, nranks, myrank */
	bool p2p;         /* Send or Recv: peer is the other rank */
	bool has_comm;    /* NCCL >= 2.25 payloads name the communicator (its hash) */
	uint64_t comm;
	int64_t bytes;          /* "Message size [bytes]", per rank; -1 */
	int32_t root, peer;     /* -1 */
	int32_t nranks, myrank; /* -1; a collective's come from its communicator's creation */
	int64_t sequence;       /* the call's number on its communicator (or rank pair), -1 */
};

/* Decodes one payload of NCCL's layouts (by schema id and size); false for others. */
bool orr__nccl_decode(const struct orr__nvtx_payload *pd, struct orr__nccl_call *ret);

struct orr__nccl_comm {
	uint64_t hash;
	int32_t nranks, myrank;
	int64_t calls;
	bool used;
};

struct orr__nccl_pair {
	uint64_t comm;
	int32_t lo, hi;
	int64_t calls;
	bool used;
};

struct orr__nccl {
	pthread_mutex_t lock;         /* held briefly by the NVTX callback and the writer */
	struct orr__nccl_call *calls; /* ORR__NCCL_CALLS, by number */
	uint64_t next;
	struct orr__nccl_comm comms[ORR__NCCL_COMMS];
	struct orr__nccl_pair pairs[ORR__NCCL_PAIRS];
	uint64_t lost; /* calls that could not be numbered or were overwritten */
};

int orr__nccl_init(struct orr__nccl *n);
void orr__nccl_release(struct orr__nccl *n);
/*
 * Numbers a decoded call: learns a communicator from its creation, or fills in the
 * sequence, nranks and myrank of a collective and remembers it.  Returns its id, 0 when
 * there is nothing to attach (a communicator's creation, no memory).
 */
uint64_t orr__nccl_add(struct orr__nccl *n, struct orr__nccl_call *c);
/* The call numbered id, while it is remembered. */
bool orr__nccl_find(struct orr__nccl *n, uint64_t id, struct orr__nccl_call *ret);
uint64_t orr__nccl_lost(struct orr__nccl *n);
/* Copies up to max communicators whose creation was seen into out; returns how many. */
size_t orr__nccl_comms(struct orr__nccl *n, struct orr__nccl_comm *out, size_t max);

/*
 * The NCCL ranges open on the calling thread, and whether each pushed an external id
 * (so that the range's pop pops it).  Beyond ORR__NCCL_MAX_DEPTH nothing is pushed.
 */
bool orr__nccl_range_full(void);
void orr__nccl_range_push(bool pushed);
/* True when the innermost open range pushed an external id. */
bool orr__nccl_range_pop(void);

/* ---- flat activity records (filled by cupti-records.c, or by the tests) ---- */

enum orr__trec_kind {
	ORR__TREC_NONE, /* a kind the pipeline does not use */
	ORR__TREC_RUNTIME,
	ORR__TREC_DRIVER,
	ORR__TREC_KERNEL,
	ORR__TREC_MEMCPY,
	ORR__TREC_MEMSET,
	ORR__TREC_SYNC,
	ORR__TREC_CUDA_EVENT,
	ORR__TREC_MARKER,
	ORR__TREC_MARKER_DATA,
	ORR__TREC_EXT_CORR,
	ORR__TREC_OVERHEAD,
	ORR__TREC_DEVICE,
	ORR__TREC_CONTEXT,
	ORR__TREC_STREAM,
	ORR__TREC_NAME,
	ORR__TREC_KIND_COUNT
};

#define ORR__MARKER_INSTANT 0x1
#define ORR__MARKER_START   0x2
#define ORR__MARKER_END     0x4

#define ORR__INVALID32 UINT32_MAX

/* One record; fields that do not apply to its kind are 0 or ORR__INVALID32. */
struct orr__trec {
	uint8_t kind;                          /* enum orr__trec_kind */
	uint8_t sync_kind;                     /* SYNC: enum orr_sync_kind */
	uint8_t marker;                        /* MARKER: ORR__MARKER_* */
	uint8_t copy_kind, src_kind, dst_kind; /* MEMCPY: CUPTI's enums; MEMSET: dst_kind */
	uint32_t cbid;                         /* RUNTIME/DRIVER */
	int64_t start_ns;                      /* MARKER: its timestamp */
	int64_t end_ns;
	uint32_t pid, tid; /* CPU records, markers and thread names */
	uint32_t device, context, stream;
	uint32_t correlation; /* 0 = none */
	uint32_t event_id;    /* SYNC: cudaEventId, CUDA_EVENT: eventId */
	uint64_t sync_id;     /* cudaEventSyncId, ORR__INVALID32 when not applicable */
	uint64_t id;          /* MARKER: range id; EXT_CORR: external id */
	int64_t bytes;        /* MEMCPY/MEMSET */
	uint64_t graph_node;  /* 0 unless launched by a CUDA graph */
	uint32_t graph_id;
	uint32_t overhead_kind;
	struct orr_kernel_args launch; /* KERNEL: grid, block, shared memory, registers */
	const char *name;              /* KERNEL (mangled), MARKER, DEVICE, NAME; may be NULL */
	const char *domain;            /* MARKER: NVTX domain, NULL = default */
	/* DEVICE */
	int32_t num_sms, cc_major, cc_minor;
	int64_t mem_bytes;
};

/* ---- NVTX records from the job's threads to the writer (nvtx-buf.c) ---- */

/*
 * The tracer is NVTX's injection (nvtx-inject.c): every NVTX call of the job lands on
 * the calling thread's own chunk of records, with no lock per record; the writer thread
 * drains them as flat MARKER records (and NAME records for nvtxNameOsThread).
 */
#define ORR__NVTX_CHUNK_BYTES (64u << 10)
#define ORR__NVTX_MAX_CHUNKS  512   /* 32 MiB in all; past it records are dropped */
#define ORR__NVTX_MAX_NAME    16384 /* longer names are cut */
#define ORR__NVTX_MAX_DEPTH   256   /* push/pop ranges tracked per thread */
#define ORR__NVTX_THREAD_NAME 0x8   /* a record naming the thread whose id it carries */

/* CLOCK_REALTIME in ns: the NVTX records' clock, and CUPTI's (cupti.c registers it). */
int64_t orr__now_ns(void);
/*
 * Once, before any record: the thread key, and what wakes the writer when a chunk is
 * full (called on the job's thread, no lock held: sem_post); 0 or -errno.
 */
int orr__nvtx_init(void (*wake)(void *arg), void *arg);
/* Whether records are kept (not before orr__nvtx_init, nor after orr__nvtx_stop). */
bool orr__nvtx_on(void);
void orr__nvtx_stop(void);
/* In a forked child: fresh lock, nothing recorded. */
void orr__nvtx_after_fork(void);
/*
 * Appends one record to the calling thread's chunk: marker (ORR__MARKER_* or
 * ORR__NVTX_THREAD_NAME), time, range id (the named thread's id for a thread name),
 * domain name (it must outlive the writer; NULL for the default domain) and name.
 */
void orr__nvtx_put(uint8_t marker, int64_t ts, uint64_t id, const char *domain, const char *name,
		   size_t len);
/* A range id unique in the process (never 0, 0 without memory). */
uint64_t orr__nvtx_new_id(void);
/*
 * The calling thread's push/pop ranges, one stack per domain: push returns the new
 * range's id (0 when deeper than ORR__NVTX_MAX_DEPTH), pop the id of the innermost range
 * of that domain (0 when none is known); *ret_depth is what nvtxRangePush/Pop return.
 */
uint64_t orr__nvtx_push(const void *domain, int *ret_depth);
uint64_t orr__nvtx_pop(const void *domain, int *ret_depth);
/* Full chunks waiting for the writer. */
size_t orr__nvtx_backlog(void);
/* Records dropped: no memory, or all chunks in use. */
uint64_t orr__nvtx_dropped(void);
/* The writer: every record published so far, in order per thread; returns how many. */
uint64_t orr__nvtx_drain(void (*add)(void *data, const struct orr__trec *r), void *data);

/* ---- what nvtx-inject.c asks of the tracer's start-up (cupti.c) ---- */

/* Starts tracing the process (once, without CUDA); false when it is off. */
bool orr__host_start(void);
struct orr__window *orr__host_window(void);
/* NCCL's call table, NULL when payloads are not decoded. */
struct orr__nccl *orr__host_nccl(void);
/* A step marker ended the window: the writer stops tracing. */
void orr__host_window_over(void);
/* CUPTI's external correlation id for NCCL; false when CUPTI is not running. */
bool orr__host_push_external(uint64_t id);
void orr__host_pop_external(void);

/* ---- event record -> stream wait pairing (pairing.c) ---- */

/* How a held sync was resolved, for orr__pairing's emit callback. */
enum orr__resolution { ORR__PAIR_EXACT, ORR__PAIR_FALLBACK, ORR__PAIR_UNRESOLVED };

/* A sync (event sync, stream wait) waiting for the CUDA event record it refers to. */
struct orr__held_sync {
	struct orr_event ev;       /* ready to write but for ev.args */
	struct orr_sync_args args; /* wait_on_stream, event_record_corr filled when resolved */
	uint32_t context, event_id, corr;
	uint64_t sync_id;
	uint32_t next; /* chain of syncs on one event, or ORR_NONE */
	bool used;
};

struct orr__pairing;

/*
 * max_events: events remembered per generation; max_held: syncs held at most.  emit is
 * called with each sync once it is resolved (or given up on).
 */
int orr__pairing_new(size_t max_events, size_t max_held,
		     void (*emit)(void *data, struct orr__held_sync *h, enum orr__resolution how),
		     void *data, struct orr__pairing **ret_p);
void orr__pairing_free(struct orr__pairing *p);
/* A CUDA event record; resolves the held syncs that were waiting for it. */
void orr__pairing_event(struct orr__pairing *p, uint32_t context, uint32_t event_id, uint32_t corr,
			uint32_t stream, uint64_t sync_id);
/* A sync to resolve: emitted now when possible, else held (or emitted unresolved if full). */
void orr__pairing_sync(struct orr__pairing *p, const struct orr__held_sync *h);
/* Emits every held sync, by the fallback rule or unresolved (at close). */
void orr__pairing_flush(struct orr__pairing *p);
/* Forgets the held syncs without emitting them (their file was thrown away). */
void orr__pairing_forget_held(struct orr__pairing *p);
/* Event records that could not be remembered (memory). */
uint64_t orr__pairing_lost(const struct orr__pairing *p);

/* ---- buffers from CUPTI to the writer thread (queue.c) ---- */

#define ORR__BUF_BYTES  (4u << 20)
#define ORR__MAX_BUFS   64
#define ORR__SPARE_BUFS 2 /* free buffers the writer keeps ready for CUPTI */

/* Requests to the writer thread (orr__queue_request). */
#define ORR__REQ_FINISH 0x1 /* flush, write the file, close (exit, SIGTERM) */
#define ORR__REQ_STOP   0x2 /* the window is over: disable the kinds, then finish */

struct orr__buf {
	struct orr__buf *next;
	uint8_t *data;
	size_t valid; /* bytes of records */
};

struct orr__queue {
	pthread_mutex_t lock; /* held briefly: no I/O, no CUPTI call under it */
	sem_t wake;           /* posted for each full buffer and request */
	struct orr__buf *free, *head, *tail;
	size_t nbufs, max_bufs, buf_bytes, queued;
	/* buffers on the free list, and those orr__queue_get() had to allocate itself */
	size_t nfree;
	uint64_t caller_allocs;
	_Atomic uint64_t declined; /* buffer requests refused (pool exhausted, no memory) */
	_Atomic unsigned requests;
};

int orr__queue_init(struct orr__queue *q, size_t buf_bytes, size_t max_bufs);
void orr__queue_release(struct orr__queue *q);
/*
 * A buffer for CUPTI (8-byte aligned, buf_bytes long), or NULL, counted as declined.  It
 * runs on the job's threads: it takes a spare that orr__queue_reserve() made, and
 * allocates one itself (counted in caller_allocs) only when none is left.
 */
uint8_t *orr__queue_get(struct orr__queue *q);
/*
 * The writer thread: allocates buffers, and touches every page of them, until `spare`
 * are free (within max_bufs), so that neither malloc nor the first write to a fresh page
 * happens on the job's threads.  Returns how many it made.
 */
size_t orr__queue_reserve(struct orr__queue *q, size_t spare);
/* A buffer CUPTI has filled with `valid` bytes: queued for the writer (NULL is fine). */
void orr__queue_put(struct orr__queue *q, uint8_t *data, size_t valid);
/* The oldest queued buffer, waiting up to timeout_ns for one; NULL when none. */
struct orr__buf *orr__queue_pop(struct orr__queue *q, int64_t timeout_ns);
void orr__queue_recycle(struct orr__queue *q, struct orr__buf *b);
/* Returns a buffer to the pool unread (NULL is fine). */
void orr__queue_drop(struct orr__queue *q, uint8_t *data);
/* Async-signal-safe: sets request bits and wakes the writer. */
void orr__queue_request(struct orr__queue *q, unsigned req);
unsigned orr__queue_take_requests(struct orr__queue *q);

/* ---- the session: flat records in, a native file out (session*.c) ---- */

struct orr__session_config {
	const char *path;
	struct orr_native_header header; /* devices and base_time_ns are filled in */
	struct orr__window *window;      /* shared with the NVTX callback */
	/* The name of a runtime (driver false) or driver API by cbid, or NULL. */
	const char *(*api_name)(void *data, bool driver, uint32_t cbid);
	void *api_name_data;
	size_t max_pending;     /* GPU records held until close; 0 = 1 << 16 */
	size_t max_syncs;       /* syncs waiting for their event record; 0 = 1 << 14 */
	size_t max_events;      /* CUDA events remembered, per generation; 0 = 1 << 16 */
	size_t max_open;        /* open NVTX ranges; 0 = 1 << 16 */
	struct orr__nccl *nccl; /* NCCL calls by external id (cupti.c's); NULL = none */
};

/* What a session did, for the log and the tests. */
struct orr__summary {
	uint64_t events;          /* written */
	uint64_t dropped_events;  /* ours: memory, full tables, pending list */
	uint64_t dropped_records; /* CUPTI's: orr__session_dropped() and lost timestamps */
	uint64_t lost_timing;     /* kernels/copies with start = end = 0 */
	uint64_t window_dropped;  /* records outside the step window (not an error) */
	uint64_t pending_kept, pending_dropped;
	uint64_t syncs_exact, syncs_fallback, syncs_unresolved;
	uint64_t restarts; /* speculative files thrown away at the first step marker */
	uint64_t overhead_records;
	uint64_t nccl_calls; /* kernel launches given their NCCL call's collective */
	/* driver calls not written (orr__driver_call_kept()) */
	uint64_t driver_queries;
	int64_t overhead_ns;
	bool no_markers; /* windowed, but no step marker was ever seen */
	bool written;    /* the file exists under its final name */
	int error;       /* the writer's first error, 0 when none */
};

struct orr__session;

int orr__session_new(const struct orr__session_config *cfg, struct orr__session **ret_s);
/* Adds one record: never fails (a record that cannot be stored is dropped and counted). */
void orr__session_add(struct orr__session *s, const struct orr__trec *r);
/*
 * Whether a driver call of this name is recorded: those the trace model classes
 * (orr_call_classify(): launches, copies, sets, event records and waits, syncs).  The
 * others are queries (cuKernelGetName, cuGetErrorString, ...) that cost records only.
 */
bool orr__driver_call_kept(const char *name);
/* The header's CUPTI version, for a file not yet opened (CUDA starts after NVTX). */
void orr__session_set_cupti_version(struct orr__session *s, uint32_t version);
/* Records CUPTI says it dropped. */
void orr__session_dropped(struct orr__session *s, uint64_t n);
/* Decides what is pending, writes and closes the file, frees s.  sum may be NULL. */
void orr__session_close(struct orr__session *s, struct orr__summary *sum);
/* Frees s without writing anything (tracing could not start); NULL is fine. */
void orr__session_discard(struct orr__session *s);
/* Writes the summary lines to the log. */
void orr__session_log_summary(const struct orr__summary *sum, const char *path);

/* ---- CUDA 13 activity records -> flat records (cupti-records.c) ---- */

/* Fills r from one CUPTI activity record; false for kinds the tracer does not use. */
bool orr__cupti_translate(const void *record, struct orr__trec *r);
/*
 * The first extended payload (nvtxPayloadData_t) of the attributes in an NVTX callback's
 * nvtxDomainRangePushEx_params; false when it has none.
 */
bool orr__cupti_nvtx_payload(const void *params, struct orr__nvtx_payload *ret);

#endif
