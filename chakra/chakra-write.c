/* SPDX-License-Identifier: MIT */
/*
 * An execution graph's rank as a Chakra file (docs/chakra.md): one node per task, in
 * task order, the node id the task's index within its rank.
 *
 *   CPU task         COMP_NODE, is_cpu_op; its duration is the call and the thread's
 *                    time before it (the framework's work between two calls), so that
 *                    nodes run back to back keep the thread's timeline
 *   GPU task         COMP_NODE; a collective COMM_COLL_NODE (comm_type, comm_size in
 *                    bytes, pg_name); a Send or Recv COMM_SEND_NODE / COMM_RECV_NODE
 *                    (comm_src, comm_dst, comm_tag: the pair's sequence number)
 *   data_deps        the task before on its thread or stream (D1, D3), its explicit
 *                    edges (D2 launch, D4 cross-stream, D6 cross-thread, D5 spins), and
 *                    after a blocking call, on the thread's next call, the GPU work the
 *                    blocking call waited for (D5): the last task launched on the
 *                    awaited stream (every stream of the device, the stream an event
 *                    recorded) before it, by measured launch time.  A Chakra node runs
 *                    whole once its deps are done, so the wait cannot be the blocking
 *                    call's own: a blocking copy waits for the copy it launches
 *
 * Edge latencies and the replay's per-device constants have no place in Chakra.  The
 * exact durations in nanoseconds ride along as attributes orr_dur_ns and orr_gap_ns.
 *
 * Every string is a proto3 `string`, which must be valid UTF-8: Chakra's readers
 * (python protobuf) refuse a file that has one that is not.  Names come from the trace,
 * so each byte that is not UTF-8 is written U+FFFD (orr_utf8_replace()), as the JSON
 * outputs write it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "chakra.pb-c.h"
#include "orrery/chakra.h"
#include "orrery/estimator.h"
#include "banned.h"

#define MAX_ATTRS 12

/* A collective the trace gave no size for, sized as orr_coll_observe() sizes it. */
struct sized {
	uint32_t task;
	int64_t in_bytes;
	bool by_caller;
};

struct writer {
	const struct orr_graph *g;
	const struct orr_graph_rank *gr;
	const struct orr_rank *r;
	FILE *f;
	uint8_t *buf;
	size_t cap;
	int64_t origin_ns; /* the earliest start of the job: start_time_micros 0 */
	uint64_t *deps;    /* this node's data deps, scratch */
	size_t ndeps, cap_deps;
	struct sized *sizes; /* this rank's, by task */
	size_t nsizes, cap_sizes;
	char *text[2]; /* strings made valid UTF-8, one per field of a node, scratch */
	size_t cap_text[2];
	struct orr_chakra_stats st;
	int err;
};

/* The attributes of one node: storage for the protobuf-c messages that point into it. */
struct attrs {
	ChakraProtoMsg__AttributeProto a[MAX_ATTRS];
	ChakraProtoMsg__AttributeProto *p[MAX_ATTRS];
	size_t n;
};

static ChakraProtoMsg__AttributeProto *attr(struct attrs *as, const char *name)
{
	ChakraProtoMsg__AttributeProto *a = &as->a[as->n];

	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	as->p[as->n++] = a;
	return a;
}

static void attr_i64(struct attrs *as, const char *name, int64_t v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);

	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

static void attr_i32(struct attrs *as, const char *name, int32_t v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);

	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
	a->int32_val = v;
}

static void attr_bool(struct attrs *as, const char *name, bool v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);

	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
	a->bool_val = v;
}

static void attr_str(struct attrs *as, const char *name, const char *v)
{
	ChakraProtoMsg__AttributeProto *a = attr(as, name);

	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
	a->string_val = (char *)v;
}

/* s as a proto3 string: itself when valid UTF-8, else in scratch k with U+FFFD for each bad byte. */
static char *utf8(struct writer *w, int k, const char *s)
{
	size_t len;

	if (orr_utf8_is_valid(s))
		return (char *)s;
	len = orr_utf8_replace(NULL, 0, s);
	if (len >= w->cap_text[k])
		w->text[k] = orr_xgrow(w->text[k], 1, &w->cap_text[k], len + 1);
	orr_utf8_replace(w->text[k], len + 1, s);
	return w->text[k];
}

/* One length-prefixed message: a varint32 of its size, then its bytes. */
static void put(struct writer *w, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m), k = 0;
	uint8_t len[5];
	uint64_t v = n;

	if (w->err)
		return;
	if (n > UINT32_MAX) {
		w->err = ORR_ETOOBIG;
		return;
	}
	do {
		len[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	if (n > w->cap)
		w->buf = orr_xgrow(w->buf, 1, &w->cap, n);
	protobuf_c_message_pack(m, w->buf);
	if (fwrite(len, 1, k, w->f) != k || fwrite(w->buf, 1, n, w->f) != n)
		w->err = -(errno ? errno : EIO);
}

/* ---- dependencies ---- */

static void add_dep(struct writer *w, uint32_t task)
{
	if (task < w->gr->first_task || task >= w->gr->first_task + w->gr->ntasks)
		return; /* another rank's: a collective's members meet in the simulator */
	ORR_VEC_PUSH(w->deps, w->ndeps, w->cap_deps, (uint64_t)(task - w->gr->first_task));
}

/* When GPU task t was launched: its launching call's start, else its own start. */
static int64_t launched_at(const struct orr_graph *g, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(g)[t];
	const struct orr_dep *d = orr_graph_deps(g);

	if (task->ndeps && d[task->first_dep].kind == ORR_DEP_LAUNCH)
		return orr_graph_task_start(g, d[task->first_dep].src);
	return orr_graph_task_start(g, t);
}

/* The last task of proc p launched before `before`; UINT32_MAX when none. */
static uint32_t last_launched(const struct orr_graph *g, uint32_t p, int64_t before)
{
	const struct orr_proc *pr = &orr_graph_procs(g)[p];
	size_t lo = 0, hi = pr->ntasks;

	while (lo < hi) { /* launch times along a stream follow its order */
		size_t mid = lo + (hi - lo) / 2;

		if (launched_at(g, pr->first_task + (uint32_t)mid) < before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? pr->first_task + (uint32_t)lo - 1 : UINT32_MAX;
}

static void dep_on_proc(struct writer *w, uint32_t p, int64_t before)
{
	uint32_t t = last_launched(w->g, p, before);

	if (t != UINT32_MAX)
		add_dep(w, t);
}

/* The GPU work a blocking call t waits for (D5), as data deps (of the call after it). */
static void wait_deps(struct writer *w, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(w->g)[t];
	const struct orr_wait *wt;
	int64_t at = orr_graph_task_start(w->g, t);
	size_t before = w->ndeps;

	if (!(task->flags & ORR_TASK_F_BLOCKING) || task->aux == ORR_NONE)
		return;
	wt = &orr_graph_waits(w->g)[task->aux];
	switch (wt->kind) {
	case ORR_WAIT_STREAM:
		dep_on_proc(w, wt->target, at);
		break;
	case ORR_WAIT_DEVICE:
		for (uint32_t p = w->gr->first_proc; p < w->gr->first_proc + w->gr->nprocs; p++) {
			const struct orr_proc *pr = &orr_graph_procs(w->g)[p];

			if (pr->kind == ORR_TASK_GPU &&
			    w->r->places[pr->place].device == (int32_t)wt->target)
				dep_on_proc(w, p, at);
		}
		break;
	case ORR_WAIT_EVENT: { /* what the record call recorded */
		const struct orr_task *rec = &orr_graph_tasks(w->g)[wt->target];

		if (rec->aux != ORR_NONE && orr_graph_waits(w->g)[rec->aux].kind == ORR_WAIT_RECORD)
			dep_on_proc(w, orr_graph_waits(w->g)[rec->aux].target,
				    orr_graph_task_start(w->g, wt->target));
		break;
	}
	case ORR_WAIT_TASK:
		add_dep(w, wt->target);
		break;
	default:
		break;
	}
	w->st.waits += w->ndeps > before;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Task t's data deps, sorted, each once. */
static void data_deps(struct writer *w, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(w->g)[t];
	const struct orr_proc *pr = &orr_graph_procs(w->g)[task->proc];
	const struct orr_dep *d = orr_graph_deps(w->g);
	size_t k = 0;

	w->ndeps = 0;
	if (t > pr->first_task)
		add_dep(w, t - 1);
	for (uint32_t i = task->first_dep; i < task->first_dep + task->ndeps; i++)
		if (d[i].kind != ORR_DEP_CROSS_RANK)
			add_dep(w, d[i].src);
	if (task->kind == ORR_TASK_CPU && t > pr->first_task)
		wait_deps(w, t - 1);
	if (w->ndeps)
		qsort(w->deps, w->ndeps, sizeof(*w->deps), cmp_u64);
	for (size_t i = 0; i < w->ndeps; i++)
		if (!k || w->deps[k - 1] != w->deps[i])
			w->deps[k++] = w->deps[i];
	w->ndeps = k;
}

/* ---- sizes ---- */

static int cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;

	return (x->task > y->task) - (x->task < y->task);
}

static void add_size(struct writer *w, uint32_t task, const struct orr_coll_obs *o)
{
	/* S is nccl-tests' whole buffer: an all-gather's input is one rank's share */
	double in = o->kind == ORR_COLL_ALL_GATHER && o->s.group > 0 ? o->s.bytes / o->s.group
								     : o->s.bytes;

	if (task < w->gr->first_task || task >= w->gr->first_task + w->gr->ntasks || in <= 0 ||
	    in > 9e18)
		return;
	ORR_VEC_PUSH(w->sizes, w->nsizes, w->cap_sizes,
		     ((struct sized){ task, (int64_t)(in + 0.5), o->sized_by_caller }));
}

/* The sizes of this rank's collective kernels, from every member of each instance. */
static void collect_sizes(struct writer *w, const struct orr_coll_obs *obs, size_t nobs)
{
	const struct orr_group *groups = orr_graph_groups(w->g);
	const uint32_t *members = orr_graph_members(w->g);

	for (size_t i = 0; i < nobs; i++) {
		uint32_t aux = orr_graph_tasks(w->g)[obs[i].task].aux;

		if (aux == ORR_NONE || aux >= orr_graph_group_count(w->g)) {
			add_size(w, obs[i].task, &obs[i]);
			continue;
		}
		for (uint32_t m = 0; m < groups[aux].n; m++)
			add_size(w, members[groups[aux].first + m], &obs[i]);
	}
	if (w->nsizes)
		qsort(w->sizes, w->nsizes, sizeof(*w->sizes), cmp_sized);
}

static const struct sized *size_of(const struct writer *w, uint32_t task)
{
	struct sized key = { .task = task };

	return w->nsizes ? bsearch(&key, w->sizes, w->nsizes, sizeof(*w->sizes), cmp_sized) : NULL;
}

/* ---- nodes ---- */

static int chakra_coll(enum orr_coll_kind k)
{
	switch (k) {
	case ORR_COLL_ALL_REDUCE:
		return ORR_CHAKRA_ALL_REDUCE;
	case ORR_COLL_REDUCE:
		return ORR_CHAKRA_REDUCE;
	case ORR_COLL_ALL_GATHER:
		return ORR_CHAKRA_ALL_GATHER;
	case ORR_COLL_BROADCAST:
		return ORR_CHAKRA_BROADCAST;
	case ORR_COLL_ALL_TO_ALL:
		return ORR_CHAKRA_ALL_TO_ALL;
	case ORR_COLL_REDUCE_SCATTER:
		return ORR_CHAKRA_REDUCE_SCATTER;
	default:
		return -1;
	}
}

/* A Send or Recv: which side this rank is, from the collective's ranks or its type. */
static int p2p_type(const struct orr_trace *t, const struct orr_rank *r,
		    const struct orr_collective *c)
{
	const char *type = orr_trace_str(t, c->type);

	if (c->src_rank >= 0 && c->src_rank == r->rank && c->dst_rank != r->rank)
		return ORR_CHAKRA_SEND;
	if (c->dst_rank >= 0 && c->dst_rank == r->rank && c->src_rank != r->rank)
		return ORR_CHAKRA_RECV;
	if (!strncasecmp(type, "nccl:", 5))
		type += 5;
	if (!strcasecmp(type, "send"))
		return ORR_CHAKRA_SEND;
	if (!strcasecmp(type, "recv"))
		return ORR_CHAKRA_RECV;
	return ORR_CHAKRA_COMP;
}

/* The type and communication attributes of GPU task t. */
static int gpu_node(struct writer *w, uint32_t t, struct attrs *as)
{
	const struct orr_trace *tr = orr_graph_trace(w->g);
	const struct orr_event *e = orr_graph_task_event(w->g, t);
	const struct orr_collective *c = e->coll < w->r->ncollectives ? &w->r->collectives[e->coll]
								      : NULL;
	enum orr_coll_kind k = c ? orr_coll_kind_of(orr_trace_str(tr, c->type)) : ORR_COLL_UNKNOWN;
	int64_t bytes = c ? (c->in_bytes >= 0 ? c->in_bytes : c->out_bytes) : -1;
	int type = ORR_CHAKRA_COMP;

	if (!(orr_graph_tasks(w->g)[t].flags & ORR_TASK_F_COMM) || !c) {
		w->st.comm_as_comp += !!(orr_graph_tasks(w->g)[t].flags & ORR_TASK_F_COMM);
		return type;
	}
	if (k == ORR_COLL_SEND_RECV)
		type = p2p_type(tr, w->r, c);
	else if (chakra_coll(k) >= 0)
		type = ORR_CHAKRA_COLL;
	if (type == ORR_CHAKRA_COMP) {
		w->st.comm_as_comp++;
		return type;
	}
	if (type == ORR_CHAKRA_COLL)
		attr_i64(as, "comm_type", chakra_coll(k));
	if (bytes < 0 && size_of(w, t)) {
		bytes = size_of(w, t)->in_bytes;
		w->st.comm_by_caller += size_of(w, t)->by_caller;
	}
	if (bytes >= 0)
		attr_i64(as, "comm_size", bytes);
	else
		w->st.comm_unsized++;
	if (c->pg_name != ORR_STR_NONE)
		attr_str(as, "pg_name", utf8(w, 1, orr_trace_str(tr, c->pg_name)));
	if (type != ORR_CHAKRA_COLL) {
		attr_i32(as, "comm_src", c->src_rank);
		attr_i32(as, "comm_dst", c->dst_rank);
		attr_i32(as, "comm_tag",
			 c->sequence >= 0 && c->sequence <= INT32_MAX ? (int32_t)c->sequence : 0);
	}
	return type;
}

static uint64_t micros(int64_t ns)
{
	return ns > 0 ? (uint64_t)(ns / 1000 + (ns % 1000 >= 500)) : 0;
}

static void write_node(struct writer *w, uint32_t t)
{
	const struct orr_task *task = &orr_graph_tasks(w->g)[t];
	const struct orr_place *pl = &w->r->places[orr_graph_procs(w->g)[task->proc].place];
	ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
	struct attrs as = { .n = 0 };
	bool cpu = task->kind == ORR_TASK_CPU;
	int64_t start = orr_graph_task_start(w->g, t);
	int type;

	n.id = t - w->gr->first_task;
	n.name = utf8(w, 0, orr_graph_task_name(w->g, t));
	attr_bool(&as, "is_cpu_op", cpu);
	type = cpu ? ORR_CHAKRA_COMP : gpu_node(w, t, &as);
	n.type = (ChakraProtoMsg__NodeType)type;
	attr_i64(&as, cpu ? "tid" : "stream", pl->tid);
	attr_i64(&as, "orr_dur_ns", task->dur_ns);
	attr_i64(&as, "orr_gap_ns", task->gap_ns);
	data_deps(w, t);
	n.data_deps = w->deps;
	n.n_data_deps = w->ndeps;
	n.start_time_micros =
		micros(orr_time_sub(cpu ? start - task->gap_ns : start, w->origin_ns));
	n.duration_micros = micros(cpu ? orr_time_add(task->dur_ns, task->gap_ns) : task->dur_ns);
	n.attr = as.p;
	n.n_attr = as.n;
	put(w, &n.base);
	w->st.nodes++;
	w->st.data_deps += w->ndeps;
	w->st.comp_cpu += cpu;
	w->st.comp_gpu += !cpu && type == ORR_CHAKRA_COMP;
	w->st.coll += type == ORR_CHAKRA_COLL;
	w->st.send += type == ORR_CHAKRA_SEND;
	w->st.recv += type == ORR_CHAKRA_RECV;
}

static void write_metadata(struct writer *w, const char *producer)
{
	ChakraProtoMsg__GlobalMetadata m = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	struct attrs as = { .n = 0 };

	attr_str(&as, "schema", "1.0.2-chakra.0.0.4");
	attr_str(&as, "producer", utf8(w, 0, producer ? producer : "orrery " ORR_VERSION));
	attr_i64(&as, "rank", w->r->rank);
	if (w->r->world_size > 0)
		attr_i64(&as, "world_size", w->r->world_size);
	m.attr = as.p;
	m.n_attr = as.n;
	put(w, &m.base);
}

/* The earliest start of the job: a CPU node starts where the time before it does. */
static int64_t job_origin(const struct orr_graph *g)
{
	int64_t o = INT64_MAX;

	for (size_t p = 0; p < orr_graph_proc_count(g); p++) {
		const struct orr_proc *pr = &orr_graph_procs(g)[p];
		int64_t gap = pr->kind == ORR_TASK_CPU && pr->ntasks
				      ? orr_graph_tasks(g)[pr->first_task].gap_ns
				      : 0;

		if (pr->ntasks && orr_time_sub(pr->first_start_ns, gap) < o)
			o = orr_time_sub(pr->first_start_ns, gap);
	}
	return o == INT64_MAX ? 0 : o;
}

int orr_chakra_write_rank(const struct orr_graph *g, size_t rank, const char *path,
			  const char *producer, const struct orr_coll_obs *obs, size_t nobs,
			  struct orr_chakra_stats *stats, struct orr_diag *reterr_diag)
{
	struct writer w = { .g = g };
	int r;

	if (rank >= orr_graph_rank_count(g))
		return orr_diag_set(reterr_diag, -EINVAL, path, -1, -1, "no rank %zu", rank);
	w.gr = orr_graph_get_rank(g, rank);
	w.r = w.gr->rank;
	w.origin_ns = job_origin(g);
	if (!(w.f = fopen(path, "wb")))
		return orr_diag_set(reterr_diag, -errno, path, -1, -1, "cannot create it");
	collect_sizes(&w, obs, nobs);
	write_metadata(&w, producer);
	for (uint32_t t = w.gr->first_task; t < w.gr->first_task + w.gr->ntasks && !w.err; t++)
		write_node(&w, t);
	errno = 0;
	if (fclose(w.f) && !w.err)
		w.err = -(errno ? errno : EIO);
	r = w.err;
	if (!r && stats)
		*stats = w.st;
	free(w.buf);
	free(w.deps);
	free(w.sizes);
	free(w.text[0]);
	free(w.text[1]);
	if (r)
		return orr_diag_set(reterr_diag, r, path, -1, -1, "writing the Chakra file failed");
	return 0;
}

static void stats_add(struct orr_chakra_stats *sum, const struct orr_chakra_stats *st)
{
	sum->nodes += st->nodes;
	sum->comp_cpu += st->comp_cpu;
	sum->comp_gpu += st->comp_gpu;
	sum->coll += st->coll;
	sum->send += st->send;
	sum->recv += st->recv;
	sum->data_deps += st->data_deps;
	sum->waits += st->waits;
	sum->comm_unsized += st->comm_unsized;
	sum->comm_by_caller += st->comm_by_caller;
	sum->comm_as_comp += st->comm_as_comp;
}

int orr_chakra_write_graph(const struct orr_graph *g, const char *dir, const char *producer,
			   struct orr_chakra_stats *stats, size_t *reterr_rank,
			   struct orr_diag *reterr_diag)
{
	struct orr_chakra_stats sum = { 0 };
	struct orr_coll_obs *obs = NULL;
	size_t nobs = orr_coll_observe(g, &obs);
	int err = 0;

	for (size_t i = 0; i < orr_graph_rank_count(g) && !err; i++) {
		char *path =
			orr_xasprintf("%s/trace.%d.et", dir, orr_graph_get_rank(g, i)->rank->rank);
		struct orr_chakra_stats st;

		err = orr_chakra_write_rank(g, i, path, producer, obs, nobs, &st, reterr_diag);
		if (err)
			*reterr_rank = i;
		else
			stats_add(&sum, &st);
		free(path);
	}
	free(obs);
	if (!err && stats)
		*stats = sum;
	return err;
}
