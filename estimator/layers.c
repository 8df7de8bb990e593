/* SPDX-License-Identifier: MIT */
/*
 * A rank's layers without shapes (docs/estimator.md, "Structure"): the block of kernels
 * its compute stream repeats, and the forward ops or annotations named like a
 * transformer layer.  Both count in networks that are no transformer too, so they are
 * reported apart from the transformer's dimensions (estimator/structure.c).
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

#define set orr__value_set

/* What the two counts read: the rank, its trace, its call tree. */
struct scan {
	const struct orr_trace *t;
	const struct orr_rank *r;
	const uint32_t *parent;
};

static const char *event_name(const struct scan *s, const struct orr_event *e)
{
	return orr_trace_str(s->t, e->name);
}

#define PERIOD_MAX_KERNELS 8192

/* The stream with the most non-collective kernels: where the layers' compute runs. */
static uint32_t compute_stream(const struct orr_rank *r)
{
	uint32_t *count = orr_xcalloc(r->nplaces + 1, sizeof(*count)), best = ORR_NONE;

	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == ORR_EVENT_KERNEL && r->events[i].coll >= r->ncollectives &&
		    r->events[i].place < r->nplaces)
			count[r->events[i].place]++;
	for (uint32_t p = 0; p < r->nplaces; p++)
		if (count[p] && (best == ORR_NONE || count[p] > count[best]))
			best = p;
	free(count);
	return best;
}

/* Whether seq[0..n) holds three different kernels (stops at the third). */
static bool three_kinds(const uint32_t *seq, size_t n)
{
	uint32_t a = ORR_NONE, b = ORR_NONE;

	for (size_t i = 0; i < n; i++) {
		if (seq[i] == a || seq[i] == b)
			continue;
		if (a == ORR_NONE)
			a = seq[i];
		else if (b == ORR_NONE)
			b = seq[i];
		else
			return true;
	}
	return false;
}

/*
 * The block of kernels the compute stream repeats most: for each period p, the longest
 * run of kernels equal to the kernel p before them covers (run + p) kernels in
 * (run + p) / p repeats.  A block must hold three different kernels: a layer runs at
 * least a GEMM, a normalization and an elementwise kernel, while a run of one or two
 * kernels is a loop over tensors (an optimizer's, a copy's).  The smallest period that
 * covers as much as the best one (within a kernel per repeat) wins, since a multiple of
 * the period covers as much.  Kernels are the first step's (or the whole capture's),
 * at most PERIOD_MAX_KERNELS, names as written (their template arguments included).
 */
static void period(struct orr_structure *st, const struct scan *s)
{
	uint32_t place = compute_stream(s->r), *seq;
	struct orr_step *steps = NULL;
	size_t nsteps = 0, n = 0, best_p = 0, best_cover = 0, *cover;
	int64_t from = INT64_MIN, to = INT64_MAX;

	if (place == ORR_NONE) {
		set(&st->repeats, 0, ORR_VALUE_UNKNOWN, "no GPU kernels outside collectives");
		return;
	}
	if (orr_rank_steps(s->t, s->r, &steps, &nsteps) == 0 && nsteps) {
		from = steps[0].start_ns;
		to = steps[0].end_ns;
	}
	free(steps);
	seq = orr_xmalloc(PERIOD_MAX_KERNELS * sizeof(*seq));
	for (size_t i = 0; i < s->r->nevents && n < PERIOD_MAX_KERNELS; i++) {
		const struct orr_event *e = &s->r->events[i];

		if (e->kind == ORR_EVENT_KERNEL && e->place == place && e->start_ns >= from &&
		    e->start_ns < to)
			seq[n++] = e->name;
	}
	cover = orr_xcalloc(n / 2 + 2, sizeof(*cover));
	for (size_t p = 1; p <= n / 2; p++) {
		size_t run = 0, longest = 0, start = 0;

		for (size_t i = 0; i + p < n; i++) {
			run = seq[i] == seq[i + p] ? run + 1 : 0;
			if (run > longest) {
				longest = run;
				start = i + 1 - run;
			}
		}
		/* Two repeats at least, of a block of three kinds of kernel. */
		cover[p] = longest >= p && three_kinds(seq + start, p) ? longest + p : 0;
		if (cover[p] > best_cover)
			best_cover = cover[p];
	}
	for (size_t p = 1; p <= n / 2 && !best_p; p++)
		if (cover[p] && cover[p] + cover[p] / p >= best_cover)
			best_p = p;
	if (!best_p)
		set(&st->repeats, 0, ORR_VALUE_UNKNOWN,
		    "the compute stream's %zu kernels repeat no block of three kinds of kernel", n);
	else
		set(&st->repeats, (int64_t)(cover[best_p] / best_p), ORR_VALUE_INFERRED,
		    "the compute stream repeats a block of %zu kernels %zu times (%zu of its %zu "
		    "kernels%s)",
		    best_p, cover[best_p] / best_p, cover[best_p] / best_p * best_p, n,
		    nsteps ? " in the first step" : "");
	st->repeat_kernels = best_p;
	free(cover);
	free(seq);
}

/*
 * Layers from module annotations (record_function, NVTX or module names): the outermost
 * forward events named like a transformer layer, per step.
 */
static void annotated(struct orr_structure *st, const struct scan *s)
{
	static const char *const layer[] = { "*TransformerLayer*", "*DecoderLayer*",
					     "*EncoderLayer*", "*TransformerBlock*",
					     "nn.Module: *Layer_*" };
	struct orr_step *steps = NULL;
	size_t nsteps = 0, count = 0;
	const char *example = NULL;

	for (uint32_t i = 0; i < s->r->nevents; i++) {
		const struct orr_event *e = &s->r->events[i];
		bool outer = true;

		if ((e->kind != ORR_EVENT_OP && e->kind != ORR_EVENT_ANNOTATION) ||
		    !orr__name_is(event_name(s, e), layer, sizeof(layer) / sizeof(layer[0])) ||
		    orr__in_backward(s->t, s->r, s->parent, i))
			continue;
		for (uint32_t p = s->parent[i]; p != ORR_NONE && outer; p = s->parent[p])
			outer = !orr__name_is(event_name(s, &s->r->events[p]), layer,
					      sizeof(layer) / sizeof(layer[0]));
		if (outer) {
			count++;
			example = event_name(s, e);
		}
	}
	if (!count) {
		set(&st->annotated_layers, 0, ORR_VALUE_UNKNOWN,
		    "no forward op or annotation named like a transformer layer");
		return;
	}
	if (orr_rank_steps(s->t, s->r, &steps, &nsteps) || !nsteps)
		nsteps = 1;
	free(steps);
	if (count % nsteps)
		set(&st->annotated_layers, 0, ORR_VALUE_UNKNOWN,
		    "%zu layer annotations (like '%.60s') do not divide among %zu steps", count,
		    example, nsteps);
	else
		set(&st->annotated_layers, (int64_t)(count / nsteps), ORR_VALUE_READ,
		    "%zu outermost forward annotations like '%.60s' per step", count / nsteps,
		    example);
}

void orr__layers_unshaped(const struct orr_trace *t, const struct orr_rank *r,
			  const uint32_t *parent, struct orr_structure *st)
{
	const struct scan s = { t, r, parent };

	period(st, &s);
	annotated(st, &s);
}
