/* SPDX-License-Identifier: MIT */
/*
 * chakra-dump FILE: a Chakra file as orrery reads it (orr_chakra_read_file), for the
 * golden tests: a first line with the metadata, then one JSON object per node.
 */
#include <stdio.h>
#include <stdlib.h>

#include "orrery/chakra.h"

static void deps(const char *key, const uint64_t *v, size_t n)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0; i < n; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	struct orr_chakra *c;
	struct orr_diag d;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: chakra-dump FILE\n");
		return 2;
	}
	if ((r = orr_chakra_read_file(argv[1], &c, &d))) {
		fprintf(stderr, "chakra-dump: %s: %s (offset %lld)\n", orr_strerror(r), d.msg,
			(long long)d.offset);
		return 1;
	}
	printf("{\"version\": ");
	orr_json_write_string(stdout, c->version);
	printf(", \"schema\": ");
	orr_json_write_string(stdout, c->schema ? c->schema : "");
	printf(", \"rank\": %lld, \"nodes\": %zu}\n", (long long)c->rank, c->nnodes);
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct orr_chakra_node *n = &c->nodes[i];

		printf("{\"id\": %llu, \"name\": ", (unsigned long long)n->id);
		orr_json_write_string(stdout, n->name);
		printf(", \"type\": %d", n->type);
		deps("ctrl_deps", n->ctrl_deps, n->nctrl_deps);
		deps("data_deps", n->data_deps, n->ndata_deps);
		printf(", \"start_us\": %llu, \"dur_us\": %llu, \"is_cpu_op\": %d, "
		       "\"comm_type\": %lld, \"comm_size\": %lld, \"comm_src\": %lld, "
		       "\"comm_dst\": %lld, \"comm_tag\": %lld, \"dur_ns\": %lld, \"gap_ns\": %lld, "
		       "\"nattrs\": %zu, \"pg_name\": ",
		       (unsigned long long)n->start_us, (unsigned long long)n->dur_us, n->is_cpu_op,
		       (long long)n->comm_type, (long long)n->comm_size, (long long)n->comm_src,
		       (long long)n->comm_dst, (long long)n->comm_tag, (long long)n->dur_ns,
		       (long long)n->gap_ns, n->nattrs);
		if (n->pg_name)
			orr_json_write_string(stdout, n->pg_name);
		else
			printf("null");
		printf("}\n");
	}
	orr_chakra_free(c);
	return 0;
}
