/* SPDX-License-Identifier: MIT */
/*
 * A piece of a test run with its address space capped (RLIMIT_AS), in a child so that
 * the cap ends with it: how the readers report memory refused to them.  Not under ASan,
 * whose shadow memory a cap breaks (UNDER_ASAN).
 */
#ifndef ORRERY_TESTS_CAPPED_TEST_H
#define ORRERY_TESTS_CAPPED_TEST_H

#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

/* Caps this process's address space above_bytes above what it maps now: 0, or -1. */
static inline int capped_address_space(size_t above_bytes)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	struct rlimit lim;
	int n = f ? fscanf(f, "%lu", &pages) : 0;

	if (f)
		fclose(f);
	if (n != 1)
		return -1;
	lim.rlim_cur = lim.rlim_max = pages * (size_t)sysconf(_SC_PAGESIZE) + above_bytes;
	return setrlimit(RLIMIT_AS, &lim) == 0 ? 0 : -1;
}

/*
 * fn(arg) in a child process: its exit status, minus the signal that ended it, or
 * CAPPED_NO_CHILD when none could be run.
 */
#define CAPPED_NO_CHILD (-1000)
static inline int capped_in_child(int (*fn)(void *arg), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return CAPPED_NO_CHILD;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return CAPPED_NO_CHILD;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

#endif
