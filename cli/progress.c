/* SPDX-License-Identifier: MIT */
/*
 * Progress of a long import on a terminal: after 2 s, one line on stderr rewritten in
 * place — bytes read, the rate, and for plain files (whose size is what is read) the
 * time left — cleared when the import ends.  Nothing when stderr is not a terminal, so
 * that logs and tests see none of it.
 */
#include <dirent.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/trace.h"
#include "banned.h"

#define PROGRESS_AFTER_S 2.0

struct progress {
	double start;
	uint64_t total; /* bytes of the uncompressed files; 0 when unknown */
	bool shown;
};

static struct progress the_progress;

static double now_s(void)
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

static void show(void *data, const char *file, uint64_t done)
{
	struct progress *p = data;
	double t = now_s() - p->start, rate = t > 0 ? (double)done / t : 0;

	(void)file;
	if (t < PROGRESS_AFTER_S)
		return;
	p->shown = true;
	fprintf(stderr, "\rorrery: importing: %.1f MB read, %.0f MB/s", (double)done / 1e6,
		rate / 1e6);
	if (p->total > done && rate > 0)
		fprintf(stderr, ", about %.0f s left", (double)(p->total - done) / rate);
	fputs("\033[K", stderr);
	fflush(stderr);
}

void cli_import_progress(struct orr_import_options *o, const char *path)
{
	if (!isatty(STDERR_FILENO))
		return;
	the_progress = (struct progress){ .start = now_s(), .total = plain_size(path) };
	o->progress = show;
	o->progress_data = &the_progress;
}

void cli_import_progress_done(void)
{
	if (the_progress.shown)
		fputs("\r\033[K", stderr);
	the_progress.shown = false;
}
