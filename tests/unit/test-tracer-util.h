/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the tracer's session tests: a session writing into a temporary directory,
 * flat records as cupti-records.c makes them, and lookups in the imported rank.
 */
#ifndef ORRERY_TEST_TRACER_UTIL_H
#define ORRERY_TEST_TRACER_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tracer/internal.h"
#include "orrery/trace.h"

#define PID 100
#define TID 101

static inline const char *api_names(void *data, bool driver, uint32_t cbid)
{
	static const struct {
		bool driver;
		uint32_t cbid;
		const char *name;
	} table[] = {
		{ false, 211, "cudaLaunchKernel_v7000" },
		{ false, 41, "cudaMemcpyAsync_v3020" },
		{ false, 51, "cudaMemsetAsync_v3020" },
		{ false, 135, "cudaEventRecord_v3020" },
		{ false, 147, "cudaStreamWaitEvent_v3020" },
		{ false, 137, "cudaEventSynchronize_v3020" },
		{ false, 131, "cudaStreamSynchronize_v3020" },
		{ false, 311, "cudaGraphLaunch_v10000" },
		{ true, 307, "cuLaunchKernel" },
		{ true, 652, "cuLaunchKernelEx" },
		{ true, 719, "cuKernelGetName" },
		{ true, 372, "cuGetErrorString" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].driver == driver && table[i].cbid == cbid)
			return table[i].name;
	return NULL;
}

struct fixture {
	char path[512];
	struct orr__window win;
	struct orr__session *s;
	struct orr__summary sum;
	struct orr_trace *t;
};

static inline int fixture_start(struct fixture *f, const char *dir, int64_t skip, int64_t steps,
				const char *prefix, size_t max_open, struct orr__nccl *nccl)
{
	struct orr__session_config c = {
		.path = f->path,
		.header = { .rank = 0,
			    .world_size = 1,
			    .local_rank = 0,
			    .pid = PID,
			    .host = "node1",
			    .producer = "orrery-tracer test",
			    .clock_source = "CLOCK_REALTIME",
			    .cupti_version = 130001 },
		.window = &f->win,
		.api_name = api_names,
		.max_open = max_open,
		.nccl = nccl,
	};

	orr__window_init(&f->win, skip, steps, prefix);
	if (snprintf(f->path, sizeof(f->path), "%s/rank-0-%d.orr", dir, PID) >=
	    (int)sizeof(f->path))
		return -ENAMETOOLONG;
	f->t = NULL;
	return orr__session_new(&c, &f->s);
}

static inline int fixture_new_with(struct fixture *f, const char *dir, int64_t skip, int64_t steps,
				   const char *prefix, size_t max_open)
{
	return fixture_start(f, dir, skip, steps, prefix, max_open, NULL);
}

static inline int fixture_new(struct fixture *f, const char *dir, int64_t skip, int64_t steps)
{
	return fixture_new_with(f, dir, skip, steps, "ProfilerStep#", 0);
}

static inline void fixture_close(struct fixture *f)
{
	orr__session_close(f->s, &f->sum);
	f->s = NULL;
}

static inline const struct orr_rank *fixture_import(struct fixture *f)
{
	struct orr_diag d;

	if (orr_trace_import(f->path, NULL, &f->t, &d))
		fail_msg("%s: %s", f->path, d.msg);
	assert_int_equal(orr_trace_rank_count(f->t), 1);
	return orr_trace_get_rank(f->t, 0);
}

static inline void fixture_free(struct fixture *f)
{
	orr_trace_free(f->t);
	orr__window_release(&f->win);
}

/* ---- records ---- */

static inline struct orr__trec rec(enum orr__trec_kind kind)
{
	return (struct orr__trec){ .kind = (uint8_t)kind,
				   .pid = PID,
				   .tid = TID,
				   .event_id = ORR__INVALID32,
				   .sync_id = ORR__INVALID32 };
}

static inline void api(struct orr__session *s, bool driver, uint32_t cbid, uint32_t corr,
		       int64_t start)
{
	struct orr__trec r = rec(driver ? ORR__TREC_DRIVER : ORR__TREC_RUNTIME);

	r.cbid = cbid;
	r.correlation = corr;
	r.start_ns = start;
	r.end_ns = start + 10;
	orr__session_add(s, &r);
}

static inline void kernel(struct orr__session *s, const char *name, uint32_t corr, uint32_t stream,
			  int64_t start, int64_t end)
{
	struct orr__trec r = rec(ORR__TREC_KERNEL);

	r.name = name;
	r.correlation = corr;
	r.stream = stream;
	r.start_ns = start;
	r.end_ns = end;
	orr__session_add(s, &r);
}

static inline void marker(struct orr__session *s, uint8_t what, uint64_t id, const char *name,
			  const char *domain, int64_t ts)
{
	struct orr__trec r = rec(ORR__TREC_MARKER);

	r.marker = what;
	r.id = id;
	r.name = name;
	r.domain = domain;
	r.start_ns = r.end_ns = ts;
	orr__session_add(s, &r);
}

static inline void sync_rec(struct orr__session *s, enum orr_sync_kind kind, uint32_t corr,
			    uint32_t stream, uint32_t event, uint64_t sync_id, int64_t start)
{
	struct orr__trec r = rec(ORR__TREC_SYNC);

	r.sync_kind = (uint8_t)kind;
	r.correlation = corr;
	r.context = 1;
	r.stream = stream;
	r.event_id = event;
	r.sync_id = sync_id;
	r.start_ns = start;
	r.end_ns = start + 5;
	orr__session_add(s, &r);
}

static inline void cuda_event(struct orr__session *s, uint32_t corr, uint32_t stream,
			      uint32_t event, uint64_t sync_id)
{
	struct orr__trec r = rec(ORR__TREC_CUDA_EVENT);

	r.correlation = corr;
	r.context = 1;
	r.stream = stream;
	r.event_id = event;
	r.sync_id = sync_id;
	orr__session_add(s, &r);
}

static inline void copy(struct orr__session *s, enum orr__trec_kind kind, uint32_t corr,
			int64_t bytes, int64_t start)
{
	struct orr__trec r = rec(kind);

	r.correlation = corr;
	r.stream = 9;
	r.bytes = bytes;
	r.copy_kind = 2; /* DtoH */
	r.src_kind = 3;  /* Device */
	r.dst_kind = 1;  /* Pageable */
	r.start_ns = start;
	r.end_ns = start + 100;
	orr__session_add(s, &r);
}

/* ---- lookups in the imported rank ---- */

static inline const struct orr_event *find(const struct orr_trace *t, const struct orr_rank *r,
					   enum orr_event_kind kind, const char *name, size_t nth)
{
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == kind &&
		    (!name || strcmp(orr_trace_str(t, r->events[i].name), name) == 0) && !nth--)
			return &r->events[i];
	return NULL;
}

static inline const struct orr_event *must_find(const struct orr_trace *t, const struct orr_rank *r,
						enum orr_event_kind kind, const char *name)
{
	const struct orr_event *e = find(t, r, kind, name, 0);

	if (!e)
		fail_msg("no %s event named '%s'", orr_event_kind_name(kind), name);
	return e;
}

#endif
