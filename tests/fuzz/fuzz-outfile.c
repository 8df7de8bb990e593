/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for output path handling (common/outfile.c).  The input chooses what
 * is already at the output name (nothing, a file with some mode, a link to a victim, a
 * dangling link, an empty or a full directory), whether a file or a directory is
 * written, whether it is committed or aborted, and the name itself (any bytes but '/'
 * and NUL, up to 300 of them, so "." and ".." and names past NAME_MAX come up).  The
 * invariants: the victim is never written, no temporary is ever left, a committed
 * file holds what was written and keeps the mode of the file it replaced.  Everything
 * happens in one private directory, made once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *root; /* ROOT/v/victim, outputs in ROOT/o/ */

#define check(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz-outfile: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* Removes everything under DIR (two levels are all this target makes). */
static void empty_dir(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		p = orr_xasprintf("%s/%s", dir, e->d_name);
		if (unlink(p) < 0 && errno == EISDIR && depth > 0) {
			empty_dir(p, depth - 1);
			rmdir(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
}

/* Entries of DIR; *ret_other is set when one of them is not NAME. */
static size_t entries(const char *dir, const char *name, bool *ret_other)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	*ret_other = false;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		*ret_other |= strcmp(e->d_name, name) != 0;
	}
	if (d)
		closedir(d);
	return n;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	check(fd >= 0);
	check(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static bool holds(const char *path, const char *text)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

static void cleanup(void)
{
	empty_dir(root, 2);
	rmdir(root);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	char *p;

	root = orr_xasprintf("%s/orr-fuzz-outfile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	check(mkdtemp(root));
	p = orr_xasprintf("%s/v", root);
	check(mkdir(p, 0700) == 0);
	free(p);
	p = orr_xasprintf("%s/o", root);
	check(mkdir(p, 0700) == 0);
	free(p);
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[301], *out, *victim, *path;
	unsigned pre, flags, mode;
	struct orr_outfile o;
	bool other, is_dir, commit;
	size_t n = 0;
	int r;

	if (size < 3)
		return 0;
	if (!root)
		setup();
	pre = data[0] % 6;
	flags = data[1];
	mode = 0600u | (data[2] & 0177u);
	for (size_t i = 3; i < size && n < sizeof(name) - 1; i++)
		name[n++] = data[i] == '/' || data[i] == '\0' ? '_' : (char)data[i];
	if (!n)
		name[n++] = 'x';
	name[n] = '\0';
	is_dir = flags & 1;
	commit = flags & 2;
	out = orr_xasprintf("%s/o", root);
	victim = orr_xasprintf("%s/v/victim", root);
	path = orr_xasprintf("%s/%s", out, name);
	empty_dir(out, 1);
	put(victim, "precious");

	/* What is there already (when the name can be made at all). */
	if (pre == 1 && (r = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) >= 0) {
		check(write(r, "old", 3) == 3);
		fchmod(r, mode);
		close(r);
	} else if (pre == 2) {
		(void)!symlink(victim, path);
	} else if (pre == 3 || pre == 4) {
		if (mkdir(path, 0700) == 0 && pre == 4) {
			char *m = orr_xasprintf("%s/member", path);

			put(m, "m");
			free(m);
		}
	} else if (pre == 5) {
		(void)!symlink("no-such-target", path);
	}
	size_t before = entries(out, name, &other);

	r = orr_outfile_open(&o, path, is_dir ? ORR_OUTFILE_DIR : 0);
	if (r == 0) {
		if (is_dir) {
			char *m = orr_xasprintf("%s/member", orr_outfile_dir(&o));

			put(m, "new");
			free(m);
		} else {
			FILE *f = orr_outfile_stream(&o);

			check(f);
			fputs("new", f);
		}
		if (commit) {
			r = orr_outfile_commit(&o, flags & 4);
			if (r == 0 && !is_dir) {
				struct stat st;

				check(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
				check(holds(path, "new"));
				if (pre == 1 && before)
					check((st.st_mode & 0777) == mode);
			}
		} else {
			orr_outfile_abort(&o);
		}
	}
	check(holds(victim, "precious"));
	/* Nothing but NAME, and no more entries than before plus the output. */
	check(entries(out, name, &other) <= before + 1);
	check(!other || strcmp(name, ".") == 0 || strcmp(name, "..") == 0);
	orr_outfile_abort(&o);
	free(path);
	free(victim);
	free(out);
	return 0;
}
