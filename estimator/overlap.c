/* SPDX-License-Identifier: MIT */
/*
 * How much slower a kernel runs while a collective runs beside it on the same GPU: NCCL
 * takes SMs (its channels are thread blocks) and memory bandwidth from the kernels it
 * overlaps.  For each kernel name seen both with and without a collective kernel
 * overlapping it on another stream of its device, the ratio of the two medians; the
 * slowdown is the median of those ratios, over names with at least two instances each
 * way (notes/estimator.md, C.3: "overlap slowdown κ").
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

struct span {
	int64_t start, end;
	int32_t device;
	uint32_t place;
};

struct inst {
	uint32_t name;
	uint8_t overlapped;
	double ns;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int cmp_inst(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->overlapped != y->overlapped)
		return x->overlapped < y->overlapped ? -1 : 1;
	return (x->ns > y->ns) - (x->ns < y->ns);
}

/*
 * Whether [start, end) on place overlaps a collective of device dev in c[0..n) (sorted
 * by device, start; ends[i] the largest end of c[0..i] within its device).
 */
static bool overlaps(const struct span *c, const int64_t *ends, size_t n, int32_t dev,
		     uint32_t place, int64_t start, int64_t end)
{
	size_t lo = 0, hi = n;

	/* The last collective of dev starting before end. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].device < dev || (c[mid].device == dev && c[mid].start < end))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && c[i].device == dev && ends[i] > start;)
		if (c[i].end > start && c[i].place != place)
			return true;
	return false;
}

static double median_of(const struct inst *v, size_t n)
{
	return n % 2 ? v[n / 2].ns : 0.5 * (v[n / 2 - 1].ns + v[n / 2].ns);
}

void orr_overlap_slowdown(const struct orr_rank *r, struct orr_overlap *ret)
{
	struct span *c = orr_xcalloc(r->nevents + 1, sizeof(*c));
	struct inst *v = orr_xcalloc(r->nevents + 1, sizeof(*v));
	int64_t *ends = orr_xcalloc(r->nevents + 1, sizeof(*ends));
	double *ratios;
	size_t nc = 0, nv = 0, nr = 0;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind == ORR_EVENT_KERNEL && e->coll < r->ncollectives &&
		    e->place < r->nplaces)
			c[nc++] = (struct span){ e->start_ns, orr_time_add(e->start_ns, e->dur_ns),
						 r->places[e->place].device, e->place };
	}
	if (nc)
		qsort(c, nc, sizeof(*c), cmp_span);
	for (size_t i = 0; i < nc; i++)
		ends[i] = i && c[i - 1].device == c[i].device && ends[i - 1] > c[i].end
				  ? ends[i - 1]
				  : c[i].end;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind != ORR_EVENT_KERNEL || e->coll < r->ncollectives ||
		    e->place >= r->nplaces || e->dur_ns <= 0)
			continue;
		v[nv++] = (struct inst){
			e->name,
			overlaps(c, ends, nc, r->places[e->place].device, e->place, e->start_ns,
				 orr_time_add(e->start_ns, e->dur_ns)),
			(double)e->dur_ns,
		};
		ret->overlapped += v[nv - 1].overlapped;
	}
	ret->kernels = nv;
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_inst);
	ratios = orr_xcalloc(nv + 1, sizeof(*ratios));
	for (size_t i = 0, j; i < nv; i = j) {
		size_t without = 0;

		for (j = i; j < nv && v[j].name == v[i].name; j++)
			without += !v[j].overlapped;
		/* Both ways, twice at least: one instance is noise. */
		if (without >= 2 && j - i - without >= 2) {
			ratios[nr++] = median_of(v + i + without, j - i - without) /
				       median_of(v + i, without);
			ret->kernels_compared += j - i;
		}
	}
	ret->names = nr;
	if (nr) {
		orr__median_max(ratios, nr, &ret->slowdown, &ret->slowdown_max);
		ret->slowdown_min = ratios[0]; /* sorted by orr__median_max */
	}
	free(ratios);
	free(ends);
	free(v);
	free(c);
}
