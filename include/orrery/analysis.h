/* SPDX-License-Identifier: MIT */
/*
 * orrery/analysis.h — what the front ends report, computed once: which rank-steps an
 * analysis covers (orr_select), the models fitted on a rank (orrery fit), where a
 * measured trace's time goes (orrery summary), the replay against the measured trace per
 * rank-step and its what-if scenarios (orrery replay), two sides compared (orrery diff),
 * the Perfetto timelines, what each rank holds (orrery info), and the layout of these
 * structs for bindings.
 *
 * Every analysis is a function over the trace, graph and replay types that fills a plain
 * struct; the command line (cli/) and the Python package (python/) only format it.  The
 * same input gives the same struct, byte for byte in every report made of it.
 *
 * Ownership: a result borrows the graph (and its trace) or replay it was computed on,
 * which must outlive it; what it allocates is freed by its release function, which
 * accepts a zeroed struct.  Analyses do not fail on data: what a trace lacks is a field
 * left unknown (NaN, -1, ORR_NONE, NULL) as each field says.  Those that replay or write
 * (orr_scenario_report_run(), orr_timeline_write()) return 0 or a negative code, the
 * replay's with its struct orr_diag.  Allocation failure is fatal (orr_xmalloc()).
 * Nothing here prints.
 * Thread safety: analyses only read the graph and replay they are given; several may run
 * at once on one of them, each into a result of its own.
 *
 * The analyses are declared by concept in the headers this one includes:
 * analysis-select.h, -fit.h, -summary.h, -diff.h, -replay.h, -scenario.h, -path.h,
 * -info.h and -estimate.h (orrery estimate's and whatif's inputs); include this one.
 */
#ifndef ORRERY_ANALYSIS_H
#define ORRERY_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis-select.h"
#include "orrery/analysis-fit.h"
#include "orrery/analysis-summary.h"
#include "orrery/analysis-diff.h"
#include "orrery/analysis-replay.h"
#include "orrery/analysis-scenario.h"
#include "orrery/analysis-path.h"
#include "orrery/analysis-info.h"
#include "orrery/analysis-estimate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- for bindings (analysis/layout.c) ---- */

/*
 * sizeof(struct TYPE) with field NULL, else offsetof(struct TYPE, FIELD), for the
 * structs of this header (and the replay's and graph's they hold) that python/orrery
 * reads with ctypes; SIZE_MAX for one it does not list.  TYPE without "struct ":
 * "orr_summary".
 */
size_t orr_analysis_layout(const char *type, const char *field);

#ifdef __cplusplus
}
#endif

#endif
