/* SPDX-License-Identifier: MIT */
/*
 * A Chakra file read back: the length-prefixed GlobalMetadata and Nodes decoded with
 * protobuf-c, each node's fields and the attributes simulators read copied out
 * (docs/chakra.md).  Untrusted input: every length is checked against what is left,
 * and a message protobuf-c cannot decode is an error with its offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "chakra.pb-c.h"
#include "orrery/chakra.h"
#include "banned.h"

#define MAX_FILE_BYTES (UINT64_C(4) << 30)
#define RATIO_FLOOR    (UINT64_C(64) << 20) /* past it, at most MAX_RATIO times the file */
#define MAX_RATIO      1000
#define MAX_NODES      (UINT64_C(64) << 20)

struct reader {
	const char *name;
	const uint8_t *p;
	size_t len, pos;
	struct orr_chakra *c;
	struct orr_arena *arena;
	size_t cap;
	struct orr_diag *diag;
};

/* The allocation behind struct orr_chakra: the arena holds every node's copies. */
struct chakra_file {
	struct orr_chakra pub;
	struct orr_arena *arena;
};

static int fail(struct reader *rd, size_t at, const char *what)
{
	return orr_diag_set(rd->diag, ORR_EMALFORMED, rd->name, (int64_t)at, -1, "%s", what);
}

/* The varint32 length at rd->pos, checked against what is left. */
static int length(struct reader *rd, size_t *ret)
{
	uint64_t v = 0;
	size_t at = rd->pos;

	for (unsigned shift = 0;; shift += 7) {
		if (rd->pos >= rd->len)
			return fail(rd, at, "a length prefix cut short");
		if (shift > 28)
			return fail(rd, at, "a length prefix longer than 5 bytes");
		v |= (uint64_t)(rd->p[rd->pos] & 0x7f) << shift;
		if (!(rd->p[rd->pos++] & 0x80))
			break;
	}
	if (v > rd->len - rd->pos)
		return fail(rd, at, "a message longer than the rest of the file");
	*ret = (size_t)v;
	return 0;
}

static const char *copy_str(struct reader *rd, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *d = orr_arena_alloc(rd->arena, n + 1, 1);

	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static const uint64_t *copy_u64(struct reader *rd, const uint64_t *v, size_t n)
{
	uint64_t *d;

	if (!n)
		return NULL;
	d = orr_arena_alloc(rd->arena, n * sizeof(*d), _Alignof(uint64_t));
	memcpy(d, v, n * sizeof(*d));
	return d;
}

/* An integer attribute of any integer member; false for other values. */
static bool attr_int(const ChakraProtoMsg__AttributeProto *a, int64_t *ret)
{
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL:
		*ret = a->int32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL:
		*ret = a->int64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL:
		*ret = a->uint32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		*ret = a->uint64_val <= INT64_MAX ? (int64_t)a->uint64_val : -1;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL:
		*ret = a->sint32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL:
		*ret = a->sint64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL:
		*ret = a->bool_val;
		return true;
	default:
		return false;
	}
}

static void node_attrs(struct reader *rd, const ChakraProtoMsg__Node *m, struct orr_chakra_node *n)
{
	static const struct {
		const char *name;
		size_t off;
	} ints[] = {
		{ "comm_type", offsetof(struct orr_chakra_node, comm_type) },
		{ "comm_size", offsetof(struct orr_chakra_node, comm_size) },
		{ "comm_src", offsetof(struct orr_chakra_node, comm_src) },
		{ "comm_dst", offsetof(struct orr_chakra_node, comm_dst) },
		{ "comm_tag", offsetof(struct orr_chakra_node, comm_tag) },
		{ "orr_dur_ns", offsetof(struct orr_chakra_node, dur_ns) },
		{ "orr_gap_ns", offsetof(struct orr_chakra_node, gap_ns) },
	};

	for (size_t i = 0; i < m->n_attr; i++) {
		const ChakraProtoMsg__AttributeProto *a = m->attr[i];
		int64_t v;

		if (!a->name)
			continue;
		if (!strcmp(a->name, "is_cpu_op") && attr_int(a, &v))
			n->is_cpu_op = v != 0;
		else if (!strcmp(a->name, "pg_name") &&
			 a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
			n->pg_name = copy_str(rd, a->string_val);
		for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
			if (!strcmp(a->name, ints[k].name) && attr_int(a, &v))
				memcpy((char *)n + ints[k].off, &v, sizeof(v));
	}
	n->nattrs = m->n_attr;
}

static int read_node(struct reader *rd, size_t at, size_t len)
{
	ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, len, rd->p + rd->pos);
	struct orr_chakra_node *n;

	if (!m)
		return fail(rd, at, "a node that does not decode as Chakra's Node");
	if (rd->c->nnodes >= MAX_NODES) {
		chakra_proto_msg__node__free_unpacked(m, NULL);
		return orr_diag_set(rd->diag, ORR_ETOOBIG, rd->name, (int64_t)at, -1,
				    "more than %llu nodes", (unsigned long long)MAX_NODES);
	}
	if (rd->c->nnodes == rd->cap)
		rd->c->nodes = orr_xgrow(rd->c->nodes, sizeof(*n), &rd->cap, rd->c->nnodes + 1);
	n = &rd->c->nodes[rd->c->nnodes++];
	*n = (struct orr_chakra_node){
		.id = m->id,
		.name = copy_str(rd, m->name),
		.type = (int)m->type,
		.ctrl_deps = copy_u64(rd, m->ctrl_deps, m->n_ctrl_deps),
		.nctrl_deps = m->n_ctrl_deps,
		.data_deps = copy_u64(rd, m->data_deps, m->n_data_deps),
		.ndata_deps = m->n_data_deps,
		.start_us = m->start_time_micros,
		.dur_us = m->duration_micros,
		.is_cpu_op = -1,
		.comm_type = -1,
		.comm_size = -1,
		.comm_src = -1,
		.comm_dst = -1,
		.comm_tag = -1,
		.dur_ns = -1,
		.gap_ns = -1,
	};
	node_attrs(rd, m, n);
	chakra_proto_msg__node__free_unpacked(m, NULL);
	return 0;
}

static int read_metadata(struct reader *rd, size_t at, size_t len)
{
	ChakraProtoMsg__GlobalMetadata *m =
		chakra_proto_msg__global_metadata__unpack(NULL, len, rd->p + rd->pos);

	if (!m)
		return fail(rd, at,
			    "a first message that does not decode as Chakra's GlobalMetadata");
	rd->c->version = copy_str(rd, m->version);
	for (size_t i = 0; i < m->n_attr; i++) {
		const ChakraProtoMsg__AttributeProto *a = m->attr[i];
		int64_t v;

		if (!a->name)
			continue;
		if (!strcmp(a->name, "schema") &&
		    a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
			rd->c->schema = copy_str(rd, a->string_val);
		else if (!strcmp(a->name, "rank") && attr_int(a, &v))
			rd->c->rank = v;
	}
	chakra_proto_msg__global_metadata__free_unpacked(m, NULL);
	return 0;
}

int orr_chakra_read(const char *name, const void *data, size_t len, struct orr_chakra **ret,
		    struct orr_diag *reterr_diag)
{
	struct chakra_file *cf = orr_xcalloc(1, sizeof(*cf));
	struct reader rd = { .name = name, .p = data, .len = len, .diag = reterr_diag };
	int r = 0;

	*ret = NULL;
	cf->arena = rd.arena = orr_arena_new();
	rd.c = &cf->pub;
	rd.c->version = "";
	rd.c->rank = -1;
	if (!len)
		r = orr_diag_set(reterr_diag, ORR_EEMPTY, name, 0, -1, "an empty Chakra file");
	for (bool first = true; !r && rd.pos < rd.len; first = false) {
		size_t at = rd.pos, n = 0;

		if ((r = length(&rd, &n)))
			break;
		if (!n) /* Chakra's reader takes a zero length as the end */
			break;
		r = first ? read_metadata(&rd, at, n) : read_node(&rd, at, n);
		rd.pos += n;
	}
	if (r) {
		orr_chakra_free(&cf->pub);
		return r;
	}
	*ret = &cf->pub;
	return 0;
}

void orr_chakra_free(struct orr_chakra *c)
{
	struct chakra_file *cf = (struct chakra_file *)c;

	if (!cf)
		return;
	free(cf->pub.nodes);
	orr_arena_free(cf->arena);
	free(cf);
}

/* ---- files ---- */

/* The most a file of `size` bytes may decompress to. */
static uint64_t cap_for(uint64_t size)
{
	uint64_t by_ratio = size > MAX_FILE_BYTES / MAX_RATIO ? MAX_FILE_BYTES : size * MAX_RATIO;

	by_ratio = by_ratio < RATIO_FLOOR ? RATIO_FLOOR : by_ratio;
	return by_ratio < MAX_FILE_BYTES ? by_ratio : MAX_FILE_BYTES;
}

static int slurp(const char *path, uint8_t **ret, size_t *ret_len)
{
	gzFile f = gzopen(path, "rb"); /* reads plain files as they are */
	size_t cap = 0, n = 0, want;
	uint64_t max;
	uint8_t *buf = NULL;
	struct stat st;
	int k;

	if (!f)
		return -(errno ? errno : ENOMEM);
	max = stat(path, &st) == 0 ? cap_for((uint64_t)st.st_size) : MAX_FILE_BYTES;
	do {
		if (n == cap) { /* grow, but never past the cap and a block */
			want = n + (n < 65536 ? 65536 : n);
			want = want > max + 65536 ? (size_t)max + 65536 : want;
			if (want <= n)
				break;
			buf = orr_xrealloc(buf, want);
			cap = want;
		}
		k = gzread(f, buf + n, (unsigned)(cap - n > INT32_MAX ? INT32_MAX : cap - n));
		if (k > 0)
			n += (size_t)k;
	} while (k > 0 && n <= max);
	if (k < 0 || n > max) {
		free(buf);
		gzclose(f);
		return k < 0 ? ORR_EMALFORMED : ORR_ETOOBIG;
	}
	gzclose(f);
	*ret = buf;
	*ret_len = n;
	return 0;
}

int orr_chakra_read_file(const char *path, struct orr_chakra **ret, struct orr_diag *reterr_diag)
{
	uint8_t *buf;
	size_t len;
	int r = slurp(path, &buf, &len);

	*ret = NULL;
	if (r)
		return orr_diag_set(reterr_diag, r, path, -1, -1,
				    r == ORR_ETOOBIG ? "it decompresses to more than 4 GiB, or "
						       "1,000 times its size"
						     : "cannot read it");
	r = orr_chakra_read(path, buf, len, ret, reterr_diag);
	free(buf);
	return r;
}
