/* SPDX-License-Identifier: MIT */
/*
 * D2: every GPU task depends on the call with its correlation id (a CUDA-graph launch
 * has many; a driver call folded into a runtime call answers for it).
 *
 * Two latencies per device, measured on the rank's own tasks, stand for the time
 * the hardware needs beyond any task's duration (a task that started while its call
 * ran, on an idle stream, keeps its own launch latency):
 *   launch latency  from a launching call's start to its task's start, over tasks
 *                   launched onto an idle stream (the median);
 *   stream gap      from a task's end to the next task's start on the same stream,
 *                   over tasks already queued when their predecessor ended (the lower
 *                   decile: sampled traces miss tasks, which lengthens some gaps, and
 *                   the true gap is the small one every back-to-back pair shows).
 * A task queued behind its predecessor that started within the device's allowance of
 * the predecessor's end keeps its own measured gap, as a task started during its call
 * keeps its own launch latency: the front end's time between two queued tasks depends
 * on the pair (a copy or a set after a kernel, a kernel's launch configuration, the
 * nodes of a CUDA graph), and the device's lower decile stands for the smallest.
 */
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

struct samples {
	int32_t device;
	int64_t *lat, *gap;
	size_t nlat, cap_lat, ngap, cap_gap;
};

static void find_launchers(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;

	for (uint32_t t = c->base; t < c->base + c->ntasks; t++) {
		const struct orr_event *e = &c->r->events[g->tasks[t].event];
		uint32_t l = ORR__LOCAL(c, t), call;

		if (g->tasks[t].kind != ORR_TASK_GPU)
			continue;
		call = e->correlation >= 0 ? orr__find_corr(&c->corrs, e->correlation) : ORR_NONE;
		if (call != ORR_NONE && g->tasks[call].kind != ORR_TASK_CPU)
			call = ORR_NONE;
		c->launcher[l] = call;
		if (call == ORR_NONE) {
			g->stats.unlaunched++;
			continue;
		}
		c->lstart[l] = ORR__START(c, call);
		g->tasks[call].flags |= ORR_TASK_F_LAUNCH;
		if (c->launcher[ORR__LOCAL(c, call)] == ORR_NONE)
			c->launcher[ORR__LOCAL(c, call)] = t;
	}
}

static bool is_graph_launch(const struct orr__rank_ctx *c, uint32_t call)
{
	const struct orr_event *e = &c->r->events[c->g->tasks[call].event];

	return (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER) &&
	       e->sub == ORR_CALL_GRAPH_LAUNCH;
}

/* Gives GPU tasks [from, to) of a stream the launch `call`, when they could be its nodes. */
static void adopt(struct orr__rank_ctx *c, uint32_t from, uint32_t to, uint32_t call)
{
	for (uint32_t t = from; t < to; t++) {
		uint32_t l = ORR__LOCAL(c, t);

		if (ORR__START(c, t) < ORR__START(c, call))
			continue; /* started before the launch: not one of its nodes */
		c->launcher[l] = call;
		c->lstart[l] = ORR__START(c, call);
		c->by_graph[l] = 1;
		c->g->stats.unlaunched--;
		c->g->stats.graph_nodes++;
	}
}

/*
 * Kineto gives some kernels of a CUDA graph no correlation id.  A stream runs its work
 * in the order it was launched, and cudaGraphLaunch enqueues every node of the graph
 * at once, so tasks without a launch that sit on a stream right after a node of a
 * graph launch (or right before its first node), with no other launch in between,
 * are that launch's nodes.
 */
static void adopt_graph_nodes(struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;

	for (size_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		uint32_t end = pr->first_task + pr->ntasks, prev = ORR_NONE;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		for (uint32_t t = pr->first_task; t < end; t++) {
			uint32_t run = t, next;

			if (c->launcher[ORR__LOCAL(c, t)] != ORR_NONE) {
				prev = c->launcher[ORR__LOCAL(c, t)];
				continue;
			}
			while (t < end && c->launcher[ORR__LOCAL(c, t)] == ORR_NONE)
				t++;
			next = t < end ? c->launcher[ORR__LOCAL(c, t)] : ORR_NONE;
			if (prev != ORR_NONE && is_graph_launch(c, prev))
				adopt(c, run, t, prev);
			else if (next != ORR_NONE && is_graph_launch(c, next))
				adopt(c, run, t, next);
			if (next != ORR_NONE)
				prev = next;
		}
	}
}

static int cmp_device(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The devices of the rank's streams, sorted, each once. */
static int32_t *stream_devices(const struct orr__rank_ctx *c, size_t *ret_n)
{
	const struct orr_graph *g = c->g;
	int32_t *v = orr_xmalloc((g->nprocs - c->first_proc + 1) * sizeof(*v));
	size_t n = 0, k = 0;

	for (size_t p = c->first_proc; p < g->nprocs; p++)
		if (g->procs[p].kind == ORR_TASK_GPU)
			v[n++] = c->r->places[g->procs[p].place].device;
	if (n)
		qsort(v, n, sizeof(*v), cmp_device);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	*ret_n = k;
	return v;
}

/* The index of device in the sorted v[0..n), or n. */
static size_t device_index(const int32_t *v, size_t n, int32_t device)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < device)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == device ? lo : n;
}

/* The k-th smallest of v[0..n) (quickselect; v is reordered). */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				int64_t tmp = v[i];

				v[i++] = v[j];
				v[j] = tmp;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

static int64_t quantile(int64_t *v, size_t n, size_t num, size_t den)
{
	int64_t q;

	if (!n)
		return 0;
	q = select_kth(v, n, (n - 1) * num / den);
	return q > 0 ? q : 0;
}

/*
 * A stream's "Stream Wait Event" records (cudaStreamWaitEvent on the GPU): their times,
 * place by place (ns[off[p] .. off[p + 1]) is place p's, ascending).  The events come
 * in time order, so a stable pass by place leaves each place's times sorted; one out
 * of order is sorted on its own.
 */
struct stream_waits {
	int64_t *ns;
	uint32_t *off;
};

static void sort_places(struct stream_waits *w, size_t nplaces)
{
	for (size_t p = 0; p < nplaces; p++)
		for (uint32_t i = w->off[p] + 1; i < w->off[p + 1]; i++)
			if (w->ns[i - 1] > w->ns[i]) {
				orr_sort_i64(w->ns + w->off[p], w->off[p + 1] - w->off[p]);
				break;
			}
}

struct wait_at {
	uint32_t place;
	int64_t ns;
};

static void stream_waits(const struct orr_rank *r, struct stream_waits *w)
{
	struct wait_at *v = NULL;
	size_t n = 0, cap = 0;
	uint32_t *at = orr_xcalloc(r->nplaces + 1, sizeof(*at));

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind == ORR_EVENT_SYNC && e->sub == ORR_SYNC_STREAM_WAIT &&
		    r->places[e->place].kind == ORR_PLACE_STREAM) {
			ORR_VEC_PUSH(v, n, cap, ((struct wait_at){ e->place, e->start_ns }));
			at[e->place]++;
		}
	}
	w->off = orr_xmalloc((r->nplaces + 1) * sizeof(*w->off));
	w->off[0] = 0;
	for (size_t p = 0; p < r->nplaces; p++) {
		w->off[p + 1] = w->off[p] + at[p];
		at[p] = w->off[p];
	}
	w->ns = orr_xmalloc((n + 1) * sizeof(*w->ns));
	for (size_t i = 0; i < n; i++)
		w->ns[at[v[i].place]++] = v[i].ns;
	free(at);
	free(v);
	sort_places(w, r->nplaces);
}

/* Whether place's stream waited on an event from `from` to `to`: its first wait not
 * before `from`, found without a branch on the data. */
static bool waited(const struct stream_waits *w, uint32_t place, int64_t from, int64_t to)
{
	const int64_t *v = w->ns + w->off[place], *base = v;
	size_t n = w->off[place + 1] - w->off[place], len = n, lo;

	if (!n)
		return false;
	while (len > 1) {
		size_t half = len / 2;

		base = base[half] < from ? base + half : base;
		len -= half;
	}
	lo = (size_t)(base - v) + (*base < from);
	return lo < n && v[lo] <= to;
}

/*
 * A GPU task's launch latency (its stream was free when it was launched), or the gap
 * after its stream predecessor (it was queued behind it): the launch pipeline's, unless
 * the stream waited on another stream's event in between (cudaStreamWaitEvent), which
 * is then what the task waited for, not the pipeline (the D4 edge keeps that wait).
 * The median latency and the lowest decile of the gaps stand for every task of the
 * device whose own cannot be measured: a few waits among them would delay them all.
 */
/*
 * Whether t is its stream's first task in the trace and the stream was backed up when
 * it started: the next task's call had already returned.  Work launched before the
 * capture began may then have run first, which the trace does not show, so its wait is
 * no launch latency (a GPU lagging its host by 7.8 ms at a capture's start made that
 * every task's latency, and a HIP graph's nodes started 0.9 ms late).
 */
static bool backed_up(const struct orr__rank_ctx *c, const struct orr_proc *p, uint32_t t)
{
	uint32_t next;

	if (t != p->first_task || p->ntasks < 2)
		return false;
	next = c->launcher[ORR__LOCAL(c, t + 1)];
	return next != ORR_NONE && ORR__END(c, next) < ORR__START(c, t);
}

static void sample_task(struct orr__rank_ctx *c, struct samples *s, const struct orr_proc *p,
			uint32_t t, const struct stream_waits *w)
{
	uint32_t l = ORR__LOCAL(c, t), call = c->launcher[l];
	int64_t start = ORR__START(c, t);

	if (call == ORR_NONE || c->by_graph[l] || backed_up(c, p, t))
		return;
	if (t == p->first_task || ORR__END(c, t - 1) < ORR__START(c, call)) {
		if (!waited(w, p->place, ORR__START(c, call), start))
			ORR_VEC_PUSH(s->lat, s->nlat, s->cap_lat,
				     orr_time_sub(start, ORR__START(c, call)));
	} else if (ORR__END(c, call) < ORR__END(c, t - 1) &&
		   !waited(w, p->place, ORR__START(c, t - 1), start))
		ORR_VEC_PUSH(s->gap, s->ngap, s->cap_gap, orr_time_sub(start, ORR__END(c, t - 1)));
}

/* Per device of the rank's streams, sorted by device (a lookup is a binary search). */
static void measure_latencies(struct orr__rank_ctx *c, const struct stream_waits *w)
{
	struct orr_graph *g = c->g;
	size_t n;
	int32_t *ids = stream_devices(c, &n);
	struct samples *v = orr_xcalloc(n + 1, sizeof(*v));

	for (size_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		struct samples *s;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		s = &v[device_index(ids, n, c->r->places[pr->place].device)];
		s->device = c->r->places[pr->place].device;
		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++)
			sample_task(c, s, pr, t, w);
	}
	free(ids);
	c->devs = orr_xcalloc(n + 1, sizeof(*c->devs));
	c->ndevs = n;
	for (size_t i = 0; i < n; i++) {
		c->devs[i] = (struct orr__device_lat){
			.device = v[i].device,
			.launch_ns = quantile(v[i].lat, v[i].nlat, 1, 2),
			.gap_ns = quantile(v[i].gap, v[i].ngap, 1, 10),
		};
		c->devs[i].late_ns = 2 * c->devs[i].launch_ns;
		free(v[i].lat);
		free(v[i].gap);
	}
	free(v);
}

static const struct orr__device_lat no_device = { .device = -1 };

size_t orr__device_index(const struct orr__rank_ctx *c, uint32_t proc)
{
	int32_t device = c->r->places[c->g->procs[proc].place].device;
	size_t lo = 0, hi = c->ndevs;

	while (lo < hi) { /* c->devs is sorted by device */
		size_t mid = lo + (hi - lo) / 2;

		if (c->devs[mid].device < device)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ndevs && c->devs[lo].device == device ? lo : c->ndevs;
}

const struct orr__device_lat *orr__device_lat(const struct orr__rank_ctx *c, uint32_t proc)
{
	size_t i = orr__device_index(c, proc);

	return i < c->ndevs ? &c->devs[i] : &no_device;
}

/*
 * A task without a launch was launched before it started, and, since a stream runs its
 * work in launch order, before the next task of its stream that has one: its launch
 * time is taken as the earlier of the two, so launch times grow along every stream.
 */
static void bound_unlaunched(struct orr__rank_ctx *c)
{
	const struct orr_graph *g = c->g;

	for (size_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		int64_t bound = INT64_MAX;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		for (uint32_t t = pr->first_task + pr->ntasks; t-- > pr->first_task;) {
			uint32_t l = ORR__LOCAL(c, t);

			if (c->launcher[l] != ORR_NONE)
				bound = c->lstart[l];
			else if (bound < c->lstart[l])
				c->lstart[l] = bound;
		}
	}
}

void orr__link_launches(struct orr__rank_ctx *c)
{
	c->by_graph = orr_xcalloc(c->ntasks + 1, sizeof(*c->by_graph));
	for (uint32_t l = 0; l < c->ntasks; l++)
		c->launcher[l] = ORR_NONE;
	find_launchers(c);
	adopt_graph_nodes(c);
	bound_unlaunched(c);
}

/*
 * A task that started on an idle stream while its launching call still ran was held
 * by nothing but the call (a copy from pageable memory starts once the call has
 * staged it): its own measured latency.  Otherwise the device's.
 */
static int64_t launch_latency(const struct orr__rank_ctx *c, const struct orr__device_lat *d,
			      const struct orr_proc *pr, uint32_t t, uint32_t call)
{
	int64_t start = ORR__START(c, t), call_start = ORR__START(c, call);

	if ((t == pr->first_task || ORR__END(c, t - 1) <= call_start) && start >= call_start &&
	    start <= ORR__END(c, call))
		return start - call_start; /* 0 <= it <= the call's duration */
	return d->launch_ns;
}

/*
 * A task's gap after its stream predecessor: its own measured one when it was queued
 * behind it (its launching call, a graph's launch for a node, ended before the
 * predecessor did, and its stream waited on no event in between) and started within
 * the device's allowance of the predecessor's end; the device's otherwise (a later
 * start is a delay, delay.c, which keeps and counts it).
 */
static int64_t stream_gap(const struct orr__rank_ctx *c, const struct orr__device_lat *d,
			  const struct orr_proc *pr, uint32_t t, const struct stream_waits *w)
{
	uint32_t call = c->launcher[ORR__LOCAL(c, t)];
	int64_t gap = orr_time_sub(ORR__START(c, t), ORR__END(c, t - 1));

	if (call == ORR_NONE || ORR__END(c, call) >= ORR__END(c, t - 1) || gap < 0 ||
	    gap > d->late_ns || waited(w, pr->place, ORR__START(c, t - 1), ORR__START(c, t)))
		return d->gap_ns;
	return gap;
}

void orr__set_gpu_latencies(struct orr__rank_ctx *c)
{
	struct orr_graph *g = c->g;
	struct stream_waits w;

	stream_waits(c->r, &w);
	measure_latencies(c, &w);
	for (size_t p = c->first_proc; p < g->nprocs; p++) {
		const struct orr_proc *pr = &g->procs[p];
		const struct orr__device_lat *d;

		if (pr->kind != ORR_TASK_GPU)
			continue;
		d = orr__device_lat(c, (uint32_t)p);
		for (uint32_t t = pr->first_task; t < pr->first_task + pr->ntasks; t++) {
			uint32_t call = c->launcher[ORR__LOCAL(c, t)];

			if (t != pr->first_task)
				g->tasks[t].gap_ns = stream_gap(c, d, pr, t, &w);
			if (call != ORR_NONE && !(g->skip & (1u << ORR_DEP_LAUNCH)))
				orr__add_edge(c, t, call, ORR_DEP_LAUNCH,
					      launch_latency(c, d, pr, t, call),
					      c->by_graph[ORR__LOCAL(c, t)] ? ORR_DEP_F_INFERRED
									    : 0);
		}
	}
	free(w.ns);
	free(w.off);
}

uint32_t orr__launched_before(const struct orr__rank_ctx *c, uint32_t p, int64_t t_ns)
{
	const struct orr_proc *pr = &c->g->procs[p];
	uint32_t lo = 0, hi = pr->ntasks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->lstart[ORR__LOCAL(c, pr->first_task + mid)] < t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? pr->first_task + lo - 1 : ORR_NONE;
}

uint32_t orr__launched_after(const struct orr__rank_ctx *c, uint32_t p, int64_t t_ns)
{
	const struct orr_proc *pr = &c->g->procs[p];
	uint32_t lo = 0, hi = pr->ntasks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->lstart[ORR__LOCAL(c, pr->first_task + mid)] <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pr->ntasks ? pr->first_task + lo : ORR_NONE;
}

uint32_t orr__last_launch_stream(const struct orr__rank_ctx *c, uint32_t task)
{
	const struct orr_proc *pr = &c->g->procs[c->g->tasks[task].proc];

	for (uint32_t k = 0; k < 4096 && task >= pr->first_task + k; k++) {
		uint32_t gpu = c->launcher[ORR__LOCAL(c, task - k)];

		if (gpu != ORR_NONE)
			return c->g->tasks[gpu].proc;
	}
	return ORR_NONE;
}

uint32_t orr__ended_by(const struct orr__rank_ctx *c, const struct orr_proc *pr, int64_t t_ns)
{
	uint32_t lo = 0, hi = pr->ntasks;

	/* Tasks of a stream do not overlap: their ends are in order. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ORR__END(c, pr->first_task + mid) <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
