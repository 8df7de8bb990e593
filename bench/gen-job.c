/* SPDX-License-Identifier: MIT */
/*
 * gen-job: a synthetic multi-rank training job built in memory (see gen-job.h).
 *
 * Every rank runs one program, a flat array of instructions built once from the options
 * (gen-job-program.c).  A collective couples the members of its group: each runs its
 * instructions up to the collective and launches it, which fixes its arrival on the NCCL
 * stream; then the instance ends at the latest arrival plus a transfer time, and each
 * member finishes its collective.  That is the only coupling between ranks, so ranks move
 * in lockstep only at DP collectives (which span every TP group), and between two of them
 * one TP group (8 ranks) at a time runs through its TP collectives: the working set stays
 * that of a few ranks.  The result does not depend on that order: every rank and every
 * collective instance draws from its own random stream.
 *
 * Events go straight into the rank's flat tables, reserved once at their final size;
 * orr__rank_finish() puts them in the model's order.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-job-internal.h"
#include "../common/banned.h"

#define T0_NS         5183870312457LL /* the first step's start, give or take 20 us */
#define BATCH_BYTES   262144          /* 8 x 4096 int64 tokens */
#define GPUS_PER_NODE 8

static const int64_t stream_ids[N_STREAMS] = { 7, 13, 21, 25 };

enum api { API_LAUNCH, API_NCCL, API_MEMCPY, API_RECORD, API_WAIT, API_SYNC, N_APIS };

static const struct {
	const char *name;
	uint8_t kind, call;
	int64_t mean_ns;
} apis[N_APIS] = {
	[API_LAUNCH] = { "cudaLaunchKernel", ORR_EVENT_RUNTIME, ORR_CALL_LAUNCH, 4500 },
	[API_NCCL] = { "cuLaunchKernelEx", ORR_EVENT_DRIVER, ORR_CALL_LAUNCH, 9000 },
	[API_MEMCPY] = { "cudaMemcpyAsync", ORR_EVENT_RUNTIME, ORR_CALL_MEMCPY, 6000 },
	[API_RECORD] = { "cudaEventRecord", ORR_EVENT_RUNTIME, ORR_CALL_EVENT_RECORD, 1700 },
	[API_WAIT] = { "cudaStreamWaitEvent", ORR_EVENT_RUNTIME, ORR_CALL_STREAM_WAIT, 1900 },
	[API_SYNC] = { "cudaStreamSynchronize", ORR_EVENT_RUNTIME, ORR_CALL_STREAM_SYNC, 2500 },
};

enum name { N_WAIT_EVENT, N_STREAM_SYNC, N_H2D, N_COPY_OP, N_BACKWARD, N_COMMS_OP, N_NAMES };

static const char *const fixed_names[N_NAMES] = {
	[N_WAIT_EVENT] = "Stream Wait Event",
	[N_STREAM_SYNC] = "Stream Sync",
	[N_H2D] = "Memcpy HtoD (Pinned -> Device)",
	[N_COPY_OP] = "aten::copy_",
	[N_BACKWARD] = "## backward ##",
	[N_COMMS_OP] = "record_param_comms",
};

_Static_assert(N_APIS <= 8 && N_NAMES <= 8, "struct gen_job: room for the names");

void gen_job_intern(struct gen_job *j)
{
	for (int i = 0; i < N_APIS; i++)
		j->api_name[i] = orr_strtab_intern(j->t->strs, apis[i].name, strlen(apis[i].name));
	for (int i = 0; i < N_NAMES; i++)
		j->name[i] = orr_strtab_intern(j->t->strs, fixed_names[i], strlen(fixed_names[i]));
}

/* What one rank's simulation holds between instructions. */
struct rank_gen {
	struct orr__rank_build *rb;
	uint64_t rng;
	int64_t now[N_THREADS];  /* each thread's clock */
	int64_t free[N_STREAMS]; /* when each stream has run what was launched on it */
	uint32_t place[N_THREADS + N_STREAMS];
	int64_t corr, ext, event_id;
	size_t step_ev, bwd_ev;    /* the open ProfilerStep and backward annotations */
	size_t coll_ev;            /* the collective kernel waiting for its end */
	int64_t coll_t0, coll_ext; /* its op's start and external id */
	uint32_t first_member[2];  /* the rank's TP and DP member lists */
};

struct call {
	int64_t start, dur, corr;
};

/* ---- random numbers --------------------------------------------------------------------- */

uint64_t gen_job_mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x ? x : 1;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

int64_t gen_job_uniform(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

/* ns +- pct %. */
int64_t gen_job_jitter(uint64_t *s, int64_t ns, int pct)
{
	return ns + ns * gen_job_uniform(s, -100 * pct, 100 * pct) / 10000;
}

/* A CPU gap: ns +- 30 %. */
static int64_t gap(struct rank_gen *g, int64_t ns)
{
	return gen_job_jitter(&g->rng, ns, 30);
}

/* ---- events ------------------------------------------------------------------------------ */

static struct orr_event *push(struct rank_gen *g, uint8_t kind, uint32_t place, uint32_t name,
			      int64_t start, int64_t dur, int64_t ext)
{
	struct orr_event *e = orr__vec_push(&g->rb->events);

	*e = (struct orr_event){ .start_ns = start,
				 .dur_ns = dur,
				 .correlation = -1,
				 .external_id = ext,
				 .name = name,
				 .place = place,
				 .args = ORR_NONE,
				 .coll = ORR_NONE,
				 .kind = kind };
	return e;
}

static size_t last(const struct orr__vec *v)
{
	return v->n - 1;
}

static void op_event(struct rank_gen *g, int th, uint32_t name, int64_t start, int64_t end,
		     int64_t ext)
{
	push(g, ORR_EVENT_OP, g->place[th], name, start, end - start, ext);
}

/* A runtime or driver call at the thread's clock, lasting at least until block_until. */
static struct call api_call(const struct gen_job *j, struct rank_gen *g, int th, enum api api,
			    int64_t ext, int64_t block_until)
{
	struct call c = { .start = g->now[th], .corr = ++g->corr };
	struct orr_event *e;

	c.dur = gen_job_jitter(&g->rng, apis[api].mean_ns, 20);
	if (block_until > c.start + c.dur)
		c.dur = block_until - c.start;
	e = push(g, apis[api].kind, g->place[th], j->api_name[api], c.start, c.dur, ext);
	e->sub = apis[api].call;
	e->correlation = c.corr;
	g->now[th] = c.start + c.dur;
	return c;
}

/* A GPU task launched by c on st: after the launch reaches the GPU and the stream is free. */
static struct orr_event *gpu_task(struct rank_gen *g, const struct call *c, int st, uint8_t kind,
				  uint32_t name, int64_t dur, int64_t ext)
{
	int64_t a = c->start + gap(g, 5000), b = g->free[st] + gap(g, 1200);
	struct orr_event *e =
		push(g, kind, g->place[N_THREADS + st], name, a > b ? a : b, dur, ext);

	e->correlation = c->corr;
	g->free[st] = e->start_ns + dur;
	return e;
}

/* cudaEventRecord on `from`, cudaStreamWaitEvent of `to` on it, and the wait's cuda_sync. */
static void cross_stream(const struct gen_job *j, struct rank_gen *g, int th, int64_t ext, int from,
			 int to)
{
	struct call rec = api_call(j, g, th, API_RECORD, ext, 0), w;
	int64_t ready = g->free[from];
	struct orr_sync_args *sa;
	struct orr_event *e;

	g->now[th] += gap(g, 1000);
	w = api_call(j, g, th, API_WAIT, ext, 0);
	sa = orr__vec_push(&g->rb->syncs);
	*sa = (struct orr_sync_args){ .stream = stream_ids[to],
				      .wait_on_stream = stream_ids[from],
				      .event_record_corr = rec.corr,
				      .event_id = ++g->event_id };
	e = push(g, ORR_EVENT_SYNC, g->place[N_THREADS + to], j->name[N_WAIT_EVENT],
		 w.start + w.dur / 4, w.dur / 2, ext);
	e->sub = ORR_SYNC_STREAM_WAIT;
	e->correlation = w.corr;
	e->args = (uint32_t)last(&g->rb->syncs);
	if (g->free[to] < ready)
		g->free[to] = ready;
	g->now[th] += gap(g, 1000);
}

/* ---- instructions ------------------------------------------------------------------------- */

/* An operator (in a parent op when it has one) launching one kernel on the compute stream. */
static void exec_kernel(const struct gen_job *j, struct rank_gen *g, const struct insn *in)
{
	int th = in->thread;
	bool mm_bwd = in->flags & F_MM_BWD;
	uint32_t op = mm_bwd ? j->mm_bwd_op : j->op[in->what];
	uint32_t parent = mm_bwd ? j->mm_bwd_parent : j->parent[in->what];
	int64_t pext = parent != ORR_STR_NONE ? ++g->ext : -1, ext = ++g->ext;
	int64_t t0 = g->now[th] + gap(g, 6000), start = t0;
	struct call c;

	if (parent != ORR_STR_NONE)
		start += gap(g, 2500);
	g->now[th] = start + gap(g, 3000);
	c = api_call(j, g, th, API_LAUNCH, ext, 0);
	gpu_task(g, &c, ST_COMPUTE, ORR_EVENT_KERNEL, j->kernel[in->what],
		 gen_job_jitter(&g->rng, in->dur_ns, 2), ext);
	g->now[th] += gap(g, 2000);
	op_event(g, th, op, start, g->now[th], ext);
	if (parent != ORR_STR_NONE) {
		g->now[th] += gap(g, 1500);
		op_event(g, th, parent, t0, g->now[th], pext);
	}
}

static void exec_step_begin(const struct gen_job *j, struct rank_gen *g, const struct insn *in)
{
	int st = j->copy_stream ? ST_COPY : ST_COMPUTE;
	int64_t t0 = g->now[TH_MAIN] + gap(g, 10000), ext, c0;
	struct orr_copy_args *cp;
	struct orr_event *e;
	struct call c;

	push(g, ORR_EVENT_ANNOTATION, g->place[TH_MAIN], in->name, t0, 0, ++g->ext);
	g->step_ev = last(&g->rb->events);
	/* the data loader, then the batch to the GPU */
	ext = ++g->ext;
	c0 = g->now[TH_MAIN] = t0 + gap(g, 40000);
	g->now[TH_MAIN] += gap(g, 4000);
	c = api_call(j, g, TH_MAIN, API_MEMCPY, ext, 0);
	cp = orr__vec_push(&g->rb->copies);
	cp->bytes = BATCH_BYTES;
	e = gpu_task(g, &c, st, ORR_EVENT_MEMCPY, j->name[N_H2D], 1500 + BATCH_BYTES / 22, ext);
	e->args = (uint32_t)last(&g->rb->copies);
	g->now[TH_MAIN] += gap(g, 2000);
	op_event(g, TH_MAIN, j->name[N_COPY_OP], c0, g->now[TH_MAIN], ext);
	if (j->copy_stream)
		cross_stream(j, g, TH_MAIN, -1, ST_COPY, ST_COMPUTE);
}

/* cudaStreamSynchronize(compute): returns when the stream's last kernel has ended. */
static void exec_step_end(const struct gen_job *j, struct rank_gen *g)
{
	struct call c = api_call(j, g, TH_MAIN, API_SYNC, -1, g->free[ST_COMPUTE] + gap(g, 3000));
	struct orr_event *e, *a;
	struct orr_sync_args *sa;

	sa = orr__vec_push(&g->rb->syncs);
	*sa = (struct orr_sync_args){ .stream = stream_ids[ST_COMPUTE],
				      .wait_on_stream = -1,
				      .event_record_corr = -1,
				      .event_id = -1 };
	e = push(g, ORR_EVENT_SYNC, g->place[N_THREADS + ST_COMPUTE], j->name[N_STREAM_SYNC],
		 c.start + 200, c.dur - 400, -1);
	e->sub = ORR_SYNC_STREAM;
	e->correlation = c.corr;
	e->args = (uint32_t)last(&g->rb->syncs);
	g->now[TH_MAIN] += gap(g, 5000);
	a = ORR__AT(g->rb->events, struct orr_event, g->step_ev);
	a->dur_ns = g->now[TH_MAIN] - a->start_ns;
}

/* loss.backward(): the main thread hands over to the autograd thread and waits. */
static void exec_bwd_begin(const struct gen_job *j, struct rank_gen *g)
{
	int64_t t0 = g->now[TH_MAIN] + gap(g, 3000), start = t0 + gap(g, 15000);

	push(g, ORR_EVENT_ANNOTATION, g->place[TH_MAIN], j->name[N_BACKWARD], t0, 0, ++g->ext);
	g->bwd_ev = last(&g->rb->events);
	if (g->now[TH_BWD] < start)
		g->now[TH_BWD] = start;
}

static void exec_bwd_end(struct rank_gen *g)
{
	struct orr_event *a = ORR__AT(g->rb->events, struct orr_event, g->bwd_ev);
	int64_t end = g->now[TH_BWD] + gap(g, 10000);

	if (g->now[TH_MAIN] < end)
		g->now[TH_MAIN] = end;
	a->dur_ns = g->now[TH_MAIN] - a->start_ns;
	g->now[TH_MAIN] += gap(g, 2000);
}

static struct orr_collective collective(const struct gen_job *j, size_t rank,
					const struct rank_gen *g, const struct insn *in)
{
	bool dp = in->flags & F_DP;
	int32_t size = (int32_t)(dp ? j->dp : j->tp);
	int64_t part = in->nelems / size;
	size_t grp = dp ? rank % j->tp : rank / j->tp;

	return (struct orr_collective){
		.type = j->coll_type[in->what],
		.dtype = j->bf16,
		.pg_name = dp ? j->dp_pg[grp] : j->tp_pg[grp],
		.pg_desc = j->pg_desc[dp],
		.in_nelems = in->what == C_ALLGATHER ? part : in->nelems,
		.out_nelems = in->what == C_REDUCE_SCATTER ? part : in->nelems,
		.in_bytes = -1,
		.out_bytes = -1,
		.sequence = in->seq,
		.group_size = size,
		.src_rank = -1,
		.dst_rank = -1,
		.first_member = g->first_member[dp],
		.nmembers = (uint32_t)size,
	};
}

/* The first half of a collective: up to its kernel, whose end is not known yet. */
static void exec_coll_launch(const struct gen_job *j, size_t rank, struct rank_gen *g,
			     const struct insn *in)
{
	int th = in->thread, st = in->flags & F_DP ? ST_DP : ST_TP;
	struct orr_collective *cl;
	struct orr_event *e;
	struct call c;

	g->coll_ext = ++g->ext;
	g->coll_t0 = g->now[th] + gap(g, 5000);
	g->now[th] = g->coll_t0 + gap(g, 3000);
	cross_stream(j, g, th, g->coll_ext, ST_COMPUTE, st);
	c = api_call(j, g, th, API_NCCL, g->coll_ext, 0);
	cl = orr__vec_push(&g->rb->colls);
	*cl = collective(j, rank, g, in);
	e = gpu_task(g, &c, st, ORR_EVENT_KERNEL, j->coll_kernel[in->what], 0, g->coll_ext);
	e->coll = (uint32_t)last(&g->rb->colls);
	g->coll_ev = last(&g->rb->events);
}

/* The second half, once the instance's end is known; a TP collective blocks compute. */
static void exec_coll_finish(const struct gen_job *j, struct rank_gen *g, const struct insn *in,
			     int64_t end)
{
	int th = in->thread, st = in->flags & F_DP ? ST_DP : ST_TP;
	struct orr_event *k = ORR__AT(g->rb->events, struct orr_event, g->coll_ev);
	uint32_t coll = k->coll;

	k->dur_ns = end - k->start_ns;
	g->free[st] = end;
	g->now[th] += gap(g, 2000);
	if (!(in->flags & F_DP))
		cross_stream(j, g, th, g->coll_ext, st, ST_COMPUTE);
	g->now[th] += gap(g, 1500);
	push(g, ORR_EVENT_OP, g->place[th], j->name[N_COMMS_OP], g->coll_t0,
	     g->now[th] - g->coll_t0, g->coll_ext)
		->coll = coll;
}

static void exec(const struct gen_job *j, size_t rank, struct rank_gen *g, const struct insn *in)
{
	switch ((enum insn_kind)in->kind) {
	case I_STEP_BEGIN:
		exec_step_begin(j, g, in);
		break;
	case I_KERNEL:
		exec_kernel(j, g, in);
		break;
	case I_COLL:
		exec_coll_launch(j, rank, g, in);
		break;
	case I_BWD_BEGIN:
		exec_bwd_begin(j, g);
		break;
	case I_BWD_END:
		exec_bwd_end(g);
		break;
	case I_WAIT_DP:
		cross_stream(j, g, TH_MAIN, -1, ST_DP, ST_COMPUTE);
		break;
	case I_STEP_END:
		exec_step_end(j, g);
		break;
	}
}

/* ---- ranks and the lockstep ---------------------------------------------------------------- */

static void reserve(struct orr__vec *v, size_t n)
{
	v->p = orr_xgrow(v->p, v->elem, &v->cap, n);
}

static void rank_places(const struct gen_job *j, struct rank_gen *g, size_t rank)
{
	int64_t pid = 4000 + (int64_t)rank, dev = (int64_t)(rank % GPUS_PER_NODE);
	bool used[N_STREAMS] = { true, j->copy_stream, j->tp > 1, j->dp > 1 };

	g->place[TH_MAIN] = orr__place(g->rb, ORR_PLACE_THREAD, pid, pid, -1);
	g->place[TH_BWD] = orr__place(g->rb, ORR_PLACE_THREAD, pid, pid + 213, -1);
	for (int st = 0; st < N_STREAMS; st++)
		if (used[st])
			g->place[N_THREADS + st] = orr__place(g->rb, ORR_PLACE_STREAM, dev,
							      stream_ids[st], (int32_t)dev);
}

/* The process groups: their members and pg_config entries; TP first, then DP. */
static void rank_groups(const struct gen_job *j, struct rank_gen *g, size_t rank)
{
	for (int dp = 0; dp < 2; dp++) {
		size_t size = dp ? j->dp : j->tp, grp = dp ? rank % j->tp : rank / j->tp;
		struct orr_comm *c;

		g->first_member[dp] = (uint32_t)g->rb->members.n;
		for (size_t i = 0; i < size; i++)
			*(int32_t *)orr__vec_push(&g->rb->members) =
				(int32_t)(dp ? grp + i * j->tp : grp * j->tp + i);
		c = orr__vec_push(&g->rb->comms);
		*c = (struct orr_comm){ .name = dp ? j->dp_pg[grp] : j->tp_pg[grp],
					.desc = j->pg_desc[dp],
					.backend = j->nccl,
					.size = (int32_t)size,
					.first_member = g->first_member[dp],
					.nmembers = (uint32_t)size };
	}
}

static void rank_init(const struct gen_job *j, struct rank_gen *g, size_t rank)
{
	char src[48];
	struct orr_device *d;

	snprintf(src, sizeof(src), "gen-job/rank-%zu", rank);
	g->rb = orr__rank_new(j->t, orr_strtab_intern(j->t->strs, src, strlen(src)));
	g->rb->pub.rank = (int32_t)rank;
	g->rb->pub.world_size = (int32_t)j->ranks;
	g->rb->pub.backend = j->nccl;
	g->rb->has_rank = true;
	g->rng = gen_job_mix(j->seed ^ gen_job_mix(rank + 1));
	reserve(&g->rb->events, j->count.events);
	reserve(&g->rb->syncs, j->count.syncs);
	reserve(&g->rb->colls, j->count.colls);
	reserve(&g->rb->copies, j->count.copies);
	rank_places(j, g, rank);
	rank_groups(j, g, rank);
	d = orr__vec_push(&g->rb->devices);
	*d = (struct orr_device){ .id = (int32_t)(rank % GPUS_PER_NODE),
				  .name = j->device_name,
				  .num_sms = 132,
				  .compute_major = 9,
				  .compute_minor = 0,
				  .total_mem_bytes = 85520809984 };
	g->now[TH_MAIN] = g->now[TH_BWD] = T0_NS + gen_job_uniform(&g->rng, 0, 20000);
	for (int st = 0; st < N_STREAMS; st++)
		g->free[st] = T0_NS;
}

/* One collective instance of group grp: ends at the last arrival plus the transfer time. */
static void couple(const struct gen_job *j, struct rank_gen *ranks, size_t pc, size_t grp)
{
	const struct insn *in = &j->prog[pc];
	bool dp = in->flags & F_DP;
	size_t size = dp ? j->dp : j->tp, ngroups = j->ranks / size;
	uint64_t rng = gen_job_mix(j->seed ^ gen_job_mix(pc * ngroups + grp));
	int64_t end = INT64_MIN;

	for (size_t i = 0; i < size; i++) {
		size_t r = dp ? grp + i * j->tp : grp * j->tp + i;
		const struct orr_event *k =
			ORR__AT(ranks[r].rb->events, struct orr_event, ranks[r].coll_ev);

		if (k->start_ns > end)
			end = k->start_ns;
	}
	end += gen_job_jitter(&rng, in->dur_ns, 5);
	for (size_t i = 0; i < size; i++) {
		size_t r = dp ? grp + i * j->tp : grp * j->tp + i;

		exec_coll_finish(j, &ranks[r], in, end + gen_job_uniform(&rng, 0, 500));
	}
}

/* The first collective at or after pc (a DP one when dp_only), or the program's end. */
static size_t next_coll(const struct gen_job *j, size_t pc, bool dp_only)
{
	while (pc < j->nprog &&
	       (j->prog[pc].kind != I_COLL || (dp_only && !(j->prog[pc].flags & F_DP))))
		pc++;
	return pc;
}

/*
 * The ranks of TP group blk from pc until each has launched the DP collective at stop,
 * through the TP collectives on the way.  A TP group at a time keeps the working set
 * small: 8 ranks' tables rather than all of them.
 */
static void run_block(const struct gen_job *j, struct rank_gen *ranks, size_t blk, size_t pc,
		      size_t stop)
{
	for (;;) {
		size_t end = next_coll(j, pc, false);

		for (size_t r = blk * j->tp; r < (blk + 1) * j->tp; r++)
			for (size_t i = pc; i <= end && i < j->nprog; i++)
				exec(j, r, &ranks[r], &j->prog[i]);
		if (end == stop)
			return;
		couple(j, ranks, end, blk);
		pc = end + 1;
	}
}

/* Lockstep at DP collectives, which couple every TP group. */
static void run(const struct gen_job *j, struct rank_gen *ranks)
{
	size_t pc = 0;

	while (pc < j->nprog) {
		size_t stop = next_coll(j, pc, true);

		for (size_t blk = 0; blk < j->ranks / j->tp; blk++)
			run_block(j, ranks, blk, pc, stop);
		for (size_t grp = 0; stop < j->nprog && grp < j->tp; grp++)
			couple(j, ranks, stop, grp);
		pc = stop + 1;
	}
}

int gen_job(const struct gen_job_options *o, struct orr_trace **ret_trace)
{
	struct gen_job j = { 0 };
	struct rank_gen *ranks;
	int64_t t0, t1;
	int r;

	r = gen_job_init(&j, o);
	if (r < 0)
		return r;
	t0 = orr_now_ns();
	ranks = orr_xcalloc(j.ranks, sizeof(*ranks));
	for (size_t i = 0; i < j.ranks; i++)
		rank_init(&j, &ranks[i], i);
	run(&j, ranks);
	t1 = orr_now_ns();
	for (size_t i = 0; i < j.ranks; i++) {
		/* the instructions' event counts, which sized the tables, are exact */
		assert(ranks[i].rb->events.n == j.count.events);
		orr__rank_finish(j.t, ranks[i].rb);
	}
	free(ranks);
	orr_debug("bench",
		  "gen-job: %zu ranks x %zu events (%zu layers): simulated in %.3f s, "
		  "finished in %.3f s",
		  j.ranks, j.count.events, j.layers, (double)(t1 - t0) / 1e9,
		  (double)(orr_now_ns() - t1) / 1e9);
	*ret_trace = j.t;
	j.t = NULL;
	gen_job_release(&j);
	return 0;
}
