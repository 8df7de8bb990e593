/* SPDX-License-Identifier: MIT */
/*
 * bench-import: times orr_trace_import() on each PATH (any trace orrery reads: Kineto
 * JSON, native .orr, a directory, an archive), RUNS times after one warm-up, and prints
 * one JSON line per path: the median, minimum and maximum wall time of an import (read,
 * parse, build the model; freeing it is not timed), and what was imported.
 *
 *   bench-import [--runs N] PATH...
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/trace.h"
#include "banned.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* One import of path; its wall time, or -1 after printing why it failed. */
static int64_t import_once(const char *path, size_t *ret_ranks, uint64_t *ret_events)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int64_t t0 = orr_now_ns(), dt;
	int err = orr_trace_import(path, NULL, &t, &d);

	dt = orr_now_ns() - t0;
	if (err) {
		char buf[1024];

		fprintf(stderr, "bench-import: error: %s\n",
			orr_diag_format(&d, err, buf, sizeof(buf)));
		return -1;
	}
	*ret_ranks = orr_trace_rank_count(t);
	*ret_events = 0;
	for (size_t i = 0; i < *ret_ranks; i++)
		*ret_events += orr_trace_get_rank(t, i)->nevents;
	orr_trace_free(t);
	return dt;
}

static int bench(const char *path, int runs)
{
	int64_t *ns = orr_xcalloc((size_t)runs, sizeof(*ns));
	size_t ranks = 0;
	uint64_t events = 0;
	int ret = 1;

	if (import_once(path, &ranks, &events) < 0) /* warm-up: page cache, allocator */
		goto out;
	for (int i = 0; i < runs; i++)
		if ((ns[i] = import_once(path, &ranks, &events)) < 0)
			goto out;
	qsort(ns, (size_t)runs, sizeof(*ns), cmp_i64);
	fputs("{\"path\": \"", stdout);
	for (const char *p = path; *p; p++)
		printf(*p == '"' || *p == '\\'    ? "\\%c"
		       : (unsigned char)*p < 0x20 ? "?"
						  : "%c",
		       *p);
	printf("\", \"runs\": %d, \"ranks\": %zu, \"events\": %llu, "
	       "\"median_s\": %.6f, \"min_s\": %.6f, \"max_s\": %.6f}\n",
	       runs, ranks, (unsigned long long)events,
	       (runs % 2 ? (double)ns[runs / 2] : (double)(ns[runs / 2 - 1] + ns[runs / 2]) / 2) /
		       1e9,
	       (double)ns[0] / 1e9, (double)ns[runs - 1] / 1e9);
	fflush(stdout);
	ret = 0;
out:
	free(ns);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ 0 },
	};
	int runs = 5, c, ret = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'r')
			goto usage;
		runs = (int)strtol(optarg, &end, 10);
		if (*end || runs < 1 || runs > 1000)
			goto usage;
	}
	if (optind >= argc)
		goto usage;
	for (int i = optind; i < argc; i++)
		ret |= bench(argv[i], runs);
	return ret;
usage:
	fputs("usage: bench-import [--runs N] PATH...\n", stderr);
	return 2;
}
