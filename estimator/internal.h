/* SPDX-License-Identifier: MIT */
/* What the estimator's files share and nobody else needs. */
#ifndef ORRERY_ESTIMATOR_INTERNAL_H
#define ORRERY_ESTIMATOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

/* Median and maximum of v[0..n), which it sorts; NAN for both when n == 0. */
void orr__median_max(double *v, size_t n, double *ret_median, double *ret_max);

/*
 * For each event of r, its innermost enclosing event on the same thread, or ORR_NONE
 * (GPU events, markers and outermost events); orr_xmalloc'ed, r->nevents entries.
 */
uint32_t *orr__call_parents(const struct orr_rank *r);

#endif /* ORRERY_ESTIMATOR_INTERNAL_H */
