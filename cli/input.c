/* SPDX-License-Identifier: MIT */
/*
 * A trace read from standard input (`-`): copied to a temporary file first, since the
 * importer reads files (it sniffs, seeks and maps them; a pipe can do none of that).
 * The copy is bounded by the importer's default limit on one file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/trace.h"
#include "banned.h"

#define STDIN_MAX_BYTES (UINT64_C(4) << 30)

static int spool(int fd, uint64_t *total)
{
	char buf[1 << 16];

	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		*total += (uint64_t)n;
		if (*total > STDIN_MAX_BYTES)
			return -EFBIG;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			off += w;
		}
	}
}

int cli_input(const char *path, const char **ret_path, char **ret_tmp)
{
	const char *dir = getenv("TMPDIR");
	uint64_t total = 0;
	char *tmp;
	int fd, err;

	*ret_path = path;
	*ret_tmp = NULL;
	if (strcmp(path, "-") != 0)
		return 0;
	if (isatty(STDIN_FILENO)) {
		cli_error("'-' reads the trace from standard input, which is a terminal: pipe a "
			  "trace in (orrery info - < trace.json)");
		return -1;
	}
	tmp = orr_xasprintf("%s/orrery-stdin-XXXXXX", dir && dir[0] ? dir : "/tmp");
	fd = mkstemp(tmp);
	if (fd < 0) {
		cli_error("cannot copy standard input to '%s': %s", tmp, orr_strerror(-errno));
		free(tmp);
		return -1;
	}
	err = spool(fd, &total);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && !total)
		err = -ENODATA;
	if (err) {
		if (err == -ENODATA)
			cli_error("standard input is empty: pipe a trace in");
		else if (err == -EFBIG)
			cli_error(
				"standard input holds more than %llu bytes; give the trace as a file",
				(unsigned long long)STDIN_MAX_BYTES);
		else
			cli_error("cannot copy standard input to '%s': %s", tmp, orr_strerror(err));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	*ret_path = *ret_tmp = tmp;
	return 0;
}

void cli_input_done(char *tmp)
{
	if (!tmp)
		return;
	unlink(tmp);
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
	if (cli_input(path, &file, &tmp) < 0)
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
