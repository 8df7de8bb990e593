/* SPDX-License-Identifier: MIT */
/*
 * Outputs: the one way every command (and the tracer) writes a file or a directory.
 *
 * A regular output is written under a temporary name in its own directory and renamed
 * when complete, so that a reader sees the old file or the new one, never half of one.
 * The temporary is ".NAME.tmp.PID.RANDOM", created with O_CREAT|O_EXCL|O_NOFOLLOW: a
 * name planted beforehand (a symbolic link, a file) is never opened, only skipped, and
 * the random part comes from getrandom(), so the name cannot be guessed.  It starts
 * with a dot, so that a reader of the directory skips it.  Outputs that are not
 * regular files (a character device such as /dev/null, a FIFO, /dev/stdout) are
 * written in place: renaming over them would replace them (a FIFO only once a process
 * reads it, never waited on).  A directory output at a link to a directory replaces
 * the directory the link leads to; a link to nothing is not written through.
 *
 * This file is linked into the tracer (through the native writer): no orr_xmalloc, no
 * abort, no printing.  The signal handlers are installed only on request (the CLI).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "orrery/common.h"
#include "banned.h"

/* ---- the registry of live temporaries, for the signal handler ---- */

#define MAX_LIVE 64

static _Atomic(struct orr_outfile *) live[MAX_LIVE];
/*
 * Temporaries being created and not yet registered, and whether a cleanup signal came.
 * The handler may run on another thread than the one creating (a library's worker
 * thread, such as OpenBLAS's, takes a process-directed signal as well): it waits for
 * creations in progress to be registered, and a creation that finds the signal came
 * removes its own temporary.
 */
static atomic_int creating;
static atomic_bool dying;

static void live_add(struct orr_outfile *o)
{
	o->slot = -1;
	for (int i = 0; i < MAX_LIVE; i++) {
		struct orr_outfile *expected = NULL;

		if (atomic_compare_exchange_strong(&live[i], &expected, o)) {
			o->slot = i;
			return;
		}
	}
	/* Full: this temporary is not removed by a signal (still by abort). */
}

static void live_remove(struct orr_outfile *o)
{
	if (o->slot >= 0)
		atomic_store(&live[o->slot], NULL);
	o->slot = -1;
}

/* Removes the entries of a directory we made: syscalls only. */
static void remove_entries(const char *dir)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	while (fd >= 0 && (n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);

			off += e->d_reclen;
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(fd, e->d_name, 0);
		}
	}
	if (fd >= 0)
		close(fd);
}

/*
 * Removes a directory we made, and what is in it: syscalls only.  Another thread of a
 * command writing its members may create one between the pass and rmdir() (in the
 * signal handler): pass again while it is not empty.  Once it is gone, no member can be
 * created in it.
 */
static void remove_tree(const char *dir)
{
	for (int tries = 0; tries < 64; tries++) {
		remove_entries(dir);
		if (rmdir(dir) == 0 || errno != ENOTEMPTY)
			return;
	}
}

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NCLEANUP (sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))

static void on_signal(int sig)
{
	static const struct timespec ms = { 0, 1000000 };
	int saved = errno;

	atomic_store(&dying, true);
	for (int i = 0; i < 1000 && atomic_load(&creating) > 0; i++)
		nanosleep(&ms, NULL);
	/* Files first: a temporary file may sit in a temporary directory. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < MAX_LIVE; i++) {
			struct orr_outfile *o = atomic_load(&live[i]);

			if (!o || o->is_dir != (pass == 1))
				continue;
			if (o->is_dir)
				remove_tree(o->tmp);
			else
				unlink(o->tmp);
		}
	}
	errno = saved;
	/* SA_RESETHAND restored the default action: die of the signal, as without us. */
	raise(sig);
}

void orr_outfile_catch_signals(void)
{
	static atomic_bool done;

	if (atomic_exchange(&done, true))
		return;
	for (size_t i = 0; i < NCLEANUP; i++) {
		struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };
		struct sigaction old;

		/* An ignored signal (nohup) stays ignored; someone else's handler stays. */
		if (sigaction(cleanup_signals[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL)
			continue;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < NCLEANUP; k++)
			sigaddset(&sa.sa_mask, cleanup_signals[k]);
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* ---- names ---- */

static uint64_t random64(void)
{
	static atomic_uint_fast64_t counter;
	uint64_t r = 0;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* No entropy yet (early boot): O_EXCL still keeps us safe, only less unguessable. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
	    ((uint64_t)getpid() << 32) ^ atomic_fetch_add(&counter, 1) * 0xbf58476d1ce4e5b9ull;
	return r;
}

/* ".BASE.tmp.PID.RANDOM" beside PATH; the base is cut to keep the name under NAME_MAX. */
static int temp_name(const struct orr_outfile *o, char *buf, size_t size)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
	const char *slash = strrchr(o->path, '/');
	const char *base = slash ? slash + 1 : o->path;
	int dirlen = slash ? (int)(slash - o->path + 1) : 0;
	uint64_t r = random64();
	char rnd[13];
	int n;

	for (size_t i = 0; i < 12; i++, r >>= 5)
		rnd[i] = alphabet[r & 31];
	rnd[12] = '\0';
	n = snprintf(buf, size, "%.*s.%.200s.tmp.%ld.%s", dirlen, o->path, base, (long)getpid(),
		     rnd);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* "/dev/stdout", "/dev/fd/N" and the like: the descriptor N, else -1. */
static int named_fd(const char *path)
{
	static const char *const prefixes[] = { "/dev/fd/", "/proc/self/fd/" };
	char *end;
	long n;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < 2; i++) {
		size_t len = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], len) != 0 || !path[len])
			continue;
		errno = 0;
		n = strtol(path + len, &end, 10);
		if (!*end && !errno && n >= 0 && n <= INT_MAX && path[len] != '-' &&
		    path[len] != '+')
			return (int)n;
	}
	return -1;
}

/* ---- open, commit, abort ---- */

/*
 * FD moved to 3 or above.  A process that closed its standard descriptors (a daemon,
 * a job the tracer is a guest in) must not find its later output going into ours.
 */
static int above_stdio(int fd)
{
	int high, err;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	err = errno;
	close(fd);
	errno = err;
	return high;
}

/* A FIFO that no process reads is given this long for its reader to come. */
#define READER_WAIT_MS 1000

/*
 * A device, a FIFO or a descriptor, written in place.  A FIFO is opened with O_NONBLOCK,
 * which fails (ENXIO) while no process has it open for reading: it is tried again for
 * READER_WAIT_MS (a reader started in the background at the same time), then refused,
 * instead of waiting for a reader that may never come.  Writes then wait for a slow
 * reader, as to any pipe.
 */
static int open_nonblock(const char *path)
{
	static const struct timespec tick = { 0, 10 * 1000000 };
	struct stat st;
	int fd, err;

	for (int ms = 0;; ms += 10) {
		fd = above_stdio(open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
		if (fd >= 0)
			break;
		err = errno;
		if (err != ENXIO || stat(path, &st) < 0 || !S_ISFIFO(st.st_mode))
			return -err;
		if (ms >= READER_WAIT_MS)
			return ORR_ENOREADER;
		nanosleep(&tick, NULL);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static int open_direct(struct orr_outfile *o, int fd)
{
	if (fd < 0 && (fd = open_nonblock(o->path)) < 0)
		return fd;
	o->fd = fd;
	o->direct = true;
	o->active = true;
	return 0;
}

static int create_temp(struct orr_outfile *o, bool exists)
{
	/* Replacing a file: private until complete, then the old file's mode. */
	mode_t mode = exists ? 0600 : 0666;

	for (int tries = 0; tries < 100; tries++) {
		int r = temp_name(o, o->tmp, sizeof(o->tmp));

		if (r)
			return r;
		if (o->is_dir) {
			if (mkdir(o->tmp, exists ? 0700 : 0777) == 0) {
				o->fd = -1;
				break;
			}
		} else {
			o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     mode);
			if (o->fd >= 0 && (o->fd = above_stdio(o->fd)) < 0) {
				int err = errno;

				unlink(o->tmp);
				return -err;
			}
			if (o->fd >= 0)
				break;
		}
		if (errno != EEXIST)
			return -errno;
		if (tries == 99)
			return -EEXIST;
	}
	o->active = true;
	live_add(o);
	return 0;
}

static void remove_temp(struct orr_outfile *o);

/*
 * The temporary is created and registered with the cleanup signals blocked in this
 * thread, and counted as in progress for a handler running on another: a signal that
 * came in between would find a file the handler does not know, and leave it.  When one
 * came while it was made, the temporary is removed at once.
 */
static int open_temp(struct orr_outfile *o, bool exists)
{
	sigset_t block, old;
	int r;

	sigemptyset(&block);
	for (size_t i = 0; i < NCLEANUP; i++)
		sigaddset(&block, cleanup_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	atomic_fetch_add(&creating, 1);
	r = create_temp(o, exists);
	atomic_fetch_sub(&creating, 1);
	if (!r && atomic_load(&dying))
		remove_temp(o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int orr_outfile_open(struct orr_outfile *o, const char *path, unsigned flags)
{
	struct stat st, lst;
	bool exists;
	size_t len = strlen(path);
	int fd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->slot = -1;
	o->is_dir = flags & ORR_OUTFILE_DIR;
	if (!len)
		return -ENOENT;
	if (len >= sizeof(o->path))
		return -ENAMETOOLONG;
	memcpy(o->path, path, len + 1);
	if (!o->is_dir && (fd = named_fd(path)) >= 0) {
		if (flags & ORR_OUTFILE_REGULAR)
			return -EEXIST;
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : open_direct(o, fd);
	}
	if (path[len - 1] == '/')
		return o->is_dir ? -EEXIST : -EISDIR;
	exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return -errno;
	/*
	 * A directory output at a link to a directory goes there (it replaces that empty
	 * directory, the link stays); a link to nothing is not written through.
	 */
	if (o->is_dir && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		if (!exists)
			return ORR_EDANGLING;
		if (S_ISDIR(st.st_mode) && !realpath(path, o->path))
			return -errno;
	}
	if (exists && S_ISDIR(st.st_mode) && !o->is_dir)
		return -EISDIR;
	if (exists && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		if (flags & ORR_OUTFILE_REGULAR)
			return -EEXIST;
		return o->is_dir ? -ENOTDIR : open_direct(o, -1);
	}
	/* A symbolic link in the way is replaced, never followed: its target is kept. */
	if (exists && (lstat(o->path, &lst) < 0 || S_ISLNK(lst.st_mode)))
		exists = false;
	if (exists && o->is_dir != S_ISDIR(st.st_mode))
		return -ENOTDIR;
	o->keep_mode = exists;
	o->mode = exists ? (unsigned)(st.st_mode & 0777) : 0;
	return open_temp(o, exists);
}

/* The stream's writes, which keep the first error: stdio forgets it by the last flush. */
static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct orr_outfile *o = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(o->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->err)
				o->err = n < 0 ? -errno : -EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int stream_close(void *cookie)
{
	return 0; /* the descriptor is closed by close_file() */
}

FILE *orr_outfile_stream(struct orr_outfile *o)
{
	cookie_io_functions_t io = { .write = stream_write, .close = stream_close };

	if (!o->stream && o->fd >= 0 && (o->stream = fopencookie(o, "w", io)))
		setvbuf(o->stream, NULL, _IOFBF, 1 << 20);
	return o->stream;
}

bool orr_outfile_is_special(const char *path)
{
	struct stat st;

	if (named_fd(path) >= 0)
		return true;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int orr_outfile_fd(const struct orr_outfile *o)
{
	return o->fd;
}

const char *orr_outfile_dir(const struct orr_outfile *o)
{
	return o->tmp;
}

/* Closes the file (stream or descriptor); the first error. */
static int close_file(struct orr_outfile *o, bool sync)
{
	int r = 0;

	if (o->stream && (fflush(o->stream) != 0 || ferror(o->stream)))
		r = o->err ? o->err : -EIO;
	if (!r && !o->direct && o->keep_mode && o->fd >= 0 && fchmod(o->fd, o->mode) < 0)
		r = -errno;
	if (!r && sync && !o->direct && o->fd >= 0 && fsync(o->fd) < 0)
		r = -errno;
	if (o->stream && fclose(o->stream) != 0 && !r)
		r = o->err ? o->err : -EIO;
	if (o->fd >= 0 && close(o->fd) < 0 && !r && errno != EINTR)
		r = -errno;
	o->stream = NULL;
	o->fd = -1;
	return r;
}

static void remove_temp(struct orr_outfile *o)
{
	if (o->direct || !o->tmp[0])
		return;
	if (o->is_dir)
		remove_tree(o->tmp);
	else
		unlink(o->tmp);
}

int orr_outfile_commit(struct orr_outfile *o, bool sync)
{
	int r;

	if (!o->active)
		return -EBADF;
	r = close_file(o, sync);
	if (!r && o->is_dir && o->keep_mode && chmod(o->tmp, o->mode) < 0)
		r = -errno;
	if (!r && !o->direct && rename(o->tmp, o->path) < 0)
		r = -errno;
	if (r)
		remove_temp(o);
	live_remove(o);
	o->active = false;
	return r;
}

void orr_outfile_abort(struct orr_outfile *o)
{
	if (!o || !o->active)
		return;
	close_file(o, false);
	remove_temp(o);
	live_remove(o);
	o->active = false;
}

/* ---- outputs inside inputs ---- */

/* The real path of PATH's directory joined with its last name; NULL when unresolvable. */
static char *real_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *real, *out;
	size_t n;

	if (!slash)
		dir = strdup(".");
	else
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	real = dir ? realpath(dir, NULL) : NULL;
	free(dir);
	if (!real)
		return NULL;
	n = strlen(real) + strlen(slash ? slash + 1 : path) + 2;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
			 slash ? slash + 1 : path);
	free(real);
	return out;
}

bool orr_outfile_inside(const char *out, const char *in)
{
	struct stat so, si;
	char *rin = NULL, *rout = NULL;
	bool inside = false;
	size_t n;

	if (stat(in, &si) < 0)
		return false;
	/* The input itself, under any name. */
	if (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
		return true;
	if (!S_ISDIR(si.st_mode))
		return false;
	rin = realpath(in, NULL);
	rout = real_parent(out);
	if (rin && rout) {
		n = strlen(rin);
		if (strcmp(rin, "/") == 0)
			inside = true;
		else
			inside = strncmp(rout, rin, n) == 0 && (rout[n] == '/' || !rout[n]);
	}
	free(rin);
	free(rout);
	return inside;
}

const char *orr_file_type(unsigned int st_mode)
{
	mode_t m = (mode_t)st_mode;

	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a file";
}
