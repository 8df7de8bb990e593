/* SPDX-License-Identifier: MIT */
/*
 * gen-kineto: writes a large synthetic PyTorch-profiler (Kineto) JSON trace, for the
 * import benchmark (bench/run.sh).
 *
 *   gen-kineto [-o FILE] [--size-mb N] [--ranks R] [--seed S]
 *
 * One file of about N MB (10^6 bytes, default 600), or with --ranks R and -o DIR, the files
 * DIR/rank-K.trace.json of N/R MB each. The same arguments give byte-identical output.
 *
 * The content follows real traces: the layout of Kineto's output_json.cpp, CPU ops first
 * and then the CUPTI activity, a cpu_op with shapes, a runtime or driver launch with its
 * correlation id, a kernel with a long templated name and an ac2g flow pair per launch;
 * copies, sets, event record/wait pairs with their cuda_sync events, DDP collectives
 * (record_param_comms and NCCL kernels), a ProfilerStep#N annotation every ~50 k events,
 * and a stream sync at the end of each step. Times come from a small simulation (threads
 * and streams with clocks), so every kernel follows its launch and streams never overlap.
 *
 * Speed: the generator formats into a 16 MB buffer by hand (no stdio on the hot path) and
 * runs both passes (CPU ops, then activity) of the same deterministic simulation.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen-kineto.h"
#include "../common/banned.h"

#define OUT_BUF_BYTES   (16u << 20)
#define EVENT_MAX_BYTES (16u << 10)           /* room reserved before each event */
#define GROUPS_PER_STEP 9000                  /* about 50 k events */
#define COLL_EVERY_BWD  180                   /* backward groups per DDP bucket all-reduce */
#define COLL_EVERY_FWD  600                   /* forward groups per FSDP-style all-gather */
#define MAX_LAG_NS      20000000              /* the launch queue blocks past 20 ms of GPU lag */
#define BASE_NS         1767189312000000000LL /* a 7,889,238 s boundary, as Kineto floors it */
#define T0_NS           5183870312457LL       /* the first event, ns after the base */

enum { TH_MAIN, TH_BWD };
enum { ST_COMPUTE, ST_COPY, ST_NCCL, N_STREAMS };
static const int stream_id[N_STREAMS] = { 7, 13, 20 };

/* ---- output buffer ------------------------------------------------------------------ */

struct out {
	int fd; /* -1: count bytes only */
	char *buf;
	size_t len;
	uint64_t flushed; /* bytes handed to write(2) (or counted) so far */
	int err;          /* first errno of a failed write */
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (o->fd >= 0 && done < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			o->err = errno;
		else
			done += (size_t)n;
	}
	o->flushed += o->len;
	o->len = 0;
}

/* A pointer to at least EVENT_MAX_BYTES free bytes; out_end() commits what was written. */
static char *out_begin(struct out *o)
{
	if (o->len + EVENT_MAX_BYTES > OUT_BUF_BYTES)
		out_flush(o);
	return o->buf + o->len;
}

static void out_end(struct out *o, const char *p)
{
	o->len = (size_t)(p - o->buf);
}

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930"
			      "31323334353637383940414243444546474849505152535455565758596061"
			      "62636465666768697071727374757677787980818283848586878889909192"
			      "93949596979899";

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	char *q = tmp + sizeof(tmp);

	while (v >= 100) {
		q -= 2;
		memcpy(q, digits2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, digits2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	return put(p, q, (size_t)(tmp + sizeof(tmp) - q));
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* Kineto's time format: µs with exactly three decimals (ns precision). */
static char *put_us(char *p, int64_t ns)
{
	uint64_t frac = (uint64_t)(ns % 1000);

	p = put_u64(p, (uint64_t)(ns / 1000));
	*p++ = '.';
	*p++ = (char)('0' + frac / 100);
	memcpy(p, digits2 + 2 * (frac % 100), 2);
	return p + 2;
}

/* v / 10^6 with six decimals. */
static char *put_fixed6(char *p, uint64_t v)
{
	uint64_t f = v % 1000000;

	p = put_u64(p, v / 1000000);
	*p++ = '.';
	for (int i = 5; i >= 0; i--) {
		p[i] = (char)('0' + f % 10);
		f /= 10;
	}
	return p + 6;
}

/* What kernels_init() derives from a kernel once: its name's length, its constant args. */
struct kernel_text {
	size_t name_len;
	char tail[192];
	size_t tail_len;
};
static struct kernel_text ktext[N_KERNELS];

static void kernels_init(void)
{
	for (size_t i = 0; i < N_KERNELS; i++) {
		const struct kernel *k = &kernels[i];
		struct kernel_text *t = &ktext[i];
		double blocks = k->grid / 132.0;
		double warps = blocks * ((k->block + 31) / 32);
		int occ = warps / 64.0 * 100 > 100 ? 100 : (int)(warps / 64.0 * 100);

		t->name_len = strlen(k->name);
		t->tail_len =
			(size_t)snprintf(t->tail, sizeof(t->tail),
					 "\"registers per thread\": %d, \"shared memory\": %d, "
					 "\"blocks per SM\": %f, \"warps per SM\": %f, "
					 "\"grid\": [%d, 1, 1], \"block\": [%d, 1, 1], "
					 "\"est. achieved occupancy %%\": %d",
					 k->regs, k->smem, blocks, warps, k->grid, k->block, occ);
	}
}

/* ---- the generator's state ------------------------------------------------------------ */

struct gen {
	struct out *o;
	bool cpu_pass; /* this pass writes the CPU ops, the other one the CUPTI activity */
	bool first;    /* nothing written yet: no comma before the next event */
	uint64_t seed, rng;
	int rank, world;
	int64_t pid, tid[2];
	int64_t now[2];          /* each thread's clock, ns after the base */
	int64_t free[N_STREAMS]; /* when each stream is next idle */
	int64_t t_end;           /* the latest end of anything so far */
	uint64_t corr, ext, ev_idx, seq, coll_seq, event_id, events;
	char pg[8192]; /* the constant collective args: group size, name, ranks */
	size_t pg_len;
};

struct call {
	uint64_t corr, ext;
	int64_t ts, dur;
};

/* A CUDA event recorded on a stream: ready when the work before it is done. */
struct evrec {
	uint64_t corr, id;
	int stream;
	int64_t ready;
};

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

/* ---- event writers (Kineto's output_json.cpp layout) ------------------------------------ */

static char *ev_begin(struct gen *g)
{
	char *p = out_begin(g->o);

	if (!g->first)
		p = LIT(p, ",\n");
	g->first = false;
	g->events++;
	return p;
}

static char *put_x_head(char *p, const char *cat, const char *name, size_t name_len, int64_t pid,
			int64_t tid, int64_t ts, int64_t dur)
{
	p = LIT(p, "  {\n    \"ph\": \"X\", \"cat\": \"");
	p = put(p, cat, strlen(cat));
	p = LIT(p, "\", \"name\": \"");
	p = put(p, name, name_len);
	p = LIT(p, "\", \"pid\": ");
	p = put_i64(p, pid);
	p = LIT(p, ", \"tid\": ");
	p = put_i64(p, tid);
	p = LIT(p, ",\n    \"ts\": ");
	p = put_us(p, ts);
	p = LIT(p, ", \"dur\": ");
	p = put_us(p, dur);
	return LIT(p, ",\n    \"args\": {\n      \"External id\": ");
}

struct op_args {
	int64_t seq; /* Sequence number, or -1 */
	int fwd_tid;
	const char *dims, *types;
	const char *extra; /* more args, formatted, or NULL */
	size_t extra_len;
};

static void emit_op(struct gen *g, int th, const char *cat, const char *name, int64_t ts,
		    int64_t dur, uint64_t ext, const struct op_args *a)
{
	char *p = ev_begin(g);

	p = put_x_head(p, cat, name, strlen(name), g->pid, g->tid[th], ts, dur);
	p = put_u64(p, ext);
	if (a && a->seq >= 0) {
		p = LIT(p, ", \"Sequence number\": ");
		p = put_i64(p, a->seq);
		p = LIT(p, ", \"Fwd thread id\": ");
		p = put_i64(p, a->fwd_tid);
	}
	if (a && a->dims) {
		p = LIT(p, ", \"Input Dims\": ");
		p = put(p, a->dims, strlen(a->dims));
		p = LIT(p, ", \"Input type\": ");
		p = put(p, a->types, strlen(a->types));
	}
	if (a && a->extra) {
		p = LIT(p, ", ");
		p = put(p, a->extra, a->extra_len);
	}
	p = LIT(p, ", \"Ev Idx\": ");
	p = put_u64(p, g->ev_idx++);
	p = LIT(p, "\n    }\n  }");
	out_end(g->o, p);
}

static void emit_flow(struct gen *g, bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts)
{
	char *p = ev_begin(g);

	p = start ? LIT(p, "  {\n    \"ph\": \"s\", \"id\": ")
		  : LIT(p, "  {\n    \"ph\": \"f\", \"id\": ");
	p = put_u64(p, id);
	p = LIT(p, ", \"pid\": ");
	p = put_i64(p, pid);
	p = LIT(p, ", \"tid\": ");
	p = put_i64(p, tid);
	p = LIT(p, ", \"ts\": ");
	p = put_us(p, ts);
	p = start ? LIT(p, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }")
		  : LIT(p, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }");
	out_end(g->o, p);
}

static void emit_call(struct gen *g, int th, const struct api_desc *api, const struct call *c)
{
	char *p = ev_begin(g);

	p = put_x_head(p, api->cat, api->name, strlen(api->name), g->pid, g->tid[th], c->ts,
		       c->dur);
	p = put_u64(p, c->ext);
	p = LIT(p, ", \"cbid\": ");
	p = put_i64(p, api->cbid);
	p = LIT(p, ", \"correlation\": ");
	p = put_u64(p, c->corr);
	p = LIT(p, "\n    }\n  }");
	out_end(g->o, p);
	if (api->flow)
		emit_flow(g, true, c->corr, g->pid, g->tid[th], c->ts);
}

/* A kernel, copy or set; tail: the args after "correlation". */
static void emit_gpu(struct gen *g, const char *cat, const char *name, size_t name_len, int st,
		     int64_t ts, int64_t dur, const struct call *c, const char *tail,
		     size_t tail_len)
{
	char *p = ev_begin(g);
	bool kernel = cat[0] == 'k';

	p = put_x_head(p, cat, name, name_len, 0, stream_id[st], ts, dur);
	p = put_u64(p, c->ext);
	p = kernel ? LIT(p, ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": ")
		   : LIT(p, ", \"device\": 0, \"context\": 1, \"stream\": ");
	p = put_i64(p, stream_id[st]);
	p = LIT(p, ", \"correlation\": ");
	p = put_u64(p, c->corr);
	p = LIT(p, ", ");
	p = put(p, tail, tail_len);
	p = LIT(p, "\n    }\n  }");
	out_end(g->o, p);
	emit_flow(g, false, c->corr, 0, stream_id[st], ts);
}

/* The cuda_sync event of a wait or sync call, inside the call's time. */
static void emit_sync(struct gen *g, int st, const struct call *c, const struct evrec *r)
{
	int64_t ts = c->ts + 300, dur = c->dur > 700 ? c->dur - 600 : 100;
	const char *kind = r ? "Stream Wait Event" : "Stream Sync";
	char *p = ev_begin(g);

	p = put_x_head(p, "cuda_sync", kind, strlen(kind), 0, stream_id[st], ts, dur);
	p = put_u64(p, c->ext);
	p = LIT(p, ", \"cuda_sync_kind\": \"");
	p = put(p, kind, strlen(kind));
	if (r) {
		p = LIT(p, "\", \"wait_on_stream\": ");
		p = put_i64(p, stream_id[r->stream]);
		p = LIT(p, ", \"wait_on_cuda_event_record_corr_id\": ");
		p = put_u64(p, r->corr);
		p = LIT(p, ", \"wait_on_cuda_event_id\": ");
		p = put_u64(p, r->id);
		p = LIT(p, ", \"stream\": ");
	} else {
		p = LIT(p, "\", \"stream\": ");
	}
	p = put_i64(p, stream_id[st]);
	p = LIT(p, ", \"correlation\": ");
	p = put_u64(p, c->corr);
	p = LIT(p, ", \"device\": 0, \"context\": 1\n    }\n  }");
	out_end(g->o, p);
	emit_flow(g, false, c->corr, 0, stream_id[st], ts);
}

/* ---- the simulation: calls, GPU tasks, ops ------------------------------------------------ */

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
	const struct kernel_text *kt = &ktext[k];
	int64_t lag = g->free[ST_COMPUTE] - g->now[th];
	int64_t until = lag > MAX_LAG_NS ? g->free[ST_COMPUTE] - MAX_LAG_NS : 0;
	struct call c = api_call(g, th, kd->api, ext, until);
	int64_t start = gpu_start(g, &c, ST_COMPUTE);
	int64_t dur = jit(g, (int64_t)kd->mean_us * 1000);

	gpu_done(g, ST_COMPUTE, start + dur);
	if (!g->cpu_pass)
		emit_gpu(g, "kernel", kd->name, kt->name_len, ST_COMPUTE, start, dur, &c, kt->tail,
			 kt->tail_len);
	g->now[th] += jit(g, 1200);
}

enum copy { COPY_H2D, COPY_D2H, COPY_D2D, COPY_SET };

static void copy(struct gen *g, int th, uint64_t ext, enum copy kind, int st, uint64_t bytes)
{
	static const char *const names[] = { "Memcpy HtoD (Pinned -> Device)",
					     "Memcpy DtoH (Device -> Pageable)",
					     "Memcpy DtoD (Device -> Device)", "Memset (Device)" };
	static const uint64_t bytes_per_us[] = { 22000, 18000, 1300000, 1500000 };
	struct call c = api_call(g, th, kind == COPY_SET ? API_MEMSET : API_MEMCPY, ext, 0);
	int64_t start = gpu_start(g, &c, st);
	int64_t dur = jit(g, 1500 + (int64_t)(bytes * 1000 / bytes_per_us[kind]));
	char tail[128], *p = tail;
	uint64_t bw = bytes * 1000000 / (uint64_t)dur; /* GB/s × 10^6 */

	gpu_done(g, st, start + dur);
	g->now[th] += jit(g, 1000);
	if (g->cpu_pass)
		return;
	p = LIT(p, "\"bytes\": ");
	p = put_u64(p, bytes);
	p = LIT(p, ", \"memory bandwidth (GB/s)\": ");
	p = put_fixed6(p, bw);
	emit_gpu(g, kind == COPY_SET ? "gpu_memset" : "gpu_memcpy", names[kind],
		 strlen(names[kind]), st, start, dur, &c, tail, (size_t)(p - tail));
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

/* The collective's args, as on record_param_comms and (copied by Kineto) on the kernel. */
static size_t coll_args(struct gen *g, char *buf, bool gather, uint64_t nelems)
{
	char *p = buf;

	p = gather ? LIT(p, "\"Collective name\": \"_allgather_base\", \"In msg nelems\": ")
		   : LIT(p, "\"Collective name\": \"allreduce\", \"In msg nelems\": ");
	p = put_u64(p, gather ? nelems / (uint64_t)g->world : nelems);
	p = LIT(p, ", \"Out msg nelems\": ");
	p = put_u64(p, nelems);
	p = LIT(p, ", \"dtype\": \"BFloat16\", ");
	p = put(p, g->pg, g->pg_len);
	return (size_t)(p - buf);
}

static void emit_coll(struct gen *g, int th, bool gather, uint64_t nelems, const int64_t t[4],
		      uint64_t ext, uint64_t aext)
{
	char args[9216], *p = args;
	struct op_args a = { -1, 0, NULL, NULL, args, 0 };

	p += coll_args(g, p, gather, nelems);
	p = LIT(p, ", \"Rank\": ");
	p = put_i64(p, g->rank);
	p = LIT(p, ", \"Global rank start\": 0, \"Global rank stride\": 1, \"Seq\": ");
	p = put_u64(p, g->coll_seq);
	p = LIT(p, ", \"Is asynchronized op\": false");
	a.extra_len = (size_t)(p - args);
	emit_op(g, th, "cpu_op", "record_param_comms", t[0], t[3] - t[0], ext, &a);
	emit_op(g, th, "user_annotation", gather ? "nccl:_all_gather_base" : "nccl:all_reduce",
		t[1], t[2] - t[1], aext, NULL);
}

/*
 * A ProcessGroupNCCL collective: the NCCL stream waits for the compute stream, the kernel
 * runs, an event is recorded after it; returned so the compute stream can wait for it.
 */
static struct evrec collective(struct gen *g, int th, bool gather, uint64_t nelems)
{
	int k = gather ? K_ALLGATHER : K_ALLREDUCE;
	const struct kernel_text *kt = &ktext[k];
	uint64_t ext = ++g->ext, aext;
	int64_t t[4], start, dur;
	struct evrec r;
	struct call c;
	char tail[9216], *p;

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
	if (!g->cpu_pass) {
		p = put(tail, kt->tail, kt->tail_len);
		p = LIT(p, ", ");
		p += coll_args(g, p, gather, nelems);
		emit_gpu(g, "kernel", kernels[k].name, kt->name_len, ST_NCCL, start, dur, &c, tail,
			 (size_t)(p - tail));
	}
	g->now[th] += jit(g, 2000);
	r = record(g, th, ext, ST_NCCL);
	t[2] = g->now[th] + jit(g, 3000);
	t[3] = g->now[th] = t[2] + jit(g, 2000);
	if (g->cpu_pass)
		emit_coll(g, th, gather, nelems, t, ext, aext);
	return r;
}

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

#define FIRST_STEP    100
#define START_SKEW_NS 37511 /* rank K starts K × this later */
#define LEAD_NS       41377 /* the profiler window opens this long before the first step */

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

static char *put_ranks(char *p, int world)
{
	for (int r = 0; r < world; r++) {
		if (r)
			p = LIT(p, ", ");
		p = put_i64(p, r);
	}
	return p;
}

static void header(struct gen *g)
{
	char *p = out_begin(g->o);

	p = LIT(p, "\n{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n"
		   "      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": "
		   "85029158912,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n"
		   "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
		   "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
		   "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
		   "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
		   "\"sharedMemPerMultiprocessor\": 233472\n    }\n  ],\n"
		   "  \"cupti_version\": 24,\n  \"cuda_runtime_version\": 12040,\n"
		   "  \"cuda_driver_version\": 12040,\n"
		   "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
	p = put_i64(p, g->rank);
	p = LIT(p, ", \"world_size\": ");
	p = put_i64(p, g->world);
	p = LIT(p, ", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": "
		   "\"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": ");
	p = put_i64(p, g->world);
	p = LIT(p, ", \"ranks\": [");
	p = put_ranks(p, g->world);
	p = LIT(p, "]}], \"nccl_version\": \"2.21.5\"},\n  \"record_shapes\": 1,\n"
		   "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
	p = put_i64(p, BASE_NS);
	p = LIT(p, ",\n  \"traceEvents\": [\n");
	out_end(g->o, p);
}

static void emit_meta(struct gen *g, const char *name, int64_t pid, int64_t tid, const char *key,
		      const char *sval, int64_t ival)
{
	char *p = ev_begin(g);

	p = LIT(p, "  {\n    \"name\": \"");
	p = put(p, name, strlen(name));
	p = LIT(p, "\", \"ph\": \"M\", \"ts\": ");
	p = put_us(p, T0_NS + (int64_t)g->rank * START_SKEW_NS - LEAD_NS);
	p = LIT(p, ", \"pid\": ");
	p = put_i64(p, pid);
	p = LIT(p, ", \"tid\": ");
	p = put_i64(p, tid);
	p = LIT(p, ",\n    \"args\": {\n      \"");
	p = put(p, key, strlen(key));
	p = LIT(p, "\": ");
	if (sval) {
		*p++ = '"';
		p = put(p, sval, strlen(sval));
		*p++ = '"';
	} else {
		p = put_i64(p, ival);
	}
	p = LIT(p, "\n    }\n  }");
	out_end(g->o, p);
}

static void metadata(struct gen *g)
{
	char name[64];

	emit_meta(g, "process_name", g->pid, 0, "name", "python3", 0);
	emit_meta(g, "process_labels", g->pid, 0, "labels", "CPU", 0);
	emit_meta(g, "process_sort_index", g->pid, 0, "sort_index", NULL, g->pid);
	emit_meta(g, "process_name", 0, 0, "name", "python3", 0);
	emit_meta(g, "process_labels", 0, 0, "labels", "GPU 0", 0);
	emit_meta(g, "process_sort_index", 0, 0, "sort_index", NULL, 5000000);
	for (int s = 0; s < N_STREAMS; s++) {
		snprintf(name, sizeof(name), "stream %d ", stream_id[s]);
		emit_meta(g, "thread_name", 0, stream_id[s], "name", name, 0);
		emit_meta(g, "thread_sort_index", 0, stream_id[s], "sort_index", NULL,
			  stream_id[s]);
	}
	for (int t = 0; t < 2; t++) {
		snprintf(name, sizeof(name), "thread %lld (%s)", (long long)g->tid[t],
			 t == TH_MAIN ? "pt_main_thread" : "pt_autograd_0");
		emit_meta(g, "thread_name", g->pid, g->tid[t], "name", name, 0);
		emit_meta(g, "thread_sort_index", g->pid, g->tid[t], "sort_index", NULL, g->tid[t]);
	}
}

static void trailer(struct gen *g, const char *trace_name)
{
	int64_t t0 = T0_NS + (int64_t)g->rank * START_SKEW_NS - LEAD_NS, t1 = g->t_end + 187211;
	char *p = ev_begin(g);

	p = LIT(p, "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
	p = put_us(p, t0);
	p = LIT(p, ", \"dur\": ");
	p = put_us(p, t1 - t0);
	p = LIT(p, ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
		   "    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n"
		   "      \"Op count\": 0\n    }\n  },\n  {\n    \"name\": \"process_sort_index\", "
		   "\"ph\": \"M\", \"ts\": ");
	p = put_us(p, t0);
	p = LIT(p, ",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n"
		   "      \"sort_index\": 536870912\n    }\n  },\n  {\n"
		   "    \"name\": \"Iteration Start: PyTorch "
		   "Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
		   "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
	p = put_us(p, t0);
	p = LIT(p,
		"\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
		"    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
	p = put_us(p, t1);
	p = LIT(p, "\n  }\n  ],\n  \"traceName\": \"");
	for (const char *s = trace_name; *s && s - trace_name < 4096; s++) {
		if (*s == '"' || *s == '\\')
			*p++ = '\\';
		if ((unsigned char)*s >= 0x20)
			*p++ = *s;
	}
	p = LIT(p, "\"\n}\n");
	out_end(g->o, p);
	g->events += 3;
}

/* Both passes over the same simulation: CPU ops first, then the CUPTI activity. */
static void generate(struct gen *g, uint64_t groups, const char *trace_name)
{
	g->first = true;
	g->events = 0;
	g->t_end = 0;
	header(g);
	metadata(g);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t left = groups;

		sim_reset(g, pass == 0);
		for (uint64_t s = FIRST_STEP; left > 0; s++) {
			uint64_t n = left < GROUPS_PER_STEP ? left : GROUPS_PER_STEP;

			step(g, s, n);
			left -= n;
		}
	}
	trailer(g, trace_name);
	out_flush(g->o);
}

static void gen_init(struct gen *g, struct out *o, uint64_t seed, int rank, int world)
{
	char *p = g->pg;

	memset(g, 0, sizeof(*g));
	g->o = o;
	g->seed = seed;
	g->rank = rank;
	g->world = world;
	g->pid = 48213 + 7 * (int64_t)rank;
	g->tid[TH_MAIN] = g->pid;
	g->tid[TH_BWD] = g->pid + 348;
	p = LIT(p, "\"Group size\": ");
	p = put_i64(p, world);
	p = LIT(p, ", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
		   "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
		   "\"Process Group Ranks\": \"[");
	p = put_ranks(p, world);
	p = LIT(p, "]\"");
	g->pg_len = (size_t)(p - g->pg);
}

/* ---- command line ----------------------------------------------------------------------- */

struct opts {
	const char *output; /* NULL: stdout */
	uint64_t size_mb, seed;
	int ranks;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "gen-kineto: out of memory\n");
		exit(1);
	}
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Groups (launches and the like) for size_bytes per file: measured on one step's worth. */
static uint64_t groups_for(const struct opts *o, uint64_t size_bytes, char *buf)
{
	struct out cnt = { -1, buf, 0, 0, 0 };
	struct gen *g = xmalloc(sizeof(*g));
	uint64_t groups;

	gen_init(g, &cnt, o->seed, 0, o->ranks);
	generate(g, 2 * GROUPS_PER_STEP, "calibration");
	groups = (uint64_t)((double)size_bytes / (double)cnt.flushed * 2 * GROUPS_PER_STEP);
	free(g);
	return groups ? groups : 1;
}

static int write_file(const struct opts *o, int rank, const char *path, uint64_t groups, char *buf)
{
	char tmp[4200];
	struct out out = { STDOUT_FILENO, buf, 0, 0, 0 };
	struct gen *g = xmalloc(sizeof(*g));
	double t0 = now_s(), dt;
	int ret = 0;

	if (path) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		out.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out.fd < 0) {
			fprintf(stderr, "gen-kineto: cannot create '%s': %s\n", tmp,
				strerror(errno));
			free(g);
			return -1;
		}
	}
	gen_init(g, &out, o->seed, rank, o->ranks);
	generate(g, groups, path ? path : "stdout");
	if (path && close(out.fd) < 0 && !out.err)
		out.err = errno;
	if (path && !out.err && rename(tmp, path) < 0)
		out.err = errno;
	dt = now_s() - t0;
	if (out.err) {
		fprintf(stderr, "gen-kineto: cannot write '%s': %s\n", path ? path : "stdout",
			strerror(out.err));
		if (path)
			unlink(tmp);
		ret = -1;
	} else {
		fprintf(stderr, "gen-kineto: %s: %llu bytes, %llu events in %.2f s (%.0f MB/s)\n",
			path ? path : "stdout", (unsigned long long)out.flushed,
			(unsigned long long)g->events, dt, (double)out.flushed / 1e6 / dt);
	}
	free(g);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen-kineto [-o FILE] [--size-mb N] [--ranks R] [--seed S]\n"
		   "  -o, --output FILE  write here (default: stdout); with --ranks R > 1, a\n"
		   "                     directory that gets rank-K.trace.json for K < R\n"
		   "  --size-mb N        about N MB (10^6 bytes) in all (default 600)\n"
		   "  --ranks R          R ranks, one file each of N/R MB (default 1)\n"
		   "  --seed S           another seed, another trace (default 1)\n");
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

/* Returns -1 to go on, or the exit status. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "size-mb", required_argument, NULL, 'm' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		} else if (c == 'o') {
			o->output = strcmp(optarg, "-") ? optarg : NULL;
		} else if (c == 'm' && parse_u64(optarg, 1, 1000000, &v)) {
			o->size_mb = v;
		} else if (c == 'r' && parse_u64(optarg, 1, 1024, &v)) {
			o->ranks = (int)v;
		} else if (c == 's' && parse_u64(optarg, 0, UINT64_MAX, &v)) {
			o->seed = v;
		} else {
			if (c != '?')
				fprintf(stderr, "gen-kineto: bad value '%s'\n", optarg);
			usage(stderr);
			return 2;
		}
	}
	if (o->ranks > 1 && !o->output)
		fprintf(stderr, "gen-kineto: --ranks %d needs -o DIR\n", o->ranks);
	if (optind < argc || (o->ranks > 1 && !o->output) ||
	    (o->output && strlen(o->output) > 4000)) {
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { NULL, 600, 1, 1 };
	char path[4100], *buf;
	uint64_t groups;
	int ret = parse_opts(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.ranks > 1 && mkdir(o.output, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "gen-kineto: cannot create '%s': %s\n", o.output, strerror(errno));
		return 1;
	}
	kernels_init();
	buf = xmalloc(OUT_BUF_BYTES);
	groups = groups_for(&o, o.size_mb * 1000000 / (uint64_t)o.ranks, buf);
	ret = 0;
	for (int r = 0; r < o.ranks && !ret; r++) {
		if (o.ranks > 1)
			snprintf(path, sizeof(path), "%s/rank-%d.trace.json", o.output, r);
		ret = write_file(&o, r, o.ranks > 1 ? path : o.output, groups, buf);
	}
	free(buf);
	return ret ? 1 : 0;
}
