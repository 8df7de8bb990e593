/* SPDX-License-Identifier: MIT */
/*
 * traces/kineto/scan.h — a byte-level JSON structure scanner.  It validates structure
 * (strings, brackets, depth) without building anything, for the parts of a Kineto
 * file that are walked rather than parsed, and to find exact event boundaries when
 * the fast guess fails.  All positions are byte offsets into buf[0..len).
 */
#ifndef ORRERY_TRACES_SCAN_H
#define ORRERY_TRACES_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Depths up to this need no allocation (the limit itself is ORR__LIMIT_DEPTH). */
#define ORR__SCAN_STACK_DEPTH 1024

struct orr__scan_error {
	int err;       /* ORR_EMALFORMED, ORR_ETRUNCATED, ORR_ETOOBIG (deeper than max_depth) */
	size_t offset; /* where it went wrong */
	const char *what;
};

/* The first non-whitespace position at or after pos (len if none). */
size_t orr__scan_ws(const char *buf, size_t len, size_t pos);
/* buf[pos] is '"': *ret_end is just past the closing quote. */
int orr__scan_string(const char *buf, size_t len, size_t pos, size_t *ret_end,
		     struct orr__scan_error *reterr);
/*
 * Any JSON value starting at pos (after whitespace), nested at most max_depth deep:
 * *ret_end is just past it.
 */
int orr__scan_value(const char *buf, size_t len, size_t pos, size_t max_depth, size_t *ret_end,
		    struct orr__scan_error *reterr);
/*
 * pos is the '{' of an event inside an array.  Walks whole events separated by commas
 * until past pos + min_bytes or the closing ']', and sets *ret_cut to the '}' of the
 * last event walked.
 */
int orr__scan_events(const char *buf, size_t len, size_t pos, size_t min_bytes, size_t max_depth,
		     size_t *ret_cut, struct orr__scan_error *reterr);

/*
 * A JSON number of microseconds (s[0..n), trailing whitespace allowed) to integer
 * nanoseconds, exactly where the text has at most 3 decimals, rounded otherwise.
 */
bool orr__scan_us_to_ns(const char *s, size_t n, int64_t *ret);

#ifdef __cplusplus
}
#endif

#endif
