/* SPDX-License-Identifier: MIT */
/*
 * Run directories (traces/bundle.c): the manifest's exact text, packing a run into a
 * .tar.zst that reads back as the directory does, and packing what is not a run; tar
 * archives read back that are empty or declare more than they hold, the check of
 * standard input's first bytes, and libarchive refusing memory for its reader or writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <dlfcn.h>
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

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return text;
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Names in dir other than . and .., concatenated with spaces. */
static char *listing(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	char *out = orr_xstrdup("");

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			char *next = orr_xasprintf("%s%s%s", out, *out ? " " : "", ents[i]->d_name);

			free(out);
			out = next;
		}
		free(ents[i]);
	}
	free(ents);
	return out;
}

/* The sample converted to a run directory DIR/run, as `orrery convert` makes one. */
static char *make_run(const char *dir, struct orr_trace **ret_trace)
{
	const char *root = getenv("ORR_SOURCE_ROOT");
	char *sample = orr_xasprintf("%s/traces/samples/tiny-2rank", root ? root : ".");
	char *run = orr_xasprintf("%s/run", dir);
	static const char *const names[] = { "rank-0.orr", "rank-1.orr" };
	struct orr_run_file files[2];
	struct orr_trace *t = NULL;
	struct orr_diag d;

	if (orr_trace_import(sample, NULL, &t, &d))
		fail_msg("%s: %s", sample, d.msg);
	assert_int_equal(orr_trace_rank_count(t), 2);
	assert_int_equal(mkdir(run, 0777), 0);
	for (size_t i = 0; i < 2; i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		char *path = orr_xasprintf("%s/rank-%d.orr", run, r->rank);

		if (orr_native_write_rank(path, t, r, "test", &d))
			fail_msg("%s: %s", path, d.msg);
		files[i] = (struct orr_run_file){
			.path = names[i], .rank = r->rank, .pid = -1, .events = r->nevents
		};
		free(path);
	}
	assert_int_equal(orr_run_write_manifest(run, &(struct orr_run_manifest){ .producer = "test",
										 .world_size = 2,
										 .skip_steps = -1,
										 .steps = -1,
										 .exit_status = -1,
										 .files = files,
										 .nfiles = 2 }),
			 0);
	free(sample);
	*ret_trace = t;
	return run;
}

/* ---- the manifest ---- */

static void test_bundle_manifest_text(void **state)
{
	static const char *const argv[] = { "torchrun", "--nproc-per-node=8", "say \"hi\"\n\\",
					    "\x01\xff" };
	struct orr_run_file files[] = {
		{ "rank-0.orr", 0, 4242, "node-a", 100, 1, 2 },
		{ "rank-1.orr", 1, 4243, NULL, 0, 0, 0 },
	};
	char *path = orr_xasprintf("%s/%s", (char *)*state, ORR_NATIVE_MANIFEST);
	char *text;

	assert_int_equal(orr_run_write_manifest(
				 *state,
				 &(struct orr_run_manifest){ .producer = "orrery record 0.1.0",
							     .command = argv,
							     .ncommand = 4,
							     .created_unix_ns = 1767189312123456789,
							     .world_size = 2,
							     .skip_steps = 3,
							     .steps = 5,
							     .exit_status = 0,
							     .files = files,
							     .nfiles = 2 }),
			 0);
	text = read_text(path);
	assert_string_equal(
		text,
		"{\n"
		"  \"format\": \"orrery-run\",\n"
		"  \"version\": 1,\n"
		"  \"producer\": \"orrery record 0.1.0\",\n"
		"  \"command\": [\"torchrun\", \"--nproc-per-node=8\", \"say \\\"hi\\\"\\u000a\\\\\", "
		"\"\\u0001\\ufffd\"],\n"
		"  \"created_unix_ns\": 1767189312123456789,\n"
		"  \"world_size\": 2,\n"
		"  \"skip_steps\": 3,\n"
		"  \"steps\": 5,\n"
		"  \"exit_status\": 0,\n"
		"  \"files\": [\n"
		"    {\"path\": \"rank-0.orr\", \"rank\": 0, \"pid\": 4242, \"host\": \"node-a\", "
		"\"events\": 100, \"dropped_records\": 1, \"dropped_events\": 2},\n"
		"    {\"path\": \"rank-1.orr\", \"rank\": 1, \"pid\": 4243, \"host\": null, "
		"\"events\": 0, \"dropped_records\": 0, \"dropped_events\": 0}\n"
		"  ]\n"
		"}\n");
	/* Only the manifest: no temporary file is left. */
	free(text);
	text = listing(*state);
	assert_string_equal(text, ORR_NATIVE_MANIFEST);
	free(text);
	free(path);
}

/* The null case: nothing known; and a directory that does not exist. */
static void test_bundle_manifest_empty_and_missing_dir(void **state)
{
	char *path = orr_xasprintf("%s/%s", (char *)*state, ORR_NATIVE_MANIFEST);
	char *missing = orr_xasprintf("%s/missing", (char *)*state);
	char *text;

	assert_int_equal(orr_run_write_manifest(*state,
						&(struct orr_run_manifest){ .world_size = -1,
									    .skip_steps = -1,
									    .steps = -1,
									    .exit_status = -1 }),
			 0);
	text = read_text(path);
	assert_string_equal(text, "{\n"
				  "  \"format\": \"orrery-run\",\n"
				  "  \"version\": 1,\n"
				  "  \"producer\": null,\n"
				  "  \"command\": [],\n"
				  "  \"created_unix_ns\": 0,\n"
				  "  \"world_size\": -1,\n"
				  "  \"skip_steps\": -1,\n"
				  "  \"steps\": -1,\n"
				  "  \"exit_status\": -1,\n"
				  "  \"files\": []\n"
				  "}\n");
	assert_int_equal(orr_run_write_manifest(missing, &(struct orr_run_manifest){ 0 }), -ENOENT);
	free(text);
	free(missing);
	free(path);
}

/* ---- packing ---- */

/* The members of an archive, "name:size" joined with spaces, in archive order. */
static char *members(const char *path)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char *out = orr_xstrdup("");

	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, path, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		char *next = orr_xasprintf("%s%s%s:%lld", out, *out ? " " : "",
					   archive_entry_pathname(e),
					   (long long)archive_entry_size(e));

		free(out);
		out = next;
	}
	archive_read_free(a);
	return out;
}

static void test_bundle_pack_reads_back_as_the_directory(void **state)
{
	struct orr_trace *t, *from_dir, *from_pack;
	char *run = make_run(*state, &t);
	char *out = orr_xasprintf("%s/run.tar.zst", (char *)*state);
	char *want, *got;
	struct orr_diag d;
	struct stat st[3];
	char *names[3];

	assert_int_equal(orr_run_pack(run, out, &d), 0);
	/* The manifest first, then the native files in name order; sizes as on disk. */
	names[0] = orr_xasprintf("%s/%s", run, ORR_NATIVE_MANIFEST);
	names[1] = orr_xasprintf("%s/rank-0.orr", run);
	names[2] = orr_xasprintf("%s/rank-1.orr", run);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(stat(names[i], &st[i]), 0);
	want = orr_xasprintf("manifest.json:%lld rank-0.orr:%lld rank-1.orr:%lld",
			     (long long)st[0].st_size, (long long)st[1].st_size,
			     (long long)st[2].st_size);
	got = members(out);
	assert_string_equal(got, want);
	assert_int_equal(import_path(run, NULL, &from_dir, &d), 0);
	assert_int_equal(import_path(out, NULL, &from_pack, &d), 0);
	assert_same_model(from_dir, from_pack, 0);
	/* And both are the trace they were written from, but for what Kineto lacks. */
	assert_same_model(t, from_pack, MODEL_CMP_CHROME);
	for (size_t i = 0; i < 3; i++)
		free(names[i]);
	orr_trace_free(from_pack);
	orr_trace_free(from_dir);
	orr_trace_free(t);
	free(got);
	free(want);
	free(out);
	free(run);
}

/* What is not a run: nothing is written, and the error names the culprit. */
static void test_bundle_pack_refuses_bad_runs(void **state)
{
	const char *dir = *state;
	char *out = orr_xasprintf("%s/out.tar.zst", dir);
	char *missing = orr_xasprintf("%s/missing", dir);
	char *empty = orr_xasprintf("%s/empty", dir);
	char *bad = orr_xasprintf("%s/bad", dir);
	char *bad_file = orr_xasprintf("%s/bad/rank-0.orr", dir);
	char *short_file = orr_xasprintf("%s/bad/rank-0.orr", dir);
	char *left;
	struct orr_diag d;

	assert_int_equal(orr_run_pack(missing, out, &d), -ENOENT);
	assert_string_equal(d.file, missing);
	assert_int_equal(mkdir(empty, 0777), 0);
	assert_int_equal(orr_run_pack(empty, out, &d), ORR_ENOTRACE);
	assert_string_equal(d.file, empty);
	assert_int_equal(mkdir(bad, 0777), 0);
	write_text(bad_file, "{\"traceEvents\": []}\n", 20);
	assert_int_equal(orr_run_pack(bad, out, &d), ORR_EFORMAT);
	assert_string_equal(d.file, bad_file);
	write_text(short_file, "\x5e\x2a\x4d", 3);
	assert_int_equal(orr_run_pack(bad, out, &d), ORR_EFORMAT);
	assert_false(exists(out));
	left = listing(dir);
	assert_string_equal(left, "bad empty");
	free(left);
	free(short_file);
	free(bad_file);
	free(bad);
	free(empty);
	free(missing);
	free(out);
}

static void test_bundle_pack_into_missing_dir_fails(void **state)
{
	struct orr_trace *t;
	char *run = make_run(*state, &t);
	char *out = orr_xasprintf("%s/no/such/dir/run.tar.zst", (char *)*state);
	char *left;
	struct orr_diag d;

	assert_true(orr_run_pack(run, out, &d) < 0);
	assert_string_equal(d.file, out);
	left = listing(*state);
	assert_string_equal(left, "run");
	free(left);
	orr_trace_free(t);
	free(out);
	free(run);
}

/* ---- archives that hold no trace, or less of one than they say ---- */

/* A GNU tar header for NAME declaring SIZE bytes (base-256 past the octal field). */
static void tar_header(unsigned char h[512], const char *name, uint64_t size)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	h[124] = 0x80;
	for (int i = 0; i < 8; i++)
		h[135 - i] = (unsigned char)(size >> (8 * i));
	memcpy(h + 136, "00000000000", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar  ", 8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void test_bundle_empty_archive_says_so(void **state)
{
	static unsigned char zeros[10240];
	struct orr_trace *t = NULL;
	struct orr_diag d;
	uint64_t max;

	(void)state;
	assert_int_equal(orr_trace_import_buffer("empty.tar", zeros, sizeof(zeros), NULL, &t, &d),
			 ORR_EFORMAT);
	assert_null(t);
	assert_string_equal(d.file, "empty.tar");
	assert_non_null(strstr(d.msg, "an empty archive"));
	/* The same from standard input's first bytes, before anything is copied. */
	assert_int_equal(orr_trace_check_head("-", zeros, 512, false, NULL, &max, &d), ORR_EFORMAT);
	assert_non_null(strstr(d.msg, "an empty archive"));
}

static void test_bundle_member_past_the_end_is_truncated(void **state)
{
	static const char rank[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
		"\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":1}]}";
	unsigned char tar[2048] = { 0 };
	struct orr_trace *t = NULL;
	struct orr_diag d;
	char want[128];

	(void)state;
	tar_header(tar, "rank0.json", UINT64_C(1) << 40);
	memcpy(tar + 512, rank, strlen(rank));
	assert_int_equal(orr_trace_import_buffer("huge.tar", tar, sizeof(tar), NULL, &t, &d),
			 ORR_ETRUNCATED);
	assert_null(t);
	assert_string_equal(d.file, "huge.tar");
	snprintf(want, sizeof(want),
		 "member rank0.json truncated: declares 1099511627776 bytes, %zu present",
		 strlen(rank));
	assert_string_equal(d.msg, want);
	/* Its true size reads. */
	tar_header(tar, "rank0.json", strlen(rank));
	assert_int_equal(orr_trace_import_buffer("ok.tar", tar, sizeof(tar), NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 1);
	orr_trace_free(t);
}

/* Standard input's first bytes decide as a file's would (cli/input.c). */
static void test_bundle_head_check_decides_as_the_import(void **state)
{
	char spaces[512];
	struct orr_diag d;
	uint64_t max = 0;

	(void)state;
	memset(spaces, ' ', sizeof(spaces));
	assert_int_equal(orr_trace_check_head("-", "{\"traceEvents\"", 14, false, NULL, &max, &d),
			 1);
	assert_int_equal(max, UINT64_C(4) << 30);
	assert_int_equal(orr_trace_check_head("-", "{}", 2, true, NULL, &max, &d), 0);
	assert_int_equal(orr_trace_check_head("-", spaces, sizeof(spaces), false, NULL, &max, &d),
			 1);
	assert_int_equal(orr_trace_check_head("-", "\x1f\x8b\x08", 3, true, NULL, &max, &d), 0);
	assert_int_equal(orr_trace_check_head("-", "y\ny\n", 4, false, NULL, &max, &d), 1);
	assert_int_equal(orr_trace_check_head("-", "y\ny\n", 4, true, NULL, &max, &d), ORR_EFORMAT);
	assert_string_equal(d.file, "-");
	assert_non_null(strstr(d.msg, "found 'y'"));
	setenv("ORR_MAX_FILE_BYTES", "3", 1);
	assert_int_equal(orr_trace_check_head("-", "{} ", 3, true, NULL, &max, &d), 0);
	assert_int_equal(max, 3);
	assert_int_equal(orr_trace_check_head("-", "{}  ", 4, true, NULL, &max, &d), ORR_ETOOBIG);
	assert_non_null(strstr(d.msg, "ORR_MAX_FILE_BYTES"));
	unsetenv("ORR_MAX_FILE_BYTES");
}

/* ---- libarchive refusing memory ---- */

/*
 * The library's calls to archive_read_new() and archive_write_new() bind to these: NULL
 * (libarchive's calloc() refused) while refuse_archives is set, else libarchive's own.
 */
static bool refuse_archives;

static void *libarchive_fn(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);

	assert_non_null(fn);
	return fn;
}

struct archive *archive_read_new(void)
{
	struct archive *(*real)(void);
	void *fn = libarchive_fn("archive_read_new");

	memcpy(&real, &fn, sizeof(real));
	return refuse_archives ? NULL : real();
}

struct archive *archive_write_new(void)
{
	struct archive *(*real)(void);
	void *fn = libarchive_fn("archive_write_new");

	memcpy(&real, &fn, sizeof(real));
	return refuse_archives ? NULL : real();
}

/* The caller's error, -ENOMEM with the file named: the library neither prints nor exits. */
static void test_bundle_archive_out_of_memory_is_an_error(void **state)
{
	struct orr_trace *t0, *t = NULL;
	char *run = make_run(*state, &t0);
	char *packed = orr_xasprintf("%s/run.tar.zst", (char *)*state);
	char *out = orr_xasprintf("%s/again.tar.zst", (char *)*state);
	struct orr_diag d;
	struct stat st;
	char *bytes;
	FILE *f;

	assert_int_equal(orr_run_pack(run, packed, &d), 0);
	assert_int_equal(stat(packed, &st), 0);
	bytes = orr_xmalloc((size_t)st.st_size);
	assert_non_null(f = fopen(packed, "rb"));
	assert_int_equal(fread(bytes, 1, (size_t)st.st_size, f), st.st_size);
	fclose(f);
	refuse_archives = true;
	/* an archive file, one in memory, and one being written */
	assert_int_equal(orr_trace_import(packed, NULL, &t, &d), -ENOMEM);
	assert_null(t);
	assert_string_equal(d.file, packed);
	assert_non_null(strstr(d.msg, "out of memory"));
	assert_int_equal(orr_trace_import_buffer("run.tar.zst", bytes, st.st_size, NULL, &t, &d),
			 -ENOMEM);
	assert_null(t);
	assert_string_equal(d.file, "run.tar.zst");
	assert_non_null(strstr(d.msg, "out of memory"));
	assert_int_equal(orr_run_pack(run, out, &d), -ENOMEM);
	assert_string_equal(d.file, out);
	assert_non_null(strstr(d.msg, "out of memory"));
	assert_false(exists(out));
	/* with memory again, both read and write */
	refuse_archives = false;
	assert_int_equal(orr_run_pack(run, out, &d), 0);
	assert_int_equal(orr_trace_import(out, NULL, &t, &d), 0);
	assert_int_equal(orr_trace_rank_count(t), 2);
	orr_trace_free(t);
	orr_trace_free(t0);
	free(bytes);
	free(out);
	free(packed);
	free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bundle_manifest_text, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_bundle_manifest_empty_and_missing_dir,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_bundle_pack_reads_back_as_the_directory,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_bundle_pack_refuses_bad_runs, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_bundle_pack_into_missing_dir_fails,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_bundle_empty_archive_says_so),
		cmocka_unit_test(test_bundle_member_past_the_end_is_truncated),
		cmocka_unit_test(test_bundle_head_check_decides_as_the_import),
		cmocka_unit_test_setup_teardown(test_bundle_archive_out_of_memory_is_an_error,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
