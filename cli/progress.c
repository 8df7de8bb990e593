/* SPDX-License-Identifier: MIT */
/*
 * Progress of a long phase on a terminal: after 2 s, one line on stderr rewritten in
 * place, cleared when the phase ends.  An import shows the bytes read, the rate and,
 * for plain files (whose size is what is read), the time left; a graph build or a
 * replay shows what is done of the total (events, tasks), the rate and the time left.
 * Nothing when stderr is not a terminal, so that logs and tests see none of it.
 */
#include <dirent.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/graph.h"
#include "orrery/replay.h"
#include "orrery/trace.h"
#include "banned.h"

/* Seconds before a phase shows its progress: ORR_PROGRESS_AFTER_S, else 2. */
static double after_s(void)
{
	const char *v = getenv("ORR_PROGRESS_AFTER_S");
	char *end;
	double s;

	if (!v || !*v)
		return 2.0;
	s = strtod(v, &end);
	return *end || !(s >= 0) ? 2.0 : s;
}

struct progress {
	double start;
	uint64_t total;          /* bytes of the uncompressed files, or units; 0 when unknown */
	const char *what, *unit; /* unit NULL: bytes */
	double after;            /* seconds before it shows */
	bool active, shown;
	bool bar; /* a bar of what is done before the counts */
};

static struct progress the_progress;

double cli_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool compressed(const char *name)
{
	static const char *const ext[] = { ".gz", ".zst", ".tar", ".tgz" };
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (n >= strlen(ext[i]) && strcmp(name + n - strlen(ext[i]), ext[i]) == 0)
			return true;
	return false;
}

/* The bytes an import of path reads, when its files are plain; 0 when unknown. */
static uint64_t plain_size(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	uint64_t total = 0;

	if (stat(path, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return compressed(path) ? 0 : (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		if (compressed(e->d_name)) {
			total = 0;
			break;
		}
		p = orr_xasprintf("%s/%s", path, e->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
		free(p);
	}
	closedir(d);
	return total;
}

/* "950", "12.3 k", "4.5 M". */
static const char *count(char *buf, size_t size, double n)
{
	if (n < 1e4)
		snprintf(buf, size, "%.0f", n);
	else if (n < 1e6)
		snprintf(buf, size, "%.1f k", n / 1e3);
	else
		snprintf(buf, size, "%.1f M", n / 1e6);
	return buf;
}

static void show(struct progress *p, uint64_t done)
{
	double t = cli_now_s() - p->start, rate = t > 0 ? (double)done / t : 0;

	if (!p->active || t < p->after)
		return;
	p->shown = true;
	if (p->unit) {
		char d[16], n[16], r[16], bar[21];
		int full = p->total ? (int)(20 * (double)done / (double)p->total) : 0;

		for (int i = 0; i < 20; i++)
			bar[i] = i < full ? '#' : '.';
		bar[20] = '\0';
		fprintf(stderr, "\rorrery: %s: ", p->what);
		if (p->bar && p->total)
			fprintf(stderr, "[%s] ", bar);
		fprintf(stderr, "%s of %s %s, %s %s/s", count(d, sizeof(d), (double)done),
			count(n, sizeof(n), (double)p->total), p->unit, count(r, sizeof(r), rate),
			p->unit);
	} else
		fprintf(stderr, "\rorrery: %s: %.1f MB read, %.0f MB/s", p->what,
			(double)done / 1e6, rate / 1e6);
	if (p->total > done && rate > 0 && (double)(p->total - done) / rate >= 1)
		fprintf(stderr, ", about %.0f s left", (double)(p->total - done) / rate);
	fputs("\033[K", stderr);
	fflush(stderr);
}

static void show_import(void *data, const char *file, uint64_t done)
{
	(void)file;
	show(data, done);
}

const char *cli_step_range, *cli_et_path;

void cli_import_progress(struct orr_import_options *o, const char *path)
{
	o->step_range = cli_step_range;
	o->et_path = cli_et_path;
	if (!isatty(STDERR_FILENO))
		return;
	the_progress = (struct progress){ .start = cli_now_s(),
					  .total = plain_size(path),
					  .what = "importing",
					  .after = after_s(),
					  .active = true };
	o->progress = show_import;
	o->progress_data = &the_progress;
}

void cli_progress_begin(const char *what, const char *unit)
{
	the_progress = (struct progress){ .start = cli_now_s(),
					  .what = what,
					  .unit = unit,
					  .after = after_s(),
					  .active = isatty(STDERR_FILENO) };
}

void cli_progress_begin_forced(const char *what, const char *unit, bool force)
{
	cli_progress_begin(what, unit);
	the_progress.bar = true;
	if (force) {
		the_progress.active = true;
		the_progress.after = 0;
	}
}

void cli_progress_count(void *data, uint64_t done, uint64_t total)
{
	(void)data;
	the_progress.total = total;
	show(&the_progress, done);
}

void cli_progress_done(void)
{
	if (the_progress.shown)
		fputs("\r\033[K", stderr);
	the_progress.shown = false;
	the_progress.active = false;
}

int cli_graph_build(const struct orr_trace *t, const struct orr_graph_options *opts,
		    struct orr_graph **ret, struct orr_diag *d)
{
	struct orr_graph_options o = opts ? *opts : (struct orr_graph_options){ 0 };
	int err;

	o.progress = cli_progress_count;
	cli_progress_begin("building the graph", "events");
	err = orr_graph_build(t, &o, ret, d);
	cli_progress_done();
	return err;
}

int cli_replay_run(const struct orr_graph *g, const struct orr_replay_options *opts,
		   struct orr_replay **ret, struct orr_diag *d)
{
	struct orr_replay_options o = opts ? *opts : (struct orr_replay_options){ 0 };
	int err;

	o.progress = cli_progress_count;
	cli_progress_begin("replaying", "tasks");
	err = orr_replay_run(g, &o, ret, d);
	cli_progress_done();
	return err;
}
