/* SPDX-License-Identifier: MIT */
/*
 * The role of each communicator a rank uses: tensor (TP), data (DP), pipeline (PP),
 * context (CP) or expert (EP) parallelism.
 *
 * 1. Its description names it (read): Megatron-Core names its process groups
 *    (TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP, ...), torchtitan's device mesh
 *    names its dimensions (tp, dp_shard, pp, cp, ep).
 * 2. Otherwise what goes through it (inferred):
 *    - all-reduces, reduce-scatters or all-gathers of T·h elements launched in the
 *      forward pass are a layer's activations: TP (with sequence parallelism too);
 *    - point-to-point transfers of T·h elements are activations between stages: PP;
 *    - all-reduces or reduce-scatters launched from the backward pass or the
 *      optimizer are gradients: DP;
 *    - anything else is not told apart (an all-to-all is EP in a mixture of experts and
 *      an embedding exchange in a recommender).
 * 3. What they say of the layout: tp from the group of the activation all-reduces
 *    (orr__tp_group()), tp and dp from the sizes of the TP and DP communicators
 *    (orr__layout_from_comms()).
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define set orr__value_set

static bool known(const struct orr_value *v)
{
	return v->how != ORR_VALUE_UNKNOWN;
}

const char *orr_par_name(enum orr_par p)
{
	static const char *const names[] = { "unknown", "TP", "DP", "PP", "CP", "EP" };

	return p >= 0 && p < ORR_PAR_COUNT ? names[p] : NULL;
}

/*
 * Whether a description names a group over several dimensions, or over part of one:
 * Megatron-Core's TENSOR_AND_DATA_PARALLEL_GROUP (tp x dp), DATA_PARALLEL_GROUP_WITH_CP
 * (dp x cp), MODEL_PARALLEL_GROUP (tp x pp), the expert layers' tensor and data groups,
 * the first and last stages' EMBEDDING_GROUP, the partial data-parallel groups of its
 * distributed optimizer; torchtitan's flattened meshes (dp_cp, dp_shard_cp).  Its size is
 * none of tp, dp, pp, cp or ep, and what it carries tells no one role either.
 */
static bool several(const char *desc)
{
	static const char *const globs[] = { "*_and_*",        "*_with_*",     "model_parallel*",
					     "expert_tensor*", "expert_data*", "*embedding*",
					     "*partial*",      "dp*_cp" };

	for (size_t i = 0; desc && i < sizeof(globs) / sizeof(globs[0]); i++)
		if (fnmatch(globs[i], desc, FNM_CASEFOLD) == 0)
			return true;
	return false;
}

/* The role a description names; ORR_PAR_UNKNOWN. */
static enum orr_par named(const char *desc)
{
	static const struct {
		const char *glob;
		enum orr_par par;
	} globs[] = {
		{ "*tensor*", ORR_PAR_TP },   { "tp", ORR_PAR_TP },      { "*_tp", ORR_PAR_TP },
		{ "*pipeline*", ORR_PAR_PP }, { "pp", ORR_PAR_PP },      { "*_pp", ORR_PAR_PP },
		{ "*context*", ORR_PAR_CP },  { "cp", ORR_PAR_CP },      { "*_cp", ORR_PAR_CP },
		{ "*expert*", ORR_PAR_EP },   { "ep", ORR_PAR_EP },      { "*_ep", ORR_PAR_EP },
		{ "*data*", ORR_PAR_DP },     { "dp*", ORR_PAR_DP },     { "*_dp*", ORR_PAR_DP },
		{ "fsdp", ORR_PAR_DP },       { "*shard*", ORR_PAR_DP },
	};

	for (size_t i = 0; desc && i < sizeof(globs) / sizeof(globs[0]); i++)
		if (fnmatch(globs[i].glob, desc, FNM_CASEFOLD) == 0)
			return globs[i].par;
	return ORR_PAR_UNKNOWN;
}

/* The communicator row of r whose name is `name`, or NULL. */
static const struct orr_comm *comm_row(const struct orr_rank *r, uint32_t name)
{
	for (size_t i = 0; i < r->ncomms; i++)
		if (r->comms[i].name == name)
			return &r->comms[i];
	return NULL;
}

/* The communicator entry for name (an interned pg name, or ORR_STR_NONE), added. */
static struct orr_comm_role *entry(struct orr_structure *st, const struct orr_trace *t,
				   const struct orr_rank *r, uint32_t name, uint32_t desc)
{
	const struct orr_comm *row;
	struct orr_comm_role *c;

	for (size_t i = 0; i < st->ncomms; i++)
		if (st->comms[i].name_id == name)
			return &st->comms[i];
	if (st->ncomms == ORR_MAX_COMM_ROLES)
		return NULL;
	c = &st->comms[st->ncomms++];
	memset(c, 0, sizeof(*c));
	c->name_id = name;
	c->name = name == ORR_STR_NONE ? NULL : orr_trace_str(t, name);
	row = name == ORR_STR_NONE ? NULL : comm_row(r, name);
	if (desc == ORR_STR_NONE && row)
		desc = row->desc;
	c->desc = desc == ORR_STR_NONE ? NULL : orr_trace_str(t, desc);
	c->size = row ? row->size : -1;
	return c;
}

void orr__roles_note(struct orr_structure *st, const struct orr_trace *t, const struct orr_rank *r,
		     const struct orr_collective *co, bool backward, double bytes)
{
	struct orr_comm_role *c = entry(st, t, r, co->pg_name, co->pg_desc);
	enum orr_coll_kind k = orr_coll_kind_of(orr_trace_str(t, co->type));
	double th = (double)st->tokens.value * (double)st->hidden.value;

	if (!c)
		return;
	c->collectives++;
	if (co->group_size > 0 && c->size < 0)
		c->size = co->group_size;
	if (k == ORR_COLL_ALL_TO_ALL)
		c->all_to_all++;
	if (backward && (k == ORR_COLL_ALL_REDUCE || k == ORR_COLL_REDUCE_SCATTER))
		c->gradients++;
	/* T·h elements of 1, 2 or 4 bytes: a layer's activations. */
	if (th > 0 && bytes > 0 && !backward && fmod(bytes, th) == 0 && bytes / th <= 4) {
		if (k == ORR_COLL_SEND_RECV)
			c->stage_transfers++;
		else if (k == ORR_COLL_ALL_REDUCE || k == ORR_COLL_REDUCE_SCATTER ||
			 k == ORR_COLL_ALL_GATHER)
			c->activations++;
	}
}

void orr__roles_decide(struct orr_structure *st)
{
	for (size_t i = 0; i < st->ncomms; i++) {
		struct orr_comm_role *c = &st->comms[i];
		enum orr_par p = named(c->desc);

		if (p == ORR_PAR_UNKNOWN)
			p = named(c->name);
		if (several(c->desc) || (!c->desc && several(c->name))) {
			c->role = ORR_PAR_UNKNOWN;
			c->how = ORR_VALUE_UNKNOWN;
			snprintf(c->why, sizeof(c->why),
				 "its name or description says it spans several parallel "
				 "dimensions, or part of one");
		} else if (p != ORR_PAR_UNKNOWN) {
			c->role = p;
			c->how = ORR_VALUE_READ;
			snprintf(c->why, sizeof(c->why), "its name or description says so");
		} else if (c->activations) {
			c->role = ORR_PAR_TP;
			c->how = ORR_VALUE_INFERRED;
			snprintf(c->why, sizeof(c->why),
				 "%zu of its collectives in the forward pass carry T x h elements",
				 c->activations);
		} else if (c->stage_transfers) {
			c->role = ORR_PAR_PP;
			c->how = ORR_VALUE_INFERRED;
			snprintf(c->why, sizeof(c->why),
				 "%zu point-to-point transfers of T x h elements",
				 c->stage_transfers);
		} else if (c->gradients) {
			c->role = ORR_PAR_DP;
			c->how = ORR_VALUE_INFERRED;
			snprintf(c->why, sizeof(c->why),
				 "%zu all-reduces or reduce-scatters launched in the backward pass "
				 "or the optimizer (gradients)",
				 c->gradients);
		} else {
			c->role = ORR_PAR_UNKNOWN;
			c->how = ORR_VALUE_UNKNOWN;
			snprintf(c->why, sizeof(c->why), "%s",
				 c->all_to_all ? "all-to-alls: expert parallelism, or an embedding "
						 "exchange"
					       : "nothing it carries tells");
		}
	}
}

/* Whether o is an all-reduce (or, with SP, a reduce-scatter) of T·h elements. */
static bool activation_reduce(const struct orr_structure *st, const struct orr_coll_obs *o)
{
	int64_t th;

	if (__builtin_mul_overflow(st->tokens.value, st->hidden.value, &th) || th <= 0 ||
	    !(o->s.bytes > 0 && o->s.bytes <= 4.0 * (double)th))
		return false;
	return (o->kind == ORR_COLL_ALL_REDUCE || o->kind == ORR_COLL_REDUCE_SCATTER) &&
	       (int64_t)o->s.bytes % th == 0;
}

/*
 * The tensor-parallel group: the group most of the activation all-reduces have (every
 * layer's outputs have one each; another collective of such a size, e.g. a gradient
 * bucket that happens to be a multiple of T·h, is outnumbered by them).  Groups are
 * counted in a small table; past its size the rest count as others.
 */
void orr__tp_group(struct orr_structure *st, const struct orr_coll_obs *o, size_t n)
{
	struct {
		int group;
		size_t count;
	} g[8] = { 0 };
	size_t ng = 0, all = 0, best = 0;

	if (!known(&st->tokens) || !known(&st->hidden))
		return;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (!activation_reduce(st, &o[i]))
			continue;
		all++;
		while (k < ng && g[k].group != o[i].s.group)
			k++;
		if (k == ng && ng == sizeof(g) / sizeof(g[0]))
			continue;
		if (k == ng)
			g[ng++].group = o[i].s.group;
		g[k].count++;
	}
	if (!all)
		return;
	for (size_t k = 1; k < ng; k++)
		if (g[k].count > g[best].count)
			best = k;
	if (known(&st->tp) && st->tp.value != g[best].group) {
		set(&st->tp, 0, ORR_VALUE_UNKNOWN,
		    "the shapes say %lld, the activation all-reduces' group says %d",
		    (long long)st->tp.value, g[best].group);
		return;
	}
	if (g[best].count < all)
		set(&st->tp, g[best].group, ORR_VALUE_READ,
		    "the group of %zu of the %zu all-reduces of T x h elements (the layers' "
		    "outputs; the others are of another group)",
		    g[best].count, all);
	else
		set(&st->tp, g[best].group, ORR_VALUE_READ,
		    "the group of the %zu all-reduces of T x h elements (the layers' outputs)",
		    all);
}

/*
 * A TP or DP communicator of known size gives the degree itself (read): where the
 * shapes gave none, or as a check of what they gave; dp from the world then gives way.
 */
void orr__layout_from_comms(struct orr_structure *st)
{
	for (size_t i = 0; i < st->ncomms; i++) {
		const struct orr_comm_role *c = &st->comms[i];
		struct orr_value *v = c->role == ORR_PAR_TP   ? &st->tp
				      : c->role == ORR_PAR_DP ? &st->dp
							      : NULL;

		if (!v || c->size < 1 || c->how == ORR_VALUE_UNKNOWN)
			continue;
		if (v->how == ORR_VALUE_READ && v->value != c->size) {
			set(v, 0, ORR_VALUE_UNKNOWN,
			    "communicators of %s disagree: %lld and %d ranks",
			    orr_par_name(c->role), (long long)v->value, (int)c->size);
			continue;
		}
		if (v->how != ORR_VALUE_READ)
			set(v, c->size, ORR_VALUE_READ,
			    "the size of communicator '%.40s'%s%.40s, whose role is %s (%s)",
			    c->name ? c->name : "(unnamed)", c->desc ? " " : "",
			    c->desc ? c->desc : "", orr_par_name(c->role),
			    orr_value_how_name(c->how));
	}
}
