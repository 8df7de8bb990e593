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

/* Whether --steps leaves a step of a selected rank to list (true without --steps). */
static bool steps_selected(const struct orr_trace *t, const struct orr_select *sel)
{
	size_t n = 0;

	if (!sel->steps_given)
		return true;
	for (size_t i = 0; i < orr_trace_rank_count(t) && !n; i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		struct orr_step *steps;
		size_t nsteps;

		if (!orr_select_rank(sel, r->rank))
			continue;
		orr_rank_steps(t, r, &steps, &nsteps);
		for (size_t k = 0; k < nsteps; k++)
			n += orr_select_step(sel, steps[k].step);
		free(steps);
	}
	return n > 0;
}

/* Imports the trace argv[optind] names and prints what it holds. */
static int info_run(int argc, char **argv, int format, const struct orr_select *sel)
{
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_graph_stats gs;
	struct orr_diag diag;
	char want[256], have[256];
	int r;

	if (optind != argc - 1)
		return cli_usage_error("info",
				       optind >= argc ? "no trace given" : "one trace at a time");
	if (cli_import(argv[optind], &t) < 0)
		return EXIT_FAIL;
	orr_diag_clear(&diag);
	r = cli_graph_build(t, NULL, &g, &diag);
	if (r) {
		cli_error("cannot build the graph of '%s': %s: %s", argv[optind], orr_strerror(r),
			  diag.msg);
		orr_trace_free(t);
		return EXIT_FAIL;
	}
	if (orr_select_misses(sel, g, have, sizeof(have))) {
		orr_ranks_text(sel->ranks, sel->nranks, want, sizeof(want));
		cli_error("no rank %s%s in '%s'; its ranks are %s", sel->nranks > 1 ? "of " : "",
			  want, argv[optind], have);
		orr_graph_free(g);
		orr_trace_free(t);
		return EXIT_FAIL;
	}
	/* The counts are still worth printing: a warning, not an error as in replay. */
	if (!steps_selected(t, sel))
		cli_warning("--steps selects no step of '%s'; its counts are listed without step "
			    "times ('orrery info' without --steps lists the steps)",
			    argv[optind]);
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
			return cli_bad_option("info", argc, argv, opts);
		}
	}
	r = info_run(argc, argv, format, &sel);
	orr_select_release(&sel);
	return r;
}
