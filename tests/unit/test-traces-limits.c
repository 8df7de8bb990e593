/* SPDX-License-Identifier: MIT */
/*
 * What the importer refuses (docs/limits.md, DESIGN.md "Bad input"): each limit at its
 * edge (just under passes, just over fails naming its variable), special files, files
 * that are no trace from their first bytes, bombs, and what it accepts that it used to
 * refuse (a UTF-8 byte order mark, macOS ._ members in archives).
 */
#include <errno.h>
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
#include "test-util.h"
#include "../../traces/internal.h"

/* Two threads, three events, names of 13 bytes at most, nested 3 deep (args' array). */
static const char trace[] =
	"{\"traceEvents\": [\n"
	" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::matmul\", \"pid\": 1, \"tid\": 1,"
	"  \"ts\": 0, \"dur\": 5, \"args\": {\"Input Dims\": [[2, 3]]}},\n"
	" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 2,"
	"  \"ts\": 1, \"dur\": 5},\n"
	" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::sigmoid\", \"pid\": 1, \"tid\": 1,"
	"  \"ts\": 6, \"dur\": 1}]}\n";

static const char deep[] = "{\"distributedInfo\": {\"x\": [[1]]}, \"traceEvents\": []}";

static char *write_file(const char *dir, const char *name, const void *data, size_t n)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void run_in(const char *dir, const char *cmd)
{
	char *line = orr_xasprintf("cd '%s' && %s", dir, cmd);

	if (system(line) != 0)
		fail_msg("'%s' failed", line);
	free(line);
}

/* Imports path with the variable var set to value (NULL: unset); the diag in *d. */
static int import_with(const char *path, const char *var, const char *value, struct orr_diag *d)
{
	struct orr_trace *t = NULL;
	int r;

	if (var)
		assert_int_equal(setenv(var, value, 1), 0);
	r = orr_trace_import(path, NULL, &t, d);
	if (var)
		unsetenv(var);
	orr_trace_free(t);
	return r;
}

/* value passes, value - 1 fails with ORR_ETOOBIG and a message naming var. */
static void check_edge(const char *path, const char *var, uint64_t value)
{
	char buf[32];
	struct orr_diag d;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)value);
	if (import_with(path, var, buf, &d) != 0)
		fail_msg("%s=%s: %s", var, buf, d.msg);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)value - 1);
	assert_int_equal(import_with(path, var, buf, &d), ORR_ETOOBIG);
	if (!strstr(d.msg, var) || !strstr(d.msg, "more than"))
		fail_msg("%s=%s: '%s'", var, buf, d.msg);
	assert_non_null(strstr(d.file, path));
}

static void test_limits_each_at_its_edge(void **state)
{
	const char *dir = *state;
	size_t n = strlen(trace);
	char *one = write_file(dir, "one.json", trace, n);
	char *run = orr_xasprintf("%s/run", dir), *gz;

	check_edge(one, "ORR_MAX_FILE_BYTES", n);
	check_edge(one, "ORR_MAX_EVENTS", 3);
	check_edge(one, "ORR_MAX_PLACES", 2);
	check_edge(one, "ORR_MAX_STRING_BYTES", 13);
	/* Nesting, in a value the scanner walks (docs/limits.md): 3 deep. */
	free(write_file(dir, "deep.json", deep, strlen(deep)));
	free(one);
	one = orr_xasprintf("%s/deep.json", dir);
	check_edge(one, "ORR_MAX_DEPTH", 3);
	/* Compressed: the decompressed size counts. */
	run_in(dir, "gzip -k one.json");
	gz = orr_xasprintf("%s/one.json.gz", dir);
	check_edge(gz, "ORR_MAX_FILE_BYTES", n);
	/* Two ranks of the same size: the run's bytes and its ranks. */
	assert_int_equal(mkdir(run, 0755), 0);
	free(write_file(run, "rank0.json", trace, n));
	free(write_file(run, "rank1.json", trace, n));
	check_edge(run, "ORR_MAX_RUN_BYTES", 2 * n);
	check_edge(run, "ORR_MAX_RANKS", 2);
	free(gz);
	free(run);
	free(one);
}

/* n arrays, one in the other. */
static char *nested(size_t n)
{
	char *s = orr_xmalloc(2 * n + 1);

	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = 0;
	return s;
}

/*
 * The document `doc` with its @ replaced by `n` + `extra` nested arrays, written to
 * DIR/NAME; its import with ORR_MAX_DEPTH=limit (NULL: the default).
 */
static int import_nested(const char *dir, const char *name, const char *doc, size_t extra, size_t n,
			 const char *limit, struct orr_diag *d)
{
	const char *at = strchr(doc, '@');
	char *value = nested(n + extra);
	char *text = orr_xasprintf("%.*s%s%s", (int)(at - doc), doc, value, at + 1);
	char *path = write_file(dir, name, text, strlen(text));
	int r = import_with(path, limit ? "ORR_MAX_DEPTH" : NULL, limit, d);

	free(path);
	free(text);
	free(value);
	return r;
}

/*
 * ORR_MAX_DEPTH holds wherever the nesting is (docs/limits.md): each top-level value and
 * each event, itself the first level, nest at most that deep, whether the scanner walks
 * the value or simdjson reads or skips it in place.  Each case reaches the limit exactly
 * (accepted), then goes one level past it (refused, naming the variable).
 */
static void test_limits_depth_on_every_path(void **state)
{
	/* Each @ is a value: (document, levels above the value). */
	static const struct {
		const char *doc;
		size_t above;
	} cases[] = {
		/* a top-level value other than the events */
		{ "{\"traceEvents\": [], \"other\": @}", 0 },
		/* a field of an event nobody reads */
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
		  "\"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1, \"x\": @}]}",
		  1 },
		/* a kernel's name that is no string */
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": @, "
		  "\"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1}]}",
		  1 },
		/* an arg nobody reads, args read in place (after ph and cat) */
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
		  "\"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1, \"args\": {\"x\": @}}]}",
		  2 },
		/* the same, args before ph and cat (walked by the scanner, read later) */
		{ "{\"traceEvents\": [{\"args\": {\"grid\": @}, \"ph\": \"X\", \"cat\": "
		  "\"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1}]}",
		  2 },
		/* an element of an op's Input Dims and of one of its dims */
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
		  "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1, \"args\": {\"Input Dims\": "
		  "[@]}}]}",
		  3 },
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
		  "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1, \"args\": {\"Input Dims\": "
		  "[[2, @]]}}]}",
		  4 },
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
		  "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1, \"args\": {\"Input type\": "
		  "[@]}}]}",
		  3 },
		/* a member of a list in Input Strides, past a value that is not an integer */
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
		  "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1, \"args\": {\"Input Strides\": "
		  "[[[1.5, @]]]}}]}",
		  5 },
		{ "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
		  "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1, \"args\": {\"Input Dims\": "
		  "[[[\"x\", @]]]}}]}",
		  5 },
		/* a metadata record's rank of another writer */
		{ "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, "
		  "\"args\": {\"name\": \"p\", \"rank\": @}}]}",
		  2 },
		/* an event that is all depth, in the JSON Array Format */
		{ "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
		  "\"tid\": 7, \"ts\": 0, \"dur\": 1, \"args\": {\"x\": {\"y\": @}}}]",
		  3 },
	};
	const char *dir = *state;
	struct orr_diag d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t limit = 6; limit <= 8; limit++) {
			char buf[16];
			size_t room = limit - cases[i].above;

			snprintf(buf, sizeof(buf), "%zu", limit);
			if (import_nested(dir, "d.json", cases[i].doc, 0, room, buf, &d))
				fail_msg("case %zu, limit %zu: %s", i, limit, d.msg);
			assert_int_equal(import_nested(dir, "d.json", cases[i].doc, 1, room, buf,
						       &d),
					 ORR_ETOOBIG);
			if (!strstr(d.msg, "ORR_MAX_DEPTH") || !strstr(d.msg, "levels"))
				fail_msg("case %zu: '%s'", i, d.msg);
		}
		/* At the default, 1,024 levels: 100,000 nested arrays are refused at once. */
		assert_int_equal(import_nested(dir, "d.json", cases[i].doc, 0, 100000, NULL, &d),
				 ORR_ETOOBIG);
		assert_non_null(strstr(d.msg, "more than 1024 levels"));
	}
}

/* A communicator of 4 members in the metadata, a collective of 3 in its event's args. */
static const char members[] =
	"{\"distributedInfo\": {\"rank\": 0, \"world_size\": 4, \"pg_config\": "
	"[{\"pg_name\": \"0\", \"ranks\": [0, 1, 2, 3]}]},\n"
	" \"traceEvents\": [\n"
	" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel\", \"pid\": 0, \"tid\": 7,"
	"  \"ts\": 0, \"dur\": 5, \"args\": {\"Collective name\": \"allreduce\","
	"  \"Process Group Ranks\": [0, 1, 2]}}]}\n";

/*
 * Dimensions, strides, inputs and communicator members are indexed by 32 bits:
 * ORR_MAX_VALUES bounds each of a rank's tables, and cannot be set past 2^32 - 2, so
 * that none wraps however large ORR_MAX_FILE_BYTES lets a file be.
 */
static void test_limits_values_indexed_by_32_bits(void **state)
{
	const char *dir = *state;
	char *one = write_file(dir, "one.json", trace, strlen(trace));
	char *comm = write_file(dir, "members.json", members, strlen(members));
	struct orr_diag d;

	check_edge(one, "ORR_MAX_VALUES", 2);  /* [[2, 3]]: 2 dimensions */
	check_edge(comm, "ORR_MAX_VALUES", 7); /* the metadata's 4, then the event's 3 */
	assert_int_equal(import_with(comm, "ORR_MAX_VALUES", "4", &d), ORR_ETOOBIG);
	assert_int_equal(d.event, 0); /* the collective's event */
	assert_int_equal(import_with(comm, "ORR_MAX_VALUES", "3", &d), ORR_ETOOBIG);
	assert_int_equal(import_with(one, "ORR_MAX_VALUES", "4294967294", &d), 0);
	assert_int_equal(import_with(one, "ORR_MAX_VALUES", "4294967295", &d), -EINVAL);
	if (!strstr(d.msg, "ORR_MAX_VALUES=4294967295: at most 4294967294"))
		fail_msg("%s", d.msg);
	assert_int_equal(import_with(one, "ORR_MAX_VALUES", "8G", &d), -EINVAL);
	/* the depth's ceiling: simdjson's stacks are allocated for the whole depth */
	assert_int_equal(import_with(one, "ORR_MAX_DEPTH", "64K", &d), 0);
	assert_int_equal(import_with(one, "ORR_MAX_DEPTH", "1T", &d), -EINVAL);
	if (!strstr(d.msg, "ORR_MAX_DEPTH=1099511627776: at most 65536"))
		fail_msg("%s", d.msg);
	free(comm);
	free(one);
}

/*
 * A file of several ranks is read as one against each limit times its ranks, capped at
 * 32 bits (traces/limits.c): at the cap the message says that no limit raises it, for
 * the whole file, not for one rank.
 */
static void test_limits_file_of_ranks_at_32_bits(void **state)
{
	struct orr__limits one, file;
	struct orr_diag d;

	(void)state;
	assert_int_equal(orr__limits_init(&one, NULL, &d), 0);
	orr__limits_for_ranks(&one, 4, &file);
	assert_int_equal(file.max[ORR__LIMIT_EVENTS], one.max[ORR__LIMIT_EVENTS] * 4);
	orr__limit_fail(&file, ORR__LIMIT_EVENTS, &d, "f.json", 10, 2);
	if (!strstr(d.msg, "events in one rank on average over its 4 ranks") ||
	    !strstr(d.msg, "raise the limit ORR_MAX_EVENTS"))
		fail_msg("%s", d.msg);
	/* ORR_MAX_VALUES is 2^32 - 2 already: four ranks together are held to it */
	assert_int_equal(file.max[ORR__LIMIT_VALUES], UINT32_MAX - 1);
	orr__limit_fail(&file, ORR__LIMIT_VALUES, &d, "f.json", 10, 2);
	if (!strstr(d.msg, "more than 4294967294 tensor dimensions, strides, inputs or "
			   "communicator members in its 4 ranks together") ||
	    !strstr(d.msg, "indexes them with 32 bits; write a file per rank") ||
	    strstr(d.msg, "in one rank") || strstr(d.msg, "raise"))
		fail_msg("%s", d.msg);
	/* one rank: as before */
	orr__limit_fail(&one, ORR__LIMIT_VALUES, &d, "f.json", 10, 2);
	if (!strstr(d.msg, "members in one rank: orrery indexes them with 32 bits"))
		fail_msg("%s", d.msg);
}

/* n events of two dimensions each, on one thread: about 125 bytes an event. */
static char *write_mm_events(const char *dir, size_t n)
{
	size_t len = 0, cap = n * 160 + 64;
	char *text = orr_xmalloc(cap), *path;

	len += (size_t)snprintf(text, cap, "{\"traceEvents\": [\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
					"\"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": %zu, "
					"\"dur\": 1, \"args\": {\"Input Dims\": [[2, 3]]}}",
					i ? ",\n" : "", 2 * i);
	len += (size_t)snprintf(text + len, cap - len, "]}\n");
	path = write_file(dir, "mm.json", text, len);
	free(text);
	return path;
}

/* Imports path by two threads (pieces of 1000 bytes and more) with var=value. */
static int import_two_threads(const char *path, const char *var, const char *value,
			      struct orr_diag *d)
{
	int r;

	assert_int_equal(setenv("ORR_IMPORT_THREADS", "2", 1), 0);
	assert_int_equal(setenv("ORR_IMPORT_SPLIT_BYTES", "1000", 1), 0);
	r = import_with(path, var, value, d);
	unsetenv("ORR_IMPORT_SPLIT_BYTES");
	unsetenv("ORR_IMPORT_THREADS");
	return r;
}

/*
 * Read by two threads, a file whose last event passes ORR_MAX_EVENTS: the second
 * thread's last piece is not taken, and the first thread reads it itself after taking
 * the ones before.  It is refused at that event; the window it read first wrote its '['
 * one byte before the buffer (the byte before the piece had been let go): a heap
 * overflow (ASan), "malloc(): invalid next size" in a release build.
 */
static void test_limits_events_when_pieces_join(void **state)
{
	char *path = write_mm_events(*state, 4000);
	struct orr_diag d;

	for (int k = 0; k < 4; k++) {
		assert_int_equal(import_two_threads(path, "ORR_MAX_EVENTS", "3999", &d),
				 ORR_ETOOBIG);
		if (d.event != 3999 || d.offset <= 0 || !strstr(d.msg, "ORR_MAX_EVENTS"))
			fail_msg("event %lld, at %lld: %s", (long long)d.event, (long long)d.offset,
				 d.msg);
	}
	assert_int_equal(import_two_threads(path, "ORR_MAX_EVENTS", "4000", &d), 0);
	free(path);
}

/*
 * Read by two threads, a file whose dimensions pass ORR_MAX_VALUES only once the second
 * thread's pieces join the first's: refused at the event that passes it, as by one
 * thread.  The join was not checked: the indices it moves could wrap past 2^32, and the
 * refusal came once the rank was whole, with no event or offset.
 */
static void test_limits_values_when_pieces_join(void **state)
{
	char *path = write_mm_events(*state, 4000);
	struct orr_diag d;

	for (int k = 0; k < 4; k++) {
		assert_int_equal(import_two_threads(path, "ORR_MAX_VALUES", "7999", &d),
				 ORR_ETOOBIG);
		if (d.event != 3999 || d.offset <= 0 || !strstr(d.msg, "ORR_MAX_VALUES"))
			fail_msg("event %lld, at %lld: %s", (long long)d.event, (long long)d.offset,
				 d.msg);
	}
	assert_int_equal(import_two_threads(path, "ORR_MAX_VALUES", "8000", &d), 0);
	free(path);
}

static void test_limits_bad_variable_is_refused(void **state)
{
	char *one = write_file(*state, "one.json", trace, strlen(trace));
	struct orr_diag d;

	assert_int_equal(import_with(one, "ORR_MAX_EVENTS", "lots", &d), -EINVAL);
	assert_non_null(strstr(d.msg, "ORR_MAX_EVENTS"));
	assert_int_equal(import_with(one, "ORR_MAX_EVENTS", "0", &d), -EINVAL);
	assert_int_equal(import_with(one, "ORR_MAX_FILE_BYTES", "1K", &d), 0);
	assert_int_equal(import_with(one, "ORR_MAX_FILE_BYTES", "1X", &d), -EINVAL);
	free(one);
}

static void test_limits_options_override(void **state)
{
	char *one = write_file(*state, "one.json", trace, strlen(trace));
	struct orr_import_options o = { .max_events = 2 };
	struct orr_trace *t = NULL;
	struct orr_diag d;

	assert_int_equal(orr_trace_import(one, &o, &t, &d), ORR_ETOOBIG);
	assert_non_null(strstr(d.msg, "events"));
	o.max_events = 3;
	assert_int_equal(orr_trace_import(one, &o, &t, &d), 0);
	orr_trace_free(t);
	free(one);
}

/* Whitespace bombs (decompressed), in a compressed file and in an archive member. */
static void test_limits_whitespace_bomb(void **state)
{
	const char *dir = *state;
	size_t ws = (2u << 20) + 10;
	char *text = orr_xmalloc(ws + 64), *p;
	struct orr_diag d;

	memcpy(text, "{\"traceEvents\": [", 17);
	memset(text + 17, ' ', ws);
	memcpy(text + 17 + ws, "]}", 3);
	free(write_file(dir, "bomb.json", text, strlen(text)));
	run_in(dir, "zstd -q -k bomb.json && gzip -k bomb.json && mkdir m && cp bomb.json "
		    "m/rank0.json && tar czf bomb.tar.gz -C m rank0.json");
	for (const char *const *f =
		     (const char *const[]){ "bomb.json.zst", "bomb.json.gz", "bomb.tar.gz", NULL };
	     *f; f++) {
		p = orr_xasprintf("%s/%s", dir, *f);
		assert_int_equal(import_with(p, NULL, NULL, &d), ORR_ETOOBIG);
		assert_non_null(strstr(d.msg, "ORR_MAX_STRING_BYTES"));
		assert_int_equal(d.offset, 17);
		/* Raised, it reads (an empty trace). */
		assert_int_equal(import_with(p, "ORR_MAX_STRING_BYTES", "4M", &d), 0);
		free(p);
	}
	/* A plain file of that size is only bound by the file limit. */
	p = orr_xasprintf("%s/bomb.json", dir);
	assert_int_equal(import_with(p, NULL, NULL, &d), 0);
	free(p);
	free(text);
}

/* A zstd stream past 64 MiB at more than 1000 times its size. */
static void test_limits_ratio(void **state)
{
	const char *dir = *state;
	char *p;
	struct orr_diag d;

	run_in(dir, "{ printf '{\"traceEvents\": [], \"x\": \"'; head -c 70000000 /dev/zero | tr "
		    "'\\0' a; printf '\"}'; } | zstd -q -19 > ratio.json.zst");
	p = orr_xasprintf("%s/ratio.json.zst", dir);
	assert_int_equal(import_with(p, NULL, NULL, &d), ORR_ETOOBIG);
	assert_non_null(strstr(d.msg, "ORR_MAX_RATIO"));
	assert_int_equal(import_with(p, "ORR_MAX_RATIO", "1000000", &d), 0);
	free(p);
}

/* Garbage is refused at its first bytes: NULs, text, a BOM before text. */
static void test_limits_first_bytes(void **state)
{
	static const char bom[] = "\xef\xbb\xbf{\"traceEvents\": []}";
	static const char bom_junk[] = "\xef\xbb\xbfhello";
	char zeros[4096] = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag d;
	char *p;

	assert_int_equal(orr_trace_import_buffer("bom.json", bom, strlen(bom), NULL, &t, &d), 0);
	orr_trace_free(t);
	assert_int_equal(orr_trace_import_buffer("j.json", bom_junk, strlen(bom_junk), NULL, &t,
						 &d),
			 ORR_EFORMAT);
	assert_int_equal(d.offset, 3);
	assert_non_null(strstr(d.msg, "'h'"));
	p = write_file(*state, "zeros.json", zeros, sizeof(zeros));
	assert_int_equal(import_with(p, NULL, NULL, &d), ORR_EFORMAT);
	assert_int_equal(d.offset, 0);
	assert_non_null(strstr(d.msg, "0x00"));
	free(p);
	/* A NUL later on, in a valid start. */
	memcpy(zeros, "{\"traceEvents\": [", 17);
	p = write_file(*state, "nul.json", zeros, sizeof(zeros));
	assert_int_equal(import_with(p, NULL, NULL, &d), ORR_EMALFORMED);
	assert_int_equal(d.offset, 17);
	assert_non_null(strstr(d.msg, "NUL"));
	free(p);
}

/* A FIFO is refused at once, given alone or in a directory; so is a device. */
static void test_limits_special_files(void **state)
{
	char *fifo = orr_xasprintf("%s/f.json", (char *)*state);
	char *run = orr_xasprintf("%s/run", (char *)*state), *member;
	struct orr_diag d;

	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(import_with(fifo, NULL, NULL, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "not a regular file (a FIFO)"));
	assert_int_equal(mkdir(run, 0755), 0);
	free(write_file(run, "rank0.json", trace, strlen(trace)));
	member = orr_xasprintf("%s/rank1.json", run);
	assert_int_equal(mkfifo(member, 0644), 0);
	assert_int_equal(import_with(run, NULL, NULL, &d), -EINVAL);
	assert_non_null(strstr(d.file, "rank1.json"));
	assert_int_equal(import_with("/dev/null", NULL, NULL, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "a character device"));
	free(member);
	free(run);
	free(fifo);
}

/* macOS's ._NAME and other dot members are skipped in archives as in directories. */
static void test_limits_dot_members_skipped(void **state)
{
	const char *dir = *state;
	char *p;
	struct orr_diag d;

	free(write_file(dir, "rank0.json", trace, strlen(trace)));
	free(write_file(dir, "._rank0.json", "\0\5\26\7junk", 8));
	run_in(dir, "mkdir .hidden && cp ._rank0.json .hidden/rank1.json && "
		    "tar cf a.tar ._rank0.json rank0.json .hidden/rank1.json && "
		    "tar czf a.tar.gz ._rank0.json rank0.json");
	p = orr_xasprintf("%s/a.tar", dir);
	if (import_with(p, NULL, NULL, &d))
		fail_msg("%s", d.msg);
	free(p);
	p = orr_xasprintf("%s/a.tar.gz", dir);
	assert_int_equal(import_with(p, NULL, NULL, &d), 0);
	free(p);
}

/* A corrupt gzip or tar header says so, not "nested more than twice". */
static void test_limits_corrupt_containers_say_why(void **state)
{
	static const char gz[] = "\x1f\x8b\x09\x00garbage-not-gzip";
	char tar[1024] = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag d;

	assert_int_equal(orr_trace_import_buffer("x.json.gz", gz, sizeof(gz) - 1, NULL, &t, &d),
			 ORR_EARCHIVE);
	assert_non_null(strstr(d.msg, "compression method 9"));
	memcpy(tar, "rank0.json", 10);
	memcpy(tar + 148, "0000000", 7);
	memcpy(tar + 257, "ustar", 5);
	assert_int_equal(orr_trace_import_buffer("x.tar", tar, sizeof(tar), NULL, &t, &d),
			 ORR_EARCHIVE);
	assert_non_null(strstr(d.msg, "checksum"));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tmpdir_setup, tmpdir_teardown)
		T(test_limits_each_at_its_edge),
		T(test_limits_depth_on_every_path),
		T(test_limits_values_indexed_by_32_bits),
		T(test_limits_file_of_ranks_at_32_bits),
		T(test_limits_events_when_pieces_join),
		T(test_limits_values_when_pieces_join),
		T(test_limits_bad_variable_is_refused),
		T(test_limits_options_override),
		T(test_limits_whitespace_bomb),
		T(test_limits_ratio),
		T(test_limits_first_bytes),
		T(test_limits_special_files),
		T(test_limits_dot_members_skipped),
		T(test_limits_corrupt_containers_say_why),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
