/* SPDX-License-Identifier: MIT */
/* orrery summary: where the time of a measured trace goes (cli/summary.c). */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "replay-common.h"
#include "summary.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery summary [--format=text|json|csv] [--top N] [--comm GLOB]...\n"
	"                      [--steps A[-B]] [--ranks LIST] TRACE\n\n"
	"Where the measured time of TRACE goes, in each rank's steps: per rank and step the\n"
	"step time, GPU busy, compute, exposed communication and the part of it spent\n"
	"waiting for other ranks, copies and idle time, and the straggler the others wait\n"
	"for; the kernels by GPU time and the framework ops by CPU self time; the streams;\n"
	"the collectives by kind, size and group with their bandwidths (nccl-tests'\n"
	"definitions) and NCCL's algorithm.\n\n"
	"  --format=FMT        text (default), json (every section) or csv (the rank-steps);\n"
	"                      docs/orrery-summary.md\n"
	"  --top N             kernels and ops to list (default 10; 0: none)\n"
	"  --comm GLOB         count GPU tasks whose name matches GLOB as communication\n"
	"                      (repeatable), as in orrery replay\n"
	"  --steps A[-B]       only steps A to B\n"
	"  --ranks LIST        only these global ranks, e.g. 0,2,4-7\n"
	"  -h, --help          this help\n";

struct options {
	int format;
	int64_t top;
	struct orr_select sel;
	struct cli_globs comm;
	const char *trace;
};

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'n' },
		{ "comm", required_argument, NULL, 'c' },
		{ "steps", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = cli_parse_format(optarg, true);
			if (o->format < 0)
				return cli_usage_error("summary",
						       "unknown format '%s' (text, json or csv)",
						       optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &o->top) < 0)
				return cli_usage_error("summary",
						       "bad --top '%s' (a count, 0 to 2147483647)",
						       optarg);
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("summary", "empty --comm pattern");
			break;
		case 'p': /* --steps */
		case 'r': /* --ranks */
			if (cli_select_option(&o->sel, "summary", c, optarg) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("summary", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("summary",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->trace = argv[optind];
	return -1;
}

int cmd_summary(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT, .top = 10 };
	struct cli_replay cr = { 0 };
	struct orr_summary s;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	ret = cli_replay_open(o.trace, NULL, &o.comm, &cr);
	if (ret != EXIT_OK)
		goto out;
	orr_summary_gather(&s, o.trace, cr.r, &o.sel);
	if (!s.nsteps) {
		cli_select_nothing(&o.sel, o.trace, cr.r);
		orr_summary_release(&s);
		ret = EXIT_FAIL;
		goto out;
	}
	if (o.format == CLI_FORMAT_JSON)
		summary_json(&s, (size_t)o.top);
	else if (o.format == CLI_FORMAT_CSV)
		summary_csv(&s);
	else
		summary_text(&s, (size_t)o.top);
	orr_summary_release(&s);
	ret = EXIT_OK; /* main() checks that standard output was written */
out:
	cli_replay_close(&cr);
	cli_globs_release(&o.comm);
	orr_select_release(&o.sel);
	return ret;
}
