/* SPDX-License-Identifier: MIT */
/*
 * orrery/gemm-tiles.h — the GEMM model of tiles and waves (estimator/gemm-tiles.c;
 * docs/estimator.md, "Tiles and waves"): a GEMM's time from the output tiles cuBLAS and
 * CUTLASS cut it in and the waves the GPU's SMs run them in, fitted per math dtype
 * (struct orr_gemm_tiles, in orrery/estimator.h).  Part of the estimator's interface:
 * orrery/estimator.h includes it.
 */
#ifndef ORRERY_GEMM_TILES_H
#define ORRERY_GEMM_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The time at gpu's peaks of batch x (m x k . k x n) cut in the output tiles of cuBLAS
 * and CUTLASS, run in waves of gpu->sms x the CTAs an SM holds (split-K where the tiles
 * are fewer than the SMs), at least its bytes at HBM's rate; the fastest tile.  NAN
 * without the GPU's SMs or peak for math, or an empty shape.
 */
double orr_gemm_tiles_quantized_ns(const struct orr_gpu_spec *gpu, enum orr_dtype math,
				   int elem_bytes, int64_t batch, int64_t m, int64_t n, int64_t k);
/*
 * The bytes batch x (m x k . k x n) of elem_bytes elements moves through the SMs when
 * cut in the output tiles above: A read once per column of tiles, B once per row of
 * tiles, C written once; the tile that moves the fewest (a bandwidth-bound GEMM is
 * fastest with it).  NAN for an empty shape.
 */
double orr_gemm_tile_traffic_bytes(int elem_bytes, int64_t batch, int64_t m, int64_t n, int64_t k);
/*
 * Fits m on s[0..n) (their math, shape and ns): 0; -EINVAL without gpu or its SMs;
 * -ENODATA when no sample has a quantized time.
 */
int orr_gemm_tiles_fit(const struct orr_gpu_spec *gpu, const struct orr_gemm_sample *s, size_t n,
		       struct orr_gemm_tiles *ret);
/* Predicted ns of a GEMM like q (its math and shape); NAN where m has no fit of its math. */
double orr_gemm_tiles_time(const struct orr_gemm_tiles *m, const struct orr_gemm_sample *q);

#ifdef __cplusplus
}
#endif

#endif /* ORRERY_GEMM_TILES_H */
