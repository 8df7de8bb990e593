/* SPDX-License-Identifier: MIT */
/*
 * traces/json-text.h — JSON text for the trace subsystem's writers (chrome-write.c,
 * bundle.c), in json-text.c: strings escaped so that the output is always valid JSON.
 */
#ifndef ORRERY_TRACES_JSON_TEXT_H
#define ORRERY_TRACES_JSON_TEXT_H

#include <stdint.h>
#include <stdio.h>

/*
 * S as a quoted JSON string: '"', '\\' and control characters escaped, bytes that are
 * not UTF-8 written as U+FFFD (JSON text must be UTF-8).
 */
void orr__json_string(FILE *f, const char *s);

/* ,"KEY":NS as microseconds with three decimals, so that nanoseconds survive. */
void orr__json_us(FILE *f, const char *key, int64_t ns);

#endif
