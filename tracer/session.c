/* SPDX-License-Identifier: MIT */
/*
 * The session: flat records in, one native file out, on the writer thread only.
 *
 * The file is opened at the first event to write, by when CUPTI has usually delivered
 * the DEVICE records the header lists.  With a step window and no step marker seen yet,
 * events are written speculatively: if a marker never comes the file holds everything
 * (and the log says so); at the first marker the speculative file is thrown away and a
 * new one holds only the window.  Everything that refers to the file's own ids (places,
 * strings, held syncs, open ranges) is forgotten with it; what CUPTI said about the
 * process (devices, contexts, CUDA event records, thread names) is kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "banned.h"

static void forget_file(struct orr__session *s)
{
	orr__map_release(&s->places);
	orr__map_release(&s->kernels);
	orr__map_release(&s->copies);
	for (int d = 0; d < 2; d++)
		if (s->api_ids[d])
			memset(s->api_ids[d], 0, ORR__MAX_CBID * sizeof(uint32_t));
	memset(s->api_class, 0, sizeof(s->api_class));
	memset(s->sync_names, 0, sizeof(s->sync_names));
	if (s->pairing)
		orr__pairing_forget_held(s->pairing);
	orr__session_forget_ranges(s);
	s->npending = 0;
	s->any_corr = false;
	s->last_cpu_ns = INT64_MIN;
	s->sum.events = 0;
}

int orr__session_new(const struct orr__session_config *cfg, struct orr__session **ret_s)
{
	struct orr__session *s = orr__tcalloc(1, sizeof(*s));
	int r = -ENOMEM;

	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->win = cfg->window;
	s->cfg.max_pending = cfg->max_pending ? cfg->max_pending : 1u << 16;
	s->max_ranges = cfg->max_open ? cfg->max_open : 1u << 16;
	s->path = orr__tstrndup(cfg->path, strlen(cfg->path));
	s->api_ids[0] = orr__tcalloc(ORR__MAX_CBID, sizeof(uint32_t));
	s->api_ids[1] = orr__tcalloc(ORR__MAX_CBID, sizeof(uint32_t));
	s->ranges = orr__tcalloc(s->max_ranges, sizeof(*s->ranges));
	s->free_ranges = orr__tcalloc(s->max_ranges, sizeof(*s->free_ranges));
	s->pending = orr__tcalloc(s->cfg.max_pending, sizeof(*s->pending));
	s->last_cpu_ns = INT64_MIN;
	if (!s->path || !s->api_ids[0] || !s->api_ids[1] || !s->ranges || !s->free_ranges ||
	    !s->pending)
		goto fail;
	orr__session_forget_ranges(s);
	r = orr__pairing_new(cfg->max_events ? cfg->max_events : 1u << 16,
			     cfg->max_syncs ? cfg->max_syncs : 1u << 14, orr__session_emit_sync, s,
			     &s->pairing);
	if (r)
		goto fail;
	*ret_s = s;
	return 0;
fail:
	orr__session_discard(s);
	return r;
}

int orr__session_fail(struct orr__session *s, int err)
{
	if (!s->sum.error)
		s->sum.error = err;
	s->sum.dropped_events++;
	return -1;
}

static int open_writer(struct orr__session *s, int64_t t_ns)
{
	/* A FIFO planted at the name would block the writer: only a regular file is made. */
	struct orr_native_writer_options o = { .regular_only = true };
	struct orr_native_header h = s->cfg.header;
	int r;

	h.devices = s->devices;
	h.ndevices = s->ndevices;
	h.base_time_ns = t_ns;
	r = orr_native_writer_open(s->path, &h, &o, &s->w);
	if (r) {
		s->w = NULL;
		s->open_failed = true;
		orr__log("cannot create %s: %s; nothing will be recorded", s->path,
			 r == -EEXIST ? "it exists and is not a regular file" : strerror(-r));
		return orr__session_fail(s, r);
	}
	s->speculative = s->win->windowed && atomic_load(&s->win->seen) == 0;
	return 0;
}

int orr__session_ready(struct orr__session *s, int64_t t_ns)
{
	if (s->w)
		return 0;
	if (s->open_failed)
		return orr__session_fail(s, s->sum.error);
	return open_writer(s, t_ns);
}

/* The first step marker was seen: the speculative file held what came before it. */
static void restart(struct orr__session *s)
{
	orr_native_writer_abort(s->w);
	s->w = NULL;
	s->speculative = false;
	s->sum.restarts++;
	forget_file(s);
}

bool orr__session_settle(struct orr__session *s)
{
	if (!s->win->windowed || atomic_load(&s->win->seen) == 0)
		return false;
	if (s->speculative)
		restart(s);
	return true;
}

enum orr__verdict orr__session_verdict(struct orr__session *s, bool gpu, int64_t t_ns)
{
	enum orr__verdict v;

	/* No window, or no step marker yet (speculative): everything is kept. */
	if (!orr__session_settle(s))
		return ORR__KEEP;
	v = orr__window_check(s->win, gpu, t_ns);
	if (v == ORR__DROP)
		s->sum.window_dropped++;
	return v;
}

void orr__session_put(struct orr__session *s, const struct orr_event *ev)
{
	int r;

	if (!s->w) {
		orr__session_fail(s, s->sum.error);
		return;
	}
	r = orr_native_writer_event(s->w, ev);
	if (r)
		orr__session_fail(s, r);
	else
		s->sum.events++;
}

static void forget_tables(struct orr__session *s)
{
	orr__map_release(&s->ctx_device);
	orr__map_release(&s->open);
	for (size_t i = 0; i < s->ndevices; i++)
		free(s->device_names[i]);
	for (size_t i = 0; i < s->nthread_names; i++)
		free(s->thread_names[i].name);
	free(s->api_ids[0]);
	free(s->api_ids[1]);
	free(s->ranges);
	free(s->free_ranges);
	free(s->pending);
	free(s->path);
}

void orr__session_close(struct orr__session *s, struct orr__summary *sum)
{
	struct orr_native_counts c;
	int r;

	if (!s)
		return;
	if (s->speculative && atomic_load(&s->win->seen) > 0)
		restart(s); /* a marker came, but no record after it */
	if (s->win->windowed && atomic_load(&s->win->seen) == 0)
		s->sum.no_markers = true;
	/* A file even when nothing was recorded: it says so, with the counts. */
	if (!s->w && !s->open_failed && s->pairing)
		open_writer(s, 0);
	if (s->ranges && s->pending && s->pairing) {
		orr__pairing_flush(s->pairing);
		orr__session_finish_records(s);
		s->sum.dropped_events += orr__pairing_lost(s->pairing);
	}
	if (s->w && s->cfg.nccl)
		orr__session_nccl_comms(s);
	c = (struct orr_native_counts){
		.dropped_records = s->sum.dropped_records,
		.dropped_events = s->sum.dropped_events,
		.first_step = s->win && !s->sum.no_markers ? atomic_load(&s->win->first_step) : -1,
		.last_step = s->win && !s->sum.no_markers ? atomic_load(&s->win->last_step) : -1,
	};
	if (s->w) {
		r = orr_native_writer_close(s->w, &c);
		s->sum.written = r == 0;
		if (r && !s->sum.error)
			s->sum.error = r;
	}
	if (sum)
		*sum = s->sum;
	forget_file(s);
	orr__pairing_free(s->pairing);
	forget_tables(s);
	free(s);
}

void orr__session_discard(struct orr__session *s)
{
	if (!s)
		return;
	orr_native_writer_abort(s->w);
	s->w = NULL;
	forget_file(s);
	orr__pairing_free(s->pairing);
	forget_tables(s);
	free(s);
}

void orr__session_set_cupti_version(struct orr__session *s, uint32_t version)
{
	s->cfg.header.cupti_version = version;
}

void orr__session_dropped(struct orr__session *s, uint64_t n)
{
	s->sum.dropped_records += n;
}

void orr__session_log_summary(const struct orr__summary *sum, const char *path)
{
	if (sum->no_markers)
		orr__log("no step marker was seen: recorded everything, without a step window");
	if (sum->restarts)
		orr__log("first step marker seen: the events before it were not kept");
	if (sum->dropped_records || sum->dropped_events)
		orr__log("dropped %llu activity records (CUPTI, %llu kernels or copies without "
			 "timestamps) and %llu events (memory, full tables)",
			 (unsigned long long)sum->dropped_records,
			 (unsigned long long)sum->lost_timing,
			 (unsigned long long)sum->dropped_events);
	if (sum->syncs_unresolved)
		orr__log("%llu event syncs or stream waits could not be paired with their event "
			 "record",
			 (unsigned long long)sum->syncs_unresolved);
	if (sum->nccl_calls)
		orr__log("%llu NCCL kernel launches carry their call's communicator, size and "
			 "sequence",
			 (unsigned long long)sum->nccl_calls);
	if (sum->overhead_records)
		orr__log("CUPTI overhead: %llu records, %.3f ms",
			 (unsigned long long)sum->overhead_records, (double)sum->overhead_ns / 1e6);
	if (sum->error)
		orr__log("writing %s failed: %s", path, strerror(-sum->error));
	orr__log("%llu events written to %s%s (%llu outside the step window, %llu GPU records "
		 "after it kept, %llu not)",
		 (unsigned long long)sum->events, path, sum->written ? "" : " (not written)",
		 (unsigned long long)sum->window_dropped, (unsigned long long)sum->pending_kept,
		 (unsigned long long)sum->pending_dropped);
}

/* ---- places and strings of the file ---- */

static int add_place(struct orr__session *s, uint64_t key, const struct orr_place *p,
		     uint32_t *ret_place)
{
	uint64_t v;
	int r;

	if (orr__map_find(&s->places, key, &v)) {
		*ret_place = (uint32_t)v;
		return 0;
	}
	if (!s->w)
		return orr__session_fail(s, s->sum.error);
	if ((r = orr_native_writer_place(s->w, p, ret_place)))
		return orr__session_fail(s, r);
	if (orr__map_put(&s->places, key, *ret_place))
		return orr__session_fail(s, -ENOMEM);
	return 0;
}

static const char *thread_name(const struct orr__session *s, uint64_t key)
{
	for (size_t i = 0; i < s->nthread_names; i++)
		if (s->thread_names[i].key == key)
			return s->thread_names[i].name;
	return NULL;
}

int orr__session_thread(struct orr__session *s, uint32_t pid, uint32_t tid, uint32_t *ret_place)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct orr_place p = { .pid = pid, .tid = tid, .device = -1, .kind = ORR_PLACE_THREAD };
	const char *name;
	uint64_t v;

	if (orr__map_find(&s->places, key, &v)) {
		*ret_place = (uint32_t)v;
		return 0;
	}
	name = thread_name(s, key);
	if (name && orr__session_str(s, name, strlen(name), &p.name))
		return -1;
	return add_place(s, key, &p, ret_place);
}

int orr__session_stream(struct orr__session *s, int64_t device, int64_t stream, uint32_t *ret_place)
{
	uint64_t key = 1ull << 63 | (uint64_t)(device & 0x7fffffff) << 32 | (uint32_t)stream;
	struct orr_place p = {
		.pid = device, .tid = stream, .device = (int32_t)device, .kind = ORR_PLACE_STREAM
	};

	return add_place(s, key, &p, ret_place);
}

int orr__session_str(struct orr__session *s, const char *str, size_t len, uint32_t *ret_id)
{
	int r;

	if (!s->w)
		return orr__session_fail(s, s->sum.error);
	if ((r = orr_native_writer_string(s->w, str, len, ret_id)))
		return orr__session_fail(s, r);
	return 0;
}

/* CUPTI's runtime names carry the API version ("cudaLaunchKernel_v7000"); Kineto's not. */
static size_t without_version(const char *name, bool driver)
{
	size_t len = strlen(name), i = len;

	if (driver)
		return len;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i < len && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_')
		return i - 2;
	return len;
}

int orr__session_api_name(struct orr__session *s, bool driver, uint32_t cbid, uint32_t *ret_id,
			  uint8_t *ret_class)
{
	const char *name = NULL;
	char buf[64], copy[256];
	bool cached = cbid < ORR__MAX_CBID;
	size_t len;

	if (cached && s->api_ids[driver][cbid]) {
		*ret_id = s->api_ids[driver][cbid] - 1;
		*ret_class = s->api_class[driver][cbid] - 1;
		return 0;
	}
	if (s->cfg.api_name)
		name = s->cfg.api_name(s->cfg.api_name_data, driver, cbid);
	if (!name || !*name) {
		snprintf(buf, sizeof(buf), "%s_cbid_%u", driver ? "driver" : "runtime", cbid);
		name = buf;
	}
	len = without_version(name, driver);
	if (orr__session_str(s, name, len, ret_id))
		return -1;
	snprintf(copy, sizeof(copy), "%.*s", (int)len, name);
	*ret_class = (uint8_t)orr_call_classify(copy);
	if (cached) {
		s->api_ids[driver][cbid] = *ret_id + 1;
		s->api_class[driver][cbid] = (uint8_t)(*ret_class + 1);
	}
	return 0;
}

int orr__session_kernel_name(struct orr__session *s, const char *mangled, uint32_t *ret_id)
{
	size_t len = strlen(mangled);
	uint64_t h = orr__hash64(mangled, len), v;
	char *demangled;
	int r;

	if (orr__map_find(&s->kernels, h, &v)) {
		*ret_id = (uint32_t)v;
		return 0;
	}
	demangled = orr__demangle(mangled);
	if (demangled)
		r = orr__session_str(s, demangled, strlen(demangled), ret_id);
	else
		r = orr__session_str(s, mangled, len, ret_id);
	free(demangled);
	if (r)
		return r;
	orr__map_put(&s->kernels, h, *ret_id); /* a failure only costs a later lookup */
	return 0;
}

static const char *copy_kind_name(uint8_t k)
{
	static const char *const names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "<unknown>";
}

static const char *memory_kind_name(uint8_t k)
{
	static const char *const names[] = { "Unknown",       "Pageable",      "Pinned",
					     "Device",        "Array",         "Managed",
					     "Device Static", "Managed Static" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "<unknown>";
}

int orr__session_copy_name(struct orr__session *s, const struct orr__trec *r, uint32_t *ret_id)
{
	uint64_t key = (uint64_t)r->kind << 24 | (uint64_t)r->copy_kind << 16 |
		       (uint64_t)r->src_kind << 8 | r->dst_kind,
		 v;
	char buf[96];

	if (orr__map_find(&s->copies, key, &v)) {
		*ret_id = (uint32_t)v;
		return 0;
	}
	if (r->kind == ORR__TREC_MEMSET)
		snprintf(buf, sizeof(buf), "Memset (%s)", memory_kind_name(r->dst_kind));
	else
		snprintf(buf, sizeof(buf), "Memcpy %s (%s -> %s)", copy_kind_name(r->copy_kind),
			 memory_kind_name(r->src_kind), memory_kind_name(r->dst_kind));
	if (orr__session_str(s, buf, strlen(buf), ret_id))
		return -1;
	orr__map_put(&s->copies, key, *ret_id);
	return 0;
}

int orr__session_sync_name(struct orr__session *s, enum orr_sync_kind kind, uint32_t *ret_id)
{
	static const char *const names[ORR_SYNC_COUNT] = {
		[ORR_SYNC_UNKNOWN] = "Unknown Sync",          [ORR_SYNC_EVENT] = "Event Sync",
		[ORR_SYNC_STREAM_WAIT] = "Stream Wait Event", [ORR_SYNC_STREAM] = "Stream Sync",
		[ORR_SYNC_CONTEXT] = "Context Sync",
	};

	if ((unsigned)kind >= ORR_SYNC_COUNT)
		kind = ORR_SYNC_UNKNOWN;
	if (s->sync_names[kind]) {
		*ret_id = s->sync_names[kind];
		return 0;
	}
	if (orr__session_str(s, names[kind], strlen(names[kind]), ret_id))
		return -1;
	s->sync_names[kind] = *ret_id;
	return 0;
}

int64_t orr__session_device_of(const struct orr__session *s, uint32_t context)
{
	uint64_t v;

	return orr__map_find(&s->ctx_device, context, &v) ? (int64_t)v : -1;
}

/* ---- records about the process ---- */

static void add_device(struct orr__session *s, const struct orr__trec *r)
{
	struct orr_native_device *d;

	for (size_t i = 0; i < s->ndevices; i++)
		if (s->devices[i].id == (int32_t)r->device)
			return;
	if (s->ndevices == ORR__MAX_DEVICES)
		return;
	d = &s->devices[s->ndevices];
	*d = (struct orr_native_device){ .id = (int32_t)r->device,
					 .num_sms = r->num_sms,
					 .compute_major = r->cc_major,
					 .compute_minor = r->cc_minor,
					 .total_mem_bytes = r->mem_bytes };
	if (r->name) {
		s->device_names[s->ndevices] = orr__tstrndup(r->name, strlen(r->name));
		d->name = s->device_names[s->ndevices];
	}
	s->ndevices++;
}

static void add_thread_name(struct orr__session *s, const struct orr__trec *r)
{
	uint64_t key = (uint64_t)r->pid << 32 | r->tid;
	struct orr__thread_name *t = NULL;

	if (!r->name)
		return;
	for (size_t i = 0; i < s->nthread_names && !t; i++)
		if (s->thread_names[i].key == key)
			t = &s->thread_names[i];
	if (!t && s->nthread_names < ORR__MAX_THREAD_NAMES)
		t = &s->thread_names[s->nthread_names++];
	if (!t)
		return;
	free(t->name);
	t->key = key;
	t->name = orr__tstrndup(r->name, strlen(r->name));
}

void orr__session_add(struct orr__session *s, const struct orr__trec *r)
{
	switch (r->kind) {
	case ORR__TREC_RUNTIME:
	case ORR__TREC_DRIVER:
		orr__session_cpu(s, r);
		break;
	case ORR__TREC_KERNEL:
	case ORR__TREC_MEMCPY:
	case ORR__TREC_MEMSET:
		orr__session_gpu(s, r);
		break;
	case ORR__TREC_SYNC:
		orr__session_sync(s, r);
		break;
	case ORR__TREC_MARKER:
		orr__session_marker(s, r);
		break;
	case ORR__TREC_CUDA_EVENT:
		orr__pairing_event(s->pairing, r->context, r->event_id, r->correlation, r->stream,
				   r->sync_id);
		break;
	case ORR__TREC_EXT_CORR:
		s->ext[r->correlation % ORR__EXT_SLOTS] =
			(struct orr__ext){ r->correlation, r->id };
		break;
	case ORR__TREC_OVERHEAD:
		s->sum.overhead_records++;
		s->sum.overhead_ns += r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
		break;
	case ORR__TREC_DEVICE:
		add_device(s, r);
		break;
	case ORR__TREC_CONTEXT:
		if (orr__map_put(&s->ctx_device, r->context, r->device))
			s->sum.dropped_events++;
		break;
	case ORR__TREC_NAME:
		add_thread_name(s, r);
		break;
	default: /* MARKER_DATA, STREAM: nothing the model uses */
		break;
	}
}
