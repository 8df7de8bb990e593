/* SPDX-License-Identifier: MIT */
/* Step boundaries and measured step times, as DESIGN.md defines them. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static bool is_gpu_task(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET;
}

int64_t orr_step_number(const char *name)
{
	int64_t n = 0;
	const char *p;

	/* Most names are ops': the first letter turns them away without a call. */
	if (name[0] != 'P' || strncmp(name, "ProfilerStep#", 13) != 0 || !name[13])
		return -1;
	for (p = name + 13; *p >= '0' && *p <= '9' && n < INT64_MAX / 10; p++)
		n = n * 10 + (*p - '0');
	return *p ? -1 : n;
}

static int cmp_step(const void *a, const void *b)
{
	const struct orr_step *x = a, *y = b;

	if (x->step != y->step)
		return (x->step > y->step) - (x->step < y->step);
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static bool has_i64(const int64_t *v, size_t n, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == key;
}

/*
 * The latest end of a GPU task launched by a call starting in [start, end] (and end
 * itself): the calls' correlations, a step's worth, in order, then one pass over the
 * tasks (sorting every task by correlation took a per cent of orrery info).
 */
static int64_t last_step_end(const struct orr_rank *r, int64_t start, int64_t end)
{
	int64_t *corr = NULL, last = end;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < r->nevents && r->events[i].start_ns <= end; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->start_ns >= start && e->correlation >= 0 &&
		    (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER))
			ORR_VEC_PUSH(corr, n, cap, e->correlation);
	}
	orr_sort_i64(corr, n);
	for (size_t i = 0; n && i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (is_gpu_task(e) && e->correlation >= 0 && e->start_ns + e->dur_ns > last &&
		    has_i64(corr, n, e->correlation))
			last = e->start_ns + e->dur_ns;
	}
	free(corr);
	return last;
}

/* Without step annotations the whole captured window is one step. */
static int whole_window(const struct orr_rank *r, struct orr_step **ret_steps, size_t *ret_n)
{
	struct orr_step *s;

	*ret_n = 0;
	*ret_steps = NULL;
	if (!r->nevents)
		return 0;
	s = orr_xmalloc(sizeof(*s));
	s->step = -1;
	s->start_ns = r->events[0].start_ns;
	s->end_ns = s->start_ns;
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].start_ns + r->events[i].dur_ns > s->end_ns)
			s->end_ns = r->events[i].start_ns + r->events[i].dur_ns;
	*ret_steps = s;
	*ret_n = 1;
	return 0;
}

int orr_rank_steps(const struct orr_trace *t, const struct orr_rank *r, struct orr_step **ret_steps,
		   size_t *ret_n)
{
	struct orr_step *s = NULL;
	size_t n = 0, cap = 0, k = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		int64_t step;

		if (e->kind != ORR_EVENT_ANNOTATION && e->kind != ORR_EVENT_OP)
			continue;
		step = orr_step_number(orr_trace_str(t, e->name));
		if (step >= 0)
			ORR_VEC_PUSH(
				s, n, cap,
				((struct orr_step){ step, e->start_ns, e->start_ns + e->dur_ns }));
	}
	if (!n)
		return whole_window(r, ret_steps, ret_n);
	/* The same step written twice (op and annotation) counts once, at its first start. */
	qsort(s, n, sizeof(*s), cmp_step);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || s[i].step != s[k - 1].step)
			s[k++] = s[i];
	n = k;
	for (size_t i = 0; i + 1 < n; i++)
		s[i].end_ns = s[i + 1].start_ns;
	s[n - 1].end_ns = last_step_end(r, s[n - 1].start_ns, s[n - 1].end_ns);
	*ret_steps = s;
	*ret_n = n;
	return 0;
}

ptrdiff_t orr_step_index(const struct orr_step *s, size_t n, int64_t t_ns)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].start_ns <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && t_ns < s[lo - 1].end_ns ? (ptrdiff_t)lo - 1 : -1;
}

int orr_trace_job_steps(const struct orr_trace *t, struct orr_step **ret_steps, size_t *ret_n)
{
	struct orr_step *job = NULL;
	size_t njob = 0;

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		struct orr_step *s;
		size_t n, k = 0;

		orr_rank_steps(t, orr_trace_get_rank(t, i), &s, &n);
		if (i == 0) {
			job = s;
			njob = n;
			continue;
		}
		/* Keep the steps this rank has too, widened to cover it; both are in step order. */
		for (size_t j = 0, m = 0; j < njob; j++) {
			while (m < n && s[m].step < job[j].step)
				m++;
			if (m == n || s[m].step != job[j].step)
				continue;
			job[k] = job[j];
			if (s[m].start_ns < job[k].start_ns)
				job[k].start_ns = s[m].start_ns;
			if (s[m].end_ns > job[k].end_ns)
				job[k].end_ns = s[m].end_ns;
			k++;
		}
		njob = k;
		free(s);
	}
	*ret_steps = job;
	*ret_n = njob;
	return 0;
}

/*
 * The annotations that match glob become ProfilerStep#1, #2, ...; the trace's own step
 * annotations go (left as other annotations, they would pass for a step-long op).
 */
void orr__annotations_seen(const struct orr_trace *t, char *buf, size_t size)
{
	const char *names[4];
	size_t n = 0, at;

	for (size_t k = 0; k < t->nranks && n < 4; k++) {
		const struct orr__rank_build *rb = t->ranks[k];

		for (size_t i = 0; i < rb->events.n && n < 4; i++) {
			const struct orr_event *ev = (const struct orr_event *)rb->events.p + i;
			const char *name = orr_strtab_get(t->strs, ev->name);
			size_t j = 0;

			if (ev->kind != ORR_EVENT_ANNOTATION || !name || !*name)
				continue;
			while (j < n && strcmp(names[j], name) != 0)
				j++;
			if (j == n)
				names[n++] = name;
		}
	}
	if (!n) {
		snprintf(buf, size, "the trace has no annotation");
		return;
	}
	at = (size_t)snprintf(buf, size, "annotations:");
	for (size_t j = 0; j < n && j < 3 && at < size; j++)
		at += (size_t)snprintf(buf + at, size - at, "%s '%.60s'", j ? "," : "", names[j]);
	if (n > 3 && at < size)
		snprintf(buf + at, size - at, ", ...");
}

size_t orr__steps_from_ranges(struct orr_trace *t, const char *glob)
{
	size_t matched = 0;

	for (size_t k = 0; k < t->nranks; k++) {
		struct orr__rank_build *rb = t->ranks[k];
		struct orr_event *ev = rb->events.p;
		int64_t step = 0;
		size_t kept = 0;

		for (size_t i = 0; i < rb->events.n; i++) {
			const char *name = orr_strtab_get(t->strs, ev[i].name);
			char buf[40];
			int n;

			if (ev[i].kind == ORR_EVENT_ANNOTATION && fnmatch(glob, name, 0) == 0) {
				n = snprintf(buf, sizeof(buf), "ProfilerStep#%lld",
					     (long long)++step);
				ev[i].name = orr_strtab_intern(t->strs, buf, (size_t)n);
				matched++;
			} else if (ev[i].kind == ORR_EVENT_ANNOTATION &&
				   orr_step_number(name) >= 0) {
				continue;
			}
			ev[kept++] = ev[i];
		}
		rb->events.n = kept;
		rb->pub.nevents = kept;
	}
	return matched;
}
