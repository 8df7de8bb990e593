/* SPDX-License-Identifier: MIT */
/*
 * estimator/costs-json.h — what the costs reader's files share (C++ only): the reader
 * and its key path, typed getters that check type and range and name the key when
 * they fail (costs-json.cpp), and the models' readers (costs-models.cpp) that
 * costs-read.cpp calls for a file's "gemm", "kernels" and "collectives".
 */
#ifndef ORRERY_ESTIMATOR_COSTS_JSON_H
#define ORRERY_ESTIMATOR_COSTS_JSON_H

#include <simdjson.h>

#include <algorithm>
#include <vector>
#include <cstdio>
#include <string_view>

#include "internal.h"

namespace orr__costs {

using namespace simdjson;
using std::string_view;

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
						const char *fmt, ...);
/* What a value is, for messages: "an array", "null"... */
const char *type_name(dom::element_type t);
/* Fails because v is not what was expected. */
bool wrong_type(reader &r, const char *key, dom::element v, const char *expected);
/* o[key] of each type (nullable: null reads as NAN or a null view); false having failed. */
bool field(reader &r, dom::object o, const char *key, dom::element *ret);
bool object(reader &r, dom::object o, const char *key, dom::object *ret);
bool array(reader &r, dom::object o, const char *key, dom::array *ret);
bool element_object(reader &r, dom::element v, dom::object *ret);
bool boolean(reader &r, dom::object o, const char *key, bool *ret);
bool string(reader &r, dom::object o, const char *key, bool nullable, string_view *ret);
bool integer(reader &r, dom::object o, const char *key, int64_t lo, int64_t hi, int64_t *ret);
bool count(reader &r, dom::object o, const char *key, size_t *ret);
bool as_number(reader &r, dom::element v, const char *key, bool nullable, double *ret);
bool number(reader &r, dom::object o, const char *key, bool nullable, double *ret);
/*
 * Where a value may lie, as what reads it needs (docs/orrery-fit.md, "Values"): [lo, hi],
 * and 0 as well with zero (none measured); what names the value in messages.
 */
struct range {
	double lo, hi;
	bool zero;
	const char *what;
};
extern const range time_range, step_range, ratio_range, efficiency_range, floor_range, error_range,
	bytes_range, bus_range;
/* v within g, else a failure naming key and v; a NaN (a null read) passes. */
bool in_range(reader &r, const char *key, double v, const range &g);
/* o[key], a number (number()) within g. */
bool ranged(reader &r, dom::object o, const char *key, bool nullable, const range &g, double *ret);
/* o[key], when there, equal to want (a copy of a coefficient the file also holds). */
bool copy_of(reader &r, dom::object o, const char *key, double want, const char *of);
/* No object anywhere in v has a key twice, each refused naming its path. */
bool unique_keys(reader &r, dom::element v);
/* A copy of s into buf, cut short; s owned by the costs (NULL for a null view). */
void copy(char *buf, size_t size, string_view s);
const char *keep(reader &r, string_view s);
bool gpu_spec(reader &r, dom::object o, const char *key, const struct orr_gpu_spec **ret);
/* A fit's coefficients and errors; an efficiency; a class's fit or fallback. */
bool coefficients(reader &r, dom::object o, struct orr_fit *f);
bool fit(reader &r, dom::object o, const char *key, struct orr_fit *f);
bool efficiency(reader &r, dom::object o, const char *const keys[3], struct orr_gemm_efficiency *e);
bool unit_fit(reader &r, dom::object o, enum orr_gemm_how how, struct orr_fit *f);
/* The keys of the efficiency over every math (GEMMs) or class (kernels). */
extern const char *const efficiency_all_keys[3];

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

/* The models (costs-models.cpp): top's "gemm", "kernels", "collectives" into r.c. */
bool gemm(reader &r, dom::object top);
bool kernels(reader &r, dom::object top);
bool collectives(reader &r, dom::object top);

} /* namespace orr__costs */

#endif
