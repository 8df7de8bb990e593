/* SPDX-License-Identifier: MIT */
/* orrery info: what a trace holds, per rank, and the measured step times. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "info.h"
#include "orrery/graph.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery info [--format=text|json] [--steps A[-B]] [--ranks LIST] TRACE\n\n"
	"Reads TRACE (a Kineto/PyTorch-profiler .json, .json.gz or .json.zst file, an Nsight\n"
	"Systems .sqlite export, a native file .orr, a directory of per-rank files, or a\n"
	".tar/.tar.gz/.tar.zst of them; docs/inputs.md says what is taken from each) and\n"
	"prints, per rank, what a native file records of its process and capture (host, pid,\n"
	"producer, clock, dropped records), the devices, threads and streams, event counts by\n"
	"kind, launches without a GPU task and GPU tasks without a launch, collectives by\n"
	"type, args read from another type, and the measured step times; for several ranks\n"
	"also the job step times; and what its execution graph holds: tasks, dependencies by\n"
	"kind and how many of them were inferred by a heuristic.\n\n"
	"  --format=FMT   text (default) or json (docs/orrery-info.md)\n"
	"  --steps A[-B]  list only the step times of steps A to B\n"
	"  --ranks LIST   only these global ranks, e.g. 0,2,4-7\n"
	"  -h, --help     this help\n";

/* How many of a[0, na) are not in b[0, nb), both in order. */
static size_t missing(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	size_t n = 0, j = 0;

	for (size_t i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		n += j == nb || b[j] != a[i];
	}
	return n;
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

/* Launches and GPU tasks are matched by correlation id: each list in order, then merged. */
static void match_launches(const struct orr_rank *r, struct rank_stats *st)
{
	int64_t *calls = NULL, *tasks = NULL, *launches = NULL;
	size_t ncalls = 0, ccap = 0, ntasks = 0, tcap = 0, nlaunches = 0, lcap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (is_launch(e) && e->correlation < 0)
			st->launches_without_task++;
		else if (is_launch(e))
			ORR_VEC_PUSH(launches, nlaunches, lcap, e->correlation);
		if ((e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
		    e->correlation >= 0)
			ORR_VEC_PUSH(calls, ncalls, ccap, e->correlation);
		else if (is_gpu_task(e) && e->correlation < 0)
			st->tasks_without_launch++;
		else if (is_gpu_task(e))
			ORR_VEC_PUSH(tasks, ntasks, tcap, e->correlation);
	}
	orr_sort_i64(calls, ncalls);
	orr_sort_i64(tasks, ntasks);
	orr_sort_i64(launches, nlaunches);
	st->launches_without_task += missing(launches, nlaunches, tasks, ntasks);
	st->tasks_without_launch += missing(tasks, ntasks, calls, ncalls);
	free(calls);
	free(tasks);
	free(launches);
}

void info_rank_stats(const struct orr_rank *r, struct rank_stats *st)
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

void info_rank_stats_release(struct rank_stats *st)
{
	free(st->place_events);
	free(st->place_busy_ns);
}

/* NCCL kernels by collective type, in order of first appearance. */
size_t info_collective_rows(const struct orr_rank *r, struct coll_row **ret)
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
		else
			rows[k].unsized++;
	}
	*ret = rows;
	return n;
}

const char *info_coercion_name(uint32_t how)
{
	switch (how) {
	case ORR_COERCED_STRING:
		return "from strings";
	case ORR_COERCED_HEX:
		return "from hex strings";
	default:
		return "ignored";
	}
}

/* A rank read from a native file knows its process and how the capture went. */
bool info_has_capture(const struct orr_rank *r)
{
	return r->producer != ORR_STR_NONE || r->host != ORR_STR_NONE || r->pid >= 0;
}

size_t info_select_steps(const struct orr_select *sel, struct orr_step *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (orr_select_step(sel, s[i].step))
			s[k++] = s[i];
	return k;
}

/* --ranks that name no rank of t: an error. */
static bool no_rank_selected(const struct orr_select *sel, const struct orr_trace *t)
{
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		if (orr_select_rank(sel, orr_trace_get_rank(t, i)->rank))
			return false;
	return true;
}

/* Imports the trace argv[optind] names and prints what it holds. */
static int info_run(int argc, char **argv, int format, const struct orr_select *sel)
{
	struct orr_import_options iopts = { .warn = cli_import_warn };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_graph_stats gs;
	struct orr_diag diag;
	const char *in_file;
	char *in_tmp;
	int r;

	if (optind != argc - 1)
		return cli_usage_error("info",
				       optind >= argc ? "no trace given" : "one trace at a time");
	if (cli_input(argv[optind], &iopts, &in_file, &in_tmp) < 0)
		return EXIT_FAIL;
	cli_import_progress(&iopts, in_file);
	r = orr_trace_import(in_file, &iopts, &t, &diag);
	cli_progress_done();
	cli_input_done(in_tmp);
	if (r) {
		cli_import_error(argv[optind], r, &diag);
		return EXIT_FAIL;
	}
	r = cli_graph_build(t, NULL, &g, &diag);
	if (r) {
		cli_error("cannot build the graph of '%s': %s: %s", argv[optind], orr_strerror(r),
			  diag.msg);
		orr_trace_free(t);
		return EXIT_FAIL;
	}
	if (no_rank_selected(sel, t)) {
		cli_error("--ranks selects no rank of '%s' ('orrery info' lists them)",
			  argv[optind]);
		orr_graph_free(g);
		orr_trace_free(t);
		return EXIT_FAIL;
	}
	orr_graph_get_stats(g, &gs);
	if (format == CLI_FORMAT_JSON)
		info_print_json(argv[optind], t, &gs, sel);
	else
		info_print_text(argv[optind], t, &gs, sel);
	orr_graph_free(g);
	orr_trace_free(t);
	return EXIT_OK; /* main() checks that standard output was written */
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "steps", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct orr_select sel = { 0 };
	int format = CLI_FORMAT_TEXT, c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = cli_parse_format(optarg, false);
			if (format < 0) {
				orr_select_release(&sel);
				return cli_usage_error("info", "unknown format '%s' (text or json)",
						       optarg);
			}
			break;
		case 'p': /* --steps */
		case 'r': /* --ranks */
			if (cli_select_option(&sel, "info", c, optarg) < 0) {
				orr_select_release(&sel);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			orr_select_release(&sel);
			return EXIT_OK;
		default:
			orr_select_release(&sel);
			return cli_bad_option("info", argc, argv);
		}
	}
	r = info_run(argc, argv, format, &sel);
	orr_select_release(&sel);
	return r;
}
