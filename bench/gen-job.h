/* SPDX-License-Identifier: MIT */
/*
 * bench/gen-job.h — a synthetic multi-rank LLM training job built directly in memory (no
 * file, no parser), for the graph and replay benchmark (bench-replay) and its unit test.
 *
 * The job: `ranks` GPUs, tensor parallel over groups of `tp` consecutive ranks and data
 * parallel over the ranks with the same TP index.  Every rank runs the same program of
 * `steps` training steps of a GPT-style model whose layer count is chosen so that a rank
 * has about `events_per_rank` events:
 *
 *   main thread   ProfilerStep#k annotation; the batch copied host-to-device on the copy
 *                 stream; the forward pass (per operator: an op, a cudaLaunchKernel and its
 *                 kernel; a TP all-reduce after attention and after the MLP); idle while
 *                 the autograd thread runs the backward pass; the optimizer, a DP
 *                 all-gather of the parameters, zero_grad, and a blocking
 *                 cudaStreamSynchronize of the compute stream that ends the step.
 *   autograd      the backward pass: the layers reversed, two GEMMs per forward GEMM, TP
 *                 all-reduces, and a DP reduce-scatter per bucket of two layers.
 *   GPU           a compute stream, one NCCL stream per process group (TP, DP) as
 *                 ProcessGroupNCCL has, and a copy stream.
 *
 * Cross-stream waits are cudaEventRecord + cudaStreamWaitEvent with the wait's cuda_sync
 * record (stream, wait_on_stream, event_record_corr, event_id).  NCCL kernels are launched
 * by cuLaunchKernelEx (a driver call) and carry a collective entry whose (pg_name,
 * sequence) is the same on every member; the collectives of a group come in the same order
 * on every member.  Ops carry no tensor shapes.
 *
 * Times are integer ns on one clock shared by every rank, from a small simulation: a
 * kernel starts after its launch call starts and after its stream's previous task; a
 * collective starts (arrives) when its stream is free, and every member's kernel ends at
 * about the same time, the latest arrival plus a transfer time, so the last to arrive has
 * the shortest duration.  Kernel times are drawn once per kind (GEMMs 50-500 us,
 * elementwise 2-20 us) with a small jitter per rank, which skews arrivals.
 *
 * The same options give the same trace.  Every rank has the same number of events.
 */
#ifndef ORRERY_BENCH_GEN_JOB_H
#define ORRERY_BENCH_GEN_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/trace.h"

struct gen_job_options {
	size_t ranks;           /* world size, >= 1 */
	size_t events_per_rank; /* target; the result is within a few % of it */
	size_t steps;           /* ProfilerStep#1 .. #steps, >= 1 */
	size_t tp;              /* TP group size, dividing ranks; 0: the largest of 8, 4, 2, 1 */
	bool no_copy_stream;    /* copy batches on the compute stream */
	uint64_t seed;
};

#define GEN_JOB_OPTIONS_DEFAULT                                                        \
	{                                                                              \
		.ranks = 8, .events_per_rank = 100000, .steps = 10, .tp = 0, .seed = 1 \
	}

/*
 * Builds the job.  Returns 0, or -EINVAL when the options are out of range or
 * events_per_rank is too small for one layer per step (about 200 events a step).
 */
int gen_job(const struct gen_job_options *o, struct orr_trace **ret_trace);

#endif
