/* SPDX-License-Identifier: MIT */
/* replay/internal.h — the replay object, shared by the simulation and its reports. */
#ifndef ORRERY_REPLAY_INTERNAL_H
#define ORRERY_REPLAY_INTERNAL_H

#include <math.h>

#include "orrery/replay.h"

#define ORR__CAUSE_ENDS 0x80000000u /* in cause[]: the cause set the task's end */

/*
 * Everything the simulation keeps per task, in one place: the replay walks the tasks
 * of thousands of processors at once, and one array touches one cache line per task
 * where six arrays touched six.  24 bytes: at 1,024 ranks the array is new memory
 * whose first touch cost as much as the rest of the replay (32 bytes before).  Tasks
 * park only on a task not yet done and are woken by the time it is, so the first
 * parked task and the end share their place; the next parked task is its processor's
 * (replay/sim.c: only a processor's next task parks).
 */
struct orr__tstate {
	int64_t start; /* predicted */
	union {
		int64_t end;        /* predicted, once done */
		uint32_t wait_head; /* until done: the first task parked on this one */
	};
	uint32_t cause; /* task index | ORR__CAUSE_ENDS, or ORR_NONE */
	uint8_t state;
	/*
	 * What decided the start, kept when cause names what decided the end: the
	 * processor's order (its previous task, or its anchor before its first task), or
	 * the index of the dependency among the task's own (replay/critical.c).
	 */
	uint16_t start_dep;
};
_Static_assert(sizeof(struct orr__tstate) == 24, "24 bytes a task (above)");

#define ORR__START_ORDER 0xffffu /* start_dep: the processor's order decided the start */
#define ORR__START_DEPS  0xfffeu /* start_dep: a dependency past the 65,534th */

/* start_dep of the dependency at index d among a task's own. */
static inline uint16_t orr__start_dep(uint32_t d)
{
	return (uint16_t)(d < ORR__START_DEPS ? d : ORR__START_DEPS);
}

struct orr_replay {
	const struct orr_graph *g;
	struct orr__tstate *ts; /* per task */
	uint32_t *place_proc;   /* per rank, per place: its proc or ORR_NONE */
	size_t *place_base;     /* per rank: its first entry in place_proc */
	/* Per collective instance (orr_graph_groups()): its last member's start, when the
	 * last rank arrived, on the predicted and on the measured timeline. */
	int64_t *arrival[2];
};

/* sim.c */
int orr__simulate(struct orr_replay *r, const struct orr_replay_options *opts,
		  struct orr_diag *reterr_diag);

/*
 * Per GPU task of g, the product of o's scale factors whose glob matches its name
 * (1 for CPU tasks); orr_xmalloc'ed, one float per task (replay/scale.c).
 */
float *orr__task_scales(const struct orr_graph *g, const struct orr_replay_options *o);
/*
 * Every task's factor: the glob factors times o->task_factors' (GPU tasks), and
 * o->cpu_factors' (CPU tasks); NULL when o gives none.
 */
float *orr__replay_factors(const struct orr_graph *g, const struct orr_replay_options *o);
/*
 * A duration times its factor, rounded; ORR_TIME_MAX past it (orr__check_range()
 * refuses a replay where that bound is reached).
 */
static inline int64_t orr__scaled(int64_t d, double f)
{
	double x = (double)d * f;

	return x < (double)ORR_TIME_MAX ? (int64_t)llround(x) : ORR_TIME_MAX;
}

/*
 * 0 when o's factors are in range and g's durations (times scale, per task, NULL for
 * none), gaps and latencies add up to at most ORR_TIME_MAX, so that no sum of the
 * simulation overflows; else -ERANGE saying what is out of range (replay/scale.c).
 */
int orr__check_range(const struct orr_graph *g, const float *scale,
		     const struct orr_replay_options *o, struct orr_diag *reterr_diag);

#endif
