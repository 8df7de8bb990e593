/* SPDX-License-Identifier: MIT */
/*
 * traces/import.h — what the importer's parts share: import.c finds and reads files,
 * directories and archives into memory (import-names.c tells what a file is by its name
 * and first bytes; import-read.c reads plain JSON while it is parsed); import-formats.c
 * turns one file's bytes into ranks by its format (Kineto JSON, native, Nsight Systems
 * SQLite), or says it is no trace; import-ranks.c checks that the files read make one job.
 */
#ifndef ORRERY_TRACES_IMPORT_H
#define ORRERY_TRACES_IMPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

struct import_ctx {
	struct orr_trace *t;
	const struct orr_import_options *opts;
	struct orr__limits lim;
	struct orr_diag *diag;
	uint64_t bytes;     /* JSON text parsed */
	uint64_t run_bytes; /* read and decompressed, every file and member */
	int64_t start_ns;
	/* The last ORR_EFORMAT was a file of no trace format (not a broken trace). */
	bool not_trace;
	/* Reading orr_import_options.et_path: execution traces only. */
	bool et_only;
	/* The path given to orr_trace_import() and its name in messages (path NULL: a buffer). */
	const char *top_path, *top_name;
	/*
	 * Reading one member again (orr__import_file_again()): the archives' members but this
	 * one, named as in sources, and the archives on its way ('a.tar:b.tar.gz'), skipped.
	 */
	const char *only;
};

/* A malloc'ed buffer with ORR__JSON_PADDING spare bytes after len. */
struct buf {
	char *p;
	size_t len, cap;
};

static inline void buf_release(struct buf *b)
{
	free(b->p);
	*b = (struct buf){ 0 };
}

/* import-names.c: what a file is by its name, case-insensitive suffixes. */
bool orr__import_ends_with(const char *s, const char *suffix);
/* A trace's name (.json, .json.gz, .orr, .sqlite, ...), not a run's manifest. */
bool orr__import_is_trace_name(const char *name);
/* A compressed JSON file by its name: one stream, never a tar archive. */
bool orr__import_is_compressed_json_name(const char *name);
/* A member named .x, or inside a directory named .x. */
bool orr__import_is_hidden_member(const char *path);
/* "gzip", "zstd", "xz", "bzip2" or "tar" by the first n bytes at p, or NULL. */
const char *orr__import_container_kind(const unsigned char *p, size_t n);
/* ORR_EARCHIVE: why libarchive took a container's first bytes for none of its formats. */
int orr__import_container_fail(struct import_ctx *c, const char *name, const unsigned char *p,
			       size_t n);

/* A plain file is read in pieces of this size (after a small first one). */
#define ORR__IMPORT_READ_BYTES (64u << 20)

/* import-read.c: -EIO, "the file changed while it was read", at byte at of name. */
int orr__import_changed(struct orr_diag *diag, const char *name, size_t at, size_t size);
/*
 * The plain JSON file open at fd, size bytes, of which b holds the first piece (taken
 * and freed): parsed while the rest is read, in a buffer of about four parser windows.
 */
int orr__import_read_json(struct import_ctx *c, int fd, size_t size, const char *name,
			  struct buf *b);
/* Forgets the last buffer's size (orr__import_last_json_bytes()): a new file begins. */
void orr__import_read_json_reset(void);

/* import-formats.c: one file's (or member's) bytes in b, name as messages give it. */
int orr__import_json(struct import_ctx *c, const char *name, struct buf *b);
/* The same for a plain file read while it is parsed (import-read.c). */
int orr__import_json_source(struct import_ctx *c, const char *name, struct orr__source *src);
int orr__import_native(struct import_ctx *c, const char *name, struct buf *b);
int orr__import_sqlite(struct import_ctx *c, const char *name, struct buf *b);
/*
 * In a directory or an archive, a file that is no trace of any format orrery reads (a
 * config, an execution trace beside the profiler's) is skipped with a warning instead of
 * failing the run; given alone, it is an error.  True when r was such a file.
 */
bool orr__import_skipped(struct import_ctx *c, const char *name, int r);
/*
 * Pairs the execution traces read with their ranks and links them: by the rank in the
 * ET's name, or the only ET with the only rank; one without its rank is skipped with a
 * warning.  After the ranks are checked.
 */
int orr__import_attach_ets(struct import_ctx *c, const char *path);

/*
 * import-ranks.c: every rank of c's trace known (a lone file's is 0), each once; then
 * the ranks in rank order.  Else ORR_ERANK naming the file, or saying that path's
 * traces are separate runs.  After the ops are merged, before the execution traces are
 * attached.
 */
int orr__import_check_ranks(struct import_ctx *c, const char *path);

/* import-ops.c: PID of a CPU-only profiler's ops file's name, ops-PID.json(.gz|.zst); -1. */
int64_t orr__import_ops_pid(const char *name);
/*
 * Each ops-PID.json read is merged into the rank of the tracer's file of process PID
 * (its ops and annotations onto its threads) and goes; one without that file is skipped
 * with a warning.  Nothing is merged when no file but such ones was read.  Before the
 * ranks are checked.
 */
int orr__import_merge_ops(struct import_ctx *c);
/*
 * The file or archive member named name (as in ranks' sources) read again alone (a trace
 * of its own, freed), its ranks' dimensions, strides, inputs and members counted with
 * held's against ORR_MAX_VALUES: its error, in c's diag (ORR_ETOOBIG where it passes
 * them); -ENOENT, nothing read, when name is neither a regular file nor a member of one
 * (a member of an archive imported from memory).
 */
int orr__import_file_again(struct import_ctx *c, const char *name, const uint64_t held[4]);

#endif
