/* SPDX-License-Identifier: MIT */
/*
 * gen-kineto: writes a large synthetic PyTorch-profiler (Kineto) JSON trace, for the
 * import benchmark (bench/run.sh).
 *
 *   gen-kineto [-o FILE] [--size-mb N] [--ranks R] [--seed S]
 *
 * One file of about N MB (10^6 bytes, default 600), or with --ranks R and -o DIR, the files
 * DIR/rank-K.trace.json of N/R MB each. The same arguments give byte-identical output.
 *
 * The content follows real traces: the layout of Kineto's output_json.cpp, CPU ops first
 * and then the CUPTI activity, a cpu_op with shapes, a runtime or driver launch with its
 * correlation id, a kernel with a long templated name and an ac2g flow pair per launch;
 * copies, sets, event record/wait pairs with their cuda_sync events, DDP collectives
 * (record_param_comms and NCCL kernels), a ProfilerStep#N annotation every ~50 k events,
 * and a stream sync at the end of each step. Times come from a small simulation (threads
 * and streams with clocks), so every kernel follows its launch and streams never overlap.
 *
 * Speed: the generator formats into a 16 MB buffer by hand (no stdio on the hot path) and
 * runs both passes (CPU ops, then activity) of the same deterministic simulation.
 *
 * This file: the options and the files.  The simulation is in gen-kineto-sim.c, the JSON
 * writers in gen-kineto-emit.c, the workload in gen-kineto-workload.c (see gen-kineto.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen-kineto.h"
#include "../common/banned.h"

/* ---- command line ----------------------------------------------------------------------- */

struct opts {
	const char *output; /* NULL: stdout */
	uint64_t size_mb, seed;
	int ranks;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "gen-kineto: out of memory\n");
		exit(1);
	}
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Groups (launches and the like) for size_bytes per file: measured on one step's worth. */
static uint64_t groups_for(const struct opts *o, uint64_t size_bytes, char *buf)
{
	struct out cnt = { -1, buf, 0, 0, 0 };
	struct gen *g = xmalloc(sizeof(*g));
	uint64_t groups;

	gen_init(g, &cnt, o->seed, 0, o->ranks);
	generate(g, 2 * GROUPS_PER_STEP, "calibration");
	groups = (uint64_t)((double)size_bytes / (double)cnt.flushed * 2 * GROUPS_PER_STEP);
	free(g);
	return groups ? groups : 1;
}

static int write_file(const struct opts *o, int rank, const char *path, uint64_t groups, char *buf)
{
	char tmp[4200];
	struct out out = { STDOUT_FILENO, buf, 0, 0, 0 };
	struct gen *g = xmalloc(sizeof(*g));
	double t0 = now_s(), dt;
	int ret = 0;

	if (path) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		out.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out.fd < 0) {
			fprintf(stderr, "gen-kineto: cannot create '%s': %s\n", tmp,
				strerror(errno));
			free(g);
			return -1;
		}
	}
	gen_init(g, &out, o->seed, rank, o->ranks);
	generate(g, groups, path ? path : "stdout");
	if (path && close(out.fd) < 0 && !out.err)
		out.err = errno;
	if (path && !out.err && rename(tmp, path) < 0)
		out.err = errno;
	dt = now_s() - t0;
	if (out.err) {
		fprintf(stderr, "gen-kineto: cannot write '%s': %s\n", path ? path : "stdout",
			strerror(out.err));
		if (path)
			unlink(tmp);
		ret = -1;
	} else {
		fprintf(stderr, "gen-kineto: %s: %llu bytes, %llu events in %.2f s (%.0f MB/s)\n",
			path ? path : "stdout", (unsigned long long)out.flushed,
			(unsigned long long)g->events, dt, (double)out.flushed / 1e6 / dt);
	}
	free(g);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen-kineto [-o FILE] [--size-mb N] [--ranks R] [--seed S]\n"
		   "  -o, --output FILE  write here (default: stdout); with --ranks R > 1, a\n"
		   "                     directory that gets rank-K.trace.json for K < R\n"
		   "  --size-mb N        about N MB (10^6 bytes) in all (default 600)\n"
		   "  --ranks R          R ranks, one file each of N/R MB (default 1)\n"
		   "  --seed S           another seed, another trace (default 1)\n");
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

/* Returns -1 to go on, or the exit status. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "size-mb", required_argument, NULL, 'm' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		} else if (c == 'o') {
			o->output = strcmp(optarg, "-") ? optarg : NULL;
		} else if (c == 'm' && parse_u64(optarg, 1, 1000000, &v)) {
			o->size_mb = v;
		} else if (c == 'r' && parse_u64(optarg, 1, 1024, &v)) {
			o->ranks = (int)v;
		} else if (c == 's' && parse_u64(optarg, 0, UINT64_MAX, &v)) {
			o->seed = v;
		} else {
			if (c != '?')
				fprintf(stderr, "gen-kineto: bad value '%s'\n", optarg);
			usage(stderr);
			return 2;
		}
	}
	if (o->ranks > 1 && !o->output)
		fprintf(stderr, "gen-kineto: --ranks %d needs -o DIR\n", o->ranks);
	if (optind < argc || (o->ranks > 1 && !o->output) ||
	    (o->output && strlen(o->output) > 4000)) {
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { NULL, 600, 1, 1 };
	char path[4100], *buf;
	uint64_t groups;
	int ret = parse_opts(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.ranks > 1 && mkdir(o.output, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "gen-kineto: cannot create '%s': %s\n", o.output, strerror(errno));
		return 1;
	}
	kernels_init();
	buf = xmalloc(OUT_BUF_BYTES);
	groups = groups_for(&o, o.size_mb * 1000000 / (uint64_t)o.ranks, buf);
	ret = 0;
	for (int r = 0; r < o.ranks && !ret; r++) {
		if (o.ranks > 1)
			snprintf(path, sizeof(path), "%s/rank-%d.trace.json", o.output, r);
		ret = write_file(&o, r, o.ranks > 1 ? path : o.output, groups, buf);
	}
	free(buf);
	return ret ? 1 : 0;
}
