/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as a Chakra file (orr_chakra_read()), then every node's
 * dependencies and strings walked, as a caller would.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "orrery/chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink; /* keeps the walk from being optimised away */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct orr_chakra *c;
	struct orr_diag diag;
	uint64_t sum = 0;

	if (orr_chakra_read("fuzz.et", data, size, &c, &diag) != 0)
		return 0;
	sum += strlen(c->version) + (c->schema ? strlen(c->schema) : 0);
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct orr_chakra_node *n = &c->nodes[i];

		sum += strlen(n->name) + (n->pg_name ? strlen(n->pg_name) : 0);
		for (size_t k = 0; k < n->ndata_deps; k++)
			sum += n->data_deps[k];
		for (size_t k = 0; k < n->nctrl_deps; k++)
			sum += n->ctrl_deps[k];
	}
	sink = sum;
	orr_chakra_free(c);
	return 0;
}
