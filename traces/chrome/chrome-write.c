/* SPDX-License-Identifier: MIT */
/*
 * The trace model -> Chrome trace-event JSON in Kineto's dialect (what torch.profiler
 * exports), for Perfetto and chrome://tracing, and for reading back: every field our
 * Kineto importer reads is written the way it reads it, so that a one-rank file
 * imports to the same model (tests/unit/test-traces-chrome.c lists what cannot).
 * docs/orrery-convert.md describes the output; the choices the round trip decides:
 * - ts/dur are microseconds with three decimals from baseTimeNanoseconds: exact ns.
 * - A correlation that came from an ac2g flow (ORR_EVENT_F_FLOW_LINKED) is written as
 *   the flow only, so that it reads back flow-linked; every other one is in args.
 * - A collective the importer derives from an NCCL kernel's name is not written.
 * - Cross-stream waits are flow v2 attributes (bind_id, flow_out/flow_in) on the two
 *   complete events: Perfetto draws them, Kineto readers ignore them.
 * - Several ranks in one file get processes of their own, named after their rank and
 *   saying their own pid or device, flow ids unique per rank, GPU events no "device",
 *   and each rank's header in "orreryRanks", so that viewers keep them apart and the
 *   importer splits them again (traces/chrome/chrome-split.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../internal.h"
#include "../json-text.h"
#include "banned.h"

/* Sorted correlation ids of one rank. */
struct corr_set {
	int64_t *v;
	size_t n, cap;
};

struct chrome {
	FILE *f;
	const struct orr_trace *t;
	const struct orr_rank *r; /* the rank being written */
	size_t k, nranks;         /* its index among the ranks of the file, their count */
	int64_t base_ns;          /* what ts is relative to */
	bool multi;               /* several ranks in the file */
	bool first_event, first_arg;
	int64_t *wpid;    /* the pid written for each place of r */
	int64_t next_pid; /* several ranks: the next synthetic pid */
	/* launch calls, GPU tasks (for ac2g); event-record calls, awaited records (waits) */
	struct corr_set launches, tasks, records, awaited;
	bool *mem_used; /* r's memory samples given to a "[memory]" marker */
};

static const char *str(const struct chrome *c, uint32_t id)
{
	return orr_trace_str(c->t, id);
}

static void next_event(struct chrome *c)
{
	fputs(c->first_event ? "\n" : ",\n", c->f);
	c->first_event = false;
}

static void arg_key(struct chrome *c, const char *key)
{
	fprintf(c->f, "%s\"%s\":", c->first_arg ? "" : ",", key);
	c->first_arg = false;
}

static void arg_i64(struct chrome *c, const char *key, int64_t v)
{
	arg_key(c, key);
	fprintf(c->f, "%lld", (long long)v);
}

static void arg_str(struct chrome *c, const char *key, uint32_t id)
{
	arg_key(c, key);
	orr__json_string(c->f, str(c, id));
}

static void put_members(FILE *f, const int32_t *m, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", m[i]);
	fputc(']', f);
}

/* ---- correlation sets ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static bool has(const struct corr_set *s, int64_t corr)
{
	return s->n && bsearch(&corr, s->v, s->n, sizeof(*s->v), cmp_i64);
}

static bool is_call(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_RUNTIME || e->kind == ORR_EVENT_DRIVER;
}

/* The GPU side of an ac2g flow: what the importer links flows to, besides calls. */
static bool is_flow_task(const struct orr_event *e)
{
	return e->kind == ORR_EVENT_KERNEL || e->kind == ORR_EVENT_MEMCPY ||
	       e->kind == ORR_EVENT_MEMSET || e->kind == ORR_EVENT_SYNC;
}

static bool on_gpu(const struct orr_event *e)
{
	return is_flow_task(e) || e->kind == ORR_EVENT_CUDA_EVENT;
}

/* The record a wait (stream wait or event sync) waits for, or -1. */
static int64_t awaited_record(const struct orr_rank *r, const struct orr_event *e)
{
	if (e->kind != ORR_EVENT_SYNC || e->args == ORR_NONE ||
	    (e->sub != ORR_SYNC_STREAM_WAIT && e->sub != ORR_SYNC_EVENT))
		return -1;
	return r->syncs[e->args].event_record_corr;
}

static void collect(struct chrome *c)
{
	const struct orr_rank *r = c->r;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];
		int64_t rec = awaited_record(r, e);

		if (is_call(e) && e->correlation >= 0) {
			ORR_VEC_PUSH(c->launches.v, c->launches.n, c->launches.cap, e->correlation);
			if (e->sub == ORR_CALL_EVENT_RECORD)
				ORR_VEC_PUSH(c->records.v, c->records.n, c->records.cap,
					     e->correlation);
		} else if (is_flow_task(e) && e->correlation >= 0) {
			ORR_VEC_PUSH(c->tasks.v, c->tasks.n, c->tasks.cap, e->correlation);
		}
		if (rec >= 0)
			ORR_VEC_PUSH(c->awaited.v, c->awaited.n, c->awaited.cap, rec);
	}
	struct corr_set *sets[] = { &c->launches, &c->tasks, &c->records, &c->awaited };
	for (size_t i = 0; i < 4; i++)
		if (sets[i]->n)
			qsort(sets[i]->v, sets[i]->n, sizeof(int64_t), cmp_i64);
}

/* Flow ids: the correlation itself for one rank; unique per rank for several. */
static bool flow_id(const struct chrome *c, int64_t corr, int64_t *ret)
{
	if (corr < 0 || corr > (INT64_MAX - (int64_t)c->k) / (int64_t)c->nranks)
		return false;
	*ret = corr * (int64_t)c->nranks + (int64_t)c->k;
	return true;
}

/* ---- events ---- */

static const char *category(const struct orr_event *e)
{
	static const char *const cats[ORR_EVENT_KIND_COUNT] = {
		[ORR_EVENT_OP] = "cpu_op",
		[ORR_EVENT_ANNOTATION] = "user_annotation",
		[ORR_EVENT_RUNTIME] = "cuda_runtime",
		[ORR_EVENT_DRIVER] = "cuda_driver",
		[ORR_EVENT_KERNEL] = "kernel",
		[ORR_EVENT_MEMCPY] = "gpu_memcpy",
		[ORR_EVENT_MEMSET] = "gpu_memset",
		[ORR_EVENT_SYNC] = "cuda_sync",
		[ORR_EVENT_CUDA_EVENT] = "cuda_event",
		[ORR_EVENT_MARKER] = "cpu_instant_event",
	};

	return e->kind < ORR_EVENT_KIND_COUNT ? cats[e->kind] : "unknown";
}

/* "Concrete Inputs", when the profiler wrote them: null for an input it gave none. */
static void concrete_inputs(struct chrome *c, const struct orr_rank *r,
			    const struct orr_op_args *op)
{
	const struct orr_input *in = &r->inputs[op->first_input];
	uint32_t i;

	for (i = 0; i < op->ninputs && !in[i].has_value; i++)
		;
	if (i == op->ninputs)
		return;
	arg_key(c, "Concrete Inputs");
	fputc('[', c->f);
	for (i = 0; i < op->ninputs; i++) {
		if (i)
			fputc(',', c->f);
		if (in[i].has_value)
			orr__json_string(c->f, str(c, in[i].value));
		else
			fputs("null", c->f);
	}
	fputc(']', c->f);
}

/*
 * One input's shape or strides v[0..n) as the profiler writes them: a list of integers,
 * or for a list of tensors a list of their lists (v: each member's count, then its
 * values); [null] for a list of tensors whose members are not known.
 */
static void put_shape(FILE *f, const int64_t *v, size_t n, bool is_list)
{
	size_t i = 0;

	fputc('[', f);
	if (is_list && !n)
		fputs("null", f);
	while (i < n) {
		size_t k = is_list ? (size_t)v[i++] : n;

		if (is_list)
			fputs(i > 1 ? ",[" : "[", f);
		for (size_t d = 0; d < k && i < n; d++, i++)
			fprintf(f, "%s%lld", d ? "," : "", (long long)v[i]);
		if (is_list)
			fputc(']', f);
	}
	fputc(']', f);
}

static void put_op_args(struct chrome *c, const struct orr_op_args *op)
{
	const struct orr_rank *r = c->r;
	const struct orr_input *in = &r->inputs[op->first_input];
	FILE *f = c->f;
	uint32_t k;

	if (op->sequence != -1)
		arg_i64(c, "Sequence number", op->sequence);
	if (!op->ninputs)
		return;
	arg_key(c, "Input Dims");
	fputc('[', f);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		if (i)
			fputc(',', f);
		put_shape(f, r->dims + in[i].first_dim, in[i].ndims, in[i].is_list);
	}
	fputc(']', f);
	for (k = 0; k < op->ninputs && !in[k].nstrides; k++)
		;
	if (k < op->ninputs) {
		arg_key(c, "Input Strides");
		fputc('[', f);
		for (uint32_t i = 0; i < op->ninputs; i++) {
			if (i)
				fputc(',', f);
			put_shape(f, r->strides + in[i].first_stride, in[i].nstrides,
				  in[i].is_list);
		}
		fputc(']', f);
	}
	arg_key(c, "Input type");
	fputc('[', f);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		if (i)
			fputc(',', f);
		orr__json_string(f, str(c, r->inputs[op->first_input + i].dtype));
	}
	fputc(']', f);
	concrete_inputs(c, r, op);
}

/* The collective orr__rank_finish() derives from an NCCL kernel's name, and nothing else. */
static bool derived_collective(const struct chrome *c, const struct orr_event *e,
			       const struct orr_collective *co)
{
	const char *name = str(c, e->name), *type = str(c, co->type), *op;
	size_t len;

	if (e->kind != ORR_EVENT_KERNEL)
		return false;
	if (strncmp(name, "ncclDevKernel_", 14) == 0)
		op = name + 14;
	else if (strncmp(name, "ncclKernel_", 11) == 0)
		op = name + 11;
	else
		return false;
	len = strcspn(op, "_(<");
	return strlen(type) == len && memcmp(type, op, len) == 0 && co->dtype == ORR_STR_NONE &&
	       co->pg_name == ORR_STR_NONE && co->pg_desc == ORR_STR_NONE && co->in_nelems == -1 &&
	       co->out_nelems == -1 && co->sequence == -1 && co->group_size == -1 &&
	       co->src_rank == -1 && co->dst_rank == -1 && co->nmembers == 0;
}

/*
 * Kineto's record_param_comms keys; the byte counts follow from nelems and dtype, and are
 * written (under orrery's own keys) only when there are no nelems (the tracer's NCCL calls).
 */
static void put_coll_args(struct chrome *c, const struct orr_collective *co)
{
	arg_str(c, "Collective name", co->type);
	if (co->dtype != ORR_STR_NONE)
		arg_str(c, "dtype", co->dtype);
	if (co->in_nelems != -1)
		arg_i64(c, "In msg nelems", co->in_nelems);
	if (co->out_nelems != -1)
		arg_i64(c, "Out msg nelems", co->out_nelems);
	if (co->in_nelems == -1 && co->in_bytes != -1)
		arg_i64(c, "In msg bytes", co->in_bytes);
	if (co->out_nelems == -1 && co->out_bytes != -1)
		arg_i64(c, "Out msg bytes", co->out_bytes);
	if (co->group_size != -1)
		arg_i64(c, "Group size", co->group_size);
	if (co->pg_name != ORR_STR_NONE)
		arg_str(c, "Process Group Name", co->pg_name);
	if (co->pg_desc != ORR_STR_NONE)
		arg_str(c, "Process Group Description", co->pg_desc);
	if (co->nmembers) {
		arg_key(c, "Process Group Ranks");
		put_members(c->f, c->r->members + co->first_member, co->nmembers);
	}
	if (co->sequence != -1)
		arg_i64(c, "Seq", co->sequence);
	if (co->src_rank != -1)
		arg_i64(c, "Src Rank", co->src_rank);
	if (co->dst_rank != -1)
		arg_i64(c, "Dst Rank", co->dst_rank);
}

static void put_sync_args(struct chrome *c, const struct orr_event *e)
{
	static const char *const kinds[ORR_SYNC_COUNT] = {
		[ORR_SYNC_EVENT] = "Event Sync",
		[ORR_SYNC_STREAM_WAIT] = "Stream Wait Event",
		[ORR_SYNC_STREAM] = "Stream Sync",
		[ORR_SYNC_CONTEXT] = "Context Sync",
	};
	const struct orr_sync_args *s;

	if (e->sub != ORR_SYNC_UNKNOWN && e->sub < ORR_SYNC_COUNT) {
		arg_key(c, "cuda_sync_kind");
		orr__json_string(c->f, kinds[e->sub]);
	}
	if (e->args == ORR_NONE)
		return;
	s = &c->r->syncs[e->args];
	if (s->wait_on_stream != -1)
		arg_i64(c, "wait_on_stream", s->wait_on_stream);
	if (s->event_record_corr != -1)
		arg_i64(c, "wait_on_cuda_event_record_corr_id", s->event_record_corr);
	if (s->event_id != -1)
		arg_i64(c, e->kind == ORR_EVENT_SYNC ? "wait_on_cuda_event_id" : "event_id",
			s->event_id);
	/* The importer reads the stream of a sync record from here, and its place from it. */
	if (s->stream != -1)
		arg_i64(c, "stream", s->stream);
}

/* A kernel's launch as Kineto writes it; the parts that are known. */
static void put_kernel_args(struct chrome *c, const struct orr_kernel_args *k)
{
	if (k->grid[0]) {
		arg_key(c, "grid");
		fprintf(c->f, "[%u, %u, %u]", k->grid[0], k->grid[1], k->grid[2]);
	}
	if (k->block[0]) {
		arg_key(c, "block");
		fprintf(c->f, "[%u, %u, %u]", k->block[0], k->block[1], k->block[2]);
	}
	if (k->grid[0] || k->shared_bytes)
		arg_i64(c, "shared memory", k->shared_bytes);
	if (k->registers)
		arg_i64(c, "registers per thread", k->registers);
}

/*
 * A "[memory]" marker's totals, as the profiler writes them: the first sample of its
 * thread at its time that no other marker took (the samples are in time order); none
 * for a marker of another device (the CPU's).
 */
static void put_mem_args(struct chrome *c, const struct orr_event *e)
{
	const struct orr_rank *r = c->r;
	size_t lo = 0, hi = r->nmems;

	if (!r->nmems || strcmp(str(c, e->name), "[memory]") != 0)
		return;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->mems[mid].ts_ns < e->start_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < r->nmems && r->mems[lo].ts_ns == e->start_ns &&
	       (c->mem_used[lo] || r->mems[lo].place != e->place))
		lo++;
	if (lo == r->nmems || r->mems[lo].ts_ns != e->start_ns)
		return;
	c->mem_used[lo] = true;
	arg_i64(c, "Device Type", 1);
	if (r->mems[lo].device >= 0)
		arg_i64(c, "Device Id", r->mems[lo].device);
	arg_i64(c, "Total Allocated", r->mems[lo].allocated_bytes);
	if (r->mems[lo].reserved_bytes >= 0)
		arg_i64(c, "Total Reserved", r->mems[lo].reserved_bytes);
}

static void put_args(struct chrome *c, const struct orr_event *e)
{
	const struct orr_rank *r = c->r;
	const struct orr_place *pl = &r->places[e->place];
	bool sync = e->kind == ORR_EVENT_SYNC || e->kind == ORR_EVENT_CUDA_EVENT;

	fputs(",\"args\":{", c->f);
	c->first_arg = true;
	if (e->external_id != -1)
		arg_i64(c, "External id", e->external_id);
	if (e->correlation != -1 && !(e->flags & ORR_EVENT_F_FLOW_LINKED))
		arg_i64(c, "correlation", e->correlation);
	if (on_gpu(e) && pl->kind == ORR_PLACE_STREAM) {
		if (!c->multi && pl->device >= 0)
			arg_i64(c, "device", pl->device);
		if (!sync)
			arg_i64(c, "stream", pl->tid);
	}
	if (e->kind == ORR_EVENT_OP && e->args != ORR_NONE)
		put_op_args(c, &r->ops[e->args]);
	else if (e->kind == ORR_EVENT_KERNEL && e->args != ORR_NONE)
		put_kernel_args(c, &r->kernels[e->args]);
	else if ((e->kind == ORR_EVENT_MEMCPY || e->kind == ORR_EVENT_MEMSET) &&
		 e->args != ORR_NONE && r->copies[e->args].bytes != -1)
		arg_i64(c, "bytes", r->copies[e->args].bytes);
	else if (sync)
		put_sync_args(c, e);
	else if (e->kind == ORR_EVENT_MARKER)
		put_mem_args(c, e);
	if (e->coll != ORR_NONE && !derived_collective(c, e, &r->collectives[e->coll]))
		put_coll_args(c, &r->collectives[e->coll]);
	fputs("}}", c->f);
}

/* Cross-stream waits as flow v2 attributes: event-record call -> the wait's record. */
static void put_wait_flow(struct chrome *c, const struct orr_event *e)
{
	int64_t rec = awaited_record(c->r, e), id;
	bool out = is_call(e) && e->sub == ORR_CALL_EVENT_RECORD &&
		   has(&c->awaited, e->correlation);
	bool in = rec >= 0 && has(&c->records, rec);

	if ((!out && !in) || !flow_id(c, out ? e->correlation : rec, &id))
		return;
	/* Perfetto numbers ac2g flows from 0: above them, below 2^53 (JavaScript viewers). */
	id = (id & ((INT64_C(1) << 52) - 1)) | (INT64_C(1) << 52);
	fprintf(c->f, ",\"bind_id\":%lld,\"%s\":true", (long long)id, out ? "flow_out" : "flow_in");
}

/* The ac2g endpoint of a launch or GPU task whose other end is in the trace. */
static void put_ac2g(struct chrome *c, const struct orr_event *e)
{
	const struct orr_place *pl = &c->r->places[e->place];
	bool call = is_call(e);
	int64_t id;

	if ((!call && !is_flow_task(e)) || !flow_id(c, e->correlation, &id))
		return;
	if (!(e->flags & ORR_EVENT_F_FLOW_LINKED) &&
	    !has(call ? &c->tasks : &c->launches, e->correlation))
		return;
	next_event(c);
	fprintf(c->f, "{\"ph\":\"%s\",\"id\":%lld,\"pid\":%lld,\"tid\":%lld", call ? "s" : "f",
		(long long)id, (long long)c->wpid[e->place], (long long)pl->tid);
	orr__json_us(c->f, "ts", e->start_ns - c->base_ns);
	fprintf(c->f, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"%s}", call ? "" : ",\"bp\":\"e\"");
}

static void put_event(struct chrome *c, const struct orr_event *e)
{
	const struct orr_place *pl = &c->r->places[e->place];
	bool marker = e->kind == ORR_EVENT_MARKER;

	next_event(c);
	fprintf(c->f, "{\"ph\":\"%s\",\"cat\":\"%s\",\"name\":", marker ? "i" : "X", category(e));
	orr__json_string(c->f, str(c, e->name));
	fprintf(c->f, ",\"pid\":%lld,\"tid\":%lld", (long long)c->wpid[e->place],
		(long long)pl->tid);
	orr__json_us(c->f, "ts", e->start_ns - c->base_ns);
	if (marker)
		fputs(",\"s\":\"t\"", c->f);
	else
		orr__json_us(c->f, "dur", e->dur_ns);
	put_wait_flow(c, e);
	put_args(c, e);
	put_ac2g(c, e);
}

/* ---- processes, threads and the file's header ---- */

static void put_meta(struct chrome *c, const char *what, int64_t pid, int64_t tid, const char *name)
{
	next_event(c);
	fprintf(c->f,
		"{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":", what,
		(long long)pid, (long long)tid);
	orr__json_string(c->f, name);
	fputs("}}", c->f);
}

/*
 * The process of a place, named after its rank.  With several ranks in the file its pid
 * is numbered anew, and its args say its rank and its own pid, or the device it stands
 * for, which the importer reads to split the file (traces/chrome/chrome-split.c).
 */
static void put_process(struct chrome *c, int64_t wpid, const struct orr_place *p)
{
	bool gpu = p->kind == ORR_PLACE_STREAM;
	char name[64];

	if (gpu)
		snprintf(name, sizeof(name), "rank %d GPU %d", c->r->rank, p->device);
	else
		snprintf(name, sizeof(name), "rank %d", c->r->rank);
	next_event(c);
	fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"args\":{",
		(long long)wpid);
	c->first_arg = true;
	arg_key(c, "name");
	orr__json_string(c->f, name);
	if (c->multi) {
		arg_i64(c, "rank", c->r->rank);
		arg_i64(c, gpu ? "device" : "pid", gpu ? p->device : p->pid);
	}
	fputs("}}", c->f);
}

/* One process per CPU process and per device of the rank; thread names as the trace has them. */
static void put_places(struct chrome *c)
{
	const struct orr_rank *r = c->r;

	c->wpid = orr_xcalloc(r->nplaces ? r->nplaces : 1, sizeof(*c->wpid));
	for (size_t i = 0; i < r->nplaces; i++) {
		const struct orr_place *p = &r->places[i];
		size_t j = 0;

		while (j < i && (r->places[j].kind != p->kind || r->places[j].pid != p->pid))
			j++;
		if (j < i) {
			c->wpid[i] = c->wpid[j];
		} else {
			c->wpid[i] = c->multi ? c->next_pid++ : p->pid;
			put_process(c, c->wpid[i], p);
		}
		if (p->name != ORR_STR_NONE)
			put_meta(c, "thread_name", c->wpid[i], p->tid, str(c, p->name));
	}
}

static void put_devices(struct chrome *c, const struct orr_rank *r)
{
	FILE *f = c->f;

	fputs("\"deviceProperties\":[", f);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct orr_device *d = &r->devices[i];

		fprintf(f, "%s{\"id\":%d,\"name\":", i ? "," : "", d->id);
		orr__json_string(f, str(c, d->name));
		fprintf(f,
			",\"totalGlobalMem\":%lld,\"computeMajor\":%d,\"computeMinor\":%d,"
			"\"numSms\":%d}",
			(long long)d->total_mem_bytes, d->compute_major, d->compute_minor,
			d->num_sms);
	}
	fputc(']', f);
}

static void put_distributed(struct chrome *c, const struct orr_rank *r)
{
	FILE *f = c->f;

	c->first_arg = true;
	fputs("\"distributedInfo\":{", f);
	if (r->backend != ORR_STR_NONE)
		arg_str(c, "backend", r->backend);
	arg_i64(c, "rank", r->rank);
	if (r->world_size > 0)
		arg_i64(c, "world_size", r->world_size);
	if (r->ncomms) {
		arg_key(c, "pg_config");
		fputc('[', f);
		for (size_t i = 0; i < r->ncomms; i++) {
			const struct orr_comm *cm = &r->comms[i];

			fputs(i ? ",{\"pg_name\":" : "{\"pg_name\":", f);
			orr__json_string(f, str(c, cm->name));
			fputs(",\"pg_desc\":", f);
			orr__json_string(f, str(c, cm->desc));
			fputs(",\"backend_config\":", f);
			orr__json_string(f, str(c, cm->backend));
			if (cm->size != -1)
				fprintf(f, ",\"pg_size\":%d", cm->size);
			fputs(",\"ranks\":", f);
			put_members(f, r->members + cm->first_member, cm->nmembers);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

/*
 * Kineto's header keys of one rank, SEP between them: deviceProperties, distributedInfo,
 * Kineto's own keys for what a native header knows, and baseTimeNanoseconds when not 0.
 */
static void put_rank_header(struct chrome *c, const struct orr_rank *r, int64_t base_ns,
			    const char *sep)
{
	FILE *f = c->f;

	put_devices(c, r);
	fputs(sep, f);
	put_distributed(c, r);
	if (r->cupti_version)
		fprintf(f, "%s\"cupti_version\":%u", sep, r->cupti_version);
	if (r->cuda_runtime_version)
		fprintf(f, "%s\"cuda_runtime_version\":%d", sep, r->cuda_runtime_version);
	if (r->cuda_driver_version)
		fprintf(f, "%s\"cuda_driver_version\":%d", sep, r->cuda_driver_version);
	if (base_ns)
		fprintf(f, "%s\"baseTimeNanoseconds\":%lld", sep, (long long)base_ns);
}

/*
 * One rank: its header at the top level, as Kineto writes it.  Several: "orreryRanks",
 * each rank's header in file order (that of the flow ids), and the file's time origin.
 */
static void put_header(struct chrome *c, const struct orr_rank *only)
{
	FILE *f = c->f;

	fputs("{\n\"schemaVersion\":1,\n", f);
	if (!c->multi) {
		put_rank_header(c, only ? only : orr_trace_get_rank(c->t, 0), c->base_ns, ",\n");
		fputs(",\n", f);
	} else {
		fputs("\"orreryRanks\":[", f);
		for (size_t i = 0; i < c->nranks; i++) {
			const struct orr_rank *r = orr_trace_get_rank(c->t, i);

			fputs(i ? ",\n{" : "\n{", f);
			put_rank_header(c, r, r->base_time_ns, ",");
			fputc('}', f);
		}
		fputs("],\n", f);
		if (c->base_ns)
			fprintf(f, "\"baseTimeNanoseconds\":%lld,\n", (long long)c->base_ns);
	}
	fputs("\"displayTimeUnit\":\"ms\",\n\"traceEvents\":[", f);
}

/*
 * The importer numbers places in the order their first events come: write the first
 * event of each place in place order, then the others in the model's order, so that
 * places read back with the same indices.
 */
static void put_events(struct chrome *c)
{
	const struct orr_rank *r = c->r;
	size_t *first = orr_xmalloc((r->nplaces ? r->nplaces : 1) * sizeof(*first));

	for (size_t p = 0; p < r->nplaces; p++)
		first[p] = SIZE_MAX;
	for (size_t i = r->nevents; i-- > 0;)
		first[r->events[i].place] = i;
	for (size_t p = 0; p < r->nplaces; p++)
		if (first[p] != SIZE_MAX)
			put_event(c, &r->events[first[p]]);
	for (size_t i = 0; i < r->nevents; i++)
		if (first[r->events[i].place] != i)
			put_event(c, &r->events[i]);
	free(first);
}

/* Counter samples, one "C" event each: the counter's name, its series as the args key. */
static void put_counters(struct chrome *c)
{
	const struct orr_rank *r = c->r;

	for (size_t i = 0; i < r->ncounters; i++) {
		const struct orr_counter_sample *x = &r->counters[i];

		next_event(c);
		fputs("{\"ph\":\"C\",\"name\":", c->f);
		orr__json_string(c->f, str(c, x->name));
		fprintf(c->f, ",\"pid\":%lld,\"tid\":%lld", (long long)c->wpid[x->place],
			(long long)r->places[x->place].tid);
		orr__json_us(c->f, "ts", x->ts_ns - c->base_ns);
		fputs(",\"args\":{", c->f);
		orr__json_string(c->f, str(c, x->series));
		fprintf(c->f, ":%.17g}}", x->value);
	}
}

static void put_rank(struct chrome *c, const struct orr_rank *r, size_t k)
{
	struct corr_set *sets[] = { &c->launches, &c->tasks, &c->records, &c->awaited };

	c->r = r;
	c->k = k;
	c->mem_used = orr_xcalloc(r->nmems + 1, sizeof(*c->mem_used));
	collect(c);
	put_places(c);
	put_events(c);
	put_counters(c);
	free(c->mem_used);
	c->mem_used = NULL;
	for (size_t i = 0; i < 4; i++) {
		free(sets[i]->v);
		*sets[i] = (struct corr_set){ 0 };
	}
	free(c->wpid);
	c->wpid = NULL;
}

/* Every rank of t (only == NULL), or only that one. */
static void put_file(struct chrome *c, const struct orr_rank *only)
{
	size_t n = only ? 1 : orr_trace_rank_count(c->t);
	const struct orr_rank *first = only ? only : orr_trace_get_rank(c->t, 0);

	c->nranks = n;
	c->multi = n > 1;
	c->next_pid = 1;
	c->first_event = true;
	/* One origin for every rank, so that their clocks stay comparable. */
	c->base_ns = first->base_time_ns;
	for (size_t i = 1; i < n; i++)
		if (orr_trace_get_rank(c->t, i)->base_time_ns < c->base_ns)
			c->base_ns = orr_trace_get_rank(c->t, i)->base_time_ns;
	put_header(c, only);
	for (size_t i = 0; i < n; i++)
		put_rank(c, only ? only : orr_trace_get_rank(c->t, i), i);
	fputs("\n]}\n", c->f);
}

static int write_file(const struct orr_trace *t, const struct orr_rank *only, const char *path,
		      struct orr_diag *d)
{
	struct orr_outfile out;
	struct chrome c = { .t = t };
	int err;

	if (!only && orr_trace_rank_count(t) == 0)
		return orr_diag_set(d, ORR_EEMPTY, path, -1, -1, "no rank to write");
	if ((err = orr_outfile_open(&out, path, 0)))
		return orr_diag_set(d, err, path, -1, -1, "%s", "");
	c.f = orr_outfile_stream(&out);
	if (!c.f) {
		orr_outfile_abort(&out);
		return orr_diag_set(d, -ENOMEM, path, -1, -1, "%s", "");
	}
	put_file(&c, only);
	if ((err = orr_outfile_commit(&out, false)))
		orr_diag_set(d, err, path, -1, -1, "%s", "");
	return err;
}

int orr_trace_write_chrome(const struct orr_trace *t, const char *path,
			   struct orr_diag *reterr_diag)
{
	orr_diag_clear(reterr_diag);
	return write_file(t, NULL, path, reterr_diag);
}

int orr_trace_write_chrome_rank(const struct orr_trace *t, const struct orr_rank *r,
				const char *path, struct orr_diag *reterr_diag)
{
	orr_diag_clear(reterr_diag);
	return write_file(t, r, path, reterr_diag);
}
