/* SPDX-License-Identifier: MIT */
/* main: global options and the command table, from which help and "did you mean" come. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "estimate.h"
#include "whatif.h"
#include "banned.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "info", cmd_info, "what a trace holds: ranks, streams, events, collectives, step times" },
	{ "summary", cmd_summary,
	  "where the measured time goes: per rank and step, kernels, ops, streams, collectives" },
	{ "replay", cmd_replay, "replay the execution graph: predicted vs measured step times" },
	{ "critical-path", cmd_critical_path,
	  "what the predicted time of each step is made of, along its critical path" },
	{ "fit", cmd_fit,
	  "what a step is made of, and cost models fitted on the trace's own collectives" },
	{ "estimate", cmd_estimate,
	  "the step time and memory of another configuration, from a trace of this one" },
	{ "whatif", cmd_whatif,
	  "sweep every layout of a model on a GPU budget, ranked, on threads and MPI" },
	{ "convert", cmd_convert,
	  "write a trace in another format: native (.orr), Chrome JSON or Chakra ET" },
	{ "report", cmd_report,
	  "one self-contained HTML page of a trace: steps, breakdown, idle, critical path" },
	{ "diff", cmd_diff,
	  "compare two traces, or a trace and its prediction: step, kernels, ops, idle" },
	{ "compose", cmd_compose,
	  "a portable benchmark of a traced step: bench.py and a plan per rank" },
	{ "pack", cmd_pack, "pack a run directory into one .tar.zst" },
	{ "record", cmd_record, "run a command under the CUPTI tracer: record a few steps" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: orrery [-v] [-C DIR] [--step-range GLOB] [--et ET] [--version] [--help] "
	      "COMMAND [ARGS]\n\n"
	      "A trace-driven performance model of distributed training.\n\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fputs("\noptions:\n"
	      "  -v, --verbose  debug logging on stderr (same as ORR_DEBUG=all)\n"
	      "  -C DIR         run as if started in DIR\n"
	      "  --step-range GLOB\n"
	      "                 the steps are the annotations (NVTX, record_function) whose\n"
	      "                 name matches GLOB, e.g. 'iteration*', numbered from 1 on\n"
	      "                 each rank; the trace's ProfilerStep#N are then not steps\n"
	      "  --et ET        PyTorch execution traces of the traced step (a file, or a\n"
	      "                 directory of rank-R files) to link to the trace's ops\n"
	      "  --version      print the version and exit\n"
	      "  -h, --help     this help\n\n"
	      "'orrery COMMAND --help' or 'orrery help COMMAND' describes a command.\n",
	      f);
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(b), row[64];

	if (n >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= n; j++)
		row[j] = j;
	for (size_t i = 1; a[i - 1]; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= n; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[n];
}

static int unknown_command(const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (size_t i = 0; i < NCOMMANDS; i++) {
		size_t d = edit_distance(name, commands[i].name);

		if (d < best_d) {
			best_d = d;
			best = commands[i].name;
		}
	}
	return cli_usage_error(NULL, "'%s' is not an orrery command%s%s%s", name,
			       best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

/*
 * A standard stream the caller closed (`>&-`) gets /dev/null, so that no file a command
 * opens takes its number: a trace or an output would receive the report.  Standard
 * output gets it read-only, so that writing the report fails and is reported.
 */
static void open_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		nfd = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd)
			close(nfd);
	}
}

/*
 * Every command's report ends here: a full disk, a closed or broken standard output is
 * an error, once, for every command.  stdio drops the buffer of a failed write, so
 * commands leave the flush to this function, where errno still says why.  A closed
 * pipe (`| head`) ends quietly: by SIGPIPE, or with status 1 when SIGPIPE is ignored.
 */
static int close_stdout(int ret)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout))
		err = EIO; /* failed earlier, the reason is gone */
	if (fclose(stdout) != 0 && !err)
		err = errno ? errno : EIO;
	if (!err)
		return ret;
	if (err != EPIPE)
		cli_error("cannot write standard output: %s", strerror(err));
	return EXIT_FAIL;
}

/* `orrery help` prints the usage; `orrery help CMD` runs `orrery CMD --help`. */
static int help(int argc, char **argv)
{
	char help_opt[] = "--help", *args[3] = { NULL, help_opt, NULL };

	if (argc < 2) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 2) {
		return cli_usage_error(NULL, "help takes one command");
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			args[0] = argv[1];
			optind = 0;
			opterr = 0;
			return commands[i].fn(2, args);
		}
	return unknown_command(argv[1]);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "step-range", required_argument, NULL, 'S' },
		{ "et", required_argument, NULL, 'E' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	opterr = 0; /* a refused option is reported once, by cli_bad_option() */
	/* '+': stop at the command, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+vC:h", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			setenv("ORR_DEBUG", "all", 1);
			break;
		case 'C':
			if (chdir(optarg) < 0) {
				cli_error("cannot change to '%s': %s", optarg,
					  orr_strerror(-errno));
				return EXIT_FAIL;
			}
			break;
		case 'S':
			if (!optarg[0])
				return cli_usage_error(NULL, "empty --step-range pattern");
			cli_step_range = optarg;
			break;
		case 'E':
			if (!optarg[0])
				return cli_usage_error(NULL, "empty --et path");
			cli_et_path = optarg;
			break;
		case 'V':
			printf("orrery %s\n", ORR_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			return cli_bad_option(NULL, argc, argv, opts);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) /* orrery help [CMD]: CMD --help */
		return help(argc - optind, argv + optind);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			char **args = argv + optind;

			optind = 0; /* reset getopt for the command (glibc: 0 re-initializes) */
			opterr = 0; /* a refused option is reported once, by cli_bad_option() */
			return commands[i].fn(argc - (int)(args - argv), args);
		}
	}
	return unknown_command(argv[optind]);
}

/*
 * One BLAS thread.  OpenBLAS starts its worker threads as it loads, as many as
 * OPENBLAS_NUM_THREADS says (else one per core), and they spin for a while; orrery's fits
 * are far too small to use them.  Nothing loads BLAS before main (igraph is linked
 * statically and LAPACKE is loaded at the first fit, estimator/fit.c), so setting the
 * variable here is enough, and a start stays one thread: record's signals reach main.
 * record gives its command the variable as the user gave it (cli_blas_threads_restore()).
 */
#define BLAS_VAR "OPENBLAS_NUM_THREADS"

static char *blas_threads_before; /* the user's value; NULL when unset */

static void one_blas_thread(void)
{
	const char *v = getenv(BLAS_VAR);

	blas_threads_before = v ? orr_xstrdup(v) : NULL;
	setenv(BLAS_VAR, "1", 1);
}

void cli_blas_threads_restore(void)
{
	if (blas_threads_before)
		setenv(BLAS_VAR, blas_threads_before, 1);
	else
		unsetenv(BLAS_VAR);
}

int main(int argc, char **argv)
{
	one_blas_thread();
	open_std_fds();
	return close_stdout(run(argc, argv));
}
