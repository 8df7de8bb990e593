/* SPDX-License-Identifier: MIT */
/*
 * cli/estimate.h — `orrery estimate`'s result and its text and JSON reports
 * (cli/estimate-report.c; docs/orrery-estimate.md).
 */
#ifndef ORRERY_CLI_ESTIMATE_H
#define ORRERY_CLI_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "orrery/analysis-estimate.h"
#include "orrery/estimator.h"
#include "orrery/replay.h"

#include "fit.h"

/* ---- the options (cli/estimate-options.c) ---- */

extern const char cli_estimate_usage[];
/*
 * Parses argv into o (set to its defaults first) and *format (CLI_FORMAT_*; may be
 * NULL when --format is not an option of cmd) for command cmd (its name in errors, e.g.
 * orrery whatif's model options); -1 to go on, else the exit status.
 */
int cli_estimate_parse_as(const char *cmd, int argc, char **argv, struct orr_estimate_options *o,
			  int *format);
/*
 * An error of the library's said (d->msg; the hardware table listed after a GPU it does
 * not have, with list_gpus): EXIT_USAGE for a description o (may be NULL) that lacks a
 * size, else EXIT_FAIL.  cmd names the command in a usage error.
 */
int cli_estimate_error(const char *cmd, const struct orr_estimate_options *o, int err,
		       const struct orr_diag *d, bool list_gpus);

/*
 * The sources and caveats of e's numbers, as orrery estimate prints them (where each
 * kind of task's time came from, the launch thread's time and where it came from, the
 * lower bound of the hardware table's peaks, the memory's reserve): orrery whatif
 * prints its best configuration's with them.
 */
void cli_estimate_caveats(const struct orr_estimate *e, FILE *f);

/* `orrery estimate` (cli/cmd-estimate.c). */
int cmd_estimate(int argc, char **argv);

/* Which launch time e used and where it came from, in words, written to buf. */
const char *cli_launch_source(const struct orr_estimate *e, char *buf, size_t size);

void cli_estimate_text(const struct orr_estimate *e);
void cli_estimate_json(const struct orr_estimate *e);
/* Its fields, into the object j has open (orrery whatif's configurations). */
void cli_estimate_json_fields(struct json_out *j, const struct orr_estimate *e);
/* One of them by format (CLI_FORMAT_*). */
void cli_estimate_report(const struct orr_estimate *e, int format);

#endif
