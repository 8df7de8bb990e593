/* SPDX-License-Identifier: MIT */
/*
 * orrery compose: a portable benchmark of one traced step, bench.py and a plan per rank
 * (compose/, docs/orrery-compose.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "orrery/compose.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery compose [--et ET] -o DIR [--step N] [--steps N] [--warmup N]\n"
	"                      [--ops all|compute|comm] [--subgraph NAME] [--repeat NAME=K]\n"
	"                      [--allow-namespace NS] [--format=text|json] TRACE\n\n"
	"Writes a portable benchmark of one step of TRACE into DIR: bench.py and rank-R.json\n"
	"per rank.  It runs the step again without the model's code or data: every operator\n"
	"with synthetic tensors of the recorded shapes, dtypes and strides, on the recorded\n"
	"streams with the recorded event records and waits, and the collectives of the\n"
	"recorded sizes on recreated process groups; GPU work no operator rebuilds runs as a\n"
	"timed stand-in and is listed.  Run it with 'python3 DIR/bench.py' (one GPU) or\n"
	"'torchrun --nproc-per-node N DIR/bench.py'.  Operators need their arguments: a\n"
	"PyTorch execution trace of the step (--et, or beside the trace) gives them all; a\n"
	"profile with record_shapes only those of tensor arguments.\n\n"
	"  -o, --output DIR      the benchmark's directory (new, or empty)\n"
	"  --et ET               the PyTorch execution trace(s) of the traced step (as\n"
	"                        'orrery --et')\n"
	"  --step N              the step to compose (ProfilerStep#N; default: the one the\n"
	"                        execution trace covers, else the median step)\n"
	"  --steps N             timed steps bench.py runs by default (20)\n"
	"  --warmup N            untimed steps before them (5; at least 1 checks the ops)\n"
	"  --ops KIND            all (default), compute (no collectives) or comm (only\n"
	"                        collectives and transfers)\n"
	"  --subgraph NAME       keep only what runs inside the annotations or ops whose\n"
	"                        name matches the glob NAME (record_function, NVTX)\n"
	"  --repeat NAME=K       run each region named NAME (a glob) K times in a row, e.g.\n"
	"                        more layers; may be given several times\n"
	"  --allow-namespace NS  rebuild the operators of namespace NS too (besides aten),\n"
	"                        e.g. a library's own; may be given several times (bench.py\n"
	"                        runs them only with its own --allow-namespace NS)\n"
	"  --format=text|json    the report (text)\n"
	"  -h, --help            this help\n";

#define MAX_REPEATS    64
#define MAX_NAMESPACES 16

struct options {
	struct orr_compose_options c;
	struct orr_compose_repeat repeats[MAX_REPEATS];
	const char *namespaces[MAX_NAMESPACES];
	const char *out, *in;
	int format;
};

static int parse_repeat(struct options *o, char *arg)
{
	char *eq = strrchr(arg, '=');
	int64_t k;

	if (!eq || eq == arg || cli_parse_count(eq + 1, &k) < 0 || k < 1 || k > 1000)
		return cli_usage_error("compose", "--repeat '%s': NAME=K, K from 1 to 1000", arg);
	if (o->c.nrepeats == MAX_REPEATS)
		return cli_usage_error("compose", "at most %d --repeat", MAX_REPEATS);
	*eq = '\0';
	o->repeats[o->c.nrepeats++] = (struct orr_compose_repeat){ arg, (int)k };
	return -1;
}

static int parse_namespace(struct options *o, const char *arg)
{
	size_t n = strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");

	if (!arg[0] || arg[n] || (arg[0] >= '0' && arg[0] <= '9') || n > 128)
		return cli_usage_error("compose",
				       "--allow-namespace '%s': an identifier, as in NS::op", arg);
	if (o->c.nnamespaces == MAX_NAMESPACES)
		return cli_usage_error("compose", "at most %d --allow-namespace", MAX_NAMESPACES);
	o->namespaces[o->c.nnamespaces++] = arg;
	return -1;
}

static int parse_number(const char *opt, const char *arg, int64_t min, int64_t *ret)
{
	if (cli_parse_count(arg, ret) < 0 || *ret < min)
		return cli_usage_error("compose", "%s '%s': a whole number, at least %lld", opt,
				       arg, (long long)min);
	return -1;
}

static int parse_ops(struct options *o, const char *arg)
{
	if (!strcmp(arg, "all"))
		o->c.ops = ORR_COMPOSE_ALL;
	else if (!strcmp(arg, "compute"))
		o->c.ops = ORR_COMPOSE_COMPUTE;
	else if (!strcmp(arg, "comm"))
		o->c.ops = ORR_COMPOSE_COMM;
	else
		return cli_usage_error("compose", "--ops '%s': all, compute or comm", arg);
	return -1;
}

enum {
	OPT_ET = 256,
	OPT_STEP,
	OPT_STEPS,
	OPT_WARMUP,
	OPT_OPS,
	OPT_SUB,
	OPT_REPEAT,
	OPT_NAMESPACE,
	OPT_FORMAT
};

/* One option c with its value arg: -1 to go on, else the exit status. */
static int parse_one(struct options *o, int c, char *arg)
{
	int ret = -1;
	int64_t v;

	switch (c) {
	case 'o':
		if (!arg[0])
			return cli_usage_error("compose", "empty output name");
		o->out = arg;
		break;
	case OPT_ET:
		cli_et_path = arg;
		break;
	case OPT_STEP:
		if ((ret = parse_number("--step", arg, 0, &v)) < 0)
			o->c.step = v;
		break;
	case OPT_STEPS:
		if ((ret = parse_number("--steps", arg, 1, &v)) < 0)
			o->c.steps = (int)v;
		break;
	case OPT_WARMUP:
		if ((ret = parse_number("--warmup", arg, 1, &v)) < 0)
			o->c.warmup = (int)v;
		break;
	case OPT_OPS:
		return parse_ops(o, arg);
	case OPT_SUB:
		o->c.subgraph = arg;
		break;
	case OPT_REPEAT:
		return parse_repeat(o, arg);
	case OPT_NAMESPACE:
		return parse_namespace(o, arg);
	case OPT_FORMAT:
		if ((o->format = cli_parse_format(arg, false)) < 0)
			return cli_usage_error("compose", "unknown format '%s' (text or json)",
					       arg);
		break;
	}
	return ret;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "et", required_argument, NULL, OPT_ET },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "ops", required_argument, NULL, OPT_OPS },
		{ "subgraph", required_argument, NULL, OPT_SUB },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "allow-namespace", required_argument, NULL, OPT_NAMESPACE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (c != 'o' && (c < OPT_ET || c > OPT_FORMAT))
			return cli_bad_option("compose", argc, argv, opts);
		if ((ret = parse_one(o, c, optarg)) >= 0)
			return ret;
	}
	if (optind != argc - 1)
		return cli_usage_error("compose",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->in = argv[optind];
	if (!o->out)
		return cli_usage_error("compose", "no output given (-o DIR)");
	if (cli_compressed_suffix(o->out) || !strcmp(o->out, "-"))
		return cli_usage_error("compose", "-o '%s': the benchmark is a directory", o->out);
	return -1;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

static void report_text(const struct options *o, const struct orr_compose *c)
{
	struct orr_compose_coverage t;
	size_t n = orr_compose_rank_count(c), nm = orr_compose_missing_count(c);
	const struct orr_compose_rank *r0 = orr_compose_get_rank(c, 0);

	orr_compose_coverage_of(c, &t);
	if (r0->step >= 0)
		printf("composed step %lld", (long long)r0->step);
	else
		printf("composed the captured window (no step annotations)");
	printf(" of %zu rank%s into %s (bench.py, rank-R.json)\n", n, n == 1 ? "" : "s",
	       cli_text(o->out));
	if (r0->args_step >= 0 && r0->args_step != r0->step)
		printf("  operators' arguments: step %lld's execution trace (traced under its "
		       "observer)\n  GPU work and timing: step %lld, recorded without it, its ops "
		       "matched to step %lld's\n",
		       (long long)r0->args_step, (long long)r0->step, (long long)r0->args_step);
	else if (r0->args_step >= 0)
		printf("  operators' arguments, GPU work and timing: step %lld, traced under the "
		       "execution trace's observer (no later step runs the same ops)\n",
		       (long long)r0->step);
	printf("\n");
	printf("%5s %7s %6s %6s %6s %6s %8s %8s %10s %10s\n", "rank", "ops", "comms", "fills",
	       "syncs", "waits", "tensors", "storages", "step ms", "GPU ms");
	for (size_t i = 0; i < n; i++) {
		const struct orr_compose_rank *r = orr_compose_get_rank(c, i);

		printf("%5d %7llu %6llu %6llu %6llu %6llu %8llu %8llu %10.3f %10.3f\n", r->rank,
		       (unsigned long long)r->ops, (unsigned long long)r->comms,
		       (unsigned long long)r->fills, (unsigned long long)r->syncs,
		       (unsigned long long)r->waits, (unsigned long long)r->tensors,
		       (unsigned long long)r->storages, (double)r->step_ns / 1e6,
		       (double)r->gpu_ns / 1e6);
	}
	if (t.gpu_ns > 0)
		printf("\ncoverage: operators re-create %.1f%% of the step's GPU time\n"
		       "  collectives %.1f%% (waiting for their peers %.1f%%), timed stand-ins "
		       "%.1f%%, left out %.1f%%\n",
		       100 * share(t.op_ns, t.gpu_ns), 100 * share(t.comm_ns, t.gpu_ns),
		       100 * share(t.comm_wait_ns, t.gpu_ns), 100 * share(t.fill_ns, t.gpu_ns),
		       100 * share(t.dropped_ns, t.gpu_ns));
	else
		printf("\ncoverage: the step launched no GPU work\n");
	if (nm)
		printf("\nnot rebuilt (GPU time, share of the step's, GPU tasks):\n");
	for (size_t i = 0; i < nm && i < 15; i++) {
		const struct orr_compose_missing *m = orr_compose_get_missing(c, i);

		printf("  %10.3f ms %5.1f%% %6llu  %s: %s\n", (double)m->gpu_ns / 1e6,
		       100 * share(m->gpu_ns, t.gpu_ns), (unsigned long long)m->tasks,
		       cli_text(m->name), cli_text(m->reason));
	}
	if (nm > 15)
		printf("  ... and %zu more (--format=json lists them all)\n", nm - 15);
	printf("\nrun it: python3 %s/bench.py", cli_text(o->out));
	if (n > 1)
		printf("   (all ranks: torchrun --nproc-per-node %zu %s/bench.py)", n,
		       cli_text(o->out));
	printf("\n");
}

static void report_json(const struct options *o, const struct orr_compose *c)
{
	struct orr_compose_coverage t;
	struct json_out j;

	orr_compose_coverage_of(c, &t);
	json_begin(&j, stdout);
	json_str(&j, "dir", o->out);
	json_int(&j, "step", orr_compose_get_rank(c, 0)->step);
	json_int(&j, "args_step", orr_compose_get_rank(c, 0)->args_step);
	if (t.gpu_ns > 0) {
		json_double(&j, "coverage", share(t.op_ns, t.gpu_ns));
		json_object(&j, "shares");
		json_double(&j, "operators", share(t.op_ns, t.gpu_ns));
		json_double(&j, "collectives", share(t.comm_ns, t.gpu_ns));
		json_double(&j, "collective_wait", share(t.comm_wait_ns, t.gpu_ns));
		json_double(&j, "stand_ins", share(t.fill_ns, t.gpu_ns));
		json_double(&j, "left_out", share(t.dropped_ns, t.gpu_ns));
		json_close_object(&j);
	}
	json_array(&j, "ranks");
	for (size_t i = 0; i < orr_compose_rank_count(c); i++) {
		const struct orr_compose_rank *r = orr_compose_get_rank(c, i);

		json_object(&j, NULL);
		json_int(&j, "rank", r->rank);
		json_int(&j, "step", r->step);
		json_int(&j, "args_step", r->args_step);
		json_int(&j, "step_ns", r->step_ns);
		json_int(&j, "ops", (int64_t)r->ops);
		json_int(&j, "comms", (int64_t)r->comms);
		json_int(&j, "fills", (int64_t)r->fills);
		json_int(&j, "syncs", (int64_t)r->syncs);
		json_int(&j, "records", (int64_t)r->records);
		json_int(&j, "waits", (int64_t)r->waits);
		json_int(&j, "tensors", (int64_t)r->tensors);
		json_int(&j, "storages", (int64_t)r->storages);
		json_int(&j, "gpu_ns", r->gpu_ns);
		json_int(&j, "op_ns", r->op_ns);
		json_int(&j, "comm_ns", r->comm_ns);
		json_int(&j, "comm_wait_ns", r->comm_wait_ns);
		json_int(&j, "fill_ns", r->fill_ns);
		json_int(&j, "dropped_ns", r->dropped_ns);
		json_close_object(&j);
	}
	json_close_array(&j);
	json_array(&j, "missing");
	for (size_t i = 0; i < orr_compose_missing_count(c); i++) {
		const struct orr_compose_missing *m = orr_compose_get_missing(c, i);

		json_object(&j, NULL);
		json_str(&j, "name", m->name);
		json_str(&j, "reason", m->reason);
		json_int(&j, "tasks", (int64_t)m->tasks);
		json_int(&j, "gpu_ns", m->gpu_ns);
		json_close_object(&j);
	}
	json_close_array(&j);
	json_end(&j);
}

/*
 * An execution trace given with --et whose ops match no rank's step: the plan is the
 * trace's alone (operators' shapes from the trace, stand-ins where it has none), which
 * should not pass for one made with the execution trace.
 */
static void warn_unlinked_et(const struct orr_compose *c)
{
	if (!cli_et_path)
		return;
	for (size_t i = 0; i < orr_compose_rank_count(c); i++)
		if (orr_compose_get_rank(c, i)->args_step >= 0)
			return;
	cli_warning("'%s': no rank's ops match the execution trace's, so it gives no "
		    "operator's arguments (args_step -1): the plan is the trace's alone; give the "
		    "execution trace recorded with this trace",
		    cli_et_path);
}

/* The plan of t, written into a new directory renamed to DIR when complete. */
static int compose(struct options *o, const struct orr_trace *t)
{
	struct orr_graph *g = NULL;
	struct orr_compose *c = NULL;
	struct orr_outfile out;
	struct orr_diag d;
	int err, ret = EXIT_FAIL;

	orr_diag_clear(&d);
	if ((err = cli_graph_build(t, NULL, &g, &d))) {
		cli_error("cannot build the execution graph of '%s': %s%s%s", o->in,
			  orr_strerror(err), d.msg[0] ? ": " : "", d.msg);
		goto out;
	}
	if ((err = orr_compose_build(g, &o->c, &c, &d))) {
		cli_error("cannot compose '%s': %s", o->in, d.msg[0] ? d.msg : orr_strerror(err));
		goto out;
	}
	warn_unlinked_et(c);
	if ((err = cli_check_out_dir(o->out)) ||
	    (err = orr_outfile_open(&out, o->out, ORR_OUTFILE_DIR))) {
		cli_error("cannot write '%s': %s", o->out,
			  err == -ENOTEMPTY ? "it exists and is not empty" : orr_strerror(err));
		goto out;
	}
	if ((err = orr_compose_write(c, orr_outfile_dir(&out), &d))) {
		cli_error("cannot write '%s': %s%s%s", o->out, orr_strerror(err),
			  d.msg[0] ? ": " : "", d.msg);
		orr_outfile_abort(&out);
		goto out;
	}
	if ((err = orr_outfile_commit(&out, false))) {
		cli_error("cannot write '%s': %s", o->out, orr_strerror(err));
		goto out;
	}
	if (o->format == CLI_FORMAT_JSON)
		report_json(o, c);
	else
		report_text(o, c);
	ret = EXIT_OK;
out:
	orr_compose_free(c);
	orr_graph_free(g);
	return ret;
}

int cmd_compose(int argc, char **argv)
{
	struct options o = { .c = { .step = -1,
				    .steps = 20,
				    .warmup = 5,
				    .producer = "orrery compose " ORR_VERSION } };
	struct orr_trace *t = NULL;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	o.c.repeats = o.repeats;
	o.c.namespaces = o.namespaces;
	if (cli_output_inside(o.out, o.in)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.out, o.in);
		return EXIT_FAIL;
	}
	orr_outfile_catch_signals();
	if (cli_import(o.in, &t) < 0)
		return EXIT_FAIL;
	ret = compose(&o, t);
	orr_trace_free(t);
	return ret;
}
