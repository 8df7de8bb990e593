/* SPDX-License-Identifier: MIT */
/*
 * Costs files refused by orr_costs_read(): the synthetic costs of costs-test.h (written
 * by orr_rank_fit_write_json()) with one value wrong, and files that are no
 * costs files at all (truncated, empty, not JSON, another format, a directory, absent,
 * too big), each refused with the error and the key in its message; and what is
 * tolerated (a byte order mark, keys the reader does not know).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "orrery/estimator.h"
#include "orrery/analysis.h"
#include "test-util.h"
#include "costs-test.h"
#include "capped-test.h"

/* ---- files that are no costs files ---- */

/* Reading path fails with err and a message holding want. */
static void expect_error(const char *path, int err, const char *want)
{
	struct orr_costs c;
	struct orr_diag d;
	int r = orr_costs_read(path, &c, &d);

	if (r != err || !strstr(d.msg, want))
		fail_msg("%s: %s (%s), expected %s with \"%s\"", path, orr_errname(r), d.msg,
			 orr_errname(err), want);
	assert_string_equal(d.file, path);
}

/*
 * The synthetic costs (with a GPU) with the first `from` after `anchor` made `to`; from
 * NULL: the first number.
 */
static char *edited(const char *anchor, const char *from, const char *to, size_t *ret_len)
{
	struct orr_rank_fit f;
	size_t len;
	char *text, *at, *out;

	synthetic_fit(orr_gpu_spec_by_id("h100-sxm"), &f);
	text = costs_text(&f, &len);
	orr_rank_fit_release(&f);
	at = strstr(text, anchor);
	assert_non_null(at);
	at = from ? strstr(at, from) : at + strcspn(at, "-0123456789");
	assert_true(at && *at);
	len = from ? strlen(from) : strspn(at, "-+.0123456789eE");
	out = orr_xasprintf("%.*s%s%s", (int)(at - text), text, to, at + len);
	*ret_len = strlen(out);
	free(text);
	return out;
}

/* The synthetic costs edited so, refused with err and a message holding want. */
static void expect_edit(const char *dir, const char *anchor, const char *from, const char *to,
			int err, const char *want)
{
	size_t len;
	char *text = edited(anchor, from, to, &len), *path;

	path = write_file(dir, "edited.json", text, len);
	expect_error(path, err, want);
	free(path);
	free(text);
}

/* A costs file with one value wrong: each refused, naming its key. */
static void test_costs_bad_values(void **state)
{
	const char *dir = *state;

	expect_edit(dir, "{", "\"orrery_costs\": 1", "\"orrery_costs\": 2", ORR_EFORMAT,
		    "key 'orrery_costs': version 2, this orrery reads version 1");
	expect_edit(dir, "\"gemm\"", "\"below_roofline\"", "\"below_roof\"", ORR_EMALFORMED,
		    "missing key 'gemm.below_roofline'");
	expect_edit(dir, "\"gemm\"", "\"fitted\": true", "\"fitted\": 1", ORR_EMALFORMED,
		    "key 'gemm.fitted': expected true or false, not a number");
	expect_edit(dir, "\"classes\"", "\"dtype\": \"bf16\"", "\"dtype\": \"bf17\"",
		    ORR_EMALFORMED, "key 'gemm.classes[1].dtype': unknown dtype 'bf17'");
	expect_edit(dir, "\"coef\"", "[", "[null, ", ORR_EMALFORMED,
		    "key 'gemm.classes[1].fit.coef': 4 coefficients, expected 2 or 3");
	expect_edit(dir, "\"coef\"", NULL, "null", ORR_EMALFORMED,
		    "key 'gemm.classes[1].fit.coef[0]': null (NaN) where a number is required");
	expect_edit(dir, "\"kernels\": {",
		    "\"efficiency_all\": ", "\"efficiency_all\": null, \"x\": ", ORR_EMALFORMED,
		    "key 'kernels.efficiency_all': null (NaN) where a number");
	expect_edit(dir, "\"bands\"",
		    "\"alpha_ns\": ", "\"alpha_ns\": \"1\", \"x\": ", ORR_EMALFORMED,
		    "key 'collectives[0].bands[0].alpha_ns': expected a number, not a string");
	expect_edit(dir, "\"device\"", "\"h100-sxm\"", "\"h900\"", ORR_EMALFORMED,
		    "key 'device.spec': unknown GPU 'h900'");
	/* a model of another GPU than the device's: its efficiencies over that roofline */
	expect_edit(dir, "\"gemm\"", "\"h100-sxm\"", "\"a100-80gb-sxm\"", ORR_EMALFORMED,
		    "key 'gemm.spec': 'a100-80gb-sxm', but the device is h100-sxm: a costs "
		    "file's efficiencies are over its device's roofline");
	expect_edit(dir, "\"kernels\": {", "\"h100-sxm\"", "\"h200-sxm\"", ORR_EMALFORMED,
		    "key 'kernels.spec': 'h200-sxm', but the device is h100-sxm");
	expect_edit(dir, "\"kernels\": {", "\"h100-sxm\"", "null", ORR_EMALFORMED,
		    "key 'kernels.spec': null (no GPU), but the device is h100-sxm");
	/* a model of a GPU where the device names none: nothing checks it against the
	 * estimated GPU (read as it was before) */
	expect_edit(dir, "\"device\"", "\"h100-sxm\"", "null", ORR_EMALFORMED,
		    "key 'gemm.spec': 'h100-sxm', but the device is of no GPU the hardware "
		    "table knows (device.spec)");
	expect_edit(dir, "\"collectives\": [", "\"AllReduce\"", "\"AllReduced\"", ORR_EMALFORMED,
		    "key 'collectives[0].kind': unknown collective kind 'AllReduced'");
	expect_edit(dir, "\"communicators\"", "\"size\": 8", "\"size\": -2", ORR_EMALFORMED,
		    "key 'structure.communicators[0].size': -2 is out of range");
	expect_edit(dir, "\"gemm\"",
		    "\"loso_shapes\": ", "\"loso_shapes\": -1, \"x\": ", ORR_EMALFORMED,
		    "key 'gemm.classes[0].loso_shapes': -1 is out of range");
}

/*
 * A value outside what reading it needs (issue 31, N6): each refused, naming its key
 * and the value.  Before, only "finite" was checked: a launch time of -1 made a step
 * of 416 ms one of 10.8 ms, 1e300 overflowed the placement (undefined behaviour), an
 * efficiency of 1e300 or a bandwidth of 1e-320 gave "(a bug)" errors.
 */
static void test_costs_out_of_range(void **state)
{
	const char *dir = *state;
	static const struct {
		const char *anchor, *from, *to, *want;
	} bad[] = {
		{ "\"launch\"", NULL, "-1", "key 'launch.step_ns': -1 is out of range" },
		{ "\"launch\"", NULL, "1e300", "key 'launch.step_ns': 1e+300 is out of range" },
		{ "\"kernels\": {", "\"efficiency_all\": ", "\"efficiency_all\": -1, \"x\": ",
		  "key 'kernels.efficiency_all': -1 is out of range" },
		{ "\"kernels\": {", "\"efficiency_all\": ", "\"efficiency_all\": 1e300, \"x\": ",
		  "key 'kernels.efficiency_all': 1e+300 is out of range" },
		{ "\"gemm\"", "\"median\": ", "\"median\": 0, \"x\": ",
		  "key 'gemm.efficiency[0].median': 0 is out of range" },
		{ "\"kernels\": {", "\"floor_ns\": ", "\"floor_ns\": -5, \"x\": ",
		  "key 'kernels.floor_ns': -5 is out of range" },
		{ "\"kernels\": {", "\"floor_ns\": ", "\"floor_ns\": 1e300, \"x\": ",
		  "key 'kernels.floor_ns': 1e+300 is out of range" },
		{ "\"measured\"", "\"bus_bytes_per_s\": ", "\"bus_bytes_per_s\": 1e-320, \"x\": ",
		  "key 'collectives[0].measured.bus_bytes_per_s': 9.99989e-321 is out of range" },
		{ "\"bands\"", "\"bus_bytes_per_s\": ", "\"bus_bytes_per_s\": -3, \"x\": ",
		  "key 'collectives[0].bands[0].bus_bytes_per_s': -3 is not what the band's fit "
		  "gives" },
		{ "\"bands\"", "\"alpha_ns\": ", "\"alpha_ns\": -1e300, \"x\": ",
		  "key 'collectives[0].bands[0].alpha_ns': -1.0000000000000001e+300 is not what "
		  "the band's fit gives" },
		{ "\"launch\"", NULL, "1e-320",
		  "key 'launch.step_ns': 9.99989e-321 is out of range" },
		{ "\"gemm\"", "\"median\": ", "\"median\": 1e-9, \"x\": ",
		  "key 'gemm.efficiency[0].median': 1e-09 is out of range" },
		{ "\"measured\"", "\"group\": ", "\"group\": -1, \"x\": ",
		  "key 'collectives[0].measured.group': -1 is out of range" },
		{ "\"bands\"", "\"hi_bytes\": ", "\"hi_bytes\": 0, \"x\": ",
		  "key 'collectives[0].bands[0].hi_bytes': 0 is not above lo_bytes" },
		{ "\"gemm\"", "\"loso_median\": ", "\"loso_median\": -1, \"x\": ",
		  "key 'gemm.classes[0].loso_median': -1 is out of range" },
		{ "\"structure\"", "\"value\": ", "\"value\": -3, \"x\": ",
		  "key 'structure.layers.value': -3 is out of range" },
		{ "\"overlap\"", "\"slowdown\": ", "\"slowdown\": -1, \"x\": ",
		  "key 'overlap.slowdown': -1 is out of range" },
		{ "\"a_ns\"",
		  "\"a_ns\": ", "\"a_ns\": -5, \"x\": ", "a_ns': -5 is not the fit's fit.coef[0]" },
		/* the profiler's part of the launch time: a time, and not more than the whole */
		{ "\"launch\"", "\"profiler_ns\": ", "\"profiler_ns\": -1, \"x\": ",
		  "key 'launch.profiler_ns': -1 is out of range" },
		{ "\"launch\"", "\"profiler_ns\": ", "\"profiler_ns\": 1e10, \"x\": ",
		  "key 'launch.profiler_ns': 1e+10 is more than step_ns" },
		/* the stalls' part too, and the two together */
		{ "\"launch\"", "\"stall_ns\": ", "\"stall_ns\": -1, \"x\": ",
		  "key 'launch.stall_ns': -1 is out of range" },
		{ "\"launch\"", "\"stall_ns\": ", "\"stall_ns\": 1e10, \"x\": ",
		  "key 'launch.stall_ns': 1e+10 is more than step_ns" },
		{ "\"launch\"",
		  "\"step_ns\": 0,\n    \"profiler_ns\": 0,\n    \"profiler_free_step_ns\": 0,\n"
		  "    \"stall_ns\": 0,",
		  "\"step_ns\": 100, \"profiler_ns\": 60, \"stall_ns\": 50,",
		  "key 'launch.profiler_ns': 60 with stall_ns, 50, is more than step_ns" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_edit(dir, bad[i].anchor, bad[i].from, bad[i].to, ORR_EMALFORMED,
			    bad[i].want);
}

/*
 * A key twice in one object, at the top or deep inside: simdjson read the first value
 * (-5 where Python and jq read the last), so such a file is refused (issue 31, N6).
 */
static void test_costs_duplicate_keys(void **state)
{
	const char *dir = *state;

	expect_edit(dir, "\"launch\"",
		    "\"step_ns\": ", "\"step_ns\": -5, \"step_ns\": ", ORR_EMALFORMED,
		    "key 'launch.step_ns': appears twice");
	expect_edit(dir, "\"bands\"",
		    "\"alpha_ns\": ", "\"alpha_ns\": 1, \"alpha_ns\": ", ORR_EMALFORMED,
		    "key 'collectives[0].bands[0].alpha_ns': appears twice");
	expect_edit(dir, "{", "\"trace\": ", "\"launch\": {}, \"trace\": ", ORR_EMALFORMED,
		    "key 'launch': appears twice");
}

/*
 * The synthetic costs with the first element of the array `key` after `anchor` given
 * twice: a second entry for the same math, class or collective.
 */
static char *first_twice(const char *anchor, const char *key, size_t *ret_len)
{
	struct orr_rank_fit f;
	size_t len, depth = 0;
	char *text, *at, *end, *out;

	synthetic_fit(orr_gpu_spec_by_id("h100-sxm"), &f);
	text = costs_text(&f, &len);
	orr_rank_fit_release(&f);
	at = strstr(text, anchor);
	assert_non_null(at);
	at = strstr(at, key);
	assert_non_null(at);
	at = strchr(at, '[') + 1;
	at += strspn(at, " \n\t");
	assert_int_equal(*at, '{');
	for (end = at; *end; end++)
		if (*end == '{')
			depth++;
		else if (*end == '}' && --depth == 0)
			break;
	assert_int_equal(*end, '}');
	end++;
	out = orr_xasprintf("%.*s%.*s, %s", (int)(at - text), text, (int)(end - at), at, at);
	*ret_len = strlen(out);
	free(text);
	return out;
}

/*
 * An array of one entry per math, class or collective (kind and link) with one given
 * twice: which of the two the models take would be a guess, so it is refused as a
 * duplicate key is.
 */
static void test_costs_duplicate_entries(void **state)
{
	static const struct {
		const char *anchor, *key, *want;
	} cases[] = {
		{ "\"collective_samples\"", "\"collectives\": [",
		  "key 'collectives[1]': a second entry for AllReduce" },
		{ "\"gemm\": {", "\"efficiency\": [",
		  "key 'gemm.efficiency[1]': a second entry for" },
		{ "\"kernels\": {", "\"classes\": [",
		  "key 'kernels.classes[1]': a second entry for" },
	};
	const char *dir = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		char *text = first_twice(cases[i].anchor, cases[i].key, &len), *path;

		path = write_file(dir, "twice.json", text, len);
		expect_error(path, ORR_EMALFORMED, cases[i].want);
		free(path);
		free(text);
	}
}

/* Files that are no costs files at all. */
static void test_costs_bad_files(void **state)
{
	const char *dir = *state;
	size_t len;
	char *text = edited("", "", "", &len), *path;

	path = write_file(dir, "truncated.json", text, len / 2);
	expect_error(path, ORR_ETRUNCATED, "the JSON ends early");
	free(path);
	path = write_file(dir, "empty.json", "", 0);
	expect_error(path, ORR_EEMPTY, "empty");
	free(path);
	path = write_file(dir, "blank.json", " \n", 2);
	expect_error(path, ORR_EEMPTY, "no JSON value");
	free(path);
	path = write_file(dir, "syntax.json", "{\"orrery_costs\": 1,, }", 22);
	expect_error(path, ORR_EMALFORMED, "not JSON");
	free(path);
	path = write_file(dir, "array.json", "[1, 2]", 6);
	expect_error(path, ORR_EFORMAT, "not a costs file: expected an object, not an array");
	free(path);
	path = write_file(dir, "kineto.json", "{\"traceEvents\": []}", 19);
	expect_error(path, ORR_EFORMAT, "key 'orrery_costs': missing: not a costs file");
	free(path);
	expect_error(dir, -EINVAL, "not a regular file (a directory)");
	path = orr_xasprintf("%s/absent.json", dir);
	expect_error(path, -ENOENT, "cannot open");
	free(path);
	free(text);
}

/* Reading text fails with err at byte offset with a message holding want. */
static void expect_at(const char *dir, const char *text, int err, int64_t offset, const char *want)
{
	char *path = write_file(dir, "where.json", text, strlen(text));
	struct orr_costs c;
	struct orr_diag d;
	int r = orr_costs_read(path, &c, &d);

	if (r != err || d.offset != offset || !strstr(d.msg, want))
		fail_msg("%s: %s at %lld (%s), expected %s at %lld with \"%s\"", text,
			 orr_errname(r), (long long)d.offset, d.msg, orr_errname(err),
			 (long long)offset, want);
	free(path);
}

/* A text that is not JSON: the byte, line and column where it stops being JSON, and why. */
static void test_costs_syntax_where(void **state)
{
	const char *dir = *state;

	expect_at(dir, "{\"orrery_costs\": 1,, }", ORR_EMALFORMED, 19,
		  "line 1 column 20: expected a string key");
	expect_at(dir, "{\n  \"orrery_costs\": 1\n  \"gemm\": {}\n}", ORR_EMALFORMED, 24,
		  "line 3 column 3: expected ',' or '}'");
	expect_at(dir, "{\"a\": [1, 2,]}", ORR_EMALFORMED, 12, "expected a JSON value");
	expect_at(dir, "{\"a\" 1}", ORR_EMALFORMED, 5, "expected ':' after the key");
	expect_at(dir, "{\"a\": tru}", ORR_EMALFORMED, 6, "expected true");
	expect_at(dir, "{\"a\": 01}", ORR_EMALFORMED, 7, "expected ',' or '}'");
	expect_at(dir, "{\"a\": -x}", ORR_EMALFORMED, 6, "expected a number");
	expect_at(dir, "{\"a\": 1e999}", ORR_EMALFORMED, 6, "a number within a double's range");
	expect_at(dir, "{\"a\": \"x\ty\"}", ORR_EMALFORMED, 8, "control character");
	expect_at(dir, "{\"a\": \"\\q\"}", ORR_EMALFORMED, 7, "an escape sequence");
	expect_at(dir, "{\"a\": \"\xff\"}", ORR_EMALFORMED, 7, "UTF-8");
	expect_at(dir, "{\"a\": 1} x", ORR_EMALFORMED, 9, "the end of the text");
	expect_at(dir, "\xef\xbb\xbf{\"a\" 1}", ORR_EMALFORMED, 8, "line 1 column 9");
	expect_at(dir, "{\"a\": [1, ", ORR_ETRUNCATED, 10, "the JSON ends early");
	expect_at(dir, "{\"a\": \"xy", ORR_ETRUNCATED, 9, "expected '\"' to close the string");
}

/* "{\"a\":" then n '[', mid, n ']' and end (free()). */
static char *nested(size_t n, const char *mid, const char *end)
{
	size_t m = strlen(mid), e = strlen(end);
	char *s = orr_xmalloc(5 + 2 * n + m + e + 1);

	memcpy(s, "{\"a\":", 5);
	memset(s + 5, '[', n);
	memcpy(s + 5 + n, mid, m);
	memset(s + 5 + n + m, ']', n);
	memcpy(s + 5 + 2 * n + m, end, e + 1);
	return s;
}

/*
 * Where simdjson's refusals are that RFC 8259's grammar alone takes or misses: a lone
 * UTF-16 surrogate, a number past a double however long, nesting as deep as simdjson's
 * limit (1024 levels that hold a value; an empty array past 1023 is taken), an
 * integer past 64 bits.
 */
static void test_costs_syntax_where_simdjson(void **state)
{
	const char *dir = *state;
	char *big = orr_xmalloc(700), *t;

	expect_at(dir, "{\"a\": \"\\ud800x\"}", ORR_EMALFORMED, 13, "low surrogate");
	expect_at(dir, "{\"a\": \"\\udc00\"}", ORR_EMALFORMED, 7, "lone low surrogate");
	expect_at(dir, "{\"a\": \"\\ud83d\\ude00\", \"b\" 1}", ORR_EMALFORMED, 26,
		  "':' after the key");
	memcpy(big, "{\"a\": 1", 7);
	memset(big + 7, '0', 600);
	memcpy(big + 607, "}", 2);
	expect_at(dir, big, ORR_EMALFORMED, 6, "a number within a double's range");
	/* Integers past 64 bits, which a double holds: simdjson refuses them, with no offset. */
	expect_at(dir, "{\"a\": 1, \"b\": 18446744073709551616}", ORR_EMALFORMED, 14,
		  "line 1 column 15: expected an integer from -2^63 to 2^64 - 1");
	expect_at(dir, "{\"a\": -9223372036854775809}", ORR_EMALFORMED, 6, "an integer from");
	expect_at(dir, "{\"a\": 99999999999999999999999}", ORR_EMALFORMED, 6, "an integer from");
	t = nested(1023, "1", "}");
	expect_at(dir, t, ORR_ETOOBIG, 5 + 1022,
		  "arrays and objects nested more than 1023 deep, line 1 column 1028");
	free(t);
	t = nested(1022, "[ ]", ",}");
	expect_at(dir, t, ORR_EMALFORMED, 5 + 1022 + 3 + 1022 + 1, "a string key");
	free(t);
	free(big);
}

/* Taken: a byte order mark, keys the reader does not know.  Not: a number past a double. */
static void test_costs_tolerated(void **state)
{
	const char *dir = *state;
	struct orr_costs c;
	struct orr_diag d;
	size_t len;
	char *text = edited("\"gemm\": {", "\"kernels\"", "\"later\": [{}], \"kernels\"", &len);
	char *bom = orr_xasprintf("\xef\xbb\xbf%s", text), *path;

	path = write_file(dir, "bom.json", bom, len + 3);
	if (orr_costs_read(path, &c, &d))
		fail_msg("%s", d.msg);
	assert_true(c.gemm_fitted && c.gemm.nclasses == 3 && c.ncoll == 3);
	orr_costs_release(&c);
	free(path);
	free(bom);
	free(text);
	expect_edit(dir, "\"bands\"",
		    "\"alpha_ns\": ", "\"alpha_ns\": 1e999, \"x\": ", ORR_EMALFORMED, "not JSON");
}

/* A file past ORR_COSTS_MAX_BYTES (sparse: nothing is written) is refused unread. */
static void test_costs_too_big(void **state)
{
	char *path = write_file(*state, "big.json", "{", 1);

	assert_int_equal(truncate(path, (off_t)ORR_COSTS_MAX_BYTES + 1), 0);
	expect_error(path, ORR_ETOOBIG, "more than the 256 MiB a costs file may have");
	free(path);
}

/* What a read under a cap came to (read_capped()'s exit status). */
enum { CAPPED_NO_MEMORY, CAPPED_EXITED, CAPPED_OTHER, CAPPED_READ = 4 };

/* A costs file, from path or from its len bytes at buf, read with a capped address space. */
struct capped_read {
	const char *path, *buf;
	size_t len, above_bytes;
};

/*
 * With its address space capped above_bytes above what it holds: the costs file of arg (a
 * struct capped_read) read, by orr_costs_read(), or by orr_costs_read_buffer() when buf
 * is not NULL.  CAPPED_NO_MEMORY when it fails with -ENOMEM naming memory, CAPPED_READ
 * when it is read whole (refused for its key given twice); an exit by the library itself
 * leaves CAPPED_EXITED (1, orr_xmalloc()'s).
 */
static int read_capped(void *arg)
{
	const struct capped_read *a = arg;
	const char *path = a->path;
	struct orr_costs c;
	struct orr_diag d;
	int r;

	if (capped_address_space(a->above_bytes) != 0)
		return CAPPED_OTHER;
	r = a->buf ? orr_costs_read_buffer(path, a->buf, a->len, &c, &d)
		   : orr_costs_read(path, &c, &d);
	if (r == -ENOMEM && strstr(d.msg, "out of memory"))
		return CAPPED_NO_MEMORY;
	if (r == ORR_EMALFORMED && strstr(d.msg, "appears twice"))
		return CAPPED_READ;
	fprintf(stderr, "read: %s: %s\n", orr_errname(r), r ? d.msg : "read");
	if (!r)
		orr_costs_release(&c);
	return CAPPED_OTHER;
}

/*
 * The file read with its address space capped from the file's size on up to 24 times it,
 * in steps of a sixteenth of the vector of keys: past the caps where orr_xmalloc() ends
 * the process (the file's copy, the string table, made before the parse), every cap
 * either reads it whole or is refused memory, and both happen.
 */
static void expect_capped(const char *path, const char *buf, size_t len, size_t step)
{
	bool copied = false, refused = false, read = false;

	for (size_t above = len; above < 24 * len; above += step) {
		struct capped_read a = { path, buf, len, above };
		int status = capped_in_child(read_capped, &a);

		if (status < 0 || status == CAPPED_OTHER || (status == CAPPED_EXITED && copied))
			fail_msg("%s capped %zu KiB above: %s %d%s", buf ? "a buffer" : path,
				 above >> 10, status < 0 ? "signal" : "exit",
				 status < 0 ? -status : status,
				 copied ? " (after the file's copy)" : "");
		copied |= status != CAPPED_EXITED;
		refused |= status == CAPPED_NO_MEMORY;
		read |= status == CAPPED_READ;
	}
	if (!refused || !read)
		fail_msg("%s: %s", buf ? "a buffer" : path,
			 refused ? "never read whole" : "never refused memory");
}

/*
 * Memory refused while a costs file is read is its reader's error, -ENOMEM: the library
 * printed 'out of memory' and called exit(1) where the vector of an object's keys (16
 * bytes a key, to find one given twice) was refused, from orr_costs_read() and
 * orr_costs_read_buffer() alike (16 caps of 116 each), and orr_xmalloc() did where the
 * string table made after the parse was (5).  The file is an object of 200,000 empty
 * keys, 1 MiB: simdjson's DOM takes about 14 bytes per byte of it, the keys' vector 3.2
 * MB more.  Not under ASan, whose shadow memory a cap breaks.
 */
static void test_costs_out_of_memory(void **state)
{
	static const char head[] = "{\"orrery_costs\": 1, \"pad\": {\"\": 0";
	size_t keys = 200000, len = sizeof(head) - 1 + 5 * (keys - 1) + 2;
	char *text, *p, *path;

	if (UNDER_ASAN) {
		fprintf(stderr, "skipped: an address-space cap under ASan\n");
		skip();
	}
	p = text = orr_xmalloc(len + 1);
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	for (size_t i = 1; i < keys; i++, p += 5)
		memcpy(p, ",\"\":0", 5);
	memcpy(p, "}}", 3);
	path = write_file(*state, "keys.json", text, len);
	expect_capped(path, NULL, len, keys);
	expect_capped(path, text, len, keys);
	free(path);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_costs_bad_values, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_syntax_where, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_syntax_where_simdjson, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_bad_files, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_out_of_range, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_duplicate_entries, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_duplicate_keys, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_too_big, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_tolerated, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_costs_out_of_memory, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
