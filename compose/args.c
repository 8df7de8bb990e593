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

/*
 * A CUDA stream (aten::record_stream's second argument): the execution trace writes its
 * packed id, which means nothing in another process; bench.py passes the stream the op
 * runs on (docs/orrery-compose.md).
 */
static bool stream_type(const char *type)
{
	return !strcmp(type, "Stream") || !strncmp(type, "Stream(", 7);
}

/*
 * An object bench.py cannot make, whatever value the execution trace wrote for it (an id,
 * a number): a storage (aten::set_'s source), a generator (RNG ops given their own), a
 * script object.
 */
static bool object_type(const char *type)
{
	return !strncmp(type, "Storage", 7) || !strncmp(type, "Generator", 9) ||
	       !strncmp(type, "Object", 6) || !strncmp(type, "__torch__", 9);
}

/* An undefined tensor (an optional one not given): "Tensor(nullptr (uninitialized))". */
static bool undefined(const char *type)
{
	return !strncmp(type, "Tensor(nullptr", 14);
}

/*
 * The strings bench.py passes to an operator (compose/bench.py: DEVICE_RE, STRING_ARGS,
 * EINSUM_RE): devices and modes; aten::einsum's equation.  Nothing that names a file.
 */
static const char *const string_args[] = {
	"cpu",       "none",     "mean",    "sum",       "prod",       "amax",     "amin",
	"add",       "multiply", "tanh",    "trunc",     "floor",      "left",     "right",
	"fro",       "nuc",      "forward", "backward",  "ortho",      "constant", "reflect",
	"replicate", "circular", "zeros",   "border",    "reflection", "nearest",  "nearest-exact",
	"linear",    "bilinear", "bicubic", "trilinear", "area",       "higher",   "lower",
	"midpoint",  "L",        "U",       "reduced",   "complete",   "r",        "gelsd",
	"gelsy",     "gelss",    "gels",
};

static bool is_device(const char *s)
{
	if (strncmp(s, "cuda", 4))
		return false;
	if (!s[4])
		return true;
	return s[4] == ':' && s[5] && strspn(s + 5, "0123456789") == strlen(s + 5);
}

static bool is_equation(const char *s)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ. ";
	size_t lhs = strspn(s, letters), n;

	while (s[lhs] == ',')
		lhs += 1 + strspn(s + lhs + 1, letters);
	if (lhs > 256)
		return false;
	if (!s[lhs])
		return true;
	if (strncmp(s + lhs, "->", 2))
		return false;
	n = strspn(s + lhs + 2, letters);
	return n <= 64 && !s[lhs + 2 + n];
}

static bool string_arg_ok(const char *s, const char *op)
{
	if (is_device(s) || (!strcmp(op, "aten::einsum") && is_equation(s)))
		return true;
	for (size_t i = 0; i < sizeof(string_args) / sizeof(string_args[0]); i++)
		if (!strcmp(s, string_args[i]))
			return true;
	return false;
}

/* "an argument of type T", interned: why an op given such a value is not rebuilt. */
static const char *why_type(const struct orr_compose *c, uint32_t type)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "an argument of type %s",
		 orr_trace_str(orr_graph_trace(c->g), type));
	return orr_strtab_get(c->strs, orr_strtab_intern(c->strs, buf, strlen(buf)));
}

static const char *why_value(const struct orr_compose *c, const struct orr_et *et,
			     const struct orr_et_value *v, const char *op, int depth)
{
	const struct orr_trace *t = orr_graph_trace(c->g);

	if (depth > MAX_VALUE_DEPTH)
		return "arguments nested too deep";
	if (v->kind != ORR_ET_LIST && v->kind != ORR_ET_NONE &&
	    stream_type(orr_trace_str(t, v->type)))
		return NULL;
	if (v->kind != ORR_ET_LIST && v->kind != ORR_ET_NONE &&
	    object_type(orr_trace_str(t, v->type)))
		return why_type(c, v->type);
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
			why = why_value(c, et, &et->values[v->first_elem + i], op, depth + 1);
			if (why)
				return why;
		}
		return NULL;
	case ORR_ET_STRING:
		if (string_arg_ok(orr_trace_str(t, v->str), op))
			return NULL;
		return "a string argument bench.py does not pass (only devices and modes)";
	case ORR_ET_OTHER:
		break;
	default:
		return NULL;
	}
	return why_type(c, v->type);
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

static bool ident_n(const char *s, size_t n)
{
	if (!n || n > 128 ||
	    !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

bool orr__compose_identifier(const char *s)
{
	return ident_n(s, strlen(s));
}

/*
 * NAMESPACE::OP, both identifiers, the namespace not a dunder; OP a dunder only in aten
 * (aten::__and__ and its kind): anything else is not an operator of torch.ops.
 */
static bool op_name_ok(const char *name, size_t *ret_nslen)
{
	const char *sep = strstr(name, "::");
	size_t ns;

	if (!sep)
		return false;
	ns = (size_t)(sep - name);
	if (!ident_n(name, ns) || !orr__compose_identifier(sep + 2) || !strncmp(name, "__", 2))
		return false;
	if (!strncmp(sep + 2, "__", 2) && (ns != 4 || strncmp(name, "aten", 4)))
		return false;
	*ret_nslen = ns;
	return true;
}

static bool namespace_allowed(const struct orr_compose *c, const char *name, size_t n)
{
	if (n == 4 && !strncmp(name, "aten", 4))
		return true;
	for (size_t i = 0; i < c->o.nnamespaces; i++)
		if (strlen(c->o.namespaces[i]) == n && !strncmp(name, c->o.namespaces[i], n))
			return true;
	return false;
}

/*
 * The overload of "aten::add.Tensor(Tensor self, ...)" for the op `name`: its offset and
 * length in schema; length 0 for the default one (no dot); false when the schema is not
 * of that op.
 */
static bool overload_of(const char *name, const char *schema, size_t *ret_at, size_t *ret_n)
{
	size_t n = strlen(name), k;

	if (strncmp(schema, name, n) || (schema[n] != '.' && schema[n] != '('))
		return false;
	for (k = n + 1; schema[n] == '.' && schema[k] && schema[k] != '('; k++)
		;
	*ret_at = n + 1;
	*ret_n = schema[n] == '.' ? k - n - 1 : 0;
	return true;
}

/* Why op `name` with that schema (ORR_STR_NONE: none) is not one bench.py may call. */
static const char *why_name(const struct orr_compose *c, const char *name, const char *schema)
{
	char buf[256];
	size_t ns, at, n;

	if (!op_name_ok(name, &ns))
		return "not an operator name (NAMESPACE::NAME of identifiers, __dunder__ names only in aten)";
	if (!namespace_allowed(c, name, ns)) {
		snprintf(buf, sizeof(buf),
			 "namespace %.*s not allowed (orrery compose --allow-namespace %.*s)",
			 (int)ns, name, (int)ns, name);
		return orr_strtab_get(c->strs, orr_strtab_intern(c->strs, buf, strlen(buf)));
	}
	if (schema && overload_of(name, schema, &at, &n) && n &&
	    (!ident_n(schema + at, n) || !strncmp(schema + at, "__", 2)))
		return "an overload in the schema that is not an identifier";
	return NULL;
}

const char *orr__compose_refused(const struct orr_compose *c, const struct crank *cr, uint32_t e)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_event *ev = &cr->r->events[e];
	uint32_t node = cr->et_of_event[e];
	uint32_t schema = node == ORR_NONE ? ORR_STR_NONE : cr->r->et->nodes[node].op_schema;

	if (!namespace_runs(orr_trace_str(t, ev->name)))
		return NULL;
	return why_name(c, orr_trace_str(t, ev->name),
			schema == ORR_STR_NONE ? NULL : orr_trace_str(t, schema));
}

const char *orr__compose_unbuildable(const struct orr_compose *c, const struct crank *cr,
				     uint32_t e)
{
	const struct orr_trace *t = orr_graph_trace(c->g);
	const struct orr_rank *r = cr->r;
	const struct orr_event *ev = &r->events[e];
	uint32_t node = cr->et_of_event[e];
	const char *why;

	if (!namespace_runs(orr_trace_str(t, ev->name)))
		return "not an operator (namespace::name)";
	if (node != ORR_NONE) {
		const struct orr_et *et = r->et;
		const struct orr_et_node *n = &et->nodes[node];

		if (n->op_schema == ORR_STR_NONE)
			return "no schema in the execution trace";
		if ((why = why_name(c, orr_trace_str(t, ev->name), orr_trace_str(t, n->op_schema))))
			return why;
		for (uint32_t i = 0; i < n->ninputs; i++) {
			why = why_value(c, et, &et->values[n->first_input + i],
					orr_trace_str(t, ev->name), 0);
			if (why)
				return why;
		}
		return NULL;
	}
	if ((why = why_name(c, orr_trace_str(t, ev->name), NULL)))
		return why;
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
	const char *dtype = et_dtype(orr_trace_str(t, v->type));
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

	if (depth <= MAX_VALUE_DEPTH && v->kind != ORR_ET_LIST && v->kind != ORR_ET_NONE &&
	    stream_type(orr_trace_str(t, v->type))) {
		fputs("{\"s\":null}", f);
		return;
	}
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

/*
 * "Tensor" of "aten::add.Tensor(Tensor self, ...)", "default" without one; null if the
 * schema is of another op.  orr__compose_unbuildable() let only identifiers through;
 * escaped all the same.
 */
static void write_overload(FILE *f, const char *name, const char *schema)
{
	size_t at, n;
	char *o;

	if (!overload_of(name, schema, &at, &n)) {
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

static void write_kineto_op(struct cargs *a, FILE *f, const struct orr_event *ev)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_rank *r = a->cr->r;
	const struct orr_op_args *op = &r->ops[ev->args];

	fputs("null,[", f);
	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];
		const int64_t *dims = in->ndims ? r->dims + in->first_dim : NULL;
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

	if (depth > MAX_VALUE_DEPTH)
		return 0;
	if (v->kind == ORR_ET_LIST) {
		for (uint32_t i = 0; i < v->nelems && v->first_elem + i < et->nvalues; i++)
			if ((err = check_value(a, et, n, &et->values[v->first_elem + i], depth + 1,
					       d)))
				return err;
		return 0;
	}
	if (v->kind != ORR_ET_TENSOR || !et_dtype(orr_trace_str(t, v->type)))
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

/* An op rebuilt from the profiler's record_shapes: a contiguous tensor per input. */
static int check_kineto_op(struct cargs *a, const struct orr_event *ev, struct orr_diag *d)
{
	const struct orr_trace *t = orr_graph_trace(a->c->g);
	const struct orr_rank *r = a->cr->r;
	const struct orr_op_args *op = &r->ops[ev->args];
	char key[32];

	for (uint32_t i = 0; i < op->ninputs; i++) {
		const struct orr_input *in = &r->inputs[op->first_input + i];
		int64_t size = orr_dtype_bytes(orr_trace_str(t, in->dtype)), bytes, bad;
		const char *why = tensor_bytes(in->ndims ? r->dims + in->first_dim : NULL,
					       in->ndims, NULL, 0, 0, size, &bytes, &bad);

		if (why)
			return orr_diag_set(d, ORR_ETOOBIG, "", -1, -1,
					    "rank %d: op %s at %lld ns: input %u is a tensor with "
					    "%s %lld",
					    r->rank, orr_trace_str(t, ev->name),
					    (long long)ev->start_ns, i, why, (long long)bad);
		/* a storage of its own, keyed as write_kineto_op() keys it */
		snprintf(key, sizeof(key), "#%llu", (unsigned long long)a->fresh++);
		storage_of(a, key, false, bytes, true);
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
