/* SPDX-License-Identifier: MIT */
/*
 * Why the GPU is idle (docs/orrery-summary.md, "GPU idle, explained").  On a rank's
 * measured timeline a gap is a time when no GPU task runs: on the device (every
 * stream) or on one stream.  Each moment of a gap is
 *
 *   host wait    when none of the GPU work that runs next had been launched yet;
 *   kernel wait  once it had, when the task that ends the gap waited on a dependency:
 *                an event (a cross-stream wait, D4) or a collective's peers;
 *   other        once it had, for a task without such a dependency: launch latency,
 *                queueing in the driver, what the trace does not show.
 *
 * "The GPU work that runs next" is every task that starts at or after the gap's end: the
 * earliest of their launches ends the host wait.  Besides, per stream, the queue:
 * tasks launched and not yet started, over time; per kernel class the launch delay
 * (start less the launch call's start); per rank the short kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "summary-internal.h"
#include "banned.h"

struct gtask {
	int64_t start, end, launch; /* launch: the call's start; INT64_MIN when not launched */
	uint32_t task, proc;
	bool dep; /* waited on an event or a collective's peers */
};

static int cmp_start(const void *a, const void *b)
{
	const struct gtask *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->task > y->task) - (x->task < y->task);
}

static const char *const classes[] = { "gemm",        "attention", "communication", "reduction",
				       "elementwise", "copy",      "other" };

/* needle in s, not right after a letter: "gemm" is not in "fbgemm". */
static bool word_in(const char *s, const char *needle)
{
	for (const char *p = strcasestr(s, needle); p; p = strcasestr(p + 1, needle))
		if (p == s || !((p[-1] | 0x20) >= 'a' && (p[-1] | 0x20) <= 'z'))
			return true;
	return false;
}

const char *orr_kernel_class_name(size_t c)
{
	return c < ORR_SUM_CLASSES ? classes[c] : NULL;
}

size_t orr_kernel_class_of(enum orr_event_kind kind, const char *name)
{
	static const char *const pats[][5] = {
		{ "flash", "fmha", "attention", "sdpa", NULL },
		{ "gemm", "cutlass", "xmma", "matmul", NULL },
		{ "nccl", "nvshmem", NULL },
		{ "reduce", "norm", "softmax", NULL },
		{ "elementwise", "vectorized", "unrolled", NULL },
	};
	static const size_t cls[] = { 1, 0, 2, 3, 4 }; /* the class of each row of pats */
	char family[8];

	if (kind != ORR_EVENT_KERNEL)
		return 5;
	for (size_t c = 0; c < sizeof(pats) / sizeof(pats[0]); c++) {
		/* after attention's names, the estimator's GEMMs (cuBLAS's nvjet_*) */
		if (cls[c] == 0 && orr_gemm_kernel_family(name, family, sizeof(family)))
			return 0;
		for (size_t k = 0; pats[c][k]; k++)
			if (word_in(name, pats[c][k]))
				return cls[c];
	}
	return 6;
}

size_t orr__summary_class_of(struct orr__class_memo *m, const struct orr_trace *t,
			     enum orr_event_kind kind, uint32_t name)
{
	size_t n = m ? m->n : 0;

	if (kind != ORR_EVENT_KERNEL || !m) /* by its kind alone, or no memo */
		return orr_kernel_class_of(kind, orr_trace_str(t, name));
	if (name >= n) {
		m->c = orr_xgrow(m->c, 1, &m->n, (size_t)name + 1);
		memset(m->c + n, 0, m->n - n);
	}
	if (!m->c[name])
		m->c[name] = (uint8_t)(orr_kernel_class_of(kind, orr_trace_str(t, name)) + 1);
	return m->c[name] - 1u;
}

/* orr_kernel_class() through m (NULL: none). */
static size_t task_class(const struct orr_graph *g, uint32_t t, struct orr__class_memo *m)
{
	const struct orr_event *e = orr_graph_task_event(g, t);

	if (e->kind == ORR_EVENT_KERNEL && (orr_graph_tasks(g)[t].flags & ORR_TASK_F_COMM))
		return 2;
	return orr__summary_class_of(m, orr_graph_trace(g), (enum orr_event_kind)e->kind, e->name);
}

size_t orr_kernel_class(const struct orr_graph *g, uint32_t t)
{
	return task_class(g, t, NULL);
}

static bool waits_on_dep(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *tk = &orr_graph_tasks(g)[t];

	if (tk->flags & ORR_TASK_F_COMM)
		return true;
	for (uint32_t d = tk->first_dep; d < tk->first_dep + tk->ndeps; d++)
		if (orr_graph_deps(g)[d].kind == ORR_DEP_CROSS_STREAM)
			return true;
	return false;
}

/* The rank's GPU tasks with their launches, in start order. */
static struct gtask *gpu_tasks(const struct orr_graph *g, size_t k, size_t *ret_n)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
	struct gtask *v = orr_xmalloc((gr->ntasks ? gr->ntasks : 1) * sizeof(*v));
	size_t n = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_task *tk = &orr_graph_tasks(g)[t];
		const struct orr_dep *d = &orr_graph_deps(g)[tk->first_dep];

		if (tk->kind != ORR_TASK_GPU)
			continue;
		v[n++] = (struct gtask){
			.start = orr_graph_task_start(g, t),
			.end = orr_graph_task_end(g, t),
			.launch = tk->ndeps && d->kind == ORR_DEP_LAUNCH
					  ? orr_graph_task_start(g, d->src)
					  : INT64_MIN,
			.task = t,
			.proc = tk->proc,
			.dep = waits_on_dep(g, t),
		};
	}
	qsort(v, n, sizeof(*v), cmp_start);
	*ret_n = n;
	return v;
}

static int64_t overlap(int64_t a, int64_t b, int64_t lo, int64_t hi)
{
	a = a > lo ? a : lo;
	b = b < hi ? b : hi;
	return b > a ? b - a : 0;
}

/* Adds gap [a, b) ended by v[next] (n: none) to the windows it falls in. */
static void add_gap(const struct gtask *v, size_t n, const int64_t *min_launch, size_t next,
		    int64_t a, int64_t b, const struct orr_step *w, size_t nw,
		    struct orr_sum_idle *out)
{
	int64_t launched = next < n ? min_launch[next] : INT64_MAX;
	bool waited = next < n && v[next].dep;

	/* what ends the gap was not launched by a call the trace shows: nothing to say */
	if (next < n && v[next].launch == INT64_MIN) {
		launched = a;
		waited = false;
	}
	for (size_t i = 0; i < nw; i++) {
		int64_t idle = overlap(a, b, w[i].start_ns, w[i].end_ns);
		int64_t host = overlap(a, launched < b ? launched : b, w[i].start_ns, w[i].end_ns);

		if (!idle)
			continue;
		out[i].idle_ns += idle;
		out[i].host_wait_ns += host;
		if (waited)
			out[i].kernel_wait_ns += idle - host;
		else
			out[i].other_ns += idle - host;
	}
}

/*
 * The gaps of v[0..n) (in start order) in every window, explained into out[0..nw).
 * min_launch: scratch for n values.
 */
static void explain(const struct gtask *v, size_t n, int64_t *min_launch, const struct orr_step *w,
		    size_t nw, struct orr_sum_idle *out)
{
	int64_t busy = nw ? w[0].start_ns : 0;

	for (size_t i = n; i-- > 0;) {
		/* a task no call launched (in the trace) ends no host wait */
		int64_t l = v[i].launch == INT64_MIN ? INT64_MAX : v[i].launch;

		min_launch[i] = i + 1 < n && min_launch[i + 1] < l ? min_launch[i + 1] : l;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].start > busy)
			add_gap(v, n, min_launch, i, busy, v[i].start, w, nw, out);
		if (v[i].end > busy)
			busy = v[i].end;
	}
	if (nw && w[nw - 1].end_ns > busy)
		add_gap(v, n, min_launch, n, busy, w[nw - 1].end_ns, w, nw, out);
}

struct qev {
	int64_t t;
	int d;
};

static int cmp_qev(const void *a, const void *b)
{
	const struct qev *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return x->d - y->d; /* starts before launches at one time */
}

/* The queue of one stream's tasks v[0..n): its time-weighted mean and maximum in w. */
static void queue(const struct gtask *v, size_t n, const struct orr_step *w, size_t nw,
		  struct orr_sum_stream_idle *out)
{
	struct qev *q = orr_xmalloc((2 * n + 1) * sizeof(*q));
	size_t m = 0;
	int64_t depth = 0;
	double area = 0, span = 0; /* depth x time: past int64 for a deep queue, long steps */

	for (size_t i = 0; i < n; i++) {
		if (v[i].launch == INT64_MIN || v[i].launch >= v[i].start)
			continue;
		q[m++] = (struct qev){ v[i].launch, 1 };
		q[m++] = (struct qev){ v[i].start, -1 };
	}
	qsort(q, m, sizeof(*q), cmp_qev);
	for (size_t i = 0; i < m; i++) {
		for (size_t k = 0; depth && i && k < nw; k++) {
			area += (double)depth *
				(double)overlap(q[i - 1].t, q[i].t, w[k].start_ns, w[k].end_ns);
			/* a queue already there when a window starts */
			if (depth > out->queue_max && w[k].start_ns >= q[i - 1].t &&
			    w[k].start_ns < q[i].t)
				out->queue_max = depth;
		}
		depth += q[i].d;
		for (size_t k = 0; depth > out->queue_max && k < nw; k++)
			if (q[i].t >= w[k].start_ns && q[i].t < w[k].end_ns)
				out->queue_max = depth;
	}
	for (size_t k = 0; k < nw; k++)
		span += (double)(w[k].end_ns - w[k].start_ns);
	out->queue_mean = span > 0 ? area / span : 0;
	free(q);
}

static ptrdiff_t in_windows(const struct orr_step *w, size_t nw, int64_t t)
{
	for (size_t i = 0; i < nw; i++)
		if (t >= w[i].start_ns && t < w[i].end_ns)
			return (ptrdiff_t)i;
	return -1;
}

/* Launch delays by class and the rank's short kernels, for the tasks starting in w. */
static void launches(struct orr_summary *s, const struct gtask *v, size_t n,
		     const struct orr_step *w, size_t nw, int32_t rank, struct orr__class_memo *m)
{
	struct orr_sum_short sh = { .rank = rank };

	for (size_t i = 0; i < n; i++) {
		size_t c;

		if (in_windows(w, nw, v[i].start) < 0)
			continue;
		c = task_class(s->g, v[i].task, m);
		if (v[i].launch != INT64_MIN) {
			struct orr_sum_delays *d = &s->delays[c];

			ORR_VEC_PUSH(d->ns, d->n, d->cap, v[i].start - v[i].launch);
		}
		if (orr_graph_task_event(s->g, v[i].task)->kind != ORR_EVENT_KERNEL)
			continue;
		sh.kernels++;
		sh.kernel_ns += v[i].end - v[i].start;
		if (v[i].end - v[i].start < ORR_SUM_SHORT_KERNEL_NS) {
			sh.short_kernels++;
			sh.short_ns += v[i].end - v[i].start;
		}
	}
	ORR_VEC_PUSH(s->shorts, s->nshorts, s->cap_shorts, sh);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct gtask *x = a, *y = b;

	if (x->proc != y->proc)
		return (x->proc > y->proc) - (x->proc < y->proc);
	return cmp_start(a, b);
}

/* Per stream: its gaps explained over the windows, and its queue. */
static void streams(struct orr_summary *s, size_t k, struct gtask *v, size_t n, int64_t *scratch,
		    const struct orr_step *w, size_t nw, struct orr_sum_idle *dev)
{
	const struct orr_rank *r = orr_graph_get_rank(s->g, k)->rank;

	qsort(v, n, sizeof(*v), cmp_proc);
	for (size_t i = 0, j; i < n; i = j) {
		struct orr_sum_stream_idle row = { .rank = r->rank };

		for (j = i; j < n && v[j].proc == v[i].proc;)
			j++;
		memset(dev, 0, (nw + 1) * sizeof(*dev));
		explain(v + i, j - i, scratch, w, nw, dev);
		for (size_t x = 0; x < nw; x++) {
			row.idle.idle_ns += dev[x].idle_ns;
			row.idle.host_wait_ns += dev[x].host_wait_ns;
			row.idle.kernel_wait_ns += dev[x].kernel_wait_ns;
			row.idle.other_ns += dev[x].other_ns;
		}
		row.stream = r->places[orr_graph_procs(s->g)[v[i].proc].place].tid;
		queue(v + i, j - i, w, nw, &row);
		ORR_VEC_PUSH(s->stream_idle, s->nstream_idle, s->cap_stream_idle, row);
	}
}

void orr__summary_idle(struct orr_summary *s, size_t k, const struct orr_step *w, size_t nw,
		       struct orr_sum_step *steps, struct orr__class_memo *m)
{
	size_t n;
	struct gtask *v = gpu_tasks(s->g, k, &n);
	int64_t *scratch;
	struct orr_sum_idle *dev;

	if (!nw) { /* no step of this rank is shown */
		free(v);
		return;
	}
	scratch = orr_xmalloc((n + 1) * sizeof(*scratch));
	dev = orr_xcalloc(nw + 1, sizeof(*dev));
	explain(v, n, scratch, w, nw, dev);
	for (size_t i = 0; i < nw; i++)
		steps[i].idle = dev[i];
	launches(s, v, n, w, nw, orr_graph_get_rank(s->g, k)->rank->rank, m);
	streams(s, k, v, n, scratch, w, nw, dev);
	free(dev);
	free(scratch);
	free(v);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void orr__summary_idle_finish(struct orr_summary *s)
{
	for (size_t c = 0; c < ORR_SUM_CLASSES; c++) {
		struct orr_sum_delays *d = &s->delays[c];

		d->name = orr_kernel_class_name(c);
		if (!d->n)
			continue;
		qsort(d->ns, d->n, sizeof(*d->ns), cmp_i64);
		/* nearest rank: the smallest value with at least p of them at or below it */
		d->p50 = d->ns[(d->n + 1) / 2 - 1];
		d->p90 = d->ns[(9 * d->n + 9) / 10 - 1];
		d->max = d->ns[d->n - 1];
	}
}
