/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests that write and import files. */
#ifndef ORRERY_TEST_UTIL_H
#define ORRERY_TEST_UTIL_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "orrery/trace.h"

/* Setup and teardown of the tests that write files: *state is a new temporary directory. */
static inline int tmpdir_setup(void **state)
{
	const char *base = getenv("TMPDIR");
	char *dir = orr_xasprintf("%s/orr-test-XXXXXX", base && *base ? base : "/tmp");

	if (!mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static inline int tmpdir_teardown(void **state)
{
	char *cmd = orr_xasprintf("rm -rf '%s'", (char *)*state);
	int r = system(cmd);

	free(cmd);
	free(*state);
	return r;
}

/* Imports DIR/NAME, or DIR itself when NAME is NULL. */
static inline int import_path(const char *dir, const char *name, struct orr_trace **ret,
			      struct orr_diag *d)
{
	char *path = name ? orr_xasprintf("%s/%s", dir, name) : orr_xstrdup(dir);
	int r = orr_trace_import(path, NULL, ret, d);

	free(path);
	return r;
}

#ifdef cmocka_unit_test
/* PATH holding TEXT; the test fails where it cannot be written. */
static inline void write_text_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* The absolute path of ../shared/traces/kineto, or NULL when it is absent. */
static inline const char *shared_kineto(void)
{
	static char path[PATH_MAX];
	const char *root = getenv("ORR_SHARED_TRACES");
	char *dir = orr_xasprintf("%s/kineto", root ? root : "../shared/traces");
	struct stat st;
	bool ok = realpath(dir, path) && stat(path, &st) == 0 && S_ISDIR(st.st_mode);

	free(dir);
	return ok ? path : NULL;
}

static inline struct orr_trace *import_shared(const char *file)
{
	const char *dir = shared_kineto();
	struct orr_trace *t = NULL;
	struct orr_diag d;

	if (!dir) {
		fprintf(stderr, "skipped: no %s (set ORR_SHARED_TRACES)\n",
			getenv("ORR_SHARED_TRACES") ? getenv("ORR_SHARED_TRACES")
						    : "../shared/traces");
		skip();
	}
	if (import_path(dir, file, &t, &d))
		fail_msg("%s: %s", file ? file : dir, d.msg);
	return t;
}

/*
 * DIR/NAME of the shared traces, or NULL with a line saying so when the importer refuses
 * it as not one job (ORR_ERANK: a folder of separate runs, whose ranks cannot be told
 * apart), which the tests that walk the shared traces as jobs skip.  Any other error fails.
 */
static inline struct orr_trace *import_shared_job(const char *dir, const char *name)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r = import_path(dir, name, &t, &d);

	if (r == ORR_ERANK) {
		fprintf(stderr, "skipped '%s': not one job: %s\n", name, d.msg);
		return NULL;
	}
	if (r)
		fail_msg("%s: %s", name, d.msg);
	return t;
}

/*
 * Folders beside kineto/ that hold no trace of their own: execution traces (read with
 * their profiler trace) and Chakra files (written, not imported).
 */
static inline bool not_traces_folder(const char *name)
{
	return name[0] == '.' || !strcmp(name, "kineto") || !strcmp(name, "et") ||
	       !strcmp(name, "chakra");
}

/* "" for kineto/ itself, then, with every_format, "../F/" for each other folder of traces. */
static inline char **shared_folders(const char *kineto_dir, bool every_format, size_t *ret_n)
{
	char *parent = orr_xasprintf("%s/..", kineto_dir);
	struct dirent **names = NULL;
	int n = every_format ? scandir(parent, &names, NULL, alphasort) : 0;
	char **v = orr_xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*v));
	size_t k = 0;
	struct stat st;

	v[k++] = orr_xstrdup("");
	for (int i = 0; i < n; i++) {
		char *path = orr_xasprintf("%s/%s", parent, names[i]->d_name);

		if (!not_traces_folder(names[i]->d_name) && stat(path, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			v[k++] = orr_xasprintf("../%s/", names[i]->d_name);
		free(path);
		free(names[i]);
	}
	free(names);
	free(parent);
	*ret_n = k;
	return v;
}

/*
 * Imports every file or directory of ../shared/traces/kineto in name order and calls
 * fn(t, name, data) on each (fn frees nothing; t is freed after it); with every_format,
 * then those of every other folder of traces beside it (kineto-old/, rocm/, nsys/ and any
 * added later; not et/ or chakra/), named "rocm/NAME".  Skips the test when the traces
 * are absent, and an entry that is not one job (import_shared_job()); returns how many
 * were imported.
 */
static inline size_t for_each_shared_trace_in(void (*fn)(struct orr_trace *t, const char *name,
							 void *data),
					      void *data, bool every_format)
{
	const char *dir = shared_kineto();
	size_t done = 0, nfolders;
	char **folders;

	if (!dir)
		import_shared(NULL); /* skips */
	folders = shared_folders(dir, every_format, &nfolders);
	for (size_t k = 0; k < nfolders; k++) {
		char *sub = orr_xasprintf("%s/%s", dir, folders[k]);
		struct dirent **names = NULL;
		int n = scandir(sub, &names, NULL, alphasort);

		if (n <= 0 && k == 0)
			fail_msg("%s: no traces", dir);
		for (int i = 0; i < n; i++) {
			if (names[i]->d_name[0] != '.') {
				char *name = orr_xasprintf("%s%s", folders[k], names[i]->d_name);
				struct orr_trace *t = import_shared_job(dir, name);

				if (t) {
					fn(t, k ? name + 3 : name, data);
					orr_trace_free(t);
					done++;
				}
				free(name);
			}
			free(names[i]);
		}
		free(names);
		free(sub);
		free(folders[k]);
	}
	free(folders);
	return done;
}

/* name with every '/' made '_': a file name for a trace's output ("rocm_x.json.gz"). */
static inline char *flat_name(const char *name)
{
	char *s = orr_xstrdup(name);

	for (char *p = s; *p; p++)
		*p = *p == '/' ? '_' : *p;
	return s;
}

/* The traces of ../shared/traces/kineto (the format the estimator's tests expect). */
static inline size_t
for_each_shared_trace(void (*fn)(struct orr_trace *t, const char *name, void *data), void *data)
{
	return for_each_shared_trace_in(fn, data, false);
}

#endif

#endif
