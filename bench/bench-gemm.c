/* SPDX-License-Identifier: MIT */
/*
 * bench-gemm: every GEMM sample of each TRACE (orr_gemm_observe()), leave one shape out
 * under the GEMM models a synthesized step can use (bench/gemm-tiles.sh drives it).
 *
 *   bench-gemm [--samples] TRACE...
 *
 * For each trace whose GEMMs record shapes on a GPU of the hardware table, each distinct
 * (math, batch, M, N, K) is predicted by a model built without any sample of it:
 *   roofline  the roofline x the median efficiency of the other shapes' samples of its
 *             math (what the synthesizer uses without a kernel family);
 *   tiles     orr_gemm_tiles_fit() on the other shapes (tile and wave quantization,
 *             split-K, a fixed cost per kernel; docs/estimator.md, "Tiles and waves").
 * Prints one line per trace and model: shapes, mean, p90 and max of |predicted/measured
 * - 1| against the median of the shape's samples, and the mean signed error.  With
 * --samples, prints each shape instead (TSV: trace, gpu, math, batch, m, n, k,
 * samples, measured ns, roofline ns, tiles ns).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/estimator.h"
#include "orrery/graph.h"
#include "orrery/trace.h"
#include "banned.h"

/* One distinct shape: its samples' median time. */
struct shape {
	struct orr_gemm_sample s; /* the first sample, with ns the median */
	size_t samples;
	double roofline_ns, tiles_ns;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static bool same_shape(const struct orr_gemm_sample *a, const struct orr_gemm_sample *b)
{
	return a->math == b->math && a->batch == b->batch && a->m == b->m && a->n == b->n &&
	       a->k == b->k && a->elem_bytes == b->elem_bytes;
}

/* The distinct shapes of s[0..n), each with the median of its samples' times. */
static size_t shapes_of(const struct orr_gemm_sample *s, size_t n, struct shape **ret)
{
	struct shape *v = calloc(n ? n : 1, sizeof(*v));
	double *t = calloc(n ? n : 1, sizeof(*t));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	size_t k = 0;

	if (!v || !t || !done)
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t c = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] && same_shape(&s[i], &s[j])) {
				done[j] = true;
				t[c++] = s[j].ns;
			}
		qsort(t, c, sizeof(*t), cmp_double);
		v[k].s = s[i];
		v[k].s.ns = c % 2 ? t[c / 2] : (t[c / 2 - 1] + t[c / 2]) / 2;
		v[k++].samples = c;
	}
	free(t);
	free(done);
	*ret = v;
	return k;
}

/* The median of measured/roofline over the shapes of math `math` but `skip`. */
static double efficiency(const struct orr_gpu_spec *gpu, const struct shape *v, size_t n,
			 size_t skip)
{
	double *e = calloc(n ? n : 1, sizeof(*e)), m = NAN;
	size_t k = 0;

	if (!e)
		abort();
	for (size_t i = 0; i < n; i++)
		if (i != skip && v[i].s.math == v[skip].s.math)
			e[k++] = v[i].s.ns /
				 orr_gemm_roofline_ns(gpu, v[i].s.math, v[i].s.flops, v[i].s.bytes);
	if (k) {
		qsort(e, k, sizeof(*e), cmp_double);
		m = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
	}
	free(e);
	return m;
}

/* Each shape of v predicted by the tiles model fitted on the others. */
static void tiles_loso(const struct orr_gpu_spec *gpu, struct shape *v, size_t n)
{
	struct orr_gemm_sample *rest = calloc(n ? n : 1, sizeof(*rest));

	if (!rest)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct orr_gemm_tiles tm;
		size_t k = 0;

		for (size_t j = 0; j < n; j++)
			if (j != i)
				rest[k++] = v[j].s;
		v[i].tiles_ns = NAN;
		if (orr_gemm_tiles_fit(gpu, rest, k, &tm) == 0)
			v[i].tiles_ns = orr_gemm_tiles_time(&tm, &v[i].s);
	}
	free(rest);
}

static void report(const char *trace, const char *model, const struct shape *v, size_t n,
		   bool tiles)
{
	double *e = calloc(n ? n : 1, sizeof(*e)), sum = 0, bias = 0;
	size_t k = 0;

	if (!e)
		abort();
	for (size_t i = 0; i < n; i++) {
		double p = tiles ? v[i].tiles_ns : v[i].roofline_ns, x;

		if (!(p > 0))
			continue;
		x = p / v[i].s.ns - 1;
		bias += x;
		e[k++] = fabs(x);
		sum += fabs(x);
	}
	qsort(e, k, sizeof(*e), cmp_double);
	if (k) {
		size_t p90 = (size_t)ceil(0.9 * (double)k);

		printf("%s\t%s\t%zu\t%.2f\t%.2f\t%.2f\t%+.2f\n", trace, model, k,
		       100 * sum / (double)k, 100 * e[p90 - 1], 100 * e[k - 1],
		       100 * bias / (double)k);
	}
	free(e);
}

/* The tiles model fitted on every sample of the trace, per math. */
static void fitted(const char *trace, const struct orr_gpu_spec *gpu,
		   const struct orr_gemm_sample *s, size_t n)
{
	struct orr_gemm_tiles tm;

	if (orr_gemm_tiles_fit(gpu, s, n, &tm))
		return;
	for (int d = 0; d < ORR_DTYPE_COUNT; d++)
		if (tm.samples[d])
			fprintf(stderr,
				"%s: %s: tiles fit on %zu samples: %.0f ns + %.4f x quantized\n",
				trace, orr_dtype_name(d), tm.samples[d], tm.fixed_ns[d],
				tm.ns_per_ns[d]);
}

static int one_trace(const char *path, bool samples)
{
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_gemm_sample *s = NULL;
	struct orr_gemm_counts c;
	struct shape *v = NULL;
	const struct orr_gpu_spec *gpu;
	struct orr_diag d;
	size_t n, nv;
	char buf[512];
	int err = orr_trace_import(path, NULL, &t, &d);

	if (err || (err = orr_graph_build(t, NULL, &g, &d))) {
		fprintf(stderr, "bench-gemm: %s\n", orr_diag_format(&d, err, buf, sizeof(buf)));
		goto out;
	}
	gpu = orr_gpu_spec_find(g);
	n = orr_gemm_observe(g, &s, &c);
	if (!gpu || n == 0)
		goto out; /* no roofline, or no GEMM with shapes: nothing to predict */
	nv = shapes_of(s, n, &v);
	for (size_t i = 0; i < nv; i++)
		v[i].roofline_ns =
			orr_gemm_roofline_ns(gpu, v[i].s.math, v[i].s.flops, v[i].s.bytes) *
			efficiency(gpu, v, nv, i);
	tiles_loso(gpu, v, nv);
	if (samples)
		for (size_t i = 0; i < nv; i++)
			printf("%s\t%s\t%s\t%lld\t%lld\t%lld\t%lld\t%zu\t%.0f\t%.0f\t%.0f\n", path,
			       gpu->id, orr_dtype_name(v[i].s.math), (long long)v[i].s.batch,
			       (long long)v[i].s.m, (long long)v[i].s.n, (long long)v[i].s.k,
			       v[i].samples, v[i].s.ns, v[i].roofline_ns, v[i].tiles_ns);
	else {
		report(path, "roofline", v, nv, false);
		report(path, "tiles", v, nv, true);
		fitted(path, gpu, s, n);
	}
out:
	free(v);
	free(s);
	orr_graph_free(g);
	orr_trace_free(t);
	return err;
}

int main(int argc, char **argv)
{
	bool samples = false;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--samples") == 0) {
			samples = true;
			continue;
		}
		if (one_trace(argv[i], samples))
			rc = 1;
	}
	return rc;
}
