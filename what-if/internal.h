/* SPDX-License-Identifier: MIT */
/* What the files of what-if/ share (orrery/whatif.h; docs/orrery-whatif.md). */
#ifndef ORRERY_WHATIF_INTERNAL_H
#define ORRERY_WHATIF_INTERNAL_H

#include "orrery/whatif.h"

/* A list made ready: the values tried, and whether they are the defaults. */
struct wi_list {
	int64_t *v;
	size_t n;
	bool all; /* the default: values that do not divide make no configuration */
};

/* A GPU count and a TP, PP and CP whose product divides it. */
struct wi_prefix {
	int64_t gpus, tp, pp, cp;
};

struct orr_whatif_plan {
	struct orr_whatif_space s; /* its lists point into the plan's below */
	struct wi_list tp, pp, cp, vpp, mb, first, last;
	enum orr_recompute rec[ORR_RECOMPUTE_COUNT];
	size_t nrec;
	struct wi_prefix *prefix;
	size_t nprefix, cap_prefix;
	/* configurations per prefix: vpp x first x last x micro-batch x recompute */
	uint64_t inner;
	uint64_t count;
};

#endif
