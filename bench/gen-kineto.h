/* SPDX-License-Identifier: MIT */
/*
 * bench/gen-kineto.h — the workload gen-kineto simulates: the launch APIs, the kernels
 * (with the long templated names of real H100 traces) and the ops of a Llama-style
 * decoder layer, forward, backward and optimizer.  Data in gen-kineto-workload.c.
 */
#ifndef ORRERY_BENCH_GEN_KINETO_H
#define ORRERY_BENCH_GEN_KINETO_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
