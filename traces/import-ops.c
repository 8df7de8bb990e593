/* SPDX-License-Identifier: MIT */
/*
 * A process's ops from a CPU-only torch.profiler session, merged into the tracer's file
 * of that process.  `orrery_record.enable(ops="profiler")` (tracer/python/) runs
 * torch.profiler with CPU activities alone (no CUPTI: the tracer holds it) and writes
 * its Kineto JSON as ops-PID.json beside the tracer's .orr.  Kineto writes each op with
 * the process and the system thread id of the thread that ran it (those of the tracer's
 * runtime calls) and CLOCK_REALTIME times, the tracer's clock (docs/tracer.md, "Clocks"):
 * so the ops are put on the tracer's threads as they are, and every analysis that walks
 * a launch up its thread's calls to the innermost enclosing op finds it there, as it does
 * for the ops of emit_nvtx or of a whole torch.profiler trace.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "banned.h"

#define OPS_PREFIX "ops-"

/* The file's own name: after the last '/' and after an archive's "name:" prefix. */
static const char *base_name(const char *name)
{
	const char *base = name;

	for (const char *p = name; *p; p++)
		if (*p == '/' || *p == ':')
			base = p + 1;
	return base;
}

int64_t orr__import_ops_pid(const char *name)
{
	/* the JSON names the importer reads, in any case (import-names.c) */
	static const char *const suffixes[] = { ".json",      ".json.gz", ".json.zst",
						".json.zstd", ".json.xz", ".json.bz2" };
	const char *s = base_name(name) + strlen(OPS_PREFIX);
	int64_t pid = 0;

	if (strncmp(base_name(name), OPS_PREFIX, strlen(OPS_PREFIX)) != 0)
		return -1;
	for (; *s >= '0' && *s <= '9' && pid < INT32_MAX; s++)
		pid = pid * 10 + (*s - '0');
	if (s == base_name(name) + strlen(OPS_PREFIX) || pid > INT32_MAX)
		return -1;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strcasecmp(s, suffixes[i]) == 0)
			return pid;
	return -1;
}

static int64_t rank_ops_pid(const struct orr_trace *t, const struct orr__rank_build *rb)
{
	return orr__import_ops_pid(orr_strtab_get(t->strs, rb->pub.source));
}

static bool has_thread_of(const struct orr__rank_build *rb, int64_t pid)
{
	const struct orr_place *p = rb->places.p;

	for (size_t i = 0; i < rb->places.n; i++)
		if (p[i].kind == ORR_PLACE_THREAD && p[i].pid == pid)
			return true;
	return false;
}

/* The rank of the tracer's file of process pid: its header's pid, else its threads'. */
static struct orr__rank_build *rank_of_pid(const struct orr_trace *t, int64_t pid)
{
	for (size_t i = 0; i < t->nranks; i++)
		if (rank_ops_pid(t, t->ranks[i]) < 0 && t->ranks[i]->pub.pid == pid)
			return t->ranks[i];
	for (size_t i = 0; i < t->nranks; i++)
		if (rank_ops_pid(t, t->ranks[i]) < 0 && t->ranks[i]->pub.pid < 0 &&
		    has_thread_of(t->ranks[i], pid))
			return t->ranks[i];
	return NULL;
}

/* What the tracer recorded of the process: from its first event's start to the last end. */
static void span_of(const struct orr__rank_build *rb, int64_t *lo, int64_t *hi)
{
	const struct orr_event *ev = rb->events.p;

	*lo = INT64_MAX, *hi = INT64_MIN;
	for (size_t i = 0; i < rb->events.n; i++) {
		if (ev[i].start_ns < *lo)
			*lo = ev[i].start_ns;
		if (ev[i].start_ns + ev[i].dur_ns > *hi)
			*hi = ev[i].start_ns + ev[i].dur_ns;
	}
}

/*
 * An op or an annotation of process pid's threads.  Steps are the tracer's (its window
 * counts the NVTX step markers): a profiler's ProfilerStep#N annotation is not taken.
 */
static bool of_process(const struct orr_trace *t, const struct orr__rank_build *src,
		       const struct orr_event *e, int64_t pid)
{
	const struct orr_place *p = ORR__AT(src->places, struct orr_place, e->place);

	if (e->kind != ORR_EVENT_OP && e->kind != ORR_EVENT_ANNOTATION)
		return false;
	if (p->kind != ORR_PLACE_THREAD || p->pid != pid)
		return false;
	if (e->kind == ORR_EVENT_ANNOTATION &&
	    orr_step_number(orr_strtab_get(t->strs, e->name)) >= 0)
		return false;
	return true;
}

/* An op's arguments: its inputs and their dims and strides appended to dst's tables. */
static uint32_t copy_op_args(struct orr__rank_build *dst, const struct orr__rank_build *src,
			     uint32_t args)
{
	const struct orr_op_args *op = ORR__AT(src->ops, struct orr_op_args, args);
	struct orr_op_args *nop = orr__vec_push(&dst->ops);

	*nop = (struct orr_op_args){ .first_input = (uint32_t)dst->inputs.n,
				     .ninputs = op->ninputs,
				     .sequence = op->sequence };
	for (uint32_t k = 0; k < op->ninputs; k++) {
		const struct orr_input *in =
			ORR__AT(src->inputs, struct orr_input, op->first_input + k);
		struct orr_input *nin = orr__vec_push(&dst->inputs);

		*nin = *in;
		nin->first_dim = (uint32_t)dst->dims.n;
		for (uint16_t d = 0; d < in->ndims; d++)
			*(int64_t *)orr__vec_push(&dst->dims) =
				*ORR__AT(src->dims, int64_t, in->first_dim + d);
		nin->first_stride = (uint32_t)dst->strides.n;
		for (uint16_t d = 0; d < in->nstrides; d++)
			*(int64_t *)orr__vec_push(&dst->strides) =
				*ORR__AT(src->strides, int64_t, in->first_stride + d);
	}
	return (uint32_t)(dst->ops.n - 1);
}

/*
 * An op's collective (record_param_comms: "Collective name", its group's ranks) and its
 * members appended to dst's tables; its index there.  The index into src's table would
 * name another of dst's collectives, or none.
 */
static uint32_t copy_coll(struct orr__rank_build *dst, const struct orr__rank_build *src,
			  uint32_t coll)
{
	const struct orr_collective *c = ORR__AT(src->colls, struct orr_collective, coll);
	struct orr_collective *nc = orr__vec_push(&dst->colls);

	*nc = *c;
	nc->first_member = (uint32_t)dst->members.n;
	for (uint32_t k = 0; k < c->nmembers; k++)
		*(int32_t *)orr__vec_push(&dst->members) =
			*ORR__AT(src->members, int32_t, c->first_member + k);
	return (uint32_t)(dst->colls.n - 1);
}

/*
 * src's ops and annotations of process pid's threads onto dst's threads of the same
 * ids.  Their external ids are dropped: they linked the ops to the runtime calls of a
 * profiler's own CUDA activities, which this session had none of, and an op with one is
 * taken for torch.profiler's with CUPTI by the profiler's cost (estimator/profiler-cost.c).
 */
static size_t merge(const struct orr_trace *t, struct orr__rank_build *dst,
		    const struct orr__rank_build *src, int64_t pid, size_t *ret_outside)
{
	const struct orr_event *ev = src->events.p;
	int64_t lo, hi;
	size_t n = 0;

	*ret_outside = 0;
	span_of(dst, &lo, &hi);
	for (size_t i = 0; i < src->events.n; i++) {
		const struct orr_place *p;
		struct orr_place *np;
		struct orr_event *ne;
		uint32_t place;

		if (!of_process(t, src, &ev[i], pid))
			continue;
		/* only ops starting inside what the tracer recorded of the process */
		if (ev[i].start_ns < lo || ev[i].start_ns >= hi) {
			(*ret_outside)++;
			continue;
		}
		p = ORR__AT(src->places, struct orr_place, ev[i].place);
		place = orr__place(dst, ORR_PLACE_THREAD, p->pid, p->tid, -1);
		np = ORR__AT(dst->places, struct orr_place, place);
		if (np->name == ORR_STR_NONE)
			np->name = p->name;
		ne = orr__vec_push(&dst->events);
		*ne = ev[i];
		ne->place = place;
		ne->external_id = -1;
		ne->correlation = -1;
		ne->flags = 0;
		if (ev[i].kind == ORR_EVENT_OP && ev[i].args != ORR_NONE)
			ne->args = copy_op_args(dst, src, ev[i].args);
		if (ev[i].coll != ORR_NONE)
			ne->coll = copy_coll(dst, src, ev[i].coll);
		n++;
	}
	return n;
}

__attribute__((format(printf, 2, 3))) static void warn(struct import_ctx *c, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;

	if (!c->opts || !c->opts->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->opts->warn(c->opts->warn_data, msg);
}

/*
 * Where the file of ops rank src, name, passes ORR_MAX_VALUES with dst's values counted:
 * read again with them held (a file, or a member of an archive file, alone), its reader
 * names the event and its byte as for one file; the limit alone, no place, for a member of
 * an archive imported from memory.
 */
static int values_where(struct import_ctx *c, const struct orr__rank_build *dst, const char *name)
{
	const uint64_t held[4] = { dst->dims.n, dst->strides.n, dst->inputs.n, dst->members.n };

	if (orr__import_file_again(c, name, held) == ORR_ETOOBIG)
		return ORR_ETOOBIG;
	return orr__limit_fail(&c->lim, ORR__LIMIT_VALUES, c->diag, name, -1, -1);
}

/* Merges ops rank src (of process pid) into its tracer's rank, or warns why not. */
static int merge_one(struct import_ctx *c, struct orr__rank_build *src, int64_t pid)
{
	struct orr_trace *t = c->t;
	const char *name = orr_strtab_get(t->strs, src->pub.source);
	struct orr__rank_build *dst = rank_of_pid(t, pid);
	size_t n, outside;

	if (!dst) {
		warn(c,
		     "skipped '%s': the ops of process %lld, whose tracer file (.orr) is not "
		     "read with it",
		     name, (long long)pid);
		return 0;
	}
	if (!has_thread_of(src, pid)) {
		warn(c,
		     "skipped '%s': no thread of process %lld in it (torch.profiler's trace "
		     "from a PyTorch built without Kineto has neither thread ids nor times to "
		     "match the tracer's)",
		     name, (long long)pid);
		return 0;
	}
	/*
	 * The merge appends src's values to dst's, their 32-bit indices moved by dst's
	 * counts: held to ORR_MAX_VALUES (at most 2^32 - 2) with all of src's counted.
	 */
	if (!orr__values_fit(&c->lim, dst->dims.n + src->dims.n, dst->strides.n + src->strides.n,
			     dst->inputs.n + src->inputs.n, dst->members.n + src->members.n))
		return values_where(c, dst, name);
	n = merge(t, dst, src, pid, &outside);
	if (!n && outside)
		warn(c,
		     "skipped '%s': its %zu ops and annotations of process %lld all lie outside "
		     "what the tracer recorded of it (another run's, or on another clock)",
		     name, outside, (long long)pid);
	/* the merged rank is held to the limits each file was: events, and threads too */
	if (dst->events.n > c->lim.max[ORR__LIMIT_EVENTS])
		return orr__limit_fail(&c->lim, ORR__LIMIT_EVENTS, c->diag, name, -1, -1);
	if (dst->places.n > c->lim.max[ORR__LIMIT_PLACES])
		return orr__limit_fail(&c->lim, ORR__LIMIT_PLACES, c->diag, name, -1, -1);
	orr__rank_finish_native(t, dst);
	orr_debug("traces", "%s: %zu ops and annotations of process %lld merged into '%s'", name, n,
		  (long long)pid, orr_strtab_get(t->strs, dst->pub.source));
	return 0;
}

struct ops_file {
	int64_t pid;
	size_t rank; /* index into t->ranks */
};

static int by_pid(const void *a, const void *b)
{
	const struct ops_file *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * The ops files by process, each merged; a second file of one process (ops-PID.json.gz
 * or ops-0PID.json beside ops-PID.json) is skipped with a warning: merged too, every op
 * of the process would be there twice.
 */
static int merge_all(struct import_ctx *c, size_t nops)
{
	struct orr_trace *t = c->t;
	struct ops_file *f = orr_xcalloc(nops ? nops : 1, sizeof(*f));
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < t->nranks; i++) {
		int64_t pid = rank_ops_pid(t, t->ranks[i]);

		if (pid >= 0)
			f[n++] = (struct ops_file){ pid, i };
	}
	if (n)
		qsort(f, n, sizeof(*f), by_pid);
	for (size_t i = 0; i < n && !r; i++) {
		size_t first = i;

		while (first > 0 && f[first - 1].pid == f[i].pid)
			first--;
		if (first == i)
			r = merge_one(c, t->ranks[f[i].rank], f[i].pid);
		else
			warn(c,
			     "skipped '%s': the ops of process %lld are merged from '%s' already",
			     orr_strtab_get(t->strs, t->ranks[f[i].rank]->pub.source),
			     (long long)f[i].pid,
			     orr_strtab_get(t->strs, t->ranks[f[first].rank]->pub.source));
	}
	free(f);
	return r;
}

int orr__import_merge_ops(struct import_ctx *c)
{
	struct orr_trace *t = c->t;
	size_t kept = 0, tracers = 0;
	int r;

	for (size_t i = 0; i < t->nranks; i++)
		tracers += rank_ops_pid(t, t->ranks[i]) < 0;
	/* Without the tracer's files, a profiler's trace is read as one of its own. */
	if (!tracers)
		return 0;
	r = merge_all(c, t->nranks - tracers);
	/* Then the ops ranks go (merge_one() looks for the tracer's among all of them). */
	for (size_t i = 0; i < t->nranks; i++) {
		if (rank_ops_pid(t, t->ranks[i]) < 0)
			t->ranks[kept++] = t->ranks[i];
		else
			orr__rank_free(t->ranks[i]);
	}
	t->nranks = kept;
	return r;
}
