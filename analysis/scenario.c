/* SPDX-License-Identifier: MIT */
/*
 * What-if scenarios of `orrery replay`: the --scale rules given on the command line (one
 * scenario), and those of a --scenario FILE, a scenario per line:
 *
 *   # comment
 *   NAME GLOB=FACTOR [GLOB=FACTOR]...   # comment
 *
 * Fields are separated by blanks; a NAME holds no '='; a field that starts with '#'
 * starts a comment to the end of the line.  And what each rule matches in a
 * graph: its GPU tasks and their measured time, in the steps of their ranks; and the
 * factors that CPU and communication rules give each task.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

#define SCENARIO_LINE_MAX 4096
#define SCENARIO_FILE_MAX (16u << 20) /* bytes of one --scenario file */

void orr_scenarios_release(struct orr_scenarios *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		orr_scales_release(&s->v[i].scales);
	}
	free(s->v);
	*s = (struct orr_scenarios){ 0 };
}

size_t orr_scales_rule_count(const struct orr_scales *s)
{
	return s->n + s->ngpu + s->ncpu + s->nstall + s->ncomm;
}

const char *orr_scales_rule_label(const struct orr_scales *s, size_t k, char *buf, size_t size)
{
	struct orr_rule r = orr_scales_rule(s, k);
	const char *on = orr_rule_on_name(r.on);

	if (r.rank >= 0)
		snprintf(buf, size, "%s@%d:%s=%g", on, r.rank, r.glob, r.factor);
	else if (r.on == ORR_RULE_GPU)
		snprintf(buf, size, "%s=%g", r.glob, r.factor);
	else
		snprintf(buf, size, "%s:%s=%g", on, r.glob, r.factor);
	return buf;
}

/* "GLOB=F cpu:GLOB=F", the rules in order, as a scenario's name. */
static char *name_of(const struct orr_scales *scales)
{
	size_t len = 1, n = orr_scales_rule_count(scales);
	char *name, *p;

	for (size_t k = 0; k < n; k++)
		len += strlen(orr_scales_rule(scales, k).glob) + 48;
	p = name = orr_xmalloc(len);
	for (size_t k = 0; k < n; k++) {
		if (k)
			*p++ = ' ';
		orr_scales_rule_label(scales, k, p, len - (size_t)(p - name));
		p += strlen(p);
	}
	*p = 0;
	return name;
}

void orr_scenarios_take_scales(struct orr_scenarios *s, struct orr_scales *scales)
{
	struct orr_scenario sc = { .name = name_of(scales), .scales = *scales };

	*scales = (struct orr_scales){ 0 };
	ORR_VEC_PUSH(s->v, s->n, s->cap, sc);
	memmove(s->v + 1, s->v, (s->n - 1) * sizeof(*s->v));
	s->v[0] = sc;
}

/*
 * One line's fields into a scenario; -1 with the reason in err and, in *ret_at, the
 * offset in line of the field it is about.
 */
static int parse_line(char *line, struct orr_scenario *sc, char *err, size_t size, size_t *ret_at)
{
	char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);

	*ret_at = (size_t)(tok - line);
	if (strchr(tok, '=')) {
		snprintf(err, size, "a scenario starts with its name, not a rule ('%.60s')", tok);
		return -1;
	}
	sc->name = orr_xstrdup(tok);
	while ((tok = strtok_r(NULL, " \t\r\n", &save)) && tok[0] != '#') {
		if (orr_scales_add(&sc->scales, tok) < 0) {
			*ret_at = (size_t)(tok - line);
			snprintf(
				err, size,
				"bad rule '%.60s' ([gpu[@RANK]:|cpu[@RANK]:|stalls[@RANK]:|latency:|bandwidth:]GLOB=FACTOR, FACTOR 0 to 1e6, a bandwidth's from 1e-6)",
				tok);
			return -1;
		}
	}
	if (!orr_scales_rule_count(&sc->scales)) {
		snprintf(err, size, "scenario '%.60s' has no rule", sc->name);
		return -1;
	}
	return 0;
}

/*
 * One line of a scenario file (NUL-terminated, no newline), at byte `at` of the file: a
 * scenario added, or skipped.  An error names the line and the byte of the field.
 */
static int scenario_line(struct orr_scenarios *s, struct orr_strtab *names, char *line,
			 const char *path, size_t lineno, size_t at, char *err, size_t size)
{
	struct orr_scenario sc = { 0 };
	char why[192], *p = line + strspn(line, " \t\r");
	size_t field;

	if (!*p || *p == '#')
		return 0;
	at += (size_t)(p - line);
	if (parse_line(p, &sc, why, sizeof(why), &field) < 0) {
		snprintf(err, size, "%s:%zu (byte %zu): %s", path, lineno, at + field, why);
		free(sc.name);
		orr_scales_release(&sc.scales);
		return -1;
	}
	/*
	 * The name tells the report's rows apart: two of one name would be a guess.  Looked
	 * up in a table (names), not among every scenario: a file may hold millions.
	 */
	if (orr_strtab_find(names, sc.name, strlen(sc.name)) != UINT32_MAX) {
		snprintf(err, size, "%s:%zu (byte %zu): a second scenario named '%.60s'", path,
			 lineno, at, sc.name);
		free(sc.name);
		orr_scales_release(&sc.scales);
		return -1;
	}
	orr_strtab_intern(names, sc.name, strlen(sc.name));
	ORR_VEC_PUSH(s->v, s->n, s->cap, sc);
	return 0;
}

/* Read through the one input opener (orr_file_read()): a FIFO or a device is refused. */
int orr_scenarios_read(struct orr_scenarios *s, const char *path, char *err, size_t size)
{
	struct orr_diag d = { 0 };
	struct orr_strtab *names;
	char *buf, *line, *end, *nul;
	size_t len, lineno = 0, before = s->n;
	int r = orr_file_read(path, SCENARIO_FILE_MAX, "a scenario file", 1, &buf, &len, &d);

	if (r) {
		snprintf(err, size, "cannot read '%s': %s%s%s", path, orr_strerror(r),
			 d.msg[0] ? ": " : "", d.msg);
		return -1;
	}
	names = orr_strtab_new();
	for (size_t i = 0; i < s->n; i++)
		orr_strtab_intern(names, s->v[i].name, strlen(s->v[i].name));
	for (line = buf; line < buf + len && r == 0; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len; /* the last line, without its newline */
		lineno++;
		if ((size_t)(end - line) > SCENARIO_LINE_MAX - 2) {
			snprintf(err, size, "%s:%zu (byte %zu): line longer than %d bytes", path,
				 lineno, (size_t)(line - buf) + SCENARIO_LINE_MAX - 2,
				 SCENARIO_LINE_MAX - 2);
			r = -1;
			break;
		}
		*end = '\0';
		if ((nul = memchr(line, '\0', (size_t)(end - line)))) {
			snprintf(err, size, "%s:%zu (byte %zu): a NUL byte", path, lineno,
				 (size_t)(nul - buf));
			r = -1;
			break;
		}
		r = scenario_line(s, names, line, path, lineno, (size_t)(line - buf), err, size);
	}
	orr_strtab_free(names);
	free(buf);
	if (r)
		return -1;
	if (s->n == before) {
		snprintf(err, size, "%s: no scenario (lines of NAME GLOB=FACTOR...)", path);
		return -1;
	}
	return 0;
}

/* Whether measured time t of graph rank k lies in one of its steps. */
static bool in_steps(const struct orr_replay_step *steps, size_t n, int64_t t)
{
	for (size_t i = 0; i < n; i++)
		if (t >= steps[i].measured_start_ns && t < steps[i].measured_end_ns)
			return true;
	return false;
}

void orr_rule_matches(const struct orr_replay *r, const struct orr_scales *scales,
		      struct orr_rule_match *ret)
{
	const struct orr_graph *g = orr_replay_graph(r);
	const struct orr_task *tasks = orr_graph_tasks(g);

	memset(ret, 0, scales->n * sizeof(*ret));
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		struct orr_replay_step *steps;
		size_t nsteps;

		orr_replay_steps(r, k, &steps, &nsteps);
		for (size_t i = 0; i < scales->n; i++)
			ret[i].rank_steps += nsteps;
		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			const char *name;

			if (tasks[t].kind != ORR_TASK_GPU ||
			    !in_steps(steps, nsteps, orr_graph_task_start(g, t)))
				continue;
			name = orr_graph_task_name(g, t);
			for (size_t i = 0; i < scales->n; i++)
				if (fnmatch(scales->v[i].glob, name, 0) == 0) {
					ret[i].tasks++;
					ret[i].gpu_ns += tasks[t].dur_ns;
				}
		}
		free(steps);
	}
}

float *orr_gpu_factors(const struct orr_graph *g, const struct orr_scales *s,
		       const struct orr_replay *steps_from, struct orr_rule_match *ret)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	float *f;

	if (!s || !s->ngpu)
		return NULL;
	if (ret)
		memset(ret, 0, s->ngpu * sizeof(*ret));
	f = orr_xmalloc((orr_graph_task_count(g) + 1) * sizeof(*f));
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		struct orr_replay_step *steps = NULL;
		size_t nsteps = 0;

		if (steps_from)
			orr_replay_steps(steps_from, k, &steps, &nsteps);
		for (size_t i = 0; ret && i < s->ngpu; i++)
			ret[i].rank_steps += s->gpu[i].rank == gr->rank->rank ? nsteps : 0;
		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			const char *name;
			double x = 1;

			f[t] = 1;
			if (tasks[t].kind != ORR_TASK_GPU)
				continue;
			name = orr_graph_task_name(g, t);
			for (size_t i = 0; i < s->ngpu; i++) {
				if (s->gpu[i].rank != gr->rank->rank ||
				    fnmatch(s->gpu[i].glob, name, 0) != 0)
					continue;
				x *= s->gpu[i].factor;
				if (ret && in_steps(steps, nsteps, orr_graph_task_start(g, t))) {
					ret[i].tasks++;
					ret[i].gpu_ns += tasks[t].dur_ns;
				}
			}
			f[t] = x < ORR_SCALE_MAX ? (float)x : (float)ORR_SCALE_MAX;
		}
		free(steps);
	}
	return f;
}

/* Whether CPU rule k applies to CPU task t of rank `rank`, named call (and gap). */
static bool cpu_rule_matches(const struct orr_cpu_rule *rule, int32_t rank, const char *call,
			     const char *gap)
{
	return (rule->rank < 0 || rule->rank == rank) &&
	       (fnmatch(rule->glob, call, 0) == 0 || fnmatch(rule->glob, gap, 0) == 0);
}

/*
 * The factor of task t's time (span ns: its duration and the time before it) under the
 * stall rules of s that match it, its stall `stall` ns; ret as orr_cpu_factors()'s
 * stall part (NULL: not counted).
 */
static double stall_factor(const struct orr_scales *s, int32_t rank, const char *call,
			   const char *gap, double stall, double span, bool counted,
			   struct orr_rule_match *ret)
{
	double x = 1;

	if (!(stall > 0) || !(span > 0))
		return 1;
	for (size_t i = 0; i < s->nstall; i++) {
		if (!cpu_rule_matches(&s->stall[i], rank, call, gap))
			continue;
		/* the stall scaled, the rest of the task's time kept; rules one after another */
		x *= 1 - fmin(stall, span) * (1 - s->stall[i].factor) / span;
		if (ret && counted) {
			ret[i].tasks++;
			ret[i].gpu_ns += (int64_t)llround(stall);
		}
	}
	return x > 0 ? x : 0;
}

float *orr_cpu_factors(const struct orr_graph *g, const struct orr_scales *s,
		       const struct orr_replay *steps_from, struct orr_rule_match *ret)
{
	const struct orr_trace *tr = orr_graph_trace(g);
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct orr_op_names *names;
	float *f, *stalls = NULL;
	double stalled;

	if (!s || (!s->ncpu && !s->nstall))
		return NULL;
	if (ret)
		memset(ret, 0, (s->ncpu + s->nstall) * sizeof(*ret));
	if (s->nstall)
		stalls = orr_launch_stalls(g, &stalled);
	names = orr_op_names_new(g);
	f = orr_xmalloc((orr_graph_task_count(g) + 1) * sizeof(*f));
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		struct orr_replay_step *steps = NULL;
		size_t nsteps = 0;

		if (steps_from)
			orr_replay_steps(steps_from, k, &steps, &nsteps);
		for (size_t i = 0; ret && i < s->ncpu + s->nstall; i++) {
			int32_t rank = i < s->ncpu ? s->cpu[i].rank : s->stall[i - s->ncpu].rank;

			ret[i].rank_steps += rank < 0 || rank == gr->rank->rank ? nsteps : 0;
		}
		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			int64_t start = orr_graph_task_start(g, t);
			bool counted = ret && in_steps(steps, nsteps, start);
			const char *call, *gap;
			uint32_t at;
			double x = 1;

			f[t] = 1;
			if (tasks[t].kind != ORR_TASK_CPU)
				continue;
			call = orr_trace_str(tr, orr_op_name(names, t));
			at = orr_op_name_at(names, t, start - tasks[t].gap_ns / 2);
			gap = at == ORR_STR_NONE ? call : orr_trace_str(tr, at);
			for (size_t i = 0; i < s->ncpu; i++) {
				if (!cpu_rule_matches(&s->cpu[i], gr->rank->rank, call, gap))
					continue;
				x *= s->cpu[i].factor;
				if (counted) {
					ret[i].tasks++;
					ret[i].gpu_ns += tasks[t].dur_ns + tasks[t].gap_ns;
				}
			}
			if (stalls)
				x *= stall_factor(s, gr->rank->rank, call, gap, (double)stalls[t],
						  (double)(tasks[t].dur_ns + tasks[t].gap_ns),
						  counted, ret ? ret + s->ncpu : NULL);
			f[t] = x < ORR_SCALE_MAX ? (float)x : (float)ORR_SCALE_MAX;
		}
		free(steps);
	}
	orr_op_names_free(names);
	free(stalls);
	return f;
}

/* ---- communication rules: latency and bandwidth ---- */

/* A collective kernel's time d (its instance's shortest member) and latency part. */
struct split {
	double d, latency; /* NAN: unknown */
};

/* The model of collective o[i]'s kind and link fitted on the trace's collectives o. */
static const struct orr_coll_model *trace_model(struct orr_rank_fit_coll **v, size_t *n,
						size_t *cap, const struct orr_coll_obs *o,
						size_t no, size_t i)
{
	struct orr_rank_fit_coll *c = NULL;

	for (size_t k = 0; k < *n && !c; k++)
		if ((*v)[k].kind == o[i].kind && (*v)[k].link == o[i].link)
			c = &(*v)[k];
	if (!c) {
		ORR_VEC_PUSH(*v, *n, *cap,
			     ((struct orr_rank_fit_coll){ .kind = o[i].kind, .link = o[i].link }));
		c = &(*v)[*n - 1];
		orr_rank_fit_coll_class(o, no, c);
	}
	return c->err || !c->m.constrained ? NULL : &c->m;
}

/*
 * The model of a costs file for a collective of that kind and link; for a link the
 * trace does not tell, the first of its kind.
 */
static const struct orr_coll_model *costs_model(const struct orr_costs *costs,
						const struct orr_coll_obs *o)
{
	const struct orr_coll_model *any = NULL;

	for (size_t k = 0; k < costs->ncoll; k++) {
		const struct orr_coll_costs *c = &costs->coll[k];

		if (c->kind != o->kind || !c->fitted || !c->m.constrained)
			continue;
		if (c->link == o->link)
			return &c->m;
		any = any ? any : &c->m;
	}
	return o->link == ORR_LINK_UNKNOWN ? any : NULL;
}

/*
 * Per task of g, its split, by the models of costs (NULL: those fitted on g); a coupled
 * instance's members share theirs.
 */
static struct split *comm_splits(const struct orr_graph *g, const struct orr_costs *costs)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_group *groups = orr_graph_groups(g);
	const uint32_t *members = orr_graph_members(g);
	size_t nt = orr_graph_task_count(g), ncls = 0, cap = 0;
	struct split *sp = orr_xmalloc((nt + 1) * sizeof(*sp));
	struct orr_rank_fit_coll *cls = NULL;
	struct orr_coll_obs *o;
	size_t n = orr_coll_observe(g, &o);

	for (size_t t = 0; t < nt; t++)
		sp[t] = (struct split){ NAN, NAN };
	for (size_t i = 0; i < n; i++) {
		const struct orr_coll_model *m = costs ? costs_model(costs, &o[i])
						       : trace_model(&cls, &ncls, &cap, o, n, i);
		uint32_t t = o[i].task, gi = tasks[t].aux;
		struct split x = { o[i].s.ns, NAN };

		if (!m)
			continue;
		x.latency = orr_coll_model_latency(m, o[i].s.bytes, o[i].s.group);
		if (isnan(x.latency))
			continue;
		x.latency = x.latency < 0 ? 0 : x.latency > x.d ? x.d : x.latency;
		if (gi == ORR_NONE)
			sp[t] = x;
		else
			for (uint32_t k = 0; k < groups[gi].n; k++)
				sp[members[groups[gi].first + k]] = x;
	}
	free(cls);
	free(o);
	return sp;
}

float *orr_comm_factors(const struct orr_graph *g, const struct orr_scales *s,
			const struct orr_costs *costs, const struct orr_replay *steps_from,
			struct orr_rule_match *ret)
{
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct split *sp;
	float *f;

	if (!s || !s->ncomm)
		return NULL;
	if (ret)
		memset(ret, 0, s->ncomm * sizeof(*ret));
	sp = comm_splits(g, costs);
	f = orr_xmalloc((orr_graph_task_count(g) + 1) * sizeof(*f));
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		struct orr_replay_step *steps = NULL;
		size_t nsteps = 0;

		if (steps_from)
			orr_replay_steps(steps_from, k, &steps, &nsteps);
		for (size_t i = 0; ret && i < s->ncomm; i++)
			ret[i].rank_steps += nsteps;
		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			bool any = false, counted;
			double lat = 1, bw = 1, x;
			const char *name;

			f[t] = 1;
			if (tasks[t].kind != ORR_TASK_GPU || !(tasks[t].flags & ORR_TASK_F_COMM))
				continue;
			name = orr_graph_task_name(g, t);
			counted = ret && in_steps(steps, nsteps, orr_graph_task_start(g, t));
			for (size_t i = 0; i < s->ncomm; i++) {
				if (fnmatch(s->comm[i].glob, name, 0) != 0)
					continue;
				any = true;
				*(s->comm[i].bandwidth ? &bw : &lat) *= s->comm[i].factor;
				if (!counted)
					continue;
				ret[i].tasks++;
				ret[i].gpu_ns += tasks[t].dur_ns;
				if (isnan(sp[t].latency))
					ret[i].unsplit++;
				else
					ret[i].latency_ns += (int64_t)llround(sp[t].latency);
			}
			if (!any || isnan(sp[t].latency))
				continue;
			x = (sp[t].latency * lat + (sp[t].d - sp[t].latency) / bw) / sp[t].d;
			f[t] = x < ORR_SCALE_MAX ? (float)x : (float)ORR_SCALE_MAX;
		}
		free(steps);
	}
	free(sp);
	return f;
}

void orr_scenario_options(struct orr_scenario_replay *ret, const struct orr_graph *g,
			  const struct orr_scales *s, const struct orr_costs *costs,
			  const struct orr_replay *base, struct orr_rule_match *matches)
{
	bool m = matches && base;
	float *gpu, *comm;

	if (m)
		orr_rule_matches(base, s, matches);
	gpu = orr_gpu_factors(g, s, base, m ? matches + s->n : NULL);
	ret->cpu = orr_cpu_factors(g, s, base, m ? matches + s->n + s->ngpu : NULL);
	comm = orr_comm_factors(g, s, costs, base,
				m ? matches + s->n + s->ngpu + s->ncpu + s->nstall : NULL);
	/* One rank's GPU rules and the communication ones: one factor per task. */
	if (gpu && comm) {
		for (size_t t = 0; t < orr_graph_task_count(g); t++) {
			double x = (double)gpu[t] * comm[t];

			gpu[t] = x < ORR_SCALE_MAX ? (float)x : (float)ORR_SCALE_MAX;
		}
		free(comm);
		comm = NULL;
	}
	ret->task = gpu ? gpu : comm;
	/* Against the baseline, as orrery estimate re-times a graph: a thread's first call
	 * handed its work by another (D6) moves with the call that handed it off. */
	ret->opts = (struct orr_replay_options){ .scales = s->v,
						 .nscales = s->n,
						 .task_factors = ret->task,
						 .cpu_factors = ret->cpu,
						 .baseline = base };
}

void orr_scenario_options_release(struct orr_scenario_replay *r)
{
	free(r->cpu);
	free(r->task);
	*r = (struct orr_scenario_replay){ 0 };
}
