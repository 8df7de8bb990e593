/* SPDX-License-Identifier: MIT */
/*
 * traces/nsys/nsys-read.h — what the Nsight Systems reader's files share: the state of
 * one export being read, and the helpers over its SQLite tables (nsys-read.c).
 */
#ifndef ORRERY_TRACES_NSYS_READ_H
#define ORRERY_TRACES_NSYS_READ_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

struct orr__nsys_str {
	int64_t id;
	uint32_t str;
};

struct orr__nsys {
	struct orr_trace *t;
	struct orr__rank_build *rb;
	const char *name;
	const struct orr__limits *lim;
	struct orr_diag *diag;
	sqlite3 *db;
	struct orr__nsys_str *strs; /* StringIds, sorted by id */
	size_t nstrs;
	int64_t base_ns; /* the session's start, UTC */
};

/* nsys's globalTid: the process id in bits 24-47, the thread id in bits 0-23. */
static inline int64_t orr__nsys_pid(int64_t gtid)
{
	return (gtid >> 24) & 0xffffff;
}

static inline int64_t orr__nsys_tid(int64_t gtid)
{
	return gtid & 0xffffff;
}

bool orr__nsys_has_table(struct orr__nsys *n, const char *table);
/* Whether table has a column named column (false without the table). */
bool orr__nsys_has_column(struct orr__nsys *n, const char *table, const char *column);
/* A statement over table, or NULL (with *ret_err set when the table has another shape). */
sqlite3_stmt *orr__nsys_query(struct orr__nsys *n, const char *table, const char *sql,
			      int *ret_err);
/*
 * The end of a statement's rows: r (an error met on a row), else 0, or an error for a
 * corrupt database (rc not SQLITE_DONE).
 */
int orr__nsys_done(struct orr__nsys *n, const char *table, sqlite3_stmt *st, int rc, int r);
uint32_t orr__nsys_intern(struct orr__nsys *n, const char *s);
/* The string of the StringIds id in column col; ORR_STR_NONE when there is none. */
uint32_t orr__nsys_string(const struct orr__nsys *n, sqlite3_stmt *st, int col);
/* start and end of columns 0 and 1, on the UTC clock; false for an open range. */
bool orr__nsys_span(const struct orr__nsys *n, sqlite3_stmt *st, struct orr_event *ev);

/*
 * NCCL's NVTX payloads (nsys-nccl.c): every kernel launch inside an NCCL call's range
 * gets the call's collective, and the communicators whose size the capture tells are
 * listed.  After the runtime calls are read.
 */
int orr__nsys_read_nccl(struct orr__nsys *n);

#endif
