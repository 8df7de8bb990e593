/* SPDX-License-Identifier: MIT */
/*
 * The Kineto JSON importer, field by field, through the public API only: small traces
 * written here by hand and imported from memory with orr_trace_import_buffer().
 * Collectives are in test-traces-kineto-comms.c, op inputs in test-traces-kineto-inputs.c;
 * containers, directories, ranks, malformed input and the real traces in
 * test-traces-import.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orrery/trace.h"

#define BASE_NS 1000000000LL

#include "kineto-test.h"
#include "capped-test.h"

/* ---- null case ---- */

static void test_null_empty_buffer_is_eempty(void **state)
{
	struct orr_diag d;

	assert_int_equal(import_err("", 0, &d), ORR_EEMPTY);
	assert_string_equal(d.file, "test.json");
}

static void test_null_whitespace_is_eempty(void **state)
{
	struct orr_diag d;

	assert_int_equal(import_err(" \n\t\r\n ", 6, &d), ORR_EEMPTY);
}

static void test_null_empty_object_is_eformat(void **state)
{
	struct orr_diag d;

	assert_int_equal(import_err("{}", 2, &d), ORR_EFORMAT);
	assert_int_equal(import_err("{\"schemaVersion\": 1}", 20, &d), ORR_EFORMAT);
}

static void test_null_empty_array_has_no_events(void **state)
{
	struct orr_trace *t = import_str("[]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	struct orr_step *s;
	size_t n;

	assert_int_equal(r->rank, 0);
	assert_int_equal(r->nevents, 0);
	assert_int_equal(r->nplaces, 0);
	assert_int_equal(orr_rank_steps(t, r, &s, &n), 0);
	assert_int_equal(n, 0);
	free(s);
	orr_trace_free(t);
	t = import_str("{\"traceEvents\": []}");
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 0);
	orr_trace_free(t);
}

/* ---- one element ---- */

/*
 * One step: the annotation at 1.5 us, a launch at 10.25 us (args before cat) and its
 * kernel from 20 us for 200.001 us; a second "gemm" nobody launched ends later and must
 * not count; an unknown category; a thread name.  All relative to baseTimeNanoseconds.
 */
static const char one_step[] =
	"{\"schemaVersion\": 1, \"baseTimeNanoseconds\": 1000000000,\n"
	" \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 1.5, \"dur\": 100, \"args\": {\"External id\": 1}},\n"
	"  {\"args\": {\"External id\": 2, \"correlation\": 7, \"cbid\": 211}, \"ph\": \"X\","
	" \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10, \"tid\": 11,"
	" \"ts\": 10.25, \"dur\": 5},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
	" \"ts\": 20, \"dur\": 200.001, \"args\": {\"External id\": 2, \"correlation\": 7,"
	" \"stream\": 7, \"device\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
	" \"ts\": 230, \"dur\": 1, \"args\": {\"correlation\": 8, \"stream\": 7, \"device\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"f\", \"pid\": 10, \"tid\": 11,"
	" \"ts\": 2, \"dur\": 1},\n"
	"  {\"ph\": \"s\", \"id\": 7, \"pid\": 10, \"tid\": 11, \"ts\": 10.25, \"cat\": \"ac2g\","
	" \"name\": \"ac2g\"},\n"
	"  {\"ph\": \"f\", \"id\": 7, \"pid\": 0, \"tid\": 7, \"ts\": 20, \"cat\": \"ac2g\","
	" \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 10, \"tid\": 11,"
	" \"args\": {\"name\": \"pt_main_thread\"}}\n"
	" ]}\n";

static void test_one_events_have_kinds_places_and_times(void **state)
{
	struct orr_trace *t = import_str(one_step);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *e = r->events;
	const struct orr_place *cpu, *gpu;

	assert_int_equal(r->rank, 0);
	assert_int_equal(r->world_size, -1);
	assert_int_equal(r->base_time_ns, BASE_NS);
	assert_string_equal(orr_trace_str(t, r->source), "test.json");
	assert_int_equal(r->nevents, 4);
	assert_int_equal(r->nplaces, 2);
	assert_int_equal(r->nflows, 2);
	/* sorted by start */
	assert_int_equal(e[0].kind, ORR_EVENT_ANNOTATION);
	assert_int_equal(e[0].start_ns, BASE_NS + 1500);
	assert_int_equal(e[0].dur_ns, 100000);
	assert_int_equal(e[0].external_id, 1);
	assert_int_equal(e[0].correlation, -1);
	assert_int_equal(e[1].kind, ORR_EVENT_RUNTIME);
	assert_int_equal(e[1].sub, ORR_CALL_LAUNCH);
	assert_int_equal(e[1].start_ns, BASE_NS + 10250);
	assert_int_equal(e[1].dur_ns, 5000);
	assert_int_equal(e[1].correlation, 7); /* args came before cat */
	assert_int_equal(e[1].external_id, 2);
	assert_int_equal(e[2].kind, ORR_EVENT_KERNEL);
	assert_int_equal(e[2].start_ns, BASE_NS + 20000);
	assert_int_equal(e[2].dur_ns, 200001);
	assert_int_equal(e[2].correlation, 7);
	assert_int_equal(e[2].flags, 0); /* its correlation came from args, not the flow */
	assert_int_equal(e[3].correlation, 8);
	cpu = &r->places[e[0].place];
	gpu = &r->places[e[2].place];
	assert_int_equal(e[1].place, e[0].place);
	assert_int_equal(e[3].place, e[2].place);
	assert_int_equal(cpu->kind, ORR_PLACE_THREAD);
	assert_int_equal(cpu->pid, 10);
	assert_int_equal(cpu->tid, 11);
	assert_int_equal(cpu->device, -1);
	assert_string_equal(orr_trace_str(t, cpu->name), "pt_main_thread");
	assert_int_equal(gpu->kind, ORR_PLACE_STREAM);
	assert_int_equal(gpu->pid, 0);
	assert_int_equal(gpu->tid, 7);
	assert_int_equal(gpu->device, 0);
	orr_trace_free(t);
}

static void test_one_names_are_interned(void **state)
{
	struct orr_trace *t = import_str(one_step);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	assert_int_equal(r->events[2].name, r->events[3].name);
	assert_int_not_equal(r->events[1].name, r->events[2].name);
	assert_string_equal(orr_trace_str(t, r->events[2].name), "gemm");
	assert_string_equal(orr_trace_str(t, r->events[0].name), "ProfilerStep#3");
	orr_trace_free(t);
}

static void test_one_step_ends_at_launched_kernel(void **state)
{
	struct orr_trace *t = import_str(one_step);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	struct orr_step *s, *job;
	size_t n, njob;

	assert_int_equal(orr_rank_steps(t, r, &s, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].step, 3);
	assert_int_equal(s[0].start_ns, BASE_NS + 1500);
	/* kernel end - annotation start, exactly; the unlaunched gemm does not count */
	assert_int_equal(s[0].end_ns - s[0].start_ns, 220001 - 1500);
	assert_int_equal(orr_trace_job_steps(t, &job, &njob), 0);
	assert_int_equal(njob, 1);
	assert_memory_equal(job, s, sizeof(*s));
	free(s);
	free(job);
	orr_trace_free(t);
}

static void test_one_unknown_category_is_counted(void **state)
{
	struct orr_trace *t = import_str(one_step);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	assert_int_equal(r->nskipped, 1);
	assert_string_equal(orr_trace_str(t, r->skipped[0].category), "python_function");
	assert_int_equal(r->skipped[0].count, 1);
	orr_trace_free(t);
}

/*
 * A counter whose pid is a name (Kineto's CUPTI PM sampling: "GPU 0 Counters") is skipped
 * and counted by its category; the file's other counters are read.
 */
static void test_one_named_counter_is_skipped(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"C\", \"cat\": \"hardware_counters\", \"name\": \"sm__throughput\","
		" \"pid\": \"GPU 0 Counters\", \"tid\": 0, \"ts\": 5, \"args\": {\"\": 42.5}},"
		" {\"ph\": \"C\", \"name\": \"queue\", \"pid\": 1, \"tid\": 1, \"ts\": 6,"
		" \"args\": {\"depth\": 3}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	(void)state;
	assert_int_equal(r->nskipped, 1);
	assert_string_equal(orr_trace_str(t, r->skipped[0].category), "hardware_counters");
	assert_int_equal(r->skipped[0].count, 1);
	assert_int_equal(r->ncounters, 1);
	orr_trace_free(t);
}

static void test_one_timestamps_are_exact_ns(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
		" \"ts\": 1707417525512145.123, \"dur\": 0.001},"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1,"
		" \"ts\": 1.2e3, \"dur\": 12.0},"
		" {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"m\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 5, \"s\": \"t\"}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	assert_int_equal(r->base_time_ns, 0);
	assert_int_equal(event_named(t, r, "a")->start_ns, 1707417525512145123LL);
	assert_int_equal(event_named(t, r, "a")->dur_ns, 1);
	assert_int_equal(event_named(t, r, "b")->start_ns, 1200000);
	assert_int_equal(event_named(t, r, "b")->dur_ns, 12000);
	assert_int_equal(event_named(t, r, "m")->kind, ORR_EVENT_MARKER);
	assert_int_equal(event_named(t, r, "m")->dur_ns, 0);
	orr_trace_free(t);
}

static const char flows[] =
	"{\"baseTimeNanoseconds\": 1000000000, \"traceEvents\": [\n"
	" {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1,"
	"  \"tid\": 1, \"ts\": 10, \"dur\": 2},\n"
	" {\"ph\": \"s\", \"id\": 41, \"pid\": 1, \"tid\": 1, \"ts\": 10, \"cat\": \"ac2g\","
	"  \"name\": \"ac2g\"},\n"
	" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": 7,"
	"  \"ts\": 20, \"dur\": 3},\n"
	" {\"ph\": \"f\", \"id\": 41, \"pid\": 0, \"tid\": 7, \"ts\": 20, \"cat\": \"ac2g\","
	"  \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	" {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k2\", \"pid\": 0, \"tid\": 7,"
	"  \"ts\": 30, \"dur\": 3, \"args\": {\"device\": 0}},\n"
	" {\"ph\": \"f\", \"id\": 42, \"pid\": 0, \"tid\": 7, \"ts\": 30,"
	"  \"cat\": \"async_cpu_to_gpu\", \"name\": \"async_gpu\", \"bp\": \"e\"},\n"
	" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k3\", \"pid\": 0, \"tid\": 7,"
	"  \"ts\": 40, \"dur\": 1, \"args\": {\"correlation\": 5}},\n"
	" {\"ph\": \"f\", \"id\": 99, \"pid\": 0, \"tid\": 7, \"ts\": 40, \"cat\": \"ac2g\","
	"  \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k4\", \"pid\": 0, \"tid\": 7,"
	"  \"ts\": 50, \"dur\": 1},\n"
	" {\"ph\": \"f\", \"id\": 77, \"pid\": 0, \"tid\": 8, \"ts\": 50, \"cat\": \"ac2g\","
	"  \"name\": \"ac2g\", \"bp\": \"e\"}\n"
	"]}";

static void test_one_ac2g_flow_gives_correlation(void **state)
{
	struct orr_trace *t = import_str(flows);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *k1 = event_named(t, r, "k1"), *call;

	assert_int_equal(r->nflows, 5);
	assert_int_equal(k1->correlation, 41);
	assert_int_equal(k1->flags & ORR_EVENT_F_FLOW_LINKED, ORR_EVENT_F_FLOW_LINKED);
	call = event_named(t, r, "cudaLaunchKernel");
	assert_int_equal(call->correlation, 41);
	assert_int_equal(call->flags & ORR_EVENT_F_FLOW_LINKED, ORR_EVENT_F_FLOW_LINKED);
	/* args win over a flow; a flow on another stream does not link */
	assert_int_equal(event_named(t, r, "k3")->correlation, 5);
	assert_int_equal(event_named(t, r, "k3")->flags, 0);
	assert_int_equal(event_named(t, r, "k4")->correlation, -1);
	assert_int_equal(event_named(t, r, "k4")->flags, 0);
	orr_trace_free(t);
}

static void test_one_async_cpu_to_gpu_flow_gives_correlation(void **state)
{
	struct orr_trace *t = import_str(flows);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *k2 = event_named(t, r, "k2");

	assert_int_equal(k2->kind, ORR_EVENT_KERNEL);
	assert_int_equal(k2->correlation, 42);
	assert_int_equal(k2->flags, ORR_EVENT_F_FLOW_LINKED);
	assert_int_equal(k2->start_ns, BASE_NS + 30000);
	orr_trace_free(t);
}

static void test_one_cuda_sync_has_its_fields(void **state)
{
	struct orr_trace *t = import_str(
		"[{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\","
		" \"pid\": 0, \"tid\": 7, \"ts\": 100, \"dur\": 0.01, \"args\": {\"External id\": 43,"
		" \"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 13,"
		" \"wait_on_cuda_event_record_corr_id\": 42, \"wait_on_cuda_event_id\": 5,"
		" \"stream\": 7, \"correlation\": 43, \"device\": 0, \"context\": 1}},"
		" {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"pid\": 0,"
		" \"tid\": -1, \"ts\": 200, \"dur\": 33, \"args\": {\"cuda_sync_kind\": \"Event Sync\","
		" \"wait_on_stream\": 7, \"wait_on_cuda_event_record_corr_id\": 44,"
		" \"stream\": -1, \"correlation\": 45, \"device\": 0}}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *w = event_named(t, r, "Stream Wait Event");
	const struct orr_event *s = event_named(t, r, "Event Sync");
	const struct orr_sync_args *a;

	assert_int_equal(w->kind, ORR_EVENT_SYNC);
	assert_int_equal(w->sub, ORR_SYNC_STREAM_WAIT);
	assert_int_equal(w->correlation, 43);
	assert_int_equal(w->dur_ns, 10);
	assert_int_equal(r->places[w->place].kind, ORR_PLACE_STREAM);
	assert_int_equal(r->places[w->place].tid, 7);
	assert_true(w->args < r->nsyncs);
	a = &r->syncs[w->args];
	assert_int_equal(a->stream, 7);
	assert_int_equal(a->wait_on_stream, 13);
	assert_int_equal(a->event_record_corr, 42);
	assert_int_equal(a->event_id, 5);
	assert_int_equal(s->sub, ORR_SYNC_EVENT);
	a = &r->syncs[s->args];
	assert_int_equal(a->stream, -1);
	assert_int_equal(a->wait_on_stream, 7);
	assert_int_equal(a->event_record_corr, 44);
	assert_int_equal(a->event_id, -1);
	orr_trace_free(t);
}

/* PyTorch 1.8-1.10, as its profiler wrote them (tids as strings, "stream 7"). */
#define OLD_STEP                                                                                        \
	"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#1\", \"pid\": 10,"             \
	" \"tid\": \"10\", \"ts\": 100, \"dur\": 50, \"args\": {\"External id\": 1}},"                  \
	" {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": \"10\"," \
	" \"ts\": 105, \"dur\": 20, \"args\": {\"External id\": 2}},"                                   \
	" {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10,"           \
	" \"tid\": \"10\", \"ts\": 110, \"dur\": 5, \"args\": {\"cbid\": 211, \"correlation\": 7,"      \
	" \"external id\": 2}},"                                                                        \
	" {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": \"stream 7\","  \
	" \"ts\": 120, \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"external id\": 2}},"

static void test_one_pytorch_1_8_reads_as_later_traces(void **state)
{
	struct orr_trace *t = import_str(
		"[" OLD_STEP " {\"ph\": \"s\", \"id\": 7, \"pid\": 10, \"tid\": 10, \"ts\": 110,"
		" \"cat\": \"async\", \"name\": \"launch\"},"
		" {\"ph\": \"f\", \"id\": 7, \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 120,"
		" \"cat\": \"async\", \"name\": \"launch\", \"bp\": \"e\"}]");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *k = event_named(t, r, "gemm");
	struct orr_step *steps;
	size_t nsteps;

	assert_int_equal(event_named(t, r, "ProfilerStep#1")->kind, ORR_EVENT_ANNOTATION);
	assert_int_equal(event_named(t, r, "aten::mm")->kind, ORR_EVENT_OP);
	assert_int_equal(event_named(t, r, "cudaLaunchKernel")->sub, ORR_CALL_LAUNCH);
	/* The kernel has no correlation of its own: the "async" flow gives it. */
	assert_int_equal(k->kind, ORR_EVENT_KERNEL);
	assert_int_equal(k->correlation, 7);
	assert_int_equal(k->flags & ORR_EVENT_F_FLOW_LINKED, ORR_EVENT_F_FLOW_LINKED);
	orr_rank_steps(t, r, &steps, &nsteps);
	assert_int_equal(nsteps, 1);
	assert_int_equal(steps[0].step, 1);
	free(steps);
	orr_trace_free(t);
}

/* Malformed old traces: a flow without its id, a call without its duration. */
static void test_one_pytorch_1_8_malformed_is_an_error(void **state)
{
	static const char *const bad[] = {
		"[" OLD_STEP " {\"ph\": \"s\", \"pid\": 10, \"tid\": 10, \"ts\": 110,"
		" \"cat\": \"async\", \"name\": \"launch\"}]",
		"[{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10,"
		" \"tid\": \"10\", \"ts\": 110}]",
	};
	struct orr_diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(import_err(bad[i], strlen(bad[i]), &d), ORR_EMALFORMED);
		assert_true(d.offset > 0);
	}
}

/*
 * A "dur" past int64_t's nanoseconds: Kineto before 2024-07 wrote a child profiler's
 * "Trace" span wrapped (16739893950863769.616 us); that span is skipped, so the file
 * reads, while the same on an op is an error naming it.
 */
static void test_one_wrapped_span_dur_is_skipped(void **state)
{
	static const char wrapped[] = "16739893950863769.616";
	char json[512];
	struct orr_trace *t;
	struct orr_diag d;

	(void)state;
	snprintf(json, sizeof(json),
		 "[{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"Trace 1\", \"pid\": \"Spans\","
		 " \"tid\": \"PyTorch Profiler\", \"ts\": 1, \"dur\": %s},"
		 " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
		 " \"ts\": 2, \"dur\": 3}]",
		 wrapped);
	t = import_str(json);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 1);
	assert_int_equal(orr_trace_get_rank(t, 0)->nskipped, 1);
	orr_trace_free(t);
	snprintf(json, sizeof(json),
		 "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
		 " \"ts\": 2, \"dur\": %s}]",
		 wrapped);
	assert_int_equal(import_err(json, strlen(json), &d), ORR_EMALFORMED);
	assert_non_null(strstr(d.msg, "'dur' out of range"));
}

static void test_one_runtime_calls_are_classified(void **state)
{
	static const struct {
		const char *cat, *name;
		int kind, call;
	} calls[] = {
		{ "cuda_runtime", "cudaLaunchKernelExC", ORR_EVENT_RUNTIME, ORR_CALL_LAUNCH },
		{ "cuda_driver", "cuLaunchKernelEx", ORR_EVENT_DRIVER, ORR_CALL_LAUNCH },
		{ "cuda_runtime", "cudaGraphLaunch", ORR_EVENT_RUNTIME, ORR_CALL_GRAPH_LAUNCH },
		{ "cuda_runtime", "cudaStreamWaitEvent", ORR_EVENT_RUNTIME, ORR_CALL_STREAM_WAIT },
		{ "cuda_runtime", "cudaMemcpyAsync", ORR_EVENT_RUNTIME, ORR_CALL_MEMCPY },
		{ "cuda_runtime", "cudaEventRecord", ORR_EVENT_RUNTIME, ORR_CALL_EVENT_RECORD },
		{ "cuda_runtime", "cudaStreamSynchronize", ORR_EVENT_RUNTIME,
		  ORR_CALL_STREAM_SYNC },
		{ "cuda_runtime", "cudaFuncSetAttribute", ORR_EVENT_RUNTIME, ORR_CALL_OTHER },
		/* PyTorch on ROCm: HIP's calls under the same category */
		{ "cuda_runtime", "hipLaunchKernel", ORR_EVENT_RUNTIME, ORR_CALL_LAUNCH },
		{ "cuda_runtime", "hipExtLaunchKernel", ORR_EVENT_RUNTIME, ORR_CALL_LAUNCH },
		{ "cuda_runtime", "hipModuleLaunchKernel", ORR_EVENT_RUNTIME, ORR_CALL_LAUNCH },
		{ "cuda_runtime", "hipMemcpyWithStream", ORR_EVENT_RUNTIME, ORR_CALL_MEMCPY },
		{ "cuda_runtime", "hipMemsetAsync", ORR_EVENT_RUNTIME, ORR_CALL_MEMSET },
		{ "cuda_runtime", "hipStreamWaitEvent", ORR_EVENT_RUNTIME, ORR_CALL_STREAM_WAIT },
		{ "cuda_runtime", "hipEventRecord", ORR_EVENT_RUNTIME, ORR_CALL_EVENT_RECORD },
		{ "cuda_runtime", "hipDeviceSynchronize", ORR_EVENT_RUNTIME, ORR_CALL_DEVICE_SYNC },
		{ "cuda_runtime", "hipGetDevice", ORR_EVENT_RUNTIME, ORR_CALL_OTHER },
	};
	char json[8192];
	size_t len = 0;
	struct orr_trace *t;
	const struct orr_rank *r;

	len += (size_t)snprintf(json + len, sizeof(json) - len, "[");
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		len += (size_t)snprintf(json + len, sizeof(json) - len,
					"%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", "
					"\"pid\": 1, \"tid\": 1, \"ts\": %zu, \"dur\": 1}",
					i ? ", " : "", calls[i].cat, calls[i].name, 10 * i);
	snprintf(json + len, sizeof(json) - len, "]");
	t = import_str(json);
	r = orr_trace_get_rank(t, 0);
	assert_int_equal(r->nevents, sizeof(calls) / sizeof(calls[0]));
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const struct orr_event *e = event_named(t, r, calls[i].name);

		assert_int_equal(e->kind, calls[i].kind);
		assert_int_equal(e->sub, calls[i].call);
	}
	orr_trace_free(t);
}

static void test_one_kernel_launch_is_read(void **state)
{
	struct orr_trace *t = import_str(
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
		" \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7,"
		" \"grid\": [864, 2, 1], \"block\": [256, 1, 1], \"shared memory\": 16384,"
		" \"registers per thread\": 47}},"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"odd\", \"pid\": 0, \"tid\": 7,"
		" \"ts\": 5, \"dur\": 1, \"args\": {\"grid\": [1, 2], \"block\": \"256\","
		" \"registers per thread\": -1}},"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"none\", \"pid\": 0,"
		" \"tid\": 7, \"ts\": 8, \"dur\": 1, \"args\": {\"stream\": 7}}]}");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *k = event_named(t, r, "k");
	const struct orr_kernel_args *a = &r->kernels[k->args];

	(void)state;
	assert_int_equal(k->kind, ORR_EVENT_KERNEL);
	assert_int_equal(a->grid[0], 864);
	assert_int_equal(a->grid[1], 2);
	assert_int_equal(a->grid[2], 1);
	assert_int_equal(a->block[0], 256);
	assert_int_equal(a->shared_bytes, 16384);
	assert_int_equal(a->registers, 47);
	/* Other shapes are for display only: skipped, the event kept. */
	assert_int_equal(event_named(t, r, "odd")->args, ORR_NONE);
	assert_int_equal(event_named(t, r, "none")->args, ORR_NONE);
	assert_int_equal(r->nkernels, 1);
	orr_trace_free(t);
}

static void test_one_copies_and_devices_are_read(void **state)
{
	struct orr_trace *t = import_str(
		"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\":"
		" \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0, \"tid\": 13, \"ts\": 1, \"dur\": 2,"
		" \"args\": {\"device\": 0, \"stream\": 13, \"correlation\": 3, \"bytes\": 4096}},"
		" {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0,"
		" \"tid\": 7, \"ts\": 5, \"dur\": 1, \"args\": {\"bytes\": 64}}],"
		" \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\", \"numSms\": 132,"
		" \"computeMajor\": 9, \"computeMinor\": 0, \"totalGlobalMem\": 85045231616}],"
		" \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 5, \"world_size\": 8,"
		" \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\","
		" \"backend_config\": \"cuda:nccl\", \"pg_size\": 2, \"ranks\": [4, 5]}]}}");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	const struct orr_event *cp = event_named(t, r, "Memcpy HtoD (Pinned -> Device)");
	const struct orr_event *ms = event_named(t, r, "Memset (Device)");

	assert_int_equal(cp->kind, ORR_EVENT_MEMCPY);
	assert_int_equal(r->copies[cp->args].bytes, 4096);
	assert_int_equal(ms->kind, ORR_EVENT_MEMSET);
	assert_int_equal(r->copies[ms->args].bytes, 64);
	assert_int_equal(r->rank, 5);
	assert_int_equal(r->world_size, 8);
	assert_string_equal(orr_trace_str(t, r->backend), "nccl");
	assert_int_equal(r->ndevices, 1);
	assert_int_equal(r->devices[0].num_sms, 132);
	assert_int_equal(r->devices[0].compute_major, 9);
	assert_int_equal(r->devices[0].total_mem_bytes, 85045231616LL);
	assert_string_equal(orr_trace_str(t, r->devices[0].name), "NVIDIA H100");
	assert_int_equal(r->ncomms, 1);
	assert_string_equal(orr_trace_str(t, r->comms[0].name), "0");
	assert_string_equal(orr_trace_str(t, r->comms[0].desc), "default_pg");
	assert_int_equal(r->comms[0].size, 2);
	assert_int_equal(r->comms[0].nmembers, 2);
	assert_int_equal(r->members[r->comms[0].first_member + 1], 5);
	orr_trace_free(t);
}

/*
 * Metadata past what its field holds (a group or SM count past 2^31, a negative device
 * or memory) is unknown, as an out-of-range world_size is: not cut to 32 bits (2^32 + 2
 * read as a group of 2, 2^32 + 132 as 132 SMs).
 */
static void test_one_metadata_out_of_range_is_unknown(void **state)
{
	struct orr_trace *t =
		import_str("{\"traceEvents\": [], \"deviceProperties\": [{\"id\": 4294967296,"
			   " \"name\": \"G\", \"numSms\": 4294967428, \"computeMajor\": -1,"
			   " \"computeMinor\": 4294967296, \"totalGlobalMem\": -1}],"
			   " \"distributedInfo\": {\"rank\": 0, \"world_size\": 4294967298,"
			   " \"pg_config\": [{\"pg_name\": \"0\", \"pg_size\": 4294967298,"
			   " \"ranks\": [0, 1]}]}}");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);

	(void)state;
	assert_int_equal(r->world_size, -1);
	assert_int_equal(r->ncomms, 1);
	assert_int_equal(r->comms[0].size, -1);
	assert_int_equal(r->ndevices, 1);
	assert_int_equal(r->devices[0].id, -1);
	assert_int_equal(r->devices[0].num_sms, 0);
	assert_int_equal(r->devices[0].compute_major, 0);
	assert_int_equal(r->devices[0].compute_minor, 0);
	assert_int_equal(r->devices[0].total_mem_bytes, 0);
	orr_trace_free(t);
}

/* profile_memory=True: the allocator's largest totals on a CUDA device; the CPU's ignored. */
static void test_one_memory_events_give_allocator_peaks(void **state)
{
#define MEM(ts, type, alloc, resv)                                                               \
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", " \
	"\"pid\": 1, \"tid\": 1, \"ts\": " #ts ", \"args\": {\"Device Type\": " #type            \
	", \"Device Id\": 0, \"Bytes\": 512, \"Total Allocated\": " #alloc                       \
	", \"Total Reserved\": " #resv "}}"
	struct orr_trace *t = import_str("{\"traceEvents\": [" MEM(1, 1, 1000, 4096) ", " MEM(
		2, 1, 3000, 8192) ", " MEM(3, 1, 500, 8192) ", " MEM(4, 0, 99999, 99999) "]}");
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	struct orr_trace *none = import_str("{\"traceEvents\": []}");

	(void)state;
	assert_int_equal(r->mem_peak_allocated_bytes, 3000);
	assert_int_equal(r->mem_peak_reserved_bytes, 8192);
	assert_int_equal(orr_trace_get_rank(none, 0)->mem_peak_reserved_bytes, -1);
	orr_trace_free(none);
	orr_trace_free(t);
#undef MEM
}

/* A trace in memory, and the address space a capped import of it has above its own. */
struct capped_json {
	const char *json;
	size_t len, above_bytes;
};

/*
 * With its address space capped a little above what it holds, the trace at arg (a
 * struct capped_json) imported: 0 when the import fails with -ENOMEM naming memory, 2
 * otherwise (3: no cap).
 */
static int import_capped(void *arg)
{
	const struct capped_json *a = arg;
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r;

	if (capped_address_space(a->above_bytes) != 0)
		return 3;
	r = orr_trace_import_buffer("test.json", a->json, a->len, NULL, &t, &d);
	if (r == -ENOMEM && strstr(d.msg, "out of memory"))
		return 0;
	fprintf(stderr, "import: %s: %s\n", orr_errname(r), r ? d.msg : "read");
	orr_trace_free(t);
	return 2;
}

/* import_capped() in a child: fails the test unless the child's import said -ENOMEM. */
static void expect_out_of_memory(const char *json, size_t len, size_t above_bytes)
{
	struct capped_json a = { json, len, above_bytes };
	int status = capped_in_child(import_capped, &a);

	if (status != 0)
		fail_msg("the import capped %zu MiB above: %s %d", above_bytes >> 20,
			 status < 0 ? "signal" : "exit", status < 0 ? -status : status);
}

/*
 * Memory refused to the parser is the import's error, -ENOMEM: the library printed 'out
 * of memory' and called exit(1) where the parser's first index (several bytes per byte
 * of a 1 MiB window) was refused, and an event longer than a window, for which simdjson
 * grows its index (MEMALLOC when refused), was 'malformed input'.  The trace is one
 * event of just under 16 MiB (a list in its args), which the import copies first into
 * 16 MiB.  Capped 2 MiB above the copy, the first index does not fit (it did from 5 MiB
 * above; the copy itself failed 4 MiB lower); 32 MiB above, it does and the grown one
 * does not (none up to 96 MiB above did).  Not under ASan, whose shadow memory a cap
 * breaks.
 */
static void test_malformed_out_of_memory_is_an_error(void **state)
{
	static const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
				   " \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 1,"
				   " \"dur\": 1, \"args\": {\"pad\": [0";
	static const char tail[] = "]}}]}";
	size_t pad = ((size_t)8 << 20) - 128, len = sizeof(head) - 1 + 2 * pad + sizeof(tail) - 1;
	char *json, *p;

	(void)state;
	if (UNDER_ASAN) {
		fprintf(stderr, "skipped: an address-space cap under ASan\n");
		skip();
	}
	p = json = orr_xmalloc(len + 1);
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	for (size_t i = 0; i < pad; i++, p += 2)
		memcpy(p, ",0", 2);
	memcpy(p, tail, sizeof(tail));
	expect_out_of_memory(json, len, len + ((size_t)2 << 20));
	expect_out_of_memory(json, len, len + ((size_t)32 << 20));
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_empty_buffer_is_eempty),
		cmocka_unit_test(test_null_whitespace_is_eempty),
		cmocka_unit_test(test_null_empty_object_is_eformat),
		cmocka_unit_test(test_null_empty_array_has_no_events),
		cmocka_unit_test(test_one_events_have_kinds_places_and_times),
		cmocka_unit_test(test_one_names_are_interned),
		cmocka_unit_test(test_one_step_ends_at_launched_kernel),
		cmocka_unit_test(test_one_unknown_category_is_counted),
		cmocka_unit_test(test_one_named_counter_is_skipped),
		cmocka_unit_test(test_one_timestamps_are_exact_ns),
		cmocka_unit_test(test_one_ac2g_flow_gives_correlation),
		cmocka_unit_test(test_one_async_cpu_to_gpu_flow_gives_correlation),
		cmocka_unit_test(test_one_cuda_sync_has_its_fields),
		cmocka_unit_test(test_one_pytorch_1_8_reads_as_later_traces),
		cmocka_unit_test(test_one_pytorch_1_8_malformed_is_an_error),
		cmocka_unit_test(test_one_wrapped_span_dur_is_skipped),
		cmocka_unit_test(test_one_runtime_calls_are_classified),
		cmocka_unit_test(test_one_kernel_launch_is_read),
		cmocka_unit_test(test_one_copies_and_devices_are_read),
		cmocka_unit_test(test_one_metadata_out_of_range_is_unknown),
		cmocka_unit_test(test_one_memory_events_give_allocator_peaks),
		cmocka_unit_test(test_malformed_out_of_memory_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
