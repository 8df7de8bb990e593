/* SPDX-License-Identifier: MIT */
/*
 * liborrery-tracer.so as the CUDA driver loads it: dlopen, then InitializeInjection(),
 * in a child process whose stdout and stderr are files.  It must return 1, twice, print
 * nothing, and leave a log saying what it did.  Without a GPU (or a driver) CUPTI cannot
 * start and the tracer must say so and step aside; where it does start, the file it
 * writes at exit must import.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "orrery/trace.h"
#include "test-util.h"

static void child(const char *dir, const char *lib)
{
	char path[512];
	void *h;
	int (*init)(void);
	int fd;

	snprintf(path, sizeof(path), "%s/stdout", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, STDOUT_FILENO);
	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, STDERR_FILENO);
	setenv("ORR_RECORD_DIR", dir, 1);
	unsetenv("ORR_DEBUG");
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		_exit(10);
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init)
		_exit(11);
	if (init() != 1 || init() != 1)
		_exit(12);
	exit(0); /* runs the tracer's atexit handler, where it started */
}

static off_t file_size(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static char *read_log(const char *dir, pid_t pid)
{
	char path[512];
	char *text = calloc(1, 8192);
	FILE *f;

	snprintf(path, sizeof(path), "%s/tracer-%d.log", dir, (int)pid);
	f = fopen(path, "r");
	if (!f)
		fail_msg("no log %s", path);
	if (fread(text, 1, 8191, f) == 0)
		fail_msg("empty log %s", path);
	fclose(f);
	return text;
}

static void test_inject_returns_1_and_prints_nothing(void **state)
{
	const char *dir = *state, *root = getenv("ORR_BUILD_ROOT");
	char lib[1024], file[64];
	pid_t pid;
	int status;
	char *log;

	snprintf(lib, sizeof(lib), "%s/tracer/liborrery-tracer.so", root ? root : ".");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child(dir, lib);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(file_size(dir, "stdout"), 0);
	assert_int_equal(file_size(dir, "stderr"), 0);
	log = read_log(dir, pid);
	snprintf(file, sizeof(file), "pid-%d.orr", (int)pid);
	if (strstr(log, "tracing disabled")) {
		/* No GPU here: nothing may be left behind but the log. */
		assert_int_equal(file_size(dir, file), -1);
	} else {
		struct orr_trace *t = NULL;
		struct orr_diag d;

		assert_non_null(strstr(log, "tracing pid"));
		assert_non_null(strstr(log, "events written to"));
		if (import_path(dir, file, &t, &d))
			fail_msg("%s: %s", file, d.msg);
		orr_trace_free(t);
	}
	free(log);
}

/*
 * The same under a hostile environment: a record directory whose name holds control
 * characters, malformed and huge values, a FIFO planted at the log's name, ORR_DEBUG
 * writing to a stderr nobody reads, and a 200-byte file-size limit.  The job must still
 * exit 0, of its own accord, whatever the tracer could or could not write.
 */
static void hostile_child(const char *dir, const char *lib)
{
	struct rlimit lim = { 200, 200 };
	char path[600], prefix[200];
	int p[2], (*init)(void);
	void *h;

	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	if (pipe(p) != 0 || dup2(p[1], STDERR_FILENO) < 0)
		_exit(20);
	close(p[0]);
	snprintf(path, sizeof(path), "%s/tracer-%d.log", dir, (int)getpid());
	if (mkfifo(path, 0600) != 0)
		_exit(21);
	memset(prefix, '%', sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = '\0';
	setenv("ORR_RECORD_DIR", dir, 1);
	setenv("ORR_DEBUG", "tracer", 1);
	setenv("RANK", "-5", 1);
	setenv("WORLD_SIZE", "99999999999999999999999", 1);
	setenv("ORR_RECORD_SKIP", "1e9", 1);
	setenv("ORR_RECORD_STEPS", "4611686018427387904", 1);
	setenv("ORR_RECORD_STEP_PREFIX", prefix, 1);
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		_exit(22);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		_exit(10);
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init)
		_exit(11);
	alarm(60);
	if (init() != 1 || init() != 1)
		_exit(12);
	exit(0);
}

static void test_inject_hostile_environment(void **state)
{
	const char *root = getenv("ORR_BUILD_ROOT");
	char lib[1024], dir[512];
	pid_t pid;
	int status;

	snprintf(lib, sizeof(lib), "%s/tracer/liborrery-tracer.so", root ? root : ".");
	snprintf(dir, sizeof(dir), "%s/rec\x1b[2J\nord", (const char *)*state);
	assert_int_equal(mkdir(dir, 0700), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		hostile_child(dir, lib);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("the job died of signal %d", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inject_returns_1_and_prints_nothing,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_inject_hostile_environment, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
