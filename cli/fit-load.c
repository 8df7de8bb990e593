/* SPDX-License-Identifier: MIT */
/* orrery fit and estimate: a trace and its graph, and the rank asked for. */
#include <stdint.h>
#include <stdlib.h>

#include "cli.h"
#include "fit.h"
#include "banned.h"

int cli_fit_load(const char *path, struct orr_trace **ret_t, struct orr_graph **ret_g)
{
	struct orr_diag diag;
	int err;

	*ret_g = NULL;
	if (cli_import(path, ret_t) < 0)
		return EXIT_FAIL;
	orr_diag_clear(&diag);
	err = cli_graph_build(*ret_t, NULL, ret_g, &diag);
	if (err) {
		cli_error("%s: cannot build its graph: %s%s%s", path, orr_strerror(err),
			  diag.msg[0] ? ": " : "", diag.msg);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* --rank naming no rank of the trace: the ranks it has, as orrery info and replay say it. */
static void no_rank(const char *trace, int64_t rank, const struct orr_graph *g)
{
	size_t n = orr_graph_rank_count(g);
	int32_t *r = orr_xmalloc((n ? n : 1) * sizeof(*r));
	char have[256];

	for (size_t k = 0; k < n; k++)
		r[k] = orr_graph_get_rank(g, k)->rank->rank;
	orr_ranks_text(r, n, have, sizeof(have));
	free(r);
	cli_error("no rank %lld in '%s'; its ranks are %s", (long long)rank, trace, have);
}

int cli_fit_open(const char *trace, const char *out, int64_t rank, struct orr_trace **ret_t,
		 struct orr_graph **ret_g, size_t *ret_ri)
{
	int ret;

	*ret_t = NULL;
	*ret_g = NULL;
	/* Written into TRACE, the output would become part of what is read next time. */
	if (out && cli_output_inside(out, trace)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere", out,
			  trace);
		return EXIT_FAIL;
	}
	ret = cli_fit_load(trace, ret_t, ret_g);
	if (ret != EXIT_OK)
		return ret;
	*ret_ri = orr_graph_rank_index(*ret_g, rank);
	if (*ret_ri == SIZE_MAX) {
		no_rank(trace, rank, *ret_g);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_read_costs(const char *path, struct orr_costs *ret)
{
	struct orr_diag d;
	int err = orr_costs_read(path, ret, &d);

	if (err) {
		char at[48] = "";

		if (d.offset >= 0) /* where a text stops being JSON */
			snprintf(at, sizeof(at), " at byte %lld", (long long)d.offset);
		cli_error("%s: cannot read its costs%s: %s", path, at,
			  d.msg[0] ? d.msg : orr_strerror(err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
