/* SPDX-License-Identifier: MIT */
/*
 * Operators and their arguments in a plan (docs/orrery-compose.md, "What is rebuilt");
 * which of them may run at all is allow.c's.
 *
 * With an execution trace an op is rebuilt from its schema and every argument as
 * recorded: tensors (ids, storage, offset, shape, strides, dtype, device), scalars,
 * strings, lists and None.  Tensors of one storage are views of one buffer, as they
 * were (storage-faithful aliasing); a storage first read before anything in the step
 * wrote it (weights, optimizer state, inputs) is made once, the others come from the
 * ops that write them or are made where first read.  Without an execution trace an op
 * is rebuilt when the profiler recorded every argument (record_shapes: shapes and dtypes
 * of tensors, and in PyTorch 2.1+ the values of scalars; concrete.c): each tensor gets a
 * storage of its own, viewed with the strides the profiler recorded (PyTorch 2.x's
 * "Input Strides"; contiguous without them), each scalar its value, and what is neither
 * (a string, a device, None) the schema's default as bench.py finds it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

struct ctensor {
	uint32_t storage;
	int64_t offset;
	const int64_t *dims, *strides;
	uint32_t ndims, nstrides; /* nstrides 0: contiguous */
	const char *dtype;
};

struct cstorage {
	int64_t nbytes;
	bool cpu;
	uint8_t first; /* 0 not yet used, 1 first read, 2 first written */
};

struct cargs {
	const struct orr_compose *c;
	const struct crank *cr;
	struct orr_strtab *tkeys, *skeys;
	struct ctensor *t;
	size_t nt, cap_t;
	struct cstorage *s;
	size_t ns, cap_s;
	uint64_t fresh;
};

struct cargs *orr__compose_args_new(const struct orr_compose *c, const struct crank *cr)
{
	struct cargs *a = orr_xcalloc(1, sizeof(*a));

	a->c = c;
	a->cr = cr;
	a->tkeys = orr_strtab_new();
	a->skeys = orr_strtab_new();
	return a;
}

void orr__compose_args_free(struct cargs *a)
{
	if (!a)
		return;
	orr_strtab_free(a->tkeys);
	orr_strtab_free(a->skeys);
	free(a->t);
	free(a->s);
	free(a);
}

/* Elements from the storage offset to the last one a view reaches; 0 if it has none. */
static int64_t extent(const int64_t *dims, uint32_t ndims, const int64_t *strides,
		      uint32_t nstrides)
{
	__int128 last = 0, step = 1;

	for (uint32_t i = ndims; i-- > 0;) {
		int64_t s = nstrides == ndims ? strides[i] : (int64_t)step;

		if (dims[i] <= 0)
			return 0;
		last += (__int128)(dims[i] - 1) * (s < 0 ? -s : s);
		step *= dims[i];
		if (last > INT64_MAX / 16 || step > INT64_MAX / 16)
			return INT64_MAX / 16;
	}
	return (int64_t)(last + 1);
}

/* (offset + extent) * itemsize, saturated: a corrupt offset makes a storage too big to make. */
static int64_t bytes_of(int64_t offset, int64_t ext, int64_t itemsize)
{
	int64_t n, r;

	if (!ext)
		return 0;
	if (__builtin_add_overflow(offset, ext, &n) || __builtin_mul_overflow(n, itemsize, &r))
		return INT64_MAX;
	return r;
}

static uint32_t storage_of(struct cargs *a, const char *key, bool cpu, int64_t bytes, bool out)
{
	uint32_t id = orr_strtab_intern(a->skeys, key, strlen(key));
	struct cstorage *s;

	if (id > a->ns)
		ORR_VEC_PUSH(a->s, a->ns, a->cap_s, ((struct cstorage){ 0, cpu, 0 }));
	s = &a->s[id - 1];
	if (bytes > s->nbytes)
		s->nbytes = bytes;
	if (!s->first)
		s->first = out ? 2 : 1;
	return id - 1;
}

static uint32_t add_tensor(struct cargs *a, const char *key, struct ctensor t)
{
	uint32_t id = orr_strtab_intern(a->tkeys, key, strlen(key));

	if (id > a->nt)
		ORR_VEC_PUSH(a->t, a->nt, a->cap_t, t);
	return id - 1;
}

/* n values of the ET's dims from first; NULL for none (the ET may have no dims at all). */
static const int64_t *et_dims(const struct orr_et *et, uint32_t first, uint32_t n)
{
	return n ? et->dims + first : NULL;
}

static uint32_t et_tensor(struct cargs *a, const struct orr_et *et, const struct orr_et_value *v,
			  bool out)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const char *dev = v->device == ORR_STR_NONE ? "" : orr_trace_str(t, v->device);
	bool cpu = !strncmp(dev, "cpu", 3);
	const char *dtype = orr__compose_et_dtype(orr_trace_str(t, v->type));
	const int64_t *dims = et_dims(et, v->first_dim, v->ndims);
	const int64_t *strides = et_dims(et, v->first_stride, v->nstrides);
	uint32_t nstrides = v->nstrides == v->ndims ? v->nstrides : 0;
	int64_t itemsize = v->itemsize > 0 ? v->itemsize : 1;
	int64_t ext = extent(dims, v->ndims, strides, nstrides);
	int64_t offset = v->offset > 0 ? v->offset : 0;
	char skey[64], tkey[1024];
	size_t k;
	struct ctensor ct = { 0, offset, dims, strides, v->ndims, nstrides, dtype };

	snprintf(skey, sizeof(skey), "%lld%s", (long long)v->storage_id, cpu ? "c" : "");
	ct.storage = storage_of(a, skey, cpu, bytes_of(offset, ext, itemsize), out);
	k = (size_t)snprintf(tkey, sizeof(tkey), "%u/%lld/%s/", ct.storage, (long long)offset,
			     dtype);
	for (uint32_t i = 0; i < v->ndims && k < sizeof(tkey); i++)
		k += (size_t)snprintf(tkey + k, sizeof(tkey) - k, "%lld,", (long long)dims[i]);
	for (uint32_t i = 0; i < nstrides && k < sizeof(tkey); i++)
		k += (size_t)snprintf(tkey + k, sizeof(tkey) - k, "%lld;", (long long)strides[i]);
	if (k >= sizeof(tkey)) /* too long to share: a tensor of its own */
		snprintf(tkey, sizeof(tkey), "#%llu", (unsigned long long)a->fresh++);
	return add_tensor(a, tkey, ct);
}

static void write_double(FILE *f, double d)
{
	if (isfinite(d))
		fprintf(f, "%.17g", d);
	else
		fprintf(f, "{\"f\":\"%s\"}", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
}

static void write_value(struct cargs *a, FILE *f, const struct orr_et *et,
			const struct orr_et_value *v, int depth)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);

	if (depth <= ORR_COMPOSE_MAX_VALUE_DEPTH && v->kind != ORR_ET_LIST &&
	    v->kind != ORR_ET_NONE && orr__compose_stream_type(orr_trace_str(t, v->type))) {
		fputs("{\"s\":null}", f);
		return;
	}
	switch (depth > ORR_COMPOSE_MAX_VALUE_DEPTH ? ORR_ET_NONE : v->kind) {
	case ORR_ET_TENSOR:
		if (orr__compose_undefined(orr_trace_str(t, v->type)))
			fputs("null", f);
		else
			fprintf(f, "{\"t\":%u}", et_tensor(a, et, v, false));
		break;
	case ORR_ET_INT:
		fprintf(f, "%lld", (long long)v->i);
		break;
	case ORR_ET_BOOL:
		fputs(v->i ? "true" : "false", f);
		break;
	case ORR_ET_DOUBLE:
		write_double(f, v->d);
		break;
	case ORR_ET_STRING:
		orr_json_write_string(f, orr_trace_str(t, v->str));
		break;
	case ORR_ET_LIST:
		fputc('[', f);
		for (uint32_t i = 0; i < v->nelems && v->first_elem + i < et->nvalues; i++) {
			if (i)
				fputc(',', f);
			write_value(a, f, et, &et->values[v->first_elem + i], depth + 1);
		}
		fputc(']', f);
		break;
	default:
		fputs("null", f);
	}
}

/* The outputs, lists flattened, in order: tensors by index, anything else null. */
static void write_outputs(struct cargs *a, FILE *f, const struct orr_et *et,
			  const struct orr_et_value *v, int depth, bool *first)
{
	if (depth > ORR_COMPOSE_MAX_VALUE_DEPTH)
		return;
	if (v->kind == ORR_ET_TENSOR &&
	    orr__compose_et_dtype(orr_trace_str(orr_graph_trace(a->c->g), v->type))) {
		fprintf(f, "%s%u", *first ? "" : ",", et_tensor(a, et, v, true));
		*first = false;
	} else if (v->kind == ORR_ET_LIST) {
		for (uint32_t i = 0; i < v->nelems && v->first_elem + i < et->nvalues; i++)
			write_outputs(a, f, et, &et->values[v->first_elem + i], depth + 1, first);
	} else {
		fprintf(f, "%snull", *first ? "" : ",");
		*first = false;
	}
}

/*
 * "Tensor" of "aten::add.Tensor(Tensor self, ...)", "default" without one; null if the
 * schema is of another op.  orr__compose_unbuildable() let only identifiers through;
 * escaped all the same.
 */
static void write_overload(FILE *f, const char *name, const char *schema)
{
	size_t at, n;
	char *o;

	if (!orr__compose_overload_of(name, schema, &at, &n)) {
		fputs("null", f);
		return;
	}
	o = orr_xstrndup(n ? schema + at : "default", n ? n : strlen("default"));
	orr_json_write_string(f, o);
	free(o);
}

static void write_et_op(struct cargs *a, FILE *f, const struct orr_et_node *n)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_et *et = a->cr->r->et;
	bool first = true;

	write_overload(f, orr_trace_str(t, n->name), orr_trace_str(t, n->op_schema));
	fputs(",[", f);
	for (uint32_t i = 0; i < n->ninputs; i++) {
		if (i)
			fputc(',', f);
		write_value(a, f, et, &et->values[n->first_input + i], 0);
	}
	fputs("],[", f);
	for (uint32_t i = 0; i < n->noutputs; i++)
		write_outputs(a, f, et, &et->values[n->first_output + i], 0, &first);
	fputc(']', f);
}

/*
 * A recorded tensor's strides, one per dimension (a list's, its members' as its dims
 * hold them); NULL when not recorded (contiguous).
 */
static const int64_t *kineto_strides(const struct orr_rank *r, const struct orr_input *in)
{
	if (!in->nstrides || in->nstrides != in->ndims ||
	    (size_t)in->first_stride + in->nstrides > r->nstrides)
		return NULL;
	return r->strides + in->first_stride;
}

/*
 * One tensor of a Kineto-only op: a storage of its own (key "#N", as check_kineto_op()
 * counts it) viewed with dims and strides (NULL: contiguous); dtype as traces write it.
 */
static uint32_t kineto_tensor(struct cargs *a, const int64_t *dims, uint32_t ndims,
			      const int64_t *strides, const char *dtype)
{
	uint32_t nstrides = strides ? ndims : 0;
	struct ctensor ct = { 0,     0,        ndims ? dims : NULL,      nstrides ? strides : NULL,
			      ndims, nstrides, orr__compose_dtype(dtype) };
	char key[32];

	snprintf(key, sizeof(key), "#%llu", (unsigned long long)a->fresh++);
	ct.storage = storage_of(a, key, false,
				bytes_of(0, extent(ct.dims, ndims, ct.strides, nstrides),
					 orr_dtype_bytes(dtype)),
				true);
	return add_tensor(a, key, ct);
}

/* A list of tensors: each member (count, then dims; strides alike, or NULL) a tensor. */
static void write_kineto_list(struct cargs *a, FILE *f, const int64_t *dims, uint32_t n,
			      const int64_t *strides, const char *dtype)
{
	fputc('[', f);
	for (uint32_t i = 0; i < n; i += 1 + (uint32_t)dims[i]) {
		fprintf(f, "%s{\"t\":%u}", i ? "," : "",
			kineto_tensor(a, dims + i + 1, (uint32_t)dims[i],
				      strides ? strides + i + 1 : NULL, dtype));
	}
	fputc(']', f);
}

static void write_kineto_op(struct cargs *a, FILE *f, const struct orr_event *ev)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_rank *r = a->cr->r;
	const struct orr_op_args *op = &r->ops[ev->args];
	uint32_t list_dtype = orr__compose_list_dtype(a->cr->lists, t, ev);

	fputs("null,[", f);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];
		const int64_t *dims = in->ndims ? r->dims + in->first_dim : NULL;
		enum orr__kineto_arg kind = ORR__KARG_DEFAULT;
		const char *why;

		/* orr__compose_unbuildable() let only what it takes through */
		orr__compose_kineto_arg(t, in, list_dtype, &kind, &why);
		if (i)
			fputc(',', f);
		if (kind == ORR__KARG_SCALAR || kind == ORR__KARG_LIST)
			orr__compose_concrete(f, orr_trace_str(t, in->value),
					      kind == ORR__KARG_LIST);
		else if (kind == ORR__KARG_DEFAULT)
			fputs("{\"d\":null}", f);
		else if (kind == ORR__KARG_TENSORS)
			write_kineto_list(a, f, dims, in->ndims, kineto_strides(r, in),
					  orr_trace_str(t, list_dtype));
		else
			fprintf(f, "{\"t\":%u}",
				kineto_tensor(a, dims, in->ndims, kineto_strides(r, in),
					      orr_trace_str(t, in->dtype)));
	}
	fputs("],[]", f);
}

void orr__compose_write_op(struct cargs *a, FILE *f, const struct citem *it)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_event *ev = &a->cr->r->events[it->event];
	uint32_t node = a->cr->et_of_event[it->event];

	fputs("[\"op\",", f);
	orr_json_write_string(f, orr_trace_str(t, ev->name));
	if (it->stream >= 0)
		fprintf(f, ",%lld,%lld,", (long long)it->stream, (long long)it->gpu_ns);
	else
		fprintf(f, ",null,%lld,", (long long)it->gpu_ns);
	if (node != ORR_NONE)
		write_et_op(a, f, &a->cr->r->et->nodes[node]);
	else
		write_kineto_op(a, f, ev);
	fputc(']', f);
}

static void write_i64s(FILE *f, const int64_t *v, uint32_t n)
{
	fputc('[', f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)v[i]);
	fputc(']', f);
}

void orr__compose_write_tables(struct cargs *a, FILE *f, uint64_t *ret_tensors,
			       uint64_t *ret_storages)
{
	fputs(",\n\"tensors\":[", f);
	for (size_t i = 0; i < a->nt; i++) {
		const struct ctensor *t = &a->t[i];

		fprintf(f, "%s\n[%u,%lld,", i ? "," : "", t->storage, (long long)t->offset);
		write_i64s(f, t->dims, t->ndims);
		fputc(',', f);
		if (t->nstrides)
			write_i64s(f, t->strides, t->nstrides);
		else
			fputs("null", f);
		fprintf(f, ",\"%s\"]", t->dtype);
	}
	fputs("],\n\"storages\":[", f);
	for (size_t i = 0; i < a->ns; i++)
		fprintf(f, "%s\n[%lld,\"%s\",%d]", i ? "," : "", (long long)a->s[i].nbytes,
			a->s[i].cpu ? "cpu" : "cuda", a->s[i].first == 1);
	fputs("]", f);
	*ret_tensors = a->nt;
	*ret_storages = a->ns;
}

/*
 * Bytes from a storage's start to the end of a view (contiguous without strides): NULL,
 * or what is wrong with it (negative, or too large) and *ret_bad the value.
 */
static const char *tensor_bytes(const int64_t *dims, uint32_t ndims, const int64_t *strides,
				uint32_t nstrides, int64_t offset, int64_t itemsize,
				int64_t *ret_bytes, int64_t *ret_bad)
{
	int64_t bytes;

	*ret_bad = ndims;
	if (ndims > ORR_COMPOSE_MAX_DIMS)
		return "more than 64 dimensions:";
	*ret_bad = offset;
	if (offset < 0)
		return "a storage offset of";
	*ret_bad = itemsize;
	if (itemsize < 0)
		return "an element size of";
	for (uint32_t i = 0; i < nstrides; i++) {
		*ret_bad = strides[i];
		if (strides[i] < 0)
			return "a stride of";
	}
	for (uint32_t i = 0; i < ndims; i++) {
		*ret_bad = dims[i];
		if (dims[i] < 0)
			return "a dimension of";
	}
	/* extent() saturates far above 2^40, bytes_of() at INT64_MAX: no overflow */
	bytes = bytes_of(offset, extent(dims, ndims, strides, nstrides),
			 itemsize > 0 ? itemsize : 1);
	*ret_bad = bytes;
	if (bytes > ORR_COMPOSE_MAX_TENSOR_BYTES)
		return "more than 2^40 bytes (its shape, strides and offset):";
	*ret_bytes = bytes;
	return NULL;
}

/* The tensors of an ET value, checked, their storages counted into a; 0 or an error. */
static int check_value(struct cargs *a, const struct orr_et *et, const struct orr_et_node *n,
		       const struct orr_et_value *v, int depth, struct orr_diag *d)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const char *why;
	int64_t bytes, bad;
	int err;

	if (depth > ORR_COMPOSE_MAX_VALUE_DEPTH)
		return 0;
	if (v->kind == ORR_ET_LIST) {
		for (uint32_t i = 0; i < v->nelems && v->first_elem + i < et->nvalues; i++)
			if ((err = check_value(a, et, n, &et->values[v->first_elem + i], depth + 1,
					       d)))
				return err;
		return 0;
	}
	if (v->kind != ORR_ET_TENSOR || !orr__compose_et_dtype(orr_trace_str(t, v->type)))
		return 0;
	why = tensor_bytes(et_dims(et, v->first_dim, v->ndims), v->ndims,
			   et_dims(et, v->first_stride, v->nstrides),
			   v->nstrides == v->ndims ? v->nstrides : 0, v->offset, v->itemsize,
			   &bytes, &bad);
	if (why)
		return orr_diag_set(
			d, ORR_ETOOBIG, "", -1, -1,
			"rank %d: execution trace node %lld (%s): a tensor with %s %lld",
			a->cr->r->rank, (long long)n->id, orr_trace_str(t, n->name), why,
			(long long)bad);
	et_tensor(a, et, v, false);
	return 0;
}

/* One tensor of a Kineto-only op checked, its storage counted into a; why not, or NULL. */
static const char *check_kineto_tensor(struct cargs *a, const int64_t *dims, uint32_t ndims,
				       const int64_t *strides, const char *dtype, int64_t *ret_bad)
{
	int64_t bytes;
	char key[32];
	const char *why = tensor_bytes(ndims ? dims : NULL, ndims, strides, strides ? ndims : 0, 0,
				       orr_dtype_bytes(dtype), &bytes, ret_bad);

	if (why)
		return why;
	/* a storage of its own, keyed as kineto_tensor() keys it */
	snprintf(key, sizeof(key), "#%llu", (unsigned long long)a->fresh++);
	storage_of(a, key, false, bytes, true);
	return NULL;
}

/* An op rebuilt from the profiler's record_shapes: a tensor per input, as recorded. */
static int check_kineto_op(struct cargs *a, const struct orr_event *ev, struct orr_diag *d)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_rank *r = a->cr->r;
	const struct orr_op_args *op = &r->ops[ev->args];
	uint32_t list_dtype = orr__compose_list_dtype(a->cr->lists, t, ev);

	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];
		const int64_t *dims = in->ndims ? r->dims + in->first_dim : NULL;
		const int64_t *strides = kineto_strides(r, in);
		enum orr__kineto_arg kind;
		const char *why = NULL;
		int64_t bad = 0;

		if (!orr__compose_kineto_arg(t, in, list_dtype, &kind, &why))
			continue;
		why = NULL;
		if (kind == ORR__KARG_TENSOR)
			why = check_kineto_tensor(a, dims, in->ndims, strides,
						  orr_trace_str(t, in->dtype), &bad);
		for (uint32_t k = 0; kind == ORR__KARG_TENSORS && !why && k < in->ndims;
		     k += 1 + (uint32_t)dims[k])
			why = check_kineto_tensor(a, dims + k + 1, (uint32_t)dims[k],
						  strides ? strides + k + 1 : NULL,
						  orr_trace_str(t, list_dtype), &bad);
		if (why)
			return orr_diag_set(d, ORR_ETOOBIG, "", -1, -1,
					    "rank %d: op %s at %lld ns: input %u is a tensor with "
					    "%s %lld",
					    r->rank, orr_trace_str(t, ev->name),
					    (long long)ev->start_ns, i, why, (long long)bad);
	}
	return 0;
}

int orr__compose_check_sizes(const struct orr_compose *c, const struct crank *cr,
			     struct orr_diag *reterr_diag)
{
	struct cargs *a = orr__compose_args_new(c, cr);
	__int128 total = 0;
	int err = 0;

	for (size_t i = 0; !err && i < cr->nitems; i++) {
		const struct citem *it = &cr->items[i];
		uint32_t node = it->kind == CI_OP ? cr->et_of_event[it->event] : ORR_NONE;
		const struct orr_et_node *n;

		if (it->kind != CI_OP)
			continue;
		if (node == ORR_NONE) {
			err = check_kineto_op(a, &cr->r->events[it->event], reterr_diag);
			continue;
		}
		n = &cr->r->et->nodes[node];
		for (uint32_t k = 0; !err && k < n->ninputs + n->noutputs; k++)
			err = check_value(a, cr->r->et, n,
					  &cr->r->et->values[k < n->ninputs ? n->first_input + k
									    : n->first_output + k -
										      n->ninputs],
					  0, reterr_diag);
	}
	for (size_t i = 0; !err && i < a->ns; i++)
		total += a->s[i].nbytes;
	if (!err && total > ORR_COMPOSE_MAX_RANK_BYTES)
		err = orr_diag_set(reterr_diag, ORR_ETOOBIG, "", -1, -1,
				   "rank %d: the plan's tensors need %.3g bytes, more than 2^42",
				   cr->r->rank, (double)total);
	orr__compose_args_free(a);
	return err;
}
