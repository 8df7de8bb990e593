/* SPDX-License-Identifier: MIT */
/*
 * The simulation behind gen-kineto (see gen-kineto.h): the steps of a training loop,
 * their ops, launches, copies and collectives, on two CPU threads and three streams with
 * clocks, so every kernel follows its launch and streams never overlap.  It runs twice over
 * the same random stream: the first pass writes the CPU ops, the second the CUPTI activity.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gen-kineto.h"
#include "../common/banned.h"

#define COLL_EVERY_BWD 180      /* backward groups per DDP bucket all-reduce */
#define COLL_EVERY_FWD 600      /* forward groups per FSDP-style all-gather */
#define MAX_LAG_NS     20000000 /* the launch queue blocks past 20 ms of GPU lag */
#define FIRST_STEP     100

static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ULL;
}

/* ns ± 8 %: every duration and gap in the trace. */
static int64_t jit(struct gen *g, int64_t ns)
{
	int64_t r = (int64_t)(rnd(g) % 1601) - 800;

	return ns + ns * r / 10000;
}

static void ended(struct gen *g, int64_t t)
{
	if (t > g->t_end)
		g->t_end = t;
}

/* ---- calls, GPU tasks ------------------------------------------------------------------ */

/*
 * A runtime/driver call at the thread's clock; ext 0 means outside any op, where Kineto
 * writes the correlation id as the External id. The call lasts at least until
 * block_until (a full launch queue, a stream sync).
 */
static struct call api_call(struct gen *g, int th, int api, uint64_t ext, int64_t block_until)
{
	struct call c;

	g->corr += 1 + (rnd(g) % 8 == 0); /* filtered calls leave gaps */
	c.corr = g->corr;
	c.ext = ext ? ext : g->corr;
	c.ts = g->now[th];
	c.dur = jit(g, apis[api].mean_ns);
	if (block_until > c.ts + c.dur)
		c.dur = block_until - c.ts;
	g->now[th] = c.ts + c.dur;
	if (!g->cpu_pass)
		emit_call(g, th, &apis[api], &c);
	return c;
}

/* When a task launched by c can start on st: after the launch and the stream's last task. */
static int64_t gpu_start(struct gen *g, const struct call *c, int st)
{
	int64_t a = c->ts + jit(g, 4200), b = g->free[st] + jit(g, 1100);

	return a > b ? a : b;
}

static void gpu_done(struct gen *g, int st, int64_t end)
{
	g->free[st] = end;
	ended(g, end);
}

static void launch(struct gen *g, int th, uint64_t ext, int k)
{
	const struct kernel *kd = &kernels[k];
	int64_t lag = g->free[ST_COMPUTE] - g->now[th];
	int64_t until = lag > MAX_LAG_NS ? g->free[ST_COMPUTE] - MAX_LAG_NS : 0;
	struct call c = api_call(g, th, kd->api, ext, until);
	int64_t start = gpu_start(g, &c, ST_COMPUTE);
	int64_t dur = jit(g, (int64_t)kd->mean_us * 1000);

	gpu_done(g, ST_COMPUTE, start + dur);
	if (!g->cpu_pass)
		emit_kernel(g, k, ST_COMPUTE, start, dur, &c);
	g->now[th] += jit(g, 1200);
}

static void copy(struct gen *g, int th, uint64_t ext, enum copy kind, int st, uint64_t bytes)
{
	static const uint64_t bytes_per_us[] = { 22000, 18000, 1300000, 1500000 };
	struct call c = api_call(g, th, kind == COPY_SET ? API_MEMSET : API_MEMCPY, ext, 0);
	int64_t start = gpu_start(g, &c, st);
	int64_t dur = jit(g, 1500 + (int64_t)(bytes * 1000 / bytes_per_us[kind]));

	gpu_done(g, st, start + dur);
	g->now[th] += jit(g, 1000);
	if (!g->cpu_pass)
		emit_copy(g, kind, st, start, dur, &c, bytes);
}

static struct evrec record(struct gen *g, int th, uint64_t ext, int st)
{
	struct call c = api_call(g, th, API_RECORD, ext, 0);
	struct evrec r = { c.corr, 0, st, g->free[st] };

	g->event_id += 1 + (rnd(g) % 4 == 0);
	r.id = g->event_id;
	g->now[th] += jit(g, 800);
	return r;
}

/* cudaStreamWaitEvent: work queued on st after this waits for r. */
static void wait_event(struct gen *g, int th, uint64_t ext, int st, const struct evrec *r)
{
	struct call c = api_call(g, th, API_WAIT, ext, 0);

	if (!g->cpu_pass)
		emit_sync(g, st, &c, r);
	if (g->free[st] < r->ready)
		g->free[st] = r->ready;
	g->now[th] += jit(g, 1000);
}

static void stream_sync(struct gen *g, int th, uint64_t ext, int st)
{
	struct call c = api_call(g, th, API_SYNC, ext, g->free[st] + jit(g, 3100));

	if (!g->cpu_pass)
		emit_sync(g, st, &c, NULL);
	g->now[th] += jit(g, 1500);
}

/* ---- ops and collectives ------------------------------------------------------------ */

/* One op (and its parent op) launching one kernel on the compute stream. */
static void op_group(struct gen *g, int th, const struct op *op, int64_t seq, int fwd_tid)
{
	int64_t t0 = g->now[th] + jit(g, 9000), start, end;
	uint64_t pext = op->parent ? ++g->ext : 0, ext = ++g->ext;
	struct op_args a = { -1, 0, op->dims, op->types, NULL, 0 };
	struct op_args pa = { seq, fwd_tid, NULL, NULL, NULL, 0 };

	start = op->parent ? t0 + jit(g, 3500) : t0;
	g->now[th] = start + jit(g, 4000);
	if (rnd(g) % 16 == 0)
		api_call(g, th, rnd(g) % 2 ? API_CAPTURING : API_OCCUPANCY, ext, 0);
	launch(g, th, ext, op->kernel);
	g->now[th] += jit(g, 2000);
	end = g->now[th];
	if (op->parent)
		g->now[th] += jit(g, 1500);
	if (!g->cpu_pass)
		return;
	if (op->parent) {
		emit_op(g, th, "cpu_op", op->parent, t0, g->now[th] - t0, pext, &pa);
	} else {
		a.seq = seq;
		a.fwd_tid = fwd_tid;
	}
	emit_op(g, th, "cpu_op", op->name, start, end - start, ext, &a);
}

/* aten::copy_ (DtoD) or aten::zero_ (memset) on the compute stream. */
static void copy_group(struct gen *g, int th, bool set)
{
	int64_t t0 = g->now[th] + jit(g, 7000);
	uint64_t ext = ++g->ext, bytes = (1 + rnd(g) % 64) << 20;
	struct op_args a = { -1, 0, "[[2, 4096, 4096], [2, 4096, 4096], []]", T3_BF16, NULL, 0 };

	g->now[th] = t0 + jit(g, 5000);
	copy(g, th, ext, set ? COPY_SET : COPY_D2D, ST_COMPUTE, bytes);
	g->now[th] += jit(g, 2000);
	if (g->cpu_pass)
		emit_op(g, th, "cpu_op", set ? "aten::zero_" : "aten::copy_", t0, g->now[th] - t0,
			ext, &a);
}

static int64_t nccl_ns(struct gen *g, uint64_t nelems)
{
	/* 2-byte elements at ~150 GB/s, plus up to 300 µs waiting for the slowest rank */
	return 15000 + (int64_t)(nelems * 2 / 150) + (int64_t)(rnd(g) % 300000);
}

/*
 * A ProcessGroupNCCL collective: the NCCL stream waits for the compute stream, the kernel
 * runs, an event is recorded after it; returned so the compute stream can wait for it.
 */
static struct evrec collective(struct gen *g, int th, bool gather, uint64_t nelems)
{
	uint64_t ext = ++g->ext, aext;
	int64_t t[4], start, dur;
	struct evrec r;
	struct call c;

	g->coll_seq++;
	t[0] = g->now[th] + jit(g, 6000);
	g->now[th] = t[0] + jit(g, 3000);
	r = record(g, th, ext, ST_COMPUTE);
	wait_event(g, th, ext, ST_NCCL, &r);
	aext = ++g->ext;
	t[1] = g->now[th] + jit(g, 6000);
	g->now[th] = t[1] + jit(g, 12000);
	c = api_call(g, th, API_NCCL, ext, 0);
	start = gpu_start(g, &c, ST_NCCL);
	dur = nccl_ns(g, nelems);
	gpu_done(g, ST_NCCL, start + dur);
	if (!g->cpu_pass)
		emit_coll_kernel(g, gather, nelems, start, dur, &c);
	g->now[th] += jit(g, 2000);
	r = record(g, th, ext, ST_NCCL);
	t[2] = g->now[th] + jit(g, 3000);
	t[3] = g->now[th] = t[2] + jit(g, 2000);
	if (g->cpu_pass)
		emit_coll(g, th, gather, nelems, t, ext, aext);
	return r;
}

/* ---- a training step -------------------------------------------------------------------- */

/* A user annotation with nothing but time inside it (data loading, zero_grad). */
static void idle_annotation(struct gen *g, int th, const char *name, int64_t ns)
{
	int64_t t0 = g->now[th] + jit(g, 2000);
	uint64_t ext = ++g->ext;

	g->now[th] = t0 + jit(g, ns);
	if (g->cpu_pass)
		emit_op(g, th, "user_annotation", name, t0, g->now[th] - t0, ext, NULL);
}

/* aten::to on a pinned batch: H2D on the copy stream, which compute waits for. */
static void load_batch(struct gen *g)
{
	int64_t t0 = g->now[TH_MAIN] + jit(g, 3000), t1;
	uint64_t ext0 = ++g->ext, ext1 = ++g->ext;
	struct op_args a = { -1,
			     0,
			     "[[2, 4097], [], [], [], [], []]",
			     "[\"long int\", \"\", \"\", \"\", \"\", \"\"]",
			     NULL,
			     0 };
	struct evrec r;

	t1 = t0 + jit(g, 4000);
	g->now[TH_MAIN] = t1 + jit(g, 3000);
	copy(g, TH_MAIN, ext1, COPY_H2D, ST_COPY, 65552);
	g->now[TH_MAIN] += jit(g, 2000);
	if (g->cpu_pass) {
		emit_op(g, TH_MAIN, "cpu_op", "aten::to", t0, g->now[TH_MAIN] + 1000 - t0, ext0,
			&a);
		emit_op(g, TH_MAIN, "cpu_op", "aten::copy_", t1, g->now[TH_MAIN] - t1, ext1, &a);
	}
	g->now[TH_MAIN] += jit(g, 4000);
	r = record(g, TH_MAIN, 0, ST_COPY);
	wait_event(g, TH_MAIN, 0, ST_COMPUTE, &r);
}

/* Mostly ops with a kernel; now and then a device copy or a memset. */
static void mixed_group(struct gen *g, int th, const struct op *op, int64_t seq, int fwd_tid)
{
	uint64_t r = rnd(g) % 64;

	if (r < 2)
		copy_group(g, th, false);
	else if (r < 3)
		copy_group(g, th, true);
	else
		op_group(g, th, op, seq, fwd_tid);
}

static void forward(struct gen *g, uint64_t n)
{
	int64_t t0 = g->now[TH_MAIN] + jit(g, 4000);
	uint64_t ext = ++g->ext;
	struct evrec r;

	g->now[TH_MAIN] = t0 + jit(g, 20000);
	for (uint64_t i = 0; i < n; i++) {
		if (i % COLL_EVERY_FWD != COLL_EVERY_FWD - 1) {
			mixed_group(g, TH_MAIN, &fwd_ops[i % n_fwd_ops], (int64_t)++g->seq, 0);
			continue;
		}
		/* FSDP-style: gather the next layer's parameters, compute waits for them */
		r = collective(g, TH_MAIN, true, 218112000);
		wait_event(g, TH_MAIN, 0, ST_COMPUTE, &r);
	}
	g->now[TH_MAIN] += jit(g, 6000);
	if (g->cpu_pass)
		emit_op(g, TH_MAIN, "user_annotation", "## forward ##", t0, g->now[TH_MAIN] - t0,
			ext, NULL);
}

/* On the autograd thread, with a DDP bucket all-reduce every COLL_EVERY_BWD groups. */
static void backward(struct gen *g, uint64_t n)
{
	int64_t t = g->now[TH_MAIN] + jit(g, 31000);
	struct evrec r = { 0 };
	bool reduced = false;

	if (g->now[TH_BWD] < t)
		g->now[TH_BWD] = t;
	for (uint64_t i = 0; i < n; i++) {
		int64_t seq = g->seq > i ? (int64_t)(g->seq - i) : 0;

		if (i % COLL_EVERY_BWD != COLL_EVERY_BWD - 1) {
			mixed_group(g, TH_BWD, &bwd_ops[i % n_bwd_ops], seq, 1);
			continue;
		}
		r = collective(g, TH_BWD, false, 6553600 + rnd(g) % 6553600);
		reduced = true;
	}
	if (reduced) {
		/* Reducer::finalize_backward: work.wait(), outside any op */
		g->now[TH_BWD] += jit(g, 18000);
		wait_event(g, TH_BWD, 0, ST_COMPUTE, &r);
	}
	t = g->now[TH_BWD] + jit(g, 14000);
	if (g->now[TH_MAIN] < t)
		g->now[TH_MAIN] = t;
}

static void optimizer(struct gen *g, uint64_t n)
{
	int64_t t0 = g->now[TH_MAIN] + jit(g, 4000);
	uint64_t ext = ++g->ext;

	g->now[TH_MAIN] = t0 + jit(g, 38000);
	for (uint64_t i = 0; i < n; i++)
		op_group(g, TH_MAIN, &opt_ops[i % n_opt_ops], -1, 0);
	g->now[TH_MAIN] += jit(g, 9000);
	if (g->cpu_pass)
		emit_op(g, TH_MAIN, "user_annotation", "Optimizer.step#AdamW.step", t0,
			g->now[TH_MAIN] - t0, ext, NULL);
	idle_annotation(g, TH_MAIN, "Optimizer.zero_grad#AdamW.zero_grad", 41000);
}

/* loss.item(): a DtoH copy, then the CPU waits for the compute stream. */
static void item_sync(struct gen *g)
{
	int64_t t0 = g->now[TH_MAIN] + jit(g, 5000), t1;
	uint64_t ext0 = ++g->ext, ext1 = ++g->ext;
	struct op_args a = { -1, 0, "[[]]", "[\"float\"]", NULL, 0 };

	t1 = t0 + jit(g, 3000);
	g->now[TH_MAIN] = t1 + jit(g, 4000);
	copy(g, TH_MAIN, ext1, COPY_D2H, ST_COMPUTE, 4);
	stream_sync(g, TH_MAIN, ext1, ST_COMPUTE);
	g->now[TH_MAIN] += jit(g, 2000);
	if (g->cpu_pass) {
		emit_op(g, TH_MAIN, "cpu_op", "aten::item", t0, g->now[TH_MAIN] + 1500 - t0, ext0,
			&a);
		emit_op(g, TH_MAIN, "cpu_op", "aten::_local_scalar_dense", t1, g->now[TH_MAIN] - t1,
			ext1, &a);
	}
	g->now[TH_MAIN] += jit(g, 3000);
}

static void step(struct gen *g, uint64_t n, uint64_t groups)
{
	uint64_t f = groups * 35 / 100, b = groups * 55 / 100, ext = ++g->ext;
	int64_t t0 = g->now[TH_MAIN] + jit(g, 11000);
	char name[48];

	g->now[TH_MAIN] = t0 + jit(g, 6000);
	idle_annotation(g, TH_MAIN, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
			240000);
	load_batch(g);
	forward(g, f);
	backward(g, b);
	optimizer(g, groups - f - b);
	item_sync(g);
	g->now[TH_MAIN] += jit(g, 3000);
	ended(g, g->now[TH_MAIN]);
	if (!g->cpu_pass)
		return;
	snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)n);
	emit_op(g, TH_MAIN, "user_annotation", name, t0, g->now[TH_MAIN] - t0, ext, NULL);
}

/* ---- whole files ------------------------------------------------------------------------ */

static void sim_reset(struct gen *g, bool cpu_pass)
{
	g->cpu_pass = cpu_pass;
	g->rng = (g->seed + 1) * 0x9E3779B97F4A7C15ULL ^
		 ((uint64_t)g->rank + 1) * 0xBF58476D1CE4E5B9ULL;
	if (!g->rng)
		g->rng = 1;
	g->now[TH_MAIN] = T0_NS + (int64_t)g->rank * START_SKEW_NS;
	g->now[TH_BWD] = 0;
	memset(g->free, 0, sizeof(g->free));
	g->corr = 21377;
	g->ext = 1311;
	g->seq = 4105;
	g->event_id = 92;
	g->coll_seq = 0;
	g->ev_idx = 0;
}

/* Both passes over the same simulation: CPU ops first, then the CUPTI activity. */
void generate(struct gen *g, uint64_t groups, const char *trace_name)
{
	g->first = true;
	g->events = 0;
	g->t_end = 0;
	emit_header(g);
	emit_metadata(g);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t left = groups;

		sim_reset(g, pass == 0);
		for (uint64_t s = FIRST_STEP; left > 0; s++) {
			uint64_t n = left < GROUPS_PER_STEP ? left : GROUPS_PER_STEP;

			step(g, s, n);
			left -= n;
		}
	}
	emit_trailer(g, trace_name);
	out_flush(g->o);
}

void gen_init(struct gen *g, struct out *o, uint64_t seed, int rank, int world)
{
	memset(g, 0, sizeof(*g));
	g->o = o;
	g->seed = seed;
	g->rank = rank;
	g->world = world;
	g->pid = 48213 + 7 * (int64_t)rank;
	g->tid[TH_MAIN] = g->pid;
	g->tid[TH_BWD] = g->pid + 348;
	coll_args_init(g);
}
