/* SPDX-License-Identifier: MIT */
/*
 * What each flat record becomes in the trace model (orrery/trace.h):
 *   RUNTIME/DRIVER   a call on its thread, sub = orr_call_classify(name);
 *                    a launch inside an NCCL call (its external id is the call's,
 *                    nccl.c) gets the call's collective: communicator, sequence, bytes;
 *   KERNEL/MEMCPY/MEMSET  a GPU task on (device, stream), with its launch's correlation;
 *                    an NCCL kernel also gets a collective of the type its name gives
 *                    (orr_trace_import() gives it its launch's, when the launch has one);
 *   SYNC             a sync record with orr_sync_args (pairing.c fills the event record);
 *   MARKER           NVTX: step markers become "ProfilerStep#N" annotations, emit_nvtx
 *                    ranges ops (name, sequence, input shapes), other ranges annotations,
 *                    instant marks markers;
 *   CUDA_EVENT       only feeds the pairing (it has no time of its own);
 *   DEVICE/CONTEXT/NAME/EXT_CORR/OVERHEAD  the header, tables and counts.
 */
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "banned.h"

static int64_t corr_of(uint32_t c)
{
	return c ? (int64_t)c : -1;
}

static int64_t dur_of(const struct orr__trec *r)
{
	return r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
}

static bool lost_timing(struct orr__session *s, const struct orr__trec *r)
{
	if (r->start_ns || r->end_ns)
		return false;
	s->sum.lost_timing++;
	s->sum.dropped_records++;
	return true;
}

static int64_t external_of(const struct orr__session *s, uint32_t corr)
{
	const struct orr__ext *e = &s->ext[corr % ORR__EXT_SLOTS];

	return corr && e->corr == corr ? (int64_t)e->ext : -1;
}

static void note_cpu(struct orr__session *s, int64_t end_ns)
{
	if (end_ns > s->last_cpu_ns)
		s->last_cpu_ns = end_ns;
}

/* "nccl:<hash>" names a communicator; "nccl:<hash>:<lo>-<hi>" a pair of its ranks. */
static int nccl_pg_name(struct orr__session *s, const struct orr__nccl_call *c, uint32_t *ret_id)
{
	char buf[64];
	int n;

	if (c->p2p && c->myrank >= 0 && c->peer >= 0)
		n = snprintf(buf, sizeof(buf), "nccl:%016llx:%d-%d", (unsigned long long)c->comm,
			     c->myrank < c->peer ? c->myrank : c->peer,
			     c->myrank < c->peer ? c->peer : c->myrank);
	else
		n = snprintf(buf, sizeof(buf), "nccl:%016llx", (unsigned long long)c->comm);
	return orr__session_str(s, buf, (size_t)n, ret_id);
}

/* A collective's bytes in and out of this rank; NCCL gives AllGather's input, RS's output. */
static void nccl_bytes(const struct orr__nccl_call *c, struct orr_collective *co)
{
	co->in_bytes = co->out_bytes = c->bytes;
	if (c->bytes < 0 || c->nranks < 1 || c->bytes > INT64_MAX / c->nranks)
		return;
	if (!strcmp(c->type, "AllGather"))
		co->out_bytes = c->bytes * c->nranks;
	else if (!strcmp(c->type, "ReduceScatter"))
		co->in_bytes = c->bytes * c->nranks;
}

/* The collective of the NCCL call a launch belongs to, when external_id names one. */
static int nccl_collective(struct orr__session *s, int64_t external_id, uint32_t *ret_coll)
{
	struct orr__nccl_call c;
	struct orr_collective co = { .in_nelems = -1,
				     .out_nelems = -1,
				     .sequence = -1,
				     .group_size = -1,
				     .src_rank = -1,
				     .dst_rank = -1 };
	int r;

	if (!s->cfg.nccl || external_id < 0 ||
	    !orr__nccl_find(s->cfg.nccl, (uint64_t)external_id, &c))
		return 0;
	if (orr__session_str(s, c.type, strlen(c.type), &co.type) ||
	    (c.has_comm && nccl_pg_name(s, &c, &co.pg_name)))
		return -1;
	nccl_bytes(&c, &co);
	co.sequence = c.sequence;
	co.group_size = c.nranks;
	if (c.p2p && c.myrank >= 0) {
		co.src_rank = !strcmp(c.type, "Send") ? c.myrank : c.peer;
		co.dst_rank = !strcmp(c.type, "Send") ? c.peer : c.myrank;
	}
	if ((r = orr_native_writer_collective(s->w, &co, NULL, 0, ret_coll)))
		return orr__session_fail(s, r);
	s->sum.nccl_calls++;
	return 0;
}

void orr__session_nccl_comms(struct orr__session *s)
{
	struct orr__nccl_comm cm[ORR__NCCL_COMMS];
	size_t n = orr__nccl_comms(s->cfg.nccl, cm, ORR__NCCL_COMMS);
	struct orr__nccl_call c = { 0 };
	struct orr_comm row = { 0 };
	int r;

	if (n && orr__session_str(s, "nccl", 4, &row.backend))
		return;
	for (size_t i = 0; i < n; i++) {
		c.comm = cm[i].hash;
		row.size = cm[i].nranks;
		if (nccl_pg_name(s, &c, &row.name))
			return;
		if ((r = orr_native_writer_comm(s->w, &row, NULL, 0))) {
			orr__session_fail(s, r);
			return;
		}
	}
}

bool orr__driver_call_kept(const char *name)
{
	return orr_call_classify(name) != ORR_CALL_OTHER;
}

/* A driver call not kept (by its name, cached per cbid); an unnamed one is kept. */
static bool driver_query(struct orr__session *s, uint32_t cbid)
{
	uint8_t *cached = cbid < ORR__MAX_CBID ? &s->driver_query[cbid] : NULL;
	const char *name;
	bool query;

	if (cached && *cached)
		return *cached == 2;
	name = s->cfg.api_name ? s->cfg.api_name(s->cfg.api_name_data, true, cbid) : NULL;
	query = name && name[0] && !orr__driver_call_kept(name);
	if (cached)
		*cached = query ? 2 : 1;
	return query;
}

void orr__session_cpu(struct orr__session *s, const struct orr__trec *r)
{
	bool driver = r->kind == ORR__TREC_DRIVER;
	struct orr_event ev = { .start_ns = r->start_ns,
				.dur_ns = dur_of(r),
				.correlation = corr_of(r->correlation),
				.external_id = external_of(s, r->correlation),
				.args = ORR_NONE,
				.coll = ORR_NONE,
				.kind = driver ? ORR_EVENT_DRIVER : ORR_EVENT_RUNTIME };

	if (lost_timing(s, r) || orr__session_verdict(s, false, r->start_ns) != ORR__KEEP)
		return;
	if (driver && driver_query(s, r->cbid)) { /* cupti.c turns them off: a safety net */
		s->sum.driver_queries++;
		return;
	}
	if (orr__session_ready(s, r->start_ns) ||
	    orr__session_thread(s, r->pid, r->tid, &ev.place) ||
	    orr__session_api_name(s, driver, r->cbid, &ev.name, &ev.sub))
		return;
	if (r->correlation) {
		if (!s->any_corr || r->correlation < s->min_corr)
			s->min_corr = r->correlation;
		if (!s->any_corr || r->correlation > s->max_corr)
			s->max_corr = r->correlation;
		s->any_corr = true;
	}
	if (ev.sub == ORR_CALL_LAUNCH && nccl_collective(s, ev.external_id, &ev.coll))
		return;
	note_cpu(s, r->start_ns + ev.dur_ns);
	orr__session_put(s, &ev);
}

static int kernel_collective(struct orr__session *s, const char *name, uint32_t *ret_coll)
{
	struct orr_collective c = { .in_nelems = -1,
				    .out_nelems = -1,
				    .in_bytes = -1,
				    .out_bytes = -1,
				    .sequence = -1,
				    .group_size = -1,
				    .src_rank = -1,
				    .dst_rank = -1 };
	const char *type;
	size_t len;
	int r;

	*ret_coll = ORR_NONE;
	if (!orr_nccl_kernel_type(name, &type, &len))
		return 0;
	if (orr__session_str(s, type, len, &c.type))
		return -1;
	if ((r = orr_native_writer_collective(s->w, &c, NULL, 0, ret_coll)))
		return orr__session_fail(s, r);
	return 0;
}

static int gpu_event(struct orr__session *s, const struct orr__trec *r, struct orr_event *ev)
{
	const char *kernel = r->name ? r->name : "<unknown kernel>";

	*ev = (struct orr_event){ .start_ns = r->start_ns,
				  .dur_ns = dur_of(r),
				  .correlation = corr_of(r->correlation),
				  .external_id = -1,
				  .args = ORR_NONE,
				  .coll = ORR_NONE };
	if (orr__session_ready(s, r->start_ns) ||
	    orr__session_stream(s, r->device, r->stream, &ev->place))
		return -1;
	if (r->kind != ORR__TREC_KERNEL) {
		ev->kind = r->kind == ORR__TREC_MEMCPY ? ORR_EVENT_MEMCPY : ORR_EVENT_MEMSET;
		return orr__session_copy_name(s, r, &ev->name);
	}
	ev->kind = ORR_EVENT_KERNEL;
	if (orr__session_kernel_name(s, kernel, &ev->name))
		return -1;
	return kernel_collective(s, kernel, &ev->coll);
}

static void put_gpu(struct orr__session *s, struct orr_event *ev, int64_t bytes,
		    const struct orr_kernel_args *launch)
{
	int r;

	if (ev->kind != ORR_EVENT_KERNEL) {
		struct orr_copy_args a = { .bytes = bytes };

		r = orr_native_writer_copy(s->w, &a, &ev->args);
	} else {
		r = launch->grid[0] ? orr_native_writer_kernel(s->w, launch, &ev->args) : 0;
	}
	if (r) {
		orr__session_fail(s, r);
		return;
	}
	orr__session_put(s, ev);
}

void orr__session_gpu(struct orr__session *s, const struct orr__trec *r)
{
	enum orr__verdict v;
	struct orr_event ev;

	if (lost_timing(s, r))
		return;
	v = orr__session_verdict(s, true, r->start_ns);
	if (v == ORR__DROP || gpu_event(s, r, &ev))
		return;
	if (v == ORR__KEEP) {
		put_gpu(s, &ev, r->bytes, &r->launch);
		return;
	}
	if (s->npending == s->cfg.max_pending) {
		s->sum.dropped_events++;
		return;
	}
	s->pending[s->npending++] = (struct orr__pending){ ev, r->bytes, r->launch };
}

void orr__session_emit_sync(void *data, struct orr__held_sync *h, enum orr__resolution how)
{
	struct orr__session *s = data;
	int r;

	if (h->ev.sub == ORR_SYNC_EVENT || h->ev.sub == ORR_SYNC_STREAM_WAIT) {
		s->sum.syncs_exact += how == ORR__PAIR_EXACT;
		s->sum.syncs_fallback += how == ORR__PAIR_FALLBACK;
		s->sum.syncs_unresolved += how == ORR__PAIR_UNRESOLVED;
	}
	if (!s->w) {
		orr__session_fail(s, s->sum.error);
		return;
	}
	if ((r = orr_native_writer_sync(s->w, &h->args, &h->ev.args))) {
		orr__session_fail(s, r);
		return;
	}
	orr__session_put(s, &h->ev);
}

void orr__session_sync(struct orr__session *s, const struct orr__trec *r)
{
	bool stream = r->stream != ORR__INVALID32, event = r->event_id != ORR__INVALID32;
	struct orr__held_sync h = {
		.ev = { .start_ns = r->start_ns,
			.dur_ns = dur_of(r),
			.correlation = corr_of(r->correlation),
			.external_id = -1,
			.args = ORR_NONE,
			.coll = ORR_NONE,
			.kind = ORR_EVENT_SYNC,
			.sub = r->sync_kind < ORR_SYNC_COUNT ? r->sync_kind : ORR_SYNC_UNKNOWN },
		.args = { .stream = stream ? (int64_t)r->stream : -1,
			  .wait_on_stream = -1,
			  .event_record_corr = -1,
			  .event_id = event ? (int64_t)r->event_id : -1 },
		.context = r->context,
		.event_id = r->event_id,
		.corr = r->correlation,
		.sync_id = r->sync_id,
		.next = ORR_NONE,
	};

	if (lost_timing(s, r) || orr__session_verdict(s, false, r->start_ns) != ORR__KEEP)
		return;
	if (orr__session_ready(s, r->start_ns) ||
	    orr__session_stream(s, orr__session_device_of(s, r->context), h.args.stream,
				&h.ev.place) ||
	    orr__session_sync_name(s, h.ev.sub, &h.ev.name))
		return;
	note_cpu(s, r->start_ns + h.ev.dur_ns);
	if (h.ev.sub == ORR_SYNC_EVENT || h.ev.sub == ORR_SYNC_STREAM_WAIT)
		orr__pairing_sync(s->pairing, &h);
	else
		orr__session_emit_sync(s, &h, ORR__PAIR_UNRESOLVED);
}

/* ---- NVTX ---- */

/* Whether step marker `step` is kept: one of the window's, or anything while speculative. */
static bool step_kept(struct orr__session *s, int64_t step)
{
	return !orr__session_settle(s) || orr__window_has_step(s->win, step);
}

/* The event of a range start or an instant mark: name, kind, place, op arguments. */
static int marker_event(struct orr__session *s, const struct orr__trec *r, int64_t step,
			struct orr_event *ev)
{
	const char *name = r->name ? r->name : (r->domain ? r->domain : "");
	struct orr__nvtx_name n;
	char buf[160];
	int rc;

	*ev = (struct orr_event){ .start_ns = r->start_ns,
				  .correlation = -1,
				  .external_id = -1,
				  .args = ORR_NONE,
				  .coll = ORR_NONE,
				  .kind = ORR_EVENT_ANNOTATION };
	if (orr__session_ready(s, r->start_ns) ||
	    orr__session_thread(s, r->pid, r->tid, &ev->place))
		return -1;
	if (step >= 0) {
		/* The name orr_step_number() reads, whatever ORR_RECORD_STEP_PREFIX was. */
		snprintf(buf, sizeof(buf), "ProfilerStep#%lld", (long long)step);
		return orr__session_str(s, buf, strlen(buf), &ev->name);
	}
	if (r->domain || !(r->marker & ORR__MARKER_START)) {
		ev->kind = r->marker & ORR__MARKER_START ? ORR_EVENT_ANNOTATION : ORR_EVENT_MARKER;
		return orr__session_str(s, name, strlen(name), &ev->name);
	}
	orr__nvtx_parse(name, &n);
	if (orr__session_str(s, n.name, n.len, &ev->name))
		return -1;
	if (!n.emit_nvtx)
		return 0;
	ev->kind = ORR_EVENT_OP;
	if (n.seq < 0 && !n.ninputs)
		return 0;
	if ((rc = orr_native_writer_op(s->w, n.seq, n.inputs, n.ninputs, &ev->args)))
		return orr__session_fail(s, rc);
	return 0;
}

static void put_range(struct orr__session *s, struct orr__range *g, int64_t end_ns)
{
	g->ev.dur_ns = end_ns > g->ev.start_ns ? end_ns - g->ev.start_ns : 0;
	note_cpu(s, end_ns);
	orr__session_put(s, &g->ev);
}

static struct orr__range *find_range(struct orr__session *s, uint64_t id)
{
	uint64_t i;

	return orr__map_find(&s->open, id, &i) ? &s->ranges[i] : NULL;
}

static void close_range(struct orr__session *s, struct orr__range *g)
{
	orr__map_remove(&s->open, g->id);
	g->used = false;
	s->nranges--;
	s->free_ranges[s->max_ranges - s->nranges - 1] = (uint32_t)(g - s->ranges);
}

/* An entry from the free stack, which holds max_ranges - nranges indices. */
static struct orr__range *new_range(struct orr__session *s, uint64_t id)
{
	uint32_t i;

	if (s->nranges == s->max_ranges)
		return NULL;
	i = s->free_ranges[s->max_ranges - s->nranges - 1];
	if (orr__map_put(&s->open, id, i))
		return NULL;
	s->ranges[i] = (struct orr__range){ .id = id, .used = true };
	s->nranges++;
	return &s->ranges[i];
}

static void range_start(struct orr__session *s, const struct orr__trec *r)
{
	const char *name = r->name ? r->name : "";
	int64_t step = orr__window_step_of(s->win, name, strlen(name));
	bool keep = step >= 0 ? step_kept(s, step)
			      : orr__session_verdict(s, false, r->start_ns) == ORR__KEEP;
	struct orr__range *g = find_range(s, r->id);
	struct orr_event ev = { 0 };

	if (keep && marker_event(s, r, step, &ev))
		keep = false;
	if (g && (g->have & ORR__MARKER_END)) {
		if (keep) {
			g->ev = ev;
			put_range(s, g, g->end_ns);
		}
		close_range(s, g);
		return;
	}
	if (!g && !(g = new_range(s, r->id))) {
		s->sum.dropped_events += keep;
		return;
	}
	g->ev = ev;
	g->have |= ORR__MARKER_START;
	g->keep = keep;
}

static void range_end(struct orr__session *s, const struct orr__trec *r)
{
	struct orr__range *g = find_range(s, r->id);

	if (g && (g->have & ORR__MARKER_START)) {
		if (g->keep)
			put_range(s, g, r->start_ns);
		close_range(s, g);
		return;
	}
	/* The end came first (another buffer): wait for the start. */
	if (!g && !(g = new_range(s, r->id)))
		return;
	g->have |= ORR__MARKER_END;
	g->end_ns = r->start_ns;
}

/* The end of what was captured, for ranges and steps still open at close. */
static int64_t capture_end(const struct orr__session *s)
{
	int64_t end = atomic_load(&s->win->end_ns);

	return end != INT64_MAX && s->win->windowed ? end : s->last_cpu_ns;
}

static void instant(struct orr__session *s, const struct orr__trec *r)
{
	const char *name = r->name ? r->name : "";
	int64_t step = orr__window_step_of(s->win, name, strlen(name));
	struct orr_event ev;

	if (step >= 0 ? !step_kept(s, step)
		      : orr__session_verdict(s, false, r->start_ns) != ORR__KEEP)
		return;
	if (marker_event(s, r, step, &ev))
		return;
	if (step < 0) {
		note_cpu(s, r->start_ns);
		orr__session_put(s, &ev);
		return;
	}
	/* An instant step marker: the step lasts until the next one. */
	if (s->has_last_mark) {
		s->last_mark.dur_ns = ev.start_ns > s->last_mark.start_ns
					      ? ev.start_ns - s->last_mark.start_ns
					      : 0;
		orr__session_put(s, &s->last_mark);
	}
	s->last_mark = ev;
	s->has_last_mark = true;
}

void orr__session_marker(struct orr__session *s, const struct orr__trec *r)
{
	if (r->marker & ORR__MARKER_INSTANT)
		instant(s, r);
	else if (r->marker & ORR__MARKER_START)
		range_start(s, r);
	else if (r->marker & ORR__MARKER_END)
		range_end(s, r);
}

void orr__session_forget_ranges(struct orr__session *s)
{
	if (s->ranges && s->free_ranges)
		for (size_t i = 0; i < s->max_ranges; i++) {
			s->ranges[i].used = false;
			s->free_ranges[i] = (uint32_t)(s->max_ranges - 1 - i);
		}
	s->nranges = 0;
	orr__map_release(&s->open);
	s->has_last_mark = false;
}

void orr__session_finish_records(struct orr__session *s)
{
	int64_t end = capture_end(s);

	for (size_t i = 0; i < s->max_ranges && s->nranges; i++) {
		struct orr__range *g = &s->ranges[i];

		if (g->used && (g->have & ORR__MARKER_START) && g->keep)
			put_range(s, g, end);
		if (g->used)
			close_range(s, g);
	}
	if (s->has_last_mark) {
		s->last_mark.dur_ns = end > s->last_mark.start_ns ? end - s->last_mark.start_ns : 0;
		orr__session_put(s, &s->last_mark);
		s->has_last_mark = false;
	}
	for (size_t i = 0; i < s->npending; i++) {
		struct orr__pending *p = &s->pending[i];
		int64_t c = p->ev.correlation;

		if (s->any_corr && c >= s->min_corr && c <= s->max_corr) {
			s->sum.pending_kept++;
			put_gpu(s, &p->ev, p->bytes, &p->launch);
		} else {
			s->sum.pending_dropped++;
		}
	}
	s->npending = 0;
}
