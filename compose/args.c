/* SPDX-License-Identifier: MIT */
/*
 * Operators and their arguments in a plan (docs/orrery-compose.md, "What is rebuilt").
 *
 * With an execution trace an op is rebuilt from its schema and every argument as
 * recorded: tensors (ids, storage, offset, shape, strides, dtype, device), scalars,
 * strings, lists and None.  Tensors of one storage are views of one buffer, as they
 * were (storage-faithful aliasing); a storage first read before anything in the step
 * wrote it (weights, optimizer state, inputs) is made once, the others come from the
 * ops that write them or are made where first read.  Without an execution trace an op
 * is rebuilt only when the profiler recorded every argument as a tensor (record_shapes
 * gives shapes and dtypes, not values): each gets a contiguous tensor of its own.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MAX_VALUE_DEPTH 16

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

static const struct {
	const char *trace, *torch;
} dtypes[] = {
	{ "float", "float32" },
	{ "Float", "float32" },
	{ "double", "float64" },
	{ "Double", "float64" },
	{ "c10::Half", "float16" },
	{ "Half", "float16" },
	{ "c10::BFloat16", "bfloat16" },
	{ "BFloat16", "bfloat16" },
	{ "long int", "int64" },
	{ "long", "int64" },
	{ "Long", "int64" },
	{ "int64_t", "int64" },
	{ "int", "int32" },
	{ "Int", "int32" },
	{ "short int", "int16" },
	{ "short", "int16" },
	{ "Short", "int16" },
	{ "signed char", "int8" },
	{ "Char", "int8" },
	{ "unsigned char", "uint8" },
	{ "Byte", "uint8" },
	{ "bool", "bool" },
	{ "Bool", "bool" },
	{ "c10::complex<float>", "complex64" },
	{ "ComplexFloat", "complex64" },
	{ "c10::complex<double>", "complex128" },
	{ "ComplexDouble", "complex128" },
	{ "c10::Float8_e4m3fn", "float8_e4m3fn" },
	{ "Float8_e4m3fn", "float8_e4m3fn" },
	{ "c10::Float8_e5m2", "float8_e5m2" },
	{ "Float8_e5m2", "float8_e5m2" },
};

const char *orr__compose_dtype(const char *name)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (!strcmp(dtypes[i].trace, name))
			return dtypes[i].torch;
	return NULL;
}

/* The dtype of an ET tensor type, "Tensor(c10::BFloat16)"; NULL when unknown. */
static const char *et_dtype(const char *type)
{
	char buf[64];
	size_t n = strlen(type);

	if (n < 9 || strncmp(type, "Tensor(", 7) || type[n - 1] != ')' || n - 8 >= sizeof(buf))
		return NULL;
	memcpy(buf, type + 7, n - 8);
	buf[n - 8] = '\0';
	return orr__compose_dtype(buf);
}

/* An undefined tensor (an optional one not given): "Tensor(nullptr (uninitialized))". */
static bool undefined(const char *type)
{
	return !strncmp(type, "Tensor(nullptr", 14);
}

static const char *why_value(const struct orr_compose *c, const struct orr_et *et,
			     const struct orr_et_value *v, int depth)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	char buf[256];

	if (depth > MAX_VALUE_DEPTH)
		return "arguments nested too deep";
	switch (v->kind) {
	case ORR_ET_TENSOR:
		if (et_dtype(orr_trace_str(t, v->type)) || undefined(orr_trace_str(t, v->type)))
			return NULL;
		break;
	case ORR_ET_LIST:
		for (uint32_t i = 0; i < v->nelems; i++) {
			const char *why;

			if (v->first_elem + i >= et->nvalues)
				return "a list argument out of range";
			why = why_value(c, et, &et->values[v->first_elem + i], depth + 1);
			if (why)
				return why;
		}
		return NULL;
	case ORR_ET_OTHER:
		break;
	default:
		return NULL;
	}
	snprintf(buf, sizeof(buf), "an argument of type %s", orr_trace_str(t, v->type));
	return orr_strtab_get(c->strs, orr_strtab_intern(c->strs, buf, strlen(buf)));
}

static bool namespace_runs(const char *name)
{
	static const char *const not_ops[] = {
		"autograd",         "profiler",        "c10d",
		"_c10d_functional", "c10d_functional", "record_param_comms"
	};
	const char *sep = strstr(name, "::");

	if (!sep || sep == name)
		return false;
	for (size_t i = 0; i < sizeof(not_ops) / sizeof(not_ops[0]); i++)
		if ((size_t)(sep - name) == strlen(not_ops[i]) &&
		    !strncmp(name, not_ops[i], (size_t)(sep - name)))
			return false;
	return true;
}

const char *orr__compose_unbuildable(const struct orr_compose *c, const struct crank *cr,
				     uint32_t e)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_rank *r = cr->r;
	const struct orr_event *ev = &r->events[e];
	uint32_t node = cr->et_of_event[e];

	if (!namespace_runs(orr_trace_str(t, ev->name)))
		return "not an operator (namespace::name)";
	if (node != ORR_NONE) {
		const struct orr_et *et = r->et;
		const struct orr_et_node *n = &et->nodes[node];

		if (n->op_schema == ORR_STR_NONE)
			return "no schema in the execution trace";
		for (uint32_t i = 0; i < n->ninputs; i++) {
			const char *why = why_value(c, et, &et->values[n->first_input + i], 0);

			if (why)
				return why;
		}
		return NULL;
	}
	if (ev->args == ORR_NONE || ev->args >= r->nops || !r->ops[ev->args].ninputs)
		return "no arguments recorded (record_shapes, or an execution trace)";
	for (uint32_t i = 0; i < r->ops[ev->args].ninputs; i++) {
		const struct orr_input *in = &r->inputs[r->ops[ev->args].first_input + i];

		if (in->is_list || in->dtype == ORR_STR_NONE ||
		    !orr__compose_dtype(orr_trace_str(t, in->dtype)))
			return "arguments without values (an execution trace has them)";
	}
	return NULL;
}

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

static uint32_t et_tensor(struct cargs *a, const struct orr_et *et, const struct orr_et_value *v,
			  bool out)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const char *dev = v->device == ORR_STR_NONE ? "" : orr_trace_str(t, v->device);
	bool cpu = !strncmp(dev, "cpu", 3);
	const char *dtype = et_dtype(orr_trace_str(t, v->type));
	const int64_t *dims = et->dims + v->first_dim, *strides = et->dims + v->first_stride;
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

	switch (depth > MAX_VALUE_DEPTH ? ORR_ET_NONE : v->kind) {
	case ORR_ET_TENSOR:
		if (undefined(orr_trace_str(t, v->type)))
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
	if (depth > MAX_VALUE_DEPTH)
		return;
	if (v->kind == ORR_ET_TENSOR &&
	    et_dtype(orr_trace_str(orr_graph_trace(a->c->g), v->type))) {
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

/* "Tensor" of "aten::add.Tensor(Tensor self, ...)", "default" without one; NULL if unknown. */
static void write_overload(FILE *f, const char *name, const char *schema)
{
	size_t n = strlen(name), k;

	if (strncmp(schema, name, n) || (schema[n] != '.' && schema[n] != '(')) {
		fputs("null", f);
		return;
	}
	if (schema[n] == '(') {
		fputs("\"default\"", f);
		return;
	}
	for (k = n + 1; schema[k] && schema[k] != '('; k++)
		;
	fputc('"', f);
	fwrite(schema + n + 1, 1, k - n - 1, f);
	fputc('"', f);
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

static void write_kineto_op(struct cargs *a, FILE *f, const struct orr_event *ev)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_rank *r = a->cr->r;
	const struct orr_op_args *op = &r->ops[ev->args];

	fputs("null,[", f);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];
		const int64_t *dims = r->dims + in->first_dim;
		const char *dtype = orr__compose_dtype(orr_trace_str(t, in->dtype));
		int64_t ext = extent(dims, in->ndims, NULL, 0);
		char key[32];
		struct ctensor ct = { 0, 0, dims, NULL, in->ndims, 0, dtype };

		snprintf(key, sizeof(key), "#%llu", (unsigned long long)a->fresh++);
		ct.storage = storage_of(
			a, key, false,
			bytes_of(0, ext, orr_dtype_bytes(orr_trace_str(t, in->dtype))), true);
		fprintf(f, "%s{\"t\":%u}", i ? "," : "", add_tensor(a, key, ct));
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
