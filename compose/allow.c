/* SPDX-License-Identifier: MIT */
/*
 * What a composed benchmark may call (docs/orrery-compose.md, "What bench.py runs"):
 * operators of aten and the namespaces a user allows, by identifiers only, with
 * arguments of types bench.py builds itself (tensors, scalars, a fixed set of strings),
 * never a storage, generator, script object or a string from the trace used as a path
 * or code; and the dtypes as torch names them.  args.c writes what passes.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

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
const char *orr__compose_et_dtype(const char *type)
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
bool orr__compose_stream_type(const char *type)
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

/* An orr__compose_undefined tensor (an optional one not given): "Tensor(nullptr (uninitialized))". */
bool orr__compose_undefined(const char *type)
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

	if (depth > ORR_COMPOSE_MAX_VALUE_DEPTH)
		return "arguments nested too deep";
	if (v->kind != ORR_ET_LIST && v->kind != ORR_ET_NONE &&
	    orr__compose_stream_type(orr_trace_str(t, v->type)))
		return NULL;
	if (v->kind != ORR_ET_LIST && v->kind != ORR_ET_NONE &&
	    object_type(orr_trace_str(t, v->type)))
		return why_type(c, v->type);
	switch (v->kind) {
	case ORR_ET_TENSOR:
		if (orr__compose_et_dtype(orr_trace_str(t, v->type)) ||
		    orr__compose_undefined(orr_trace_str(t, v->type)))
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
bool orr__compose_overload_of(const char *name, const char *schema, size_t *ret_at, size_t *ret_n)
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
	if (schema && orr__compose_overload_of(name, schema, &at, &n) && n &&
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
		enum orr__kineto_arg kind;

		if (!orr__compose_kineto_arg(t, in, orr__compose_list_dtype(cr->lists, t, ev),
					     &kind, &why))
			return why;
		if (kind == ORR__KARG_TENSORS &&
		    ((size_t)in->first_dim + in->ndims > r->ndims ||
		     !orr__compose_list_members(r->dims + in->first_dim, in->ndims)))
			return "a list of tensors whose recorded shapes are malformed";
	}
	return NULL;
}
