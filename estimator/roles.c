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
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

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
