/* SPDX-License-Identifier: MIT */
/* orrery replay: rebuild the execution graph, replay it, compare with what was measured. */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "fit.h"
#include "replay-common.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery replay [--format=text|json|csv] [--scale GLOB=FACTOR]...\n"
	"                     [--scenario FILE] [--costs FILE] [--strict] [--comm GLOB]...\n"
	"                     [--steps A[-B]] [--ranks LIST] [--timeline OUT.json] TRACE\n\n"
	"Builds the execution graph of TRACE and replays it; prints, per rank and step, the\n"
	"measured and predicted step time, their error and the busy-timeline distance; the\n"
	"job step times of several ranks; the mean and max error; the breakdown of GPU time\n"
	"(exposed compute, overlapped, exposed communication, other) measured vs predicted;\n"
	"and what the graph holds.  With what-if scenarios (--scale, --scenario) it replays\n"
	"the trace as recorded (the baseline) and with each scenario, and prints baseline ->\n"
	"scenario step times with their signed change, and what each rule matched.\n\n"
	"  --format=FMT        text (default), json or csv (docs/orrery-replay.md)\n"
	"  --scale GLOB=F      what-if: multiply the duration of GPU tasks whose name matches\n"
	"                      GLOB by F (repeatable: one scenario), e.g. 'nccl*=0.5';\n"
	"                      gpu@RANK:GLOB=F: on one rank only, e.g. 'gpu@3:*=1.2' (a\n"
	"                      straggler);\n"
	"                      cpu:GLOB=F, cpu@RANK:GLOB=F: CPU calls and the time before\n"
	"                      them under ops matching GLOB (on one rank), e.g. 'cpu@0:*=0.8';\n"
	"                      stalls:GLOB=F, stalls@RANK:GLOB=F: the time those calls'\n"
	"                      threads were not running, where 3 or more ranks run the same\n"
	"                      launches, e.g. 'stalls:*=0' (docs/orrery-replay.md)\n"
	"                      latency:GLOB=F, bandwidth:GLOB=F: the latency, or the\n"
	"                      bandwidth, of collective kernels matching GLOB, e.g.\n"
	"                      'bandwidth:*AllReduce*=2' (latency from their fitted model)\n"
	"  --scenario FILE     what-ifs: one scenario per line, NAME GLOB=F [GLOB=F]...\n"
	"                      ('#' starts a comment); reported in one table\n"
	"  --costs FILE        models for latency: and bandwidth: (orrery fit -o FILE, with\n"
	"                      --nccl-tests runs) instead of those fitted on TRACE\n"
	"  --strict            a rule that matches nothing is an error, not a warning\n"
	"  --comm GLOB         count GPU tasks whose name matches GLOB as communication\n"
	"                      (repeatable), e.g. '*all_to_all*'; NCCL, NVSHMEM and DeepEP\n"
	"                      kernels are communication without it\n"
	"  --steps A[-B]       report (and write to --timeline) only steps A to B\n"
	"  --ranks LIST        only these global ranks, e.g. 0,2,4-7\n"
	"  --timeline FILE     also write the measured and predicted timelines to FILE, a\n"
	"                      Chrome trace-event JSON file for Perfetto or chrome://tracing\n"
	"  -h, --help          this help\n\n"
	"A --timeline FILE of '-' is standard output; the report then goes to standard error.\n";

struct options {
	int format;
	const char *timeline;
	bool strict;
	struct orr_select sel;
	struct orr_scales scales;
	struct orr_scenarios scenarios;
	const char **scenario_files; /* read once the options are known good */
	size_t nscenario_files, cap_scenario_files;
	struct cli_globs comm;
	const char *costs_file;
	struct orr_costs costs; /* read when costs_file is given */
	const char *trace;
};

static bool comm_rules(const struct orr_scenarios *sc)
{
	for (size_t i = 0; i < sc->n; i++)
		if (sc->v[i].scales.ncomm)
			return true;
	return false;
}

/*
 * The --scenario files, in order: what they hold is data, so an error in one fails
 * (exit 1), after every usage error was found.
 */
static int read_scenarios(struct options *o)
{
	char err[512];

	for (size_t i = 0; i < o->nscenario_files; i++)
		if (orr_scenarios_read(&o->scenarios, o->scenario_files[i], err, sizeof(err)) < 0) {
			cli_error("bad --scenario: %s", err);
			return -1;
		}
	return 0;
}

/* The trace, and the options that go together: -1 to go on, else the exit status. */
static int check_options(int argc, char **argv, struct options *o)
{
	if (optind != argc - 1)
		return cli_usage_error("replay",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->trace = argv[optind];
	if (read_scenarios(o) < 0)
		return EXIT_FAIL;
	if (orr_scales_rule_count(&o->scales)) /* the --scale rules: one scenario, listed first */
		orr_scenarios_take_scales(&o->scenarios, &o->scales);
	if (o->timeline && o->scenarios.n > 1)
		return cli_usage_error("replay", "--timeline shows one scenario; %zu were given",
				       o->scenarios.n);
	if (o->costs_file && !comm_rules(&o->scenarios))
		return cli_usage_error("replay", "--costs gives models to latency: and bandwidth: "
						 "rules, and none was given");
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "scale", required_argument, NULL, 's' },
		{ "comm", required_argument, NULL, 'c' },
		{ "scenario", required_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, 'x' },
		{ "steps", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "timeline", required_argument, NULL, 't' },
		{ "costs", required_argument, NULL, 'k' },
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
			if (cli_scale_option(&o->scales, "replay", optarg) < 0)
				return EXIT_USAGE;
			break;
		case 'S':
			if (!optarg[0])
				return cli_usage_error("replay", "empty --scenario file name");
			ORR_VEC_PUSH(o->scenario_files, o->nscenario_files, o->cap_scenario_files,
				     optarg);
			break;
		case 'x':
			o->strict = true;
			break;
		case 'k':
			o->costs_file = optarg;
			break;
		case 'p': /* --steps */
		case 'r': /* --ranks */
			if (cli_select_option(&o->sel, "replay", c, optarg) < 0)
				return EXIT_USAGE;
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("replay", "empty --comm pattern");
			break;
		case 't':
			if (cli_timeline_option("replay", optarg) < 0)
				return EXIT_USAGE;
			o->timeline = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("replay", argc, argv, opts);
		}
	}
	return check_options(argc, argv, o);
}

/* --steps and --ranks that leave nothing to report: an error, once. */
static int nothing_selected(const struct options *o, const struct orr_replay *r, size_t nrows)
{
	if (nrows)
		return EXIT_OK;
	cli_select_nothing(&o->sel, o->trace, r);
	return EXIT_FAIL;
}

/* Whether --steps and --ranks leave a rank-step of the replay to report. */
static int check_selection(const struct options *o, const struct orr_replay *r)
{
	const struct orr_graph *g = orr_replay_graph(r);
	size_t n = 0;

	for (size_t k = 0; k < orr_graph_rank_count(g) && !n; k++) {
		struct orr_replay_step *s;
		size_t ns;

		if (!orr_select_rank(&o->sel, orr_graph_get_rank(g, k)->rank->rank))
			continue;
		orr_replay_steps(r, k, &s, &ns);
		for (size_t i = 0; i < ns; i++)
			n += orr_select_step(&o->sel, s[i].step);
		free(s);
	}
	return nothing_selected(o, r, n);
}

static int print_report(const struct options *o, const struct orr_replay *r)
{
	struct orr_replay_report rep;
	int ret;

	orr_replay_report_init(&rep, o->trace, r, &o->sel);
	ret = EXIT_OK;
	if (o->format == CLI_FORMAT_JSON)
		cli_report_json(&rep);
	else if (o->format == CLI_FORMAT_CSV)
		cli_report_csv(&rep);
	else {
		cli_report_text(&rep);
		cli_profiler_note(orr_replay_graph(r));
	}
	orr_replay_report_release(&rep);
	return ret;
}

/* The timeline of the trace replayed as recorded, or with the one scenario given. */
static int write_timeline(const struct options *o, const struct cli_replay *cr)
{
	const struct orr_scales *s = o->scenarios.n ? &o->scenarios.v[0].scales : NULL;
	struct orr_replay *r = NULL;
	struct orr_diag diag;
	int err = 0;

	if (s) {
		struct orr_scenario_replay sr;

		orr_scenario_options(&sr, cr->g, s, o->costs_file ? &o->costs : NULL, cr->r, NULL);
		err = cli_replay_run(cr->g, &sr.opts, &r, &diag);
		orr_scenario_options_release(&sr);
	}
	if (!err)
		err = cli_timeline_write(r ? r : cr->r, NULL, 0, &o->sel, o->timeline);
	orr_replay_free(r);
	if (err)
		cli_error("cannot write '%s': %s", o->timeline, orr_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

/* Prints the what-if report; EXIT_FAIL when --strict and a rule matched nothing. */
static int print_whatif(const struct options *o, const struct cli_replay *cr)
{
	struct orr_scenario_report w;
	int ret = cli_whatif_run(&w, o->trace, cr->r, &o->scenarios,
				 o->costs_file ? &o->costs : NULL, &o->sel);

	if (ret == EXIT_OK && cli_whatif_unmatched(&w, cr->g) && o->strict) {
		cli_error("--strict: a rule matches nothing (the warnings above)");
		ret = EXIT_FAIL;
	}
	if (ret == EXIT_OK) {
		if (o->format == CLI_FORMAT_JSON)
			cli_whatif_json(&w);
		else if (o->format == CLI_FORMAT_CSV)
			cli_whatif_csv(&w);
		else {
			cli_whatif_text(&w);
			cli_profiler_note(cr->g);
		}
	}
	orr_scenario_report_release(&w);
	return ret;
}

int cmd_replay(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT };
	struct cli_replay cr = { 0 };
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	/* Written into TRACE, the timeline would change (or become part of) what it shows. */
	if (o.timeline && cli_output_inside(o.timeline, o.trace)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.timeline, o.trace);
		ret = EXIT_FAIL;
		goto out;
	}
	if (o.costs_file && (ret = cli_read_costs(o.costs_file, &o.costs)) != EXIT_OK) {
		o.costs_file = NULL;
		goto out;
	}
	ret = cli_replay_open(o.trace, NULL, &o.comm, &cr);
	if (ret != EXIT_OK)
		goto out;
	cli_warn_no_gpu(o.trace, cr.g);
	ret = check_selection(&o, cr.r);
	if (ret == EXIT_OK && o.timeline)
		ret = write_timeline(&o, &cr);
	if (ret == EXIT_OK)
		ret = o.scenarios.n ? print_whatif(&o, &cr) : print_report(&o, cr.r);
	if (ret != EXIT_OK)
		goto out;
	ret = EXIT_OK; /* main() checks that standard output was written */
out:
	cli_replay_close(&cr);
	orr_scales_release(&o.scales);
	orr_scenarios_release(&o.scenarios);
	free(o.scenario_files);
	orr_select_release(&o.sel);
	cli_globs_release(&o.comm);
	if (o.costs_file)
		orr_costs_release(&o.costs);
	return ret;
}
