/* SPDX-License-Identifier: MIT */
/*
 * Megatron-Core's pipeline-parallel schedules (docs/estimator.md, "Pipeline schedules";
 * ../shared/notes/estimator.md, B.5): the order in which each stage runs its forward
 * and backward passes, and the step time of that order on uniform stages.
 *
 * The order is megatron/core/pipeline_parallel/schedules.py's.  A stage runs w warm-up
 * forward passes (get_pp_rank_microbatches), then pairs of a forward and a backward
 * pass, then the backward passes left.  Its k-th forward pass is entry k of
 * get_schedule_table(): micro-batches in groups of G = p, each group going round the
 * chunks.  Its k-th backward pass is the same entry with the chunk mirrored
 * (get_model_chunk_id(k, forward=False)); a chunk's backward passes pop its saved
 * inputs first in, first out, so they take its micro-batches in forward order.  Without
 * interleaving the table is the micro-batches in order, whatever G.
 *
 * The simulation is a dataflow over that order: a pass starts when its stage has ended
 * the one before it and its input has arrived, so the order in which stages are
 * visited cannot change a time, only whether every pass runs (a schedule that cannot
 * finish is a bug in the order; -EDEADLK says so rather than looping).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "banned.h"

/*
 * Passes of each kind over every stage (p·m·v) beyond which both functions refuse
 * with -E2BIG: the simulation keeps an end time per pass, 2 doubles per count
 * (512 MiB at this limit), and a caller's mistake should not exhaust memory.
 */
#define MAX_PASSES (UINT64_C(1) << 25)

static int check_layout(int p, int m, int v)
{
	if (p < 1 || m < 1 || v < 1)
		return -EINVAL;
	/* Interleaving with G = p needs whole groups (Megatron raises otherwise). */
	if (v > 1 && (p == 1 || m % p != 0))
		return -EINVAL;
	if ((uint64_t)p * (uint64_t)m * (uint64_t)v > MAX_PASSES)
		return -E2BIG;
	return 0;
}

/* Forward passes stage r runs before its first backward (get_pp_rank_microbatches). */
static size_t warmup(int p, int r, int m, int v)
{
	size_t total = (size_t)m * (size_t)v;
	size_t w = (size_t)(p - r - 1);

	if (v > 1)
		w = 2 * w + (size_t)(v - 1) * (size_t)p;
	return w < total ? w : total;
}

/* Forward or backward pass k (0..m·v) of a stage: entry k of the schedule table. */
static struct orr_pp_slot table_slot(int p, int m, int v, size_t k, enum orr_pp_pass pass)
{
	size_t g = v == 1 ? (size_t)m : (size_t)p;
	size_t round = g * (size_t)v;
	uint32_t chunk = (uint32_t)(k % round / g);

	return (struct orr_pp_slot){
		.pass = pass,
		.micro_batch = (uint32_t)(k / round * g + k % g),
		.chunk = pass == ORR_PP_PASS_FORWARD ? chunk : (uint32_t)v - 1 - chunk,
	};
}

/* Slot i (0..2·m·v) of stage r: warm-up forwards, (F, B) pairs, cool-down backwards. */
static struct orr_pp_slot slot_at(int p, int r, int m, int v, size_t i)
{
	size_t total = (size_t)m * (size_t)v;
	size_t w = warmup(p, r, m, v);

	if (i < w)
		return table_slot(p, m, v, i, ORR_PP_PASS_FORWARD);
	if (i < 2 * total - w) {
		size_t pair = (i - w) / 2;

		if ((i - w) % 2 == 0)
			return table_slot(p, m, v, pair + w, ORR_PP_PASS_FORWARD);
		return table_slot(p, m, v, pair, ORR_PP_PASS_BACKWARD);
	}
	return table_slot(p, m, v, i - total, ORR_PP_PASS_BACKWARD);
}

int orr_pp_schedule(int p, int stage, int m, int v, struct orr_pp_slot **ret, size_t *ret_n)
{
	struct orr_pp_slot *s;
	size_t n;
	int err = check_layout(p, m, v);

	if (err < 0)
		return err;
	if (stage < 0 || stage >= p)
		return -EINVAL;
	n = 2 * (size_t)m * (size_t)v;
	s = orr_xmalloc(n * sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = slot_at(p, stage, m, v, i);
	*ret = s;
	*ret_n = n;
	return 0;
}

struct sim {
	int p, m, v;
	double f_ns, b_ns, p2p_ns;
	size_t *next;    /* per stage: its next slot */
	double *free_ns; /* per stage: when its last pass ended */
	double *end_ns;  /* per pass, stage, chunk and micro-batch: when it ended; < 0 not yet */
	int *queue;      /* stages to visit, a ring of p */
	bool *queued;
	size_t head, len;
};

static double *end_of(const struct sim *s, enum orr_pp_pass pass, int r, uint32_t chunk,
		      uint32_t mb)
{
	size_t i = (((size_t)pass * (size_t)s->p + (size_t)r) * (size_t)s->v + chunk);

	return &s->end_ns[i * (size_t)s->m + mb];
}

/*
 * When the input of pass x on stage r is there: the same pass of the stage before it
 * in its direction (the last stage's previous chunk for the first stage's forward, the
 * first stage's next chunk for the last stage's backward) plus a transfer; the last
 * chunk's forward on the last stage for its backward.  False while that has not run.
 */
static bool input_at(const struct sim *s, int r, const struct orr_pp_slot *x, double *ret_ns)
{
	enum orr_pp_pass pass = x->pass;
	int from = x->pass == ORR_PP_PASS_FORWARD ? r - 1 : r + 1;
	uint32_t chunk = x->chunk;
	double hop = s->p2p_ns, end;

	if (from < 0 && chunk == 0) {
		*ret_ns = 0;
		return true;
	}
	if (from < 0) {
		from = s->p - 1;
		chunk--;
	} else if (from == s->p && chunk + 1 < (uint32_t)s->v) {
		from = 0;
		chunk++;
	} else if (from == s->p) {
		from = r;
		pass = ORR_PP_PASS_FORWARD;
		hop = 0;
	}
	end = *end_of(s, pass, from, chunk, x->micro_batch);
	if (end < 0)
		return false;
	*ret_ns = end + hop;
	return true;
}

/* Runs stage r's passes in order while their inputs are there; whether it ran any. */
static bool advance(struct sim *s, int r)
{
	size_t n = 2 * (size_t)s->m * (size_t)s->v;
	bool ran = false;

	while (s->next[r] < n) {
		struct orr_pp_slot x = slot_at(s->p, r, s->m, s->v, s->next[r]);
		double in;

		if (!input_at(s, r, &x, &in))
			break;
		s->free_ns[r] = fmax(in, s->free_ns[r]) +
				(x.pass == ORR_PP_PASS_FORWARD ? s->f_ns : s->b_ns);
		*end_of(s, x.pass, r, x.chunk, x.micro_batch) = s->free_ns[r];
		s->next[r]++;
		ran = true;
	}
	return ran;
}

static void push(struct sim *s, int r)
{
	if (s->queued[r])
		return;
	s->queued[r] = true;
	s->queue[(s->head + s->len++) % (size_t)s->p] = r;
}

/*
 * Visits stages until none can run a pass.  A pass's output feeds stage r + 1 or
 * r − 1, or wraps from the last stage to the first (forward, next chunk) and back
 * (backward, previous chunk): so after stage r runs, only its neighbours modulo p
 * may have been unblocked.
 */
static int run(struct sim *s, double *ret_ns)
{
	double makespan = 0;

	for (int r = 0; r < s->p; r++)
		push(s, r);
	while (s->len > 0) {
		int r = s->queue[s->head];

		s->head = (s->head + 1) % (size_t)s->p;
		s->len--;
		s->queued[r] = false;
		if (advance(s, r)) {
			push(s, (r + 1) % s->p);
			push(s, (r + s->p - 1) % s->p);
		}
	}
	for (int r = 0; r < s->p; r++) {
		if (s->next[r] < 2 * (size_t)s->m * (size_t)s->v)
			return -EDEADLK;
		makespan = fmax(makespan, s->free_ns[r]);
	}
	*ret_ns = makespan;
	return 0;
}

static bool is_time(double ns)
{
	return isfinite(ns) && ns >= 0;
}

int orr_pp_simulate(int p, int m, int v, double f_ns, double b_ns, double p2p_ns, double *ret_ns)
{
	struct sim s = { .p = p, .m = m, .v = v, .f_ns = f_ns, .b_ns = b_ns, .p2p_ns = p2p_ns };
	size_t passes;
	int err = check_layout(p, m, v);

	if (err < 0)
		return err;
	if (!is_time(f_ns) || !is_time(b_ns) || !is_time(p2p_ns))
		return -EINVAL;
	passes = 2 * (size_t)p * (size_t)m * (size_t)v;
	s.next = orr_xcalloc((size_t)p, sizeof(*s.next));
	s.free_ns = orr_xcalloc((size_t)p, sizeof(*s.free_ns));
	s.end_ns = orr_xmalloc(passes * sizeof(*s.end_ns));
	for (size_t i = 0; i < passes; i++)
		s.end_ns[i] = -1;
	s.queue = orr_xcalloc((size_t)p, sizeof(*s.queue));
	s.queued = orr_xcalloc((size_t)p, sizeof(*s.queued));
	err = run(&s, ret_ns);
	free(s.next);
	free(s.free_ns);
	free(s.end_ns);
	free(s.queue);
	free(s.queued);
	return err;
}
