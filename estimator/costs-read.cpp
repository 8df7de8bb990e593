/* SPDX-License-Identifier: MIT */
/*
 * Costs files (docs/orrery-fit.md), written by `orrery fit -o`, back into the models
 * that fit made: orr_costs_read().  C++ only for simdjson's DOM API, used through its
 * error codes; nothing here throws, and std::bad_alloc from simdjson is caught at the
 * C boundary (fatal, as orr_xmalloc() is).
 *
 * A costs file is small (kilobytes to a few megabytes), so it is parsed whole and read
 * by key, in any order.  Every value the models' _time() functions read is checked:
 * its type, its range (counts not negative, coefficients finite, 2 or 3 of them, names
 * this orrery knows), so that whatever a file holds, the models read back are ones the
 * fits could have made.  Errors name the key as a path ("gemm.classes[2].fit.coef[1]");
 * simdjson gives no offset of a syntax error, so only a file cut short gets one (its
 * end).
 */
#include <simdjson.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

using namespace simdjson;
using std::string_view;

namespace {

/* What is being read, and where in it: path is the key being read, for messages. */
struct reader {
	const char *name;
	struct orr_diag *diag;
	struct orr_costs *c;
	int err; /* the first failure's code */
	char path[256];
	size_t len;
};

/* Appends ".key" (or "[i]") to r's path while it lives. */
struct at {
	reader &r;
	size_t old;

	at(reader &rd, const char *key) : r(rd), old(rd.len)
	{
		push(r.len ? "." : "", key);
	}
	at(reader &rd, size_t i) : r(rd), old(rd.len)
	{
		char buf[32];

		snprintf(buf, sizeof(buf), "[%zu]", i);
		push("", buf);
	}
	~at()
	{
		r.len = old;
		r.path[old] = '\0';
	}
	void push(const char *sep, const char *s)
	{
		int n = snprintf(r.path + r.len, sizeof(r.path) - r.len, "%s%s", sep, s);

		if (n > 0)
			r.len = std::min(r.len + (size_t)n, sizeof(r.path) - 1);
	}
};

/*
 * Fails with "key 'PATH.key': MESSAGE" (key NULL: the path itself; just the message at
 * the top); returns false.
 */
__attribute__((format(printf, 4, 5))) bool fail(reader &r, int err, const char *key,
						const char *fmt, ...)
{
	char msg[512], where[sizeof(r.path) + 64] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key || r.len)
		snprintf(where, sizeof(where), "key '%s%s%s': ", r.path, key && r.len ? "." : "",
			 key ? key : "");
	r.err = orr_diag_set(r.diag, err, r.name, -1, -1, "%s%s", where, msg);
	return false;
}

/* What a value is, for messages: "an array", "null"... */
const char *type_name(dom::element_type t)
{
	switch (t) {
	case dom::element_type::ARRAY:
		return "an array";
	case dom::element_type::OBJECT:
		return "an object";
	case dom::element_type::STRING:
		return "a string";
	case dom::element_type::BOOL:
		return "a boolean";
	case dom::element_type::NULL_VALUE:
		return "null";
	default:
		return "a number";
	}
}

/* Fails because v is not what was expected. */
bool wrong_type(reader &r, const char *key, dom::element v, const char *expected)
{
	return fail(r, ORR_EMALFORMED, key, "expected %s, not %s", expected, type_name(v.type()));
}

/* o[key]; a failure when it is missing. */
bool field(reader &r, dom::object o, const char *key, dom::element *ret)
{
	if (o[key].get(*ret) == SUCCESS)
		return true;
	r.err = orr_diag_set(r.diag, ORR_EMALFORMED, r.name, -1, -1, "missing key '%s%s%s'", r.path,
			     r.len ? "." : "", key);
	return false;
}

/* o[key], an object. */
bool object(reader &r, dom::object o, const char *key, dom::object *ret)
{
	dom::element v;

	if (!field(r, o, key, &v))
		return false;
	return v.get_object().get(*ret) == SUCCESS || wrong_type(r, key, v, "an object");
}

/* o[key], an array. */
bool array(reader &r, dom::object o, const char *key, dom::array *ret)
{
	dom::element v;

	if (!field(r, o, key, &v))
		return false;
	return v.get_array().get(*ret) == SUCCESS || wrong_type(r, key, v, "an array");
}

/* An array element that must be an object. */
bool element_object(reader &r, dom::element v, dom::object *ret)
{
	return v.get_object().get(*ret) == SUCCESS || wrong_type(r, NULL, v, "an object");
}

/* o[key], true or false. */
bool boolean(reader &r, dom::object o, const char *key, bool *ret)
{
	dom::element v;

	if (!field(r, o, key, &v))
		return false;
	return v.get_bool().get(*ret) == SUCCESS || wrong_type(r, key, v, "true or false");
}

/* A string; with nullable, null gives an empty view whose data() is NULL. */
bool string(reader &r, dom::object o, const char *key, bool nullable, string_view *ret)
{
	dom::element v;

	if (!field(r, o, key, &v))
		return false;
	if (nullable && v.is_null()) {
		*ret = string_view();
		return true;
	}
	return v.get_string().get(*ret) == SUCCESS || wrong_type(r, key, v, "a string");
}

/* An integer in [lo, hi]. */
bool integer(reader &r, dom::object o, const char *key, int64_t lo, int64_t hi, int64_t *ret)
{
	dom::element v;

	if (!field(r, o, key, &v))
		return false;
	if (v.get_int64().get(*ret) != SUCCESS)
		return wrong_type(r, key, v, "an integer");
	if (*ret < lo || *ret > hi)
		return fail(r, ORR_EMALFORMED, key, "%lld is out of range [%lld, %lld]",
			    (long long)*ret, (long long)lo, (long long)hi);
	return true;
}

/* A count: an integer, 0 or more. */
bool count(reader &r, dom::object o, const char *key, size_t *ret)
{
	int64_t x;

	if (!integer(r, o, key, 0, INT64_MAX, &x))
		return false;
	*ret = (size_t)x;
	return true;
}

/* A number, element v of key; with nullable, null is NAN (JSON's way to write it). */
bool as_number(reader &r, dom::element v, const char *key, bool nullable, double *ret)
{
	if (v.is_null()) {
		*ret = NAN;
		return nullable ||
		       fail(r, ORR_EMALFORMED, key, "null (NaN) where a number is required");
	}
	if (v.get_double().get(*ret) != SUCCESS)
		return wrong_type(r, key, v, "a number");
	return std::isfinite(*ret) || fail(r, ORR_EMALFORMED, key, "%g is out of range", *ret);
}

/* o[key], a number (as_number()). */
bool number(reader &r, dom::object o, const char *key, bool nullable, double *ret)
{
	dom::element v;

	return field(r, o, key, &v) && as_number(r, v, key, nullable, ret);
}

/* The value of E named s by name(), among 0..n-1; false when none is. */
template <typename E> bool enum_named(string_view s, const char *(*name)(E), int n, E *ret)
{
	for (int i = 0; i < n; i++) {
		const char *it = name((E)i);

		if (it && s == it) {
			*ret = (E)i;
			return true;
		}
	}
	return false;
}

/* A name of E (what: "dtype", "class"...), among 0..n-1. */
template <typename E>
bool named(reader &r, dom::object o, const char *key, const char *(*name)(E), int n,
	   const char *what, E *ret)
{
	string_view s;

	if (!string(r, o, key, false, &s))
		return false;
	if (enum_named(s, name, n, ret))
		return true;
	return fail(r, ORR_EMALFORMED, key, "unknown %s '%.*s'", what,
		    (int)std::min<size_t>(s.size(), 64), s.data());
}

/* A copy of s into buf (size bytes), cut short where it does not fit, as fit cuts names. */
void copy(char *buf, size_t size, string_view s)
{
	size_t n = std::min(s.size(), size - 1);

	memcpy(buf, s.data(), n);
	buf[n] = '\0';
}

/* s as a C string owned by the costs; NULL for a null view. */
const char *keep(reader &r, string_view s)
{
	if (!s.data())
		return NULL;
	return orr_strtab_get(r.c->strings, orr_strtab_intern(r.c->strings, s.data(), s.size()));
}

/* The hardware table's entry named by key (null: none). */
bool gpu_spec(reader &r, dom::object o, const char *key, const struct orr_gpu_spec **ret)
{
	string_view s;
	char id[64];

	if (!string(r, o, key, true, &s))
		return false;
	*ret = NULL;
	if (!s.data())
		return true;
	copy(id, sizeof(id), s);
	*ret = s.size() < sizeof(id) ? orr_gpu_spec_by_id(id) : NULL;
	return *ret ||
	       fail(r, ORR_EMALFORMED, key, "unknown GPU '%s' (not in the hardware table)", id);
}

/* ---- fits and efficiencies ---- */

/* The coefficients: 2 or 3 finite numbers, as the models' fits have. */
bool coefficients(reader &r, dom::object o, struct orr_fit *f)
{
	dom::array a;
	size_t i = 0;

	if (!array(r, o, "coef", &a))
		return false;
	if (a.size() < 2 || a.size() > 3)
		return fail(r, ORR_EMALFORMED, "coef", "%zu coefficients, expected 2 or 3",
			    a.size());
	at k(r, "coef");
	for (dom::element v : a) {
		at e(r, i);

		if (!as_number(r, v, NULL, false, &f->coef[i++]))
			return false;
	}
	f->nparams = i;
	return true;
}

/* o[key], a least-squares fit. */
bool fit(reader &r, dom::object o, const char *key, struct orr_fit *f)
{
	dom::object p;

	memset(f, 0, sizeof(*f));
	if (!object(r, o, key, &p))
		return false;
	at k(r, key);
	return count(r, p, "samples", &f->samples) && count(r, p, "rank", &f->rank) &&
	       boolean(r, p, "relative", &f->relative) && coefficients(r, p, f) &&
	       number(r, p, "fit_median", true, &f->fit_median) &&
	       number(r, p, "fit_max", true, &f->fit_max) &&
	       number(r, p, "loo_median", true, &f->loo_median) &&
	       number(r, p, "loo_max", true, &f->loo_max);
}

/* An efficiency from three keys: its median (required with samples), samples, fitted. */
bool efficiency(reader &r, dom::object o, const char *const keys[3], struct orr_gemm_efficiency *e)
{
	if (!number(r, o, keys[0], true, &e->median) || !count(r, o, keys[1], &e->samples) ||
	    !boolean(r, o, keys[2], &e->fitted))
		return false;
	return !e->samples || std::isfinite(e->median) ||
	       fail(r, ORR_EMALFORMED, keys[0], "null (NaN) where a number is required");
}

const char *const efficiency_all_keys[3] = { "efficiency_all", "efficiency_all_samples",
					     "efficiency_all_fitted" };

/* The fits and error summaries every unit (a class, a family) has after its names. */
bool unit_fit(reader &r, dom::object o, enum orr_gemm_how how, struct orr_fit *f)
{
	if (how == ORR_GEMM_FIT)
		return fit(r, o, "fit", f);
	memset(f, 0, sizeof(*f));
	f->fit_median = f->fit_max = f->loo_median = f->loo_max = NAN;
	return true;
}

/* Each element of a (at key) through fn(r, element object, i). */
template <typename F> bool each(reader &r, dom::array a, const char *key, F fn)
{
	size_t i = 0;

	at k(r, key);
	for (dom::element v : a) {
		at e(r, i);
		dom::object o;

		if (!element_object(r, v, &o) || !fn(o, i++))
			return false;
	}
	return true;
}

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
	return count(r, o, "loso_shapes", &k->loso_shapes) &&
	       number(r, o, "loso_median", true, &k->loso_median) &&
	       number(r, o, "loso_max", true, &k->loso_max);
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

/* An empty GEMM model, as orr_gemm_model_fit() starts one. */
void gemm_init(struct orr_gemm_model *m)
{
	memset(m, 0, sizeof(*m));
	m->loso_median = m->loso_max = NAN;
	for (int d = 0; d < ORR_DTYPE_COUNT; d++)
		m->efficiency[d].median = NAN;
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
	       efficiency(r, o, efficiency_all_keys, &m->efficiency_all) && gemm_units(r, o, m) &&
	       count(r, o, "loso_predicted", &m->loso_predicted) &&
	       number(r, o, "loso_median", true, &m->loso_median) &&
	       number(r, o, "loso_max", true, &m->loso_max);
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
	return count(r, o, "loso_sizes", &f->loso_sizes) &&
	       number(r, o, "loso_median", true, &f->loso_median) &&
	       number(r, o, "loso_max", true, &f->loso_max);
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
	       number(r, o, "loso_median", true, &s->loso_median) &&
	       number(r, o, "loso_max", true, &s->loso_max);
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
	return gpu_spec(r, o, "spec", &m->gpu) && number(r, o, "floor_ns", true, &m->floor_ns) &&
	       count(r, o, "below_roofline", &m->below_roofline) && kern_units(r, o, m) &&
	       efficiency(r, o, efficiency_all_keys, &m->efficiency_all) &&
	       count(r, o, "loso_predicted", &m->loso_predicted) &&
	       number(r, o, "loso_median", true, &m->loso_median) &&
	       number(r, o, "loso_max", true, &m->loso_max);
}

/* ---- collectives ---- */

/* One band of sizes; no upper end is null. */
bool band(reader &r, dom::object o, struct orr_coll_band *b)
{
	if (!number(r, o, "lo_bytes", false, &b->lo_bytes) ||
	    !number(r, o, "hi_bytes", true, &b->hi_bytes) ||
	    !number(r, o, "alpha_ns", false, &b->alpha_ns) ||
	    !number(r, o, "alpha_rank_ns", false, &b->alpha_rank_ns) ||
	    !number(r, o, "bus_bytes_per_s", false, &b->bus_bytes_per_s) ||
	    !fit(r, o, "fit", &b->fit))
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
	    !number(r, o, "fit_median", true, &m->fit_median) ||
	    !number(r, o, "fit_max", true, &m->fit_max) ||
	    !number(r, o, "loo_median", true, &m->loo_median) ||
	    !number(r, o, "loo_max", true, &m->loo_max) || !array(r, o, "bands", &a))
		return false;
	if (a.size() > ORR_COLL_MAX_BANDS)
		return fail(r, ORR_EMALFORMED, "bands", "%zu bands, more than %d", a.size(),
			    ORR_COLL_MAX_BANDS);
	m->nbands = a.size();
	return each(r, a, "bands", [&](dom::object e, size_t i) {
		if (!band(r, e, &m->bands[i]))
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
	if (!number(r, o, "median_bytes", true, &cc->median_bytes) ||
	    !number(r, o, "median_ns", true, &cc->median_ns) ||
	    !integer(r, o, "group", INT32_MIN, INT32_MAX, &group) ||
	    !number(r, o, "bus_bytes_per_s", true, &cc->measured_bus_bytes_per_s) ||
	    !number(r, o, "spec_bytes_per_s", true, &cc->spec_bytes_per_s))
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

/* ---- the structure, the overlap, the top ---- */

/* A value of the structure: null (0) when unknown, how and why. */
bool value(reader &r, dom::object top, const char *key, struct orr_value *v)
{
	dom::object o;
	dom::element x;
	string_view why;

	if (!object(r, top, key, &o))
		return false;
	at k(r, key);
	if (!field(r, o, "value", &x) ||
	    (!x.is_null() && !integer(r, o, "value", INT64_MIN, INT64_MAX, &v->value)) ||
	    !named(r, o, "how", orr_value_how_name, ORR_VALUE_INFERRED + 1, "how", &v->how) ||
	    !string(r, o, "why", false, &why))
		return false;
	copy(v->why, sizeof(v->why), why);
	return true;
}

/* A communicator and its role; name and desc when the trace gave them. */
bool communicator(reader &r, dom::object o, struct orr_comm_role *c)
{
	string_view name, desc, why;
	int64_t size;

	if ((o["name"].error() != NO_SUCH_FIELD && !string(r, o, "name", false, &name)) ||
	    (o["desc"].error() != NO_SUCH_FIELD && !string(r, o, "desc", false, &desc)) ||
	    !integer(r, o, "size", -1, INT32_MAX, &size) ||
	    !count(r, o, "collectives", &c->collectives) ||
	    !named(r, o, "role", orr_par_name, ORR_PAR_COUNT, "role", &c->role) ||
	    !named(r, o, "how", orr_value_how_name, ORR_VALUE_INFERRED + 1, "how", &c->how) ||
	    !string(r, o, "why", false, &why))
		return false;
	c->name = keep(r, name);
	c->desc = keep(r, desc);
	c->size = (int32_t)size;
	copy(c->why, sizeof(c->why), why);
	return true;
}

/* The phases of a step seen. */
bool phases(reader &r, dom::object o, struct orr_structure *st)
{
	dom::object p;

	if (!object(r, o, "phases", &p))
		return false;
	at k(r, "phases");
	return boolean(r, p, "forward", &st->forward) && boolean(r, p, "backward", &st->backward) &&
	       boolean(r, p, "optimizer", &st->optimizer) &&
	       boolean(r, p, "data_loading", &st->data_loading);
}

/* The communicators: at most ORR_MAX_COMM_ROLES. */
bool communicators(reader &r, dom::object o, struct orr_structure *st)
{
	dom::array a;

	if (!array(r, o, "communicators", &a))
		return false;
	if (a.size() > ORR_MAX_COMM_ROLES)
		return fail(r, ORR_EMALFORMED, "communicators", "%zu, more than %d", a.size(),
			    ORR_MAX_COMM_ROLES);
	st->ncomms = a.size();
	return each(r, a, "communicators", [&](dom::object e, size_t i) {
		return communicator(r, e, &st->comms[i]);
	});
}

/* "structure": the rank, its phases, its communicators, and every value. */
bool structure(reader &r, dom::object top)
{
	static const struct {
		const char *key;
		struct orr_value orr_structure::*v;
	} values[] = {
		{ "layers", &orr_structure::layers },
		{ "hidden", &orr_structure::hidden },
		{ "heads", &orr_structure::heads },
		{ "head_dim", &orr_structure::head_dim },
		{ "kv_groups", &orr_structure::kv_groups },
		{ "ffn", &orr_structure::ffn },
		{ "vocab", &orr_structure::vocab },
		{ "seq", &orr_structure::seq },
		{ "micro_batch", &orr_structure::micro_batch },
		{ "tokens", &orr_structure::tokens },
		{ "micro_batches", &orr_structure::micro_batches },
		{ "tp", &orr_structure::tp },
		{ "pp", &orr_structure::pp },
		{ "dp", &orr_structure::dp },
		{ "world", &orr_structure::world },
		{ "annotated_layers", &orr_structure::annotated_layers },
		{ "repeats", &orr_structure::repeats },
	};
	struct orr_structure *st = &r.c->st;
	dom::object o;
	int64_t rank;

	if (!object(r, top, "structure", &o))
		return false;
	at k(r, "structure");
	if (!integer(r, o, "rank", INT32_MIN, INT32_MAX, &rank) ||
	    !boolean(r, o, "gated_mlp", &st->gated_mlp) ||
	    !count(r, o, "repeat_kernels", &st->repeat_kernels) || !phases(r, o, st) ||
	    !communicators(r, o, st))
		return false;
	st->rank = (int32_t)rank;
	for (const auto &v : values)
		if (!value(r, o, v.key, &(st->*v.v)))
			return false;
	return true;
}

/* "overlap": the slowdown null, and so 0, when no name was compared. */
bool overlap(reader &r, dom::object top)
{
	struct orr_overlap *ov = &r.c->overlap;
	dom::object o;

	if (!object(r, top, "overlap", &o))
		return false;
	at k(r, "overlap");
	if (!count(r, o, "kernels", &ov->kernels) || !count(r, o, "overlapped", &ov->overlapped) ||
	    !count(r, o, "names", &ov->names) ||
	    !count(r, o, "kernels_compared", &ov->kernels_compared) ||
	    !number(r, o, "slowdown", !ov->names, &ov->slowdown) ||
	    !number(r, o, "slowdown_min", !ov->names, &ov->slowdown_min) ||
	    !number(r, o, "slowdown_max", !ov->names, &ov->slowdown_max))
		return false;
	if (!ov->names) /* as orr_overlap_slowdown() leaves them */
		ov->slowdown = ov->slowdown_min = ov->slowdown_max = 0;
	return true;
}

/* "launch", which older files lack: the launch threads' time per step, NAN unknown. */
bool launch(reader &r, dom::object top)
{
	dom::object o;

	r.c->launch_step_ns = NAN;
	if (top["launch"].error() == NO_SUCH_FIELD)
		return true;
	if (!object(r, top, "launch", &o))
		return false;
	at k(r, "launch");
	return number(r, o, "step_ns", true, &r.c->launch_step_ns);
}

/* The version first: a file of another version is refused before anything else. */
bool version(reader &r, dom::element root, dom::object *ret)
{
	dom::element v;
	int64_t x;

	if (root.get_object().get(*ret) != SUCCESS)
		return fail(r, ORR_EFORMAT, NULL, "not a costs file: expected an object, not %s",
			    type_name(root.type()));
	if ((*ret)["orrery_costs"].get(v) != SUCCESS)
		return fail(r, ORR_EFORMAT, "orrery_costs",
			    "missing: not a costs file (orrery fit -o writes them)");
	if (v.get_int64().get(x) != SUCCESS)
		return wrong_type(r, "orrery_costs", v, "an integer");
	if (x != ORR_COSTS_VERSION)
		return fail(r, ORR_EFORMAT, "orrery_costs",
			    "version %lld, this orrery reads version %d", (long long)x,
			    ORR_COSTS_VERSION);
	r.c->version = (int)x;
	return true;
}

/* The trace, the rank and its device. */
bool header(reader &r, dom::object top)
{
	string_view trace, device;
	dom::object d;
	int64_t rank;

	if (!string(r, top, "trace", false, &trace) ||
	    !integer(r, top, "rank", INT32_MIN, INT32_MAX, &rank) || !object(r, top, "device", &d))
		return false;
	r.c->trace = keep(r, trace);
	r.c->rank = (int32_t)rank;
	at k(r, "device");
	if (d["name"].error() != NO_SUCH_FIELD) {
		if (!string(r, d, "name", false, &device))
			return false;
		r.c->device = keep(r, device);
	}
	return d["spec"].error() == NO_SUCH_FIELD || gpu_spec(r, d, "spec", &r.c->gpu);
}

/* The whole file, in the order the writer writes it. */
bool costs(reader &r, dom::element root)
{
	dom::object top;

	return version(r, root, &top) && header(r, top) && structure(r, top) && overlap(r, top) &&
	       launch(r, top) && gemm(r, top) && kernels(r, top) && collectives(r, top);
}

/* ---- the text ---- */

/* Whether buf[0..len) ends inside a string, an object or an array: a file cut short. */
bool ends_early(const char *buf, size_t len)
{
	size_t depth = 0;
	bool in_string = false, escaped = false;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_string) {
			if (escaped)
				escaped = false;
			else if (ch == '\\')
				escaped = true;
			else if (ch == '"')
				in_string = false;
		} else if (ch == '"') {
			in_string = true;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if ((ch == '}' || ch == ']') && depth) {
			depth--;
		}
	}
	return in_string || depth;
}

/* Why simdjson refused buf[0..len), as a code and a message. */
int not_json(reader &r, error_code e, const char *buf, size_t len)
{
	if (e == EMPTY)
		return orr_diag_set(r.diag, ORR_EEMPTY, r.name, -1, -1, "no JSON value");
	if (e == MEMALLOC)
		return orr_diag_set(r.diag, -ENOMEM, r.name, -1, -1, "cannot parse");
	if (ends_early(buf, len))
		return orr_diag_set(r.diag, ORR_ETRUNCATED, r.name, (int64_t)len, -1,
				    "the JSON ends early (a file cut short?)");
	return orr_diag_set(r.diag, ORR_EMALFORMED, r.name, -1, -1, "not JSON: %s",
			    error_message(e));
}

/* Parses buf[0..len), followed by SIMDJSON_PADDING readable bytes, into *c. */
int parse(const char *name, const char *buf, size_t len, struct orr_costs *c, struct orr_diag *diag)
{
	reader r = { name, diag, c, 0, "", 0 };
	dom::parser parser;
	dom::element root;
	error_code e;
	size_t bom;

	if (len > ORR_COSTS_MAX_BYTES)
		return orr_diag_set(diag, ORR_ETOOBIG, name, -1, -1,
				    "%zu bytes, more than the %u MiB a costs file may have", len,
				    ORR_COSTS_MAX_BYTES >> 20);
	/* A UTF-8 byte order mark, as some editors write, as the trace importers allow. */
	bom = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	e = parser.parse((const uint8_t *)buf + bom, len - bom, false).get(root);
	if (e != SUCCESS)
		return not_json(r, e, buf, len);
	c->strings = orr_strtab_new();
	if (costs(r, root))
		return 0;
	assert(r.err < 0); /* every failure goes through fail() or field() */
	return r.err;
}

/* The regular file at path, whole, with SIMDJSON_PADDING bytes after it (free()). */
int slurp(const char *path, char **ret, size_t *ret_len, struct orr_diag *diag)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r = 0;
	struct stat st;
	size_t len = 0;
	char *buf;

	if (fd < 0)
		return orr_diag_set(diag, -errno, path, -1, -1, "cannot open");
	if (fstat(fd, &st) < 0)
		r = orr_diag_set(diag, -errno, path, -1, -1, "cannot open");
	else if (!S_ISREG(st.st_mode))
		r = orr_diag_set(diag, -EINVAL, path, -1, -1, "not a regular file%s",
				 S_ISDIR(st.st_mode) ? " (a directory)" : "");
	else if ((uint64_t)st.st_size > ORR_COSTS_MAX_BYTES)
		r = orr_diag_set(diag, ORR_ETOOBIG, path, -1, -1,
				 "%lld bytes, more than the %u MiB a costs file may have",
				 (long long)st.st_size, ORR_COSTS_MAX_BYTES >> 20);
	if (r) {
		close(fd);
		return r;
	}
	buf = (char *)orr_xmalloc((size_t)st.st_size + SIMDJSON_PADDING);
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = orr_diag_set(diag, -errno, path, (int64_t)len, -1, "cannot read");
		if (n <= 0)
			break; /* a file that shrank is read as it now is */
		len += (size_t)n;
	}
	close(fd);
	if (r) {
		free(buf);
		return r;
	}
	memset(buf + len, 0, SIMDJSON_PADDING);
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* Parses, and frees what it made when that fails. */
int read_costs(const char *name, const char *buf, size_t len, struct orr_costs *ret,
	       struct orr_diag *diag)
{
	struct orr_costs c;
	int r;

	memset(&c, 0, sizeof(c));
	if (!len)
		return orr_diag_set(diag, ORR_EEMPTY, name, -1, -1, "the file is empty");
	r = parse(name, buf, len, &c, diag);
	if (r) {
		orr_costs_release(&c);
		return r;
	}
	orr_diag_clear(diag);
	*ret = c;
	return 0;
}

} /* namespace */

/* A copy of buf with simdjson's padding after it, parsed. */
extern "C" int orr_costs_read_buffer(const char *name, const char *buf, size_t len,
				     struct orr_costs *ret, struct orr_diag *reterr_diag)
{
	char *copy = NULL;
	int r;

	try {
		if (len <= ORR_COSTS_MAX_BYTES) {
			copy = (char *)orr_xmalloc(len + SIMDJSON_PADDING);
			if (len)
				memcpy(copy, buf, len);
			memset(copy + len, 0, SIMDJSON_PADDING);
		}
		r = read_costs(name, copy, len, ret, reterr_diag);
	} catch (const std::bad_alloc &) {
		fprintf(stderr, "orrery: out of memory\n");
		exit(1);
	}
	free(copy);
	return r;
}

/* The file read whole (slurp()), then parsed. */
extern "C" int orr_costs_read(const char *path, struct orr_costs *ret, struct orr_diag *reterr_diag)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	try {
		r = slurp(path, &buf, &len, reterr_diag);
		if (!r) {
			r = read_costs(path, buf, len, ret, reterr_diag);
			free(buf);
		}
	} catch (const std::bad_alloc &) {
		fprintf(stderr, "orrery: out of memory\n");
		exit(1);
	}
	return r;
}

/* Everything read, freed; c left empty. */
extern "C" void orr_costs_release(struct orr_costs *c)
{
	if (!c)
		return;
	orr_gemm_model_release(&c->gemm);
	orr_kern_model_release(&c->kern);
	free(c->coll);
	orr_strtab_free(c->strings);
	memset(c, 0, sizeof(*c));
}
