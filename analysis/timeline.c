/* SPDX-License-Identifier: MIT */
/*
 * The measured and predicted timelines (orrery replay --timeline OUT.json) as a
 * Chrome trace-event file, for Perfetto or chrome://tracing.  Per rank two processes,
 * "rank R measured" and "rank R predicted", with one track per thread and per stream;
 * a complete event (ph X) per task and a flow (ph s/f) per launch edge.  Times are
 * microseconds with three decimals (nanoseconds survive) from the earliest task of
 * either timeline, so that they stay exact as doubles; otherData.origin_ns says where
 * that is on the trace's clock.  The measured side also shows the framework's ops and
 * annotations (steps among them) on their threads, and a task's correlation id and a
 * copy's bytes in its args.  One event per line, in a fixed order.  With a critical
 * path (`orrery critical-path --timeline`), one more process, "critical path", holds
 * each job step's segments on a track of its own, over the predicted timelines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

struct timeline {
	FILE *f;
	const struct orr_graph *g;
	const struct orr_replay *r;
	const struct orr_step_path *paths;
	size_t npaths;
	const struct orr_select *sel;
	uint8_t *keep; /* per task: 1 measured side, 2 predicted side (--steps) */
	int64_t origin_ns;
	bool first;
};

static void next_event(struct timeline *tl)
{
	fputs(tl->first ? "\n" : ",\n", tl->f);
	tl->first = false;
}

/* ,"KEY":NS in microseconds with three decimals. */
static void put_us(FILE *f, const char *key, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;

	fprintf(f, ",\"%s\":%s%lld.%03lld", key, ns < 0 ? "-" : "", (long long)(a / 1000),
		(long long)(a % 1000));
}

static int pid_of(size_t rank, bool predicted)
{
	return (int)(2 * rank + predicted);
}

/* KIND_name and KIND_sort_index of a process or thread ("process" or "thread"). */
static void put_meta(struct timeline *tl, const char *kind, int pid, uint32_t tid, const char *name,
		     int64_t sort_index)
{
	next_event(tl);
	fprintf(tl->f,
		"{\"name\":\"%s_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
		"\"args\":{\"name\":",
		kind, pid, tid);
	orr_json_write_string(tl->f, name);
	fputs("}}", tl->f);
	next_event(tl);
	fprintf(tl->f,
		"{\"name\":\"%s_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
		"\"args\":{\"sort_index\":%lld}}",
		kind, pid, tid, (long long)sort_index);
}

/* The process of one side of a rank and a track per thread and stream. */
static void put_tracks(struct timeline *tl, size_t rank, bool predicted)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	const struct orr_proc *procs = orr_graph_procs(tl->g);
	int pid = pid_of(rank, predicted);
	char name[256];

	snprintf(name, sizeof(name), "rank %d %s", gr->rank->rank,
		 predicted ? "predicted" : "measured");
	put_meta(tl, "process", pid, 0, name, pid);
	for (uint32_t p = gr->first_proc; p < gr->first_proc + gr->nprocs; p++) {
		const struct orr_place *pl = &gr->rank->places[procs[p].place];
		const char *tname = orr_trace_str(orr_graph_trace(tl->g), pl->name);

		/* Kineto's thread names already say "thread TID (NAME)". */
		if (pl->kind == ORR_PLACE_THREAD && tname[0])
			snprintf(name, sizeof(name), "%s", tname);
		else if (pl->kind == ORR_PLACE_THREAD)
			snprintf(name, sizeof(name), "thread %lld", (long long)pl->tid);
		else
			snprintf(name, sizeof(name), "stream %lld (GPU %d)", (long long)pl->tid,
				 pl->device);
		put_meta(tl, "thread", pid, p - gr->first_proc, name, p - gr->first_proc);
	}
}

static const char *category(const struct orr_task *t)
{
	if (t->kind == ORR_TASK_CPU)
		return "cpu";
	return t->flags & ORR_TASK_F_COMM ? "comm" : "gpu";
}

static int64_t task_start(const struct timeline *tl, uint32_t t, bool predicted)
{
	return predicted ? orr_replay_start(tl->r, t) : orr_graph_task_start(tl->g, t);
}

static bool kept(const struct timeline *tl, uint32_t t, bool predicted)
{
	return tl->keep[t] & (predicted ? 2 : 1);
}

/* Which tasks of graph rank `rank` overlap a selected step's window, on each timeline. */
static void select_tasks(struct timeline *tl, size_t rank)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	struct orr_replay_step *s;
	size_t n;

	if (!tl->sel || !tl->sel->steps_given) {
		memset(tl->keep + gr->first_task, 3, gr->ntasks);
		return;
	}
	orr_replay_steps(tl->r, rank, &s, &n);
	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		int64_t ms = orr_graph_task_start(tl->g, t), me = orr_graph_task_end(tl->g, t);
		int64_t ps = orr_replay_start(tl->r, t), pe = orr_replay_end(tl->r, t);

		tl->keep[t] = 0;
		for (size_t k = 0; k < n; k++) {
			if (!orr_select_step(tl->sel, s[k].step))
				continue;
			if (me >= s[k].measured_start_ns && ms <= s[k].measured_end_ns)
				tl->keep[t] |= 1;
			if (pe >= s[k].predicted_start_ns && ps <= s[k].predicted_end_ns)
				tl->keep[t] |= 2;
		}
	}
	free(s);
}

/*
 * A task's args: its index, its event's correlation id, a kernel's launch (grid, block,
 * shared memory, registers: Kineto's keys) and a copy's bytes.
 */
static void put_args(struct timeline *tl, const struct orr_rank *r, uint32_t t)
{
	const struct orr_event *e = orr_graph_task_event(tl->g, t);

	fprintf(tl->f, ",\"args\":{\"task\":%u", t);
	if (e->correlation >= 0)
		fprintf(tl->f, ",\"correlation\":%lld", (long long)e->correlation);
	if (e->kind == ORR_EVENT_KERNEL && e->args < r->nkernels) {
		const struct orr_kernel_args *k = &r->kernels[e->args];

		if (k->grid[0])
			fprintf(tl->f, ",\"grid\":[%u,%u,%u]", k->grid[0], k->grid[1], k->grid[2]);
		if (k->block[0])
			fprintf(tl->f, ",\"block\":[%u,%u,%u]", k->block[0], k->block[1],
				k->block[2]);
		if (k->grid[0] || k->shared_bytes)
			fprintf(tl->f, ",\"shared memory\":%u", k->shared_bytes);
		if (k->registers)
			fprintf(tl->f, ",\"registers per thread\":%u", k->registers);
	}
	if (e->kind == ORR_EVENT_MEMCPY && e->args < r->ncopies && r->copies[e->args].bytes >= 0)
		fprintf(tl->f, ",\"bytes\":%lld", (long long)r->copies[e->args].bytes);
	fputs("}}", tl->f);
}

static void put_tasks(struct timeline *tl, size_t rank, bool predicted)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	const struct orr_task *tasks = orr_graph_tasks(tl->g);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		int64_t s = task_start(tl, t, predicted);
		int64_t e = predicted ? orr_replay_end(tl->r, t) : orr_graph_task_end(tl->g, t);

		if (!kept(tl, t, predicted))
			continue;
		next_event(tl);
		fputs("{\"name\":", tl->f);
		orr_json_write_string(tl->f, orr_graph_task_name(tl->g, t));
		fprintf(tl->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u",
			category(&tasks[t]), pid_of(rank, predicted),
			tasks[t].proc - gr->first_proc);
		put_us(tl->f, "ts", s - tl->origin_ns);
		put_us(tl->f, "dur", e - s);
		put_args(tl, gr->rank, t);
	}
}

/* The process of one side of a rank: its thread's and stream's track ids by place. */
static uint32_t *track_of_place(const struct timeline *tl, size_t rank)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	const struct orr_proc *procs = orr_graph_procs(tl->g);
	uint32_t *tid = orr_xmalloc((gr->rank->nplaces + 1) * sizeof(*tid));

	for (size_t i = 0; i < gr->rank->nplaces; i++)
		tid[i] = ORR_NONE;
	for (uint32_t p = gr->first_proc; p < gr->first_proc + gr->nprocs; p++)
		tid[procs[p].place] = p - gr->first_proc;
	return tid;
}

/* Whether measured time t of graph rank `rank` lies in a selected step (or none is). */
static bool in_selected_step(const struct timeline *tl, const struct orr_replay_step *s, size_t n,
			     int64_t t0, int64_t t1)
{
	if (!tl->sel || !tl->sel->steps_given)
		return true;
	for (size_t k = 0; k < n; k++)
		if (orr_select_step(tl->sel, s[k].step) && t1 >= s[k].measured_start_ns &&
		    t0 <= s[k].measured_end_ns)
			return true;
	return false;
}

/*
 * The framework's ops and annotations (step markers included) on the measured side, on
 * their thread's track: the context of the calls below them.  Threads without a task in
 * the graph have no track, and their ops are left out.
 */
static void put_ops(struct timeline *tl, size_t rank)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	const struct orr_rank *r = gr->rank;
	uint32_t *tid = track_of_place(tl, rank);
	struct orr_replay_step *s = NULL;
	size_t n = 0;

	if (tl->sel && tl->sel->steps_given)
		orr_replay_steps(tl->r, rank, &s, &n);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if ((e->kind != ORR_EVENT_OP && e->kind != ORR_EVENT_ANNOTATION) ||
		    e->place >= r->nplaces || tid[e->place] == ORR_NONE ||
		    !in_selected_step(tl, s, n, e->start_ns, e->start_ns + e->dur_ns))
			continue;
		next_event(tl);
		fputs("{\"name\":", tl->f);
		orr_json_write_string(tl->f, orr_trace_str(orr_graph_trace(tl->g), e->name));
		fprintf(tl->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u",
			e->kind == ORR_EVENT_OP ? "op" : "annotation", pid_of(rank, false),
			tid[e->place]);
		put_us(tl->f, "ts", e->start_ns - tl->origin_ns);
		put_us(tl->f, "dur", e->dur_ns);
		if (e->external_id >= 0)
			fprintf(tl->f, ",\"args\":{\"external id\":%lld}",
				(long long)e->external_id);
		fputs("}", tl->f);
	}
	free(s);
	free(tid);
}

/* A flow from each launching call to each GPU task it launched (D2). */
static void put_flows(struct timeline *tl, size_t rank, bool predicted)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(tl->g, rank);
	const struct orr_task *tasks = orr_graph_tasks(tl->g);
	const struct orr_dep *deps = orr_graph_deps(tl->g);
	int pid = pid_of(rank, predicted);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		for (uint32_t d = tasks[t].first_dep; d < tasks[t].first_dep + tasks[t].ndeps;
		     d++) {
			uint32_t src = deps[d].src;
			uint64_t id = 2 * (uint64_t)d + predicted;

			if (deps[d].kind != ORR_DEP_LAUNCH || !kept(tl, src, predicted) ||
			    !kept(tl, t, predicted))
				continue;
			next_event(tl);
			fprintf(tl->f,
				"{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"s\",\"id\":%llu,"
				"\"pid\":%d,\"tid\":%u",
				(unsigned long long)id, pid, tasks[src].proc - gr->first_proc);
			put_us(tl->f, "ts", task_start(tl, src, predicted) - tl->origin_ns);
			fputs("}", tl->f);
			next_event(tl);
			fprintf(tl->f,
				"{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"f\",\"bp\":\"e\","
				"\"id\":%llu,\"pid\":%d,\"tid\":%u",
				(unsigned long long)id, pid, tasks[t].proc - gr->first_proc);
			put_us(tl->f, "ts", task_start(tl, t, predicted) - tl->origin_ns);
			fputs("}", tl->f);
		}
	}
}

/* The earliest start of any task on either timeline. */
static int64_t origin(const struct timeline *tl)
{
	size_t n = orr_graph_task_count(tl->g);
	int64_t o = 0;

	for (uint32_t t = 0; t < n; t++) {
		int64_t s = orr_graph_task_start(tl->g, t);

		s = orr_replay_start(tl->r, t) < s ? orr_replay_start(tl->r, t) : s;
		o = t == 0 || s < o ? s : o;
	}
	/* The ops and annotations put_ops() writes may start before (events by start). */
	for (size_t k = 0; k < orr_graph_rank_count(tl->g); k++) {
		const struct orr_rank *r = orr_graph_get_rank(tl->g, k)->rank;

		for (size_t i = 0; i < r->nevents; i++)
			if (r->events[i].kind == ORR_EVENT_OP ||
			    r->events[i].kind == ORR_EVENT_ANNOTATION) {
				o = n == 0 || r->events[i].start_ns < o ? r->events[i].start_ns : o;
				break;
			}
	}
	return o;
}

/* One step's critical path on track tid of process pid. */
/* "10", or "all" for the whole capture (step -1), as the reports name steps. */
static const char *step_label(int64_t step, char *buf, size_t size)
{
	if (step < 0)
		snprintf(buf, size, "all");
	else
		snprintf(buf, size, "%lld", (long long)step);
	return buf;
}

static void put_step_path(struct timeline *tl, int pid, uint32_t tid,
			  const struct orr_step_path *sp)
{
	char name[64], st[32], buf[1024];

	snprintf(name, sizeof(name), "step %s", step_label(sp->step, st, sizeof(st)));
	put_meta(tl, "thread", pid, tid, name, tid);
	for (size_t i = 0; i < sp->n; i++) {
		const struct orr_path_seg *seg = &sp->segs[i];
		const char *label = seg->task == ORR_NONE ? orr_path_cat_name(seg->cat)
							  : orr_graph_task_name(tl->g, seg->task);

		/* CPU time before a call is not the call's. */
		if (seg->task != ORR_NONE && seg->cat == ORR_PATH_CPU &&
		    seg->end_ns <= orr_replay_start(tl->r, seg->task)) {
			snprintf(buf, sizeof(buf), "before %s", label);
			label = buf;
		}
		next_event(tl);
		fputs("{\"name\":", tl->f);
		orr_json_write_string(tl->f, label);
		fprintf(tl->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u",
			orr_path_cat_name(seg->cat), pid, tid);
		put_us(tl->f, "ts", seg->start_ns - tl->origin_ns);
		put_us(tl->f, "dur", seg->end_ns - seg->start_ns);
		fputs(",\"args\":{", tl->f);
		if (seg->task != ORR_NONE)
			fprintf(tl->f, "\"task\":%u,", seg->task);
		fputs("\"via\":", tl->f);
		orr_json_write_string(tl->f, seg->via ? orr_dep_kind_name(seg->via) : "");
		fputs("}}", tl->f);
	}
}

/* The critical paths after every rank's processes, a track per job step. */
static void put_paths(struct timeline *tl)
{
	int pid = pid_of(orr_graph_rank_count(tl->g), false);

	if (!tl->npaths)
		return;
	put_meta(tl, "process", pid, 0, "critical path", pid);
	for (size_t i = 0; i < tl->npaths; i++)
		put_step_path(tl, pid, (uint32_t)i, &tl->paths[i]);
}

static void put_all(struct timeline *tl)
{
	size_t nranks = orr_graph_rank_count(tl->g);

	fputs("{\"traceEvents\":[", tl->f);
	for (size_t i = 0; i < nranks; i++)
		for (int side = 0; side < 2; side++)
			if (orr_select_rank(tl->sel, orr_graph_get_rank(tl->g, i)->rank->rank))
				put_tracks(tl, i, side);
	put_paths(tl);
	for (size_t i = 0; i < nranks; i++) {
		if (!orr_select_rank(tl->sel, orr_graph_get_rank(tl->g, i)->rank->rank))
			continue;
		select_tasks(tl, i);
		put_ops(tl, i);
		for (int side = 0; side < 2; side++) {
			put_tasks(tl, i, side);
			put_flows(tl, i, side);
		}
	}
	fprintf(tl->f, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"origin_ns\":%lld}}\n",
		(long long)tl->origin_ns);
}

int orr_timeline_write(const struct orr_replay *r, const struct orr_step_path *paths, size_t npaths,
		       const struct orr_select *sel, const char *path)
{
	struct orr_outfile out;
	struct timeline tl = {
		.g = orr_replay_graph(r),
		.r = r,
		.paths = paths,
		.npaths = npaths,
		.sel = sel,
		.first = true,
	};
	int err = 0;

	tl.origin_ns = origin(&tl);
	err = orr_outfile_open(&out, path, 0);
	if (err)
		return err;
	tl.f = orr_outfile_stream(&out);
	if (!tl.f) {
		orr_outfile_abort(&out);
		return -ENOMEM;
	}
	tl.keep = orr_xcalloc(orr_graph_task_count(tl.g) + 1, 1);
	put_all(&tl);
	free(tl.keep);
	return orr_outfile_commit(&out, false);
}
