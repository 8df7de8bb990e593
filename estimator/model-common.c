/* SPDX-License-Identifier: MIT */
/*
 * What the GEMM model (gemm-model.c) and the model of the other kernels
 * (kernels-model.c) share: grouping the samples in units and points, the fits, the
 * roofline's median efficiency and the fallbacks, predicting, and leaving each point
 * out (internal.h says the terms).  A kind says how to read the samples and fill the
 * model, what differs between the two.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* ---- samples ---- */

static double roofline(const struct orr_gpu_spec *gpu, const struct orr__model_view *s)
{
	return orr_gemm_roofline_ns(gpu, s->math, s->flops, s->bytes);
}

/* Distinct points of v[0..n), sorted by point. */
static size_t distinct_points(const struct orr__model_kind *k, const void *const *v, size_t n)
{
	size_t d = 0;

	for (size_t i = 0; i < n; i++)
		d += !i || k->cmp_point(&v[i - 1], &v[i]) != 0;
	return d;
}

static bool all_flops(const struct orr__model_kind *k, const void *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(k->view(v[i]).flops > 0))
			return false;
	return n > 0;
}

/* ---- fitting ---- */

/* The features of s: 1, (FLOPs,) bytes; returns how many. */
static size_t features(const struct orr__model_view *s, bool flops, double *x)
{
	size_t k = 0;

	x[k++] = 1;
	if (flops)
		x[k++] = s->flops;
	x[k++] = s->bytes;
	return k;
}

/*
 * Whether the samples' bytes are an affine function of their FLOPs (x: rows of 1,
 * FLOPs, bytes), to 1 part in 10^9: GEMMs that share M and one of K and N (one token
 * count, every weight with the hidden size on one side) have FLOPs and bytes both
 * linear in the other width, and a fit on both splits the time between them at random.
 */
static bool bytes_follow_flops(const double *x, size_t n)
{
	double *a = orr_xmalloc(n * 2 * sizeof(*a)), *y = orr_xmalloc(n * sizeof(*y));
	struct orr_fit f;
	bool ret;

	for (size_t i = 0; i < n; i++) {
		a[2 * i] = 1;
		a[2 * i + 1] = x[3 * i + 1];
		y[i] = x[3 * i + 2];
	}
	ret = !orr_fit_linear(a, y, n, 2, true, &f, NULL) && f.fit_max < 1e-9;
	free(y);
	free(a);
	return ret;
}

/*
 * Time = a + b·FLOPs + c·bytes, or a + c·bytes without FLOPs; where the bytes follow
 * the FLOPs, a + b·FLOPs (c = 0): a GEMM's work is its FLOPs, and the samples cannot
 * tell what the bytes would add.
 */
static int fit_samples(const struct orr__model_kind *k, const void *const *v, size_t n, bool flops,
		       struct orr_fit *ret)
{
	size_t nx = flops ? 3 : 2;
	double *x = orr_xmalloc(n * nx * sizeof(*x)), *y = orr_xmalloc(n * sizeof(*y));
	int r;

	for (size_t i = 0; i < n; i++) {
		struct orr__model_view s = k->view(v[i]);

		features(&s, flops, x + i * nx);
		y[i] = s.ns;
	}
	if (flops && bytes_follow_flops(x, n)) {
		for (size_t i = 0; i < n; i++) /* rows of 1, FLOPs */
			memmove(x + 2 * i, x + 3 * i, 2 * sizeof(*x));
		r = orr_fit_linear(x, y, n, 2, true, ret, NULL);
		ret->nparams = 3;
		ret->coef[2] = 0;
	} else {
		r = orr_fit_linear(x, y, n, nx, true, ret, NULL);
	}
	free(y);
	free(x);
	return r;
}

/* f's prediction for s: with a FLOP term when f has three parameters. */
static double eval(const struct orr_fit *f, const struct orr__model_view *s)
{
	double x[3];

	features(s, f->nparams == 3, x);
	return orr_fit_eval(f, x);
}

/* ---- building ---- */

/* A model being built from its samples v[0..n), sorted by cmp_sample. */
struct building {
	const struct orr__model_kind *k;
	struct orr__model_parts p;
	const void *const *v;
	size_t n;
	struct orr__model_view *s; /* [n]: v's, read once */
	double *roof;              /* [n]: their rooflines */
	bool *fitted;              /* [n]: whether the sample's unit was fitted */
};

/* GPU unknown: per pool, the fit over every sample of it when they have enough points. */
static int fit_pooled(const struct building *b)
{
	const void **d = orr_xmalloc((b->n ? b->n : 1) * sizeof(*d));
	int r = 0;

	for (int t = 0; t < b->k->npools && !r; t++) {
		size_t nd = 0;

		for (size_t i = 0; i < b->n; i++)
			if (b->s[i].pool == t)
				d[nd++] = b->v[i];
		if (nd)
			qsort(d, nd, sizeof(*d), b->k->cmp_point);
		if (distinct_points(b->k, d, nd) >= ORR__MODEL_MIN_POINTS)
			r = fit_samples(b->k, d, nd, all_flops(b->k, d, nd), &b->p.pooled[t]);
	}
	free(d);
	return r;
}

/*
 * The floor: the median time of the samples that move too little for HBM to matter,
 * whose roofline is below the shortest sample's time (the launch and the tail of a
 * kernel that does next to nothing); that shortest time when there are none.
 */
static double launch_floor(const struct building *b, double *buf)
{
	double least = INFINITY, median, max;
	size_t nb = 0;

	for (size_t i = 0; i < b->n; i++)
		least = fmin(least, b->s[i].ns);
	for (size_t i = 0; i < b->n; i++)
		if (b->roof[i] < least)
			buf[nb++] = b->s[i].ns;
	orr__median_max(buf, nb, &median, &max);
	return nb ? median : b->n ? least : NAN;
}

/*
 * Median measured / roofline over the fitted units' samples of group g (every group
 * when it is ngroups) whose roofline is at least the floor, else over every such sample
 * of it; buf holds n.  A sample faster than its roofline is left out: it moved fewer
 * bytes than counted (a broadcast operand, a gather's few rows, data still in L2), and
 * its ratio would time a kernel that streams its bytes faster than HBM allows.
 */
static void median_efficiency(const struct building *b, int g, double *buf,
			      struct orr_gemm_efficiency *ret)
{
	double max;

	*ret = (struct orr_gemm_efficiency){ .median = NAN };
	for (int pass = 0; pass < 2 && !ret->samples; pass++) {
		ret->fitted = pass == 0;
		for (size_t i = 0; i < b->n; i++) {
			double roof = b->roof[i];

			if (roof > 0 && (!b->p.floor_ns || roof >= *b->p.floor_ns) &&
			    b->s[i].ns >= roof * (1 - 1e-9) &&
			    (g == b->k->ngroups || b->s[i].group == g) && (pass || b->fitted[i]))
				buf[ret->samples++] = b->s[i].ns / roof;
		}
	}
	orr__median_max(buf, ret->samples, &ret->median, &max);
}

/* The floor, the samples below their roofline, and the efficiency of every group. */
static void efficiency(const struct building *b)
{
	double *buf = orr_xmalloc((b->n + 1) * sizeof(*buf));

	if (b->p.floor_ns)
		*b->p.floor_ns = launch_floor(b, buf);
	for (size_t i = 0; i < b->n; i++)
		*b->p.below_roofline += b->s[i].ns < b->roof[i] * (1 - 1e-9);
	for (int g = 0; g < b->k->ngroups; g++)
		median_efficiency(b, g, buf, &b->p.efficiency[g]);
	median_efficiency(b, b->k->ngroups, buf, b->p.efficiency_all);
	free(buf);
}

/* No efficiency and no floor, until efficiency() says. */
static void no_efficiency(const struct building *b)
{
	if (b->p.floor_ns)
		*b->p.floor_ns = NAN;
	for (int g = 0; g < b->k->ngroups; g++)
		b->p.efficiency[g].median = NAN;
	b->p.efficiency_all->median = NAN;
}

/* The efficiency group g falls back to: its own, else every group's. */
static const struct orr_gemm_efficiency *efficiency_for(const struct orr__model_kind *k,
							const struct orr__model_parts *p, int g)
{
	if (g >= 0 && g < k->ngroups && p->efficiency[g].samples)
		return &p->efficiency[g];
	return p->efficiency_all;
}

/* Unit v[0..n) (one unit): counted, and fitted when it can be. */
static int make_unit(const struct orr__model_kind *k, const void *const *v, size_t n,
		     struct orr__model_unit *ret)
{
	*ret = (struct orr__model_unit){ .first = v[0], .v = v, .samples = n };
	ret->points = distinct_points(k, v, n);
	ret->flops = all_flops(k, v, n);
	if (ret->points < ORR__MODEL_MIN_POINTS) {
		ret->fit.fit_median = ret->fit.fit_max = NAN;
		ret->fit.loo_median = ret->fit.loo_max = NAN;
		return 0;
	}
	ret->how = ORR_GEMM_FIT;
	return fit_samples(k, v, n, ret->flops, &ret->fit);
}

/* How unit u predicts when it could not be fitted. */
static void fallback(const struct building *b, struct orr__model_unit *u)
{
	struct orr__model_view s = b->k->view(u->first);

	u->efficiency = efficiency_for(b->k, &b->p, s.group);
	if (b->p.gpu && u->efficiency->samples)
		u->how = ORR_GEMM_ROOFLINE;
	else if (!b->p.gpu && b->p.pooled[s.pool].nparams)
		u->how = ORR_GEMM_POOLED;
	else
		u->how = ORR_GEMM_NONE;
}

/* The units of b's samples, each fitted when it can be; *ret orr_xmalloc'ed. */
static int make_units(const struct building *b, struct orr__model_unit **ret, size_t *ret_n)
{
	size_t cap = 0;
	int r = 0;

	for (size_t i = 0, j; i < b->n && !r; i = j) {
		struct orr__model_unit u;

		for (j = i + 1; j < b->n && b->k->cmp_unit(&b->v[j], &b->v[i]) == 0;)
			j++;
		r = make_unit(b->k, b->v + i, j - i, &u);
		for (size_t k = i; k < j; k++)
			b->fitted[k] = u.how == ORR_GEMM_FIT;
		ORR_VEC_PUSH(*ret, *ret_n, cap, u);
	}
	return r;
}

/* b's samples' views and rooflines, and none of their units fitted yet. */
static void read_samples(struct building *b)
{
	b->s = orr_xmalloc((b->n + 1) * sizeof(*b->s));
	b->roof = orr_xmalloc((b->n + 1) * sizeof(*b->roof));
	b->fitted = orr_xcalloc(b->n + 1, sizeof(*b->fitted));
	for (size_t i = 0; i < b->n; i++) {
		b->s[i] = b->k->view(b->v[i]);
		b->roof[i] = roofline(b->p.gpu, &b->s[i]);
	}
}

/* The model m of v[0..n), sorted by cmp_sample, without leaving anything out. */
static int build(const struct orr__model_kind *k, void *m, const void *const *v, size_t n,
		 const struct orr_gpu_spec *gpu)
{
	struct building b = { .k = k, .v = v, .n = n };
	struct orr__model_unit *u = NULL;
	size_t nu = 0;
	int r;

	k->init(m, gpu);
	k->parts(m, &b.p);
	read_samples(&b);
	no_efficiency(&b);
	r = make_units(&b, &u, &nu);
	if (!r && gpu)
		efficiency(&b);
	if (!r && !gpu)
		r = fit_pooled(&b);
	for (size_t i = 0; i < nu && !r; i++)
		if (u[i].how != ORR_GEMM_FIT)
			fallback(&b, &u[i]);
	if (!r && k->built)
		k->built(m, v, n);
	if (!r)
		k->set_units(m, u, nu);
	free(u);
	free(b.fitted);
	free(b.roof);
	free(b.s);
	return r;
}

/* ---- predicting ---- */

/* The fit over q's pool when the GPU is unknown and it was fitted, else NULL. */
static const struct orr_fit *pooled_for(const struct orr__model_kind *k,
					const struct orr__model_parts *p,
					const struct orr__model_view *q)
{
	if (p->gpu || q->pool < 0 || q->pool >= k->npools || !p->pooled[q->pool].nparams)
		return NULL;
	return &p->pooled[q->pool];
}

double orr__model_time(const struct orr__model_kind *k, const void *m, const void *q,
		       enum orr_gemm_how *ret_how)
{
	const struct orr_fit *fit = k->unit_fit(m, q), *pooled;
	const struct orr_gemm_efficiency *e;
	struct orr__model_view s = k->view(q);
	struct orr__model_parts p;
	enum orr_gemm_how how = ORR_GEMM_NONE;
	double roof, t = NAN;

	k->parts((void *)m, &p); /* only read here */
	e = efficiency_for(k, &p, s.group);
	pooled = pooled_for(k, &p, &s);
	roof = roofline(p.gpu, &s);
	if (fit) {
		t = eval(fit, &s);
		how = ORR_GEMM_FIT;
	}
	/* No fit, or one that extrapolates to no time: the fallback. */
	if (!(t > 0) && roof > 0 && e->samples) {
		t = p.floor_ns ? fmax(roof * e->median, *p.floor_ns) : roof * e->median;
		if (k->roofline_ns)
			t = k->roofline_ns(m, q, t);
		how = ORR_GEMM_ROOFLINE;
	} else if (!(t > 0) && pooled) {
		t = eval(pooled, &s);
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

size_t orr__model_why_fewer(char *why, size_t size, size_t points, const char *point)
{
	int len = snprintf(why, size, "%zu %s%s, fewer than %d: ", points, point,
			   points == 1 ? "" : "s", ORR__MODEL_MIN_POINTS);

	return len > 0 && (size_t)len < size ? (size_t)len : 0;
}

/* ---- leaving points out ---- */

/* A model whose points are being left out, and room for the models without them. */
struct leaving {
	const struct orr__model_kind *k;
	const void *const *v;
	size_t n;
	const struct orr_gpu_spec *gpu;
	struct orr__model_view *s; /* [n]: v's */
	const void **rest;         /* [n] */
	void *sub;                 /* a model of kind k */
};

/* Whether leaving v[i]'s point out leaves v[k] out: the same pool, dtype and point. */
static bool alike(const struct leaving *l, size_t i, size_t k)
{
	return l->s[i].pool == l->s[k].pool && l->s[i].dtype == l->s[k].dtype &&
	       l->k->cmp_point(&l->v[i], &l->v[k]) == 0;
}

/* Point v[i..j) of unit u, predicted by the model of every sample it does not leave out. */
static int leave_out(const struct leaving *l, size_t i, size_t j, size_t u,
		     struct orr__model_point *ret)
{
	double *ns = orr_xmalloc((j - i) * sizeof(*ns)), max;
	size_t nrest = 0;
	int r;

	for (size_t k = 0; k < l->n; k++)
		if (!alike(l, i, k))
			l->rest[nrest++] = l->v[k];
	for (size_t k = i; k < j; k++)
		ns[k - i] = l->s[k].ns;
	*ret = (struct orr__model_point){ .first = l->v[i], .unit = u, .samples = j - i };
	orr__median_max(ns, j - i, &ret->measured_ns, &max);
	free(ns);
	r = build(l->k, l->sub, l->rest, nrest, l->gpu);
	ret->predicted_ns = r ? NAN : orr__model_time(l->k, l->sub, l->v[i], &ret->how);
	l->k->release(l->sub);
	return r;
}

/* Every point of m's samples v[0..n) left out, in turn. */
static int leave_points_out(const struct orr__model_kind *k, void *m, const void *const *v,
			    size_t n, const struct orr_gpu_spec *gpu)
{
	struct leaving l = { .k = k, .v = v, .n = n, .gpu = gpu };
	struct orr__model_point *p = NULL;
	size_t np = 0, cap = 0, u = 0;
	int r = 0;

	l.s = orr_xmalloc((n ? n : 1) * sizeof(*l.s));
	l.rest = orr_xmalloc((n ? n : 1) * sizeof(*l.rest));
	l.sub = orr_xmalloc(k->model_size);
	for (size_t i = 0; i < n; i++)
		l.s[i] = k->view(v[i]);
	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr__model_point pt;

		for (j = i + 1; j < n && k->cmp_sample(&v[i], &v[j]) == 0;)
			j++;
		if (i && k->cmp_unit(&v[i - 1], &v[i]) != 0)
			u++;
		r = leave_out(&l, i, j, u, &pt);
		ORR_VEC_PUSH(p, np, cap, pt);
	}
	if (!r)
		k->set_points(m, p, np);
	free(p);
	free(l.sub);
	free(l.rest);
	free(l.s);
	return r;
}

int orr__model_fit(const struct orr__model_kind *k, const void *s, size_t n,
		   const struct orr_gpu_spec *gpu, void *ret)
{
	const void **v = orr_xmalloc((n ? n : 1) * sizeof(*v));
	void *m = orr_xmalloc(k->model_size);
	int r;

	for (size_t i = 0; i < n; i++)
		v[i] = (const char *)s + i * k->sample_size;
	if (n)
		qsort(v, n, sizeof(*v), k->cmp_sample);
	r = build(k, m, v, n, gpu);
	if (!r)
		r = leave_points_out(k, m, v, n, gpu);
	free(v);
	if (r)
		k->release(m);
	else
		memcpy(ret, m, k->model_size);
	free(m);
	return r;
}
