/* SPDX-License-Identifier: MIT */
/*
 * The step a composed benchmark copies (docs/orrery-compose.md, "The step it copies"):
 * which step, each rank's window of it, and, with an execution trace, the link of its
 * ops to the observed step's ET arguments by the sequence of their names per thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/* Per event of r: the ET node linked to it, or ORR_NONE. */
uint32_t *orr__compose_et_links(const struct orr_rank *r)
{
	size_t n = r->nevents ? r->nevents : 1;
	uint32_t *v = orr_xmalloc(n * sizeof(*v));

	for (size_t e = 0; e < n; e++)
		v[e] = ORR_NONE;
	for (size_t i = 0; r->et && i < r->et->nnodes; i++)
		if (r->et->nodes[i].event < r->nevents)
			v[r->et->nodes[i].event] = (uint32_t)i;
	return v;
}

/* The ET nodes linked to ops of a job step, on the first rank with an ET. */
static size_t et_ops_in(const struct orr_trace *t, const struct orr_step *s)
{
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		size_t n = 0;

		if (!r->et)
			continue;
		for (size_t k = 0; k < r->et->nnodes; k++) {
			uint32_t e = r->et->nodes[k].event;

			n += e < r->nevents && r->events[e].start_ns >= s->start_ns &&
			     r->events[e].start_ns < s->end_ns;
		}
		return n;
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The step to compose, and the one whose execution trace gives the operators'
 * arguments (*ret_args, -1 without one): the ET's is the step holding most of its
 * ops; the step composed is the one asked for, else the ET's next step (recorded
 * without the observer; orr_compose_build() falls back to the ET's own when its ops do
 * not match), else the median one.
 */
int orr__compose_choose_step(const struct orr_compose *c, int64_t *ret, int64_t *ret_args,
			     struct orr_diag *d)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	struct orr_step *s;
	size_t n, best = 0, best_et = 0;
	int64_t *len;
	int err;

	*ret_args = -1;
	if ((err = orr_trace_job_steps(t, &s, &n)))
		return orr_diag_set(d, err, "", -1, -1, "cannot find the trace's steps");
	if (!n) {
		free(s);
		return orr_diag_set(d, ORR_EEMPTY, "", -1, -1, "the trace has no step");
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = et_ops_in(t, &s[i]);

		if (k > best_et) {
			best_et = k;
			best = i;
		}
	}
	if (best_et)
		*ret_args = s[best].step;
	if (c->o.step >= 0) {
		for (size_t i = 0; i < n; i++) {
			if (s[i].step == c->o.step) {
				*ret = c->o.step;
				free(s);
				return 0;
			}
		}
		free(s);
		return orr_diag_set(d, -ENOENT, "", -1, -1,
				    "no step %lld on every rank (orrery info lists the steps)",
				    (long long)c->o.step);
	}
	if (best_et) {
		*ret = best + 1 < n && s[best].step >= 0 ? s[best + 1].step : s[best].step;
		free(s);
		return 0;
	}
	len = orr_xmalloc(n * sizeof(*len));
	for (size_t i = 0; i < n; i++)
		len[i] = s[i].end_ns - s[i].start_ns;
	qsort(len, n, sizeof(*len), cmp_i64);
	for (best = 0; best < n && s[best].end_ns - s[best].start_ns != len[(n - 1) / 2];)
		best++;
	free(len);
	*ret = s[best].step;
	free(s);
	return 0;
}

/*
 * An execution trace records what ran between its observer's start and stop, often
 * less than a profiler step (or than the whole capture, without step annotations): the
 * window is then the span of the ops it links to.
 */
static void et_window(struct crank *cr)
{
	const struct orr_rank *r = cr->r;
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; r->et && i < r->et->nnodes; i++) {
		uint32_t e = r->et->nodes[i].event;

		if (e >= r->nevents || r->events[e].kind != ORR_EVENT_OP ||
		    r->events[e].start_ns < cr->start_ns || r->events[e].start_ns >= cr->end_ns)
			continue;
		if (r->events[e].start_ns < lo)
			lo = r->events[e].start_ns;
		if (orr__compose_end(&r->events[e]) > hi)
			hi = orr__compose_end(&r->events[e]);
	}
	if (lo < hi) {
		cr->start_ns = lo;
		cr->end_ns = hi;
	}
}

int orr__compose_rank_window(const struct orr_compose *c, struct crank *cr, int64_t step,
			     struct orr_diag *d)
{
	struct orr_step *s;
	size_t n;
	int err;

	if ((err = orr_rank_steps(orr_graph_trace(c->g), cr->r, &s, &n)))
		return orr_diag_set(d, err, "", -1, -1, "cannot find the steps of rank %d",
				    cr->r->rank);
	for (size_t i = 0; i < n; i++) {
		if (s[i].step == step) {
			cr->start_ns = s[i].start_ns;
			cr->end_ns = s[i].end_ns;
			cr->st.step = step;
			et_window(cr);
			cr->st.step_ns = cr->end_ns - cr->start_ns;
			free(s);
			return 0;
		}
	}
	free(s);
	return orr_diag_set(d, -ENOENT, "", -1, -1, "rank %d has no step %lld", cr->r->rank,
			    (long long)step);
}

static bool same_name(const struct orr_trace *t, const struct orr_event *a,
		      const struct orr_event *b)
{
	return a->name == b->name || !strcmp(orr_trace_str(t, a->name), orr_trace_str(t, b->name));
}

/* The ops of place p that start in [lo, hi), in start order. */
static size_t place_ops(const struct orr_rank *r, uint32_t p, int64_t lo, int64_t hi,
			uint32_t **ret)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t e = 0; e < r->nevents; e++) {
		const struct orr_event *ev = &r->events[e];

		if (ev->kind == ORR_EVENT_OP && ev->place == p && ev->start_ns >= lo &&
		    ev->start_ns < hi)
			ORR_VEC_PUSH(v, n, cap, e);
	}
	*ret = v;
	return n;
}

/* The first k at which a[0..na) appears in b by name, or SIZE_MAX. */
static size_t find_run(const struct orr_trace *t, const struct orr_rank *r, const uint32_t *a,
		       size_t na, const uint32_t *b, size_t nb)
{
	for (size_t k = 0; k + na <= nb; k++) {
		size_t i = 0;

		while (i < na && same_name(t, &r->events[a[i]], &r->events[b[k + i]]))
			i++;
		if (i == na)
			return k;
	}
	return SIZE_MAX;
}

/*
 * Step `step` of cr's rank with the operators' arguments of step `args`, the one the
 * execution trace covers: on each CPU thread, the ops of args's ET span must appear in
 * a row, with the same names, among the ops of `step` (the same program, one step
 * later); each then takes the ET node of its match, and the window is the span of the
 * matched ops.  False, with cr's window left to the caller, when a thread's ops differ.
 */
static bool map_step(const struct orr_compose *c, struct crank *cr, int64_t args, int64_t step)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_rank *r = cr->r;
	struct crank a = *cr;
	struct orr_diag d;
	uint32_t *links, *map, *va = NULL, *vb = NULL;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	bool ok = true;

	orr_diag_clear(&d);
	if (orr__compose_rank_window(c, &a, args, &d) || orr__compose_rank_window(c, cr, step, &d))
		return false;
	links = orr__compose_et_links(r);
	map = orr_xmalloc((r->nevents ? r->nevents : 1) * sizeof(*map));
	for (size_t e = 0; e < r->nevents; e++)
		map[e] = ORR_NONE;
	for (uint32_t p = 0; ok && p < r->nplaces; p++) {
		size_t na, nb, k;

		if (r->places[p].kind != ORR_PLACE_THREAD)
			continue;
		na = place_ops(r, p, a.start_ns, a.end_ns, &va);
		nb = na ? place_ops(r, p, cr->start_ns, cr->end_ns, &vb) : 0;
		k = na ? find_run(t, r, va, na, vb, nb) : 0;
		if (k == SIZE_MAX)
			ok = false;
		for (size_t i = 0; ok && i < na; i++) {
			const struct orr_event *e = &r->events[vb[k + i]];

			map[vb[k + i]] = links[va[i]];
			lo = e->start_ns < lo ? e->start_ns : lo;
			hi = orr__compose_end(e) > hi ? orr__compose_end(e) : hi;
		}
		free(va);
		free(vb);
		va = vb = NULL;
	}
	free(links);
	if (!ok || lo >= hi) {
		free(map);
		return false;
	}
	cr->et_of_event = map;
	cr->start_ns = lo;
	cr->end_ns = hi;
	cr->st.step_ns = hi - lo;
	cr->st.args_step = args;
	return true;
}

/*
 * Every rank's step `*step` with the arguments of step args (map_step()), or none:
 * a later step whose ops differ on some rank is given up for args itself when the step
 * was not asked for (the ranks run one step, the same on each).
 */
void orr__compose_map_ranks(struct orr_compose *c, int64_t args, int64_t *step)
{
	bool ok = args >= 0 && *step != args;

	for (size_t i = 0; ok && i < c->nranks; i++)
		ok = map_step(c, &c->ranks[i], args, *step);
	if (ok)
		return;
	for (size_t i = 0; i < c->nranks; i++) {
		free(c->ranks[i].et_of_event);
		c->ranks[i].et_of_event = NULL;
		c->ranks[i].st.args_step = -1;
	}
	if (c->o.step < 0 && args >= 0)
		*step = args;
}
