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

/* The event of the call that launched GPU task t (its D2 edge), or ORR_NONE. */
uint32_t orr__launch_event(const struct orr_graph *g, uint32_t t);
/*
 * S of a collective GPU task t of rank r whose trace gives no size: the tensor of the
 * innermost op around its launch that records shapes, when that op has exactly one
 * (estimator/samples.c); <= 0 when none.  parent: orr__call_parents(r).
 */
double orr__caller_bytes(const struct orr_graph *g, const uint32_t *parent,
			 const struct orr_rank *r, uint32_t t);

/*
 * The dtype of a tensor type as PyTorch writes it ("float", "c10::BFloat16", "Char"):
 * the floating types and int8 (estimator/gemm.c); false for the others.
 */
bool orr__dtype_of(const char *name, enum orr_dtype *ret);

/* Whether op event e of r records any tensor shape at all (estimator/gemm.c). */
bool orr__op_has_shapes(const struct orr_rank *r, const struct orr_event *e);

/* Communicator roles (estimator/roles.c): one collective of the rank, then decide. */
void orr__roles_note(struct orr_structure *st, const struct orr_trace *t, const struct orr_rank *r,
		     const struct orr_collective *co, bool backward, double bytes);
void orr__roles_decide(struct orr_structure *st);

#endif /* ORRERY_ESTIMATOR_INTERNAL_H */
