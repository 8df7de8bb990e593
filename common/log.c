/* SPDX-License-Identifier: MIT */
/* Debug logging by subsystem (ORR_DEBUG=traces,graph or all) and a monotonic clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orrery/common.h"
#include "banned.h"

bool orr_debug_enabled(const char *subsystem)
{
	const char *env = getenv("ORR_DEBUG");
	size_t len = strlen(subsystem);

	if (!env || !*env)
		return false;
	while (*env) {
		size_t n = strcspn(env, ",");

		if ((n == len && strncmp(env, subsystem, n) == 0) ||
		    (n == 3 && strncmp(env, "all", 3) == 0))
			return true;
		env += n;
		if (*env == ',')
			env++;
	}
	return false;
}

void orr_debug(const char *subsystem, const char *fmt, ...)
{
	char msg[1024], text[sizeof(msg) * 4];
	va_list ap;

	if (!orr_debug_enabled(subsystem))
		return;
	/* Messages name files and ops: escaped, so that each stays one line of text. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	orr_text_escape(text, sizeof(text), msg);
	fprintf(stderr, "orrery[%s]: %s\n", subsystem, text);
}

int64_t orr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
