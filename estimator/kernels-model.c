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
 * the floor (launch_floor(), model-common.c).  With no GPU known there is no roofline,
 * and a family takes the fit over every kernel of its class.  Predictions are bounded
 * below by the roofline when the GPU is known.
 *
 * Leave one size out: each distinct (bytes, FLOPs) of a family is predicted by the
 * model built again without any sample of that class, dtype and size.
 *
 * The building, the fallbacks, predicting and leaving out are the GEMM model's too
 * (model-common.c): this file says what a kernel's family, size and groups are.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* ---- order ---- */

/* The sample that p, an element of an array of pointers to samples, points to. */
static const struct orr_kern_sample *at(const void *p)
{
	return *(const void *const *)p;
}

/* By family: class, dtype, then kernel family. */
static int cmp_family(const void *a, const void *b)
{
	const struct orr_kern_sample *x = at(a), *y = at(b);

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->dtype != y->dtype)
		return x->dtype < y->dtype ? -1 : 1;
	return strcmp(x->family, y->family);
}

static int cmp_size(const void *a, const void *b)
{
	const struct orr_kern_sample *x = at(a), *y = at(b);

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return (x->flops > y->flops) - (x->flops < y->flops);
}

/* By family, then size. */
static int cmp_sample(const void *a, const void *b)
{
	int c = cmp_family(a, b);

	return c ? c : cmp_size(a, b);
}

/*
 * A size is left out with its class's and dtype's; the roofline is the dtype's, the
 * efficiency and the pooled fit per class.
 */
static struct orr__model_view view(const void *p)
{
	const struct orr_kern_sample *s = p;

	return (struct orr__model_view){ .flops = s->flops,
					 .bytes = s->bytes,
					 .ns = s->ns,
					 .dtype = s->dtype,
					 .math = s->dtype,
					 .group = (int)s->cls,
					 .pool = (int)s->cls };
}

/* ---- the model ---- */

static void init(void *p, const struct orr_gpu_spec *gpu)
{
	struct orr_kern_model *m = p;

	memset(m, 0, sizeof(*m));
	m->gpu = gpu;
	m->loso_median = m->loso_max = NAN;
	for (int c = 0; c < ORR_KERN_CLASS_COUNT; c++)
		m->classes[c].loso_median = m->classes[c].loso_max = NAN;
}

/* The fallback is at least the launch floor (launch_floor() in model-common.c). */
static void parts(void *p, struct orr__model_parts *ret)
{
	struct orr_kern_model *m = p;

	*ret = (struct orr__model_parts){ .gpu = m->gpu,
					  .floor_ns = &m->floor_ns,
					  .efficiency = m->efficiency,
					  .efficiency_all = &m->efficiency_all,
					  .below_roofline = &m->below_roofline,
					  .pooled = m->pooled };
}

/* Why family f falls back as it does. */
static void why_fallback(const struct orr_kern_model *m, struct orr_kern_family *f,
			 const struct orr_gemm_efficiency *e)
{
	const char *cls = orr_kern_class_name(f->cls);
	size_t off = orr__model_why_fewer(f->why, sizeof(f->why), f->sizes, "size");

	if (f->how == ORR_GEMM_ROOFLINE)
		snprintf(f->why + off, sizeof(f->why) - off,
			 "the %s %sroofline x %.3f, the median efficiency of %s%s%s%s whose "
			 "roofline is between the floor and %s time",
			 m->gpu->id, f->flops ? "" : "HBM ", e->median,
			 e->fitted ? "the fitted families' " : "every ",
			 e == &m->efficiency_all ? "" : cls, e == &m->efficiency_all ? "" : " ",
			 e->fitted ? "kernels" : "kernel", e->fitted ? "their" : "its");
	else if (f->how == ORR_GEMM_POOLED)
		snprintf(f->why + off, sizeof(f->why) - off,
			 "no GPU known, the fit over every %s kernel", cls);
	else
		snprintf(f->why + off, sizeof(f->why) - off, "%s",
			 m->gpu ? "no sample has a roofline"
				: "no GPU known, and fewer than 3 sizes of its class in all");
}

/* The family of unit u, fitted or falling back. */
static struct orr_kern_family make_family(const struct orr_kern_model *m,
					  const struct orr__model_unit *u)
{
	const struct orr_kern_sample *s = u->first;
	struct orr_kern_family f = { .cls = s->cls,
				     .dtype = s->dtype,
				     .samples = u->samples,
				     .sizes = u->points,
				     .flops = u->flops,
				     .how = u->how,
				     .fit = u->fit,
				     .loso_median = NAN,
				     .loso_max = NAN };

	memcpy(f.name, s->family, sizeof(f.name));
	f.name[sizeof(f.name) - 1] = '\0';
	if (f.how == ORR_GEMM_FIT)
		snprintf(f.why, sizeof(f.why), "fitted on %zu sizes", f.sizes);
	else
		why_fallback(m, &f, u->efficiency);
	return f;
}

static void set_families(void *p, const struct orr__model_unit *u, size_t n)
{
	struct orr_kern_model *m = p;
	size_t cap = 0;

	for (size_t i = 0; i < n; i++)
		ORR_VEC_PUSH(m->families, m->nfamilies, cap, make_family(m, &u[i]));
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

/* The sizes of m, each left out, and their errors over the model, per family and class. */
static void set_sizes(void *p, const struct orr__model_point *pt, size_t n)
{
	struct orr_kern_model *m = p;
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct orr_kern_sample *s = pt[i].first;
		struct orr_kern_size sz = { .family = pt[i].unit,
					    .bytes = s->bytes,
					    .flops = s->flops,
					    .samples = pt[i].samples,
					    .measured_ns = pt[i].measured_ns,
					    .predicted_ns = pt[i].predicted_ns,
					    .how = pt[i].how };

		ORR_VEC_PUSH(m->sizes, m->nsizes, cap, sz);
	}
	summarize(m);
}

static const struct orr_fit *family_fit(const void *p, const void *q)
{
	const struct orr_kern_model *m = p;
	const struct orr_kern_sample *s = q;

	for (size_t i = 0; i < m->nfamilies; i++)
		if (m->families[i].cls == s->cls && m->families[i].dtype == s->dtype &&
		    strcmp(m->families[i].name, s->family) == 0)
			return m->families[i].how == ORR_GEMM_FIT ? &m->families[i].fit : NULL;
	return NULL;
}

static void release(void *m)
{
	orr_kern_model_release(m);
}

static const struct orr__model_kind kind = {
	.sample_size = sizeof(struct orr_kern_sample),
	.model_size = sizeof(struct orr_kern_model),
	.ngroups = ORR_KERN_CLASS_COUNT,
	.npools = ORR_KERN_CLASS_COUNT,
	.cmp_unit = cmp_family,
	.cmp_point = cmp_size,
	.cmp_sample = cmp_sample,
	.view = view,
	.init = init,
	.parts = parts,
	.set_units = set_families,
	.set_points = set_sizes,
	.unit_fit = family_fit,
	.release = release,
};

double orr_kern_model_time(const struct orr_kern_model *m, const struct orr_kern_sample *q,
			   enum orr_gemm_how *ret_how)
{
	return orr__model_time(&kind, m, q, ret_how);
}

int orr_kern_model_fit(const struct orr_kern_sample *s, size_t n, const struct orr_gpu_spec *gpu,
		       struct orr_kern_model *ret)
{
	for (size_t i = 0; i < n; i++)
		if (!(s[i].bytes > 0) || !(s[i].ns > 0) || !(s[i].flops >= 0) ||
		    !isfinite(s[i].bytes) || !isfinite(s[i].ns) || !isfinite(s[i].flops) ||
		    (int)s[i].cls < 0 || s[i].cls >= ORR_KERN_CLASS_COUNT || (int)s[i].dtype < 0 ||
		    s[i].dtype > ORR_DTYPE_COUNT || !memchr(s[i].family, '\0', sizeof(s[i].family)))
			return -EINVAL;
	return orr__model_fit(&kind, s, n, gpu, ret);
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
