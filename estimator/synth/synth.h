/* SPDX-License-Identifier: MIT */
/*
 * What the files of the step synthesizer share (docs/estimator.md, "A step from a model
 * description").  synth-program.c writes each pipeline stage's step as the instructions its
 * launch thread issues, timed by the cost models (synth-cost.c); synth-place.c puts every
 * instruction on a timeline as CUDA and NCCL would run it; synth-emit.c writes the result
 * as a trace (Kineto's JSON, one rank per stage) for the import, graph and replay that
 * every trace goes through.
 */
#ifndef ORRERY_ESTIMATOR_SYNTH_H
#define ORRERY_ESTIMATOR_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

/* The streams of a synthesized GPU, as ProcessGroupNCCL gives each communicator its own. */
enum sy_stream {
	SY_COMPUTE,
	SY_TP,        /* the tensor-parallel group's NCCL stream */
	SY_DP,        /* the data-parallel group's (and the optimizer's small reductions) */
	SY_CP,        /* the context-parallel ring's exchanges of keys and values */
	SY_SEND_NEXT, /* point-to-point, one communicator per pair and direction: */
	SY_RECV_PREV, /* activations to the next stage, from the previous one */
	SY_SEND_PREV, /* gradients to the previous stage, */
	SY_RECV_NEXT, /* from the next one */
	SY_STREAMS
};

enum sy_op {
	SY_KERNEL, /* a kernel (a GEMM, any other kernel) */
	SY_COLL,   /* an NCCL kernel */
	SY_WAIT,   /* cudaEventRecord on src, cudaStreamWaitEvent on stream */
	SY_SYNC,   /* cudaDeviceSynchronize: the thread waits for all its GPU work */
	SY_RECORD, /* cudaEventRecord on stream, for a later SY_WAIT to wait for */
};

/* Point-to-point channels, per stage: what the transfer carries and where it goes. */
enum sy_chan { SY_CHAN_ACT, SY_CHAN_GRAD };

struct sy_insn {
	uint8_t op;     /* enum sy_op */
	uint8_t stream; /* where it runs; SY_WAIT: the stream that waits */
	uint8_t src;    /* SY_WAIT: the stream waited for */
	bool gemm;      /* SY_KERNEL: a GEMM */
	uint32_t rec;   /* SY_WAIT: the SY_RECORD it waits for; UINT32_MAX: records now */
	int32_t peer;   /* SY_COLL point-to-point: the other stage; -1 */
	/*
	 * Point-to-point: the other side's instruction, once paired; the pair's sequence
	 * number in its communicator is the receive's index (orr__sy_p2p_seq()).
	 */
	uint32_t partner;
	double ns; /* on the GPU */
	/*
	 * The timeline (synth-place.c): the launch call's end (it starts where the call
	 * before it ended: the thread issues them back to back), the GPU's.  48 bytes in
	 * all: a step's instructions are written, then read as they are placed, hundreds of
	 * thousands of them (tens of megabytes, each read from memory), and what only the
	 * trace written reads is kept apart (struct sy_label).
	 */
	int64_t cpu_end_ns, start_ns, end_ns;
};
_Static_assert(sizeof(struct sy_insn) <= 48, "a step's instructions are read from memory");

/*
 * What only a step written as a trace reads of an instruction (orr__sy_emit()): kept
 * beside it (sy_rank.l, the same index) only then; a sweep's steps never write it.
 */
struct sy_label {
	const char *name;
	double bytes; /* SY_COLL: the whole buffer S, nccl-tests' size */
	int32_t group;
	int8_t coll; /* SY_COLL: enum orr_coll_kind */
};

/*
 * A pass a stage runs again and again (a layer's forward or backward pass: the same
 * kernels, collectives and waits, the same costs, at every layer and micro-batch), as
 * it first wrote it: its instructions r->v[at, at + n), and what writing them added to
 * the job's counts.
 */
struct sy_again {
	size_t at, n;
	size_t q[SY_STREAMS], qn[SY_STREAMS]; /* its entries of each queue, r->q[s].at[q, q + qn) */
	uint32_t last[SY_STREAMS]; /* each stream's last task after it (UINT32_MAX: none in it) */
	double ns_sum;             /* its tasks' times */
	size_t kernels, collectives;
	struct orr_synth_sources sources;
	bool ok; /* written, without error, and copyable: no records, no transfers */
};

enum sy_pass_kind { SY_AGAIN_LAYER_FWD, SY_AGAIN_LAYER_BWD, SY_AGAINS };

/* A stream's instructions (indices into its stage's), in launch order. */
struct sy_queue {
	uint32_t *at;
	size_t n, cap;
};

/*
 * One pipeline stage: the representative rank of its (TP, DP) position 0.  What its
 * placement needs besides the instructions is kept as they are written, not found by
 * passes over them after (a step's instructions are tens of megabytes, each pass a read
 * from memory): each stream's queue, and each stream's last kernel or collective, the
 * producer an event recorded or waited for now names.
 */
struct sy_rank {
	int stage;
	int64_t rank; /* global: stage x tp x dp */
	struct sy_insn *v;
	size_t n, cap;
	struct sy_label *l; /* with j->labelled: v's labels */
	size_t lcap;
	struct sy_queue q[SY_STREAMS]; /* neither device synchronizations nor records */
	uint32_t last[SY_STREAMS];     /* UINT32_MAX: none yet */
	struct sy_again again[SY_AGAINS];
};

struct sy_job {
	const struct orr_train_config *c;
	const struct orr_synth_costs *k;
	bool forward_only;
	enum orr_dtype dtype; /* of activations and communication (BF16 with FP8) */
	int elem_bytes;
	enum orr_dtype gemm_dtype; /* of the GEMMs' operands: FP8 with FP8 */
	int gemm_elem_bytes;
	int gpus_per_node;
	struct sy_rank *ranks; /* pp of them */
	size_t nranks;
	size_t insns;          /* written in all its stages */
	size_t max_insns;      /* SY_MAX_JOB_INSNS, or SY_MAX_WRITTEN_INSNS */
	const char *too_many;  /* the reason past max_insns */
	struct orr_synth *ret; /* its counts and sums */
	int err;               /* -E2BIG, -ENOTSUP: the step is refused ... */
	const char *why;       /* ... for this reason */
	/*
	 * The tasks' times as written (orr__sy_timed()), for times_bounded() to check
	 * without reading them again: their sum in the order written, and whether one is
	 * not a time.
	 */
	double ns_sum;
	bool ns_bad;
	/* The reference node's network as nccl_net_ns() models it (orr__sy_net_init()) */
	struct {
		double channel_gbps;
		bool hopper, amd_cpu;
	} net;
	bool labelled;        /* the step is written: its instructions' labels kept */
	struct sy_label sink; /* else their labels are written here, and never read */
};

/* ---- synth-cost.c ---- */
/* A GEMM of batch x (m x k . k x n) in the job's precision: its predicted ns. */
double orr__sy_gemm_ns(struct sy_job *j, int64_t batch, int64_t m, int64_t n, int64_t k);
/* A kernel of class cls moving bytes (and flops, attention's): its predicted ns. */
double orr__sy_kern_ns(struct sy_job *j, enum orr_kern_class cls, double bytes, double flops);
/* Where a group's ranks are: its link class, and how many of them share a node. */
struct sy_span {
	enum orr_link link;
	int per_node; /* members on the first member's node */
};

/* The group of n ranks first, first + stride, ... */
struct sy_span orr__sy_span(const struct sy_job *j, int64_t first, int64_t stride, int64_t n);
/* j->net from the GPU and the network: once a job, not once a collective. */
void orr__sy_net_init(struct sy_job *j);
/* A collective of kind over group ranks placed as sp, S = bytes: its predicted ns. */
double orr__sy_coll_ns(struct sy_job *j, enum orr_coll_kind kind, double bytes, int group,
		       struct sy_span sp);

/* ---- synth-insn.c: the instructions of a stage ---- */

/* What a stage's passes know of the configuration, per TP rank. */
struct sy_pass {
	struct sy_job *j;
	struct sy_rank *r;
	double T, Tn;        /* tokens of a micro-batch; of norms and dropouts (T / t with SP) */
	double e;            /* bytes per element */
	double h, d, al, gl; /* hidden, head dim, heads and KV groups per TP rank */
	double fl;           /* FFN per TP rank */
	double sq, sk;       /* query and key lengths per CP rank: s / cp, s */
	double vl;           /* vocabulary per TP rank */
	int tp;
	bool sp;
	bool p2p_pending;     /* transfers launched that the thread has not synchronized yet */
	double grads_pending; /* --overlap-grad-reduce: parameters ready, not yet reduced */
};

void orr__sy_pass_init(struct sy_pass *p, struct sy_job *j, struct sy_rank *r);
/*
 * The most instructions a stage may have, and a job in all its stages (48 bytes each,
 * 0.8 GB); a job that is written as a trace and replayed (orr_synth_step(): about
 * 0.75 KB and 5 us each through the import, the graph and the replay), 2^22 (3 GB):
 * docs/limits.md.
 */
#define SY_MAX_INSNS         (1u << 24)
#define SY_MAX_JOB_INSNS     (1u << 24)
#define SY_MAX_WRITTEN_INSNS (1u << 22)

/* A stage with no instructions yet (its arrays kept); its arrays freed. */
void orr__sy_rank_init(struct sy_rank *r, int stage, int64_t rank);
void orr__sy_rank_release(struct sy_rank *r);
/*
 * A new instruction of stage p->r, zeroed but for op and stream (and unplaced: its
 * times -1), queued on its stream; NULL (and j->err set) past SY_MAX_INSNS in the stage
 * or j->max_insns in the job.
 */
struct sy_insn *orr__sy_push(struct sy_pass *p, enum sy_op op, enum sy_stream stream);
/* The label of instruction i of stage p->r (j->sink without j->labelled). */
struct sy_label *orr__sy_label(struct sy_pass *p, const struct sy_insn *i);
/* Instruction i takes ns on the GPU: set, and counted in j->ns_sum or j->ns_bad. */
void orr__sy_timed(struct sy_job *j, struct sy_insn *i, double ns);
/*
 * pass(p), which writes the same instructions every time on a stage: written the first
 * time, copied from there after (with what writing them adds to the job's counts and
 * sums, in the same order); written again where a copy would pass a limit, so that the
 * error is the same.
 */
void orr__sy_again(struct sy_pass *p, enum sy_pass_kind kind, void (*pass)(struct sy_pass *p));
/* Stream waits for what was launched on src so far. */
void orr__sy_wait_for(struct sy_pass *p, enum sy_stream stream, enum sy_stream src);
/* An event recorded on stream now, for orr__sy_wait_record(); its index (or UINT32_MAX). */
uint32_t orr__sy_record(struct sy_pass *p, enum sy_stream stream);
/* Stream waits for what was on the recorded stream when rec was recorded. */
void orr__sy_wait_record(struct sy_pass *p, enum sy_stream stream, uint32_t rec);
void orr__sy_device_sync(struct sy_pass *p);
/* With sync_timers, a timer's start or stop: a device synchronization; else nothing. */
void orr__sy_timer_sync(struct sy_pass *p);
/* With sync_layers and full recompute, a checkpointed layer's pass starts or ends: a
 * device synchronization; else nothing. */
void orr__sy_layer_sync(struct sy_pass *p);
/* A GEMM of batch x (m x k . k x n); another kernel of class cls moving bytes. */
void orr__sy_gemm(struct sy_pass *p, const char *name, double batch, double m, double n, double k);
void orr__sy_kern(struct sy_pass *p, const char *name, enum orr_kern_class cls, double bytes,
		  double flops);
/* A collective of kind on stream's communicator, S = bytes over group ranks placed as sp. */
struct sy_insn *orr__sy_coll_on(struct sy_pass *p, enum sy_stream stream, enum orr_coll_kind kind,
				const char *name, double bytes, int group, struct sy_span sp);
/* The same between waits: the compute stream before it, and for it after. */
void orr__sy_blocking_coll(struct sy_pass *p, enum sy_stream stream, enum orr_coll_kind kind,
			   const char *name, double bytes, int group, struct sy_span sp);
/* Over the TP group, blocking (nothing without TP). */
void orr__sy_tp_coll(struct sy_pass *p, enum orr_coll_kind kind, const char *name, double bytes);
/* A row-parallel GEMM's output reduced (forward), a column-parallel one's input gradient. */
void orr__sy_tp_reduce(struct sy_pass *p);
/* With sequence parallelism, the all-gather of a layer's input. */
void orr__sy_sp_gather(struct sy_pass *p);
/* Context parallelism's ring exchanges beside attention (times: 2 backward); its join. */
void orr__sy_cp_ring(struct sy_pass *p, double times);
void orr__sy_cp_join(struct sy_pass *p);
/* QKV's and FC1's output width per TP rank; a layer's parameters per TP rank. */
double orr__sy_qkv_n(const struct sy_pass *p);
double orr__sy_fc1_n(const struct sy_pass *p);
double orr__sy_layer_params(const struct sy_pass *p);
/* Bytes per gradient element as Megatron reduces them: fp32 with bf16. */
double orr__sy_grad_bytes(const struct sy_pass *p);
/* The data-parallel group: dp x cp ranks, tp apart. */
int orr__sy_dp_of(const struct sy_pass *p);
struct sy_span orr__sy_dp_span(const struct sy_pass *p);

/* ---- synth-layer.c: a transformer's passes ---- */

void orr__sy_layer_fwd(struct sy_pass *p);
void orr__sy_layer_bwd(struct sy_pass *p); /* with full recompute, the forward pass first */
/* Megatron's get_batch: the sizes read back (a sync), tokens broadcast, masks built. */
void orr__sy_get_batch(struct sy_pass *p);
void orr__sy_embedding_fwd(struct sy_pass *p);
void orr__sy_embedding_bwd(struct sy_pass *p);
void orr__sy_head_fwd(struct sy_pass *p); /* final norm, logits, cross-entropy */
void orr__sy_head_bwd(struct sy_pass *p);

/* ---- synth-program.c ---- */
/*
 * Refuses, before anything is written, a job whose instructions would pass
 * SY_MAX_INSNS in a stage or SY_MAX_JOB_INSNS in all (a lower bound of their count
 * from the configuration: its layers, micro-batches and buckets): 0, or -E2BIG with
 * the reason in *ret_why.  What passes it writes at most a bounded multiple of the
 * limit, so the synthesis ends in bounded time and memory.
 */
int orr__sy_bound(struct sy_job *j, const char **ret_why);
/* Writes every stage's instructions.  0, or -ENOTSUP with the reason in *ret_why. */
int orr__sy_program(struct sy_job *j, const char **ret_why);

/* ---- synth-place.c ---- */
/* Pairs point-to-point instructions and times everything.  0 or -EDEADLK (a bug). */
int orr__sy_place(struct sy_job *j);
/* Instruction i of r, placed: when its launch call started (the call before it ended). */
int64_t orr__sy_cpu_start_ns(const struct sy_rank *r, size_t i);
/* Placed point-to-point instruction i of r: its pair's sequence number (the receive's index). */
int64_t orr__sy_p2p_seq(const struct sy_rank *r, size_t i);

/* ---- synth-busy.c ---- */
/* The first stage's placed GPU time split as a breakdown: j->ret->placed_*_ns. */
void orr__sy_busy(const struct sy_job *j);

/* ---- synth-emit.c ---- */
/* The Kineto JSON of the placed job, orr_xmalloc'ed, *ret_len bytes. */
char *orr__sy_emit(const struct sy_job *j, size_t *ret_len);

#endif
