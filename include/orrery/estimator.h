/* SPDX-License-Identifier: MIT */
/*
 * orrery/estimator.h — what a training step is made of and what each piece costs: the
 * models the estimator fits on a trace's own kernels and collectives, and the hardware
 * table it falls back to where a trace cannot constrain a model (docs/design.md,
 * "Estimation"; docs/estimator.md).  The configurations they estimate — memory,
 * re-timing, pipeline schedules, synthesized steps, costs files — are declared in
 * orrery/estimate.h, which this header includes: it stays the subsystem's one entry.
 *
 * Units: seconds are never used; times are nanoseconds (double where fitted), sizes
 * bytes, rates per second.  Errors: functions return 0 or -errno (-EINVAL for input that
 * cannot be fitted, -ENOMEM), with the reason in reterr_diag where one is taken.
 * Thread safety: the hardware table is constant; fits share nothing.
 */
#ifndef ORRERY_ESTIMATOR_H
#define ORRERY_ESTIMATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the hardware table (estimator/hardware.c; docs/hardware.md) ---- */

/* Element types whose peak rate a GPU entry gives (dense, no sparsity). */
enum orr_dtype {
	ORR_DTYPE_FP64,
	ORR_DTYPE_FP32,
	ORR_DTYPE_TF32,
	ORR_DTYPE_BF16,
	ORR_DTYPE_FP16,
	ORR_DTYPE_FP8,
	ORR_DTYPE_INT8,
	ORR_DTYPE_COUNT
};

/* "bf16", "fp8", ...; NULL for a value out of range. */
const char *orr_dtype_name(enum orr_dtype t);

/*
 * One GPU as a vendor datasheet gives it, in the vendor's reference node (DGX, or the
 * AMD platform).  Any number the datasheet does not give is 0 (unknown), never guessed.
 * Rates are SI (1 GB/s = 1e9 B/s), capacities binary ("80GB" = 80 GiB).
 */
struct orr_gpu_spec {
	const char *id;                     /* short, stable: "h100-sxm", "a100-80gb-sxm" */
	const char *name;                   /* as the vendor names it */
	const char *match;                  /* fnmatch(3) globs, '|'-separated, matched
						 against a device name of a trace (CUDA's or
						 ROCm's), case-insensitive */
	double peak_flops[ORR_DTYPE_COUNT]; /* dense FLOP/s (OP/s for int8): half of a
						 figure printed "with sparsity" */
	double hbm_bytes_per_s;             /* memory bandwidth, bytes/s */
	double hbm_bytes;                   /* memory capacity, bytes */
	double link_bytes_per_s;            /* GPU-to-GPU inside a node (NVLink, Infinity
						 Fabric), bytes/s per direction */
	double nic_bytes_per_s;             /* network per GPU in the reference node,
						 bytes/s per direction */
	int gpus_per_node;                  /* in the reference node; 0 without one */
	int sms;                            /* streaming multiprocessors (AMD: compute
						 units); 0 when not stated */
	const char *source;                 /* the datasheet(s): title, publisher, URL */
};

/* The whole table, in a fixed order; *ret_n entries. */
const struct orr_gpu_spec *orr_gpu_specs(size_t *ret_n);
/* The entry whose id is id, or NULL. */
const struct orr_gpu_spec *orr_gpu_spec_by_id(const char *id);
/*
 * The entry that a trace's device name (e.g. "NVIDIA H100 80GB HBM3") matches, or NULL
 * (also for NULL or ""): the first in table order, whose entries come most specific
 * first.
 */
const struct orr_gpu_spec *orr_gpu_spec_match(const char *device_name);

/* ---- least-squares fits (estimator/fit.c) ---- */

#define ORR_FIT_MAX_PARAMS 8

/*
 * y ≈ X·coef, with its errors: relative, |prediction / measurement - 1|, median and
 * maximum over the samples (fit_*) and left out one at a time (loo_*; NAN when the
 * design has rank below nparams or no more samples than parameters).
 */
struct orr_fit {
	size_t nparams, samples, rank;
	bool relative; /* rows weighted by 1/y: minimizes relative error */
	double coef[ORR_FIT_MAX_PARAMS];
	double fit_median, fit_max, loo_median, loo_max;
};

/*
 * Fits x (n rows of k features, row-major) to y (n values; positive when relative) by
 * LAPACK's dgelsd.  -EINVAL for k outside 1..ORR_FIT_MAX_PARAMS, n == 0 or a value that
 * is not finite; -ENOMEM; -ELIBACC when liblapacke.so.3, loaded at the first fit, cannot
 * be.  Thread-safe.  A rank below k is not an error: ret->rank says so, and the
 * coefficients are the minimum-norm solution.  ret_loo, when not NULL, gets each
 * sample's leave-one-out relative error (NAN where there is none).
 */
int orr_fit_linear(const double *x, const double *y, size_t n, size_t k, bool relative,
		   struct orr_fit *ret, double *ret_loo);
/* coef · xrow (f->nparams features). */
double orr_fit_eval(const struct orr_fit *f, const double *xrow);

/* ---- collectives (estimator/collective.c) ---- */

enum orr_coll_kind {
	ORR_COLL_UNKNOWN = -1,
	ORR_COLL_ALL_REDUCE,
	ORR_COLL_ALL_GATHER,
	ORR_COLL_REDUCE_SCATTER,
	ORR_COLL_ALL_TO_ALL,
	ORR_COLL_BROADCAST,
	ORR_COLL_REDUCE,
	ORR_COLL_SEND_RECV,
	ORR_COLL_KIND_COUNT
};

/*
 * The kind of a collective type as traces write it ("allreduce", "nccl:all_reduce",
 * "_allgather_base", "reduce_scatter_tensor", "AllReduce" from a kernel name, "send").
 */
enum orr_coll_kind orr_coll_kind_of(const char *type);
/* "AllReduce", ...; NULL for ORR_COLL_UNKNOWN. */
const char *orr_coll_kind_name(enum orr_coll_kind k);
/*
 * nccl-tests' bus-bandwidth factor F(n) for n ranks: 2(n-1)/n for all-reduce, (n-1)/n
 * for all-gather, reduce-scatter and all-to-all, 1 for the others; 0 when n < 1 or the
 * kind is unknown.
 */
double orr_coll_bus_factor(enum orr_coll_kind k, int n);

/* One measured collective: the whole buffer S (nccl-tests' size), the ranks, the time. */
struct orr_coll_sample {
	double bytes;
	int group;
	double ns;
};

/*
 * t(S, n) = alpha_ns + alpha_rank_ns·n + S·F(n) / bus_bytes_per_s within one band of
 * sizes [lo_bytes, hi_bytes): NCCL picks its protocol (LL, LL128, Simple), channel count
 * and chunking by size, so latency and bus bandwidth are fitted per band of sizes, one
 * octave each, merged with its neighbours until it has enough samples (docs/estimator.md).
 * The per-rank latency term is the ring's step count, fitted only when the samples
 * have several group sizes (else 0, and per_rank_latency is false).
 */
struct orr_coll_band {
	double lo_bytes, hi_bytes;
	double alpha_ns, alpha_rank_ns, bus_bytes_per_s;
	struct orr_fit fit;
};

#define ORR_COLL_MAX_BANDS 64

struct orr_coll_model {
	enum orr_coll_kind kind;
	size_t nbands;
	struct orr_coll_band bands[ORR_COLL_MAX_BANDS];
	bool per_rank_latency;
	bool constrained; /* false: the samples cannot separate latency from bandwidth */
	/* Over all samples, relative: fitted, and each left out of its band's fit. */
	size_t samples;
	double fit_median, fit_max, loo_median, loo_max;
};

/*
 * Fits samples of one kind and one link class.  -EINVAL for an unknown kind, no
 * samples, or a sample without positive bytes and time or with a group its kind has
 * no bus factor for; -ENOMEM.
 */
int orr_coll_model_fit(enum orr_coll_kind kind, const struct orr_coll_sample *s, size_t n,
		       struct orr_coll_model *ret);
/*
 * Predicted nanoseconds for bytes over group ranks, from the band holding bytes (the
 * first or last band beyond the samples' range); NAN when the model cannot say.
 */
double orr_coll_model_time(const struct orr_coll_model *m, double bytes, int group);
/* Its latency part alone, alpha_ns + alpha_rank_ns·group of that band; NAN likewise. */
double orr_coll_model_latency(const struct orr_coll_model *m, double bytes, int group);

/* Where a collective's bytes go: inside a node (NVLink, xGMI) or across the network. */
enum orr_link { ORR_LINK_UNKNOWN, ORR_LINK_NODE, ORR_LINK_NETWORK };

/* "node", "network", "unknown"; NULL out of range. */
const char *orr_link_name(enum orr_link l);

/* A collective instance of a trace as a sample (estimator/samples.c). */
struct orr_coll_obs {
	enum orr_coll_kind kind;
	enum orr_link link;
	bool alone;           /* seen on one rank: its time includes waiting for the others */
	bool sized_by_caller; /* the trace gave no size: S is the calling op's tensor */
	uint32_t task;        /* a member's GPU task in the graph */
	struct orr_coll_sample s;
};

/*
 * Every collective of g with a known kind, group size and size: one per instance
 * coupled across ranks (time: its members' shortest kernel), one per collective kernel
 * seen alone.  *ret is malloc'ed (free()); returns how many.
 */
size_t orr_coll_observe(const struct orr_graph *g, struct orr_coll_obs **ret);

/* ---- nccl-tests results (estimator/nccl-tests.c; docs/orrery-fit.md) ---- */

/* One run of an nccl-tests binary (all_reduce_perf, ...): its collective's samples. */
struct orr_nccl_tests {
	enum orr_coll_kind kind;
	enum orr_link link;        /* NODE: every rank on one host; NETWORK: several */
	int group;                 /* ranks: its "#  Rank" lines */
	struct orr_coll_sample *s; /* one per result line: S and the out-of-place time */
	size_t n;
};

/*
 * The collective of an nccl-tests name, len bytes at s: "all_reduce" or its binary's
 * "all_reduce_perf", all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv;
 * ORR_COLL_UNKNOWN for another.
 */
enum orr_coll_kind orr_nccl_tests_kind(const char *s, size_t len);
/*
 * Parses what an nccl-tests binary printed (len bytes at buf, named name in messages).
 * The collective is the one its "# Collective test starting:" line names, else kind.
 * ORR_EMALFORMED for a result line without a positive size and time, a rank line
 * without its host, or when the collective or the group is unknown; ORR_EEMPTY
 * without results.  orr_nccl_tests_release() frees *ret.
 */
int orr_nccl_tests_parse(const char *name, const char *buf, size_t len, enum orr_coll_kind kind,
			 struct orr_nccl_tests *ret, struct orr_diag *reterr_diag);
/* The same from the file at path: -errno, -EINVAL (not a regular file), ORR_ETOOBIG. */
int orr_nccl_tests_read(const char *path, enum orr_coll_kind kind, struct orr_nccl_tests *ret,
			struct orr_diag *reterr_diag);
void orr_nccl_tests_release(struct orr_nccl_tests *t);

/* ---- the slowdown of kernels overlapping collectives (estimator/overlap.c) ---- */

/*
 * For each kernel name seen at least twice with and twice without a collective kernel
 * overlapping it on another stream of its GPU, the ratio of the two medians; slowdown
 * is their median (1.2: 20 % slower beside a collective), 0 when no name qualifies.
 */
struct orr_overlap {
	size_t kernels;          /* compute kernels of the rank */
	size_t overlapped;       /* of which overlapped a collective */
	size_t names;            /* names compared */
	size_t kernels_compared; /* their instances */
	double slowdown, slowdown_min, slowdown_max;
};

void orr_overlap_slowdown(const struct orr_rank *r, struct orr_overlap *ret);

/* ---- structure: what a rank's step is made of (estimator/structure.c) ---- */

enum orr_value_how {
	ORR_VALUE_UNKNOWN,  /* not determined: why says why */
	ORR_VALUE_READ,     /* read from the trace: a shape, a group, its metadata */
	ORR_VALUE_INFERRED, /* derived from values read: why says how */
};

/* "unknown", "read", "inferred"; NULL out of range. */
const char *orr_value_how_name(enum orr_value_how h);

struct orr_value {
	int64_t value; /* 0 when unknown */
	enum orr_value_how how;
	char why[192];
};

/* Kinds of parallelism a communicator serves. */
enum orr_par {
	ORR_PAR_UNKNOWN,
	ORR_PAR_TP,
	ORR_PAR_DP,
	ORR_PAR_PP,
	ORR_PAR_CP,
	ORR_PAR_EP,
	ORR_PAR_COUNT
};

/* "TP", "DP", ...; "unknown"; NULL out of range. */
const char *orr_par_name(enum orr_par p);

/* A communicator the rank used, and its role (estimator/roles.c). */
struct orr_comm_role {
	uint32_t name_id;        /* interned process-group name, ORR_STR_NONE for none */
	const char *name, *desc; /* NULL when the trace gives none */
	int32_t size;            /* ranks, -1 when unknown */
	size_t collectives;      /* the rank's collective kernels on it */
	size_t activations, stage_transfers, gradients, all_to_all; /* by what they carry */
	enum orr_par role;
	enum orr_value_how how;
	char why[160];
};

#define ORR_MAX_COMM_ROLES 32

/*
 * A rank's phases and the transformer it runs, on this rank: layers is the rank's own
 * (L/pp with pipelining), tokens = micro_batch x seq per micro-batch, every dimension
 * the model's whole (not divided by tp).
 */
struct orr_structure {
	int32_t rank;
	bool forward, backward, optimizer, data_loading; /* phases seen */
	bool gated_mlp;                                  /* FC1 is 2f/t wide (SwiGLU) */
	bool fused_attention; /* most attention ops fused (SDPA, flash-attn): no scores stored */
	struct orr_value layers, hidden, heads, head_dim, kv_groups, ffn, vocab, seq;
	struct orr_value micro_batch, tokens, micro_batches;
	struct orr_value tp, pp, dp, world;
	/*
	 * Without shapes: forward annotations named like a transformer layer, per step;
	 * and the block of kernels the compute stream repeats (repeat_kernels long), which
	 * is a layer's forward or backward when the trace is a transformer's.
	 */
	struct orr_value annotated_layers, repeats;
	size_t repeat_kernels;
	/* The communicators its collectives used (unnamed ones are one entry). */
	struct orr_comm_role comms[ORR_MAX_COMM_ROLES];
	size_t ncomms;
};

/* The structure of graph rank `rank` (an index into the graph's ranks); -EINVAL past them. */
int orr_structure_recover(const struct orr_graph *g, size_t rank, struct orr_structure *ret);
/*
 * The same with g's collectives as orr_coll_observe() gave them, o[0..n): a caller that
 * recovers every rank's structure observes them once (each observation walks every
 * rank's collectives).
 */
int orr_structure_recover_obs(const struct orr_graph *g, size_t rank, const struct orr_coll_obs *o,
			      size_t n, struct orr_structure *ret);

/* ---- parts: where a rank's GPU time goes (estimator/parts.c) ---- */

struct orr_gemm_sample;

enum orr_part {
	ORR_PART_EMBEDDING, /* under ops named like an embedding (lookup and its gradient) */
	ORR_PART_LAYERS,    /* under any other op of the forward and backward passes */
	ORR_PART_LOGITS,    /* the output layer's GEMMs (orr_gemm_label()'s logits) */
	ORR_PART_LOSS,      /* under ops named like a loss (cross-entropy, NLL, MSE) */
	ORR_PART_OPTIMIZER, /* under Optimizer.step and its kind */
	ORR_PART_OTHER,     /* launched outside any op (or the launch is not in the trace) */
	ORR_PART_COUNT
};

/* "embedding", "layers", ...; NULL out of range. */
const char *orr_part_name(enum orr_part p);

struct orr_part_time {
	size_t kernels;
	double ns;          /* their durations, summed */
	double backward_ns; /* ... of those launched in autograd's backward pass */
};

/*
 * The kernels, copies and memsets (not collectives) of a rank's steps, by part: over
 * every step (from the first's start to the last's end; the whole capture, and steps
 * 0, when no step is marked).
 */
struct orr_parts {
	size_t steps;
	int64_t from_ns, to_ns; /* the window: the steps' (INT64_MIN, INT64_MAX without) */
	struct orr_part_time part[ORR_PART_COUNT];
};

/*
 * The parts of graph rank `rank` (an index); s[0..n): the graph's GEMM samples, labeled
 * (orr_gemm_label()), whose logits are a part of their own.  -EINVAL past the ranks.
 */
int orr_parts_measure(const struct orr_graph *g, size_t rank, const struct orr_gemm_sample *s,
		      size_t n, struct orr_parts *ret);

/* ---- GEMMs (estimator/gemm.c, estimator/gemm-model.c; docs/estimator.md, "GEMMs") ---- */

#define ORR_GEMM_FAMILY_MAX 128

/*
 * The family of a kernel name when it is a GEMM's (or split-K's reduction, part of
 * one): the name without its return type, template arguments and argument list (or
 * CUTLASS's kernel, the one template argument of its wrapper), up to its first tile
 * size: "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>(...)"
 * gives "cutlass_80_tensorop_s1688gemm", "volta_sgemm_128x64_nn" "volta_sgemm".
 * Written to buf (truncated to size), and true; false for a name that is no GEMM's
 * (convolutions' implicit GEMMs and FBGEMM's kernels are not).
 */
bool orr_gemm_kernel_family(const char *kernel_name, char *buf, size_t size);

/* What a GEMM computes in a transformer (orr_gemm_label()). */
enum orr_gemm_role {
	ORR_GEMM_ROLE_UNKNOWN,
	ORR_GEMM_ROLE_QKV,       /* the query, key and value projection */
	ORR_GEMM_ROLE_PROJ,      /* attention's output projection */
	ORR_GEMM_ROLE_FC1,       /* the MLP's first (with its gate, when gated) */
	ORR_GEMM_ROLE_FC2,       /* the MLP's second */
	ORR_GEMM_ROLE_ATTENTION, /* attention's batched GEMMs: scores and context */
	ORR_GEMM_ROLE_LOGITS,    /* the output layer: hidden states to the vocabulary */
	ORR_GEMM_ROLE_COUNT
};

/* Which product of a layer's GEMM Y = X·W: forward, dX = dY·Wᵀ, or dW = Xᵀ·dY. */
enum orr_gemm_pass {
	ORR_GEMM_PASS_UNKNOWN,
	ORR_GEMM_FORWARD,
	ORR_GEMM_DGRAD, /* the data gradient (attention's backward GEMMs: all of them) */
	ORR_GEMM_WGRAD, /* the weight gradient */
	ORR_GEMM_PASS_COUNT
};

/* "qkv", "proj", "fc1", "fc2", "attention", "logits", "unknown"; NULL out of range. */
const char *orr_gemm_role_name(enum orr_gemm_role r);
/* "forward", "dgrad", "wgrad", "unknown"; NULL out of range. */
const char *orr_gemm_pass_name(enum orr_gemm_pass p);

/* One matrix-multiply op of a trace and the GEMM kernels it launched. */
struct orr_gemm_sample {
	char family[ORR_GEMM_FAMILY_MAX]; /* of its first GEMM kernel that is no reduction */
	const char *op;                   /* "aten::mm", ...: the graph's trace owns it */
	enum orr_dtype dtype;             /* of the operands */
	enum orr_dtype math;              /* whose peak bounds it: TF32 for FP32 operands on
					     tensor cores (the kernel's name says so) */
	int elem_bytes;
	int64_t batch, m, n, k;
	double flops;     /* 2·batch·m·n·k */
	double bytes;     /* elem_bytes·batch·(m·k + k·n + m·n) */
	double ns;        /* its GEMM kernels' durations, summed */
	uint32_t task;    /* its first GEMM kernel's GPU task */
	uint32_t kernels; /* GEMM kernels summed (split-K: the GEMM and its reduction) */
	bool backward;    /* its op ran in autograd's backward pass */
	/*
	 * In the backward pass: its autograd node (numbered from 1 across the graph: the
	 * samples of one node share it), its place among the node's GEMM samples
	 * (0-based, by start) and their count; 0, 0, 0 in the forward pass.
	 */
	uint32_t grad_node;
	uint16_t grad_index, grad_count;
	enum orr_gemm_role role; /* orr_gemm_label(); ORR_GEMM_ROLE_UNKNOWN until then */
	enum orr_gemm_pass pass;
};

/* What orr_gemm_observe() found, and why a GEMM kernel gave no sample. */
struct orr_gemm_counts {
	size_t kernels;    /* GEMM kernels, by name */
	size_t outside;    /* ... launched outside any matrix-multiply op (or not launched) */
	size_t ops;        /* the matrix-multiply ops that launched the others: */
	size_t no_shapes;  /* ... recording no operand shapes (no record_shapes) */
	size_t bad_shapes; /* ... with shapes or a dtype that are no GEMM's */
	size_t incomplete; /* ... whose GEMM kernels are only split-K's reduction (the
			      trace lacks the GEMM) or took no measurable time */
	size_t samples;    /* ... giving a sample */
};

/*
 * The GEMMs of g: every GEMM kernel's launch is walked up its thread's calls to the
 * innermost matrix-multiply op (aten::mm, addmm, addmm_, bmm, baddbmm, matmul, linear,
 * _scaled_mm), whose Input Dims give the shape; one sample per op, its GEMM kernels
 * summed.  *ret is orr_xmalloc'ed (free()), NULL when there are none; returns how
 * many.  ret_counts may be NULL.
 */
size_t orr_gemm_observe(const struct orr_graph *g, struct orr_gemm_sample **ret,
			struct orr_gemm_counts *ret_counts);

/*
 * Labels samples s[0..n) with their role and pass from a rank's structure st (its model
 * dimensions, which are every rank's).  The forward GEMMs of T tokens are, with t-way
 * tensor parallelism (estimator/structure.c):
 *
 *   QKV     T×h · h×(h + 2·g·d)/t     projection  T×(h/t) · (h/t)×h
 *   FC1     T×h · h×(f/t) (2f/t gated) FC2         T×(f/t) · (f/t)×h
 *   logits  T×h · h×(V/t)             attention   [B, s, d]·[B, d, s], [B, s, s]·[B, s, d]
 *
 * and in the backward pass the data gradient T×N · N×K and the weight gradient with T
 * as its inner dimension (K×T · T×N or N×T · T×K).  Where T equals a layer's width
 * (T = h, T = f/t) one shape can fit several: an autograd node of two GEMMs is then
 * one layer's data gradient (first) and weight gradient, whose role is the one both
 * shapes fit.  A sample whose shape fits no role, or several that this does not
 * settle, stays unknown; so does every sample when st is no transformer.
 * Returns how many were labeled.
 */
size_t orr_gemm_label(const struct orr_structure *st, struct orr_gemm_sample *s, size_t n);

/*
 * The table entry of the GPU that g's kernels ran on: the device of the first stream of
 * the first rank that names one; NULL when no rank does or the table has no match.
 */
const struct orr_gpu_spec *orr_gpu_spec_find(const struct orr_graph *g);

/*
 * The roofline's time, max(flops / peak[math], bytes / HBM), in ns; 0 when gpu is
 * NULL or gives neither number.
 */
double orr_gemm_roofline_ns(const struct orr_gpu_spec *gpu, enum orr_dtype math, double flops,
			    double bytes);

enum orr_gemm_how {
	ORR_GEMM_NONE,     /* cannot say */
	ORR_GEMM_FIT,      /* the class's own fit */
	ORR_GEMM_ROOFLINE, /* the roofline × the trace's median efficiency of its math */
	ORR_GEMM_POOLED,   /* GPU unknown: the fit over every GEMM of the dtype */
};

/* "none", "fit", "roofline", "pooled"; NULL out of range. */
const char *orr_gemm_how_name(enum orr_gemm_how h);

/*
 * One class, (dtype, family): t = coef[0] + coef[1]·FLOP + coef[2]·bytes (ns), fitted
 * relative when its samples have 3 distinct shapes or more; else it predicts as `how`
 * says, and why says why.
 */
struct orr_gemm_class {
	enum orr_dtype dtype;
	char family[ORR_GEMM_FAMILY_MAX];
	size_t samples, shapes;
	enum orr_gemm_how how;
	char why[256];
	struct orr_fit fit; /* how == ORR_GEMM_FIT; its errors NAN otherwise */
	/* Leave one shape out over its shapes: median and max error; NAN when none. */
	size_t loso_shapes;
	double loso_median, loso_max;
};

/* One distinct shape of a class, predicted by the model fitted without it. */
struct orr_gemm_shape {
	size_t cls; /* index into the model's classes */
	int64_t batch, m, n, k;
	size_t samples;
	double measured_ns;  /* its samples' median */
	double predicted_ns; /* without any sample of this dtype and shape; NAN */
	enum orr_gemm_how how;
};

/* Median measured / roofline over some samples. */
struct orr_gemm_efficiency {
	double median; /* NAN without samples */
	size_t samples;
	bool fitted; /* over the fitted classes' samples; false: none was, over every one */
};

/*
 * The GEMM model of tiles and waves (estimator/gemm-tiles.c, orrery/gemm-tiles.h), per
 * math dtype: t = fixed_ns + ns_per_ns x the quantized time
 * (orr_gemm_tiles_quantized_ns()).
 */
struct orr_gemm_tiles {
	const struct orr_gpu_spec *gpu;
	double fixed_ns[ORR_DTYPE_COUNT];  /* a kernel's fixed cost, at least 0 */
	double ns_per_ns[ORR_DTYPE_COUNT]; /* the inverse of the fraction of the peak */
	size_t samples[ORR_DTYPE_COUNT];   /* fitted on; 0: no fit for that math */
};

struct orr_gemm_model {
	const struct orr_gpu_spec *gpu; /* NULL: no roofline, no bound */
	/*
	 * The roofline fallback's efficiency per math dtype, and over every math (all):
	 * a math without samples takes all's.  No samples without gpu.
	 */
	struct orr_gemm_efficiency efficiency[ORR_DTYPE_COUNT], efficiency_all;
	/*
	 * The fallback's efficiency per math of the GEMMs bandwidth-bound at the roofline
	 * (bytes / HBM above FLOPs / peak: attention's batched scores and context, k or n
	 * the head dimension): the median of measured / (orr_gemm_tile_traffic_bytes() /
	 * HBM) over such samples not faster than their roofline.  A bandwidth-bound GEMM of
	 * a math without any takes efficiency[math] x the roofline.  fitted is false.
	 */
	struct orr_gemm_efficiency efficiency_memory[ORR_DTYPE_COUNT];
	size_t below_roofline; /* samples faster than their roofline: a wrong peak */
	struct orr_gemm_class *classes;
	size_t nclasses;
	struct orr_fit pooled[ORR_DTYPE_COUNT]; /* nparams 0 where not fitted */
	struct orr_gemm_tiles tiles;            /* on every sample; tiles.gpu NULL: none */
	/* Leave one shape out over the whole trace.  classes and shapes: the model's. */
	struct orr_gemm_shape *shapes;
	size_t nshapes, loso_predicted;
	double loso_median, loso_max;
};

/*
 * Fits the model on samples s[0..n) for gpu (may be NULL), with every class's fit,
 * leave-one-out and leave-one-shape-out errors.  No samples is an empty model.
 * -EINVAL for a sample without positive FLOPs, bytes and time, with a dtype out of
 * range or an unterminated family; an error of orr_fit_linear().  Release with orr_gemm_model_release().
 */
int orr_gemm_model_fit(const struct orr_gemm_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_gemm_model *ret);
/*
 * The same without the tiles model (ret->tiles all zero), most of the fit's time: its
 * classes, errors and fallback as orr_gemm_model_fit() gives them.
 */
int orr_gemm_model_fit_classes(const struct orr_gemm_sample *s, size_t n,
			       const struct orr_gpu_spec *gpu, struct orr_gemm_model *ret);
void orr_gemm_model_release(struct orr_gemm_model *m);

/*
 * Predicted ns of a GEMM like q (its dtype, math, family, FLOPs and bytes): its class's
 * fit, else the fallback; at least the roofline when the GPU is known.  NAN when the
 * model cannot say.  ret_how may be NULL.
 */
double orr_gemm_model_time(const struct orr_gemm_model *m, const struct orr_gemm_sample *q,
			   enum orr_gemm_how *ret_how);
/*
 * Whether m's roofline fallback times q (batched and bound by memory) by the bytes its
 * tiles move at the rate measured on such GEMMs (gemm.efficiency_memory), not by the
 * roofline x an efficiency: what a report says of how q was timed.
 */
bool orr_gemm_model_memory_bound(const struct orr_gemm_model *m, const struct orr_gemm_sample *q);

/*
 * ---- kernels other than GEMMs (estimator/kernels.c, estimator/kernels-model.c;
 * docs/estimator.md, "Kernels other than GEMMs") ----
 */

/* What a kernel does, for its time model. */
enum orr_kern_class {
	ORR_KERN_ATTENTION,   /* flash, memory-efficient, cuDNN; fused scale-mask-softmax */
	ORR_KERN_NORM,        /* layer, RMS, batch, group norms */
	ORR_KERN_SOFTMAX,     /* softmax and log-softmax outside fused attention */
	ORR_KERN_ELEMENTWISE, /* PyTorch's elementwise kernels, Triton pointwise, activations */
	ORR_KERN_REDUCTION,   /* reduce kernels, Triton reductions */
	ORR_KERN_OPTIMIZER,   /* multi-tensor apply, fused Adam, kernels under Optimizer.step */
	ORR_KERN_COPY,        /* on the GPU: device-to-device copies, memsets, copy kernels, cat */
	ORR_KERN_TRANSFER,    /* copies to or from the host or another GPU */
	ORR_KERN_OTHER,
	ORR_KERN_CLASS_COUNT
};

/* "attention", "norm", ...; NULL out of range. */
const char *orr_kern_class_name(enum orr_kern_class c);

#define ORR_KERN_FAMILY_MAX 128

/*
 * The family of a kernel name: without its return type, template arguments, argument
 * list and "(anonymous namespace)::", e.g. "void at::native::(anonymous
 * namespace)::vectorized_layer_norm_kernel<float, float>(int, ...)" gives
 * "at::native::vectorized_layer_norm_kernel"; a copy's or memset's name ("Memcpy HtoD
 * (Pinned -> Device)") whole.  Written to buf, truncated to size.
 */
void orr_kern_family(const char *kernel_name, char *buf, size_t size);

/*
 * The class of a kernel that is no GEMM's or collective's, from its name and then the
 * names of the ops and annotations around its launch, innermost first (n of them; may
 * be NULL when n is 0).  Copies and memsets are known by their names ("Memcpy DtoD ...",
 * "Memset ...").
 */
enum orr_kern_class orr_kern_classify(const char *kernel_name, const char *const *callers,
				      size_t n);

/*
 * One sample: the kernels one op launched, or one copy.  Bytes are the op's tensor
 * inputs plus an output the size of its largest input; a copy's are the trace's.
 */
struct orr_kern_sample {
	enum orr_kern_class cls;          /* of the kernels that took most of its time */
	char family[ORR_KERN_FAMILY_MAX]; /* of its longest kernel */
	const char *op;                   /* whose tensors give its bytes; a copy's innermost
					     op, or NULL; the graph's trace owns it */
	enum orr_dtype dtype;             /* of the op's largest tensor; ORR_DTYPE_COUNT when
					     none is a floating type (and for copies) */
	double bytes;
	double flops;     /* attention: 4·b·h·s²·d from its op's query, ×2.5 backward, ×0.5
			     causal; 0 otherwise (and for fused softmax) */
	double ns;        /* its kernels' durations, summed */
	uint32_t task;    /* its longest kernel's GPU task */
	uint32_t kernels; /* kernels summed */
};

/*
 * What orr_kern_observe() found, and why a kernel gave no sample: each kernel is counted
 * once in no_bytes, outside, no_shapes, composite, bad_shapes, no_time or sampled.
 */
struct orr_kern_counts {
	size_t kernels; /* GPU kernels, copies and memsets that are no GEMM's or collective's */
	size_t by_class[ORR_KERN_CLASS_COUNT]; /* ... by their own class */
	size_t no_bytes;   /* copies and memsets whose size the trace does not give */
	size_t outside;    /* kernels launched outside any op (or whose launch is not there) */
	size_t no_shapes;  /* ... under ops none of which records a tensor shape */
	size_t composite;  /* ... whose op with shapes launched GEMMs or collectives too,
			      or is a compiled graph of several kernels */
	size_t bad_shapes; /* ... whose op has a tensor of unknown element size, or none */
	size_t no_time;    /* ... summed to no measurable time */
	size_t sampled;    /* ... in samples */
	size_t samples;
	size_t samples_by_class[ORR_KERN_CLASS_COUNT];
	size_t layout_guessed; /* attention samples whose [b, h, s, d] order was guessed */
};

/*
 * The samples of every kernel of g that is no GEMM's or collective's: a kernel's launch
 * is walked up its thread's calls to the innermost op that records tensor shapes, and
 * that op's kernels are one sample; each copy and memset with a size is one.  *ret is
 * orr_xmalloc'ed (free()), NULL when there are none; returns how many.  ret_counts may
 * be NULL.
 */
size_t orr_kern_observe(const struct orr_graph *g, struct orr_kern_sample **ret,
			struct orr_kern_counts *ret_counts);

/*
 * One family, (class, dtype, kernel family): t = coef[0] + coef[1]·bytes, or with FLOPs
 * (flops true: every sample has some) t = coef[0] + coef[1]·FLOP + coef[2]·bytes (ns),
 * fitted relative when its samples have 3 distinct sizes or more; else it predicts as
 * `how` says (the GEMM model's fallbacks), and why says why.
 */
struct orr_kern_family {
	enum orr_kern_class cls;
	enum orr_dtype dtype;
	char name[ORR_KERN_FAMILY_MAX];
	size_t samples, sizes;
	bool flops;
	enum orr_gemm_how how;
	char why[192];
	struct orr_fit fit; /* how == ORR_GEMM_FIT; its errors NAN otherwise */
	/* Leave one size out over its sizes: how many, median and max error (NAN). */
	size_t loso_sizes;
	double loso_median, loso_max;
};

/* One distinct size (bytes, FLOPs) of a family, predicted by the model fitted without it. */
struct orr_kern_size {
	size_t family; /* index into the model's families */
	double bytes, flops;
	size_t samples;
	double measured_ns;  /* its samples' median */
	double predicted_ns; /* without any sample of its class, dtype and size; NAN */
	enum orr_gemm_how how;
};

/* Per class, over its families: counts, and leave one size out. */
struct orr_kern_class_summary {
	size_t samples, sizes, families, fitted;
	size_t loso_sizes; /* predicted */
	double loso_median, loso_max;
};

struct orr_kern_model {
	const struct orr_gpu_spec *gpu; /* NULL: no roofline, no bound */
	/*
	 * The fallback, max(roofline × efficiency, floor_ns).  floor_ns: the median time of
	 * the samples whose roofline is below the shortest sample's time (NAN without
	 * samples or GPU).  The efficiency: the median measured / roofline of the samples
	 * whose roofline is at least floor_ns, per class and over every class (all).
	 */
	double floor_ns;
	struct orr_gemm_efficiency efficiency[ORR_KERN_CLASS_COUNT], efficiency_all;
	size_t below_roofline; /* samples faster than bytes / HBM (and FLOP / peak) */
	struct orr_kern_family *families;
	size_t nfamilies;
	struct orr_fit pooled[ORR_KERN_CLASS_COUNT]; /* GPU unknown; nparams 0 where not fitted */
	struct orr_kern_class_summary classes[ORR_KERN_CLASS_COUNT];
	struct orr_kern_size *sizes;
	size_t nsizes, loso_predicted;
	double loso_median, loso_max;
};

/*
 * Fits the model on samples s[0..n) for gpu (may be NULL), with every family's fit,
 * leave-one-out and leave-one-size-out errors.  No samples is an empty model.  -EINVAL
 * for a sample without positive bytes and time, with negative FLOPs, a class or dtype
 * out of range (ORR_DTYPE_COUNT is allowed) or an unterminated family; an error of
 * orr_fit_linear().  Release with orr_kern_model_release().
 */
int orr_kern_model_fit(const struct orr_kern_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_kern_model *ret);
void orr_kern_model_release(struct orr_kern_model *m);

/*
 * Predicted ns of a sample like q (its class, dtype, family, bytes and FLOPs): its
 * family's fit, else the fallback; at least the roofline when the GPU is known.  NAN
 * when the model cannot say.  ret_how may be NULL.
 */
double orr_kern_model_time(const struct orr_kern_model *m, const struct orr_kern_sample *q,
			   enum orr_gemm_how *ret_how);

#ifdef __cplusplus
}
#endif

/* The GEMM model of tiles and waves, which the GEMM model holds. */
#include "orrery/gemm-tiles.h"
/* The profiler's own cost, which the launch time is calibrated without. */
#include "orrery/profiler-cost.h"
/* The second half of the estimator's interface: configurations and their estimates. */
#include "orrery/estimate.h"

#endif /* ORRERY_ESTIMATOR_H */
