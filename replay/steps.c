/* SPDX-License-Identifier: MIT */
/*
 * Predicted step times under DESIGN.md's definition, next to the measured ones: a
 * step starts where its ProfilerStep annotation starts, moved with its thread; the
 * last captured step ends at the later of its annotation's end and the end of every
 * GPU task launched from inside it.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

/* A step annotation: its step, start and event, sorted by the three. */
struct ann {
	int64_t step, start_ns;
	size_t event;
};

static int cmp_ann(const void *a, const void *b)
{
	const struct ann *x = a, *y = b;

	if (x->step != y->step)
		return (x->step > y->step) - (x->step < y->step);
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->event > y->event) - (x->event < y->event);
}

/* The step annotations of r, sorted; one pass and one sort however many share a start. */
static struct ann *annotations(const struct orr_trace *t, const struct orr_rank *r, size_t *ret_n)
{
	struct ann *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		int64_t step;

		if (e->kind != ORR_EVENT_ANNOTATION && e->kind != ORR_EVENT_OP)
			continue;
		step = orr_step_number(orr_trace_str(t, e->name));
		if (step >= 0)
			ORR_VEC_PUSH(v, n, cap, ((struct ann){ step, e->start_ns, i }));
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_ann);
	*ret_n = n;
	return v;
}

/* The annotation event of measured step s (the first in event order), or NULL. */
static const struct orr_event *annotation_of(const struct orr_rank *r, const struct ann *v,
					     size_t n, const struct orr_step *s)
{
	struct ann key = { s->step, s->start_ns, 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_ann(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].step == s->step && v[lo].start_ns == s->start_ns)
		return &r->events[v[lo].event];
	return NULL;
}

/* The latest predicted end of a GPU task launched by a call starting in [from, to]. */
static int64_t launched_end(const struct orr_replay *r, size_t rank, int64_t from, int64_t to,
			    int64_t end)
{
	const struct orr_graph *g = r->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, rank);
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_dep *deps = orr_graph_deps(g);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		for (uint32_t d = tasks[t].first_dep; d < tasks[t].first_dep + tasks[t].ndeps;
		     d++) {
			int64_t call;

			if (deps[d].kind != ORR_DEP_LAUNCH)
				continue;
			call = orr_graph_task_start(g, deps[d].src);
			if (call >= from && call <= to && r->ts[t].end > end)
				end = r->ts[t].end;
		}
	}
	return end;
}

/* Without step annotations: from the first event to the last end, on both timelines. */
static void whole_window(const struct orr_replay *r, size_t rank, struct orr_replay_step *s)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(r->g, rank);
	const struct orr_rank *rk = gr->rank;
	size_t last = 0;

	for (size_t i = 0; i < rk->nevents; i++)
		if (rk->events[i].start_ns + rk->events[i].dur_ns >
		    rk->events[last].start_ns + rk->events[last].dur_ns)
			last = i;
	s->predicted_start_ns =
		orr_replay_map_time(r, rank, rk->events[0].place, rk->events[0].start_ns);
	s->predicted_end_ns =
		orr_replay_map_time(r, rank, rk->events[last].place,
				    rk->events[last].start_ns + rk->events[last].dur_ns);
	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++)
		if (r->ts[t].end > s->predicted_end_ns)
			s->predicted_end_ns = r->ts[t].end;
}

void orr_replay_steps(const struct orr_replay *r, size_t rank, struct orr_replay_step **ret_steps,
		      size_t *ret_n)
{
	const struct orr_trace *t = orr_graph_trace(r->g);
	const struct orr_rank *rk = orr_graph_get_rank(r->g, rank)->rank;
	struct orr_step *m;
	struct orr_replay_step *v;
	const struct orr_event *ann = NULL;
	struct ann *anns;
	size_t n, nanns;

	orr_rank_steps(t, rk, &m, &n);
	anns = annotations(t, rk, &nanns);
	v = orr_xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct orr_replay_step){ .step = m[i].step,
						 .measured_start_ns = m[i].start_ns,
						 .measured_end_ns = m[i].end_ns };
		ann = m[i].step >= 0 ? annotation_of(rk, anns, nanns, &m[i]) : NULL;
		if (!ann) {
			whole_window(r, rank, &v[i]);
			continue;
		}
		v[i].predicted_start_ns = orr_replay_map_time(r, rank, ann->place, ann->start_ns);
		if (i)
			v[i - 1].predicted_end_ns = v[i].predicted_start_ns;
	}
	if (n && ann) {
		int64_t end = orr_replay_map_time(r, rank, ann->place, ann->start_ns + ann->dur_ns);

		v[n - 1].predicted_end_ns =
			launched_end(r, rank, ann->start_ns, ann->start_ns + ann->dur_ns, end);
	}
	free(anns);
	free(m);
	*ret_steps = v;
	*ret_n = n;
}

static void widen(struct orr_replay_step *job, const struct orr_replay_step *s)
{
	if (s->measured_start_ns < job->measured_start_ns)
		job->measured_start_ns = s->measured_start_ns;
	if (s->measured_end_ns > job->measured_end_ns)
		job->measured_end_ns = s->measured_end_ns;
	if (s->predicted_start_ns < job->predicted_start_ns)
		job->predicted_start_ns = s->predicted_start_ns;
	if (s->predicted_end_ns > job->predicted_end_ns)
		job->predicted_end_ns = s->predicted_end_ns;
}

void orr_replay_job_steps(const struct orr_replay *r, struct orr_replay_step **ret_steps,
			  size_t *ret_n)
{
	struct orr_replay_step *job = NULL;
	size_t njob = 0;

	for (size_t i = 0; i < orr_graph_rank_count(r->g); i++) {
		struct orr_replay_step *s;
		size_t n, k = 0;

		orr_replay_steps(r, i, &s, &n);
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
			widen(&job[k], &s[m]);
			k++;
		}
		njob = k;
		free(s);
	}
	*ret_steps = job;
	*ret_n = njob;
}
