/* SPDX-License-Identifier: MIT */
/*
 * A trace read from standard input (`-`).  The importer reads files (it sniffs them,
 * checks their size and reads them whole), so standard input is copied to a file first:
 *
 * - its first bytes are checked before anything is copied, by the importer's own
 *   detection (orr_trace_check_head()): what no import would read is refused at once;
 * - the copy is bounded by the importer's limit on one file (ORR_MAX_FILE_BYTES): it
 *   stops one byte past the limit, and the import refuses it as it refuses such a file;
 * - the copy never has a name that could be left behind: an O_TMPFILE in $TMPDIR, or
 *   where the file system has none a file unlinked as soon as it is made (every signal
 *   blocked in between), read back through /proc/self/fd/N.  A signal, SIGKILL
 *   included, leaves nothing;
 * - messages say "standard input", never the copy's name (cli_input_name(), in
 *   cli/output.c with the messages).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/trace.h"
#include "banned.h"

/* What the importer decides a file's format from (traces/import.c's SNIFF_BYTES). */
#define HEAD_BYTES 512

/* The copy of standard input being imported; its name is cli_stdin_copy. */
static int spool_fd = -1;
/* '-' was given once already: standard input is used up. */
static bool stdin_taken;

/* Up to size bytes, fewer only at the end of the input; or -errno. */
static ssize_t read_full(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int write_all(int fd, const char *p, size_t size)
{
	while (size) {
		ssize_t w = write(fd, p, size);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		size -= (size_t)w;
	}
	return 0;
}

/* A file in dir that has no name: nothing to remove, whatever ends the process. */
static int open_spool(const char *dir)
{
	sigset_t all, old;
	char *tmp;
	int fd, err;

	fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	/* No O_TMPFILE here: a named file, unlinked before any signal can end the process. */
	tmp = orr_xasprintf("%s/orrery-stdin-XXXXXX", dir);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fd = mkostemp(tmp, O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (fd >= 0 && unlink(tmp) < 0) {
		err = -errno;
		close(fd);
		fd = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(tmp);
	return fd >= 0 ? fd : err;
}

/* The rest of standard input into fd, up to one byte past max (the import refuses it). */
static int copy_rest(int fd, uint64_t max, uint64_t *total)
{
	static char buf[1 << 16];

	while (*total <= max) {
		uint64_t left = max - *total;
		size_t want = left < sizeof(buf) ? (size_t)left + 1 : sizeof(buf);
		ssize_t n = read(STDIN_FILENO, buf, want);
		int err;

		if (n == 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((err = write_all(fd, buf, (size_t)n)))
			return err;
		*total += (uint64_t)n;
	}
	return 0;
}

/* Standard input checked, then copied; 0 with spool_fd and cli_stdin_copy set, or -1. */
static int spool_stdin(void)
{
	const char *dir = getenv("TMPDIR");
	char head[HEAD_BYTES];
	struct orr_diag d;
	uint64_t max = 0, total;
	ssize_t n = read_full(STDIN_FILENO, head, sizeof(head));
	int fd, err;

	if (n < 0) {
		cli_error("cannot read standard input: %s", orr_strerror((int)n));
		return -1;
	}
	if (n == 0) {
		cli_error("standard input is empty: pipe a trace in");
		return -1;
	}
	err = orr_trace_check_head("standard input", head, (size_t)n, (size_t)n < sizeof(head),
				   NULL, &max, &d);
	if (err < 0) {
		cli_import_error("-", err, &d);
		return -1;
	}
	dir = dir && dir[0] ? dir : "/tmp";
	fd = open_spool(dir);
	if (fd < 0) {
		cli_error("cannot copy standard input to a temporary file in '%s': %s", dir,
			  orr_strerror(fd));
		return -1;
	}
	total = (uint64_t)n;
	if (!(err = write_all(fd, head, (size_t)n)))
		err = copy_rest(fd, max, &total);
	if (err) {
		cli_error("cannot copy standard input to a temporary file in '%s': %s", dir,
			  orr_strerror(err));
		close(fd);
		return -1;
	}
	snprintf(cli_stdin_copy, sizeof(cli_stdin_copy), "/proc/self/fd/%d", fd);
	if (access(cli_stdin_copy, R_OK) < 0) {
		cli_error("cannot read standard input's copy back through %s (is /proc mounted?): "
			  "%s; give the trace as a file",
			  cli_stdin_copy, orr_strerror(-errno));
		cli_stdin_copy[0] = '\0';
		close(fd);
		return -1;
	}
	spool_fd = fd;
	return 0;
}

int cli_input(const char *path, struct orr_import_options *iopts, const char **ret_path,
	      char **ret_tmp)
{
	*ret_path = path;
	*ret_tmp = NULL;
	if (strcmp(path, "-") != 0)
		return 0;
	if (isatty(STDIN_FILENO)) {
		cli_error("'-' reads the trace from standard input, which is a terminal: pipe a "
			  "trace in (orrery info - < trace.json)");
		return -1;
	}
	if (stdin_taken) {
		cli_error("standard input ('-') can be read only once");
		return -1;
	}
	stdin_taken = true; /* also after a failure: what was read of it is gone */
	if (spool_stdin() < 0)
		return -1;
	*ret_path = *ret_tmp = orr_xstrdup(cli_stdin_copy);
	iopts->name = "standard input";
	return 0;
}

void cli_input_done(char *tmp)
{
	if (!tmp)
		return;
	/* The copy has no name: closing it is removing it.  Its name stays for messages. */
	if (spool_fd >= 0)
		close(spool_fd);
	spool_fd = -1;
	free(tmp);
}

int cli_import(const char *path, struct orr_trace **ret)
{
	struct orr_import_options iopts = { .warn = cli_import_warn };
	struct orr_diag d;
	const char *file;
	char *tmp;
	int err;

	*ret = NULL;
	if (cli_input(path, &iopts, &file, &tmp) < 0)
		return -1;
	cli_import_progress(&iopts, file);
	err = orr_trace_import(file, &iopts, ret, &d);
	cli_progress_done();
	cli_input_done(tmp);
	if (err) {
		cli_import_error(path, err, &d);
		return -1;
	}
	return 0;
}
