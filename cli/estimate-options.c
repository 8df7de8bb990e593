/* SPDX-License-Identifier: MIT */
/* orrery estimate's options (docs/orrery-estimate.md). */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "estimate.h"
#include "replay-common.h"
#include "whatif.h"
#include "banned.h"

#define NSIZE ORR_ESTIMATE_NSIZE

enum {
	OPT_SIZE = 256, /* + index into size_opts */
	OPT_GLOBAL = 512,
	OPT_GPN,
	OPT_RECOMPUTE,
	OPT_SP,
	OPT_DISTOPT,
	OPT_FSDP,
	OPT_OVERLAP_GRAD,
	OPT_PRECISION,
	OPT_FORWARD,
	OPT_TIMELINE,
	OPT_COSTS,
	OPT_RANK,
	OPT_FORMAT,
	OPT_GPU,
	OPT_ATTENTION,
	OPT_LAUNCH,
	OPT_SWIGLU,
	OPT_UNTIE,
	OPT_NORM,
	OPT_POSITIONS,
	OPT_GEMM_MODEL,
	OPT_NIC,
	OPT_P2P_SCATTER,
	OPT_SYNC_TIMERS,
	OPT_SYNC_LAYERS,
	OPT_TRANSFER,
};

static int parse_named(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* The options that name one of a few choices, as parse_one(). */
static int parse_choice(const char *cmd, int c, const char *arg, struct orr_estimate_options *o)
{
	static const char *const recompute[] = { "none", "selective", "full" };
	static const char *const precision[] = { "bf16", "fp16", "fp32", "fp8" };
	static const char *const attention[] = { "flash", "unfused" };
	static const char *const norm[] = { "LayerNorm", "RMSNorm" };
	static const char *const positions[] = { "learned_absolute", "rope" };

	switch (c) {
	case OPT_RECOMPUTE:
		if ((o->recompute = parse_named(arg, recompute, 3)) < 0)
			return cli_usage_error(cmd,
					       "bad --recompute '%s' (none, "
					       "selective or full)",
					       arg);
		return -1;
	case OPT_PRECISION:
		if ((o->precision = parse_named(arg, precision, 4)) < 0)
			return cli_usage_error(
				cmd, "bad --precision '%s' (bf16, fp16, fp32 or fp8)", arg);
		return -1;
	case OPT_ATTENTION:
		if ((o->attention = parse_named(arg, attention, 2)) < 0)
			return cli_usage_error(cmd, "bad --attention '%s' (flash or unfused)", arg);
		return -1;
	case OPT_NORM:
		if ((o->norm = parse_named(arg, norm, 2)) < 0)
			return cli_usage_error(
				cmd, "bad --normalization '%s' (LayerNorm or RMSNorm)", arg);
		return -1;
	case OPT_POSITIONS:
		if ((o->positions = parse_named(arg, positions, 2)) < 0)
			return cli_usage_error(cmd,
					       "bad --position-embedding-type '%s' "
					       "(learned_absolute or rope)",
					       arg);
		return -1;
	case OPT_GEMM_MODEL:
		if (strcmp(arg, "roofline") != 0 && strcmp(arg, "tiles") != 0)
			return cli_usage_error(cmd, "bad --gemm-model '%s' (roofline or tiles)",
					       arg);
		o->gemm_tiles = strcmp(arg, "tiles") == 0;
		return -1;
	}
	return -2;
}

/* One option's argument into o; returns -1 to go on, -2 for an option it does not know, else the exit status. */
static int parse_one(const char *cmd, int c, const char *arg, struct orr_estimate_options *o,
		     int *format)
{
	int ret;

	if ((ret = parse_choice(cmd, c, arg, o)) != -2)
		return ret;
	if (c >= OPT_SIZE && c < OPT_SIZE + (int)NSIZE) {
		if (cli_parse_count(arg, &o->size[c - OPT_SIZE]) < 0 || o->size[c - OPT_SIZE] < 1)
			return cli_usage_error(cmd, "bad --%s '%s' (a count, 1 to 2147483647)",
					       orr_estimate_size_name((size_t)(c - OPT_SIZE)), arg);
		if (!strcmp(orr_estimate_size_name((size_t)(c - OPT_SIZE)), "layers") &&
		    o->size[c - OPT_SIZE] > ORR_ESTIMATE_MAX_LAYERS)
			return cli_usage_error(
				cmd,
				"bad --layers '%s' (at most %d: a step is synthesized "
				"layer by layer; docs/limits.md)",
				arg, ORR_ESTIMATE_MAX_LAYERS);
		return -1;
	}
	switch (c) {
	case OPT_GLOBAL:
		if (cli_parse_count(arg, &o->global_batch) < 0 || o->global_batch < 1)
			return cli_usage_error(
				cmd, "bad --global-batch '%s' (a count, 1 to 2147483647)", arg);
		return -1;
	case OPT_GPN:
		if (cli_parse_count(arg, &o->gpus_per_node) < 0 || o->gpus_per_node < 1)
			return cli_usage_error(
				cmd, "bad --gpus-per-node '%s' (a count, 1 to 2147483647)", arg);
		return -1;
	case OPT_LAUNCH:
		if (cli_parse_real(arg, 0, 1e6, &o->launch_us) < 0)
			return cli_usage_error(cmd, "bad --launch-us '%s' (microseconds, 0 to 1e6)",
					       arg);
		return -1;
	case OPT_NIC:
		/*
		 * At least NCCL's slowest speed of a channel across nodes (0.12 GB/s, search.cc):
		 * below it the model times a channel faster than its NIC.
		 */
		if (cli_parse_real(arg, ORR_NIC_GBPS_MIN, 1e6, &o->nic_gbps) < 0)
			return cli_usage_error(cmd, "bad --nic-gbps '%s' (Gb/s, %g to 1e6)", arg,
					       ORR_NIC_GBPS_MIN);
		return -1;
	case OPT_FORMAT:
		if (!format || (*format = cli_parse_format(arg, false)) < 0)
			return cli_usage_error(cmd, "unknown format '%s' (text or json)", arg);
		return -1;
	case OPT_RANK:
		if (cli_parse_count(arg, &o->rank) < 0)
			return cli_usage_error(cmd, "bad --rank '%s'", arg);
		return -1;
	}
	return -2; /* getopt_long() refused it */
}

/* The library's phases of an estimate as the progress display's (cli/progress.c). */
static void phase(void *data, const char *what, const char *unit)
{
	(void)data;
	if (what)
		cli_progress_begin(what, unit);
	else
		cli_progress_done();
}

/* getopt_long()'s table: the sizes, the other options, and the zeros that end it. */
#define OPTS_MAX (NSIZE + 28)

static void options_table(struct option *opts)
{
	size_t n = 0;

	for (size_t i = 0; i < NSIZE; i++)
		opts[n++] = (struct option){ orr_estimate_size_name(i), required_argument, NULL,
					     OPT_SIZE + (int)i };
	opts[n++] = (struct option){ "global-batch", required_argument, NULL, OPT_GLOBAL };
	opts[n++] = (struct option){ "gpus-per-node", required_argument, NULL, OPT_GPN };
	opts[n++] = (struct option){ "nic-gbps", required_argument, NULL, OPT_NIC };
	opts[n++] = (struct option){ "recompute", required_argument, NULL, OPT_RECOMPUTE };
	opts[n++] = (struct option){ "sequence-parallel", no_argument, NULL, OPT_SP };
	opts[n++] = (struct option){ "distributed-optimizer", no_argument, NULL, OPT_DISTOPT };
	opts[n++] = (struct option){ "fsdp", no_argument, NULL, OPT_FSDP };
	opts[n++] = (struct option){ "overlap-grad-reduce", no_argument, NULL, OPT_OVERLAP_GRAD };
	opts[n++] = (struct option){ "p2p-scatter-gather", no_argument, NULL, OPT_P2P_SCATTER };
	opts[n++] = (struct option){ "sync-timers", no_argument, NULL, OPT_SYNC_TIMERS };
	opts[n++] = (struct option){ "sync-layers", no_argument, NULL, OPT_SYNC_LAYERS };
	opts[n++] = (struct option){ "precision", required_argument, NULL, OPT_PRECISION };
	opts[n++] = (struct option){ "forward-only", no_argument, NULL, OPT_FORWARD };
	opts[n++] = (struct option){ "timeline", required_argument, NULL, OPT_TIMELINE };
	opts[n++] = (struct option){ "costs", required_argument, NULL, OPT_COSTS };
	opts[n++] = (struct option){ "transfer-costs", no_argument, NULL, OPT_TRANSFER };
	opts[n++] = (struct option){ "rank", required_argument, NULL, OPT_RANK };
	opts[n++] = (struct option){ "format", required_argument, NULL, OPT_FORMAT };
	opts[n++] = (struct option){ "gpu", required_argument, NULL, OPT_GPU };
	opts[n++] = (struct option){ "attention", required_argument, NULL, OPT_ATTENTION };
	opts[n++] = (struct option){ "launch-us", required_argument, NULL, OPT_LAUNCH };
	opts[n++] = (struct option){ "gemm-model", required_argument, NULL, OPT_GEMM_MODEL };
	opts[n++] = (struct option){ "swiglu", no_argument, NULL, OPT_SWIGLU };
	opts[n++] = (struct option){ "untie-embeddings-and-output-weights", no_argument, NULL,
				     OPT_UNTIE };
	opts[n++] = (struct option){ "normalization", required_argument, NULL, OPT_NORM };
	opts[n++] = (struct option){ "position-embedding-type", required_argument, NULL,
				     OPT_POSITIONS };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	assert(n < OPTS_MAX);
}

/* An option without a value (a switch) into o: false for any other. */
static bool parse_flag(int c, struct orr_estimate_options *o)
{
	if (c != OPT_SP && c != OPT_DISTOPT && c != OPT_FSDP && c != OPT_OVERLAP_GRAD &&
	    c != OPT_FORWARD && c != OPT_SWIGLU && c != OPT_UNTIE && c != OPT_P2P_SCATTER &&
	    c != OPT_SYNC_TIMERS && c != OPT_SYNC_LAYERS && c != OPT_TRANSFER)
		return false;
	o->sp |= c == OPT_SP;
	o->distopt |= c == OPT_DISTOPT;
	o->fsdp |= c == OPT_FSDP;
	o->overlap_grad |= c == OPT_OVERLAP_GRAD;
	o->forward_only |= c == OPT_FORWARD;
	o->swiglu |= c == OPT_SWIGLU;
	o->untie |= c == OPT_UNTIE;
	o->p2p_scatter |= c == OPT_P2P_SCATTER;
	o->sync_timers |= c == OPT_SYNC_TIMERS;
	o->sync_layers |= c == OPT_SYNC_LAYERS;
	o->transfer_costs |= c == OPT_TRANSFER;
	return true;
}

/*
 * On estimate, opt typed as a prefix of its name that is the whole name of one of
 * whatif's options: refused, not taken for opt, as getopt_long() takes a prefix (`estimate
 * --gpus 8` was --gpus-per-node 8, where whatif's --gpus is the GPU budget; estimate's
 * GPUs are tp x pp x cp x dp).  -1 otherwise; whatif's forwarded options are whole.
 */
static int whatif_name(const char *cmd, int argc, char **argv, const struct option *opt)
{
	const char *arg = cli_typed_option(argc, argv, opt->has_arg == required_argument);
	const char *eq;
	size_t len;

	if (strcmp(cmd, "estimate") != 0 || arg[0] != '-' || arg[1] != '-')
		return -1;
	eq = strchr(arg + 2, '=');
	len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
	if (len == strlen(opt->name) || !cli_whatif_has_option(arg + 2, len))
		return -1;
	return cli_usage_error(cmd,
			       "option '--%.*s' is whatif's, not estimate's (here a prefix of "
			       "--%s: write that whole)",
			       (int)len, arg + 2, opt->name);
}

int cli_estimate_parse_as(const char *cmd, int argc, char **argv, struct orr_estimate_options *o,
			  int *format)
{
	struct option opts[OPTS_MAX] = { { 0 } };
	int c, idx, ret;

	orr_estimate_options_init(o);
	o->phase = phase;
	o->progress = cli_progress_count;
	if (format)
		*format = CLI_FORMAT_TEXT;
	options_table(opts);
	for (;;) {
		idx = -1; /* getopt_long() sets it for a long option only */
		if ((c = getopt_long(argc, argv, "h", opts, &idx)) == -1)
			break;
		if (idx >= 0 && (ret = whatif_name(cmd, argc, argv, &opts[idx])) >= 0)
			return ret;
		if (c == 'h') {
			fputs(cli_estimate_usage, stdout);
			return EXIT_OK;
		}
		if (parse_flag(c, o))
			continue;
		/* an empty name, or a compressed one: a usage error, as replay's --timeline */
		if (c == OPT_TIMELINE && cli_timeline_option(cmd, optarg) < 0)
			return EXIT_USAGE;
		if (c == OPT_TIMELINE || c == OPT_COSTS || c == OPT_GPU) {
			*(c == OPT_TIMELINE ? &o->timeline
			  : c == OPT_COSTS  ? &o->costs
					    : &o->gpu) = optarg;
			continue;
		}
		if ((ret = parse_one(cmd, c, optarg, o, format)) == -2)
			return cli_bad_option(cmd, argc, argv, opts);
		if (ret >= 0)
			return ret;
	}
	if (optind + 1 < argc)
		return cli_usage_error(cmd, "one trace at a time");
	if (o->transfer_costs && (!o->costs || !o->gpu))
		return cli_usage_error(
			cmd, "--transfer-costs needs the costs (--costs FILE) and the GPU "
			     "to transfer them to (--gpu NAME)");
	o->trace = optind < argc ? argv[optind] : NULL;
	return -1;
}

/* " b200 h100-nvl ...": every id of the hardware table, sized from it; orr_xmalloc'ed. */
static char *gpu_ids(void)
{
	size_t n, len = 1;
	const struct orr_gpu_spec *v = orr_gpu_specs(&n);
	char *ids, *p;

	for (size_t i = 0; i < n; i++)
		len += 1 + strlen(v[i].id);
	p = ids = orr_xmalloc(len);
	for (size_t i = 0; i < n; i++) {
		*p++ = ' ';
		memcpy(p, v[i].id, strlen(v[i].id));
		p += strlen(v[i].id);
	}
	*p = '\0';
	return ids;
}

int cli_estimate_error(const char *cmd, const struct orr_estimate_options *o, int err,
		       const struct orr_diag *d, bool list_gpus)
{
	char *ids = err == -ENODEV && list_gpus ? gpu_ids() : NULL;

	if (err == -EINVAL && o && orr_estimate_missing(o)) {
		free(ids);
		return cli_usage_error(cmd, "%s", d->msg);
	}
	if (ids && ids[0])
		cli_error("%s; the hardware table has:%s", d->msg, ids);
	else
		cli_error("%s", d->msg);
	free(ids);
	return EXIT_FAIL;
}
