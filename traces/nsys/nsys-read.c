/* SPDX-License-Identifier: MIT */
/*
 * Nsight Systems: the SQLite export (`nsys export --type sqlite`), read with libsqlite3
 * from memory (sqlite3_deserialize, read-only: nothing is written back).  One file is
 * one profiled process, one rank.  What is taken, per table (docs/inputs.md):
 *
 *   CUPTI_ACTIVITY_KIND_RUNTIME   CUDA runtime calls on their thread (globalTid)
 *   CUPTI_ACTIVITY_KIND_KERNEL    kernels on (deviceId, streamId), with their launch
 *   CUPTI_ACTIVITY_KIND_MEMCPY    copies, named by copyKind, with their bytes
 *   CUPTI_ACTIVITY_KIND_MEMSET    sets, with their bytes
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  event, stream and context syncs and stream
 *                                 waits; a wait or event sync is paired with the last
 *                                 record of its event before it (CUDA_EVENT, by
 *                                 correlation id), as Kineto pairs them
 *   NVTX_EVENTS                   push/pop and start/end ranges as annotations (steps:
 *                                 ProfilerStep#N); NCCL's payloads (nsys-nccl.c)
 *   StringIds, ThreadNames        names
 *   TARGET_INFO_GPU               devices
 *   TARGET_INFO_SESSION_START_TIME  the clock: times become UTC nanoseconds, so that the
 *                                 files of several ranks line up
 *
 * A table the export lacks is skipped; one of another shape (a column missing) is an
 * error naming it.  Every row counts against the events and places limits.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsys-read.h"
#include "banned.h"

/* A cudaEventRecord (CUPTI_ACTIVITY_KIND_CUDA_EVENT): its event, call and stream. */
struct record {
	int64_t event, corr, stream;
};

/* An ORR_EMALFORMED diag naming table. */
static int fail(struct orr__nsys *n, const char *table, const char *what)
{
	return orr_diag_set(n->diag, ORR_EMALFORMED, n->name, -1, -1,
			    "Nsight Systems export, table %s: %s", table, what);
}

bool orr__nsys_has_table(struct orr__nsys *n, const char *table)
{
	sqlite3_stmt *st;
	bool yes;

	if (sqlite3_prepare_v2(n->db,
			       "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1,
			       &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

bool orr__nsys_has_column(struct orr__nsys *n, const char *table, const char *column)
{
	sqlite3_stmt *st;
	bool yes;

	if (!orr__nsys_has_table(n, table) ||
	    sqlite3_prepare_v2(n->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1,
			       &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

sqlite3_stmt *orr__nsys_query(struct orr__nsys *n, const char *table, const char *sql, int *ret_err)
{
	sqlite3_stmt *st = NULL;

	*ret_err = 0;
	if (!orr__nsys_has_table(n, table))
		return NULL;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) {
		*ret_err = fail(n, table, sqlite3_errmsg(n->db));
		return NULL;
	}
	return st;
}

int orr__nsys_done(struct orr__nsys *n, const char *table, sqlite3_stmt *st, int rc, int r)
{
	if (!r && rc != SQLITE_DONE)
		r = fail(n, table, sqlite3_errmsg(n->db));
	sqlite3_finalize(st);
	return r;
}

uint32_t orr__nsys_intern(struct orr__nsys *n, const char *s)
{
	return s ? orr_strtab_intern(n->t->strs, s, strlen(s)) : ORR_STR_NONE;
}

static int cmp_id(const void *a, const void *b)
{
	const struct orr__nsys_str *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int read_strings(struct orr__nsys *n)
{
	size_t cap = 0;
	sqlite3_stmt *st;
	int r, rc;

	if (!(st = orr__nsys_query(n, "StringIds", "SELECT id, value FROM StringIds", &r)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (v && strlen(v) > n->lim->max[ORR__LIMIT_STRING_BYTES]) {
			sqlite3_finalize(st);
			return orr__limit_fail(n->lim, ORR__LIMIT_STRING_BYTES, n->diag, n->name,
					       -1, -1);
		}
		ORR_VEC_PUSH(n->strs, n->nstrs, cap,
			     ((struct orr__nsys_str){ sqlite3_column_int64(st, 0),
						      orr__nsys_intern(n, v) }));
	}
	if (n->nstrs)
		qsort(n->strs, n->nstrs, sizeof(*n->strs), cmp_id);
	return orr__nsys_done(n, "StringIds", st, rc, 0);
}

uint32_t orr__nsys_string(const struct orr__nsys *n, sqlite3_stmt *st, int col)
{
	struct orr__nsys_str key = { sqlite3_column_int64(st, col), 0 }, *hit;

	if (sqlite3_column_type(st, col) == SQLITE_NULL || !n->nstrs)
		return ORR_STR_NONE;
	hit = bsearch(&key, n->strs, n->nstrs, sizeof(*n->strs), cmp_id);
	return hit ? hit->str : ORR_STR_NONE;
}

static int read_session_start(struct orr__nsys *n)
{
	sqlite3_stmt *st;
	int r, rc;

	if (!(st = orr__nsys_query(n, "TARGET_INFO_SESSION_START_TIME",
				   "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", &r)))
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n->base_ns = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	return orr__nsys_done(n, "TARGET_INFO_SESSION_START_TIME", st, rc, 0);
}

static int read_devices(struct orr__nsys *n)
{
	sqlite3_stmt *st;
	int r, rc;

	if (!(st = orr__nsys_query(
		      n, "TARGET_INFO_GPU",
		      "SELECT id, name, smCount, totalMemory, computeMajor, computeMinor "
		      "FROM TARGET_INFO_GPU",
		      &r)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*(struct orr_device *)orr__vec_push(&n->rb->devices) = (struct orr_device){
			.id = sqlite3_column_int(st, 0),
			.name = orr__nsys_intern(n, (const char *)sqlite3_column_text(st, 1)),
			.num_sms = sqlite3_column_int(st, 2),
			.total_mem_bytes = sqlite3_column_int64(st, 3),
			.compute_major = sqlite3_column_int(st, 4),
			.compute_minor = sqlite3_column_int(st, 5),
		};
	return orr__nsys_done(n, "TARGET_INFO_GPU", st, rc, 0);
}

static int read_thread_names(struct orr__nsys *n)
{
	sqlite3_stmt *st;
	int r, rc;

	if (!(st = orr__nsys_query(n, "ThreadNames", "SELECT nameId, globalTid FROM ThreadNames",
				   &r)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t g = sqlite3_column_int64(st, 1);

		*(struct orr__meta *)orr__vec_push(&n->rb->metas) =
			(struct orr__meta){ .pid = orr__nsys_pid(g),
					    .tid = orr__nsys_tid(g),
					    .rank = -1,
					    .name = orr__nsys_string(n, st, 0),
					    .thread = 1 };
	}
	return orr__nsys_done(n, "ThreadNames", st, rc, 0);
}

/* A new event on place; the limits on events and places hold. */
static int add_event(struct orr__nsys *n, struct orr_event ev)
{
	if (n->rb->places.n > n->lim->max[ORR__LIMIT_PLACES])
		return orr__limit_fail(n->lim, ORR__LIMIT_PLACES, n->diag, n->name, -1, -1);
	if (n->rb->events.n >= n->lim->max[ORR__LIMIT_EVENTS])
		return orr__limit_fail(n->lim, ORR__LIMIT_EVENTS, n->diag, n->name, -1,
				       (int64_t)n->rb->events.n);
	*(struct orr_event *)orr__vec_push(&n->rb->events) = ev;
	return 0;
}

bool orr__nsys_span(const struct orr__nsys *n, sqlite3_stmt *st, struct orr_event *ev)
{
	int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

	/* Out of range: orr__rank_check_times() refuses what comes of it, without overflow. */
	if (s < -ORR_TIME_MAX || s > ORR_TIME_MAX)
		s = ORR_TIME_MAX + 1;
	if (e < -ORR_TIME_MAX || e > ORR_TIME_MAX)
		e = s;
	if (sqlite3_column_type(st, 1) == SQLITE_NULL || e < s)
		return false;
	ev->start_ns = orr_time_add(n->base_ns, s);
	ev->dur_ns = orr_time_sub(e, s);
	return true;
}

static struct orr_event event_of(int kind)
{
	return (struct orr_event){ .kind = (uint8_t)kind,
				   .correlation = -1,
				   .external_id = -1,
				   .args = ORR_NONE,
				   .coll = ORR_NONE };
}

/* "cudaLaunchKernel_v7000" as CUDA's headers and Kineto name it: "cudaLaunchKernel". */
static uint32_t call_name(struct orr__nsys *n, uint32_t id)
{
	const char *s = id == ORR_STR_NONE ? NULL : orr_strtab_get(n->t->strs, id);
	const char *v = NULL;

	for (const char *p = s ? strstr(s, "_v") : NULL; p; p = strstr(p + 1, "_v"))
		v = p;

	if (!v || !v[2] || strspn(v + 2, "0123456789") != strlen(v + 2))
		return id;
	return orr_strtab_intern(n->t->strs, s, (size_t)(v - s));
}

static int read_runtime(struct orr__nsys *n)
{
	static const char table[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
	sqlite3_stmt *st;
	int r = 0, rc;

	if (!(st = orr__nsys_query(n, table,
				   "SELECT start, end, globalTid, correlationId, nameId "
				   "FROM CUPTI_ACTIVITY_KIND_RUNTIME",
				   &r)))
		return r;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct orr_event ev = event_of(ORR_EVENT_RUNTIME);
		int64_t g = sqlite3_column_int64(st, 2);

		if (!orr__nsys_span(n, st, &ev))
			continue;
		ev.correlation = sqlite3_column_int64(st, 3);
		ev.name = call_name(n, orr__nsys_string(n, st, 4));
		ev.sub = (uint8_t)orr_call_classify(orr_trace_str(n->t, ev.name));
		/* The table holds the driver's calls too ("cuLaunchKernel"), nested in the
		 * runtime's: driver calls, as Kineto's cuda_driver. */
		if (ev.name != ORR_STR_NONE &&
		    strncmp(orr_trace_str(n->t, ev.name), "cu", 2) == 0 &&
		    strncmp(orr_trace_str(n->t, ev.name), "cuda", 4) != 0)
			ev.kind = ORR_EVENT_DRIVER;
		ev.place =
			orr__place(n->rb, ORR_PLACE_THREAD, orr__nsys_pid(g), orr__nsys_tid(g), -1);
		r = add_event(n, ev);
	}
	return orr__nsys_done(n, table, st, rc, r);
}

static int read_kernels(struct orr__nsys *n)
{
	static const char table[] = "CUPTI_ACTIVITY_KIND_KERNEL";
	sqlite3_stmt *st;
	int r = 0, rc;

	if (!(st = orr__nsys_query(
		      n, table,
		      "SELECT start, end, deviceId, streamId, correlationId, demangledName, "
		      "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
		      "dynamicSharedMemory, registersPerThread FROM CUPTI_ACTIVITY_KIND_KERNEL",
		      &r)))
		return r;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct orr_event ev = event_of(ORR_EVENT_KERNEL);
		struct orr_kernel_args *k;
		int32_t dev = sqlite3_column_int(st, 2);

		if (!orr__nsys_span(n, st, &ev))
			continue;
		ev.correlation = sqlite3_column_int64(st, 4);
		ev.name = orr__nsys_string(n, st, 5);
		ev.place =
			orr__place(n->rb, ORR_PLACE_STREAM, dev, sqlite3_column_int64(st, 3), dev);
		k = orr__vec_push(&n->rb->kernels);
		for (int i = 0; i < 3; i++) {
			int64_t g = sqlite3_column_int64(st, 6 + i),
				b = sqlite3_column_int64(st, 9 + i);

			k->grid[i] = g > 0 && g <= UINT32_MAX ? (uint32_t)g : 0;
			k->block[i] = b > 0 && b <= UINT32_MAX ? (uint32_t)b : 0;
		}
		k->shared_bytes =
			(uint32_t)(sqlite3_column_int64(st, 12) + sqlite3_column_int64(st, 13));
		k->registers = (uint32_t)sqlite3_column_int(st, 14);
		ev.args = (uint32_t)(n->rb->kernels.n - 1);
		r = add_event(n, ev);
	}
	return orr__nsys_done(n, table, st, rc, r);
}

/* CUPTI's CUpti_ActivityMemcpyKind, as Kineto names a copy. */
static const char *copy_name(int kind)
{
	static const char *const names[] = {
		[1] = "Memcpy HtoD", [2] = "Memcpy DtoH",  [3] = "Memcpy HtoA", [4] = "Memcpy AtoH",
		[5] = "Memcpy AtoA", [6] = "Memcpy AtoD",  [7] = "Memcpy DtoA", [8] = "Memcpy DtoD",
		[9] = "Memcpy HtoH", [10] = "Memcpy PtoP",
	};

	return kind > 0 && kind < (int)(sizeof(names) / sizeof(names[0])) ? names[kind] : "Memcpy";
}

/* Copies (memset false) or sets: their bytes in the copies table. */
static int read_copies(struct orr__nsys *n, bool memset)
{
	const char *table = memset ? "CUPTI_ACTIVITY_KIND_MEMSET" : "CUPTI_ACTIVITY_KIND_MEMCPY";
	char sql[256];
	sqlite3_stmt *st;
	int r = 0, rc;

	snprintf(sql, sizeof(sql),
		 "SELECT start, end, deviceId, streamId, correlationId, bytes%s FROM %s",
		 memset ? "" : ", copyKind", table);
	if (!(st = orr__nsys_query(n, table, sql, &r)))
		return r;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct orr_event ev = event_of(memset ? ORR_EVENT_MEMSET : ORR_EVENT_MEMCPY);
		int32_t dev = sqlite3_column_int(st, 2);

		if (!orr__nsys_span(n, st, &ev))
			continue;
		ev.correlation = sqlite3_column_int64(st, 4);
		ev.name = orr__nsys_intern(n, memset ? "Memset"
						     : copy_name(sqlite3_column_int(st, 6)));
		ev.place =
			orr__place(n->rb, ORR_PLACE_STREAM, dev, sqlite3_column_int64(st, 3), dev);
		((struct orr_copy_args *)orr__vec_push(&n->rb->copies))->bytes =
			sqlite3_column_int64(st, 5);
		ev.args = (uint32_t)(n->rb->copies.n - 1);
		r = add_event(n, ev);
	}
	return orr__nsys_done(n, table, st, rc, r);
}

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	if (x->event != y->event)
		return (x->event > y->event) - (x->event < y->event);
	return (x->corr > y->corr) - (x->corr < y->corr);
}

/* Every CUDA event record, sorted by event and correlation id; *ret_n of them. */
static int read_records(struct orr__nsys *n, struct record **ret, size_t *ret_n)
{
	static const char table[] = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
	size_t cap = 0;
	sqlite3_stmt *st;
	int r, rc;

	*ret = NULL;
	*ret_n = 0;
	if (!(st = orr__nsys_query(
		      n, table,
		      "SELECT eventId, correlationId, streamId FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT",
		      &r)))
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*ret_n >= n->lim->max[ORR__LIMIT_EVENTS]) {
			r = orr__limit_fail(n->lim, ORR__LIMIT_EVENTS, n->diag, n->name, -1, -1);
			break;
		}
		ORR_VEC_PUSH(*ret, *ret_n, cap,
			     ((struct record){ sqlite3_column_int64(st, 0),
					       sqlite3_column_int64(st, 1),
					       sqlite3_column_int64(st, 2) }));
	}
	if (!r && *ret_n)
		qsort(*ret, *ret_n, sizeof(**ret), cmp_record);
	if ((r = orr__nsys_done(n, table, st, r ? SQLITE_DONE : rc, r))) {
		free(*ret); /* the caller has nothing to free on an error */
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

/* The last record of event before call corr, or NULL. */
static const struct record *record_before(const struct record *v, size_t nv, int64_t event,
					  int64_t corr)
{
	size_t lo = 0, hi = nv;

	while (lo < hi) { /* the first record past (event, corr) */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].event < event || (v[mid].event == event && v[mid].corr < corr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && v[lo - 1].event == event ? &v[lo - 1] : NULL;
}

/* CUPTI's CUpti_ActivitySynchronizationType, as Kineto names a sync. */
static enum orr_sync_kind sync_kind(int type)
{
	switch (type) {
	case 1:
		return ORR_SYNC_EVENT;
	case 2:
		return ORR_SYNC_STREAM_WAIT;
	case 3:
		return ORR_SYNC_STREAM;
	case 4:
		return ORR_SYNC_CONTEXT;
	default:
		return ORR_SYNC_UNKNOWN;
	}
}

/* A stream or event id; -1 for CUPTI's CUPTI_SYNCHRONIZATION_INVALID_VALUE. */
static int64_t valid_id(sqlite3_stmt *st, int col)
{
	int64_t v = sqlite3_column_int64(st, col);

	return sqlite3_column_type(st, col) == SQLITE_NULL || v < 0 || v >= UINT32_MAX ? -1 : v;
}

static int read_syncs(struct orr__nsys *n)
{
	static const char table[] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
	static const char *const names[ORR_SYNC_COUNT] = {
		[ORR_SYNC_UNKNOWN] = "Sync",
		[ORR_SYNC_EVENT] = "Event Sync",
		[ORR_SYNC_STREAM_WAIT] = "Stream Wait Event",
		[ORR_SYNC_STREAM] = "Stream Sync",
		[ORR_SYNC_CONTEXT] = "Context Sync",
	};
	struct record *rec;
	size_t nrec;
	sqlite3_stmt *st;
	int r, rc;

	if ((r = read_records(n, &rec, &nrec)))
		return r;
	if (!(st = orr__nsys_query(
		      n, table,
		      "SELECT start, end, deviceId, streamId, correlationId, syncType, eventId "
		      "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
		      &r))) {
		free(rec);
		return r;
	}
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct orr_event ev = event_of(ORR_EVENT_SYNC);
		struct orr_sync_args *a;
		const struct record *rd;
		int32_t dev = sqlite3_column_int(st, 2);

		if (!orr__nsys_span(n, st, &ev))
			continue;
		ev.correlation = sqlite3_column_int64(st, 4);
		ev.sub = (uint8_t)sync_kind(sqlite3_column_int(st, 5));
		ev.name = orr__nsys_intern(n, names[ev.sub]);
		ev.place = orr__place(n->rb, ORR_PLACE_STREAM, dev, valid_id(st, 3), dev);
		a = orr__vec_push(&n->rb->syncs);
		*a = (struct orr_sync_args){ valid_id(st, 3), -1, -1, valid_id(st, 6) };
		rd = a->event_id >= 0 ? record_before(rec, nrec, a->event_id, ev.correlation)
				      : NULL;
		if (rd && (ev.sub == ORR_SYNC_STREAM_WAIT || ev.sub == ORR_SYNC_EVENT)) {
			a->wait_on_stream = rd->stream;
			a->event_record_corr = rd->corr;
		}
		ev.args = (uint32_t)(n->rb->syncs.n - 1);
		r = add_event(n, ev);
	}
	free(rec);
	return orr__nsys_done(n, table, st, rc, r);
}

/* NVTX push/pop (59) and start/end (60) ranges with their text, as annotations. */
static int read_nvtx(struct orr__nsys *n)
{
	static const char table[] = "NVTX_EVENTS";
	sqlite3_stmt *st;
	int r = 0, rc;

	if (!(st = orr__nsys_query(n, table,
				   "SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS "
				   "WHERE eventType IN (59, 60)",
				   &r)))
		return r;
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct orr_event ev = event_of(ORR_EVENT_ANNOTATION);
		const char *text = (const char *)sqlite3_column_text(st, 2);
		int64_t g = sqlite3_column_int64(st, 4);

		if (!orr__nsys_span(n, st, &ev))
			continue;
		ev.name = text ? orr__nsys_intern(n, text) : orr__nsys_string(n, st, 3);
		if (ev.name == ORR_STR_NONE)
			ev.name = orr__nsys_intern(n, "(NVTX range)");
		ev.place =
			orr__place(n->rb, ORR_PLACE_THREAD, orr__nsys_pid(g), orr__nsys_tid(g), -1);
		r = add_event(n, ev);
	}
	return orr__nsys_done(n, table, st, rc, r);
}

/*
 * One profiled process per file: an export of several (`nsys profile torchrun ...`) would
 * merge their threads, streams and steps into one rank.
 */
static int one_process(struct orr__nsys *n)
{
	static const char table[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
	sqlite3_stmt *st;
	int64_t procs = 0;
	int r, rc;

	if (!(st = orr__nsys_query(
		      n, table,
		      "SELECT count(DISTINCT globalTid >> 24) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
		      &r)))
		return r;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		procs = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	if ((r = orr__nsys_done(n, table, st, rc, 0)))
		return r;
	if (procs > 1)
		return orr_diag_set(n->diag, ORR_EFORMAT, n->name, -1, -1,
				    "an Nsight Systems export of %lld processes; orrery reads one "
				    "process (one rank) per file: profile each rank into its own "
				    "report (nsys profile -o rank-%%q{RANK} ...) and export each",
				    (long long)procs);
	return 0;
}

int orr__nsys_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name, void *data,
		    size_t len, const struct orr__limits *limits, struct orr_diag *diag)
{
	struct orr__nsys n = { .t = t, .rb = rb, .name = name, .lim = limits, .diag = diag };
	int r;

	if (sqlite3_open_v2(":memory:", &n.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(n.db);
		return orr_diag_set(diag, -ENOMEM, name, -1, -1, "cannot open SQLite");
	}
	/* Untrusted input: no value longer than the string limit, no code in the schema. */
	sqlite3_limit(n.db, SQLITE_LIMIT_LENGTH,
		      limits->max[ORR__LIMIT_STRING_BYTES] < INT32_MAX
			      ? (int)limits->max[ORR__LIMIT_STRING_BYTES]
			      : INT32_MAX);
	sqlite3_db_config(n.db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(n.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	if (sqlite3_deserialize(n.db, "main", data, (sqlite3_int64)len, (sqlite3_int64)len,
				SQLITE_DESERIALIZE_READONLY) != SQLITE_OK ||
	    sqlite3_exec(n.db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) !=
		    SQLITE_OK) {
		r = orr_diag_set(diag, ORR_EMALFORMED, name, -1, -1,
				 "not a readable SQLite database: %s", sqlite3_errmsg(n.db));
		goto out;
	}
	if (!orr__nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_RUNTIME") &&
	    !orr__nsys_has_table(&n, "CUPTI_ACTIVITY_KIND_KERNEL") &&
	    !orr__nsys_has_table(&n, "NVTX_EVENTS")) {
		r = orr_diag_set(
			diag, ORR_ENOTRACE, name, -1, -1,
			orr__nsys_has_table(&n, "TARGET_INFO_SESSION_START_TIME")
				? "an Nsight Systems export without CUDA or NVTX activity "
				  "(profile with nsys profile --trace=cuda,nvtx)"
				: "a SQLite database without Nsight Systems' CUPTI or NVTX "
				  "tables");
		goto out;
	}
	if ((r = one_process(&n)))
		goto out;
	if (!(r = read_strings(&n)) && !(r = read_session_start(&n)) && !(r = read_devices(&n)) &&
	    !(r = read_thread_names(&n)) && !(r = read_runtime(&n)) && !(r = read_kernels(&n)) &&
	    !(r = read_copies(&n, false)) && !(r = read_copies(&n, true)) &&
	    !(r = read_syncs(&n)) && !(r = read_nvtx(&n)))
		r = orr__nsys_read_nccl(&n);
out:
	free(n.strs);
	sqlite3_close(n.db);
	return r;
}
