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
	uint32_t *q; /* instruction indices, in launch order */
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

/* A stage's point-to-point instructions per stream, in order. */
struct p2p {
	uint32_t *at[SY_STREAMS];
	size_t n[SY_STREAMS], cap[SY_STREAMS];
};

/*
 * What stage r's placement needs to know before it starts, in one pass over the stage
 * (a step's instructions are tens of megabytes, each pass over them a read from
 * memory): its point-to-point instructions, and how many instructions each stream runs.
 */
static void index_rank(const struct sy_rank *r, struct p2p *ret, struct rank_state *st)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < r->n; i++) {
		const struct sy_insn *x = &r->v[i];

		if (x->op == SY_SYNC || x->op == SY_RECORD)
			continue;
		st->s[x->stream].n++;
		if (x->op == SY_COLL && x->peer >= 0)
			ORR_VEC_PUSH(ret->at[x->stream], ret->n[x->stream], ret->cap[x->stream],
				     (uint32_t)i);
	}
}

static void p2p_release(struct p2p *p)
{
	for (int s = 0; s < SY_STREAMS; s++)
		free(p->at[s]);
}

/* Pairs the k-th send of stage r to stage q with the k-th receive of q from r. */
static int pair_channel(struct sy_job *j, struct sy_rank *a, const struct p2p *idx,
			enum sy_stream send, enum sy_stream recv)
{
	const struct p2p *pa = &idx[a->stage];

	for (size_t s = 0, k = 0; s < pa->n[send]; s++) {
		uint32_t i = pa->at[send][s];
		struct sy_insn *x = &a->v[i];
		struct sy_rank *b = &j->ranks[x->peer];
		const struct p2p *pb = &idx[x->peer];

		while (k < pb->n[recv] && b->v[pb->at[recv][k]].peer != a->stage)
			k++;
		if (k == pb->n[recv])
			return -EDEADLK;
		x->partner = pb->at[recv][k];
		b->v[x->partner].partner = i;
		k++;
	}
	return 0;
}

/* Whether every transfer of r (its point-to-point instructions, idx) has its other side. */
static bool all_paired(const struct sy_rank *r, const struct p2p *idx)
{
	for (int s = 0; s < SY_STREAMS; s++)
		for (size_t k = 0; k < idx->n[s]; k++)
			if (r->v[idx->at[s][k]].partner == UINT32_MAX)
				return false;
	return true;
}

/* What a stream runs: neither a device synchronization nor an event record. */
static bool on_stream(const struct sy_insn *x)
{
	return x->op != SY_SYNC && x->op != SY_RECORD;
}

/*
 * Each wait's producer: the last instruction on its source stream before it, or before
 * the event record it names; a record's, the last on its stream before it.  And each
 * stream's queue, in launch order, its instructions not yet placed: one pass.
 */
static void queues_init(struct rank_state *st, struct sy_rank *r)
{
	uint32_t last[SY_STREAMS];

	st->r = r;
	for (int s = 0; s < SY_STREAMS; s++) {
		last[s] = UINT32_MAX;
		st->s[s].q = orr_xmalloc((st->s[s].n + 1) * sizeof(uint32_t));
		st->s[s].n = 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct sy_insn *x = &r->v[i];

		if (x->op == SY_RECORD)
			x->partner = last[x->stream];
		else if (x->op == SY_WAIT)
			x->partner = x->rec != UINT32_MAX ? r->v[x->rec].partner : last[x->src];
		else if (x->op != SY_SYNC)
			last[x->stream] = (uint32_t)i;
		x->start_ns = x->end_ns = -1;
		if (on_stream(x))
			st->s[x->stream].q[st->s[x->stream].n++] = (uint32_t)i;
	}
}

static bool advance_cpu(struct rank_state *st, int64_t cpu_op_ns)
{
	bool moved = false;

	while (st->cpu < st->r->n) {
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

static int run(struct sy_job *j, struct rank_state *st)
{
	int64_t cpu_op_ns = ns_of(j->k->cpu_op_ns);
	bool moved = true;

	while (moved) {
		moved = false;
		for (size_t r = 0; r < j->nranks; r++) {
			moved |= advance_cpu(&st[r], cpu_op_ns);
			moved |= advance_streams(j, &st[r]);
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
	struct p2p *idx = orr_xcalloc(j->nranks, sizeof(*idx));
	int err = 0;

	for (size_t r = 0; r < j->nranks; r++)
		index_rank(&j->ranks[r], &idx[r], &st[r]);
	for (size_t r = 0; r < j->nranks && !err; r++) {
		err = pair_channel(j, &j->ranks[r], idx, SY_SEND_NEXT, SY_RECV_PREV);
		if (!err)
			err = pair_channel(j, &j->ranks[r], idx, SY_SEND_PREV, SY_RECV_NEXT);
	}
	for (size_t r = 0; r < j->nranks && !err; r++)
		if (!all_paired(&j->ranks[r], &idx[r]))
			err = -EDEADLK;
	for (size_t r = 0; r < j->nranks; r++)
		p2p_release(&idx[r]);
	free(idx);
	for (size_t r = 0; r < j->nranks; r++)
		queues_init(&st[r], &j->ranks[r]);
	if (!err)
		err = run(j, st);
	for (size_t r = 0; r < j->nranks; r++) {
		if (st[r].gpu_end_ns > j->ret->placed_ns)
			j->ret->placed_ns = (double)st[r].gpu_end_ns;
		for (int s = 0; s < SY_STREAMS; s++)
			free(st[r].s[s].q);
	}
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
