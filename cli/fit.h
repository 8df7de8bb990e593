/* SPDX-License-Identifier: MIT */
/*
 * cli/fit.h — `orrery fit`: loading a trace for it and its text report (the fit itself:
 * orr_rank_fit_run(), analysis/fit-run.c; its JSON and costs file: orr_rank_fit_write_json(),
 * analysis/fit-json.c).
 */
#ifndef ORRERY_CLI_FIT_H
#define ORRERY_CLI_FIT_H

#include <stddef.h>
#include <stdio.h>

#include "orrery/analysis.h"

/* Reads a costs file (orrery fit -o), saying why not: EXIT_OK or EXIT_FAIL. */
int cli_read_costs(const char *path, struct orr_costs *ret);

/* Imports path and builds its graph, saying why not (EXIT_OK or EXIT_FAIL). */
int cli_fit_load(const char *path, struct orr_trace **ret_t, struct orr_graph **ret_g);

/*
 * The checks and loading fit and estimate share: out (may be NULL) must not be inside
 * trace; trace imported with its graph; global rank `rank` (-1: the first) found, its
 * index in *ret_ri.  EXIT_OK, or EXIT_FAIL having said why (*ret_t and *ret_g are to be
 * freed either way).
 */
int cli_fit_open(const char *trace, const char *out, int64_t rank, struct orr_trace **ret_t,
		 struct orr_graph **ret_g, size_t *ret_ri);

/* The text report; the JSON one is orr_rank_fit_write_json()'s. */
void cli_fit_text(const struct orr_rank_fit *f);

#endif
