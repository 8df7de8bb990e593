/* SPDX-License-Identifier: MIT */
/* `orrery replay --format=json`: the report of replay-report.c in the shape of docs/orrery-replay.md. */
#include <stdlib.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

void cli_json_breakdown(struct json_out *j, const char *key, const struct orr_breakdown *b)
{
	json_object(j, key);
	json_int(j, "exposed_compute_ns", b->exposed_compute_ns);
	json_int(j, "overlapped_ns", b->overlapped_ns);
	json_int(j, "exposed_comm_ns", b->exposed_comm_ns);
	json_int(j, "exposed_comm_wait_ns", b->exposed_wait_ns);
	json_int(j, "other_ns", b->other_ns);
	json_close_object(j);
}

/* The fields a rank-step and a job step share. */
static void json_step(struct json_out *j, const struct orr_replay_row *row)
{
	json_int(j, "step", row->s.step);
	json_int(j, "measured_ns", row->s.measured_end_ns - row->s.measured_start_ns);
	json_int(j, "predicted_ns", row->s.predicted_end_ns - row->s.predicted_start_ns);
	json_double(j, "error", row->error);
	json_int(j, "measured_start_ns", row->s.measured_start_ns);
	json_int(j, "predicted_start_ns", row->s.predicted_start_ns);
}

/* The trust signal of a rank-step. */
static void json_trust(struct json_out *j, const struct orr_replay_row *row)
{
	json_object(j, "unexplained_ns");
	json_int(j, "gpu_idle", row->unexplained.gpu_idle_ns);
	json_int(j, "cpu_blocked", row->unexplained.cpu_blocked_ns);
	json_int(j, "total", row->unexplained.total_ns);
	json_close_object(j);
	json_double(j, "unexplained_share", row->unexplained_share);
	json_str(j, "trust", row->trust_low ? "low" : "high");
}

static void json_ranks(struct json_out *j, const struct orr_replay_report *rep)
{
	size_t i = 0;

	json_array(j, "ranks");
	for (size_t k = 0; k < rep->nranks; k++) {
		int32_t rank = orr_graph_get_rank(rep->g, k)->rank->rank;

		if (i >= rep->nrows || rep->rows[i].rank != rank)
			continue; /* not selected (--ranks, --steps) */
		json_object(j, NULL);
		json_int(j, "rank", rank);
		json_array(j, "steps");
		for (; i < rep->nrows && rep->rows[i].rank == rank; i++) {
			json_object(j, NULL);
			json_step(j, &rep->rows[i]);
			json_double(j, "busy_l1", rep->rows[i].busy_l1);
			json_object(j, "breakdown");
			cli_json_breakdown(j, "measured", &rep->rows[i].measured);
			cli_json_breakdown(j, "predicted", &rep->rows[i].predicted);
			json_close_object(j);
			json_trust(j, &rep->rows[i]);
			json_close_object(j);
		}
		json_close_array(j);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_summary(struct json_out *j, const struct orr_replay_report *rep)
{
	json_object(j, "summary");
	json_int(j, "rank_steps", (int64_t)rep->nrows);
	json_double(j, "mean_error", rep->mean_error);
	json_double(j, "max_error", rep->max_error);
	json_int(j, "job_steps", (int64_t)rep->njob);
	json_double(j, "job_mean_error", rep->job_mean_error);
	json_double(j, "job_max_error", rep->job_max_error);
	json_int(j, "trust_low_steps", (int64_t)rep->trust_low);
	json_double(j, "max_unexplained_share", rep->max_unexplained_share);
	json_double(j, "trust_max_unexplained_share", ORR_TRUST_MAX_UNEXPLAINED);
	json_close_object(j);
}

void cli_report_json(const struct orr_replay_report *rep)
{
	struct json_out j;

	json_begin(&j, stdout);
	json_str(&j, "trace", rep->path);
	json_ranks(&j, rep);
	json_array(&j, "job");
	for (size_t k = 0; k < rep->njob; k++) {
		json_object(&j, NULL);
		json_step(&j, &rep->job[k]);
		json_close_object(&j);
	}
	json_close_array(&j);
	json_summary(&j, rep);
	cli_graph_json(&j, &rep->stats);
	json_end(&j);
}
