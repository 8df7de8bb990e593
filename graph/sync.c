/* SPDX-License-Identifier: MIT */
/*
 * D4 (cross-stream) edges and D5 (GPU -> CPU) waits.
 *
 * Exact when the trace has Kineto's cuda_sync records (or our tracer's): the record
 * with a call's correlation id names the stream synchronized, the stream the awaited
 * event was recorded on and the correlation of that cudaEventRecord.  Without them,
 * each heuristic below is flagged ORR_DEP_F_INFERRED and counted:
 *   stream wait   the waiting stream is that of the next task the thread launches;
 *                 the producer is the task launched last before the wait (or before
 *                 the thread's cudaEventRecord just before it) on another stream;
 *   stream sync   the stream of the task the thread launched last;
 *   event sync    the event of the thread's last cudaEventRecord, recorded on the
 *                 stream the thread launched onto last;
 *   polling       a run of cudaEventQuery waits for the GPU task that ended between
 *                 the start of its next-to-last poll and the end of its last one.
 * A guess the trace contradicts is dropped and counted: a guessed stream-wait edge
 * whose consumer started before its producer ended, and any wait whose awaited work
 * (as measured) ended after the call returned.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static const struct orr_sync_args *sync_args(const struct orr__rank_ctx *c, int64_t corr,
					     enum orr_sync_kind kind)
{
	uint32_t ev = corr >= 0 ? orr__find_corr(&c->syncs, corr) : ORR_NONE;
	const struct orr_event *e;

	if (ev == ORR_NONE)
		return NULL;
	e = &c->r->events[ev];
	if (e->sub != kind || e->args == ORR_NONE || e->args >= c->r->nsyncs)
		return NULL;
	return &c->r->syncs[e->args];
}

static int cmp_stream(const void *a, const void *b)
{
	const struct orr__stream *x = a, *y = b;

	if (x->id != y->id)
		return (x->id > y->id) - (x->id < y->id);
	return (x->proc > y->proc) - (x->proc < y->proc);
}

/*
 * The first proc of the rank on stream id `stream`, or ORR_NONE.  The rank's streams are
 * sorted by id on the first call: a scan of every proc per sync record made a rank of
 * 20,000 streams and as many records quadratic.
 */
static uint32_t stream_proc(struct orr__rank_ctx *c, int64_t stream)
{
	size_t lo = 0, hi;

	if (stream < 0)
		return ORR_NONE;
	if (!c->streams) {
		c->streams = orr_xmalloc((c->g->nprocs - c->first_proc + 1) * sizeof(*c->streams));
		for (uint32_t p = c->first_proc; p < c->g->nprocs; p++) {
			const struct orr_place *pl = &c->r->places[c->g->procs[p].place];

			if (pl->kind == ORR_PLACE_STREAM)
				c->streams[c->nstreams++] = (struct orr__stream){ pl->tid, p };
		}
		if (c->nstreams)
			qsort(c->streams, c->nstreams, sizeof(*c->streams), cmp_stream);
	}
	for (hi = c->nstreams; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->streams[mid].id < stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nstreams && c->streams[lo].id == stream ? c->streams[lo].proc : ORR_NONE;
}

static uint32_t cpu_task_of(const struct orr__rank_ctx *c, int64_t corr)
{
	uint32_t t = corr >= 0 ? orr__find_corr(&c->corrs, corr) : ORR_NONE;

	return t != ORR_NONE && c->g->tasks[t].kind == ORR_TASK_CPU ? t : ORR_NONE;
}

static enum orr_call call_of(const struct orr__rank_ctx *c, uint32_t t)
{
	const struct orr_event *e = &c->r->events[c->g->tasks[t].event];

	return e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER ? e->sub
									   : ORR_CALL_OTHER;
}

/* The thread's task of call class `call` at most `within` tasks before t, or ORR_NONE. */
static uint32_t previous_call(const struct orr__rank_ctx *c, uint32_t t, enum orr_call call,
			      uint32_t within)
{
	const struct orr_proc *pr = &c->g->procs[c->g->tasks[t].proc];

	for (uint32_t k = 1; k <= within && t >= pr->first_task + k; k++)
		if (call_of(c, t - k) == call)
			return t - k;
	return ORR_NONE;
}

/* ---- D4 ---- */

/*
 * The GPU task that ended last in (lo, hi] on a stream other than not_proc of device
 * `device` (-1: any), or ORR_NONE.
 */
static uint32_t ended_within(const struct orr__rank_ctx *c, int64_t lo, int64_t hi,
			     uint32_t not_proc, int32_t device)
{
	uint32_t best = ORR_NONE;

	for (uint32_t p = c->first_proc; p < c->g->nprocs; p++) {
		const struct orr_proc *pr = &c->g->procs[p];
		uint32_t a;

		if (pr->kind != ORR_TASK_GPU || p == not_proc ||
		    (device >= 0 && c->r->places[pr->place].device != device))
			continue;
		a = orr__ended_by(c, pr, hi);
		if (a && ORR__END(c, pr->first_task + a - 1) > lo &&
		    (best == ORR_NONE || ORR__END(c, pr->first_task + a - 1) > ORR__END(c, best)))
			best = pr->first_task + a - 1;
	}
	return best;
}

static int cmp_lstart(const void *a, const void *b, void *data)
{
	const struct orr__rank_ctx *c = data;
	int64_t x = c->lstart[ORR__LOCAL(c, *(const uint32_t *)a)];
	int64_t y = c->lstart[ORR__LOCAL(c, *(const uint32_t *)b)];

	if (x != y)
		return (x > y) - (x < y);
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

static bool lstart_before(const struct orr__rank_ctx *c, uint32_t a, uint32_t b)
{
	return cmp_lstart(&a, &b, (void *)c) < 0;
}

/*
 * GPU tasks of the rank in launch order.  A stream runs its tasks in the order they were
 * launched, so each stream's tasks are usually in launch order already: the streams'
 * runs are merged (n log streams comparisons) instead of sorted, unless one is not.
 * Both give the same order, cmp_lstart's.
 */
static uint32_t *launch_order(const struct orr__rank_ctx *c, size_t *ret_n)
{
	uint32_t *v = orr_xmalloc((c->ntasks + 1) * sizeof(*v));
	size_t *at = orr_xmalloc((c->g->nprocs - c->first_proc + 2) * sizeof(*at));
	size_t n = 0, nruns = 0;
	bool sorted = true;

	for (size_t p = c->first_proc; p < c->g->nprocs; p++) {
		const struct orr_proc *pr = &c->g->procs[p];

		if (pr->kind != ORR_TASK_GPU)
			continue;
		at[nruns++] = n;
		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++) {
			if (n > at[nruns - 1] && !lstart_before(c, v[n - 1], t))
				sorted = false;
			v[n++] = t;
		}
	}
	at[nruns] = n;
	if (!sorted) {
		qsort_r(v, n, sizeof(*v), cmp_lstart, (void *)c);
		nruns = 1;
	}
	v = orr__merge_runs(v, n, sizeof(*v), at, nruns, cmp_lstart, (void *)c);
	free(at);
	*ret_n = n;
	return v;
}

static uint32_t producer_elsewhere(const struct orr__rank_ctx *c, const uint32_t *order, size_t n,
				   int64_t cut, uint32_t not_proc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->lstart[ORR__LOCAL(c, order[mid])] < cut)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < ORR__WAIT_LOOKBACK && lo > k; k++)
		if (c->g->tasks[order[lo - 1 - k]].proc != not_proc)
			return order[lo - 1 - k];
	return ORR_NONE;
}

/* The earliest measured start that consumer t's launch and stream order allow. */
static int64_t launch_ready(const struct orr__rank_ctx *c, uint32_t t)
{
	const struct orr_proc *pr = &c->g->procs[c->g->tasks[t].proc];
	const struct orr__device_lat *d = orr__device_lat(c, c->g->tasks[t].proc);
	int64_t ready = INT64_MIN;

	if (c->launcher[ORR__LOCAL(c, t)] != ORR_NONE)
		ready = c->lstart[ORR__LOCAL(c, t)] + d->launch_ns;
	if (t > pr->first_task && ORR__END(c, t - 1) + d->gap_ns > ready)
		ready = ORR__END(c, t - 1) + d->gap_ns;
	return ready;
}

/*
 * A stream wait whose event record the trace does not show (Kineto leaves
 * cudaEventRecord out of older traces), when the guessed producer does not explain
 * the consumer's start: the consumer started later than its launch, its stream and
 * the guess allow, by more than the launch pipeline's allowance.  A stream that waits
 * for an event starts its next task as soon as the work recorded before the event
 * ends, so the producer is the task of another stream of the device that ended last
 * within that allowance before the consumer started, and was launched before the wait
 * (an event records only work launched before it, and the record precedes the wait).
 * Adds the edge (latency: the measured time between them) and returns true; false
 * when no such task ended there.
 */
static bool timed_producer(struct orr__rank_ctx *c, uint32_t w, uint32_t cons, uint32_t p)
{
	const struct orr__device_lat *d = orr__device_lat(c, c->g->tasks[cons].proc);
	int32_t device = c->r->places[c->g->procs[c->g->tasks[cons].proc].place].device;
	int64_t start = ORR__START(c, cons), ready = launch_ready(c, cons);
	uint32_t k;

	if (p != ORR_NONE && c->g->tasks[p].proc != c->g->tasks[cons].proc &&
	    ORR__END(c, p) <= start && ORR__END(c, p) > ready)
		ready = ORR__END(c, p);
	if (ready == INT64_MIN || start - ready <= d->late_ns)
		return false;
	k = ended_within(c, start - d->late_ns - 1, start, c->g->tasks[cons].proc, device);
	if (k == ORR_NONE || ORR__END(c, k) <= ready ||
	    c->lstart[ORR__LOCAL(c, k)] >= ORR__START(c, w))
		return false;
	orr__add_edge(c, cons, k, ORR_DEP_CROSS_STREAM, start - ORR__END(c, k), ORR_DEP_F_INFERRED);
	c->g->stats.timed_waits++;
	return true;
}

static void link_wait(struct orr__rank_ctx *c, uint32_t w, const uint32_t *order, size_t n)
{
	const struct orr_sync_args *a =
		sync_args(c, c->r->events[c->g->tasks[w].event].correlation, ORR_SYNC_STREAM_WAIT);
	uint32_t prod = ORR_NONE, cons = ORR_NONE, b, rec;
	int64_t cut = ORR__START(c, w);

	if (a) {
		b = stream_proc(c, a->stream);
		rec = cpu_task_of(c, a->event_record_corr);
		if (rec != ORR_NONE)
			cut = ORR__START(c, rec);
		if (stream_proc(c, a->wait_on_stream) != ORR_NONE)
			prod = orr__launched_before(c, stream_proc(c, a->wait_on_stream), cut);
	} else {
		b = orr__last_launch_stream(c, w);
		/* The stream of the next launch, not the last: scan forward. */
		for (uint32_t t = w + 1, k = 0;
		     k < 4096 && t < c->g->procs[c->g->tasks[w].proc].first_task +
						 c->g->procs[c->g->tasks[w].proc].ntasks;
		     t++, k++)
			if (c->launcher[ORR__LOCAL(c, t)] != ORR_NONE) {
				b = c->g->tasks[c->launcher[ORR__LOCAL(c, t)]].proc;
				break;
			}
		rec = previous_call(c, w, ORR_CALL_EVENT_RECORD, 4);
		if (rec != ORR_NONE)
			cut = ORR__START(c, rec);
		if (b != ORR_NONE)
			prod = producer_elsewhere(c, order, n, cut, b);
	}
	if (b != ORR_NONE)
		cons = orr__launched_after(c, b, ORR__START(c, w));
	if (cons == ORR_NONE)
		return;
	if (!a && timed_producer(c, w, cons, prod))
		return;
	if (prod == ORR_NONE || c->g->tasks[prod].proc == b)
		return;
	if (!a && ORR__START(c, cons) < ORR__END(c, prod)) {
		c->g->stats.edges_rejected++; /* the guess is contradicted by the trace */
		return;
	}
	orr__add_edge(c, cons, prod, ORR_DEP_CROSS_STREAM, 0, a ? 0 : ORR_DEP_F_INFERRED);
}

void orr__link_stream_waits(struct orr__rank_ctx *c)
{
	size_t n = 0;
	uint32_t *order = NULL;

	if (c->g->skip & (1u << ORR_DEP_CROSS_STREAM))
		return;
	for (uint32_t t = c->base; t < c->base + c->ntasks; t++) {
		if (c->g->tasks[t].kind != ORR_TASK_CPU || call_of(c, t) != ORR_CALL_STREAM_WAIT)
			continue;
		if (!order) /* launch order is needed by the heuristic only; made once */
			order = launch_order(c, &n);
		link_wait(c, t, order, n);
	}
	free(order);
}

/* ---- D5 ---- */

static int64_t awaited_end(const struct orr__rank_ctx *c, enum orr_wait_kind kind, uint32_t target,
			   int64_t at)
{
	const struct orr_graph *g = c->g;
	int64_t end = INT64_MIN;
	uint32_t t;

	switch (kind) {
	case ORR_WAIT_STREAM:
		t = orr__launched_before(c, target, at);
		return t == ORR_NONE ? INT64_MIN : ORR__END(c, t);
	case ORR_WAIT_DEVICE:
		for (uint32_t p = c->first_proc; p < g->nprocs; p++)
			if (g->procs[p].kind == ORR_TASK_GPU &&
			    c->r->places[g->procs[p].place].device == (int32_t)target) {
				int64_t e = awaited_end(c, ORR_WAIT_STREAM, p, at);

				end = e > end ? e : end;
			}
		return end;
	case ORR_WAIT_EVENT:
		return awaited_end(c, ORR_WAIT_STREAM, g->waits[g->tasks[target].aux].target,
				   ORR__START(c, target));
	case ORR_WAIT_TASK:
		return ORR__END(c, target);
	default:
		return INT64_MIN;
	}
}

/* Makes record task `rec` remember what it records on stream proc `stream`. */
static bool mark_record(struct orr__rank_ctx *c, uint32_t rec, uint32_t stream, bool inferred)
{
	struct orr_task *t = &c->g->tasks[rec];

	if (t->aux == ORR_NONE)
		t->aux = orr__new_wait(c->g, ORR_WAIT_RECORD, stream, inferred);
	else if (c->g->waits[t->aux].kind != ORR_WAIT_RECORD)
		return false;
	c->g->waits[t->aux].span_ns = t->dur_ns;
	return true;
}

static void attach(struct orr__rank_ctx *c, uint32_t t, enum orr_wait_kind kind, uint32_t target,
		   bool inferred)
{
	struct orr_graph *g = c->g;
	int64_t start = ORR__START(c, t), end = ORR__END(c, t), span = end - start;
	int64_t awaited = awaited_end(c, kind, target, start), ret = 0, own = span;
	uint32_t w;

	if (awaited > end) {
		g->stats.waits_dropped++;
		return;
	}
	if (awaited > start) {
		ret = end - awaited;
		own = ret < span ? ret : span;
	}
	g->tasks[t].dur_ns = own;
	if (g->skip & (1u << ORR_DEP_SYNC))
		return;
	w = orr__new_wait(g, kind, target, inferred);
	g->waits[w].ret_ns = ret;
	g->waits[w].span_ns = span;
	g->tasks[t].aux = w;
	g->stats.edges[ORR_DEP_SYNC]++;
	g->stats.inferred[ORR_DEP_SYNC] += inferred;
}

static void wait_stream_sync(struct orr__rank_ctx *c, uint32_t t, int64_t corr)
{
	const struct orr_sync_args *a = sync_args(c, corr, ORR_SYNC_STREAM);
	uint32_t p = a ? stream_proc(c, a->stream) : ORR_NONE;

	if (p != ORR_NONE)
		attach(c, t, ORR_WAIT_STREAM, p, false);
	else if ((p = orr__last_launch_stream(c, t)) != ORR_NONE)
		attach(c, t, ORR_WAIT_STREAM, p, true);
}

static void wait_device_sync(struct orr__rank_ctx *c, uint32_t t)
{
	uint32_t p = orr__last_launch_stream(c, t);

	for (uint32_t q = c->first_proc; q < c->g->nprocs && p == ORR_NONE; q++)
		if (c->g->procs[q].kind == ORR_TASK_GPU)
			p = q;
	if (p != ORR_NONE)
		attach(c, t, ORR_WAIT_DEVICE, (uint32_t)c->r->places[c->g->procs[p].place].device,
		       false);
}

/* cudaEventSynchronize, or a polling run: an exact event, else a heuristic. */
static void wait_event(struct orr__rank_ctx *c, uint32_t t, int64_t corr, bool poll)
{
	const struct orr_sync_args *a = sync_args(c, corr, ORR_SYNC_EVENT);
	uint32_t rec = a ? cpu_task_of(c, a->event_record_corr) : ORR_NONE;
	uint32_t on = a ? stream_proc(c, a->wait_on_stream) : ORR_NONE, gpu;

	if (rec != ORR_NONE && on != ORR_NONE && mark_record(c, rec, on, false)) {
		attach(c, t, ORR_WAIT_EVENT, rec, false);
	} else if (on != ORR_NONE) {
		attach(c, t, ORR_WAIT_STREAM, on, true);
	} else if (poll) {
		gpu = ended_within(c, c->poll_lo[ORR__LOCAL(c, t)], ORR__END(c, t), ORR_NONE, -1);
		if (gpu != ORR_NONE)
			attach(c, t, ORR_WAIT_TASK, gpu, true);
	} else if ((rec = previous_call(c, t, ORR_CALL_EVENT_RECORD, 4096)) != ORR_NONE &&
		   (on = orr__last_launch_stream(c, rec)) != ORR_NONE &&
		   mark_record(c, rec, on, true)) {
		attach(c, t, ORR_WAIT_EVENT, rec, true);
	}
}

/* Whether name id `name` contains needle; remembers the last name asked (names repeat). */
struct memo {
	uint32_t name;
	bool found;
};

static bool name_has(const struct orr__rank_ctx *c, struct memo *m, uint32_t name,
		     const char *needle)
{
	if (m->name != name)
		*m = (struct memo){ name,
				    strstr(orr_trace_str(c->g->trace, name), needle) != NULL };
	return m->found;
}

/*
 * cudaMemcpy (not Async), or any copy into pageable host memory, blocks until its copy
 * ends: marked blocking, and waits for its copy when the trace has it.
 */
static void wait_copy(struct orr__rank_ctx *c, uint32_t t, struct memo memo[2])
{
	uint32_t gpu = c->launcher[ORR__LOCAL(c, t)];

	if (name_has(c, &memo[0], c->r->events[c->g->tasks[t].event].name, "Async") &&
	    (gpu == ORR_NONE ||
	     !name_has(c, &memo[1], c->r->events[c->g->tasks[gpu].event].name, "-> Pageable")))
		return;
	c->g->tasks[t].flags |= ORR_TASK_F_BLOCKING;
	if (gpu != ORR_NONE)
		attach(c, t, ORR_WAIT_TASK, gpu, false);
}

void orr__add_waits(struct orr__rank_ctx *c)
{
	struct memo memo[2] = { { ORR_NONE, false }, { ORR_NONE, false } };

	for (uint32_t t = c->base; t < c->base + c->ntasks; t++) {
		struct orr_task *task = &c->g->tasks[t];
		int64_t corr = c->r->events[c->last_ev[ORR__LOCAL(c, t)]].correlation;
		enum orr_call call;

		if (task->kind != ORR_TASK_CPU || task->aux != ORR_NONE)
			continue;
		if (task->flags & ORR_TASK_F_POLL) {
			task->flags |= ORR_TASK_F_BLOCKING;
			wait_event(c, t, corr, true);
			continue;
		}
		call = call_of(c, t);
		if (call == ORR_CALL_STREAM_SYNC || call == ORR_CALL_DEVICE_SYNC ||
		    call == ORR_CALL_EVENT_SYNC)
			task->flags |= ORR_TASK_F_BLOCKING;
		switch (call) {
		case ORR_CALL_STREAM_SYNC:
			wait_stream_sync(c, t, corr);
			break;
		case ORR_CALL_DEVICE_SYNC:
			wait_device_sync(c, t);
			break;
		case ORR_CALL_EVENT_SYNC:
			wait_event(c, t, corr, false);
			break;
		case ORR_CALL_MEMCPY:
			wait_copy(c, t, memo);
			break;
		default:
			break;
		}
	}
}
