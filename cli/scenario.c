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
 * graph: its GPU tasks and their measured time, in the steps of their ranks.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay-common.h"
#include "banned.h"

#define SCENARIO_LINE_MAX 4096

void cli_scenarios_release(struct cli_scenarios *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		cli_scales_release(&s->v[i].scales);
	}
	free(s->v);
	*s = (struct cli_scenarios){ 0 };
}

/* "GLOB=F cpu:GLOB=F", the rules in order (GPU ones first), as a scenario's name. */
static char *name_of(const struct cli_scales *scales)
{
	size_t len = 1;
	char *name, *p;

	for (size_t i = 0; i < scales->n; i++)
		len += strlen(scales->v[i].glob) + 32;
	for (size_t i = 0; i < scales->ncpu; i++)
		len += strlen(scales->cpu[i].glob) + 48;
	p = name = orr_xmalloc(len);
	for (size_t i = 0; i < scales->n; i++)
		p += snprintf(p, len - (size_t)(p - name), "%s%s=%g", i ? " " : "",
			      scales->v[i].glob, scales->v[i].factor);
	for (size_t i = 0; i < scales->ncpu; i++) {
		const struct cli_cpu_rule *c = &scales->cpu[i];

		if (c->rank >= 0)
			p += snprintf(p, len - (size_t)(p - name), "%scpu@%d:%s=%g",
				      p > name ? " " : "", c->rank, c->glob, c->factor);
		else
			p += snprintf(p, len - (size_t)(p - name), "%scpu:%s=%g",
				      p > name ? " " : "", c->glob, c->factor);
	}
	*p = 0;
	return name;
}

void cli_scenarios_take_scales(struct cli_scenarios *s, struct cli_scales *scales)
{
	struct cli_scenario sc = { .name = name_of(scales), .scales = *scales };

	*scales = (struct cli_scales){ 0 };
	ORR_VEC_PUSH(s->v, s->n, s->cap, sc);
	memmove(s->v + 1, s->v, (s->n - 1) * sizeof(*s->v));
	s->v[0] = sc;
}

/* One line's fields into a scenario; -1 with the reason in err. */
static int parse_line(char *line, struct cli_scenario *sc, char *err, size_t size)
{
	char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);

	if (strchr(tok, '=')) {
		snprintf(err, size, "a scenario starts with its name, not a rule ('%.60s')", tok);
		return -1;
	}
	sc->name = orr_xstrdup(tok);
	while ((tok = strtok_r(NULL, " \t\r\n", &save)) && tok[0] != '#') {
		if (cli_scales_add(&sc->scales, tok) < 0) {
			snprintf(err, size,
				 "bad rule '%.60s' ([cpu[@RANK]:]GLOB=FACTOR, FACTOR 0 to 1e6)",
				 tok);
			return -1;
		}
	}
	if (!sc->scales.n && !sc->scales.ncpu) {
		snprintf(err, size, "scenario '%.60s' has no rule", sc->name);
		return -1;
	}
	return 0;
}

int cli_scenarios_read(struct cli_scenarios *s, const char *path, char *err, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[SCENARIO_LINE_MAX];
	size_t lineno = 0, before = s->n;

	if (!f) {
		snprintf(err, size, "cannot read '%s': %s", path, orr_strerror(-errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct cli_scenario sc = { 0 };
		char why[160], *p = line + strspn(line, " \t\r\n");

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, size, "%s:%zu: line longer than %d bytes", path, lineno,
				 SCENARIO_LINE_MAX - 2);
			fclose(f);
			return -1;
		}
		if (!*p || *p == '#')
			continue;
		if (parse_line(p, &sc, why, sizeof(why)) < 0) {
			snprintf(err, size, "%s:%zu: %s", path, lineno, why);
			free(sc.name);
			cli_scales_release(&sc.scales);
			fclose(f);
			return -1;
		}
		ORR_VEC_PUSH(s->v, s->n, s->cap, sc);
	}
	fclose(f);
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

void cli_rule_matches(const struct orr_replay *r, const struct cli_scales *scales,
		      struct cli_rule_match *ret)
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

/* Whether CPU rule k applies to CPU task t of rank `rank`, named call (and gap). */
static bool cpu_rule_matches(const struct cli_cpu_rule *rule, int32_t rank, const char *call,
			     const char *gap)
{
	return (rule->rank < 0 || rule->rank == rank) &&
	       (fnmatch(rule->glob, call, 0) == 0 || fnmatch(rule->glob, gap, 0) == 0);
}

float *cli_cpu_factors(const struct orr_graph *g, const struct cli_scales *s,
		       const struct orr_replay *steps_from, struct cli_rule_match *ret)
{
	const struct orr_trace *tr = orr_graph_trace(g);
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct cli_op_names *names;
	float *f;

	if (!s || !s->ncpu)
		return NULL;
	if (ret)
		memset(ret, 0, s->ncpu * sizeof(*ret));
	names = cli_op_names_new(g);
	f = orr_xmalloc((orr_graph_task_count(g) + 1) * sizeof(*f));
	for (size_t k = 0; k < orr_graph_rank_count(g); k++) {
		const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);
		struct orr_replay_step *steps = NULL;
		size_t nsteps = 0;

		if (steps_from)
			orr_replay_steps(steps_from, k, &steps, &nsteps);
		for (size_t i = 0; ret && i < s->ncpu; i++)
			ret[i].rank_steps +=
				s->cpu[i].rank < 0 || s->cpu[i].rank == gr->rank->rank ? nsteps : 0;
		for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
			int64_t start = orr_graph_task_start(g, t);
			const char *call, *gap;
			double x = 1;

			f[t] = 1;
			if (tasks[t].kind != ORR_TASK_CPU)
				continue;
			call = orr_trace_str(tr, cli_op_name(names, t));
			gap = orr_trace_str(tr,
					    cli_op_name_at(names, t, start - tasks[t].gap_ns / 2));
			for (size_t i = 0; i < s->ncpu; i++) {
				if (!cpu_rule_matches(&s->cpu[i], gr->rank->rank, call, gap))
					continue;
				x *= s->cpu[i].factor;
				if (ret && in_steps(steps, nsteps, start)) {
					ret[i].tasks++;
					ret[i].gpu_ns += tasks[t].dur_ns + tasks[t].gap_ns;
				}
			}
			f[t] = x < ORR_SCALE_MAX ? (float)x : (float)ORR_SCALE_MAX;
		}
		free(steps);
	}
	cli_op_names_free(names);
	return f;
}
