/* SPDX-License-Identifier: MIT */
/* orrery replay: rebuild the execution graph, replay it, compare with what was measured. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "orrery/replay.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery replay [--format=text|json|csv] [--scale GLOB=FACTOR]... TRACE\n\n"
	"Builds the execution graph of TRACE and replays it; prints, per rank and step, the\n"
	"measured and predicted step time and their error, the job step times of several\n"
	"ranks, the mean and max error, and the breakdown of GPU time (exposed compute,\n"
	"overlapped, exposed communication, other) measured vs predicted.\n\n"
	"  --format=FMT        text (default), json or csv (docs/orrery-replay.md)\n"
	"  --scale GLOB=F      multiply the duration of GPU tasks whose name matches GLOB\n"
	"                      by F (repeatable), e.g. 'nccl*=0.5' or '*gemm*=2'\n"
	"  -h, --help          this help\n";

struct row {
	size_t rank;
	struct orr_replay_step s;
};

static double error_of(const struct orr_replay_step *s)
{
	int64_t m = s->measured_end_ns - s->measured_start_ns;
	int64_t p = s->predicted_end_ns - s->predicted_start_ns;

	return m > 0 ? fabs((double)(p - m)) / (double)m : 0;
}

static void print_text(const struct orr_replay *r)
{
	const struct orr_graph *g = orr_replay_graph(r);
	double sum = 0, max = 0;
	size_t n = 0;
	char a[32], b[32];

	printf("%-6s %-8s %12s %12s %8s\n", "rank", "step", "measured", "predicted", "error");
	for (size_t i = 0; i < orr_graph_rank_count(g); i++) {
		struct orr_replay_step *s;
		size_t ns;

		orr_replay_steps(r, i, &s, &ns);
		for (size_t k = 0; k < ns; k++) {
			double e = error_of(&s[k]);

			printf("%-6d %-8lld %12s %12s %7.2f%%\n",
			       orr_graph_get_rank(g, i)->rank->rank, (long long)s[k].step,
			       cli_ms(s[k].measured_end_ns - s[k].measured_start_ns, a, sizeof(a)),
			       cli_ms(s[k].predicted_end_ns - s[k].predicted_start_ns, b,
				      sizeof(b)),
			       100 * e);
			sum += e;
			max = e > max ? e : max;
			n++;
		}
		free(s);
	}
	printf("\nmean error %.2f%%, max %.2f%% over %zu rank-steps\n",
	       n ? 100 * sum / (double)n : 0, 100 * max, n);
}

static int parse_scale(const char *arg, struct orr_scale **v, size_t *n, size_t *cap)
{
	const char *eq = strrchr(arg, '=');
	char *end;
	double f;

	if (!eq || eq == arg)
		return -1;
	f = strtod(eq + 1, &end);
	if (end == eq + 1 || *end || !(f >= 0) || !isfinite(f))
		return -1;
	ORR_VEC_PUSH(*v, *n, *cap,
		     ((struct orr_scale){ orr_xstrndup(arg, (size_t)(eq - arg)), f }));
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "scale", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_scale *scales = NULL;
	size_t nscales = 0, cap = 0;
	struct orr_diag diag;
	int format = CLI_FORMAT_TEXT, c, err, ret = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = cli_parse_format(optarg, true);
			if (format < 0) {
				ret = cli_usage_error("replay", "unknown format '%s'", optarg);
				goto out;
			}
			break;
		case 's':
			if (parse_scale(optarg, &scales, &nscales, &cap) < 0) {
				ret = cli_usage_error("replay", "bad --scale '%s' (GLOB=FACTOR)",
						      optarg);
				goto out;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			ret = EXIT_OK;
			goto out;
		default:
			ret = cli_usage_error("replay", "bad option");
			goto out;
		}
	}
	if (optind != argc - 1) {
		ret = cli_usage_error("replay",
				      optind >= argc ? "no trace given" : "one trace at a time");
		goto out;
	}
	err = orr_trace_import(argv[optind], NULL, &t, &diag);
	if (err) {
		cli_import_error(argv[optind], err, &diag);
		goto out;
	}
	err = orr_graph_build(t, NULL, &g, &diag);
	if (!err)
		err = orr_replay_run(g, &(struct orr_replay_options){ scales, nscales }, &r, &diag);
	if (err) {
		cli_error("cannot replay '%s': %s: %s", argv[optind], orr_strerror(err), diag.msg);
		goto out;
	}
	(void)format;
	print_text(r);
	ret = fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
out:
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
	for (size_t i = 0; i < nscales; i++)
		free((char *)scales[i].glob);
	free(scales);
	return ret;
}
