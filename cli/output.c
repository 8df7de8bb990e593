/* SPDX-License-Identifier: MIT */
/* Error reporting and output helpers for the commands. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "banned.h"

/* "orrery: LEVEL: " and the message, escaped: its names come from traces and users. */
static void vreport(const char *level, const char *fmt, va_list ap)
{
	va_list aq;
	char *msg, *text;
	int len;

	/* what the report wrote so far first, where both go to one pipe or file */
	fflush(stdout);
	va_copy(aq, ap);
	len = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	msg = orr_xmalloc(len > 0 ? (size_t)len + 1 : 1);
	msg[0] = '\0';
	if (len > 0)
		vsnprintf(msg, (size_t)len + 1, fmt, ap);
	text = orr_text_escape_dup(msg);
	fprintf(stderr, "orrery: %s: %s", level, text);
	free(text);
	free(msg);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_import_warn(void *data, const char *msg)
{
	char buf[2048];

	(void)data;
	cli_warning("%s", cli_input_name(msg, buf, sizeof(buf)));
}

/*
 * Escaped copies live in a ring, so that one printf() can take several of them; a slot is
 * freed when it comes round again.  Most names need no copy at all.
 */
#define TEXT_SLOTS 8

const char *cli_text(const char *s)
{
	static char *ring[TEXT_SLOTS];
	static size_t next;
	char **slot;

	if (!s || orr_text_is_plain(s))
		return s;
	slot = &ring[next++ % TEXT_SLOTS];
	free(*slot);
	*slot = orr_text_escape_dup(s);
	return *slot;
}

char cli_stdin_copy[32];

const char *cli_input_name(const char *s, char *buf, size_t size)
{
	static const char name[] = "standard input";
	size_t len = strlen(cli_stdin_copy), at = 0;
	const char *p = s;

	if (!len || !strstr(s, cli_stdin_copy))
		return s;
	while (*p && at + 1 < size) {
		/* /proc/self/fd/3, not the start of /proc/self/fd/31 */
		if (strncmp(p, cli_stdin_copy, len) == 0 && (p[len] < '0' || p[len] > '9')) {
			if (at + sizeof(name) > size)
				break;
			memcpy(buf + at, name, sizeof(name) - 1);
			at += sizeof(name) - 1;
			p += len;
			continue;
		}
		buf[at++] = *p++;
	}
	buf[at] = '\0';
	return buf;
}

/* Standard input is "standard input", whatever the importer knew it by (cli/input.c). */
void cli_import_error(const char *path, int err, const struct orr_diag *diag)
{
	struct orr_diag d = *diag;
	char buf[1024], name[sizeof(d.file)], msg[sizeof(d.msg)];
	bool is_stdin = strcmp(path, "-") == 0;

	snprintf(d.file, sizeof(d.file), "%s", cli_input_name(diag->file, name, sizeof(name)));
	snprintf(d.msg, sizeof(d.msg), "%s", cli_input_name(diag->msg, msg, sizeof(msg)));
	if (is_stdin && (!d.file[0] || strcmp(d.file, "standard input") == 0)) {
		d.file[0] = '\0';
		cli_error("cannot import standard input: %s",
			  orr_diag_format(&d, err, buf, sizeof(buf)));
	} else if (d.file[0]) {
		cli_error("cannot import %s", orr_diag_format(&d, err, buf, sizeof(buf)));
	} else {
		/* no file (a bad ORR_MAX_* variable): the path given, and why */
		cli_error("cannot import '%s': %s%s%s", path, orr_strerror(err),
			  d.msg[0] ? ": " : "", d.msg);
	}
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'orrery %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cli_ambiguous_option(const char *cmd, const char *arg, const struct option *opts)
{
	const char *name = arg + 2, *eq, *v[64];
	char list[1024];
	size_t n = 0, len, used = 0;

	if (!opts || arg[0] != '-' || arg[1] != '-' || !arg[2])
		return -1;
	eq = strchr(name, '=');
	len = eq ? (size_t)(eq - name) : strlen(name);
	for (const struct option *o = opts; o->name; o++) {
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return -1; /* exactly one of them */
		if (!strncmp(o->name, name, len) && n < sizeof(v) / sizeof(v[0]))
			v[n++] = o->name;
	}
	if (n < 2)
		return -1;
	qsort(v, n, sizeof(v[0]), by_name);
	list[0] = '\0';
	for (size_t i = 0; i < n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s--%s", i ? ", " : "",
					 v[i]);
	return cli_usage_error(cmd, "option '--%.*s' is ambiguous: %s", (int)len, name, list);
}

const char *cli_typed_option(int argc, char **argv, bool with_value)
{
	const char *last = optind > 0 && optind <= argc ? argv[optind - 1] : "";

	if (with_value && optarg == last && optind >= 2)
		return argv[optind - 2];
	return last;
}

int cli_bad_option(const char *cmd, int argc, char **argv, const struct option *opts)
{
	const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	const char *eq = strchr(opt, '=');
	int ret;

	/*
	 * A prefix of several long options: getopt_long() left optopt 0, as for an unknown
	 * one, or, where they share a value, took the first (and refused its value).
	 */
	if ((ret = cli_ambiguous_option(cmd, opt, opts)) >= 0)
		return ret;

	/*
	 * A long option that getopt_long() knew: optopt is its value (0 for an unknown one),
	 * so it lacks its value or, with '=', has one it does not take.
	 */
	if (optopt && opt[0] == '-' && opt[1] == '-' && opt[2]) {
		if (eq)
			return cli_usage_error(cmd, "option '%.*s' takes no value ('%s')",
					       (int)(eq - opt), opt, opt);
		return cli_usage_error(cmd, "option '%s' needs a value", opt);
	}
	/* A short option in a group (-xy) or with its value attached: optopt names it. */
	if (optopt && opt[0] == '-' && opt[1] != '-' && strlen(opt) != 2)
		return cli_usage_error(cmd,
				       "bad option '-%c' in '%s' (unknown, or missing its value)",
				       optopt, opt);
	return cli_usage_error(cmd, "bad option '%s' (unknown, or missing its value)", opt);
}

int cli_parse_format(const char *s, bool allow_csv)
{
	if (strcmp(s, "text") == 0)
		return CLI_FORMAT_TEXT;
	if (strcmp(s, "json") == 0)
		return CLI_FORMAT_JSON;
	if (allow_csv && strcmp(s, "csv") == 0)
		return CLI_FORMAT_CSV;
	return -1;
}

int cli_parse_count(const char *s, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end || errno || v < 0 || v > INT32_MAX)
		return -1;
	*ret = v;
	return 0;
}

int cli_parse_real(const char *s, double lo, double hi, double *ret)
{
	size_t n = strlen(s);
	char *end;
	double v;

	/* strtod() also reads "0x10", " 7", "inf" and "nan" */
	if (!n || strspn(s, "0123456789.eE+-") != n)
		return -1;
	v = strtod(s, &end);
	if (end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*ret = v;
	return 0;
}

/*
 * By hand rather than with snprintf(): libquadmath, which LAPACK brings into the
 * process, registers a printf modifier at load time, and that sends every printf of
 * the process down glibc's slow positional path (about 1 us a call here); a report of
 * a million steps formats ten million of these.
 */
const char *cli_ms(int64_t ns, char *buf, size_t size)
{
	uint64_t us = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char tmp[32];
	size_t k = sizeof(tmp), len;

	if (!size)
		return buf;
	/* round half up to the microsecond */
	us = us / 1000 + (us % 1000 >= 500);
	for (int i = 0; i < 3; i++, us /= 10)
		tmp[--k] = (char)('0' + us % 10);
	tmp[--k] = '.';
	do
		tmp[--k] = (char)('0' + us % 10);
	while (us /= 10);
	if (ns < 0)
		tmp[--k] = '-';
	len = sizeof(tmp) - k < size ? sizeof(tmp) - k : size - 1;
	memcpy(buf, tmp + k, len);
	buf[len] = 0;
	return buf;
}

static void put_spaces(size_t n)
{
	static const char spaces[] = "                                ";

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		fwrite(spaces, 1, sizeof(spaces) - 1, stdout);
	fwrite(spaces, 1, n, stdout);
}

void cli_put_cell(const char *s, int width)
{
	size_t len = strlen(s), w = (size_t)(width < 0 ? -(int64_t)width : width);
	size_t pad = len < w ? w - len : 0;

	if (width > 0)
		put_spaces(pad);
	fwrite(s, 1, len, stdout);
	if (width < 0)
		put_spaces(pad);
}

void json_write_string(FILE *f, const char *s)
{
	orr_json_write_string(f, s);
}

void json_begin(struct json_out *j, FILE *f)
{
	orr_json_begin(&j->o, f);
}

void json_end(struct json_out *j)
{
	orr_json_end(&j->o);
}

void json_object(struct json_out *j, const char *key)
{
	orr_json_object(&j->o, key);
}

void json_array(struct json_out *j, const char *key)
{
	orr_json_array(&j->o, key);
}

void json_close_object(struct json_out *j)
{
	orr_json_close_object(&j->o);
}

void json_close_array(struct json_out *j)
{
	orr_json_close_array(&j->o);
}

void json_str(struct json_out *j, const char *key, const char *value)
{
	orr_json_str(&j->o, key, value);
}

void json_int(struct json_out *j, const char *key, int64_t value)
{
	orr_json_int(&j->o, key, value);
}

void json_bool(struct json_out *j, const char *key, bool value)
{
	orr_json_bool(&j->o, key, value);
}

void json_double(struct json_out *j, const char *key, double value)
{
	orr_json_double(&j->o, key, value);
}

void json_double_exact(struct json_out *j, const char *key, double value)
{
	orr_json_double_exact(&j->o, key, value);
}

static char stdout_path[32];

void cli_output_arg(const char *arg)
{
	int fd;

	if (strcmp(arg, "-") != 0 || stdout_path[0])
		return;
	fflush(stdout);
	fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		/* Nothing moved: the file and the report would share standard output. */
		snprintf(stdout_path, sizeof(stdout_path), "/dev/stdout");
		return;
	}
	snprintf(stdout_path, sizeof(stdout_path), "/dev/fd/%d", fd);
}

const char *cli_output_path(const char *arg)
{
	if (strcmp(arg, "-") != 0)
		return arg;
	cli_output_arg(arg);
	return stdout_path;
}

const char *cli_output_name(const char *arg)
{
	return strcmp(arg, "-") == 0 ? "standard output" : cli_text(arg);
}

bool cli_output_inside(const char *arg, const char *trace)
{
	return strcmp(arg, "-") != 0 && orr_outfile_inside(arg, trace);
}

const char *cli_compressed_suffix(const char *path)
{
	static const char *const ext[] = { ".gz", ".zst", ".xz", ".bz2", ".tgz", ".tar", ".zip" };
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (n > strlen(ext[i]) && strcmp(path + n - strlen(ext[i]), ext[i]) == 0)
			return ext[i];
	return NULL;
}

/* An OUT directory may be new or empty: rename() replaces an empty one. */
int cli_check_out_dir(const char *out)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	bool empty = true;

	if (stat(out, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	d = opendir(out);
	if (!d)
		return -errno;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty ? 0 : -ENOTEMPTY;
}

/* A text cell, written by the one CSV cell writer (common/escape.c). */
void cli_csv_field(const char *s)
{
	orr_csv_write_field(stdout, s);
}
