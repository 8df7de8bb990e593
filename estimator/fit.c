/* SPDX-License-Identifier: MIT */
/*
 * Linear least squares for the cost models: y ≈ X·c, solved by LAPACK's dgelsd (SVD,
 * so a design that cannot separate its parameters gives a rank below k instead of
 * noise), with every row divided by its y when the fit is relative: times span four
 * orders of magnitude, and a kernel of 5 µs predicted as 10 µs is as wrong as one of
 * 5 ms predicted as 10 ms.  Columns are scaled to a largest magnitude of 1 before the
 * solve (bytes and FLOPs are ~1e9, the intercept 1) and the coefficients scaled back.
 *
 * The errors reported are relative, |prediction / measurement - 1|, on the samples
 * (fit) and left out one at a time (leave-one-out, from the hat matrix's diagonal:
 * the left-out residual is r_i / (1 - h_ii), exact for least squares, so no refit).
 *
 * LAPACKE is loaded at the first fit, not linked: loading it brings in LAPACK, BLAS
 * (OpenBLAS on Debian) and the Fortran runtime, about half of a start's cost, and
 * OpenBLAS starts its threads as it loads; most commands fit nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void orr__median_max(double *v, size_t n, double *ret_median, double *ret_max)
{
	if (!n) {
		*ret_median = *ret_max = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	*ret_median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	*ret_max = v[n - 1];
}

/* The three LAPACKE functions used, from liblapacke.so.3 (Debian's liblapacke). */
static struct {
	__typeof__(LAPACKE_dgelsd) *dgelsd;
	__typeof__(LAPACKE_dpotrf) *dpotrf;
	__typeof__(LAPACKE_dpotri) *dpotri;
	bool loaded;
} lapacke;
static pthread_once_t lapacke_once = PTHREAD_ONCE_INIT;

static void lapacke_load(void)
{
	/* Never closed: the functions are used until the process ends. */
	void *h = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&lapacke.dgelsd = dlsym(h, "LAPACKE_dgelsd");
	*(void **)&lapacke.dpotrf = dlsym(h, "LAPACKE_dpotrf");
	*(void **)&lapacke.dpotri = dlsym(h, "LAPACKE_dpotri");
	lapacke.loaded = lapacke.dgelsd && lapacke.dpotrf && lapacke.dpotri;
}

/* Row i of the design as the solve sees it: weighted and column-scaled. */
static void design_row(const double *x, const double *y, size_t i, size_t k, bool relative,
		       const double *scale, double *row)
{
	double w = relative ? 1.0 / y[i] : 1.0;

	for (size_t j = 0; j < k; j++)
		row[j] = x[i * k + j] * w / scale[j];
}

/* The hat diagonal h_ii of the scaled design a (n × k, row-major); false if singular. */
static bool hat_diagonal(const double *a, size_t n, size_t k, double *h)
{
	double g[ORR_FIT_MAX_PARAMS * ORR_FIT_MAX_PARAMS] = { 0 };

	for (size_t i = 0; i < n; i++)
		for (size_t p = 0; p < k; p++)
			for (size_t q = 0; q < k; q++)
				g[p * k + q] += a[i * k + p] * a[i * k + q];
	if (lapacke.dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)k, g, (lapack_int)k) != 0 ||
	    lapacke.dpotri(LAPACK_ROW_MAJOR, 'U', (lapack_int)k, g, (lapack_int)k) != 0)
		return false;
	for (size_t p = 0; p < k; p++) /* dpotri fills the upper triangle */
		for (size_t q = 0; q < p; q++)
			g[p * k + q] = g[q * k + p];
	for (size_t i = 0; i < n; i++) {
		double s = 0;

		for (size_t p = 0; p < k; p++)
			for (size_t q = 0; q < k; q++)
				s += a[i * k + p] * g[p * k + q] * a[i * k + q];
		h[i] = s;
	}
	return true;
}

static int errors(const double *x, const double *y, size_t n, size_t k, bool relative,
		  const double *a, struct orr_fit *f, double *ret_loo)
{
	double *e = malloc(2 * n * sizeof(*e)), *h = e ? e + n : NULL;
	size_t nloo = 0;
	bool have_hat;

	f->fit_median = f->fit_max = f->loo_median = f->loo_max = NAN;
	if (!e)
		return -ENOMEM;
	have_hat = f->rank == k && n > k && hat_diagonal(a, n, k, h);
	for (size_t i = 0; i < n; i++) {
		double pred = orr_fit_eval(f, x + i * k);
		double r = relative ? 1.0 - pred / y[i] : y[i] - pred, loo = NAN;

		e[i] = fabs(pred / y[i] - 1.0);
		/*
		 * Left out: the residual grows by 1 / (1 - h_ii); in y's units when absolute.
		 * The errors overwrite h from the front, never ahead of the h_ii still to read.
		 */
		if (have_hat && h[i] < 1.0 - 1e-12) {
			loo = r / (1.0 - h[i]);
			loo = relative ? fabs(loo) : fabs(loo / y[i]);
			h[nloo++] = loo;
		}
		if (ret_loo)
			ret_loo[i] = loo;
	}
	orr__median_max(e, n, &f->fit_median, &f->fit_max);
	if (have_hat)
		orr__median_max(h, nloo, &f->loo_median, &f->loo_max);
	free(e);
	return 0;
}

int orr_fit_linear(const double *x, const double *y, size_t n, size_t k, bool relative,
		   struct orr_fit *ret, double *ret_loo)
{
	double scale[ORR_FIT_MAX_PARAMS], *a, *b, *sv;
	lapack_int rank = 0, info;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (k == 0 || k > ORR_FIT_MAX_PARAMS || n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(y[i]) || (relative && !(y[i] > 0)))
			return -EINVAL;
	for (size_t j = 0; j < k; j++) {
		scale[j] = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isfinite(x[i * k + j]))
				return -EINVAL;
			scale[j] =
				fmax(scale[j], fabs(x[i * k + j] * (relative ? 1.0 / y[i] : 1.0)));
		}
		if (scale[j] == 0)
			scale[j] = 1;
	}
	pthread_once(&lapacke_once, lapacke_load);
	if (!lapacke.loaded)
		return -ELIBACC;
	a = malloc((2 * n * k + (n > k ? n : k) + k) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	b = a + 2 * n * k;
	sv = b + (n > k ? n : k);
	for (size_t i = 0; i < n; i++) {
		design_row(x, y, i, k, relative, scale, a + i * k);
		b[i] = relative ? 1.0 : y[i];
	}
	/* dgelsd overwrites its matrix: keep the design for the hat diagonal. */
	memcpy(a + n * k, a, n * k * sizeof(*a));
	info = lapacke.dgelsd(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)k, 1, a + n * k,
			      (lapack_int)k, b, 1, sv, -1.0, &rank);
	if (info != 0) {
		r = info < 0 ? -EINVAL : -EDOM; /* EDOM: the SVD did not converge */
		goto out;
	}
	ret->nparams = k;
	ret->samples = n;
	ret->rank = (size_t)rank;
	ret->relative = relative;
	for (size_t j = 0; j < k; j++)
		ret->coef[j] = b[j] / scale[j];
	r = errors(x, y, n, k, relative, a, ret, ret_loo);
out:
	free(a);
	return r;
}

double orr_fit_eval(const struct orr_fit *f, const double *xrow)
{
	double s = 0;

	for (size_t j = 0; j < f->nparams; j++)
		s += f->coef[j] * xrow[j];
	return s;
}
