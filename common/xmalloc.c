/* SPDX-License-Identifier: MIT */
/* Allocation that cannot fail: outside the tracer, running out of memory is fatal. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

static void *checked(void *p)
{
	if (!p) {
		fputs("orrery: error: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

void *orr_xmalloc(size_t size)
{
	return checked(malloc(size ? size : 1));
}

void *orr_xcalloc(size_t n, size_t size)
{
	return checked(calloc(n ? n : 1, size ? size : 1));
}

void *orr_xrealloc(void *p, size_t size)
{
	return checked(realloc(p, size ? size : 1));
}

void *orr_xgrow(void *p, size_t elem, size_t *cap, size_t want)
{
	size_t n = *cap;

	if (want <= n)
		return p;
	n = n < 16 ? 16 : n + n / 2;
	if (n < want)
		n = want;
	if (n > SIZE_MAX / elem)
		checked(NULL);
	p = orr_xrealloc(p, n * elem);
	*cap = n;
	return p;
}

char *orr_xstrdup(const char *s)
{
	return orr_xstrndup(s, strlen(s));
}

char *orr_xstrndup(const char *s, size_t n)
{
	char *p = orr_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *orr_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		checked(NULL);
	p = orr_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
