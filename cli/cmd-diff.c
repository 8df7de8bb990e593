/* SPDX-License-Identifier: MIT */
/*
 * orrery diff: two traces compared, or a trace and its prediction (docs/orrery-diff.md).
 * Both sides are reduced to one rank-step (cli/diff-profile.c) and compared item by
 * item: the step, each rank, the breakdown, kernel classes, kernels, ops.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "cli.h"
#include "replay-common.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery diff [--format=text|json|csv] [--top N] [--comm GLOB]... A B\n"
	"       orrery diff --predicted [--scale GLOB=FACTOR]... [...] TRACE\n\n"
	"Compares two traces (two runs, before and after a change, two GPUs, two ranks of a\n"
	"job), or with --predicted a trace's measured timeline (A) with its replay (B), under\n"
	"the --scale what-ifs: the step time and each rank's, the breakdown (compute, exposed\n"
	"communication, waiting for peers, idle), GPU time by kernel class and by kernel, the\n"
	"kernels only one side runs, and framework ops by CPU self time, each per rank-step\n"
	"(a side's totals over its ranks' steps, divided by their number) and ranked by how\n"
	"much of the change it makes.  Ops are matched by name and input shapes where both\n"
	"sides recorded the shapes of every op of that name, else by name.\n\n"
	"  --predicted         B is A's replay (with the --scale what-ifs)\n"
	"  --scale GLOB=F      with --predicted: as in orrery replay\n"
	"  --comm GLOB         count GPU tasks matching GLOB as communication (both sides)\n"
	"  --top N             rows per table in text (15); JSON and CSV hold every row\n"
	"  --format=FORMAT     text, json or csv\n"
	"  -h, --help          this help\n";

struct options {
	int format;
	int64_t top;
	bool predicted;
	struct orr_scales scales;
	struct cli_globs comm;
	const char *a, *b;
};

struct diff {
	const struct options *o;
	const struct orr_diff_profile *a, *b;
	struct orr_diff_totals ta, tb;
	struct orr_diff_table classes, kernels, ops;
};

/* ---- text ---- */

static double pct(double a, double b)
{
	return a > 0 ? 100.0 * (b - a) / a : NAN;
}

static void text_line(const char *label, double a, double b)
{
	char p[32] = "-";

	if (isfinite(pct(a, b)))
		snprintf(p, sizeof(p), "%+.1f%%", pct(a, b));
	printf("  %-26s %12.3f %12.3f %+12.3f %9s\n", label, a / 1e6, b / 1e6, (b - a) / 1e6, p);
}

static void text_rows(const struct diff *d, const struct orr_diff_table *t, const char *title,
		      bool only, int side)
{
	size_t shown = 0;

	for (size_t i = 0; i < t->n && shown < (size_t)d->o->top; i++) {
		const struct orr_diff_row *r = &t->v[i];

		if (only && (side == 0 ? (r->cb || !r->ca) : (r->ca || !r->cb)))
			continue;
		if (!shown++)
			printf("\n%s\n  %12s %12s %12s %8s %8s  %s\n", title, "delta ms", "A ms",
			       "B ms", "A count", "B count", "name");
		printf("  %+12.3f %12.3f %12.3f %8llu %8llu  %s\n", (r->b - r->a) / 1e6, r->a / 1e6,
		       r->b / 1e6, (unsigned long long)r->ca, (unsigned long long)r->cb,
		       cli_text(r->key));
	}
}

static void text(const struct diff *d)
{
	const struct orr_diff_profile *a = d->a, *b = d->b;
	char lab[64];

	printf("A: %s (%s, %zu rank-steps)\nB: %s (%s, %zu rank-steps)\n\n", cli_text(a->label),
	       a->predicted ? "predicted" : "measured", a->steps, cli_text(b->label),
	       b->predicted ? "predicted" : "measured", b->steps);
	/* Aligned with text_line()'s columns: "  " and a label of 26, then the numbers. */
	printf("%-28s %12s %12s %12s %9s\n", "per rank-step", "A ms", "B ms", "delta ms", "delta");
	text_line("step", d->ta.step, d->tb.step);
	text_line("compute", d->ta.compute, d->tb.compute);
	text_line("exposed communication", d->ta.comm, d->tb.comm);
	text_line("  of it waiting for peers", d->ta.wait, d->tb.wait);
	text_line("idle", d->ta.idle, d->tb.idle);
	for (size_t i = 0; i < a->nranks; i++) {
		const struct orr_diff_rank *p = orr_diff_peer_rank(a, i, b);

		if (!p)
			continue;
		if (p->rank == a->ranks[i].rank)
			snprintf(lab, sizeof(lab), "step, rank %d", p->rank);
		else
			snprintf(lab, sizeof(lab), "step, rank %d vs %d", a->ranks[i].rank,
				 p->rank);
		text_line(lab, orr_diff_rank_mean(&a->ranks[i]), orr_diff_rank_mean(p));
	}
	text_rows(d, &d->classes, "GPU time by kernel class, per rank-step", false, 0);
	text_rows(d, &d->kernels, "GPU kernels, copies and sets by contribution to the change",
		  false, 0);
	text_rows(d, &d->kernels, "only in A", true, 0);
	text_rows(d, &d->kernels, "only in B", true, 1);
	if (!b->predicted)
		text_rows(d, &d->ops, "framework ops by CPU self time, by contribution", false, 0);
	printf("\nterms: docs/orrery-diff.md\n");
}

/* ---- JSON, CSV ---- */

static void json_rows(struct json_out *j, const char *key, const struct orr_diff_table *t)
{
	json_array(j, key);
	for (size_t i = 0; i < t->n; i++) {
		json_object(j, NULL);
		json_str(j, "name", t->v[i].key);
		json_double_exact(j, "a_ns", t->v[i].a);
		json_double_exact(j, "b_ns", t->v[i].b);
		json_double_exact(j, "delta_ns", t->v[i].b - t->v[i].a);
		json_int(j, "a_count", (int64_t)t->v[i].ca);
		json_int(j, "b_count", (int64_t)t->v[i].cb);
		json_close_object(j);
	}
	json_close_array(j);
}

static void json_pair(struct json_out *j, const char *key, double a, double b)
{
	json_object(j, key);
	json_double_exact(j, "a_ns", a);
	json_double_exact(j, "b_ns", b);
	json_double_exact(j, "delta_ns", b - a);
	json_close_object(j);
}

static void json_side(struct json_out *j, const char *key, const struct orr_diff_profile *p)
{
	json_object(j, key);
	json_str(j, "trace", p->label);
	json_bool(j, "predicted", p->predicted);
	json_int(j, "rank_steps", (int64_t)p->steps);
	json_close_object(j);
}

static void json(const struct diff *d)
{
	struct json_out j;

	json_begin(&j, stdout);
	json_side(&j, "a", d->a);
	json_side(&j, "b", d->b);
	json_pair(&j, "step", d->ta.step, d->tb.step);
	json_pair(&j, "compute", d->ta.compute, d->tb.compute);
	json_pair(&j, "exposed_comm", d->ta.comm, d->tb.comm);
	json_pair(&j, "exposed_comm_wait", d->ta.wait, d->tb.wait);
	json_pair(&j, "idle", d->ta.idle, d->tb.idle);
	json_array(&j, "ranks");
	for (size_t i = 0; i < d->a->nranks; i++) {
		const struct orr_diff_rank *p = orr_diff_peer_rank(d->a, i, d->b);

		if (!p)
			continue;
		json_object(&j, NULL);
		json_int(&j, "a_rank", d->a->ranks[i].rank);
		json_int(&j, "b_rank", p->rank);
		json_double_exact(&j, "a_ns", orr_diff_rank_mean(&d->a->ranks[i]));
		json_double_exact(&j, "b_ns", orr_diff_rank_mean(p));
		json_double_exact(&j, "delta_ns",
				  orr_diff_rank_mean(p) - orr_diff_rank_mean(&d->a->ranks[i]));
		json_close_object(&j);
	}
	json_close_array(&j);
	json_rows(&j, "classes", &d->classes);
	json_rows(&j, "kernels", &d->kernels);
	json_rows(&j, "ops", &d->ops);
	json_end(&j);
}

static void csv_rows(const struct orr_diff_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		printf("%s,", t->v[i].kind);
		cli_csv_field(t->v[i].key);
		printf(",%.0f,%.0f,%.0f,%llu,%llu\n", t->v[i].a, t->v[i].b, t->v[i].b - t->v[i].a,
		       (unsigned long long)t->v[i].ca, (unsigned long long)t->v[i].cb);
	}
}

static void csv(const struct diff *d)
{
	const char *names[] = { "step", "compute", "exposed_comm", "exposed_comm_wait", "idle" };
	double a[] = { d->ta.step, d->ta.compute, d->ta.comm, d->ta.wait, d->ta.idle };
	double b[] = { d->tb.step, d->tb.compute, d->tb.comm, d->tb.wait, d->tb.idle };

	printf("kind,name,a_ns,b_ns,delta_ns,a_count,b_count\n");
	for (size_t i = 0; i < 5; i++)
		printf("total,%s,%.0f,%.0f,%.0f,,\n", names[i], a[i], b[i], b[i] - a[i]);
	csv_rows(&d->classes);
	csv_rows(&d->kernels);
	csv_rows(&d->ops);
}

/* ---- options ---- */

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "top", required_argument, NULL, 'n' },
		{ "predicted", no_argument, NULL, 'p' },
		{ "scale", required_argument, NULL, 's' },
		{ "comm", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((o->format = cli_parse_format(optarg, true)) < 0)
				return cli_usage_error(
					"diff", "unknown format '%s' (text, json or csv)", optarg);
			break;
		case 'n':
			if (cli_parse_count(optarg, &o->top) < 0 || o->top < 1)
				return cli_usage_error("diff", "--top '%s': a count from 1",
						       optarg);
			break;
		case 'p':
			o->predicted = true;
			break;
		case 's':
			if (orr_scales_add(&o->scales, optarg) < 0)
				return cli_usage_error(
					"diff", "bad --scale '%s' (as orrery replay's)", optarg);
			break;
		case 'c':
			if (cli_globs_add(&o->comm, optarg) < 0)
				return cli_usage_error("diff", "empty --comm pattern");
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("diff", argc, argv, opts);
		}
	}
	if (orr_scales_rule_count(&o->scales) && !o->predicted)
		return cli_usage_error("diff", "--scale goes with --predicted");
	if (argc - optind != (o->predicted ? 1 : 2))
		return cli_usage_error("diff", o->predicted ? "--predicted compares one trace"
							    : "two traces to compare: A B");
	o->a = argv[optind];
	o->b = o->predicted ? argv[optind] : argv[optind + 1];
	return -1;
}

static void compare(const struct options *o, const struct orr_diff_profile *a,
		    const struct orr_diff_profile *b)
{
	struct diff d = {
		.o = o, .a = a, .b = b, .ta = orr_diff_totals_of(a), .tb = orr_diff_totals_of(b)
	};

	orr_diff_class_rows(&d.classes, a, b);
	orr_diff_union_rows(&d.kernels, "kernel", &a->kernels, &b->kernels, a, b);
	if (!b->predicted)
		orr_diff_op_rows(&d.ops, a, b);
	if (o->format == CLI_FORMAT_JSON)
		json(&d);
	else if (o->format == CLI_FORMAT_CSV)
		csv(&d);
	else
		text(&d);
	orr_diff_table_release(&d.classes);
	orr_diff_table_release(&d.kernels);
	orr_diff_table_release(&d.ops);
}

int cmd_diff(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT, .top = 15 };
	struct cli_replay ra = { 0 }, rb = { 0 };
	struct orr_diff_profile a = { 0 }, b = { 0 };
	int ret = parse_options(argc, argv, &o);

	if (ret >= 0)
		goto out;
	ret = cli_replay_open(o.a, o.predicted ? &o.scales : NULL, &o.comm, &ra);
	if (ret == EXIT_OK && !o.predicted)
		ret = cli_replay_open(o.b, NULL, &o.comm, &rb);
	if (ret != EXIT_OK)
		goto out;
	orr_diff_profile_build(&a, o.a, ra.r, false);
	orr_diff_profile_build(&b, o.b, o.predicted ? ra.r : rb.r, o.predicted);
	compare(&o, &a, &b);
	orr_diff_profile_release(&a);
	orr_diff_profile_release(&b);
out:
	cli_replay_close(&ra);
	cli_replay_close(&rb);
	orr_scales_release(&o.scales);
	cli_globs_release(&o.comm);
	return ret;
}
