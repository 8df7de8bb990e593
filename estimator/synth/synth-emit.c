/* SPDX-License-Identifier: MIT */
/*
 * The placed step as a trace: Chrome trace-event JSON in Kineto's dialect with one rank
 * per stage, as orr_trace_write_chrome() writes several ranks (a process for each
 * rank's launch thread and one for its GPU, the ranks' Kineto headers in
 * "orreryRanks").  Kernels are launched by cudaLaunchKernel and found by correlation;
 * NCCL kernels carry their collective (name, sizes, group, communicator and sequence
 * number, the same on both sides of a transfer); waits are cudaEventRecord and
 * cudaStreamWaitEvent with the wait's cuda_sync record, so that the graph builds every
 * dependency from the trace's own records, none inferred.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"
#include "banned.h"

#define STREAM_TID0 7 /* the compute stream's id, as PyTorch's default stream often is */
#define THREAD_TID  1

static const char *const stream_names[SY_STREAMS] = {
	[SY_COMPUTE] = "compute",
	[SY_TP] = "TP NCCL",
	[SY_DP] = "DP NCCL",
	[SY_CP] = "CP NCCL",
	[SY_SEND_NEXT] = "send to next stage",
	[SY_RECV_PREV] = "receive from previous stage",
	[SY_SEND_PREV] = "send to previous stage",
	[SY_RECV_NEXT] = "receive from next stage",
};

struct out {
	char *buf;
	size_t len, cap;
	const struct sy_job *j;
	int64_t corr;
	bool first;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < o->cap - o->len)
			break;
		o->buf = orr_xgrow(o->buf, 1, &o->cap, o->len + (size_t)n + 1);
	}
	o->len += (size_t)n;
}

/* The events' hot path, without printf: a string, a non-negative integer. */
static void put_s(struct out *o, const char *str)
{
	size_t n = strlen(str);

	if (o->len + n + 1 > o->cap)
		o->buf = orr_xgrow(o->buf, 1, &o->cap, o->len + n + 1);
	memcpy(o->buf + o->len, str, n + 1);
	o->len += n;
}

static void put_u(struct out *o, int64_t v, int min_digits)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 || n < min_digits);
	if (o->len + (size_t)n + 1 > o->cap)
		o->buf = orr_xgrow(o->buf, 1, &o->cap, o->len + (size_t)n + 1);
	while (n > 0)
		o->buf[o->len++] = tmp[--n];
	o->buf[o->len] = '\0';
}

/* ,"key":N: a count, or with us a time in ns written in microseconds (Kineto's unit). */
static void field(struct out *o, const char *key, int64_t v, bool us)
{
	put_s(o, ",\"");
	put_s(o, key);
	put_s(o, "\":");
	if (!us) {
		put_u(o, v, 1);
		return;
	}
	put_u(o, v / 1000, 1);
	put_s(o, ".");
	put_u(o, v % 1000, 3);
}

static void begin(struct out *o)
{
	put_s(o, o->first ? "\n" : ",\n");
	o->first = false;
}

/* An X event's head: {"ph":"X","cat":..,"name":..,"pid":..,"tid":..,"ts":..,"dur":.. */
static void x_event(struct out *o, const char *cat, const char *name, int pid, int tid,
		    int64_t start_ns, int64_t end_ns)
{
	begin(o);
	put_s(o, "{\"ph\":\"X\",\"cat\":\"");
	put_s(o, cat);
	put_s(o, "\",\"name\":\"");
	put_s(o, name);
	put_s(o, "\"");
	field(o, "pid", pid, false);
	field(o, "tid", tid, false);
	field(o, "ts", start_ns, true);
	field(o, "dur", end_ns - start_ns, true);
}

/* ,"args":{"External id":c,"correlation":c (left open) */
static void corr_args(struct out *o, int64_t c)
{
	put_s(o, ",\"args\":{\"External id\":");
	put_u(o, c, 1);
	field(o, "correlation", c, false);
}

static const char *dtype_name(const struct sy_job *j)
{
	return j->dtype == ORR_DTYPE_BF16   ? "BFloat16"
	       : j->dtype == ORR_DTYPE_FP16 ? "Half"
					    : "Float";
}

static const char *coll_name(const struct sy_insn *x, const struct sy_label *l)
{
	switch (l->coll) {
	case ORR_COLL_ALL_REDUCE:
		return "allreduce";
	case ORR_COLL_ALL_GATHER:
		return "_allgather_base";
	case ORR_COLL_REDUCE_SCATTER:
		return "_reduce_scatter_base";
	case ORR_COLL_BROADCAST: /* Megatron's broadcast_data */
		return "broadcast";
	case ORR_COLL_REDUCE:
		return "reduce";
	case ORR_COLL_ALL_TO_ALL:
		return "all_to_all";
	default:
		return x->stream == SY_SEND_NEXT || x->stream == SY_SEND_PREV ? "send" : "recv";
	}
}

/* The communicator: one per group, and per pair and direction of stages. */
static void pg_name(char *buf, size_t size, const struct sy_rank *r, const struct sy_insn *x)
{
	switch (x->stream) {
	case SY_TP:
		snprintf(buf, size, "tp.%d", r->stage);
		break;
	case SY_DP:
		snprintf(buf, size, "dp.%d", r->stage);
		break;
	case SY_CP:
		snprintf(buf, size, "cp.%d", r->stage);
		break;
	case SY_SEND_NEXT:
	case SY_SEND_PREV:
		snprintf(buf, size, "pp.%d>%d", r->stage, x->peer);
		break;
	default:
		snprintf(buf, size, "pp.%d>%d", x->peer, r->stage);
		break;
	}
}

static void coll_args(struct out *o, const struct sy_rank *r, const struct sy_insn *x,
		      const struct sy_label *l, int64_t seq)
{
	double elems = l->bytes / o->j->elem_bytes, in = elems, out = elems;
	char pg[48];

	if (l->coll == ORR_COLL_ALL_GATHER)
		in = elems / l->group;
	else if (l->coll == ORR_COLL_REDUCE_SCATTER)
		out = elems / l->group;
	pg_name(pg, sizeof(pg), r, x);
	put(o,
	    ",\"Collective name\":\"%s\",\"dtype\":\"%s\",\"In msg nelems\":%.0f,"
	    "\"Out msg nelems\":%.0f,\"Group size\":%d,\"Process Group Name\":\"%s\","
	    "\"Process Group Description\":\"%s\",\"Seq\":%" PRId64,
	    coll_name(x, l), dtype_name(o->j), in, out, l->group, pg, stream_names[x->stream], seq);
}

static void launch(struct out *o, const struct sy_rank *r, size_t i, int pid, int64_t from,
		   int64_t seq)
{
	const struct sy_insn *x = &r->v[i];
	const struct sy_label *l = &r->l[i];
	int64_t c = ++o->corr;

	x_event(o, "cuda_runtime", "cudaLaunchKernel", pid, THREAD_TID, from, x->cpu_end_ns);
	corr_args(o, c);
	put_s(o, "}}");
	x_event(o, "kernel", l->name, pid + 1, STREAM_TID0 + x->stream, x->start_ns, x->end_ns);
	corr_args(o, c);
	field(o, "stream", STREAM_TID0 + x->stream, false);
	if (x->op == SY_COLL)
		coll_args(o, r, x, l, seq);
	put_s(o, "}}");
}

static void event_record(struct out *o, int64_t corr, int pid, int64_t from, int64_t to)
{
	x_event(o, "cuda_runtime", "cudaEventRecord", pid, THREAD_TID, from, to);
	put(o, ",\"args\":{\"External id\":%" PRId64 ",\"correlation\":%" PRId64 "}}", corr, corr);
}

/* A wait: its own event record (rec < 0), or the one of correlation rec made before. */
static void wait_event(struct out *o, const struct sy_insn *x, int pid, int64_t from, int64_t rec)
{
	int64_t wait;
	int stream = STREAM_TID0 + x->stream;

	if (rec < 0) {
		rec = ++o->corr;
		event_record(o, rec, pid, from, from + 1);
		from++;
	}
	wait = ++o->corr;
	x_event(o, "cuda_runtime", "cudaStreamWaitEvent", pid, THREAD_TID, from, x->cpu_end_ns);
	put(o, ",\"args\":{\"External id\":%" PRId64 ",\"correlation\":%" PRId64 "}}", wait, wait);
	x_event(o, "cuda_sync", "Stream Wait Event", pid + 1, stream, x->start_ns, x->end_ns);
	put(o,
	    ",\"args\":{\"External id\":%" PRId64 ",\"correlation\":%" PRId64
	    ",\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":%d,"
	    "\"wait_on_cuda_event_record_corr_id\":%" PRId64 ",\"wait_on_cuda_event_id\":%" PRId64
	    ",\"stream\":%d}}",
	    wait, wait, STREAM_TID0 + x->src, rec, rec, stream);
}

static void metadata(struct out *o, const struct sy_rank *r, int pid)
{
	begin(o);
	put(o,
	    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":"
	    "\"rank %" PRId64 "\",\"rank\":%" PRId64 ",\"pid\":%d}},\n"
	    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
	    "\"thread %d (launch)\"}},\n"
	    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":"
	    "\"rank %" PRId64 " GPU 0\",\"rank\":%" PRId64 ",\"device\":0}}",
	    pid, r->rank, r->rank, pid, pid, THREAD_TID, THREAD_TID, pid + 1, r->rank, r->rank);
	for (int s = 0; s < SY_STREAMS; s++)
		put(o,
		    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{"
		    "\"name\":\"stream %d %s\"}}",
		    pid + 1, STREAM_TID0 + s, STREAM_TID0 + s, stream_names[s]);
}

static void rank_events(struct out *o, const struct sy_rank *r, int pid)
{
	int64_t seq[SY_STREAMS] = { 0 }, end = 0;
	int64_t *rec = orr_xcalloc(r->n ? r->n : 1, sizeof(*rec)); /* records' correlations */

	metadata(o, r, pid);
	for (size_t i = 0; i < r->n; i++) {
		const struct sy_insn *x = &r->v[i];
		int64_t from = orr__sy_cpu_start_ns(r, i);

		if (x->cpu_end_ns > end)
			end = x->cpu_end_ns;
		if (x->op == SY_KERNEL || x->op == SY_COLL)
			launch(o, r, i, pid, from,
			       x->peer >= 0 ? orr__sy_p2p_seq(r, i) : ++seq[x->stream]);
		else if (x->op == SY_RECORD)
			event_record(o, rec[i] = ++o->corr, pid, from, x->cpu_end_ns);
		else if (x->op == SY_WAIT && x->partner != UINT32_MAX)
			wait_event(o, x, pid, from, x->rec != UINT32_MAX ? rec[x->rec] : -1);
		else if (x->op == SY_SYNC) {
			x_event(o, "cuda_runtime", "cudaDeviceSynchronize", pid, THREAD_TID, from,
				x->cpu_end_ns);
			put(o, ",\"args\":{\"correlation\":%" PRId64 "}}", ++o->corr);
		}
	}
	x_event(o, "user_annotation", "ProfilerStep#1", pid, THREAD_TID, 0, end);
	put(o, ",\"args\":{}}");
	free(rec);
}

/* A rank's Kineto header: its device, as the hardware table names it, and its rank. */
static void header(struct out *o, const struct sy_rank *r)
{
	const struct orr_gpu_spec *gpu = o->j->k->gpu;
	const char *bar = strchr(gpu->match, '|');
	int len = (int)(bar ? (size_t)(bar - gpu->match) : strlen(gpu->match));

	if (len > 0 && gpu->match[len - 1] == '*')
		len--;
	put(o,
	    "%s{\"deviceProperties\":[{\"id\":0,\"name\":\"%.*s\",\"totalGlobalMem\":%.0f}],"
	    "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":%" PRId64 ",\"world_size\":%" PRId64
	    "}}",
	    r->stage ? ",\n" : "\n", len, gpu->match, gpu->hbm_bytes, r->rank,
	    o->j->c->tp * o->j->c->dp * o->j->c->cp * o->j->c->pp);
}

char *orr__sy_emit(const struct sy_job *j, size_t *ret_len)
{
	struct out o = { .j = j, .first = true };

	o.cap = 1 << 16;
	o.buf = orr_xmalloc(o.cap);
	put(&o, "{\"schemaVersion\":1,\"orreryRanks\":[");
	for (size_t r = 0; r < j->nranks; r++)
		header(&o, &j->ranks[r]);
	put(&o, "],\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
	for (size_t r = 0; r < j->nranks; r++)
		rank_events(&o, &j->ranks[r], (int)(2 * r + 1));
	put(&o, "\n]}\n");
	*ret_len = o.len;
	return o.buf;
}
