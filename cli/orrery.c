/* SPDX-License-Identifier: MIT */
/* main: global options and the command table, from which help and "did you mean" come. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "banned.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "info", cmd_info, "what a trace holds: ranks, streams, events, collectives, step times" },
	{ "replay", cmd_replay, "replay the execution graph: predicted vs measured step times" },
	{ "critical-path", cmd_critical_path,
	  "what the predicted time of each step is made of, along its critical path" },
	{ "convert", cmd_convert, "write a trace in another format: native (.orr) or Chrome JSON" },
	{ "pack", cmd_pack, "pack a run directory into one .tar.zst" },
	{ "record", cmd_record, "run a command under the CUPTI tracer: record a few steps" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: orrery [-v] [-C DIR] [--version] [--help] COMMAND [ARGS]\n\n"
	      "A trace-driven performance model of distributed training.\n\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fputs("\noptions:\n"
	      "  -v, --verbose  debug logging on stderr (same as ORR_DEBUG=all)\n"
	      "  -C DIR         run as if started in DIR\n"
	      "  --version      print the version and exit\n"
	      "  -h, --help     this help\n\n"
	      "'orrery COMMAND --help' describes a command.\n",
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
	cli_error("'%s' is not an orrery command", name);
	if (best)
		fprintf(stderr, "did you mean '%s'?\n", best);
	fputs("see 'orrery --help'\n", stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

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
		case 'V':
			printf("orrery %s\n", ORR_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			char **args = argv + optind;

			optind = 0; /* reset getopt for the command (glibc: 0 re-initializes) */
			return commands[i].fn(argc - (int)(args - argv), args);
		}
	}
	return unknown_command(argv[optind]);
}
