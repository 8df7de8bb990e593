/* SPDX-License-Identifier: MIT */
/*
 * One side of `orrery diff` (docs/orrery-diff.md): in each rank's steps (its whole
 * capture without steps), the step times, the breakdown, the GPU tasks by name and by
 * class, and the framework ops by CPU self time, by name and by name with their input
 * shapes.  A predicted side takes the same tasks with their replayed times; ops have no
 * predicted times and stay out of it.
 */
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

static struct orr_diff_item *slot(struct orr_diff_map *m, const char *key, const char *name)
{
	uint32_t id;

	if (!key[0]) /* the string table's id 0 is "": no index */
		key = name = "(no name)";
	id = orr_strtab_intern(m->ids, key, strlen(key));

	if (id > m->n)
		ORR_VEC_PUSH(
			m->v, m->n, m->cap,
			((struct orr_diff_item){ orr_xstrdup(key), orr_xstrdup(name), 0, 0, 0 }));
	return &m->v[id - 1];
}

const struct orr_diff_item *orr_diff_find(const struct orr_diff_map *m, const char *key)
{
	uint32_t id = orr_strtab_find(m->ids, key[0] ? key : "(no name)",
				      strlen(key[0] ? key : "(no name)"));

	return id == UINT32_MAX || id == 0 || id > m->n ? NULL : &m->v[id - 1];
}

static void map_init(struct orr_diff_map *m)
{
	*m = (struct orr_diff_map){ .ids = orr_strtab_new() };
}

static void map_release(struct orr_diff_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].key);
		free(m->v[i].name);
	}
	free(m->v);
	orr_strtab_free(m->ids);
}

/* "aten::mm [8x1024, 1024x1024]" from the op's recorded inputs; false without any. */
static bool shape_key(const struct orr_trace *t, const struct orr_rank *r,
		      const struct orr_event *e, char *buf, size_t size)
{
	const struct orr_op_args *a = e->args < r->nops ? &r->ops[e->args] : NULL;
	size_t k;

	if (!a || !a->ninputs)
		return false;
	k = (size_t)snprintf(buf, size, "%s [", orr_trace_str(t, e->name));
	for (uint32_t i = 0; i < a->ninputs && k < size; i++) {
		const struct orr_input *in = &r->inputs[a->first_input + i];

		k += (size_t)snprintf(buf + k, size - k, "%s", i ? ", " : "");
		/* a list of tensors' members (counts and shapes) are left out, as before */
		for (uint32_t d = 0; !in->is_list && d < in->ndims && k < size; d++)
			k += (size_t)snprintf(buf + k, size - k, "%s%lld", d ? "x" : "",
					      (long long)r->dims[in->first_dim + d]);
	}
	if (k < size)
		snprintf(buf + k, size - k, "]");
	return k + 1 < size;
}

static bool in_steps(const struct orr_replay_step *s, size_t n, int64_t t)
{
	for (size_t i = 0; i < n; i++)
		if (t >= s[i].measured_start_ns && t < s[i].measured_end_ns)
			return true;
	return false;
}

/* Ops by CPU self time (orrery summary's), by name and by name with shapes. */
static void ops(struct orr_diff_profile *p, const struct orr_trace *t, const struct orr_rank *r,
		const struct orr_replay_step *s, size_t ns)
{
	int64_t *self = orr_op_self_times(r);
	char key[1024];

	for (uint32_t e = 0; e < r->nevents; e++) {
		const struct orr_event *ev = &r->events[e];
		const char *name = orr_trace_str(t, ev->name);
		struct orr_diff_item *it;
		bool shaped;

		if (ev->kind != ORR_EVENT_OP || !in_steps(s, ns, ev->start_ns))
			continue;
		shaped = shape_key(t, r, ev, key, sizeof(key));
		it = slot(&p->ops, name, name);
		it->ns += self[e];
		it->count++;
		it->shaped += shaped;
		if (shaped) {
			it = slot(&p->ops_shaped, key, name);
			it->ns += self[e];
			it->count++;
		}
	}
	free(self);
}

static void gpu(struct orr_diff_profile *p, const struct orr_replay *r, size_t k,
		const struct orr_replay_step *s, size_t ns)
{
	const struct orr_graph *g = orr_replay_graph(r);
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, k);

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		int64_t d;
		size_t c;
		struct orr_diff_item *it;

		if (orr_graph_tasks(g)[t].kind != ORR_TASK_GPU ||
		    !in_steps(s, ns, orr_graph_task_start(g, t)))
			continue;
		d = p->predicted ? orr_replay_end(r, t) - orr_replay_start(r, t)
				 : orr_graph_task_end(g, t) - orr_graph_task_start(g, t);
		it = slot(&p->kernels, orr_graph_task_name(g, t), orr_graph_task_name(g, t));
		it->ns += d;
		it->count++;
		c = orr_kernel_class(g, t);
		p->class_ns[c] += d;
		p->class_count[c]++;
	}
}

static void add_breakdown(struct orr_breakdown *to, const struct orr_breakdown *b)
{
	to->exposed_compute_ns += b->exposed_compute_ns;
	to->overlapped_ns += b->overlapped_ns;
	to->exposed_comm_ns += b->exposed_comm_ns;
	to->other_ns += b->other_ns;
	to->exposed_wait_ns += b->exposed_wait_ns;
}

void orr_diff_profile_build(struct orr_diff_profile *p, const char *label,
			    const struct orr_replay *r, bool predicted)
{
	const struct orr_graph *g = orr_replay_graph(r);
	const struct orr_trace *t = orr_graph_trace(g);

	*p = (struct orr_diff_profile){ .label = label, .predicted = predicted };
	map_init(&p->kernels);
	map_init(&p->ops);
	map_init(&p->ops_shaped);
	p->nranks = orr_graph_rank_count(g);
	p->ranks = orr_xcalloc(p->nranks + 1, sizeof(*p->ranks));
	for (size_t k = 0; k < p->nranks; k++) {
		const struct orr_rank *rk = orr_graph_get_rank(g, k)->rank;
		struct orr_diff_rank *dr = &p->ranks[k];
		struct orr_replay_step *s;
		size_t ns;

		orr_replay_steps(r, k, &s, &ns);
		dr->rank = rk->rank;
		dr->steps = ns;
		for (size_t i = 0; i < ns; i++) {
			int64_t a = predicted ? s[i].predicted_start_ns : s[i].measured_start_ns;
			int64_t b = predicted ? s[i].predicted_end_ns : s[i].measured_end_ns;
			struct orr_breakdown bd;

			dr->step_ns += b - a;
			orr_replay_breakdown(r, k, predicted, a, b, &bd);
			add_breakdown(&dr->b, &bd);
		}
		p->steps += ns;
		gpu(p, r, k, s, ns);
		if (!predicted)
			ops(p, t, rk, s, ns);
		free(s);
	}
}

void orr_diff_profile_release(struct orr_diff_profile *p)
{
	map_release(&p->kernels);
	map_release(&p->ops);
	map_release(&p->ops_shaped);
	free(p->ranks);
	*p = (struct orr_diff_profile){ 0 };
}
