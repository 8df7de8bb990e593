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

/*
 * The ExecutionTraceObserver recording beside torch.profiler, per op it records (an
 * execution trace linked to the ops: how the shared A100 Megatron trace was recorded),
 * by the schema it wrote: what it writes per op, and so its cost, is the schema's.  The
 * observer writes each op's schema and inputs on the op's thread, with no GPU in it, so
 * its cost is the host's (docs/estimator.md, "The ExecutionTraceObserver").
 *
 * Schema 1.0.x (PyTorch up to 2.3; Debian's 1.13 writes it as ExecutionGraphObserver,
 * the same fields): measured on a CPU where every op is host time (python3
 * bench/observer-cost.py: a 12-layer GPT of hidden 64 on one thread, forward, backward
 * and SGD, 8,134 ops a step, PyTorch 1.13, x86_64 AMD EPYC, 2 cores; medians of 5
 * rounds): torch.profiler with record_shapes 13.350 ms a step, with the observer too
 * 68.136 ms, 6,736 ns per op more.
 *
 * Any other schema, or none written (1.1, PyTorch 2.4 on: each node's attributes, the
 * tensors' strides), as
 * observed once on a GPU's host: bench/gpu/gpt.py's base on one H200, PyTorch 2.11, the
 * step traced under torch.profiler and the observer 157.6 ms against 59.3 ms for the
 * median of the 20 profiled steps (../shared/gpu-runs/README.md, compose), over the
 * 5,219 ops of a step: 18,835 ns per op; one step, the profiler's first, so an upper
 * bound until bench/gpu/profiler-pairs.sh measures it over many.
 */
static const struct observer {
	const char *schema; /* the prefix of the schema it was measured with; "": any */
	double op_ns;
	const char *source;
} observers[] = {
	{ "1.0.", 6736,
	  "the ExecutionTraceObserver (schema 1.0) beside torch.profiler, bench/observer-cost.py "
	  "on a CPU (PyTorch 1.13: 68.1 vs 13.4 ms per step, 8,134 ops)" },
	{ "", 18835,
	  "the ExecutionTraceObserver (schema 1.1, or another than 1.0) beside torch.profiler, "
	  "one step of "
	  "bench/gpu/gpt.py on one H200 (PyTorch 2.11: 157.6 vs 59.3 ms, 5,219 ops)" },
};

static const char *const option_names[ORR_PROF_OPTION_BITS] = {
	"cpu",
	"cuda",
	"record_shapes",
	"with_stack",
	"profile_memory",
	"with_flops",
	"execution_trace",
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
 * Whether the rank's execution trace was recorded in its process: linked to its ops,
 * and of the same process id as one of its threads where both are known (an
 * execution trace of another run, given by mistake, links by op sequence alone).
 */
static bool observed(const struct orr_rank *r)
{
	bool known = false;

	if (!r->et || !r->et->linked)
		return false;
	if (r->et->pid <= 0)
		return true;
	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];

		if (p->kind != ORR_PLACE_THREAD || p->pid <= 0)
			continue;
		if (p->pid == r->et->pid)
			return true;
		known = true;
	}
	return !known;
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
	if (observed(r))
		o |= ORR_PROF_EXECUTION_TRACE;
	return o;
}

/* Options in one set and not the other. */
static unsigned distance(unsigned a, unsigned b)
{
	return (unsigned)__builtin_popcount(a ^ b);
}

/* The observer's cost per op, by the schema of the first rank's execution trace it wrote. */
static void observer_find(const struct orr_trace *t, struct orr_prof_cost *ret)
{
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		const char *schema;

		if (!observed(r))
			continue;
		schema = r->et->schema == ORR_STR_NONE ? "" : orr_trace_str(t, r->et->schema);
		for (size_t k = 0; k < sizeof(observers) / sizeof(observers[0]); k++)
			if (!strncmp(schema, observers[k].schema, strlen(observers[k].schema))) {
				ret->observer_ns = observers[k].op_ns;
				ret->observer_source = observers[k].source;
				return;
			}
	}
}

void orr_prof_cost_find(const struct orr_trace *t, struct orr_prof_cost *ret)
{
	const struct measured *best = NULL;
	unsigned profiler;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		ret->options |= rank_options(t, orr_trace_get_rank(t, i));
	if (!(ret->options & ORR_PROF_CPU))
		return;
	profiler = ret->options & ~(unsigned)ORR_PROF_EXECUTION_TRACE;
	for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++)
		if (!best ||
		    distance(measured[i].options, profiler) < distance(best->options, profiler))
			best = &measured[i];
	ret->measured_options = best->options | (ret->options & ORR_PROF_EXECUTION_TRACE);
	ret->exact = best->options == profiler;
	if (ret->options & ORR_PROF_EXECUTION_TRACE)
		observer_find(t, ret);
	ret->op_ns = best->op_ns;
	ret->call_ns = best->call_ns;
	ret->source = best->source;
}

double orr_prof_cost_event_ns(const struct orr_prof_cost *c, const struct orr_rank *r,
			      const struct orr_event *e)
{
	if (e->kind == ORR_EVENT_OP && e->external_id >= 0)
		return c->op_ns + (c->observer_ns > 0 && observed(r) &&
						   e->start_ns >= r->et->linked_from_ns &&
						   e->start_ns < r->et->linked_to_ns
					   ? c->observer_ns
					   : 0);
	if (e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER)
		return c->call_ns;
	return 0;
}
