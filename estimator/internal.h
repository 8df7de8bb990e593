/* SPDX-License-Identifier: MIT */
/* What the estimator's files share and nobody else needs. */
#ifndef ORRERY_ESTIMATOR_INTERNAL_H
#define ORRERY_ESTIMATOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif
/*
 * A collective band's α (fit.coef[0]), α per rank (coef[1] with per_rank, else 0) and
 * bus bandwidth (1e9 over the byte term, 0 when it is not positive), from its fit: the
 * fitter sets them, and a costs file's copies must equal them (collective.c).
 */
void orr__coll_band_derive(struct orr_coll_band *b, bool per_rank);
#ifdef __cplusplus
}
#endif

/* ---- NCCL's own model of a collective across nodes (nccl-model.c) ---- */

enum orr_nccl_algo { ORR_NCCL_RING, ORR_NCCL_TREE };
enum orr_nccl_proto { ORR_NCCL_LL, ORR_NCCL_LL128, ORR_NCCL_SIMPLE };

/* A group across nodes as NCCL's tuning sees it. */
struct orr_nccl_net {
	int ranks, nodes;    /* the group: ranks / nodes of them on each of nodes >= 2 */
	int channels;        /* rings: the NICs its ranks on one node use */
	double channel_gbps; /* each channel's speed, GB/s: orr__nccl_channel_gbps() */
	bool hopper;         /* Hopper's per-channel caps and speeds, else Ampere's */
	bool amd_cpu;        /* the node's CPU, for its network overhead and LL's cap */
};

/* What NCCL would pick and its predicted time. */
struct orr_nccl_choice {
	enum orr_nccl_algo algo;
	enum orr_nccl_proto proto;
	double ns;
};

/* The speed NCCL's ring search gives a channel over a NIC of nic_bytes_per_s, GB/s. */
double orr__nccl_channel_gbps(double nic_bytes_per_s, bool hopper);
/*
 * The fastest algorithm and protocol of NCCL 2.18's tuning model for an all-reduce,
 * all-gather or reduce-scatter of bytes (nccl-tests' S) over net, and its time; -EINVAL
 * for another kind or a group that is not across nodes.
 */
int orr__nccl_net_time(const struct orr_nccl_net *net, enum orr_coll_kind kind, double bytes,
		       struct orr_nccl_choice *ret);

/* Median and maximum of v[0..n), which it sorts; NAN for both when n == 0. */
void orr__median_max(double *v, size_t n, double *ret_median, double *ret_max);

/*
 * For each event of r, its innermost enclosing event on the same thread, or ORR_NONE
 * (GPU events, markers and outermost events); orr_xmalloc'ed, r->nevents entries.
 */
uint32_t *orr__call_parents(const struct orr_rank *r);

/* Whether name matches one of globs[0..n) (fnmatch(3), case-insensitive). */
bool orr__name_is(const char *name, const char *const *globs, size_t n);
/*
 * Whether event e of r runs in the backward pass: it or an enclosing call (parent:
 * orr__call_parents(r)) is autograd's (evaluate_function, *Backward*, *_backward).
 */
bool orr__in_backward(const struct orr_trace *t, const struct orr_rank *r, const uint32_t *parent,
		      uint32_t e);
/* The innermost of those autograd events around e (e itself included), or ORR_NONE. */
uint32_t orr__backward_node(const struct orr_trace *t, const struct orr_rank *r,
			    const uint32_t *parent, uint32_t e);

/* The event of the call that launched GPU task t (its D2 edge), or ORR_NONE. */
uint32_t orr__launch_event(const struct orr_graph *g, uint32_t t);
/* orr_retime(); with `layers`, a change of layers is no structural change (retime-layers.c). */
int orr__retime(const struct orr_graph *g, const struct orr_structure *st,
		const struct orr_train_config *from, const struct orr_train_config *to,
		const struct orr_retime_models *m, bool layers, float *ret_factors,
		struct orr_retime *ret, const char **ret_why);
/*
 * S of a collective GPU task t of rank r whose trace gives no size: the tensor of the
 * innermost op around its launch that records shapes, when that op has exactly one
 * (estimator/samples.c); <= 0 when none.  parent: orr__call_parents(r).
 */
double orr__caller_bytes(const struct orr_graph *g, const uint32_t *parent,
			 const struct orr_rank *r, uint32_t t);

/*
 * The dtype of a tensor type as PyTorch writes it ("float", "c10::BFloat16", "Char"):
 * the floating types and int8 (estimator/gemm.c); false for the others.
 */
bool orr__dtype_of(const char *name, enum orr_dtype *ret);

/* Whether op event e of r records any tensor shape at all (estimator/gemm.c). */
bool orr__op_has_shapes(const struct orr_rank *r, const struct orr_event *e);

/*
 * Whether c is a configuration Megatron would run: every size at least 1, the enums in
 * range, and the divisions its layers and schedules assert (estimator/memory.c).
 */
bool orr__train_config_valid(const struct orr_train_config *c);

/* Sets v to value, how and the reason fmt formats (estimator/structure.c). */
void orr__value_set(struct orr_value *v, int64_t value, enum orr_value_how how, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
/* The repeats and annotated layers of rank r of t (estimator/layers.c). */
void orr__layers_unshaped(const struct orr_trace *t, const struct orr_rank *r,
			  const uint32_t *parent, struct orr_structure *st);

/* Communicator roles (estimator/roles.c): one collective of the rank, then decide. */
void orr__roles_note(struct orr_structure *st, const struct orr_trace *t, const struct orr_rank *r,
		     const struct orr_collective *co, bool backward, double bytes);
void orr__roles_decide(struct orr_structure *st);
/* tp read from the group of the activation all-reduces among the job's collectives o. */
void orr__tp_group(struct orr_structure *st, const struct orr_coll_obs *o, size_t n);
/* tp and dp read from the sizes of the communicators whose roles are TP and DP. */
void orr__layout_from_comms(struct orr_structure *st);

/*
 * ---- what the GEMM and the kernel models share (estimator/model-common.c) ----
 *
 * Both models group their samples in units (GEMM classes, kernel families) and a unit's
 * samples in points (shapes, sizes).  A unit with ORR__MODEL_MIN_POINTS points or more
 * is fitted relative, t = a + (b·FLOP +) c·bytes, the FLOP term where every sample has
 * FLOPs; one with fewer falls back to the roofline times the trace's median efficiency
 * of its group or, with no GPU known, to the fit over its pool.  Then each point is
 * predicted by the model built again without it.  The samples and the model are opaque
 * here: v holds pointers to the samples, m is the model, and a kind says how to read
 * and fill them.  Its comparators take pointers to elements of v, as qsort(3)'s do.
 */
#define ORR__MODEL_MIN_POINTS 3

/*
 * A sample as the shared code reads it.  A point is left out with the samples of its
 * pool and dtype.  group: whose efficiency it falls back to (a GEMM's math, a kernel's
 * class); pool: whose fit it takes with no GPU known (a GEMM's dtype, a kernel's class).
 */
struct orr__model_view {
	double flops, bytes, ns;
	enum orr_dtype dtype;
	enum orr_dtype math; /* whose peak bounds it (ORR_DTYPE_COUNT: none) */
	int group, pool;
};

/* One unit, as the shared code made it: in the order of cmp_unit. */
struct orr__model_unit {
	const void *first;    /* its first sample */
	const void *const *v; /* its samples [samples], while set_units runs */
	size_t samples, points;
	bool flops;            /* every sample has FLOPs */
	enum orr_gemm_how how; /* ORR_GEMM_FIT, or its fallback */
	/* Not fitted: the efficiency of its group, else of every group (in the model). */
	const struct orr_gemm_efficiency *efficiency;
	struct orr_fit fit; /* how == ORR_GEMM_FIT; its errors NAN otherwise */
};

/* One point of a unit (index unit), predicted by the model built without it. */
struct orr__model_point {
	const void *first; /* its first sample */
	size_t unit, samples;
	double measured_ns;  /* its samples' median */
	double predicted_ns; /* NAN when the model cannot say */
	enum orr_gemm_how how;
};

/* Where a model keeps what the shared code writes while it builds it, and reads. */
struct orr__model_parts {
	const struct orr_gpu_spec *gpu;
	double *floor_ns; /* the least the roofline fallback gives; NULL: none (GEMMs) */
	struct orr_gemm_efficiency *efficiency, *efficiency_all; /* [ngroups], over all */
	size_t *below_roofline;
	struct orr_fit *pooled; /* [npools] */
};

/* What differs between the two models. */
struct orr__model_kind {
	size_t sample_size, model_size;
	int ngroups, npools; /* groups and pools are numbered from 0 */
	/* By unit, by point, by unit then point. */
	int (*cmp_unit)(const void *a, const void *b);
	int (*cmp_point)(const void *a, const void *b);
	int (*cmp_sample)(const void *a, const void *b);
	struct orr__model_view (*view)(const void *s);
	/* Empties m for gpu; the shared code then fills its parts. */
	void (*init)(void *m, const struct orr_gpu_spec *gpu);
	void (*parts)(void *m, struct orr__model_parts *ret);
	/* Gives m its units, with why each predicts as it does. */
	void (*set_units)(void *m, const struct orr__model_unit *u, size_t n);
	/* Gives m its points, and their errors summed up. */
	void (*set_points)(void *m, const struct orr__model_point *p, size_t n);
	/* The fit of q's unit in m when it was fitted, else NULL. */
	const struct orr_fit *(*unit_fit)(const void *m, const void *q);
	/*
	 * Optional.  built: what else m takes from its samples v[0..n), after the
	 * efficiencies and before set_units (in each model left out too).  roofline_ns: the
	 * time of q's roofline fallback in m, given the shared code's t (the roofline x its
	 * efficiency), where the kind times some samples otherwise.
	 */
	void (*built)(void *m, const void *const *v, size_t n);
	double (*roofline_ns)(const void *m, const void *q, double t);
	void (*release)(void *m);
};

/*
 * The model of kind k of samples s[0..n) (valid for their kind) for gpu (may be NULL):
 * its units, fitted or falling back, and its points left out, into *ret (a model of
 * kind k).  An error of orr_fit_linear().
 */
int orr__model_fit(const struct orr__model_kind *k, const void *s, size_t n,
		   const struct orr_gpu_spec *gpu, void *ret);
/*
 * Predicted ns of a sample like q by m: its unit's fit, else the fallback; at least the
 * roofline when the GPU is known.  NAN when m cannot say.  ret_how may be NULL.
 */
double orr__model_time(const struct orr__model_kind *k, const void *m, const void *q,
		       enum orr_gemm_how *ret_how);
/*
 * Writes "2 shapes, fewer than 3: " (point: "shape", points: 2) to why[0..size), the
 * start of why a unit falls back; returns its length (0 when it does not fit).
 */
size_t orr__model_why_fewer(char *why, size_t size, size_t points, const char *point);

#endif /* ORRERY_ESTIMATOR_INTERNAL_H */
