/* SPDX-License-Identifier: MIT */
/*
 * Run directories: the manifest beside the per-process native files, and packing a run
 * into one .tar.zst with libarchive (pax format, zstd filter).  Both write to a
 * temporary name and rename it when complete, so that a reader never sees half a file.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/native.h"
#include "import.h"
#include "internal.h"
#include "json-text.h"
#include "banned.h"

/* ---- the manifest ---- */

static void put_opt_str(FILE *f, const char *key, const char *s, const char *after)
{
	fprintf(f, "\"%s\": ", key);
	if (s)
		orr__json_string(f, s);
	else
		fputs("null", f);
	fputs(after, f);
}

static void put_files(FILE *f, const struct orr_run_manifest *m)
{
	fputs("  \"files\": [", f);
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct orr_run_file *rf = &m->files[i];

		fputs(i ? ",\n    {" : "\n    {", f);
		put_opt_str(f, "path", rf->path, ", ");
		fprintf(f, "\"rank\": %d, \"pid\": %lld, ", rf->rank, (long long)rf->pid);
		put_opt_str(f, "host", rf->host, ", ");
		fprintf(f, "\"events\": %llu, \"dropped_records\": %llu, \"dropped_events\": %llu}",
			(unsigned long long)rf->events, (unsigned long long)rf->dropped_records,
			(unsigned long long)rf->dropped_events);
	}
	fputs(m->nfiles ? "\n  ]\n" : "]\n", f);
}

static void put_manifest(FILE *f, const struct orr_run_manifest *m)
{
	fprintf(f, "{\n  \"format\": \"orrery-run\",\n  \"version\": 1,\n  ");
	put_opt_str(f, "producer", m->producer, ",\n");
	fputs("  \"command\": [", f);
	for (size_t i = 0; i < m->ncommand; i++) {
		if (i)
			fputs(", ", f);
		orr__json_string(f, m->command[i] ? m->command[i] : "");
	}
	fprintf(f,
		"],\n  \"created_unix_ns\": %lld,\n  \"world_size\": %d,\n"
		"  \"skip_steps\": %lld,\n  \"steps\": %lld,\n  \"exit_status\": %d,\n",
		(long long)m->created_unix_ns, m->world_size, (long long)m->skip_steps,
		(long long)m->steps, m->exit_status);
	put_files(f, m);
	fputs("}\n", f);
}

struct orr_run_file orr_run_file_of_rank(const struct orr_trace *t, const struct orr_rank *r,
					 const char *path)
{
	int64_t pid = r->pid;

	for (size_t i = 0; pid < 0 && i < r->nplaces; i++)
		if (r->places[i].kind == ORR_PLACE_THREAD)
			pid = r->places[i].pid;
	return (struct orr_run_file){
		.path = path,
		.rank = r->rank,
		.pid = pid,
		.host = r->host != ORR_STR_NONE ? orr_trace_str(t, r->host) : NULL,
		.events = r->nevents,
		.dropped_records = r->dropped_records,
		.dropped_events = r->dropped_events,
	};
}

int orr_run_write_manifest(const char *dir, const struct orr_run_manifest *m)
{
	char *path = orr_xasprintf("%s/%s", dir, ORR_NATIVE_MANIFEST);
	struct orr_outfile out;
	FILE *f;
	int err = orr_outfile_open(&out, path, 0);

	free(path);
	if (err)
		return err;
	if (!(f = orr_outfile_stream(&out))) {
		orr_outfile_abort(&out);
		return -ENOMEM;
	}
	put_manifest(f, m);
	return orr_outfile_commit(&out, false);
}

/* ---- packing ---- */

static bool is_native_name(const char *name)
{
	size_t n = strlen(name), m = strlen(ORR_NATIVE_SUFFIX);

	return name[0] != '.' && n > m && strcmp(name + n - m, ORR_NATIVE_SUFFIX) == 0;
}

static int archive_fail(struct archive *a, struct orr_diag *d, const char *file)
{
	int err = archive_errno(a) > 0 ? -archive_errno(a) : ORR_EARCHIVE;

	return orr_diag_set(d, err, file, -1, -1, "%s",
			    archive_error_string(a) ? archive_error_string(a) : "");
}

#define BLOCK_BYTES (1 << 20)

/* Copies an open file into the archive; it must not change size meanwhile. */
static int copy_data(struct archive *a, int fd, const char *path, int64_t size, bool native,
		     struct orr_diag *d)
{
	char *block = orr_xmalloc(BLOCK_BYTES);
	int64_t done = 0;
	int r = 0;

	if (native && size < 12) {
		r = orr_diag_set(d, ORR_EFORMAT, path, 0, -1, "%s",
				 "too short to be a native trace file");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, block, BLOCK_BYTES);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = orr_diag_set(d, -errno, path, done, -1, "%s", "read failed");
			goto out;
		}
		if (n == 0 || done + n > size)
			break;
		if (done == 0 && native && !orr_native_detect(block, (size_t)n)) {
			r = orr_diag_set(d, ORR_EFORMAT, path, 0, -1, "%s",
					 "not a native trace file (no orrery magic)");
			goto out;
		}
		if (archive_write_data(a, block, (size_t)n) != n) {
			r = archive_fail(a, d, path);
			goto out;
		}
		done += n;
	}
	if (done != size)
		r = orr_diag_set(d, -EIO, path, done, -1, "%s",
				 "the file changed while it was being packed");
out:
	free(block);
	return r;
}

static int add_file(struct archive *a, const char *dir, const char *name, struct orr_diag *d)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	struct archive_entry *e = NULL;
	struct stat st;
	int fd, r;

	/* A symbolic link is refused, not followed: it may lead anywhere (docs/orrery-pack.md). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		r = orr_diag_set(d, -errno, path, -1, -1, "%s",
				 errno == ELOOP
					 ? "a symbolic link (orrery pack does not follow links)"
					 : "cannot open");
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = orr_diag_set(d, -EINVAL, path, -1, -1, "%s", "not a regular file");
		goto out;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (archive_write_header(a, e) != ARCHIVE_OK) {
		r = archive_fail(a, d, path);
		goto out;
	}
	r = copy_data(a, fd, path, st.st_size, is_native_name(name), d);
out:
	archive_entry_free(e);
	if (fd >= 0)
		close(fd);
	free(path);
	return r;
}

/* The manifest (when there is one), then every *.orr and ops-PID.json, in name order. */
static int list_run(const char *dir, char ***ret_names, size_t *ret_n, struct orr_diag *d)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);
	char **names = NULL;
	size_t count = 0, cap = 0, natives = 0;

	if (n < 0)
		return orr_diag_set(d, -errno, dir, -1, -1, "%s", "cannot read the directory");
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (strcmp(name, ORR_NATIVE_MANIFEST) == 0) {
			ORR_VEC_PUSH(names, count, cap, NULL);
			memmove(names + 1, names, (count - 1) * sizeof(*names));
			names[0] = orr_xstrdup(name);
		} else if (is_native_name(name)) {
			ORR_VEC_PUSH(names, count, cap, orr_xstrdup(name));
			natives++;
		} else if (orr__import_ops_pid(name) >= 0) { /* orrery_record's profiler ops */
			ORR_VEC_PUSH(names, count, cap, orr_xstrdup(name));
		}
		free(ents[i]);
	}
	free(ents);
	*ret_names = names;
	*ret_n = count;
	if (!natives)
		return orr_diag_set(d, ORR_ENOTRACE, dir, -1, -1, "%s",
				    "no *" ORR_NATIVE_SUFFIX " files in the run directory");
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The compression OUT's name asks for: gzip, xz, bzip2, none for .tar, else zstd. */
static int add_filter(struct archive *a, const char *out)
{
	if (ends_with(out, ".gz") || ends_with(out, ".tgz"))
		return archive_write_add_filter_gzip(a);
	if (ends_with(out, ".xz") || ends_with(out, ".txz"))
		return archive_write_add_filter_xz(a);
	if (ends_with(out, ".bz2") || ends_with(out, ".tbz2"))
		return archive_write_add_filter_bzip2(a);
	if (ends_with(out, ".tar"))
		return ARCHIVE_OK;
	return archive_write_add_filter_zstd(a);
}

static int write_archive(const char *dir, char *const *names, size_t n, int fd, const char *out,
			 struct orr_diag *d)
{
	struct archive *a = archive_write_new();
	int r = 0;

	if (!a)
		return orr_diag_set(d, -ENOMEM, out, -1, -1,
				    "out of memory writing it (libarchive's writer)");
	if (add_filter(a, out) < ARCHIVE_WARN ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    /* No padding to a 10 KiB block on a pipe: the same bytes as in a file. */
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		r = archive_fail(a, d, out);
		goto out;
	}
	for (size_t i = 0; i < n && !r; i++)
		r = add_file(a, dir, names[i], d);
	if (archive_write_close(a) != ARCHIVE_OK && !r)
		r = archive_fail(a, d, out);
out:
	archive_write_free(a);
	return r;
}

int orr_run_pack(const char *dir, const char *out, struct orr_diag *reterr_diag)
{
	struct orr_outfile of;
	char **names = NULL;
	size_t n = 0;
	int r;

	orr_diag_clear(reterr_diag);
	r = list_run(dir, &names, &n, reterr_diag);
	if (!r && (r = orr_outfile_open(&of, out, 0)))
		orr_diag_set(reterr_diag, r, out, -1, -1, "%s", "");
	else if (!r) {
		r = write_archive(dir, names, n, orr_outfile_fd(&of), out, reterr_diag);
		if (r)
			orr_outfile_abort(&of);
		else if ((r = orr_outfile_commit(&of, false)))
			orr_diag_set(reterr_diag, r, out, -1, -1, "%s", "");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}
