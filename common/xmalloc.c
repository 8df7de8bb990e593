/* SPDX-License-Identifier: MIT */
/* Allocation that cannot fail: outside the tracer, running out of memory is fatal. */
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* A transparent huge page, and the smallest block asked to use them. */
#define HUGE_PAGE  ((uintptr_t)2 << 20)
#define HUGE_BLOCK ((size_t)4 << 20)

/*
 * A large block (an import's read buffer, its events, a graph's tasks) asks for 2 MiB
 * pages, as glibc's glibc.malloc.hugetlb=1 tunable does for every block it maps: the
 * kernel then faults and zeroes it 2 MiB at a time instead of 4 KiB (a 133 MB trace's
 * import took 27,000 faults, a sixth of its time).  Only the block's whole huge pages
 * are advised, and the advice is a hint: where the kernel gives no huge pages (THP
 * "never", none free) nothing changes.
 */
static void *huge(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(HUGE_PAGE - 1);

	if (size >= HUGE_BLOCK && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
	return p;
}

void *orr_xmalloc(size_t size)
{
	return huge(checked(malloc(size ? size : 1)), size);
}

void *orr_xcalloc(size_t n, size_t size)
{
	void *p = checked(calloc(n ? n : 1, size ? size : 1));

	return n <= SIZE_MAX / (size ? size : 1) ? huge(p, n * size) : p;
}

/*
 * A large block grows into a new one advised before the old bytes are copied: realloc()
 * would copy them into pages it faulted 4 KiB at a time (the events' table, growing,
 * took two fifths of an import's faults).
 */
void *orr_xrealloc(void *p, size_t size)
{
	size_t old;
	void *n;

	if (!p || size < HUGE_BLOCK || (old = malloc_usable_size(p)) >= size)
		return huge(checked(realloc(p, size ? size : 1)), size);
	n = huge(checked(malloc(size)), size);
	memcpy(n, p, old);
	free(p);
	return n;
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
