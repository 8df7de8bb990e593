/* SPDX-License-Identifier: MIT */
/*
 * The tracer is a guest in someone else's process: hostile environment values, names
 * planted where it writes, closed standard descriptors, a closed stderr, a file-size
 * limit and a full disk must never change the job's exit status or output, and what is
 * lost is counted.  Each case that could kill or block the process runs in a child, with
 * an alarm, and the parent checks how the child ended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"
#include "test-tracer-util.h"

/* Runs fn(arg) in a child under a 10 s alarm; its exit code (>= 0), or -signal. */
static int in_child(int (*fn)(const char *), const char *arg)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(10);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static char *slurp(const char *path)
{
	static char text[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return text;
}

/* Entries of DIR other than "." and "..". */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* ---- the environment ---- */

static void test_env_hostile_values(void **state)
{
	static const char *const bad_ranks[] = {
		"-1", "2147483648", " 3", "3x", "0x3", "", "99999999999999999999999"
	};
	struct orr__config c;
	struct orr__window w;
	char bad[256], *longdir = calloc(1, 8192), prefix[300];

	(void)state;
	unsetenv("LOCAL_RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
	for (size_t i = 0; i < sizeof(bad_ranks) / sizeof(bad_ranks[0]); i++) {
		setenv("RANK", bad_ranks[i], 1);
		orr__config_from_env(&c, bad, sizeof(bad));
		assert_int_equal(c.rank, -1);
	}
	unsetenv("RANK");
	/* Counts past int64 are malformed; the largest ones are clamped by the window. */
	setenv("ORR_RECORD_SKIP", "99999999999999999999999", 1);
	setenv("ORR_RECORD_STEPS", "4611686018427387904", 1);
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_string_equal(bad, "ORR_RECORD_SKIP");
	assert_int_equal(c.skip, 0);
	assert_int_equal(c.steps, INT64_C(1) << 62);
	orr__window_init(&w, INT64_MAX, INT64_MAX, "ProfilerStep#");
	assert_true(w.windowed);
	assert_true(w.skip + w.steps + 2 > 0); /* no overflow */
	orr__window_release(&w);
	/* A prefix of ORR_RECORD_STEP_PREFIX_MAX bytes is taken (orrery record's limit). */
	memset(prefix, 'p', ORR_RECORD_STEP_PREFIX_MAX);
	prefix[ORR_RECORD_STEP_PREFIX_MAX] = '\0';
	setenv("ORR_RECORD_STEP_PREFIX", prefix, 1);
	unsetenv("ORR_RECORD_SKIP");
	unsetenv("ORR_RECORD_STEPS");
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_string_equal(bad, "");
	assert_string_equal(c.step_prefix, prefix);
	/* A step prefix a byte longer is noted and the default used. */
	memset(prefix, 'p', ORR_RECORD_STEP_PREFIX_MAX + 1);
	prefix[ORR_RECORD_STEP_PREFIX_MAX + 1] = '\0';
	setenv("ORR_RECORD_STEP_PREFIX", prefix, 1);
	unsetenv("ORR_RECORD_SKIP");
	unsetenv("ORR_RECORD_STEPS");
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_string_equal(bad, "ORR_RECORD_STEP_PREFIX");
	assert_string_equal(c.step_prefix, "ProfilerStep#");
	unsetenv("ORR_RECORD_STEP_PREFIX");
	/* A directory name longer than any path: tracing is turned off, nothing overflows. */
	memset(longdir, 'd', 8191);
	longdir[0] = '/';
	setenv("ORR_RECORD_DIR", longdir, 1);
	orr__config_from_env(&c, bad, sizeof(bad));
	assert_true(c.path_too_long);
	unsetenv("ORR_RECORD_DIR");
	free(longdir);
}

/* ---- the log ---- */

static int log_lines_with_controls(const char *dir)
{
	orr__log_open(dir, 4301, false);
	orr__log("into %s", "a\nb\x1b[31mc\x7f");
	orr__log_close();
	return 0;
}

static void test_log_escapes_control_characters(void **state)
{
	char path[512];

	assert_int_equal(in_child(log_lines_with_controls, *state), 0);
	snprintf(path, sizeof(path), "%s/tracer-4301.log", (const char *)*state);
	assert_string_equal(slurp(path), "into a?b?[31mc?\n");
}

static int log_to_planted(const char *dir)
{
	orr__log_open(dir, 4302, false);
	orr__log("must not reach the target");
	orr__log_close();
	orr__log_open(dir, 4303, false);
	orr__log("must not reach the other name");
	orr__log_close();
	orr__log_open(dir, 4304, false); /* a FIFO: must not block */
	orr__log("must not block");
	orr__log_close();
	return 0;
}

/* A symbolic link, a hard link and a FIFO at the log's predictable names. */
static void test_log_planted_names(void **state)
{
	const char *dir = *state;
	char victim[512], sym[512], hard[512], fifo[512];
	struct stat st;
	FILE *f;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(sym, sizeof(sym), "%s/tracer-4302.log", dir);
	snprintf(hard, sizeof(hard), "%s/tracer-4303.log", dir);
	snprintf(fifo, sizeof(fifo), "%s/tracer-4304.log", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("keep\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, sym), 0);
	assert_int_equal(link(victim, hard), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(in_child(log_to_planted, dir), 0);
	assert_string_equal(slurp(victim), "keep\n");
	assert_int_equal(lstat(sym, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static int log_past_file_size_limit(const char *dir)
{
	struct rlimit lim = { 100, 100 };

	signal(SIGXFSZ, SIG_DFL);
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		return 20;
	orr__log_open(dir, 4305, false);
	for (int i = 0; i < 10; i++)
		orr__log("line %d of a log that outgrows the file-size limit", i);
	orr__log_close();
	return 0; /* alive: SIGXFSZ was not delivered */
}

static int log_to_closed_pipe(const char *dir)
{
	int p[2];
	sigset_t pending;

	signal(SIGPIPE, SIG_DFL);
	if (pipe(p) != 0 || dup2(p[1], STDERR_FILENO) < 0)
		return 20;
	close(p[0]);
	close(p[1]);
	orr__log_open(dir, 4306, true); /* ORR_DEBUG=tracer: lines go to stderr too */
	orr__log("to a stderr nobody reads");
	orr__log_close();
	sigpending(&pending);
	return sigismember(&pending, SIGPIPE) ? 21 : 0;
}

static void test_log_never_kills_the_job(void **state)
{
	char path[512];
	struct stat st;

	assert_int_equal(in_child(log_past_file_size_limit, *state), 0);
	snprintf(path, sizeof(path), "%s/tracer-4305.log", (const char *)*state);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 0 && st.st_size <= 100);
	assert_int_equal(in_child(log_to_closed_pipe, *state), 0);
}

static int log_with_closed_stdio(const char *dir)
{
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	orr__log_open(dir, 4307, false);
	orr__log("written above the standard descriptors");
	/* The job's own descriptors 0-2 are still free for it. */
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			return 30 + fd;
	orr__log_close();
	return 0;
}

static void test_log_keeps_stdio_free(void **state)
{
	char path[512];

	assert_int_equal(in_child(log_with_closed_stdio, *state), 0);
	snprintf(path, sizeof(path), "%s/tracer-4307.log", (const char *)*state);
	assert_string_equal(slurp(path), "written above the standard descriptors\n");
}

/* ---- the session's file ---- */

static void test_session_refuses_fifo_output(void **state)
{
	struct fixture f;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/rank-0-%d.orr", (const char *)*state, PID);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10); /* a blocked open would end the test here */
	assert_int_equal(fixture_new(&f, *state, 0, 0), 0);
	api(f.s, false, 211, 1, 100);
	api(f.s, false, 211, 2, 200);
	fixture_close(&f);
	alarm(0);
	assert_false(f.sum.written);
	assert_int_equal(f.sum.error, -EEXIST);
	assert_int_equal(f.sum.events, 0);
	assert_int_equal(f.sum.dropped_events, 2);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	orr__window_release(&f.win);
}

/*
 * A full disk, as a file-size limit makes one: writes fail with EFBIG where ENOSPC
 * would, at any point of the file.  The writer thread has every signal blocked; so does
 * this child.  Exit codes say what went wrong.
 */
static int session_on_full_disk(const char *dir, rlim_t limit, int nevents, bool some_written)
{
	struct rlimit lim = { limit, limit };
	struct fixture f;
	sigset_t all;
	uint64_t x = 88172645463325252ull;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		return 20;
	if (fixture_new(&f, dir, 0, 0) != 0)
		return 21;
	for (int i = 0; i < nevents; i++) {
		/* Timestamps that compress badly, so that the limit is reached early. */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		api(f.s, false, 211, (uint32_t)i + 1, (int64_t)(x >> 20));
	}
	fixture_close(&f);
	orr__window_release(&f.win);
	if (f.sum.written)
		return 22;
	if (f.sum.error != -EFBIG)
		return 23;
	if (f.sum.events + f.sum.dropped_events < (uint64_t)nevents)
		return 24; /* every event written before the failure or counted as dropped */
	if (f.sum.dropped_events == 0)
		return 25;
	if (some_written != (f.sum.events > 0))
		return 27;                 /* the limit was not where the case meant it */
	return entries(dir) == 0 ? 0 : 26; /* no file, no temporary left */
}

static int full_at_header(const char *dir)
{
	return session_on_full_disk(dir, 16, 1000, false);
}

static int full_mid_stream(const char *dir)
{
	return session_on_full_disk(dir, 64 << 10, 400000, true);
}

static void test_session_full_disk(void **state)
{
	assert_int_equal(in_child(full_at_header, *state), 0);
	assert_int_equal(in_child(full_mid_stream, *state), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_hostile_values),
		cmocka_unit_test_setup_teardown(test_log_escapes_control_characters, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_log_planted_names, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_log_never_kills_the_job, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_log_keeps_stdio_free, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_refuses_fifo_output, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_session_full_disk, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
