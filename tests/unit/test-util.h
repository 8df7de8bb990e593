/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests that write and import files. */
#ifndef ORRERY_TEST_UTIL_H
#define ORRERY_TEST_UTIL_H

#include <stdlib.h>

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

#endif
