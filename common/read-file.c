/* SPDX-License-Identifier: MIT */
/*
 * Input files read whole (costs files, nccl-tests outputs, replay's scenarios, the
 * tracer's logs), the way the trace importer opens a trace (traces/import.c): open(2)
 * with O_NONBLOCK, so that a FIFO with no writer cannot block the open, then fstat(2) on
 * the descriptor, so that what is refused (not a regular file, too large) is what was
 * opened, before a byte is read.  fopen() then fstat() waited forever on a FIFO (issue
 * 31, N7).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/common.h"
#include "banned.h"

/* fd's st_size bytes into buf, fewer when the file shrank meanwhile; *ret_len read. */
static int read_all(int fd, const char *path, char *buf, size_t size, size_t *ret_len,
		    struct orr_diag *diag)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = read(fd, buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return orr_diag_set(diag, -errno, path, (int64_t)len, -1, "cannot read");
		if (n == 0)
			break; /* a file that shrank is read as it now is */
		len += (size_t)n;
	}
	*ret_len = len;
	return 0;
}

int orr_file_read(const char *path, uint64_t max_bytes, const char *what, size_t padding,
		  char **ret, size_t *ret_len, struct orr_diag *diag)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r = 0;
	struct stat st;
	size_t len = 0;
	char *buf = NULL;

	if (fd < 0)
		return orr_diag_set(diag, -errno, path, -1, -1, "cannot open");
	if (fstat(fd, &st) < 0)
		r = orr_diag_set(diag, -errno, path, -1, -1, "cannot open");
	else if (!S_ISREG(st.st_mode))
		r = orr_diag_set(diag, -EINVAL, path, -1, -1, "not a regular file (%s)",
				 orr_file_type(st.st_mode));
	else if ((uint64_t)st.st_size > max_bytes)
		r = orr_diag_set(diag, ORR_ETOOBIG, path, -1, -1,
				 "%lld bytes, more than the %llu MiB %s may have",
				 (long long)st.st_size, (unsigned long long)(max_bytes >> 20),
				 what);
	if (!r) {
		buf = orr_xmalloc((size_t)st.st_size + padding);
		r = read_all(fd, path, buf, (size_t)st.st_size, &len, diag);
	}
	close(fd);
	if (r) {
		free(buf);
		return r;
	}
	memset(buf + len, 0, padding);
	*ret = buf;
	*ret_len = len;
	return 0;
}
