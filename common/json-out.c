/* SPDX-License-Identifier: MIT */
/*
 * The streaming JSON writer of the reports (orrery/common.h): orrery fit's costs file,
 * which orr_costs_read() reads back, and every command's JSON.  Two-space indentation,
 * commas and nesting are kept here; values are written as they come.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

static void put_key(struct orr_json_out *j, const char *key)
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
		orr_json_write_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_nest(struct orr_json_out *j, const char *key, char c)
{
	put_key(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = true;
}

static void close_nest(struct orr_json_out *j, char c)
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

void orr_json_begin(struct orr_json_out *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = true;
	j->first[0] = true;
	fputc('{', f);
	j->depth = 1;
	j->first[1] = true;
}

void orr_json_end(struct orr_json_out *j)
{
	close_nest(j, '}');
	fputc('\n', j->f);
}

void orr_json_object(struct orr_json_out *j, const char *key)
{
	open_nest(j, key, '{');
}

void orr_json_array(struct orr_json_out *j, const char *key)
{
	open_nest(j, key, '[');
}

void orr_json_close_object(struct orr_json_out *j)
{
	close_nest(j, '}');
}

void orr_json_close_array(struct orr_json_out *j)
{
	close_nest(j, ']');
}

void orr_json_str(struct orr_json_out *j, const char *key, const char *value)
{
	put_key(j, key);
	if (value)
		orr_json_write_string(j->f, value);
	else
		fputs("null", j->f);
}

void orr_json_int(struct orr_json_out *j, const char *key, int64_t value)
{
	put_key(j, key);
	fprintf(j->f, "%lld", (long long)value);
}

void orr_json_bool(struct orr_json_out *j, const char *key, bool value)
{
	put_key(j, key);
	fputs(value ? "true" : "false", j->f);
}

void orr_json_double(struct orr_json_out *j, const char *key, double value)
{
	put_key(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.6g", value);
	else
		fputs("null", j->f); /* JSON has no NaN or infinity */
}

/*
 * The shortest of "%.15g", "%.16g" and "%.17g" that strtod() reads back as value (17
 * digits always do): a costs file's model parameters must come back bit for bit
 * (orr_costs_read()), and most print shorter.
 */
void orr_json_double_exact(struct orr_json_out *j, const char *key, double value)
{
	char buf[40];

	put_key(j, key);
	if (!isfinite(value)) {
		fputs("null", j->f);
		return;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, value);
		if (strtod(buf, NULL) == value)
			break;
	}
	fputs(buf, j->f);
}
