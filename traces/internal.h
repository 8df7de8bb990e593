/* SPDX-License-Identifier: MIT */
/*
 * traces/internal.h — what the trace subsystem's files share: the mutable rank
 * under construction, the trace object, and the Kineto JSON parser's C entry point
 * (the only C++ in the tree, traces/kineto/kineto-json.cpp).
 */
#ifndef ORRERY_TRACES_INTERNAL_H
#define ORRERY_TRACES_INTERNAL_H

#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes readable past the end of a buffer handed to the JSON parser (simdjson's need). */
#define ORR__JSON_PADDING 64

/*
 * The Kineto parser's window over "traceEvents" (traces/kineto/kineto-json.cpp).  1 MiB:
 * a window, its index and the events it makes stay in the cache between simdjson's
 * indexing and our walk (8 MiB windows took 8 % more time and 30 MB more).  The fuzz
 * build shrinks it to reach its edge cases with small inputs.
 */
#ifndef ORR__WINDOW_BYTES
#define ORR__WINDOW_BYTES (1u << 20)
#endif
/* Longest string the native writer stores (names, kernel signatures). */
#define ORR__MAX_STRING_BYTES (1u << 20)

/*
 * What an import accepts (docs/limits.md): each from orr_import_options when set there,
 * else from its environment variable, else the default.  The X-macro gives the index,
 * the variable, the default and what is counted, for the one message they all share.
 */
#define ORR__LIMITS(X)                                                                    \
	X(FILE_BYTES, "ORR_MAX_FILE_BYTES", UINT64_C(4) << 30, "bytes once decompressed") \
	X(RUN_BYTES, "ORR_MAX_RUN_BYTES", UINT64_C(256) << 30,                            \
	  "bytes once decompressed, all files of the run together")                       \
	X(EVENTS, "ORR_MAX_EVENTS", UINT64_C(64) << 20, "events in one rank")             \
	X(VALUES, "ORR_MAX_VALUES", UINT64_C(0xfffffffe),                                 \
	  "tensor dimensions, strides, inputs or communicator members in one rank")       \
	X(RANKS, "ORR_MAX_RANKS", UINT64_C(65536), "ranks")                               \
	X(PLACES, "ORR_MAX_PLACES", UINT64_C(65536), "threads and streams in one rank")   \
	X(STRING_BYTES, "ORR_MAX_STRING_BYTES", UINT64_C(1) << 20,                        \
	  "bytes in one string or run of whitespace")                                     \
	X(DEPTH, "ORR_MAX_DEPTH", UINT64_C(1024), "levels of nested arrays and objects")  \
	X(RATIO, "ORR_MAX_RATIO", UINT64_C(1000),                                         \
	  "times its compressed size (past the first 64 MiB)")

/* Decompressed bytes of one stream or frame before ORR__LIMIT_RATIO applies. */
#define ORR__RATIO_FLOOR_BYTES (UINT64_C(64) << 20)

enum orr__limit {
#define ORR__LIMIT_ENUM(name, env, def, what) ORR__LIMIT_##name,
	ORR__LIMITS(ORR__LIMIT_ENUM) ORR__LIMIT_COUNT
#undef ORR__LIMIT_ENUM
};

struct orr__limits {
	uint64_t max[ORR__LIMIT_COUNT];
	/*
	 * Dimensions, strides, inputs and members a rank holds already, that a file's join
	 * within ORR_MAX_VALUES (an ops file read again for where its merge into its tracer's
	 * rank passes it, traces/import-ops.c); 0 otherwise.
	 */
	uint64_t values_held[4];
	/*
	 * A file of several ranks read as one before it is split (traces/chrome/): how
	 * many it declares, its events, places and values held to that many times a
	 * rank's (orr__limits_for_ranks()); 0 for one rank.
	 */
	uint64_t file_ranks;
};

/* Whether a rank's dimensions, strides, inputs and members, with l's held, are within l. */
static inline bool orr__values_fit(const struct orr__limits *l, size_t dims, size_t strides,
				   size_t inputs, size_t members)
{
	uint64_t max = l->max[ORR__LIMIT_VALUES];

	return dims + l->values_held[0] <= max && strides + l->values_held[1] <= max &&
	       inputs + l->values_held[2] <= max && members + l->values_held[3] <= max;
}

/*
 * Fills l from opts (may be NULL), the environment and the defaults.  A variable that is
 * not a positive integer (with an optional K, M, G or T suffix, powers of 1024) fails
 * with a diag naming it.
 */
int orr__limits_init(struct orr__limits *l, const struct orr_import_options *opts,
		     struct orr_diag *diag);
/*
 * "more than N <what> (ORR_MAX_X=N; set ORR_MAX_X higher to read it)" for file at
 * offset/event (-1 when unknown); returns ORR_ETOOBIG.
 */
int orr__limit_fail(const struct orr__limits *l, enum orr__limit which, struct orr_diag *diag,
		    const char *file, int64_t offset, int64_t event);
/*
 * l for a file that declares `ranks` ranks (more than 1) and is read as one before it is
 * split: events, places and values `ranks` times l's, within what 32-bit indices hold;
 * each rank is held to l's once split (orr__chrome_split()).
 */
void orr__limits_for_ranks(const struct orr__limits *l, size_t ranks, struct orr__limits *ret);
/* rank's share of a split file past l (`which`): "rank R: more than N ...", ORR_ETOOBIG. */
int orr__limit_fail_rank(const struct orr__limits *l, enum orr__limit which, struct orr_diag *diag,
			 const char *file, int32_t rank);

/* A growable array of fixed-size elements. */
struct orr__vec {
	void *p;
	size_t n, cap, elem;
};

/* Appends one zeroed element and returns it; the pointer is valid until the next push. */
void *orr__vec_push(struct orr__vec *v);
/* Appends n elements (not zeroed) and returns the first. */
void *orr__vec_extend(struct orr__vec *v, size_t n);
#define ORR__AT(vec, type, i) (&((type *)(vec).p)[i])

/* A flow endpoint (ac2g / async_cpu_to_gpu) waiting to be matched to its event. */
struct orr__flow {
	int64_t id;
	int64_t ts_ns;
	int64_t pid, tid; /* as written: (pid, tid) on CPU, (device, stream) on GPU */
};

/*
 * A thread_name / process_name metadata record, resolved at the end.  A process of a
 * file with several ranks (traces/chrome/chrome-split.c) also says its rank and its own pid,
 * or the device it stands for.
 */
struct orr__meta {
	int64_t pid, tid;
	int64_t id;   /* args "pid" or "device", when has_id */
	int64_t rank; /* args "rank", -1 when absent */
	uint32_t name;
	uint8_t thread;      /* thread_name rather than process_name */
	uint8_t has_id, gpu; /* gpu: id is a device */
};

/*
 * A hash index over a table's rows (traces/model.c): slots hold row + 1, 0 is empty.
 * Rows pushed directly are indexed at the next lookup; a rollback leaves stale slots,
 * which lookups skip.
 */
struct orr__index {
	uint32_t *slot;
	size_t cap, used, n; /* n: rows indexed so far */
};

struct orr__rank_build {
	struct orr_rank pub;
	bool has_rank; /* pub.rank came from the file's own metadata */
	bool has_base;
	uint32_t last_place; /* lookup cache */
	struct orr__index place_index, skipped_index;
	struct orr__vec places, events, ops, inputs, dims, strides, kernels, copies, syncs, colls,
		members, comms, devices, skipped, coerced, mems, counters, flows, metas;
	bool gpu_device_arg; /* a GPU event named its device in args */
	/* The ranks a file with several declares ("orreryRanks"), owned until split. */
	struct orr__rank_build **parts;
	size_t nparts, parts_cap;
	/*
	 * Skipped categories' counts grow in place: what was added since the last
	 * orr__rank_mark() to the rows it found (struct orr__skip_undo), to take back.
	 */
	struct orr__vec skipped_undo;
};

/*
 * Sizes of every table, and what grows in place (skipped counts, in the rank; ops with
 * stacks or flops), to undo a partly parsed window.
 */
struct orr__mark {
	size_t n[19];
	uint64_t ops_with_stack, ops_with_flops;
};

struct orr__skip_undo {
	size_t row;
	uint64_t count;
};

void orr__rank_mark(struct orr__rank_build *rb, struct orr__mark *m);
/*
 * Drops in's strides (nstrides 0) unless they are a stride per dimension of its shape
 * (of each member's, for a list of tensors): what compose takes them for.
 */
void orr__input_fit_strides(const struct orr__rank_build *rb, struct orr_input *in);
void orr__rank_rollback(struct orr__rank_build *rb, const struct orr__mark *m);

uint32_t orr__place(struct orr__rank_build *rb, enum orr_place_kind kind, int64_t pid, int64_t tid,
		    int32_t device);
void orr__count_skipped(struct orr__rank_build *rb, uint32_t category);
void orr__count_skipped_by(struct orr__rank_build *rb, uint32_t category, uint64_t count);
/*
 * A few of t's annotation names, distinct, quoted and comma-separated ("annotations:
 * 'a', 'b'"), or "the trace has no annotation", into buf (traces/steps.c).
 */
void orr__annotations_seen(const struct orr_trace *t, char *buf, size_t size);
/* orr_import_options.step_range on every rank of t (traces/steps.c); how many matched. */
size_t orr__steps_from_ranges(struct orr_trace *t, const char *glob);
/* One args value of key taken as how says (enum orr_coercion). */
void orr__count_coerced(struct orr__rank_build *rb, uint32_t key, uint32_t how);

/* A PyTorch execution trace being read (traces/et/), until it is attached to its rank. */
struct orr__et_build {
	struct orr_et pub;
	struct orr__vec nodes, values, dims, groups, group_ranks;
	int32_t rank; /* from its file name; -1 */
};

/*
 * Reads an execution trace from buf[0..len) into eb (traces/et/et-json.cpp): ORR_EFORMAT
 * when it is none, ORR_EMALFORMED with the offset when it is broken.
 */
int orr__et_parse(struct orr_trace *t, struct orr__et_build *eb, const char *name, char *buf,
		  size_t len, const struct orr__limits *limits, struct orr_diag *diag);
struct orr__et_build *orr__et_new(void);
void orr__et_free(struct orr__et_build *eb);
/* Links eb's nodes to the ops and annotations of rank rb, finished (traces/et/et-link.c). */
void orr__et_link(const struct orr_trace *t, struct orr__rank_build *rb, struct orr__et_build *eb);

struct orr_trace {
	struct orr_strtab *strs;
	struct orr__rank_build **ranks;
	size_t nranks, cap;
	/* Execution traces: read, then attached to their ranks (owned here either way). */
	struct orr__et_build **ets;
	size_t nets, cap_ets;
};

struct orr_trace *orr__trace_new(void);
struct orr__rank_build *orr__rank_new(struct orr_trace *t, uint32_t source);
/* A new rank of rb's file, in rb->parts (not yet in the trace). */
struct orr__rank_build *orr__rank_new_part(struct orr__rank_build *rb);
/* Sorts, links flows and names, derives collectives from launches and NCCL kernel names. */
void orr__rank_finish(struct orr_trace *t, struct orr__rank_build *rb);
/* traces/model-colls.c, for the finishes: an NCCL kernel whose launch carries a collective
 * takes it; one without, a collective of the type its name gives; each collective's
 * bytes from its element counts and dtype. */
void orr__collectives_from_launches(struct orr_trace *t, struct orr__rank_build *rb);
void orr__collectives_from_names(struct orr_trace *t, struct orr__rank_build *rb);
void orr__collective_bytes(struct orr_trace *t, struct orr__rank_build *rb);
/*
 * For a finished model read back (a native file): sorts the events if they are not, and
 * gives NCCL kernels their launch's collective (the tracer's).
 */
void orr__rank_finish_native(struct orr_trace *t, struct orr__rank_build *rb);
void orr__rank_free(struct orr__rank_build *rb);
/*
 * Appends src, read against from's strings, to dst, read against t's: every row of
 * src's tables follows dst's, with its strings, places and indexes into other tables
 * made dst's (traces/rank-append.c).  The limits are the caller's to check before.
 */
void orr__rank_append(struct orr_trace *t, struct orr__rank_build *dst,
		      const struct orr_trace *from, const struct orr__rank_build *src);
/*
 * Fails with ORR_EMALFORMED and a diag naming NAME and the event unless every event's
 * start, duration and end, and the base time, are within +-ORR_TIME_MAX ns.  For every
 * format, before the rank is finished (events still in input order).
 */
int orr__rank_check_times(const struct orr_trace *t, const struct orr__rank_build *rb,
			  const char *name, struct orr_diag *diag);
/*
 * The rank's dimensions, strides, inputs and members within ORR_MAX_VALUES (at most
 * 2^32 - 2), for every format: indexed by 32 bits, more would wrap.  ORR_ETOOBIG.
 */
int orr__rank_check_values(const struct orr__rank_build *rb, const struct orr__limits *l,
			   const char *name, struct orr_diag *diag);

/* Kineto "cat" -> enum orr_event_kind, or ORR_EVENT_KIND_COUNT when not modelled. */
int orr__kineto_kind(const char *cat, size_t len);
/* Kineto "cuda_sync_kind" -> enum orr_sync_kind. */
enum orr_sync_kind orr__kineto_sync_kind(const char *s, size_t len);

/*
 * Reads one Nsight Systems SQLite export data[0..len) into rb (traces/nsys/): its
 * runtime calls, kernels, copies, sets and NVTX ranges; rows count against the EVENTS,
 * PLACES and STRING_BYTES limits.  ORR_ENOTRACE for a database without Nsight Systems'
 * tables, ORR_EFORMAT for an export of several processes; errors fill diag with name
 * and the table.
 */
int orr__nsys_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name, void *data,
		    size_t len, const struct orr__limits *limits, struct orr_diag *diag);

/*
 * Parses one Kineto JSON document in buf[0..len) into rb.  buf must be writable and
 * have ORR__JSON_PADDING readable bytes after len; it is restored before returning.
 * Errors fill diag with name, byte offset and event index.
 */
int orr__kineto_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name, char *buf,
		      size_t len, const struct orr__limits *limits, struct orr_diag *diag);
/*
 * A file read while it is parsed: file bytes [lo, hi) are at p[0 .. hi - lo), with
 * ORR__JSON_PADDING readable bytes after them; size is the whole file's.  more() reads
 * until hi >= want (or the end of the file), keeping the bytes from keep on (p may move;
 * keep outside [lo, hi] lets go of every byte and reads on from keep), and returns 0, or
 * an error with the diag set.  traces/import.c makes them.
 *
 * fork(), where not NULL, makes a second source of the same file with nothing loaded
 * (lo = hi = at), its own buffer and its own diag (the second's errors are its own), that
 * another thread may read while this one is read; close() frees it.  A fork is made
 * and closed by the thread that reads its parent.
 */
struct orr__source {
	char *p;
	size_t lo, hi, size, cap;
	int (*more)(struct orr__source *src, size_t keep, size_t want);
	struct orr__source *(*fork)(struct orr__source *src, size_t at);
	void (*close)(struct orr__source *fork);
	void *data;
};
/*
 * orr__kineto_parse() on a source: the parser asks for the bytes as it goes and lets go
 * of those before the window it parses, so that about two windows of traceEvents are in
 * memory at a time; the file's other values are kept from its start on.
 */
int orr__kineto_parse_source(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
			     struct orr__source *src, const struct orr__limits *limits,
			     struct orr_diag *diag);
/*
 * The largest buffer, in bytes, that this thread's last plain JSON file read while it was
 * parsed held (traces/import.c): about four parser windows however large the file, for
 * tests; 0 when the last file was read whole (small, compressed, not JSON).
 */
size_t orr__import_last_json_bytes(void);
/*
 * The bytes of document simdjson's parser could hold at the end of this thread's last
 * orr__kineto_parse(): the file's size up to a window, for tests of its allocation.
 */
size_t orr__kineto_last_capacity(void);
/*
 * Where the second half of the calling thread's last Kineto file began, when a second
 * thread read it and its events were taken; else 0 (kineto-window.cpp).
 */
size_t orr__kineto_last_split(void);

/*
 * Chrome JSON of several ranks in one file (orr_trace_write_chrome(), traces/chrome/).
 * orr__chrome_split(): a file parsed into rb that declared its ranks (rb->nparts > 0):
 * its places, events, rows, flows and thread names go to the rank whose process they
 * are on, those ranks are finished and take rb's place in t, and rb is freed.  A
 * declaration that does not cover every process is refused, and so is a rank past
 * limits (ORR_ETOOBIG; the file was parsed against orr__limits_for_ranks() of them).
 * orr__chrome_check_one(): a file without the declaration is one rank; one that names
 * its processes after several ranks (an older orrery's) is refused.
 * Both refuse what cannot be split with ORR_ERANK and a diag that says how to write the
 * trace readable.
 */
int orr__chrome_split(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
		      const struct orr__limits *limits, struct orr_diag *diag);
int orr__chrome_check_one(const struct orr_trace *t, const struct orr__rank_build *rb,
			  const char *name, struct orr_diag *diag);

/*
 * The native format (traces/native/, orrery/native.h).  The preamble is a zstd
 * skippable frame: magic, length 12, "ORRERY\0\0", u32 version, all little-endian.
 */
#define ORR__NATIVE_PREAMBLE_BYTES 20
extern const unsigned char orr__native_magic[16];
/* Largest decompressed frame a reader accepts; the writer stays far below it. */
#define ORR__NATIVE_MAX_FRAME_BYTES (256u << 20)
#define ORR__NATIVE_MAX_WRITE_FRAME (32u << 20)
/* Most inputs or dims of one op, or members of one collective, the writer takes. */
#define ORR__NATIVE_MAX_ROW_ITEMS (1u << 22)
/* Bounds on times, so that start + dur never overflows anywhere downstream. */
#define ORR__NATIVE_MAX_TIME ORR_TIME_MAX

/*
 * Events store correlation and external id as the difference from the last event of
 * the same kind on the same place (places folded modulo 256): calls on a thread and
 * tasks on a stream count up in small steps.  The state is reset for every batch.
 */
#define ORR__NATIVE_SLOTS (256 * 16)
static inline size_t orr__native_slot(uint32_t place, uint32_t kind)
{
	return (size_t)(place & 255) * 16 + (kind & 15);
}

/* Rows defined so far in a native file, which its events may refer to. */
struct orr__native_rows {
	uint64_t strings, places, ops, kernels, copies, syncs, colls;
};

/*
 * NULL when e (with the file's own ids: name 0..strings, place, args and coll rows or
 * ORR_NONE) is one the format accepts, else what is wrong with it.  The one rule for
 * the writer and the reader.
 */
const char *orr__native_check_event(const struct orr_event *e, const struct orr__native_rows *n);
/* Then: GPU kinds on streams, the others on threads, as the importers make them. */
const char *orr__native_check_place(const struct orr_event *e, uint8_t place_kind);

/*
 * Reads one native file data[0..len) into rb (a new rank of t): header, tables, events,
 * trailer.  A file cut short keeps its complete frames, sets pub.truncated and calls
 * opts->warn; rb->has_rank tells whether the header gave the rank.  Decompressed frames
 * count against the limits' FILE_BYTES and (added to *run_bytes) RUN_BYTES, rows against
 * EVENTS, PLACES and STRING_BYTES.
 * Errors fill diag with name and the byte offset of the frame.
 */
int orr__native_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
		      const void *data, size_t len, const struct orr__limits *limits,
		      uint64_t *run_bytes, const struct orr_import_options *opts,
		      struct orr_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
