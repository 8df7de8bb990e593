/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif's options (docs/orrery-whatif.md): its own (the GPU budget, the lists to
 * sweep, the ranking, threads and output), and the model and fixed options, which are
 * orrery estimate's and handed to its parser.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "whatif.h"
#include "banned.h"

const char cli_whatif_usage[] =
	"usage: orrery whatif [OPTIONS] TRACE --gpus N|A-B\n"
	"       orrery whatif --gpu NAME --layers L --hidden H --heads A --seq S\n"
	"                     --global-batch G --gpus N|A-B [OPTIONS]\n\n"
	"Sweeps every layout of a model on a GPU budget: tensor, pipeline, context and data\n"
	"parallelism, interleaving, micro-batch size and recompute, each checked as\n"
	"Megatron-LM checks it and estimated as orrery estimate estimates it, and ranks the\n"
	"feasible ones.  With TRACE, of the job it recorded (every model option defaults to\n"
	"what it recorded, and the recorded layout is marked); without, of a described model.\n\n"
	"  --gpus N|A-B            the GPUs: a count, or every count from A to B (then the\n"
	"                          Pareto front of GPUs against step time)\n"
	"  --tp LIST, --pp LIST, --cp LIST, --vpp LIST, --micro-batch LIST\n"
	"                          values to try, e.g. 1,2,4 (default: every one that can\n"
	"                          be valid; CP 1)\n"
	"  --first-stage-layers LIST, --last-stage-layers LIST\n"
	"                          uneven pipeline splits to try (Megatron-Core's\n"
	"                          --decoder-first/last-pipeline-num-layers): the first or\n"
	"                          last stage's layers, 0 as the others (default: 0, an\n"
	"                          even split); with PP 2 or more and no VPP\n"
	"  --recompute LIST        none, selective, full (default: all three)\n"
	"  --sequence-parallel auto|on|off\n"
	"  --distributed-optimizer auto|on|off\n"
	"                          with TP > 1 and DP > 1 respectively; auto: as recorded\n"
	"                          (with TRACE), on (without)\n"
	"  --allow-cross-node-tp   TP may span nodes (default: at most --gpus-per-node)\n"
	"  --rank-by KEY           time (step time, default), tokens-per-gpu or cost\n"
	"                          (GPUs x step time)\n"
	"  --top K                 the best kept: the ranked table's rows and JSON's\n"
	"                          ranked (10; 0: every feasible one)\n"
	"  --show-infeasible       list the configurations not evaluated, with the reason\n"
	"  --jobs N                threads (default: every core)\n"
	"  --progress, --no-progress\n"
	"                          a progress line on stderr (default: on a terminal)\n"
	"  --format=FMT            text (default), json or csv: every configuration, in\n"
	"                          the order of the space, written as the sweep goes\n"
	"  -o, --output FILE       write the report to FILE\n"
	"  -h, --help              this help\n\n"
	"Model and fixed options, as orrery estimate takes them: --gpu, --layers, --hidden,\n"
	"--ffn, --heads, --kv-heads, --seq, --vocab, --global-batch, --gpus-per-node,\n"
	"--nic-gbps, --precision, --attention, --fsdp, --overlap-grad-reduce,\n"
	"--forward-only, --costs, --transfer-costs, --launch-us, --gemm-model, --rank,\n"
	"--swiglu, --untie-embeddings-and-output-weights, --normalization,\n"
	"--position-embedding-type, --p2p-scatter-gather, --sync-timers, --sync-layers\n"
	"(orrery estimate --help).\n\n"
	"Under mpirun (OpenMPI), the configurations are shared among the processes, each on\n"
	"--jobs threads, and rank 0 writes the report: the same as one process writes.\n";

enum {
	OPT_LIST = 256, /* + CLI_WHATIF_LISTS */
	OPT_GPUS = 300,
	OPT_RECOMPUTE,
	OPT_SP,
	OPT_DISTOPT,
	OPT_RANK_BY,
	OPT_TOP,
	OPT_JOBS,
	OPT_FORMAT,
	OPT_SHOW,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_CROSS,
	OPT_FWD_ARG = 400, /* orrery estimate's, with an argument */
	OPT_FWD_FLAG,      /* and without */
};

static const char *const list_names[CLI_WHATIF_LISTS] = {
	"tp", "pp", "cp", "vpp", "micro-batch", "first-stage-layers", "last-stage-layers"
};
/* The least value of each list: the stages' layers 0 (as the other stages). */
static const int64_t list_least[CLI_WHATIF_LISTS] = { 1, 1, 1, 1, 1, 0, 0 };
static const char *const fwd_args[] = { "gpu",
					"layers",
					"hidden",
					"ffn",
					"heads",
					"kv-heads",
					"seq",
					"vocab",
					"global-batch",
					"gpus-per-node",
					"nic-gbps",
					"precision",
					"attention",
					"costs",
					"launch-us",
					"gemm-model",
					"rank",
					"normalization",
					"position-embedding-type" };
static const char *const fwd_flags[] = { "fsdp",
					 "overlap-grad-reduce",
					 "forward-only",
					 "swiglu",
					 "untie-embeddings-and-output-weights",
					 "p2p-scatter-gather",
					 "sync-timers",
					 "sync-layers",
					 "transfer-costs" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* "1,2,4": counts of `least` or more; a value given twice counts once (a row each). */
static int parse_list(const char *name, int64_t least, const char *arg, int64_t **ret,
		      size_t *ret_n)
{
	char *copy = orr_xstrdup(arg), *save = NULL;
	size_t len = strlen(arg);
	/* strtok_r() would skip an empty item */
	int err = !len || arg[0] == ',' || arg[len - 1] == ',' || strstr(arg, ",,") != NULL;

	free(*ret);
	*ret = NULL;
	*ret_n = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
		int64_t v;
		bool again = false;

		if (cli_parse_count(t, &v) < 0 || v < least) {
			err = 1;
			break;
		}
		for (size_t i = 0; i < *ret_n && !again; i++)
			again = (*ret)[i] == v;
		if (again)
			continue;
		*ret = orr_xrealloc(*ret, (*ret_n + 1) * sizeof(**ret));
		(*ret)[(*ret_n)++] = v;
	}
	if (err || !*ret_n)
		err = cli_usage_error("whatif", "bad --%s '%s' (counts of %lld or more, e.g. %s)",
				      name, arg, (long long)least, least ? "1,2,4" : "0,2,3");
	free(copy);
	return err ? err : -1;
}

static int parse_recompute(const char *arg, unsigned *ret)
{
	char *copy = orr_xstrdup(arg), *save = NULL;
	int err = -1;

	*ret = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int r = 0;

		while (r < ORR_RECOMPUTE_COUNT && strcmp(t, orr_recompute_name(r)) != 0)
			r++;
		if (r == ORR_RECOMPUTE_COUNT) {
			err = cli_usage_error("whatif",
					      "bad --recompute '%s' (none, selective, full, "
					      "comma-separated)",
					      arg);
			break;
		}
		*ret |= 1u << r;
	}
	if (err < 0 && !*ret)
		err = cli_usage_error("whatif", "bad --recompute '%s'", arg);
	free(copy);
	return err;
}

static int parse_switch(const char *name, const char *arg, int *ret)
{
	if (strcmp(arg, "auto") == 0)
		*ret = ORR_WHATIF_AUTO;
	else if (strcmp(arg, "on") == 0)
		*ret = 1;
	else if (strcmp(arg, "off") == 0)
		*ret = 0;
	else
		return cli_usage_error("whatif", "bad --%s '%s' (auto, on or off)", name, arg);
	return -1;
}

int cli_whatif_gpus(const char *cmd, const char *opt, const char *arg, int64_t *ret_min,
		    int64_t *ret_max)
{
	const char *dash = strchr(arg, '-');
	char a[32];
	int bad;

	if (!dash) {
		bad = cli_parse_count(arg, ret_min) < 0;
		*ret_max = *ret_min;
	} else {
		bad = dash - arg >= (ptrdiff_t)sizeof(a);
		if (!bad) {
			memcpy(a, arg, (size_t)(dash - arg));
			a[dash - arg] = '\0';
			bad = cli_parse_count(a, ret_min) < 0 ||
			      cli_parse_count(dash + 1, ret_max) < 0;
		}
	}
	if (bad || *ret_min < 1 || *ret_max < *ret_min)
		return cli_usage_error(cmd, "bad --%s '%s' (a count, or a range A-B)", opt, arg);
	return -1;
}

static int parse_rank_by(const char *arg, enum orr_whatif_rank *ret)
{
	if (strcmp(arg, "time") == 0)
		*ret = ORR_WHATIF_RANK_TIME;
	else if (strcmp(arg, "tokens-per-gpu") == 0)
		*ret = ORR_WHATIF_RANK_TOKENS;
	else if (strcmp(arg, "cost") == 0)
		*ret = ORR_WHATIF_RANK_COST;
	else
		return cli_usage_error("whatif",
				       "bad --rank-by '%s' (time, tokens-per-gpu or cost)", arg);
	return -1;
}

static int parse_one(int c, const char *arg, struct cli_whatif_options *o)
{
	if (c >= OPT_LIST && c < OPT_LIST + CLI_WHATIF_LISTS)
		return parse_list(list_names[c - OPT_LIST], list_least[c - OPT_LIST], arg,
				  &o->list[c - OPT_LIST], &o->nlist[c - OPT_LIST]);
	switch (c) {
	case OPT_GPUS:
		return cli_whatif_gpus("whatif", "gpus", arg, &o->gpus_min, &o->gpus_max);
	case OPT_RECOMPUTE:
		return parse_recompute(arg, &o->recompute);
	case OPT_SP:
		return parse_switch("sequence-parallel", arg, &o->sp);
	case OPT_DISTOPT:
		return parse_switch("distributed-optimizer", arg, &o->distopt);
	case OPT_RANK_BY:
		return parse_rank_by(arg, &o->rank_by);
	case OPT_TOP:
		if (cli_parse_count(arg, &o->top) < 0)
			return cli_usage_error(
				"whatif",
				"bad --top '%s' (a count, 0 to 2147483647; 0: every feasible one)",
				arg);
		return -1;
	case OPT_JOBS:
		if (cli_parse_count(arg, &o->jobs) < 0 || o->jobs < 1 || o->jobs > 1024)
			return cli_usage_error("whatif", "bad --jobs '%s' (1 to 1024)", arg);
		return -1;
	case OPT_FORMAT:
		if ((o->format = cli_parse_format(arg, true)) < 0)
			return cli_usage_error("whatif", "unknown format '%s' (text, json or csv)",
					       arg);
		return -1;
	case 'o':
		if (!arg[0])
			return cli_usage_error("whatif", "empty output name");
		if (cli_compressed_suffix(arg))
			return cli_usage_error(
				"whatif",
				"-o '%s': orrery writes plain text, JSON or CSV; name it "
				"without '%s' and compress it afterwards",
				arg, cli_compressed_suffix(arg));
		cli_output_arg(arg);
		o->out = arg;
		return -1;
	case OPT_SHOW:
		o->show_infeasible = true;
		return -1;
	case OPT_PROGRESS:
	case OPT_NO_PROGRESS:
		o->progress = c == OPT_PROGRESS;
		return -1;
	case OPT_CROSS:
		o->allow_cross_node_tp = true;
		return -1;
	}
	return -2;
}

/* Appends s (owned) to the estimate parser's vector, which stays NULL-terminated. */
static void push(struct cli_whatif_options *o, char *s)
{
	o->fwd = orr_xrealloc(o->fwd, (size_t)(o->nfwd + 2) * sizeof(*o->fwd));
	o->fwd[o->nfwd++] = s;
	o->fwd[o->nfwd] = NULL;
}

static void forward(struct cli_whatif_options *o, const char *name, const char *arg)
{
	push(o, arg ? orr_xasprintf("--%s=%s", name, arg) : orr_xasprintf("--%s", name));
}

static size_t table(struct option *v)
{
	size_t n = 0;

	for (int i = 0; i < CLI_WHATIF_LISTS; i++)
		v[n++] = (struct option){ list_names[i], required_argument, NULL, OPT_LIST + i };
	v[n++] = (struct option){ "gpus", required_argument, NULL, OPT_GPUS };
	v[n++] = (struct option){ "recompute", required_argument, NULL, OPT_RECOMPUTE };
	v[n++] = (struct option){ "sequence-parallel", required_argument, NULL, OPT_SP };
	v[n++] = (struct option){ "distributed-optimizer", required_argument, NULL, OPT_DISTOPT };
	v[n++] = (struct option){ "rank-by", required_argument, NULL, OPT_RANK_BY };
	v[n++] = (struct option){ "top", required_argument, NULL, OPT_TOP };
	v[n++] = (struct option){ "jobs", required_argument, NULL, OPT_JOBS };
	v[n++] = (struct option){ "format", required_argument, NULL, OPT_FORMAT };
	v[n++] = (struct option){ "output", required_argument, NULL, 'o' };
	v[n++] = (struct option){ "show-infeasible", no_argument, NULL, OPT_SHOW };
	v[n++] = (struct option){ "progress", no_argument, NULL, OPT_PROGRESS };
	v[n++] = (struct option){ "no-progress", no_argument, NULL, OPT_NO_PROGRESS };
	v[n++] = (struct option){ "allow-cross-node-tp", no_argument, NULL, OPT_CROSS };
	v[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	for (size_t i = 0; i < COUNT(fwd_args); i++)
		v[n++] = (struct option){ fwd_args[i], required_argument, NULL, OPT_FWD_ARG };
	for (size_t i = 0; i < COUNT(fwd_flags); i++)
		v[n++] = (struct option){ fwd_flags[i], no_argument, NULL, OPT_FWD_FLAG };
	return n;
}

#define WHATIF_OPTS (CLI_WHATIF_LISTS + 14 + COUNT(fwd_args) + COUNT(fwd_flags) + 1)

bool cli_whatif_has_option(const char *name, size_t len)
{
	struct option opts[WHATIF_OPTS] = { { 0 } };
	size_t n = table(opts);

	for (size_t i = 0; i < n; i++)
		if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
			return true;
	return false;
}

static long cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : n;
}

int cli_whatif_parse(int argc, char **argv, struct cli_whatif_options *o)
{
	struct option opts[WHATIF_OPTS] = { { 0 } };
	int c, idx, ret, format;

	memset(o, 0, sizeof(*o));
	o->sp = o->distopt = ORR_WHATIF_AUTO;
	o->top = 10;
	o->jobs = cores();
	o->format = CLI_FORMAT_TEXT;
	o->progress = -1;
	push(o, orr_xstrdup("whatif")); /* the parser's argv[0] */
	table(opts);
	while ((c = getopt_long(argc, argv, "ho:", opts, &idx)) != -1) {
		if (c == 'h') {
			fputs(cli_whatif_usage, stdout);
			return EXIT_OK;
		}
		if (c == OPT_FWD_ARG || c == OPT_FWD_FLAG) {
			/* the forwarded share their value: a prefix of several is taken for one */
			const char *arg = cli_typed_option(argc, argv, c == OPT_FWD_ARG);

			if ((ret = cli_ambiguous_option("whatif", arg, opts)) >= 0)
				return ret;
			forward(o, opts[idx].name, c == OPT_FWD_ARG ? optarg : NULL);
			continue;
		}
		if ((ret = parse_one(c, optarg, o)) == -2)
			return cli_bad_option("whatif", argc, argv, opts);
		if (ret >= 0)
			return ret;
	}
	if (optind + 1 < argc)
		return cli_usage_error("whatif", "one trace at a time");
	/* After "--": the estimate parser reads a trace named --help as a trace too. */
	if (optind < argc) {
		push(o, orr_xstrdup("--"));
		push(o, orr_xstrdup(argv[optind]));
	}
	if (!o->gpus_min)
		return cli_usage_error("whatif", "give the GPU budget: --gpus N or --gpus A-B");
	optind = 0; /* getopt_long() starts afresh on the estimate parser's vector */
	return cli_estimate_parse_as("whatif", o->nfwd, o->fwd, &o->est, &format);
}

void cli_whatif_options_release(struct cli_whatif_options *o)
{
	for (int i = 0; i < CLI_WHATIF_LISTS; i++)
		free(o->list[i]);
	for (int i = 0; i < o->nfwd; i++)
		free(o->fwd[i]);
	free(o->fwd);
}

/*
 * Here, in the executable, for cli/whatif-mpi.c in both builds: without MPI it is part
 * of the executable, with MPI a module that whatif loads only under a launcher.
 */
bool cli_whatif_launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	return false;
}
