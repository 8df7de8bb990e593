/* SPDX-License-Identifier: MIT */
/*
 * The step window: record steps K+1 .. K+N only (ORR_RECORD_SKIP = K, ORR_RECORD_STEPS = N).
 *
 * Step markers are counted in real time by the NVTX callback, in the order they are seen;
 * the window's start and end are the CUPTI timestamps taken there.  Activity records
 * arrive later, out of order, and are filtered here by their own times: CPU records
 * before the start or from the end on are dropped; a GPU record from the end on is kept
 * only when the call that launched it was in the window, which is decided at close
 * (ORR__PEND), as is a GPU record just before the start (clocks of GPU records are
 * interpolated to the CPU's, so a kernel launched at the start may appear to begin a
 * little before it).  The callback stores the window's times before it publishes the
 * count, so a reader that sees the count sees the times.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

void orr__window_init(struct orr__window *w, int64_t skip, int64_t steps, const char *prefix)
{
	memset(w, 0, sizeof(*w));
	/* Large enough for any job, small enough that skip + steps + 2 cannot overflow. */
	w->skip = skip < INT64_MAX / 4 ? skip : INT64_MAX / 4;
	w->steps = steps < INT64_MAX / 4 ? steps : INT64_MAX / 4;
	w->windowed = skip > 0 || steps > 0;
	snprintf(w->prefix, sizeof(w->prefix), "%s", prefix);
	w->prefix_len = strlen(w->prefix);
	pthread_mutex_init(&w->lock, NULL);
	atomic_init(&w->seen, 0);
	atomic_init(&w->start_ns, w->windowed ? INT64_MAX : INT64_MIN);
	atomic_init(&w->end_ns, INT64_MAX);
	atomic_init(&w->first_step, -1);
	atomic_init(&w->last_step, -1);
	atomic_init(&w->stop, false);
}

void orr__window_release(struct orr__window *w)
{
	pthread_mutex_destroy(&w->lock);
}

int64_t orr__window_step_of(const struct orr__window *w, const char *name, size_t len)
{
	int64_t n = 0;
	size_t i;

	if (len <= w->prefix_len || memcmp(name, w->prefix, w->prefix_len) != 0)
		return -1;
	for (i = w->prefix_len; i < len && name[i] >= '0' && name[i] <= '9'; i++) {
		if (n > (INT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (name[i] - '0');
	}
	/* Digits, then the end or emit_nvtx's ", seq = ..." / ", op_id = ...". */
	if (i == w->prefix_len || (i < len && name[i] != ','))
		return -1;
	return n;
}

bool orr__window_marker(struct orr__window *w, int64_t step, int64_t ts_ns)
{
	/* Markers are counted from 1: the window is markers k+1 .. end, both included. */
	int64_t n, k = w->skip, end = w->steps > 0 ? w->skip + w->steps : INT64_MAX - 2;
	bool stop = false;

	if (!w->windowed)
		return false;
	pthread_mutex_lock(&w->lock);
	n = atomic_load(&w->seen);
	if (n < INT64_MAX)
		n++;
	if (n == k + 1) {
		atomic_store(&w->start_ns, ts_ns);
		atomic_store(&w->first_step, step);
	}
	if (n >= k + 1 && n <= end)
		atomic_store(&w->last_step, step);
	if (w->steps > 0 && n == end + 1)
		atomic_store(&w->end_ns, ts_ns);
	if (w->steps > 0 && n >= end + 2) {
		atomic_store(&w->stop, true);
		stop = true;
	}
	atomic_store(&w->seen, n);
	pthread_mutex_unlock(&w->lock);
	return stop;
}

enum orr__verdict orr__window_check(const struct orr__window *w, bool gpu, int64_t t_ns)
{
	int64_t start, end;

	if (!w->windowed)
		return ORR__KEEP;
	start = atomic_load(&w->start_ns);
	end = atomic_load(&w->end_ns);
	if (t_ns >= end)
		return gpu ? ORR__PEND : ORR__DROP;
	if (t_ns >= start)
		return ORR__KEEP;
	if (gpu && start < INT64_MAX && t_ns >= start - ORR__WINDOW_SLACK_NS)
		return ORR__PEND;
	return ORR__DROP;
}

bool orr__window_has_step(const struct orr__window *w, int64_t step)
{
	int64_t first = atomic_load(&w->first_step), last = atomic_load(&w->last_step);

	if (!w->windowed)
		return true;
	return first >= 0 && step >= 0 && step >= first && step <= last;
}

bool orr__window_done(const struct orr__window *w, int64_t now_ns)
{
	int64_t end = atomic_load(&w->end_ns);

	if (!w->windowed || end == INT64_MAX)
		return false;
	return atomic_load(&w->stop) || now_ns - end >= ORR__WINDOW_LINGER_NS;
}
