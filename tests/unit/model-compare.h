/* SPDX-License-Identifier: MIT */
/*
 * Comparing two trace models field by field, with every index resolved (string ids,
 * side-table rows and member lists differ from one import to another; what they mean
 * must not).  Used by the round trips of test-traces-chrome.c, test-traces-bundle.c and
 * test-traces-native.c.
 * Include after <cmocka.h>.
 */
#ifndef ORRERY_TEST_MODEL_COMPARE_H
#define ORRERY_TEST_MODEL_COMPARE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/trace.h"

/* Fields a format cannot carry, left out of the comparison (the source always is). */
enum {
	/* Kineto JSON: categories the model does not keep (only their counts are in it), the
	 * number of ac2g endpoints read (the writer draws its own), and what only a native
	 * header says (host, producer, clock, pid, versions, drops, step window). */
	MODEL_CMP_CHROME = 1,
	/* A native file written by a converter: its producer is the writer, not the source's. */
	MODEL_CMP_NATIVE = 2,
};

/* A growable string: what an element means, with its indices resolved. */
struct cmp_text {
	char *p;
	size_t len, cap;
};

static inline void cmp_printf(struct cmp_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void cmp_printf(struct cmp_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* A buffer before the first text: vsnprintf() never writes to a null one. */
	if (!t->p) {
		t->cap = 64;
		t->len = 0;
		t->p = orr_xmalloc(t->cap);
	}
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < t->cap - t->len)
			break;
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->p = orr_xrealloc(t->p, t->cap);
	}
	t->len += (size_t)n;
}

static inline struct cmp_text *cmp_open(struct cmp_text *t)
{
	t->len = 0;
	cmp_printf(t, "%s", "");
	return t;
}

static inline const char *cmp_close(struct cmp_text *t)
{
	return t->p;
}

static inline void cmp_members(struct cmp_text *f, const struct orr_rank *r, uint32_t first,
			       uint32_t n)
{
	cmp_printf(f, "%s", "[");
	for (uint32_t i = 0; i < n; i++)
		cmp_printf(f, "%s%d", i ? "," : "", r->members[first + i]);
	cmp_printf(f, "%s", "]");
}

static inline void cmp_place(struct cmp_text *f, const struct orr_trace *t,
			     const struct orr_place *p)
{
	cmp_printf(f, "place{kind %u pid %lld tid %lld device %d name '%s'}", p->kind,
		   (long long)p->pid, (long long)p->tid, p->device, orr_trace_str(t, p->name));
}

static inline void cmp_op(struct cmp_text *f, const struct orr_trace *t, const struct orr_rank *r,
			  uint32_t row)
{
	const struct orr_op_args *op = row == ORR_NONE ? NULL : &r->ops[row];

	/* No row and a row without inputs or sequence number say the same. */
	if (!op || (!op->ninputs && op->sequence == -1)) {
		cmp_printf(f, "%s", " op{}");
		return;
	}
	cmp_printf(f, " op{seq %lld inputs", (long long)op->sequence);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];

		cmp_printf(f, " [list %u dtype '%s' dims", in->is_list,
			   orr_trace_str(t, in->dtype));
		for (uint16_t d = 0; d < in->ndims; d++)
			cmp_printf(f, " %lld", (long long)r->dims[in->first_dim + d]);
		if (in->nstrides)
			cmp_printf(f, "%s", " strides");
		for (uint16_t d = 0; d < in->nstrides; d++)
			cmp_printf(f, " %lld", (long long)r->strides[in->first_stride + d]);
		cmp_printf(f, "%s", "]");
	}
	cmp_printf(f, "%s", "}");
}

static inline void cmp_sync(struct cmp_text *f, const struct orr_rank *r, uint32_t row)
{
	struct orr_sync_args none = { -1, -1, -1, -1 };
	const struct orr_sync_args *s = row == ORR_NONE ? &none : &r->syncs[row];

	cmp_printf(f, " sync{stream %lld wait_on %lld record %lld event %lld}",
		   (long long)s->stream, (long long)s->wait_on_stream,
		   (long long)s->event_record_corr, (long long)s->event_id);
}

static inline void cmp_coll(struct cmp_text *f, const struct orr_trace *t, const struct orr_rank *r,
			    uint32_t row)
{
	const struct orr_collective *c;

	if (row == ORR_NONE)
		return;
	c = &r->collectives[row];
	cmp_printf(f,
		   " coll{type '%s' dtype '%s' pg '%s' desc '%s' nelems %lld %lld bytes %lld %lld "
		   "seq %lld size %d src %d dst %d members ",
		   orr_trace_str(t, c->type), orr_trace_str(t, c->dtype),
		   orr_trace_str(t, c->pg_name), orr_trace_str(t, c->pg_desc),
		   (long long)c->in_nelems, (long long)c->out_nelems, (long long)c->in_bytes,
		   (long long)c->out_bytes, (long long)c->sequence, c->group_size, c->src_rank,
		   c->dst_rank);
	cmp_members(f, r, c->first_member, c->nmembers);
	cmp_printf(f, "%s", "}");
}

static inline void cmp_event(struct cmp_text *f, const struct orr_trace *t,
			     const struct orr_rank *r, const struct orr_event *e)
{
	cmp_printf(f, "%s/%u flags %u start %lld dur %lld corr %lld ext %lld name '%s' ",
		   orr_event_kind_name(e->kind), e->sub, e->flags, (long long)e->start_ns,
		   (long long)e->dur_ns, (long long)e->correlation, (long long)e->external_id,
		   orr_trace_str(t, e->name));
	cmp_place(f, t, &r->places[e->place]);
	if (e->kind == ORR_EVENT_OP)
		cmp_op(f, t, r, e->args);
	else if ((e->kind == ORR_EVENT_MEMCPY || e->kind == ORR_EVENT_MEMSET) &&
		 e->args != ORR_NONE)
		cmp_printf(f, " bytes %lld", (long long)r->copies[e->args].bytes);
	else if (e->kind == ORR_EVENT_SYNC || e->kind == ORR_EVENT_CUDA_EVENT)
		cmp_sync(f, r, e->args);
	else if (e->kind == ORR_EVENT_KERNEL && e->args != ORR_NONE)
		cmp_printf(f, " launch{grid %u %u %u block %u %u %u shared %u registers %u}",
			   r->kernels[e->args].grid[0], r->kernels[e->args].grid[1],
			   r->kernels[e->args].grid[2], r->kernels[e->args].block[0],
			   r->kernels[e->args].block[1], r->kernels[e->args].block[2],
			   r->kernels[e->args].shared_bytes, r->kernels[e->args].registers);
	else if (e->args != ORR_NONE)
		cmp_printf(f, " args %u", e->args);
	cmp_coll(f, t, r, e->coll);
}

static inline void cmp_header(struct cmp_text *f, const struct orr_trace *t,
			      const struct orr_rank *r, unsigned flags)
{
	cmp_printf(f, "rank %d world %d backend '%s' base %lld nplaces %zu nevents %zu\n", r->rank,
		   r->world_size, orr_trace_str(t, r->backend), (long long)r->base_time_ns,
		   r->nplaces, r->nevents);
	cmp_printf(f,
		   "rows ops %zu inputs %zu dims %zu kernels %zu copies %zu syncs %zu colls %zu "
		   "members %zu\n",
		   r->nops, r->ninputs, r->ndims, r->nkernels, r->ncopies, r->nsyncs,
		   r->ncollectives, r->nmembers);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct orr_device *d = &r->devices[i];

		cmp_printf(f, "device %d '%s' sms %d cc %d.%d mem %lld\n", d->id,
			   orr_trace_str(t, d->name), d->num_sms, d->compute_major,
			   d->compute_minor, (long long)d->total_mem_bytes);
	}
	for (size_t i = 0; i < r->ncomms; i++) {
		const struct orr_comm *c = &r->comms[i];

		cmp_printf(f, "comm '%s' '%s' '%s' size %d ", orr_trace_str(t, c->name),
			   orr_trace_str(t, c->desc), orr_trace_str(t, c->backend), c->size);
		cmp_members(f, r, c->first_member, c->nmembers);
		cmp_printf(f, "%s", "\n");
	}
	for (size_t i = 0; i < r->nplaces; i++) {
		cmp_place(f, t, &r->places[i]);
		cmp_printf(f, "%s", "\n");
	}
	if (flags & MODEL_CMP_CHROME)
		return;
	cmp_printf(f, "flows %llu\n", (unsigned long long)r->nflows);
	for (size_t i = 0; i < r->nskipped; i++)
		cmp_printf(f, "skipped '%s' %llu\n", orr_trace_str(t, r->skipped[i].category),
			   (unsigned long long)r->skipped[i].count);
	cmp_printf(f, "host '%s' producer '%s' clock '%s' pid %lld local %d cupti %u cuda %d %d\n",
		   orr_trace_str(t, r->host),
		   flags & MODEL_CMP_NATIVE ? "" : orr_trace_str(t, r->producer),
		   orr_trace_str(t, r->clock_source), (long long)r->pid, r->local_rank,
		   r->cupti_version, r->cuda_driver_version, r->cuda_runtime_version);
	cmp_printf(f, "dropped %llu %llu steps %lld %lld truncated %d\n",
		   (unsigned long long)r->dropped_records, (unsigned long long)r->dropped_events,
		   (long long)r->first_step, (long long)r->last_step, r->truncated);
}

/* Fails with both renderings at the first difference; what is compared is above. */
static inline void assert_same_model(const struct orr_trace *a, const struct orr_trace *b,
				     unsigned flags)
{
	struct cmp_text ta = { 0 }, tb = { 0 };

	assert_int_equal(orr_trace_rank_count(a), orr_trace_rank_count(b));
	for (size_t k = 0; k < orr_trace_rank_count(a); k++) {
		const struct orr_rank *ra = orr_trace_get_rank(a, k),
				      *rb = orr_trace_get_rank(b, k);

		cmp_header(cmp_open(&ta), a, ra, flags);
		cmp_header(cmp_open(&tb), b, rb, flags);
		if (strcmp(cmp_close(&ta), cmp_close(&tb)) != 0)
			fail_msg("rank %zu differs:\n--- a\n%s--- b\n%s", k, ta.p, tb.p);
		for (size_t i = 0; i < ra->nevents; i++) {
			cmp_event(cmp_open(&ta), a, ra, &ra->events[i]);
			cmp_event(cmp_open(&tb), b, rb, &rb->events[i]);
			if (strcmp(cmp_close(&ta), cmp_close(&tb)) != 0)
				fail_msg("rank %zu event %zu differs:\n  a: %s\n  b: %s", k, i,
					 ta.p, tb.p);
		}
	}
	free(ta.p);
	free(tb.p);
}

#endif
