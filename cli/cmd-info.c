/* SPDX-License-Identifier: MIT */
/* orrery info: what a trace holds, per rank, and the measured step times. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "orrery/graph.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery info [--format=text|json] TRACE\n\n"
	"Reads TRACE (a Kineto/PyTorch-profiler .json, .json.gz or .json.zst file, a native\n"
	"file .orr, a directory of per-rank files, or a .tar/.tar.gz/.tar.zst of them) and\n"
	"prints, per rank, what a native file records of its process and capture (host, pid,\n"
	"producer, clock, dropped records), the devices, threads and streams, event counts by\n"
	"kind, launches without a GPU task and GPU tasks without a launch, collectives by\n"
	"type, and the measured step times; for several ranks also the job step times; and\n"
	"what its execution graph holds: tasks, dependencies by kind and how many of them\n"
	"were inferred by a heuristic.\n\n"
	"  --format=FMT   text (default) or json (docs/orrery-info.md)\n"
	"  -h, --help     this help\n";

/* Per-rank numbers that take a pass over the events. */
struct rank_stats {
	size_t by_kind[ORR_EVENT_KIND_COUNT];
	size_t by_call[ORR_CALL_COUNT];
	size_t *place_events;
	int64_t *place_busy_ns;
	size_t launches_without_task, tasks_without_launch, flow_linked;
};

struct coll_row {
	uint32_t type;
	size_t count;
	int64_t dur_ns, bytes;
};

static int cmp_i64p(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static bool has(const int64_t *v, size_t n, int64_t key)
{
	return n && bsearch(&key, v, n, sizeof(*v), cmp_i64p) != NULL;
}

static bool is_gpu_task(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET;
}

static bool is_launch(const struct orr_event *e)
{
	return (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
	       (e->sub == ORR_CALL_LAUNCH || e->sub == ORR_CALL_GRAPH_LAUNCH ||
		e->sub == ORR_CALL_MEMCPY || e->sub == ORR_CALL_MEMSET);
}

/* Launches and GPU tasks are matched by correlation id. */
static void match_launches(const struct orr_rank *r, struct rank_stats *st)
{
	int64_t *calls = NULL, *tasks = NULL;
	size_t ncalls = 0, ccap = 0, ntasks = 0, tcap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if ((e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
		    e->correlation >= 0)
			ORR_VEC_PUSH(calls, ncalls, ccap, e->correlation);
		else if (is_gpu_task(e) && e->correlation >= 0)
			ORR_VEC_PUSH(tasks, ntasks, tcap, e->correlation);
	}
	if (ncalls)
		qsort(calls, ncalls, sizeof(*calls), cmp_i64p);
	if (ntasks)
		qsort(tasks, ntasks, sizeof(*tasks), cmp_i64p);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (is_launch(e) && (e->correlation < 0 || !has(tasks, ntasks, e->correlation)))
			st->launches_without_task++;
		else if (is_gpu_task(e) &&
			 (e->correlation < 0 || !has(calls, ncalls, e->correlation)))
			st->tasks_without_launch++;
	}
	free(calls);
	free(tasks);
}

static void rank_stats(const struct orr_rank *r, struct rank_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->place_events = orr_xcalloc(r->nplaces, sizeof(size_t));
	st->place_busy_ns = orr_xcalloc(r->nplaces, sizeof(int64_t));
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		st->by_kind[e->kind]++;
		if (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER)
			st->by_call[e->sub]++;
		st->place_events[e->place]++;
		if (is_gpu_task(e))
			st->place_busy_ns[e->place] += e->dur_ns;
		st->flow_linked += (e->flags & ORR_EVENT_F_FLOW_LINKED) != 0;
	}
	match_launches(r, st);
}

static void rank_stats_release(struct rank_stats *st)
{
	free(st->place_events);
	free(st->place_busy_ns);
}

/* NCCL kernels by collective type, in order of first appearance. */
static size_t collective_rows(const struct orr_rank *r, struct coll_row **ret)
{
	struct coll_row *rows = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct orr_collective *c;
		size_t k = 0;

		if (e->kind != ORR_EVENT_KERNEL || e->coll == ORR_NONE)
			continue;
		c = &r->collectives[e->coll];
		while (k < n && rows[k].type != c->type)
			k++;
		if (k == n)
			ORR_VEC_PUSH(rows, n, cap, ((struct coll_row){ .type = c->type }));
		rows[k].count++;
		rows[k].dur_ns += e->dur_ns;
		if (c->in_bytes > 0)
			rows[k].bytes += c->in_bytes;
	}
	*ret = rows;
	return n;
}

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

static void json_places(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r,
			const struct rank_stats *st)
{
	json_array(j, "devices");
	for (size_t i = 0; i < r->ndevices; i++) {
		json_object(j, NULL);
		json_int(j, "id", r->devices[i].id);
		json_str(j, "name", orr_trace_str(t, r->devices[i].name));
		json_int(j, "sms", r->devices[i].num_sms);
		json_int(j, "memory_bytes", r->devices[i].total_mem_bytes);
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

static void json_counts(struct json_out *j, const struct orr_rank *r, const struct rank_stats *st)
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
	struct coll_row *rows;
	size_t nrows;

	nrows = collective_rows(r, &rows);
	json_array(j, "collectives");
	for (size_t i = 0; i < nrows; i++) {
		json_object(j, NULL);
		json_str(j, "type", orr_trace_str(t, rows[i].type));
		json_int(j, "count", (int64_t)rows[i].count);
		json_int(j, "duration_ns", rows[i].dur_ns);
		json_int(j, "bytes", rows[i].bytes);
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
}

/* A rank read from a native file knows its process and how the capture went. */
static bool has_capture(const struct orr_rank *r)
{
	return r->producer != ORR_STR_NONE || r->host != ORR_STR_NONE || r->pid >= 0;
}

static void json_capture(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r)
{
	if (!has_capture(r))
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

static void json_rank(struct json_out *j, const struct orr_trace *t, const struct orr_rank *r)
{
	struct rank_stats st;
	struct orr_step *steps;
	size_t nsteps;

	rank_stats(r, &st);
	json_object(j, NULL);
	json_int(j, "rank", r->rank);
	json_int(j, "world_size", r->world_size);
	json_str(j, "source", orr_trace_str(t, r->source));
	json_str(j, "backend", orr_trace_str(t, r->backend));
	json_capture(j, t, r);
	json_places(j, t, r, &st);
	json_counts(j, r, &st);
	json_collectives(j, t, r);
	orr_rank_steps(t, r, &steps, &nsteps);
	json_steps(j, "steps", steps, nsteps);
	free(steps);
	json_close_object(j);
	rank_stats_release(&st);
}

static void print_json(const char *path, const struct orr_trace *t,
		       const struct orr_graph_stats *gs)
{
	struct json_out j;
	struct orr_step *steps;
	size_t nsteps;

	json_begin(&j, stdout);
	json_str(&j, "trace", path);
	json_array(&j, "ranks");
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		json_rank(&j, t, orr_trace_get_rank(t, i));
	json_close_array(&j);
	orr_trace_job_steps(t, &steps, &nsteps);
	json_steps(&j, "job", steps, nsteps);
	free(steps);
	cli_graph_json(&j, gs);
	json_end(&j);
}

static void text_capture(const struct orr_trace *t, const struct orr_rank *r)
{
	if (!has_capture(r))
		return;
	if (r->host != ORR_STR_NONE || r->pid >= 0) {
		printf("  process  host %s, pid %lld",
		       r->host ? orr_trace_str(t, r->host) : "unknown", (long long)r->pid);
		if (r->local_rank >= 0)
			printf(", local rank %d", r->local_rank);
		printf("\n");
	}
	printf("  capture  %s, clock %s",
	       r->producer ? orr_trace_str(t, r->producer) : "unknown producer",
	       r->clock_source ? orr_trace_str(t, r->clock_source) : "unknown");
	if (r->cupti_version)
		printf(", CUPTI %u", r->cupti_version);
	if (r->first_step >= 0)
		printf(", steps %lld to %lld", (long long)r->first_step, (long long)r->last_step);
	printf("\n  dropped  %llu activity records, %llu events%s\n",
	       (unsigned long long)r->dropped_records, (unsigned long long)r->dropped_events,
	       r->truncated ? "; truncated: the events of its complete frames only" : "");
}

static void text_places(const struct orr_trace *t, const struct orr_rank *r,
			const struct rank_stats *st)
{
	char ms[32];

	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];

		if (p->kind == ORR_PLACE_THREAD)
			printf("  thread  pid %lld tid %lld%s%s: %zu events\n", (long long)p->pid,
			       (long long)p->tid, p->name ? " " : "", orr_trace_str(t, p->name),
			       st->place_events[i]);
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
			const struct rank_stats *st)
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
		printf("%s %s %llu%s",
		       i ? "," : "  skipped categories:", orr_trace_str(t, r->skipped[i].category),
		       (unsigned long long)r->skipped[i].count, i + 1 == r->nskipped ? "\n" : "");
}

static void text_collectives(const struct orr_trace *t, const struct orr_rank *r)
{
	struct coll_row *rows;
	size_t n = collective_rows(r, &rows);
	char ms[32];

	for (size_t i = 0; i < n; i++)
		printf("  collective  %s: %zu kernels, %s ms, %lld bytes\n",
		       orr_trace_str(t, rows[i].type), rows[i].count,
		       cli_ms(rows[i].dur_ns, ms, sizeof(ms)), (long long)rows[i].bytes);
	free(rows);
	for (size_t i = 0; i < r->ncomms; i++) {
		printf("  communicator  '%s'%s%s size %d ranks", orr_trace_str(t, r->comms[i].name),
		       r->comms[i].desc ? " " : "", orr_trace_str(t, r->comms[i].desc),
		       r->comms[i].size);
		for (uint32_t m = 0; m < r->comms[i].nmembers && m < 16; m++)
			printf("%s%d", m ? "," : " ", r->members[r->comms[i].first_member + m]);
		printf("%s\n", r->comms[i].nmembers > 16 ? ",..." : "");
	}
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

static void print_text(const char *path, const struct orr_trace *t,
		       const struct orr_graph_stats *gs)
{
	struct orr_step *steps;
	size_t nsteps;

	printf("%s: %zu rank%s\n", path, orr_trace_rank_count(t),
	       orr_trace_rank_count(t) == 1 ? "" : "s");
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		struct rank_stats st;

		rank_stats(r, &st);
		printf("\nrank %d", r->rank);
		if (r->world_size > 0)
			printf(" of %d", r->world_size);
		printf("  (%s)\n", orr_trace_str(t, r->source));
		text_capture(t, r);
		for (size_t d = 0; d < r->ndevices; d++)
			printf("  device  %d: %s, %d SMs, %.1f GiB\n", r->devices[d].id,
			       orr_trace_str(t, r->devices[d].name), r->devices[d].num_sms,
			       (double)r->devices[d].total_mem_bytes / (1u << 30));
		text_places(t, r, &st);
		text_counts(t, r, &st);
		text_collectives(t, r);
		orr_rank_steps(t, r, &steps, &nsteps);
		text_steps(steps, nsteps);
		free(steps);
		rank_stats_release(&st);
	}
	if (orr_trace_rank_count(t) > 1) {
		orr_trace_job_steps(t, &steps, &nsteps);
		printf("\njob (max end - min start over ranks)\n");
		text_steps(steps, nsteps);
		free(steps);
	}
	cli_graph_text(gs);
}

static void warn(void *data, const char *msg)
{
	fprintf(stderr, "orrery: warning: %s\n", msg);
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct orr_import_options iopts = { .warn = warn };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_graph_stats gs;
	struct orr_diag diag;
	int format = CLI_FORMAT_TEXT, c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = cli_parse_format(optarg, false);
			if (format < 0)
				return cli_usage_error("info", "unknown format '%s' (text or json)",
						       optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("info", "bad option");
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("info",
				       optind >= argc ? "no trace given" : "one trace at a time");
	r = orr_trace_import(argv[optind], &iopts, &t, &diag);
	if (r) {
		cli_import_error(argv[optind], r, &diag);
		return EXIT_FAIL;
	}
	r = orr_graph_build(t, NULL, &g, &diag);
	if (r) {
		cli_error("cannot build the graph of '%s': %s: %s", argv[optind], orr_strerror(r),
			  diag.msg);
		orr_trace_free(t);
		return EXIT_FAIL;
	}
	orr_graph_get_stats(g, &gs);
	if (format == CLI_FORMAT_JSON)
		print_json(argv[optind], t, &gs);
	else
		print_text(argv[optind], t, &gs);
	orr_graph_free(g);
	orr_trace_free(t);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
