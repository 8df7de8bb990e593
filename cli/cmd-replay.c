/* SPDX-License-Identifier: MIT */
/* orrery replay: rebuild the execution graph, replay it, compare with what was measured. */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery replay [--format=text|json|csv] [--scale GLOB=FACTOR]...\n"
	"                     [--comm GLOB]... [--timeline OUT.json] TRACE\n\n"
	"Builds the execution graph of TRACE and replays it; prints, per rank and step, the\n"
	"measured and predicted step time, their error and the busy-timeline distance; the\n"
	"job step times of several ranks; the mean and max error; the breakdown of GPU time\n"
	"(exposed compute, overlapped, exposed communication, other) measured vs predicted;\n"
	"and what the graph holds.\n\n"
	"  --format=FMT        text (default), json or csv (docs/orrery-replay.md)\n"
	"  --scale GLOB=F      multiply the duration of GPU tasks whose name matches GLOB\n"
	"                      by F (repeatable), e.g. 'nccl*=0.5' or '*gemm*=2'\n"
	"  --comm GLOB         count GPU tasks whose name matches GLOB as communication\n"
	"                      (repeatable), e.g. '*all_to_all*'; NCCL, NVSHMEM and DeepEP\n"
	"                      kernels are communication without it\n"
	"  --timeline FILE     also write the measured and predicted timelines to FILE, a\n"
	"                      Chrome trace-event JSON file for Perfetto or chrome://tracing\n"
	"  -h, --help          this help\n";

struct options {
	int format;
	const char *timeline;
	struct cli_scales scales;
	struct cli_globs comm;
	const char *trace;
};

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "scale", required_argument, NULL, 's' },
		{ "comm", required_argument, NULL, 'c' },
		{ "timeline", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = cli_parse_format(optarg, true);
			if (o->format < 0)
				return cli_usage_error("replay",
						       "unknown format '%s' (text, json or csv)",
						       optarg);
			break;
		case 's':
			if (cli_scales_add(&o->scales, optarg) < 0)
				return cli_usage_error(
					"replay",
					"bad --scale '%s' (GLOB=FACTOR, FACTOR from 0 to 1e6)",
					optarg);
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("replay", "empty --comm pattern");
			break;
		case 't':
			if (!optarg[0])
				return cli_usage_error("replay", "empty --timeline file name");
			o->timeline = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("replay", "bad option");
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("replay",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->trace = argv[optind];
	return -1;
}

static void print_report(const struct options *o, const struct orr_replay *r)
{
	struct cli_report rep;

	cli_report_init(&rep, o->trace, r);
	if (o->format == CLI_FORMAT_JSON)
		cli_report_json(&rep);
	else if (o->format == CLI_FORMAT_CSV)
		cli_report_csv(&rep);
	else
		cli_report_text(&rep);
	cli_report_release(&rep);
}

int cmd_replay(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT };
	struct cli_replay cr = { 0 };
	int ret, err;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	/* Written into TRACE, the timeline would change (or become part of) what it shows. */
	if (o.timeline && orr_outfile_inside(o.timeline, o.trace)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.timeline, o.trace);
		ret = EXIT_FAIL;
		goto out;
	}
	ret = cli_replay_open(o.trace, &o.scales, &o.comm, &cr);
	if (ret != EXIT_OK)
		goto out;
	if (o.timeline) {
		err = cli_timeline_write(cr.r, o.timeline);
		if (err) {
			cli_error("cannot write '%s': %s", o.timeline, orr_strerror(err));
			ret = EXIT_FAIL;
			goto out;
		}
	}
	print_report(&o, cr.r);
	ret = EXIT_OK; /* main() checks that standard output was written */
out:
	cli_replay_close(&cr);
	cli_scales_release(&o.scales);
	cli_globs_release(&o.comm);
	return ret;
}
