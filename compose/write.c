/* SPDX-License-Identifier: MIT */
/*
 * A plan as files: bench.py, and rank-R.json per rank (docs/orrery-compose.md, "Data
 * files").  Process groups are those of every rank together, in one order, so that
 * every process of the benchmark makes them alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "orrery/estimator.h"
#include "banned.h"

extern const char orr__compose_bench_py_text[];

struct cgroup {
	uint32_t name; /* interned in the trace */
	const int32_t *members;
	uint32_t nmembers; /* 0: every rank */
	int32_t size;
};

struct groups {
	struct cgroup *g;
	size_t n, cap;
	int32_t **owned; /* member lists made here */
	size_t nowned, cap_owned;
};

const char *orr_compose_bench_py(void)
{
	return orr__compose_bench_py_text;
}

static bool same_members(const struct cgroup *g, const int32_t *m, uint32_t n)
{
	return g->nmembers == n && (!n || !memcmp(g->members, m, n * sizeof(*m)));
}

static void add_group(struct groups *gs, uint32_t name, const int32_t *m, uint32_t n, int32_t size)
{
	for (size_t i = 0; i < gs->n; i++)
		if ((name != ORR_STR_NONE && gs->g[i].name == name) ||
		    (n && same_members(&gs->g[i], m, n)))
			return;
	ORR_VEC_PUSH(gs->g, gs->n, gs->cap, ((struct cgroup){ name, m, n, size }));
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * The ranks of the collective instance GPU task `task` is part of (D7: its members on
 * every rank), sorted, into m (as many as the graph's ranks); 0 when not coupled.
 */
static uint32_t instance_ranks(const struct orr_compose *c, uint32_t task, int32_t *m)
{
	const struct orr_graph *g = c->g;
	uint32_t aux = orr_graph_tasks(g)[task].aux, n = 0;
	const struct orr_group *grp;

	if (aux == ORR_NONE || aux >= orr_graph_group_count(g))
		return 0;
	grp = &orr_graph_groups(g)[aux];
	for (uint32_t i = 0; i < grp->n && n < c->nranks; i++) {
		uint32_t t = orr_graph_members(g)[grp->first + i];
		uint32_t rank = orr_graph_procs(g)[orr_graph_tasks(g)[t].proc].rank;

		m[n++] = orr_graph_get_rank(g, rank)->rank->rank;
	}
	qsort(m, n, sizeof(*m), cmp_i32);
	return n;
}

static int32_t world_of(const struct orr_compose *c);
static int64_t group_of(const struct orr_compose *c, const struct groups *gs,
			const struct orr_rank *r, const struct orr_collective *co);

/*
 * Collectives whose trace names no group: the ranks the graph coupled them with (D7),
 * a group of their own unless they are every rank.
 */
static void coupled_groups(const struct orr_compose *c, struct groups *gs)
{
	int32_t *m = orr_xmalloc((c->nranks ? c->nranks : 1) * sizeof(*m));

	for (size_t i = 0; i < c->nranks; i++) {
		const struct crank *cr = &c->ranks[i];

		for (size_t k = 0; k < cr->nitems; k++) {
			const struct citem *it = &cr->items[k];
			const struct orr_collective *co;
			uint32_t n;
			int32_t *copy;

			if (it->kind != CI_COMM)
				continue;
			co = &cr->r->collectives[cr->r->events[it->event].coll];
			if (group_of(c, gs, cr->r, co) != -2 ||
			    !(n = instance_ranks(c, it->task, m)) || n == (uint32_t)world_of(c))
				continue;
			copy = orr_xmalloc(n * sizeof(*copy));
			memcpy(copy, m, n * sizeof(*copy));
			ORR_VEC_PUSH(gs->owned, gs->nowned, gs->cap_owned, copy);
			add_group(gs, ORR_STR_NONE, copy, n, (int32_t)n);
		}
	}
	free(m);
}

/* n ranks of r's member lists from first; NULL for none (a rank may have no lists). */
static const int32_t *members_of(const struct orr_rank *r, uint32_t first, uint32_t n)
{
	return n ? r->members + first : NULL;
}

/* Every communicator and every collective's member list of the job. */
static void find_groups(const struct orr_compose *c, struct groups *gs)
{
	for (size_t i = 0; i < c->nranks; i++) {
		const struct orr_rank *r = c->ranks[i].r;

		for (size_t k = 0; k < r->ncomms; k++)
			add_group(gs, r->comms[k].name,
				  members_of(r, r->comms[k].first_member, r->comms[k].nmembers),
				  r->comms[k].nmembers, r->comms[k].size);
		for (size_t k = 0; k < r->ncollectives; k++)
			if (r->collectives[k].nmembers)
				add_group(gs, ORR_STR_NONE,
					  members_of(r, r->collectives[k].first_member,
						     r->collectives[k].nmembers),
					  r->collectives[k].nmembers, r->collectives[k].group_size);
	}
}

static int32_t world_of(const struct orr_compose *c)
{
	int32_t w = c->nranks ? c->ranks[0].r->world_size : -1;

	return w > 0 ? w : (int32_t)c->nranks;
}

/* The group index of a collective; -1 for every rank; -2 when not known. */
static int64_t group_of(const struct orr_compose *c, const struct groups *gs,
			const struct orr_rank *r, const struct orr_collective *co)
{
	int32_t world = world_of(c);

	for (size_t i = 0; co->nmembers && i < gs->n; i++)
		if (same_members(&gs->g[i], members_of(r, co->first_member, co->nmembers),
				 co->nmembers))
			return gs->g[i].nmembers == (uint32_t)world ? -1 : (int64_t)i;
	for (size_t i = 0; co->pg_name != ORR_STR_NONE && i < gs->n; i++) {
		if (gs->g[i].name != co->pg_name)
			continue;
		if (gs->g[i].nmembers)
			return gs->g[i].nmembers == (uint32_t)world ? -1 : (int64_t)i;
		return gs->g[i].size == world ? -1 : -2;
	}
	return co->group_size == world ? -1 : -2;
}

/* The group of a collective item: its own, else the ranks the graph coupled it with. */
static int64_t item_group(const struct orr_compose *c, const struct groups *gs,
			  const struct crank *cr, const struct citem *it)
{
	const struct orr_collective *co = &cr->r->collectives[cr->r->events[it->event].coll];
	int64_t g = group_of(c, gs, cr->r, co);
	int32_t *m;
	uint32_t n;

	if (g != -2)
		return g;
	m = orr_xmalloc((c->nranks ? c->nranks : 1) * sizeof(*m));
	n = instance_ranks(c, it->task, m);
	if (n && n == (uint32_t)world_of(c))
		g = -1;
	for (size_t i = 0; n && g == -2 && i < gs->n; i++)
		if (same_members(&gs->g[i], m, n))
			g = (int64_t)i;
	free(m);
	return g;
}

static const char *kind_name(enum orr_coll_kind k)
{
	switch (k) {
	case ORR_COLL_ALL_REDUCE:
		return "all_reduce";
	case ORR_COLL_ALL_GATHER:
		return "all_gather";
	case ORR_COLL_REDUCE_SCATTER:
		return "reduce_scatter";
	case ORR_COLL_ALL_TO_ALL:
		return "all_to_all";
	case ORR_COLL_BROADCAST:
		return "broadcast";
	case ORR_COLL_REDUCE:
		return "reduce";
	default:
		return "send_recv";
	}
}

/* A transfer's side and peer, from its ranks or its type. */
static const char *p2p(const struct orr_trace *t, const struct orr_rank *r,
		       const struct orr_collective *co, int32_t *peer)
{
	const char *type = orr_trace_str(t, co->type);

	if (!strncmp(type, "nccl:", 5))
		type += 5;
	*peer = -1;
	if (co->src_rank >= 0 && co->src_rank == r->rank && co->dst_rank >= 0 &&
	    co->dst_rank != r->rank) {
		*peer = co->dst_rank;
		return "send";
	}
	if (co->dst_rank >= 0 && co->dst_rank == r->rank && co->src_rank >= 0 &&
	    co->src_rank != r->rank) {
		*peer = co->src_rank;
		return "recv";
	}
	if (!strcmp(type, "send") || !strcmp(type, "recv")) {
		*peer = co->src_rank >= 0 && co->src_rank != r->rank ? co->src_rank : co->dst_rank;
		return type[0] == 's' ? "send" : "recv";
	}
	return "send_recv";
}

/*
 * The element type an NCCL kernel's name says ("ncclDevKernel_AllReduce_Sum_f16_RING_LL":
 * float16) and its size; NULL when it says none.
 */
static const char *nccl_dtype(const char *name, int *size)
{
	static const struct {
		const char *tok, *dtype;
		int size;
	} types[] = { { "f16", "float16", 2 }, { "bf16", "bfloat16", 2 }, { "f32", "float32", 4 },
		      { "f64", "float64", 8 }, { "i8", "int8", 1 },       { "u8", "uint8", 1 },
		      { "i32", "int32", 4 },   { "i64", "int64", 8 } };
	const char *type, *p;
	size_t len;

	if (!orr_nccl_kernel_type(name, &type, &len))
		return NULL;
	for (p = type + len; *p == '_';) {
		size_t n = strcspn(++p, "_(<");

		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			if (strlen(types[i].tok) == n && !strncmp(p, types[i].tok, n)) {
				*size = types[i].size;
				return types[i].dtype;
			}
		}
		p += n;
	}
	return NULL;
}

/* Elements of a side: the recorded count with the recorded dtype, else bytes / size. */
static int64_t elems(int64_t n, int64_t bytes, const char *dtype, int size)
{
	if (dtype && size == 0)
		return n;
	return bytes >= 0 ? bytes / size : -1;
}

static void write_comm(const struct orr_compose *c, const struct groups *gs, FILE *f,
		       const struct crank *cr, const struct citem *it)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_event *e = &cr->r->events[it->event];
	const struct orr_collective *co = &cr->r->collectives[e->coll];
	enum orr_coll_kind k = orr_coll_kind_of(orr_trace_str(t, co->type));
	const char *dtype =
		co->dtype == ORR_STR_NONE ? NULL : orr__compose_dtype(orr_trace_str(t, co->dtype));
	const char *kind = kind_name(k);
	int64_t group = item_group(c, gs, cr, it);
	int64_t in, out;
	int32_t peer = -1;
	int size = 0;

	if (k == ORR_COLL_SEND_RECV)
		kind = p2p(t, cr->r, co, &peer);
	if (dtype && ((co->in_nelems < 0 && co->in_bytes >= 0) ||
		      (co->out_nelems < 0 && co->out_bytes >= 0)))
		dtype = NULL;
	if (!dtype) {
		dtype = nccl_dtype(orr_trace_str(t, e->name), &size);
		if (!dtype || (co->in_bytes >= 0 && co->in_bytes % size) ||
		    (co->out_bytes >= 0 && co->out_bytes % size)) {
			dtype = "uint8";
			size = 1;
		}
	}
	in = elems(co->in_nelems, co->in_bytes, dtype, size);
	out = elems(co->out_nelems, co->out_bytes, dtype, size);
	fprintf(f, "[\"comm\",\"%s\",%lld,", kind, (long long)it->stream);
	if (it->from >= 0)
		fprintf(f, "%lld,", (long long)it->from);
	else
		fputs("null,", f);
	if (group >= -1)
		fprintf(f, "%lld,", (long long)group);
	else
		fputs("null,", f);
	fprintf(f, "%lld,%lld,\"%s\",", (long long)in, (long long)out, dtype);
	if (peer >= 0)
		fprintf(f, "%d,", peer);
	else
		fputs("null,", f);
	fprintf(f, "%lld,", (long long)it->dur_ns);
	orr_json_write_string(f, orr_trace_str(t, e->name));
	fputc(']', f);
}

static void write_stream(FILE *f, int64_t s)
{
	if (s >= 0)
		fprintf(f, "%lld", (long long)s);
	else
		fputs("null", f);
}

static void write_item(const struct orr_compose *c, const struct groups *gs, struct cargs *a,
		       FILE *f, const struct crank *cr, const struct citem *it)
{
	const struct orr_trace *t = orr_graph_trace(c->g);

	switch (it->kind) {
	case CI_OP:
		orr__compose_write_op(a, f, it);
		break;
	case CI_COMM:
		write_comm(c, gs, f, cr, it);
		break;
	case CI_FILL:
		fprintf(f, "[\"fill\",%lld,%lld,", (long long)it->stream, (long long)it->dur_ns);
		orr_json_write_string(f, orr_trace_str(t, cr->r->events[it->event].name));
		fputc(']', f);
		break;
	case CI_SYNC:
		fputs("[\"sync\",", f);
		write_stream(f, it->ev ? -1 : it->stream);
		fputc(']', f);
		break;
	case CI_RECORD:
		fprintf(f, "[\"record\",%u,%lld,%s]", it->ev, (long long)it->stream,
			it->comm ? "true" : "false");
		break;
	default:
		fprintf(f, "[\"wait\",%u,%lld,", it->ev, (long long)it->stream);
		if (it->comm)
			write_stream(f, it->from);
		else
			fputs("false", f);
		fputc(']', f);
	}
}

/* The stream most of the rebuilt GPU time ran on: PyTorch's current stream. */
static int64_t main_stream(const struct crank *cr)
{
	struct by_stream {
		int64_t stream, ns;
	} *by = NULL;
	size_t n = 0, cap = 0, best = 0;
	int64_t ret = -1;

	for (size_t i = 0; i < cr->nitems; i++) {
		const struct citem *it = &cr->items[i];
		size_t k = 0;

		if (it->kind != CI_OP || it->stream < 0)
			continue;
		while (k < n && by[k].stream != it->stream)
			k++;
		if (k == n)
			ORR_VEC_PUSH(by, n, cap, ((struct by_stream){ it->stream, 0 }));
		by[k].ns = orr_time_add(by[k].ns, it->gpu_ns);
	}
	for (size_t k = 0; k < n; k++)
		if (by[k].ns > by[best].ns)
			best = k;
	if (n)
		ret = by[best].stream;
	free(by);
	return ret;
}

static void write_header(const struct orr_compose *c, FILE *f, const struct crank *cr)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_compose_rank *st = &cr->st;

	fputs("{\"format\":\"orrery-compose\",\"version\":1,\"producer\":", f);
	orr_json_write_string(f, c->o.producer ? c->o.producer : "orrery");
	fputs(",\"source\":", f);
	orr_json_write_string(f, orr_trace_str(t, cr->r->source));
	fprintf(f,
		",\n\"rank\":%d,\"world_size\":%d,\"step\":%lld,\"step_ns\":%lld,"
		"\"gpu_ns\":%lld,\"op_ns\":%lld,\"comm_ns\":%lld,\"fill_ns\":%lld,"
		"\"dropped_ns\":%lld,\n\"steps\":%d,\"warmup\":%d,\"main_stream\":",
		cr->r->rank, world_of(c), (long long)st->step, (long long)st->step_ns,
		(long long)st->gpu_ns, (long long)st->op_ns, (long long)st->comm_ns,
		(long long)st->fill_ns, (long long)st->dropped_ns, c->o.steps, c->o.warmup);
	write_stream(f, main_stream(cr));
	fprintf(f, ",\"events\":%u,\n\"groups\":[", cr->nevents_waited);
}

static void write_groups(const struct orr_compose *c, const struct groups *gs, FILE *f)
{
	const struct orr_trace *t = orr_graph_trace(c->g);

	for (size_t i = 0; i < gs->n; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		orr_json_write_string(
			f, gs->g[i].name == ORR_STR_NONE ? "" : orr_trace_str(t, gs->g[i].name));
		fputs(",\"ranks\":[", f);
		for (uint32_t k = 0; k < gs->g[i].nmembers; k++)
			fprintf(f, "%s%d", k ? "," : "", gs->g[i].members[k]);
		fprintf(f, "],\"size\":%d}", gs->g[i].size);
	}
}

static void write_rank(struct orr_compose *c, const struct groups *gs, FILE *f, struct crank *cr)
{
	struct cargs *a = orr__compose_args_new(c, cr);

	write_header(c, f, cr);
	write_groups(c, gs, f);
	fputs("],\n\"items\":[", f);
	for (size_t i = 0; i < cr->nitems; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_item(c, gs, a, f, cr, &cr->items[i]);
	}
	fputc(']', f);
	orr__compose_write_tables(a, f, &cr->st.tensors, &cr->st.storages);
	fputs(",\n\"missing\":[", f);
	for (size_t i = 0; i < c->nmissing; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		orr_json_write_string(f, c->missing[i].name);
		fputc(',', f);
		orr_json_write_string(f, c->missing[i].reason);
		fprintf(f, ",%llu,%lld]", (unsigned long long)c->missing[i].tasks,
			(long long)c->missing[i].gpu_ns);
	}
	fputs("]}\n", f);
	orr__compose_args_free(a);
}

static int write_file(const char *path, const char *text, struct orr_compose *c,
		      const struct groups *gs, struct crank *cr, struct orr_diag *d)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return orr_diag_set(d, -errno, path, -1, -1, "cannot create it");
	if (text)
		fputs(text, f);
	else
		write_rank(c, gs, f, cr);
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		return orr_diag_set(d, err, path, -1, -1, "cannot write it");
	return 0;
}

int orr_compose_write(struct orr_compose *c, const char *dir, struct orr_diag *reterr_diag)
{
	struct groups gs = { 0 };
	char *path = orr_xasprintf("%s/bench.py", dir);
	int err = write_file(path, orr__compose_bench_py_text, c, &gs, NULL, reterr_diag);

	free(path);
	find_groups(c, &gs);
	coupled_groups(c, &gs);
	for (size_t i = 0; !err && i < c->nranks; i++) {
		path = orr_xasprintf("%s/rank-%d.json", dir, c->ranks[i].r->rank);
		err = write_file(path, NULL, c, &gs, &c->ranks[i], reterr_diag);
		free(path);
	}
	for (size_t i = 0; i < gs.nowned; i++)
		free(gs.owned[i]);
	free(gs.owned);
	free(gs.g);
	return err;
}
