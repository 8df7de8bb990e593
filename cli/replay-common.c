/* SPDX-License-Identifier: MIT */
/* What `orrery replay` and `orrery critical-path` share: --scale, --comm, loading, step errors. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

/* "cpu:" or "cpu@RANK:" before a CPU rule's glob: its length, the rank in *ret_rank. */
static size_t cpu_prefix(const char *arg, int32_t *ret_rank)
{
	char *end;
	long r;

	*ret_rank = -1;
	if (strncmp(arg, "cpu:", 4) == 0)
		return 4;
	if (strncmp(arg, "cpu@", 4) != 0)
		return 0;
	if (arg[4] < '0' || arg[4] > '9')
		return (size_t)-1;
	r = strtol(arg + 4, &end, 10);
	if (*end != ':' || r > INT32_MAX)
		return (size_t)-1;
	*ret_rank = (int32_t)r;
	return (size_t)(end + 1 - arg);
}

/* "latency:" or "bandwidth:" before a communication rule's glob: its length, else 0. */
static size_t comm_prefix(const char *arg, bool *ret_bandwidth)
{
	*ret_bandwidth = strncmp(arg, "bandwidth:", 10) == 0;
	if (*ret_bandwidth)
		return 10;
	return strncmp(arg, "latency:", 8) == 0 ? 8 : 0;
}

int cli_scales_add(struct cli_scales *s, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	int32_t rank;
	bool bw;
	size_t pre = cpu_prefix(arg, &rank), cpre = comm_prefix(arg, &bw);
	char *end;
	double f;

	if (pre == (size_t)-1 || !eq || eq == arg + pre || eq == arg + cpre)
		return -1;
	f = strtod(eq + 1, &end);
	/* Beyond ORR_SCALE_MAX a millisecond kernel would outlast 2^62 ns in a few steps. */
	if (end == eq + 1 || *end || !(f >= 0 && f <= ORR_SCALE_MAX))
		return -1;
	/* A bandwidth divides the transfer: 1/ORR_SCALE_MAX at least, as a factor is. */
	if (cpre && bw && !(f >= 1 / ORR_SCALE_MAX))
		return -1;
	if (cpre)
		ORR_VEC_PUSH(s->comm, s->ncomm, s->commcap,
			     ((struct cli_comm_rule){
				     orr_xstrndup(arg + cpre, (size_t)(eq - arg) - cpre), f, bw }));
	else if (pre)
		ORR_VEC_PUSH(s->cpu, s->ncpu, s->cpucap,
			     ((struct cli_cpu_rule){
				     orr_xstrndup(arg + pre, (size_t)(eq - arg) - pre), f, rank }));
	else
		ORR_VEC_PUSH(s->v, s->n, s->cap,
			     ((struct orr_scale){ orr_xstrndup(arg, (size_t)(eq - arg)), f }));
	return 0;
}

void cli_scales_release(struct cli_scales *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((char *)s->v[i].glob);
	for (size_t i = 0; i < s->ncpu; i++)
		free(s->cpu[i].glob);
	for (size_t i = 0; i < s->ncomm; i++)
		free(s->comm[i].glob);
	free(s->comm);
	free(s->cpu);
	free(s->v);
	*s = (struct cli_scales){ 0 };
}

int cli_globs_add(struct cli_globs *g, const char *glob)
{
	if (!glob[0])
		return -1;
	ORR_VEC_PUSH(g->v, g->n, g->cap, glob);
	return 0;
}

void cli_globs_release(struct cli_globs *g)
{
	free(g->v);
	*g = (struct cli_globs){ 0 };
}

int cli_replay_open(const char *path, const struct cli_scales *scales, const struct cli_globs *comm,
		    struct cli_replay *ret)
{
	struct orr_import_options iopts = { .warn = cli_import_warn };
	struct orr_replay_options opts = { 0 };
	struct orr_graph_options gopts = { 0 };
	struct orr_diag diag;
	const char *in_file;
	char *in_tmp;
	int err;

	*ret = (struct cli_replay){ 0 };
	if (scales)
		opts = (struct orr_replay_options){ .scales = scales->v, .nscales = scales->n };
	if (comm)
		gopts = (struct orr_graph_options){ .comm_globs = comm->v, .ncomm_globs = comm->n };
	if (cli_input(path, &iopts, &in_file, &in_tmp) < 0)
		return EXIT_FAIL;
	cli_import_progress(&iopts, in_file);
	err = orr_trace_import(in_file, &iopts, &ret->t, &diag);
	cli_progress_done();
	cli_input_done(in_tmp);
	if (err) {
		cli_import_error(path, err, &diag);
		return EXIT_FAIL;
	}
	orr_diag_clear(&diag);
	err = cli_graph_build(ret->t, &gopts, &ret->g, &diag);
	if (!err) {
		struct cli_scenario_replay sr = { .opts = opts };

		if (scales)
			cli_scenario_options(&sr, ret->g, scales, NULL, NULL, NULL);
		err = cli_replay_run(ret->g, &sr.opts, &ret->r, &diag);
		cli_scenario_options_release(&sr);
	}
	if (err) {
		cli_error("cannot replay '%s': %s%s%s", path, orr_strerror(err),
			  diag.msg[0] ? ": " : "", diag.msg);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void cli_replay_close(struct cli_replay *cr)
{
	orr_replay_free(cr->r);
	orr_graph_free(cr->g);
	orr_trace_free(cr->t);
	*cr = (struct cli_replay){ 0 };
}

double cli_step_error(const struct orr_replay_step *s)
{
	int64_t m = orr_time_sub(s->measured_end_ns, s->measured_start_ns);
	int64_t p = orr_time_sub(s->predicted_end_ns, s->predicted_start_ns);

	return m > 0 ? fabs((double)p - (double)m) / (double)m : NAN;
}

const char *cli_step_label(int64_t step, char *buf, size_t size)
{
	char tmp[24];
	size_t k = sizeof(tmp), len;
	uint64_t n = (uint64_t)step;

	if (step < 0) {
		snprintf(buf, size, "all");
		return buf;
	}
	/* By hand, as cli_ms(): one per row of a report of a million steps. */
	do
		tmp[--k] = (char)('0' + n % 10);
	while (n /= 10);
	len = sizeof(tmp) - k < size ? sizeof(tmp) - k : size - 1;
	memcpy(buf, tmp + k, len);
	buf[len] = 0;
	return buf;
}

/* A decimal from 0 to max, the whole of [s, e); -1 otherwise. */
static int64_t parse_num(const char *s, const char *e, int64_t max)
{
	int64_t v = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* "A" or "A-B" with A <= B into lo, hi; -1 when malformed. */
static int parse_range(const char *s, const char *e, int64_t max, int64_t *lo, int64_t *hi)
{
	const char *dash = memchr(s, '-', (size_t)(e - s));

	*lo = parse_num(s, dash ? dash : e, max);
	*hi = dash ? parse_num(dash + 1, e, max) : *lo;
	return *lo < 0 || *hi < *lo ? -1 : 0;
}

static int select_steps(struct orr_select *s, const char *arg)
{
	if (parse_range(arg, arg + strlen(arg), INT64_MAX, &s->step_lo, &s->step_hi) < 0)
		return -1;
	s->steps_given = true;
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int select_ranks(struct orr_select *s, const char *arg)
{
	const char *p = arg;

	do {
		const char *e = strchr(p, ',');
		int64_t lo, hi;

		e = e ? e : p + strlen(p);
		if (parse_range(p, e, INT32_MAX, &lo, &hi) < 0 || hi - lo > 1 << 20)
			return -1;
		for (int64_t r = lo; r <= hi; r++)
			ORR_VEC_PUSH(s->ranks, s->nranks, s->cap, (int32_t)r);
		p = *e ? e + 1 : e;
	} while (*p);
	if (p > arg && p[-1] == ',')
		return -1;
	qsort(s->ranks, s->nranks, sizeof(*s->ranks), cmp_rank);
	return 0;
}

int cli_select_option(struct orr_select *s, const char *cmd, int opt, const char *arg)
{
	if (opt == 'p' && select_steps(s, arg) < 0) {
		cli_usage_error(cmd, "bad --steps '%s' (A or A-B)", arg);
		return -1;
	}
	if (opt == 'r' && select_ranks(s, arg) < 0) {
		cli_usage_error(cmd, "bad --ranks '%s' (a list like 0,2,4-7)", arg);
		return -1;
	}
	return 0;
}

void cli_select_nothing(const struct orr_select *s, const char *trace)
{
	if (s->steps_given || s->ranks)
		cli_error("--steps and --ranks select no rank-step of '%s' ('orrery info' lists "
			  "them)",
			  trace);
	else
		cli_error("'%s' holds no step: no CPU or GPU task was read ('orrery info' lists "
			  "what it holds)",
			  trace);
}
