/* SPDX-License-Identifier: MIT */
/*
 * Costs files read back (orr_costs_read()): everything `orrery fit -o` fits, written as
 * it writes it (cli/fit-report.c and cli/fit-json.c, built into this test), must come
 * back as models that predict every sample of the trace exactly as the fitted ones do,
 * the same number (to the bit: the file has every digit) and the same `how`.  On the
 * Megatron trace, every shared trace (GPU known and not, pooled fits, several bands),
 * the project's sample, and models fitted here on samples made to reach every branch:
 * pooled and roofline fallbacks, FLOP terms, many bands with a per-rank latency, a
 * collective that could not be fitted.  Then files that are not costs files, each
 * refused with the error and the key in its message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "orrery/estimator.h"
#include "../../cli/fit.h"
#include "test-util.h"

/* ---- comparing ---- */

/* Equal to the bit but for NaN's sign and payload. */
static bool same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* Equal within what "%.6g" keeps: the errors the file reports to six digits. */
static bool close6(double a, double b)
{
	return same(a, b) || fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b));
}

/* Two predictions of one sample: the same time and the same how. */
static void check_time(const char *what, size_t i, double a, enum orr_gemm_how ha, double b,
		       enum orr_gemm_how hb)
{
	if (!same(a, b) || ha != hb)
		fail_msg("%s %zu: fitted %.17g (%s), read back %.17g (%s)", what, i, a,
			 orr_gemm_how_name(ha), b, orr_gemm_how_name(hb));
}

/* Two fits: the same coefficients, to the bit; errors to six digits. */
static void check_fit(const char *what, const struct orr_fit *a, const struct orr_fit *b)
{
	if (a->nparams != b->nparams || a->samples != b->samples || a->rank != b->rank ||
	    a->relative != b->relative)
		fail_msg("%s: the fit's shape differs", what);
	for (size_t i = 0; i < a->nparams; i++)
		if (!same(a->coef[i], b->coef[i]))
			fail_msg("%s: coef[%zu] %.17g, read back %.17g", what, i, a->coef[i],
				 b->coef[i]);
	if (!close6(a->fit_median, b->fit_median) || !close6(a->fit_max, b->fit_max) ||
	    !close6(a->loo_median, b->loo_median) || !close6(a->loo_max, b->loo_max))
		fail_msg("%s: the fit's errors differ", what);
}

/* Two median efficiencies: the same median, samples and provenance. */
static void check_efficiency(const char *what, const struct orr_gemm_efficiency *a,
			     const struct orr_gemm_efficiency *b)
{
	if (!same(a->median, b->median) || a->samples != b->samples || a->fitted != b->fitted)
		fail_msg("%s: efficiency %.17g (%zu, %d), read back %.17g (%zu, %d)", what,
			 a->median, a->samples, a->fitted, b->median, b->samples, b->fitted);
}

/* The GEMM models, field by field where predictions read them. */
static void check_gemm_model(const struct orr_gemm_model *a, const struct orr_gemm_model *b)
{
	assert_ptr_equal(a->gpu, b->gpu);
	assert_int_equal(a->below_roofline, b->below_roofline);
	assert_int_equal(a->nclasses, b->nclasses);
	for (int d = 0; d < ORR_DTYPE_COUNT; d++) {
		check_efficiency(orr_dtype_name(d), &a->efficiency[d], &b->efficiency[d]);
		check_fit("pooled", &a->pooled[d], &b->pooled[d]);
	}
	check_efficiency("all", &a->efficiency_all, &b->efficiency_all);
	for (size_t i = 0; i < a->nclasses; i++) {
		const struct orr_gemm_class *x = &a->classes[i], *y = &b->classes[i];

		assert_int_equal(x->dtype, y->dtype);
		assert_string_equal(x->family, y->family);
		assert_string_equal(x->why, y->why);
		assert_int_equal(x->how, y->how);
		assert_int_equal(x->samples, y->samples);
		assert_int_equal(x->shapes, y->shapes);
		assert_int_equal(x->loso_shapes, y->loso_shapes);
		assert_true(close6(x->loso_median, y->loso_median));
		check_fit(x->family, &x->fit, &y->fit);
	}
	assert_int_equal(a->loso_predicted, b->loso_predicted);
	assert_true(close6(a->loso_median, b->loso_median));
}

/* The kernel models, likewise. */
static void check_kern_model(const struct orr_kern_model *a, const struct orr_kern_model *b)
{
	assert_ptr_equal(a->gpu, b->gpu);
	assert_true(same(a->floor_ns, b->floor_ns));
	assert_int_equal(a->below_roofline, b->below_roofline);
	assert_int_equal(a->nfamilies, b->nfamilies);
	for (int k = 0; k < ORR_KERN_CLASS_COUNT; k++) {
		check_efficiency(orr_kern_class_name(k), &a->efficiency[k], &b->efficiency[k]);
		check_fit("pooled", &a->pooled[k], &b->pooled[k]);
		assert_int_equal(a->classes[k].families, b->classes[k].families);
		assert_int_equal(a->classes[k].fitted, b->classes[k].fitted);
		assert_true(close6(a->classes[k].loso_max, b->classes[k].loso_max));
	}
	check_efficiency("all", &a->efficiency_all, &b->efficiency_all);
	for (size_t i = 0; i < a->nfamilies; i++) {
		const struct orr_kern_family *x = &a->families[i], *y = &b->families[i];

		assert_int_equal(x->cls, y->cls);
		assert_int_equal(x->dtype, y->dtype);
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->how, y->how);
		assert_int_equal(x->flops, y->flops);
		assert_int_equal(x->sizes, y->sizes);
		check_fit(x->name, &x->fit, &y->fit);
	}
}

/* A collective model fitted and the one read back, band by band. */
static void check_coll_model(const struct cli_fit_coll *a, const struct orr_coll_costs *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->link, b->link);
	assert_int_equal(a->err == 0, b->fitted);
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->coupled, b->coupled);
	assert_int_equal(a->group, b->group);
	assert_int_equal(a->m.nbands, b->m.nbands);
	if (a->err)
		return;
	assert_int_equal(a->m.samples, b->m.samples);
	assert_int_equal(a->m.per_rank_latency, b->m.per_rank_latency);
	assert_int_equal(a->m.constrained, b->m.constrained);
	for (size_t i = 0; i < a->m.nbands; i++) {
		const struct orr_coll_band *x = &a->m.bands[i], *y = &b->m.bands[i];

		assert_true(same(x->lo_bytes, y->lo_bytes) && same(x->hi_bytes, y->hi_bytes));
		assert_true(same(x->alpha_ns, y->alpha_ns));
		assert_true(same(x->alpha_rank_ns, y->alpha_rank_ns));
		assert_true(same(x->bus_bytes_per_s, y->bus_bytes_per_s));
		check_fit("band", &x->fit, &y->fit);
	}
}

/* The structure's values, the overlap, the device. */
static void check_structure(const struct cli_fit *f, const struct orr_costs *c)
{
	struct cli_named_value a[20], b[20];
	size_t n = cli_fit_structure_values(&f->st, a);

	assert_int_equal(cli_fit_structure_values(&c->st, b), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].v->value, b[i].v->value);
		assert_int_equal(a[i].v->how, b[i].v->how);
		assert_string_equal(a[i].v->why, b[i].v->why);
	}
	assert_int_equal(f->st.gated_mlp, c->st.gated_mlp);
	assert_int_equal(f->st.forward, c->st.forward);
	assert_int_equal(f->st.ncomms, c->st.ncomms);
	for (size_t i = 0; i < f->st.ncomms; i++) {
		assert_int_equal(f->st.comms[i].role, c->st.comms[i].role);
		assert_int_equal(f->st.comms[i].size, c->st.comms[i].size);
		assert_true(!f->st.comms[i].name == !c->st.comms[i].name);
		if (f->st.comms[i].name)
			assert_string_equal(f->st.comms[i].name, c->st.comms[i].name);
	}
	assert_true(same(f->overlap.slowdown, c->overlap.slowdown));
	assert_int_equal(f->overlap.names, c->overlap.names);
	assert_ptr_equal(f->gpu, c->gpu);
	assert_int_equal(f->rank, c->rank);
	assert_string_equal(f->trace, c->trace);
}

/* ---- predicting ---- */

/* A model of GEMMs or of other kernels, for predict(). */
struct kind {
	const char *what;
	size_t size; /* of a sample */
	double (*time)(const void *m, const void *q, enum orr_gemm_how *ret_how);
	/* Round r's variation of sample q: r + 1 times larger, of an unknown family in round 2. */
	void (*vary)(void *q, size_t r);
};

static double gemm_time(const void *m, const void *q, enum orr_gemm_how *ret_how)
{
	return orr_gemm_model_time(m, q, ret_how);
}

static void gemm_vary(void *p, size_t r)
{
	struct orr_gemm_sample *q = p;

	q->flops *= (double)(1 + r);
	q->bytes *= (double)(1 + r);
	if (r == 2)
		snprintf(q->family, sizeof(q->family), "unknown_gemm");
}

static double kern_time(const void *m, const void *q, enum orr_gemm_how *ret_how)
{
	return orr_kern_model_time(m, q, ret_how);
}

static void kern_vary(void *p, size_t r)
{
	struct orr_kern_sample *q = p;

	q->bytes *= (double)(1 + r);
	if (r == 2)
		snprintf(q->family, sizeof(q->family), "unknown_kernel");
}

static const struct kind gemm_kind = { "GEMM sample", sizeof(struct orr_gemm_sample), gemm_time,
				       gemm_vary };
static const struct kind kern_kind = { "kernel sample", sizeof(struct orr_kern_sample), kern_time,
				       kern_vary };

/*
 * Samples s[0..n) of kind k, in `rounds` variations, by models a and b: the same time and
 * the same how.  by_how, when not NULL, counts a's hows.
 */
static void predict(const struct kind *k, const void *a, const void *b, const void *s, size_t n,
		    size_t rounds, size_t *by_how)
{
	for (size_t i = 0; i < rounds * n; i++) {
		union {
			struct orr_gemm_sample g;
			struct orr_kern_sample k;
		} q;
		enum orr_gemm_how ha, hb;
		double ta, tb;

		memcpy(&q, (const char *)s + i % n * k->size, k->size);
		k->vary(&q, i / n);
		ta = k->time(a, &q, &ha);
		tb = k->time(b, &q, &hb);
		check_time(k->what, i, ta, ha, tb, hb);
		if (by_how)
			by_how[ha]++;
	}
}

struct counts {
	size_t gemms, kernels, colls;
};

/* Every GEMM and kernel sample of g by the models fitted and read back; how many. */
static void predict_graph(const struct orr_graph *g, const struct cli_fit *f,
			  const struct orr_costs *c, struct counts *n)
{
	struct orr_gemm_sample *gs;
	struct orr_kern_sample *ks;

	n->gemms = orr_gemm_observe(g, &gs, NULL);
	n->kernels = orr_kern_observe(g, &ks, NULL);
	if (!f->gemm_err)
		predict(&gemm_kind, &f->gemm, &c->gemm, gs, n->gemms, 1, NULL);
	if (!f->kern_err)
		predict(&kern_kind, &f->kern, &c->kern, ks, n->kernels, 1, NULL);
	free(ks);
	free(gs);
}

/* The collective model of (kind, link) in c; fails when there is none. */
static const struct orr_coll_costs *coll_of(const struct orr_costs *c, enum orr_coll_kind kind,
					    enum orr_link link)
{
	for (size_t i = 0; i < c->ncoll; i++)
		if (c->coll[i].kind == kind && c->coll[i].link == link)
			return &c->coll[i];
	fail_msg("no %s model read back", orr_coll_kind_name(kind));
	return NULL;
}

/* A collective of bytes over group ranks, by a model fitted and the one read back. */
static void predict_coll(const struct cli_fit_coll *a, const struct orr_coll_costs *b, double bytes,
			 int group, size_t i)
{
	double ta = orr_coll_model_time(&a->m, bytes, group);
	double tb = orr_coll_model_time(&b->m, bytes, group);

	check_time("collective sample", i, ta, ORR_GEMM_NONE, tb, ORR_GEMM_NONE);
}

/*
 * Every collective model of f and c alike, and predicting alike collectives of 0 B to
 * 16 GiB over 1 to 64 ranks.
 */
static void check_colls(const struct cli_fit *f, const struct orr_costs *c)
{
	size_t i = 0;

	assert_int_equal(f->ncoll, c->ncoll);
	for (size_t j = 0; j < f->ncoll; j++) {
		const struct orr_coll_costs *b = coll_of(c, f->coll[j].kind, f->coll[j].link);

		check_coll_model(&f->coll[j], b);
		for (int e = -1; e <= 34; e++)
			for (int g = 1; g <= 64; g *= 2)
				predict_coll(&f->coll[j], b, e < 0 ? 0 : ldexp(1.37, e), g, i++);
	}
}

/* Every collective sample of g, by f's models and c's; how many. */
static size_t predict_colls(const struct orr_graph *g, const struct cli_fit *f,
			    const struct orr_costs *c)
{
	struct orr_coll_obs *o;
	size_t n = orr_coll_observe(g, &o);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < f->ncoll; j++)
			if (f->coll[j].kind == o[i].kind && f->coll[j].link == o[i].link)
				predict_coll(&f->coll[j], coll_of(c, o[i].kind, o[i].link),
					     o[i].s.bytes, o[i].s.group, i);
	free(o);
	return n;
}

/* ---- writing and reading ---- */

/* The text of cli_fit_json(f) (free()). */
static char *costs_text(const struct cli_fit *f, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	cli_fit_json(f, out);
	assert_int_equal(fclose(out), 0);
	*ret_len = len;
	return buf;
}

/* DIR/NAME holding text[0..len), written as orrery writes its outputs; the path (free()). */
static char *write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	struct orr_outfile out;

	assert_int_equal(orr_outfile_open(&out, path, 0), 0);
	assert_non_null(orr_outfile_stream(&out));
	assert_int_equal(fwrite(text, 1, len, orr_outfile_stream(&out)), len);
	assert_int_equal(orr_outfile_commit(&out, false), 0);
	return path;
}

/* Reads path, failing the test with the diagnostic. */
static void read_costs(const char *path, struct orr_costs *c)
{
	struct orr_diag d;
	int r = orr_costs_read(path, c, &d);

	if (r)
		fail_msg("%s: %s: %s", path, orr_errname(r), d.msg);
	assert_int_equal(c->version, ORR_COSTS_VERSION);
}

/* The models of f written and read back, the same as f's. */
static void check_models(const struct cli_fit *f, const struct orr_costs *c)
{
	assert_int_equal(c->gemm_fitted, f->gemm_err == 0);
	assert_int_equal(c->kern_fitted, f->kern_err == 0);
	check_structure(f, c);
	if (!f->gemm_err)
		check_gemm_model(&f->gemm, &c->gemm);
	if (!f->kern_err)
		check_kern_model(&f->kern, &c->kern);
}

/* Fits g as orrery fit does, writes, reads back, and predicts every sample both ways. */
static struct counts round_trip(struct orr_trace *t, const char *dir, const char *name)
{
	struct counts n = { 0 };
	struct orr_graph *g;
	struct orr_costs c;
	struct cli_fit f;
	struct orr_diag d;
	char *file = orr_xasprintf("%s.costs.json", name), *path, *text;
	size_t len;

	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s: %s", name, d.msg);
	cli_fit_run(g, 0, name, &f);
	text = costs_text(&f, &len);
	path = write_file(dir, file, text, len);
	read_costs(path, &c);
	check_models(&f, &c);
	check_colls(&f, &c);
	predict_graph(g, &f, &c, &n);
	n.colls = predict_colls(g, &f, &c);
	fprintf(stderr, "%s: %zu GEMM, %zu kernel and %zu collective samples predicted alike\n",
		name, n.gemms, n.kernels, n.colls);
	orr_costs_release(&c);
	cli_fit_release(&f);
	orr_graph_free(g);
	free(text);
	free(path);
	free(file);
	return n;
}

/* The Megatron TP=8 trace: GEMMs fitted and falling back, kernels, all-reduces. */
static void test_costs_megatron_tp8(void **state)
{
	struct orr_trace *t = import_shared("astrasim-megatron-tp8");
	struct counts n = round_trip(t, *state, "astrasim-megatron-tp8");

	assert_true(n.gemms > 1000);
	assert_true(n.kernels > 100);
	assert_true(n.colls > 50);
	orr_trace_free(t);
}

/* for_each_shared_trace()'s callback. */
static void each_trace(struct orr_trace *t, const char *name, void *data)
{
	round_trip(t, data, name);
}

/* Every shared trace: GPUs known and not, pooled fits, two bands, empty models. */
static void test_costs_every_shared_trace(void **state)
{
	assert_true(for_each_shared_trace(each_trace, *state) > 1);
}

/* The project's own sample (traces/samples/tiny-2rank): roofline fallbacks. */
static void test_costs_tiny_2rank(void **state)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *path = orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
	struct orr_trace *t = NULL;
	struct orr_diag d;
	struct counts n;

	if (orr_trace_import(path, NULL, &t, &d))
		fail_msg("%s: %s", path, d.msg);
	n = round_trip(t, *state, "tiny-2rank");
	assert_true(n.kernels > 0 && n.colls > 0);
	orr_trace_free(t);
	free(path);
}

/* ---- models fitted here, to reach every branch ---- */

/* A time near a + b·FLOP + c·bytes, off by a few per cent, so that fits are not exact. */
static double noisy(double flops, double bytes, size_t i)
{
	return (3000 + flops / 150e3 + bytes / 1500) * (1 + 0.03 * sin((double)i));
}

/*
 * GEMMs: a class fitted on four shapes, a bf16 class of one shape (pooled without a GPU,
 * roofline with one), an fp32 class on TF32 tensor cores of one shape (none without a
 * GPU: its dtype has too few shapes).
 */
static size_t synthetic_gemms(struct orr_gemm_sample *s)
{
	static const struct {
		const char *family;
		enum orr_dtype dtype, math;
		int64_t m, n, k;
	} g[] = {
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 512, 1024, 256 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 1024, 1024, 512 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 2048, 512, 1024 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 4096, 4096, 1024 },
		{ "cutlass_b", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 256, 256, 256 },
		{ "volta_sgemm", ORR_DTYPE_FP32, ORR_DTYPE_TF32, 128, 128, 128 },
	};
	size_t n = 0;

	for (size_t i = 0; i < 2 * sizeof(g) / sizeof(g[0]); i++, n++) {
		size_t j = i % (sizeof(g) / sizeof(g[0]));
		int eb = g[j].dtype == ORR_DTYPE_FP32 ? 4 : 2;

		memset(&s[n], 0, sizeof(s[n]));
		snprintf(s[n].family, sizeof(s[n].family), "%s", g[j].family);
		s[n].op = "aten::mm";
		s[n].dtype = g[j].dtype;
		s[n].math = g[j].math;
		s[n].elem_bytes = eb;
		s[n].batch = 1;
		s[n].m = g[j].m;
		s[n].n = g[j].n;
		s[n].k = g[j].k;
		s[n].flops = 2.0 * (double)(g[j].m * g[j].n * g[j].k);
		s[n].bytes = eb * (double)(g[j].m * g[j].k + g[j].k * g[j].n + g[j].m * g[j].n);
		s[n].ns = noisy(s[n].flops, s[n].bytes, i);
		s[n].kernels = 1;
	}
	return n;
}

/*
 * Other kernels: a norm family fitted on bytes, an attention family fitted with FLOPs,
 * an elementwise family fitted and one of one size (pooled, or the roofline), and a
 * copy with no dtype.
 */
static size_t synthetic_kernels(struct orr_kern_sample *s)
{
	static const struct {
		enum orr_kern_class cls;
		const char *family;
		enum orr_dtype dtype;
		double bytes, flops;
	} k[] = {
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 1 << 20, 0 },
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 4 << 20, 0 },
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 16 << 20, 0 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 8 << 20, 3e10 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 16 << 20, 1.2e11 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 32 << 20, 4.8e11 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 2 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 8 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 64 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "add", ORR_DTYPE_BF16, 3 << 20, 0 },
		{ ORR_KERN_COPY, "Memcpy DtoD (Device -> Device)", ORR_DTYPE_COUNT, 1 << 16, 0 },
	};
	size_t n = 0;

	for (size_t i = 0; i < 2 * sizeof(k) / sizeof(k[0]); i++, n++) {
		size_t j = i % (sizeof(k) / sizeof(k[0]));

		memset(&s[n], 0, sizeof(s[n]));
		snprintf(s[n].family, sizeof(s[n].family), "%s", k[j].family);
		s[n].cls = k[j].cls;
		s[n].dtype = k[j].dtype;
		s[n].bytes = k[j].bytes;
		s[n].flops = k[j].flops;
		s[n].ns = noisy(k[j].flops, k[j].bytes, i);
		s[n].kernels = 1;
	}
	return n;
}

/*
 * Collectives: all-reduces over 2, 4 and 8 ranks of 1 KiB to 1 GiB (several bands, a
 * per-rank latency), all-gathers over 16 (one band), and send/recv that did not fit.
 */
static void synthetic_colls(struct cli_fit *f)
{
	struct orr_coll_sample ar[33], ag[8];
	size_t n = 0;

	f->coll = orr_xcalloc(3, sizeof(*f->coll));
	f->ncoll = 3;
	for (int g = 2; g <= 8; g *= 2)
		for (int e = 10; e <= 30; e += 2, n++)
			ar[n] = (struct orr_coll_sample){
				ldexp(1, e), g, noisy(0, ldexp(1, e) * 2, n) / 10 + g * 700
			};
	for (int i = 0; i < 8; i++)
		ag[i] = (struct orr_coll_sample){ ldexp(3, 16 + 2 * i), 16,
						  noisy(0, ldexp(3, 16 + 2 * i), (size_t)i) / 40 };
	f->coll[0] = (struct cli_fit_coll){ .kind = ORR_COLL_ALL_REDUCE,
					    .link = ORR_LINK_NODE,
					    .samples = n,
					    .coupled = n,
					    .sizes = 11,
					    .groups = 3,
					    .median_bytes = ldexp(1, 20),
					    .median_ns = 12345.5,
					    .median_bus_bytes_per_s = 1.5e11,
					    .group = 4 };
	f->coll[0].err = orr_coll_model_fit(ORR_COLL_ALL_REDUCE, ar, n, &f->coll[0].m);
	f->coll[1] = (struct cli_fit_coll){ .kind = ORR_COLL_ALL_GATHER,
					    .link = ORR_LINK_NETWORK,
					    .samples = 8,
					    .coupled = 8,
					    .sizes = 8,
					    .groups = 1,
					    .group = 16 };
	f->coll[1].err = orr_coll_model_fit(ORR_COLL_ALL_GATHER, ag, 8, &f->coll[1].m);
	f->coll[2] = (struct cli_fit_coll){ .kind = ORR_COLL_SEND_RECV,
					    .samples = 1,
					    .from_alone = true,
					    .err = -EINVAL,
					    .group = 2 };
	f->coll[2].m.kind = ORR_COLL_SEND_RECV;
	assert_int_equal(f->coll[0].err, 0);
	assert_int_equal(f->coll[1].err, 0);
	assert_true(f->coll[0].m.nbands > 1 && f->coll[0].m.per_rank_latency);
}

/* A structure with some values read, the others unknown, and a named communicator. */
static void synthetic_structure(struct orr_structure *st)
{
	struct cli_named_value v[20];
	size_t n = cli_fit_structure_values(st, v);

	for (size_t i = 0; i < n; i++) {
		struct orr_value *x = (struct orr_value *)v[i].v;

		snprintf(x->why, sizeof(x->why), "unknown \"%s\" here", v[i].name);
	}
	st->rank = 3;
	st->forward = st->optimizer = st->gated_mlp = true;
	st->layers = (struct orr_value){ 4, ORR_VALUE_READ, "read, \\ and \x01 escaped" };
	st->tp = (struct orr_value){ 8, ORR_VALUE_INFERRED, "inferred" };
	st->ncomms = 2;
	st->comms[0] = (struct orr_comm_role){ .name = "tp-group",
					       .desc = "tensor parallel",
					       .size = 8,
					       .collectives = 81,
					       .role = ORR_PAR_TP,
					       .how = ORR_VALUE_READ,
					       .why = "its description" };
	st->comms[1] = (struct orr_comm_role){ .size = -1, .why = "nothing tells" };
}

/* Everything fitted on the samples above, for gpu (may be NULL); cli_fit_release(). */
static void synthetic_fit(const struct orr_gpu_spec *gpu, struct cli_fit *f)
{
	struct orr_gemm_sample gs[12];
	struct orr_kern_sample ks[22];

	memset(f, 0, sizeof(*f));
	f->trace = "synthetic";
	f->rank = 3;
	f->device = gpu ? "NVIDIA H100 80GB HBM3" : NULL;
	f->gpu = gpu;
	synthetic_structure(&f->st);
	f->overlap = (struct orr_overlap){ 100, 10, 3, 40, 1.0123456789012345, 1.001, 1.2 };
	f->gemm_err = orr_gemm_model_fit(gs, synthetic_gemms(gs), gpu, &f->gemm);
	f->kern_err = orr_kern_model_fit(ks, synthetic_kernels(ks), gpu, &f->kern);
	assert_int_equal(f->gemm_err, 0);
	assert_int_equal(f->kern_err, 0);
	synthetic_colls(f);
}

/* The models fitted here, for gpu, read back from a buffer; how each predicted, by how. */
static void synthetic_round_trip(const struct orr_gpu_spec *gpu, size_t *gemm_how, size_t *kern_how)
{
	struct orr_gemm_sample gs[12];
	struct orr_kern_sample ks[22];
	struct orr_costs c;
	struct orr_diag d;
	struct cli_fit f;
	size_t len;
	char *text;
	int r;

	synthetic_fit(gpu, &f);
	text = costs_text(&f, &len);
	r = orr_costs_read_buffer("synthetic.json", text, len, &c, &d);
	if (r)
		fail_msg("%s: %s", orr_errname(r), d.msg);
	check_models(&f, &c);
	assert_string_equal(c.st.comms[0].desc, "tensor parallel");
	assert_null(c.st.comms[1].name);
	assert_true(!gpu == !c.device);
	predict(&gemm_kind, &f.gemm, &c.gemm, gs, synthetic_gemms(gs), 3, gemm_how);
	predict(&kern_kind, &f.kern, &c.kern, ks, synthetic_kernels(ks), 3, kern_how);
	check_colls(&f, &c);
	orr_costs_release(&c);
	cli_fit_release(&f);
	free(text);
}

/* Without a GPU: fits, pooled fits and none. */
static void test_costs_synthetic_no_gpu(void **state)
{
	size_t gemm[4] = { 0 }, kern[4] = { 0 };

	(void)state;
	synthetic_round_trip(NULL, gemm, kern);
	assert_true(gemm[ORR_GEMM_FIT] && gemm[ORR_GEMM_POOLED] && gemm[ORR_GEMM_NONE]);
	assert_true(kern[ORR_GEMM_FIT] && kern[ORR_GEMM_POOLED] && kern[ORR_GEMM_NONE]);
}

/* On an H100: fits and roofline fallbacks. */
static void test_costs_synthetic_h100(void **state)
{
	size_t gemm[4] = { 0 }, kern[4] = { 0 };

	(void)state;
	synthetic_round_trip(orr_gpu_spec_by_id("h100-sxm"), gemm, kern);
	assert_true(gemm[ORR_GEMM_FIT] && gemm[ORR_GEMM_ROOFLINE]);
	assert_true(kern[ORR_GEMM_FIT] && kern[ORR_GEMM_ROOFLINE]);
}

/* ---- files that are no costs files ---- */

/* Reading path fails with err and a message holding want. */
static void expect_error(const char *path, int err, const char *want)
{
	struct orr_costs c;
	struct orr_diag d;
	int r = orr_costs_read(path, &c, &d);

	if (r != err || !strstr(d.msg, want))
		fail_msg("%s: %s (%s), expected %s with \"%s\"", path, orr_errname(r), d.msg,
			 orr_errname(err), want);
	assert_string_equal(d.file, path);
}

/*
 * The synthetic costs (with a GPU) with the first `from` after `anchor` made `to`; from
 * NULL: the first number.
 */
static char *edited(const char *anchor, const char *from, const char *to, size_t *ret_len)
{
	struct cli_fit f;
	size_t len;
	char *text, *at, *out;

	synthetic_fit(orr_gpu_spec_by_id("h100-sxm"), &f);
	text = costs_text(&f, &len);
	cli_fit_release(&f);
	at = strstr(text, anchor);
	assert_non_null(at);
	at = from ? strstr(at, from) : at + strcspn(at, "-0123456789");
	assert_true(at && *at);
	len = from ? strlen(from) : strspn(at, "-+.0123456789eE");
	out = orr_xasprintf("%.*s%s%s", (int)(at - text), text, to, at + len);
	*ret_len = strlen(out);
	free(text);
	return out;
}

/* The synthetic costs edited so, refused with err and a message holding want. */
static void expect_edit(const char *dir, const char *anchor, const char *from, const char *to,
			int err, const char *want)
{
	size_t len;
	char *text = edited(anchor, from, to, &len), *path;

	path = write_file(dir, "edited.json", text, len);
	expect_error(path, err, want);
	free(path);
	free(text);
}

/* A costs file with one value wrong: each refused, naming its key. */
static void test_costs_bad_values(void **state)
{
	const char *dir = *state;

	expect_edit(dir, "{", "\"orrery_costs\": 1", "\"orrery_costs\": 2", ORR_EFORMAT,
		    "key 'orrery_costs': version 2, this orrery reads version 1");
	expect_edit(dir, "\"gemm\"", "\"below_roofline\"", "\"below_roof\"", ORR_EMALFORMED,
		    "missing key 'gemm.below_roofline'");
	expect_edit(dir, "\"gemm\"", "\"fitted\": true", "\"fitted\": 1", ORR_EMALFORMED,
		    "key 'gemm.fitted': expected true or false, not a number");
	expect_edit(dir, "\"classes\"", "\"dtype\": \"bf16\"", "\"dtype\": \"bf17\"",
		    ORR_EMALFORMED, "key 'gemm.classes[1].dtype': unknown dtype 'bf17'");
	expect_edit(dir, "\"coef\"", "[", "[null, ", ORR_EMALFORMED,
		    "key 'gemm.classes[1].fit.coef': 4 coefficients, expected 2 or 3");
	expect_edit(dir, "\"coef\"", NULL, "null", ORR_EMALFORMED,
		    "key 'gemm.classes[1].fit.coef[0]': null (NaN) where a number is required");
	expect_edit(dir, "\"kernels\": {",
		    "\"efficiency_all\": ", "\"efficiency_all\": null, \"x\": ", ORR_EMALFORMED,
		    "key 'kernels.efficiency_all': null (NaN) where a number");
	expect_edit(dir, "\"bands\"",
		    "\"alpha_ns\": ", "\"alpha_ns\": \"1\", \"x\": ", ORR_EMALFORMED,
		    "key 'collectives[0].bands[0].alpha_ns': expected a number, not a string");
	expect_edit(dir, "\"device\"", "\"h100-sxm\"", "\"h900\"", ORR_EMALFORMED,
		    "key 'device.spec': unknown GPU 'h900'");
	expect_edit(dir, "\"collectives\": [", "\"AllReduce\"", "\"AllReduced\"", ORR_EMALFORMED,
		    "key 'collectives[0].kind': unknown collective kind 'AllReduced'");
	expect_edit(dir, "\"communicators\"", "\"size\": 8", "\"size\": -2", ORR_EMALFORMED,
		    "key 'structure.communicators[0].size': -2 is out of range");
	expect_edit(dir, "\"gemm\"",
		    "\"loso_shapes\": ", "\"loso_shapes\": -1, \"x\": ", ORR_EMALFORMED,
		    "key 'gemm.classes[0].loso_shapes': -1 is out of range");
}

/* Files that are no costs files at all. */
static void test_costs_bad_files(void **state)
{
	const char *dir = *state;
	size_t len;
	char *text = edited("", "", "", &len), *path;

	path = write_file(dir, "truncated.json", text, len / 2);
	expect_error(path, ORR_ETRUNCATED, "the JSON ends early");
	free(path);
	path = write_file(dir, "empty.json", "", 0);
	expect_error(path, ORR_EEMPTY, "empty");
	free(path);
	path = write_file(dir, "blank.json", " \n", 2);
	expect_error(path, ORR_EEMPTY, "no JSON value");
	free(path);
	path = write_file(dir, "syntax.json", "{\"orrery_costs\": 1,, }", 22);
	expect_error(path, ORR_EMALFORMED, "not JSON");
	free(path);
	path = write_file(dir, "array.json", "[1, 2]", 6);
	expect_error(path, ORR_EFORMAT, "not a costs file: expected an object, not an array");
	free(path);
	path = write_file(dir, "kineto.json", "{\"traceEvents\": []}", 19);
	expect_error(path, ORR_EFORMAT, "key 'orrery_costs': missing: not a costs file");
	free(path);
	expect_error(dir, -EINVAL, "not a regular file (a directory)");
	path = orr_xasprintf("%s/absent.json", dir);
	expect_error(path, -ENOENT, "cannot open");
	free(path);
	free(text);
}

/* Taken: a byte order mark, keys the reader does not know.  Not: a number past a double. */
static void test_costs_tolerated(void **state)
{
	const char *dir = *state;
	struct orr_costs c;
	struct orr_diag d;
	size_t len;
	char *text = edited("\"gemm\": {", "\"kernels\"", "\"later\": [{}], \"kernels\"", &len);
	char *bom = orr_xasprintf("\xef\xbb\xbf%s", text), *path;

	path = write_file(dir, "bom.json", bom, len + 3);
	if (orr_costs_read(path, &c, &d))
		fail_msg("%s", d.msg);
	assert_true(c.gemm_fitted && c.gemm.nclasses == 3 && c.ncoll == 3);
	orr_costs_release(&c);
	free(path);
	free(bom);
	free(text);
	expect_edit(dir, "\"bands\"",
		    "\"alpha_ns\": ", "\"alpha_ns\": 1e999, \"x\": ", ORR_EMALFORMED, "not JSON");
}

/* A file past ORR_COSTS_MAX_BYTES (sparse: nothing is written) is refused unread. */
static void test_costs_too_big(void **state)
{
	char *path = write_file(*state, "big.json", "{", 1);

	assert_int_equal(truncate(path, (off_t)ORR_COSTS_MAX_BYTES + 1), 0);
	expect_error(path, ORR_ETOOBIG, "more than the 256 MiB a costs file may have");
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_costs_synthetic_no_gpu),
		cmocka_unit_test(test_costs_synthetic_h100),
		cmocka_unit_test_setup_teardown(test_costs_bad_values, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_bad_files, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_too_big, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_tolerated, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_tiny_2rank, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_megatron_tp8, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_every_shared_trace, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
