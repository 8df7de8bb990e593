/* SPDX-License-Identifier: MIT */
/*
 * Small Kineto JSON traces written by the tests themselves: a growing document, one
 * helper per kind of event, and its import.  Times are microseconds, as Kineto writes
 * them.  Include after <cmocka.h>.
 */
#ifndef ORRERY_TEST_TRACE_DOC_H
#define ORRERY_TEST_TRACE_DOC_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "orrery/trace.h"

#define US 1000

struct doc {
	char *s;
	size_t n, cap;
};

static inline void doc_add(struct doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void doc_add(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	d->s = orr_xgrow(d->s, 1, &d->cap, d->n + (size_t)len + 2);
	va_start(ap, fmt);
	vsnprintf(d->s + d->n, (size_t)len + 1, fmt, ap);
	va_end(ap);
	d->n += (size_t)len;
}

static inline void doc_sep(struct doc *d)
{
	doc_add(d, "%s", d->n > 1 && d->s[d->n - 1] != '[' ? ",\n" : "\n");
}

/* Starts a trace; rank < 0 writes no distributedInfo. */
static inline void doc_begin(struct doc *d, int rank, int world)
{
	d->n = 0;
	if (rank >= 0)
		doc_add(d, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": %d},\n", rank,
			world);
	else
		doc_add(d, "{");
	doc_add(d, "\"traceEvents\": [");
}

/* A runtime call on thread tid. */
static inline void doc_call(struct doc *d, const char *name, int tid, double ts, double dur,
			    int corr)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"correlation\": %d}}",
		name, tid, ts, dur, corr);
}

/* A kernel on stream `stream` of device 0; corr < 0 writes none; extra: more args. */
static inline void doc_kernel(struct doc *d, const char *name, int stream, double ts, double dur,
			      int corr, const char *extra)
{
	char c[32] = "";

	if (corr >= 0)
		snprintf(c, sizeof(c), "\"correlation\": %d, ", corr);
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {%s\"stream\": %d, \"device\": 0%s}}",
		name, stream, ts, dur, c, stream, extra ? extra : "");
}

static inline void doc_copy(struct doc *d, const char *name, int stream, double ts, double dur,
			    int corr)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"correlation\": %d, \"stream\": %d,"
		" \"device\": 0}}",
		name, stream, ts, dur, corr, stream);
}

/* A cuda_sync record: stream `on` waits for the event recorded (corr rec) on `from`. */
static inline void doc_sync(struct doc *d, const char *name, int on, double ts, int corr, int from,
			    int rec)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": 0, \"args\": {\"correlation\": %d, \"stream\": %d,"
		" \"wait_on_stream\": %d, \"wait_on_cuda_event_record_corr_id\": %d, \"device\": 0}}",
		name, on, ts, corr, on, from, rec);
}

static inline void doc_step(struct doc *d, int k, double ts, double dur)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f}",
		k, ts, dur);
}

/* An op or annotation (cat "cpu_op" or "user_annotation") on thread tid. */
static inline void doc_region(struct doc *d, const char *cat, const char *name, int tid, double ts,
			      double dur)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d,"
		" \"ts\": %.3f, \"dur\": %.3f}",
		cat, name, tid, ts, dur);
}

/* An op on thread 1 with its operands' dims (JSON) and dtypes; NULL dims: none. */
static inline void doc_op(struct doc *d, const char *name, double ts, double dur, const char *dims,
			  const char *types)
{
	doc_sep(d);
	doc_add(d,
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1,"
		" \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": 1",
		name, ts, dur);
	if (dims)
		doc_add(d, ", \"Input Dims\": %s, \"Input type\": %s", dims, types);
	doc_add(d, "}}");
}

/*
 * A launch at ts on thread 1, inside whatever op is open there, and its kernel of dur_us
 * on stream 7; *corr is their correlation, and counts on.
 */
static inline void doc_launch(struct doc *d, const char *kernel, double ts, double dur_us,
			      int *corr)
{
	doc_call(d, "cudaLaunchKernel", 1, ts, 1, *corr);
	doc_kernel(d, kernel, 7, ts + 2, dur_us, *corr, NULL);
	(*corr)++;
}

/* Closes the document and imports it (failing the test on an error). */
static inline struct orr_trace *doc_import(struct doc *d, const char *name)
{
	struct orr_trace *t = NULL;
	struct orr_diag diag;
	int r;

	doc_add(d, "]}");
	r = orr_trace_import_buffer(name, d->s, d->n, NULL, &t, &diag);
	if (r)
		fail_msg("import failed: %s: %s", orr_errname(r), diag.msg);
	return t;
}

#endif
