/* SPDX-License-Identifier: MIT */
/*
 * A job that uses NVTX through two shared libraries, each with its own NVTX3 instance,
 * for `orrery record` without a GPU (tests/golden/run-record-nvtx.sh):
 *
 *   nvtx-job STEPS NOPS [cuda-at STEP] [nccl COMM NRANKS RANK BYTES]
 *   nvtx-job bench N
 *
 * runs STEPS steps (ProfilerStep#0 ..), each with NOPS ops on each of two threads.
 * `cuda-at STEP` calls the CUDA injection's InitializeInjection() before that step, as
 * the CUDA driver does at cuInit (the library named by CUDA_INJECTION64_PATH): NVTX
 * ranges came before it.  Without it the job never touches CUDA.  `nccl` creates an
 * NCCL communicator before the steps and adds an all-reduce to every step, as NCCL's
 * ranges with their payloads.  `bench` times N push/pop pairs on one thread and prints
 * the nanoseconds per pair, of wall time and of the thread's CPU time: the cost of an
 * NVTX range to the job, with the tracer as NVTX_INJECTION64_PATH or without any
 * injection.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx-job.h"

static int cuda_init(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*init)(void);

	if (!h) {
		fprintf(stderr, "nvtx-job: cannot load CUDA_INJECTION64_PATH '%s'\n",
			path ? path : "");
		return 1;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init || init() != 1) {
		fprintf(stderr, "nvtx-job: InitializeInjection failed\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int steps, nops, cuda_at = -1, nranks = 0, rank = 0;
	uint64_t comm = 0, bytes = 0;

	if (argc == 3 && !strcmp(argv[1], "bench")) {
		int64_t n = atoll(argv[2]), cpu = 0, wall;

		if (n <= 0)
			return 2;
		wall = nvtx_steps_bench(n, &cpu);
		printf("%.1f ns per push/pop pair (%lld pairs), %.1f ns of the thread's CPU\n",
		       (double)wall / (double)n, (long long)n, (double)cpu / (double)n);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: nvtx-job STEPS NOPS [cuda-at STEP] [nccl COMM NRANKS "
				"RANK BYTES]\n");
		return 2;
	}
	steps = atoi(argv[1]);
	nops = atoi(argv[2]);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "cuda-at") && i + 1 < argc) {
			cuda_at = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "nccl") && i + 4 < argc) {
			comm = strtoull(argv[i + 1], NULL, 0);
			nranks = atoi(argv[i + 2]);
			rank = atoi(argv[i + 3]);
			bytes = strtoull(argv[i + 4], NULL, 0);
			i += 4;
		} else {
			fprintf(stderr, "nvtx-job: bad argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (nranks)
		nvtx_ops_nccl_init(comm, nranks, rank);
	for (int s = 0; s < steps; s++) {
		if (s == cuda_at && cuda_init())
			return 1;
		nvtx_steps_begin(s);
		nvtx_ops_run(s, nops);
		if (nranks)
			nvtx_ops_allreduce(comm, bytes);
		nvtx_steps_end();
	}
	return 0;
}
