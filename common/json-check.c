/* SPDX-License-Identifier: MIT */
/*
 * Where a JSON text is not JSON: orr_json_check().  simdjson's DOM parser, which reads
 * costs files and execution traces, says what went wrong but not where; this walk, run
 * only once it has refused a text, finds the first byte at which the text stops being
 * one JSON value (RFC 8259: its grammar, UTF-8, and numbers a double holds, as simdjson
 * asks), so that the error names it.  Iterative: the depth is a stack of brackets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

struct walk {
	const char *buf;
	size_t len, pos;
	struct orr_json_error *err;
	char *stack; /* the open brackets, grown as deep as the text goes */
	size_t cap;
};

static int fail(struct walk *w, int code, size_t at, const char *expected)
{
	w->err->offset = at;
	w->err->expected = expected;
	return code;
}

/* The end of input where expected was: a text cut short. */
static int cut(struct walk *w, const char *expected)
{
	return fail(w, ORR_ETRUNCATED, w->len, expected);
}

static void ws(struct walk *w)
{
	while (w->pos < w->len && (w->buf[w->pos] == ' ' || w->buf[w->pos] == '\n' ||
				   w->buf[w->pos] == '\r' || w->buf[w->pos] == '\t'))
		w->pos++;
}

static bool hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The length of the UTF-8 sequence at p (of n bytes left), 0 when it is not one. */
static size_t utf8(const unsigned char *p, size_t n)
{
	size_t k, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		k = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		k = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		k = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

/* The 4 hex digits of a \\u escape at w->pos (its backslash), as a code unit in *ret. */
static int hex4(struct walk *w, unsigned int *ret)
{
	unsigned int u = 0;

	for (size_t k = 2; k < 6; k++) {
		char c;

		if (w->pos + k >= w->len)
			return cut(w, "4 hex digits after \\u");
		c = w->buf[w->pos + k];
		if (!hex(c))
			return fail(w, ORR_EMALFORMED, w->pos, "4 hex digits after \\u");
		u = u << 4 | (unsigned int)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	*ret = u;
	return 0;
}

/*
 * A \\u escape at w->pos.  A UTF-16 surrogate must be a high one followed by a \\u low
 * one: simdjson refuses a lone surrogate (RFC 8259 leaves it to the parser, 8.2).
 */
static int unicode_escape(struct walk *w)
{
	static const char pair[] = "a \\u escape of a low surrogate (DC00-DFFF) after a high one";
	size_t at = w->pos;
	unsigned int u, low;
	int r;

	if ((r = hex4(w, &u)))
		return r;
	w->pos += 6;
	if (u >= 0xdc00 && u <= 0xdfff)
		return fail(w, ORR_EMALFORMED, at, "no lone low surrogate (DC00-DFFF) after \\u");
	if (u < 0xd800 || u > 0xdbff)
		return 0;
	if (w->pos + 2 > w->len)
		return cut(w, pair);
	if (w->buf[w->pos] != '\\' || w->buf[w->pos + 1] != 'u')
		return fail(w, ORR_EMALFORMED, w->pos, pair);
	if ((r = hex4(w, &low)))
		return r;
	if (low < 0xdc00 || low > 0xdfff)
		return fail(w, ORR_EMALFORMED, w->pos, pair);
	w->pos += 6;
	return 0;
}

/* A string at w->pos, its opening quote checked by the caller. */
static int string(struct walk *w)
{
	const unsigned char *b = (const unsigned char *)w->buf;

	for (w->pos++; w->pos < w->len;) {
		unsigned char c = b[w->pos];
		size_t k;
		int r;

		if (c == '"') {
			w->pos++;
			return 0;
		}
		if (c < 0x20)
			return fail(w, ORR_EMALFORMED, w->pos,
				    "'\"' to close the string (a control character in it must be "
				    "escaped)");
		if (c == '\\') {
			if (w->pos + 1 >= w->len)
				return cut(w, "an escape sequence");
			c = b[w->pos + 1];
			if (c == 'u') {
				if ((r = unicode_escape(w)))
					return r;
			} else if (strchr("\"\\/bfnrt", c) && c) {
				w->pos += 2;
			} else {
				return fail(w, ORR_EMALFORMED, w->pos,
					    "an escape sequence (\\\" \\\\ \\/ \\b \\f \\n \\r \\t "
					    "\\uXXXX)");
			}
			continue;
		}
		k = utf8(b + w->pos, w->len - w->pos);
		if (!k)
			return fail(w, ORR_EMALFORMED, w->pos, "UTF-8 text");
		w->pos += k;
	}
	return cut(w, "'\"' to close the string");
}

static size_t digits(struct walk *w)
{
	size_t start = w->pos;

	while (w->pos < w->len && w->buf[w->pos] >= '0' && w->buf[w->pos] <= '9')
		w->pos++;
	return w->pos - start;
}

/*
 * A number at w->pos: JSON's grammar, and within a double's range; an integer (no
 * fraction, no exponent) within 64 bits, signed when negative, as simdjson reads one
 * (it refuses 2^64 and -2^63 - 1, which a double holds, with no offset: "Problem while
 * parsing a number").
 */
static int number(struct walk *w)
{
	static const char form[] = "a number (-?digits[.digits][e[+-]digits])";
	size_t start = w->pos, n;
	char tmp[512], *copy, *end;
	bool huge, integer = true, wide = false;
	double v;

	if (w->buf[w->pos] == '-')
		w->pos++;
	if (w->pos >= w->len)
		return cut(w, form);
	if (w->buf[w->pos] == '0')
		w->pos++;
	else if (!digits(w))
		return fail(w, ORR_EMALFORMED, start, form);
	if (w->pos < w->len && w->buf[w->pos] == '.') {
		integer = false;
		w->pos++;
		if (!digits(w))
			return w->pos >= w->len ? cut(w, form)
						: fail(w, ORR_EMALFORMED, start, form);
	}
	if (w->pos < w->len && (w->buf[w->pos] == 'e' || w->buf[w->pos] == 'E')) {
		integer = false;
		w->pos++;
		if (w->pos < w->len && (w->buf[w->pos] == '+' || w->buf[w->pos] == '-'))
			w->pos++;
		if (!digits(w))
			return w->pos >= w->len ? cut(w, form)
						: fail(w, ORR_EMALFORMED, start, form);
	}
	/* Past a double (1e999, or 1 and 400 zeros): simdjson refuses it. */
	n = w->pos - start;
	copy = n < sizeof(tmp) ? tmp : orr_xmalloc(n + 1);
	memcpy(copy, w->buf + start, n);
	copy[n] = '\0';
	errno = 0;
	v = strtod(copy, &end);
	huge = errno == ERANGE && (v > 1 || v < -1);
	if (!huge && integer) {
		errno = 0;
		if (copy[0] == '-')
			(void)strtoll(copy, &end, 10);
		else
			(void)strtoull(copy, &end, 10);
		wide = errno == ERANGE;
	}
	if (copy != tmp)
		free(copy);
	if (huge)
		return fail(w, ORR_EMALFORMED, start, "a number within a double's range");
	if (wide)
		return fail(w, ORR_EMALFORMED, start,
			    "an integer from -2^63 to 2^64 - 1 (a larger one written with a "
			    "fraction or an exponent, 1e23)");
	return 0;
}

/* true, false or null at w->pos. */
static int literal(struct walk *w)
{
	static const char *const words[] = { "true", "false", "null" };

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);

		if (w->buf[w->pos] != words[i][0])
			continue;
		if (w->len - w->pos < n)
			return memcmp(w->buf + w->pos, words[i], w->len - w->pos)
				       ? fail(w, ORR_EMALFORMED, w->pos, words[i])
				       : cut(w, words[i]);
		if (memcmp(w->buf + w->pos, words[i], n))
			return fail(w, ORR_EMALFORMED, w->pos, words[i]);
		w->pos += n;
		return 0;
	}
	return fail(w, ORR_EMALFORMED, w->pos, "a JSON value");
}

/*
 * An array or object at w->pos ('[' or '{' c) one level past the limit: taken only when
 * empty, as simdjson counts only the levels that hold a value.
 */
static int empty_at_limit(struct walk *w, char c)
{
	size_t at = w->pos;

	w->pos++;
	ws(w);
	if (w->pos < w->len && w->buf[w->pos] == (c == '[' ? ']' : '}')) {
		w->pos++;
		return 0;
	}
	return fail(w, ORR_ETOOBIG, at, "nesting no deeper than the limit");
}

/* A scalar, or the opening of an array or object (pushed on stack). */
static int value(struct walk *w, size_t *depth, size_t max_depth)
{
	char c;

	ws(w);
	if (w->pos >= w->len)
		return cut(w, "a JSON value");
	c = w->buf[w->pos];
	if (c == '{' || c == '[') {
		if (*depth == max_depth)
			return empty_at_limit(w, c);
		if (*depth == w->cap)
			w->stack = orr_xgrow(w->stack, 1, &w->cap, *depth + 1);
		w->stack[(*depth)++] = c;
		w->pos++;
		return 0;
	}
	if (c == '"')
		return string(w);
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(w);
	return literal(w);
}

/*
 * After '{' or ',' in an object: a key and its colon (first: '}' may close it); the value
 * is the caller's.  *closed when '}' closed it.
 */
static int key(struct walk *w, bool first, bool *closed)
{
	int r;

	ws(w);
	*closed = false;
	if (w->pos >= w->len)
		return cut(w, first ? "a string key or '}'" : "a string key");
	if (first && w->buf[w->pos] == '}') {
		*closed = true;
		w->pos++;
		return 0;
	}
	if (w->buf[w->pos] != '"')
		return fail(w, ORR_EMALFORMED, w->pos,
			    first ? "a string key or '}'" : "a string key");
	if ((r = string(w)))
		return r;
	ws(w);
	if (w->pos >= w->len)
		return cut(w, "':' after the key");
	if (w->buf[w->pos] != ':')
		return fail(w, ORR_EMALFORMED, w->pos, "':' after the key");
	w->pos++;
	return 0;
}

/* After a value inside the innermost open bracket: ',' or its closing bracket. */
static int next(struct walk *w, char open, bool *ret_more)
{
	const char *want = open == '{' ? "',' or '}'" : "',' or ']'";

	ws(w);
	if (w->pos >= w->len)
		return cut(w, want);
	if (w->buf[w->pos] == ',') {
		*ret_more = true;
	} else if (w->buf[w->pos] == (open == '{' ? '}' : ']')) {
		*ret_more = false;
	} else {
		return fail(w, ORR_EMALFORMED, w->pos, want);
	}
	w->pos++;
	return 0;
}

static int walk(struct walk *w, size_t max_depth)
{
	size_t depth = 0, before;
	bool first = false, more, closed;
	int r;

	for (;;) {
		/* In an object, a key (or its end) comes before each value. */
		if (depth && w->stack[depth - 1] == '{') {
			if ((r = key(w, first, &closed)))
				return r;
			if (closed) {
				depth--;
				goto end;
			}
		} else if (depth && first) {
			ws(w);
			if (w->pos < w->len && w->buf[w->pos] == ']') {
				w->pos++;
				depth--;
				goto end;
			}
		}
		before = depth;
		if ((r = value(w, &depth, max_depth)))
			return r;
		if (depth > before) {
			first = true;
			continue;
		}
end:
		first = false;
		/* After a value: close every bracket it ends, or go on with the next. */
		for (;;) {
			if (!depth) {
				ws(w);
				return w->pos == w->len
					       ? 0
					       : fail(w, ORR_EMALFORMED, w->pos,
						      "the end of the text after its one value");
			}
			if ((r = next(w, w->stack[depth - 1], &more)))
				return r;
			if (more)
				break;
			depth--;
		}
	}
}

int orr_json_check(const char *buf, size_t len, size_t max_depth, struct orr_json_error *reterr)
{
	struct orr_json_error e = { 0, NULL };
	struct walk w = { buf, len, 0, &e, NULL, 0 };
	int r;

	/* A UTF-8 byte order mark, as simdjson's callers in orrery skip it. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		w.pos = 3;
	r = walk(&w, max_depth);
	free(w.stack);
	if (r)
		*reterr = e;
	return r;
}

void orr_json_where(const char *buf, size_t offset, size_t *ret_line, size_t *ret_column)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < offset; i++)
		if (buf[i] == '\n')
			line++, col = 1;
		else
			col++;
	*ret_line = line;
	*ret_column = col;
}
