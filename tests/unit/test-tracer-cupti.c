/* SPDX-License-Identifier: MIT */
/*
 * The path from CUDA 13 activity records to a native file, without a GPU: real
 * CUpti_Activity* structs (as CUPTI lays them in its buffers) through cupti-records.c,
 * the session and the native writer, then read back with orr_trace_import().  API names
 * come from libcupti's own table (cuptiGetCallbackName needs no GPU).  NCCL's range
 * attributes are built with NVTX's own payload macro.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>
/* CUDA 13.0's C definition of this helper lacks a closing parenthesis. */
#define NVTX_POINTER_AS_PAYLOAD_ULLVALUE(p) ((uint64_t)(uintptr_t)(p))
#include <nvtx3/nvToolsExtPayload.h>

#include "../../tracer/internal.h"
#include "test-util.h"

/* The structs of the CUPTI the tracer is built with (cupti-records.c): 13.x or 12.9. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 kernel_record;
typedef CUpti_ActivityMarkerData2 marker_data_record;
#else
typedef CUpti_ActivityKernel9 kernel_record;
typedef CUpti_ActivityMarkerData marker_data_record;
#endif

#define PID  200
#define TID  201
#define NCCL "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K"

static const char *cupti_names(void *data, bool driver, uint32_t cbid)
{
	const char *name = NULL;

	if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

/* ---- records, as CUPTI fills them ---- */

static CUpti_ActivityAPI api(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint32_t corr,
			     uint64_t start)
{
	return (CUpti_ActivityAPI){ .kind = kind,
				    .cbid = cbid,
				    .start = start,
				    .end = start + 20,
				    .processId = PID,
				    .threadId = TID,
				    .correlationId = corr };
}

static kernel_record kernel(const char *name, uint32_t corr, uint32_t stream, uint64_t start,
			    uint64_t end)
{
	kernel_record k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = name;
	k.correlationId = corr;
	k.streamId = stream;
	k.deviceId = 0;
	k.contextId = 1;
	k.start = start;
	k.end = end;
	k.gridX = 128;
	k.gridY = k.gridZ = 1;
	k.blockX = 256;
	k.blockY = k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 48 * 1024;
	k.registersPerThread = 96;
	return k;
}

static CUpti_ActivityMarker2 marker(CUpti_ActivityFlag flags, uint32_t id, const char *name,
				    const char *domain, uint64_t ts)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = flags;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = PID;
	m.objectId.pt.threadId = TID;
	m.name = name;
	m.domain = domain;
	return m;
}

/* What the writer thread does with one buffer. */
static size_t feed(struct orr__session *s, const void *const *records, size_t n)
{
	size_t used = 0;
	struct orr__trec r;

	for (size_t i = 0; i < n; i++)
		if (orr__cupti_translate(records[i], &r)) {
			orr__session_add(s, &r);
			used++;
		}
	return used;
}

/* ---- translation ---- */

static void test_translate_gpu(void **state)
{
	kernel_record k = kernel(NCCL, 42, 13, 1000, 2000);
	CUpti_ActivityMemcpy6 m;
	CUpti_Activity unused = { .kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE };
	struct orr__trec r;

	k.graphId = 3;
	k.graphNodeId = 17;
	assert_true(orr__cupti_translate(&k, &r));
	assert_int_equal(r.kind, ORR__TREC_KERNEL);
	assert_int_equal(r.correlation, 42);
	assert_int_equal(r.stream, 13);
	assert_int_equal(r.start_ns, 1000);
	assert_int_equal(r.end_ns, 2000);
	assert_int_equal(r.graph_id, 3);
	assert_int_equal(r.graph_node, 17);
	assert_int_equal(r.launch.grid[0], 128);
	assert_int_equal(r.launch.grid[2], 1);
	assert_int_equal(r.launch.block[0], 256);
	assert_int_equal(r.launch.shared_bytes, 49 * 1024);
	assert_int_equal(r.launch.registers, 96);
	assert_string_equal(r.name, NCCL);

	/* A copy's correlation: the driver call's, else the runtime call's. */
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.correlationId = 0;
	m.runtimeCorrelationId = 31;
	m.bytes = 1 << 20;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	assert_true(orr__cupti_translate(&m, &r));
	assert_int_equal(r.correlation, 31);
	assert_int_equal(r.bytes, 1 << 20);
	m.correlationId = 30;
	assert_true(orr__cupti_translate(&m, &r));
	assert_int_equal(r.correlation, 30);
	/* Kinds the tracer does not enable are not translated. */
	assert_false(orr__cupti_translate(&unused, &r));
}

static void test_translate_cpu(void **state)
{
	CUpti_ActivitySynchronization2 sy;
	CUpti_ActivityCudaEvent2 ev;
	CUpti_ActivityMarker2 mk = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 9, "x", "NCCL", 77);
	CUpti_ActivityAPI a = api(CUPTI_ACTIVITY_KIND_DRIVER, 307, 5, 100);
	struct orr__trec r;

	memset(&sy, 0, sizeof(sy));
	sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
	sy.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	sy.cudaEventId = 4;
	sy.cudaEventSyncId = 99;
	assert_true(orr__cupti_translate(&sy, &r));
	assert_int_equal(r.sync_kind, ORR_SYNC_EVENT);
	assert_int_equal(r.stream, ORR__INVALID32);
	assert_int_equal(r.event_id, 4);
	assert_int_equal(r.sync_id, 99);

	memset(&ev, 0, sizeof(ev));
	ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	ev.eventId = 4;
	ev.streamId = 7;
	ev.cudaEventSyncId = 99;
	assert_true(orr__cupti_translate(&ev, &r));
	assert_int_equal(r.kind, ORR__TREC_CUDA_EVENT);
	assert_int_equal(r.sync_id, 99);

	assert_true(orr__cupti_translate(&mk, &r));
	assert_int_equal(r.marker, ORR__MARKER_START);
	assert_int_equal(r.pid, PID);
	assert_int_equal(r.tid, TID);
	assert_string_equal(r.domain, "NCCL");
	assert_true(orr__cupti_translate(&a, &r));
	assert_int_equal(r.kind, ORR__TREC_DRIVER);
	assert_int_equal(r.cbid, 307);
}

/* ---- records -> file -> model ---- */

static void feed_process(struct orr__session *s)
{
	CUpti_ActivityDevice5 dev;
	CUpti_ActivityContext3 ctx = { .kind = CUPTI_ACTIVITY_KIND_CONTEXT, .contextId = 1 };
	CUpti_ActivityName name = { .kind = CUPTI_ACTIVITY_KIND_NAME,
				    .objectKind = CUPTI_ACTIVITY_OBJECT_THREAD,
				    .name = "trainer" };
	CUpti_ActivityStream st = { .kind = CUPTI_ACTIVITY_KIND_STREAM,
				    .contextId = 1,
				    .streamId = 7 };
	const void *recs[] = { &dev, &ctx, &name, &st };

	memset(&dev, 0, sizeof(dev));
	dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	dev.id = 0;
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.numMultiprocessors = 132;
	dev.computeCapabilityMajor = 9;
	dev.globalMemorySize = 80ull << 30;
	name.objectId.pt.processId = PID;
	name.objectId.pt.threadId = TID;
	assert_int_equal(feed(s, recs, 4), 4);
}

/* An event recorded on stream 7 (corr 11) and a wait for it on stream 11 (corr 12). */
static void event_and_wait(CUpti_ActivityCudaEvent2 *ev, CUpti_ActivitySynchronization2 *sy)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	ev->correlationId = 11;
	ev->contextId = 1;
	ev->streamId = 7;
	ev->eventId = 3;
	ev->cudaEventSyncId = 5001;
	memset(sy, 0, sizeof(*sy));
	sy->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
	sy->start = 1250;
	sy->end = 1260;
	sy->correlationId = 12;
	sy->contextId = 1;
	sy->streamId = 11;
	sy->cudaEventId = 3;
	sy->cudaEventSyncId = 5001;
}

/* A copy, a peer-to-peer copy and a set on stream 9, all from the call of corr 16. */
static void copies(CUpti_ActivityMemcpy6 *m, CUpti_ActivityMemcpyPtoP4 *p2p,
		   CUpti_ActivityMemset4 *ms)
{
	memset(m, 0, sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->bytes = 65536;
	m->start = 1600;
	m->end = 1700;
	m->streamId = 9;
	m->runtimeCorrelationId = 16;
	memset(p2p, 0, sizeof(*p2p));
	p2p->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p2p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p2p->srcKind = p2p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p2p->bytes = 1024;
	p2p->start = 1800;
	p2p->end = 1900;
	p2p->streamId = 9;
	p2p->correlationId = 16;
	memset(ms, 0, sizeof(*ms));
	ms->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ms->bytes = 128;
	ms->start = 1950;
	ms->end = 1960;
	ms->streamId = 9;
	ms->correlationId = 16;
}

static void feed_step(struct orr__session *s)
{
	CUpti_ActivityMarker2 step =
		marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, "ProfilerStep#3", NULL, 1000);
	CUpti_ActivityMarker2 step_end =
		marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, NULL, NULL, 9000);
	CUpti_ActivityMarker2 op = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2,
					  "aten::addmm, seq = 4, op_id = 9, sizes = [[16], [8, 4], "
					  "[4, 16]], input_op_ids = [(1, 0)]",
					  NULL, 1100);
	CUpti_ActivityMarker2 op_end = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, NULL, NULL, 1300);
	marker_data_record md = { .kind = CUPTI_ACTIVITY_KIND_MARKER_DATA, .id = 2 };
	CUpti_ActivityExternalCorrelation ext = { .kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
						  .externalKind =
							  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
						  .externalId = 4242,
						  .correlationId = 10 };
	CUpti_ActivityAPI launch = api(CUPTI_ACTIVITY_KIND_RUNTIME, 505, 10, 1150); /* <<<>>> */
	kernel_record k = kernel("_Z4gemmv", 10, 7, 1500, 2500);
	CUpti_ActivityAPI rec = api(CUPTI_ACTIVITY_KIND_RUNTIME, 135, 11, 1200);
	CUpti_ActivityCudaEvent2 ev;
	CUpti_ActivityAPI wait = api(CUPTI_ACTIVITY_KIND_RUNTIME, 147, 12, 1250);
	CUpti_ActivitySynchronization2 sy;
	CUpti_ActivityAPI nccl_launch = api(CUPTI_ACTIVITY_KIND_DRIVER, 652, 13, 1400);
	kernel_record nccl = kernel(NCCL, 13, 11, 2600, 3600);
	CUpti_ActivityAPI graph = api(CUPTI_ACTIVITY_KIND_RUNTIME, 311, 14, 1450);
	kernel_record g1 = kernel("_Z5node1v", 14, 7, 3700, 3800);
	kernel_record g2 = kernel("_Z5node2v", 14, 7, 3800, 3900);
	kernel_record lost = kernel("_Z4lostv", 15, 7, 0, 0);
	CUpti_ActivityAPI cpy = api(CUPTI_ACTIVITY_KIND_RUNTIME, 41, 16, 1460);
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemcpyPtoP4 p2p;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivityOverhead3 oh = { .kind = CUPTI_ACTIVITY_KIND_OVERHEAD, .start = 1, .end = 4 };
	/* Two buffers, the second holding the event record the wait in the first refers to. */
	const void *buf1[] = { &step, &op, &md,  &ext, &launch, &op_end,      &wait, &sy,
			       &cpy,  &m,  &p2p, &ms,  &k,      &nccl_launch, &oh };
	const void *buf2[] = { &rec, &ev, &nccl, &graph, &g1, &g2, &lost, &step_end };

	event_and_wait(&ev, &sy);
	copies(&m, &p2p, &ms);
	assert_int_equal(feed(s, buf1, sizeof(buf1) / sizeof(buf1[0])), 15);
	assert_int_equal(feed(s, buf2, sizeof(buf2) / sizeof(buf2[0])), 8);
}

static const struct orr_event *must_find(const struct orr_trace *t, const struct orr_rank *r,
					 enum orr_event_kind kind, const char *name)
{
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].kind == kind &&
		    strcmp(orr_trace_str(t, r->events[i].name), name) == 0)
			return &r->events[i];
	fail_msg("no %s event named '%s'", orr_event_kind_name(kind), name);
	return NULL;
}

static void check_rank(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_event *launch = must_find(t, r, ORR_EVENT_RUNTIME, "__cudaLaunchKernel");
	const struct orr_event *k = must_find(t, r, ORR_EVENT_KERNEL, "gemm()");
	const struct orr_event *nccl =
		must_find(t, r, ORR_EVENT_KERNEL,
			  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)");
	const struct orr_event *w = must_find(t, r, ORR_EVENT_SYNC, "Stream Wait Event");
	const struct orr_event *op = must_find(t, r, ORR_EVENT_OP, "aten::addmm");
	const struct orr_event *cp =
		must_find(t, r, ORR_EVENT_MEMCPY, "Memcpy HtoD (Pinned -> Device)");
	struct orr_step *steps;
	size_t n;

	assert_int_equal(launch->sub, ORR_CALL_LAUNCH);
	assert_int_equal(launch->external_id, 4242);
	assert_int_equal(must_find(t, r, ORR_EVENT_DRIVER, "cuLaunchKernelEx")->sub,
			 ORR_CALL_LAUNCH);
	assert_int_equal(k->correlation, launch->correlation);
	/* The launch goes through the native file whole. */
	assert_int_not_equal(k->args, ORR_NONE);
	assert_int_equal(r->kernels[k->args].grid[0], 128);
	assert_int_equal(r->kernels[k->args].grid[1], 1);
	assert_int_equal(r->kernels[k->args].block[0], 256);
	assert_int_equal(r->kernels[k->args].block[2], 1);
	assert_int_equal(r->kernels[k->args].shared_bytes, 49 * 1024);
	assert_int_equal(r->kernels[k->args].registers, 96);
	assert_string_equal(orr_trace_str(t, r->places[launch->place].name), "trainer");
	assert_string_equal(orr_trace_str(t, r->collectives[nccl->coll].type), "AllReduce");
	assert_int_equal(r->syncs[w->args].wait_on_stream, 7);
	assert_int_equal(r->syncs[w->args].event_record_corr, 11);
	assert_int_equal(r->syncs[w->args].stream, 11);
	assert_int_equal(r->ops[op->args].sequence, 4);
	assert_int_equal(r->ops[op->args].ninputs, 3);
	assert_int_equal(r->copies[cp->args].bytes, 65536);
	assert_int_equal(cp->correlation, 16);
	assert_int_equal(
		r->copies[must_find(t, r, ORR_EVENT_MEMCPY, "Memcpy PtoP (Device -> Device)")->args]
			.bytes,
		1024);
	assert_int_equal(
		r->copies[must_find(t, r, ORR_EVENT_MEMSET, "Memset (Device)")->args].bytes, 128);
	assert_int_equal(must_find(t, r, ORR_EVENT_KERNEL, "node1()")->correlation, 14);
	assert_int_equal(must_find(t, r, ORR_EVENT_KERNEL, "node2()")->correlation, 14);
	assert_int_equal(r->ndevices, 1);
	assert_int_equal(r->devices[0].compute_major, 9);
	assert_int_equal(orr_rank_steps(t, r, &steps, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(steps[0].step, 3);
	assert_int_equal(steps[0].start_ns, 1000);
	free(steps);
}

static void test_records_to_native_file(void **state)
{
	struct orr__window win;
	struct orr__session *s;
	struct orr__summary sum;
	struct orr_trace *t = NULL;
	struct orr_diag d;
	char path[512];
	uint32_t version = 0;
	struct orr__session_config c = {
		.path = path,
		.header = { .rank = 1,
			    .world_size = 2,
			    .local_rank = 1,
			    .pid = PID,
			    .producer = "orrery-tracer test",
			    .clock_source = "CLOCK_REALTIME",
			    .cupti_version = CUPTI_API_VERSION },
		.window = &win,
		.api_name = cupti_names,
	};

	/* The library the tests link is the one the tracer was built against. */
	assert_int_equal(cuptiGetVersion(&version), CUPTI_SUCCESS);
	assert_int_equal(version / 100, CUPTI_API_VERSION / 100);
	snprintf(path, sizeof(path), "%s/rank-1-%d.orr", (const char *)*state, PID);
	orr__window_init(&win, 0, 0, "ProfilerStep#");
	assert_int_equal(orr__session_new(&c, &s), 0);
	feed_process(s);
	feed_step(s);
	orr__session_close(s, &sum);
	assert_true(sum.written);
	assert_int_equal(sum.lost_timing, 1);
	assert_int_equal(sum.syncs_exact, 1);
	assert_int_equal(sum.overhead_records, 1);
	if (orr_trace_import(path, NULL, &t, &d))
		fail_msg("%s: %s", path, d.msg);
	assert_int_equal(orr_trace_get_rank(t, 0)->rank, 1);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, sum.events);
	check_rank(t, orr_trace_get_rank(t, 0));
	orr_trace_free(t);
	orr__window_release(&win);
}

/* The attributes as NCCL's NVTX3_FUNC_WITH_PARAMS builds them, seen by the NVTX callback. */
static void test_nvtx_payload_of_nccl_push(void **state)
{
	struct {
		uint64_t comm;
		size_t bytes;
		int op;
	} ar = { 0xabcull, 4096, 0 };
	nvtxPayloadData_t pd;
	nvtxEventAttributes_t a = { .version = NVTX_VERSION,
				    .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE };
	nvtxDomainRangePushEx_params p = { .domain = (nvtxDomainHandle_t)&ar,
					   .core = { .eventAttrib = &a } };
	struct orr__nvtx_payload got;
	struct orr__nccl_call c;

	(void)state;
	NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5, &ar,
				      sizeof(ar))
	assert_true(orr__cupti_nvtx_payload(&p, &got));
	assert_true(got.schema_id == NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5);
	assert_int_equal(got.size, sizeof(ar));
	assert_ptr_equal(got.payload, &ar);
	assert_true(orr__nccl_decode(&got, &c));
	assert_string_equal(c.type, "AllReduce");
	assert_true(c.comm == 0xabcull);
	assert_int_equal(c.bytes, 4096);
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64; /* a plain payload */
	assert_false(orr__cupti_nvtx_payload(&p, &got));
	p.core.eventAttrib = NULL;
	assert_false(orr__cupti_nvtx_payload(&p, &got));
}

/*
 * The driver cbids whose records cupti.c turns off, by libcupti's own names: every
 * launch, graph launch, copy, set, event record, stream wait and sync is kept, the
 * queries the H200 run made by the thousand are not.
 */
static void test_driver_calls_kept(void **state)
{
	static const char *const kept[] = {
		"cuLaunchKernel",     "cuLaunchKernelEx",    "cuLaunchCooperativeKernel",
		"cuGraphLaunch",      "cuMemcpyAsync",       "cuMemcpyHtoDAsync_v2",
		"cuMemsetD32Async",   "cuEventRecord",       "cuStreamWaitEvent",
		"cuEventSynchronize", "cuStreamSynchronize", "cuCtxSynchronize",
	};
	static const char *const queries[] = {
		"cuKernelGetName",      "cuGetErrorString",   "cuGetProcAddress_v2",
		"cuCtxGetLimit",        "cuDriverGetVersion", "cuDeviceGetAttribute",
		"cuKernelSetAttribute",
	};
	size_t nkept = 0, nnamed = 0, found = 0;

	for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
		const char *name = cupti_names(NULL, true, cbid);

		if (!name)
			continue;
		nnamed++;
		nkept += orr__driver_call_kept(name);
		for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
			if (strcmp(name, kept[i]) == 0) {
				assert_true(orr__driver_call_kept(name));
				found++;
			}
		for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
			if (strcmp(name, queries[i]) == 0) {
				assert_false(orr__driver_call_kept(name));
				found++;
			}
	}
	assert_int_equal(found,
			 sizeof(kept) / sizeof(kept[0]) + sizeof(queries) / sizeof(queries[0]));
	assert_true(nkept > 0 && nkept < nnamed / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate_gpu),
		cmocka_unit_test(test_driver_calls_kept),
		cmocka_unit_test(test_translate_cpu),
		cmocka_unit_test(test_nvtx_payload_of_nccl_push),
		cmocka_unit_test_setup_teardown(test_records_to_native_file, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
