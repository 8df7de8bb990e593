/* SPDX-License-Identifier: MIT */
/*
 * The Chrome trace-event writer (traces/chrome/chrome-write.c): Kineto -> model -> Chrome JSON
 * -> model gives the same model, rank by rank, on crafted traces of one, two and eight
 * ranks, the sample and (run with the argument "real") every real trace in
 * ../shared/traces/kineto ($ORR_SHARED_TRACES; the program then exits 77 when it is
 * absent), several ranks in one file as well as one file per rank; and files of several
 * ranks that cannot be split are refused (traces/chrome/chrome-split.c).
 *
 * What the JSON cannot carry, and so is left out of the comparison (MODEL_CMP_CHROME):
 * - the source file name (the file read back is another one);
 * - skipped categories: the model keeps only their counts, not the events;
 * - nflows, the ac2g endpoints read: the writer draws one pair per launch and task
 *   found in the model, not the producer's endpoints;
 * - what only a native header says (host, producer, clock, pid, local rank, CUPTI and
 *   CUDA versions, drops, step window, truncation): the Kineto importer reads none of
 *   it (the writer still writes the versions under Kineto's keys).
 * Everything else is compared with every index resolved, event by event in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/native.h"
#include "orrery/trace.h"
#include "model-compare.h"
#include "test-util.h"

/* ---- helpers ---- */

static char *sample_path(void)
{
	const char *root = getenv("ORR_SOURCE_ROOT");

	return orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
}

static struct orr_trace *import_ok(const char *path)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;

	if (orr_trace_import(path, NULL, &t, &d))
		fail_msg("cannot import %s: %s", path, d.msg);
	return t;
}

static struct orr_trace *import_text(const char *text)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;

	if (orr_trace_import_buffer("rank-0.json", text, strlen(text), NULL, &t, &d))
		fail_msg("cannot import the test trace: %s (byte %lld)", d.msg,
			 (long long)d.offset);
	return t;
}

/* Writes one file per rank of t into dir, reads the directory back, compares. */
static void round_trip_dir(const struct orr_trace *t, const char *dir)
{
	struct orr_trace *back;
	struct orr_diag d;

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		char *path = orr_xasprintf("%s/rank-%d.json", dir, r->rank);

		if (orr_trace_write_chrome_rank(t, r, path, &d))
			fail_msg("cannot write %s: %s", path, d.msg);
		free(path);
	}
	back = import_ok(dir);
	assert_same_model(t, back, MODEL_CMP_CHROME);
	orr_trace_free(back);
}

/* The same through one file (one rank only). */
static char *round_trip_file(const struct orr_trace *t, const char *dir, const char *name)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	struct orr_trace *back;
	struct orr_diag d;

	if (orr_trace_write_chrome(t, path, &d))
		fail_msg("cannot write %s: %s", path, d.msg);
	back = import_ok(path);
	assert_same_model(t, back, MODEL_CMP_CHROME);
	orr_trace_free(back);
	return path;
}

/* tests/golden/check-chrome.py on PATH with ARGS; skipped without python3. */
static void check_with_python(const char *path, const char *args)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *cmd;

	if (system("python3 -c '' 2>/dev/null") != 0)
		return;
	cmd = orr_xasprintf("python3 '%s/tests/golden/check-chrome.py' '%s' %s", root ? root : ".",
			    path, args);
	if (system(cmd) != 0)
		fail_msg("'%s' failed", cmd);
	free(cmd);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, len = 0, n;

	assert_non_null(f);
	do {
		cap += 65536;
		text = orr_xrealloc(text, cap + 1);
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (len == cap);
	text[len] = '\0';
	fclose(f);
	return text;
}

static size_t count_flag(const struct orr_trace *t, uint16_t flag)
{
	size_t n = 0;

	for (size_t k = 0; k < orr_trace_rank_count(t); k++) {
		const struct orr_rank *r = orr_trace_get_rank(t, k);

		for (size_t i = 0; i < r->nevents; i++)
			n += (r->events[i].flags & flag) != 0;
	}
	return n;
}

static bool dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool empty = true;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

/* ---- crafted traces ---- */

/* Every field the importer reads, escapes in strings, flow-linked correlations. */
static const char every_field[] =
	"{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 4,"
	" \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\","
	" \"backend_config\": \"cuda:nccl\", \"pg_size\": 4, \"ranks\": [0, 1, 2, 3]},"
	" {\"pg_name\": 7, \"pg_desc\": \"tp\", \"ranks\": \"[2, 3]\"}]},\n"
	" \"deviceProperties\": [{\"id\": 0, \"name\": \"H100 \\\"sxm\\\"\","
	" \"totalGlobalMem\": 85029158912, \"computeMajor\": 9, \"computeMinor\": 0,"
	" \"numSms\": 132}],\n"
	" \"baseTimeNanoseconds\": 1000000000000,\n"
	" \"traceEvents\": [\n"
	"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 10, \"tid\": 11,"
	" \"args\": {\"name\": \"main \\u0001 \\\"q\\\" \\\\ \\u00e9 \\ud83d\\ude00\"}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": 11,"
	" \"ts\": 1.5, \"dur\": 10.001, \"args\": {\"External id\": 5, \"Sequence number\": 9,"
	" \"Input Dims\": [[2, 3], [3, 4], [], [[1], [2]], [5, [6]]],"
	" \"Input type\": [\"float\", \"c10::BFloat16\", \"\", \"TensorList\", null, \"x\"]}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 10, \"tid\": 11,"
	" \"ts\": 1.6, \"dur\": 0.5, \"args\": {\"Sequence number\": 10}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 2, \"dur\": 1, \"args\": {\"External id\": 6,"
	" \"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": 100,"
	" \"Out msg nelems\": 100, \"Group size\": 4, \"Process Group Name\": \"0\","
	" \"Process Group Description\": \"default_pg\","
	" \"Process Group Ranks\": \"[0, 1, 2, 3]\", \"Seq\": 12}},\n"
	"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 0, \"dur\": 100},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 3, \"dur\": 2, \"args\": {\"External id\": 5}},\n"
	"{\"ph\": \"s\", \"id\": 41, \"pid\": 10, \"tid\": 11, \"ts\": 3, \"cat\": \"ac2g\","
	" \"name\": \"ac2g\"},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm \\\"tab\\\"\\there\", \"pid\": 0,"
	" \"tid\": 7, \"ts\": 6, \"dur\": 4, \"args\": {\"External id\": 5, \"device\": 0,"
	" \"stream\": 7}},\n"
	"{\"ph\": \"f\", \"id\": 41, \"pid\": 0, \"tid\": 7, \"ts\": 6, \"cat\": \"ac2g\","
	" \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 7, \"dur\": 1, \"args\": {\"correlation\": 42}},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\","
	" \"pid\": 0, \"tid\": 20, \"ts\": 8, \"dur\": 30, \"args\": {\"correlation\": 42,"
	" \"device\": 0, \"stream\": 20}},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv(x)\", \"pid\": 0,"
	" \"tid\": 20, \"ts\": 40, \"dur\": 3, \"args\": {\"correlation\": 43, \"device\": 0,"
	" \"stream\": 20, \"Collective name\": \"send\", \"Src Rank\": 3, \"Dst Rank\": 2,"
	" \"dtype\": \"BFloat16\", \"In msg nelems\": 8}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 9, \"dur\": 1, \"args\": {\"correlation\": 44}},\n"
	"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 13,"
	" \"ts\": 10, \"dur\": 2, \"args\": {\"correlation\": 44, \"device\": 0, \"stream\": 13,"
	" \"bytes\": 4096}},\n"
	"{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0,"
	" \"tid\": 7, \"ts\": 12, \"dur\": 1, \"args\": {\"correlation\": 45, \"device\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaEventRecord\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 13, \"dur\": 1, \"args\": {\"correlation\": 46}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_event\", \"name\": \"cudaEvent\", \"pid\": 0, \"tid\": 13,"
	" \"ts\": 13.5, \"dur\": 0.001, \"args\": {\"correlation\": 46, \"event_id\": 3,"
	" \"stream\": 13, \"device\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamWaitEvent\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 14, \"dur\": 1, \"args\": {\"correlation\": 47}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"pid\": 0,"
	" \"tid\": 7, \"ts\": 14.5, \"dur\": 0.01, \"args\": {\"correlation\": 47,"
	" \"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 13,"
	" \"wait_on_cuda_event_record_corr_id\": 46, \"wait_on_cuda_event_id\": 3,"
	" \"stream\": 7, \"device\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"pid\": 0, \"tid\": -1,"
	" \"ts\": 15, \"dur\": 1, \"args\": {\"correlation\": 48, \"cuda_sync_kind\": \"Event Sync\","
	" \"wait_on_stream\": -1, \"wait_on_cuda_event_record_corr_id\": -1,"
	" \"wait_on_cuda_event_id\": 3, \"stream\": -1, \"device\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Context Sync\", \"pid\": 0, \"tid\": 9,"
	" \"ts\": 15.2, \"dur\": 1, \"args\": {}},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 10,"
	" \"tid\": 12, \"ts\": 16, \"dur\": 1, \"args\": {\"correlation\": 49}},\n"
	"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\","
	" \"pid\": 10, \"tid\": 11, \"ts\": 17, \"args\": {\"Bytes\": 5}},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg\", \"pid\": 10, \"tid\": 11,"
	" \"ts\": -2.5, \"dur\": 0, \"args\": {\"External id\": -7}},\n"
	"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"skipped.py\", \"pid\": 10,"
	" \"tid\": 11, \"ts\": 1, \"dur\": 1}\n"
	"]}\n";

static void test_chrome_every_field_round_trips(void **state)
{
	struct orr_trace *t = import_text(every_field);
	const struct orr_rank *r = orr_trace_get_rank(t, 0);
	char *path;

	/* What the crafted trace must hold for the test to mean anything. */
	assert_int_equal(r->rank, 3);
	assert_int_equal(count_flag(t, ORR_EVENT_F_FLOW_LINKED), 2);
	assert_int_equal(r->ncollectives, 3);
	assert_int_equal(r->ncomms, 2);
	assert_true(r->nskipped > 0);
	path = round_trip_file(t, *state, "every.json");
	check_with_python(path, "--ranks 3 --min-flows 4 --min-waits 1");
	free(path);
	orr_trace_free(t);
}

/* The null case: a rank without events; and one event. */
/* "Concrete Inputs" are written back as read: a value, "" for none, null for no entry. */
static void test_chrome_concrete_inputs_round_trip(void **state)
{
	struct orr_trace *t = import_text(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"External id\": 1,"
		" \"Concrete Inputs\": [\"\", \"[8, 1024]\", 3, \"1.\"],"
		" \"Input type\": [\"float\", \"ScalarList\", \"Scalar\", \"Scalar\"],"
		" \"Input Dims\": [[4], [], [], []]}}]");
	char *path = round_trip_file(t, *state, "concrete.json");
	struct orr_trace *back = import_ok(path);
	const struct orr_rank *r = orr_trace_get_rank(back, 0);
	const struct orr_input *in = &r->inputs[r->ops[0].first_input];

	assert_int_equal(r->ops[0].ninputs, 4);
	assert_int_equal(in[0].has_value, 1);
	assert_int_equal(in[0].value, ORR_STR_NONE);
	assert_string_equal(orr_trace_str(back, in[1].value), "[8, 1024]");
	assert_int_equal(in[2].has_value, 0);
	assert_string_equal(orr_trace_str(back, in[3].value), "1.");
	orr_trace_free(back);
	free(path);
	orr_trace_free(t);
}

/*
 * "Input Strides" and a list of tensors' members are written back as read (nested lists
 * for the list), and a list whose members are unknown stays one.
 */
static void test_chrome_strides_round_trip(void **state)
{
	struct orr_trace *t = import_text(
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"External id\": 1,"
		" \"Input Strides\": [[[6, 3, 1], [2, 1]], [], [1, 4096], [[]]],"
		" \"Input type\": [\"TensorList\", \"Scalar\", \"float\", \"TensorList\"],"
		" \"Input Dims\": [[[4, 2, 3], [5, 2]], [], [4096, 8], [1, [2]]]}}]");
	char *path = round_trip_file(t, *state, "strides.json");
	struct orr_trace *back = import_ok(path);
	const struct orr_rank *r = orr_trace_get_rank(back, 0);
	const struct orr_input *in = &r->inputs[r->ops[0].first_input];
	const int64_t dims[] = { 3, 4, 2, 3, 2, 5, 2 }, strides[] = { 3, 6, 3, 1, 2, 2, 1 };

	assert_int_equal(r->ops[0].ninputs, 4);
	assert_int_equal(in[0].is_list, 1);
	assert_int_equal(in[0].ndims, 7);
	assert_memory_equal(r->dims + in[0].first_dim, dims, sizeof(dims));
	assert_int_equal(in[0].nstrides, 7);
	assert_memory_equal(r->strides + in[0].first_stride, strides, sizeof(strides));
	assert_int_equal(in[1].nstrides, 0);
	assert_int_equal(in[2].nstrides, 2);
	assert_int_equal(r->strides[in[2].first_stride + 1], 4096);
	assert_int_equal(in[3].is_list, 1); /* mixed: a list, its members unknown */
	assert_int_equal(in[3].ndims, 0);
	assert_int_equal(in[3].nstrides, 0);
	orr_trace_free(back);
	free(path);
	orr_trace_free(t);
}

static void test_chrome_empty_and_one_event(void **state)
{
	struct orr_trace *t = import_text("{\"traceEvents\": []}");
	char *path;

	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 0);
	path = round_trip_file(t, *state, "empty.json");
	check_with_python(path, "--ranks ''");
	free(path);
	orr_trace_free(t);
	t = import_text("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 2,"
			" \"tid\": 5, \"ts\": 1669783687389324.125, \"dur\": 3}]");
	free(round_trip_file(t, *state, "one.json"));
	orr_trace_free(t);
}

/* ---- the sample and the real traces ---- */

static void test_chrome_sample_round_trips(void **state)
{
	char *sample = sample_path();
	struct orr_trace *t = import_ok(sample);
	char *path = orr_xasprintf("%s/rank-1.json", (char *)*state);

	round_trip_dir(t, *state);
	check_with_python(path, "--ranks 1 --min-flows 100 --min-waits 10");
	free(path);
	free(sample);
	orr_trace_free(t);
}

/* check-chrome.py's "--ranks R,R,..." for every rank of t. */
static char *ranks_arg(const struct orr_trace *t)
{
	char *args = orr_xstrdup("--ranks ");

	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		char *more =
			orr_xasprintf("%s%s%d", args, i ? "," : "", orr_trace_get_rank(t, i)->rank);

		free(args);
		args = more;
	}
	return args;
}

/* Two ranks in one file: one process per rank and device, read back rank by rank. */
static void test_chrome_two_ranks_in_one_file(void **state)
{
	char *sample = sample_path();
	struct orr_trace *t = import_ok(sample);
	char *path;

	assert_int_equal(orr_trace_rank_count(t), 2);
	path = round_trip_file(t, *state, "both.json");
	check_with_python(path, "--ranks 0,1 --min-flows 200 --min-waits 20");
	free(path);
	orr_trace_free(t);
	free(sample);
}

/* text with its one OLD replaced by NEW, malloc'ed. */
static char *replace_once(const char *text, const char *old, const char *new)
{
	const char *at = strstr(text, old);

	assert_non_null(at);
	return orr_xasprintf("%.*s%s%s", (int)(at - text), text, new, at + strlen(old));
}

/*
 * every_field as rank R of a job of N: every rank on device 0 and in a process with pid
 * 10 (as in a container per rank), so that only the file can keep them apart; its own
 * clock origin, and one event of its own.
 */
static void write_rank_text(const char *dir, int rank, int n)
{
	char *info = orr_xasprintf("\"rank\": %d, \"world_size\": %d", rank, n);
	char *base =
		orr_xasprintf("\"baseTimeNanoseconds\": %lld", 1000000000000LL + rank * 1000003LL);
	char *own = orr_xasprintf(",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\":"
				  " \"rank %d only\", \"pid\": 10, \"tid\": 11, \"ts\": %d,"
				  " \"dur\": 1}\n]}\n",
				  rank, 20 + rank);
	char *a = replace_once(every_field, "\"rank\": 3, \"world_size\": 4", info);
	char *b = replace_once(a, "\"baseTimeNanoseconds\": 1000000000000", base);
	char *c = replace_once(b, "\n]}\n", own);
	char *path = orr_xasprintf("%s/rank-%d.json", dir, rank);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(c, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(path);
	free(c);
	free(b);
	free(a);
	free(own);
	free(base);
	free(info);
}

/* N crafted ranks -> one Chrome file -> N ranks again, each as it was. */
static void n_ranks_in_one_file(const char *tmp, int n)
{
	char *dir = orr_xasprintf("%s/ranks", tmp), *name = orr_xasprintf("%d-ranks.json", n);
	char *path, *args;
	struct orr_trace *t, *back;

	assert_int_equal(mkdir(dir, 0777), 0);
	for (int k = 0; k < n; k++)
		write_rank_text(dir, k, n);
	t = import_ok(dir);
	assert_int_equal(orr_trace_rank_count(t), n);
	path = round_trip_file(t, tmp, name);
	args = ranks_arg(t);
	check_with_python(path, args);
	/* What assert_same_model() compared, seen from the outside. */
	back = import_ok(path);
	for (int k = 0; k < n; k++) {
		const struct orr_rank *r = orr_trace_get_rank(back, (size_t)k);

		assert_int_equal(r->rank, k);
		assert_int_equal(r->world_size, n);
		assert_int_equal(r->base_time_ns, 1000000000000LL + k * 1000003LL);
		assert_int_equal(r->places[0].pid, 10);
	}
	assert_int_equal(count_flag(back, ORR_EVENT_F_FLOW_LINKED), 2 * n);
	orr_trace_free(back);
	orr_trace_free(t);
	free(args);
	free(path);
	free(name);
	free(dir);
}

static void test_chrome_two_crafted_ranks_in_one_file(void **state)
{
	n_ranks_in_one_file(*state, 2);
}

static void test_chrome_eight_crafted_ranks_in_one_file(void **state)
{
	n_ranks_in_one_file(*state, 8);
}

static void chrome_round_trip(struct orr_trace *t, const char *name, void *tmpdir)
{
	char *flat = flat_name(name);
	char *out = orr_xasprintf("%s/%s.out.json", (char *)tmpdir, flat);
	char *args = ranks_arg(t);
	struct orr_trace *back;
	struct orr_diag d;

	if (orr_trace_write_chrome(t, out, &d))
		fail_msg("cannot write %s: %s", out, d.msg);
	back = import_ok(out);
	assert_same_model(t, back, MODEL_CMP_CHROME);
	check_with_python(out, args);
	free(args);
	orr_trace_free(back);
	remove(out);
	free(out);
	free(flat);
}

/* Every shared trace, of every format (ROCm, PyTorch 1.8, Nsight Systems included). */
static void test_chrome_real_traces_round_trip(void **state)
{
	assert_true(for_each_shared_trace_in(chrome_round_trip, *state, true) >= 17);
}

/* ---- files of several ranks that cannot be split ---- */

/* Two declared ranks: rank 0 on pid 1 (its own 100), rank 1's device 0 on pid 2. */
#define TWO_RANKS                                                                        \
	"{\"orreryRanks\": [{\"distributedInfo\": {\"rank\": 0}},"                       \
	" {\"distributedInfo\": {\"rank\": 1}}],\n \"traceEvents\": [\n"                 \
	"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0,"            \
	" \"args\": {\"name\": \"rank 0\", \"rank\": 0, \"pid\": 100}},\n"               \
	"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"tid\": 0,"            \
	" \"args\": {\"name\": \"rank 1 GPU 0\", \"rank\": 1, \"device\": 0}},\n"        \
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 7," \
	" \"ts\": 1, \"dur\": 1},\n"                                                     \
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 2, \"tid\": 7,"  \
	" \"ts\": 1, \"dur\": 1}"
#define END "\n]}\n"

/* A file written by hand in the writer's form splits as it says. */
static void test_chrome_declared_ranks_split(void **state)
{
	struct orr_trace *t = import_text(TWO_RANKS END);
	const struct orr_rank *r0 = orr_trace_get_rank(t, 0), *r1 = orr_trace_get_rank(t, 1);

	(void)state;
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(r0->rank, 0);
	assert_int_equal(r0->nplaces, 1);
	assert_int_equal(r0->places[0].kind, ORR_PLACE_THREAD);
	assert_int_equal(r0->places[0].pid, 100);
	assert_int_equal(r0->nevents, 1);
	assert_int_equal(r1->rank, 1);
	assert_int_equal(r1->nplaces, 1);
	assert_int_equal(r1->places[0].kind, ORR_PLACE_STREAM);
	assert_int_equal(r1->places[0].pid, 0);
	assert_int_equal(r1->places[0].device, 0);
	assert_int_equal(r1->nevents, 1);
	orr_trace_free(t);
}

/* Refused, with ORR_ERANK, the file, what is wrong and how to write it readable. */
static void test_chrome_unsplittable_refused(void **state)
{
	static const struct {
		const char *text, *says;
	} cases[] = {
		/* An older orrery's file: processes named after ranks, nothing declared. */
		{ "{\"traceEvents\": [\n"
		  "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0,"
		  " \"args\": {\"name\": \"rank 0\"}},\n"
		  "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"tid\": 0,"
		  " \"args\": {\"name\": \"rank 1 GPU 0\"}},\n"
		  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 7,"
		  " \"ts\": 1, \"dur\": 1}" END,
		  "named after ranks 0 and 1" },
		{ "{\"orreryRanks\": [{\"distributedInfo\": {\"world_size\": 2}}],"
		  " \"traceEvents\": []}",
		  "entry 0 has no distributedInfo.rank" },
		{ "{\"orreryRanks\": [{\"distributedInfo\": {\"rank\": 0}},"
		  " {\"distributedInfo\": {\"rank\": 0}}], \"traceEvents\": []}",
		  "lists rank 0 twice" },
		{ TWO_RANKS ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 3, \"tid\": 0,"
			    " \"args\": {\"name\": \"rank 2\", \"rank\": 2, \"pid\": 5}}" END,
		  "process 3 is named after rank 2, which 'orreryRanks' does not list" },
		{ TWO_RANKS ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 3, \"tid\": 0,"
			    " \"args\": {\"name\": \"rank 1\", \"rank\": 1}}" END,
		  "process 3 of rank 1 gives neither its 'pid' nor a valid 'device'" },
		{ TWO_RANKS ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, \"tid\": 0,"
			    " \"args\": {\"name\": \"rank 1\", \"rank\": 1, \"pid\": 5}}" END,
		  "process 2 is named twice" },
		{ TWO_RANKS ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 9,"
			    " \"tid\": 7, \"ts\": 1, \"dur\": 1}" END,
		  "events on process 9, which no process_name with a 'rank' claims" },
		{ TWO_RANKS ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 2,"
			    " \"tid\": 7, \"ts\": 1, \"dur\": 1}" END,
		  "process 2 holds CPU events but is named as a device" },
		{ TWO_RANKS ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 2,"
			    " \"tid\": 7, \"ts\": 2, \"dur\": 1, \"args\": {\"device\": 0}}" END,
		  "GPU events name their 'device'" },
		/* Flow ids are correlation x 2 + index: 9 is rank 1's, not rank 0's. */
		{ TWO_RANKS ",\n{\"ph\": \"s\", \"id\": 9, \"pid\": 1, \"tid\": 7, \"ts\": 1,"
			    " \"cat\": \"ac2g\", \"name\": \"ac2g\"}" END,
		  "flow 9 on process 1 is not rank 0's" },
		{ TWO_RANKS ",\n{\"ph\": \"f\", \"id\": 9, \"pid\": 4, \"tid\": 7, \"ts\": 1,"
			    " \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}" END,
		  "a flow on process 4, which no process_name with a 'rank' claims" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct orr_trace *t = NULL;
		struct orr_diag d;
		int r = orr_trace_import_buffer("both.json", cases[i].text, strlen(cases[i].text),
						NULL, &t, &d);

		if (r != ORR_ERANK || !strstr(d.msg, cases[i].says) ||
		    !strstr(d.msg, "write one file per rank instead (orrery convert --to chrome "
				   "TRACE -o DIR)") ||
		    strcmp(d.file, "both.json") != 0)
			fail_msg("case %zu: %d '%s': %s, expected '%s'", i, r, d.file, d.msg,
				 cases[i].says);
		assert_null(t);
	}
}

/*
 * The limits of one rank hold each rank of a file of several (ORR_MAX_PLACES: "threads and
 * streams in one rank"): the file is read against them times its ranks, then each rank
 * against them once split.
 */
static void test_chrome_declared_ranks_limits_per_rank(void **state)
{
	/* rank 0 gains a second thread: 2 places, rank 1 one */
	static const char text[] = TWO_RANKS
		",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1,"
		" \"tid\": 8, \"ts\": 2, \"dur\": 1}" END;
	static const char more[] = TWO_RANKS
		",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1,"
		" \"tid\": 8, \"ts\": 2, \"dur\": 1},\n{\"ph\": \"X\", \"cat\": \"cpu_op\","
		" \"name\": \"op\", \"pid\": 1, \"tid\": 8, \"ts\": 4, \"dur\": 1}" END;
	struct orr_import_options o = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag d;
	int r;

	(void)state;
	/* each rank within 2 places, the file's 3 past 2: read, two ranks */
	o.max_places = 2;
	assert_int_equal(orr_trace_import_buffer("two.json", text, strlen(text), &o, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(orr_trace_get_rank(t, 0)->nplaces, 2);
	orr_trace_free(t);
	t = NULL;
	/* rank 0's 2 places past 1, the file's 3 past 2: refused while parsing, on average */
	o.max_places = 1;
	r = orr_trace_import_buffer("two.json", text, strlen(text), &o, &t, &d);
	if (r != ORR_ETOOBIG ||
	    !strstr(d.msg, "more than 1 threads and streams in one rank on average over its 2 "
			   "ranks, read as one before it is split: raise the limit ORR_MAX_PLACES"))
		fail_msg("%d: %s", r, d.msg);
	assert_null(t);
	/* one rank past the limit, the file within twice it: refused once split, named */
	o.max_places = 0;
	o.max_events = 2; /* rank 0 has 3 events, rank 1 one: 4 within 2 x 2 */
	r = orr_trace_import_buffer("two.json", more, strlen(more), &o, &t, &d);
	if (r != ORR_ETOOBIG ||
	    !strstr(d.msg,
		    "rank 0: more than 2 events in one rank: raise the limit ORR_MAX_EVENTS"))
		fail_msg("%d: %s", r, d.msg);
	assert_null(t);
}

/* One rank's processes may be named after it: an orrery-written file of one rank. */
static void test_chrome_one_named_rank_is_one_rank(void **state)
{
	struct orr_trace *t = import_text(
		"{\"traceEvents\": [\n"
		"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0,"
		" \"args\": {\"name\": \"rank 4\"}},\n"
		"{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0,"
		" \"args\": {\"name\": \"rank 4 GPU 0\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 7,"
		" \"ts\": 1, \"dur\": 1}" END);

	(void)state;
	assert_int_equal(orr_trace_rank_count(t), 1);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 1);
	orr_trace_free(t);
}

/* ---- strings a JSON file cannot hold as they are ---- */

/* A native trace may hold any bytes: what is not UTF-8 becomes U+FFFD. */
static void test_chrome_invalid_utf8_is_replaced(void **state)
{
	char *native = orr_xasprintf("%s/bad-utf8.orr", (char *)*state);
	char *json = orr_xasprintf("%s/bad-utf8.json", (char *)*state);
	struct orr_native_header h = { .rank = 0,
				       .world_size = 1,
				       .local_rank = -1,
				       .pid = 1,
				       .cupti_version = 130001,
				       .cuda_driver_version = 13000,
				       .cuda_runtime_version = 12080 };
	struct orr_native_writer *w;
	struct orr_place pl = { .pid = 1, .tid = 1, .device = -1, .kind = ORR_PLACE_THREAD };
	uint32_t name, place;
	struct orr_trace *t, *back;
	char *text;
	struct orr_diag d;

	assert_int_equal(orr_native_writer_open(native, &h, NULL, &w), 0);
	assert_int_equal(orr_native_writer_string(w,
						  "a\xff"
						  "b\xc3(\xed\xa0\x80z",
						  9, &name),
			 0);
	assert_int_equal(orr_native_writer_place(w, &pl, &place), 0);
	assert_int_equal(
		orr_native_writer_event(w, &(struct orr_event){ .start_ns = 5,
								.dur_ns = 2,
								.correlation = -1,
								.external_id = -1,
								.name = name,
								.place = place,
								.args = ORR_NONE,
								.coll = ORR_NONE,
								.kind = ORR_EVENT_ANNOTATION }),
		0);
	assert_int_equal(orr_native_writer_close(w, &(struct orr_native_counts){ .first_step = -1,
										 .last_step = -1 }),
			 0);
	t = import_ok(native);
	assert_int_equal(orr_trace_write_chrome(t, json, &d), 0);
	check_with_python(json, "--ranks 0");
	/* What Kineto has keys for, from the native header. */
	text = read_all(json);
	assert_non_null(strstr(text, "\"cupti_version\":130001,\n\"cuda_runtime_version\":12080,\n"
				     "\"cuda_driver_version\":13000,"));
	free(text);
	back = import_ok(json);
	assert_string_equal(orr_trace_str(back, orr_trace_get_rank(back, 0)->events[0].name),
			    "a\xef\xbf\xbd"
			    "b\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
	orr_trace_free(back);
	orr_trace_free(t);
	free(json);
	free(native);
}

/* ---- failures ---- */

static void test_chrome_write_fails_cleanly(void **state)
{
	struct orr_trace *t = import_text(every_field);
	char *missing = orr_xasprintf("%s/no-such-dir/x.json", (char *)*state);
	char *dir = orr_xasprintf("%s/a-dir", (char *)*state);
	struct orr_diag d;
	int r;

	r = orr_trace_write_chrome(t, missing, &d);
	assert_int_equal(r, -ENOENT);
	assert_string_equal(d.file, missing);
	/* A directory in the way: the temporary file is written, the rename fails. */
	assert_int_equal(mkdir(dir, 0777), 0);
	r = orr_trace_write_chrome(t, dir, &d);
	assert_true(r < 0);
	assert_string_equal(d.file, dir);
	assert_true(dir_is_empty(dir));
	assert_int_equal(rmdir(dir), 0);
	assert_true(dir_is_empty(*state));
	orr_trace_free(t);
	free(dir);
	free(missing);
}

/* "real": the round trip of the real traces alone (a test of its own: it is the long one). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chrome_every_field_round_trips, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_concrete_inputs_round_trip,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_strides_round_trip, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_empty_and_one_event, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_sample_round_trips, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_two_ranks_in_one_file, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_two_crafted_ranks_in_one_file,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_eight_crafted_ranks_in_one_file,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_chrome_declared_ranks_split),
		cmocka_unit_test(test_chrome_unsplittable_refused),
		cmocka_unit_test(test_chrome_declared_ranks_limits_per_rank),
		cmocka_unit_test(test_chrome_one_named_rank_is_one_rank),
		cmocka_unit_test_setup_teardown(test_chrome_invalid_utf8_is_replaced, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_write_fails_cleanly, tmpdir_setup,
						tmpdir_teardown),
	};
	const struct CMUnitTest real[] = {
		cmocka_unit_test_setup_teardown(test_chrome_real_traces_round_trip, tmpdir_setup,
						tmpdir_teardown),
	};

	if (argc > 1 && strcmp(argv[1], "real") == 0) {
		int failed = cmocka_run_group_tests(real, NULL, NULL);

		/* meson's "skipped" when the real traces are absent */
		return failed ? 1 : shared_kineto() ? 0 : 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
