/* SPDX-License-Identifier: MIT */
/* cmocka fixtures shared by the unit tests that write files. */
#ifndef ORRERY_TEST_TMPDIR_H
#define ORRERY_TEST_TMPDIR_H

#include <stdlib.h>

#include "orrery/common.h"

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

#endif
