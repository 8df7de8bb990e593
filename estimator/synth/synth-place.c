/* SPDX-License-Identifier: MIT */
/*
 * Every instruction on a timeline, as CUDA and NCCL run them: the launch thread issues
 * its instructions in order, each taking the time the costs give a launch (a wait for
 * the GPU at cudaDeviceSynchronize); a stream runs its work in launch order, each task
 * once launched and once what it waits for (cudaStreamWaitEvent: the last task launched
 * on the other stream before the event was recorded) has ended; a point-to-point
 * transfer ends when both sides have arrived plus its transfer time, as NCCL's
 * send/recv rendezvous does.  The replay engine runs the same rules on the emitted
 * trace (DESIGN.md, "Replay semantics"); these times only need to be a schedule the
 * trace could have recorded: collectives' member intervals overlap, waits follow
 * their producers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

struct stream {
	const uint32_t *q; /* instruction indices, in launch order (its stage's) */
	size_t n, head;
	int64_t free_ns, waited_ns;
};

struct rank_state {
	struct sy_rank *r;
	struct stream s[SY_STREAMS];
	size_t cpu; /* the next instruction the thread issues */
	int64_t cpu_ns;
	size_t issued, placed; /* GPU work launched, placed */
	int64_t gpu_end_ns;
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t ns_of(double ns)
{
	return ns < 1 ? 1 : (int64_t)(ns + 0.5);
}

/* A transfer: a point-to-point instruction, which has another side to pair with. */
static bool transfer(const struct sy_insn *x)
{
	return x->op == SY_COLL && x->peer >= 0;
}

/* Pairs the k-th send of stage a to stage q with the k-th receive of q from a. */
static int pair_channel(struct sy_job *j, struct sy_rank *a, enum sy_stream send,
			enum sy_stream recv)
{
	const struct sy_queue *qa = &a->q[send];

	for (size_t s = 0, k = 0; s < qa->n; s++) {
		uint32_t i = qa->at[s];
		struct sy_insn *x = &a->v[i];
		struct sy_rank *b;
		const struct sy_queue *qb;

		if (!transfer(x))
			continue;
		b = &j->ranks[x->peer];
		qb = &b->q[recv];
		while (k < qb->n &&
		       (!transfer(&b->v[qb->at[k]]) || b->v[qb->at[k]].peer != a->stage))
			k++;
		if (k == qb->n)
			return -EDEADLK;
		x->partner = qb->at[k];
		b->v[x->partner].partner = i;
		k++;
	}
	return 0;
}

/*
 * Whether every transfer of r has its other side.  Transfers run on the point-to-point
 * streams only: a step's other instructions are not read again.
 */
static bool all_paired(const struct sy_rank *r)
{
	for (int s = SY_SEND_NEXT; s <= SY_RECV_NEXT; s++)
		for (size_t k = 0; k < r->q[s].n; k++) {
			const struct sy_insn *x = &r->v[r->q[s].at[k]];

			if (transfer(x) && x->partner == UINT32_MAX)
				return false;
		}
	return true;
}

/*
 * Each stream's queue as it was written (orr__sy_push()), and each wait's and record's
 * producer as it was written (orr__sy_wait_for(), orr__sy_record(),
 * orr__sy_wait_record()): the last kernel or collective on the stream waited for
 * before it, or before the event record it names.
 */
static void queues_init(struct rank_state *st, struct sy_rank *r)
{
	st->r = r;
	for (int s = 0; s < SY_STREAMS; s++) {
		st->s[s].q = r->q[s].at;
		st->s[s].n = r->q[s].n;
	}
}

/* The thread issues until a synchronization waits, or `ahead` tasks are unplaced. */
static bool advance_cpu(struct rank_state *st, int64_t cpu_op_ns, size_t ahead)
{
	bool moved = false;

	while (st->cpu < st->r->n && st->issued - st->placed < ahead) {
		struct sy_insn *x = &st->r->v[st->cpu];

		if (x->op == SY_SYNC) {
			if (st->placed < st->issued)
				break;
			st->cpu_ns = max64(st->cpu_ns + 1, st->gpu_end_ns);
		} else if (x->op == SY_RECORD) {
			st->cpu_ns += 1;
		} else {
			st->cpu_ns += x->op == SY_WAIT ? 2 : cpu_op_ns;
			st->issued++;
		}
		x->cpu_end_ns = st->cpu_ns;
		st->cpu++;
		moved = true;
	}
	return moved;
}

static void placed(struct rank_state *st, struct stream *s, struct sy_insn *x)
{
	s->free_ns = x->end_ns;
	s->head++;
	st->placed++;
	st->gpu_end_ns = max64(st->gpu_end_ns, x->end_ns);
}

/* Tries the head of stream s: true when it was placed. */
static bool try_head(struct sy_job *j, struct rank_state *st, struct stream *s)
{
	uint32_t i = s->q[s->head];
	struct sy_insn *x = &st->r->v[i], *y;
	int64_t ready;

	if (i >= st->cpu)
		return false;
	if (x->end_ns >= 0) { /* a transfer its partner's side finished */
		placed(st, s, x);
		return true;
	}
	ready = max64(max64(s->free_ns, s->waited_ns), x->cpu_end_ns);
	if (x->op == SY_WAIT) {
		if (x->partner != UINT32_MAX) {
			if (st->r->v[x->partner].end_ns < 0)
				return false;
			s->waited_ns = max64(s->waited_ns, st->r->v[x->partner].end_ns);
		}
		x->start_ns = ready;
		x->end_ns = ready + 1;
		s->head++;
		st->placed++;
		return true;
	}
	x->start_ns = ready;
	if (x->peer < 0) {
		x->end_ns = ready + ns_of(x->ns);
		placed(st, s, x);
		return true;
	}
	y = &j->ranks[x->peer].v[x->partner];
	if (y->start_ns < 0)
		return false; /* arrived; the other side has not */
	x->end_ns = y->end_ns = max64(ready, y->start_ns) + ns_of(x->ns);
	placed(st, s, x);
	return true;
}

static bool advance_streams(struct sy_job *j, struct rank_state *st)
{
	bool moved = false;

	for (int k = 0; k < SY_STREAMS; k++) {
		struct stream *s = &st->s[k];

		while (s->head < s->n && try_head(j, st, s))
			moved = true;
	}
	return moved;
}

/*
 * How many GPU tasks a launch thread issues ahead of those its streams have placed,
 * while anything else moves.  The placement reads each instruction as the thread issues
 * it and again as its stream runs it: a thread that issued its whole stage first (an
 * interleaved schedule's transfers never synchronize it), 12,000 instructions ahead on
 * average in the 175B sweep, left the second read to memory; 256 of them are 12 KB.
 * A task's times depend only on the tasks it follows and waits for, never on the order
 * they are placed in, so the timeline is the same; where nothing moves within the
 * window, the threads issue on as they would (a deadlock is one then too).
 */
#define AHEAD 256

/* A stage's thread and streams, until neither moves: true when either did. */
static bool advance_rank(struct sy_job *j, struct rank_state *st, int64_t cpu_op_ns, size_t ahead)
{
	bool moved = false, m = true;

	while (m) {
		m = advance_cpu(st, cpu_op_ns, ahead);
		m |= advance_streams(j, st);
		moved |= m;
	}
	return moved;
}

static int run(struct sy_job *j, struct rank_state *st)
{
	int64_t cpu_op_ns = ns_of(j->k->cpu_op_ns);
	size_t ahead = AHEAD;
	bool moved = true;

	while (moved) {
		moved = false;
		for (size_t r = 0; r < j->nranks; r++)
			moved |= advance_rank(j, &st[r], cpu_op_ns, ahead);
		if (!moved && ahead == AHEAD) {
			ahead = SIZE_MAX;
			moved = true;
		} else if (moved) {
			ahead = AHEAD;
		}
	}
	for (size_t r = 0; r < j->nranks; r++)
		if (st[r].cpu < st[r].r->n || st[r].placed < st[r].issued)
			return -EDEADLK;
	return 0;
}

int orr__sy_place(struct sy_job *j)
{
	struct rank_state *st = orr_xcalloc(j->nranks, sizeof(*st));
	int err = 0;

	for (size_t r = 0; r < j->nranks && !err; r++) {
		err = pair_channel(j, &j->ranks[r], SY_SEND_NEXT, SY_RECV_PREV);
		if (!err)
			err = pair_channel(j, &j->ranks[r], SY_SEND_PREV, SY_RECV_NEXT);
	}
	for (size_t r = 0; r < j->nranks && !err; r++)
		if (!all_paired(&j->ranks[r]))
			err = -EDEADLK;
	for (size_t r = 0; r < j->nranks; r++)
		queues_init(&st[r], &j->ranks[r]);
	if (!err)
		err = run(j, st);
	for (size_t r = 0; r < j->nranks; r++)
		if (st[r].gpu_end_ns > j->ret->placed_ns)
			j->ret->placed_ns = (double)st[r].gpu_end_ns;
	free(st);
	return err;
}

int64_t orr__sy_cpu_start_ns(const struct sy_rank *r, size_t i)
{
	return i > 0 ? r->v[i - 1].cpu_end_ns : 0;
}

int64_t orr__sy_p2p_seq(const struct sy_rank *r, size_t i)
{
	const struct sy_insn *x = &r->v[i];

	return x->stream == SY_SEND_NEXT || x->stream == SY_SEND_PREV ? (int64_t)x->partner
								      : (int64_t)i;
}
