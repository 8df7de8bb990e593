/* SPDX-License-Identifier: MIT */
/* `orrery info --format=json`: what a trace holds, in the shape of docs/orrery-info.md. */
#include <stdlib.h>

#include "orrery/estimator.h"

#include "cli.h"
#include "info.h"
#include "banned.h"

static void json_steps(struct json_out *j, const char *key, const struct orr_step *s, size_t n)
{
	json_array(j, key);
	for (size_t i = 0; i < n; i++) {
		json_object(j, NULL);
		json_int(j, "step", s[i].step);
		json_int(j, "start_ns", s[i].start_ns);
		json_int(j, "measured_ns", s[i].end_ns - s[i].start_ns);
		json_close_object(j);
	}
	json_close_array(j);
}

/* The hardware table's entry of a device's name (docs/hardware.md), or null. */
static void json_spec(struct json_out *j, const char *device)
{
	const struct orr_gpu_spec *g = orr_gpu_spec_match(device);

	if (!g) {
		json_str(j, "spec", NULL);
		return;
	}
	json_object(j, "spec");
	json_str(j, "id", g->id);
	json_object(j, "peak_flops");
	for (int d = 0; d < ORR_DTYPE_COUNT; d++)
		json_double_exact(j, orr_dtype_name((enum orr_dtype)d), g->peak_flops[d]);
	json_close_object(j);
	json_double_exact(j, "hbm_bytes_per_s", g->hbm_bytes_per_s);
	json_close_object(j);
}

static void json_places(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r,
			const struct orr_rank_stats *st)
{
	json_array(j, "devices");
	for (size_t i = 0; i < r->ndevices; i++) {
		json_object(j, NULL);
		json_int(j, "id", r->devices[i].id);
		json_str(j, "name", orr_trace_str(t, r->devices[i].name));
		json_int(j, "sms", r->devices[i].num_sms);
		json_int(j, "memory_bytes", r->devices[i].total_mem_bytes);
		json_spec(j, orr_trace_str(t, r->devices[i].name));
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "threads");
	for (size_t i = 0; i < r->nplaces; i++) {
		if (r->places[i].kind != ORR_PLACE_THREAD)
			continue;
		json_object(j, NULL);
		json_int(j, "pid", r->places[i].pid);
		json_int(j, "tid", r->places[i].tid);
		json_str(j, "name", orr_trace_str(t, r->places[i].name));
		json_int(j, "events", (int64_t)st->place_events[i]);
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "streams");
	for (size_t i = 0; i < r->nplaces; i++) {
		if (r->places[i].kind != ORR_PLACE_STREAM)
			continue;
		json_object(j, NULL);
		json_int(j, "device", r->places[i].device);
		json_int(j, "stream", r->places[i].tid);
		json_int(j, "events", (int64_t)st->place_events[i]);
		json_int(j, "busy_ns", st->place_busy_ns[i]);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_counts(struct json_out *j, const struct orr_rank *r,
			const struct orr_rank_stats *st)
{
	json_object(j, "events");
	for (int k = 0; k < ORR_EVENT_KIND_COUNT; k++)
		json_int(j, orr_event_kind_name(k), (int64_t)st->by_kind[k]);
	json_int(j, "total", (int64_t)r->nevents);
	json_close_object(j);
	json_object(j, "calls");
	for (int k = 0; k < ORR_CALL_COUNT; k++)
		json_int(j, orr_call_name(k), (int64_t)st->by_call[k]);
	json_close_object(j);
	json_int(j, "launches_without_gpu_task", (int64_t)st->launches_without_task);
	json_int(j, "gpu_tasks_without_launch", (int64_t)st->tasks_without_launch);
	json_int(j, "flows", (int64_t)r->nflows);
	json_int(j, "flow_linked_events", (int64_t)st->flow_linked);
}

static void json_collectives(struct json_out *j, const struct orr_trace *t,
			     const struct orr_rank *r)
{
	struct orr_coll_row *rows;
	size_t nrows;

	nrows = orr_rank_collective_rows(r, &rows);
	json_array(j, "collectives");
	for (size_t i = 0; i < nrows; i++) {
		json_object(j, NULL);
		json_str(j, "type", orr_trace_str(t, rows[i].type));
		json_int(j, "count", (int64_t)rows[i].count);
		json_int(j, "duration_ns", rows[i].dur_ns);
		if (rows[i].unsized == rows[i].count)
			json_str(j, "bytes", NULL);
		else
			json_int(j, "bytes", rows[i].bytes);
		json_int(j, "unsized", (int64_t)rows[i].unsized);
		json_close_object(j);
	}
	json_close_array(j);
	free(rows);
	json_array(j, "communicators");
	for (size_t i = 0; i < r->ncomms; i++) {
		json_object(j, NULL);
		json_str(j, "name", orr_trace_str(t, r->comms[i].name));
		json_str(j, "desc", orr_trace_str(t, r->comms[i].desc));
		json_int(j, "size", r->comms[i].size);
		json_array(j, "ranks");
		for (uint32_t m = 0; m < r->comms[i].nmembers; m++)
			json_int(j, NULL, r->members[r->comms[i].first_member + m]);
		json_close_array(j);
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "skipped");
	for (size_t i = 0; i < r->nskipped; i++) {
		json_object(j, NULL);
		json_str(j, "category", orr_trace_str(t, r->skipped[i].category));
		json_int(j, "count", (int64_t)r->skipped[i].count);
		json_close_object(j);
	}
	json_close_array(j);
	json_array(j, "coerced");
	for (size_t i = 0; i < r->ncoerced; i++) {
		json_object(j, NULL);
		json_str(j, "key", orr_trace_str(t, r->coerced[i].key));
		json_str(j, "how", info_coercion_name(r->coerced[i].how));
		json_int(j, "count", (int64_t)r->coerced[i].count);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_capture(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r)
{
	if (!orr_rank_has_capture(r))
		return;
	json_object(j, "capture");
	json_str(j, "host", orr_trace_str(t, r->host));
	json_int(j, "pid", r->pid);
	json_int(j, "local_rank", r->local_rank);
	json_str(j, "producer", orr_trace_str(t, r->producer));
	json_str(j, "clock_source", orr_trace_str(t, r->clock_source));
	json_int(j, "cupti_version", r->cupti_version);
	json_int(j, "dropped_records", (int64_t)r->dropped_records);
	json_int(j, "dropped_events", (int64_t)r->dropped_events);
	json_int(j, "first_step", r->first_step);
	json_int(j, "last_step", r->last_step);
	json_bool(j, "truncated", r->truncated);
	json_close_object(j);
}

static void json_et(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_et *et = r->et;

	if (!et)
		return;
	json_object(j, "execution_trace");
	json_str(j, "source", orr_trace_str(t, et->source));
	json_str(j, "schema", orr_trace_str(t, et->schema));
	json_int(j, "nodes", (int64_t)et->nnodes);
	json_int(j, "ops", (int64_t)et->ops);
	json_int(j, "linked", (int64_t)et->linked);
	json_int(j, "rank_ops", (int64_t)et->rank_ops);
	json_bool(j, "exact", et->exact);
	json_int(j, "sized", (int64_t)et->sized);
	json_close_object(j);
}

static void json_rank(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r,
		      const struct orr_select *sel)
{
	struct orr_rank_stats st;
	struct orr_step *steps;
	size_t nsteps;

	orr_rank_stats_count(r, &st);
	json_object(j, NULL);
	json_int(j, "rank", r->rank);
	if (r->world_size > 0)
		json_int(j, "world_size", r->world_size);
	else
		json_str(j, "world_size", NULL); /* the trace does not say */
	json_str(j, "source", orr_trace_str(t, r->source));
	json_str(j, "backend", orr_trace_str(t, r->backend));
	json_capture(j, t, r);
	json_places(j, t, r, &st);
	json_counts(j, r, &st);
	json_collectives(j, t, r);
	json_et(j, t, r);
	orr_rank_steps(t, r, &steps, &nsteps);
	json_steps(j, "steps", steps, orr_select_steps(sel, steps, nsteps));
	free(steps);
	json_close_object(j);
	orr_rank_stats_release(&st);
}

void info_print_json(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel)
{
	struct json_out j;
	struct orr_step *steps;
	size_t nsteps;

	json_begin(&j, stdout);
	json_str(&j, "trace", path);
	json_array(&j, "ranks");
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		if (orr_select_rank(sel, orr_trace_get_rank(t, i)->rank))
			json_rank(&j, t, orr_trace_get_rank(t, i), sel);
	json_close_array(&j);
	orr_trace_job_steps(t, &steps, &nsteps);
	json_steps(&j, "job", steps, orr_select_steps(sel, steps, nsteps));
	free(steps);
	cli_graph_json(&j, gs);
	json_end(&j);
}
