/* SPDX-License-Identifier: MIT */
/* A byte-level JSON structure scanner: see scan.h. */
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "scan.h"
#include "banned.h"

static int fail(struct orr__scan_error *e, int err, size_t offset, const char *what)
{
	e->err = err;
	e->offset = offset;
	e->what = what;
	return err;
}

size_t orr__scan_ws(const char *buf, size_t len, size_t pos)
{
	while (pos < len &&
	       (buf[pos] == ' ' || buf[pos] == '\n' || buf[pos] == '\r' || buf[pos] == '\t'))
		pos++;
	return pos;
}

int orr__scan_string(const char *buf, size_t len, size_t pos, size_t *ret_end,
		     struct orr__scan_error *reterr)
{
	size_t start = pos++;

	for (;;) {
		const char *q = memchr(buf + pos, '"', len - pos);
		size_t n = 0;

		if (!q)
			return fail(reterr, ORR_ETRUNCATED, start, "unterminated string");
		pos = (size_t)(q - buf);
		/* The quote ends the string unless an odd run of backslashes precedes it. */
		while (pos - n > start + 1 && buf[pos - n - 1] == '\\')
			n++;
		pos++;
		if (n % 2 == 0)
			break;
	}
	*ret_end = pos;
	return 0;
}

static bool is_scalar_byte(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' ||
	       c == '.' || c == 'E';
}

/* One scalar token (number, true, false, null); checked properly by the real parser. */
static int scan_scalar(const char *buf, size_t len, size_t pos, size_t *ret_end,
		       struct orr__scan_error *reterr)
{
	size_t start = pos;

	while (pos < len && is_scalar_byte(buf[pos]))
		pos++;
	if (pos == start)
		return fail(reterr, ORR_EMALFORMED, start, "expected a JSON value");
	*ret_end = pos;
	return 0;
}

int orr__scan_value(const char *buf, size_t len, size_t pos, size_t max_depth, size_t *ret_end,
		    struct orr__scan_error *reterr)
{
	char local[ORR__SCAN_STACK_DEPTH], *stack = local;
	size_t depth = 0, cap = sizeof(local);
	int r = 0;

	pos = orr__scan_ws(buf, len, pos);
	do {
		if (pos >= len) {
			r = fail(reterr, ORR_ETRUNCATED, len, "unexpected end of input");
			goto out;
		}
		switch (buf[pos]) {
		case '"':
			if ((r = orr__scan_string(buf, len, pos, &pos, reterr)))
				goto out;
			break;
		case '{':
		case '[':
			if (depth == max_depth) {
				r = fail(reterr, ORR_ETOOBIG, pos, "nested too deep");
				goto out;
			}
			if (depth == cap) {
				cap *= 2;
				stack = stack == local ? memcpy(orr_xmalloc(cap), local, depth)
						       : orr_xrealloc(stack, cap);
			}
			stack[depth++] = buf[pos] == '{' ? '}' : ']';
			pos++;
			break;
		case '}':
		case ']':
			if (!depth || stack[depth - 1] != buf[pos]) {
				r = fail(reterr, ORR_EMALFORMED, pos, "unbalanced bracket");
				goto out;
			}
			depth--;
			pos++;
			break;
		case ',':
		case ':':
			if (!depth) {
				r = fail(reterr, ORR_EMALFORMED, pos, "expected a JSON value");
				goto out;
			}
			pos++;
			break;
		default:
			if ((r = scan_scalar(buf, len, pos, &pos, reterr)))
				goto out;
			break;
		}
		pos = orr__scan_ws(buf, len, pos);
	} while (depth);
	*ret_end = pos;
out:
	if (stack != local)
		free(stack);
	return r;
}

int orr__scan_events(const char *buf, size_t len, size_t pos, size_t min_bytes, size_t max_depth,
		     size_t *ret_cut, struct orr__scan_error *reterr)
{
	size_t start = pos, end;
	int r;

	for (;;) {
		if (pos >= len)
			return fail(reterr, ORR_ETRUNCATED, len,
				    "unterminated 'traceEvents' array");
		if (buf[pos] != '{')
			return fail(reterr, ORR_EMALFORMED, pos, "expected an event object");
		if ((r = orr__scan_value(buf, len, pos, max_depth, &end, reterr)))
			return r;
		*ret_cut = end - 1;
		while (buf[*ret_cut] != '}')
			(*ret_cut)--;
		pos = orr__scan_ws(buf, len, end);
		if (pos >= len)
			return fail(reterr, ORR_ETRUNCATED, len,
				    "unterminated 'traceEvents' array");
		if (buf[pos] == ']' || end - start >= min_bytes)
			return buf[pos] == ']' || buf[pos] == ','
				       ? 0
				       : fail(reterr, ORR_EMALFORMED, pos, "expected ',' or ']'");
		if (buf[pos] != ',')
			return fail(reterr, ORR_EMALFORMED, pos, "expected ',' or ']'");
		pos = orr__scan_ws(buf, len, pos + 1);
	}
}

/*
 * The common case of orr__scan_us_to_ns(), trimmed s: "[-]D[.D]" of at most 18 digits
 * (every Kineto time), in 64 bits with the same rounding; false for anything else, which
 * the general case reads (a time took 280 instructions in 128 bits: 8 % of an import).
 */
static bool us_to_ns_short(const char *s, size_t n, int64_t *ret)
{
	static const uint64_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
	bool neg = n && s[0] == '-';
	size_t i = neg, dot = SIZE_MAX;
	uint64_t v = 0, ns;
	int digits = 0, frac;

	for (; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d < 10) {
			v = v * 10 + d;
			digits++;
		} else if (s[i] == '.' && dot == SIZE_MAX) {
			dot = i;
		} else {
			return false;
		}
		if (digits > 18)
			return false;
	}
	frac = dot == SIZE_MAX ? 0 : (int)(n - 1 - dot);
	if (!digits || (dot != SIZE_MAX && (dot == (size_t)neg || !frac)) || frac > 9)
		return false;
	if (frac <= 3) {
		if (__builtin_mul_overflow(v, pow10[3 - frac], &ns) || ns > INT64_MAX)
			return false;
	} else {
		/* As the general case: truncated to tens of ns, then rounded half up. */
		ns = (v / pow10[frac - 4] + 5) / 10;
	}
	*ret = neg ? -(int64_t)ns : (int64_t)ns;
	return true;
}

/* Decimal microseconds ("1707417525512145", "12.345", "1.2e3") to integer nanoseconds. */
bool orr__scan_us_to_ns(const char *s, size_t n, int64_t *ret)
{
	size_t i = 0;
	bool neg = false;
	__int128 v = 0;
	const __int128 big = (__int128)1 << 100;
	int frac = 0, exp = 0, digits = 0;

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
		n--;
	if (us_to_ns_short(s, n, ret))
		return true;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		if (v < big)
			v = v * 10 + (s[i] - '0');
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (v < big) {
				v = v * 10 + (s[i] - '0');
				frac++;
			}
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;

		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (exp < 1000)
				exp = exp * 10 + (s[i] - '0');
		exp = eneg ? -exp : exp;
	}
	if (!digits || i != n)
		return false;
	/* value = v * 10^(exp - frac) us = v * 10^(exp - frac + 3) ns, rounded to nearest */
	for (int e = exp - frac + 3; e != 0; e += e > 0 ? -1 : 1) {
		if (e > 0) {
			if (v > big)
				return false;
			v *= 10;
		} else {
			v = e == -1 ? (v + 5) / 10 : v / 10;
		}
	}
	if (v > INT64_MAX)
		return false;
	*ret = neg ? -(int64_t)v : (int64_t)v;
	return true;
}
