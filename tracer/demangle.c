/* SPDX-License-Identifier: MIT */
/*
 * Kernel names: CUPTI gives the mangled symbol, Kineto writes the demangled one, and
 * the rest of orrery reads names the Kineto way ("ncclDevKernel_AllReduce_Sum_f32_RING_LL
 * (ncclDevKernelArgs4K)").  The demangler is libstdc++'s __cxa_demangle, found at run
 * time so that the tracer has no C++ dependency of its own; without it names stay
 * mangled.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "session.h"
#include "banned.h"

static char *(*cxa_demangle)(const char *name, char *buf, size_t *len, int *status);
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	/* The handle is kept for the life of the process: the function lives in it. */
	if (h)
		*(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

char *orr__demangle(const char *mangled)
{
	int status = -1;
	char *s;

	if (strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	pthread_once(&once, find_demangler);
	if (!cxa_demangle)
		return NULL;
	s = cxa_demangle(mangled, NULL, NULL, &status);
	return status == 0 ? s : NULL;
}
