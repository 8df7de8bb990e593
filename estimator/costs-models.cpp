/* SPDX-License-Identifier: MIT */
/*
 * A costs file's models read back (docs/orrery-fit.md): the GEMM model's classes and
 * efficiencies, the other kernels' families and classes, the collectives' bands, each
 * as fit made it, so that their _time() functions predict as they did.
 */
#include <cmath>
#include <cstring>

#include "costs-json.h"

namespace orr__costs {

/* ---- the GEMM model ---- */

/* One class of the GEMM model: its names, its fit or fallback, its errors. */
bool gemm_class(reader &r, dom::object o, struct orr_gemm_class *k)
{
	string_view family, why;

	k->loso_median = k->loso_max = NAN;
	if (!named(r, o, "dtype", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &k->dtype) ||
	    !string(r, o, "family", false, &family) || !count(r, o, "samples", &k->samples) ||
	    !count(r, o, "shapes", &k->shapes) ||
	    !named(r, o, "how", orr_gemm_how_name, ORR_GEMM_POOLED + 1, "how", &k->how) ||
	    !string(r, o, "why", false, &why) || !unit_fit(r, o, k->how, &k->fit))
		return false;
	copy(k->family, sizeof(k->family), family);
	copy(k->why, sizeof(k->why), why);
	if (k->how == ORR_GEMM_FIT &&
	    (!copy_of(r, o, "a_ns", k->fit.coef[0], "fit.coef[0]") ||
	     !copy_of(r, o, "ns_per_flop", k->fit.coef[1], "fit.coef[1]") ||
	     !copy_of(r, o, "ns_per_byte", k->fit.coef[2], "fit.coef[2]")))
		return false;
	return count(r, o, "loso_shapes", &k->loso_shapes) &&
	       ranged(r, o, "loso_median", true, error_range, &k->loso_median) &&
	       ranged(r, o, "loso_max", true, error_range, &k->loso_max);
}

/* gemm.efficiency: one per math dtype with samples. */
bool gemm_efficiency(reader &r, dom::object o, struct orr_gemm_model *m)
{
	static const char *const keys[3] = { "median", "samples", "fitted" };
	dom::array a;

	return array(r, o, "efficiency", &a) &&
	       each(r, a, "efficiency", [&](dom::object e, size_t) {
		       enum orr_dtype d;

		       return named(r, e, "math", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &d) &&
			      efficiency(r, e, keys, &m->efficiency[d]);
	       });
}

/*
 * gemm.efficiency_memory: one per math with bandwidth-bound samples; absent from a costs
 * file written before it (none then).
 */
bool gemm_efficiency_memory(reader &r, dom::object o, struct orr_gemm_model *m)
{
	dom::element v;
	dom::array a;

	if (o["efficiency_memory"].get(v) != SUCCESS)
		return true;
	if (v.get_array().get(a) != SUCCESS)
		return wrong_type(r, "efficiency_memory", v, "an array");
	return each(r, a, "efficiency_memory", [&](dom::object e, size_t) {
		enum orr_dtype d;
		struct orr_gemm_efficiency *x;

		if (!named(r, e, "math", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &d))
			return false;
		x = &m->efficiency_memory[d];
		return count(r, e, "samples", &x->samples) &&
		       ranged(r, e, "median", false, efficiency_range, &x->median);
	});
}

/* gemm.classes and gemm.pooled. */
bool gemm_units(reader &r, dom::object o, struct orr_gemm_model *m)
{
	dom::array a, p;

	if (!array(r, o, "classes", &a) || !array(r, o, "pooled", &p))
		return false;
	m->classes = (struct orr_gemm_class *)orr_xcalloc(a.size() + 1, sizeof(*m->classes));
	m->nclasses = a.size();
	return each(r, a, "classes",
		    [&](dom::object e, size_t i) {
			    return gemm_class(r, e, &m->classes[i]);
		    }) &&
	       each(r, p, "pooled", [&](dom::object e, size_t) {
		       enum orr_dtype d;

		       return named(r, e, "dtype", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &d) &&
			      fit(r, e, "fit", &m->pooled[d]);
	       });
}

/*
 * gemm.tiles, the model of tiles and waves per math (absent from costs files written
 * before it: none).  Its GPU is the model's.
 */
bool gemm_tiles(reader &r, dom::object o, struct orr_gemm_model *m)
{
	dom::element v;
	dom::array a;

	if (o["tiles"].get(v) != SUCCESS)
		return true;
	if (v.get_array().get(a) != SUCCESS)
		return wrong_type(r, "tiles", v, "an array");
	if (a.size() && (!m->gpu || m->gpu->sms <= 0))
		return fail(r, ORR_EMALFORMED, "tiles",
			    "a model of tiles without a GPU whose SMs are known");
	m->tiles.gpu = a.size() ? m->gpu : NULL;
	return each(r, a, "tiles", [&](dom::object e, size_t) {
		enum orr_dtype d;

		return named(r, e, "math", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &d) &&
		       count(r, e, "samples", &m->tiles.samples[d]) &&
		       ranged(r, e, "fixed_ns", false, time_range, &m->tiles.fixed_ns[d]) &&
		       ranged(r, e, "ns_per_ns", false, ratio_range, &m->tiles.ns_per_ns[d]);
	});
}

/* An empty GEMM model, as orr_gemm_model_fit() starts one. */
void gemm_init(struct orr_gemm_model *m)
{
	memset(m, 0, sizeof(*m));
	m->loso_median = m->loso_max = NAN;
	for (int d = 0; d < ORR_DTYPE_COUNT; d++)
		m->efficiency[d].median = m->efficiency_memory[d].median = NAN;
	m->efficiency_all.median = NAN;
}

/* "gemm": the GEMM model, empty when it was not fitted. */
bool gemm(reader &r, dom::object top)
{
	struct orr_gemm_model *m = &r.c->gemm;
	dom::object o;

	gemm_init(m);
	if (!object(r, top, "gemm", &o))
		return false;
	at k(r, "gemm");
	if (!boolean(r, o, "fitted", &r.c->gemm_fitted))
		return false;
	if (!r.c->gemm_fitted)
		return true;
	return gpu_spec(r, o, "spec", &m->gpu) &&
	       count(r, o, "below_roofline", &m->below_roofline) && gemm_efficiency(r, o, m) &&
	       gemm_efficiency_memory(r, o, m) &&
	       efficiency(r, o, efficiency_all_keys, &m->efficiency_all) && gemm_units(r, o, m) &&
	       gemm_tiles(r, o, m) && count(r, o, "loso_predicted", &m->loso_predicted) &&
	       ranged(r, o, "loso_median", true, error_range, &m->loso_median) &&
	       ranged(r, o, "loso_max", true, error_range, &m->loso_max);
}

/* ---- the model of the other kernels ---- */

/* One family of the kernel model; its dtype null when no floating type. */
bool kern_family(reader &r, dom::object o, struct orr_kern_family *f)
{
	string_view family, why;
	dom::element dtype;

	f->loso_median = f->loso_max = NAN;
	f->dtype = ORR_DTYPE_COUNT;
	if (!named(r, o, "class", orr_kern_class_name, ORR_KERN_CLASS_COUNT, "class", &f->cls) ||
	    !field(r, o, "dtype", &dtype) ||
	    (!dtype.is_null() &&
	     !named(r, o, "dtype", orr_dtype_name, ORR_DTYPE_COUNT, "dtype", &f->dtype)) ||
	    !string(r, o, "family", false, &family) || !count(r, o, "samples", &f->samples) ||
	    !count(r, o, "sizes", &f->sizes) || !boolean(r, o, "flops", &f->flops) ||
	    !named(r, o, "how", orr_gemm_how_name, ORR_GEMM_POOLED + 1, "how", &f->how) ||
	    !string(r, o, "why", false, &why) || !unit_fit(r, o, f->how, &f->fit))
		return false;
	copy(f->name, sizeof(f->name), family);
	copy(f->why, sizeof(f->why), why);
	if (f->how == ORR_GEMM_FIT &&
	    (!copy_of(r, o, "a_ns", f->fit.coef[0], "fit.coef[0]") ||
	     !copy_of(r, o, "ns_per_flop", f->flops ? f->fit.coef[1] : 0, "fit.coef[1]") ||
	     !copy_of(r, o, "ns_per_byte", f->fit.coef[f->flops ? 2 : 1],
		      f->flops ? "fit.coef[2]" : "fit.coef[1]")))
		return false;
	return count(r, o, "loso_sizes", &f->loso_sizes) &&
	       ranged(r, o, "loso_median", true, error_range, &f->loso_median) &&
	       ranged(r, o, "loso_max", true, error_range, &f->loso_max);
}

/* kernels.classes: per class, its summary and its efficiency. */
bool kern_class(reader &r, dom::object o, struct orr_kern_model *m)
{
	static const char *const keys[3] = { "efficiency", "efficiency_samples",
					     "efficiency_fitted" };
	enum orr_kern_class k;
	struct orr_kern_class_summary *s;

	if (!named(r, o, "class", orr_kern_class_name, ORR_KERN_CLASS_COUNT, "class", &k))
		return false;
	s = &m->classes[k];
	return count(r, o, "samples", &s->samples) && count(r, o, "sizes", &s->sizes) &&
	       count(r, o, "families", &s->families) &&
	       count(r, o, "fitted_families", &s->fitted) &&
	       efficiency(r, o, keys, &m->efficiency[k]) &&
	       count(r, o, "loso_sizes", &s->loso_sizes) &&
	       ranged(r, o, "loso_median", true, error_range, &s->loso_median) &&
	       ranged(r, o, "loso_max", true, error_range, &s->loso_max);
}

/* kernels.classes, kernels.families and kernels.pooled. */
bool kern_units(reader &r, dom::object o, struct orr_kern_model *m)
{
	dom::array c, a, p;

	if (!array(r, o, "classes", &c) || !array(r, o, "families", &a) ||
	    !array(r, o, "pooled", &p))
		return false;
	m->families = (struct orr_kern_family *)orr_xcalloc(a.size() + 1, sizeof(*m->families));
	m->nfamilies = a.size();
	return each(r, c, "classes",
		    [&](dom::object e, size_t) {
			    return kern_class(r, e, m);
		    }) &&
	       each(r, a, "families",
		    [&](dom::object e, size_t i) {
			    return kern_family(r, e, &m->families[i]);
		    }) &&
	       each(r, p, "pooled", [&](dom::object e, size_t) {
		       enum orr_kern_class k;

		       return named(r, e, "class", orr_kern_class_name, ORR_KERN_CLASS_COUNT,
				    "class", &k) &&
			      fit(r, e, "fit", &m->pooled[k]);
	       });
}

/* An empty kernel model, as orr_kern_model_fit() starts one. */
void kern_init(struct orr_kern_model *m)
{
	memset(m, 0, sizeof(*m));
	m->floor_ns = m->loso_median = m->loso_max = NAN;
	for (int k = 0; k < ORR_KERN_CLASS_COUNT; k++) {
		m->classes[k].loso_median = m->classes[k].loso_max = NAN;
		m->efficiency[k].median = NAN;
	}
	m->efficiency_all.median = NAN;
}

/* "kernels": the model of the other kernels, empty when it was not fitted. */
bool kernels(reader &r, dom::object top)
{
	struct orr_kern_model *m = &r.c->kern;
	dom::object o;

	kern_init(m);
	if (!object(r, top, "kernels", &o))
		return false;
	at k(r, "kernels");
	if (!boolean(r, o, "fitted", &r.c->kern_fitted))
		return false;
	if (!r.c->kern_fitted)
		return true;
	return gpu_spec(r, o, "spec", &m->gpu) &&
	       ranged(r, o, "floor_ns", true, floor_range, &m->floor_ns) &&
	       count(r, o, "below_roofline", &m->below_roofline) && kern_units(r, o, m) &&
	       efficiency(r, o, efficiency_all_keys, &m->efficiency_all) &&
	       count(r, o, "loso_predicted", &m->loso_predicted) &&
	       ranged(r, o, "loso_median", true, error_range, &m->loso_median) &&
	       ranged(r, o, "loso_max", true, error_range, &m->loso_max);
}

/* ---- collectives ---- */

/* A band's value read as key, equal to the fit's, which it copies (collective.c). */
bool band_copy(reader &r, const char *key, double v, double want, const char *of)
{
	return v == want || fail(r, ORR_EMALFORMED, key,
				 "%.17g is not what the band's fit gives, %.17g (%s)", v, want, of);
}

/*
 * One band of sizes; no upper end is null.  α, α per rank and the bus bandwidth are
 * the fit's coefficients as orr_coll_model_fit() derives them (orr__coll_band_derive()),
 * so a file whose copies disagree is refused.
 */
bool band(reader &r, dom::object o, bool per_rank, struct orr_coll_band *b)
{
	size_t k = per_rank ? 3 : 2;
	struct orr_coll_band d;

	if (!ranged(r, o, "lo_bytes", false, bytes_range, &b->lo_bytes) ||
	    !ranged(r, o, "hi_bytes", true, bytes_range, &b->hi_bytes) ||
	    !number(r, o, "alpha_ns", false, &b->alpha_ns) ||
	    !number(r, o, "alpha_rank_ns", false, &b->alpha_rank_ns) ||
	    !number(r, o, "bus_bytes_per_s", false, &b->bus_bytes_per_s) ||
	    !fit(r, o, "fit", &b->fit))
		return false;
	if (b->hi_bytes <= b->lo_bytes)
		return fail(r, ORR_EMALFORMED, "hi_bytes", "%g is not above lo_bytes, %g",
			    b->hi_bytes, b->lo_bytes);
	if (b->fit.nparams != k)
		return fail(r, ORR_EMALFORMED, "fit",
			    "%zu coefficients, %zu with%s per_rank_latency", b->fit.nparams, k,
			    per_rank ? "" : "out");
	d = *b;
	orr__coll_band_derive(&d, per_rank);
	if (!band_copy(r, "alpha_ns", b->alpha_ns, d.alpha_ns, "fit.coef[0]") ||
	    !band_copy(r, "alpha_rank_ns", b->alpha_rank_ns, d.alpha_rank_ns,
		       per_rank ? "fit.coef[1]" : "0 without per_rank_latency") ||
	    !band_copy(r, "bus_bytes_per_s", b->bus_bytes_per_s, d.bus_bytes_per_s,
		       "1e9 over its last coefficient"))
		return false;
	if (std::isnan(b->hi_bytes))
		b->hi_bytes = INFINITY;
	return true;
}

/* The model of a collective object: its bands, and its errors over them. */
bool coll_model(reader &r, dom::object o, struct orr_coll_model *m)
{
	dom::array a;

	if (!boolean(r, o, "constrained", &m->constrained) ||
	    !boolean(r, o, "per_rank_latency", &m->per_rank_latency) ||
	    !ranged(r, o, "fit_median", true, error_range, &m->fit_median) ||
	    !ranged(r, o, "fit_max", true, error_range, &m->fit_max) ||
	    !ranged(r, o, "loo_median", true, error_range, &m->loo_median) ||
	    !ranged(r, o, "loo_max", true, error_range, &m->loo_max) || !array(r, o, "bands", &a))
		return false;
	if (a.size() > ORR_COLL_MAX_BANDS)
		return fail(r, ORR_EMALFORMED, "bands", "%zu bands, more than %d", a.size(),
			    ORR_COLL_MAX_BANDS);
	m->nbands = a.size();
	return each(r, a, "bands", [&](dom::object e, size_t i) {
		if (!band(r, e, m->per_rank_latency, &m->bands[i]))
			return false;
		m->samples += m->bands[i].fit.samples; /* the bands share the samples out */
		return true;
	});
}

/* What was measured of the collectives of one kind and link. */
bool measured(reader &r, dom::object top, struct orr_coll_costs *cc)
{
	dom::object o;
	int64_t group;

	if (!object(r, top, "measured", &o))
		return false;
	at k(r, "measured");
	if (!ranged(r, o, "median_bytes", true, bytes_range, &cc->median_bytes) ||
	    !ranged(r, o, "median_ns", true, time_range, &cc->median_ns) ||
	    !integer(r, o, "group", 0, INT32_MAX, &group) ||
	    !ranged(r, o, "bus_bytes_per_s", true, bus_range, &cc->measured_bus_bytes_per_s) ||
	    !ranged(r, o, "spec_bytes_per_s", true, bus_range, &cc->spec_bytes_per_s))
		return false;
	cc->group = (int)group;
	return true;
}

/* The collectives of one kind and link: what was measured, and their model. */
bool collective(reader &r, dom::object o, struct orr_coll_costs *cc)
{
	if (!named(r, o, "kind", orr_coll_kind_name, ORR_COLL_KIND_COUNT, "collective kind",
		   &cc->kind) ||
	    !named(r, o, "link", orr_link_name, ORR_LINK_NETWORK + 1, "link", &cc->link) ||
	    !count(r, o, "samples", &cc->samples) || !count(r, o, "coupled", &cc->coupled) ||
	    !count(r, o, "sized_by_caller", &cc->sized_by_caller) ||
	    !count(r, o, "sizes", &cc->sizes) || !count(r, o, "group_sizes", &cc->group_sizes) ||
	    !boolean(r, o, "from_alone", &cc->from_alone) || !measured(r, o, cc) ||
	    !boolean(r, o, "fitted", &cc->fitted))
		return false;
	cc->m.kind = cc->kind;
	return coll_model(r, o, &cc->m);
}

/* "collectives": one per kind and link class. */
bool collectives(reader &r, dom::object top)
{
	dom::array a;

	if (!array(r, top, "collectives", &a))
		return false;
	r.c->coll = (struct orr_coll_costs *)orr_xcalloc(a.size() + 1, sizeof(*r.c->coll));
	r.c->ncoll = a.size();
	return each(r, a, "collectives", [&](dom::object e, size_t i) {
		return collective(r, e, &r.c->coll[i]);
	});
}

} /* namespace orr__costs */
