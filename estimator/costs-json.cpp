/* SPDX-License-Identifier: MIT */
/*
 * The costs reader's typed getters (costs-json.h): each checks a value's type and range
 * and, failing, names its key as a path ("gemm.classes[2].fit.coef[1]").
 */
#include <cmath>
#include <cstdarg>
#include <cstring>

#include "costs-json.h"

namespace orr__costs {

/*
 * Fails with "key 'PATH.key': MESSAGE" (key NULL: the path itself; just the message at
 * the top); returns false.
 */
bool fail(reader &r, int err, const char *key, const char *fmt, ...)
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

/* ---- ranges ---- */

/*
 * The ranges of a costs file's numbers: what the models compute with them must stay a
 * time a step can have (int64 ns), so each is bounded where no measurement of a GPU
 * could be, with room around what fits make (docs/orrery-fit.md, "Values").
 */
const range time_range = { 1, 1e12, true, "a time, ns (0: none; at most 1000 s)" };
const range step_range = { 1, 1e11, true,
			   "the launch thread's time per step, ns (0: none; at most 100 s)" };
const range ratio_range = { 1e-3, 1e6, false, "a ratio of kernel times" };
const range efficiency_range = { 1e-3, 1e6, false,
				 "an efficiency: measured time over the roofline's" };
const range floor_range = { 1, 1e9, true, "the shortest kernel's time, ns (0: none; at most 1 s)" };
const range error_range = { 0, 1e300, false, "a relative error" };
const range bytes_range = { 0, 1125899906842624.0, false, "a size, bytes (2^50)" };
const range bus_range = { 1e6, 1e15, true, "a bus bandwidth, bytes/s (0: none; 1 MB/s to 1 PB/s)" };

/* v within g, else a failure naming key and v; a NaN (a null read) passes. */
bool in_range(reader &r, const char *key, double v, const range &g)
{
	if (std::isnan(v) || (g.zero && v == 0) || (v >= g.lo && v <= g.hi))
		return true;
	return fail(r, ORR_EMALFORMED, key, "%g is out of range: %s, in [%g, %g]%s", v, g.what,
		    g.lo, g.hi, g.zero ? " or 0" : "");
}

/* o[key], a number (number()) within g. */
bool ranged(reader &r, dom::object o, const char *key, bool nullable, const range &g, double *ret)
{
	return number(r, o, key, nullable, ret) && in_range(r, key, *ret, g);
}

/*
 * o[key], when there, equal to want: a_ns, ns_per_flop and ns_per_byte are copies of a
 * fit's coefficients written for readers, so one that disagrees is a file edited by hand
 * whose meaning is unclear.
 */
bool copy_of(reader &r, dom::object o, const char *key, double want, const char *of)
{
	double v;

	if (o[key].error() == NO_SUCH_FIELD)
		return true;
	if (!number(r, o, key, false, &v))
		return false;
	return v == want || fail(r, ORR_EMALFORMED, key,
				 "%.17g is not the fit's %s, %.17g, which it copies", v, of, want);
}

/* The keys of o, sorted, checked for one that appears twice. */
static bool unique_in(reader &r, dom::object o)
{
	std::vector<string_view> keys;

	keys.reserve(o.size());
	for (dom::key_value_pair kv : o)
		keys.push_back(kv.key);
	std::sort(keys.begin(), keys.end());
	for (size_t i = 1; i < keys.size(); i++)
		if (keys[i] == keys[i - 1]) {
			char k[96];

			copy(k, sizeof(k), keys[i]);
			return fail(r, ORR_EMALFORMED, k,
				    "appears twice in one object (JSON readers differ on which "
				    "value counts)");
		}
	return true;
}

/*
 * Every object in v, depth first: simdjson's o[key] reads a duplicate key's first value,
 * Python's json and jq its last, so a file with one means two things and is refused.
 */
bool unique_keys(reader &r, dom::element v)
{
	dom::object o;
	dom::array a;
	size_t i = 0;

	if (v.get_array().get(a) == SUCCESS) {
		for (dom::element e : a) {
			at k(r, i++);

			if (!unique_keys(r, e))
				return false;
		}
		return true;
	}
	if (v.get_object().get(o) != SUCCESS)
		return true;
	if (!unique_in(r, o))
		return false;
	for (dom::key_value_pair kv : o) {
		char key[96];

		copy(key, sizeof(key), kv.key);
		at k(r, key);
		if (!unique_keys(r, kv.value))
			return false;
	}
	return true;
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

/*
 * The coefficients: 2 or 3 finite numbers, as the models' fits have.  Of any sign and
 * size: least squares makes negative intercepts (the Megatron trace's GEMMs: -68921 ns)
 * and, short of rank, large ones that its other terms cancel (6e17 ns on a shared
 * trace); what a model predicts from them is bounded where it is used instead.
 */
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
	       ranged(r, p, "fit_median", true, error_range, &f->fit_median) &&
	       ranged(r, p, "fit_max", true, error_range, &f->fit_max) &&
	       ranged(r, p, "loo_median", true, error_range, &f->loo_median) &&
	       ranged(r, p, "loo_max", true, error_range, &f->loo_max);
}

/* An efficiency from three keys: its median (required with samples), samples, fitted. */
bool efficiency(reader &r, dom::object o, const char *const keys[3], struct orr_gemm_efficiency *e)
{
	if (!ranged(r, o, keys[0], true, efficiency_range, &e->median) ||
	    !count(r, o, keys[1], &e->samples) || !boolean(r, o, keys[2], &e->fitted))
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

} /* namespace orr__costs */
