/* SPDX-License-Identifier: MIT */
/*
 * Reading back a Chrome JSON file that orr_trace_write_chrome() wrote with several ranks.
 * The Kineto parser reads it as one rank whose processes are the file's (the writer
 * numbers their pids 1, 2, ...) and keeps what the file says about its ranks: the
 * top-level "orreryRanks", each rank's Kineto header, and in every process_name the
 * rank, and the process's own pid or the device it stands for.  Here each place goes to
 * its process's rank under its own pid again, each event with its rows, and ac2g flow
 * ids, made unique in the file as correlation x ranks + index, become correlations.
 * Nothing is guessed: what does not say its rank refuses the file.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "banned.h"

/* The way out of every refusal. */
#define WRITE_PER_RANK "; write one file per rank instead (orrery convert --to chrome TRACE -o DIR)"

/* A declared rank: its number and its index in rb->parts. */
struct part {
	int64_t rank;
	size_t index;
};

/* A process of the file: the rank it belongs to, and its own pid or device. */
struct proc {
	int64_t wpid; /* the pid written */
	int64_t id;
	size_t part;
	bool gpu;
};

struct split {
	struct orr__rank_build *rb; /* the file as parsed */
	const char *name;
	struct orr_diag *diag;
	struct proc *procs; /* sorted by wpid */
	size_t nprocs;
	struct part *parts; /* rb->parts by rank (then index) */
	/* rb's place i -> its rank (index into rb->parts) and index there */
	size_t *place_part;
	uint32_t *place_index;
};

static int refuse(const struct split *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int refuse(const struct split *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return orr_diag_set(s->diag, ORR_ERANK, s->name, -1, -1, "%s%s", msg, WRITE_PER_RANK);
}

static int cmp_proc(const void *a, const void *b)
{
	int64_t x = ((const struct proc *)a)->wpid, y = ((const struct proc *)b)->wpid;

	return (x > y) - (x < y);
}

static const struct proc *find_proc(const struct split *s, int64_t wpid)
{
	struct proc key = { .wpid = wpid };

	return s->nprocs ? bsearch(&key, s->procs, s->nprocs, sizeof(key), cmp_proc) : NULL;
}

static int cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * Every declared rank says which it is, once; s->parts is made sorted by rank (a scan
 * of the ranks per rank and per process made a file of 20,000 ranks quadratic).  The
 * rank refused twice is the one whose second entry comes first.
 */
static int check_parts(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	size_t n = 0, twice = SIZE_MAX;

	s->parts = orr_xmalloc((rb->nparts + 1) * sizeof(*s->parts));
	while (n < rb->nparts && rb->parts[n]->has_rank) {
		s->parts[n] = (struct part){ rb->parts[n]->pub.rank, n };
		n++;
	}
	if (n)
		qsort(s->parts, n, sizeof(*s->parts), cmp_part);
	for (size_t i = 1; i < n; i++)
		if (s->parts[i].rank == s->parts[i - 1].rank &&
		    (i < 2 || s->parts[i - 2].rank != s->parts[i].rank) &&
		    s->parts[i].index < twice)
			twice = s->parts[i].index;
	/* Whichever comes first: an entry without a rank, or the second of a rank. */
	if (twice != SIZE_MAX)
		return refuse(s, "'orreryRanks' lists rank %d twice", rb->parts[twice]->pub.rank);
	if (n < rb->nparts)
		return refuse(s, "'orreryRanks' entry %zu has no distributedInfo.rank", n);
	return 0;
}

/* The index in rb->parts of rank `rank`, or rb->nparts. */
static size_t find_part(const struct split *s, int64_t rank)
{
	struct part key = { .rank = rank };
	size_t lo = 0, hi = s->rb->nparts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_part(&s->parts[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->rb->nparts && s->parts[lo].rank == rank ? s->parts[lo].index : s->rb->nparts;
}

/* The processes whose process_name says their rank, sorted by the pid written. */
static int read_procs(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr__meta *m = rb->metas.p;
	size_t cap = 0;

	for (size_t i = 0; i < rb->metas.n; i++) {
		size_t k;

		if (m[i].thread || m[i].rank < 0)
			continue;
		k = find_part(s, m[i].rank);
		if (k == rb->nparts)
			return refuse(s,
				      "process %" PRId64 " is named after rank %" PRId64
				      ", which 'orreryRanks' does not list",
				      m[i].pid, m[i].rank);
		if (!m[i].has_id || (m[i].gpu && (m[i].id < INT32_MIN || m[i].id > INT32_MAX)))
			return refuse(s,
				      "process %" PRId64 " of rank %" PRId64
				      " gives neither its 'pid' nor a valid 'device'",
				      m[i].pid, m[i].rank);
		ORR_VEC_PUSH(
			s->procs, s->nprocs, cap,
			((struct proc){
				.wpid = m[i].pid, .id = m[i].id, .part = k, .gpu = m[i].gpu }));
	}
	if (s->nprocs)
		qsort(s->procs, s->nprocs, sizeof(*s->procs), cmp_proc);
	for (size_t i = 1; i < s->nprocs; i++)
		if (s->procs[i].wpid == s->procs[i - 1].wpid)
			return refuse(s, "process %" PRId64 " is named twice", s->procs[i].wpid);
	return 0;
}

/* Each place to its process's rank, with the process's own pid (or device). */
static int move_places(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr_place *pl = rb->places.p;

	if (rb->gpu_device_arg)
		return refuse(s, "GPU events name their 'device', which cannot tell the "
				 "ranks' devices apart");
	s->place_part = orr_xcalloc(rb->places.n ? rb->places.n : 1, sizeof(*s->place_part));
	s->place_index = orr_xcalloc(rb->places.n ? rb->places.n : 1, sizeof(*s->place_index));
	for (size_t i = 0; i < rb->places.n; i++) {
		const struct proc *p = find_proc(s, pl[i].pid);
		bool gpu = pl[i].kind == ORR_PLACE_STREAM;
		struct orr__rank_build *to;
		struct orr_place *np;

		if (!p)
			return refuse(s,
				      "events on process %" PRId64
				      ", which no process_name with a 'rank' claims",
				      pl[i].pid);
		if (p->gpu != gpu)
			return refuse(s, "process %" PRId64 " holds %s events but is named as %s",
				      pl[i].pid, gpu ? "GPU" : "CPU",
				      p->gpu ? "a device" : "a process");
		to = s->rb->parts[p->part];
		np = orr__vec_push(&to->places);
		*np = (struct orr_place){ .kind = pl[i].kind,
					  .pid = p->id,
					  .tid = pl[i].tid,
					  .device = gpu ? (int32_t)p->id : -1 };
		s->place_part[i] = p->part;
		s->place_index[i] = (uint32_t)(to->places.n - 1);
	}
	return 0;
}

static uint32_t copy_op(struct orr__rank_build *to, const struct orr__rank_build *from,
			uint32_t row)
{
	const struct orr_op_args *op = ORR__AT(from->ops, struct orr_op_args, row);
	struct orr_op_args *nop = orr__vec_push(&to->ops);

	*nop = (struct orr_op_args){ .first_input = (uint32_t)to->inputs.n,
				     .ninputs = op->ninputs,
				     .sequence = op->sequence };
	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in =
			ORR__AT(from->inputs, struct orr_input, op->first_input + i);
		struct orr_input *nin = orr__vec_push(&to->inputs);

		*nin = *in;
		nin->first_dim = (uint32_t)to->dims.n;
		if (in->ndims)
			memcpy(orr__vec_extend(&to->dims, in->ndims),
			       ORR__AT(from->dims, int64_t, in->first_dim),
			       in->ndims * sizeof(int64_t));
		nin->first_stride = (uint32_t)to->strides.n;
		if (in->nstrides)
			memcpy(orr__vec_extend(&to->strides, in->nstrides),
			       ORR__AT(from->strides, int64_t, in->first_stride),
			       in->nstrides * sizeof(int64_t));
	}
	return (uint32_t)(to->ops.n - 1);
}

static uint32_t copy_coll(struct orr__rank_build *to, const struct orr__rank_build *from,
			  uint32_t row)
{
	const struct orr_collective *c = ORR__AT(from->colls, struct orr_collective, row);
	struct orr_collective *nc = orr__vec_push(&to->colls);

	*nc = *c;
	nc->first_member = (uint32_t)to->members.n;
	if (c->nmembers)
		memcpy(orr__vec_extend(&to->members, c->nmembers),
		       ORR__AT(from->members, int32_t, c->first_member),
		       c->nmembers * sizeof(int32_t));
	return (uint32_t)(to->colls.n - 1);
}

/* Each event, in the file's order, to its place's rank with the rows it refers to. */
static void move_events(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr_event *ev = rb->events.p;

	for (size_t i = 0; i < rb->events.n; i++) {
		struct orr__rank_build *to = rb->parts[s->place_part[ev[i].place]];
		struct orr_event e = ev[i];

		e.place = s->place_index[ev[i].place];
		if (e.args != ORR_NONE) {
			switch (e.kind) {
			case ORR_EVENT_OP:
				e.args = copy_op(to, rb, e.args);
				break;
			case ORR_EVENT_KERNEL:
				*(struct orr_kernel_args *)orr__vec_push(&to->kernels) =
					*ORR__AT(rb->kernels, struct orr_kernel_args, e.args);
				e.args = (uint32_t)(to->kernels.n - 1);
				break;
			case ORR_EVENT_MEMCPY:
			case ORR_EVENT_MEMSET:
				*(struct orr_copy_args *)orr__vec_push(&to->copies) =
					*ORR__AT(rb->copies, struct orr_copy_args, e.args);
				e.args = (uint32_t)(to->copies.n - 1);
				break;
			default: /* SYNC and CUDA_EVENT */
				*(struct orr_sync_args *)orr__vec_push(&to->syncs) =
					*ORR__AT(rb->syncs, struct orr_sync_args, e.args);
				e.args = (uint32_t)(to->syncs.n - 1);
				break;
			}
		}
		if (e.coll != ORR_NONE)
			e.coll = copy_coll(to, rb, e.coll);
		*(struct orr_event *)orr__vec_push(&to->events) = e;
	}
}

/* The allocator's samples to their marker's rank, with its peaks. */
static void move_mems(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr_mem_sample *m = rb->mems.p;

	for (size_t i = 0; i < rb->mems.n; i++) {
		struct orr__rank_build *to = rb->parts[s->place_part[m[i].place]];
		struct orr_mem_sample x = m[i];

		x.place = s->place_index[m[i].place];
		*(struct orr_mem_sample *)orr__vec_push(&to->mems) = x;
		if (x.allocated_bytes > to->pub.mem_peak_allocated_bytes)
			to->pub.mem_peak_allocated_bytes = x.allocated_bytes;
		if (x.reserved_bytes > to->pub.mem_peak_reserved_bytes)
			to->pub.mem_peak_reserved_bytes = x.reserved_bytes;
	}
}

/* Counter samples to their process's rank (their order kept). */
static void move_counters(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr_counter_sample *c = rb->counters.p;

	for (size_t i = 0; i < rb->counters.n; i++) {
		struct orr_counter_sample x = c[i];

		x.place = s->place_index[c[i].place];
		*(struct orr_counter_sample *)orr__vec_push(
			&rb->parts[s->place_part[c[i].place]]->counters) = x;
	}
}

/* Flows and thread names to their process's rank; flow ids back to correlations. */
static int move_flows_and_names(struct split *s)
{
	const struct orr__rank_build *rb = s->rb;
	const struct orr__flow *f = rb->flows.p;
	const struct orr__meta *m = rb->metas.p;
	int64_t n = (int64_t)rb->nparts;

	for (size_t i = 0; i < rb->flows.n; i++) {
		const struct proc *p = find_proc(s, f[i].pid);
		struct orr__flow *nf;

		if (!p)
			return refuse(s,
				      "a flow on process %" PRId64
				      ", which no process_name with a 'rank' claims",
				      f[i].pid);
		if (f[i].id % n != (int64_t)p->part)
			return refuse(s,
				      "flow %" PRId64 " on process %" PRId64
				      " is not rank %d's (ids are correlation x %zu + %zu)",
				      f[i].id, f[i].pid, rb->parts[p->part]->pub.rank, rb->nparts,
				      p->part);
		nf = orr__vec_push(&rb->parts[p->part]->flows);
		*nf = (struct orr__flow){
			.id = f[i].id / n, .ts_ns = f[i].ts_ns, .pid = p->id, .tid = f[i].tid
		};
	}
	for (size_t i = 0; i < rb->metas.n; i++) {
		const struct proc *p = m[i].thread ? find_proc(s, m[i].pid) : NULL;
		struct orr__meta *nm;

		if (!p)
			continue;
		nm = orr__vec_push(&rb->parts[p->part]->metas);
		*nm = m[i];
		nm->pid = p->id;
	}
	return 0;
}

/*
 * The file's skipped categories: an orrery-written file has none, and what another
 * writer added is not kept by rank; counted on the first.
 */
static void move_skipped(struct orr__rank_build *rb)
{
	const struct orr_skipped *sk = rb->skipped.p;
	struct orr__rank_build *to = rb->parts[0];

	for (size_t i = 0; i < rb->skipped.n; i++)
		*(struct orr_skipped *)orr__vec_push(&to->skipped) = sk[i];
	for (size_t i = 0; i < rb->coerced.n; i++)
		*(struct orr_coerced *)orr__vec_push(&to->coerced) =
			*ORR__AT(rb->coerced, struct orr_coerced, i);
}

/* The ranks take rb's place in t; rb goes. */
static void replace(struct orr_trace *t, struct orr__rank_build *rb)
{
	size_t i = 0;

	while (i < t->nranks && t->ranks[i] != rb)
		i++;
	assert(i < t->nranks);
	memmove(&t->ranks[i], &t->ranks[i + 1], (t->nranks - i - 1) * sizeof(*t->ranks));
	t->nranks--;
	for (size_t k = 0; k < rb->nparts; k++) {
		orr__rank_finish(t, rb->parts[k]);
		ORR_VEC_PUSH(t->ranks, t->nranks, t->cap, rb->parts[k]);
	}
	rb->nparts = 0;
	orr__rank_free(rb);
}

/* Each rank within the limits of one (the file was read against all of them at once). */
static int check_sizes(const struct split *s, const struct orr__limits *l)
{
	for (size_t i = 0; i < s->rb->nparts; i++) {
		const struct orr__rank_build *p = s->rb->parts[i];
		enum orr__limit which = ORR__LIMIT_COUNT;

		if (p->places.n > l->max[ORR__LIMIT_PLACES])
			which = ORR__LIMIT_PLACES;
		else if (p->events.n > l->max[ORR__LIMIT_EVENTS] ||
			 p->counters.n > l->max[ORR__LIMIT_EVENTS])
			which = ORR__LIMIT_EVENTS;
		else if (!orr__values_fit(l, p->dims.n, p->strides.n, p->inputs.n, p->members.n))
			which = ORR__LIMIT_VALUES;
		if (which != ORR__LIMIT_COUNT)
			return orr__limit_fail_rank(l, which, s->diag, s->name, p->pub.rank);
	}
	return 0;
}

int orr__chrome_split(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
		      const struct orr__limits *limits, struct orr_diag *diag)
{
	struct split s = { .rb = rb, .name = name, .diag = diag };
	int r;

	assert(rb->nparts > 0);
	if ((r = check_parts(&s)) || (r = read_procs(&s)) || (r = move_places(&s)))
		goto out;
	move_events(&s);
	move_mems(&s);
	move_counters(&s);
	if ((r = move_flows_and_names(&s)) || (r = check_sizes(&s, limits)))
		goto out;
	move_skipped(rb);
	orr_debug("traces", "%s: %zu ranks in one file", name, rb->nparts);
	replace(t, rb);
out:
	free(s.procs);
	free(s.parts);
	free(s.place_part);
	free(s.place_index);
	return r;
}

/* "rank R" or "rank R GPU D", as the writer names processes: R, else -1. */
static int64_t named_rank(const char *name)
{
	const char *p = name + 5;
	char *end;
	long long r;

	if (strncmp(name, "rank ", 5) != 0 || !(*p >= '0' && *p <= '9'))
		return -1;
	errno = 0;
	r = strtoll(p, &end, 10);
	if (errno || r > INT32_MAX)
		return -1;
	if (*end == '\0')
		return r;
	if (strncmp(end, " GPU ", 5) != 0)
		return -1;
	p = end + 5;
	if (*p == '-')
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return -1;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '\0' ? r : -1;
}

int orr__chrome_check_one(const struct orr_trace *t, const struct orr__rank_build *rb,
			  const char *name, struct orr_diag *diag)
{
	const struct orr__meta *m = rb->metas.p;
	struct split s = { .name = name, .diag = diag };
	int64_t first = -1;

	for (size_t i = 0; i < rb->metas.n; i++) {
		int64_t r = m[i].thread ? -1 : named_rank(orr_strtab_get(t->strs, m[i].name));

		if (r < 0)
			continue;
		if (first < 0)
			first = r;
		else if (r != first)
			return refuse(&s,
				      "its processes are named after ranks %" PRId64 " and %" PRId64
				      " but it does not list its ranks in 'orreryRanks' (an "
				      "older orrery wrote it?)",
				      first < r ? first : r, first < r ? r : first);
	}
	return 0;
}
