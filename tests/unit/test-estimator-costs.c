/* SPDX-License-Identifier: MIT */
/*
 * Costs files read back (orr_costs_read()): everything `orrery fit -o` fits, written as
 * it writes it (orr_rank_fit_run(), orr_rank_fit_write_json()), must come
 * back as models that predict every sample of the trace exactly as the fitted ones do,
 * the same number (to the bit: the file has every digit) and the same `how`.  On the
 * Megatron trace, every shared trace (GPU known and not, pooled fits, several bands),
 * the project's sample, and models fitted here on samples made to reach every branch:
 * pooled and roofline fallbacks, FLOP terms, many bands with a per-rank latency, a
 * collective that could not be fitted.  The files refused are in
 * test-estimator-costs-bad.c.
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

#include "orrery/estimator.h"
#include "orrery/analysis.h"
#include "test-util.h"
#include "costs-test.h"

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
		check_efficiency("memory", &a->efficiency_memory[d], &b->efficiency_memory[d]);
		check_fit("pooled", &a->pooled[d], &b->pooled[d]);
	}
	check_efficiency("all", &a->efficiency_all, &b->efficiency_all);
	/* the model of tiles and waves, bit for bit */
	assert_ptr_equal(a->tiles.gpu, b->tiles.gpu);
	for (int d = 0; d < ORR_DTYPE_COUNT; d++) {
		assert_int_equal(a->tiles.samples[d], b->tiles.samples[d]);
		assert_true(same(a->tiles.fixed_ns[d], b->tiles.fixed_ns[d]));
		assert_true(same(a->tiles.ns_per_ns[d], b->tiles.ns_per_ns[d]));
	}
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
static void check_coll_model(const struct orr_rank_fit_coll *a, const struct orr_coll_costs *b)
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
static void check_structure(const struct orr_rank_fit *f, const struct orr_costs *c)
{
	struct orr_named_value a[20], b[20];
	size_t n = orr_structure_values(&f->st, a);

	assert_int_equal(orr_structure_values(&c->st, b), n);
	assert_int_equal(f->st.fused_attention, c->st.fused_attention);
	assert_int_equal(f->st.gated_mlp, c->st.gated_mlp);
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
static void predict_graph(const struct orr_graph *g, const struct orr_rank_fit *f,
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
static void predict_coll(const struct orr_rank_fit_coll *a, const struct orr_coll_costs *b,
			 double bytes, int group, size_t i)
{
	double ta = orr_coll_model_time(&a->m, bytes, group);
	double tb = orr_coll_model_time(&b->m, bytes, group);

	check_time("collective sample", i, ta, ORR_GEMM_NONE, tb, ORR_GEMM_NONE);
}

/*
 * Every collective model of f and c alike, and predicting alike collectives of 0 B to
 * 16 GiB over 1 to 64 ranks.
 */
static void check_colls(const struct orr_rank_fit *f, const struct orr_costs *c)
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
static size_t predict_colls(const struct orr_graph *g, const struct orr_rank_fit *f,
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

/* ---- reading ---- */

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
static void check_models(const struct orr_rank_fit *f, const struct orr_costs *c)
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
	struct orr_rank_fit f;
	struct orr_diag d;
	char *file = orr_xasprintf("%s.costs.json", name), *path, *text;
	size_t len;

	if (orr_graph_build(t, NULL, &g, &d))
		fail_msg("%s: %s", name, d.msg);
	orr_rank_fit_run(g, 0, name, NULL, 0, &f);
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
	orr_rank_fit_release(&f);
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

/* The models fitted here, for gpu, read back from a buffer; how each predicted, by how. */
static void synthetic_round_trip(const struct orr_gpu_spec *gpu, size_t *gemm_how, size_t *kern_how)
{
	struct orr_gemm_sample gs[12];
	struct orr_kern_sample ks[22];
	struct orr_costs c;
	struct orr_diag d;
	struct orr_rank_fit f;
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
	orr_rank_fit_release(&f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_costs_synthetic_no_gpu),
		cmocka_unit_test(test_costs_synthetic_h100),
		cmocka_unit_test_setup_teardown(test_costs_tiny_2rank, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_megatron_tp8, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_every_shared_trace, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
