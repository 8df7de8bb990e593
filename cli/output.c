/* SPDX-License-Identifier: MIT */
/* Error reporting and output helpers for the commands. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "banned.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("orrery: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_import_error(const char *path, int err, const struct orr_diag *diag)
{
	char buf[1024];

	if (diag->file[0])
		cli_error("cannot import %s", orr_diag_format(diag, err, buf, sizeof(buf)));
	else
		cli_error("cannot import '%s': %s", path, orr_strerror(err));
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("orrery: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'orrery %s --help'\n", cmd);
	return EXIT_USAGE;
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

const char *cli_ms(int64_t ns, char *buf, size_t size)
{
	int64_t us = (ns < 0 ? -ns : ns) / 1000, rem = (ns < 0 ? -ns : ns) % 1000;

	/* round half up to the microsecond */
	if (rem >= 500)
		us++;
	snprintf(buf, size, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(us / 1000),
		 (long long)(us % 1000));
	return buf;
}

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json_key(struct json_out *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->pretty) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key) {
		json_write_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void json_open(struct json_out *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = true;
}

static void json_close(struct json_out *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (j->pretty && !empty) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
}

void json_begin(struct json_out *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = true;
	j->first[0] = true;
	fputc('{', f);
	j->depth = 1;
	j->first[1] = true;
}

void json_end(struct json_out *j)
{
	json_close(j, '}');
	fputc('\n', j->f);
}

void json_object(struct json_out *j, const char *key)
{
	json_open(j, key, '{');
}

void json_array(struct json_out *j, const char *key)
{
	json_open(j, key, '[');
}

void json_close_object(struct json_out *j)
{
	json_close(j, '}');
}

void json_close_array(struct json_out *j)
{
	json_close(j, ']');
}

void json_str(struct json_out *j, const char *key, const char *value)
{
	json_key(j, key);
	json_write_string(j->f, value);
}

void json_int(struct json_out *j, const char *key, int64_t value)
{
	json_key(j, key);
	fprintf(j->f, "%lld", (long long)value);
}

void json_bool(struct json_out *j, const char *key, bool value)
{
	json_key(j, key);
	fputs(value ? "true" : "false", j->f);
}

void json_double(struct json_out *j, const char *key, double value)
{
	json_key(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.6g", value);
	else
		fputs("null", j->f); /* JSON has no NaN or infinity */
}
