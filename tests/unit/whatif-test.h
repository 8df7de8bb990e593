/* SPDX-License-Identifier: MIT */
/* Fixtures of the what-if unit tests (test-whatif*.c); after cmocka.h. */
#ifndef ORRERY_WHATIF_TEST_H
#define ORRERY_WHATIF_TEST_H

#include <math.h>

#include "orrery/whatif.h"

/* A small GPT: 8 layers, h 1024, 16 heads, s 1024. */
static inline struct orr_whatif_space space(void)
{
	return (struct orr_whatif_space){
		.base = { .layers = 8,
			  .hidden = 1024,
			  .heads = 16,
			  .kv_groups = 16,
			  .ffn = 4096,
			  .vocab = 50257,
			  .seq = 1024,
			  .flash_attention = true,
			  .precision = ORR_DTYPE_BF16,
			  .sequence_parallel = true,
			  .distributed_optimizer = true },
		.gpus_min = 8,
		.gpus_max = 8,
		.global_batch = 16,
		.sequence_parallel = ORR_WHATIF_AUTO,
		.distributed_optimizer = ORR_WHATIF_AUTO,
		.gpus_per_node = 8,
	};
}

static inline struct orr_whatif_context context(void)
{
	const struct orr_gpu_spec *gpu = orr_gpu_spec_by_id("a100-80gb-sxm");

	return (struct orr_whatif_context){
		.gpu = gpu,
		.costs = { .gpu = gpu, .cpu_op_ns = 5000 },
		.replayed_ns = NAN,
		.recorded_synth_ns = NAN,
	};
}

static inline struct orr_whatif_plan *plan(const struct orr_whatif_space *s)
{
	struct orr_whatif_plan *p = NULL;

	assert_int_equal(orr_whatif_plan_new(s, &p), 0);
	return p;
}

#endif
