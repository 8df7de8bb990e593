/* SPDX-License-Identifier: MIT */
/*
 * bench-replay: the graph build and replay benchmark (DESIGN.md goals: graph build
 * >= 5 M events/s and replay >= 10 M tasks/s per core; 1,024 ranks x 100 k events end to
 * end in <= 60 s and <= 12 GB on 2 cores).  bench/run.sh drives it.
 *
 *   bench-replay [--ranks R] [--events E] [--steps S] [--tp N] [--seed N] [--check] [--json]
 *                [--generate-only]
 *
 * Generates a synthetic job in memory (gen-job.h: R ranks of about E events), builds its
 * graph (orr_graph_build()) and replays it (orr_replay_run()), timing each phase with the
 * monotonic clock, then prints events, tasks, seconds, rates and the peak RSS (getrusage);
 * --json also each phase's system time and minor page faults.
 * --check also verifies, outside the timings, that every rank has every step and compares
 * the predicted job steps with the measured ones.  --json prints one JSON line instead.
 * --generate-only stops after the generator (to profile it).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "gen-job.h"
#include "orrery/trace.h"
#include "orrery/graph.h"
#include "orrery/replay.h"
#include "../common/banned.h"

/*
 * A phase's wall-clock and CPU seconds (the CPU time is what "per core" means), and of
 * the CPU time the kernel's share and the minor page faults (first touches) in it.
 */
struct phase {
	double wall_s, cpu_s, sys_s;
	int64_t minflt;
};

enum { P_GEN, P_GRAPH, P_REPLAY, N_PHASES };

struct result {
	uint64_t events, tasks, edges;
	struct phase ph[N_PHASES];
	int64_t max_rss_kb;
};

static const char usage[] =
	"usage: bench-replay [--ranks R] [--events E] [--steps S] [--tp N] [--seed N]\n"
	"                    [--check] [--json] [--generate-only]\n";

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timer {
	int64_t wall_ns, cpu_ns, sys_us, minflt;
};

static struct timer timer_start(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct timer){ orr_now_ns(), cpu_ns(),
			       (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
			       ru.ru_minflt };
}

static struct phase timer_stop(struct timer t)
{
	struct timer e = timer_start();

	return (struct phase){ (double)(e.wall_ns - t.wall_ns) / 1e9,
			       (double)(e.cpu_ns - t.cpu_ns) / 1e9,
			       (double)(e.sys_us - t.sys_us) / 1e6, e.minflt - t.minflt };
}

static double rate_m(uint64_t n, double s)
{
	return s > 0 ? (double)n / 1e6 / s : 0;
}

static bool parse_size(const char *s, size_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > SIZE_MAX)
		return false;
	*ret = (size_t)v;
	return true;
}

struct flags {
	bool check, json, generate_only;
};

/* Returns 0, or 2 after printing the usage. */
static int parse_args(int argc, char **argv, struct gen_job_options *o, struct flags *f)
{
	static const struct option longopts[] = {
		{ "ranks", required_argument, NULL, 'r' },
		{ "events", required_argument, NULL, 'e' },
		{ "steps", required_argument, NULL, 's' },
		{ "tp", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "check", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "generate-only", no_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	size_t seed = (size_t)o->seed;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		bool ok = true;

		if (c == 'r')
			ok = parse_size(optarg, &o->ranks);
		else if (c == 'e')
			ok = parse_size(optarg, &o->events_per_rank);
		else if (c == 's')
			ok = parse_size(optarg, &o->steps);
		else if (c == 't')
			ok = parse_size(optarg, &o->tp);
		else if (c == 'S')
			ok = parse_size(optarg, &seed);
		else if (c == 'c')
			f->check = true;
		else if (c == 'j')
			f->json = true;
		else if (c == 'g')
			f->generate_only = true;
		else
			ok = false;
		if (!ok || c == 'h') {
			fputs(usage, c == 'h' ? stdout : stderr);
			return 2;
		}
	}
	o->seed = seed;
	if (optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

/* Every rank has every step: the generator and the step finder agree. */
static int check_steps(const struct orr_trace *t, size_t steps)
{
	struct orr_step *s;
	size_t n;

	orr_trace_job_steps(t, &s, &n);
	free(s);
	if (n != steps) {
		fprintf(stderr, "bench-replay: error: %zu job steps found, %zu generated\n", n,
			steps);
		return -1;
	}
	return 0;
}

/* What the graph found: every dependency kind the generator writes should be there. */
static void report_graph(const struct orr_graph_stats *st)
{
	fprintf(stderr, "check: edges");
	for (int k = 1; k < ORR_DEP_COUNT; k++)
		fprintf(stderr, " %s %" PRIu64 " (%" PRIu64 " inferred),",
			orr_dep_kind_name((enum orr_dep_kind)k), st->edges[k], st->inferred[k]);
	fprintf(stderr,
		" groups %" PRIu64 ", rejected %" PRIu64 ", alone %" PRIu64 ", unlaunched %" PRIu64
		", waits dropped %" PRIu64 "\n",
		st->groups, st->groups_rejected, st->collectives_alone, st->unlaunched,
		st->waits_dropped);
}

/* Predicted against measured job steps: a sanity check of the generated timing. */
static void report_accuracy(const struct orr_replay *rp)
{
	struct orr_replay_step *s;
	size_t n;
	double sum = 0, max = 0;

	orr_replay_job_steps(rp, &s, &n);
	for (size_t i = 0; i < n; i++) {
		double m = (double)(s[i].measured_end_ns - s[i].measured_start_ns);
		double p = (double)(s[i].predicted_end_ns - s[i].predicted_start_ns);
		double e = m > 0 ? (p > m ? p - m : m - p) / m : 0;

		sum += e;
		max = e > max ? e : max;
	}
	fprintf(stderr, "check: %zu job steps, replay error mean %.2f %%, max %.2f %%\n", n,
		n ? 100 * sum / (double)n : 0.0, 100 * max);
	free(s);
}

static int graph_and_replay(const struct orr_trace *t, bool check, struct result *res)
{
	struct orr_graph *g = NULL;
	struct orr_replay *rp = NULL;
	struct orr_graph_stats st;
	struct orr_diag d;
	char buf[1600];
	struct timer tm = timer_start();
	int r;

	r = orr_graph_build(t, NULL, &g, &d);
	res->ph[P_GRAPH] = timer_stop(tm);
	if (r < 0)
		goto out;
	res->tasks = orr_graph_task_count(g);
	orr_graph_get_stats(g, &st);
	for (int k = 0; k < ORR_DEP_COUNT; k++)
		res->edges += st.edges[k];
	if (check)
		report_graph(&st);
	tm = timer_start();
	r = orr_replay_run(g, NULL, &rp, &d);
	res->ph[P_REPLAY] = timer_stop(tm);
	if (r < 0)
		goto out;
	if (check)
		report_accuracy(rp);
out:
	if (r < 0)
		fprintf(stderr, "bench-replay: error: %s\n",
			orr_diag_format(&d, r, buf, sizeof(buf)));
	orr_replay_free(rp);
	orr_graph_free(g);
	return r;
}

static const char *const phase_names[N_PHASES] = { "generate", "graph", "replay" };

static void print_text(const struct gen_job_options *o, const struct result *res)
{
	struct phase total = { 0 };

	printf("job:      %zu ranks x %" PRIu64 " events = %" PRIu64
	       " events, %zu steps, seed %" PRIu64 "\n",
	       o->ranks, res->events / (o->ranks ? o->ranks : 1), res->events, o->steps, o->seed);
	for (int p = 0; p < N_PHASES; p++) {
		const struct phase *ph = &res->ph[p];
		/* events for generate and graph, tasks for replay */
		uint64_t n = p == P_REPLAY ? res->tasks : res->events;

		total.wall_s += ph->wall_s;
		total.cpu_s += ph->cpu_s;
		printf("%-9s %8.3f s wall %8.3f s cpu  %7.2f M %s/s, %7.2f per cpu s\n",
		       phase_names[p], ph->wall_s, ph->cpu_s, rate_m(n, ph->wall_s),
		       p == P_REPLAY ? "tasks" : "events", rate_m(n, ph->cpu_s));
	}
	printf("total:    %8.3f s wall %8.3f s cpu  (%" PRIu64 " tasks, %" PRIu64 " edges)\n",
	       total.wall_s, total.cpu_s, res->tasks, res->edges);
	printf("peak RSS: %8.1f MB\n", (double)res->max_rss_kb * 1024 / 1e6);
}

static void print_json(const struct gen_job_options *o, const struct result *res)
{
	struct phase total = { 0 };

	printf("{\"bench\": \"replay\", \"ranks\": %zu, \"events_per_rank\": %zu, "
	       "\"steps\": %zu, \"seed\": %" PRIu64 ", \"events\": %" PRIu64 ", \"tasks\": %" PRIu64
	       ", \"edges\": %" PRIu64,
	       o->ranks, o->events_per_rank, o->steps, o->seed, res->events, res->tasks,
	       res->edges);
	for (int p = 0; p < N_PHASES; p++) {
		uint64_t n = p == P_REPLAY ? res->tasks : res->events;

		printf(", \"%s_wall_s\": %.3f, \"%s_cpu_s\": %.3f, \"%s_m_per_s\": %.2f, "
		       "\"%s_m_per_cpu_s\": %.2f",
		       phase_names[p], res->ph[p].wall_s, phase_names[p], res->ph[p].cpu_s,
		       phase_names[p], rate_m(n, res->ph[p].wall_s), phase_names[p],
		       rate_m(n, res->ph[p].cpu_s));
		printf(", \"%s_sys_s\": %.3f, \"%s_minflt\": %" PRId64, phase_names[p],
		       res->ph[p].sys_s, phase_names[p], res->ph[p].minflt);
		total.wall_s += res->ph[p].wall_s;
		total.cpu_s += res->ph[p].cpu_s;
	}
	printf(", \"total_wall_s\": %.3f, \"total_cpu_s\": %.3f, \"max_rss_kb\": %" PRId64 "}\n",
	       total.wall_s, total.cpu_s, res->max_rss_kb);
}

int main(int argc, char **argv)
{
	struct gen_job_options o = GEN_JOB_OPTIONS_DEFAULT;
	struct orr_trace *t = NULL;
	struct result res = { 0 };
	struct rusage ru;
	struct flags f = { 0 };
	struct timer tm;
	int r;

	r = parse_args(argc, argv, &o, &f);
	if (r)
		return r;
	tm = timer_start();
	r = gen_job(&o, &t);
	res.ph[P_GEN] = timer_stop(tm);
	if (r < 0) {
		fprintf(stderr, "bench-replay: error: cannot generate that job: %s\n",
			orr_strerror(r));
		return 2;
	}
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		res.events += orr_trace_get_rank(t, i)->nevents;
	if (f.check && check_steps(t, o.steps) < 0)
		r = -1;
	if (r == 0 && !f.generate_only)
		r = graph_and_replay(t, f.check, &res);
	getrusage(RUSAGE_SELF, &ru);
	res.max_rss_kb = ru.ru_maxrss;
	if (r == 0)
		(f.json ? print_json : print_text)(&o, &res);
	orr_trace_free(t);
	return r < 0 ? 1 : 0;
}
