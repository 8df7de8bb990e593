/* SPDX-License-Identifier: MIT */
/*
 * The GEMM model (docs/estimator.md, "GEMMs"): per class, (dtype, kernel family),
 * t = a + b·FLOP + c·bytes fitted relative on the class's samples.  The intercept is
 * the launch and the last wave's tail, b the inverse of the rate the kernel reaches,
 * c what moving the operands costs beyond it.
 *
 * Three parameters need three shapes: a class with fewer falls back to the GPU's
 * roofline times the trace's median efficiency (measured / roofline) over the fitted
 * classes' samples of its math dtype, or over every sample of that math when none of
 * them was fitted.  The efficiency is per math because a TF32 tensor-core GEMM and a
 * SIMT FP32 one are bounded by peaks eight times apart and sit at different distances
 * from them.  With no GPU known there is no roofline, and a class falls back to the
 * fit over every GEMM of its dtype.  Every fallback is the class's `how`, with its
 * reason.  Predictions are bounded below by the roofline when the GPU is known.
 *
 * Leave one shape out: each distinct (batch, M, N, K) of a class is predicted by the
 * model built again without any sample of that dtype and shape, as a shape never seen
 * would be: a class left with fewer than three shapes falls back, as it would.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MIN_SHAPES 3

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

static int cmp_class(const struct orr_gemm_sample *x, enum orr_dtype dtype, const char *family)
{
	if (x->dtype != dtype)
		return x->dtype < dtype ? -1 : 1;
	return strcmp(x->family, family);
}

static int cmp_shape(const struct orr_gemm_sample *x, const struct orr_gemm_sample *y)
{
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
	const struct orr_gemm_sample *x = *(const struct orr_gemm_sample *const *)a;
	const struct orr_gemm_sample *y = *(const struct orr_gemm_sample *const *)b;
	int c = cmp_class(x, y->dtype, y->family);

	return c ? c : cmp_shape(x, y);
}

static int cmp_shape_p(const void *a, const void *b)
{
	return cmp_shape(*(const struct orr_gemm_sample *const *)a,
			 *(const struct orr_gemm_sample *const *)b);
}

/* Distinct shapes of v[0..n), sorted by shape. */
static size_t distinct_shapes(const struct orr_gemm_sample *const *v, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		d += !i || cmp_shape(v[i - 1], v[i]) != 0;
	return d;
}

/* ---- building ---- */

static int fit_samples(const struct orr_gemm_sample *const *v, size_t n, struct orr_fit *ret)
{
	double *x = orr_xmalloc(n * 3 * sizeof(*x)), *y = orr_xmalloc(n * sizeof(*y));
	int r;

	for (size_t i = 0; i < n; i++) {
		x[3 * i] = 1;
		x[3 * i + 1] = v[i]->flops;
		x[3 * i + 2] = v[i]->bytes;
		y[i] = v[i]->ns;
	}
	r = orr_fit_linear(x, y, n, 3, true, ret, NULL);
	free(y);
	free(x);
	return r;
}

/* GPU unknown: per dtype, the fit over every sample of v[0..n) of three shapes or more. */
static int fit_pooled(struct orr_gemm_model *m, const struct orr_gemm_sample *const *v, size_t n)
{
	const struct orr_gemm_sample **d = orr_xmalloc((n ? n : 1) * sizeof(*d));
	int r = 0;

	for (int t = 0; t < ORR_DTYPE_COUNT && !r; t++) {
		size_t nd = 0;

		for (size_t i = 0; i < n; i++)
			if ((int)v[i]->dtype == t)
				d[nd++] = v[i];
		if (nd)
			qsort(d, nd, sizeof(*d), cmp_shape_p);
		if (distinct_shapes(d, nd) >= MIN_SHAPES)
			r = fit_samples(d, nd, &m->pooled[t]);
	}
	free(d);
	return r;
}

/*
 * Median measured / roofline over the fitted classes' samples of math dtype `math`
 * (every math when it is ORR_DTYPE_COUNT), else over every sample of it; buf holds n.
 */
static void median_efficiency(const struct orr_gemm_model *m,
			      const struct orr_gemm_sample *const *v, size_t n, const bool *fitted,
			      int math, double *buf, struct orr_gemm_efficiency *ret)
{
	double max;

	*ret = (struct orr_gemm_efficiency){ .median = NAN };
	for (int pass = 0; pass < 2 && !ret->samples; pass++) {
		ret->fitted = pass == 0;
		for (size_t i = 0; i < n; i++) {
			double roof =
				orr_gemm_roofline_ns(m->gpu, v[i]->math, v[i]->flops, v[i]->bytes);

			if (roof > 0 && (math == ORR_DTYPE_COUNT || (int)v[i]->math == math) &&
			    (pass || fitted[i]))
				buf[ret->samples++] = v[i]->ns / roof;
		}
	}
	orr__median_max(buf, ret->samples, &ret->median, &max);
}

static void efficiency(struct orr_gemm_model *m, const struct orr_gemm_sample *const *v, size_t n,
		       const bool *fitted)
{
	double *buf = orr_xmalloc((n + 1) * sizeof(*buf));

	for (size_t i = 0; i < n; i++)
		m->below_roofline += v[i]->ns < orr_gemm_roofline_ns(m->gpu, v[i]->math,
								     v[i]->flops, v[i]->bytes) *
							(1 - 1e-9);
	for (int t = 0; t < ORR_DTYPE_COUNT; t++)
		median_efficiency(m, v, n, fitted, t, buf, &m->efficiency[t]);
	median_efficiency(m, v, n, fitted, ORR_DTYPE_COUNT, buf, &m->efficiency_all);
	free(buf);
}

/* The efficiency a GEMM of math dtype t falls back to: its math's, else every math's. */
static const struct orr_gemm_efficiency *efficiency_for(const struct orr_gemm_model *m,
							enum orr_dtype t)
{
	if ((int)t >= 0 && t < ORR_DTYPE_COUNT && m->efficiency[t].samples)
		return &m->efficiency[t];
	return &m->efficiency_all;
}

/* How class c predicts when it could not be fitted, and why. */
static void fallback(const struct orr_gemm_model *m, struct orr_gemm_class *c, enum orr_dtype math)
{
	const struct orr_gemm_efficiency *e = efficiency_for(m, math);
	const char *dt = orr_dtype_name(c->dtype);
	int len = snprintf(c->why, sizeof(c->why), "%zu shape%s, fewer than %d: ", c->shapes,
			   c->shapes == 1 ? "" : "s", MIN_SHAPES);
	size_t off = len > 0 && (size_t)len < sizeof(c->why) ? (size_t)len : 0;

	if (m->gpu && e->samples) {
		c->how = ORR_GEMM_ROOFLINE;
		snprintf(c->why + off, sizeof(c->why) - off,
			 "the %s %s roofline x %.3f, the median efficiency of %s%s %s", m->gpu->id,
			 orr_dtype_name(math), e->median,
			 e->fitted ? "the fitted classes' " : "every ",
			 e == &m->efficiency_all ? "" : orr_dtype_name(math),
			 e->fitted ? "GEMMs" : "GEMM (none of them in a fitted class)");
	} else if (!m->gpu && m->pooled[c->dtype].nparams) {
		c->how = ORR_GEMM_POOLED;
		snprintf(c->why + off, sizeof(c->why) - off,
			 "no GPU known, the fit over every %s GEMM", dt);
	} else {
		c->how = ORR_GEMM_NONE;
		snprintf(c->why + off, sizeof(c->why) - off, "%s",
			 m->gpu ? "no sample has a roofline"
				: "no GPU known, and fewer than 3 shapes of its dtype in all");
	}
}

/* Class c of v[0..n) (one class): counted, and fitted when it can be. */
static int make_class(struct orr_gemm_class *c, const struct orr_gemm_sample *const *v, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->dtype = v[0]->dtype;
	memcpy(c->family, v[0]->family, sizeof(c->family));
	c->family[sizeof(c->family) - 1] = '\0';
	c->samples = n;
	c->shapes = distinct_shapes(v, n);
	c->loso_median = c->loso_max = NAN;
	if (c->shapes < MIN_SHAPES) {
		c->fit.fit_median = c->fit.fit_max = c->fit.loo_median = c->fit.loo_max = NAN;
		return 0;
	}
	c->how = ORR_GEMM_FIT;
	snprintf(c->why, sizeof(c->why), "fitted on %zu shapes", c->shapes);
	return fit_samples(v, n, &c->fit);
}

/* The model of v[0..n), sorted by cmp_sample, without leaving anything out. */
static int build(struct orr_gemm_model *m, const struct orr_gemm_sample *const *v, size_t n,
		 const struct orr_gpu_spec *gpu)
{
	bool *fitted = orr_xcalloc(n + 1, sizeof(*fitted));
	size_t cap = 0;
	int r = 0;

	memset(m, 0, sizeof(*m));
	m->gpu = gpu;
	m->loso_median = m->loso_max = NAN;
	m->efficiency_all.median = NAN;
	for (int t = 0; t < ORR_DTYPE_COUNT; t++)
		m->efficiency[t].median = NAN;
	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr_gemm_class c;

		for (j = i + 1; j < n && cmp_class(v[j], v[i]->dtype, v[i]->family) == 0;)
			j++;
		r = make_class(&c, v + i, j - i);
		for (size_t k = i; k < j; k++)
			fitted[k] = c.how == ORR_GEMM_FIT;
		ORR_VEC_PUSH(m->classes, m->nclasses, cap, c);
	}
	if (!r && gpu)
		efficiency(m, v, n, fitted);
	if (!r && !gpu)
		r = fit_pooled(m, v, n);
	for (size_t i = 0, k = 0; i < m->nclasses && !r; k += m->classes[i++].samples)
		if (m->classes[i].how != ORR_GEMM_FIT)
			fallback(m, &m->classes[i], v[k]->math);
	free(fitted);
	return r;
}

/* ---- predicting ---- */

static const struct orr_gemm_class *find_class(const struct orr_gemm_model *m,
					       const struct orr_gemm_sample *q)
{
	for (size_t i = 0; i < m->nclasses; i++)
		if (m->classes[i].dtype == q->dtype && strcmp(m->classes[i].family, q->family) == 0)
			return &m->classes[i];
	return NULL;
}

double orr_gemm_model_time(const struct orr_gemm_model *m, const struct orr_gemm_sample *q,
			   enum orr_gemm_how *ret_how)
{
	const struct orr_gemm_class *c = find_class(m, q);
	const struct orr_gemm_efficiency *e = efficiency_for(m, q->math);
	double x[3] = { 1, q->flops, q->bytes };
	double roof = orr_gemm_roofline_ns(m->gpu, q->math, q->flops, q->bytes), t = NAN;
	enum orr_gemm_how how = ORR_GEMM_NONE;

	if (c && c->how == ORR_GEMM_FIT) {
		t = orr_fit_eval(&c->fit, x);
		how = ORR_GEMM_FIT;
	}
	/* No fit, or one that extrapolates to no time: the fallback. */
	if (!(t > 0) && roof > 0 && e->samples) {
		t = roof * e->median;
		how = ORR_GEMM_ROOFLINE;
	} else if (!(t > 0) && !m->gpu && (int)q->dtype >= 0 && q->dtype < ORR_DTYPE_COUNT &&
		   m->pooled[q->dtype].nparams) {
		t = orr_fit_eval(&m->pooled[q->dtype], x);
		how = ORR_GEMM_POOLED;
	}
	if (roof > 0 && t < roof)
		t = roof;
	if (!(t > 0) || !isfinite(t)) {
		t = NAN;
		how = ORR_GEMM_NONE;
	}
	if (ret_how)
		*ret_how = how;
	return t;
}

/* ---- leaving shapes out ---- */

/* Shape v[i..j) of class cls, predicted by the model of every other dtype and shape. */
static int leave_out(struct orr_gemm_model *m, const struct orr_gemm_sample *const *v, size_t n,
		     size_t i, size_t j, size_t cls, const struct orr_gemm_sample **rest,
		     struct orr_gemm_shape *ret)
{
	struct orr_gemm_model sub;
	double *ns = orr_xmalloc((j - i) * sizeof(*ns)), max;
	size_t nrest = 0;
	int r;

	for (size_t k = 0; k < n; k++)
		if (v[k]->dtype != v[i]->dtype || cmp_shape(v[k], v[i]) != 0)
			rest[nrest++] = v[k];
	for (size_t k = i; k < j; k++)
		ns[k - i] = v[k]->ns;
	*ret = (struct orr_gemm_shape){ .cls = cls,
					.batch = v[i]->batch,
					.m = v[i]->m,
					.n = v[i]->n,
					.k = v[i]->k,
					.samples = j - i };
	orr__median_max(ns, j - i, &ret->measured_ns, &max);
	free(ns);
	r = build(&sub, rest, nrest, m->gpu);
	ret->predicted_ns = r ? NAN : orr_gemm_model_time(&sub, v[i], &ret->how);
	orr_gemm_model_release(&sub);
	return r;
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

static int leave_shapes_out(struct orr_gemm_model *m, const struct orr_gemm_sample *const *v,
			    size_t n)
{
	const struct orr_gemm_sample **rest = orr_xmalloc((n ? n : 1) * sizeof(*rest));
	size_t cap = 0, cls = 0;
	double *err;
	int r = 0;

	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr_gemm_shape s;

		for (j = i + 1; j < n && cmp_sample(&v[i], &v[j]) == 0;)
			j++;
		if (i && cmp_class(v[i - 1], v[i]->dtype, v[i]->family) != 0)
			cls++;
		r = leave_out(m, v, n, i, j, cls, rest, &s);
		ORR_VEC_PUSH(m->shapes, m->nshapes, cap, s);
	}
	free(rest);
	err = orr_xmalloc((m->nshapes + 1) * sizeof(*err));
	m->loso_predicted = shape_errors(m, SIZE_MAX, err, &m->loso_median, &m->loso_max);
	for (size_t c = 0; c < m->nclasses; c++)
		m->classes[c].loso_shapes = shape_errors(m, c, err, &m->classes[c].loso_median,
							 &m->classes[c].loso_max);
	free(err);
	return r;
}

int orr_gemm_model_fit(const struct orr_gemm_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_gemm_model *ret)
{
	struct orr_gemm_model m;
	const struct orr_gemm_sample **v;
	int r;

	for (size_t i = 0; i < n; i++)
		if (!(s[i].flops > 0) || !(s[i].bytes > 0) || !(s[i].ns > 0) ||
		    !isfinite(s[i].flops) || !isfinite(s[i].bytes) || !isfinite(s[i].ns) ||
		    (int)s[i].dtype < 0 || s[i].dtype >= ORR_DTYPE_COUNT || (int)s[i].math < 0 ||
		    s[i].math >= ORR_DTYPE_COUNT || !memchr(s[i].family, '\0', sizeof(s[i].family)))
			return -EINVAL;
	v = orr_xmalloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &s[i];
	if (n)
		qsort(v, n, sizeof(*v), cmp_sample);
	r = build(&m, v, n, gpu);
	if (!r)
		r = leave_shapes_out(&m, v, n);
	free(v);
	if (r) {
		orr_gemm_model_release(&m);
		return r;
	}
	*ret = m;
	return 0;
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
