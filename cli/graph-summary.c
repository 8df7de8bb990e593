/* SPDX-License-Identifier: MIT */
/* What an execution graph holds, as `orrery info` and `orrery replay` print it. */
#include <stdio.h>

#include "cli.h"
#include "orrery/graph.h"
#include "banned.h"

void cli_graph_text(const struct orr_graph_stats *st)
{
	static const int kinds[] = { ORR_DEP_LAUNCH, ORR_DEP_CROSS_STREAM, ORR_DEP_SYNC,
				     ORR_DEP_CROSS_THREAD, ORR_DEP_CROSS_RANK };

	printf("\ngraph: %llu tasks (%llu CPU, %llu GPU); %llu nested calls and %llu poll runs "
	       "folded\n",
	       (unsigned long long)(st->tasks[ORR_TASK_CPU] + st->tasks[ORR_TASK_GPU]),
	       (unsigned long long)st->tasks[ORR_TASK_CPU],
	       (unsigned long long)st->tasks[ORR_TASK_GPU], (unsigned long long)st->folded_calls,
	       (unsigned long long)st->polls);
	printf("  %-16s %10s %10s\n", "edges", "count", "inferred");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		printf("  %-16s %10llu %10llu\n", orr_dep_kind_name(kinds[i]),
		       (unsigned long long)st->edges[kinds[i]],
		       (unsigned long long)st->inferred[kinds[i]]);
	printf("  waits: stream %llu, device %llu, event %llu, task %llu; event records %llu; "
	       "dropped %llu; spins on a kernel without a call %llu\n",
	       (unsigned long long)st->waits[ORR_WAIT_STREAM],
	       (unsigned long long)st->waits[ORR_WAIT_DEVICE],
	       (unsigned long long)st->waits[ORR_WAIT_EVENT],
	       (unsigned long long)st->waits[ORR_WAIT_TASK],
	       (unsigned long long)st->waits[ORR_WAIT_RECORD],
	       (unsigned long long)st->waits_dropped, (unsigned long long)st->spin_waits);
	printf("  GPU tasks without a launch: %llu; held by a full GPU: %llu; guessed edges the "
	       "trace contradicts, dropped: %llu\n",
	       (unsigned long long)st->unlaunched, (unsigned long long)st->held,
	       (unsigned long long)st->edges_rejected);
	printf("  found by timing: %llu graph nodes without a correlation, %llu stream waits "
	       "without their record; delays nothing explains: %llu tasks, %.3f ms kept\n",
	       (unsigned long long)st->graph_nodes, (unsigned long long)st->timed_waits,
	       (unsigned long long)st->delayed, (double)st->delayed_ns / 1e6);
	printf("  collective instances: %llu coupled, %llu rejected; %llu communication tasks "
	       "alone\n",
	       (unsigned long long)st->groups, (unsigned long long)st->groups_rejected,
	       (unsigned long long)st->collectives_alone);
}

static void json_edges(struct json_out *j, const struct orr_graph_stats *st)
{
	static const struct {
		const char *key;
		int kind;
	} kinds[] = {
		{ "D2", ORR_DEP_LAUNCH },     { "D4", ORR_DEP_CROSS_STREAM },
		{ "D5", ORR_DEP_SYNC },       { "D6", ORR_DEP_CROSS_THREAD },
		{ "D7", ORR_DEP_CROSS_RANK },
	};

	json_object(j, "edges");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_object(j, kinds[i].key);
		json_str(j, "name", orr_dep_kind_name(kinds[i].kind));
		json_int(j, "count", (int64_t)st->edges[kinds[i].kind]);
		json_int(j, "inferred", (int64_t)st->inferred[kinds[i].kind]);
		json_close_object(j);
	}
	json_close_object(j);
}

void cli_graph_json(struct json_out *j, const struct orr_graph_stats *st)
{
	json_object(j, "graph");
	json_object(j, "tasks");
	json_int(j, "cpu", (int64_t)st->tasks[ORR_TASK_CPU]);
	json_int(j, "gpu", (int64_t)st->tasks[ORR_TASK_GPU]);
	json_close_object(j);
	json_edges(j, st);
	json_object(j, "waits");
	json_int(j, "stream", (int64_t)st->waits[ORR_WAIT_STREAM]);
	json_int(j, "device", (int64_t)st->waits[ORR_WAIT_DEVICE]);
	json_int(j, "event", (int64_t)st->waits[ORR_WAIT_EVENT]);
	json_int(j, "task", (int64_t)st->waits[ORR_WAIT_TASK]);
	json_int(j, "record", (int64_t)st->waits[ORR_WAIT_RECORD]);
	json_int(j, "dropped", (int64_t)st->waits_dropped);
	json_int(j, "spin", (int64_t)st->spin_waits);
	json_close_object(j);
	json_int(j, "polls_folded", (int64_t)st->polls);
	json_int(j, "nested_calls_folded", (int64_t)st->folded_calls);
	json_int(j, "gpu_tasks_without_launch", (int64_t)st->unlaunched);
	json_int(j, "held", (int64_t)st->held);
	json_int(j, "edges_rejected", (int64_t)st->edges_rejected);
	json_int(j, "graph_nodes", (int64_t)st->graph_nodes);
	json_int(j, "timed_waits", (int64_t)st->timed_waits);
	json_object(j, "delayed");
	json_int(j, "tasks", (int64_t)st->delayed);
	json_int(j, "ns", (int64_t)st->delayed_ns);
	json_close_object(j);
	json_object(j, "collectives");
	json_int(j, "coupled", (int64_t)st->groups);
	json_int(j, "rejected", (int64_t)st->groups_rejected);
	json_int(j, "alone", (int64_t)st->collectives_alone);
	json_close_object(j);
	json_close_object(j);
}
