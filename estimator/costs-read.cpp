/* SPDX-License-Identifier: MIT */
/*
 * Costs files (docs/orrery-fit.md), written by `orrery fit -o`, back into the models
 * that fit made: orr_costs_read().  C++ only for simdjson's DOM API, used through its
 * error codes; nothing here throws, and std::bad_alloc (a vector of an object's keys, or
 * of an array's names) is caught where the file is read, its error: -ENOMEM.
 *
 * A costs file is small (kilobytes to a few megabytes), so it is parsed whole and read
 * by key, in any order.  Every value the models' _time() functions read is checked:
 * its type, its range (counts not negative, coefficients finite, 2 or 3 of them, names
 * this orrery knows), so that whatever a file holds, the models read back are ones the
 * fits could have made.  Errors name the key as a path ("gemm.classes[2].fit.coef[1]");
 * simdjson gives no offset of a syntax error, so a text it refuses is walked again by
 * orr_json_check() for the byte (line, column) where it stops being JSON.  The typed
 * getters are costs-json.cpp's and the models' readers costs-models.cpp's; this file
 * reads the header, the structure and the text.
 */
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "costs-json.h"

using namespace orr__costs;

namespace {

/* ---- the structure, the overlap, the top ---- */

/* A size of the structure (layers, hidden, tp...): 0 to 2^53, a double's integers. */
#define MAX_SIZE_VALUE (INT64_C(1) << 53)

/* A value of the structure: null (0) when unknown, how and why. */
bool value(reader &r, dom::object top, const char *key, struct orr_value *v)
{
	dom::object o;
	dom::element x;
	string_view why;

	if (!object(r, top, key, &o))
		return false;
	at k(r, key);
	if (!field(r, o, "value", &x) ||
	    (!x.is_null() && !integer(r, o, "value", 0, MAX_SIZE_VALUE, &v->value)) ||
	    !named(r, o, "how", orr_value_how_name, ORR_VALUE_INFERRED + 1, "how", &v->how) ||
	    !string(r, o, "why", false, &why))
		return false;
	copy(v->why, sizeof(v->why), why);
	return true;
}

/* A communicator and its role; name and desc when the trace gave them. */
bool communicator(reader &r, dom::object o, struct orr_comm_role *c)
{
	string_view name, desc, why;
	int64_t size;

	if ((o["name"].error() != NO_SUCH_FIELD && !string(r, o, "name", false, &name)) ||
	    (o["desc"].error() != NO_SUCH_FIELD && !string(r, o, "desc", false, &desc)) ||
	    !integer(r, o, "size", -1, INT32_MAX, &size) ||
	    !count(r, o, "collectives", &c->collectives) ||
	    !named(r, o, "role", orr_par_name, ORR_PAR_COUNT, "role", &c->role) ||
	    !named(r, o, "how", orr_value_how_name, ORR_VALUE_INFERRED + 1, "how", &c->how) ||
	    !string(r, o, "why", false, &why))
		return false;
	c->name = keep(r, name);
	c->desc = keep(r, desc);
	c->size = (int32_t)size;
	copy(c->why, sizeof(c->why), why);
	return true;
}

/* The phases of a step seen. */
bool phases(reader &r, dom::object o, struct orr_structure *st)
{
	dom::object p;

	if (!object(r, o, "phases", &p))
		return false;
	at k(r, "phases");
	return boolean(r, p, "forward", &st->forward) && boolean(r, p, "backward", &st->backward) &&
	       boolean(r, p, "optimizer", &st->optimizer) &&
	       boolean(r, p, "data_loading", &st->data_loading);
}

/* The communicators: at most ORR_MAX_COMM_ROLES. */
bool communicators(reader &r, dom::object o, struct orr_structure *st)
{
	dom::array a;

	if (!array(r, o, "communicators", &a))
		return false;
	if (a.size() > ORR_MAX_COMM_ROLES)
		return fail(r, ORR_EMALFORMED, "communicators", "%zu, more than %d", a.size(),
			    ORR_MAX_COMM_ROLES);
	st->ncomms = a.size();
	return each(r, a, "communicators", [&](dom::object e, size_t i) {
		return communicator(r, e, &st->comms[i]);
	});
}

/* "structure": the rank, its phases, its communicators, and every value. */
bool structure(reader &r, dom::object top)
{
	static const struct {
		const char *key;
		struct orr_value orr_structure::*v;
	} values[] = {
		{ "layers", &orr_structure::layers },
		{ "hidden", &orr_structure::hidden },
		{ "heads", &orr_structure::heads },
		{ "head_dim", &orr_structure::head_dim },
		{ "kv_groups", &orr_structure::kv_groups },
		{ "ffn", &orr_structure::ffn },
		{ "vocab", &orr_structure::vocab },
		{ "seq", &orr_structure::seq },
		{ "micro_batch", &orr_structure::micro_batch },
		{ "tokens", &orr_structure::tokens },
		{ "micro_batches", &orr_structure::micro_batches },
		{ "tp", &orr_structure::tp },
		{ "pp", &orr_structure::pp },
		{ "dp", &orr_structure::dp },
		{ "world", &orr_structure::world },
		{ "annotated_layers", &orr_structure::annotated_layers },
		{ "repeats", &orr_structure::repeats },
	};
	struct orr_structure *st = &r.c->st;
	dom::object o;
	int64_t rank;

	if (!object(r, top, "structure", &o))
		return false;
	at k(r, "structure");
	if (!integer(r, o, "rank", INT32_MIN, INT32_MAX, &rank) ||
	    !boolean(r, o, "gated_mlp", &st->gated_mlp) ||
	    !count(r, o, "repeat_kernels", &st->repeat_kernels) || !phases(r, o, st) ||
	    !communicators(r, o, st))
		return false;
	/* files older than fused attention's detection lack it: not fused */
	st->fused_attention = false;
	if (o["fused_attention"].error() != NO_SUCH_FIELD &&
	    !boolean(r, o, "fused_attention", &st->fused_attention))
		return false;
	st->rank = (int32_t)rank;
	for (const auto &v : values)
		if (!value(r, o, v.key, &(st->*v.v)))
			return false;
	return true;
}

/* "overlap": the slowdown null, and so 0, when no name was compared. */
bool overlap(reader &r, dom::object top)
{
	struct orr_overlap *ov = &r.c->overlap;
	dom::object o;

	if (!object(r, top, "overlap", &o))
		return false;
	at k(r, "overlap");
	if (!count(r, o, "kernels", &ov->kernels) || !count(r, o, "overlapped", &ov->overlapped) ||
	    !count(r, o, "names", &ov->names) ||
	    !count(r, o, "kernels_compared", &ov->kernels_compared) ||
	    !ranged(r, o, "slowdown", !ov->names, ratio_range, &ov->slowdown) ||
	    !ranged(r, o, "slowdown_min", !ov->names, ratio_range, &ov->slowdown_min) ||
	    !ranged(r, o, "slowdown_max", !ov->names, ratio_range, &ov->slowdown_max))
		return false;
	if (!ov->names) /* as orr_overlap_slowdown() leaves them */
		ov->slowdown = ov->slowdown_min = ov->slowdown_max = 0;
	return true;
}

/*
 * "launch", which older files lack: the launch threads' time per step, NAN unknown, and
 * the profiler's part of it, which files older still lack (NAN), and its stalls' part
 * (NAN where a file does not say: nothing removed).
 */
bool launch(reader &r, dom::object top)
{
	dom::object o;
	double stall;

	r.c->launch_step_ns = r.c->launch_profiler_ns = r.c->launch_stall_ns = NAN;
	if (top["launch"].error() == NO_SUCH_FIELD)
		return true;
	if (!object(r, top, "launch", &o))
		return false;
	at k(r, "launch");
	if (!ranged(r, o, "step_ns", true, step_range, &r.c->launch_step_ns))
		return false;
	if (o["stall_ns"].error() != NO_SUCH_FIELD) {
		if (!ranged(r, o, "stall_ns", true, step_range, &r.c->launch_stall_ns))
			return false;
		if (r.c->launch_stall_ns > r.c->launch_step_ns)
			return fail(r, ORR_EMALFORMED, "stall_ns", "%g is more than step_ns, %g",
				    r.c->launch_stall_ns, r.c->launch_step_ns);
	}
	if (o["profiler_ns"].error() == NO_SUCH_FIELD)
		return true;
	if (!ranged(r, o, "profiler_ns", true, step_range, &r.c->launch_profiler_ns))
		return false;
	stall = std::isnan(r.c->launch_stall_ns) ? 0 : r.c->launch_stall_ns;
	if (!(r.c->launch_profiler_ns + stall > r.c->launch_step_ns))
		return true;
	if (stall > 0)
		return fail(r, ORR_EMALFORMED, "profiler_ns",
			    "%g with stall_ns, %g, is more than step_ns, %g",
			    r.c->launch_profiler_ns, stall, r.c->launch_step_ns);
	return fail(r, ORR_EMALFORMED, "profiler_ns", "%g is more than step_ns, %g",
		    r.c->launch_profiler_ns, r.c->launch_step_ns);
}

/* The version first: a file of another version is refused before anything else. */
bool version(reader &r, dom::element root, dom::object *ret)
{
	dom::element v;
	int64_t x;

	if (root.get_object().get(*ret) != SUCCESS)
		return fail(r, ORR_EFORMAT, NULL, "not a costs file: expected an object, not %s",
			    type_name(root.type()));
	if ((*ret)["orrery_costs"].get(v) != SUCCESS)
		return fail(r, ORR_EFORMAT, "orrery_costs",
			    "missing: not a costs file (orrery fit -o writes them)");
	if (v.get_int64().get(x) != SUCCESS)
		return wrong_type(r, "orrery_costs", v, "an integer");
	if (x != ORR_COSTS_VERSION)
		return fail(r, ORR_EFORMAT, "orrery_costs",
			    "version %lld, this orrery reads version %d", (long long)x,
			    ORR_COSTS_VERSION);
	r.c->version = (int)x;
	return true;
}

/* The trace, the rank and its device. */
bool header(reader &r, dom::object top)
{
	string_view trace, device;
	dom::object d;
	int64_t rank;

	if (!string(r, top, "trace", false, &trace) ||
	    !integer(r, top, "rank", INT32_MIN, INT32_MAX, &rank) || !object(r, top, "device", &d))
		return false;
	r.c->trace = keep(r, trace);
	r.c->rank = (int32_t)rank;
	at k(r, "device");
	if (d["name"].error() != NO_SUCH_FIELD) {
		if (!string(r, d, "name", false, &device))
			return false;
		r.c->device = keep(r, device);
	}
	return d["spec"].error() == NO_SUCH_FIELD || gpu_spec(r, d, "spec", &r.c->gpu);
}

/*
 * A model's efficiencies are over the roofline of the GPU it names; orrery fit writes the
 * device's, and what checks that the costs fit the estimated GPU reads the device.  A
 * model of another GPU than the device's (an edited file) would be timed over that
 * GPU's roofline without a word, and one of no GPU (fits of absolute times) as if it
 * were the device's, so both are refused; so is a model of a GPU where the device names
 * none, which nothing checks against the estimated GPU.
 */
static bool one_gpu(reader &r)
{
	const struct orr_gpu_spec *dev = r.c->gpu;
	const char *key = NULL;
	const struct orr_gpu_spec *gpu = NULL;

	if (r.c->gemm_fitted && r.c->gemm.gpu != dev) {
		key = "gemm.spec";
		gpu = r.c->gemm.gpu;
	} else if (r.c->kern_fitted && r.c->kern.gpu != dev) {
		key = "kernels.spec";
		gpu = r.c->kern.gpu;
	}
	if (!key)
		return true;
	return fail(r, ORR_EMALFORMED, key,
		    "%s%s%s, but the device is %s: a costs file's efficiencies are over its "
		    "device's roofline",
		    gpu ? "'" : "", gpu ? gpu->id : "null (no GPU)", gpu ? "'" : "",
		    dev ? dev->id : "of no GPU the hardware table knows (device.spec)");
}

/* An array of one entry per name (a math, a class, a kind and link), by its keys. */
struct one_per {
	const char *object, *array; /* object NULL: the top's */
	const char *keys[3];        /* the names that tell entries apart, NULL-ended */
	const char *what;
};

static const one_per one_pers[] = {
	{ "gemm", "efficiency", { "math" }, "math" },
	{ "gemm", "efficiency_memory", { "math" }, "math" },
	{ "gemm", "tiles", { "math" }, "math" },
	{ "gemm", "pooled", { "dtype" }, "dtype" },
	{ "gemm", "classes", { "dtype", "family" }, "dtype and family" },
	{ "kernels", "classes", { "class" }, "class" },
	{ "kernels", "families", { "class", "dtype", "family" }, "class, dtype and family" },
	{ "kernels", "pooled", { "class" }, "class" },
	{ NULL, "collectives", { "kind", "link" }, "kind and link" },
};

/* Entry i's names joined by ", " ("" for one without them: its own reader says why). */
static std::string names_of(dom::element e, const char *const *keys)
{
	std::string s;
	dom::object o;

	if (e.get_object().get(o) != SUCCESS)
		return s;
	for (size_t k = 0; k < 3 && keys[k]; k++) {
		string_view v;

		if (o[keys[k]].get_string().get(v) != SUCCESS)
			return std::string();
		if (k)
			s += ", ";
		s.append(v.data(), v.size());
	}
	return s;
}

/* The array of p, sorted by names, checked for a name given twice. */
static bool once_each(reader &r, dom::object top, const one_per &p)
{
	std::vector<std::pair<std::string, size_t>> names;
	dom::object o = top;
	dom::array a;
	size_t i = 0, second = SIZE_MAX, first = 0;

	if ((p.object && top[p.object].get_object().get(o) != SUCCESS) ||
	    o[p.array].get_array().get(a) != SUCCESS)
		return true; /* absent or of another type: its reader says so */
	for (dom::element e : a) {
		std::string n = names_of(e, p.keys);

		if (!n.empty())
			names.emplace_back(std::move(n), i);
		i++;
	}
	std::stable_sort(names.begin(), names.end(),
			 [](const std::pair<std::string, size_t> &x,
			    const std::pair<std::string, size_t> &y) {
				 return x.first < y.first;
			 });
	for (size_t k = 1; k < names.size(); k++)
		if (names[k].first == names[k - 1].first && names[k].second < second)
			second = names[k].second, first = k;
	if (second == SIZE_MAX)
		return true;
	at ko(r, p.object ? p.object : "");
	at ka(r, p.array);
	at ke(r, second);
	return fail(r, ORR_EMALFORMED, NULL,
		    "a second entry for %.64s (one per %s: which one counts would be a guess)",
		    names[first].first.c_str(), p.what);
}

/*
 * Arrays of one entry per math, class or collective: a file that gives one twice means
 * two things, as a duplicate key does, and is refused.
 */
bool unique_entries(reader &r, dom::object top)
{
	for (const one_per &p : one_pers)
		if (!once_each(r, top, p))
			return false;
	return true;
}

/* The whole file, in the order the writer writes it. */
bool costs(reader &r, dom::element root)
{
	dom::object top;

	return version(r, root, &top) && unique_keys(r, root) && unique_entries(r, top) &&
	       header(r, top) && structure(r, top) && overlap(r, top) && launch(r, top) &&
	       gemm(r, top) && kernels(r, top) && one_gpu(r) && collectives(r, top);
}

/* ---- the text ---- */

/*
 * simdjson's DOM parser (its default max_depth, 1024) refuses a text whose arrays and
 * objects holding a value nest 1024 deep: at most 1023 levels.
 */
#define COSTS_MAX_DEPTH 1023

/*
 * Why simdjson refused buf[0..len): where the text stops being JSON (orr_json_check()),
 * as its byte offset, its line and column, and what was expected there.
 */
int not_json(reader &r, error_code e, const char *buf, size_t len)
{
	struct orr_json_error je;
	size_t line, col;
	int err;

	if (e == EMPTY)
		return orr_diag_set(r.diag, ORR_EEMPTY, r.name, -1, -1, "no JSON value");
	if (e == MEMALLOC)
		return orr_diag_set(r.diag, -ENOMEM, r.name, -1, -1,
				    "out of memory parsing its %zu bytes", len);
	err = orr_json_check(buf, len, COSTS_MAX_DEPTH, &je);
	if (!err) /* simdjson refused what the check takes: say what simdjson said */
		return orr_diag_set(r.diag, ORR_EMALFORMED, r.name, -1, -1, "not JSON: %s",
				    error_message(e));
	orr_json_where(buf, je.offset, &line, &col);
	if (err == ORR_ETOOBIG) /* JSON, but deeper than simdjson reads */
		return orr_diag_set(r.diag, err, r.name, (int64_t)je.offset, -1,
				    "arrays and objects nested more than %d deep, line %zu column "
				    "%zu",
				    COSTS_MAX_DEPTH, line, col);
	if (err == ORR_ETRUNCATED)
		return orr_diag_set(r.diag, err, r.name, (int64_t)je.offset, -1,
				    "the JSON ends early (a file cut short?), line %zu column %zu: "
				    "expected %s",
				    line, col, je.expected);
	return orr_diag_set(r.diag, err, r.name, (int64_t)je.offset, -1,
			    "not JSON, line %zu column %zu: expected %s", line, col, je.expected);
}

/* Parses buf[0..len), followed by SIMDJSON_PADDING readable bytes, into *c. */
int parse(const char *name, const char *buf, size_t len, struct orr_costs *c, struct orr_diag *diag)
{
	reader r = { name, diag, c, 0, "", 0 };
	dom::parser parser;
	dom::element root;
	error_code e;
	size_t bom;

	if (len > ORR_COSTS_MAX_BYTES)
		return orr_diag_set(diag, ORR_ETOOBIG, name, -1, -1,
				    "%zu bytes, more than the %u MiB a costs file may have", len,
				    ORR_COSTS_MAX_BYTES >> 20);
	/* Made first: past the parse, memory refused is an error, not the process's end. */
	c->strings = orr_strtab_new();
	/* A UTF-8 byte order mark, as some editors write, as the trace importers allow. */
	bom = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	e = parser.parse((const uint8_t *)buf + bom, len - bom, false).get(root);
	if (e != SUCCESS)
		return not_json(r, e, buf, len);
	if (costs(r, root))
		return 0;
	assert(r.err < 0); /* every failure goes through fail() or field() */
	return r.err;
}

/* The regular file at path, whole, with SIMDJSON_PADDING bytes after it (free()). */
int slurp(const char *path, char **ret, size_t *ret_len, struct orr_diag *diag)
{
	return orr_file_read(path, ORR_COSTS_MAX_BYTES, "a costs file", SIMDJSON_PADDING, ret,
			     ret_len, diag);
}

/* Parses, and frees what it made when that fails (memory refused among it: -ENOMEM). */
int read_costs(const char *name, const char *buf, size_t len, struct orr_costs *ret,
	       struct orr_diag *diag)
{
	struct orr_costs c;
	int r;

	memset(&c, 0, sizeof(c));
	if (!len)
		return orr_diag_set(diag, ORR_EEMPTY, name, -1, -1, "the file is empty");
	try {
		r = parse(name, buf, len, &c, diag);
	} catch (const std::bad_alloc &) {
		r = orr_diag_set(diag, -ENOMEM, name, -1, -1, "out of memory reading its %zu bytes",
				 len);
	}
	if (r) {
		orr_costs_release(&c);
		return r;
	}
	orr_diag_clear(diag);
	*ret = c;
	return 0;
}

} /* namespace */

/* A copy of buf with simdjson's padding after it, parsed. */
extern "C" int orr_costs_read_buffer(const char *name, const char *buf, size_t len,
				     struct orr_costs *ret, struct orr_diag *reterr_diag)
{
	char *copy = NULL;
	int r;

	if (len <= ORR_COSTS_MAX_BYTES) {
		copy = (char *)orr_xmalloc(len + SIMDJSON_PADDING);
		if (len)
			memcpy(copy, buf, len);
		memset(copy + len, 0, SIMDJSON_PADDING);
	}
	r = read_costs(name, copy, len, ret, reterr_diag);
	free(copy);
	return r;
}

/* The file read whole (slurp()), then parsed. */
extern "C" int orr_costs_read(const char *path, struct orr_costs *ret, struct orr_diag *reterr_diag)
{
	char *buf = NULL;
	size_t len = 0;
	int r = slurp(path, &buf, &len, reterr_diag);

	if (!r) {
		r = read_costs(path, buf, len, ret, reterr_diag);
		free(buf);
	}
	return r;
}

/* Everything read, freed; c left empty. */
extern "C" void orr_costs_release(struct orr_costs *c)
{
	if (!c)
		return;
	orr_gemm_model_release(&c->gemm);
	orr_kern_model_release(&c->kern);
	free(c->coll);
	orr_strtab_free(c->strings);
	memset(c, 0, sizeof(*c));
}
