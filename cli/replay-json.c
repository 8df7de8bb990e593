/* SPDX-License-Identifier: MIT */
/* `orrery replay --format=json`: the report of replay-report.c in the shape of docs/orrery-replay.md. */
#include <stdlib.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

static void json_breakdown(struct json_out *j, const char *key, const struct orr_breakdown *b)
{
	json_object(j, key);
	json_int(j, "exposed_compute_ns", b->exposed_compute_ns);
	json_int(j, "overlapped_ns", b->overlapped_ns);
	json_int(j, "exposed_comm_ns", b->exposed_comm_ns);
	json_int(j, "other_ns", b->other_ns);
	json_close_object(j);
}

/* The fields a rank-step and a job step share. */
static void json_step(struct json_out *j, const struct cli_row *row)
{
	json_int(j, "step", row->s.step);
	json_int(j, "measured_ns", row->s.measured_end_ns - row->s.measured_start_ns);
	json_int(j, "predicted_ns", row->s.predicted_end_ns - row->s.predicted_start_ns);
	json_double(j, "error", row->error);
	json_int(j, "measured_start_ns", row->s.measured_start_ns);
	json_int(j, "predicted_start_ns", row->s.predicted_start_ns);
}

static void json_ranks(struct json_out *j, const struct cli_report *rep)
{
	size_t i = 0;

	json_array(j, "ranks");
	for (size_t k = 0; k < rep->nranks; k++) {
		int32_t rank = orr_graph_get_rank(rep->g, k)->rank->rank;

		json_object(j, NULL);
		json_int(j, "rank", rank);
		json_array(j, "steps");
		for (; i < rep->nrows && rep->rows[i].rank == rank; i++) {
			json_object(j, NULL);
			json_step(j, &rep->rows[i]);
			json_double(j, "busy_l1", rep->rows[i].busy_l1);
			json_object(j, "breakdown");
			json_breakdown(j, "measured", &rep->rows[i].measured);
			json_breakdown(j, "predicted", &rep->rows[i].predicted);
			json_close_object(j);
			json_close_object(j);
		}
		json_close_array(j);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_summary(struct json_out *j, const struct cli_report *rep)
{
	json_object(j, "summary");
	json_int(j, "rank_steps", (int64_t)rep->nrows);
	json_double(j, "mean_error", rep->mean_error);
	json_double(j, "max_error", rep->max_error);
	json_int(j, "job_steps", (int64_t)rep->njob);
	json_double(j, "job_mean_error", rep->job_mean_error);
	json_double(j, "job_max_error", rep->job_max_error);
	json_close_object(j);
}

static void json_edges(struct json_out *j, const struct orr_graph_stats *st)
{
	static const struct {
		const char *key;
		int kind;
	} kinds[] = {
		{ "D2", ORR_DEP_LAUNCH },     { "D4", ORR_DEP_CROSS_STREAM },
		{ "D5", ORR_DEP_SYNC },       { "D6", ORR_DEP_CROSS_THREAD },
		{ "D7", ORR_DEP_CROSS_RANK },
	};

	json_object(j, "edges");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_object(j, kinds[i].key);
		json_str(j, "name", orr_dep_kind_name(kinds[i].kind));
		json_int(j, "count", (int64_t)st->edges[kinds[i].kind]);
		json_int(j, "inferred", (int64_t)st->inferred[kinds[i].kind]);
		json_close_object(j);
	}
	json_close_object(j);
}

static void json_graph(struct json_out *j, const struct orr_graph_stats *st)
{
	json_object(j, "graph");
	json_object(j, "tasks");
	json_int(j, "cpu", (int64_t)st->tasks[ORR_TASK_CPU]);
	json_int(j, "gpu", (int64_t)st->tasks[ORR_TASK_GPU]);
	json_close_object(j);
	json_edges(j, st);
	json_object(j, "waits");
	json_int(j, "stream", (int64_t)st->waits[ORR_WAIT_STREAM]);
	json_int(j, "device", (int64_t)st->waits[ORR_WAIT_DEVICE]);
	json_int(j, "event", (int64_t)st->waits[ORR_WAIT_EVENT]);
	json_int(j, "task", (int64_t)st->waits[ORR_WAIT_TASK]);
	json_int(j, "record", (int64_t)st->waits[ORR_WAIT_RECORD]);
	json_int(j, "dropped", (int64_t)st->waits_dropped);
	json_close_object(j);
	json_int(j, "polls_folded", (int64_t)st->polls);
	json_int(j, "nested_calls_folded", (int64_t)st->folded_calls);
	json_int(j, "gpu_tasks_without_launch", (int64_t)st->unlaunched);
	json_object(j, "collectives");
	json_int(j, "coupled", (int64_t)st->groups);
	json_int(j, "rejected", (int64_t)st->groups_rejected);
	json_int(j, "alone", (int64_t)st->collectives_alone);
	json_close_object(j);
	json_close_object(j);
}

void cli_report_json(const struct cli_report *rep)
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
	json_graph(&j, &rep->stats);
	json_end(&j);
}
