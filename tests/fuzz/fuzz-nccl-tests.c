/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as what an nccl-tests binary printed
 * (orr_nccl_tests_parse()), then its samples fitted as `orrery fit --nccl-tests` fits
 * them and the model asked for sizes inside and outside theirs.
 */
#include <stddef.h>
#include <stdint.h>

#include "orrery/estimator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double bytes[] = { 0, 1, 4096, 1e9, 1e15 };
	struct orr_nccl_tests t;
	struct orr_coll_model m;
	struct orr_diag diag;

	if (orr_nccl_tests_parse("fuzz.txt", (const char *)data, size, ORR_COLL_ALL_REDUCE, &t,
				 &diag) != 0)
		return 0;
	if (orr_coll_model_fit(t.kind, t.s, t.n, &m) == 0)
		for (size_t b = 0; b < sizeof(bytes) / sizeof(bytes[0]); b++)
			(void)orr_coll_model_time(&m, bytes[b], t.group);
	orr_nccl_tests_release(&t);
	return 0;
}
