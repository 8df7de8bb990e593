/* SPDX-License-Identifier: MIT */
/*
 * The native format: every shared Kineto trace and the project sample written and read
 * back field by field, the writer's edge cases, bad files (each error names what it
 * should) and atomic writes.  Bad files are made from good ones, or record by record
 * with protobuf-c and zstd here.
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
#include <zstd.h>

#include "orrery.pb-c.h"
#include "orrery/native.h"
#include "orrery/trace.h"
#include "model-compare.h"
#include "test-util.h"

/* ---- files ---- */

static char *read_whole(const char *path, size_t *ret_n)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t n = 0, cap = 0, k;

	assert_non_null(f);
	do {
		p = orr_xgrow(p, 1, &cap, n + 65536);
		k = fread(p + n, 1, cap - n, f);
		n += k;
	} while (k);
	fclose(f);
	*ret_n = n;
	return p;
}

static void write_whole(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static size_t count_entries(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, NULL);
	size_t k = 0;

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		k += strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0;
		free(names[i]);
	}
	free(names);
	return k;
}

/* Writes every rank of t into the new directory DIR and reads DIR back. */
static struct orr_trace *round_trip(const struct orr_trace *t, const char *dir)
{
	struct orr_trace *back = NULL;
	struct orr_diag d;

	assert_int_equal(mkdir(dir, 0755), 0);
	for (size_t i = 0; i < orr_trace_rank_count(t); i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		char *path = orr_xasprintf("%s/rank-%d.orr", dir, r->rank);

		if (orr_native_write_rank(path, t, r, "orrery test", &d))
			fail_msg("%s: %s", path, d.msg);
		free(path);
	}
	if (import_path(dir, NULL, &back, &d))
		fail_msg("%s: %s", dir, d.msg);
	assert_same_model(t, back, MODEL_CMP_NATIVE);
	for (size_t i = 0; i < orr_trace_rank_count(back); i++) {
		const struct orr_rank *y = orr_trace_get_rank(back, i);

		assert_string_equal(orr_trace_str(back, y->producer), "orrery test");
		assert_false(y->truncated);
	}
	return back;
}

/* ---- round trips ---- */

static void round_trip_shared(struct orr_trace *t, const char *name, void *tmpdir)
{
	char *flat = flat_name(name);
	char *out = orr_xasprintf("%s/%s.native", (char *)tmpdir, flat);

	orr_trace_free(round_trip(t, out));
	free(out);
	free(flat);
}

/* Every shared trace, of every format (ROCm, PyTorch 1.8, Nsight Systems included). */
static void test_native_round_trip_every_shared_trace(void **state)
{
	assert_true(for_each_shared_trace_in(round_trip_shared, *state, true) >= 17);
}

static void test_native_round_trip_sample(void **state)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *sample = orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
	char *out = orr_xasprintf("%s/tiny", (char *)*state);
	struct orr_trace *t = NULL, *back;
	struct orr_diag d;

	if (import_path(sample, NULL, &t, &d))
		fail_msg("%s: %s", sample, d.msg);
	assert_int_equal(orr_trace_rank_count(t), 2);
	back = round_trip(t, out);
	/* What the native reader adds: the source is the native file. */
	assert_non_null(strstr(orr_trace_str(back, orr_trace_get_rank(back, 1)->source),
			       "tiny/rank-1.orr"));
	orr_trace_free(back);
	orr_trace_free(t);
	free(out);
	free(sample);
}

/*
 * The inputs' strides, a list of tensors' members and their strides, read back as
 * written (assert_same_model() compares them); a frame without strides has none.
 */
static void test_native_round_trip_strides(void **state)
{
	static const char text[] =
		"[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cat\", \"pid\": 1,"
		" \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {"
		" \"Input Strides\": [[[6, 3, 1], [2, 1]], [], [1, 4096]],"
		" \"Input type\": [\"TensorList\", \"Scalar\", \"float\"],"
		" \"Input Dims\": [[[4, 2, 3], [5, 2]], [], [4096, 8]]}}]";
	char *in = orr_xasprintf("%s/strides.json", (char *)*state);
	char *out = orr_xasprintf("%s/strides", (char *)*state);
	struct orr_trace *t = NULL, *back;
	const struct orr_rank *r;
	struct orr_diag d;

	write_whole(in, text, sizeof(text) - 1);
	if (import_path(in, NULL, &t, &d))
		fail_msg("%s: %s", in, d.msg);
	back = round_trip(t, out);
	r = orr_trace_get_rank(back, 0);
	assert_int_equal(r->nstrides, 9);
	assert_int_equal(r->inputs[r->ops[0].first_input].nstrides, 7);
	assert_int_equal(r->strides[r->inputs[r->ops[0].first_input + 2].first_stride], 1);
	orr_trace_free(back);
	orr_trace_free(t);
	free(out);
	free(in);
}

/* ---- the writer ---- */

static const struct orr_native_header header0 = {
	.rank = 0,
	.world_size = 2,
	.local_rank = 0,
	.pid = 4242,
	.host = "node7",
	.producer = "orrery test",
	.clock_source = "CLOCK_REALTIME",
	.base_time_ns = 1000,
	.cupti_version = 24,
	.cuda_driver_version = 13000,
	.cuda_runtime_version = 12080,
};

static const struct orr_native_counts counts0 = {
	.dropped_records = 3, .dropped_events = 1, .first_step = 5, .last_step = 7
};

static struct orr_trace *import_one(const char *path, struct orr_diag *d, int *ret)
{
	struct orr_trace *t = NULL;

	*ret = orr_trace_import(path, NULL, &t, d);
	return t;
}

static void test_native_null_trace_has_no_events(void **state)
{
	char *path = orr_xasprintf("%s/empty.orr", (char *)*state);
	struct orr_native_writer *w;
	struct orr_trace *t;
	struct orr_diag d;
	int r;

	assert_int_equal(orr_native_writer_open(path, &header0, NULL, &w), 0);
	assert_int_equal(orr_native_writer_close(w, &counts0), 0);
	t = import_one(path, &d, &r);
	assert_int_equal(r, 0);
	assert_int_equal(orr_trace_rank_count(t), 1);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 0);
	assert_int_equal(orr_trace_get_rank(t, 0)->dropped_records, 3);
	assert_string_equal(orr_trace_str(t, orr_trace_get_rank(t, 0)->host), "node7");
	orr_trace_free(t);
	free(path);
}

/* One event with its place, name and copy row; the header's fields all come back. */
static void write_one(const char *path, const struct orr_native_header *h, const char *name,
		      size_t len)
{
	struct orr_native_writer *w;
	struct orr_native_device dev = { 0, "NVIDIA H100", 132, 9, 0, 80ll << 30 };
	struct orr_native_header hh = *h;
	struct orr_place p = { .pid = 0, .tid = 7, .device = 0, .kind = ORR_PLACE_STREAM };
	struct orr_copy_args c = { 4096 };
	struct orr_event e = { .start_ns = 5000,
			       .dur_ns = 20,
			       .correlation = 11,
			       .external_id = -1,
			       .kind = ORR_EVENT_MEMCPY,
			       .coll = ORR_NONE };

	hh.devices = &dev;
	hh.ndevices = 1;
	assert_int_equal(orr_native_writer_open(path, &hh, NULL, &w), 0);
	assert_int_equal(orr_native_writer_string(w, "stream 7", 8, &p.name), 0);
	assert_int_equal(orr_native_writer_place(w, &p, &e.place), 0);
	assert_int_equal(orr_native_writer_string(w, name, len, &e.name), 0);
	assert_int_equal(orr_native_writer_copy(w, &c, &e.args), 0);
	assert_int_equal(orr_native_writer_event(w, &e), 0);
	assert_int_equal(orr_native_writer_close(w, &counts0), 0);
}

static void test_native_one_event_keeps_every_field(void **state)
{
	char *path = orr_xasprintf("%s/one.orr", (char *)*state);
	const struct orr_rank *r;
	struct orr_trace *t;
	struct orr_diag d;
	int err;

	write_one(path, &header0, "Memcpy HtoD", 11);
	t = import_one(path, &d, &err);
	assert_int_equal(err, 0);
	r = orr_trace_get_rank(t, 0);
	assert_int_equal(r->rank, 0);
	assert_int_equal(r->world_size, 2);
	assert_int_equal(r->pid, 4242);
	assert_int_equal(r->cupti_version, 24);
	assert_int_equal(r->cuda_runtime_version, 12080);
	assert_string_equal(orr_trace_str(t, r->clock_source), "CLOCK_REALTIME");
	assert_int_equal(r->first_step, 5);
	assert_int_equal(r->last_step, 7);
	assert_int_equal(r->dropped_events, 1);
	assert_int_equal(r->ndevices, 1);
	assert_string_equal(orr_trace_str(t, r->devices[0].name), "NVIDIA H100");
	assert_int_equal(r->devices[0].total_mem_bytes, 80ll << 30);
	assert_int_equal(r->nevents, 1);
	assert_int_equal(r->events[0].start_ns, 5000);
	assert_int_equal(r->events[0].correlation, 11);
	assert_int_equal(r->events[0].external_id, -1);
	assert_string_equal(orr_trace_str(t, r->events[0].name), "Memcpy HtoD");
	assert_string_equal(orr_trace_str(t, r->places[0].name), "stream 7");
	assert_int_equal(r->copies[r->events[0].args].bytes, 4096);
	assert_int_equal(r->events[0].coll, ORR_NONE);
	orr_trace_free(t);
	free(path);
}

static void test_native_two_ranks_in_a_directory(void **state)
{
	char *a = orr_xasprintf("%s/x.orr", (char *)*state);
	char *b = orr_xasprintf("%s/worker-1.orr", (char *)*state);
	struct orr_native_header h1 = header0;
	struct orr_trace *t = NULL;
	struct orr_diag d;

	h1.rank = -1; /* from the file name */
	write_one(a, &header0, "a", 1);
	write_one(b, &h1, "b", 1);
	free(a);
	a = orr_xasprintf("%s/" ORR_NATIVE_MANIFEST, (char *)*state);
	write_whole(a, "{}", 2); /* skipped, not read as Kineto JSON */
	assert_int_equal(import_path(*state, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(orr_trace_get_rank(t, 0)->rank, 0);
	assert_int_equal(orr_trace_get_rank(t, 1)->rank, 1);
	assert_string_equal(orr_trace_str(t, orr_trace_get_rank(t, 1)->events[0].name), "b");
	orr_trace_free(t);
	free(a);
	free(b);
}

static void test_native_strings_empty_long_and_not_utf8(void **state)
{
	char *path = orr_xasprintf("%s/s.orr", (char *)*state);
	static const char bytes[] = "\xff\xfe kernel \xc3\x28";
	char *big = orr_xmalloc((1u << 20) + 1);
	struct orr_native_writer *w;
	struct orr_trace *t;
	struct orr_diag d;
	uint32_t id, id2;
	int err;

	memset(big, 'k', (1u << 20) + 1);
	assert_int_equal(orr_native_writer_open(path, &header0, NULL, &w), 0);
	assert_int_equal(orr_native_writer_string(w, "", 0, &id), 0);
	assert_int_equal(id, ORR_STR_NONE);
	assert_int_equal(orr_native_writer_string(w, big, (1u << 20) + 1, &id), -E2BIG);
	assert_int_equal(orr_native_writer_string(w, "a\0b", 3, &id), -EINVAL);
	assert_int_equal(orr_native_writer_string(w, big, 1u << 20, &id), 0);
	assert_int_equal(orr_native_writer_string(w, big, 1u << 20, &id2), 0);
	assert_int_equal(id, id2);
	assert_int_equal(orr_native_writer_close(w, &counts0), 0);
	write_one(path, &header0, bytes, sizeof(bytes) - 1);
	t = import_one(path, &d, &err);
	assert_int_equal(err, 0);
	assert_string_equal(orr_trace_str(t, orr_trace_get_rank(t, 0)->events[0].name), bytes);
	orr_trace_free(t);
	free(big);
	free(path);
}

static void test_native_writer_rejects_what_readers_would(void **state)
{
	char *path = orr_xasprintf("%s/r.orr", (char *)*state);
	struct orr_native_writer *w;
	struct orr_place p = { .kind = ORR_PLACE_THREAD, .device = -1 };
	struct orr_event e = { .kind = ORR_EVENT_OP, .args = ORR_NONE, .coll = ORR_NONE };
	uint32_t index;

	assert_int_equal(orr_native_writer_open(path, &header0, NULL, &w), 0);
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL); /* no place yet */
	assert_int_equal(orr_native_writer_place(w, &p, &index), 0);
	e.name = 5;
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL); /* no string 5 */
	e.name = 0;
	e.dur_ns = -1;
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL);
	e.dur_ns = 1;
	e.args = 0;
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL); /* no op row */
	e.args = ORR_NONE;
	e.kind = ORR_EVENT_KERNEL;
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL); /* a kernel on a thread */
	e.kind = ORR_EVENT_OP;
	e.sub = 1;
	assert_int_equal(orr_native_writer_event(w, &e), -EINVAL);
	e.sub = 0;
	assert_int_equal(orr_native_writer_event(w, &e), 0);
	orr_native_writer_abort(w);
	free(path);
}

/* Many small frames: 20000 events with every kind of row, read back the same. */
static void write_many(const char *path, size_t nevents, size_t frame_bytes)
{
	const struct orr_native_writer_options o = { .frame_bytes = frame_bytes };
	struct orr_native_writer *w;
	struct orr_place p = { .pid = 1, .tid = 2, .device = -1 };
	int64_t dims[2] = { 8, 1024 };
	struct orr_native_input in = { .dims = dims, .ndims = 2 };
	struct orr_collective c = { .in_nelems = 4, .group_size = 2, .src_rank = -1 };
	int32_t members[2] = { 0, 1 };
	uint32_t index, name;

	assert_int_equal(orr_native_writer_open(path, &header0, &o, &w), 0);
	assert_int_equal(orr_native_writer_place(w, &p, &index), 0);
	for (size_t i = 0; i < nevents; i++) {
		char s[32];
		struct orr_event e = { .start_ns = (int64_t)i * 10,
				       .dur_ns = 5,
				       .correlation = (int64_t)i,
				       .external_id = (int64_t)i / 2,
				       .kind = ORR_EVENT_OP,
				       .coll = ORR_NONE };

		snprintf(s, sizeof(s), "op%zu", i % 100);
		assert_int_equal(orr_native_writer_string(w, s, strlen(s), &name), 0);
		in.dtype = name;
		assert_int_equal(orr_native_writer_op(w, (int64_t)i, &in, 1, &e.args), 0);
		if (i % 7 == 0)
			assert_int_equal(orr_native_writer_collective(w, &c, members, 2, &e.coll),
					 0);
		e.name = name;
		assert_int_equal(orr_native_writer_event(w, &e), 0);
	}
	assert_int_equal(orr_native_writer_close(w, &counts0), 0);
}

static void test_native_many_frames_read_back(void **state)
{
	char *path = orr_xasprintf("%s/many.orr", (char *)*state);
	char *out = orr_xasprintf("%s/again", (char *)*state);
	const struct orr_rank *r;
	struct orr_trace *t;
	struct orr_diag d;
	int err;

	write_many(path, 20000, 4096);
	t = import_one(path, &d, &err);
	if (err)
		fail_msg("%s", d.msg);
	r = orr_trace_get_rank(t, 0);
	assert_int_equal(r->nevents, 20000);
	assert_int_equal(r->nops, 20000);
	assert_int_equal(r->ncollectives, 2858);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_op_args *op = &r->ops[r->events[i].args];

		assert_int_equal(r->events[i].start_ns, (int64_t)i * 10);
		assert_int_equal(op->sequence, (int64_t)i);
		assert_int_equal(r->dims[r->inputs[op->first_input].first_dim + 1], 1024);
		assert_int_equal(r->events[i].coll != ORR_NONE, i % 7 == 0);
	}
	orr_trace_free(round_trip(t, out));
	orr_trace_free(t);
	free(out);
	free(path);
}

/* ---- bad files ---- */

static int import_bytes(const void *p, size_t n, struct orr_diag *d,
			const struct orr_import_options *o, struct orr_trace **ret)
{
	*ret = NULL;
	return orr_trace_import_buffer("bad.orr", p, n, o, ret, d);
}

static void expect_error(const void *p, size_t n, int err, const char *msg)
{
	struct orr_trace *t;
	struct orr_diag d;

	assert_int_equal(import_bytes(p, n, &d, NULL, &t), err);
	assert_null(t);
	assert_string_equal(d.file, "bad.orr");
	if (!strstr(d.msg, msg))
		fail_msg("expected '%s' in '%s'", msg, d.msg);
}

static void test_native_wrong_magic_and_version(void **state)
{
	char *path = orr_xasprintf("%s/one.orr", (char *)*state);
	size_t n;
	char *p;

	write_one(path, &header0, "x", 1);
	p = read_whole(path, &n);
	assert_true(orr_native_detect(p, n));
	p[16] = 7;
	expect_error(p, n, ORR_EFORMAT,
		     "unsupported native format version 7 (this orrery reads 1)");
	p[16] = 1;
	p[13] = 'X';
	expect_error(p, n, ORR_EFORMAT, "expected the native preamble");
	free(p);
	free(path);
}

/* Offsets of the frames after the preamble; returns how many. */
static size_t frames(const char *p, size_t n, size_t *off, size_t max)
{
	size_t k = 0;

	for (size_t o = 20; o < n && k < max; k++) {
		size_t z = ZSTD_findFrameCompressedSize(p + o, n - o);

		assert_false(ZSTD_isError(z));
		off[k] = o;
		o += z;
	}
	return k;
}

static char last_warning[1024];

static void warn(void *data, const char *msg)
{
	(*(int *)data)++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

/* Cut at n: a warning naming the byte, the events of complete frames kept. */
static size_t expect_truncated(const char *p, size_t n, size_t at_byte)
{
	int warnings = 0;
	struct orr_import_options o = { .warn = warn, .warn_data = &warnings };
	char where[64];
	const struct orr_rank *r;
	struct orr_trace *t;
	struct orr_diag d;
	size_t kept;

	if (import_bytes(p, n, &d, &o, &t))
		fail_msg("%s", d.msg);
	assert_int_equal(warnings, 1);
	snprintf(where, sizeof(where), "truncated at byte %zu", at_byte);
	if (!strstr(last_warning, where) || !strstr(last_warning, "'bad.orr'"))
		fail_msg("expected '%s' in '%s'", where, last_warning);
	r = orr_trace_get_rank(t, 0);
	assert_true(r->truncated);
	for (size_t i = 0; i < r->nevents; i++)
		assert_int_equal(r->events[i].start_ns, (int64_t)i * 10);
	kept = r->nevents;
	orr_trace_free(t);
	return kept;
}

static void test_native_truncated_keeps_complete_frames(void **state)
{
	char *path = orr_xasprintf("%s/many.orr", (char *)*state);
	size_t off[512], nf, n, prev = 0;
	char *p;

	write_many(path, 20000, 4096);
	p = read_whole(path, &n);
	nf = frames(p, n, off, 512);
	assert_true(nf > 20);
	expect_error(p, 15, ORR_ETRUNCATED, "expected a 20-byte preamble");
	expect_error(p, 20, ORR_ETRUNCATED, "first frame");
	expect_error(p, off[0] + 9, ORR_ETRUNCATED, "first frame");
	expect_error(p, off[1] - 1, ORR_ETRUNCATED, "first frame");
	/* Inside frames 2, 5 and the last: more events kept each time, never all. */
	for (size_t i = 0; i < 3; i++) {
		size_t k = i == 0 ? 1 : i == 1 ? 4 : nf - 1;
		size_t end = k + 1 < nf ? off[k + 1] : n;
		size_t kept = expect_truncated(p, (off[k] + end) / 2, off[k]);

		assert_true(kept > prev && kept < 20000);
		prev = kept;
	}
	/* Every frame whole but the trailer's lost: no trailer. */
	assert_int_equal(expect_truncated(p, off[nf - 1], off[nf - 1]), prev);
	assert_non_null(strstr(last_warning, "no trailer"));
	free(p);
	free(path);
}

static void test_native_corrupt_frame_is_an_error(void **state)
{
	char *path = orr_xasprintf("%s/many.orr", (char *)*state);
	size_t off[512], n;
	struct orr_trace *t;
	struct orr_diag d;
	char *p;

	write_many(path, 20000, 4096);
	p = read_whole(path, &n);
	assert_true(frames(p, n, off, 512) > 4);
	/* A whole frame again after the trailer. */
	p = orr_xrealloc(p, n + off[1] - off[0]);
	memcpy(p + n, p + off[0], off[1] - off[0]);
	assert_int_equal(import_bytes(p, n + off[1] - off[0], &d, NULL, &t), ORR_EMALFORMED);
	assert_int_equal(d.offset, (int64_t)n);
	assert_non_null(strstr(d.msg, "expected the end of the file after the trailer"));
	p[(off[3] + off[4]) / 2] ^= 0x5a;
	assert_int_equal(import_bytes(p, n, &d, NULL, &t), ORR_EMALFORMED);
	assert_int_equal(d.offset, (int64_t)off[3]);
	assert_non_null(strstr(d.msg, "does not decompress"));
	/* Garbage where a frame should start. */
	memset(p + off[2], 0x42, 8);
	assert_int_equal(import_bytes(p, n, &d, NULL, &t), ORR_EMALFORMED);
	assert_int_equal(d.offset, (int64_t)off[2]);
	assert_non_null(strstr(d.msg, "expected a zstd frame"));
	free(p);
	free(path);
}

/* ---- files made record by record ---- */

struct raw {
	uint8_t buf[1 << 16];
	size_t n;
};

static void put(struct raw *r, const Orrery__Native__Record *rec)
{
	size_t len = orrery__native__record__get_packed_size(rec);

	assert_true(len < 128 && r->n + len + 1 < sizeof(r->buf));
	r->buf[r->n++] = (uint8_t)len;
	r->n += orrery__native__record__pack(rec, r->buf + r->n);
}

/* The preamble and raw as one frame. */
static char *frame_file(const struct raw *r, size_t *ret_n)
{
	size_t cap = 20 + ZSTD_compressBound(r->n);
	char *p = orr_xmalloc(cap);
	size_t z;

	memcpy(p, "\x5e\x2a\x4d\x18\x0c\0\0\0ORRERY\0\0\x01\0\0\0", 20);
	z = ZSTD_compress(p + 20, cap - 20, r->buf, r->n, 3);
	assert_false(ZSTD_isError(z));
	*ret_n = 20 + z;
	return p;
}

static void put_header(struct raw *r)
{
	Orrery__Native__Header h = ORRERY__NATIVE__HEADER__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;

	h.format_version = 1;
	h.rank = 0;
	h.world_size = h.local_rank = -1;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_HEADER;
	rec.header = &h;
	put(r, &rec);
}

/* One place (a stream when `stream`), a kernel on place `place`, a trailer counting `count`. */
static char *file_with_event(bool stream, uint32_t place, uint64_t count, size_t *ret_n)
{
	Orrery__Native__Places pl = ORRERY__NATIVE__PLACES__INIT;
	Orrery__Native__Events ev = ORRERY__NATIVE__EVENTS__INIT;
	Orrery__Native__Trailer tr = ORRERY__NATIVE__TRAILER__INIT;
	Orrery__Native__Record rec = ORRERY__NATIVE__RECORD__INIT;
	int64_t zero64 = 0, one = 1;
	uint32_t zero = 0, bits = ORR_EVENT_KERNEL, kind = stream;
	int32_t minus1 = -1;
	static struct raw r;

	r.n = 0;
	put_header(&r);
	pl.n_pid = pl.n_tid = pl.n_name = pl.n_device = pl.n_kind = 1;
	pl.pid = pl.tid = &zero64, pl.name = &zero, pl.kind = &kind, pl.device = &minus1;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_PLACES;
	rec.places = &pl;
	put(&r, &rec);
	ev.n_start = ev.n_dur = ev.n_correlation = ev.n_external_id = ev.n_name = ev.n_place =
		ev.n_args = ev.n_coll = ev.n_bits = 1;
	ev.start = ev.dur = &one, ev.correlation = ev.external_id = &zero64;
	ev.name = ev.args = ev.coll = &zero, ev.place = &place, ev.bits = &bits;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_EVENTS;
	rec.events = &ev;
	put(&r, &rec);
	tr.events = count;
	rec.body_case = ORRERY__NATIVE__RECORD__BODY_TRAILER;
	rec.trailer = &tr;
	put(&r, &rec);
	return frame_file(&r, ret_n);
}

static void test_native_bad_records(void **state)
{
	struct orr_trace *t;
	struct orr_diag d;
	struct raw r = { .n = 0 };
	size_t n;
	char *p;

	p = file_with_event(true, 0, 1, &n);
	if (import_bytes(p, n, &d, NULL, &t))
		fail_msg("%s", d.msg);
	assert_int_equal(orr_trace_get_rank(t, 0)->nevents, 1);
	orr_trace_free(t);
	free(p);
	p = file_with_event(true, 1, 1, &n);
	expect_error(p, n, ORR_EMALFORMED, "record 2 of the frame: expected the place");
	assert_int_equal(import_bytes(p, n, &d, NULL, &t), ORR_EMALFORMED);
	assert_int_equal(d.event, 0);
	assert_int_equal(d.offset, 20);
	free(p);
	p = file_with_event(true, 0, 2, &n);
	expect_error(p, n, ORR_EMALFORMED, "the trailer counts 2 events, the file holds 1");
	free(p);
	p = file_with_event(false, 0, 1, &n);
	expect_error(p, n, ORR_EMALFORMED, "expected a GPU task or record on a stream");
	free(p);
	/* A record longer than its frame, and one that is not a protobuf message. */
	put_header(&r);
	r.buf[r.n++] = 0xff, r.buf[r.n++] = 0xff, r.buf[r.n++] = 0x7f;
	p = frame_file(&r, &n);
	expect_error(p, n, ORR_EMALFORMED, "a record of 2097151 bytes where the frame has 0 left");
	free(p);
	r.n -= 3;
	memcpy(r.buf + r.n, "\x03\xff\xff\xff", 4);
	r.n += 4;
	p = frame_file(&r, &n);
	expect_error(p, n, ORR_EMALFORMED, "expected a protobuf Record");
	free(p);
	/* No header first. */
	r.n = 0;
	memcpy(r.buf, "\x02\x12\x00", 3);
	r.n = 3;
	p = frame_file(&r, &n);
	expect_error(p, n, ORR_EMALFORMED, "expected the header as the first record");
	free(p);
}

static void test_native_huge_sizes_are_refused(void **state)
{
	/* A frame header that declares 1 GiB, then one empty raw block. */
	static const char huge[] = "\x5e\x2a\x4d\x18\x0c\0\0\0ORRERY\0\0\x01\0\0\0"
				   "\x28\xb5\x2f\xfd\xe0\0\0\0\x40\0\0\0\0\x01\0\0";
	char *path = orr_xasprintf("%s/many.orr", (char *)*state);
	struct orr_import_options o = { 0 };
	char limit[64];
	struct orr_trace *t;
	struct orr_diag d;
	size_t n;
	char *p;

	expect_error(huge, sizeof(huge) - 1, ORR_ETOOBIG, "a frame of 1073741824 bytes");
	/* A file within the limit that decompresses past it. */
	write_many(path, 20000, 4096);
	p = read_whole(path, &n);
	o.max_bytes = n;
	assert_int_equal(import_bytes(p, n, &d, &o, &t), ORR_ETOOBIG);
	snprintf(limit, sizeof(limit), "more than %zu bytes once decompressed", n);
	assert_non_null(strstr(d.msg, limit));
	assert_non_null(strstr(d.msg, "ORR_MAX_FILE_BYTES"));
	free(p);
	free(path);
}

/* ---- atomic writes ---- */

static void test_native_abort_leaves_nothing(void **state)
{
	char *dir = orr_xasprintf("%s/atomic", (char *)*state);
	char *path = orr_xasprintf("%s/x.orr", dir);
	char *missing = orr_xasprintf("%s/no/such/dir/x.orr", (char *)*state);
	struct orr_native_writer *w;
	struct orr_place p = { .kind = ORR_PLACE_THREAD, .device = -1 };
	uint32_t index;

	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(orr_native_writer_open(path, &header0, NULL, &w), 0);
	assert_int_equal(count_entries(dir), 1); /* the temporary file only, a dot name */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(orr_native_writer_place(w, &p, &index), 0);
	assert_int_equal(orr_native_writer_flush(w), 0);
	orr_native_writer_abort(w);
	assert_int_equal(count_entries(dir), 0);
	orr_native_writer_abort(NULL);
	assert_int_equal(orr_native_writer_open(missing, &header0, NULL, &w), -ENOENT);
	write_one(path, &header0, "x", 1);
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(access(path, F_OK), 0);
	free(missing);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tmpdir_setup, tmpdir_teardown)
		T(test_native_round_trip_every_shared_trace),
		T(test_native_round_trip_sample),
		T(test_native_round_trip_strides),
		T(test_native_null_trace_has_no_events),
		T(test_native_one_event_keeps_every_field),
		T(test_native_two_ranks_in_a_directory),
		T(test_native_strings_empty_long_and_not_utf8),
		T(test_native_writer_rejects_what_readers_would),
		T(test_native_many_frames_read_back),
		T(test_native_wrong_magic_and_version),
		T(test_native_truncated_keeps_complete_frames),
		T(test_native_corrupt_frame_is_an_error),
		T(test_native_bad_records),
		T(test_native_huge_sizes_are_refused),
		T(test_native_abort_leaves_nothing),
#undef T
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	/* meson's "skipped" when the shared traces are absent */
	return failed ? 1 : shared_kineto() ? 0 : 77;
}
