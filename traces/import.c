/* SPDX-License-Identifier: MIT */
/*
 * Finding and reading trace files: a file (plain or compressed), a directory of
 * per-rank files, or an archive of them.  libarchive handles every container and
 * compression; plain JSON files are read straight into a padded buffer.
 */
#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "orrery/native.h"
#include "banned.h"

struct import_ctx {
	struct orr_trace *t;
	const struct orr_import_options *opts;
	uint64_t max_bytes;
	struct orr_diag *diag;
	uint64_t bytes; /* JSON text parsed */
	int64_t start_ns;
};

/* A buffer with ORR__JSON_PADDING spare bytes after len; mapped (not malloc'ed) if map_bytes. */
struct buf {
	char *p;
	size_t len, cap, map_bytes;
};

static void buf_release(struct buf *b)
{
	if (b->map_bytes)
		munmap(b->p, b->map_bytes);
	else
		free(b->p);
	*b = (struct buf){ 0 };
}

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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* A run directory's manifest is for people: the files carry their own headers. */
static bool is_trace_name(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (strcmp(base, ORR_NATIVE_MANIFEST) == 0)
		return false;
	return ends_with(name, ".json") || ends_with(name, ".json.gz") ||
	       ends_with(name, ".json.zst") || ends_with(name, ".json.zstd") ||
	       ends_with(name, ORR_NATIVE_SUFFIX);
}

/* gzip, zstd, xz, bzip2 or tar: anything libarchive must open for us. */
static bool is_container(const unsigned char *p, size_t n)
{
	return (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) ||
	       (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) ||
	       (n >= 6 && memcmp(p,
				 "\xfd"
				 "7zXZ",
				 5) == 0) ||
	       (n >= 3 && memcmp(p, "BZh", 3) == 0) ||
	       (n >= 262 && memcmp(p + 257, "ustar", 5) == 0);
}

/* rank-3, rank_3, rank3, worker3 (any case) in the file's own name. */
static int rank_from_name(const char *path)
{
	static const char *const words[] = { "rank", "worker" };
	const char *base = path;

	/* The file's own name: after the last '/' and after an archive's "name:" prefix. */
	for (const char *p = path; *p; p++)
		if (*p == '/' || *p == ':')
			base = p + 1;
	for (const char *s = base; *s; s++) {
		for (size_t w = 0; w < 2; w++) {
			size_t n = strlen(words[w]);
			const char *d = s + n;
			long r = 0;

			if (strncasecmp(s, words[w], n) != 0)
				continue;
			if (*d == '-' || *d == '_')
				d++;
			if (!isdigit((unsigned char)*d))
				continue;
			for (; isdigit((unsigned char)*d) && r < INT32_MAX; d++)
				r = r * 10 + (*d - '0');
			if (r <= INT32_MAX)
				return (int)r;
		}
	}
	return -1;
}

static int parse_json(struct import_ctx *c, const char *name, struct buf *b)
{
	struct orr__rank_build *rb;
	int r;

	if (b->len == 0)
		return orr_diag_set(c->diag, ORR_EEMPTY, name, -1, -1, "the file is empty");
	rb = orr__rank_new(c->t, orr_strtab_intern(c->t->strs, name, strlen(name)));
	c->bytes += b->len;
	r = orr__kineto_parse(c->t, rb, name, b->p, b->len, c->diag);
	if (r)
		return r;
	/* The text is no longer needed: give its memory back before sorting. */
	buf_release(b);
	/* Several ranks in one file (orr_trace_write_chrome()): each its own. */
	if (rb->nparts)
		return orr__chrome_split(c->t, rb, name, c->diag);
	if ((r = orr__chrome_check_one(c->t, rb, name, c->diag)))
		return r;
	if (!rb->has_rank)
		rb->pub.rank = rank_from_name(name);
	orr__rank_finish(c->t, rb);
	orr_debug("traces", "%s: rank %d, %zu events", name, rb->pub.rank, rb->pub.nevents);
	return 0;
}

static int parse_native(struct import_ctx *c, const char *name, struct buf *b)
{
	struct orr__rank_build *rb;
	int r;

	rb = orr__rank_new(c->t, orr_strtab_intern(c->t->strs, name, strlen(name)));
	c->bytes += b->len;
	r = orr__native_parse(c->t, rb, name, b->p, b->len, c->max_bytes, c->opts, c->diag);
	if (r)
		return r;
	buf_release(b);
	if (!rb->has_rank)
		rb->pub.rank = rank_from_name(name);
	orr__rank_finish_native(c->t, rb);
	orr_debug("traces", "%s: native, rank %d, %zu events", name, rb->pub.rank, rb->pub.nevents);
	return 0;
}

/* A file's bytes, decompressed when it came from a container: native or Kineto JSON. */
static int parse_file(struct import_ctx *c, const char *name, struct buf *b)
{
	size_t n = strlen(name), sn = sizeof(ORR_NATIVE_SUFFIX) - 1;

	if (orr_native_detect(b->p, b->len))
		return parse_native(c, name, b);
	/* A .orr name promises a native file: say what its first bytes should have been. */
	if (n > sn && memcmp(name + n - sn, ORR_NATIVE_SUFFIX, sn) == 0)
		return orr_diag_set(c->diag, b->len ? ORR_EFORMAT : ORR_EEMPTY, name, 0, -1,
				    b->len ? "expected a native orrery file (its magic frame)"
					   : "the file is empty");
	return parse_json(c, name, b);
}

static int import_memory(struct import_ctx *c, const char *name, struct buf *b, int depth);

static int read_entry(struct import_ctx *c, struct archive *a, const char *name, struct buf *b)
{
	b->len = 0;
	for (;;) {
		const void *block;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(a, &block, &size, &offset);

		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return orr_diag_set(c->diag, ORR_ETRUNCATED, name, (int64_t)b->len, -1,
					    "%s",
					    archive_error_string(a) ? archive_error_string(a)
								    : "cannot decompress");
		if (b->len + size > c->max_bytes)
			return orr_diag_set(c->diag, ORR_ETOOBIG, name, (int64_t)b->len, -1,
					    "larger than %llu bytes once decompressed",
					    (unsigned long long)c->max_bytes);
		buf_reserve(b, b->len + size);
		memcpy(b->p + b->len, block, size);
		b->len += size;
	}
	buf_pad(b);
	return 0;
}

/* Every trace member of an opened archive (or the one stream of a compressed file). */
static int import_archive(struct import_ctx *c, const char *name, struct archive *a, int depth)
{
	struct archive_entry *entry;
	struct buf b = { 0 };
	char *member = NULL;
	size_t found = 0;
	int r;

	while ((r = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
		bool raw = archive_format(a) == ARCHIVE_FORMAT_RAW;
		const char *path = archive_entry_pathname(entry);

		if (!raw &&
		    (archive_entry_filetype(entry) != AE_IFREG || !path || !is_trace_name(path)))
			continue;
		free(member);
		member = raw ? orr_xstrdup(name) : orr_xasprintf("%s:%s", name, path);
		if ((r = read_entry(c, a, member, &b)) ||
		    (r = import_memory(c, member, &b, depth + 1)))
			goto out;
		found++;
	}
	if (r != ARCHIVE_EOF) {
		r = orr_diag_set(c->diag, ORR_EARCHIVE, name, -1, -1, "%s",
				 archive_error_string(a) ? archive_error_string(a) : "unreadable");
		goto out;
	}
	r = found ? 0
		  : orr_diag_set(c->diag, ORR_ENOTRACE, name, -1, -1,
				 "the archive has no *.json, *.json.gz, *.json.zst or *.orr "
				 "member");
out:
	free(member);
	free(b.p);
	return r;
}

static struct archive *archive_new(void)
{
	struct archive *a = archive_read_new();

	if (!a) {
		fputs("orrery: error: out of memory\n", stderr);
		exit(1);
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_raw(a);
	return a;
}

static int import_memory(struct import_ctx *c, const char *name, struct buf *b, int depth)
{
	struct archive *a;
	int r;

	if (!is_container((const unsigned char *)b->p, b->len))
		return parse_file(c, name, b);
	if (depth > 2)
		return orr_diag_set(c->diag, ORR_EFORMAT, name, 0, -1,
				    "archives nested more than twice");
	a = archive_new();
	if (archive_read_open_memory(a, b->p, b->len) != ARCHIVE_OK)
		r = orr_diag_set(c->diag, ORR_EARCHIVE, name, 0, -1, "%s",
				 archive_error_string(a) ? archive_error_string(a) : "unreadable");
	else
		r = import_archive(c, name, a, depth);
	archive_read_free(a);
	return r;
}

static int read_plain(struct import_ctx *c, const char *path, int fd, size_t size, struct buf *b)
{
	buf_reserve(b, size);
	while (b->len < size) {
		ssize_t n = read(fd, b->p + b->len, size - b->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return orr_diag_set(c->diag, -errno, path, (int64_t)b->len, -1,
					    "read failed");
		if (n == 0)
			break;
		b->len += (size_t)n;
	}
	buf_pad(b);
	return 0;
}

/*
 * A plain file is mapped privately (the parser writes two bytes per window) over an
 * anonymous reservation a page longer, so the padding after it reads as zeros.  This
 * spares the kernel zeroing and copying a buffer as large as the file.
 */
static int map_plain(int fd, size_t size, struct buf *b)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t total = (size + ORR__JSON_PADDING + page - 1) / page * page + page;
	char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (mmap(p, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) ==
	    MAP_FAILED) {
		int err = -errno;

		munmap(p, total);
		return err;
	}
	*b = (struct buf){ .p = p, .len = size, .cap = total, .map_bytes = total };
	return 0;
}

static int import_file(struct import_ctx *c, const char *path)
{
	unsigned char head[512];
	struct buf b = { 0 };
	struct stat st;
	ssize_t nhead;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return orr_diag_set(c->diag, -errno, path, -1, -1, "cannot open");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = orr_diag_set(c->diag, -EINVAL, path, -1, -1, "not a regular file");
		goto out;
	}
	if (st.st_size == 0) {
		r = orr_diag_set(c->diag, ORR_EEMPTY, path, -1, -1, "the file is empty");
		goto out;
	}
	if ((uint64_t)st.st_size > c->max_bytes) {
		r = orr_diag_set(c->diag, ORR_ETOOBIG, path, -1, -1, "larger than %llu bytes",
				 (unsigned long long)c->max_bytes);
		goto out;
	}
	nhead = pread(fd, head, sizeof(head), 0);
	if (nhead > 0 && is_container(head, (size_t)nhead)) {
		struct archive *a = archive_new();

		if (archive_read_open_fd(a, fd, 1 << 20) != ARCHIVE_OK)
			r = orr_diag_set(c->diag, ORR_EARCHIVE, path, 0, -1, "%s",
					 archive_error_string(a) ? archive_error_string(a)
								 : "unreadable");
		else
			r = import_archive(c, path, a, 1);
		archive_read_free(a);
		goto out;
	}
	if (map_plain(fd, (size_t)st.st_size, &b) == 0 ||
	    (r = read_plain(c, path, fd, (size_t)st.st_size, &b)) == 0)
		r = parse_file(c, path, &b);
out:
	buf_release(&b);
	close(fd);
	return r;
}

static int import_dir(struct import_ctx *c, const char *path)
{
	struct dirent **names = NULL;
	int n = scandir(path, &names, NULL, alphasort);
	size_t found = 0;
	int r = 0;

	if (n < 0)
		return orr_diag_set(c->diag, -errno, path, -1, -1, "cannot read the directory");
	for (int i = 0; i < n; i++) {
		char *file;

		if (r || names[i]->d_name[0] == '.' || !is_trace_name(names[i]->d_name)) {
			free(names[i]);
			continue;
		}
		file = orr_xasprintf("%s/%s", path, names[i]->d_name);
		if (c->opts && c->opts->progress)
			c->opts->progress(c->opts->progress_data, file, 0);
		r = import_file(c, file);
		found += r == 0;
		free(file);
		free(names[i]);
	}
	free(names);
	if (!r && !found)
		r = orr_diag_set(
			c->diag, ORR_ENOTRACE, path, -1, -1,
			"no *.json, *.json.gz, *.json.zst or *.orr files in the directory");
	return r;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct orr__rank_build *x = *(struct orr__rank_build *const *)a;
	const struct orr__rank_build *y = *(struct orr__rank_build *const *)b;

	return (x->pub.rank > y->pub.rank) - (x->pub.rank < y->pub.rank);
}

/* Every rank known, each once; then in rank order. */
static int check_ranks(struct import_ctx *c)
{
	struct orr_trace *t = c->t;

	if (t->nranks == 1 && t->ranks[0]->pub.rank < 0)
		t->ranks[0]->pub.rank = 0;
	for (size_t i = 0; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank < 0)
			return orr_diag_set(c->diag, ORR_ERANK,
					    orr_strtab_get(t->strs, t->ranks[i]->pub.source), -1,
					    -1,
					    "cannot tell its rank: no distributedInfo.rank "
					    "and no rankN or workerN in its name");
	qsort(t->ranks, t->nranks, sizeof(*t->ranks), cmp_rank);
	for (size_t i = 1; i < t->nranks; i++)
		if (t->ranks[i]->pub.rank == t->ranks[i - 1]->pub.rank)
			return orr_diag_set(c->diag, ORR_ERANK,
					    orr_strtab_get(t->strs, t->ranks[i]->pub.source), -1,
					    -1, "rank %d also comes from '%s'",
					    t->ranks[i]->pub.rank,
					    orr_strtab_get(t->strs, t->ranks[i - 1]->pub.source));
	return 0;
}

static void ctx_init(struct import_ctx *c, const struct orr_import_options *opts,
		     struct orr_diag *diag)
{
	c->t = orr__trace_new();
	c->opts = opts;
	c->max_bytes = opts && opts->max_bytes ? opts->max_bytes : ORR__MAX_JSON_BYTES;
	if (c->max_bytes > ORR__MAX_JSON_BYTES)
		c->max_bytes = ORR__MAX_JSON_BYTES;
	c->diag = diag;
	c->bytes = 0;
	c->start_ns = orr_now_ns();
	orr_diag_clear(diag);
}

static int ctx_finish(struct import_ctx *c, int r, struct orr_trace **ret_trace)
{
	if (!r)
		r = check_ranks(c);
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

int orr_trace_import(const char *path, const struct orr_import_options *opts,
		     struct orr_trace **ret_trace, struct orr_diag *reterr_diag)
{
	struct import_ctx c;
	struct stat st;
	int r;

	ctx_init(&c, opts, reterr_diag);
	if (stat(path, &st) < 0)
		r = orr_diag_set(reterr_diag, -errno, path, -1, -1, "cannot open");
	else if (S_ISDIR(st.st_mode))
		r = import_dir(&c, path);
	else
		r = import_file(&c, path);
	return ctx_finish(&c, r, ret_trace);
}

int orr_trace_import_buffer(const char *name, const void *data, size_t size,
			    const struct orr_import_options *opts, struct orr_trace **ret_trace,
			    struct orr_diag *reterr_diag)
{
	struct import_ctx c;
	struct buf b = { 0 };
	int r;

	ctx_init(&c, opts, reterr_diag);
	if (size > c.max_bytes) {
		r = orr_diag_set(reterr_diag, ORR_ETOOBIG, name, -1, -1, "larger than %llu bytes",
				 (unsigned long long)c.max_bytes);
	} else {
		buf_reserve(&b, size);
		if (size)
			memcpy(b.p, data, size);
		b.len = size;
		buf_pad(&b);
		r = import_memory(&c, name, &b, 1);
	}
	free(b.p);
	return ctx_finish(&c, r, ret_trace);
}
