/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as one Kineto trace file in memory (plain JSON, or any
 * container the importer opens), then the step times, which walk every event.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "orrery/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct orr_import_options opts = { .max_bytes = 1u << 20 };
	struct orr_trace *t = NULL;
	struct orr_diag diag;
	struct orr_step *steps;
	size_t n;

	if (orr_trace_import_buffer("fuzz.json", data, size, &opts, &t, &diag) != 0)
		return 0;
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		if (orr_rank_steps(t, orr_trace_get_rank(t, i), &steps, &n) == 0)
			free(steps);
	}
	if (orr_trace_job_steps(t, &steps, &n) == 0)
		free(steps);
	orr_trace_free(t);
	return 0;
}
