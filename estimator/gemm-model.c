/* SPDX-License-Identifier: MIT */
/*
 * The GEMM model (docs/estimator.md, "GEMMs"): per class, (dtype, kernel family),
 * t = a + b·FLOP + c·bytes fitted relative on the class's samples.  The intercept is
 * the launch and the last wave's tail, b the inverse of the rate the kernel reaches,
 * c what moving the operands costs beyond it.
 *
 * Three parameters need three shapes: a class with fewer falls back to the GPU's
 * roofline times the trace's median efficiency (measured / roofline) over the fitted
 * classes' samples of its math dtype not faster than their roofline, or over every such
 * sample of that math when no fitted class has one.  The efficiency is per math because
 * a TF32 tensor-core GEMM and a SIMT FP32 one are bounded by peaks eight times apart and
 * sit at different distances from them.  With no GPU known there is no roofline, and a
 * class falls back to the fit over every GEMM of its dtype.  Every fallback is the
 * class's `how`, with its reason.  Predictions are bounded below by the roofline when
 * the GPU is known.
 *
 * Leave one shape out: each distinct (batch, M, N, K) of a class is predicted by the
 * model built again without any sample of that dtype and shape, as a shape never seen
 * would be: a class left with fewer than three shapes falls back, as it would, and a
 * batched shape bound by memory takes its tiles' bytes x the rate of such samples left in.
 *
 * The building, the fallbacks, predicting and leaving out are the kernel model's too
 * (model-common.c): this file says what a GEMM's class, shape and groups are, and (the
 * kind's built and roofline_ns) how a batched GEMM bound by memory falls back, so that
 * fit's report and leave one shape out time it as estimate does.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

const char *orr_gemm_how_name(enum orr_gemm_how h)
{
	switch (h) {
	case ORR_GEMM_NONE:
		return "none";
	case ORR_GEMM_FIT:
		return "fit";
	case ORR_GEMM_ROOFLINE:
		return "roofline";
	case ORR_GEMM_POOLED:
		return "pooled";
	}
	return NULL;
}

double orr_gemm_roofline_ns(const struct orr_gpu_spec *gpu, enum orr_dtype math, double flops,
			    double bytes)
{
	double t = 0;

	if (!gpu)
		return 0;
	if ((int)math >= 0 && math < ORR_DTYPE_COUNT && gpu->peak_flops[math] > 0)
		t = flops / gpu->peak_flops[math] * 1e9;
	if (gpu->hbm_bytes_per_s > 0)
		t = fmax(t, bytes / gpu->hbm_bytes_per_s * 1e9);
	return t;
}

/* ---- order ---- */

/* The sample that p, an element of an array of pointers to samples, points to. */
static const struct orr_gemm_sample *at(const void *p)
{
	return *(const void *const *)p;
}

/* By class: dtype, then family. */
static int cmp_class(const void *a, const void *b)
{
	const struct orr_gemm_sample *x = at(a), *y = at(b);

	if (x->dtype != y->dtype)
		return x->dtype < y->dtype ? -1 : 1;
	return strcmp(x->family, y->family);
}

static int cmp_shape(const void *a, const void *b)
{
	const struct orr_gemm_sample *x = at(a), *y = at(b);

	if (x->batch != y->batch)
		return x->batch < y->batch ? -1 : 1;
	if (x->m != y->m)
		return x->m < y->m ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* By class, then shape. */
static int cmp_sample(const void *a, const void *b)
{
	int c = cmp_class(a, b);

	return c ? c : cmp_shape(a, b);
}

/* A shape is left out with its dtype's; the efficiency is per math, the pooled fit per dtype. */
static struct orr__model_view view(const void *p)
{
	const struct orr_gemm_sample *s = p;

	return (struct orr__model_view){ .flops = s->flops,
					 .bytes = s->bytes,
					 .ns = s->ns,
					 .dtype = s->dtype,
					 .math = s->math,
					 .group = (int)s->math,
					 .pool = (int)s->dtype };
}

/* ---- the model ---- */

/* Whether a GEMM's roofline is HBM's: its bytes take longer than its FLOPs at the peak. */
static bool bandwidth_bound(const struct orr_gpu_spec *gpu, enum orr_dtype math, double flops,
			    double bytes)
{
	return gpu && (int)math >= 0 && math < ORR_DTYPE_COUNT && gpu->peak_flops[math] > 0 &&
	       gpu->hbm_bytes_per_s > 0 &&
	       bytes / gpu->hbm_bytes_per_s > flops / gpu->peak_flops[math];
}

/*
 * A batched bandwidth-bound GEMM's tiles' bytes at HBM's rate, ns; NAN for another.  Only
 * batched ones: the traces' bandwidth-bound samples are attention's batched GEMMs, and a
 * plain GEMM of a short K (a row-parallel projection's h/t) runs cuBLAS's multistage
 * kernels, whose loads are all in flight before the first MMA.
 */
static double traffic_ns(const struct orr_gpu_spec *gpu, const struct orr_gemm_sample *s)
{
	double b;

	if (s->batch < 2 || !bandwidth_bound(gpu, s->math, s->flops, s->bytes))
		return NAN;
	b = orr_gemm_tile_traffic_bytes(s->elem_bytes, s->batch, s->m, s->n, s->k);
	return b > 0 ? b / gpu->hbm_bytes_per_s * 1e9 : NAN;
}

/*
 * m->efficiency_memory: per math, the median of measured / traffic_ns() over the
 * bandwidth-bound samples not faster than their roofline.  With k (or the output's
 * narrow side) the head dimension, a GEMM's CTAs run a few main-loop iterations and
 * cannot hide their loads behind MMAs: the Megatron trace's scores (baddbmm, K = 64) and
 * context (bmm, N = 64), of the same FLOPs and operand bytes, ran at 2.11 and 1.32 x
 * their roofline, and at 1.28 and 1.09 x their tiles' bytes at HBM's rate.
 */
static void memory_efficiency(void *p, const void *const *v, size_t n)
{
	struct orr_gemm_model *m = p;
	double *buf = orr_xmalloc((n + 1) * sizeof(*buf)), max;

	for (int d = 0; d < ORR_DTYPE_COUNT; d++) {
		struct orr_gemm_efficiency *e = &m->efficiency_memory[d];

		*e = (struct orr_gemm_efficiency){ .median = NAN };
		for (size_t i = 0; i < n && m->gpu; i++) {
			const struct orr_gemm_sample *s = v[i];
			double roof = orr_gemm_roofline_ns(m->gpu, s->math, s->flops, s->bytes),
			       t = traffic_ns(m->gpu, s);

			if ((int)s->math == d && roof > 0 && t > 0 && s->ns >= roof * (1 - 1e-9))
				buf[e->samples++] = s->ns / t;
		}
		orr__median_max(buf, e->samples, &e->median, &max);
	}
	free(buf);
}

/*
 * A bandwidth-bound batched shape's roofline fallback: its tiles' bytes at the measured
 * rate, at least its roofline (orr__model_time() bounds it); t, the roofline x the
 * efficiency of its math, for another.
 */
static double roofline_ns(const void *p, const void *q, double t)
{
	const struct orr_gemm_model *m = p;
	const struct orr_gemm_sample *s = q;
	double tr;

	if ((int)s->math >= 0 && s->math < ORR_DTYPE_COUNT &&
	    m->efficiency_memory[s->math].samples && (tr = traffic_ns(m->gpu, s)) > 0)
		return tr * m->efficiency_memory[s->math].median;
	return t;
}

static void init(void *p, const struct orr_gpu_spec *gpu)
{
	struct orr_gemm_model *m = p;

	memset(m, 0, sizeof(*m));
	m->gpu = gpu;
	m->loso_median = m->loso_max = NAN;
}

static void parts(void *p, struct orr__model_parts *ret)
{
	struct orr_gemm_model *m = p;

	*ret = (struct orr__model_parts){ .gpu = m->gpu,
					  .efficiency = m->efficiency,
					  .efficiency_all = &m->efficiency_all,
					  .below_roofline = &m->below_roofline,
					  .pooled = m->pooled };
}

/* How many of samples v[0..n), of math dtype `math`, roofline_ns() times by their tiles. */
static size_t memory_bound(const struct orr_gemm_model *m, const void *const *v, size_t n,
			   enum orr_dtype math)
{
	size_t bound = 0;

	for (size_t i = 0; i < n && m->efficiency_memory[math].samples; i++)
		bound += traffic_ns(m->gpu, v[i]) > 0;
	return bound;
}

/* Why class c's roofline fallback, of math `math`, times its n samples as it does. */
static void why_roofline(const struct orr_gemm_model *m, struct orr_gemm_class *c, size_t off,
			 enum orr_dtype math, const struct orr_gemm_efficiency *e, size_t n,
			 size_t bound)
{
	const struct orr_gemm_efficiency *mem = &m->efficiency_memory[math];
	bool all = e == &m->efficiency_all; /* no sample of its math counts: every math's */
	int len = 0;

	/* median_efficiency() (model-common.c) leaves out samples faster than their roofline */
	if (bound < n)
		len = snprintf(
			c->why + off, sizeof(c->why) - off,
			"the %s %s roofline x %.3f, the median efficiency of %s%s%s%s whose roofline "
			"is at most %s time%s",
			m->gpu->id, orr_dtype_name(math), e->median,
			e->fitted ? "the fitted classes' " : "every ",
			all ? "" : orr_dtype_name(math), all ? "" : " ",
			e->fitted ? "GEMMs" : "GEMM", e->fitted ? "their" : "its",
			bound ? "; " : "");
	if (len < 0 || (size_t)len >= sizeof(c->why) - off || !bound)
		return;
	off += (size_t)len;
	if (bound < n)
		len = snprintf(c->why + off, sizeof(c->why) - off, "%zu of its %zu samples ", bound,
			       n);
	if (len < 0 || (size_t)len >= sizeof(c->why) - off)
		return;
	off += bound < n ? (size_t)len : 0;
	snprintf(c->why + off, sizeof(c->why) - off,
		 "batched and bound by memory: the bytes %s tiles move at the %s's HBM rate x "
		 "%.3f, the median of %zu such %s GEMMs not faster than their roofline",
		 bound < n ? "their" : "its", m->gpu->id, mem->median, mem->samples,
		 orr_dtype_name(math));
}

/* Why class c, of math dtype `math`, with samples v[0..n), falls back as it does. */
static void why_fallback(const struct orr_gemm_model *m, struct orr_gemm_class *c,
			 enum orr_dtype math, const struct orr_gemm_efficiency *e,
			 const void *const *v, size_t n)
{
	size_t off = orr__model_why_fewer(c->why, sizeof(c->why), c->shapes, "shape");

	if (c->how == ORR_GEMM_ROOFLINE)
		why_roofline(m, c, off, math, e, n, memory_bound(m, v, n, math));
	else if (c->how == ORR_GEMM_POOLED)
		snprintf(c->why + off, sizeof(c->why) - off,
			 "no GPU known, the fit over every %s GEMM", orr_dtype_name(c->dtype));
	else
		snprintf(c->why + off, sizeof(c->why) - off, "%s",
			 m->gpu ? "no sample has a roofline"
				: "no GPU known, and fewer than 3 shapes of its dtype in all");
}

/* The class of unit u, fitted or falling back. */
static struct orr_gemm_class make_class(const struct orr_gemm_model *m,
					const struct orr__model_unit *u)
{
	const struct orr_gemm_sample *s = u->first;
	struct orr_gemm_class c = { .dtype = s->dtype,
				    .samples = u->samples,
				    .shapes = u->points,
				    .how = u->how,
				    .fit = u->fit,
				    .loso_median = NAN,
				    .loso_max = NAN };

	memcpy(c.family, s->family, sizeof(c.family));
	c.family[sizeof(c.family) - 1] = '\0';
	if (c.how == ORR_GEMM_FIT)
		snprintf(c.why, sizeof(c.why), "fitted on %zu shapes", c.shapes);
	else
		why_fallback(m, &c, s->math, u->efficiency, u->v, u->samples);
	return c;
}

static void set_classes(void *p, const struct orr__model_unit *u, size_t n)
{
	struct orr_gemm_model *m = p;
	size_t cap = 0;

	for (size_t i = 0; i < n; i++)
		ORR_VEC_PUSH(m->classes, m->nclasses, cap, make_class(m, &u[i]));
}

/* Median and max error of the shapes of class cls (every class when cls is SIZE_MAX). */
static size_t shape_errors(const struct orr_gemm_model *m, size_t cls, double *err,
			   double *ret_median, double *ret_max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nshapes; i++) {
		const struct orr_gemm_shape *s = &m->shapes[i];

		if ((cls == SIZE_MAX || s->cls == cls) && isfinite(s->predicted_ns))
			err[n++] = fabs(s->predicted_ns / s->measured_ns - 1.0);
	}
	orr__median_max(err, n, ret_median, ret_max);
	return n;
}

/* The shapes of m, each left out, and their errors over the model and per class. */
static void set_shapes(void *p, const struct orr__model_point *pt, size_t n)
{
	struct orr_gemm_model *m = p;
	size_t cap = 0;
	double *err;

	for (size_t i = 0; i < n; i++) {
		const struct orr_gemm_sample *s = pt[i].first;
		struct orr_gemm_shape sh = { .cls = pt[i].unit,
					     .batch = s->batch,
					     .m = s->m,
					     .n = s->n,
					     .k = s->k,
					     .samples = pt[i].samples,
					     .measured_ns = pt[i].measured_ns,
					     .predicted_ns = pt[i].predicted_ns,
					     .how = pt[i].how };

		ORR_VEC_PUSH(m->shapes, m->nshapes, cap, sh);
	}
	err = orr_xmalloc((m->nshapes + 1) * sizeof(*err));
	m->loso_predicted = shape_errors(m, SIZE_MAX, err, &m->loso_median, &m->loso_max);
	for (size_t c = 0; c < m->nclasses; c++)
		m->classes[c].loso_shapes = shape_errors(m, c, err, &m->classes[c].loso_median,
							 &m->classes[c].loso_max);
	free(err);
}

static const struct orr_fit *class_fit(const void *p, const void *q)
{
	const struct orr_gemm_model *m = p;
	const struct orr_gemm_sample *s = q;

	for (size_t i = 0; i < m->nclasses; i++)
		if (m->classes[i].dtype == s->dtype && strcmp(m->classes[i].family, s->family) == 0)
			return m->classes[i].how == ORR_GEMM_FIT ? &m->classes[i].fit : NULL;
	return NULL;
}

static void release(void *m)
{
	orr_gemm_model_release(m);
}

static const struct orr__model_kind kind = {
	.sample_size = sizeof(struct orr_gemm_sample),
	.model_size = sizeof(struct orr_gemm_model),
	.ngroups = ORR_DTYPE_COUNT,
	.npools = ORR_DTYPE_COUNT,
	.cmp_unit = cmp_class,
	.cmp_point = cmp_shape,
	.cmp_sample = cmp_sample,
	.view = view,
	.init = init,
	.parts = parts,
	.set_units = set_classes,
	.set_points = set_shapes,
	.unit_fit = class_fit,
	.release = release,
	.built = memory_efficiency,
	.roofline_ns = roofline_ns,
};

double orr_gemm_model_time(const struct orr_gemm_model *m, const struct orr_gemm_sample *q,
			   enum orr_gemm_how *ret_how)
{
	return orr__model_time(&kind, m, q, ret_how);
}

/* roofline_ns()'s test for the tiles' bytes. */
bool orr_gemm_model_memory_bound(const struct orr_gemm_model *m, const struct orr_gemm_sample *q)
{
	return m && m->gpu && (int)q->math >= 0 && q->math < ORR_DTYPE_COUNT &&
	       m->efficiency_memory[q->math].samples && traffic_ns(m->gpu, q) > 0;
}

int orr_gemm_model_fit_classes(const struct orr_gemm_sample *s, size_t n,
			       const struct orr_gpu_spec *gpu, struct orr_gemm_model *ret)
{
	for (size_t i = 0; i < n; i++)
		if (!(s[i].flops > 0) || !(s[i].bytes > 0) || !(s[i].ns > 0) ||
		    !isfinite(s[i].flops) || !isfinite(s[i].bytes) || !isfinite(s[i].ns) ||
		    (int)s[i].dtype < 0 || s[i].dtype >= ORR_DTYPE_COUNT || (int)s[i].math < 0 ||
		    s[i].math >= ORR_DTYPE_COUNT || !memchr(s[i].family, '\0', sizeof(s[i].family)))
			return -EINVAL;
	return orr__model_fit(&kind, s, n, gpu, ret); /* init() zeroes the tiles */
}

int orr_gemm_model_fit(const struct orr_gemm_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_gemm_model *ret)
{
	int err = orr_gemm_model_fit_classes(s, n, gpu, ret);

	/* the tiles model where the GPU's SMs are known and a sample has a quantized time */
	if (!err && orr_gemm_tiles_fit(gpu, s, n, &ret->tiles))
		memset(&ret->tiles, 0, sizeof(ret->tiles));
	return err;
}

void orr_gemm_model_release(struct orr_gemm_model *m)
{
	if (!m)
		return;
	free(m->classes);
	free(m->shapes);
	m->classes = NULL;
	m->shapes = NULL;
	m->nclasses = m->nshapes = 0;
}
