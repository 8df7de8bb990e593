/* SPDX-License-Identifier: MIT */
/* Fixtures of the synthesized step's unit tests (test-estimator-synth*.c); after cmocka.h. */
#ifndef ORRERY_SYNTH_TEST_H
#define ORRERY_SYNTH_TEST_H

#include <stdint.h>

#include "orrery/estimator.h"

/*
 * A small GPT of `layers` layers: h 1024, 16 heads, s 1024, on 2 x 2 x 2 GPUs (TP, PP,
 * DP), 8 micro-batches of 2, flash attention, bf16, no recompute.
 */
static inline struct orr_train_config small_gpt(int64_t layers)
{
	return (struct orr_train_config){
		.layers = layers,
		.hidden = 1024,
		.heads = 16,
		.kv_groups = 16,
		.ffn = 4096,
		.vocab = 51200,
		.seq = 1024,
		.micro_batch = 2,
		.micro_batches = 8,
		.tp = 2,
		.pp = 2,
		.dp = 2,
		.cp = 1,
		.vpp = 1,
		.flash_attention = true,
		.recompute = ORR_RECOMPUTE_NONE,
		.precision = ORR_DTYPE_BF16,
	};
}

/* No fitted costs: the hardware table's A100 80GB, 5 us of launch per kernel. */
static inline struct orr_synth_costs table_costs(void)
{
	return (struct orr_synth_costs){
		.gpu = orr_gpu_spec_by_id("a100-80gb-sxm"),
		.cpu_op_ns = 5000,
	};
}

#endif
