/* SPDX-License-Identifier: MIT */
/*
 * The plan of one step per rank (docs/orrery-compose.md).
 *
 * Each CPU thread's ops nest by time.  A GPU task belongs to the innermost op around
 * the call that launched it (D2).  The outermost op that can be rebuilt and launches no
 * communication is run again as a whole, with everything under it; the ops inside it
 * are not.  Where no such op holds a GPU task, a collective becomes a collective of its
 * recorded kind, size and group, and anything else a timed stand-in (a sleep of its
 * measured duration on its stream), listed as missing with the reason.  Blocking calls
 * outside rebuilt ops become synchronizations.  Items go in the order the CPU issued
 * them, every thread of the rank in one sequence.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "orrery/estimator.h"
#include "banned.h"

#define COMPOSE_MAX_REPEAT 1000

/* What the walk over the threads finds, per event of the rank. */
struct walk {
	uint32_t *owner;  /* the innermost op around it on its thread (itself excluded) */
	uint32_t *region; /* --repeat region instance around it (itself included) */
	uint8_t *keep;    /* inside --subgraph (itself included) */
	uint8_t *comm;    /* ops: launches communication, itself or inside */
	uint8_t *split;   /* ops: hold a --subgraph or --repeat region: not rebuilt whole */
	uint8_t *redo;    /* ops: call an op of their own name (a wrapper kernel, autocast's) */
	uint32_t *em;     /* ops: the rebuilt op it is part of (itself included) */
	uint32_t *item;   /* rebuilt ops: their item */
	uint32_t *counts; /* per region instance: its repeat count */
	size_t nregions, cap_regions;
};

struct frame {
	uint32_t event;
	uint32_t region;
	bool keep;
};

void orr__compose_missing(struct orr_compose *c, const char *name, const char *reason,
			  uint64_t tasks, int64_t gpu_ns)
{
	uint32_t n = orr_strtab_intern(c->strs, name, strlen(name));
	uint32_t why = orr_strtab_intern(c->strs, reason, strlen(reason));
	const char *ns = orr_strtab_get(c->strs, n), *rs = orr_strtab_get(c->strs, why);

	for (size_t i = 0; i < c->nmissing; i++) {
		if (c->missing[i].name == ns && c->missing[i].reason == rs) {
			c->missing[i].tasks += tasks;
			c->missing[i].gpu_ns = orr_time_add(c->missing[i].gpu_ns, gpu_ns);
			return;
		}
	}
	ORR_VEC_PUSH(c->missing, c->nmissing, c->cap_missing,
		     ((struct orr_compose_missing){ ns, rs, tasks, gpu_ns }));
}

static bool matches(const char *pattern, const char *name)
{
	return pattern && fnmatch(pattern, name, 0) == 0;
}

static int repeat_of(const struct orr_compose *c, const char *name)
{
	for (size_t i = 0; i < c->o.nrepeats; i++)
		if (matches(c->o.repeats[i].pattern, name))
			return c->o.repeats[i].count;
	return 0;
}

/* One thread: its ops and annotations nest by time; every event learns what is around it. */
static void walk_place(const struct orr_compose *c, const struct orr_rank *r, const uint32_t *ev,
		       size_t n, struct walk *w)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	struct frame *stack = NULL;
	size_t depth = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct orr_event *e = &r->events[ev[i]];
		struct frame top = { ORR_NONE, ORR_NONE, !c->o.subgraph };
		uint32_t owner = ORR_NONE;

		while (depth && e->start_ns >= orr__compose_end(&r->events[stack[depth - 1].event]))
			depth--;
		if (depth)
			top = stack[depth - 1];
		for (size_t k = depth; k-- > 0;) {
			if (r->events[stack[k].event].kind == ORR_EVENT_OP) {
				owner = stack[k].event;
				break;
			}
		}
		w->owner[ev[i]] = owner;
		if (e->kind == ORR_EVENT_OP || e->kind == ORR_EVENT_ANNOTATION) {
			const char *name = orr_trace_str(t, e->name);
			int k;

			if (matches(c->o.subgraph, name) || repeat_of(c, name))
				for (uint32_t o = owner; o != ORR_NONE && !w->split[o];
				     o = w->owner[o])
					w->split[o] = 1;

			top.event = ev[i];
			top.keep = top.keep || matches(c->o.subgraph, name);
			if (top.region == ORR_NONE && (k = repeat_of(c, name)) > 1) {
				top.region = (uint32_t)w->nregions;
				ORR_VEC_PUSH(w->counts, w->nregions, w->cap_regions, (uint32_t)k);
			}
			ORR_VEC_PUSH(stack, depth, cap, top);
		}
		w->region[ev[i]] = top.region;
		w->keep[ev[i]] = top.keep;
	}
	free(stack);
}

/* Events by place, in start order, then each thread walked. */
static void walk_rank(const struct orr_compose *c, const struct orr_rank *r, struct walk *w)
{
	size_t *first = orr_xcalloc(r->nplaces + 1, sizeof(*first));
	uint32_t *order = orr_xmalloc((r->nevents ? r->nevents : 1) * sizeof(*order));
	size_t *at;

	for (size_t e = 0; e < r->nevents; e++) {
		w->owner[e] = w->region[e] = w->em[e] = w->item[e] = ORR_NONE;
		w->keep[e] = !c->o.subgraph;
		first[r->events[e].place + 1]++;
	}
	for (size_t p = 0; p < r->nplaces; p++)
		first[p + 1] += first[p];
	at = orr_xmalloc((r->nplaces + 1) * sizeof(*at));
	memcpy(at, first, (r->nplaces + 1) * sizeof(*at));
	for (size_t e = 0; e < r->nevents; e++)
		order[at[r->events[e].place]++] = (uint32_t)e;
	free(at);
	for (size_t p = 0; p < r->nplaces; p++)
		if (r->places[p].kind == ORR_PLACE_THREAD)
			walk_place(c, r, order + first[p], first[p + 1] - first[p], w);
	free(order);
	free(first);
}

/* The call that launched GPU task `task` (its D2 edge), or ORR_NONE. */
static uint32_t launch_of(const struct orr_graph *g, uint32_t task)
{
	const struct orr_task *tk = &orr_graph_tasks(g)[task];
	const struct orr_dep *d = &orr_graph_deps(g)[tk->first_dep];

	return tk->ndeps && d->kind == ORR_DEP_LAUNCH ? d->src : ORR_NONE;
}

static uint32_t task_event(const struct orr_graph *g, uint32_t task)
{
	return orr_graph_tasks(g)[task].event;
}

int64_t orr__compose_stream(const struct orr_graph *g, const struct orr_rank *r, uint32_t task)
{
	const struct orr_proc *p = &orr_graph_procs(g)[orr_graph_tasks(g)[task].proc];

	return r->places[p->place].tid;
}

/* A collective this plan can run again: a known kind and a size. */
static bool runnable_comm(const struct orr_compose *c, const struct orr_rank *r,
			  const struct orr_event *e)
{
	const struct orr_collective *co = e->coll < r->ncollectives ? &r->collectives[e->coll]
								    : NULL;
	enum orr_coll_kind k;

	if (!co)
		return false;
	k = orr_coll_kind_of(orr_trace_str(orr_graph_trace(c->g), co->type));
	if (k == ORR_COLL_UNKNOWN)
		return false;
	/* sizes bench.py --check accepts: 2^40 bytes of any dtype (docs/limits.md) */
	if (co->in_nelems > ORR_COMPOSE_MAX_TENSOR_BYTES / 16 ||
	    co->out_nelems > ORR_COMPOSE_MAX_TENSOR_BYTES / 16 ||
	    co->in_bytes > ORR_COMPOSE_MAX_TENSOR_BYTES ||
	    co->out_bytes > ORR_COMPOSE_MAX_TENSOR_BYTES)
		return false;
	return co->in_nelems >= 0 || co->out_nelems >= 0 || co->in_bytes >= 0 || co->out_bytes >= 0;
}

static bool is_comm_task(const struct orr_graph *g, uint32_t task)
{
	return orr_graph_tasks(g)[task].flags & ORR_TASK_F_COMM;
}

/* Whether communication task t of rank cr is in its step's window and can run again. */
static bool comm_here(const struct orr_compose *c, const struct crank *cr, uint32_t t)
{
	const struct orr_graph *g = c->g;
	uint32_t call = launch_of(g, t);
	uint32_t ev = call == ORR_NONE ? orr_graph_tasks(g)[t].event : task_event(g, call);
	const struct orr_event *at = &cr->r->events[ev];

	return at->start_ns >= cr->start_ns && at->start_ns < cr->end_ns &&
	       runnable_comm(c, cr->r, &cr->r->events[orr_graph_tasks(g)[t].event]);
}

/*
 * Which communication tasks are collectives the plan runs (c->comm_ok): those every
 * member rank of their instance (D7) can run in its step.  A member that can only sleep
 * would leave the others' real collective waiting for it forever (a rank traced without
 * its execution trace, a step window that misses it), so then every member sleeps.
 */
static void runnable_instances(struct orr_compose *c)
{
	const struct orr_graph *g = c->g;
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_proc *procs = orr_graph_procs(g);
	const uint32_t *members = orr_graph_members(g);
	size_t n = orr_graph_task_count(g);
	uint8_t *here = orr_xcalloc(n ? n : 1, 1);

	c->comm_ok = orr_xcalloc(n ? n : 1, 1);
	for (uint32_t t = 0; t < n; t++)
		if (tasks[t].kind == ORR_TASK_GPU && is_comm_task(g, t))
			here[t] = comm_here(c, &c->ranks[procs[tasks[t].proc].rank], t);
	for (uint32_t t = 0; t < n; t++) {
		const struct orr_group *grp;
		bool all = here[t];

		if (!all || tasks[t].aux == ORR_NONE || tasks[t].aux >= orr_graph_group_count(g)) {
			c->comm_ok[t] = all;
			continue;
		}
		grp = &orr_graph_groups(g)[tasks[t].aux];
		for (uint32_t m = 0; m < grp->n && all; m++)
			all = here[members[grp->first + m]];
		c->comm_ok[t] = all;
	}
	free(here);
}

/*
 * How long collective task `task` waited for its peers: from its start to the start of
 * the instance's last member (D7), within its duration, as orrery replay's breakdown
 * counts it; 0 for one coupled to no other rank.
 */
static int64_t peer_wait(const struct orr_graph *g, uint32_t task)
{
	const struct orr_task *tk = &orr_graph_tasks(g)[task];
	const struct orr_group *grp;
	const uint32_t *members = orr_graph_members(g);
	int64_t start = orr_graph_task_start(g, task), end = orr_graph_task_end(g, task);
	int64_t last = start;

	if (tk->aux == ORR_NONE || tk->aux >= orr_graph_group_count(g))
		return 0;
	grp = &orr_graph_groups(g)[tk->aux];
	for (uint32_t m = 0; m < grp->n; m++) {
		int64_t s = orr_graph_task_start(g, members[grp->first + m]);

		if (s > last)
			last = s;
	}
	if (last > end)
		last = end;
	return last - start;
}

static uint32_t push_item(struct crank *cr, struct citem it)
{
	ORR_VEC_PUSH(cr->items, cr->nitems, cr->cap, it);
	return (uint32_t)(cr->nitems - 1);
}

static struct citem base_item(const struct walk *w, const struct orr_event *e, uint32_t ev,
			      enum citem_kind kind)
{
	return (struct citem){ .cpu_ns = e->start_ns,
			       .stream = -1,
			       .from = -1,
			       .event = ev,
			       .place = e->place,
			       .ev = 0,
			       .region = w->region[ev],
			       .regions = w->region[ev] == ORR_NONE ? 1 : w->counts[w->region[ev]],
			       .task = ORR_NONE,
			       .keep = w->keep[ev],
			       .kind = (uint8_t)kind };
}

/*
 * Ops that call an op of their own name: a wrapper kernel ran, not the op's own.
 * Autocast's (WrapFunction in ATen's autocast_mode.h) casts the arguments and calls the
 * op again through the dispatcher, so the profiler and the execution trace record
 * aten::linear(bf16 input, fp32 weight) around aten::to(weight) and aten::linear(bf16,
 * bf16): the outer arguments are not those the work ran with, and the outer op run
 * alone (without autocast) refuses them.  Its children are rebuilt instead.
 */
static void mark_redispatch(const struct orr_compose *c, const struct orr_rank *r, struct walk *w)
{
	const struct orr_trace *t = orr_graph_trace(c->g);

	for (uint32_t e = 0; e < r->nevents; e++) {
		uint32_t p = w->owner[e];

		if (r->events[e].kind != ORR_EVENT_OP || p == ORR_NONE)
			continue;
		if (r->events[e].name == r->events[p].name ||
		    !strcmp(orr_trace_str(t, r->events[e].name),
			    orr_trace_str(t, r->events[p].name)))
			w->redo[p] = 1;
	}
}

/* Marks every op around a communication task, and makes the rebuilt ops' items. */
static void rebuilt_ops(struct orr_compose *c, struct crank *cr, struct walk *w)
{
	const struct orr_graph *g = c->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, cr->grank);
	const struct orr_rank *r = cr->r;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		uint32_t call = orr_graph_tasks(g)[t].kind == ORR_TASK_GPU ? launch_of(g, t)
									   : ORR_NONE;

		if (call == ORR_NONE || !is_comm_task(g, t))
			continue;
		for (uint32_t o = w->owner[task_event(g, call)]; o != ORR_NONE && !w->comm[o];
		     o = w->owner[o])
			w->comm[o] = 1;
	}
	for (uint32_t e = 0; e < r->nevents; e++) {
		const struct orr_event *ev = &r->events[e];
		uint32_t p = w->owner[e];
		const char *why;

		if (ev->kind != ORR_EVENT_OP)
			continue;
		if (p != ORR_NONE && w->em[p] != ORR_NONE) {
			w->em[e] = w->em[p];
			continue;
		}
		if (ev->start_ns < cr->start_ns || ev->start_ns >= cr->end_ns)
			continue;
		if ((why = orr__compose_refused(c, cr, e))) /* listed even without GPU work */
			orr__compose_missing(c, orr_trace_str(orr_graph_trace(c->g), ev->name), why,
					     0, 0);
		if (w->comm[e] || w->split[e] || w->redo[e] || orr__compose_unbuildable(c, cr, e))
			continue;
		w->em[e] = e;
		w->item[e] = push_item(cr, base_item(w, ev, e, CI_OP));
	}
}

/* Why the GPU task of `owner` (ORR_NONE: none) is not rebuilt. */
static void add_missing(struct orr_compose *c, const struct crank *cr, const struct walk *w,
			uint32_t owner, const char *why, int64_t dur)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const char *reason = why;

	if (!reason && owner != ORR_NONE)
		reason = w->comm[owner]    ? "inside an op that communicates"
			 : w->split[owner] ? "inside an op holding a --subgraph or --repeat region"
			 : w->redo[owner] ? "launched by an op that calls itself again (autocast), "
					    "outside its inner call"
					  : orr__compose_unbuildable(c, cr, owner);
	if (!reason)
		reason = owner == ORR_NONE ? "launched outside any operator" : "outside the step";
	orr__compose_missing(c,
			     owner == ORR_NONE ? "(no operator)"
					       : orr_trace_str(t, cr->r->events[owner].name),
			     reason, 1, dur);
}

/* Every GPU task of the step: part of a rebuilt op, a collective, or a stand-in. */
static void gpu_items(struct orr_compose *c, struct crank *cr, struct walk *w, uint32_t *item_of)
{
	const struct orr_graph *g = c->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, cr->grank);
	const struct orr_rank *r = cr->r;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_task *tk = &orr_graph_tasks(g)[t];
		const struct orr_event *ge = &r->events[tk->event];
		uint32_t call = tk->kind == ORR_TASK_GPU ? launch_of(g, t) : ORR_NONE;
		uint32_t ce = call == ORR_NONE ? ORR_NONE : task_event(g, call);
		uint32_t owner = ce == ORR_NONE ? ORR_NONE : w->owner[ce];
		const struct orr_event *at = ce == ORR_NONE ? ge : &r->events[ce];
		bool comm;
		struct citem it;

		item_of[t - gr->first_task] = ORR_NONE;
		if (tk->kind != ORR_TASK_GPU)
			continue;
		if (owner != ORR_NONE && w->em[owner] != ORR_NONE) {
			struct citem *op = &cr->items[w->item[w->em[owner]]];

			op->gpu_ns = orr_time_add(op->gpu_ns, ge->dur_ns);
			if (op->stream < 0)
				op->stream = orr__compose_stream(g, r, t);
			item_of[t - gr->first_task] = w->item[w->em[owner]];
			cr->st.gpu_ns = orr_time_add(cr->st.gpu_ns, ge->dur_ns);
			continue;
		}
		if (at->start_ns < cr->start_ns || at->start_ns >= cr->end_ns)
			continue;
		comm = is_comm_task(g, t) && c->comm_ok[t];
		it = base_item(w, at, ce == ORR_NONE ? tk->event : ce, comm ? CI_COMM : CI_FILL);
		it.event = tk->event;
		it.place = ce == ORR_NONE ? ORR_NONE : at->place;
		it.gpu_ns = it.dur_ns = ge->dur_ns;
		it.wait_ns = comm ? peer_wait(g, t) : 0;
		it.task = t;
		it.stream = orr__compose_stream(g, r, t);
		if (ce == ORR_NONE) {
			it.region = ORR_NONE;
			it.regions = 1;
			it.keep = !c->o.subgraph;
		}
		item_of[t - gr->first_task] = push_item(cr, it);
		cr->st.gpu_ns = orr_time_add(cr->st.gpu_ns, ge->dur_ns);
		if (!comm)
			add_missing(c, cr, w, owner,
				    !is_comm_task(g, t) ? NULL
				    : runnable_comm(c, r, ge)
					    ? "collective a member rank cannot "
					      "run in its step"
					    : "collective of unknown kind or size",
				    ge->dur_ns);
	}
}

/* The stream a blocking call waits for: -1 for the whole device, -2 for none known. */
static int64_t sync_stream(const struct orr_graph *g, const struct orr_rank *r,
			   const struct orr_wait *wt)
{
	const struct orr_proc *procs = orr_graph_procs(g);
	const struct orr_task *tasks = orr_graph_tasks(g);

	switch (wt->kind) {
	case ORR_WAIT_DEVICE:
		return -1;
	case ORR_WAIT_STREAM:
		return r->places[procs[wt->target].place].tid;
	case ORR_WAIT_TASK:
		return orr__compose_stream(g, r, wt->target);
	case ORR_WAIT_EVENT: {
		const struct orr_task *rec = &tasks[wt->target];
		const struct orr_wait *rw = rec->aux == ORR_NONE ? NULL
								 : &orr_graph_waits(g)[rec->aux];

		return rw && rw->kind == ORR_WAIT_RECORD ? r->places[procs[rw->target].place].tid
							 : -2;
	}
	default:
		return -2;
	}
}

/* Blocking calls outside rebuilt ops: the CPU waited there for the GPU. */
static void sync_items(struct orr_compose *c, struct crank *cr, const struct walk *w)
{
	const struct orr_graph *g = c->g;
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, cr->grank);
	const struct orr_rank *r = cr->r;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_task *tk = &orr_graph_tasks(g)[t];
		const struct orr_event *e = &r->events[tk->event];
		uint32_t owner = w->owner[tk->event];
		struct citem it;
		int64_t s;

		if (tk->kind != ORR_TASK_CPU || !(tk->flags & ORR_TASK_F_BLOCKING) ||
		    tk->aux == ORR_NONE || e->start_ns < cr->start_ns ||
		    e->start_ns >= cr->end_ns || (owner != ORR_NONE && w->em[owner] != ORR_NONE))
			continue;
		s = sync_stream(g, r, &orr_graph_waits(g)[tk->aux]);
		if (s == -2)
			continue;
		it = base_item(w, e, tk->event, CI_SYNC);
		it.stream = s;
		it.ev = s == -1;
		push_item(cr, it);
	}
}

static int cmp_item(const void *a, const void *b, void *data)
{
	const struct citem *items = data;
	const struct citem *x = &items[*(const uint32_t *)a];
	const struct citem *y = &items[*(const uint32_t *)b];
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (x->cpu_ns != y->cpu_ns)
		return (x->cpu_ns > y->cpu_ns) - (x->cpu_ns < y->cpu_ns);
	return (i > j) - (i < j);
}

/* Items in issue order; item_of follows them. */
static void order_items(struct crank *cr, uint32_t *item_of, size_t ntasks)
{
	uint32_t *perm = orr_xmalloc((cr->nitems ? cr->nitems : 1) * sizeof(*perm));
	uint32_t *rank_of = orr_xmalloc((cr->nitems ? cr->nitems : 1) * sizeof(*rank_of));
	struct citem *sorted = orr_xmalloc((cr->nitems ? cr->nitems : 1) * sizeof(*sorted));

	for (uint32_t i = 0; i < cr->nitems; i++)
		perm[i] = i;
	qsort_r(perm, cr->nitems, sizeof(*perm), cmp_item, cr->items);
	for (uint32_t i = 0; i < cr->nitems; i++) {
		sorted[i] = cr->items[perm[i]];
		rank_of[perm[i]] = i;
	}
	for (size_t t = 0; t < ntasks; t++)
		if (item_of[t] != ORR_NONE)
			item_of[t] = rank_of[item_of[t]];
	free(cr->items);
	cr->items = sorted;
	cr->cap = cr->nitems ? cr->nitems : 1;
	free(rank_of);
	free(perm);
}

static void plan_rank(struct orr_compose *c, struct crank *cr)
{
	const struct orr_rank *r = cr->r;
	const struct orr_graph_rank *gr = orr_graph_get_rank(c->g, cr->grank);
	size_t n = r->nevents ? r->nevents : 1;
	struct walk w = { 0 };
	uint32_t *item_of = orr_xmalloc((gr->ntasks ? gr->ntasks : 1) * sizeof(*item_of));

	w.owner = orr_xmalloc(n * sizeof(*w.owner));
	w.region = orr_xmalloc(n * sizeof(*w.region));
	w.em = orr_xmalloc(n * sizeof(*w.em));
	w.item = orr_xmalloc(n * sizeof(*w.item));
	w.keep = orr_xcalloc(n, 1);
	w.comm = orr_xcalloc(n, 1);
	w.split = orr_xcalloc(n, 1);
	w.redo = orr_xcalloc(n, 1);
	if (!cr->et_of_event)
		cr->et_of_event = orr__compose_et_links(r);
	if (!cr->lists)
		cr->lists = orr__compose_lists_new(orr_graph_trace(c->g), r);
	walk_rank(c, r, &w);
	mark_redispatch(c, r, &w);
	rebuilt_ops(c, cr, &w);
	gpu_items(c, cr, &w, item_of);
	sync_items(c, cr, &w);
	order_items(cr, item_of, gr->ntasks);
	orr__compose_sync(c, cr, item_of);
	free(item_of);
	free(w.owner);
	free(w.region);
	free(w.em);
	free(w.item);
	free(w.keep);
	free(w.comm);
	free(w.split);
	free(w.redo);
	free(w.counts);
}

static int check_options(const struct orr_compose_options *o, struct orr_diag *d)
{
	for (size_t i = 0; i < o->nrepeats; i++)
		if (!o->repeats[i].pattern || o->repeats[i].count < 1 ||
		    o->repeats[i].count > COMPOSE_MAX_REPEAT)
			return orr_diag_set(d, -EINVAL, "", -1, -1,
					    "a repeat count is from 1 to %d", COMPOSE_MAX_REPEAT);
	if (o->steps < 1 || o->warmup < 0)
		return orr_diag_set(d, -EINVAL, "", -1, -1, "at least one step to time");
	for (size_t i = 0; i < o->nnamespaces; i++)
		if (!o->namespaces[i] || !orr__compose_identifier(o->namespaces[i]))
			return orr_diag_set(
				d, -EINVAL, "", -1, -1,
				"a namespace is an identifier ([A-Za-z_][A-Za-z0-9_]*)");
	return 0;
}

static int cmp_missing(const void *a, const void *b)
{
	const struct orr_compose_missing *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return (x->gpu_ns < y->gpu_ns) - (x->gpu_ns > y->gpu_ns);
	if (strcmp(x->name, y->name))
		return strcmp(x->name, y->name);
	return strcmp(x->reason, y->reason);
}

static bool nothing_kept(const struct orr_compose *c)
{
	for (size_t i = 0; i < c->nranks; i++)
		if (c->ranks[i].nitems)
			return false;
	return true;
}

int orr_compose_build(const struct orr_graph *g, const struct orr_compose_options *opts,
		      struct orr_compose **ret, struct orr_diag *reterr_diag)
{
	struct orr_compose *c = orr_xcalloc(1, sizeof(*c));
	int64_t step = -1, args = -1;
	int err;

	*ret = NULL;
	c->g = g;
	c->o = *opts;
	c->strs = orr_strtab_new();
	if ((err = check_options(opts, reterr_diag)) ||
	    (err = orr__compose_choose_step(c, &step, &args, reterr_diag)))
		goto fail;
	c->nranks = orr_graph_rank_count(g);
	c->ranks = orr_xcalloc(c->nranks ? c->nranks : 1, sizeof(*c->ranks));
	for (size_t i = 0; i < c->nranks; i++) {
		c->ranks[i].r = orr_graph_get_rank(g, i)->rank;
		c->ranks[i].grank = i;
		c->ranks[i].st.rank = c->ranks[i].r->rank;
		c->ranks[i].st.args_step = -1;
	}
	orr__compose_map_ranks(c, args, &step);
	for (size_t i = 0; i < c->nranks; i++) {
		struct crank *cr = &c->ranks[i];

		if (!cr->et_of_event) {
			if ((err = orr__compose_rank_window(c, cr, step, reterr_diag)))
				goto fail;
			cr->st.args_step = step == args ? args : -1;
		}
	}
	runnable_instances(c);
	for (size_t i = 0; i < c->nranks; i++) {
		struct crank *cr = &c->ranks[i];

		plan_rank(c, cr);
		if ((err = orr__compose_check_sizes(c, cr, reterr_diag)))
			goto fail;
	}
	if (c->o.subgraph && nothing_kept(c)) {
		err = orr_diag_set(
			reterr_diag, -ENOENT, "", -1, -1,
			"nothing runs inside an annotation or op named '%s' in step %lld",
			c->o.subgraph, (long long)step);
		goto fail;
	}
	if (c->nmissing)
		qsort(c->missing, c->nmissing, sizeof(*c->missing), cmp_missing);
	*ret = c;
	return 0;
fail:
	orr_compose_free(c);
	return err;
}

void orr_compose_free(struct orr_compose *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nranks; i++) {
		free(c->ranks[i].items);
		free(c->ranks[i].et_of_event);
		orr__compose_lists_free(c->ranks[i].lists);
	}
	free(c->ranks);
	free(c->comm_ok);
	free(c->missing);
	orr_strtab_free(c->strs);
	free(c);
}

size_t orr_compose_rank_count(const struct orr_compose *c)
{
	return c->nranks;
}

const struct orr_compose_rank *orr_compose_get_rank(const struct orr_compose *c, size_t i)
{
	return i < c->nranks ? &c->ranks[i].st : NULL;
}

void orr_compose_coverage_of(const struct orr_compose *c, struct orr_compose_coverage *ret)
{
	*ret = (struct orr_compose_coverage){ 0 };
	for (size_t i = 0; i < c->nranks; i++) {
		const struct orr_compose_rank *r = &c->ranks[i].st;

		ret->gpu_ns += r->gpu_ns;
		ret->op_ns += r->op_ns;
		ret->comm_ns += r->comm_ns;
		ret->comm_wait_ns += r->comm_wait_ns;
		ret->fill_ns += r->fill_ns;
		ret->dropped_ns += r->dropped_ns;
	}
}

size_t orr_compose_missing_count(const struct orr_compose *c)
{
	return c->nmissing;
}

const struct orr_compose_missing *orr_compose_get_missing(const struct orr_compose *c, size_t i)
{
	return i < c->nmissing ? &c->missing[i] : NULL;
}
