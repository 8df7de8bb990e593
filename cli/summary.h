/* SPDX-License-Identifier: MIT */
/*
 * cli/summary.h — `orrery summary`: where the time of a measured trace goes, gathered
 * once by orr_summary_gather() and printed as text, JSON or CSV here.
 */
#ifndef ORRERY_CLI_SUMMARY_H
#define ORRERY_CLI_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orrery/analysis.h"

/*
 * What orr_summary_gather() found (include/orrery/analysis.h), as text, JSON or CSV
 * (cli/summary-out.c; idle: cli/summary-out-idle.c; memory and counters:
 * cli/summary-out-memory.c).
 */
struct json_out;
void summary_idle_text(const struct orr_summary *s);
void summary_memory_text(const struct orr_summary *s);
void summary_memory_json(struct json_out *j, const struct orr_summary *s);
void summary_idle_json_step(struct json_out *j, const struct orr_sum_step *x);
void summary_idle_json(struct json_out *j, const struct orr_summary *s);
void summary_text(const struct orr_summary *s, size_t top);
void summary_json(const struct orr_summary *s, size_t top);
void summary_csv(const struct orr_summary *s);

#endif
