/* SPDX-License-Identifier: MIT */
/*
 * orrery/common.h — errors, diagnostics, allocation, string interning, arenas,
 * growable arrays and debug logging shared by every subsystem.
 *
 * Errors: a function that can fail returns int, 0 on success or a negative code:
 * -errno, or one of the ORR_E* codes below.  orr_strerror() and orr_errname() name
 * every code.  Parsers also fill a struct orr_diag with the file, the byte offset or
 * event index, and what was expected.
 *
 * Memory: outside the tracer, running out of memory is fatal: orr_xmalloc() and
 * friends print one line and exit(1).  Every destructor accepts NULL.
 *
 * Thread safety: an arena or string table belongs to one thread at a time; the error
 * and logging functions are safe to call from any thread.
 */
#ifndef ORRERY_COMMON_H
#define ORRERY_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ORR_VERSION "0.1.0"

/* X(NAME, message): one list generates the codes, orr_strerror() and orr_errname(). */
#define ORR_ERRORS(X)                                                                 \
	X(EMALFORMED, "malformed input")                                              \
	X(ETRUNCATED, "truncated input")                                              \
	X(EEMPTY, "empty input")                                                      \
	X(ETOOBIG, "input exceeds a size limit")                                      \
	X(EFORMAT, "unrecognised trace format")                                       \
	X(ENOTRACE, "no trace found")                                                 \
	X(ERANK, "conflicting or invalid rank")                                       \
	X(EARCHIVE, "unreadable archive")                                             \
	X(ECYCLE, "dependency cycle")                                                 \
	X(ENOREADER, "a FIFO that no process reads (start its reader first)")         \
	X(EDANGLING, "a symbolic link to nothing (orrery does not write through it)") \
	X(ENOSTEPS, "no annotation matches --step-range")

enum orr_error {
	ORR_EBASE = -1000,
#define ORR_ERROR_ENUM(name, msg) ORR_##name,
	ORR_ERRORS(ORR_ERROR_ENUM) /* , */
#undef ORR_ERROR_ENUM
	ORR_ELAST
};

/* A message for any code: -errno or ORR_E*.  Never NULL. */
const char *orr_strerror(int err);
/* The symbolic name, e.g. "EMALFORMED" or "ENOENT".  Never NULL. */
const char *orr_errname(int err);

/*
 * Where a parser gave up.  offset is a byte offset into the (decompressed) input, or
 * -1; event is the index of the event in the trace, or -1.  msg says what was
 * expected.  A diag is plain data: no allocation, copy it freely.
 */
struct orr_diag {
	char file[512];
	char msg[1024];
	int64_t offset;
	int64_t event;
};

void orr_diag_clear(struct orr_diag *d);
/* Sets every field of d (when d is not NULL) and returns err, for `return orr_diag_set(...)`. */
int orr_diag_set(struct orr_diag *d, int err, const char *file, int64_t offset, int64_t event,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* "FILE: MESSAGE at byte N: MSG" into buf; returns buf. */
const char *orr_diag_format(const struct orr_diag *d, int err, char *buf, size_t size);

/* Allocation: fatal on failure (prints "orrery: out of memory" and exits 1). */
void *orr_xmalloc(size_t size);
void *orr_xcalloc(size_t n, size_t size);
void *orr_xrealloc(void *p, size_t size);
/* Grows an array of n elements of size elem so that it holds at least want. */
void *orr_xgrow(void *p, size_t elem, size_t *cap, size_t want);
char *orr_xstrdup(const char *s);
char *orr_xstrndup(const char *s, size_t n);
char *orr_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Appends one element to a (ptr, n, cap) triple, growing it geometrically. */
#define ORR_VEC_PUSH(ptr, n, cap, value)                                           \
	do {                                                                       \
		if ((n) == (cap))                                                  \
			(ptr) = orr_xgrow((ptr), sizeof(*(ptr)), &(cap), (n) + 1); \
		(ptr)[(n)++] = (value);                                            \
	} while (0)

/* Arena: bump allocation in large blocks, freed all at once. */
struct orr_arena;
struct orr_arena *orr_arena_new(void);
void orr_arena_free(struct orr_arena *a);
void *orr_arena_alloc(struct orr_arena *a, size_t size, size_t align);

/*
 * String table: interns byte strings into dense ids.  Id 0 is always "".  Strings are
 * NUL-terminated copies owned by the table; pointers stay valid until it is freed.
 */
#define ORR_STR_NONE 0u
struct orr_strtab;
struct orr_strtab *orr_strtab_new(void);
void orr_strtab_free(struct orr_strtab *t);
uint32_t orr_strtab_intern(struct orr_strtab *t, const char *s, size_t len);
/* The id of s, or UINT32_MAX when it was never interned. */
uint32_t orr_strtab_find(const struct orr_strtab *t, const char *s, size_t len);
const char *orr_strtab_get(const struct orr_strtab *t, uint32_t id);
/* The length of string id, which may hold NUL bytes; 0 for an id never given. */
size_t orr_strtab_len(const struct orr_strtab *t, uint32_t id);
size_t orr_strtab_count(const struct orr_strtab *t);

/*
 * v[0, n) in ascending order, by an LSD radix sort of 11-bit digits as far as the values
 * differ (a few passes over the array where qsort() calls its comparison n log n times).
 */
void orr_sort_i64(int64_t *v, size_t n);

/*
 * Debug logging, enabled per subsystem by ORR_DEBUG=traces,graph (or "all").  Writes
 * to stderr.  The only output library code ever produces.
 */
bool orr_debug_enabled(const char *subsystem);
void orr_debug(const char *subsystem, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic clock in nanoseconds, for progress and benchmarks. */
int64_t orr_now_ns(void);

/*
 * Names from traces and paths, made safe to show (common/escape.c; docs/limits.md).
 * Text: C0 controls, DEL and bytes that are not UTF-8 become \n, \t, \r or \xNN; C1
 * controls, U+2028/U+2029 and the bidirectional overrides and isolates become \uNNNN;
 * valid UTF-8 and backslashes stay as they are, so the escaping is idempotent.
 * orr_text_escape() is snprintf-like: it writes at most size bytes, NUL included,
 * and returns the length of the whole escaped text.
 */
size_t orr_text_escape(char *buf, size_t size, const char *s);
/* True when orr_text_escape() would change nothing. */
bool orr_text_is_plain(const char *s);
/* An escaped copy, to free(). */
char *orr_text_escape_dup(const char *s);
/* The length of the valid UTF-8 sequence at s (1 for ASCII), or 0. */
size_t orr_utf8_len(const char *s);
/*
 * s as a quoted JSON string: '"' and '\\' escaped, control characters (C0, DEL, C1,
 * U+2028, U+2029, bidirectional controls) written as \uNNNN, and bytes that are not
 * UTF-8 as \ufffd, so that the output is always valid JSON.
 */
void orr_json_write_string(FILE *f, const char *s);
/*
 * A streaming JSON writer (common/json-out.c): an object from orr_json_begin() to
 * orr_json_end() (which adds a newline), two spaces of indentation per level; commas and
 * nesting are kept for the caller.  Each value takes a key, NULL for an array's element.
 * Writes go to f as they come: the caller checks f for errors.
 */
struct orr_json_out {
	FILE *f;
	int depth;
	bool first[64];
	bool pretty;
};

void orr_json_begin(struct orr_json_out *j, FILE *f);
void orr_json_end(struct orr_json_out *j);
void orr_json_object(struct orr_json_out *j, const char *key);
void orr_json_array(struct orr_json_out *j, const char *key);
void orr_json_close_object(struct orr_json_out *j);
void orr_json_close_array(struct orr_json_out *j);
/* A string, escaped (orr_json_write_string()); null when value is NULL. */
void orr_json_str(struct orr_json_out *j, const char *key, const char *value);
void orr_json_int(struct orr_json_out *j, const char *key, int64_t value);
void orr_json_bool(struct orr_json_out *j, const char *key, bool value);
/* "%.6g"; null when value is NaN or infinite, so that the output stays JSON. */
void orr_json_double(struct orr_json_out *j, const char *key, double value);
/*
 * As orr_json_double(), with the shortest of 15 to 17 digits that strtod() reads back as
 * value exactly: what a model's predictions read must come back bit for bit.
 */
void orr_json_double_exact(struct orr_json_out *j, const char *key, double value);
/* True when s is valid UTF-8 (orr_utf8_len() of every sequence above 0). */
bool orr_utf8_is_valid(const char *s);
/*
 * s with each byte that is not part of a valid UTF-8 sequence replaced by U+FFFD,
 * everything else as it is; snprintf-like, as orr_text_escape().
 */
size_t orr_utf8_replace(char *buf, size_t size, const char *s);
/*
 * s as one CSV text cell (RFC 4180): bytes that are not UTF-8 as U+FFFD; a cell that
 * starts with '=', '+', '-', '@', a tab or a carriage return, and is not a number (as
 * -1.5 is), prefixed with "'" so that a spreadsheet shows it rather than runs it as a
 * formula (OWASP, "CSV Injection"); control characters but tab, CR and LF written as
 * orr_text_escape() writes them (\xNN, \uNNNN); quoted, quotes doubled, when it holds
 * ',', '"', CR or LF.  The one writer of every CSV cell that can hold a name.
 */
void orr_csv_write_field(FILE *f, const char *s);

/*
 * Outputs (common/outfile.c; docs/limits.md, "Outputs"): the one way to write a file or
 * a directory.  A regular output is written to ".NAME.tmp.PID.RANDOM" in its directory
 * (O_CREAT|O_EXCL|O_NOFOLLOW, an unguessable name) and renamed over NAME by commit, so
 * that readers see the old output or the new one; a symbolic link at NAME is replaced,
 * never followed.  Replacing keeps the old file's permission bits; a new file gets
 * 0666 & ~umask.  Anything else that exists at NAME (a character device, a FIFO,
 * /dev/stdout) is written in place, or with ORR_OUTFILE_REGULAR refused (-EEXIST): the
 * tracer's file must not block its writer on a FIFO planted at its name.  A FIFO that
 * no process reads within 1 s fails with ORR_ENOREADER instead of blocking.  With
 * ORR_OUTFILE_DIR, a directory is made instead (NAME must not exist or be empty); write
 * its members into orr_outfile_dir().  A link at NAME to a directory is followed there
 * (the output replaces that empty directory); a link to nothing fails with
 * ORR_EDANGLING.  Descriptors are 3 or above.
 * No orr_xmalloc, no abort, no printing, so that the tracer uses it too.  Functions return 0 or
 * -errno; after a failed open, commit or abort nothing is left.  One orr_outfile
 * belongs to one thread; it must stay where it is between open and commit or abort.
 */
#define ORR_OUTFILE_DIR     1u
#define ORR_OUTFILE_REGULAR 2u
struct orr_outfile {
	char path[4096], tmp[4096];
	FILE *stream;
	int fd, slot, err;
	unsigned mode;
	bool active, direct, is_dir, keep_mode;
};
int orr_outfile_open(struct orr_outfile *o, const char *path, unsigned flags);
/* A buffered stream on the file (the outfile closes it), or NULL (ENOMEM). */
FILE *orr_outfile_stream(struct orr_outfile *o);
int orr_outfile_fd(const struct orr_outfile *o);
/* The temporary directory of an ORR_OUTFILE_DIR output. */
const char *orr_outfile_dir(const struct orr_outfile *o);
/* Flushes, closes (fsync first when sync) and renames; on failure removes the temporary. */
int orr_outfile_commit(struct orr_outfile *o, bool sync);
/* Closes and removes the temporary (with a directory's members); NULL or closed is fine. */
void orr_outfile_abort(struct orr_outfile *o);
/*
 * The one way to read an input file whole (common/read-file.c): the regular file at
 * path into *ret (orr_xmalloc'ed, *ret_len bytes and then padding zero bytes), opened
 * without blocking and checked on its descriptor before a byte is read, so that a FIFO
 * or a device is refused at once.  -errno; -EINVAL "not a regular file (a FIFO)";
 * ORR_ETOOBIG past max_bytes ("... MiB WHAT may have").  A file that shrinks meanwhile
 * is read as it now is.
 */
int orr_file_read(const char *path, uint64_t max_bytes, const char *what, size_t padding,
		  char **ret, size_t *ret_len, struct orr_diag *diag);
/*
 * Where a JSON text that a parser refused stops being JSON (common/json-check.c): 0 when
 * buf[0..len) (after a UTF-8 byte order mark) is one JSON value within max_depth
 * levels of arrays and objects that hold a value (an empty one past them is taken, as
 * simdjson counts), whitespace around it; else ORR_EMALFORMED, ORR_ETRUNCATED (at len) or
 * ORR_ETOOBIG (deeper), with the byte offset and what was expected there.
 */
struct orr_json_error {
	size_t offset;
	const char *expected; /* static text: "',' or '}'", "a JSON value"... */
};
int orr_json_check(const char *buf, size_t len, size_t max_depth, struct orr_json_error *reterr);
/* The 1-based line and column (in bytes) of buf[offset], for messages. */
void orr_json_where(const char *buf, size_t offset, size_t *ret_line, size_t *ret_column);
/*
 * What a file of stat(2)'s st_mode is when it is not a regular file, for messages
 * ("a FIFO", "a directory", ...; "not a file" for anything else).
 */
const char *orr_file_type(unsigned int st_mode);
/*
 * SIGINT, SIGTERM and SIGHUP (those not ignored and not caught already) remove every
 * live temporary, then end the process as the signal would have.  For programs, not
 * for the tracer.
 */
void orr_outfile_catch_signals(void);
/* True when PATH exists and is not a file or a directory, or names a descriptor. */
bool orr_outfile_is_special(const char *path);
/* True when OUT would be IN itself or inside the directory IN (real paths compared). */
bool orr_outfile_inside(const char *out, const char *in);

#ifdef __cplusplus
}
#endif

#endif
