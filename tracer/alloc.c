/* SPDX-License-Identifier: MIT */
/*
 * Allocation inside the tracer: plain malloc whose failure the caller handles (drop and
 * count), with a hook through which the tests make allocations fail.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* Allocations left before they start failing; negative: never fail. */
static _Atomic int64_t fail_after = -1;

void orr__talloc_fail_after(int64_t after)
{
	atomic_store(&fail_after, after);
}

static bool may_allocate(void)
{
	int64_t left = atomic_load_explicit(&fail_after, memory_order_relaxed);

	while (left >= 0) {
		if (left == 0)
			return false;
		if (atomic_compare_exchange_weak(&fail_after, &left, left - 1))
			return true;
	}
	return true;
}

void *orr__talloc(size_t size)
{
	return may_allocate() ? malloc(size) : NULL;
}

void *orr__tcalloc(size_t n, size_t size)
{
	return may_allocate() ? calloc(n, size) : NULL;
}

void *orr__trealloc(void *p, size_t size)
{
	return may_allocate() ? realloc(p, size) : NULL;
}

void *orr__talloc_aligned(size_t align, size_t size)
{
	void *p = NULL;

	if (!may_allocate() || posix_memalign(&p, align, size) != 0)
		return NULL;
	return p;
}

char *orr__tstrndup(const char *s, size_t n)
{
	char *d = orr__talloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}
