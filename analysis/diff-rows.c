/* SPDX-License-Identifier: MIT */
/*
 * The rows of `orrery diff` (docs/orrery-diff.md): two profiles compared item by item,
 * per rank-step, ranked by contribution; for cmd-diff.c and the report's diff section.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

static double per_step(int64_t ns, const struct orr_diff_profile *p)
{
	return p->steps ? (double)ns / (double)p->steps : 0.0;
}

static void add_row(struct orr_diff_table *t, const char *kind, const char *key,
		    const struct orr_diff_item *x, const struct orr_diff_item *y,
		    const struct orr_diff_profile *a, const struct orr_diff_profile *b)
{
	ORR_VEC_PUSH(t->v, t->n, t->cap,
		     ((struct orr_diff_row){ kind, key, x ? per_step(x->ns, a) : 0,
					     y ? per_step(y->ns, b) : 0, x ? x->count : 0,
					     y ? y->count : 0 }));
}

static int cmp_contribution(const void *p, const void *q)
{
	const struct orr_diff_row *x = p, *y = q;
	double dx = fabs(x->b - x->a), dy = fabs(y->b - y->a);

	if (dx != dy)
		return (dx < dy) - (dx > dy);
	return strcmp(x->key, y->key);
}

/* Every key of either map, once. */
void orr_diff_union_rows(struct orr_diff_table *t, const char *kind, const struct orr_diff_map *ma,
			 const struct orr_diff_map *mb, const struct orr_diff_profile *a,
			 const struct orr_diff_profile *b)
{
	for (size_t i = 0; i < ma->n; i++)
		add_row(t, kind, ma->v[i].key, &ma->v[i], orr_diff_find(mb, ma->v[i].key), a, b);
	for (size_t i = 0; i < mb->n; i++)
		if (!orr_diff_find(ma, mb->v[i].key))
			add_row(t, kind, mb->v[i].key, NULL, &mb->v[i], a, b);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_contribution);
}

/* Both sides recorded the shapes of every op named name. */
static bool by_shape(const char *name, const struct orr_diff_profile *a,
		     const struct orr_diff_profile *b)
{
	const struct orr_diff_item *x = orr_diff_find(&a->ops, name),
				   *y = orr_diff_find(&b->ops, name);

	return x && y && x->shaped == x->count && y->shaped == y->count;
}

void orr_diff_op_rows(struct orr_diff_table *t, const struct orr_diff_profile *a,
		      const struct orr_diff_profile *b)
{
	const struct orr_diff_profile *side[2] = { a, b };

	for (int s = 0; s < 2; s++) {
		const struct orr_diff_map *m = &side[s]->ops_shaped, *o = &side[!s]->ops_shaped;

		for (size_t i = 0; i < m->n; i++) {
			const struct orr_diff_item *x = &m->v[i], *y = orr_diff_find(o, x->key);

			if (!by_shape(x->name, a, b) || (s == 1 && y))
				continue;
			add_row(t, "op", x->key, s ? y : x, s ? x : y, a, b);
		}
		for (size_t i = 0; i < side[s]->ops.n; i++) {
			const struct orr_diff_item *x = &side[s]->ops.v[i];
			const struct orr_diff_item *y = orr_diff_find(&side[!s]->ops, x->key);

			if (by_shape(x->name, a, b) || (s == 1 && y))
				continue;
			add_row(t, "op", x->key, s ? y : x, s ? x : y, a, b);
		}
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_contribution);
}

void orr_diff_class_rows(struct orr_diff_table *t, const struct orr_diff_profile *a,
			 const struct orr_diff_profile *b)
{
	for (size_t c = 0; c < ORR_SUM_CLASSES; c++) {
		if (!a->class_count[c] && !b->class_count[c])
			continue;
		ORR_VEC_PUSH(t->v, t->n, t->cap,
			     ((struct orr_diff_row){ "class", orr_kernel_class_name(c),
						     per_step(a->class_ns[c], a),
						     per_step(b->class_ns[c], b), a->class_count[c],
						     b->class_count[c] }));
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_contribution);
}

struct orr_diff_totals orr_diff_totals_of(const struct orr_diff_profile *p)
{
	struct orr_diff_totals t = { 0 };

	for (size_t i = 0; i < p->nranks; i++) {
		const struct orr_diff_rank *r = &p->ranks[i];

		t.step += (double)r->step_ns;
		t.compute += (double)(r->b.exposed_compute_ns + r->b.overlapped_ns);
		t.comm += (double)r->b.exposed_comm_ns;
		t.wait += (double)r->b.exposed_wait_ns;
		t.idle += (double)r->b.other_ns;
	}
	if (p->steps) {
		t.step /= (double)p->steps;
		t.compute /= (double)p->steps;
		t.comm /= (double)p->steps;
		t.wait /= (double)p->steps;
		t.idle /= (double)p->steps;
	}
	return t;
}

/* The rank of b compared with a's i-th: the same number, or the only one of each. */
const struct orr_diff_rank *orr_diff_peer_rank(const struct orr_diff_profile *a, size_t i,
					       const struct orr_diff_profile *b)
{
	for (size_t k = 0; k < b->nranks; k++)
		if (b->ranks[k].rank == a->ranks[i].rank)
			return &b->ranks[k];
	return a->nranks == 1 && b->nranks == 1 ? &b->ranks[0] : NULL;
}

double orr_diff_rank_mean(const struct orr_diff_rank *r)
{
	return r && r->steps ? (double)r->step_ns / (double)r->steps : NAN;
}

void orr_diff_table_release(struct orr_diff_table *t)
{
	free(t->v);
	*t = (struct orr_diff_table){ 0 };
}
