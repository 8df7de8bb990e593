/* SPDX-License-Identifier: MIT */
/*
 * Importing a plain JSON file while it is parsed (traces/import-read.c): a buffer of a
 * few parser windows however large the file, the same events, offsets and messages as
 * from memory, and an execution trace beside its trace still linked.  The rest of
 * importing is in test-traces-import.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orrery/trace.h"
#include "../../traces/internal.h"
#include "test-util.h"

/*
 * A Kineto document of about target bytes: events whose strings hold "}, {" every third
 * (cut by the scanner), after a top-level string of head bytes, with a run of gap spaces
 * after the middle event, and devices after the events.  Its events are counted in *ret_n.
 */
static char *big_doc(size_t target, size_t head, size_t gap, size_t *ret_len, size_t *ret_n)
{
	size_t cap = target + head + gap + 4096, len = 0, n = 0;
	char *buf = orr_xmalloc(cap);

	len += (size_t)snprintf(buf, cap, "{\"schemaVersion\": 1, ");
	if (head) {
		len += (size_t)snprintf(buf + len, cap - len, "\"meta\": \"");
		memset(buf + len, 'x', head);
		len += head;
		len += (size_t)snprintf(buf + len, cap - len, "\", ");
	}
	len += (size_t)snprintf(buf + len, cap - len, "\"traceEvents\": [\n");
	while (len < target) {
		if (n % 3)
			len += (size_t)snprintf(
				buf + len, cap - len,
				"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%zu\","
				" \"pid\": 0, \"tid\": 7, \"ts\": %zu, \"dur\": 1,"
				" \"args\": {\"correlation\": %zu}}, ",
				n, n, n);
		else
			len += (size_t)snprintf(
				buf + len, cap - len,
				"{\"args\": {\"extra\": [{\"a\": 1}, {\"b\": \"}, {\"}],"
				" \"correlation\": %zu}, \"name\": \"void k<}, {%zu>\","
				" \"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0,"
				" \"tid\": 7, \"ts\": %zu, \"dur\": 1}, ",
				n, n, n);
		n++;
		if (gap && len >= target / 2) {
			memset(buf + len, ' ', gap);
			len += gap;
			gap = 0;
		}
	}
	len -= 2; /* the last ", " */
	len += (size_t)snprintf(buf + len, cap - len,
				"\n], \"deviceProperties\": [{\"id\": 0, \"name\": \"A\"}]}\n");
	assert_true(len < cap);
	*ret_len = len;
	*ret_n = n;
	return buf;
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The file at path imports as the same bytes from memory do, event for event. */
static void same_as_buffer(const char *path, const char *data, size_t len, size_t n)
{
	struct orr_trace *a = NULL, *b = NULL;
	const struct orr_rank *ra, *rb;
	struct orr_diag d;

	if (orr_trace_import(path, NULL, &a, &d))
		fail_msg("%s at %lld", d.msg, (long long)d.offset);
	if (orr_trace_import_buffer("big.json", data, len, NULL, &b, &d))
		fail_msg("%s at %lld", d.msg, (long long)d.offset);
	ra = orr_trace_get_rank(a, 0);
	rb = orr_trace_get_rank(b, 0);
	assert_int_equal(ra->nevents, n);
	assert_int_equal(rb->nevents, n);
	assert_int_equal(ra->ndevices, 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ra->events[i].start_ns, rb->events[i].start_ns);
		assert_int_equal(ra->events[i].correlation, rb->events[i].correlation);
		assert_string_equal(orr_trace_str(a, ra->events[i].name),
				    orr_trace_str(b, rb->events[i].name));
	}
	orr_trace_free(a);
	orr_trace_free(b);
}

/*
 * A plain file much larger than a window is read while it is parsed: a buffer of a few
 * windows, not the whole file (whose pages were faulted, zeroed and held), with the same
 * events as from memory.
 */
static void test_streamed_file_holds_a_few_windows(void **state)
{
	char *path = orr_xasprintf("%s/big.json", (const char *)*state);
	struct orr_trace *t = NULL;
	struct orr_diag d;
	size_t len, n;
	char *data = big_doc(48u << 20, 0, 0, &len, &n);

	write_bytes(path, data, len);
	same_as_buffer(path, data, len, n);
	assert_int_equal(orr_trace_import(path, NULL, &t, &d), 0);
	orr_trace_free(t);
	/* about four windows: more than one, far less than the file */
	assert_true(orr__import_last_json_bytes() > ORR__WINDOW_BYTES);
	assert_true(orr__import_last_json_bytes() < 8 * ORR__WINDOW_BYTES);
	assert_true(orr__import_last_json_bytes() < len / 4);
	free(data);
	free(path);
}

/* A run of spaces between two events longer than a window. */
static void test_streamed_file_with_spaces_longer_than_a_window(void **state)
{
	char *path = orr_xasprintf("%s/big.json", (const char *)*state);
	size_t len, n;
	char *data = big_doc(30u << 20, 0, 12u << 20, &len, &n);

	write_bytes(path, data, len);
	same_as_buffer(path, data, len, n);
	free(data);
	free(path);
}

/* A top-level value past the first piece read, before the events: the rest is read. */
static void test_streamed_file_with_a_long_value_first(void **state)
{
	char *path = orr_xasprintf("%s/big.json", (const char *)*state);
	size_t len, n;
	char *data = big_doc(12u << 20, 300u << 10, 0, &len, &n);

	write_bytes(path, data, len);
	same_as_buffer(path, data, len, n);
	free(data);
	free(path);
}

/* Errors in a file read while it is parsed: the offsets and messages of the same bytes. */
static void same_error_as_buffer(const char *path, const char *data, size_t len)
{
	struct orr_trace *t = NULL;
	struct orr_diag d, e;
	int r;

	write_bytes(path, data, len);
	r = orr_trace_import(path, NULL, &t, &d);
	assert_true(r < 0);
	assert_int_equal(orr_trace_import_buffer(path, data, len, NULL, &t, &e), r);
	assert_int_equal(d.offset, e.offset);
	assert_string_equal(d.msg, e.msg);
	assert_true(d.offset > (30 << 20));
}

static void test_streamed_file_errors_as_the_buffer(void **state)
{
	char *path = orr_xasprintf("%s/bad.json", (const char *)*state);
	size_t len, n;
	char *data = big_doc(40u << 20, 0, 0, &len, &n);
	char *bad = strstr(data + (30u << 20), "\"ts\": ");

	/* cut short in the middle of an event */
	same_error_as_buffer(path, data, 35u << 20);
	/* a time that is no number */
	assert_non_null(bad);
	bad[6] = 'x';
	same_error_as_buffer(path, data, len);
	free(data);
	free(path);
}

/*
 * An execution trace beside its profiler trace, both plain files larger than the first
 * piece read: the one is read while it is parsed, the other found to be no Kineto trace
 * and read whole as an execution trace, then linked.
 */
static void test_streamed_files_et_beside_the_trace(void **state)
{
	const char *dir = *state, *src = shared_kineto();
	struct orr_trace *t = NULL;
	struct orr_diag d;
	const struct orr_et *et;
	char *cmd;

	if (!src)
		import_shared(NULL); /* skips */
	cmd = orr_xasprintf(
		"gzip -dc '%s/param-linear.json.gz' > '%s/param-linear.json' && "
		"gzip -dc '%s/../et/param-linear-et.json.gz' > '%s/param-linear-et.json'",
		src, dir, src, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	if (import_path(dir, NULL, &t, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(orr_trace_rank_count(t), 1);
	et = orr_trace_get_rank(t, 0)->et;
	assert_non_null(et);
	assert_int_equal(et->nnodes, 931);
	assert_int_equal(et->linked, 928);
	orr_trace_free(t);
}

/*
 * A document of about target bytes whose events hold no '}' in them but their own end
 * (kernels on two streams, ops with shapes on two threads, each fourth a collective with
 * members), so that the first "}, {" past the middle ends an event.
 */
static char *plain_doc(size_t target, size_t *ret_len)
{
	size_t cap = target + 4096, len = 0, n = 0;
	char *buf = orr_xmalloc(cap);

	len += (size_t)snprintf(buf, cap, "{\"traceEvents\": [\n");
	while (len < target) {
		if (n % 2)
			len += (size_t)snprintf(
				buf + len, cap - len,
				"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%zu\","
				" \"pid\": 0, \"tid\": %zu, \"ts\": %zu, \"dur\": 3,"
				" \"args\": {\"correlation\": %zu, \"grid\": [%zu, 1, 1]%s}},\n",
				n % 97, 7 + n % 3, n, n, n % 5 + 1,
				n % 4 == 1 ? ", \"Collective name\": \"allreduce\", "
					     "\"Process Group Ranks\": [0, 1]"
					   : "");
		else
			len += (size_t)snprintf(
				buf + len, cap - len,
				"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%zu\","
				" \"pid\": 1, \"tid\": %zu, \"ts\": %zu, \"dur\": 2,"
				" \"args\": {\"Input Dims\": [[%zu, 4], []],"
				" \"Input type\": [\"float\", \"t%zu\"]}},\n",
				n % 89, 1 + n % 2, n, n % 7, n % 11);
		n++;
	}
	len -= 2; /* the last ",\n" */
	len += (size_t)snprintf(buf + len, cap - len, "\n]}\n");
	assert_true(len < cap);
	*ret_len = len;
	return buf;
}

/* Rank 0 of a and b hold the same rows, strings compared as strings. */
static void same_ranks(const struct orr_trace *a, const struct orr_trace *b)
{
	const struct orr_rank *x = orr_trace_get_rank(a, 0), *y = orr_trace_get_rank(b, 0);

	assert_int_equal(x->nevents, y->nevents);
	assert_int_equal(x->nplaces, y->nplaces);
	assert_int_equal(x->nops, y->nops);
	assert_int_equal(x->ninputs, y->ninputs);
	assert_int_equal(x->ndims, y->ndims);
	assert_int_equal(x->nkernels, y->nkernels);
	assert_int_equal(x->ncollectives, y->ncollectives);
	assert_int_equal(x->nmembers, y->nmembers);
	for (size_t i = 0; i < x->nevents; i++) {
		const struct orr_event *e = &x->events[i], *f = &y->events[i];

		assert_int_equal(e->start_ns, f->start_ns);
		assert_int_equal(e->place, f->place);
		assert_int_equal(e->args, f->args);
		assert_int_equal(e->coll, f->coll);
		assert_int_equal(e->name, f->name);
		assert_string_equal(orr_trace_str(a, e->name), orr_trace_str(b, f->name));
	}
	for (size_t i = 0; i < x->nplaces; i++) {
		assert_int_equal(x->places[i].pid, y->places[i].pid);
		assert_int_equal(x->places[i].tid, y->places[i].tid);
	}
	for (size_t i = 0; i < x->nops; i++)
		assert_int_equal(x->ops[i].first_input, y->ops[i].first_input);
	for (size_t i = 0; i < x->ninputs; i++) {
		assert_int_equal(x->inputs[i].first_dim, y->inputs[i].first_dim);
		assert_string_equal(orr_trace_str(a, x->inputs[i].dtype),
				    orr_trace_str(b, y->inputs[i].dtype));
	}
	assert_memory_equal(x->dims, y->dims, x->ndims * sizeof(*x->dims));
	assert_memory_equal(x->kernels, y->kernels, x->nkernels * sizeof(*x->kernels));
	for (size_t i = 0; i < x->ncollectives; i++)
		assert_int_equal(x->collectives[i].first_member, y->collectives[i].first_member);
	assert_memory_equal(x->members, y->members, x->nmembers * sizeof(*x->members));
}

static struct orr_trace *import_with_threads(const char *path, const char *threads)
{
	struct orr_trace *t = NULL;
	struct orr_diag d;

	setenv("ORR_IMPORT_THREADS", threads, 1);
	if (orr_trace_import(path, NULL, &t, &d))
		fail_msg("%s at %lld", d.msg, (long long)d.offset);
	unsetenv("ORR_IMPORT_THREADS");
	return t;
}

/*
 * A file of 20 MiB is read by two threads: the pieces the second read, guessed right,
 * are taken and appended; every row, string id and index is the one thread's.
 */
static void test_two_threads_same_as_one(void **state)
{
	char *path = orr_xasprintf("%s/two.json", (const char *)*state);
	struct orr_trace *one, *two;
	size_t len, split;
	char *data = plain_doc(20u << 20, &len);

	write_bytes(path, data, len);
	one = import_with_threads(path, "1");
	assert_int_equal(orr__kineto_last_split(), 0);
	two = import_with_threads(path, "2");
	split = orr__kineto_last_split();
	assert_true(split > 0 && split < len);
	assert_int_equal(data[split], '{');
	same_ranks(one, two);
	orr_trace_free(one);
	orr_trace_free(two);
	free(data);
	free(path);
}

/*
 * Where the first "}, {" past the middle is inside an event (an array in its args), the
 * second thread's half is dropped and the first reads on: the same rows.
 */
static void test_two_threads_wrong_guess_dropped(void **state)
{
	char *path = orr_xasprintf("%s/nested.json", (const char *)*state);
	struct orr_trace *one, *two;
	size_t len, n;
	char *data = big_doc(20u << 20, 0, 0, &len, &n);

	write_bytes(path, data, len);
	one = import_with_threads(path, "1");
	two = import_with_threads(path, "2");
	assert_int_equal(orr_trace_get_rank(two, 0)->nevents, n);
	same_ranks(one, two);
	orr_trace_free(one);
	orr_trace_free(two);
	free(data);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_streamed_file_holds_a_few_windows,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_streamed_file_with_spaces_longer_than_a_window,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_streamed_file_with_a_long_value_first,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_streamed_file_errors_as_the_buffer,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_streamed_files_et_beside_the_trace,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_two_threads_same_as_one, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_two_threads_wrong_guess_dropped, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
