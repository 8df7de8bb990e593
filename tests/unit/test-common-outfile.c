/* SPDX-License-Identifier: MIT */
/* common/outfile.c: temporaries, modes, links, devices, FIFOs, directories, signals. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "orrery/common.h"
#include "test-util.h"

static char *at(void **state, const char *name)
{
	return orr_xasprintf("%s/%s", (char *)*state, name);
}

/* Entries of the test directory, dot names included. */
static size_t entries(void **state)
{
	DIR *d = opendir(*state);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int write_text(const char *path, const char *text, unsigned flags)
{
	struct orr_outfile o;
	int r = orr_outfile_open(&o, path, flags);

	if (r)
		return r;
	fputs(text, orr_outfile_stream(&o));
	return orr_outfile_commit(&o, false);
}

static void test_outfile_new_file_gets_umask_mode(void **state)
{
	char *p = at(state, "new.json");
	mode_t old = umask(027);
	struct stat st;

	assert_int_equal(write_text(p, "{}", 0), 0);
	umask(old);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_string_equal(slurp(p), "{}");
	assert_int_equal(entries(state), 1);
	free(p);
}

static void test_outfile_replace_keeps_mode(void **state)
{
	char *p = at(state, "old.json");
	struct stat st;

	put(p, "old", 0600);
	assert_int_equal(write_text(p, "new", 0), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_string_equal(slurp(p), "new");
	assert_int_equal(entries(state), 1);
	free(p);
}

static void test_outfile_temporary_is_hidden_and_unique(void **state)
{
	char *p = at(state, "x.json"),
	     *prefix = orr_xasprintf("%s/.x.json.tmp.%ld.", (char *)*state, (long)getpid());
	struct orr_outfile a, b;

	assert_int_equal(orr_outfile_open(&a, p, 0), 0);
	assert_int_equal(orr_outfile_open(&b, p, 0), 0);
	assert_memory_equal(a.tmp, prefix, strlen(prefix));
	assert_string_not_equal(a.tmp, b.tmp);
	assert_int_equal(entries(state), 2);
	orr_outfile_abort(&a);
	orr_outfile_abort(&b);
	orr_outfile_abort(&b); /* twice is fine */
	assert_int_equal(entries(state), 0);
	free(prefix);
	free(p);
}

static void test_outfile_link_is_replaced_not_followed(void **state)
{
	char *p = at(state, "tl.json"), *victim = at(state, "victim.txt");
	char *planted = at(state, "tl.json.tmp");
	struct stat st;

	put(victim, "precious", 0644);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(write_text(p, "{}", 0), 0);
	assert_string_equal(slurp(victim), "precious");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(p), "{}");
	assert_int_equal(entries(state), 3);
	free(planted);
	free(victim);
	free(p);
}

static void test_outfile_device_written_in_place(void **state)
{
	struct stat st;

	assert_int_equal(write_text("/dev/null", "{}", 0), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(write_text("/dev/full", "{}", 0), -ENOSPC);
	assert_int_equal(write_text("/dev/null", "x", ORR_OUTFILE_DIR), -ENOTDIR);
}

static void test_outfile_fifo_written_in_place(void **state)
{
	char *p = at(state, "fifo.json"), buf[16] = "";
	struct stat st;
	int rd;

	assert_int_equal(mkfifo(p, 0600), 0);
	rd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(write_text(p, "{}", 0), 0);
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 2);
	assert_string_equal(buf, "{}");
	close(rd);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(state), 1);
	free(p);
}

/* A FIFO no process reads is refused after a short wait for its reader, not waited on. */
static void test_outfile_fifo_without_reader_refused(void **state)
{
	char *p = at(state, "fifo.json");
	struct timespec t0, t1;
	struct stat st;
	double s;

	assert_int_equal(mkfifo(p, 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(write_text(p, "{}", 0), ORR_ENOREADER);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(s >= 0.9 && s < 10);
	assert_non_null(strstr(orr_strerror(ORR_ENOREADER), "FIFO"));
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(state), 1);
	free(p);
}

/* A directory output at a link to an empty directory fills that directory. */
static void test_outfile_dir_through_link(void **state)
{
	char *e = at(state, "e"), *l = at(state, "l"), *lm = at(state, "lm"), *m;
	struct orr_outfile o;
	struct stat st;

	assert_int_equal(mkdir(e, 0755), 0);
	assert_int_equal(symlink("e", l), 0);
	assert_int_equal(orr_outfile_open(&o, l, ORR_OUTFILE_DIR), 0);
	m = orr_xasprintf("%s/rank-0.orr", orr_outfile_dir(&o));
	assert_int_equal(write_text(m, "x", 0), 0);
	free(m);
	assert_int_equal(orr_outfile_commit(&o, false), 0);
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	m = at(state, "e/rank-0.orr");
	assert_string_equal(slurp(m), "x");
	free(m);
	/* A link to nothing is not written through: nothing made, the link as it was. */
	assert_int_equal(symlink("missing", lm), 0);
	assert_int_equal(orr_outfile_open(&o, lm, ORR_OUTFILE_DIR), ORR_EDANGLING);
	assert_int_equal(entries(state), 3);
	assert_int_equal(lstat(lm, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	free(e);
	free(l);
	free(lm);
}

static void test_outfile_directory_refused_for_file(void **state)
{
	assert_int_equal(write_text(*state, "{}", 0), -EISDIR);
	assert_int_equal(entries(state), 0);
}

static void test_outfile_dir_made_whole_or_not_at_all(void **state)
{
	char *p = at(state, "run"), *m;
	struct orr_outfile o;
	struct stat st;

	assert_int_equal(orr_outfile_open(&o, p, ORR_OUTFILE_DIR), 0);
	m = orr_xasprintf("%s/rank-0.orr", orr_outfile_dir(&o));
	assert_int_equal(write_text(m, "x", 0), 0);
	free(m);
	orr_outfile_abort(&o);
	assert_int_equal(entries(state), 0);

	assert_int_equal(orr_outfile_open(&o, p, ORR_OUTFILE_DIR), 0);
	m = orr_xasprintf("%s/rank-0.orr", orr_outfile_dir(&o));
	assert_int_equal(write_text(m, "x", 0), 0);
	free(m);
	assert_int_equal(orr_outfile_commit(&o, false), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	m = at(state, "run/rank-0.orr");
	assert_string_equal(slurp(m), "x");
	free(m);
	/* Not empty now: a second one cannot replace it, and leaves nothing. */
	assert_int_equal(orr_outfile_open(&o, p, ORR_OUTFILE_DIR), 0);
	assert_true(orr_outfile_commit(&o, false) < 0);
	assert_int_equal(entries(state), 1);
	free(p);
}

static void test_outfile_signal_removes_temporaries(void **state)
{
	char *p = at(state, "big.json"), *d = at(state, "out");
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct orr_outfile a, b;

		orr_outfile_catch_signals();
		if (orr_outfile_open(&a, p, 0) || orr_outfile_open(&b, d, ORR_OUTFILE_DIR))
			_exit(3);
		put(orr_xasprintf("%s/member", orr_outfile_dir(&b)), "m", 0644);
		fputs("half", orr_outfile_stream(&a));
		fflush(orr_outfile_stream(&a));
		raise(SIGTERM);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
	assert_int_equal(entries(state), 0);
	free(d);
	free(p);
}

static void test_outfile_inside_input(void **state)
{
	char *in = at(state, "in"), *sub = at(state, "in/sub"), *alias = at(state, "alias");
	char *o1 = at(state, "in/all.json"), *o2 = at(state, "alias/sub/x.orr");
	char *o3 = at(state, "in.tar.zst"), *f = at(state, "in/a.json"), *o4 = at(state, "a.json");

	assert_int_equal(mkdir(in, 0777), 0);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(symlink("in", alias), 0);
	put(f, "{}", 0644);
	assert_true(orr_outfile_inside(o1, in));
	assert_true(orr_outfile_inside(o2, in));
	assert_true(orr_outfile_inside(in, in));
	assert_false(orr_outfile_inside(o3, in));
	assert_true(orr_outfile_inside(f, f));
	assert_false(orr_outfile_inside(o4, f));
	assert_false(orr_outfile_inside(o1, "no-such-input"));
	free(in);
	free(sub);
	free(alias);
	free(o1);
	free(o2);
	free(o3);
	free(o4);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_outfile_new_file_gets_umask_mode, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_replace_keeps_mode, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_temporary_is_hidden_and_unique,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_link_is_replaced_not_followed,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_outfile_device_written_in_place),
		cmocka_unit_test_setup_teardown(test_outfile_fifo_written_in_place, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_fifo_without_reader_refused,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_dir_through_link, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_directory_refused_for_file,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_dir_made_whole_or_not_at_all,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_signal_removes_temporaries,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_outfile_inside_input, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
