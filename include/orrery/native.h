/* SPDX-License-Identifier: MIT */
/*
 * orrery/native.h — the native trace format: one file per process, written as a stream.
 *
 * A native file (".orr") is a zstd skippable frame holding the magic and the format
 * version, then independent zstd frames.  Each frame decompresses to length-delimited
 * protobuf records (traces/proto/orrery.proto): the header first, then string, place,
 * side-table and event batches, and a trailer with the final counts.  A crash loses at
 * most the frame being written; readers keep every complete frame and warn.
 * Reading is part of orr_trace_import() (orrery/trace.h); this header is the writer,
 * used by `orrery convert` and by the tracer inside someone else's process.
 *
 * The writer never aborts and never calls orr_xmalloc(): every function returns 0 or a
 * negative code (-ENOMEM, -errno of a failed write, -EINVAL for a row the reader would
 * reject, -E2BIG past a size limit), after which the writer is still safe to use and to
 * close or abort; a failed write is returned again by every later call.  Ids handed out
 * (strings, places, table rows) are the file's own: an event refers to the place, string
 * and table rows written before it.  Events obey the model's rules: a kind below
 * ORR_EVENT_KIND_COUNT, sub in range for the kind (0 where unused), GPU kinds (kernel,
 * memcpy, memset, sync, CUDA event) on stream places and the others on threads, args only
 * for kinds with a table, duration >= 0, times within +-2^62 ns.
 * Output goes to a temporary ".NAME.tmp.PID.RANDOM" beside PATH and is renamed to PATH
 * by a successful close (orr_outfile_open(), orrery/common.h), so a reader never sees a
 * half-written file under the final name.
 *
 * Thread safety: one writer belongs to one thread at a time.
 */
#ifndef ORRERY_NATIVE_H
#define ORRERY_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ORR_NATIVE_VERSION 1
#define ORR_NATIVE_SUFFIX  ".orr"
/* The run manifest beside the per-process files of a run directory. */
#define ORR_NATIVE_MANIFEST "manifest.json"

/* True when the first bytes of a file are a native file's magic (n >= 12 needed). */
bool orr_native_detect(const void *data, size_t n);

struct orr_native_device {
	int32_t id;
	const char *name; /* NULL when unknown */
	int32_t num_sms, compute_major, compute_minor;
	int64_t total_mem_bytes;
};

/* What a file says about its process; strings may be NULL (written as absent). */
struct orr_native_header {
	int32_t rank;       /* global rank, -1 when unknown */
	int32_t world_size; /* -1 when unknown */
	int32_t local_rank; /* -1 when unknown */
	int64_t pid;
	const char *host;
	const char *producer;     /* "orrery-tracer 0.1.0", "orrery convert 0.1.0" */
	const char *clock_source; /* "CLOCK_REALTIME" for CUPTI's default clock */
	const char *source;       /* file the events came from, for converted traces */
	const char *backend;      /* communication backend, e.g. "nccl" */
	int64_t base_time_ns;     /* the rank's base time (orr_rank.base_time_ns) */
	uint32_t cupti_version;   /* 0 when not recorded by the tracer */
	int32_t cuda_driver_version, cuda_runtime_version; /* 0 when unknown */
	const struct orr_native_device *devices;
	size_t ndevices;
};

/* Written in the trailer by orr_native_writer_close(). */
struct orr_native_counts {
	uint64_t dropped_records; /* activity records the capture lost (CUPTI's count) */
	uint64_t dropped_events;  /* events the tracer could not store (memory, full tables) */
	uint64_t nflows;          /* orr_rank.nflows */
	/* Recorded step window: steps first..last were captured; -1 when not windowed. */
	int64_t first_step, last_step;
};

struct orr_native_writer_options {
	size_t frame_bytes;  /* uncompressed bytes per frame; 0 = 1 MiB */
	int zstd_level;      /* 0 = 3 */
	bool fsync_on_close; /* fsync the file before the rename */
	bool regular_only;   /* an existing PATH that is not a regular file: -EEXIST */
};

struct orr_native_writer;

/* Creates PATH's temporary and writes the magic and the header.  opts may be NULL. */
int orr_native_writer_open(const char *path, const struct orr_native_header *h,
			   const struct orr_native_writer_options *opts,
			   struct orr_native_writer **ret_w);

/*
 * Interns a string; *ret_id is the file's id for it (ORR_STR_NONE for len 0 only).
 * Bytes need not be UTF-8; no NUL (-EINVAL), at most 1 MiB (-E2BIG).
 */
int orr_native_writer_string(struct orr_native_writer *w, const char *s, size_t len,
			     uint32_t *ret_id);
/* Adds a place; name is a string id of this writer or ORR_STR_NONE. */
int orr_native_writer_place(struct orr_native_writer *w, const struct orr_place *p,
			    uint32_t *ret_index);

/*
 * Side-table rows; *ret_index goes into orr_event.args (ops for OP events, kernels for
 * KERNEL, copies for MEMCPY/MEMSET, syncs for SYNC/CUDA_EVENT) or orr_event.coll.  String fields are ids
 * of this writer.  first_input/first_dim/first_member fields of the arguments are
 * ignored: the rows given here are stored.
 */
struct orr_native_input {
	const int64_t *dims;
	uint16_t ndims;
	bool is_list;
	uint32_t dtype; /* string id or ORR_STR_NONE */
	/* strides as struct orr_input holds them (none: 0); kept where they fit dims */
	const int64_t *strides;
	uint16_t nstrides;
};
int orr_native_writer_op(struct orr_native_writer *w, int64_t sequence,
			 const struct orr_native_input *inputs, size_t ninputs,
			 uint32_t *ret_index);
int orr_native_writer_kernel(struct orr_native_writer *w, const struct orr_kernel_args *a,
			     uint32_t *ret_index);
int orr_native_writer_copy(struct orr_native_writer *w, const struct orr_copy_args *a,
			   uint32_t *ret_index);
int orr_native_writer_sync(struct orr_native_writer *w, const struct orr_sync_args *a,
			   uint32_t *ret_index);
int orr_native_writer_collective(struct orr_native_writer *w, const struct orr_collective *c,
				 const int32_t *members, size_t nmembers, uint32_t *ret_index);
int orr_native_writer_comm(struct orr_native_writer *w, const struct orr_comm *c,
			   const int32_t *members, size_t nmembers);
int orr_native_writer_skipped(struct orr_native_writer *w, uint32_t category, uint64_t count);

/* Appends an event; name, place, args and coll are ids/indices of this writer. */
int orr_native_writer_event(struct orr_native_writer *w, const struct orr_event *e);

/* Compresses and writes what is pending as one frame (the writer also does it by size). */
int orr_native_writer_flush(struct orr_native_writer *w);

/*
 * Writes the trailer and the last frame, optionally fsyncs, renames to PATH, frees w.
 * On failure the temporary file is removed and w is freed all the same.
 */
int orr_native_writer_close(struct orr_native_writer *w, const struct orr_native_counts *c);
/* Removes the temporary file and frees w; NULL is fine. */
void orr_native_writer_abort(struct orr_native_writer *w);

/*
 * Writes one rank of a trace to PATH (the model -> native direction of `orrery
 * convert`).  producer names the writing program.
 */
int orr_native_write_rank(const char *path, const struct orr_trace *t, const struct orr_rank *r,
			  const char *producer, struct orr_diag *reterr_diag);

/*
 * Run directories: one native file per process plus ORR_NATIVE_MANIFEST, a JSON object
 * for people and programs (docs/orrery-record.md gives its fields).  Importers read
 * the per-process files' own headers; the manifest is not needed to read a run.
 */
struct orr_run_file {
	const char *path; /* relative to the run directory */
	int32_t rank;     /* -1 when unknown */
	int64_t pid;
	const char *host;
	uint64_t events;
	uint64_t dropped_records, dropped_events;
};

/*
 * The manifest's entry of rank r of t, stored at path (borrowed, as the host from t): its
 * rank, process (a native file's own, else the first thread's), host, events and drops.
 */
struct orr_run_file orr_run_file_of_rank(const struct orr_trace *t, const struct orr_rank *r,
					 const char *path);

struct orr_run_manifest {
	const char *producer;       /* "orrery record 0.1.0" */
	const char *const *command; /* argv of the recorded command, may be NULL */
	size_t ncommand;
	int64_t created_unix_ns;
	int32_t world_size;        /* -1 when unknown */
	int64_t skip_steps, steps; /* the --skip and --steps asked for; -1 when not given */
	int exit_status;           /* of the recorded command; -1 when not run */
	const struct orr_run_file *files;
	size_t nfiles;
};

/*
 * The longest step prefix the tracer takes (ORR_RECORD_STEP_PREFIX, orrery record
 * --step-prefix), in bytes: it ignores a longer one for 'ProfilerStep#', with a log line.
 */
#define ORR_RECORD_STEP_PREFIX_MAX 127

/* Writes DIR/ORR_NATIVE_MANIFEST atomically (temporary name, then rename). */
int orr_run_write_manifest(const char *dir, const struct orr_run_manifest *m);

/*
 * Packs a run directory into one tar archive at OUT (atomically): the manifest and the
 * per-process files, with paths relative to the run, compressed as OUT's name says
 * (.gz or .tgz gzip, .xz or .txz xz, .bz2 or .tbz2 bzip2, .tar none, any other name
 * zstd).  Importers read the result directly.
 */
int orr_run_pack(const char *dir, const char *out, struct orr_diag *reterr_diag);

#ifdef __cplusplus
}
#endif

#endif
