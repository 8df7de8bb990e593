/* SPDX-License-Identifier: MIT */
/*
 * nccl-tests results as collective samples (docs/orrery-fit.md, "nccl-tests"): what
 * all_reduce_perf and its siblings print, one file per run.  The collective comes from
 * the "# Collective test starting: all_reduce_perf" line newer versions print, else
 * from the caller; the group from the "#  Rank N Group G Pid P on HOST device D ..."
 * lines, one per rank; the link from their hosts (one host: the node's fabric).  Each
 * result line gives the size in bytes (the whole buffer, nccl-tests' S) and, sixth,
 * the out-of-place time in microseconds:
 *
 *   #  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong
 *      8388608  2097152  float  sum  -1  116.8  71.82  125.68  0  ...
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MAX_FILE_BYTES (64u << 20) /* a run's output is kilobytes */
#define HOST_MAX       256

struct parse {
	const char *name;
	struct orr_nccl_tests *t;
	size_t cap;
	char host[HOST_MAX];
	bool hosts_differ;
	struct orr_diag *d;
};

enum orr_coll_kind orr_nccl_tests_kind(const char *s, size_t len)
{
	static const struct {
		const char *test;
		enum orr_coll_kind kind;
	} tests[] = {
		{ "all_reduce", ORR_COLL_ALL_REDUCE },
		{ "all_gather", ORR_COLL_ALL_GATHER },
		{ "reduce_scatter", ORR_COLL_REDUCE_SCATTER },
		{ "alltoall", ORR_COLL_ALL_TO_ALL },
		{ "broadcast", ORR_COLL_BROADCAST },
		{ "reduce", ORR_COLL_REDUCE },
		{ "sendrecv", ORR_COLL_SEND_RECV },
	};

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		size_t n = strlen(tests[i].test);

		if (len >= n && strncmp(s, tests[i].test, n) == 0 &&
		    (len == n || strncmp(s + n, "_perf", 5) == 0))
			return tests[i].kind;
	}
	return ORR_COLL_UNKNOWN;
}

/* "#  Rank  0 Group  0 Pid  1234 on  host device  0 [0x07] NVIDIA A100-SXM4-80GB" */
static int rank_line(struct parse *p, const char *line, int64_t off)
{
	const char *on = strstr(line, " on ");
	size_t len;

	if (!on)
		return orr_diag_set(p->d, ORR_EMALFORMED, p->name, off, -1,
				    "a '#  Rank' line without ' on HOST'");
	on += 4;
	on += strspn(on, " \t");
	len = strcspn(on, " \t\n");
	if (len >= HOST_MAX)
		len = HOST_MAX - 1;
	if (p->t->group == 0) {
		memcpy(p->host, on, len);
		p->host[len] = 0;
	} else if (strlen(p->host) != len || strncmp(p->host, on, len) != 0)
		p->hosts_differ = true;
	p->t->group++;
	return 0;
}

static int comment(struct parse *p, const char *line, int64_t off)
{
	const char *s = line + 1 + strspn(line + 1, " \t");
	static const char start[] = "Collective test starting:";

	if (strncmp(s, "Rank ", 5) == 0)
		return rank_line(p, s, off);
	if (strncmp(s, start, sizeof(start) - 1) == 0) {
		s += sizeof(start) - 1;
		s += strspn(s, " \t");
		p->t->kind = orr_nccl_tests_kind(s, strcspn(s, " \t\n"));
	}
	return 0;
}

/*
 * What a result line may say (issue 31, N12): a size of 1 byte to 1 PiB (nccl-tests
 * runs go to gigabytes), a time of 1 ns to 10^9 us (17 minutes; a collective of
 * nccl-tests takes microseconds to seconds).  Past them the sample is no measurement,
 * and in ns a time of 1e307 us was infinite: the run's fit was dropped without a word.
 */
#define MIN_SIZE 1.0
#define MAX_SIZE 1125899906842624.0 /* 2^50 */
#define MIN_US   1e-3
#define MAX_US   1e9

/* Field v of line (its number), in [lo, hi] or refused naming the line and the value. */
static int in_range(struct parse *p, int64_t off, size_t line, const char *field, double v,
		    double lo, double hi, const char *unit)
{
	if (v >= lo && v <= hi)
		return 0;
	return orr_diag_set(p->d, ORR_EMALFORMED, p->name, off, -1,
			    "line %zu: a result line whose %s, %g %s, is outside [%g, %g] %s", line,
			    field, v, unit, lo, hi, unit);
}

/*
 * The decimal number that is the whole field at f (up to a blank or the line's end), as
 * nccl-tests prints it; NAN for anything else: strtod() also takes "0x400", "inf" and the
 * "1024" of "1024abc", whose rest would then be read as the next field.
 */
static double decimal(const char *f, const char **ret_end)
{
	size_t n = strcspn(f, " \t\r\n");
	char *end;
	double v;

	*ret_end = f + n;
	if (!n || strspn(f, "0123456789.eE+-") != n)
		return NAN;
	v = strtod(f, &end);
	return end == f + n ? v : NAN;
}

/* A result line: its size and out-of-place time; a size of 0 (-b 0) says nothing. */
static int result(struct parse *p, const char *line, int64_t off, size_t lineno)
{
	const char *f = line, *end;
	double v[6];
	int err;

	for (int i = 0; i < 6; i++) {
		f += strspn(f, " \t");
		if (i >= 1 && i <= 4) { /* count, type, redop, root: skipped */
			f += strcspn(f, " \t\n");
			continue;
		}
		v[i] = decimal(f, &end);
		if (i == 0 && v[0] == 0)
			return 0;
		if (!(v[i] > 0) || !isfinite(v[i]))
			return orr_diag_set(p->d, ORR_EMALFORMED, p->name, off, -1,
					    "line %zu: a result line whose %s is not a positive "
					    "number (in decimal digits, as nccl-tests prints it)",
					    lineno,
					    i == 0 ? "size (first field)" : "time (sixth field)");
		f = end;
	}
	if ((err = in_range(p, off, lineno, "size (first field)", v[0], MIN_SIZE, MAX_SIZE,
			    "bytes")) ||
	    (err = in_range(p, off, lineno, "time (sixth field)", v[5], MIN_US, MAX_US, "us")))
		return err;
	if (p->t->n == p->cap)
		p->t->s = orr_xgrow(p->t->s, sizeof(*p->t->s), &p->cap, p->t->n + 1);
	p->t->s[p->t->n++] = (struct orr_coll_sample){ .bytes = v[0], .ns = v[5] * 1e3 };
	return 0;
}

static int parse_lines(struct parse *p, const char *buf, size_t len)
{
	char line[1024];

	for (size_t at = 0, lineno = 1; at < len; lineno++) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;
		size_t keep = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		const char *s;
		int err = 0;

		memcpy(line, buf + at, keep);
		line[keep] = 0;
		s = line + strspn(line, " \t\r");
		/* a result line cut to fit would be read short ("12345" as "123") */
		if (keep < n && (!*s || (*s >= '0' && *s <= '9')))
			return orr_diag_set(p->d, ORR_EMALFORMED, p->name, (int64_t)at, -1,
					    "line %zu: more than %zu bytes (a result line is tens)",
					    lineno, sizeof(line) - 1);
		if (*s == '#')
			err = comment(p, s, (int64_t)at);
		else if (*s >= '0' && *s <= '9')
			err = result(p, s, (int64_t)at, lineno);
		if (err)
			return err;
		at += n + 1;
	}
	return 0;
}

int orr_nccl_tests_parse(const char *name, const char *buf, size_t len, enum orr_coll_kind kind,
			 struct orr_nccl_tests *ret, struct orr_diag *reterr_diag)
{
	struct orr_nccl_tests t = { .kind = ORR_COLL_UNKNOWN };
	struct parse p = { .name = name, .t = &t, .d = reterr_diag };
	int err = parse_lines(&p, buf, len);

	if (!err && t.kind == ORR_COLL_UNKNOWN)
		t.kind = kind;
	if (!err && t.kind == ORR_COLL_UNKNOWN)
		err = orr_diag_set(reterr_diag, ORR_EMALFORMED, name, (int64_t)len, -1,
				   "at its end, no '# Collective test starting:' line has named "
				   "the collective (name it: KIND=FILE)");
	else if (!err && t.group == 0)
		err = orr_diag_set(reterr_diag, ORR_EMALFORMED, name, (int64_t)len, -1,
				   "at its end, no '#  Rank' lines: the group size is unknown");
	else if (!err && t.n == 0)
		err = orr_diag_set(reterr_diag, ORR_EEMPTY, name, (int64_t)len, -1,
				   "at its end, no result lines (expected lines of size, count, "
				   "type, redop, root and time)");
	if (err) {
		free(t.s);
		return err;
	}
	for (size_t i = 0; i < t.n; i++)
		t.s[i].group = t.group;
	t.link = p.hosts_differ ? ORR_LINK_NETWORK : ORR_LINK_NODE;
	*ret = t;
	return 0;
}

int orr_nccl_tests_read(const char *path, enum orr_coll_kind kind, struct orr_nccl_tests *ret,
			struct orr_diag *reterr_diag)
{
	char *buf = NULL;
	size_t len = 0;
	int err = orr_file_read(path, MAX_FILE_BYTES, "an nccl-tests output", 1, &buf, &len,
				reterr_diag);

	if (!err)
		err = orr_nccl_tests_parse(path, buf, len, kind, ret, reterr_diag);
	free(buf);
	return err;
}

void orr_nccl_tests_release(struct orr_nccl_tests *t)
{
	if (!t)
		return;
	free(t->s);
	t->s = NULL;
	t->n = 0;
}
