/* SPDX-License-Identifier: MIT */
/*
 * A shared library with its own NVTX3 instance (header-only NVTX, as PyTorch's
 * libtorch_python carries one): it marks steps as torch.profiler does, a range named
 * ProfilerStep#N pushed on the thread that runs the step.
 */
#include <stdio.h>

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
