/* SPDX-License-Identifier: MIT */
/*
 * The tracer's log: short lines appended to $ORR_RECORD_DIR/tracer-PID.log (which
 * `orrery record` prints, prefixed), never to the job's stdout or stderr unless ORR_DEBUG
 * asks for it.  Each line is formatted on the
 * stack and written with one write(), so lines from several threads do not interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "banned.h"

static _Atomic int log_fd = -1;
static _Atomic bool log_stderr;
static int64_t log_pid;

void orr__log_open(const char *dir, int64_t pid, bool to_stderr)
{
	char path[ORR__PATH_MAX + 64];
	int fd = -1, n;

	n = snprintf(path, sizeof(path), "%s/tracer-%lld.log", dir, (long long)pid);
	if (n > 0 && (size_t)n < sizeof(path))
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	log_pid = pid;
	atomic_store(&log_stderr, to_stderr);
	fd = atomic_exchange(&log_fd, fd);
	if (fd >= 0)
		close(fd);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		n -= (size_t)k;
	}
}

void orr__log(const char *fmt, ...)
{
	char line[1024];
	int fd = atomic_load(&log_fd), n, m;
	bool err = atomic_load(&log_stderr);
	va_list ap;
	int saved = errno;

	if (fd < 0 && !err)
		return;
	/* The file is the process's own; stderr is shared, so lines there say whose they are. */
	n = snprintf(line, sizeof(line), "orrery-tracer[%lld]: ", (long long)log_pid);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	m = m < 0 ? 0 : m;
	if ((size_t)(n + m) > sizeof(line) - 2)
		m = (int)sizeof(line) - 2 - n;
	line[n + m] = '\n';
	if (fd >= 0)
		write_all(fd, line + n, (size_t)m + 1);
	if (err)
		write_all(STDERR_FILENO, line, (size_t)(n + m) + 1);
	errno = saved;
}

void orr__log_close(void)
{
	int fd = atomic_exchange(&log_fd, -1);

	if (fd >= 0)
		close(fd);
	atomic_store(&log_stderr, false);
}
