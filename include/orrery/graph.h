/* SPDX-License-Identifier: MIT */
/*
 * orrery/graph.h — the execution graph of a trace.
 *
 * Processors are the CPU threads and GPU streams of every rank.  A CPU task is one
 * top-level runtime/driver call (nested calls fold into it; a run of cudaEventQuery
 * polls folds into one task); the measured time between two calls of a thread is the
 * second one's gap, and the time from a step's start to its thread's first call that
 * call's.  A GPU task is a kernel, copy or set.  The tasks of a processor
 * are contiguous and in order, so thread order (D1) and stream order (D3) are
 * implicit; every other dependency is an explicit edge into its task (DESIGN.md,
 * "dependency kinds"):
 *
 *   D2 launch        call -> each GPU task with its correlation id
 *   D4 cross-stream  last task before cudaEventRecord(e, A) -> first task on B after
 *                    cudaStreamWaitEvent(B, e)
 *   D5 GPU -> CPU    a blocking call (stream/device/event synchronize, blocking copy,
 *                    event-query polling) ends when the awaited GPU work ends; stored
 *                    as a struct orr_wait and resolved during replay; a gap in which
 *                    a thread spun on a flag a communication kernel writes, without a
 *                    call, is an edge kernel -> next call (ORR_DEP_F_SPIN)
 *   D6 cross-thread  a thread idle while another one works hands off and waits
 *   D7 cross-rank    the members of one collective instance on different ranks
 *
 * An edge (src -> task, lat_ns) means: task starts no earlier than src ends plus
 * lat_ns; a D2 edge counts from the call's start instead (a kernel starts while its
 * launch call still runs, and a blocking copy's copy runs while its call waits).
 * D2 latencies and the GPU tasks' stream gaps are per-device constants measured on
 * the trace; D6 and spin latencies are the measured wake-up times
 * (docs/replay-method.md).
 *
 * Ownership: the graph borrows the trace, which must outlive it.  Arrays returned by
 * the getters are owned by the graph and valid until orr_graph_free().
 * Errors: orr_graph_build() returns 0 or a negative code and fills reterr_diag.
 * Thread safety: a built graph is immutable and may be read from any thread.
 */
#ifndef ORRERY_GRAPH_H
#define ORRERY_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/common.h"
#include "orrery/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum orr_dep_kind {
	ORR_DEP_THREAD = 1,   /* D1, implicit */
	ORR_DEP_LAUNCH,       /* D2 */
	ORR_DEP_STREAM,       /* D3, implicit */
	ORR_DEP_CROSS_STREAM, /* D4 */
	ORR_DEP_SYNC,         /* D5, resolved in replay */
	ORR_DEP_CROSS_THREAD, /* D6 */
	ORR_DEP_CROSS_RANK,   /* D7 */
	ORR_DEP_COUNT
};

enum orr_task_kind { ORR_TASK_CPU, ORR_TASK_GPU };

#define ORR_TASK_F_COMM     0x1 /* GPU: a collective, or a communication name (comm_globs) */
#define ORR_TASK_F_LAUNCH   0x2 /* CPU: launches GPU work (kernel, copy, set, graph) */
#define ORR_TASK_F_POLL     0x4 /* CPU: a folded run of cudaEventQuery polls */
#define ORR_TASK_F_BLOCKING 0x8 /* CPU: blocks until GPU work ends (D5), its wait found or not */

/* 40 bytes. */
struct orr_task {
	int64_t dur_ns; /* measured; a blocking call's cost when it does not wait */
	/* CPU: time after the thread's previous task (a first call: since its step started
	 * on its thread, or 0); GPU: after the stream's */
	int64_t gap_ns;
	uint32_t event;     /* the rank's event it comes from (the first, for folded tasks) */
	uint32_t proc;      /* its processor */
	uint32_t first_dep; /* explicit edges into it: deps[first_dep .. first_dep + ndeps), D2 first */
	uint32_t aux;       /* CPU: index into waits; GPU: index into groups; or ORR_NONE */
	uint16_t ndeps;
	uint8_t kind;  /* enum orr_task_kind */
	uint8_t flags; /* ORR_TASK_F_* */
};

#define ORR_DEP_F_INFERRED 0x1 /* found by a documented heuristic, not from exact ids */
#define ORR_DEP_F_HELD     0x2 /* D4 without an event: held back while another stream filled the GPU */
#define ORR_DEP_F_SPIN     0x4 /* D5 without a call: the thread spun on a flag the kernel writes */

struct orr_dep {
	int64_t lat_ns;
	uint32_t src;
	uint8_t kind;  /* enum orr_dep_kind */
	uint8_t flags; /* ORR_DEP_F_* */
};

/*
 * CPU: a thread that only polls.  Every call it makes (nested ones included) asks
 * whether GPU work is done (an event or stream query), or reads the error such a query
 * left or the time between two events (graph/threads.c lists the names, CUDA runtime,
 * driver and HIP).  It launches nothing, copies and sets nothing, records no event and
 * synchronizes on nothing, so no other thread or stream can wait for it: NCCL's and
 * c10d's watchdogs, which query the events of the collectives in flight.  No edge
 * leaves it (its calls and gaps gate nothing), and the trust signal does not count its
 * calls.
 */
#define ORR_PROC_F_POLLER 0x1

struct orr_proc {
	uint32_t rank;       /* index into the graph's ranks */
	uint32_t place;      /* index into that rank's places */
	uint32_t first_task; /* tasks[first_task .. first_task + ntasks) */
	uint32_t ntasks;
	/* Measured start of its first task; less a first call's gap, the only absolute
	 * time the replay uses (the thread's start) */
	int64_t first_start_ns;
	uint8_t kind;  /* enum orr_task_kind */
	uint8_t flags; /* ORR_PROC_F_* */
};

/* What a CPU task does with the GPU (D5), and what a cudaEventRecord records. */
enum orr_wait_kind {
	ORR_WAIT_STREAM, /* waits for work launched on proc `target` so far */
	ORR_WAIT_DEVICE, /* ... on every stream of the rank's device `target` */
	ORR_WAIT_EVENT,  /* ... for what the record task `target` recorded */
	ORR_WAIT_TASK,   /* ... for GPU task `target` (blocking copy, polling) */
	ORR_WAIT_RECORD, /* not blocking: records the work launched on proc `target` so far */
	ORR_WAIT_KIND_COUNT
};

struct orr_wait {
	int64_t ret_ns;  /* from the end of the awaited work to the call's return */
	int64_t span_ns; /* the call's measured duration (all it folds) */
	uint32_t target; /* see enum orr_wait_kind */
	uint8_t kind;    /* enum orr_wait_kind */
	uint8_t flags;   /* ORR_DEP_F_INFERRED */
};

/* One collective instance across ranks: members[first .. first + n) are GPU tasks. */
struct orr_group {
	uint32_t first;
	uint32_t n;
	uint8_t flags; /* ORR_DEP_F_INFERRED: matched by type and order, not by ids */
};

struct orr_graph_rank {
	const struct orr_rank *rank;
	uint32_t first_proc, nprocs;
	uint32_t first_task, ntasks;
};

/* What was found, for reports: edges by kind, and how many of them were inferred. */
struct orr_graph_stats {
	uint64_t tasks[2]; /* by enum orr_task_kind */
	uint64_t edges[ORR_DEP_COUNT];
	uint64_t inferred[ORR_DEP_COUNT];
	uint64_t waits[ORR_WAIT_KIND_COUNT];
	uint64_t polls;           /* cudaEventQuery runs folded into one waiting task */
	uint64_t folded_calls;    /* nested calls folded into their parent */
	uint64_t unlaunched;      /* GPU tasks whose launching call is not in the trace */
	uint64_t graph_nodes;     /* GPU tasks without a correlation given to a graph launch */
	uint64_t waits_dropped;   /* waits whose awaited work ended after the call returned */
	uint64_t edges_rejected;  /* guessed edges whose task started before their source ended */
	uint64_t held;            /* D4 edges of ORR_DEP_F_HELD */
	uint64_t timed_waits;     /* D4 edges of stream waits whose producer is found by timing */
	uint64_t delayed;         /* GPU tasks that waited for what the trace does not show */
	uint64_t delayed_ns;      /* ... and their delays, summed */
	uint64_t spin_waits;      /* D5 edges of ORR_DEP_F_SPIN: gaps spent waiting for a kernel */
	uint64_t groups;          /* collective instances coupled across ranks (D7) */
	uint64_t groups_rejected; /* candidate instances whose measured times cannot be one */
	uint64_t collectives_alone; /* communication tasks not coupled to any other rank */
};

struct orr_graph_options {
	/* Dependency kinds not to build, as a bit mask of 1u << ORR_DEP_*; for what-ifs
	 * and tests (D1, D3 cannot be removed). */
	uint32_t skip_deps;
	/* Build every edge, then leave out those flagged ORR_DEP_F_INFERRED, every inferred
	 * D5 wait and every collective group matched by inference; nothing else changes
	 * (gaps and costs stay as with them), so the result is the same graph minus those
	 * constraints.  The stats then count no inferred edge (waits[] still counts every
	 * wait found), and a task's measured interval stays as with them. */
	bool drop_inferred;
	/* GPU tasks whose name matches one of these fnmatch(3) patterns count as
	 * communication (ORR_TASK_F_COMM), besides those with a collective and those with
	 * a built-in NCCL, NVSHMEM or DeepEP name.  Borrowed during orr_graph_build(). */
	const char *const *comm_globs;
	size_t ncomm_globs;
	/* Do not keep the delays nothing in the graph explains (orr_graph_task_delay()
	 * still reports them): GPU tasks start as soon as their known dependencies allow;
	 * for ablations. */
	bool no_delays;
	/* Called after each rank is built with the events built so far and in all: for a
	 * progress display.  NULL: none. */
	void (*progress)(void *data, uint64_t done_events, uint64_t total_events);
	void *progress_data;
};

struct orr_graph;

/* Builds the graph of every rank of T.  opts may be NULL. */
int orr_graph_build(const struct orr_trace *t, const struct orr_graph_options *opts,
		    struct orr_graph **ret_graph, struct orr_diag *reterr_diag);
void orr_graph_free(struct orr_graph *g);

const struct orr_trace *orr_graph_trace(const struct orr_graph *g);
size_t orr_graph_rank_count(const struct orr_graph *g);
const struct orr_graph_rank *orr_graph_get_rank(const struct orr_graph *g, size_t i);
/* The GPU tasks (kernels, copies, sets) of graph rank i: none when its trace holds none
 * the importer reads (a CPU-only profile, another accelerator's own categories). */
size_t orr_graph_rank_gpu_tasks(const struct orr_graph *g, size_t i);
size_t orr_graph_task_count(const struct orr_graph *g);
const struct orr_task *orr_graph_tasks(const struct orr_graph *g);
size_t orr_graph_proc_count(const struct orr_graph *g);
const struct orr_proc *orr_graph_procs(const struct orr_graph *g);
const struct orr_dep *orr_graph_deps(const struct orr_graph *g);
const struct orr_wait *orr_graph_waits(const struct orr_graph *g);
const struct orr_group *orr_graph_groups(const struct orr_graph *g);
size_t orr_graph_group_count(const struct orr_graph *g);
/* Members of every group, as task indices. */
const uint32_t *orr_graph_members(const struct orr_graph *g);
void orr_graph_get_stats(const struct orr_graph *g, struct orr_graph_stats *ret_stats);

/*
 * How long GPU task `task` started after everything the graph knows it depends on
 * (beyond the launch pipeline's allowance): a wait for something the trace does not
 * show, kept as measured; 0 for most tasks.
 */
int64_t orr_graph_task_delay(const struct orr_graph *g, uint32_t task);

/* The measured interval of a task (a folded task spans all it folds). */
int64_t orr_graph_task_start(const struct orr_graph *g, uint32_t task);
int64_t orr_graph_task_end(const struct orr_graph *g, uint32_t task);
/* The event's rank and the name of a task, and of its processor ("thread 12" or "stream 7"). */
const struct orr_event *orr_graph_task_event(const struct orr_graph *g, uint32_t task);
const char *orr_graph_task_name(const struct orr_graph *g, uint32_t task);
void orr_graph_proc_label(const struct orr_graph *g, uint32_t proc, char *buf, size_t size);

const char *orr_dep_kind_name(enum orr_dep_kind kind); /* "D2 launch", ... */

/*
 * The trust signal: measured time the graph cannot explain (graph/explain.c,
 * docs/replay-method.md).  GPU idle: a GPU task started later than its edges and its
 * stream predecessor allow, by more than the device's launch latency; the excess
 * beyond that latency.  CPU blocked: a blocking call (synchronize, polling, blocking
 * copy) whose awaited work was not identified; its whole measured duration.  Each is
 * the union over the rank's streams (threads) within [start_ns, end_ns) of the measured
 * timeline of graph rank `rank`; total is the union of both, so it never exceeds the
 * window.
 */
struct orr_unexplained {
	int64_t gpu_idle_ns;
	int64_t cpu_blocked_ns;
	int64_t total_ns;
};

void orr_graph_unexplained(const struct orr_graph *g, size_t rank, int64_t start_ns, int64_t end_ns,
			   struct orr_unexplained *ret);

/*
 * A step whose unexplained time exceeds this share of it may be predicted wrong by as
 * much (the replay keeps that time as measured, or cannot say what it waited for), which
 * is DESIGN.md's limit on one rank-step's error (3 %): its prediction, and any what-if
 * built on it, is not to be trusted.
 */
#define ORR_TRUST_MAX_UNEXPLAINED 0.03

/*
 * What a task the replay could not run waits for: `on`, another task that never ran, and
 * why (enum orr_dep_kind): D1 or D3, the task before it on its thread or stream; D5, the
 * GPU work a blocking call waits for; D7, a member of its collective that has not
 * arrived; else the kind of its explicit edge from `on`.
 */
struct orr_stuck_wait {
	uint32_t task, on;
	uint8_t kind;
};

/*
 * Explains why the tasks with done[i] == false can never run, from what each waits for
 * (waits[0 .. nwaits)): names one cycle of waits among them, wait by wait, with the
 * tasks' names, processors, ranks and measured starts, how many tasks wait for each
 * other (igraph's strongly connected components, when libigraph.so.3 loads), and a wait
 * the trace itself contradicts (a task that starts before the one it waits for).
 * Writes it to reterr_diag; returns ORR_ECYCLE.
 */
int orr_graph_explain_stuck(const struct orr_graph *g, const bool *done,
			    const struct orr_stuck_wait *waits, size_t nwaits,
			    struct orr_diag *reterr_diag);

#ifdef __cplusplus
}
#endif

#endif
