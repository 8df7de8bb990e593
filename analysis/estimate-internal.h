/* SPDX-License-Identifier: MIT */
/* What the estimate's files share (analysis/estimate-*.c); not part of the API. */
#ifndef ORRERY_ANALYSIS_ESTIMATE_INTERNAL_H
#define ORRERY_ANALYSIS_ESTIMATE_INTERNAL_H

#include "orrery/analysis-estimate.h"

/* g's graph built (opts NULL) or replayed (opts), with o's progress display (o may be NULL). */
int orr__estimate_build(const struct orr_estimate_options *o, const struct orr_trace *t,
			struct orr_graph **ret, struct orr_diag *d);
int orr__estimate_replay(const struct orr_estimate_options *o, const struct orr_graph *g,
			 const struct orr_replay_options *opts, struct orr_replay **ret,
			 struct orr_diag *d);
/* Synthesizes c's step, replays it (and writes its timeline to timeline, NULL: none). */
int orr__estimate_synth_run(const struct orr_estimate_options *o, const struct orr_train_config *c,
			    bool forward_only, const struct orr_synth_costs *k,
			    const char *timeline, struct orr_estimate_synth *ret,
			    struct orr_diag *d);
/*
 * Sets k->cpu_op_ns (and e's account of it, from) so that the synthesized step of rec,
 * the configuration a trace recorded, spends step_ns - profiler_ns - stall_ns
 * launching, as the trace's launch threads did per step without what the profiler
 * added and where they were not running (orr_launch_time_measure(); profiler_ns NAN:
 * not known, nothing removed; stall_ns NAN: 0); nothing when step_ns is unknown.  0 or
 * the error.
 */
int orr__estimate_calibrate(const struct orr_estimate_options *o,
			    const struct orr_train_config *rec, bool forward_only, double step_ns,
			    double profiler_ns, double stall_ns, enum orr_launch_from from,
			    struct orr_synth_costs *k, struct orr_estimate *e, struct orr_diag *d);

/* The costs file at path read into *ret: 0 or the error, said as orrery says it. */
int orr__estimate_read_costs(const char *path, struct orr_costs *ret, struct orr_diag *d);

#endif
