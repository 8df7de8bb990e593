/* SPDX-License-Identifier: MIT */
/*
 * The model of the kernels other than GEMMs (docs/estimator.md, "Kernels other than
 * GEMMs"), built as the GEMM model is (gemm-model.c): per family, (class, dtype,
 * kernel family), t = a + c·bytes fitted relative, with a FLOP term,
 * t = a + b·FLOP + c·bytes, where every sample has FLOPs (attention read from its
 * operands).  The intercept is the launch and the tail, c the inverse of the bandwidth
 * the kernel reaches.
 *
 * A family with fewer than three sizes falls back to the GPU's roofline, bytes / HBM
 * (with FLOPs, the larger of that and FLOP / peak), times the trace's median efficiency
 * (measured / roofline) over the fitted families' samples of its class, or over every
 * sample of its class when none was fitted, or over every sample when its class has
 * none.  The efficiency is per class because a copy to the host is bounded by PCIe,
 * not HBM, and a layer norm reaches less of HBM than an add.  Unlike GEMMs, most of
 * these kernels are launch-bound: a 4 KiB memset takes a thousand times its roofline.
 * So the efficiency is taken over the samples whose roofline is at least the trace's
 * floor, the median time of those that move next to nothing, and no fallback is below
 * the floor (launch_floor()).  With no GPU known there is no roofline, and a family
 * takes the fit over every kernel of its class.  Predictions are bounded below by the
 * roofline when the GPU is known.
 *
 * Leave one size out: each distinct (bytes, FLOPs) of a family is predicted by the
 * model built again without any sample of that class, dtype and size.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MIN_SIZES 3

/* ---- order ---- */

static int cmp_family(const struct orr_kern_sample *x, enum orr_kern_class cls,
		      enum orr_dtype dtype, const char *family)
{
	if (x->cls != cls)
		return x->cls < cls ? -1 : 1;
	if (x->dtype != dtype)
		return x->dtype < dtype ? -1 : 1;
	return strcmp(x->family, family);
}

static int cmp_size(const struct orr_kern_sample *x, const struct orr_kern_sample *y)
{
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return (x->flops > y->flops) - (x->flops < y->flops);
}

/* By family, then size. */
static int cmp_sample(const void *a, const void *b)
{
	const struct orr_kern_sample *x = *(const struct orr_kern_sample *const *)a;
	const struct orr_kern_sample *y = *(const struct orr_kern_sample *const *)b;
	int c = cmp_family(x, y->cls, y->dtype, y->family);

	return c ? c : cmp_size(x, y);
}

static int cmp_size_p(const void *a, const void *b)
{
	return cmp_size(*(const struct orr_kern_sample *const *)a,
			*(const struct orr_kern_sample *const *)b);
}

/* Distinct sizes of v[0..n), sorted by size. */
static size_t distinct_sizes(const struct orr_kern_sample *const *v, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		d += !i || cmp_size(v[i - 1], v[i]) != 0;
	return d;
}

static bool all_flops(const struct orr_kern_sample *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(v[i]->flops > 0))
			return false;
	return n > 0;
}

static double roofline(const struct orr_gpu_spec *gpu, const struct orr_kern_sample *s)
{
	return orr_gemm_roofline_ns(gpu, s->dtype, s->flops, s->bytes);
}

/* ---- building ---- */

/* The features of s: 1, (FLOPs,) bytes; returns how many. */
static size_t features(const struct orr_kern_sample *s, bool flops, double *x)
{
	size_t k = 0;

	x[k++] = 1;
	if (flops)
		x[k++] = s->flops;
	x[k++] = s->bytes;
	return k;
}

static int fit_samples(const struct orr_kern_sample *const *v, size_t n, bool flops,
		       struct orr_fit *ret)
{
	size_t k = flops ? 3 : 2;
	double *x = orr_xmalloc(n * k * sizeof(*x)), *y = orr_xmalloc(n * sizeof(*y));
	int r;

	for (size_t i = 0; i < n; i++) {
		features(v[i], flops, x + i * k);
		y[i] = v[i]->ns;
	}
	r = orr_fit_linear(x, y, n, k, true, ret, NULL);
	free(y);
	free(x);
	return r;
}

/* GPU unknown: per class, the fit over every sample of v[0..n) of three sizes or more. */
static int fit_pooled(struct orr_kern_model *m, const struct orr_kern_sample *const *v, size_t n)
{
	const struct orr_kern_sample **d = orr_xmalloc((n ? n : 1) * sizeof(*d));
	int r = 0;

	for (int c = 0; c < ORR_KERN_CLASS_COUNT && !r; c++) {
		size_t nd = 0;

		for (size_t i = 0; i < n; i++)
			if ((int)v[i]->cls == c)
				d[nd++] = v[i];
		if (nd)
			qsort(d, nd, sizeof(*d), cmp_size_p);
		if (distinct_sizes(d, nd) >= MIN_SIZES)
			r = fit_samples(d, nd, all_flops(d, nd), &m->pooled[c]);
	}
	free(d);
	return r;
}

/*
 * Median measured / roofline over the fitted families' samples of class cls (every
 * class when it is ORR_KERN_CLASS_COUNT), else over every sample of it; buf holds n.
 */
static void median_efficiency(const struct orr_kern_model *m,
			      const struct orr_kern_sample *const *v, size_t n, const bool *fitted,
			      int cls, double *buf, struct orr_gemm_efficiency *ret)
{
	double max;

	*ret = (struct orr_gemm_efficiency){ .median = NAN };
	for (int pass = 0; pass < 2 && !ret->samples; pass++) {
		ret->fitted = pass == 0;
		for (size_t i = 0; i < n; i++) {
			double roof = roofline(m->gpu, v[i]);

			if (roof > 0 && roof >= m->floor_ns &&
			    (cls == ORR_KERN_CLASS_COUNT || (int)v[i]->cls == cls) &&
			    (pass || fitted[i]))
				buf[ret->samples++] = v[i]->ns / roof;
		}
	}
	orr__median_max(buf, ret->samples, &ret->median, &max);
}

/*
 * The floor: the median time of the samples that move too little for HBM to matter,
 * whose roofline is below the shortest sample's time (the launch and the tail of a
 * kernel that does next to nothing); that shortest time when there are none.
 */
static double launch_floor(const struct orr_kern_model *m, const struct orr_kern_sample *const *v,
			   size_t n, double *buf)
{
	double least = INFINITY, median, max;
	size_t nb = 0;

	for (size_t i = 0; i < n; i++)
		least = fmin(least, v[i]->ns);
	for (size_t i = 0; i < n; i++)
		if (roofline(m->gpu, v[i]) < least)
			buf[nb++] = v[i]->ns;
	orr__median_max(buf, nb, &median, &max);
	return nb ? median : n ? least : NAN;
}

static void efficiency(struct orr_kern_model *m, const struct orr_kern_sample *const *v, size_t n,
		       const bool *fitted)
{
	double *buf = orr_xmalloc((n + 1) * sizeof(*buf));

	m->floor_ns = launch_floor(m, v, n, buf);
	for (size_t i = 0; i < n; i++)
		m->below_roofline += v[i]->ns < roofline(m->gpu, v[i]) * (1 - 1e-9);
	for (int c = 0; c < ORR_KERN_CLASS_COUNT; c++)
		median_efficiency(m, v, n, fitted, c, buf, &m->efficiency[c]);
	median_efficiency(m, v, n, fitted, ORR_KERN_CLASS_COUNT, buf, &m->efficiency_all);
	free(buf);
}

/* The efficiency class c falls back to: its own, else every class's. */
static const struct orr_gemm_efficiency *efficiency_for(const struct orr_kern_model *m,
							enum orr_kern_class c)
{
	if ((int)c >= 0 && c < ORR_KERN_CLASS_COUNT && m->efficiency[c].samples)
		return &m->efficiency[c];
	return &m->efficiency_all;
}

/* How family f predicts when it could not be fitted, and why. */
static void fallback(const struct orr_kern_model *m, struct orr_kern_family *f)
{
	const struct orr_gemm_efficiency *e = efficiency_for(m, f->cls);
	const char *cls = orr_kern_class_name(f->cls);
	int len = snprintf(f->why, sizeof(f->why), "%zu size%s, fewer than %d: ", f->sizes,
			   f->sizes == 1 ? "" : "s", MIN_SIZES);
	size_t off = len > 0 && (size_t)len < sizeof(f->why) ? (size_t)len : 0;

	if (m->gpu && e->samples) {
		f->how = ORR_GEMM_ROOFLINE;
		snprintf(f->why + off, sizeof(f->why) - off,
			 "the %s %sroofline x %.3f, the median efficiency of %s%s%s%s", m->gpu->id,
			 f->flops ? "" : "HBM ", e->median,
			 e->fitted ? "the fitted families' " : "every ",
			 e == &m->efficiency_all ? "" : cls, e == &m->efficiency_all ? "" : " ",
			 e->fitted ? "kernels" : "kernel (none in a fitted family)");
	} else if (!m->gpu && m->pooled[f->cls].nparams) {
		f->how = ORR_GEMM_POOLED;
		snprintf(f->why + off, sizeof(f->why) - off,
			 "no GPU known, the fit over every %s kernel", cls);
	} else {
		f->how = ORR_GEMM_NONE;
		snprintf(f->why + off, sizeof(f->why) - off, "%s",
			 m->gpu ? "no sample has a roofline"
				: "no GPU known, and fewer than 3 sizes of its class in all");
	}
}

/* Family f of v[0..n) (one family): counted, and fitted when it can be. */
static int make_family(struct orr_kern_family *f, const struct orr_kern_sample *const *v, size_t n)
{
	memset(f, 0, sizeof(*f));
	f->cls = v[0]->cls;
	f->dtype = v[0]->dtype;
	memcpy(f->name, v[0]->family, sizeof(f->name));
	f->name[sizeof(f->name) - 1] = '\0';
	f->samples = n;
	f->sizes = distinct_sizes(v, n);
	f->flops = all_flops(v, n);
	f->loso_median = f->loso_max = NAN;
	if (f->sizes < MIN_SIZES) {
		f->fit.fit_median = f->fit.fit_max = f->fit.loo_median = f->fit.loo_max = NAN;
		return 0;
	}
	f->how = ORR_GEMM_FIT;
	snprintf(f->why, sizeof(f->why), "fitted on %zu sizes", f->sizes);
	return fit_samples(v, n, f->flops, &f->fit);
}

/* The model of v[0..n), sorted by cmp_sample, without leaving anything out. */
static int build(struct orr_kern_model *m, const struct orr_kern_sample *const *v, size_t n,
		 const struct orr_gpu_spec *gpu)
{
	bool *fitted = orr_xcalloc(n + 1, sizeof(*fitted));
	size_t cap = 0;
	int r = 0;

	memset(m, 0, sizeof(*m));
	m->gpu = gpu;
	m->loso_median = m->loso_max = m->floor_ns = NAN;
	m->efficiency_all.median = NAN;
	for (int c = 0; c < ORR_KERN_CLASS_COUNT; c++) {
		m->efficiency[c].median = NAN;
		m->classes[c].loso_median = m->classes[c].loso_max = NAN;
	}
	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr_kern_family f;

		for (j = i + 1;
		     j < n && cmp_family(v[j], v[i]->cls, v[i]->dtype, v[i]->family) == 0;)
			j++;
		r = make_family(&f, v + i, j - i);
		for (size_t k = i; k < j; k++)
			fitted[k] = f.how == ORR_GEMM_FIT;
		ORR_VEC_PUSH(m->families, m->nfamilies, cap, f);
	}
	if (!r && gpu)
		efficiency(m, v, n, fitted);
	if (!r && !gpu)
		r = fit_pooled(m, v, n);
	for (size_t i = 0; i < m->nfamilies && !r; i++)
		if (m->families[i].how != ORR_GEMM_FIT)
			fallback(m, &m->families[i]);
	free(fitted);
	return r;
}

/* ---- predicting ---- */

static const struct orr_kern_family *find_family(const struct orr_kern_model *m,
						 const struct orr_kern_sample *q)
{
	for (size_t i = 0; i < m->nfamilies; i++)
		if (m->families[i].cls == q->cls && m->families[i].dtype == q->dtype &&
		    strcmp(m->families[i].name, q->family) == 0)
			return &m->families[i];
	return NULL;
}

double orr_kern_model_time(const struct orr_kern_model *m, const struct orr_kern_sample *q,
			   enum orr_gemm_how *ret_how)
{
	const struct orr_kern_family *f = find_family(m, q);
	const struct orr_gemm_efficiency *e = efficiency_for(m, q->cls);
	double roof = roofline(m->gpu, q), t = NAN, x[3];
	enum orr_gemm_how how = ORR_GEMM_NONE;
	bool pooled = (int)q->cls >= 0 && q->cls < ORR_KERN_CLASS_COUNT && !m->gpu &&
		      m->pooled[q->cls].nparams;

	if (f && f->how == ORR_GEMM_FIT) {
		features(q, f->flops, x);
		t = orr_fit_eval(&f->fit, x);
		how = ORR_GEMM_FIT;
	}
	/* No fit, or one that extrapolates to no time: the fallback. */
	if (!(t > 0) && roof > 0 && e->samples) {
		t = fmax(roof * e->median, m->floor_ns);
		how = ORR_GEMM_ROOFLINE;
	} else if (!(t > 0) && pooled) {
		features(q, m->pooled[q->cls].nparams == 3, x);
		t = orr_fit_eval(&m->pooled[q->cls], x);
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

/* ---- leaving sizes out ---- */

/* Size v[i..j) of family fam, predicted by the model of every other class, dtype and size. */
static int leave_out(struct orr_kern_model *m, const struct orr_kern_sample *const *v, size_t n,
		     size_t i, size_t j, size_t fam, const struct orr_kern_sample **rest,
		     struct orr_kern_size *ret)
{
	struct orr_kern_model sub;
	double *ns = orr_xmalloc((j - i) * sizeof(*ns)), max;
	size_t nrest = 0;
	int r;

	for (size_t k = 0; k < n; k++)
		if (v[k]->cls != v[i]->cls || v[k]->dtype != v[i]->dtype ||
		    cmp_size(v[k], v[i]) != 0)
			rest[nrest++] = v[k];
	for (size_t k = i; k < j; k++)
		ns[k - i] = v[k]->ns;
	*ret = (struct orr_kern_size){
		.family = fam, .bytes = v[i]->bytes, .flops = v[i]->flops, .samples = j - i
	};
	orr__median_max(ns, j - i, &ret->measured_ns, &max);
	free(ns);
	r = build(&sub, rest, nrest, m->gpu);
	ret->predicted_ns = r ? NAN : orr_kern_model_time(&sub, v[i], &ret->how);
	orr_kern_model_release(&sub);
	return r;
}

/* Median and max error of the sizes of class cls (every class when it is CLASS_COUNT). */
static size_t size_errors(const struct orr_kern_model *m, int cls, size_t fam, double *err,
			  double *ret_median, double *ret_max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nsizes; i++) {
		const struct orr_kern_size *s = &m->sizes[i];

		if ((fam == SIZE_MAX || s->family == fam) &&
		    (cls == ORR_KERN_CLASS_COUNT || (int)m->families[s->family].cls == cls) &&
		    isfinite(s->predicted_ns))
			err[n++] = fabs(s->predicted_ns / s->measured_ns - 1.0);
	}
	orr__median_max(err, n, ret_median, ret_max);
	return n;
}

static void summarize(struct orr_kern_model *m)
{
	double *err = orr_xmalloc((m->nsizes + 1) * sizeof(*err));

	m->loso_predicted =
		size_errors(m, ORR_KERN_CLASS_COUNT, SIZE_MAX, err, &m->loso_median, &m->loso_max);
	for (size_t i = 0; i < m->nfamilies; i++) {
		struct orr_kern_family *f = &m->families[i];
		struct orr_kern_class_summary *c = &m->classes[f->cls];

		f->loso_sizes =
			size_errors(m, ORR_KERN_CLASS_COUNT, i, err, &f->loso_median, &f->loso_max);
		c->samples += f->samples;
		c->sizes += f->sizes;
		c->families++;
		c->fitted += f->how == ORR_GEMM_FIT;
	}
	for (int c = 0; c < ORR_KERN_CLASS_COUNT; c++)
		m->classes[c].loso_sizes = size_errors(
			m, c, SIZE_MAX, err, &m->classes[c].loso_median, &m->classes[c].loso_max);
	free(err);
}

static int leave_sizes_out(struct orr_kern_model *m, const struct orr_kern_sample *const *v,
			   size_t n)
{
	const struct orr_kern_sample **rest = orr_xmalloc((n ? n : 1) * sizeof(*rest));
	size_t cap = 0, fam = 0;
	int r = 0;

	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr_kern_size s;

		for (j = i + 1; j < n && cmp_sample(&v[i], &v[j]) == 0;)
			j++;
		if (i && cmp_family(v[i - 1], v[i]->cls, v[i]->dtype, v[i]->family) != 0)
			fam++;
		r = leave_out(m, v, n, i, j, fam, rest, &s);
		ORR_VEC_PUSH(m->sizes, m->nsizes, cap, s);
	}
	free(rest);
	summarize(m);
	return r;
}

int orr_kern_model_fit(const struct orr_kern_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_kern_model *ret)
{
	struct orr_kern_model m;
	const struct orr_kern_sample **v;
	int r;

	for (size_t i = 0; i < n; i++)
		if (!(s[i].bytes > 0) || !(s[i].ns > 0) || !(s[i].flops >= 0) ||
		    !isfinite(s[i].bytes) || !isfinite(s[i].ns) || !isfinite(s[i].flops) ||
		    (int)s[i].cls < 0 || s[i].cls >= ORR_KERN_CLASS_COUNT || (int)s[i].dtype < 0 ||
		    s[i].dtype > ORR_DTYPE_COUNT || !memchr(s[i].family, '\0', sizeof(s[i].family)))
			return -EINVAL;
	v = orr_xmalloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &s[i];
	if (n)
		qsort(v, n, sizeof(*v), cmp_sample);
	r = build(&m, v, n, gpu);
	if (!r)
		r = leave_sizes_out(&m, v, n);
	free(v);
	if (r) {
		orr_kern_model_release(&m);
		return r;
	}
	*ret = m;
	return 0;
}

void orr_kern_model_release(struct orr_kern_model *m)
{
	if (!m)
		return;
	free(m->families);
	free(m->sizes);
	m->families = NULL;
	m->sizes = NULL;
	m->nfamilies = m->nsizes = 0;
}
