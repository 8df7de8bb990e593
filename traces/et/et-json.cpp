/* SPDX-License-Identifier: MIT */
/*
 * PyTorch execution traces (ExecutionTraceObserver's JSON), behind orr__et_parse():
 * schema 1.0.x, a node's fields flat ("parent", "rf_id", "inputs", "input_shapes",
 * "input_types", ...), and 1.1.x-chakra, a node's "ctrl_deps", its "inputs" and
 * "outputs" objects ({"values", "shapes", "types"}) and its other fields as "attrs"
 * ([{"name", "type", "value"}]).  docs/inputs.md says what is taken.
 *
 * The scanner (../kineto/scan.h) checks the file's structure first, so that a broken
 * file is an error with its byte offset; simdjson's DOM then holds the whole file (an
 * execution trace is a few MB per step).  Values of an unexpected type are read as
 * ORR_ET_OTHER rather than failing the file.
 */
#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "../internal.h"
#include "../kineto/scan.h"

namespace {

using namespace simdjson;
using std::string_view;
using opt = std::optional<dom::element>; /* a value that may be absent */

/* Key k of object o, or nothing. */
opt get(dom::object o, const char *k)
{
	dom::element e;

	if (o[k].get(e) != SUCCESS)
		return std::nullopt;
	return e;
}

struct et_fail {
	int err;
	const char *what;
	enum orr__limit which;
	size_t bytes = 0;  /* ORR__LIMIT_STRING_BYTES: the string's, as read */
	int64_t node = -1; /* ORR__LIMIT_EVENTS: the node being read, from 0 in "nodes" */
};

class et_parser {
public:
	et_parser(struct orr_trace *t, struct orr__et_build *eb, const struct orr__limits *lim)
		: t_(t), eb_(eb), lim_(lim)
	{
	}
	void top(dom::object o);

private:
	void node(dom::object o);
	void groups(const struct orr_et_value &v);
	void flat(dom::object o, struct orr_et_node *n);
	void chakra(dom::object o, struct orr_et_node *n);
	void io(opt values, opt shapes, opt types, opt strides, uint32_t *ret_first,
		uint32_t *ret_n);
	uint32_t slots(size_t n);
	template <class Type>
	void fill_all(uint32_t first, const std::vector<dom::element> &vs, opt sh, opt st,
		      Type type, int depth);
	void fill(uint32_t at, dom::element v, opt shape, opt stride, string_view type, int depth);
	void dims(opt shape, uint32_t *ret_first, uint32_t *ret_n);
	/*
	 * The same view again (a list's type for each of its elements) costs nothing: the
	 * document's strings stay put while it is read (groups() forgets its own).
	 */
	uint32_t intern(string_view s)
	{
		if (s.size() > lim_->max[ORR__LIMIT_STRING_BYTES])
			throw et_fail{ ORR_ETOOBIG, nullptr, ORR__LIMIT_STRING_BYTES, s.size() };
		if (s.data() != last_.data() || s.size() != last_.size()) {
			last_ = s;
			last_id_ = orr_strtab_intern(t_->strs, s.data(), s.size());
		}
		return last_id_;
	}
	void count(const struct orr__vec &v)
	{
		if (v.n >= lim_->max[ORR__LIMIT_EVENTS])
			throw et_fail{ ORR_ETOOBIG, nullptr, ORR__LIMIT_EVENTS, 0, node_i_ };
	}

	struct orr_trace *t_;
	struct orr__et_build *eb_;
	const struct orr__limits *lim_;
	string_view last_;
	uint32_t last_id_ = ORR_STR_NONE;
	int64_t node_i_ = -1; /* the element of "nodes" being read */
};

int64_t as_int(dom::element e, int64_t dflt)
{
	int64_t i;
	uint64_t u;
	double d;

	if (e.get_int64().get(i) == SUCCESS)
		return i;
	if (e.get_uint64().get(u) == SUCCESS)
		return u <= INT64_MAX ? (int64_t)u : dflt;
	if (e.get_double().get(d) == SUCCESS && d >= -9.2e18 && d <= 9.2e18 && d == (int64_t)d)
		return (int64_t)d;
	return dflt;
}

/* The element types of "GenericList[A,B(x,y),C]" or "Tuple[...]", split at top-level commas. */
std::vector<string_view> elem_types(string_view list)
{
	std::vector<string_view> v;
	size_t open = list.find('['), depth = 0, start;

	if (open == string_view::npos || list.back() != ']')
		return v;
	start = open + 1;
	for (size_t i = open + 1; i + 1 < list.size(); i++) {
		char ch = list[i];

		if (ch == '[' || ch == '(')
			depth++;
		else if ((ch == ']' || ch == ')') && depth)
			depth--;
		else if (ch == ',' && !depth) {
			v.push_back(list.substr(start, i - start));
			start = i + 1;
		}
	}
	if (list.size() - 1 > start)
		v.push_back(list.substr(start, list.size() - 1 - start));
	return v;
}

bool starts(string_view s, const char *p)
{
	return s.substr(0, strlen(p)) == p;
}

void et_parser::dims(opt shape, uint32_t *ret_first, uint32_t *ret_n)
{
	dom::array a;

	*ret_first = (uint32_t)eb_->dims.n;
	*ret_n = 0;
	if (!shape || shape->get_array().get(a) != SUCCESS)
		return;
	for (dom::element d : a) {
		if (!d.is_int64() && !d.is_uint64())
			continue; /* a list's shapes are lists: not this value's */
		count(eb_->dims);
		*(int64_t *)orr__vec_push(&eb_->dims) = as_int(d, -1);
		(*ret_n)++;
	}
}

/* Slots for n values at the end of values; the first one's index. */
uint32_t et_parser::slots(size_t n)
{
	uint32_t first = (uint32_t)eb_->values.n;

	for (size_t i = 0; i < n; i++) {
		count(eb_->values);
		orr__vec_push(&eb_->values);
	}
	return first;
}

/* The elements of an array, for indexing by position. */
static std::vector<dom::element> elements(opt e)
{
	std::vector<dom::element> v;
	dom::array a;

	if (e && e->get_array().get(a) == SUCCESS)
		for (dom::element x : a)
			v.push_back(x);
	return v;
}

/* Values vs, with shapes sh, strides st and types of type(k), into slots from `first`. */
template <class Type>
void et_parser::fill_all(uint32_t first, const std::vector<dom::element> &vs, opt sh, opt st,
			 Type type, int depth)
{
	std::vector<dom::element> shv = elements(sh), stv = elements(st);

	for (size_t k = 0; k < vs.size(); k++)
		fill(first + (uint32_t)k, vs[k], k < shv.size() ? opt(shv[k]) : std::nullopt,
		     k < stv.size() ? opt(stv[k]) : std::nullopt, type(k), depth);
}

/* Value v of type `type` into slot at (values may grow: at is an index). */
void et_parser::fill(uint32_t at, dom::element v, opt shape, opt stride, string_view type,
		     int depth)
{
	struct orr_et_value x = {};
	dom::array a;
	string_view s;
	bool b;
	double d;

	x.type = intern(type);
	x.device = ORR_STR_NONE;
	x.str = ORR_STR_NONE;
	x.tensor_id = x.storage_id = x.offset = x.numel = x.itemsize = -1;
	dims(shape, &x.first_dim, &x.ndims);
	dims(stride, &x.first_stride, &x.nstrides);
	if (type == "None" || v.is_null() ||
	    (v.get_string().get(s) == SUCCESS && s == "<None>" && !starts(type, "String"))) {
		x.kind = ORR_ET_NONE;
	} else if (starts(type, "Tensor(") && v.get_array().get(a) == SUCCESS && a.size() >= 5) {
		x.kind = ORR_ET_TENSOR;
		x.tensor_id = as_int(a.at(0).value_unsafe(), -1);
		x.storage_id = as_int(a.at(1).value_unsafe(), -1);
		x.offset = as_int(a.at(2).value_unsafe(), -1);
		x.numel = as_int(a.at(3).value_unsafe(), -1);
		x.itemsize = as_int(a.at(4).value_unsafe(), -1);
		if (a.size() > 5 && a.at(5).get_string().get(s) == SUCCESS)
			x.device = intern(s);
	} else if (v.get_array().get(a) == SUCCESS && depth < 64) {
		std::vector<dom::element> vs = elements(v);

		x.kind = ORR_ET_LIST;
		x.first_elem = slots(vs.size());
		x.nelems = (uint32_t)vs.size();
		*ORR__AT(eb_->values, struct orr_et_value, at) = x;
		std::vector<string_view> types = elem_types(type);

		fill_all(
			x.first_elem, vs, shape, stride,
			[&types, type](size_t k) {
				return k < types.size() && !types[k].empty() ? types[k] : type;
			},
			depth + 1);
		return;
	} else if (v.get_bool().get(b) == SUCCESS) {
		x.kind = ORR_ET_BOOL;
		x.i = b;
	} else if (v.is_int64() || v.is_uint64()) {
		x.kind = ORR_ET_INT;
		x.i = as_int(v, 0);
	} else if (v.get_double().get(d) == SUCCESS) {
		x.kind = ORR_ET_DOUBLE;
		x.d = d;
	} else if (v.get_string().get(s) == SUCCESS) {
		x.kind = ORR_ET_STRING;
		x.str = intern(s);
	} else {
		x.kind = ORR_ET_OTHER;
	}
	*ORR__AT(eb_->values, struct orr_et_value, at) = x;
}

void et_parser::io(opt values, opt shapes, opt types, opt strides, uint32_t *ret_first,
		   uint32_t *ret_n)
{
	std::vector<dom::element> vs = elements(values), tv = elements(types);

	*ret_first = slots(vs.size());
	*ret_n = (uint32_t)vs.size();
	fill_all(
		*ret_first, vs, shapes, strides,
		[&tv](size_t k) {
			string_view type;

			if (!(k < tv.size() && tv[k].get_string().get(type) == SUCCESS))
				type = "";
			return type;
		},
		0);
}

/* Schema 1.0.x: every field at the node's top level. */
void et_parser::flat(dom::object o, struct orr_et_node *n)
{
	string_view s;
	uint32_t first, cnt;

	n->parent = o["parent"].error() ? -1 : as_int(o["parent"].value_unsafe(), -1);
	n->rf_id = o["rf_id"].error() ? -1 : as_int(o["rf_id"].value_unsafe(), -1);
	n->fw_parent = o["fw_parent"].error() ? -1 : as_int(o["fw_parent"].value_unsafe(), -1);
	n->seq_id = o["seq_id"].error() ? -1 : as_int(o["seq_id"].value_unsafe(), -1);
	n->scope = o["scope"].error() ? -1 : (int32_t)as_int(o["scope"].value_unsafe(), -1);
	n->tid = o["tid"].error() ? -1 : as_int(o["tid"].value_unsafe(), -1);
	n->fw_tid = o["fw_tid"].error() ? -1 : as_int(o["fw_tid"].value_unsafe(), -1);
	if (o["op_schema"].get_string().get(s) == SUCCESS && !s.empty())
		n->op_schema = intern(s);
	io(get(o, "inputs"), get(o, "input_shapes"), get(o, "input_types"), get(o, "input_strides"),
	   &first, &cnt);
	n->first_input = first;
	n->ninputs = cnt;
	io(get(o, "outputs"), get(o, "output_shapes"), get(o, "output_types"),
	   get(o, "output_strides"), &first, &cnt);
	n->first_output = first;
	n->noutputs = cnt;
}

/* Schema 1.1.x-chakra: "ctrl_deps", "inputs"/"outputs" objects, the rest in "attrs". */
void et_parser::chakra(dom::object o, struct orr_et_node *n)
{
	dom::array attrs;
	dom::object io_obj;
	uint32_t first, cnt;

	n->parent = o["ctrl_deps"].error() ? -1 : as_int(o["ctrl_deps"].value_unsafe(), -1);
	if (o["attrs"].get_array().get(attrs) == SUCCESS)
		for (dom::element a : attrs) {
			dom::object ao;
			string_view name, s;

			if (a.get_object().get(ao) != SUCCESS ||
			    ao["name"].get_string().get(name) != SUCCESS || ao["value"].error())
				continue;
			dom::element v = ao["value"].value_unsafe();

			if (name == "rf_id")
				n->rf_id = as_int(v, -1);
			else if (name == "fw_parent")
				n->fw_parent = as_int(v, -1);
			else if (name == "seq_id")
				n->seq_id = as_int(v, -1);
			else if (name == "scope")
				n->scope = (int32_t)as_int(v, -1);
			else if (name == "tid")
				n->tid = as_int(v, -1);
			else if (name == "fw_tid")
				n->fw_tid = as_int(v, -1);
			else if (name == "op_schema" && v.get_string().get(s) == SUCCESS &&
				 !s.empty())
				n->op_schema = intern(s);
			else if (name == "collective_name" && v.get_string().get(s) == SUCCESS)
				n->coll_name = intern(s);
			else if (name == "pg_name" && v.get_string().get(s) == SUCCESS)
				n->pg_name = intern(s);
			else if (name == "pg_size")
				n->pg_size = (int32_t)as_int(v, -1);
		}
	for (int out = 0; out < 2; out++) {
		opt vals, shapes, types, strides;

		if (o[out ? "outputs" : "inputs"].get_object().get(io_obj) == SUCCESS) {
			vals = get(io_obj, "values");
			shapes = get(io_obj, "shapes");
			types = get(io_obj, "types");
			strides = get(io_obj, "strides");
		}
		io(vals, shapes, types, strides, &first, &cnt);
		(out ? n->first_output : n->first_input) = first;
		(out ? n->noutputs : n->ninputs) = cnt;
	}
}

void et_parser::node(dom::object o)
{
	struct orr_et_node n = {};
	string_view s;

	n.id = o["id"].error() ? -1 : as_int(o["id"].value_unsafe(), -1);
	n.parent = n.rf_id = n.fw_parent = n.seq_id = n.tid = n.fw_tid = -1;
	n.scope = n.pg_size = -1;
	n.event = ORR_NONE;
	n.name = o["name"].get_string().get(s) == SUCCESS ? intern(s) : intern("");
	if (!o["attrs"].error() || !o["ctrl_deps"].error())
		chakra(o, &n);
	else
		flat(o, &n);
	count(eb_->nodes);
	*(struct orr_et_node *)orr__vec_push(&eb_->nodes) = n;
	if (n.ninputs && s == "## process_group:init ##")
		groups(*ORR__AT(eb_->values, struct orr_et_value, n.first_input));
}

/*
 * The process groups "## process_group:init ##" records as a JSON string: [{"pg_name",
 * "pg_desc", "backend_config", "ranks": [...], "group_size"}, ...].  Anything else in
 * it is left alone; text that is no JSON gives no group.
 */
void et_parser::groups(const struct orr_et_value &v)
{
	const char *text = v.kind == ORR_ET_STRING ? orr_strtab_get(t_->strs, v.str) : nullptr;
	dom::parser p;
	dom::array a;

	if (!text || p.parse(padded_string(string_view(text))).get_array().get(a) != SUCCESS)
		return;
	for (dom::element e : a) {
		struct orr_et_group g = {};
		dom::object o;
		dom::array ranks;
		string_view s;

		if (e.get_object().get(o) != SUCCESS)
			continue;
		g.name = o["pg_name"].get_string().get(s) == SUCCESS ? intern(s) : ORR_STR_NONE;
		g.desc = o["pg_desc"].get_string().get(s) == SUCCESS ? intern(s) : ORR_STR_NONE;
		g.backend = o["backend_config"].get_string().get(s) == SUCCESS ? intern(s)
									       : ORR_STR_NONE;
		g.size = o["group_size"].error()
				 ? -1
				 : (int32_t)as_int(o["group_size"].value_unsafe(), -1);
		g.first_rank = (uint32_t)eb_->group_ranks.n;
		if (o["ranks"].get_array().get(ranks) == SUCCESS)
			for (dom::element r : ranks) {
				count(eb_->group_ranks);
				*(int32_t *)orr__vec_push(&eb_->group_ranks) =
					(int32_t)as_int(r, -1);
				g.nranks++;
			}
		count(eb_->groups);
		*(struct orr_et_group *)orr__vec_push(&eb_->groups) = g;
	}
	last_ = {}; /* its strings go with p: another parse may reuse their addresses */
}

void et_parser::top(dom::object o)
{
	dom::array nodes;
	string_view s;

	if (o["nodes"].get_array().get(nodes) != SUCCESS)
		throw et_fail{ ORR_EFORMAT, "no 'nodes' array", ORR__LIMIT_COUNT };
	if (o["schema"].get_string().get(s) == SUCCESS)
		eb_->pub.schema = intern(s);
	eb_->pub.pid = o["pid"].error() ? -1 : as_int(o["pid"].value_unsafe(), -1);
	eb_->pub.start_ts = o["start_ts"].error() ? -1 : as_int(o["start_ts"].value_unsafe(), -1);
	eb_->pub.finish_ts = o["finish_ts"].error() ? -1
						    : as_int(o["finish_ts"].value_unsafe(), -1);
	for (dom::element e : nodes) {
		dom::object no;

		node_i_++;
		if (e.get_object().get(no) != SUCCESS)
			throw et_fail{ ORR_EMALFORMED, "a node that is not an object",
				       ORR__LIMIT_COUNT };
		node(no);
	}
}

/* Past the value at pos (after blanks) and the blanks and one ',' after it; len if broken. */
size_t past_value(const char *buf, size_t len, size_t pos, size_t depth)
{
	struct orr__scan_error se;
	size_t end;

	if (orr__scan_value(buf, len, pos, depth, &end, &se))
		return len;
	end = orr__scan_ws(buf, len, end);
	return end < len && buf[end] == ',' ? orr__scan_ws(buf, len, end + 1) : end;
}

/*
 * The offset of element k of the top object's first "nodes" array in buf[0..len) (JSON
 * the scanner took at depth), or len: where a node past ORR_MAX_EVENTS is (the DOM
 * keeps no offsets).
 */
size_t node_at(const char *buf, size_t len, int64_t k, size_t depth)
{
	struct orr__scan_error se;
	size_t pos = orr__scan_ws(buf, len, 0), end;

	if (pos >= len || buf[pos] != '{')
		return len;
	for (pos = orr__scan_ws(buf, len, pos + 1); pos < len && buf[pos] == '"';) {
		bool nodes;

		if (orr__scan_string(buf, len, pos, &end, &se))
			return len;
		nodes = end - pos == 7 && !memcmp(buf + pos, "\"nodes\"", 7);
		pos = orr__scan_ws(buf, len, end);
		if (pos >= len || buf[pos] != ':')
			return len;
		pos = orr__scan_ws(buf, len, pos + 1);
		if (nodes && pos < len && buf[pos] == '[') {
			pos = orr__scan_ws(buf, len, pos + 1);
			for (int64_t i = 0; i < k && pos < len; i++)
				pos = past_value(buf, len, pos, depth);
			return pos;
		}
		pos = past_value(buf, len, pos, depth);
	}
	return len;
}

/* The bytes string buf[start..end) (its quotes included) holds once its escapes are read. */
size_t decoded_bytes(const char *buf, size_t start, size_t end)
{
	size_t n = 0;

	for (size_t i = start + 1; i + 1 < end; n++) {
		unsigned cp = 0;

		if (buf[i] != '\\') {
			i++;
			continue;
		}
		if (buf[i + 1] != 'u' || i + 6 > end) {
			i += 2;
			continue;
		}
		for (size_t k = i + 2; k < i + 6; k++)
			cp = cp * 16 +
			     (unsigned)(buf[k] <= '9' ? buf[k] - '0' : (buf[k] | 0x20) - 'a' + 10);
		/* a surrogate is half of a pair's 4 bytes */
		n += cp < 0x80 ? 0 : cp < 0x800 || (cp >= 0xd800 && cp < 0xe000) ? 1 : 2;
		i += 6;
	}
	return n;
}

/*
 * The offset of the first string of buf[0..len) (JSON, as simdjson took it) of `bytes`
 * bytes once read, or len: where ORR_MAX_STRING_BYTES stopped the reading (the DOM
 * keeps no offsets).  Its size, not only one past max: a longer string the reader skips
 * (a field it does not keep) may come before.
 */
size_t long_string_at(const char *buf, size_t len, size_t bytes)
{
	for (size_t pos = 0; pos < len; pos++) {
		const char *q = (const char *)memchr(buf + pos, '"', len - pos);
		struct orr__scan_error se;
		size_t end;

		if (!q || orr__scan_string(buf, len, (size_t)(q - buf), &end, &se))
			break;
		if (end - (size_t)(q - buf) - 2 >= bytes &&
		    decoded_bytes(buf, (size_t)(q - buf), end) == bytes)
			return (size_t)(q - buf);
		pos = end - 1;
	}
	return len;
}

/*
 * A failure at byte offset of buf: its line and column in the message, after the
 * byte offset the diag holds.  ORR_ETOOBIG is the limit which's error (the depth for
 * the scanner's and the check's), as the Kineto and costs readers give it.
 */
int where_fail(const char *name, const char *buf, size_t len, int err, size_t offset,
	       const char *what, const struct orr__limits *limits, enum orr__limit which,
	       struct orr_diag *diag)
{
	char msg[sizeof(diag->msg)];
	size_t line, col;

	if (offset > len)
		offset = len;
	if (err == ORR_ETOOBIG)
		orr__limit_fail(limits, which, diag, name, (int64_t)offset, -1);
	else
		orr_diag_set(diag, err, name, (int64_t)offset, -1, "%s", what ? what : "");
	orr_json_where(buf, offset, &line, &col);
	snprintf(msg, sizeof(msg), "%s", diag->msg);
	snprintf(diag->msg, sizeof(diag->msg), "execution trace, line %zu column %zu: %.900s", line,
		 col, msg);
	return err;
}

} // namespace

/*
 * Memory refused to the parser (its index is several bytes per byte of the file) or to
 * what it builds: the caller's error, -ENOMEM, not the process's end.
 */
static int out_of_memory(const char *name, size_t len, struct orr_diag *diag)
{
	return orr_diag_set(diag, -ENOMEM, name, -1, -1,
			    "execution trace: out of memory parsing its %zu bytes", len);
}

extern "C" int orr__et_parse(struct orr_trace *t, struct orr__et_build *eb, const char *name,
			     char *buf, size_t len, const struct orr__limits *limits,
			     struct orr_diag *diag)
{
	struct orr__scan_error se = {};
	size_t end, pos = orr__scan_ws(buf, len, 0);
	dom::object top;

	if (orr__scan_value(buf, len, pos, (size_t)limits->max[ORR__LIMIT_DEPTH], &end, &se))
		return where_fail(name, buf, len, se.err, se.offset, se.what, limits,
				  ORR__LIMIT_DEPTH, diag);
	if (orr__scan_ws(buf, len, end) != len)
		return orr_diag_set(diag, ORR_EMALFORMED, name, (int64_t)end, -1,
				    "execution trace: trailing data after the JSON value");
	try {
		dom::parser parser;
		dom::element doc;

		if (parser.allocate(len + 1, (size_t)limits->max[ORR__LIMIT_DEPTH] + 1) != SUCCESS)
			throw std::bad_alloc();
		error_code e = parser.parse(buf, len, false).get(doc);
		struct orr_json_error je;
		char what[160];
		int jerr;

		/* what the scanner does not check (',' and ':', literals, numbers): where */
		if (e != SUCCESS &&
		    (jerr = orr_json_check(buf, len, (size_t)limits->max[ORR__LIMIT_DEPTH], &je))) {
			snprintf(what, sizeof(what), "%sexpected %s",
				 jerr == ORR_ETRUNCATED ? "the JSON ends early: " : "",
				 je.expected);
			return where_fail(name, buf, len, jerr, je.offset, what, limits,
					  ORR__LIMIT_DEPTH, diag);
		}
		if (e == MEMALLOC)
			return out_of_memory(name, len, diag);
		if (e != SUCCESS)
			return orr_diag_set(diag, ORR_EMALFORMED, name, -1, -1,
					    "execution trace: %s", error_message(e));
		if (doc.get_object().get(top) != SUCCESS)
			return orr_diag_set(diag, ORR_EFORMAT, name, -1, -1,
					    "execution trace: not a JSON object");
		eb->pub.source = orr_strtab_intern(t->strs, name, strlen(name));
		et_parser(t, eb, limits).top(top);
	} catch (const et_fail &f) {
		if (f.err == ORR_ETOOBIG && f.which == ORR__LIMIT_STRING_BYTES)
			return where_fail(name, buf, len, f.err, long_string_at(buf, len, f.bytes),
					  nullptr, limits, f.which, diag);
		if (f.err == ORR_ETOOBIG && f.node >= 0) {
			int r = where_fail(name, buf, len, f.err,
					   node_at(buf, len, f.node,
						   (size_t)limits->max[ORR__LIMIT_DEPTH]),
					   nullptr, limits, f.which, diag);

			if (diag)
				diag->event = f.node;
			return r;
		}
		if (f.err == ORR_ETOOBIG)
			return orr__limit_fail(limits, f.which, diag, name, -1, -1);
		return orr_diag_set(diag, f.err, name, -1, -1, "execution trace: %s", f.what);
	} catch (const std::bad_alloc &) {
		return out_of_memory(name, len, diag);
	}
	return 0;
}
