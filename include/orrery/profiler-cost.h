/* SPDX-License-Identifier: MIT */
/*
 * orrery/profiler-cost.h — what torch.profiler added to a traced job's host
 * (estimator/profiler-cost.c; docs/estimator.md, "The profiler's cost"): the options a
 * trace shows it ran with, the time per op and per runtime call measured with and
 * without it, and the launch threads' time a step with and without it and their
 * stalls (estimator/launch-time.c).  Part of the estimator's interface:
 * orrery/estimator.h includes it.
 */
#ifndef ORRERY_PROFILER_COST_H
#define ORRERY_PROFILER_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "orrery/graph.h"
#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What torch.profiler was asked to record, as its trace (Kineto JSON) shows it. */
enum orr_prof_option {
	ORR_PROF_CPU = 1u << 0,           /* ProfilerActivity.CPU: framework ops (cpu_op) */
	ORR_PROF_CUDA = 1u << 1,          /* ProfilerActivity.CUDA: CUPTI's runtime calls */
	ORR_PROF_RECORD_SHAPES = 1u << 2, /* record_shapes: "Input Dims" / "Input type" on ops */
	ORR_PROF_WITH_STACK = 1u << 3,    /* with_stack: "Call stack" on ops, python_function */
	ORR_PROF_MEMORY = 1u << 4,        /* profile_memory: "[memory]" events */
	ORR_PROF_WITH_FLOPS = 1u << 5,    /* with_flops: "flops" on ops */
	/*
	 * The ExecutionTraceObserver ran in the same process: an execution trace linked to
	 * the rank's ops (orrery --et), of the same process id as its threads where both
	 * say one.  Not in the Kineto JSON itself: only given with the execution trace.
	 */
	ORR_PROF_EXECUTION_TRACE = 1u << 6,
	ORR_PROF_OPTION_BITS = 7
};

/*
 * "cpu", "cuda", "record_shapes", "with_stack", "profile_memory", "with_flops",
 * "execution_trace" for one bit; NULL for anything else.
 */
const char *orr_prof_option_name(unsigned option);

/*
 * What the profiler added to the host: op_ns to the thread of each framework op it
 * recorded (ORR_EVENT_OP with an external id; NVTX ranges have none) and call_ns to
 * that of each CUDA runtime or driver call, measured with and without the profiler on
 * one job (a table in profiler-cost.c, with its provenance).  Both 0 for a trace
 * without the profiler's ops (orrery record, Nsight).
 */
struct orr_prof_cost {
	unsigned options;          /* ORR_PROF_* bits found in the trace, any rank */
	unsigned measured_options; /* those of the measurement used; 0 when none */
	bool exact;                /* measured with exactly options; false: the nearest set */
	double op_ns, call_ns;
	const char *source; /* the measurement: job, GPU, pair; NULL when none */
	/*
	 * ORR_PROF_EXECUTION_TRACE: what the observer added to each op it recorded (those
	 * inside the span of its rank's linked events: it records one step, or a few, of
	 * a capture that may hold more), and the measurement; 0 and NULL otherwise.
	 */
	double observer_ns;
	const char *observer_source;
};

/* The options of trace t and the overheads measured for them.  Cannot fail. */
void orr_prof_cost_find(const struct orr_trace *t, struct orr_prof_cost *ret);
/*
 * What c says the profiler added to the thread of event e of rank r, in ns: op_ns for
 * an op with an external id (and observer_ns more where r's execution trace was
 * recording: in the span of its linked events), call_ns for a runtime or driver call,
 * 0 for anything else.
 */
double orr_prof_cost_event_ns(const struct orr_prof_cost *c, const struct orr_rank *r,
			      const struct orr_event *e);
/* The names of options, ", "-separated ("none" for none), written to buf. */
void orr_prof_options_format(unsigned options, char *buf, size_t size);

/*
 * The launch threads' time per step (what `fit` calibrates the time per launch on):
 * between consecutive launches of a CPU thread inside a job step, less its blocking
 * calls, each moment counted once over the rank's threads (a thread waiting while
 * another launches, as the main thread in backward(), adds none); the slowest rank's,
 * over its steps, without the profiler and the stalls (estimator/launch-time.c).
 * profiler_ns is the part of it c says the profiler added (its ops and calls in those
 * intervals, per step); stall_ns the part the threads were not running: where three or
 * more ranks run the same program (the same launches, by name, in the same order on
 * each thread, and the same framework ops between them), each interval beyond the
 * ranks' median of it (peers: how many; 0 when no rank has enough).  step_ns -
 * profiler_ns - stall_ns is the job's on a host that runs it undisturbed.  NAN (and 0)
 * without two launches or without job steps.
 */
struct orr_launch_time {
	double step_ns, profiler_ns, stall_ns;
	double ops, calls;   /* per step, in the intervals counted */
	double observed_ops; /* per step: of ops, those the ExecutionTraceObserver recorded */
	size_t peers;        /* the ranks the stalls were found against, itself included */
};

void orr_launch_time_measure(const struct orr_graph *g, const struct orr_prof_cost *c,
			     struct orr_launch_time *ret);

/*
 * The stalls of orr_launch_time_measure() on the tasks that hold them: per task of g,
 * the ns of its time and the time before it (its gap) that its launch thread was not
 * running, over the job's steps (0 for most; a stalled interval's excess over its
 * peers' median goes to its non-blocking CPU tasks, the longest first).  *ret_ns is
 * their sum, over every rank and step.  NULL (and 0) without job steps; free() it.
 */
float *orr_launch_stalls(const struct orr_graph *g, double *ret_ns);

#ifdef __cplusplus
}
#endif

#endif /* ORRERY_PROFILER_COST_H */
