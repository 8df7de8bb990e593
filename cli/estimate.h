/* SPDX-License-Identifier: MIT */
/*
 * cli/estimate.h — `orrery estimate`'s result and its text and JSON reports
 * (cli/estimate-report.c; docs/orrery-estimate.md).
 */
#ifndef ORRERY_CLI_ESTIMATE_H
#define ORRERY_CLI_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "orrery/estimator.h"
#include "orrery/replay.h"

/* One configuration's step: its time per step, and where the rank's GPU time went. */
struct cli_estimate_step {
	double step_ns;                 /* mean over the job's steps */
	struct orr_breakdown breakdown; /* the rank's, over those steps */
};

struct cli_estimate {
	const char *trace;
	const char *costs; /* --costs FILE, or NULL: the models fitted on trace */
	int32_t rank;
	const struct orr_gpu_spec *gpu;
	bool forward_only; /* the trace has no backward pass */
	size_t steps;      /* job steps replayed */
	size_t ranks;      /* in the trace */
	struct orr_train_config from, to;
	struct orr_retime retime;
	double measured_ns; /* the trace's own step, mean */
	struct cli_estimate_step replayed, estimated;
	struct orr_memory memory;
	int memory_err; /* orr_memory_estimate()'s, 0 */
	double tokens_per_s_per_gpu;
	double mfu; /* NAN without the GPU's peak */
};

/* `orrery estimate` (cli/cmd-estimate.c). */
int cmd_estimate(int argc, char **argv);

void cli_estimate_text(const struct cli_estimate *e);
void cli_estimate_json(const struct cli_estimate *e);

#endif
