/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis-fit.h — the models fitted on one rank (orrery fit; analysis/fit-run.c):
 * its structure, GEMMs, other kernels, collectives, overlap and launch time.
 * Part of orrery/analysis.h, which includes it and whose rules on ownership, errors and
 * threads hold here.
 */
#ifndef ORRERY_ANALYSIS_FIT_H
#define ORRERY_ANALYSIS_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "orrery/estimator.h"
#include "orrery/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The collectives of one kind and link class, and the model fitted on them. */
struct orr_rank_fit_coll {
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

/* A rank's GEMMs of one role and pass, per step. */
struct orr_rank_fit_role {
	size_t gemms;
	double ns;
};

/* Everything fitted on one rank of a graph. */
struct orr_rank_fit {
	const char *trace; /* the caller's label, borrowed */
	const struct orr_graph *g;
	int32_t rank;
	const char *device; /* its name in the trace, or NULL */
	/* its entry in the hardware table (the job's first named GPU where the rank's file
	 * names none), or NULL; the GEMM and kernel models are over it */
	const struct orr_gpu_spec *gpu;
	struct orr_structure st;
	struct orr_overlap overlap;
	struct orr_parts parts; /* the rank's */
	/* The rank's GEMM samples by role and pass, summed over its steps. */
	struct orr_rank_fit_role roles[ORR_GEMM_ROLE_COUNT][ORR_GEMM_PASS_COUNT];
	size_t rank_gemms, labeled; /* its samples, and those with a role */
	struct orr_gemm_counts gemm_counts;
	struct orr_gemm_model gemm;
	int gemm_err; /* the GEMM fit's error, 0 */
	struct orr_kern_counts kern_counts;
	struct orr_kern_model kern;
	int kern_err; /* the other kernels' fit's error, 0 */
	struct orr_rank_fit_coll *coll;
	size_t ncoll, nobs;
	size_t nccl_runs, nccl_samples; /* of nobs: nccl-tests runs given, their samples */
	struct orr_prof_cost prof;      /* the profiler's options and cost per op and call */
	struct orr_launch_time launch;  /* orr_launch_time_measure() with prof */
};

/*
 * Fits everything on graph rank ri (an index), the collectives also on nt[0..nnt)'s
 * samples (nccl-tests runs); trace is a label kept in ret.  orr_rank_fit_release()
 * frees it.
 */
void orr_rank_fit_run(const struct orr_graph *g, size_t ri, const char *trace,
		      const struct orr_nccl_tests *nt, size_t nnt, struct orr_rank_fit *ret);
void orr_rank_fit_release(struct orr_rank_fit *f);
/*
 * Graph rank ri's GPU in the hardware table, as orr_rank_fit_run() finds it (its `gpu`):
 * its file's device, the job's first named one where its file names none; NULL when
 * the table does not know it.
 */
const struct orr_gpu_spec *orr_rank_gpu(const struct orr_graph *g, size_t ri);
/*
 * gpu as rank ri's device reported itself: its memory the device's total
 * (totalGlobalMem, what CUDA can allocate: 139.8 GiB of an H200's 141) where that is
 * known and smaller than the table's.
 */
void orr_rank_gpu_as_seen(const struct orr_graph *g, size_t ri, const struct orr_gpu_spec *gpu,
			  struct orr_gpu_spec *ret);
/*
 * The precision of the GEMM model of every rank's GEMMs over gpu (orr_gemm_precision(),
 * BF16 when it cannot be fitted): one per trace and GPU, whichever rank asks.
 */
enum orr_dtype orr_gemm_trace_precision(const struct orr_graph *g, const struct orr_gpu_spec *gpu);
/*
 * f as orrery fit's JSON document (docs/orrery-fit.md) to out (analysis/fit-json.c): the
 * costs file that orr_costs_read() reads back, its models' parameters bit for bit.  The
 * caller checks out for write errors.
 */
void orr_rank_fit_write_json(const struct orr_rank_fit *f, FILE *out);
/*
 * Fits the collectives of o[0..n) of c->kind and c->link (set by the caller): on the
 * coupled instances (their times are transfers), else on those seen alone.
 */
void orr_rank_fit_coll_class(const struct orr_coll_obs *o, size_t n, struct orr_rank_fit_coll *c);
/*
 * The launch threads' time per step (orr_launch_time_measure()), with the part the
 * profiler that recorded g added (its cost in *ret_prof when not NULL).
 */
void orr_rank_fit_launch_time(const struct orr_graph *g, struct orr_launch_time *ret,
			      struct orr_prof_cost *ret_prof);
/* The hardware table's bandwidth for a link class, bytes/s per direction; 0 when unknown. */
double orr_rank_fit_spec_link(const struct orr_rank_fit *f, enum orr_link l);
/* The precision a trace ran at: its GEMM classes' operand type (BF16 without GEMMs). */
enum orr_dtype orr_gemm_precision(const struct orr_gemm_model *m);
/* The graph index of global rank `rank` (-1: the first); SIZE_MAX when absent. */
size_t orr_graph_rank_index(const struct orr_graph *g, int64_t rank);
/* A structure value with its name ("layers", "tp", ...). */
struct orr_named_value {
	const char *name;
	const struct orr_value *v; /* borrowed from the structure */
};
/* The structure's values in report order (as orrery fit prints them) into v (room for
 * 20); how many. */
size_t orr_structure_values(const struct orr_structure *s, struct orr_named_value *v);

#ifdef __cplusplus
}
#endif

#endif
