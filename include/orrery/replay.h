/* SPDX-License-Identifier: MIT */
/*
 * orrery/replay.h — discrete-event replay of an execution graph, and what is
 * measured on its result: step times, the Lumos breakdown, the busy timeline and
 * the critical path.
 *
 * The simulation (DESIGN.md, "Replay semantics") uses only task durations, the CPU
 * gaps within a thread, the edges with their latencies and each processor's first
 * start.  A task starts when its processor is free and every dependency is done;
 * a blocking call ends when the GPU work it waits for ends (resolved when it runs);
 * a collective coupled across ranks ends at the latest start of its members plus the
 * smallest measured duration among them.  Ties break by processor index, so the same
 * input gives the same output.  Predicted times are on the trace's own clock.
 *
 * Ownership: a replay borrows its graph (which borrows the trace); both must outlive
 * it.  Functions returning arrays through ret_* hand out malloc'ed memory (free()).
 * Errors: orr_replay_run() returns 0, ORR_ECYCLE with the cycle in reterr_diag, or
 * -ERANGE when a scale factor or the predicted timeline is out of range (reterr_diag
 * says which).
 * Thread safety: a finished replay is immutable; replays of one graph may run in
 * parallel.
 */
#ifndef ORRERY_REPLAY_H
#define ORRERY_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/graph.h"
#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Multiplies the duration of every GPU task whose name matches glob (fnmatch(3)).
 * A factor is from 0 to ORR_SCALE_MAX; a larger one, or scaled durations past
 * ORR_TIME_MAX (alone or added up), fail orr_replay_run() with -ERANGE.
 */
#define ORR_SCALE_MAX 1e6
struct orr_scale {
	const char *glob;
	double factor;
};

struct orr_replay_options {
	const struct orr_scale *scales; /* every matching factor applies */
	size_t nscales;
	/*
	 * Per task of the graph (orr_graph_task_count() of them), a factor on its duration
	 * as the glob factors are, applied to GPU tasks only: how the estimator re-times a
	 * graph for another configuration (estimator/retime.c).  NULL: none.
	 */
	const float *task_factors;
	/*
	 * Per task of the graph, a factor on a CPU task's duration and on the CPU time
	 * before it on its thread (its gap), 0 to ORR_SCALE_MAX: CPU what-ifs (a faster
	 * framework, one rank's slower host).  GPU tasks' entries are ignored.  NULL: none.
	 */
	const float *cpu_factors;
	/* Called now and then (every 2^20 tasks or so, between ranks' runs, and at the end) with the tasks
	 * replayed so far and in all: for a progress display.  NULL: none. */
	void (*progress)(void *data, uint64_t done_tasks, uint64_t total_tasks);
	void *progress_data;
	/*
	 * The same graph replayed without factors, or NULL.  With it, a thread's first call
	 * that another thread handed its work (a D6 edge: PyTorch's autograd thread, whose
	 * first call waits for the main thread's backward()) starts when it did there, moved
	 * by as much as the task that handed it its work moved, instead of no earlier than
	 * measured: a what-if that ends the forward pass earlier starts the first traced
	 * step's backward earlier.  Unchanged factors give the baseline's times.
	 */
	const struct orr_replay *baseline;
};

struct orr_replay;

/* Replays G; opts may be NULL. */
int orr_replay_run(const struct orr_graph *g, const struct orr_replay_options *opts,
		   struct orr_replay **ret_replay, struct orr_diag *reterr_diag);
void orr_replay_free(struct orr_replay *r);

const struct orr_graph *orr_replay_graph(const struct orr_replay *r);
/* Predicted start and end of a task (an index into orr_graph_tasks()). */
int64_t orr_replay_start(const struct orr_replay *r, uint32_t task);
int64_t orr_replay_end(const struct orr_replay *r, uint32_t task);

/*
 * What decided a task's time: ORR_NONE for the first task of a processor started at
 * its anchor; otherwise the task whose end it waited for (its processor predecessor,
 * an edge's source, the awaited GPU task of a blocking call or the last member to
 * arrive at a collective).  *ret_binds_end tells whether that task set the end (a
 * wait) rather than the start.
 */
uint32_t orr_replay_cause(const struct orr_replay *r, uint32_t task, bool *ret_binds_end);

/* A measured time point of a place of rank `rank`, moved onto the predicted timeline. */
int64_t orr_replay_map_time(const struct orr_replay *r, size_t rank, uint32_t place, int64_t t_ns);

struct orr_replay_step {
	int64_t step; /* ProfilerStep number; -1 for the whole capture */
	int64_t measured_start_ns, measured_end_ns;
	int64_t predicted_start_ns, predicted_end_ns;
};

/* The steps of graph rank `rank` (orr_rank_steps()), measured and predicted. */
void orr_replay_steps(const struct orr_replay *r, size_t rank, struct orr_replay_step **ret_steps,
		      size_t *ret_n);
/* Job steps: those every rank has; min start and max end over ranks, both timelines. */
void orr_replay_job_steps(const struct orr_replay *r, struct orr_replay_step **ret_steps,
			  size_t *ret_n);

/* Lumos's breakdown of a window of one rank's GPU time. */
struct orr_breakdown {
	int64_t exposed_compute_ns; /* some compute, no communication running */
	int64_t overlapped_ns;      /* both */
	int64_t exposed_comm_ns;    /* communication only */
	int64_t other_ns;           /* no GPU task running */
	/*
	 * The part of exposed_comm_ns in which the rank's communication only waited for its
	 * peers: its collectives had started, and some member of each on another rank had
	 * not (the instance's last member starts its transfer).  A collective coupled to no
	 * other rank (a one-rank trace) counts as transferring throughout.
	 */
	int64_t exposed_wait_ns;
};

/* Over [start_ns, end_ns) of the measured (predicted == false) or predicted timeline. */
void orr_replay_breakdown(const struct orr_replay *r, size_t rank, bool predicted, int64_t start_ns,
			  int64_t end_ns, struct orr_breakdown *ret);

#define ORR_BUSY_BIN_NS 1000000 /* 1 ms bins, as Lumos */

/*
 * The busy timeline of a rank-step: the share of each 1 ms bin, counted from the
 * step's start, in which any stream runs.  Returns the L1 distance between the
 * measured and predicted timelines, in bins (sum over bins of |measured - predicted|).
 */
double orr_replay_busy_l1(const struct orr_replay *r, size_t rank,
			  const struct orr_replay_step *step);

/*
 * Both of the above for many windows of one rank: the rank's GPU tasks on one
 * timeline (measured or predicted), sorted once (O(n log n)), then each window's
 * breakdown in O(log n) and its busy L1 in O(log n) plus the task boundaries inside
 * it.  The answers are those of the functions above.  A timeline borrows r.
 */
struct orr_gpu_timeline;
struct orr_gpu_timeline *orr_gpu_timeline_new(const struct orr_replay *r, size_t rank,
					      bool predicted);
void orr_gpu_timeline_free(struct orr_gpu_timeline *tl);
void orr_gpu_timeline_breakdown(const struct orr_gpu_timeline *tl, int64_t start_ns, int64_t end_ns,
				struct orr_breakdown *ret);
double orr_gpu_timeline_busy_l1(const struct orr_gpu_timeline *measured,
				const struct orr_gpu_timeline *predicted,
				const struct orr_replay_step *step);

enum orr_path_cat {
	ORR_PATH_COMPUTE, /* GPU compute, copies, sets */
	ORR_PATH_COMM,    /* GPU communication */
	ORR_PATH_LAUNCH,  /* CPU calls that launch GPU work */
	ORR_PATH_CPU,     /* other CPU calls and the gaps between calls */
	ORR_PATH_IDLE,    /* latencies: nothing on the path runs */
	ORR_PATH_CAT_COUNT
};

struct orr_path_seg {
	uint32_t task; /* ORR_NONE for idle time */
	uint8_t cat;   /* enum orr_path_cat */
	/*
	 * The dependency by which the path's earlier part decided this segment's task
	 * (enum orr_dep_kind): its thread's (ORR_DEP_THREAD) or stream's previous task, a
	 * launch, a cross-stream or cross-thread edge; a blocking call's return after its
	 * awaited GPU work (ORR_DEP_SYNC); a collective's transfer after its late peer's
	 * arrival (ORR_DEP_CROSS_RANK); 0 where nothing earlier decided it (a thread's
	 * first call, the time after the last task).  A gap before a task (CPU time, a
	 * latency) has the task's.
	 */
	uint8_t via;
	int64_t start_ns, end_ns;
};

/*
 * The critical path of a predicted window [start_ns, end_ns) across all ranks: from
 * the task that ends last in it back through the causes of every task, as segments
 * in time order covering the window.
 */
void orr_replay_critical_path(const struct orr_replay *r, int64_t start_ns, int64_t end_ns,
			      struct orr_path_seg **ret_segs, size_t *ret_n);
const char *orr_path_cat_name(enum orr_path_cat cat);

/*
 * The time on a critical path that no scale factor moves (--scale rules change task
 * durations and CPU gaps): delays_ns, idle time before a GPU task that its delay kept
 * as measured (orr_graph_task_delay(): it waited for what the trace does not show);
 * starts_ns, idle time nothing decided (before a thread's start, the window's start);
 * waits_ns, blocking calls whose awaited work the graph did not identify, kept as
 * measured.  A what-if whose path is mostly such time cannot move the step by more than
 * the rest; total_ns is their sum.
 */
struct orr_path_fixed {
	int64_t delays_ns, starts_ns, waits_ns, total_ns;
};

void orr_replay_path_fixed(const struct orr_replay *r, const struct orr_path_seg *segs, size_t n,
			   struct orr_path_fixed *ret);

#ifdef __cplusplus
}
#endif

#endif
