/* SPDX-License-Identifier: MIT */
/*
 * The values of scalar arguments a profiler trace recorded without an execution trace:
 * "Concrete Inputs" (PyTorch 2.1+, record_shapes), one string per input, as PyTorch
 * prints an IValue (c10/ivalue.cpp): an integer "-100", a double "0." or
 * "1.0000000000000001e-05" (always with a '.' or an exponent, "inf", "nan"), a boolean
 * "True", a list of them "[8, 1024]" (at most 30 elements; longer ones are not
 * recorded).  They are read here, strictly: anything else is not a value a plan holds.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* Longest number PyTorch prints: a double with 17 digits and an exponent. */
#define MAX_NUMBER 40

static bool digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* An integer: '-'? digits, within int64_t. */
static bool integer(const char *s, size_t n, long long *ret)
{
	char buf[MAX_NUMBER + 1];
	char *end;

	if (n > MAX_NUMBER || !digits(s + (n && s[0] == '-'), n - (n && s[0] == '-')))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*ret = strtoll(buf, &end, 10);
	return errno == 0 && *end == '\0';
}

/* A double as PyTorch prints one: digits with a '.' or an exponent, or inf, nan. */
static bool real(const char *s, size_t n, double *ret)
{
	char buf[MAX_NUMBER + 1];
	size_t k = n && s[0] == '-';
	char *end;

	if (n > MAX_NUMBER || n == k)
		return false;
	if (n - k == 3 && (!strncmp(s + k, "inf", 3) || !strncmp(s + k, "nan", 3))) {
		*ret = s[k] == 'n' ? NAN : k ? -INFINITY : INFINITY;
		return true;
	}
	if (strspn(s + k, "0123456789.e+-") != n - k || s[k] < '0' || s[k] > '9' ||
	    (!memchr(s, '.', n) && !memchr(s, 'e', n)))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*ret = strtod(buf, &end);
	return *end == '\0' && errno != ERANGE;
}

/*
 * One scalar s[0..n): written to f as JSON when f is set (a double with a '.' or an
 * exponent, so that it reads back as one; {"f": "inf"} for what JSON has no number for).
 */
static bool scalar(FILE *f, const char *s, size_t n)
{
	long long i;
	double d;
	char buf[64];

	if ((n == 4 && !strncmp(s, "True", 4)) || (n == 5 && !strncmp(s, "False", 5))) {
		if (f)
			fputs(n == 4 ? "true" : "false", f);
		return true;
	}
	if (integer(s, n, &i)) {
		if (f)
			fprintf(f, "%lld", i);
		return true;
	}
	if (!real(s, n, &d))
		return false;
	if (!f)
		return true;
	if (!isfinite(d)) {
		fprintf(f, "{\"f\":\"%s\"}", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
		return true;
	}
	snprintf(buf, sizeof(buf), "%.17g", d);
	fprintf(f, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
	return true;
}

/* "[a, b, ...]": scalars separated by ", " (any blanks), none nested. */
static bool list(FILE *f, const char *s)
{
	size_t n = strlen(s), i = 1, k = 0;

	if (n < 2 || s[0] != '[' || s[n - 1] != ']')
		return false;
	n--;
	if (f)
		fputc('[', f);
	while (i < n) {
		size_t start, end;

		i += strspn(s + i, " ");
		if (i == n && !k)
			break;
		start = i;
		while (i < n && s[i] != ',')
			i++;
		for (end = i; end > start && s[end - 1] == ' '; end--)
			;
		if (f && k)
			fputc(',', f);
		if (!scalar(f, s + start, end - start))
			return false;
		k++;
		if (i < n && ++i == n) /* a ',' ends the list */
			return false;
	}
	if (f)
		fputc(']', f);
	return true;
}

bool orr__compose_concrete(FILE *f, const char *s, bool is_list)
{
	/* checked whole before anything is written */
	if (!(is_list ? list(NULL, s) : scalar(NULL, s, strlen(s))))
		return false;
	return !f || (is_list ? list(f, s) : scalar(f, s, strlen(s)));
}

bool orr__compose_kineto_arg(const struct orr_trace *t, const struct orr_input *in,
			     uint32_t list_dtype, enum orr__kineto_arg *ret, const char **ret_why)
{
	const char *type = orr_trace_str(t, in->dtype);
	bool is_list = !strcmp(type, "ScalarList");

	if (in->is_list || !strcmp(type, "TensorList")) {
		/* members' dtypes are inferred for a Tensor[] only (not a Tensor?[] of indices) */
		if (strcmp(type, "TensorList") != 0) {
			*ret_why = "a list that is not a TensorList (the profiler records no "
				   "dtypes of its members; an execution trace has them)";
			return false;
		}
		if (!in->is_list || !in->ndims) {
			*ret_why =
				"a list of tensors whose shapes the profiler did not record "
				"(PyTorch writes none for a list of more than 30; an execution trace has "
				"them)";
			return false;
		}
		if (list_dtype == ORR_STR_NONE) {
			*ret_why = "a list of tensors whose dtype the trace does not show (the "
				   "profiler records none; an execution trace has it)";
			return false;
		}
		*ret = ORR__KARG_TENSORS;
		return true;
	}
	if (is_list || !strcmp(type, "Scalar")) {
		if (in->value == ORR_STR_NONE) {
			*ret_why = "a scalar without its value (PyTorch 2.1+ records it with "
				   "record_shapes; an execution trace has it)";
			return false;
		}
		if (!orr__compose_concrete(NULL, orr_trace_str(t, in->value), is_list)) {
			*ret_why = "a recorded scalar value that is not a number, a boolean or a "
				   "list of them";
			return false;
		}
		*ret = is_list ? ORR__KARG_LIST : ORR__KARG_SCALAR;
		return true;
	}
	if (in->dtype != ORR_STR_NONE && orr__compose_dtype(type)) {
		*ret = ORR__KARG_TENSOR;
		return true;
	}
	/* neither a tensor nor a scalar: the profiler says so by an empty type and value */
	if (in->dtype == ORR_STR_NONE && in->has_value && in->value == ORR_STR_NONE && !in->ndims) {
		*ret = ORR__KARG_DEFAULT;
		return true;
	}
	*ret_why = "arguments without values (an execution trace has them)";
	return false;
}
