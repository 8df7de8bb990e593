/* SPDX-License-Identifier: MIT */
/*
 * cli/info.h — what the files of `orrery info` share: cmd-info.c parses the options,
 * imports the trace (orr_rank_stats_count() counts what each rank holds), info-text.c prints it as text and
 * info-json.c as the JSON of docs/orrery-info.md.
 */
#ifndef ORRERY_CLI_INFO_H
#define ORRERY_CLI_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis.h"
#include "replay-common.h"

/* "from strings", "from hex strings", "ignored": how args values were taken. */
const char *info_coercion_name(uint32_t how);

/* What the trace at PATH holds (the ranks and steps sel selects), and its graph GS. */
void info_print_text(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel);
void info_print_json(const char *path, const struct orr_trace *t, const struct orr_graph_stats *gs,
		     const struct orr_select *sel);

#endif
