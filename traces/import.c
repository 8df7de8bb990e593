/* SPDX-License-Identifier: MIT */
/*
 * Finding and reading trace files: a file (plain or compressed), a directory of
 * per-rank files, or an archive of them.  libarchive handles every container and
 * compression; plain files are read straight into a padded buffer, plain JSON while it
 * is parsed (import-read.c).  Only regular files
 * and directories are opened; every byte is counted against the limits (limits.c) as it
 * arrives, and the first bytes decide what a file is before the rest is read.
 */
#include <archive.h>
#include <archive_entry.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "internal.h"
#include "orrery/native.h"
#include "banned.h"

static void buf_reserve(struct buf *b, size_t want)
{
	if (want + ORR__JSON_PADDING > b->cap) {
		size_t cap = b->cap < 65536 ? 65536 : b->cap;

		while (cap < want + ORR__JSON_PADDING)
			cap *= 2;
		b->p = orr_xrealloc(b->p, cap);
		b->cap = cap;
	}
}

static void buf_pad(struct buf *b)
{
	buf_reserve(b, b->len);
	memset(b->p + b->len, 0, ORR__JSON_PADDING);
}

/* The first bytes of a file or member decide what it is before the rest is read. */
#define SNIFF_BYTES 512
/* A plain file is read in pieces, checked as they come; the first piece is small. */
#define FIRST_READ_BYTES 65536

enum kind { KIND_UNKNOWN, KIND_CONTAINER, KIND_NATIVE, KIND_SQLITE, KIND_JSON };

/* A file or archive member being read into memory, checked as its bytes arrive. */
struct stream {
	struct buf b;
	const char *name;
	enum kind kind;
	bool decompressed; /* from a container: its size says nothing about its bytes */
	size_t checked;    /* bytes of b checked as JSON text */
	uint64_t ws_run;   /* whitespace at the end of those */
};

static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* A byte for a message: 'x', or its value when it is not printable ASCII. */
static const char *describe_byte(unsigned char ch, char *buf, size_t size)
{
	if (ch > 0x20 && ch < 0x7f)
		snprintf(buf, size, "'%c'", ch);
	else
		snprintf(buf, size, "byte 0x%02x", ch);
	return buf;
}

static int sniff(struct import_ctx *c, struct stream *s, bool at_end)
{
	const unsigned char *p = (const unsigned char *)s->b.p;
	size_t n = s->b.len, pos = 0;
	char what[32];

	if (!at_end && n < SNIFF_BYTES)
		return 0;
	if (orr__import_container_kind(p, n)) {
		s->kind = KIND_CONTAINER;
		return 0;
	}
	if (orr_native_detect(p, n)) {
		s->kind = KIND_NATIVE;
		return 0;
	}
	/* SQLite's file header: an Nsight Systems export (traces/nsys/). */
	if (n >= 16 && memcmp(p, "SQLite format 3", 16) == 0) {
		s->kind = KIND_SQLITE;
		return 0;
	}
	/* A .orr name promises a native file: say what its first bytes should have been. */
	if (orr__import_ends_with(s->name, ORR_NATIVE_SUFFIX))
		return orr_diag_set(c->diag, n ? ORR_EFORMAT : ORR_EEMPTY, s->name, 0, -1,
				    n ? "expected a native orrery file (its magic frame)"
				      : "the file is empty");
	/* JSON: an optional UTF-8 byte order mark, whitespace, then '{' or '['. */
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	while (pos < n && is_ws((char)p[pos]))
		pos++;
	if (pos == n) {
		s->kind = at_end ? KIND_JSON : KIND_UNKNOWN;
		return 0;
	}
	c->not_trace = p[pos] != '{' && p[pos] != '[';
	/* A tar archive without members is only its end: blocks of zeros. */
	if (c->not_trace && n >= 512 && !p[0] && !memcmp(p, p + 1, 511))
		return orr_diag_set(c->diag, ORR_EFORMAT, s->name, 0, -1,
				    "an empty archive: its first 512 bytes are byte 0x00, the end "
				    "of a tar archive that has no members");
	if (c->not_trace)
		return orr_diag_set(c->diag, ORR_EFORMAT, s->name, (int64_t)pos, -1,
				    "expected a Kineto JSON trace ('{' or '[') or a native orrery "
				    "file, found %s",
				    describe_byte(p[pos], what, sizeof(what)));
	s->kind = KIND_JSON;
	return 0;
}

/*
 * JSON text never holds a NUL byte.  Decompressed text holds no run of whitespace longer
 * than the string limit: a few bytes of zstd can stand for gigabytes of spaces, which
 * would otherwise all be kept in memory before the parser saw them.
 */
static int check_text(struct import_ctx *c, struct stream *s)
{
	const char *p = s->b.p, *nul;
	size_t from = s->checked, to = s->b.len, i;
	uint64_t cap = c->lim.max[ORR__LIMIT_STRING_BYTES];

	if (from >= to)
		return 0; /* nothing new (an empty input has no buffer yet) */
	nul = memchr(p + from, '\0', to - from);
	if (nul)
		return orr_diag_set(c->diag, ORR_EMALFORMED, s->name, nul - p, -1,
				    "a NUL byte, which JSON text never holds");
	s->checked = to;
	if (!s->decompressed)
		return 0;
	if (to - from > cap) {
		/* A piece longer than the limit can hide a run inside it: look at every byte. */
		for (i = from; i < to; i++) {
			s->ws_run = is_ws(p[i]) ? s->ws_run + 1 : 0;
			if (s->ws_run > cap)
				goto fail;
		}
		return 0;
	}
	/* Otherwise only runs that reach a piece's ends can grow past it. */
	for (i = from; i < to && is_ws(p[i]); i++)
		s->ws_run++;
	if (s->ws_run > cap)
		goto fail;
	if (i < to) {
		s->ws_run = 0;
		for (i = to; i > from && is_ws(p[i - 1]); i--)
			s->ws_run++;
	}
	return 0;
fail:
	return orr__limit_fail(&c->lim, ORR__LIMIT_STRING_BYTES, c->diag, s->name,
			       (int64_t)(to - s->ws_run), -1);
}

/* After bytes were added to s (at_end: all of them). */
static int stream_check(struct import_ctx *c, struct stream *s, bool at_end)
{
	int r;

	if (s->kind == KIND_UNKNOWN && (r = sniff(c, s, at_end)))
		return r;
	/* Still unknown: nothing but whitespace so far. */
	if (s->kind == KIND_UNKNOWN && s->decompressed &&
	    s->b.len > c->lim.max[ORR__LIMIT_STRING_BYTES])
		return orr__limit_fail(&c->lim, ORR__LIMIT_STRING_BYTES, c->diag, s->name, 0, -1);
	if (s->kind == KIND_JSON)
		return check_text(c, s);
	return 0;
}

/* The file and run limits, for size more bytes of s. */
static int stream_grow(struct import_ctx *c, struct stream *s, uint64_t size)
{
	if (size > c->lim.max[ORR__LIMIT_FILE_BYTES] - s->b.len)
		return orr__limit_fail(&c->lim, ORR__LIMIT_FILE_BYTES, c->diag, s->name,
				       (int64_t)s->b.len, -1);
	if (size > c->lim.max[ORR__LIMIT_RUN_BYTES] - c->run_bytes)
		return orr__limit_fail(&c->lim, ORR__LIMIT_RUN_BYTES, c->diag, s->name,
				       (int64_t)s->b.len, -1);
	return 0;
}

static int stream_add(struct import_ctx *c, struct stream *s, const void *data, size_t size)
{
	int r;

	if ((r = stream_grow(c, s, size)))
		return r;
	c->run_bytes += size;
	buf_reserve(&s->b, s->b.len + size);
	if (size)
		memcpy(s->b.p + s->b.len, data, size);
	s->b.len += size;
	/* Every 64 MiB of input read (orr_import_options.progress). */
	if (c->opts && c->opts->progress && (c->run_bytes >> 26) != ((c->run_bytes - size) >> 26))
		c->opts->progress(c->opts->progress_data, s->name, c->run_bytes);
	return stream_check(c, s, false);
}

static int import_memory(struct import_ctx *c, const char *name, struct buf *b, int depth);

/* A file or member read whole: an archive in it, a native file or Kineto JSON. */
static int stream_parse(struct import_ctx *c, struct stream *s, int depth)
{
	switch (s->kind) {
	case KIND_CONTAINER:
		return import_memory(c, s->name, &s->b, depth);
	case KIND_NATIVE:
		return orr__import_native(c, s->name, &s->b);
	case KIND_SQLITE:
		return orr__import_sqlite(c, s->name, &s->b);
	default:
		return orr__import_json(c, s->name, &s->b);
	}
}

/*
 * A tar member that declares more bytes than the archive holds: libarchive hands over
 * what there is, the archive's zero padding and end included, then fails.  The bytes
 * present are those before that padding.
 */
static int cut_short(struct import_ctx *c, const char *archive, const char *member,
		     int64_t declared, const struct stream *s)
{
	size_t present = s->b.len;

	while (present && !s->b.p[present - 1])
		present--;
	return orr_diag_set(c->diag, ORR_ETRUNCATED, archive, -1, -1,
			    "member %s truncated: declares %lld bytes, %zu present", member,
			    (long long)declared, present);
}

/* After s's bytes failed a check: whether only zeros, at most 1 MiB, end the archive. */
static bool zeros_then_end(struct archive *a, const struct stream *s)
{
	size_t zeros = 0;

	if (!s->b.len || s->b.p[s->b.len - 1])
		return false;
	for (;;) {
		const unsigned char *p;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(a, (const void **)&p, &size, &offset);

		if (r == ARCHIVE_EOF)
			return false;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return true;
		if ((zeros += size) > (1u << 20) || (size && (p[0] || memcmp(p, p + 1, size - 1))))
			return false;
	}
}

/* declared: the member's size as its tar header says, or -1 (a compressed file's). */
static int read_entry(struct import_ctx *c, struct archive *a, struct stream *s,
		      const char *archive, const char *member, int64_t declared)
{
	int r;

	for (;;) {
		const void *block;
		size_t size;
		la_int64_t offset;

		r = archive_read_data_block(a, &block, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN && declared > (int64_t)s->b.len &&
		    archive_error_string(a) && strstr(archive_error_string(a), "runcated"))
			return cut_short(c, archive, member, declared, s);
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return orr_diag_set(c->diag, ORR_ETRUNCATED, s->name, (int64_t)s->b.len, -1,
					    "cannot decompress: %s",
					    archive_error_string(a) ? archive_error_string(a)
								    : "unreadable data");
		if ((r = stream_add(c, s, block, size)))
			return declared > (int64_t)s->b.len && zeros_then_end(a, s)
				       ? cut_short(c, archive, member, declared, s)
				       : r;
		/* A bomb: a few bytes that stand for gigabytes. */
		if (s->b.len > ORR__RATIO_FLOOR_BYTES &&
		    s->b.len / (uint64_t)(archive_filter_bytes(a, -1) | 1) >
			    c->lim.max[ORR__LIMIT_RATIO])
			return orr__limit_fail(&c->lim, ORR__LIMIT_RATIO, c->diag, s->name,
					       (int64_t)s->b.len, -1);
	}
	if ((r = stream_check(c, s, true)))
		return r;
	buf_pad(&s->b);
	return 0;
}

/* Whether member is only, or an archive that holds it ('a.tar:b.tar.gz' of 'a.tar:b.tar.gz:c'). */
static bool on_the_way(const char *only, const char *member)
{
	size_t len = strlen(member);

	return strncmp(only, member, len) == 0 && (!only[len] || only[len] == ':');
}

/*
 * Every trace member of an opened archive (or the one stream of a compressed file).
 * head[0..nhead) are the container's first bytes, for saying what is wrong with them.
 */
static int import_archive(struct import_ctx *c, const char *name, struct archive *a,
			  const unsigned char *head, size_t nhead, int depth)
{
	struct archive_entry *entry;
	struct stream s = { 0 };
	char *member = NULL;
	size_t found = 0, seen = 0, skipped = 0;
	int r;

	while ((r = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
		bool raw = archive_format(a) == ARCHIVE_FORMAT_RAW;
		const char *path = archive_entry_pathname(entry);

		/* Neither a compression nor tar: libarchive refused the header it saw. */
		if (raw && archive_filter_count(a) <= 1) {
			r = orr__import_container_fail(c, name, head, nhead);
			goto out;
		}
		seen++;
		if (!raw &&
		    (archive_entry_filetype(entry) != AE_IFREG || !path ||
		     !orr__import_is_trace_name(path) || orr__import_is_hidden_member(path)))
			continue;
		free(member);
		member = raw ? orr_xstrdup(name) : orr_xasprintf("%s:%s", name, path);
		if (c->only && !on_the_way(c->only, member))
			continue;
		buf_release(&s.b);
		s = (struct stream){ .name = member, .decompressed = true };
		if ((r = read_entry(c, a, &s, name, path,
				    !raw && archive_entry_size_is_set(entry)
					    ? archive_entry_size(entry)
					    : -1)) ||
		    (r = stream_parse(c, &s, depth + 1))) {
			if (!raw && orr__import_skipped(c, member, r)) {
				skipped++;
				continue;
			}
			goto out;
		}
		found++;
	}
	if (r != ARCHIVE_EOF) {
		r = orr_diag_set(c->diag, ORR_EARCHIVE, name, -1, -1, "%s",
				 archive_error_string(a) ? archive_error_string(a) : "unreadable");
		goto out;
	}
	if (found)
		r = 0;
	else if (skipped)
		r = orr_diag_set(c->diag, ORR_ENOTRACE, name, -1, -1,
				 "none of its %zu member%s is a trace (the warnings above)",
				 skipped, skipped == 1 ? "" : "s");
	else if (!seen)
		r = orr_diag_set(c->diag, ORR_ENOTRACE, name, -1, -1,
				 "an empty tar archive (its first block is zeros)");
	else
		r = orr_diag_set(c->diag, ORR_ENOTRACE, name, -1, -1,
				 "the archive has no *.json, *.json.gz, *.json.zst or *.orr "
				 "member");
out:
	free(member);
	buf_release(&s.b);
	return r;
}

/*
 * raw_only: a compressed file (NAME.json.gz), never read as a tar archive.  NULL when
 * libarchive cannot allocate its reader: the caller's error, -ENOMEM (no_reader()).
 */
static struct archive *archive_new(bool raw_only)
{
	struct archive *a = archive_read_new();

	if (!a)
		return NULL;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_bzip2(a);
	if (!raw_only)
		archive_read_support_format_tar(a);
	archive_read_support_format_raw(a);
	return a;
}

static int no_reader(struct import_ctx *c, const char *name)
{
	return orr_diag_set(c->diag, -ENOMEM, name, -1, -1,
			    "out of memory opening it (libarchive's reader)");
}

/* b holds a container (orr__import_container_kind()). */
static int import_memory(struct import_ctx *c, const char *name, struct buf *b, int depth)
{
	struct archive *a;
	int r;

	if (depth > 2)
		return orr_diag_set(c->diag, ORR_EFORMAT, name, 0, -1,
				    "archives nested more than twice");
	if (!(a = archive_new(orr__import_is_compressed_json_name(name))))
		return no_reader(c, name);
	if (archive_read_open_memory(a, b->p, b->len) != ARCHIVE_OK)
		r = orr_diag_set(c->diag, ORR_EARCHIVE, name, 0, -1, "%s",
				 archive_error_string(a) ? archive_error_string(a) : "unreadable");
	else
		r = import_archive(c, name, a, (const unsigned char *)b->p, b->len, depth);
	archive_read_free(a);
	return r;
}

/* read_plain(): the file is JSON, parsed while the rest is read (import-read.c). */
#define READ_STREAM 1

/*
 * A plain file, read (not mapped: a mapping of a file cut short meanwhile dies of
 * SIGBUS, and a signal handler is no library's to install) in pieces that are checked as
 * they come, the first one small, so that a file that is not a trace is refused before
 * the rest is read.  JSON stops there: READ_STREAM.
 */
static int read_plain(struct import_ctx *c, int fd, size_t size, struct stream *s)
{
	struct stat st;
	int r;

	if ((r = stream_grow(c, s, size)))
		return r;
	buf_reserve(&s->b, size < FIRST_READ_BYTES ? size : FIRST_READ_BYTES);
	while (s->b.len < size) {
		if (s->kind == KIND_JSON && !c->et_only)
			return READ_STREAM;
		if (s->b.len)
			buf_reserve(&s->b, size);
		size_t piece = s->b.len ? ORR__IMPORT_READ_BYTES : FIRST_READ_BYTES;
		size_t want = size - s->b.len < piece ? size - s->b.len : piece;
		ssize_t n = read(fd, s->b.p + s->b.len, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return orr_diag_set(c->diag, -errno, s->name, (int64_t)s->b.len, -1,
					    "read failed");
		if (n == 0)
			return orr__import_changed(c->diag, s->name, s->b.len, size);
		s->b.len += (size_t)n;
		c->run_bytes += (uint64_t)n;
		/* Bytes read while the file was cut short may be zeros: say what happened. */
		if ((r = stream_check(c, s, s->b.len == size)))
			return fstat(fd, &st) == 0 && (size_t)st.st_size != size
				       ? orr__import_changed(c->diag, s->name, s->b.len, size)
				       : r;
	}
	/* One byte more is one too many: the file grew. */
	if (read(fd, s->b.p + s->b.len, 1) > 0)
		return orr__import_changed(c->diag, s->name, s->b.len, size);
	buf_pad(&s->b);
	return 0;
}

/* The file at path, named name in ranks' sources and messages (path but for standard input). */
static int import_file(struct import_ctx *c, const char *path, const char *name)
{
	unsigned char head[SNIFF_BYTES];
	struct stream s = { .name = name };
	struct stat st;
	ssize_t nhead;
	int fd, r;

	c->not_trace = false;
	orr__import_read_json_reset();
	/* Nsight Systems' own format is private: its SQLite export is what can be read. */
	if (orr__import_ends_with(name, ".nsys-rep") || orr__import_ends_with(name, ".qdrep"))
		return orr_diag_set(
			c->diag, ORR_EFORMAT, name, -1, -1,
			"an Nsight Systems report; orrery reads its SQLite export: nsys "
			"export --type sqlite --output NAME.sqlite '%s'",
			name);
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return orr_diag_set(c->diag, -errno, name, -1, -1, "cannot open");
	if (fstat(fd, &st) < 0) {
		r = orr_diag_set(c->diag, -errno, name, -1, -1, "cannot open");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = orr_diag_set(c->diag, -EINVAL, name, -1, -1, "not a regular file (%s)",
				 orr_file_type(st.st_mode));
		goto out;
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (st.st_size == 0) {
		r = orr_diag_set(c->diag, ORR_EEMPTY, name, -1, -1, "the file is empty");
		goto out;
	}
	if ((uint64_t)st.st_size > c->lim.max[ORR__LIMIT_FILE_BYTES]) {
		r = orr__limit_fail(&c->lim, ORR__LIMIT_FILE_BYTES, c->diag, name, -1, -1);
		goto out;
	}
	nhead = pread(fd, head, sizeof(head), 0);
	if (nhead > 0 && orr__import_container_kind(head, (size_t)nhead)) {
		struct archive *a = archive_new(orr__import_is_compressed_json_name(name));

		if (!a)
			r = no_reader(c, name);
		else if (archive_read_open_fd(a, fd, 1 << 20) != ARCHIVE_OK)
			r = orr_diag_set(c->diag, ORR_EARCHIVE, name, 0, -1, "%s",
					 archive_error_string(a) ? archive_error_string(a)
								 : "unreadable");
		else
			r = import_archive(c, name, a, head, (size_t)nhead, 1);
		archive_read_free(a);
		goto out;
	}
	r = read_plain(c, fd, (size_t)st.st_size, &s);
	if (r == READ_STREAM)
		r = orr__import_read_json(c, fd, (size_t)st.st_size, s.name, &s.b);
	else if (!r)
		r = stream_parse(c, &s, 1);
out:
	buf_release(&s.b);
	close(fd);
	return r;
}

/* Files whose name starts with '.' are hidden (macOS's ._NAME beside every file). */
static int import_dir(struct import_ctx *c, const char *path)
{
	struct dirent **names = NULL;
	int n = scandir(path, &names, NULL, alphasort);
	size_t found = 0, skipped = 0;
	bool slash = path[0] && path[strlen(path) - 1] == '/'; /* dir/ gives dir/file */
	int r = 0;

	if (n < 0)
		return orr_diag_set(c->diag, -errno, path, -1, -1, "cannot read the directory");
	for (int i = 0; i < n; i++) {
		char *file;

		if (r || names[i]->d_name[0] == '.' ||
		    !orr__import_is_trace_name(names[i]->d_name)) {
			free(names[i]);
			continue;
		}
		file = orr_xasprintf("%s%s%s", path, slash ? "" : "/", names[i]->d_name);
		if (c->opts && c->opts->progress)
			c->opts->progress(c->opts->progress_data, file, 0);
		r = import_file(c, file, file);
		found += r == 0;
		if (orr__import_skipped(c, file, r))
			r = 0, skipped++;
		free(file);
		free(names[i]);
	}
	free(names);
	if (!r && !found && skipped)
		r = orr_diag_set(c->diag, ORR_ENOTRACE, path, -1, -1,
				 "none of its %zu file%s is a trace (the warnings above)", skipped,
				 skipped == 1 ? "" : "s");
	else if (!r && !found)
		r = orr_diag_set(
			c->diag, ORR_ENOTRACE, path, -1, -1,
			"no *.json, *.json.gz, *.json.zst or *.orr files in the directory");
	return r;
}

static int ctx_init(struct import_ctx *c, const struct orr_import_options *opts,
		    struct orr_diag *diag)
{
	*c = (struct import_ctx){
		.t = orr__trace_new(),
		.opts = opts,
		.diag = diag,
		.start_ns = orr_now_ns(),
	};
	orr_diag_clear(diag);
	return orr__limits_init(&c->lim, opts, diag);
}

static int ctx_finish(struct import_ctx *c, int r, const char *path, struct orr_trace **ret_trace)
{
	if (!r)
		r = orr__import_merge_ops(c);
	if (!r)
		r = orr__import_check_ranks(c, path);
	if (!r && c->opts && c->opts->step_range) {
		char seen[256];

		/* before the rewrite, which drops the trace's own step annotations */
		orr__annotations_seen(c->t, seen, sizeof(seen));
		if (!orr__steps_from_ranges(c->t, c->opts->step_range))
			r = orr_diag_set(c->diag, ORR_ENOSTEPS, path, -1, -1,
					 "'%.200s' (%s): give a pattern of the steps' "
					 "annotation, or no --step-range",
					 c->opts->step_range, seen);
	}
	/* After the steps' rewrite, which removes events: links are event indices. */
	if (!r)
		r = orr__import_attach_ets(c, path);
	if (r) {
		orr_trace_free(c->t);
		return r;
	}
	if (orr_debug_enabled("traces")) {
		double s = (double)(orr_now_ns() - c->start_ns) / 1e9;

		orr_debug("traces", "imported %zu rank(s), %.1f MB of input in %.3f s (%.0f MB/s)",
			  c->t->nranks, (double)c->bytes / 1e6, s, (double)c->bytes / 1e6 / s);
	}
	*ret_trace = c->t;
	return 0;
}

/* Whether the file named name (the path given, or a path) is a regular file: its path. */
static const char *regular_file(const struct import_ctx *c, const char *name)
{
	const char *path = c->top_name && strcmp(name, c->top_name) == 0 ? c->top_path : name;
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? path : NULL;
}

int orr__import_file_again(struct import_ctx *c, const char *name, const uint64_t held[4])
{
	struct import_ctx again = { .t = orr__trace_new(), .lim = c->lim, .diag = c->diag };
	char *file = orr_xstrdup(name);
	const char *path = regular_file(c, file);
	int r = -ENOENT;

	memcpy(again.lim.values_held, held, sizeof(again.lim.values_held));
	/* A member: the longest 'FILE:' before it that is a file, read for it alone. */
	for (char *colon; !path && (colon = strrchr(file, ':'));) {
		*colon = '\0';
		if ((path = regular_file(c, file)))
			again.only = name;
	}
	if (path)
		r = import_file(&again, path, file);
	orr_trace_free(again.t);
	free(file);
	return r;
}

static int import_path(struct import_ctx *c, const char *path, const char *name,
		       const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? import_dir(c, path) : import_file(c, path, name);
}

int orr_trace_import(const char *path, const struct orr_import_options *opts,
		     struct orr_trace **ret_trace, struct orr_diag *reterr_diag)
{
	struct import_ctx c;
	struct stat st;
	int r;

	r = ctx_init(&c, opts, reterr_diag);
	c.top_path = path;
	c.top_name = opts && opts->name ? opts->name : path;
	if (r)
		;
	else if (stat(path, &st) < 0)
		r = orr_diag_set(reterr_diag, -errno, path, -1, -1, "cannot open");
	else
		r = import_path(&c, path, opts && opts->name ? opts->name : path, &st);
	if (!r && opts && opts->et_path) {
		c.et_only = true;
		r = stat(opts->et_path, &st) < 0
			    ? orr_diag_set(reterr_diag, -errno, opts->et_path, -1, -1,
					   "cannot open")
			    : import_path(&c, opts->et_path, opts->et_path, &st);
		c.et_only = false;
	}
	return ctx_finish(&c, r, path, ret_trace);
}

int orr_trace_import_buffer(const char *name, const void *data, size_t size,
			    const struct orr_import_options *opts, struct orr_trace **ret_trace,
			    struct orr_diag *reterr_diag)
{
	struct import_ctx c;
	struct stream s = { .name = name };
	int r;

	r = ctx_init(&c, opts, reterr_diag);
	c.top_name = name; /* no file: its members are not read again */
	if (!r && !(r = stream_add(&c, &s, data, size)) && !(r = stream_check(&c, &s, true))) {
		buf_pad(&s.b);
		r = stream_parse(&c, &s, 1);
	}
	buf_release(&s.b);
	return ctx_finish(&c, r, name, ret_trace);
}

int orr_trace_check_head(const char *name, const void *head, size_t n, bool whole,
			 const struct orr_import_options *opts, uint64_t *ret_max_bytes,
			 struct orr_diag *reterr_diag)
{
	struct import_ctx c = { .opts = opts, .diag = reterr_diag };
	struct stream s = { .name = name, .b = { .p = (char *)head, .len = n } };
	int r;

	orr_diag_clear(reterr_diag);
	if ((r = orr__limits_init(&c.lim, opts, reterr_diag)))
		return r;
	*ret_max_bytes = c.lim.max[ORR__LIMIT_FILE_BYTES];
	if (n > c.lim.max[ORR__LIMIT_FILE_BYTES])
		return orr__limit_fail(&c.lim, ORR__LIMIT_FILE_BYTES, reterr_diag, name, -1, -1);
	/* The decision of import_file() and read_plain() on a file of these first bytes. */
	if ((r = sniff(&c, &s, whole)))
		return r;
	return s.kind == KIND_UNKNOWN;
}
