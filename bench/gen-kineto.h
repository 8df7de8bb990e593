/* SPDX-License-Identifier: MIT */
/*
 * bench/gen-kineto.h — what the files of gen-kineto share.  The workload it simulates:
 * the launch APIs, the kernels (with the long templated names of real H100 traces) and
 * the ops of a Llama-style decoder layer, forward, backward and optimizer (data in
 * gen-kineto-workload.c).  The generator's state, the simulation that drives it
 * (gen-kineto-sim.c) and the event writers that format its JSON (gen-kineto-emit.c).
 */
#ifndef ORRERY_BENCH_GEN_KINETO_H
#define ORRERY_BENCH_GEN_KINETO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- what runs: kernels, launch APIs, ops ---------------------------------------------- */

enum api {
	API_RT,
	API_EXC,
	API_DRV,
	API_NCCL,
	API_MEMCPY,
	API_MEMSET,
	API_RECORD,
	API_WAIT,
	API_SYNC,
	API_CAPTURING,
	API_OCCUPANCY
};

struct api_desc {
	const char *cat, *name;
	int cbid, mean_ns;
	bool flow; /* Kineto links it to its GPU-side event with an ac2g flow */
};

struct kernel {
	const char *name;
	int mean_us, api;
	int grid, block, regs, smem; /* 1-D grid and block; that is all the args need */
};

enum {
	K_GEMM_NVJET,
	K_GEMM_XMMA,
	K_GEMM_XMMA_NT,
	K_GEMM_CUTLASS3,
	K_FLASH_FWD,
	K_FLASH_BWD,
	K_RMSNORM,
	K_MUL,
	K_SILU,
	K_ADD,
	K_COPY,
	K_TRITON_POI,
	K_TRITON_RED,
	K_SUM,
	K_SOFTMAX,
	K_EMBED,
	K_FILL,
	K_ADAM_LERP,
	K_ADAM_ADDCMUL,
	K_ADAM_ADDCDIV,
	K_ALLREDUCE,
	K_ALLGATHER,
	N_KERNELS
};

struct op {
	const char *parent; /* the enclosing op, or NULL */
	const char *name;
	int kernel;
	const char *dims, *types; /* JSON text, or NULL for none */
};

/* Input Dims / Input type as PyTorch records them with record_shapes=True. */
#define BF16    "\"c10::BFloat16\""
#define T2_BF16 "[" BF16 ", " BF16 "]"
#define T3_BF16 "[" BF16 ", " BF16 ", \"Scalar\"]"
#define X_DIMS  "[2, 4096, 4096]"

extern const struct api_desc apis[];
extern const struct kernel kernels[N_KERNELS];
extern const struct op fwd_ops[], bwd_ops[], opt_ops[];
extern const size_t n_fwd_ops, n_bwd_ops, n_opt_ops;

/* ---- the generator: output, state, events -------------------------------------------- */

#define OUT_BUF_BYTES   (16u << 20)
#define GROUPS_PER_STEP 9000                  /* about 50 k events */
#define BASE_NS         1767189312000000000LL /* a 7,889,238 s boundary, as Kineto floors it */
#define T0_NS           5183870312457LL       /* the first event, ns after the base */
#define START_SKEW_NS   37511                 /* rank K starts K × this later */
#define LEAD_NS         41377 /* the profiler window opens this long before the first step */

enum { TH_MAIN, TH_BWD };
enum { ST_COMPUTE, ST_COPY, ST_NCCL, N_STREAMS };

struct out {
	int fd; /* -1: count bytes only */
	char *buf;
	size_t len;
	uint64_t flushed; /* bytes handed to write(2) (or counted) so far */
	int err;          /* first errno of a failed write */
};

struct gen {
	struct out *o;
	bool cpu_pass; /* this pass writes the CPU ops, the other one the CUPTI activity */
	bool first;    /* nothing written yet: no comma before the next event */
	uint64_t seed, rng;
	int rank, world;
	int64_t pid, tid[2];
	int64_t now[2];          /* each thread's clock, ns after the base */
	int64_t free[N_STREAMS]; /* when each stream is next idle */
	int64_t t_end;           /* the latest end of anything so far */
	uint64_t corr, ext, ev_idx, seq, coll_seq, event_id, events;
	char pg[8192]; /* the constant collective args: group size, name, ranks */
	size_t pg_len;
};

struct call {
	uint64_t corr, ext;
	int64_t ts, dur;
};

/* A CUDA event recorded on a stream: ready when the work before it is done. */
struct evrec {
	uint64_t corr, id;
	int stream;
	int64_t ready;
};

struct op_args {
	int64_t seq; /* Sequence number, or -1 */
	int fwd_tid;
	const char *dims, *types;
	const char *extra; /* more args, formatted, or NULL */
	size_t extra_len;
};

enum copy { COPY_H2D, COPY_D2H, COPY_D2D, COPY_SET };

/* The simulation (gen-kineto-sim.c).  gen_init() zeroes g; o stays the caller's. */
void gen_init(struct gen *g, struct out *o, uint64_t seed, int rank, int world);
/* A whole file of rank g->rank: groups launches and the like, flushed; counts g->events. */
void generate(struct gen *g, uint64_t groups, const char *trace_name);

/*
 * The writers (gen-kineto-emit.c): each event goes to g->o, after a comma unless it is
 * g->first, and counts in g->events.  Nothing fails: a write error stays in o->err.
 */
void kernels_init(void); /* once, before any emit_kernel() or emit_coll_kernel() */
void out_flush(struct out *o);
void coll_args_init(struct gen *g); /* g->pg, from g->world */
/* The file's opening, up to "traceEvents"; the process and thread names; the closing. */
void emit_header(struct gen *g);
void emit_metadata(struct gen *g);
void emit_trailer(struct gen *g, const char *trace_name);
void emit_op(struct gen *g, int th, const char *cat, const char *name, int64_t ts, int64_t dur,
	     uint64_t ext, const struct op_args *a);
/* A runtime or driver call, and the start of its flow if it has one. */
void emit_call(struct gen *g, int th, const struct api_desc *api, const struct call *c);
void emit_kernel(struct gen *g, int k, int st, int64_t ts, int64_t dur, const struct call *c);
void emit_copy(struct gen *g, enum copy kind, int st, int64_t ts, int64_t dur, const struct call *c,
	       uint64_t bytes);
/* The cuda_sync event of a wait (r) or a stream sync (r NULL). */
void emit_sync(struct gen *g, int st, const struct call *c, const struct evrec *r);
/* A collective's NCCL kernel (all-gather or all-reduce) on the NCCL stream. */
void emit_coll_kernel(struct gen *g, bool gather, uint64_t nelems, int64_t ts, int64_t dur,
		      const struct call *c);
/* Its record_param_comms op (t[0] to t[3]) and NCCL annotation (t[1] to t[2]). */
void emit_coll(struct gen *g, int th, bool gather, uint64_t nelems, const int64_t t[4],
	       uint64_t ext, uint64_t aext);

#endif
