/* SPDX-License-Identifier: MIT */
/* Helpers of the Kineto importer's unit tests (test-traces-kineto*.c); after cmocka.h. */
#ifndef ORRERY_KINETO_TEST_H
#define ORRERY_KINETO_TEST_H

#include <string.h>

#include "orrery/trace.h"

static inline struct orr_trace *import_str(const char *json)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r = orr_trace_import_buffer("test.json", json, strlen(json), NULL, &t, &d);

	if (r)
		fail_msg("import failed: %s: %s", orr_errname(r), d.msg);
	assert_int_equal(orr_trace_rank_count(t), 1);
	return t;
}

static inline int import_err(const char *json, size_t len, struct orr_diag *d)
{
	struct orr_trace *t = NULL;
	int r = orr_trace_import_buffer("test.json", json, len, NULL, &t, d);

	if (r == 0)
		orr_trace_free(t);
	return r;
}

/* The only event called NAME (fails when there is none or more than one). */
static inline const struct orr_event *event_named(const struct orr_trace *t,
						  const struct orr_rank *r, const char *name)
{
	const struct orr_event *found = NULL;

	for (size_t i = 0; i < r->nevents; i++) {
		if (strcmp(orr_trace_str(t, r->events[i].name), name) != 0)
			continue;
		if (found)
			fail_msg("two events called '%s'", name);
		found = &r->events[i];
	}
	if (!found)
		fail_msg("no event called '%s'", name);
	return found;
}

#endif
