/* SPDX-License-Identifier: MIT */
/*
 * The event writers of gen-kineto (see gen-kineto.h): every byte of its JSON, in the
 * layout of Kineto's output_json.cpp.  For speed they format by hand into the output
 * buffer, with no stdio on the hot path: each event reserves EVENT_MAX_BYTES first.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gen-kineto.h"
#include "../common/banned.h"

#define EVENT_MAX_BYTES (16u << 10) /* room reserved before each event */

static const int stream_id[N_STREAMS] = { 7, 13, 20 };

/* ---- output buffer ------------------------------------------------------------------ */

void out_flush(struct out *o)
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

static char *put_ranks(char *p, int world)
{
	for (int r = 0; r < world; r++) {
		if (r)
			p = LIT(p, ", ");
		p = put_i64(p, r);
	}
	return p;
}

/* What kernels_init() derives from a kernel once: its name's length, its constant args. */
struct kernel_text {
	size_t name_len;
	char tail[192];
	size_t tail_len;
};
static struct kernel_text ktext[N_KERNELS];

void kernels_init(void)
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

void emit_op(struct gen *g, int th, const char *cat, const char *name, int64_t ts, int64_t dur,
	     uint64_t ext, const struct op_args *a)
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

void emit_call(struct gen *g, int th, const struct api_desc *api, const struct call *c)
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
void emit_sync(struct gen *g, int st, const struct call *c, const struct evrec *r)
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

void emit_kernel(struct gen *g, int k, int st, int64_t ts, int64_t dur, const struct call *c)
{
	const struct kernel_text *kt = &ktext[k];

	emit_gpu(g, "kernel", kernels[k].name, kt->name_len, st, ts, dur, c, kt->tail,
		 kt->tail_len);
}

void emit_copy(struct gen *g, enum copy kind, int st, int64_t ts, int64_t dur, const struct call *c,
	       uint64_t bytes)
{
	static const char *const names[] = { "Memcpy HtoD (Pinned -> Device)",
					     "Memcpy DtoH (Device -> Pageable)",
					     "Memcpy DtoD (Device -> Device)", "Memset (Device)" };
	char tail[128], *p = tail;
	uint64_t bw = bytes * 1000000 / (uint64_t)dur; /* GB/s × 10^6 */

	p = LIT(p, "\"bytes\": ");
	p = put_u64(p, bytes);
	p = LIT(p, ", \"memory bandwidth (GB/s)\": ");
	p = put_fixed6(p, bw);
	emit_gpu(g, kind == COPY_SET ? "gpu_memset" : "gpu_memcpy", names[kind],
		 strlen(names[kind]), st, ts, dur, c, tail, (size_t)(p - tail));
}

/* ---- collectives ---------------------------------------------------------------------- */

/* The constant args of every collective: the process group. */
void coll_args_init(struct gen *g)
{
	char *p = g->pg;

	p = LIT(p, "\"Group size\": ");
	p = put_i64(p, g->world);
	p = LIT(p, ", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
		   "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
		   "\"Process Group Ranks\": \"[");
	p = put_ranks(p, g->world);
	p = LIT(p, "]\"");
	g->pg_len = (size_t)(p - g->pg);
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

void emit_coll_kernel(struct gen *g, bool gather, uint64_t nelems, int64_t ts, int64_t dur,
		      const struct call *c)
{
	int k = gather ? K_ALLGATHER : K_ALLREDUCE;
	const struct kernel_text *kt = &ktext[k];
	char tail[9216], *p;

	p = put(tail, kt->tail, kt->tail_len);
	p = LIT(p, ", ");
	p += coll_args(g, p, gather, nelems);
	emit_gpu(g, "kernel", kernels[k].name, kt->name_len, ST_NCCL, ts, dur, c, tail,
		 (size_t)(p - tail));
}

void emit_coll(struct gen *g, int th, bool gather, uint64_t nelems, const int64_t t[4],
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

/* ---- whole files ------------------------------------------------------------------------ */

void emit_header(struct gen *g)
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

void emit_metadata(struct gen *g)
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

void emit_trailer(struct gen *g, const char *trace_name)
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
