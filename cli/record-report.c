/* SPDX-License-Identifier: MIT */
/*
 * orrery record, after the command: what each process captured, the tracer's own log
 * lines, and the run's manifest.  Each native file is imported on its own, so that one
 * unreadable file does not hide the others and every process is reported by itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/native.h"
#include "orrery/trace.h"
#include "record.h"
#include "banned.h"

/* Lines of one tracer log shown; the rest are counted. */
#define MAX_LOG_LINES 20

/* One native file of the run. */
struct proc {
	char *name; /* in the run directory */
	char *host;
	int32_t rank, world_size;
	int64_t pid;
	uint64_t events, kernels, dropped_records, dropped_events;
	size_t nsteps;
	int64_t first_step, last_step;
	bool truncated;
};

struct run {
	const struct record_options *o;
	struct proc *procs;
	size_t nprocs, cap;
	bool quiet;
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Names in DIR that match keep(), sorted; *ret_n of them.  Dot names only if dots. */
static char **list_dir(const char *dir, bool (*keep)(const char *), bool dots, size_t *ret_n)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);
	char **names = orr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(*names));
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		if ((dots || ents[i]->d_name[0] != '.') && keep(ents[i]->d_name))
			names[k++] = orr_xstrdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	*ret_n = k;
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static bool is_native(const char *name)
{
	return has_suffix(name, ORR_NATIVE_SUFFIX);
}

/*
 * ".X.orr.tmp.PID.RANDOM" (common/outfile.c): a file its writer never closed.  The
 * length of X.orr, or 0 when NAME is not one; *ret_pid is the writer's process.
 */
static size_t unfinished(const char *name, long *ret_pid)
{
	static const char tmp[] = ORR_NATIVE_SUFFIX ".tmp.";
	const char *rnd = strrchr(name, '.'), *pid = rnd;
	size_t m = sizeof(tmp) - 1;

	if (name[0] != '.' || !rnd || rnd == name || !rnd[1] || strchr(rnd + 1, '/'))
		return 0;
	while (pid > name && pid[-1] >= '0' && pid[-1] <= '9')
		pid--;
	if (pid == rnd || (size_t)(pid - name) < m + 2 || strncmp(pid - m, tmp, m) != 0)
		return 0;
	*ret_pid = strtol(pid, NULL, 10);
	return (size_t)(pid - name) - 1 - strlen(".tmp.");
}

static bool is_unfinished(const char *name)
{
	long pid;

	return unfinished(name, &pid) > 0;
}

static bool is_log(const char *name)
{
	return strncmp(name, "tracer-", 7) == 0 && has_suffix(name, ".log");
}

/*
 * A process that died without closing its file (SIGKILL, os._exit) leaves it under its
 * temporary name; its complete frames are still good, so it gets its final name.
 */
static void recover_unfinished(const char *dir)
{
	size_t n;
	char **names = list_dir(dir, is_unfinished, true, &n);

	for (size_t i = 0; i < n; i++) {
		long pid = 0;
		size_t len = unfinished(names[i], &pid);
		char *tmp = orr_xasprintf("%s/%s", dir, names[i]);
		char *final = orr_xasprintf("%s/%.*s", dir, (int)len, names[i] + 1);

		if (pid > 0 && kill((pid_t)pid, 0) == 0)
			fprintf(stderr, "orrery: warning: process %ld is still writing '%s'\n", pid,
				cli_text(tmp));
		else if (access(final, F_OK) == 0)
			fprintf(stderr, "orrery: warning: '%s' left beside '%s'\n", cli_text(tmp),
				cli_text(final));
		else if (rename(tmp, final) < 0)
			fprintf(stderr, "orrery: warning: cannot rename '%s': %s\n", cli_text(tmp),
				orr_strerror(-errno));
		free(final);
		free(tmp);
	}
	free_names(names, n);
}

static void count_steps(const struct orr_trace *t, const struct orr_rank *r, struct proc *p)
{
	struct orr_step *steps = NULL;
	size_t n = 0;

	p->first_step = p->last_step = -1;
	if (orr_rank_steps(t, r, &steps, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (steps[i].step < 0)
				continue;
			if (!p->nsteps++)
				p->first_step = steps[i].step;
			p->last_step = steps[i].step;
		}
	}
	free(steps);
}

/* Imports DIR/NAME and adds it to the run; false (reported) when it cannot be read. */
static bool add_proc(struct run *run, const char *name)
{
	struct orr_import_options opts = { .warn = cli_import_warn };
	char *path = orr_xasprintf("%s/%s", run->o->dir, name);
	struct orr_trace *t = NULL;
	struct orr_diag diag;
	struct proc p = { 0 };
	const struct orr_rank *r;
	int err;

	err = orr_trace_import(path, &opts, &t, &diag);
	if (err) {
		cli_import_error(path, err, &diag);
		free(path);
		return false;
	}
	r = orr_trace_get_rank(t, 0);
	p.name = orr_xstrdup(name);
	/* The importer numbers a lone rank-less file 0; its name says it had none. */
	p.rank = strncmp(name, "pid-", 4) == 0 ? -1 : r->rank;
	p.world_size = r->world_size;
	p.pid = r->pid;
	p.host = r->host ? orr_xstrdup(orr_trace_str(t, r->host)) : NULL;
	p.events = r->nevents;
	for (size_t i = 0; i < r->nevents; i++)
		p.kernels += r->events[i].kind == ORR_EVENT_KERNEL;
	p.dropped_records = r->dropped_records;
	p.dropped_events = r->dropped_events;
	p.truncated = r->truncated;
	count_steps(t, r, &p);
	ORR_VEC_PUSH(run->procs, run->nprocs, run->cap, p);
	orr_trace_free(t);
	free(path);
	return true;
}

static void print_proc(const struct proc *p)
{
	char rank[16] = "?", pid[24] = "?";

	if (p->rank >= 0)
		snprintf(rank, sizeof(rank), "%d", p->rank);
	if (p->pid >= 0)
		snprintf(pid, sizeof(pid), "%lld", (long long)p->pid);
	fprintf(stderr, "  rank %s  pid %s  host %s: %llu events, %llu kernels, ", rank, pid,
		p->host ? cli_text(p->host) : "?", (unsigned long long)p->events,
		(unsigned long long)p->kernels);
	if (!p->nsteps)
		fputs("no steps marked", stderr);
	else
		fprintf(stderr, "%zu step%s (#%lld..#%lld)", p->nsteps, p->nsteps == 1 ? "" : "s",
			(long long)p->first_step, (long long)p->last_step);
	if (p->dropped_records || p->dropped_events)
		fprintf(stderr, "; DROPPED %llu records, %llu events",
			(unsigned long long)p->dropped_records,
			(unsigned long long)p->dropped_events);
	if (p->truncated)
		fputs("; TRUNCATED (the process ended before the tracer closed the file)", stderr);
	fputc('\n', stderr);
}

static void print_summary(const struct run *run, int status)
{
	uint64_t events = 0, kernels = 0, records = 0, dropped = 0;

	fprintf(stderr, "orrery: recorded %zu process%s in '%s'; the command exited with %d\n",
		run->nprocs, run->nprocs == 1 ? "" : "es", cli_text(run->o->dir), status);
	for (size_t i = 0; i < run->nprocs; i++) {
		const struct proc *p = &run->procs[i];

		print_proc(p);
		events += p->events;
		kernels += p->kernels;
		records += p->dropped_records;
		dropped += p->dropped_events;
	}
	fprintf(stderr,
		"  total: %llu events, %llu kernels; %llu records and %llu events dropped\n",
		(unsigned long long)events, (unsigned long long)kernels,
		(unsigned long long)records, (unsigned long long)dropped);
}

/*
 * The tracer's log lines, as "orrery: tracer[PID]: LINE".  Opened as every input is
 * (without blocking, a regular file or nothing), so that a FIFO planted in the run's
 * directory cannot block; read a line at a time, however long the log.
 */
static void print_log(const char *dir, const char *name)
{
	char *path = orr_xasprintf("%s/%s", dir, name), *line = NULL;
	long pid = strtol(name + 7, NULL, 10);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	FILE *f = NULL;
	struct stat st;
	size_t cap = 0, n = 0;
	ssize_t len;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		f = fdopen(fd, "r");
	if (!f) {
		if (fd >= 0)
			close(fd);
		free(path);
		return;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 300)
			line[len = 300] = '\0'; /* a cut character is escaped below */
		if (len && n++ < MAX_LOG_LINES)
			fprintf(stderr, "orrery: tracer[%ld]: %s\n", pid, cli_text(line));
	}
	if (n > MAX_LOG_LINES)
		fprintf(stderr, "orrery: tracer[%ld]: ... %zu more lines in '%s'\n", pid,
			n - MAX_LOG_LINES, cli_text(path));
	free(line);
	fclose(f);
	free(path);
}

static void print_logs(const char *dir)
{
	size_t n;
	char **names = list_dir(dir, is_log, false, &n);

	for (size_t i = 0; i < n; i++)
		print_log(dir, names[i]);
	free_names(names, n);
}

static int write_manifest(const struct run *run, const struct record_result *res)
{
	struct orr_run_file *files = orr_xcalloc(run->nprocs + 1, sizeof(*files));
	struct orr_run_manifest m = {
		.producer = "orrery record " ORR_VERSION,
		.command = (const char *const *)run->o->argv,
		.ncommand = run->o->argc,
		.created_unix_ns = res->created_unix_ns,
		.world_size = -1,
		.skip_steps = run->o->skip,
		.steps = run->o->steps,
		.exit_status = res->exit_status,
		.files = files,
		.nfiles = run->nprocs,
	};
	int err;

	for (size_t i = 0; i < run->nprocs; i++) {
		const struct proc *p = &run->procs[i];

		files[i] = (struct orr_run_file){
			.path = p->name,
			.rank = p->rank,
			.pid = p->pid,
			.host = p->host,
			.events = p->events,
			.dropped_records = p->dropped_records,
			.dropped_events = p->dropped_events,
		};
		if (p->world_size > m.world_size)
			m.world_size = p->world_size;
	}
	err = orr_run_write_manifest(run->o->dir, &m);
	free(files);
	if (err)
		cli_error("cannot write '%s/%s': %s", run->o->dir, ORR_NATIVE_MANIFEST,
			  orr_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

static void no_process(const struct record_options *o)
{
	cli_error("no process initialized CUDA under the tracer: '%s' holds no %s file", o->dir,
		  ORR_NATIVE_SUFFIX);
	fputs("likely causes:\n"
	      "  - the command never used CUDA (or it ended before it did)\n"
	      "  - the tracer turned itself off, e.g. for a CUPTI version that does not match\n"
	      "    the one it was built with: see the tracer's log lines above, if any\n"
	      "  - another profiler holds CUPTI (torch.profiler with CUDA activities, nsys,\n"
	      "    ncu): record without it\n",
	      stderr);
}

int record_report(const struct record_options *o, const struct record_result *res)
{
	struct run run = { .o = o };
	size_t n, unreadable = 0;
	char **names;
	int ret = EXIT_OK;

	recover_unfinished(o->dir);
	names = list_dir(o->dir, is_native, false, &n);
	for (size_t i = 0; i < n; i++)
		unreadable += !add_proc(&run, names[i]);
	free_names(names, n);
	if (!o->quiet || !run.nprocs)
		print_logs(o->dir);
	if (run.nprocs && !o->quiet)
		print_summary(&run, res->exit_status);
	if (!run.nprocs && !unreadable)
		no_process(o);
	/* Nothing recorded: no manifest, so that cmd_record() removes what it made. */
	if (!run.nprocs && !unreadable)
		ret = EXIT_FAIL;
	else if (write_manifest(&run, res) != EXIT_OK || !run.nprocs || unreadable)
		ret = EXIT_FAIL;
	if (run.nprocs && !o->quiet)
		fprintf(stderr, "orrery: replay it with: orrery replay %s\n", cli_text(o->dir));
	for (size_t i = 0; i < run.nprocs; i++) {
		free(run.procs[i].name);
		free(run.procs[i].host);
	}
	free(run.procs);
	/* The command's own failure comes first; ours only when it succeeded. */
	return res->exit_status ? res->exit_status : ret;
}
