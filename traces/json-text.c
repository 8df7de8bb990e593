/* SPDX-License-Identifier: MIT */
/* JSON text for the trace subsystem's writers: strings that are always valid, exact times. */
#include <stdint.h>
#include <stdio.h>

#include "json-text.h"
#include "orrery/common.h"
#include "banned.h"

/* One escaping for every JSON writer (common/escape.c), so that they agree. */
void orr__json_string(FILE *f, const char *s)
{
	orr_json_write_string(f, s);
}

void orr__json_us(FILE *f, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(f, ",\"%s\":%s%llu.%03llu", key, ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		(unsigned long long)(a % 1000));
}
