/* SPDX-License-Identifier: MIT */
/* `orrery info` as text: what a trace holds, per rank, and the measured step times. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "info.h"
#include "banned.h"

static void text_capture(const struct orr_trace *t, const struct orr_rank *r)
{
	if (!orr_rank_has_capture(r))
		return;
	if (r->host != ORR_STR_NONE || r->pid >= 0) {
		printf("  process  host %s, pid %lld",
		       r->host ? cli_text(orr_trace_str(t, r->host)) : "unknown",
		       (long long)r->pid);
		if (r->local_rank >= 0)
			printf(", local rank %d", r->local_rank);
		printf("\n");
	}
	printf("  capture  %s, clock %s",
	       r->producer ? cli_text(orr_trace_str(t, r->producer)) : "unknown producer",
	       r->clock_source ? cli_text(orr_trace_str(t, r->clock_source)) : "unknown");
	if (r->cupti_version)
		printf(", CUPTI %u", r->cupti_version);
	if (r->first_step >= 0)
		printf(", steps %lld to %lld", (long long)r->first_step, (long long)r->last_step);
	printf("\n  dropped  %llu activity records, %llu events%s\n",
	       (unsigned long long)r->dropped_records, (unsigned long long)r->dropped_events,
	       r->truncated ? "; truncated: the events of its complete frames only" : "");
}

static void text_places(const struct orr_trace *t, const struct orr_rank *r,
			const struct orr_rank_stats *st)
{
	char ms[32];

	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];

		if (p->kind == ORR_PLACE_THREAD)
			printf("  thread  pid %lld tid %lld%s%s: %zu events\n", (long long)p->pid,
			       (long long)p->tid, p->name ? " " : "",
			       cli_text(orr_trace_str(t, p->name)), st->place_events[i]);
	}
	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];

		if (p->kind == ORR_PLACE_STREAM)
			printf("  stream  device %d stream %lld: %zu events, %s ms busy\n",
			       p->device, (long long)p->tid, st->place_events[i],
			       cli_ms(st->place_busy_ns[i], ms, sizeof(ms)));
	}
}

static void text_counts(const struct orr_trace *t, const struct orr_rank *r,
			const struct orr_rank_stats *st)
{
	const char *sep = "";

	printf("  events  %zu:", r->nevents);
	for (int k = 0; k < ORR_EVENT_KIND_COUNT; k++) {
		if (st->by_kind[k]) {
			printf("%s %s %zu", sep, orr_event_kind_name(k), st->by_kind[k]);
			sep = ",";
		}
	}
	printf("\n  calls  ");
	sep = "";
	for (int k = 1; k < ORR_CALL_COUNT; k++)
		if (st->by_call[k]) {
			printf("%s %s %zu", sep, orr_call_name(k), st->by_call[k]);
			sep = ",";
		}
	printf("%s\n  launches without a GPU task: %zu; GPU tasks without a launch: %zu\n",
	       *sep ? "" : " none", st->launches_without_task, st->tasks_without_launch);
	if (r->nflows)
		printf("  flows  %llu endpoints (%zu events linked through them)\n",
		       (unsigned long long)r->nflows, st->flow_linked);
	for (size_t i = 0; i < r->nskipped; i++)
		printf("%s %s %llu%s", i ? "," : "  skipped categories:",
		       cli_text(orr_trace_str(t, r->skipped[i].category)),
		       (unsigned long long)r->skipped[i].count, i + 1 == r->nskipped ? "\n" : "");
	for (size_t i = 0; i < r->ncoerced; i++) {
		const struct orr_coerced *c = &r->coerced[i];

		printf("%s %s %llu '%s' %s%s", i ? "," : "  args of another type:",
		       c->how == ORR_COERCION_IGNORED ? "ignored" : "read",
		       (unsigned long long)c->count, cli_text(orr_trace_str(t, c->key)),
		       c->how == ORR_COERCION_IGNORED ? "values" : info_coercion_name(c->how),
		       i + 1 == r->ncoerced ? "\n" : "");
	}
}

static void text_collectives(const struct orr_trace *t, const struct orr_rank *r)
{
	struct orr_coll_row *rows;
	size_t n = orr_rank_collective_rows(r, &rows);
	char ms[32];

	for (size_t i = 0; i < n; i++) {
		printf("  collective  %s: %zu kernels, %s ms, ",
		       cli_text(orr_trace_str(t, rows[i].type)), rows[i].count,
		       cli_ms(rows[i].dur_ns, ms, sizeof(ms)));
		if (rows[i].unsized == rows[i].count)
			printf("size unknown\n");
		else if (rows[i].unsized)
			printf("%lld bytes (and %zu kernels of unknown size)\n",
			       (long long)rows[i].bytes, rows[i].unsized);
		else
			printf("%lld bytes\n", (long long)rows[i].bytes);
	}
	free(rows);
	for (size_t i = 0; i < r->ncomms; i++) {
		/* An NCCL communicator from Nsight Systems knows its size, not its members. */
		printf("  communicator  '%s'%s%s size %d%s",
		       cli_text(orr_trace_str(t, r->comms[i].name)), r->comms[i].desc ? " " : "",
		       cli_text(orr_trace_str(t, r->comms[i].desc)), r->comms[i].size,
		       r->comms[i].nmembers ? " ranks" : "");
		for (uint32_t m = 0; m < r->comms[i].nmembers && m < 16; m++)
			printf("%s%d", m ? "," : " ", r->members[r->comms[i].first_member + m]);
		printf("%s\n", r->comms[i].nmembers > 16 ? ",..." : "");
	}
}

/* The execution trace attached to the rank, and how much of it is linked. */
static void text_et(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_et *et = r->et;

	if (!et)
		return;
	printf("  execution trace  %s (schema %s): %zu nodes, %zu ops and annotations; "
	       "%zu linked%s",
	       cli_text(orr_trace_str(t, et->source)), cli_text(orr_trace_str(t, et->schema)),
	       et->nnodes, et->ops, et->linked, et->exact ? " (exact)" : "");
	if (!et->linked)
		printf(" (the profiler's trace holds none of its ops: another run or step?)");
	else if (!et->exact)
		printf(" (%zu not in the profiler's trace; %zu of its %zu in the span not in the "
		       "execution trace)",
		       et->ops - et->linked, et->rank_ops - et->linked, et->rank_ops);
	if (et->sized)
		printf("; sized %zu collective kernel%s", et->sized, et->sized == 1 ? "" : "s");
	printf("\n");
}

static void text_steps(const struct orr_step *s, size_t n)
{
	char ms[32];

	for (size_t i = 0; i < n; i++) {
		if (s[i].step < 0)
			printf("  step  (no step annotations: whole capture)  %s ms\n",
			       cli_ms(s[i].end_ns - s[i].start_ns, ms, sizeof(ms)));
		else
			printf("  step  #%lld  %s ms\n", (long long)s[i].step,
			       cli_ms(s[i].end_ns - s[i].start_ns, ms, sizeof(ms)));
	}
}

void info_print_text(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel)
{
	struct orr_step *steps;
	size_t nsteps;

	printf("%s: %zu rank%s\n", cli_text(path), orr_trace_rank_count(t),
	       orr_trace_rank_count(t) == 1 ? "" : "s");
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		struct orr_rank_stats st;

		if (!orr_select_rank(sel, r->rank))
			continue;
		orr_rank_stats_count(r, &st);
		printf("\nrank %d", r->rank);
		if (r->world_size > 0)
			printf(" of %d", r->world_size);
		printf("  (%s)\n", cli_text(orr_trace_str(t, r->source)));
		text_capture(t, r);
		for (size_t d = 0; d < r->ndevices; d++)
			printf("  device  %d: %s, %d SMs, %.1f GiB\n", r->devices[d].id,
			       cli_text(orr_trace_str(t, r->devices[d].name)),
			       r->devices[d].num_sms,
			       (double)r->devices[d].total_mem_bytes / (1u << 30));
		text_places(t, r, &st);
		text_counts(t, r, &st);
		text_collectives(t, r);
		text_et(t, r);
		orr_rank_steps(t, r, &steps, &nsteps);
		text_steps(steps, orr_select_steps(sel, steps, nsteps));
		free(steps);
		orr_rank_stats_release(&st);
	}
	if (orr_trace_rank_count(t) > 1) {
		orr_trace_job_steps(t, &steps, &nsteps);
		printf("\njob (max end - min start over ranks)\n");
		text_steps(steps, orr_select_steps(sel, steps, nsteps));
		free(steps);
	}
	cli_graph_text(gs);
}
