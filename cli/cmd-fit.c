/* SPDX-License-Identifier: MIT */
/*
 * orrery fit: what a trace's training step is made of and what each piece costs: the
 * structure of one rank and the cost models fitted on the trace's own collectives,
 * with their errors (docs/orrery-fit.md).  -o writes the same as JSON for estimate and
 * whatif (--costs), so that a sweep never fits again.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fit.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery fit [--format=text|json] [--rank N] [--nccl-tests [KIND=]FILE]...\n"
	"                  [-o COSTS.json] TRACE\n\n"
	"Recovers the structure of a training step from TRACE (phases; the transformer's\n"
	"layers, hidden size, heads, FFN, vocabulary, sequence, micro-batch; its TP, PP and\n"
	"DP), each value read from the trace, inferred from what was read, or unknown with\n"
	"the reason; and fits cost models on the trace's own collectives, with their fit and\n"
	"leave-one-out errors.  Where the trace cannot constrain a model, it says so and\n"
	"reports what the hardware table gives instead.\n\n"
	"  --format=FMT   text (default) or json (docs/orrery-fit.md)\n"
	"  --rank N       the rank whose structure is reported (default: the first)\n"
	"  --nccl-tests [KIND=]FILE\n"
	"                 also fit the collectives on what an nccl-tests binary printed\n"
	"                 (all_reduce_perf ...) on the cluster; KIND (all_reduce, all_gather,\n"
	"                 reduce_scatter, alltoall, broadcast, reduce, sendrecv) where the\n"
	"                 output does not name it; repeat for more runs\n"
	"  -o, --output FILE\n"
	"                 also write the JSON to FILE, for estimate and whatif --costs\n"
	"  -h, --help     this help\n\n"
	"An -o FILE of '-' is standard output; the report then goes to standard error.\n";

#define MAX_NCCL_RUNS 64

struct options {
	int format;
	int64_t rank; /* global rank, -1: the first */
	const char *out, *trace;
	const char *nccl[MAX_NCCL_RUNS]; /* --nccl-tests, as given */
	size_t nnccl;
};

/* "all_reduce=FILE": the kind it names, FILE in *ret_path; else unknown and arg. */
static enum orr_coll_kind split_kind(const char *arg, const char **ret_path)
{
	const char *eq = strchr(arg, '=');
	enum orr_coll_kind k = eq ? orr_nccl_tests_kind(arg, (size_t)(eq - arg)) : ORR_COLL_UNKNOWN;

	*ret_path = k == ORR_COLL_UNKNOWN ? arg : eq + 1; /* else a file name with '=' in it */
	return k;
}

/* The FILE of [KIND=]FILE. */
static const char *path_of(const char *arg)
{
	const char *path;

	split_kind(arg, &path);
	return path;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "rank", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "nccl-tests", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format = cli_parse_format(optarg, false);
			if (o->format < 0)
				return cli_usage_error("fit", "unknown format '%s' (text or json)",
						       optarg);
			break;
		case 'r':
			if (cli_parse_count(optarg, &o->rank) < 0)
				return cli_usage_error(
					"fit", "bad --rank '%s' (a rank, 0 to 2147483647)", optarg);
			break;
		case 'o':
			if (!optarg[0])
				return cli_usage_error("fit", "empty output name");
			if (cli_compressed_suffix(optarg))
				return cli_usage_error("fit",
						       "-o '%s': orrery writes plain JSON; name it "
						       "without '%s' and compress it afterwards",
						       optarg, cli_compressed_suffix(optarg));
			o->out = optarg;
			cli_output_arg(optarg);
			break;
		case 'n':
			if (o->nnccl == MAX_NCCL_RUNS)
				return cli_usage_error("fit", "more than %d --nccl-tests runs",
						       MAX_NCCL_RUNS);
			if (!*optarg || !*path_of(optarg))
				return cli_usage_error("fit", "--nccl-tests '%s': empty file name",
						       optarg);
			o->nccl[o->nnccl++] = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("fit", argc, argv, opts);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("fit",
				       optind == argc ? "no trace given" : "one trace at a time");
	o->trace = argv[optind];
	return -1;
}

static int write_costs(const struct orr_rank_fit *f, const char *path)
{
	struct orr_outfile out;
	FILE *s;
	int err;

	orr_outfile_catch_signals();
	if ((err = orr_outfile_open(&out, cli_output_path(path), 0)))
		return err;
	if (!(s = orr_outfile_stream(&out))) {
		orr_outfile_abort(&out);
		return -ENOMEM;
	}
	orr_rank_fit_write_json(f, s);
	return orr_outfile_commit(&out, false);
}

/* Reads every --nccl-tests run into nt (o->nnccl of them), saying why not. */
static int read_nccl(const struct options *o, struct orr_nccl_tests *nt)
{
	for (size_t i = 0; i < o->nnccl; i++) {
		struct orr_diag d;
		const char *path;
		enum orr_coll_kind kind = split_kind(o->nccl[i], &path);
		char msg[1600];
		int err = orr_nccl_tests_read(path, kind, &nt[i], &d);

		if (err) {
			for (size_t k = 0; k < i; k++)
				orr_nccl_tests_release(&nt[k]);
			cli_error("--nccl-tests: %s", orr_diag_format(&d, err, msg, sizeof(msg)));
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

int cmd_fit(int argc, char **argv)
{
	struct options o = { .format = CLI_FORMAT_TEXT, .rank = -1 };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_nccl_tests nt[MAX_NCCL_RUNS];
	struct orr_rank_fit f;
	size_t ri;
	int ret, err;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if ((ret = read_nccl(&o, nt)) != EXIT_OK)
		return ret;
	ret = cli_fit_open(o.trace, o.out, o.rank, &t, &g, &ri);
	if (ret != EXIT_OK)
		goto out;
	orr_rank_fit_run(g, ri, o.trace, nt, o.nnccl, &f);
	if (o.out && (err = write_costs(&f, o.out))) {
		cli_error("cannot write '%s': %s", o.out, orr_strerror(err));
		ret = EXIT_FAIL;
	} else {
		if (o.format == CLI_FORMAT_JSON)
			orr_rank_fit_write_json(&f, stdout);
		else
			cli_fit_text(&f);
		ret = EXIT_OK;
	}
	orr_rank_fit_release(&f);
out:
	for (size_t i = 0; i < o.nnccl; i++)
		orr_nccl_tests_release(&nt[i]);
	orr_graph_free(g);
	orr_trace_free(t);
	return ret;
}
