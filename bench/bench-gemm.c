/* SPDX-License-Identifier: MIT */
/*
 * bench-gemm: every GEMM sample of each TRACE (orr_gemm_observe()), leave one shape out
 * under the GEMM models a synthesized step can use (bench/gemm-tiles.sh drives it).
 *
 *   bench-gemm [--samples | --kernels | --kernel-sizes | --memory] TRACE...
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
 * samples, measured ns, roofline ns, tiles ns).  With --kernels, the kernels other
 * than GEMMs that a synthesized step times by the kernel model's fallback instead
 * (kernels_trace() below): per trace and class, the same columns for max(floor,
 * roofline x e) and floor + roofline x e'.  With --kernel-sizes, every size of every
 * class of those kernels (TSV: trace, gpu, class, bytes, FLOPs, samples, median ns,
 * roofline ns), to see measured / roofline against the bytes.  With --memory, each
 * batched GEMM shape bound by memory left out (memory_trace() below).
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

/* ---- kernels other than GEMMs ---- */

/*
 * One size of one class of kernels (distinct bytes and FLOPs): its samples' median
 * time, its roofline, and the predictions.
 */
struct ksize {
	enum orr_kern_class cls;
	double bytes, flops, ns, roof, maxed, added;
	size_t samples;
};

/* The median of v[0..n) (sorted in place); NAN when n is 0. */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The distinct sizes of s[0..n) per class, each with the median time of its samples. */
static size_t ksizes_of(const struct orr_gpu_spec *gpu, const struct orr_kern_sample *s, size_t n,
			struct ksize **ret)
{
	struct ksize *v = calloc(n ? n : 1, sizeof(*v));
	double *t = calloc(n ? n : 1, sizeof(*t));
	bool *done = calloc(n ? n : 1, sizeof(*done));
	size_t k = 0;

	if (!v || !t || !done)
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t c = 0;

		if (done[i] || s[i].dtype == ORR_DTYPE_COUNT)
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] && s[j].cls == s[i].cls && s[j].bytes == s[i].bytes &&
			    s[j].flops == s[i].flops && s[j].dtype == s[i].dtype) {
				done[j] = true;
				t[c++] = s[j].ns;
			}
		v[k] = (struct ksize){ .cls = s[i].cls,
				       .bytes = s[i].bytes,
				       .flops = s[i].flops,
				       .ns = median(t, c),
				       .samples = c };
		v[k].roof = orr_gemm_roofline_ns(gpu, s[i].dtype, s[i].flops, s[i].bytes);
		if (v[k].roof > 0)
			k++;
	}
	free(t);
	free(done);
	*ret = v;
	return k;
}

/*
 * Each size of the classes a synthesized step times by the fallback (norm, softmax,
 * elementwise, attention) left out: max(floor, roofline x e), e the class's median of
 * measured / roofline over its other sizes with a roofline of at least the floor (the
 * kernel model's fallback), against floor + roofline x e', e' the median of (measured
 * - floor) / roofline over the same (a kernel's fixed cost, its launch on the GPU and
 * its tail, paid on top of moving its bytes).  floor: the median time of the sizes
 * whose roofline is under the shortest measured time.
 */
static void kernels_trace(const char *path, const struct orr_graph *g,
			  const struct orr_gpu_spec *gpu)
{
	static const enum orr_kern_class classes[] = { ORR_KERN_NORM, ORR_KERN_SOFTMAX,
						       ORR_KERN_ELEMENTWISE, ORR_KERN_ATTENTION };
	struct orr_kern_sample *s = NULL;
	struct orr_kern_counts c;
	struct ksize *v = NULL;
	size_t n = orr_kern_observe(g, &s, &c), nv = ksizes_of(gpu, s, n, &v);
	double shortest = INFINITY, floor_ns, *e = calloc(nv + 1, sizeof(*e));
	size_t k = 0;

	if (!e)
		abort();
	for (size_t i = 0; i < nv; i++)
		shortest = fmin(shortest, v[i].ns);
	for (size_t i = 0; i < nv; i++)
		if (v[i].roof < shortest)
			e[k++] = v[i].ns;
	floor_ns = k ? median(e, k) : 0;
	for (size_t ci = 0; ci < sizeof(classes) / sizeof(classes[0]); ci++) {
		double sum[2] = { 0 }, bias[2] = { 0 }, *err[2];
		size_t m = 0;

		err[0] = calloc(nv + 1, sizeof(double));
		err[1] = calloc(nv + 1, sizeof(double));
		if (!err[0] || !err[1])
			abort();
		for (size_t i = 0; i < nv; i++) {
			double em, ea, x[2];
			size_t a = 0, b = 0;
			double *r1 = calloc(nv + 1, sizeof(double)),
			       *r2 = calloc(nv + 1, sizeof(double));

			if (!r1 || !r2)
				abort();
			if (v[i].cls != classes[ci]) {
				free(r1);
				free(r2);
				continue;
			}
			for (size_t j = 0; j < nv; j++)
				if (j != i && v[j].cls == v[i].cls && v[j].roof >= floor_ns) {
					r1[a++] = v[j].ns / v[j].roof;
					if (v[j].ns > floor_ns)
						r2[b++] = (v[j].ns - floor_ns) / v[j].roof;
				}
			em = median(r1, a);
			ea = median(r2, b);
			free(r1);
			free(r2);
			if (!(em > 0) || !(ea > 0))
				continue;
			x[0] = fmax(floor_ns, v[i].roof * em) / v[i].ns - 1;
			x[1] = (floor_ns + v[i].roof * ea) / v[i].ns - 1;
			for (int w = 0; w < 2; w++) {
				err[w][m] = fabs(x[w]);
				sum[w] += fabs(x[w]);
				bias[w] += x[w];
			}
			m++;
		}
		for (int w = 0; m && w < 2; w++) {
			size_t p90 = (size_t)ceil(0.9 * (double)m);

			qsort(err[w], m, sizeof(double), cmp_double);
			printf("%s\t%s %s\t%zu\t%.2f\t%.2f\t%.2f\t%+.2f\n", path,
			       orr_kern_class_name(classes[ci]),
			       w ? "floor+roofline" : "max(floor,roofline)", m,
			       100 * sum[w] / (double)m, 100 * err[w][p90 - 1], 100 * err[w][m - 1],
			       100 * bias[w] / (double)m);
		}
		free(err[0]);
		free(err[1]);
	}
	free(e);
	free(v);
	free(s);
}

static bool kernels_mode, kernel_sizes_mode;

/* Each size of every class, every kernel of it: --kernel-sizes (the top of the file). */
static void kernel_sizes(const char *path, const struct orr_graph *g,
			 const struct orr_gpu_spec *gpu)
{
	struct orr_kern_sample *s = NULL;
	struct orr_kern_counts c;
	struct ksize *v = NULL;
	size_t n = orr_kern_observe(g, &s, &c), nv = ksizes_of(gpu, s, n, &v);

	for (size_t i = 0; i < nv; i++)
		printf("%s\t%s\t%s\t%.0f\t%.0f\t%zu\t%.0f\t%.1f\n", path, gpu->id,
		       orr_kern_class_name(v[i].cls), v[i].bytes, v[i].flops, v[i].samples, v[i].ns,
		       v[i].roof);
	free(v);
	free(s);
}

/* ---- bandwidth-bound batched GEMMs ---- */

static bool memory_mode;

/* Whether shape s is one a fallback times by its tiles' bytes (gemm-model.c). */
static bool batched_bandwidth_bound(const struct orr_gpu_spec *gpu, const struct orr_gemm_sample *s)
{
	return s->batch > 1 && gpu->peak_flops[s->math] > 0 &&
	       s->bytes / gpu->hbm_bytes_per_s > s->flops / gpu->peak_flops[s->math];
}

/*
 * The median of measured / roofline over the bandwidth-bound batched samples of math
 * of s[0..n) not faster than their roofline (the operands' bytes, not the tiles').
 */
static double operand_efficiency(const struct orr_gpu_spec *gpu, const struct orr_gemm_sample *s,
				 size_t n, enum orr_dtype math)
{
	double *e = calloc(n ? n : 1, sizeof(*e)), m = NAN;
	size_t k = 0;

	if (!e)
		abort();
	for (size_t i = 0; i < n; i++) {
		double roof = orr_gemm_roofline_ns(gpu, s[i].math, s[i].flops, s[i].bytes);

		if (s[i].math == math && batched_bandwidth_bound(gpu, &s[i]) && roof > 0 &&
		    s[i].ns >= roof)
			e[k++] = s[i].ns / roof;
	}
	if (k) {
		qsort(e, k, sizeof(*e), cmp_double);
		m = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
	}
	free(e);
	return m;
}

/*
 * Each bandwidth-bound batched shape of s[0..n) predicted as a synthesized step asks
 * (no kernel family) by the GEMM model fitted on every sample of another shape: by its
 * tiles' bytes x the other such shapes' efficiency, and by the roofline x the math's
 * efficiency (the model without efficiency_memory), and by the roofline x the other
 * such samples' median measured / roofline (their operands' bytes).  TSV: trace, math,
 * batch, m, n, k, samples, measured ns, tiles' bytes ns, roofline ns, operands' ns.
 */
static void memory_trace(const char *path, const struct orr_gpu_spec *gpu,
			 const struct orr_gemm_sample *s, size_t n, const struct shape *v,
			 size_t nv)
{
	struct orr_gemm_sample *rest = calloc(n ? n : 1, sizeof(*rest));

	if (!rest)
		abort();
	for (size_t i = 0; i < nv; i++) {
		struct orr_gemm_sample q = v[i].s;
		struct orr_gemm_model m;
		double mem, flat, operand;
		size_t k = 0;

		if (!batched_bandwidth_bound(gpu, &q))
			continue;
		for (size_t j = 0; j < n; j++)
			if (!same_shape(&s[j], &q))
				rest[k++] = s[j];
		if (orr_gemm_model_fit(rest, k, gpu, &m))
			continue;
		q.family[0] = '\0';
		mem = orr_gemm_model_time(&m, &q, NULL);
		operand = orr_gemm_roofline_ns(gpu, q.math, q.flops, q.bytes) *
			  operand_efficiency(gpu, rest, k, q.math);
		memset(m.efficiency_memory, 0, sizeof(m.efficiency_memory));
		flat = orr_gemm_model_time(&m, &q, NULL);
		printf("%s\t%s\t%lld\t%lld\t%lld\t%lld\t%zu\t%.0f\t%.0f\t%.0f\t%.0f\n", path,
		       orr_dtype_name(q.math), (long long)q.batch, (long long)q.m, (long long)q.n,
		       (long long)q.k, v[i].samples, v[i].s.ns, mem, flat, operand);
		orr_gemm_model_release(&m);
	}
	free(rest);
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
	if (kernels_mode || kernel_sizes_mode) {
		if (gpu && kernels_mode)
			kernels_trace(path, g, gpu);
		else if (gpu)
			kernel_sizes(path, g, gpu);
		goto out;
	}
	n = orr_gemm_observe(g, &s, &c);
	if (!gpu || n == 0)
		goto out; /* no roofline, or no GEMM with shapes: nothing to predict */
	nv = shapes_of(s, n, &v);
	for (size_t i = 0; i < nv; i++)
		v[i].roofline_ns =
			orr_gemm_roofline_ns(gpu, v[i].s.math, v[i].s.flops, v[i].s.bytes) *
			efficiency(gpu, v, nv, i);
	if (memory_mode) {
		memory_trace(path, gpu, s, n, v, nv);
		goto out;
	}
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
		if (strcmp(argv[i], "--kernels") == 0) {
			kernels_mode = true;
			continue;
		}
		if (strcmp(argv[i], "--kernel-sizes") == 0) {
			kernel_sizes_mode = true;
			continue;
		}
		if (strcmp(argv[i], "--memory") == 0) {
			memory_mode = true;
			continue;
		}
		if (strcmp(argv[i], "--samples") == 0) {
			samples = true;
			continue;
		}
		if (one_trace(argv[i], samples))
			rc = 1;
	}
	return rc;
}
