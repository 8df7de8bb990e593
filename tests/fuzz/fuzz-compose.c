/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as a profiler trace (its record_shapes arguments, streams,
 * collectives and blocking calls), planned by compose/ as it is and with a region
 * repeated, and each plan written.  fuzz-et fuzzes the execution trace under a fixed
 * profiler trace; this one fuzzes what the planner walks (plan.c, plan-sync.c) and the
 * writer's groups and collectives (write.c).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/compose.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out_dir[64];

static void empty_dir(void)
{
	DIR *d = opendir(out_dir);
	struct dirent *e;
	char p[384];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", out_dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
}

static void cleanup(void)
{
	empty_dir();
	rmdir(out_dir);
}

static int setup(void)
{
	if (out_dir[0])
		return 0;
	snprintf(out_dir, sizeof(out_dir), "/tmp/orr-fuzz-compose-%d.d", (int)getpid());
	if (mkdir(out_dir, 0700) < 0)
		return -1;
	atexit(cleanup);
	return 0;
}

static void compose(const struct orr_graph *g, const struct orr_compose_options *co)
{
	struct orr_compose *c = NULL;
	struct orr_diag diag;

	if (orr_compose_build(g, co, &c, &diag) == 0) {
		orr_compose_write(c, out_dir, &diag);
		empty_dir();
	}
	orr_compose_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct orr_compose_repeat repeat = { "aten::*", 2 };
	static const char *const namespaces[] = { "fbgemm" };
	const struct orr_compose_options plain = { .step = -1, .steps = 1, .warmup = 1 };
	const struct orr_compose_options repeated = { .step = -1,
						      .steps = 1,
						      .warmup = 1,
						      .repeats = &repeat,
						      .nrepeats = 1,
						      .namespaces = namespaces,
						      .nnamespaces = 1 };
	const struct orr_import_options opts = { .max_bytes = 1u << 20 };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_diag diag;

	if (setup() < 0)
		return 0;
	if (orr_trace_import_buffer("fuzz.json", data, size, &opts, &t, &diag) == 0 &&
	    orr_graph_build(t, NULL, &g, &diag) == 0) {
		compose(g, &plain);
		compose(g, &repeated);
	}
	orr_graph_free(g);
	orr_trace_free(t);
	return 0;
}
