/* SPDX-License-Identifier: MIT */
/* orrery critical-path: what the predicted time of each job step is made of. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery critical-path [--format=text|json] [--top N] [--scale GLOB=FACTOR]...\n"
	"                            [--comm GLOB]... [--steps A[-B]] [--ranks LIST]\n"
	"                            [--timeline OUT.json] TRACE\n\n"
	"Replays TRACE and follows, for each job step, the chain of tasks that decided its\n"
	"predicted end, across threads, streams and ranks.  Prints the time on that path by\n"
	"category (GPU compute, communication, launch calls, other CPU work, idle latencies)\n"
	"and the ops that take most of it: GPU tasks by kernel name, CPU calls by the\n"
	"framework op that issued them.\n\n"
	"  --format=FMT        text (default) or json (docs/orrery-critical-path.md)\n"
	"  --top N             how many ops to list per step (default 10; 0: none)\n"
	"  --scale GLOB=F      multiply the duration of GPU tasks whose name matches GLOB\n"
	"                      by F before replaying (repeatable); gpu@RANK:, cpu:,\n"
	"                      stalls:, latency: and bandwidth: rules as in orrery replay\n"
	"  --comm GLOB         count GPU tasks whose name matches GLOB as communication\n"
	"                      (repeatable), as in orrery replay\n"
	"  --steps A[-B]       only the job steps A to B\n"
	"  --ranks LIST        --timeline: only these global ranks (the path crosses ranks)\n"
	"  --timeline FILE     also write the measured and predicted timelines, as orrery\n"
	"                      replay --timeline does, with the path on a track of its own\n"
	"  -h, --help          this help\n\n"
	"A --timeline FILE of '-' is standard output; the report then goes to standard error.\n";

#define NAME_MAX_TEXT 80 /* longer names are cut in text output */

struct options {
	int format;
	int64_t top;
	const char *timeline;
	struct orr_select sel;
	struct orr_scales scales;
	struct cli_globs comm;
	const char *trace;
};

struct ctx {
	const struct orr_replay *r;
	const struct orr_graph *g;
	struct orr_op_names *names;
};

/* "NAME", or "(no op) before NAME" for CPU time outside every op. */
static const char *label(const char *name, bool before, char *buf, size_t size)
{
	if (!before)
		return name;
	snprintf(buf, size, "(no op) before %s", name);
	return buf;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

/* The global rank and the label ("thread 12", "stream 7") of processor proc. */
static int32_t proc_where(const struct orr_graph *g, uint32_t proc, char *buf, size_t size)
{
	const struct orr_proc *pr = &orr_graph_procs(g)[proc];

	orr_graph_proc_label(g, proc, buf, size);
	return orr_graph_get_rank(g, pr->rank)->rank->rank;
}

static void text_step(const struct ctx *c, const struct orr_path_step *ps, size_t top)
{
	char st[32], a[32], b[32], where[64];

	printf("\nstep %s: window %s ms, path %s ms\n", cli_step_label(ps->s->step, st, sizeof(st)),
	       cli_ms(ps->s->predicted_end_ns - ps->s->predicted_start_ns, a, sizeof(a)),
	       cli_ms(ps->path_ns, b, sizeof(b)));
	for (int k = 0; k < ORR_PATH_CAT_COUNT; k++)
		printf("  %-14s %12s ms %6.1f%%\n", orr_path_cat_name(k),
		       cli_ms(ps->by_cat[k], a, sizeof(a)),
		       100 * share(ps->by_cat[k], ps->path_ns));
	if (ps->path_ns < ps->s->predicted_end_ns - ps->s->predicted_start_ns)
		printf("  %-14s %12s ms %6.1f%%  (of the window; no path found there)\n",
		       "unattributed",
		       cli_ms(ps->s->predicted_end_ns - ps->s->predicted_start_ns - ps->path_ns, a,
			      sizeof(a)),
		       100 * (1 - share(ps->path_ns,
					ps->s->predicted_end_ns - ps->s->predicted_start_ns)));
	if (!top || !ps->nops)
		return;
	printf("  %12s %7s  %-14s %6s  %-24s  %s\n", "ms", "%", "category", "count", "where", "op");
	for (size_t i = 0; i < ps->nops && i < top; i++) {
		const struct orr_path_op *o = &ps->ops[i];
		char buf[1024];
		const char *name = cli_text(label(o->str, o->before, buf, sizeof(buf)));
		int len = (int)strlen(name);

		proc_where(c->g, o->proc, where, sizeof(where));
		/* cut between characters: a name cut inside one would not be UTF-8 */
		if (len > NAME_MAX_TEXT) {
			len = NAME_MAX_TEXT - 3;
			while (len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
				len--;
		}
		printf("  %12s %6.1f%%  %-14s %6zu  %-24s  %.*s%s\n", cli_ms(o->ns, a, sizeof(a)),
		       100 * share(o->ns, ps->path_ns), orr_path_cat_name(orr_path_op_category(o)),
		       o->count, cli_text(where), len, name, name[len] ? "..." : "");
	}
}

/* Every segment of the path, in time order. */
static void json_segments(struct json_out *j, const struct ctx *c, const struct orr_path_seg *segs,
			  size_t n)
{
	char where[64], buf[1024];
	bool before;

	json_array(j, "segments");
	for (size_t i = 0; i < n; i++) {
		const struct orr_path_seg *seg = &segs[i];

		json_object(j, NULL);
		json_int(j, "start_ns", seg->start_ns);
		json_int(j, "end_ns", seg->end_ns);
		json_str(j, "category", orr_path_cat_name(seg->cat));
		json_str(j, "via", seg->via ? orr_dep_kind_name(seg->via) : NULL);
		if (seg->task != ORR_NONE) {
			int32_t rank = proc_where(c->g, orr_graph_tasks(c->g)[seg->task].proc,
						  where, sizeof(where));

			uint32_t name = orr_path_seg_name(c->r, c->names, seg, &before);

			json_int(j, "task", seg->task);
			json_str(j, "name",
				 label(orr_trace_str(orr_graph_trace(c->g), name), before, buf,
				       sizeof(buf)));
			json_int(j, "rank", rank);
			json_str(j, "processor", where);
		}
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_step(struct json_out *j, const struct ctx *c, const struct orr_path_step *ps,
		      size_t top, const struct orr_path_seg *segs, size_t nsegs)
{
	char where[64], buf[1024];

	json_object(j, NULL);
	json_int(j, "step", ps->s->step);
	json_int(j, "predicted_start_ns", ps->s->predicted_start_ns);
	json_int(j, "predicted_ns", ps->s->predicted_end_ns - ps->s->predicted_start_ns);
	json_int(j, "path_ns", ps->path_ns);
	json_int(j, "unattributed_ns",
		 ps->s->predicted_end_ns - ps->s->predicted_start_ns - ps->path_ns);
	json_object(j, "categories");
	for (int k = 0; k < ORR_PATH_CAT_COUNT; k++) {
		json_object(j, orr_path_cat_name(k));
		json_int(j, "ns", ps->by_cat[k]);
		json_double(j, "share", share(ps->by_cat[k], ps->path_ns));
		json_close_object(j);
	}
	json_close_object(j);
	json_array(j, "ops");
	for (size_t i = 0; i < ps->nops && i < top; i++) {
		int32_t rank = proc_where(c->g, ps->ops[i].proc, where, sizeof(where));

		json_object(j, NULL);
		json_str(j, "name", label(ps->ops[i].str, ps->ops[i].before, buf, sizeof(buf)));
		json_str(j, "category", orr_path_cat_name(orr_path_op_category(&ps->ops[i])));
		json_int(j, "rank", rank);
		json_str(j, "processor", where);
		json_int(j, "ns", ps->ops[i].ns);
		json_double(j, "share", share(ps->ops[i].ns, ps->path_ns));
		json_int(j, "count", (int64_t)ps->ops[i].count);
		json_close_object(j);
	}
	json_close_array(j);
	json_segments(j, c, segs, nsegs);
	json_close_object(j);
}

/* Prints the report; with --timeline each step's path goes to *ret_paths. */
static void report(const struct options *o, const struct orr_replay *r,
		   struct orr_step_path **ret_paths, size_t *ret_n)
{
	struct ctx c = { .r = r, .g = orr_replay_graph(r) };
	struct orr_replay_step *steps;
	struct json_out j;
	size_t nsteps, cap = 0, kept = 0;

	c.names = orr_op_names_new(c.g);
	orr_replay_job_steps(r, &steps, &nsteps);
	for (size_t k = 0; k < nsteps; k++) /* --steps */
		if (orr_select_step(&o->sel, steps[k].step))
			steps[kept++] = steps[k];
	nsteps = kept;
	if (o->format == CLI_FORMAT_JSON) {
		json_begin(&j, stdout);
		json_str(&j, "trace", o->trace);
		json_int(&j, "top", (int64_t)o->top);
		/* what the profiler added to the host per step, which this path includes */
		json_int(&j, "profiler_host_ns", (int64_t)llround(cli_profiler_ns(c.g)));
		json_array(&j, "steps");
	} else {
		printf("%s: critical path of %zu job step%s\n", cli_text(o->trace), nsteps,
		       nsteps == 1 ? "" : "s");
	}
	for (size_t k = 0; k < nsteps; k++) {
		struct orr_path_step ps = { .s = &steps[k] };
		struct orr_path_seg *segs;
		size_t nsegs;

		orr_replay_critical_path(r, steps[k].predicted_start_ns, steps[k].predicted_end_ns,
					 &segs, &nsegs);
		orr_path_step_tally(r, c.names, segs, nsegs, &ps);
		if (o->format == CLI_FORMAT_JSON)
			json_step(&j, &c, &ps, (size_t)o->top, segs, nsegs);
		else
			text_step(&c, &ps, (size_t)o->top);
		orr_path_step_release(&ps);
		if (o->timeline)
			ORR_VEC_PUSH(*ret_paths, *ret_n, cap,
				     ((struct orr_step_path){ steps[k].step, segs, nsegs }));
		else
			free(segs);
	}
	if (o->format == CLI_FORMAT_JSON) {
		json_close_array(&j);
		json_end(&j);
	} else {
		/* Why exposed communication in orrery replay can be large and small here. */
		if (orr_graph_group_count(c.g))
			printf("\ncommunication on the path is transfer only: where a rank waits for "
			       "a late peer, the path goes on through that peer's work (orrery "
			       "replay's 'waiting')\n");
		cli_profiler_note(c.g);
		printf("\nterms: window, path, the categories and how ops are named: "
		       "docs/orrery-critical-path.md\n");
	}
	free(steps);
	orr_op_names_free(c.names);
}

/*
 * --steps that select no job step, or --ranks that name no rank of the trace: an error, as in
 * orrery replay, rather than a report of no step or a timeline of no rank.
 */
static int check_selection(const struct options *o, const struct orr_replay *r)
{
	struct orr_replay_step *steps;
	size_t nsteps, kept = 0;
	char have[256];

	if (orr_select_misses(&o->sel, orr_replay_graph(r), have, sizeof(have))) {
		cli_select_nothing(&o->sel, o->trace, r);
		return EXIT_FAIL;
	}
	if (!o->sel.steps_given)
		return EXIT_OK;
	orr_replay_job_steps(r, &steps, &nsteps);
	for (size_t k = 0; k < nsteps; k++)
		kept += orr_select_step(&o->sel, steps[k].step);
	free(steps);
	if (kept)
		return EXIT_OK;
	cli_error("--steps selects no job step of '%s' ('orrery info' lists them)", o->trace);
	return EXIT_FAIL;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'n' },
		{ "scale", required_argument, NULL, 's' },
		{ "comm", required_argument, NULL, 'c' },
		{ "timeline", required_argument, NULL, 't' },
		{ "steps", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = cli_parse_format(optarg, false);
			if (o->format < 0)
				return cli_usage_error("critical-path",
						       "unknown format '%s' (text or json)",
						       optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &o->top) < 0)
				return cli_usage_error("critical-path",
						       "bad --top '%s' (a count, 0 to 2147483647)",
						       optarg);
			break;
		case 's':
			if (cli_scale_option(&o->scales, "critical-path", optarg) < 0)
				return EXIT_USAGE;
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("critical-path", "empty --comm pattern");
			break;
		case 't':
			if (cli_timeline_option("critical-path", optarg) < 0)
				return EXIT_USAGE;
			o->timeline = optarg;
			break;
		case 'p': /* --steps */
		case 'r': /* --ranks */
			if (cli_select_option(&o->sel, "critical-path", c, optarg) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("critical-path", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("critical-path",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->trace = argv[optind];
	return -1;
}

int cmd_critical_path(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT, .top = 10 };
	struct cli_replay cr = { 0 };
	struct orr_step_path *paths = NULL;
	size_t npaths = 0;
	int ret, err;

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
	ret = cli_replay_open(o.trace, &o.scales, &o.comm, &cr);
	if (ret == EXIT_OK)
		ret = check_selection(&o, cr.r);
	if (ret != EXIT_OK)
		goto out;
	report(&o, cr.r, &paths, &npaths);
	if (o.timeline && (err = cli_timeline_write(cr.r, paths, npaths, &o.sel, o.timeline))) {
		cli_error("cannot write '%s': %s", o.timeline, orr_strerror(err));
		ret = EXIT_FAIL;
		goto out;
	}
	ret = EXIT_OK; /* main() checks that standard output was written */
out:
	for (size_t i = 0; i < npaths; i++)
		free(paths[i].segs);
	free(paths);
	cli_replay_close(&cr);
	orr_scales_release(&o.scales);
	orr_select_release(&o.sel);
	cli_globs_release(&o.comm);
	return ret;
}
