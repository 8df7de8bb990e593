/* SPDX-License-Identifier: MIT */
/*
 * The GEMM model of tiles and waves (docs/estimator.md, "Tiles and waves").  cuBLAS and
 * CUTLASS split C = A·B into output tiles, one CTA each; the CTAs run in waves of as
 * many as the SMs hold at once, so a GEMM of one tile more than a full wave takes a
 * whole wave more, and a GEMM of fewer tiles than SMs leaves SMs idle unless the
 * library splits K over more CTAs (split-K: the slices' fp32 partial sums written and
 * reduced).  A small GEMM is bound by the bytes it moves instead.  Of the tiles the
 * libraries have, the model takes the one its cost says is fastest, as their
 * heuristics try to.
 *
 * Fitted per math dtype on a trace's GEMMs: t = a + b·Q, Q the quantized time at the
 * GPU's peaks, a the fixed cost of a kernel (its launch on the GPU, the pipeline's
 * fill before the first MMA, the last tile's epilogue), b the inverse of the fraction
 * of the peak a full wave reaches.  a is at least 0 (a negative intercept is a fit
 * that extrapolates to no time): where the fit gives less, b is the median of t/Q.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/*
 * The output tiles of cuBLAS's and CUTLASS's tensor-core GEMMs on Ampere and Hopper
 * (their kernel names: ampere_fp16_s16816gemm_fp16_256x128_..., _128x128_, _128x64_,
 * _64x64_; cutlass_80_tensorop_..._64x64_32x6_...; nvjet_tst_128x256_...).
 */
static const struct tile {
	int m, n;
} tiles[] = {
	{ 256, 128 }, { 128, 256 }, { 128, 128 }, { 128, 64 }, { 64, 128 }, { 64, 64 },
};

/* The smallest K slice split-K makes: a few iterations of a 32-deep main loop. */
#define SPLIT_K_MIN 128
/* The depth of one main-loop iteration, stream-K's unit of work. */
#define K_STEP 32

static double ceil_div(double a, double b)
{
	return ceil(a / b);
}

/* What one way of cutting a GEMM moves and how long its most loaded SM computes. */
struct cut {
	double mma_ns, bytes;
};

static double cut_ns(const struct orr_gpu_spec *gpu, struct cut c)
{
	return fmax(c.mma_ns, gpu->hbm_bytes_per_s > 0 ? c.bytes / gpu->hbm_bytes_per_s * 1e9 : 0);
}

/*
 * Data-parallel tiles, split-K where they are fewer than the SMs.  The block scheduler
 * deals the CTAs to the SMs as they free up; the SMs' tensor cores are shared by the
 * CTAs resident on one, so however many CTAs an SM holds (its waves are SMs x CTAs per
 * SM), the most loaded SM computes ceil(CTAs / SMs) tiles: one tile more than a full
 * wave of SMs costs a whole tile's time more.
 */
static struct cut tile_cut(const struct orr_gpu_spec *gpu, const struct tile *t, double sm_flops,
			   double bytes, double batch, double m, double n, double k)
{
	double ctas = batch * ceil_div(m, t->m) * ceil_div(n, t->n), split = 1;

	if (ctas < gpu->sms && k >= 2 * SPLIT_K_MIN)
		split = fmin(floor(gpu->sms / ctas), floor(k / SPLIT_K_MIN));
	if (split > 1)
		bytes += 2.0 * 4.0 * split * batch * m * n; /* fp32 partials, written and read */
	return (struct cut){
		.mma_ns = ceil_div(ctas * split, gpu->sms) * 2.0 * t->m * t->n *
			  ceil_div(k, split) / sm_flops * 1e9,
		.bytes = bytes,
	};
}

/*
 * Stream-K (CUTLASS's, cuBLAS's since 11.8): every SM takes an equal share of the
 * tiles' main-loop iterations, so only the iteration quantizes; the tiles an SM
 * finishes in part are fixed up through fp32 partials in memory.
 */
static struct cut stream_k_cut(const struct orr_gpu_spec *gpu, const struct tile *t,
			       double sm_flops, double bytes, double batch, double m, double n,
			       double k)
{
	double iters = batch * ceil_div(m, t->m) * ceil_div(n, t->n) * ceil_div(k, K_STEP);

	return (struct cut){
		.mma_ns = ceil_div(iters, gpu->sms) * 2.0 * t->m * t->n * K_STEP / sm_flops * 1e9,
		.bytes = bytes + 2.0 * 4.0 * batch * m * n,
	};
}

double orr_gemm_tiles_quantized_ns(const struct orr_gpu_spec *gpu, enum orr_dtype math,
				   int elem_bytes, int64_t batch, int64_t m, int64_t n, int64_t k)
{
	double best = NAN;

	if (!gpu || gpu->sms <= 0 || (int)math < 0 || math >= ORR_DTYPE_COUNT ||
	    !(gpu->peak_flops[math] > 0) || batch <= 0 || m <= 0 || n <= 0 || k <= 0 ||
	    elem_bytes <= 0)
		return NAN;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		double sm_flops = gpu->peak_flops[math] / gpu->sms;
		double bytes =
			(double)elem_bytes * (double)batch *
			((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
		double t1 = cut_ns(gpu, tile_cut(gpu, &tiles[i], sm_flops, bytes, (double)batch,
						 (double)m, (double)n, (double)k));
		double t2 = cut_ns(gpu, stream_k_cut(gpu, &tiles[i], sm_flops, bytes, (double)batch,
						     (double)m, (double)n, (double)k));

		if (!(fmin(t1, t2) >= best))
			best = fmin(t1, t2);
	}
	return best;
}

/*
 * The bytes one tile's CTA loads and stores: its rows of A (tm x k, those that exist),
 * its columns of B, its part of C.  Over the grid A is read once per column of tiles and
 * B once per row of tiles, whatever of it L2 holds: a GEMM of a few main-loop
 * iterations (k, or a narrow output, the head dimension) cannot hide those loads behind
 * its MMAs, so it streams them through the SMs' load path at the rate its occupancy
 * keeps in flight.
 */
static double tile_traffic(const struct tile *t, double batch, double m, double n, double k)
{
	return batch * (m * k * ceil_div(n, t->n) + k * n * ceil_div(m, t->m) + m * n);
}

double orr_gemm_tile_traffic_bytes(int elem_bytes, int64_t batch, int64_t m, int64_t n, int64_t k)
{
	double best = NAN;

	if (elem_bytes <= 0 || batch <= 0 || m <= 0 || n <= 0 || k <= 0)
		return NAN;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		double b = (double)elem_bytes *
			   tile_traffic(&tiles[i], (double)batch, (double)m, (double)n, (double)k);

		if (!(b >= best))
			best = b;
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One sample of a math: its quantized time, measured time and shape. */
struct point {
	double q, ns;
	int64_t batch, m, n, k;
};

static bool same_shape(const struct point *a, const struct point *b)
{
	return a->batch == b->batch && a->m == b->m && a->n == b->n && a->k == b->k;
}

/* b of t = b·Q: the median of t/Q over v[0..n) but the shape of skip (NULL: none). */
static bool fit_ratio(const struct point *v, size_t n, const struct point *skip, double *r,
		      double *ret_b)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!skip || !same_shape(&v[i], skip))
			r[k++] = v[i].ns / v[i].q;
	if (!k)
		return false;
	qsort(r, k, sizeof(*r), cmp_double);
	*ret_b = k % 2 ? r[k / 2] : (r[k / 2 - 1] + r[k / 2]) / 2;
	return true;
}

/* a and b of t = a + b·Q, relative, a >= 0 and b > 0, over v but the shape of skip. */
static bool fit_line(const struct point *v, size_t n, const struct point *skip, double *x,
		     double *y, double *ret_a, double *ret_b)
{
	struct orr_fit f;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!skip || !same_shape(&v[i], skip)) {
			x[2 * k] = 1;
			x[2 * k + 1] = v[i].q;
			y[k++] = v[i].ns;
		}
	if (k < 2 || orr_fit_linear(x, y, k, 2, true, &f, NULL) || f.rank != 2 ||
	    !(f.coef[0] >= 0) || !(f.coef[1] > 0))
		return false;
	*ret_a = f.coef[0];
	*ret_b = f.coef[1];
	return true;
}

/*
 * The mean |predicted/measured - 1| of v's samples, each shape predicted by the form
 * (line: a + b·Q; else b·Q) fitted without it; INFINITY where a fit fails.
 */
static double loso(const struct point *v, size_t n, bool line, double *x, double *y)
{
	double sum = 0, a = 0, b;

	for (size_t i = 0; i < n; i++) {
		if (line ? !fit_line(v, n, &v[i], x, y, &a, &b) : !fit_ratio(v, n, &v[i], y, &b))
			return INFINITY;
		sum += fabs((a + b * v[i].q) / v[i].ns - 1);
	}
	return sum / (double)n;
}

/*
 * One math's a and b.  The fixed cost a is only fitted where the samples say what it
 * is: a trace of large GEMMs (every one many waves long) leaves it to extrapolation,
 * and the intercept of a line through them is no kernel's fixed cost.  So the line is
 * kept only where, each shape left out, it predicts the samples better than b alone.
 */
static void fit_math(const struct point *v, size_t n, double *ret_a, double *ret_b)
{
	double *x = orr_xmalloc((2 * n + 2) * sizeof(*x)), *y = orr_xmalloc((n + 1) * sizeof(*y));
	size_t shapes = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i && !same_shape(&v[j], &v[i]))
			j++;
		shapes += j == i;
	}
	*ret_a = 0;
	if (!(shapes >= 3 && loso(v, n, true, x, y) < loso(v, n, false, x, y) &&
	      fit_line(v, n, NULL, x, y, ret_a, ret_b)))
		fit_ratio(v, n, NULL, y, ret_b);
	free(x);
	free(y);
}

int orr_gemm_tiles_fit(const struct orr_gpu_spec *gpu, const struct orr_gemm_sample *s, size_t n,
		       struct orr_gemm_tiles *ret)
{
	struct orr_gemm_tiles m = { .gpu = gpu };
	struct point *v;
	bool any = false;

	if (!gpu || gpu->sms <= 0)
		return -EINVAL;
	v = orr_xmalloc((n + 1) * sizeof(*v));
	for (int t = 0; t < ORR_DTYPE_COUNT; t++) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			double q;

			if ((int)s[i].math != t || !(s[i].ns > 0))
				continue;
			q = orr_gemm_tiles_quantized_ns(gpu, s[i].math, s[i].elem_bytes, s[i].batch,
							s[i].m, s[i].n, s[i].k);
			if (q > 0)
				v[k++] = (struct point){ q,      s[i].ns, s[i].batch,
							 s[i].m, s[i].n,  s[i].k };
		}
		m.samples[t] = k;
		if (k) {
			fit_math(v, k, &m.fixed_ns[t], &m.ns_per_ns[t]);
			any = true;
		}
	}
	free(v);
	if (!any)
		return -ENODATA;
	*ret = m;
	return 0;
}

double orr_gemm_tiles_time(const struct orr_gemm_tiles *m, const struct orr_gemm_sample *q)
{
	double t;

	if (!m || (int)q->math < 0 || q->math >= ORR_DTYPE_COUNT || !m->samples[q->math])
		return NAN;
	t = orr_gemm_tiles_quantized_ns(m->gpu, q->math, q->elem_bytes, q->batch, q->m, q->n, q->k);
	return t > 0 ? m->fixed_ns[q->math] + m->ns_per_ns[q->math] * t : NAN;
}
