/* SPDX-License-Identifier: MIT */
/*
 * orrery/estimate.h — estimating a training configuration with the models of
 * orrery/estimator.h: memory per GPU, a traced configuration and its GEMMs re-shaped for
 * another, re-timing a trace, pipeline schedules, steps synthesized from a description,
 * and the costs files `orrery fit -o` writes (docs/estimator.md).  Included by
 * orrery/estimator.h, the estimator's entry header; conventions as there.
 */
#ifndef ORRERY_ESTIMATE_H
#define ORRERY_ESTIMATE_H

#include "orrery/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory per GPU (estimator/memory.c; docs/estimator.md, "Memory") ---- */

/* Which activations a layer recomputes in its backward pass instead of keeping them. */
enum orr_recompute {
	ORR_RECOMPUTE_NONE,
	ORR_RECOMPUTE_SELECTIVE, /* the attention core: its scores are not kept */
	ORR_RECOMPUTE_FULL,      /* the whole layer: only its input is kept */
	ORR_RECOMPUTE_COUNT
};

/* "none", "selective", "full"; NULL out of range. */
const char *orr_recompute_name(enum orr_recompute r);

/*
 * A Megatron-style training configuration: the model (every dimension the whole
 * model's) and its layout.  kv_groups 0 means one per head (no grouped-query
 * attention); vpp 1 means a pipeline without interleaving.
 */
struct orr_train_config {
	int64_t layers, hidden, heads, kv_groups, ffn, vocab, seq;
	int64_t micro_batch;   /* sequences per micro-batch */
	int64_t micro_batches; /* per step, per pipeline */
	int64_t tp, pp, dp, cp, vpp;
	/*
	 * An uneven pipeline split, Megatron-Core's --decoder-first-pipeline-num-layers and
	 * --decoder-last-pipeline-num-layers: the first and the last stage's layers, 0 as
	 * the others; the stages left share the layers left evenly.  Only with pp >= 2 and
	 * no interleaving (vpp 1), as Megatron-Core asserts (get_num_layers_to_build()).
	 */
	int64_t first_stage_layers, last_stage_layers;
	bool gated_mlp;             /* FC1 is 2f wide (SwiGLU) */
	bool sequence_parallel;     /* with tp: norms and dropouts split over the sequence */
	bool distributed_optimizer; /* fp32 optimizer state sharded over dp x cp ranks */
	/*
	 * ZeRO-3 / FSDP: weights, gradients and optimizer state all sharded over dp x cp
	 * ranks, each layer's weights all-gathered for its forward and backward passes and
	 * its gradients reduce-scattered after its backward pass (implies the above)
	 */
	bool fully_sharded;
	/* DP gradient buckets reduced during the last micro-batch's backward pass */
	bool overlap_grad_reduce;
	bool flash_attention;   /* attention scores never stored */
	bool untied_embeddings; /* the output layer has its own weights */
	bool rms_norm;          /* RMSNorm (a scale, no bias), not LayerNorm */
	bool rope;              /* rotary position embeddings applied to q and k */
	/*
	 * With tp > 1 and no sequence parallelism, each TP rank sends 1/tp of a stage's
	 * output and the receiver all-gathers it over TP (Megatron-LM before Megatron-Core
	 * and Megatron-DeepSpeed before its July 2023 rebase: --scatter-gather-tensors-in-pipeline,
	 * their default)
	 */
	bool scatter_gather_p2p;
	/*
	 * Megatron's timers synchronize the device when the forward and backward passes and
	 * the batch's loading start and stop (Megatron-DeepSpeed before its July 2023 rebase
	 * onto Megatron-LM, where every timer synchronizes; later ones with
	 * --timing-log-level 2)
	 */
	bool sync_timers;
	/*
	 * With full recompute, the device is synchronized when each checkpointed layer's
	 * forward pass and its backward pass (recompute included) start and end: DeepSpeed's
	 * activation checkpointing with synchronize_checkpoint_boundary (Megatron-DeepSpeed's
	 * --deepspeed-activation-checkpointing --synchronize-each-layer), one layer a checkpoint
	 */
	bool sync_layers;
	enum orr_recompute recompute;
	enum orr_dtype precision; /* BF16 or FP16 (mixed, fp32 master weights), FP32, or FP8
				     (Transformer Engine: FP8 GEMMs, BF16 weights) */
};

/*
 * Memory of the most loaded GPU in bytes, the first pipeline stage's (with an uneven
 * split, the most loaded stage's): weights,
 * gradients and Adam's state (model_bytes), the activations in flight, and a reserve
 * for what no formula holds (allocator fragmentation, workspaces, CUDA context, NCCL
 * buffers).
 */
struct orr_memory {
	double params;          /* on that GPU */
	double bytes_per_param; /* weights + gradients + optimizer state */
	double model_bytes; /* params x bytes_per_param (+ the layers gathered, fully sharded) */
	double activation_bytes;
	double reserve_bytes;  /* as given */
	double total_bytes;    /* model + activations + reserve */
	double capacity_bytes; /* the GPU's HBM; 0 when unknown */
	bool fits;             /* total <= capacity; true when the capacity is unknown */
	char why[192];         /* the numbers behind fits, and the capacity */
	int64_t stage;         /* the stage estimated: 0 unless the split is uneven */
};

/*
 * Estimates c's memory per GPU on gpu (may be NULL: capacity unknown) with
 * reserve_bytes set aside.  -EINVAL, with ret untouched, for a configuration Megatron
 * would refuse (a size below 1, a dimension a parallel size does not divide), a
 * precision other than BF16, FP16, FP8 and FP32, a recompute out of range, or a negative or
 * non-finite reserve.
 */
int orr_memory_estimate(const struct orr_train_config *c, const struct orr_gpu_spec *gpu,
			double reserve_bytes, struct orr_memory *ret);
/*
 * The transformer layers pipeline stage `stage` of c holds (all its virtual stages'):
 * layers / pp, or as an uneven split gives them; 0 for a stage out of range.  For a
 * configuration orr_memory_estimate() accepts.
 */
int64_t orr_train_stage_layers(const struct orr_train_config *c, int64_t stage);
/* Whether c splits its layers unevenly (first_stage_layers or last_stage_layers set). */
bool orr_train_uneven(const struct orr_train_config *c);
/*
 * Whether c's sync_layers acts: only checkpointed layers synchronize, so with full
 * recompute; without it the switch changes nothing (and is not reported as set).
 */
bool orr_train_syncs_layers(const struct orr_train_config *c);
/*
 * Whether Megatron accepts c's split of its layers over the pipeline stages: evenly,
 * layers % (pp x vpp); unevenly, pp >= 2, vpp 1, and the stages besides those given
 * sharing the layers left evenly, at least one each.
 */
bool orr_train_split_valid(const struct orr_train_config *c);

/* ---- what Megatron refuses (estimator/train-check.c) ---- */

/* The kind of check a configuration fails first (orrery whatif counts them). */
enum orr_train_flaw {
	ORR_TRAIN_VALID,
	ORR_TRAIN_SIZE,       /* a size below 1, a precision or recompute mode out of range */
	ORR_TRAIN_HEADS,      /* heads of unequal size, or TP splitting a head, group or FFN */
	ORR_TRAIN_LAYERS,     /* PP x VPP does not divide the layers, or the uneven split */
	ORR_TRAIN_SEQUENCE,   /* 2 x CP, or TP with sequence parallelism, does not divide it */
	ORR_TRAIN_INTERLEAVE, /* interleaved 1F1B: PP below 2, micro-batches not a multiple */
};

/*
 * The first of Megatron's checks c fails, in the order Megatron makes them, with its
 * reason in why[0..size) (may be NULL), e.g. "layers 30 is not divisible by pp 4";
 * ORR_TRAIN_VALID, why empty, when c passes them all.  Every estimate refuses what
 * fails.  orr_train_check_layout() makes the checks past the sizes: for a c whose
 * sizes are at least 1 (micro-batches may be 0).
 */
enum orr_train_flaw orr_train_check(const struct orr_train_config *c, char *why, size_t size);
enum orr_train_flaw orr_train_check_layout(const struct orr_train_config *c, char *why,
					   size_t size);
/*
 * Parameters of the whole model (every stage and shard), counted as Megatron counts
 * them (no biases, no position embeddings); NAN when orr_memory_estimate() would refuse c.
 */
double orr_train_params(const struct orr_train_config *c);
/*
 * The vocabulary v as Megatron pads it for tp (--make-vocab-size-divisible-by 128): the
 * next multiple of 128 x tp.
 */
int64_t orr_train_pad_vocab(int64_t v, int64_t tp);

/* ---- FLOPs of a step (estimator/flops.c; docs/estimator.md, "FLOPs, MFU and HFU") ---- */

/*
 * The model FLOPs of c's step, what MFU is measured against, as Megatron-LM's
 * num_floating_point_operations() counts them: every GEMM of the layers (GQA's narrower
 * K and V, a gated MLP's 2f-wide FC1) and of the logits (c's vocabulary, padded), and
 * the attention core at half for the causal mask; a forward pass, and a backward pass
 * of two.  Recomputation is never counted.
 */
double orr_train_model_flops(const struct orr_train_config *c, bool forward_only);
/*
 * The hardware FLOPs of c's step, what HFU is measured against (PaLM, appendix B): the
 * model FLOPs and the forward work recomputed, each layer's forward pass with full
 * recompute, the attention core with selective.  Equal to the model FLOPs without
 * recompute and forward only.
 */
double orr_train_hardware_flops(const struct orr_train_config *c, bool forward_only);

/* ---- a traced configuration, and GEMMs re-shaped for another (estimator/reshape.c) ---- */

/*
 * The configuration st (a rank's structure) recovered: its model and layout, cp and
 * vpp 1, BF16 (a structure does not say the precision; set it from the GEMMs' dtype).
 * -ENOENT when a value it needs is unknown, its name in *ret_missing (may be NULL).
 */
int orr_train_config_from_structure(const struct orr_structure *st, struct orr_train_config *ret,
				    const char **ret_missing);

/*
 * GEMM sample s of configuration `from`, labeled (orr_gemm_label()), as it would be in
 * configuration `to`: its weight's new K×N and the new tokens per micro-batch, placed as
 * its pass places them; attention's batch, sequence and head size; the operands' type
 * when the precision changes; FLOPs and bytes again; ns 0; family, op and the rest
 * kept.  -EINVAL for an unlabeled sample, a shape that is not its role's in `from`, or a
 * configuration orr_memory_estimate() refuses; -ENOTSUP for attention with context
 * parallelism.
 */
int orr_gemm_reshape(const struct orr_gemm_sample *s, const struct orr_train_config *from,
		     const struct orr_train_config *to, struct orr_gemm_sample *ret);

/* ---- re-timing a trace for another configuration (estimator/retime.c) ---- */

/* What orr_retime() did to a graph's GPU tasks. */
struct orr_retime {
	size_t gemms;               /* GEMMs re-shaped by role and re-timed ... */
	size_t gemms_modeled;       /* ... by the GEMM model (the others by their FLOPs) */
	size_t collectives;         /* TP and DP collectives re-timed ... */
	size_t collectives_modeled; /* ... by a collective model (the others by bandwidth) */
	size_t kernels;             /* other kernels scaled with the activation their op works on */
	size_t kept;                /* GPU tasks kept as measured, none of the above */
	/*
	 * Their GPU time summed over every rank, [0] measured and [1] re-timed: GEMMs by
	 * role (those that kept their time under ORR_GEMM_ROLE_UNKNOWN), TP and DP
	 * collectives, other kernels; and the time of every task kept.
	 */
	double gemm_ns[ORR_GEMM_ROLE_COUNT][2];
	double tp_ns[2], dp_ns[2], kernel_ns[2];
	double kept_ns;
	/*
	 * orr_retime_layers(): the layers' tasks stretched by L'/L, GPU and CPU (summed
	 * over ranks and steps), their time [0] measured and [1] stretched (a GPU task's
	 * re-timed too; a CPU task's with its gap), and the launches per layer, summed over
	 * the threads and passes they were found in.
	 */
	size_t layer_gpu_tasks, layer_cpu_tasks, layer_period;
	double layer_gpu_ns[2], layer_cpu_ns[2];
};

/* The models that re-time a graph; any may be NULL. */
struct orr_retime_models {
	const struct orr_gemm_model *gemm; /* NULL: GEMMs by their FLOPs */
	const struct orr_kern_model *kern; /* its launch floor bounds other kernels */
	/*
	 * Per collective kind and link class (enum orr_link), a model that is constrained
	 * (orr_coll_model.constrained); NULL: by bytes, bus factor and bandwidth.
	 */
	const struct orr_coll_model *coll[ORR_COLL_KIND_COUNT][ORR_LINK_NETWORK + 1];
	int gpus_per_node;      /* GPUs a node holds; 0: the hardware table's */
	double nic_bytes_per_s; /* network per GPU, bytes/s per direction; 0: the table's */
};

/*
 * Each task's factor on its measured duration (ret_factors, orr_graph_task_count()
 * of them, 1 where kept; orr_replay_options.task_factors takes them) for configuration
 * `to` of the job traced in g at `from`, whose structure is st (a rank's), re-timed with
 * models m (docs/estimator.md, "Re-timing a trace").  -ENOTSUP when `to` changes what
 * only a rewrite of the graph can (layers, pipeline, micro-batches per step, context
 * parallelism, recompute, gated MLP, precision, sequence parallelism, attention, untied
 * embeddings, how DP shares the state and reduces, TP or DP to or from 1), named in
 * *ret_why (may be NULL); -EINVAL for a configuration orr_memory_estimate() refuses.
 */
int orr_retime(const struct orr_graph *g, const struct orr_structure *st,
	       const struct orr_train_config *from, const struct orr_train_config *to,
	       const struct orr_retime_models *m, float *ret_factors, struct orr_retime *ret,
	       const char **ret_why);

/*
 * What of `to` only a rewrite of the graph can change from `from` (orr_retime()'s
 * -ENOTSUP), named; NULL when nothing, a change of layers included (orr_retime_layers()
 * may still refuse that one): the check alone, without a graph.
 */
const char *orr_retime_structural(const struct orr_train_config *from,
				  const struct orr_train_config *to);

/*
 * orr_retime() for a `to` that may also change the layers of a step without pipeline
 * stages (docs/estimator.md, "Another number of layers"): in each pass (forward,
 * backward) of each rank, a thread's launches that repeat from->layers times in a step
 * are the layers; their GPU tasks get a further factor L'/L in ret_factors, and the
 * calls of the thread from a run's first launch to its last get L'/L in ret_cpu
 * (orr_graph_task_count(), 1 elsewhere; orr_replay_options.cpu_factors takes them),
 * counted in ret.  -ENOENT, naming the pass in *ret_why, when a pass with launches
 * has no thread whose launches repeat once a layer (or the trace has one layer);
 * orr_retime()'s errors otherwise (a pipeline is -ENOTSUP).
 */
int orr_retime_layers(const struct orr_graph *g, const struct orr_structure *st,
		      const struct orr_train_config *from, const struct orr_train_config *to,
		      const struct orr_retime_models *m, float *ret_factors, float *ret_cpu,
		      struct orr_retime *ret, const char **ret_why);

/*
 * The traced host timeline without the profiler (estimator/retime-host.c): each CPU
 * task's factor in cpu (orr_graph_task_count() of them, as orr_retime_layers() gives
 * them, or all 1) multiplied by the share of its time (its gap and duration) left
 * once what c says the profiler added to the ops and calls since the thread's previous
 * task is taken out.  Returns that time, summed over the graph (ns; 0 when c gives
 * none).
 */
double orr_retime_unprofile(const struct orr_graph *g, const struct orr_prof_cost *c, float *cpu);

/* ---- pipeline schedules (estimator/schedule.c; docs/estimator.md, "Pipeline schedules") ---- */

/* A pipeline pass: a micro-batch's forward or backward through one model chunk. */
enum orr_pp_pass { ORR_PP_PASS_FORWARD, ORR_PP_PASS_BACKWARD };

/* One pass a pipeline stage runs: of which micro-batch, through which of its chunks. */
struct orr_pp_slot {
	enum orr_pp_pass pass;
	uint32_t micro_batch;
	uint32_t chunk; /* model chunk, 0 when not interleaved */
};

/*
 * The order in which stage `stage` (0..p-1) of a p-stage pipeline runs the forward and
 * backward passes of m micro-batches over v model chunks (v == 1: 1F1B), as
 * Megatron-Core does.  *ret orr_xmalloc'ed (free()), *ret_n = 2·m·v slots.  -EINVAL:
 * p < 1, stage outside, m < 1, v < 1, v > 1 with p == 1 or m % p != 0 (Megatron's
 * requirement for the interleaved schedule with the default group size); -E2BIG past
 * 2^25 passes of each kind (p·m·v).
 */
int orr_pp_schedule(int p, int stage, int m, int v, struct orr_pp_slot **ret, size_t *ret_n);

/*
 * The step time of that schedule on uniform stages: every chunk's forward takes f_ns and
 * its backward b_ns on every stage, a stage-to-stage transfer p2p_ns.  A pass starts when
 * its stage has ended the pass before it and its input has arrived: the forward of
 * micro-batch j, chunk c on stage r after the forward of (j, c) on stage r-1, or of
 * (j, c-1) on stage p-1 when r = 0 and c > 0; the backward mirrored, the last chunk's
 * on the last stage after its own forward (no transfer).  Returns 0 and the makespan in
 * *ret_ns; the errors of orr_pp_schedule(), -EINVAL for a negative or non-finite time,
 * -EDEADLK if the schedule cannot finish (a bug).
 */
int orr_pp_simulate(int p, int m, int v, double f_ns, double b_ns, double p2p_ns, double *ret_ns);

/*
 * ---- a step from a model description (estimator/synth/; docs/estimator.md, "A step
 * from a model description") ----
 */

/* Where a synthesized step's times come from. */
struct orr_synth_costs {
	const struct orr_gpu_spec *gpu; /* required: its peaks bound every time */
	struct orr_retime_models m;     /* fitted models, any NULL; m.gpus_per_node 0: gpu's */
	/*
	 * Per collective kind and link class, a bus bandwidth measured on a trace, for
	 * where no constrained model is; 0: the hardware table's link.
	 */
	double bus_bytes_per_s[ORR_COLL_KIND_COUNT][ORR_LINK_NETWORK + 1];
	double cpu_op_ns; /* the launch thread's time per kernel it launches; 0: GPU-bound */
	bool gemm_tiles;  /* GEMMs by m.gemm's model of tiles and waves, where it has one */
};

/* How many of a synthesized step's GPU tasks took their time from where. */
struct orr_synth_sources {
	size_t gemm_fit;      /* a fitted class of the GEMM model */
	size_t gemm_roofline; /* the roofline x an efficiency measured on a trace */
	size_t gemm_memory;   /* batched, bound by memory: the tiles' bytes at a measured rate */
	size_t gemm_peak;     /* the hardware table's peak alone */
	size_t gemm_tiles;    /* the model of tiles and waves (gemm_tiles) */
	size_t kern_fit, kern_roofline, kern_peak;
	size_t coll_fit;      /* a constrained collective model */
	size_t coll_measured; /* a bus bandwidth measured on a trace */
	size_t coll_peak;     /* the hardware table's link */
};

/*
 * A synthesized step: Chrome/Kineto JSON of one rank per pipeline stage (the rank at
 * TP and DP position 0 of each: the others are the same by symmetry), with its launch
 * thread, compute stream and one NCCL stream per communicator, as a trace of that job
 * would have them; orr_trace_import_buffer() reads it.
 */
struct orr_synth {
	char *json;
	size_t len;
	size_t ranks, kernels, collectives, transfers; /* transfers: point-to-point, per side */
	struct orr_synth_sources sources;
	double placed_ns; /* the step as placed: the first launch to the last GPU end */
	/*
	 * The first stage's GPU time over [0, placed_ns] as placed, split as the replay's
	 * breakdown splits a rank's: compute alone, compute and communication at once,
	 * communication alone, and no GPU task running.
	 */
	double placed_compute_ns, placed_overlapped_ns, placed_comm_ns, placed_other_ns;
	/* The first stage's GPU time: GEMMs, other kernels, TP, DP and PP communication. */
	double gemm_ns, kern_ns, tp_ns, dp_ns, pp_ns;
	/*
	 * Its forward and backward passes (compute and the communication they wait for),
	 * a transfer between stages, and the bubble of the pipeline of such passes
	 * (orr_pp_simulate()'s makespan less the passes; 0 without pipelining).
	 */
	double forward_ns, backward_ns, transfer_ns, bubble_ns;
};

/*
 * Synthesizes one training step (forward passes only with forward_only) of
 * configuration c, Megatron-LM's way, timed by k.  -EINVAL for a configuration
 * orr_memory_estimate() refuses or k without a GPU; -ENOTSUP for what it does not
 * synthesize (named in *ret_why, may be NULL); -E2BIG past 2^24 instructions per rank.
 * Release with orr_synth_release().
 */
int orr_synth_step(const struct orr_train_config *c, bool forward_only,
		   const struct orr_synth_costs *k, struct orr_synth *ret, const char **ret_why);
void orr_synth_release(struct orr_synth *s);
/*
 * Memory one thread reuses from one synthesized step to the next (a sweep's threads
 * each hold one): orr_synth_time() takes its arrays and gives them back, larger.
 */
struct orr_synth_scratch;
struct orr_synth_scratch *orr_synth_scratch_new(void);
void orr_synth_scratch_free(struct orr_synth_scratch *s);
/*
 * The same step placed on its timeline by the rules the replay follows (DESIGN.md,
 * "Replay semantics"), and not written as a trace: json NULL, every other field set.
 * A sweep's evaluation (what-if/): milliseconds where importing and replaying the
 * written trace takes seconds.  scratch (may be NULL) is one thread's at a time.
 * Errors as orr_synth_step()'s.
 */
int orr_synth_time(const struct orr_train_config *c, bool forward_only,
		   const struct orr_synth_costs *k, struct orr_synth_scratch *scratch,
		   struct orr_synth *ret, const char **ret_why);

/*
 * ---- costs files: what `orrery fit -o` writes, read back (estimator/costs-read.cpp;
 * docs/orrery-fit.md, "Reading it back") ----
 */

#define ORR_COSTS_VERSION   1            /* the orrery_costs this reads */
#define ORR_COSTS_MAX_BYTES (256u << 20) /* larger files are refused */

/* The collectives of one kind and link class, and their model (cli/fit.h's). */
struct orr_coll_costs {
	enum orr_coll_kind kind;
	enum orr_link link;
	size_t samples, coupled, sized_by_caller, sizes, group_sizes;
	bool from_alone; /* no coupled sample: fitted on times that include waiting */
	bool fitted;     /* false: m has no band and predicts nothing */
	struct orr_coll_model m;
	/* What was measured (medians), and the hardware table's link: NAN when unknown. */
	double median_bytes, median_ns, measured_bus_bytes_per_s, spec_bytes_per_s;
	int group; /* the median group size */
};

/*
 * A costs file in memory: the fitted models as orr_gemm_model_fit(),
 * orr_kern_model_fit() and orr_coll_model_fit() made them, so that their _time()
 * functions predict as they did, bit for bit.  Not carried: the models' per-shape and
 * per-size leave-out tables (gemm.shapes, kern.sizes: none), the communicators'
 * counts by what they carry.  Strings (trace, device, communicator names) belong to
 * the costs.
 */
struct orr_costs {
	int version;
	const char *trace;              /* as fit was given it */
	int32_t rank;                   /* whose structure follows */
	const char *device;             /* as the trace names it; NULL when unknown */
	const struct orr_gpu_spec *gpu; /* device.spec; NULL when unknown */
	struct orr_structure st;
	struct orr_overlap overlap;    /* slowdown 0 when no name was compared */
	double launch_step_ns;         /* the launch threads' time per step; NAN unknown */
	double launch_profiler_ns;     /* of it, the profiler's; NAN: the file does not say */
	double launch_stall_ns;        /* of it, the threads' stalls; NAN: the file does not say */
	bool gemm_fitted, kern_fitted; /* false: that model is empty */
	struct orr_gemm_model gemm;
	struct orr_kern_model kern;
	struct orr_coll_costs *coll;
	size_t ncoll;
	struct orr_strtab *strings; /* private: owns the strings above */
};

/*
 * Reads the costs file at path into *ret (orr_costs_release() frees it).  Errors, with
 * the reason and the key (e.g. "gemm.classes[2].fit.coef[1]") in reterr_diag:
 * -errno when it cannot be read, -EINVAL when it is not a regular file, ORR_ETOOBIG
 * past ORR_COSTS_MAX_BYTES, ORR_EEMPTY when empty, ORR_ETRUNCATED when the JSON ends
 * early, ORR_EMALFORMED when it is not JSON, or a key is missing, of another type or
 * out of range (null where a number is required, a name of a dtype, class, kind or
 * GPU this orrery does not know), ORR_EFORMAT when it is no costs file or of another
 * version, -ENOMEM when memory to parse or check it is refused.  *ret is set only on
 * success.
 */
int orr_costs_read(const char *path, struct orr_costs *ret, struct orr_diag *reterr_diag);
/* The same from len bytes at buf, named name in messages. */
int orr_costs_read_buffer(const char *name, const char *buf, size_t len, struct orr_costs *ret,
			  struct orr_diag *reterr_diag);
void orr_costs_release(struct orr_costs *c);

#ifdef __cplusplus
}
#endif

#endif /* ORRERY_ESTIMATE_H */
