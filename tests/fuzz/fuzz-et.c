/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as the PyTorch execution trace of a small fixed profiler
 * trace (orr_import_options.et_path), read and linked to its ops; then the execution
 * graph, and a benchmark composed from it and written (compose/), which walks every
 * value the execution trace gave the linked ops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/compose.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two rand, one add: each launches a kernel on stream 7, inside ProfilerStep#1. */
static const char kineto[] =
	"{\"schemaVersion\":1,\"traceEvents\":["
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
	"\"tid\":1,\"ts\":0,\"dur\":1000},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::rand\",\"pid\":1,\"tid\":1,\"ts\":10,"
	"\"dur\":20,\"args\":{\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
	"\"ts\":12,\"dur\":5,\"args\":{\"correlation\":100,\"External id\":1}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_rand\",\"pid\":0,\"tid\":7,\"ts\":20,"
	"\"dur\":5,\"args\":{\"correlation\":100,\"device\":0,\"stream\":7}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::rand\",\"pid\":1,\"tid\":1,\"ts\":40,"
	"\"dur\":20,\"args\":{\"External id\":2}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
	"\"ts\":42,\"dur\":5,\"args\":{\"correlation\":101,\"External id\":2}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_rand\",\"pid\":0,\"tid\":7,\"ts\":50,"
	"\"dur\":5,\"args\":{\"correlation\":101,\"device\":0,\"stream\":7}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":100,"
	"\"dur\":30,\"args\":{\"External id\":3}},"
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
	"\"ts\":105,\"dur\":5,\"args\":{\"correlation\":102,\"External id\":3}},"
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_add\",\"pid\":0,\"tid\":7,\"ts\":112,"
	"\"dur\":8,\"args\":{\"correlation\":102,\"device\":0,\"stream\":7}}]}";

static char et_path[64], out_dir[64];

static void cleanup(void)
{
	char p[128];

	unlink(et_path);
	snprintf(p, sizeof(p), "%s/bench.py", out_dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/rank-0.json", out_dir);
	unlink(p);
	rmdir(out_dir);
}

static int setup(void)
{
	if (et_path[0])
		return 0;
	snprintf(et_path, sizeof(et_path), "/tmp/orr-fuzz-et-%d.json", (int)getpid());
	snprintf(out_dir, sizeof(out_dir), "/tmp/orr-fuzz-et-%d.d", (int)getpid());
	if (mkdir(out_dir, 0700) < 0)
		return -1;
	atexit(cleanup);
	return 0;
}

static void compose(const struct orr_trace *t)
{
	struct orr_compose_options co = { .step = -1, .steps = 1, .warmup = 1 };
	struct orr_compose *c = NULL;
	struct orr_graph *g = NULL;
	struct orr_diag diag;

	if (orr_graph_build(t, NULL, &g, &diag) == 0 && orr_compose_build(g, &co, &c, &diag) == 0)
		orr_compose_write(c, out_dir, &diag);
	orr_compose_free(c);
	orr_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct orr_import_options opts = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag diag;
	FILE *f;

	if (setup() < 0 || !(f = fopen(et_path, "wb")))
		return 0;
	if (fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);
	opts.et_path = et_path;
	if (orr_trace_import_buffer("rank-0.json", kineto, sizeof(kineto) - 1, &opts, &t, &diag) ==
	    0)
		compose(t);
	orr_trace_free(t);
	return 0;
}
