/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-replay.h — a replay against the measured trace, per rank-step and job step
 * (orrery replay; analysis/replay-rows.c).
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_REPLAY_H
#define ORRERY_ANALYSIS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-select.h"
#include "orrery/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |predicted - measured| / measured of a step; NaN when the measured time is not positive. */
double orr_step_error(const struct orr_replay_step *s);
/* One rank-step of `orrery replay`. */
struct orr_replay_row {
	int32_t rank; /* global rank */
	struct orr_replay_step s;
	double error;
	double busy_l1;
	struct orr_breakdown measured, predicted;
	struct orr_unexplained unexplained; /* over the measured window (the trust signal) */
	double unexplained_share;           /* total / measured step time; NaN when it is 0 */
	bool trust_low;                     /* unexplained_share > ORR_TRUST_MAX_UNEXPLAINED */
};

/* Everything `orrery replay` prints; path is the caller's label, borrowed. */
struct orr_replay_report {
	const char *path;
	const struct orr_graph *g;
	size_t nranks;
	struct orr_replay_row *rows; /* rank-steps, by rank then step */
	size_t nrows;
	struct orr_replay_row *job; /* job steps: s and error only */
	size_t njob;
	double mean_error, max_error;         /* over rank-steps; NaN when there is none */
	double job_mean_error, job_max_error; /* over job steps */
	size_t trust_low;                     /* rank-steps of low trust */
	double max_unexplained_share;         /* over rank-steps; NaN when there is none */
	struct orr_graph_stats stats;
};

/* The rank-steps and job steps of r that sel selects (NULL: all). */
void orr_replay_report_init(struct orr_replay_report *rep, const char *path,
			    const struct orr_replay *r, const struct orr_select *sel);
void orr_replay_report_release(struct orr_replay_report *rep);
/* The rows a table of steps shows: the job steps, or a one-rank trace's own steps. */
const struct orr_replay_row *orr_replay_report_table(const struct orr_replay_report *rep,
						     size_t *ret_n);

#ifdef __cplusplus
}
#endif

#endif
