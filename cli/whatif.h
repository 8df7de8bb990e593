/* SPDX-License-Identifier: MIT */
/*
 * cli/whatif.h — `orrery whatif`: its options (cli/whatif-options.c), the sweep
 * (cli/cmd-whatif.c), its reports (cli/whatif-report.c) and its processes under mpirun
 * (cli/whatif-mpi.c); docs/orrery-whatif.md.
 */
#ifndef ORRERY_CLI_WHATIF_H
#define ORRERY_CLI_WHATIF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "orrery/whatif.h"

#include "estimate.h"

#define CLI_WHATIF_LISTS 5 /* --tp, --pp, --cp, --vpp, --micro-batch */

struct cli_whatif_options {
	/* the model and the fixed options, as orrery estimate takes them */
	struct cli_estimate_options est;
	int64_t gpus_min, gpus_max;
	int64_t *list[CLI_WHATIF_LISTS];
	size_t nlist[CLI_WHATIF_LISTS];
	unsigned recompute; /* bits; 0: every mode */
	int sp, distopt;    /* 0, 1 or ORR_WHATIF_AUTO */
	enum orr_whatif_rank rank_by;
	int64_t top; /* rows of the ranked table: 10 */
	int64_t jobs;
	int format;
	int progress; /* -1: on a terminal */
	bool show_infeasible, allow_cross_node_tp;
	const char *out;
	/* the argument vector given to orrery estimate's parser, kept for its strings */
	char **fwd;
	int nfwd;
};

extern const char cli_whatif_usage[];
/* A GPU budget "N" or "A-B" (option --opt of command cmd): -1, or the usage error said. */
int cli_whatif_gpus(const char *cmd, const char *opt, const char *arg, int64_t *ret_min,
		    int64_t *ret_max);
/* Parses argv into o; -1 to go on, else the exit status.  cli_whatif_options_release() it. */
int cli_whatif_parse(int argc, char **argv, struct cli_whatif_options *o);
void cli_whatif_options_release(struct cli_whatif_options *o);

/* A sweep done: what its report shows. */
struct cli_layouts {
	const struct cli_whatif_options *o;
	const struct orr_whatif_plan *plan;
	const struct orr_whatif_context *x;
	struct cli_estimate base; /* trace, gpu, recorded configuration, launches, memory */
	bool have_trace;
	double replayed_ns;            /* the trace's replayed step; NAN */
	struct orr_synth recorded;     /* the recorded configuration's synthesized step */
	struct orr_train_config swept; /* the model swept (the recorded one, changed by options) */
	int64_t global_batch;          /* sequences per step, fixed across the sweep */
	uint64_t considered;           /* configurations of the plan */
	struct orr_whatif_result *v;   /* every configuration's result, in plan order */
	size_t n;
	size_t *ranked, nranked; /* indices into v */
	size_t *place;           /* per result of v, its place in the ranking from 1; 0 */
	size_t *pareto, npareto;
	size_t recorded_at; /* index into v of the recorded configuration; SIZE_MAX */
	double seconds;     /* the sweep's wall time */
	int processes, jobs;
};

/* The report, by o->format, to f (cli/whatif-report.c). */
void cli_whatif_report(const struct cli_layouts *w, FILE *f);

/*
 * Processes (cli/whatif-mpi.c): under mpirun (OpenMPI's environment), MPI started and
 * this process's rank and the count set; otherwise rank 0 of 1.  EXIT_OK, or said.
 */
int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size);
/*
 * Every process's results (disjoint shares of the plan) to rank 0, in the plan's order:
 * on rank 0 *v and *n replaced by all of them; elsewhere left as they are.
 * EXIT_OK, or said.
 */
int cli_whatif_mpi_gather(int rank, int size, struct orr_whatif_result **v, size_t *n);
void cli_whatif_mpi_finalize(int size);

/*
 * A sweep by o, this process's share of size (rank 0 of 1 alone): run, and on rank 0
 * gathered, ranked, its Pareto front and recorded configuration found (cli/cmd-whatif.c).
 * EXIT_OK or the exit status, said; *ret always set, for cli_whatif_sweep_free().
 */
struct cli_whatif_sweep;
int cli_whatif_sweep_run(const struct cli_whatif_options *o, int rank, int size,
			 struct cli_whatif_sweep **ret);
const struct cli_layouts *cli_whatif_sweep_result(const struct cli_whatif_sweep *s);
void cli_whatif_sweep_free(struct cli_whatif_sweep *s);

/* The page's section of a sweep (cli/report-whatif.c), width px wide. */
void cli_report_whatif(FILE *f, const struct cli_layouts *w, int width);

int cmd_whatif(int argc, char **argv);

#endif
