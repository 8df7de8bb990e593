/* SPDX-License-Identifier: MIT */
/*
 * Names from traces and paths from users, made safe to show: text for a terminal and
 * JSON strings.  A trace is hostile input: a kernel name can hold an escape sequence
 * that sets the terminal's title or clears it, a newline that forges a line of the
 * report, or bytes that are not UTF-8 and make a JSON output invalid.  Both renderings
 * keep valid UTF-8 as it is, so that ordinary names (aten::mm, CJK) are unchanged.
 * Outputs whose strings must be UTF-8 (Chakra's protobuf strings, CSV cells) replace
 * each stray byte with U+FFFD; a CSV cell that a spreadsheet would run as a formula is
 * written as text, and its control characters (a CSV on a terminal is shown as text)
 * as the text rendering writes them, but for the tab, CR and LF that quoting keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

size_t orr_utf8_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[0];
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0; /* a continuation byte, an overlong lead (c0, c1) or past f4 */
	/* A NUL fails this test, so a sequence cut by the end of s is never read past it. */
	for (size_t i = 1; i < n; i++)
		if ((u[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && u[1] < 0xa0) || (c == 0xed && u[1] > 0x9f) ||
	    (c == 0xf0 && u[1] < 0x90) || (c == 0xf4 && u[1] > 0x8f))
		return 0; /* overlong, surrogate or past U+10FFFF */
	return n;
}

/* The code point of a valid sequence of n bytes. */
static unsigned decode(const unsigned char *u, size_t n)
{
	static const unsigned lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned cp = u[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (u[i] & 0x3f);
	return cp;
}

/*
 * Valid characters that still act on a terminal or reorder what it shows: C1 controls,
 * the line and paragraph separators, and the bidirectional embeddings, overrides and
 * isolates (the "Trojan Source" characters).
 */
static bool is_format_control(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Appends len bytes to buf (size bytes, NUL kept) at *pos, counting what does not fit. */
static void put(char *buf, size_t size, size_t *pos, const char *s, size_t len)
{
	if (*pos < size) {
		size_t room = size - *pos - 1;

		memcpy(buf + *pos, s, len < room ? len : room);
	}
	*pos += len;
}

size_t orr_text_escape(char *buf, size_t size, const char *s)
{
	const char *p = s;
	size_t pos = 0;
	char esc[16];

	while (*p) {
		const unsigned char c = (unsigned char)*p;
		size_t n;

		if (c >= 0x20 && c < 0x7f) {
			const char *run = p;

			while ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f)
				p++;
			put(buf, size, &pos, run, (size_t)(p - run));
			continue;
		}
		n = orr_utf8_len(p);
		if (c == '\n' || c == '\t' || c == '\r') {
			put(buf, size, &pos, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", 2);
		} else if (n == 0 || c < 0x80) {
			/* other C0 controls, DEL, and each byte that is not UTF-8 */
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put(buf, size, &pos, esc, 4);
			n = 1;
		} else if (is_format_control(decode((const unsigned char *)p, n))) {
			snprintf(esc, sizeof(esc), "\\u%04x", decode((const unsigned char *)p, n));
			put(buf, size, &pos, esc, 6);
		} else {
			put(buf, size, &pos, p, n);
		}
		p += n;
	}
	if (size)
		buf[pos < size ? pos : size - 1] = '\0';
	return pos;
}

bool orr_text_is_plain(const char *s)
{
	for (const char *p = s; *p;) {
		const unsigned char c = (unsigned char)*p;
		size_t n;

		if (c >= 0x20 && c < 0x7f) {
			p++;
			continue;
		}
		n = orr_utf8_len(p);
		if (c < 0x80 || n == 0 || is_format_control(decode((const unsigned char *)p, n)))
			return false;
		p += n;
	}
	return true;
}

char *orr_text_escape_dup(const char *s)
{
	size_t len = orr_text_escape(NULL, 0, s);
	char *buf = orr_xmalloc(len + 1);

	orr_text_escape(buf, len + 1, s);
	return buf;
}

void orr_json_write_string(FILE *f, const char *s)
{
	const char *p = s;

	fputc('"', f);
	while (*p) {
		const char *run = p;
		unsigned char c;
		size_t n;

		while ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f && *p != '"' &&
		       *p != '\\')
			p++;
		if (p > run)
			fwrite(run, 1, (size_t)(p - run), f);
		c = (unsigned char)*p;
		if (!c)
			break;
		n = orr_utf8_len(p);
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x80) {
			fprintf(f, "\\u%04x", c); /* C0 controls and DEL, one form for all */
		} else if (n == 0) {
			fputs("\\ufffd", f); /* JSON text is UTF-8: a stray byte becomes U+FFFD */
			n = 1;
		} else if (is_format_control(decode((const unsigned char *)p, n))) {
			/* valid JSON as they are, but not safe to show, and not valid JavaScript */
			fprintf(f, "\\u%04x", decode((const unsigned char *)p, n));
		} else {
			fwrite(p, 1, n, f);
		}
		p += n;
	}
	fputc('"', f);
}

bool orr_utf8_is_valid(const char *s)
{
	for (const char *p = s; *p;) {
		size_t n = orr_utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

size_t orr_utf8_replace(char *buf, size_t size, const char *s)
{
	const char *p = s;
	size_t pos = 0;

	while (*p) {
		const char *run = p;
		size_t n;

		while (*p && (n = orr_utf8_len(p)) > 0)
			p += n;
		put(buf, size, &pos, run, (size_t)(p - run));
		if (!*p)
			break;
		put(buf, size, &pos, "\xef\xbf\xbd", 3); /* U+FFFD for the stray byte */
		p++;
	}
	if (size)
		buf[pos < size ? pos : size - 1] = '\0';
	return pos;
}

/*
 * Whether s is a number as a spreadsheet reads one: a sign, digits with at most one
 * point, an exponent.  Such a cell is a value, never a formula, and stays as it is.
 */
static bool is_number(const char *s)
{
	const char *p = s + (*s == '+' || *s == '-');
	size_t digits = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p += 1 + (p[1] == '+' || p[1] == '-');
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return !*p;
}

/*
 * A spreadsheet reads a cell that starts with one of these as a formula (OWASP, "CSV
 * Injection"): '=' '+' '-' '@', and a tab or carriage return before one.
 */
static bool is_formula(const char *s)
{
	return s[0] && strchr("=+-@\t\r", s[0]) && !is_number(s);
}

void orr_csv_write_field(FILE *f, const char *s)
{
	size_t len = orr_utf8_replace(NULL, 0, s);
	char small[256], *buf = len < sizeof(small) ? small : orr_xmalloc(len + 1);
	bool quote;

	orr_utf8_replace(buf, len + 1, s);
	quote = buf[strcspn(buf, ",\"\r\n")] != '\0';
	if (quote)
		fputc('"', f);
	if (is_formula(buf))
		fputc('\'', f);
	for (const char *p = buf; *p;) {
		const unsigned char c = (unsigned char)*p;
		size_t n = orr_utf8_len(p); /* at least 1: buf is valid UTF-8 */

		if (c == '"')
			fputs("\"\"", f);
		else if ((c < 0x20 && !strchr("\t\r\n", c)) || c == 0x7f)
			fprintf(f, "\\x%02x", c); /* as the text output writes them */
		else if (c >= 0x80 && is_format_control(decode((const unsigned char *)p, n)))
			fprintf(f, "\\u%04x", decode((const unsigned char *)p, n));
		else
			fwrite(p, 1, n, f);
		p += n;
	}
	if (quote)
		fputc('"', f);
	if (buf != small)
		free(buf);
}
