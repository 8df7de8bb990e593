/* SPDX-License-Identifier: MIT */
/*
 * The profiler's own cost (docs/estimator.md, "The profiler's cost").
 *
 * torch.profiler runs code on the job's threads for every op it records (RecordFunction's
 * callbacks, the op's inputs when record_shapes asks for them, Kineto's external
 * correlation pushed to CUPTI) and CUPTI's callbacks on every runtime call.  On a
 * host-bound step that time is the step's: a trace's launch thread is slower than the
 * job's, and an estimate calibrated on it inherits the difference.  What it adds is
 * measured here on jobs run both ways (with the profiler and without any, the same
 * configuration on the same GPU), as the time it adds per op and per runtime call; the
 * options it ran with are read from the trace, because what it records decides what it
 * costs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

/*
 * One option set, measured: (traced - plain) step time over the ops (and runtime
 * calls) of a traced step, on a step whose critical path is its host thread in both
 * runs.  Every value here is a measurement, its inputs in source (docs/estimator.md
 * gives the spread over the other pairs).
 *
 * torch.profiler (CPU, CUDA, record_shapes), bench/gpu/gpt.py at its base (12 layers,
 * hidden 1024, batch 8, seq 1024, bf16, fused AdamW) on one H200, PyTorch 2.11.0+cu130:
 * 59.175 ms per step traced (median of the 5 ProfilerSteps of
 * ../shared/whatif/h200-gpt/base.json.gz), 33.985 ms plain (median of 20 steps,
 * base.plain.jsonl), 5,219 ops and 983 runtime and driver calls per traced step: 25.19
 * ms, 4,827 ns per op.  The plain run's step is close to its GPU's busy time (about 32
 * of its 34 ms), so its host may be faster than its step says: this is a lower bound of
 * the profiler's cost per op, until a pair whose plain run is host-bound measures it
 * (docs/estimator.md).  Every pair of ../shared has 4.7 to 5.5 ops per call, so they
 * cannot tell an op's cost from a call's; PyTorch makes each runtime call from inside
 * an op, so the whole is put on the ops (call_ns 0), which also covers the calls a
 * trace's ops make.
 */
static const struct measured {
	unsigned options;
	double op_ns, call_ns;
	const char *source;
} measured[] = {
	{ ORR_PROF_CPU | ORR_PROF_CUDA | ORR_PROF_RECORD_SHAPES, 4827, 0,
	  "torch.profiler vs plain, bench/gpu/gpt.py on one H200 (../shared/whatif/h200-gpt/"
	  "base: 59.2 vs 34.0 ms per step, 5,219 ops)" },
};

static const char *const option_names[ORR_PROF_OPTION_BITS] = {
	"cpu", "cuda", "record_shapes", "with_stack", "profile_memory", "with_flops",
};

const char *orr_prof_option_name(unsigned option)
{
	for (unsigned i = 0; i < ORR_PROF_OPTION_BITS; i++)
		if (option == 1u << i)
			return option_names[i];
	return NULL;
}

void orr_prof_options_format(unsigned options, char *buf, size_t size)
{
	size_t at = 0;

	if (!size)
		return;
	buf[0] = 0;
	for (unsigned i = 0; i < ORR_PROF_OPTION_BITS; i++) {
		int n;

		if (!(options & 1u << i))
			continue;
		n = snprintf(buf + at, size - at, "%s%s", at ? ", " : "", option_names[i]);
		if (n < 0 || (size_t)n >= size - at)
			return;
		at += (size_t)n;
	}
	if (!at)
		snprintf(buf, size, "none");
}

static bool skipped(const struct orr_trace *t, const struct orr_rank *r, const char *category)
{
	for (size_t i = 0; i < r->nskipped; i++)
		if (!strcmp(orr_trace_str(t, r->skipped[i].category), category))
			return true;
	return false;
}

/*
 * A rank's options.  Kineto writes an "External id" on every op it records, which
 * NVTX ranges (emit_nvtx under Nsight or orrery record) have not: only such ops are
 * the profiler's.
 */
static unsigned rank_options(const struct orr_trace *t, const struct orr_rank *r)
{
	unsigned o = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind != ORR_EVENT_OP || e->external_id < 0)
			continue;
		o |= ORR_PROF_CPU;
		if (e->args != ORR_NONE && r->ops[e->args].ninputs)
			o |= ORR_PROF_RECORD_SHAPES;
	}
	if (!o)
		return 0;
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == ORR_EVENT_RUNTIME ||
		    r->events[i].kind == ORR_EVENT_DRIVER) {
			o |= ORR_PROF_CUDA;
			break;
		}
	if (r->ops_with_stack || skipped(t, r, "python_function"))
		o |= ORR_PROF_WITH_STACK;
	if (r->nmems || r->mem_peak_allocated_bytes >= 0)
		o |= ORR_PROF_MEMORY;
	if (r->ops_with_flops)
		o |= ORR_PROF_WITH_FLOPS;
	return o;
}

/* Options in one set and not the other. */
static unsigned distance(unsigned a, unsigned b)
{
	return (unsigned)__builtin_popcount(a ^ b);
}

void orr_prof_cost_find(const struct orr_trace *t, struct orr_prof_cost *ret)
{
	const struct measured *best = NULL;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		ret->options |= rank_options(t, orr_trace_get_rank(t, i));
	if (!(ret->options & ORR_PROF_CPU))
		return;
	for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++)
		if (!best || distance(measured[i].options, ret->options) <
				     distance(best->options, ret->options))
			best = &measured[i];
	ret->measured_options = best->options;
	ret->exact = best->options == ret->options;
	ret->op_ns = best->op_ns;
	ret->call_ns = best->call_ns;
	ret->source = best->source;
}

double orr_prof_cost_event_ns(const struct orr_prof_cost *c, const struct orr_event *e)
{
	if (e->kind == ORR_EVENT_OP && e->external_id >= 0)
		return c->op_ns;
	if (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER)
		return c->call_ns;
	return 0;
}

/* ---- the launch threads' time ---- */

/* A CPU thread's span between its first and last launch in the window; lo == hi: none. */
struct span {
	int64_t lo, hi;
};

/* Intervals [lo, hi) of time, pushed by several threads. */
struct spans {
	struct span *v;
	size_t n, cap;
};

static void spans_push(struct spans *s, int64_t lo, int64_t hi)
{
	if (hi > lo)
		ORR_VEC_PUSH(s->v, s->n, s->cap, ((struct span){ lo, hi }));
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The length of the union of s's intervals. */
static double spans_union_ns(struct spans *s)
{
	double sum = 0;
	int64_t lo = 0, hi = 0;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), span_cmp);
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].lo > hi) {
			sum += (double)(hi - lo);
			lo = s->v[i].lo;
			hi = s->v[i].hi;
		} else if (s->v[i].hi > hi) {
			hi = s->v[i].hi;
		}
	}
	return sum + (double)(hi - lo);
}

/*
 * One CPU processor's time between consecutive launches inside [from, to), less what
 * its blocking calls spent (waiting for the GPU is no launch cost), pushed to out as
 * intervals; its span in *sp.
 */
static void proc_launch_spans(const struct orr_graph *g, const struct orr_proc *p, int64_t from,
			      int64_t to, struct spans *out, struct span *sp)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	int64_t last = -1, cur = 0;

	for (uint32_t t = p->first_task; t < p->first_task + p->ntasks; t++) {
		int64_t at = orr_graph_task_start(g, t);

		if (at < from || at >= to)
			continue;
		if (tasks[t].flags & ORR_TASK_F_BLOCKING) {
			if (last >= 0)
				spans_push(out, cur, at);
			if (orr_graph_task_end(g, t) > cur)
				cur = orr_graph_task_end(g, t);
		} else if (tasks[t].flags & ORR_TASK_F_LAUNCH) {
			if (last >= 0)
				spans_push(out, cur, at);
			if (last < 0)
				sp->lo = at;
			sp->hi = last = cur = at;
		}
	}
}

/* What c says the profiler added to the events of r on the threads' spans sp (by place). */
static void rank_profiler(const struct orr_rank *r, const struct span *sp,
			  const struct orr_prof_cost *c, struct orr_launch_time *ret)
{
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		const struct span *s = &sp[e->place];
		double ns;

		if (e->start_ns < s->lo || e->start_ns >= s->hi)
			continue;
		ns = orr_prof_cost_event_ns(c, e);
		ret->ops += e->kind == ORR_EVENT_OP && e->external_id >= 0;
		ret->calls += e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER;
		ret->profiler_ns += ns;
	}
}

/* Rank gr's launch time and profiler part over the steps [from, to), not yet per step. */
static bool rank_launch(const struct orr_graph *g, const struct orr_graph_rank *gr, int64_t from,
			int64_t to, const struct orr_prof_cost *c, struct orr_launch_time *ret)
{
	const struct orr_proc *procs = orr_graph_procs(g);
	struct span *sp = orr_xcalloc(gr->rank->nplaces ? gr->rank->nplaces : 1, sizeof(*sp));
	struct spans between = { 0 };
	bool any = false;

	memset(ret, 0, sizeof(*ret));
	for (uint32_t p = gr->first_proc; p < gr->first_proc + gr->nprocs; p++) {
		struct span s = { 0, 0 };

		if (procs[p].kind != ORR_TASK_CPU)
			continue;
		proc_launch_spans(g, &procs[p], from, to, &between, &s);
		any |= s.hi > s.lo;
		sp[procs[p].place] = s;
	}
	/* the threads' union: a thread waiting for another's launches (the main thread in
	 * backward() while autograd's thread launches the pass) adds no time of its own */
	ret->step_ns = spans_union_ns(&between);
	free(between.v);
	if (any)
		rank_profiler(gr->rank, sp, c, ret);
	free(sp);
	return any;
}

void orr_launch_time_measure(const struct orr_graph *g, const struct orr_prof_cost *c,
			     struct orr_launch_time *ret)
{
	struct orr_step *steps = NULL;
	size_t nsteps = 0;
	double best = -1;

	*ret = (struct orr_launch_time){ NAN, 0, 0, 0 };
	if (orr_trace_job_steps(orr_graph_trace(g), &steps, &nsteps) || !nsteps) {
		free(steps);
		return;
	}
	for (size_t r = 0; r < orr_graph_rank_count(g); r++) {
		struct orr_launch_time lt;
		double free_ns;

		if (!rank_launch(g, orr_graph_get_rank(g, r), steps[0].start_ns,
				 steps[nsteps - 1].end_ns, c, &lt))
			continue;
		/* the slowest rank without the profiler: the one whose launches pace the job */
		free_ns = fmax(0, lt.step_ns - lt.profiler_ns);
		if (free_ns <= best)
			continue;
		best = free_ns;
		*ret = (struct orr_launch_time){ lt.step_ns / (double)nsteps,
						 (lt.step_ns - free_ns) / (double)nsteps,
						 lt.ops / (double)nsteps,
						 lt.calls / (double)nsteps };
	}
	free(steps);
}
