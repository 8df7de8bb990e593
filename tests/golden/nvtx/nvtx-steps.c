/* SPDX-License-Identifier: MIT */
/*
 * A shared library with its own NVTX3 instance (header-only NVTX, as PyTorch's
 * libtorch_python carries one): it marks steps as torch.profiler does, a range named
 * ProfilerStep#N pushed on the thread that runs the step.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

#include "nvtx-job.h"

void nvtx_steps_begin(int step)
{
	char name[64];

	snprintf(name, sizeof(name), "ProfilerStep#%d", step);
	nvtxRangePushA(name);
}

void nvtx_steps_end(void)
{
	nvtxRangePop();
}

static int64_t ns_of(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t nvtx_steps_bench(int64_t n, int64_t *ret_cpu_ns)
{
	static const char name[] = "aten::mm, seq = 12, op_id = 3, sizes = [[4, 8], [8, 2]], "
				   "input_op_ids = [(0, 0), (0, 0)]";
	int64_t wall, cpu;

	nvtxRangePushA(name); /* the first call loads the injection: not timed */
	nvtxRangePop();
	wall = ns_of(CLOCK_MONOTONIC);
	cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
	for (int64_t i = 0; i < n; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
	*ret_cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu;
	return ns_of(CLOCK_MONOTONIC) - wall;
}
