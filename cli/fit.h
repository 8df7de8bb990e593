/* SPDX-License-Identifier: MIT */
/*
 * cli/fit.h — `orrery fit`'s results and their text and JSON reports (cli/fit-report.c).
 */
#ifndef ORRERY_CLI_FIT_H
#define ORRERY_CLI_FIT_H

#include <stddef.h>
#include <stdio.h>

#include "orrery/estimator.h"

/* The collectives of one kind and link class, and the model fitted on them. */
struct cli_fit_coll {
	enum orr_coll_kind kind;
	enum orr_link link;
	size_t samples, coupled, by_caller, sizes, groups;
	bool from_alone; /* no coupled sample: fitted on times that include waiting */
	int err;         /* the fit's error, 0 */
	struct orr_coll_model m;
	/* What was measured, for a model the samples cannot constrain. */
	double median_bytes, median_ns, median_bus_bytes_per_s;
	int group; /* the most frequent group size */
};

/* Reads a costs file (orrery fit -o), saying why not: EXIT_OK or EXIT_FAIL. */
int cli_read_costs(const char *path, struct orr_costs *ret);

/*
 * Fits the collectives of o[0..n) of c->kind and c->link (set by the caller): on the
 * coupled instances (their times are transfers), else on those seen alone.
 */
struct orr_coll_obs;
void cli_fit_coll_class(const struct orr_coll_obs *o, size_t n, struct cli_fit_coll *c);

/* A rank's GEMMs of one role and pass, per step. */
struct cli_fit_role {
	size_t gemms;
	double ns;
};

struct cli_fit {
	const char *trace;
	const struct orr_graph *g;
	int32_t rank;
	const char *device;             /* its name in the trace, or NULL */
	const struct orr_gpu_spec *gpu; /* its entry in the hardware table, or NULL */
	struct orr_structure st;
	struct orr_overlap overlap;
	struct orr_parts parts; /* the rank's */
	/* The rank's GEMM samples by role and pass, summed over its steps. */
	struct cli_fit_role roles[ORR_GEMM_ROLE_COUNT][ORR_GEMM_PASS_COUNT];
	size_t rank_gemms, labeled; /* its samples, and those with a role */
	struct orr_gemm_counts gemm_counts;
	struct orr_gemm_model gemm;
	int gemm_err; /* the GEMM fit's error, 0 */
	struct orr_kern_counts kern_counts;
	struct orr_kern_model kern;
	int kern_err; /* the other kernels' fit's error, 0 */
	struct cli_fit_coll *coll;
	size_t ncoll, nobs;
	size_t nccl_runs, nccl_samples; /* of nobs: nccl-tests runs given, their samples */
	struct orr_prof_cost prof;      /* the profiler's options and cost per op and call */
	struct orr_launch_time launch;  /* orr_launch_time_measure() with prof */
};

/* The graph index of global rank `rank` (-1: the first); SIZE_MAX when absent. */
size_t cli_fit_rank_index(const struct orr_graph *g, int64_t rank);
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

/*
 * The launch threads' time per step (orr_launch_time_measure()), with the part the
 * profiler that recorded g added (its cost in *ret_prof when not NULL).
 */
void cli_launch_time(const struct orr_graph *g, struct orr_launch_time *ret,
		     struct orr_prof_cost *ret_prof);
/*
 * Fits everything on graph rank ri (an index), the collectives also on nt[0..nnt)'s
 * samples (nccl-tests runs); cli_fit_release() frees it.
 */
void cli_fit_run(const struct orr_graph *g, size_t ri, const char *trace,
		 const struct orr_nccl_tests *nt, size_t nnt, struct cli_fit *ret);
void cli_fit_release(struct cli_fit *f);
void cli_fit_text(const struct cli_fit *f);
/* A structure value with its name, in report order (cli_fit_structure_values()). */
struct cli_named_value {
	const char *name;
	const struct orr_value *v;
};

/* The structure's values in report order, into v (room for 20); how many. */
size_t cli_fit_structure_values(const struct orr_structure *s, struct cli_named_value *v);
/* The hardware table's bandwidth for a link class, bytes/s per direction; 0 when unknown. */
double cli_fit_spec_link(const struct cli_fit *f, enum orr_link l);
/* The JSON document (docs/orrery-fit.md) to f (cli/fit-json.c). */
void cli_fit_json(const struct cli_fit *f, FILE *out);

#endif
