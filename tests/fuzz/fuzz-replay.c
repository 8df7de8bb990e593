/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as one Kineto trace, then everything replay does with
 * it: the graph, the simulation (a cycle is a valid answer), step times on both
 * timelines, the breakdown, the busy timeline and the critical path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "orrery/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reports(const struct orr_replay *r)
{
	const struct orr_graph *g = orr_replay_graph(r);
	struct orr_replay_step *s;
	struct orr_path_seg *seg;
	struct orr_breakdown b;
	size_t n, nseg;

	for (size_t i = 0; i < orr_graph_rank_count(g); i++) {
		orr_replay_steps(r, i, &s, &n);
		for (size_t k = 0; k < n; k++) {
			orr_replay_breakdown(r, i, true, s[k].predicted_start_ns,
					     s[k].predicted_end_ns, &b);
			/* Every step, whatever its length: the cost is in intervals, not bins. */
			(void)orr_replay_busy_l1(r, i, &s[k]);
		}
		free(s);
	}
	orr_replay_job_steps(r, &s, &n);
	for (size_t k = 0; k < n; k++) {
		orr_replay_critical_path(r, s[k].predicted_start_ns, s[k].predicted_end_ns, &seg,
					 &nseg);
		free(seg);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct orr_import_options opts = { .max_bytes = 1u << 20 };
	const struct orr_scale half = { "*", 0.5 };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_diag diag;

	if (orr_trace_import_buffer("fuzz.json", data, size, &opts, &t, &diag) != 0)
		return 0;
	if (orr_graph_build(t, NULL, &g, &diag) == 0) {
		/* Odd sizes halve every GPU task by glob; sizes 2, 3 mod 4 by task factors. */
		size_t n = orr_graph_task_count(g);
		float *f = size & 2 ? orr_xmalloc((n + 1) * sizeof(*f)) : NULL;
		struct orr_replay_options o = { .scales = &half,
						.nscales = size & 1,
						.task_factors = f };

		for (size_t i = 0; f && i < n; i++)
			f[i] = (float)(i % 3) * 0.75f; /* 0, 0.75, 1.5 */
		if (orr_replay_run(g, &o, &r, &diag) == 0)
			reports(r);
		free(f);
	}
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
	return 0;
}
