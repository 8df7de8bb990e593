/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the native reader.  An input that starts with the native magic
 * is one native file.  Any other input is taken as the decompressed records of one
 * frame and wrapped in the preamble and a zstd frame first, so that mutations reach
 * the record parser instead of failing zstd's checksum.  A trace that imports is then
 * built into a graph and replayed, since a native file reaches them without the
 * Kineto importer's own invariants.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "orrery/native.h"
#include "orrery/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t preamble[20] = { 0x5e, 0x2a, 0x4d, 0x18, 12,   0,    0, 0, 'O', 'R',
				      'R',  'E',  'R',  'Y',  '\0', '\0', 1, 0, 0,   0 };

static void ignore(void *data, const char *msg)
{
}

static void import_and_replay(const void *data, size_t size)
{
	const struct orr_import_options opts = { .max_bytes = 1u << 20, .warn = ignore };
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_replay *r = NULL;
	struct orr_step *steps;
	struct orr_diag diag;
	size_t n;

	if (orr_trace_import_buffer("fuzz.orr", data, size, &opts, &t, &diag) != 0)
		return;
	for (size_t i = 0; i < orr_trace_rank_count(t); i++)
		if (orr_rank_steps(t, orr_trace_get_rank(t, i), &steps, &n) == 0)
			free(steps);
	if (orr_graph_build(t, NULL, &g, &diag) == 0 &&
	    orr_replay_run(g, &(struct orr_replay_options){ .scales = NULL, .nscales = 0 }, &r,
			   &diag) == 0) {
		struct orr_replay_step *s;
		struct orr_path_seg *seg;
		size_t nseg;

		orr_replay_job_steps(r, &s, &n);
		for (size_t k = 0; k < n; k++) {
			orr_replay_critical_path(r, s[k].predicted_start_ns, s[k].predicted_end_ns,
						 &seg, &nseg);
			free(seg);
		}
		free(s);
	}
	orr_replay_free(r);
	orr_graph_free(g);
	orr_trace_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap = sizeof(preamble) + ZSTD_compressBound(size), z;
	uint8_t *file;

	if (orr_native_detect(data, size)) {
		import_and_replay(data, size);
		return 0;
	}
	file = malloc(cap);
	if (!file)
		return 0;
	memcpy(file, preamble, sizeof(preamble));
	z = ZSTD_compress(file + sizeof(preamble), cap - sizeof(preamble), data, size, 1);
	if (!ZSTD_isError(z))
		import_and_replay(file, sizeof(preamble) + z);
	free(file);
	return 0;
}
