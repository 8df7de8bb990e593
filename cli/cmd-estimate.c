/* SPDX-License-Identifier: MIT */
/*
 * orrery estimate: the step time of a configuration that was never run, from a trace
 * of one that was (docs/orrery-estimate.md).  The trace's structure gives the
 * configuration it ran; the options change it; the graph's tasks are re-timed for the
 * new one (estimator/retime.c) and replayed, and the memory per GPU is estimated.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "estimate.h"
#include "fit.h"
#include "replay-common.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery estimate [OPTIONS] TRACE\n\n"
	"Estimates the step time and the memory per GPU of the job traced in TRACE under\n"
	"another configuration.  Every option defaults to what the trace recorded (orrery\n"
	"fit TRACE shows it); the GEMMs, collectives and kernels whose work changes are\n"
	"re-timed with models fitted on the trace, and the graph is replayed.\n\n"
	"  --tp N, --dp N          tensor- and data-parallel degrees\n"
	"  --micro-batch N         sequences per micro-batch\n"
	"  --hidden N, --ffn N     hidden size, FFN size\n"
	"  --heads N, --kv-heads N attention heads, key-value groups\n"
	"  --seq N, --vocab N      sequence length, vocabulary\n"
	"  --layers N, --pp N, --vpp N, --cp N, --global-batch N, --recompute MODE,\n"
	"  --sequence-parallel, --precision bf16|fp16\n"
	"                          accepted; a change needs a rewrite of the graph, which\n"
	"                          is not done yet, and is refused with the reason\n"
	"  --distributed-optimizer shard the optimizer state over DP (memory)\n"
	"  --gpus-per-node N       GPUs a node holds (default: the hardware table's): a\n"
	"                          larger group talks over the network\n"
	"  --forward-only          the estimate is of forward passes (a forward-only trace)\n"
	"  --costs FILE            GEMM and kernel models from orrery fit -o FILE (of any\n"
	"                          trace of the same GPU) instead of fitting them here\n"
	"  --timeline FILE         write the estimated timeline (Chrome/Perfetto JSON)\n"
	"  --rank N                the rank whose structure is the recorded configuration\n"
	"  --format=FMT            text (default) or json (docs/orrery-estimate.md)\n"
	"  -h, --help              this help\n";

/* The options that set a size, each to its field of the target configuration. */
static const struct size_opt {
	const char *name;
	size_t offset;
} size_opts[] = {
	{ "tp", offsetof(struct orr_train_config, tp) },
	{ "pp", offsetof(struct orr_train_config, pp) },
	{ "dp", offsetof(struct orr_train_config, dp) },
	{ "cp", offsetof(struct orr_train_config, cp) },
	{ "vpp", offsetof(struct orr_train_config, vpp) },
	{ "layers", offsetof(struct orr_train_config, layers) },
	{ "hidden", offsetof(struct orr_train_config, hidden) },
	{ "heads", offsetof(struct orr_train_config, heads) },
	{ "kv-heads", offsetof(struct orr_train_config, kv_groups) },
	{ "ffn", offsetof(struct orr_train_config, ffn) },
	{ "vocab", offsetof(struct orr_train_config, vocab) },
	{ "seq", offsetof(struct orr_train_config, seq) },
	{ "micro-batch", offsetof(struct orr_train_config, micro_batch) },
};

#define NSIZE (sizeof(size_opts) / sizeof(size_opts[0]))

enum {
	OPT_SIZE = 256, /* + index into size_opts */
	OPT_GLOBAL = 512,
	OPT_GPN,
	OPT_RECOMPUTE,
	OPT_SP,
	OPT_DISTOPT,
	OPT_PRECISION,
	OPT_FORWARD,
	OPT_TIMELINE,
	OPT_COSTS,
	OPT_RANK,
	OPT_FORMAT,
};

struct options {
	int format;
	int64_t rank, global_batch, gpus_per_node;
	int64_t size[NSIZE]; /* 0: not given */
	int recompute;       /* -1: not given */
	bool sp, distopt, forward_only;
	int precision; /* -1: not given */
	const char *timeline, *costs, *trace;
};

static int parse_named(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* One option's argument into o; returns -1 to go on, else the exit status. */
static int parse_one(int c, const char *arg, struct options *o)
{
	static const char *const recompute[] = { "none", "selective", "full" };
	static const char *const precision[] = { "bf16", "fp16" };

	if (c >= OPT_SIZE && c < OPT_SIZE + (int)NSIZE) {
		if (cli_parse_count(arg, &o->size[c - OPT_SIZE]) < 0 || o->size[c - OPT_SIZE] < 1)
			return cli_usage_error("estimate", "bad --%s '%s' (a count, 1 or more)",
					       size_opts[c - OPT_SIZE].name, arg);
		return -1;
	}
	switch (c) {
	case OPT_GLOBAL:
		if (cli_parse_count(arg, &o->global_batch) < 0 || o->global_batch < 1)
			return cli_usage_error("estimate", "bad --global-batch '%s'", arg);
		return -1;
	case OPT_GPN:
		if (cli_parse_count(arg, &o->gpus_per_node) < 0 || o->gpus_per_node < 1)
			return cli_usage_error("estimate", "bad --gpus-per-node '%s'", arg);
		return -1;
	case OPT_RECOMPUTE:
		if ((o->recompute = parse_named(arg, recompute, 3)) < 0)
			return cli_usage_error("estimate",
					       "bad --recompute '%s' (none, "
					       "selective or full)",
					       arg);
		return -1;
	case OPT_PRECISION:
		if ((o->precision = parse_named(arg, precision, 2)) < 0)
			return cli_usage_error("estimate", "bad --precision '%s' (bf16 or fp16)",
					       arg);
		return -1;
	case OPT_FORMAT:
		if ((o->format = cli_parse_format(arg, false)) < 0)
			return cli_usage_error("estimate", "unknown format '%s' (text or json)",
					       arg);
		return -1;
	case OPT_RANK:
		if (cli_parse_count(arg, &o->rank) < 0)
			return cli_usage_error("estimate", "bad --rank '%s'", arg);
		return -1;
	}
	return cli_usage_error("estimate", "bad option");
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	struct option opts[NSIZE + 14] = { { 0 } };
	size_t n = 0;
	int c, ret;

	for (size_t i = 0; i < NSIZE; i++)
		opts[n++] = (struct option){ size_opts[i].name, required_argument, NULL,
					     OPT_SIZE + (int)i };
	opts[n++] = (struct option){ "global-batch", required_argument, NULL, OPT_GLOBAL };
	opts[n++] = (struct option){ "gpus-per-node", required_argument, NULL, OPT_GPN };
	opts[n++] = (struct option){ "recompute", required_argument, NULL, OPT_RECOMPUTE };
	opts[n++] = (struct option){ "sequence-parallel", no_argument, NULL, OPT_SP };
	opts[n++] = (struct option){ "distributed-optimizer", no_argument, NULL, OPT_DISTOPT };
	opts[n++] = (struct option){ "precision", required_argument, NULL, OPT_PRECISION };
	opts[n++] = (struct option){ "forward-only", no_argument, NULL, OPT_FORWARD };
	opts[n++] = (struct option){ "timeline", required_argument, NULL, OPT_TIMELINE };
	opts[n++] = (struct option){ "costs", required_argument, NULL, OPT_COSTS };
	opts[n++] = (struct option){ "rank", required_argument, NULL, OPT_RANK };
	opts[n++] = (struct option){ "format", required_argument, NULL, OPT_FORMAT };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_OK;
		}
		if (c == OPT_SP || c == OPT_DISTOPT || c == OPT_FORWARD) {
			o->sp |= c == OPT_SP;
			o->distopt |= c == OPT_DISTOPT;
			o->forward_only |= c == OPT_FORWARD;
			continue;
		}
		if (c == OPT_TIMELINE || c == OPT_COSTS) {
			*(c == OPT_TIMELINE ? &o->timeline : &o->costs) = optarg;
			continue;
		}
		if ((ret = parse_one(c, optarg, o)) >= 0)
			return ret;
	}
	if (optind + 1 != argc)
		return cli_usage_error("estimate",
				       optind == argc ? "no trace given (an estimate from a model "
							"description alone is not done yet)"
						      : "one trace at a time");
	o->trace = argv[optind];
	return -1;
}

/* ---- the configurations ---- */

/* The GEMMs' operand type, the precision the trace ran at (BF16 without GEMMs). */
static enum orr_dtype trace_precision(const struct cli_fit *f)
{
	for (size_t i = 0; i < f->gemm.nclasses; i++)
		if (f->gemm.classes[i].dtype == ORR_DTYPE_FP16 ||
		    f->gemm.classes[i].dtype == ORR_DTYPE_BF16 ||
		    f->gemm.classes[i].dtype == ORR_DTYPE_FP32)
			return f->gemm.classes[i].dtype;
	return ORR_DTYPE_BF16;
}

/* The value of size option `name`, 0 when not given. */
static int64_t given(const struct options *o, const char *name)
{
	for (size_t i = 0; i < NSIZE; i++)
		if (strcmp(size_opts[i].name, name) == 0)
			return o->size[i];
	return 0;
}

/* The recorded configuration, and the target: the recorded one changed by the options. */
static int configs(const struct options *o, const struct cli_fit *f, struct cli_estimate *e)
{
	const char *missing = NULL;

	if (orr_train_config_from_structure(&f->st, &e->from, &missing)) {
		cli_error("%s: the trace does not give its %s (orrery fit %s shows why): it "
			  "cannot be estimated in another configuration",
			  o->trace, missing, o->trace);
		return EXIT_FAIL;
	}
	e->from.precision = f->gemm_err ? ORR_DTYPE_BF16 : trace_precision(f);
	e->to = e->from;
	for (size_t i = 0; i < NSIZE; i++)
		if (o->size[i])
			*(int64_t *)((char *)&e->to + size_opts[i].offset) = o->size[i];
	/* New heads without --kv-heads: attention stays multi-head if it was. */
	if (!given(o, "kv-heads") && given(o, "heads"))
		e->to.kv_groups = e->from.kv_groups == e->from.heads ? e->to.heads
								     : e->from.kv_groups;
	if (o->global_batch) {
		int64_t per = e->to.micro_batch * e->to.dp;

		if (o->global_batch % per) {
			cli_error(
				"--global-batch %lld is not a multiple of micro-batch x dp (%lld)",
				(long long)o->global_batch, (long long)per);
			return EXIT_FAIL;
		}
		e->to.micro_batches = o->global_batch / per;
	}
	if (o->recompute >= 0)
		e->to.recompute = (enum orr_recompute)o->recompute;
	if (o->precision >= 0)
		e->to.precision = o->precision ? ORR_DTYPE_FP16 : ORR_DTYPE_BF16;
	e->to.sequence_parallel = o->sp;
	e->to.distributed_optimizer = o->distopt;
	return EXIT_OK;
}

/* ---- replaying ---- */

/* The mean job step of r, and rank ri's breakdown over the steps. */
static void measure(const struct orr_replay *r, size_t ri, bool predicted, size_t *ret_steps,
		    struct cli_estimate_step *ret)
{
	struct orr_replay_step *s = NULL;
	size_t n = 0;
	double sum = 0;

	memset(ret, 0, sizeof(*ret));
	orr_replay_job_steps(r, &s, &n);
	for (size_t i = 0; i < n; i++) {
		int64_t a = predicted ? s[i].predicted_start_ns : s[i].measured_start_ns;
		int64_t b = predicted ? s[i].predicted_end_ns : s[i].measured_end_ns;
		struct orr_breakdown bd;

		sum += (double)(b - a);
		orr_replay_breakdown(r, ri, predicted, a, b, &bd);
		ret->breakdown.exposed_compute_ns += bd.exposed_compute_ns;
		ret->breakdown.overlapped_ns += bd.overlapped_ns;
		ret->breakdown.exposed_comm_ns += bd.exposed_comm_ns;
		ret->breakdown.other_ns += bd.other_ns;
	}
	ret->step_ns = n ? sum / (double)n : NAN;
	*ret_steps = n;
	free(s);
}

static int replay(const struct orr_graph *g, const float *factors, struct orr_replay **ret)
{
	const struct orr_replay_options opts = { .task_factors = factors };
	struct orr_diag d;
	int err = orr_replay_run(g, factors ? &opts : NULL, ret, &d);

	if (err)
		cli_error("cannot replay: %s%s%s", orr_strerror(err), d.msg[0] ? ": " : "", d.msg);
	return err;
}

/* ---- what the estimate gives ---- */

/*
 * Model FLOPs of a step (Narayanan et al., SC'21, eq. 3): per pass 24·B·s·L·h²·(1 +
 * s/(6h)) + 2·B·s·h·V for B sequences; training is three passes (forward, and a
 * backward of two), four with full recompute.
 */
static double model_flops(const struct orr_train_config *c, bool forward_only)
{
	double B = (double)(c->micro_batch * c->micro_batches * c->dp), s = (double)c->seq;
	double h = (double)c->hidden, L = (double)c->layers, V = (double)c->vocab;
	double pass = 24 * B * s * L * h * h * (1 + s / (6 * h)) + 2 * B * s * h * V;

	if (forward_only)
		return pass;
	return pass * (c->recompute == ORR_RECOMPUTE_FULL ? 4 : 3);
}

static void rates(struct cli_estimate *e)
{
	const struct orr_train_config *c = &e->to;
	double gpus = (double)(c->tp * c->pp * c->dp * c->cp), sec = e->estimated.step_ns / 1e9;
	double peak = e->gpu ? e->gpu->peak_flops[c->precision] : 0;

	e->tokens_per_s_per_gpu =
		(double)(c->micro_batch * c->micro_batches * c->dp * c->seq) / sec / gpus;
	e->mfu = peak > 0 ? model_flops(c, e->forward_only) / (sec * gpus * peak) : NAN;
}

static int estimate(const struct options *o, const struct orr_graph *g, const struct cli_fit *f,
		    const struct orr_retime_models *m, size_t ri, struct cli_estimate *e)
{
	size_t n = orr_graph_task_count(g);
	float *factors = orr_xmalloc((n + 1) * sizeof(*factors));
	struct orr_replay *base = NULL, *est = NULL;
	const char *why = NULL;
	int err, ret = EXIT_FAIL;

	err = orr_retime(g, &f->st, &e->from, &e->to, m, factors, &e->retime, &why);
	if (err == -ENOTSUP) {
		cli_error("changing the %s needs a rewrite of the graph, which orrery does not "
			  "do yet; --tp, --dp, --micro-batch, --hidden, --ffn, --heads, "
			  "--kv-heads, --seq and --vocab can change",
			  why);
		goto out;
	}
	if (err) {
		cli_error("the configuration is not one Megatron would run (a size that does not "
			  "divide another: hidden %% heads, heads %% tp, kv-heads %% tp)");
		goto out;
	}
	if (replay(g, NULL, &base) || replay(g, factors, &est))
		goto out;
	measure(base, ri, false, &e->steps, &e->replayed);
	e->measured_ns = e->replayed.step_ns;
	measure(base, ri, true, &e->steps, &e->replayed);
	measure(est, ri, true, &e->steps, &e->estimated);
	e->memory_err = orr_memory_estimate(&e->to, e->gpu, 0, &e->memory);
	rates(e);
	if (o->timeline && (err = cli_timeline_write(est, o->timeline))) {
		cli_error("cannot write '%s': %s", o->timeline, orr_strerror(err));
		goto out;
	}
	ret = EXIT_OK;
out:
	orr_replay_free(est);
	orr_replay_free(base);
	free(factors);
	return ret;
}

static int read_costs(const char *path, struct orr_costs *ret)
{
	struct orr_diag d;
	int err = orr_costs_read(path, ret, &d);

	if (err) {
		cli_error("%s: cannot read its costs: %s", path,
			  d.msg[0] ? d.msg : orr_strerror(err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Costs fitted on another GPU would re-time this one's kernels with that one's. */
static int same_gpu(const char *path, const struct orr_costs *c, const struct cli_fit *f)
{
	if (!c->gpu || !f->gpu || c->gpu == f->gpu)
		return EXIT_OK;
	cli_error("%s: its costs were fitted on %s, the trace ran on %s: fit costs on a trace "
		  "of the same GPU",
		  path, c->gpu->id, f->gpu->id);
	return EXIT_FAIL;
}

/* The models that re-time: the costs file's (--costs), else those fitted on the trace. */
static void models_of(const struct cli_fit *f, const struct orr_costs *c, int gpus_per_node,
		      struct orr_retime_models *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->gpus_per_node = gpus_per_node;
	if (c) {
		ret->gemm = c->gemm_fitted ? &c->gemm : NULL;
		ret->kern = c->kern_fitted ? &c->kern : NULL;
		for (size_t i = 0; i < c->ncoll; i++)
			if (c->coll[i].fitted && c->coll[i].m.constrained)
				ret->coll[c->coll[i].kind][c->coll[i].link] = &c->coll[i].m;
		return;
	}
	ret->gemm = f->gemm_err ? NULL : &f->gemm;
	ret->kern = f->kern_err ? NULL : &f->kern;
	for (size_t i = 0; i < f->ncoll; i++)
		if (!f->coll[i].err && f->coll[i].m.constrained)
			ret->coll[f->coll[i].kind][f->coll[i].link] = &f->coll[i].m;
}

int cmd_estimate(int argc, char **argv)
{
	struct options o = {
		.format = CLI_FORMAT_TEXT, .rank = -1, .recompute = -1, .precision = -1
	};
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct cli_estimate e = { 0 };
	struct orr_costs costs = { 0 };
	struct orr_retime_models m;
	struct cli_fit f;
	size_t ri;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = cli_fit_open(o.trace, o.timeline, o.rank, &t, &g, &ri);
	if (ret != EXIT_OK)
		goto out;
	if (o.costs && (ret = read_costs(o.costs, &costs)) != EXIT_OK)
		goto out;
	cli_fit_run(g, ri, o.trace, &f);
	models_of(&f, o.costs ? &costs : NULL, (int)o.gpus_per_node, &m);
	if (o.costs && (ret = same_gpu(o.costs, &costs, &f)) != EXIT_OK) {
		cli_fit_release(&f);
		goto out;
	}
	e.costs = o.costs;
	e.trace = o.trace;
	e.ranks = orr_graph_rank_count(g);
	e.rank = f.rank;
	e.gpu = f.gpu;
	e.forward_only = !f.st.backward;
	if (o.forward_only && !e.forward_only) {
		cli_error("%s has a backward pass: --forward-only would need a rewrite of the "
			  "graph, which orrery does not do yet",
			  o.trace);
		ret = EXIT_FAIL;
	} else if ((ret = configs(&o, &f, &e)) == EXIT_OK &&
		   (ret = estimate(&o, g, &f, &m, ri, &e)) == EXIT_OK) {
		if (o.format == CLI_FORMAT_JSON)
			cli_estimate_json(&e);
		else
			cli_estimate_text(&e);
	}
	cli_fit_release(&f);
out:
	if (o.costs)
		orr_costs_release(&costs);
	orr_graph_free(g);
	orr_trace_free(t);
	return ret;
}
