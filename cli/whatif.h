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

#include "cli.h"
#include "estimate.h"

/* --tp, --pp, --cp, --vpp, --micro-batch, --first-stage-layers, --last-stage-layers */
#define CLI_WHATIF_LISTS ORR_WHATIF_NLISTS

struct cli_whatif_options {
	/* the model and the fixed options, as orrery estimate takes them */
	struct orr_estimate_options est;
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
/* Whether --NAME (len bytes at name) is whatif's option, its own or one it forwards. */
bool cli_whatif_has_option(const char *name, size_t len);
/* Parses argv into o; -1 to go on, else the exit status.  cli_whatif_options_release() it. */
int cli_whatif_parse(int argc, char **argv, struct cli_whatif_options *o);
void cli_whatif_options_release(struct cli_whatif_options *o);

/* A sweep: what its report shows. */
struct cli_layouts {
	const struct cli_whatif_options *o;
	const struct orr_whatif_plan *plan;
	const struct orr_whatif_context *x;
	struct orr_estimate base; /* trace, gpu, recorded configuration, launches, memory */
	bool have_trace;
	double replayed_ns;            /* the trace's replayed step; NAN */
	struct orr_synth recorded;     /* the recorded configuration's synthesized step */
	struct orr_train_config swept; /* the model swept (the recorded one, changed by options) */
	int64_t global_batch;          /* sequences per step, fixed across the sweep */
	uint64_t considered;           /* configurations of the plan */
	/* the recorded configuration's number in the plan (UINT64_MAX: not in it) */
	uint64_t recorded_index;
	/*
	 * rank 0, once the sweep is done: its counts, best (o->top of them), Pareto front,
	 * and the recorded configuration (marked, with its place) when it is in the plan
	 */
	struct orr_whatif_tally tally;
	double seconds; /* the sweep's wall time */
	int processes, jobs;
};

/*
 * The report, by o->format (cli/whatif-report.c), written as the sweep goes: begun
 * before it, a row per result in the plan's order (JSON and CSV write them at once;
 * text keeps the infeasible lines for --show-infeasible in a temporary file), and ended
 * with the tally.  Only the rows stream: the report's memory does not grow with them.
 */
struct cli_whatif_writer {
	const struct cli_layouts *w;
	FILE *f;
	FILE *spill; /* text: the lines of --show-infeasible */
	struct json_out j;
};
/* EXIT_OK, or said (no temporary file). */
int cli_whatif_write_begin(struct cli_whatif_writer *o, const struct cli_layouts *w, FILE *f);
void cli_whatif_write_row(void *writer, const struct orr_whatif_result *r);
void cli_whatif_write_end(struct cli_whatif_writer *o);
/* Closes what write_begin opened, after an error too. */
void cli_whatif_write_release(struct cli_whatif_writer *o);

/*
 * Processes (cli/whatif-mpi.c): under mpirun (OpenMPI's environment), MPI started and
 * this process's rank and the count set; otherwise rank 0 of 1.  EXIT_OK, or said.
 */
int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size);
void cli_whatif_mpi_finalize(int size);
/* Whether a launcher (mpirun: OpenMPI's, PMIx's or PMI's environment) started this process. */
bool cli_whatif_launched(void);
/*
 * The worst (largest) of every process's status, so that all go on or none does: one
 * that stopped would leave the others waiting on its results.  Collective.
 */
int cli_whatif_mpi_agree(int size, int status);
/*
 * Whether every process sweeps what rank 0 sweeps: their digests of it (orr_whatif_digest())
 * gathered, and each compared with rank 0's.  EXIT_OK on every process, or EXIT_FAIL on
 * every process once rank 0 has said whose and which part differs.  Collective.
 */
int cli_whatif_mpi_same(int rank, int size, const struct orr_whatif_digest *d);
/*
 * Every process's results (disjoint shares of the plan) to rank 0, in the plan's order,
 * in blocks: elsewhere, cli_whatif_mpi_send() is the sweep's sink and
 * cli_whatif_mpi_flush() ends it; on rank 0, cli_whatif_mpi_merge() hands emit the
 * others' results with a number below `below`, in order (UINT64_MAX: all that remain).
 */
struct cli_whatif_mpi;
/* count: the plan's configurations, shared as orr_whatif_part() shares them */
struct cli_whatif_mpi *cli_whatif_mpi_open(int rank, int size, uint64_t count);
int cli_whatif_mpi_send(void *data, const struct orr_whatif_result *r);
void cli_whatif_mpi_flush(struct cli_whatif_mpi *m);
void cli_whatif_mpi_merge(struct cli_whatif_mpi *m, uint64_t below,
			  void (*emit)(void *data, const struct orr_whatif_result *r), void *data);
void cli_whatif_mpi_close(struct cli_whatif_mpi *m);

/*
 * A sweep by o, this process's share of size (rank 0 of 1 alone), in two steps
 * (cli/cmd-whatif.c): made ready (the inputs, the plan, on rank 0 the recorded
 * configuration estimated for its place), then run, each result in the plan's order
 * handed to row (NULL: none) on rank 0 and tallied there.  EXIT_OK or the exit status,
 * said; *ret always set, for cli_whatif_sweep_free().
 */
struct cli_whatif_sweep;
int cli_whatif_sweep_new(const struct cli_whatif_options *o, int rank, int size,
			 struct cli_whatif_sweep **ret);
int cli_whatif_sweep_run(struct cli_whatif_sweep *s,
			 void (*row)(void *data, const struct orr_whatif_result *r), void *data);
const struct cli_layouts *cli_whatif_sweep_result(const struct cli_whatif_sweep *s);
void cli_whatif_sweep_free(struct cli_whatif_sweep *s);

/* The page's section of a sweep (cli/report-whatif.c), width px wide. */
void cli_report_whatif(FILE *f, const struct cli_layouts *w, int width);

int cmd_whatif(int argc, char **argv);

#endif
