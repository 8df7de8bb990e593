/* SPDX-License-Identifier: MIT */
/*
 * The tracer's log: short lines appended to $ORR_RECORD_DIR/tracer-PID.log (which
 * `orrery record` prints, prefixed), never to the job's stdout or stderr unless ORR_DEBUG
 * asks for it.  Each line is formatted on the
 * stack and written with one write(), so lines from several threads do not interleave.
 *
 * The job's threads log too (start-up, the NVTX callbacks), so a write must never
 * change what happens to the job: the log is opened only as a regular file of one link
 * (never through a symbolic link planted at its predictable name, never a FIFO that
 * would block), above the standard descriptors; control characters in a line (from
 * ORR_RECORD_DIR or the step prefix) become '?', so one call is one line; and the
 * SIGPIPE of a closed stderr or the SIGXFSZ of a file-size limit is never delivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "banned.h"

static _Atomic int log_fd = -1;
static _Atomic bool log_stderr;
static int64_t log_pid;

/* PATH for appending when it is (or is made) a regular file with one link; else -1. */
static int open_log(const char *path)
{
	int fd =
		open(path,
		     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
		     0644);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
		close(fd);
		return -1;
	}
	if (fd >= 0 && fd <= 2) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = high;
	}
	return fd;
}

void orr__log_open(const char *dir, int64_t pid, bool to_stderr)
{
	char path[ORR__PATH_MAX + 64];
	int fd = -1, n;

	n = snprintf(path, sizeof(path), "%s/tracer-%lld.log", dir, (long long)pid);
	if (n > 0 && (size_t)n < sizeof(path))
		fd = open_log(path);
	log_pid = pid;
	atomic_store(&log_stderr, to_stderr);
	fd = atomic_exchange(&log_fd, fd);
	if (fd >= 0)
		close(fd);
}

/* Takes back SIG when our write raised it: it was not pending before, and is blocked. */
static void consume(int sig, const sigset_t *before, const sigset_t *old)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t one;

	if (sigismember(before, sig) || sigismember(old, sig))
		return;
	sigemptyset(&one);
	sigaddset(&one, sig);
	while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
		;
}

/*
 * All of P to FD, with SIGPIPE and SIGXFSZ blocked in this thread meanwhile, so that a
 * closed stderr or a file-size limit fails the write (EPIPE, EFBIG) instead of killing
 * the job; a signal so raised is taken back, one that was pending already is left.
 */
static void write_all(int fd, const char *p, size_t n)
{
	sigset_t block, old, before;
	int failed = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGPIPE);
	sigaddset(&block, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	sigpending(&before);
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			failed = k < 0 ? errno : 0;
			break;
		}
		p += k;
		n -= (size_t)k;
	}
	if (failed == EPIPE)
		consume(SIGPIPE, &before, &old);
	if (failed == EFBIG)
		consume(SIGXFSZ, &before, &old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Control characters (a newline in ORR_RECORD_DIR, an escape sequence) as '?'. */
static void plain(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
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
	plain(line + n, (size_t)m);
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
