/* SPDX-License-Identifier: MIT */
/*
 * cli/record.h — what the files of `orrery record` share: cmd-record.c parses the
 * options and runs the command, record-env.c finds the tracer and sets the environment
 * the tracer reads, record-report.c says what was captured and writes the manifest.
 * Functions that fail print their error (cli_error) and return an exit status.
 */
#ifndef ORRERY_CLI_RECORD_H
#define ORRERY_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the tracer needs to know, from the options. */
struct record_options {
	const char *dir; /* the run directory as given (or the default name) */
	int64_t skip;    /* --skip, -1 when not given */
	int64_t steps;   /* --steps, -1 when not given */
	const char *step_prefix;
	const char *ops; /* --ops, for orrery_record (ORR_RECORD_OPS); NULL when not given */
	bool quiet;
	char **argv; /* the command, NULL-terminated */
	size_t argc;
};

/* Absolute paths found by record_find(); python is NULL when the module is missing. */
struct record_paths {
	char *tracer;
	char *python;
};

/* Finds the tracer and the Python module; EXIT_OK or EXIT_FAIL (reported). */
int record_find(struct record_paths *p);
void record_paths_release(struct record_paths *p);

/* Sets the environment of the command: the injection paths, ORR_RECORD_*, PYTHONPATH. */
void record_setenv(const struct record_paths *p, const struct record_options *o,
		   const char *absdir);

/* What happened to the command, for the report and the manifest. */
struct record_result {
	int64_t created_unix_ns;
	int exit_status; /* the command's, 128 + signal when a signal ended it */
};

/*
 * After the command: recovers files whose process died before closing them, reports
 * each native file of the run directory (unless quiet) and the tracer's log lines,
 * writes the manifest.  Returns the exit status of `orrery record`.
 */
int record_report(const struct record_options *o, const struct record_result *res);

#endif
