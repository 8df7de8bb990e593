/* SPDX-License-Identifier: MIT */
/*
 * Kineto (PyTorch profiler) Chrome-trace JSON -> trace model: simdjson's On-Demand API
 * behind orr__kineto_parse().  This file reads the events; kineto-window.cpp their
 * windows, the top level and the entry points; kineto-args.cpp an event's args and the
 * file's metadata (kineto-parser.h).
 *
 * Memory: simdjson indexes a whole document at once (4 bytes per structural
 * character, about 0.7x the file for Kineto traces).  To stay near 1x the file we
 * parse "traceEvents" in windows of about 1 MiB: each window is a run of whole events,
 * bracketed in place for a moment ('[' before, ']' after) and parsed as one array.  A
 * window's end is first guessed by searching back for "}, {"; the parse itself proves
 * the guess (a cut inside a string or an object cannot parse).  When it fails, the
 * window is rolled back and cut exactly by the scanner (scan.h), which also gives
 * malformed input its byte offset.  Everything outside traceEvents is small.
 *
 * A plain file is parsed while it is read (orr__source, traces/import.c): the windows
 * ask for about four windows' bytes at a time and let go of those before them, so the
 * file is never whole in memory.  Outside traceEvents, a value that runs past what is
 * loaded throws need_more, and top_level() loads the rest of the file and reads that
 * value again; a file of no trace format (an execution trace) is thus read whole.
 * Positions are the file's: buf_ is biased by what was let go of.
 *
 * Depth (ORR_MAX_DEPTH): every top-level value but traceEvents, and every event, nests
 * at most that many levels of arrays and objects, itself the first.  The scanner checks
 * what it walks; in a parsed window, simdjson reads the values we ask for and skips the
 * others at any depth, so each array or object read is checked against its level here
 * (nest()), and each one skipped is walked by the scanner first (unread()).
 *
 * A file of several ranks that orrery wrote is read as one rank with what it says about
 * them (its "orreryRanks" into rank builds of their own, process_name's rank, pid and
 * device), which traces/chrome/chrome-split.c then splits.
 */
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "kineto-parser.h"

namespace orr__kineto {

/* What a simdjson type error says about the value, for messages. */
const char *type_name(ondemand::json_type t)
{
	switch (t) {
	case ondemand::json_type::array:
		return "an array";
	case ondemand::json_type::object:
		return "an object";
	case ondemand::json_type::number:
		return "a number";
	case ondemand::json_type::string:
		return "a string";
	case ondemand::json_type::boolean:
		return "a boolean";
	default:
		return "null";
	}
}

/* What a key of an event or its args holds, where it is not a number. */
const char *expected_type(string_view key)
{
	static const char *const strings[] = {
		"ph",
		"cat",
		"cuda_sync_kind",
		"dtype",
		"Collective name",
		"name",
		"backend",
		"pg_desc",
		"Process Group Description",
	};

	for (const char *k : strings)
		if (key == k)
			return "a string";
	if (key == "args")
		return "an object";
	if (key == "Input Dims" || key == "Input type")
		return "an array";
	if (key == "Process Group Ranks")
		return "an array or a string";
	return "another type";
}

bool is_value_error(error_code e)
{
	return e == INCORRECT_TYPE || e == NUMBER_ERROR || e == NUMBER_OUT_OF_RANGE ||
	       e == STRING_ERROR || e == UTF8_ERROR || e == T_ATOM_ERROR || e == F_ATOM_ERROR ||
	       e == N_ATOM_ERROR;
}

int64_t get_int(ondemand::value v, const char *what)
{
	int64_t x;

	if (!try_int(v, &x))
		throw bad_event{ what };
	return x;
}

bool try_int(ondemand::value v, int64_t *ret)
{
	int64_t x = 0;
	string_view tok;

	/* Plain non-negative integers, by far the most common, without the general parser. */
	tok = v.raw_json_token();
	if (!tok.empty() && tok.size() < 19 && tok[0] >= '0' && tok[0] <= '9') {
		size_t i = 0;

		for (; i < tok.size() && tok[i] >= '0' && tok[i] <= '9'; i++)
			x = x * 10 + (tok[i] - '0');
		while (i < tok.size() &&
		       (tok[i] == ' ' || tok[i] == '\n' || tok[i] == '\r' || tok[i] == '\t'))
			i++;
		if (i == tok.size()) {
			*ret = x;
			return true;
		}
	}
	if (v.get_int64().get(x) != SUCCESS) {
		double d;

		/* Some producers write integral ids as 12.0 */
		if (v.get_double().get(d) != SUCCESS || !(d > -9.2e18 && d < 9.2e18) ||
		    d != (double)(int64_t)d)
			return false;
		x = (int64_t)d;
	}
	*ret = x;
	return true;
}

int64_t get_time(ondemand::value v, const char *what)
{
	int64_t ns;
	string_view tok;

	if (v.type() != ondemand::json_type::number)
		throw bad_event{ what };
	tok = v.raw_json_token();
	if (!orr__scan_us_to_ns(tok.data(), tok.size(), &ns))
		throw bad_event{ what };
	return ns;
}

loose_id get_loose_id(ondemand::value v)
{
	loose_id id;
	string_view s;

	id.present = true;
	switch (v.type()) {
	case ondemand::json_type::number:
		id.value = get_int(v, "expected an integer 'pid' or 'tid'");
		id.numeric = true;
		break;
	case ondemand::json_type::string: {
		size_t end;

		s = v.get_string();
		end = s.size();
		while (end && s[end - 1] >= '0' && s[end - 1] <= '9')
			end--;
		if (end < s.size() && s.size() - end < 18) {
			id.value = 0;
			for (size_t i = end; i < s.size(); i++)
				id.value = id.value * 10 + (s[i] - '0');
			id.numeric = true;
		}
		break;
	}
	default:
		throw bad_event{ "expected a number or string 'pid'/'tid'" };
	}
	return id;
}

ph parse_ph(string_view s)
{
	if (s == "C")
		return ph::counter;
	if (s == "X")
		return ph::complete;
	if (s == "i" || s == "I")
		return ph::instant;
	if (s == "s")
		return ph::flow_start;
	if (s == "f" || s == "t")
		return ph::flow_end;
	if (s == "M")
		return ph::metadata;
	return ph::other;
}

int kind_of(string_view cat)
{
	return orr__kineto_kind(cat.data(), cat.size());
}

bool marker_or_unknown(int kind)
{
	return kind == ORR_EVENT_MARKER || kind == ORR_EVENT_KIND_COUNT;
}

bool on_gpu(int kind)
{
	return kind == ORR_EVENT_KERNEL || kind == ORR_EVENT_MEMCPY || kind == ORR_EVENT_MEMSET ||
	       kind == ORR_EVENT_SYNC || kind == ORR_EVENT_CUDA_EVENT;
}

enum orr_sync_kind sync_kind_of(string_view s)
{
	return orr__kineto_sync_kind(s.data(), s.size());
}

/*
 * Keys as written, without unescaping: none of the keys we look for has an escape,
 * and a key with one simply matches nothing.  The key ends at the last quote before
 * its value, which simdjson's index gives: only the ':' and blanks lie between (a
 * search forward from the key's start took 30 instructions a key, and memchr 14 % of
 * an import).
 */
string_view kineto_parser::raw_key(ondemand::field &f) const
{
	const char *p = f.key().raw(), *q = f.value().raw_json_token().data();

	while (q > p && *--q != '"')
		;
	return q > p || (q == p && *q == '"') ? string_view(p, (size_t)(q - p)) : string_view();
}

/* Names repeat: classify each distinct runtime/driver name once. */
uint8_t kineto_parser::call_class(uint32_t name)
{
	if (name >= call_cache_.size())
		call_cache_.resize(name + 1024, 0);
	if (!call_cache_[name])
		call_cache_[name] =
			(uint8_t)(orr_call_classify(orr_strtab_get(t_->strs, name)) + 1);
	return call_cache_[name] - 1;
}

uint32_t kineto_parser::intern(string_view s)
{
	if (s.size() > limits_->max[ORR__LIMIT_STRING_BYTES])
		throw limit_hit{ ORR__LIMIT_STRING_BYTES };
	return orr_strtab_intern(t_->strs, s.data(), s.size());
}

int kineto_parser::fail(int err, int64_t offset, int64_t event, const char *what)
{
	if (offset > (int64_t)len_)
		offset = (int64_t)len_;
	return orr_diag_set(diag_, err, name_, offset, event, "%s", what);
}

int kineto_parser::fail_scan(const struct orr__scan_error &e)
{
	if (e.err == ORR_ETOOBIG)
		return fail_limit(ORR__LIMIT_DEPTH, (int64_t)e.offset, -1);
	return fail(e.err, (int64_t)e.offset, -1, e.what);
}

int kineto_parser::fail_limit(enum orr__limit which, int64_t offset, int64_t event)
{
	if (offset > (int64_t)len_)
		offset = (int64_t)len_;
	return orr__limit_fail(limits_, which, diag_, name_, offset, event);
}

/* A value of the wrong type (or a bad number or string) under key: say which and what. */
void kineto_parser::bad_value(const char *where, string_view key, ondemand::value v, error_code err)
{
	ondemand::json_type t;
	const char *found = "";

	if (err == INCORRECT_TYPE && v.type().get(t) == SUCCESS)
		found = type_name(t);
	if (err == INCORRECT_TYPE)
		snprintf(msg_, sizeof(msg_), "expected %s for %s'%.*s'%s%s", expected_type(key),
			 where, (int)(key.size() > 64 ? 64 : key.size()), key.data(),
			 *found ? ", found " : "", found);
	else
		snprintf(msg_, sizeof(msg_), "%s'%.*s': %s", where,
			 (int)(key.size() > 64 ? 64 : key.size()), key.data(), error_message(err));
	throw bad_event{ msg_ };
}

/* ---- one event ---- */

/* An array or object read at `level` of its event (the event is level 1). */
void kineto_parser::nest(size_t level) const
{
	if (level > max_depth())
		throw limit_hit{ ORR__LIMIT_DEPTH };
}

/*
 * The rank's dimensions, strides, inputs and members within ORR_MAX_VALUES (at most
 * 2^32 - 2): their indices are 32 bits.  Checked once an event's or the metadata's
 * values are in, before any index into them is used.
 */
void kineto_parser::values_fit() const
{
	if (!orr__values_fit(limits_, rb_->dims.n, rb_->strides.n, rb_->inputs.n, rb_->members.n))
		throw limit_hit{ ORR__LIMIT_VALUES };
}

/* Value v at `level` of its event is not read: simdjson would skip it at any depth. */
void kineto_parser::unread(ondemand::value v, size_t level)
{
	ondemand::json_type t;
	const char *at;
	struct orr__scan_error se;
	size_t end;

	if (v.type().get(t) != SUCCESS ||
	    (t != ondemand::json_type::array && t != ondemand::json_type::object) ||
	    v.current_location().get(at) != SUCCESS)
		return;
	nest(level);
	/* Most are arrays of numbers ("grid": [16, 1, 1]), one level: nothing to walk. */
	for (end = (size_t)(at - buf_) + 1; t == ondemand::json_type::array && end < hi_; end++)
		if (buf_[end] == ']')
			return;
		else if (buf_[end] == '[' || buf_[end] == '{' || buf_[end] == '"')
			break;
	if (orr__scan_value(buf_, hi_, (size_t)(at - buf_), max_depth() - level + 1, &end, &se)) {
		if (se.err == ORR_ETOOBIG)
			throw limit_hit{ ORR__LIMIT_DEPTH };
		throw bad_event{ se.what };
	}
}

void kineto_parser::event(ondemand::object obj)
{
	raw_event e;

	for (auto member : obj) {
		ondemand::field &field = field_of(member);
		string_view key = raw_key(field);
		ondemand::value v = field.value();

		field_at_ = key.data() - 1 - buf_;
		try {
			event_field(key, v, e);
		} catch (const simdjson_error &err) {
			if (!is_value_error(err.error()))
				throw;
			bad_value("", key, v, err.error());
		}
	}
	field_at_ = -1;
	store(e);
}

void kineto_parser::event_field(string_view key, ondemand::value v, raw_event &e)
{
	{
		if (key == "ph")
			e.ph = v.get_string();
		else if (key == "cat")
			e.cat = v.get_string();
		else if (key == "name" && v.type() == ondemand::json_type::string)
			e.name = v.get_string().value();
		else if (key == "name")
			unread(v, 2), e.name = v.raw_json_token();
		else if (key == "pid")
			e.pid = get_loose_id(v);
		else if (key == "tid")
			e.tid = get_loose_id(v);
		else if (key == "ts")
			e.ts = get_time(v, "expected a number for 'ts'"), e.has_ts = true;
		else if (key == "dur")
			event_dur(v, e);
		else if (key == "id")
			e.flow_id = get_loose_id(v).value;
		else if (key == "args")
			event_args(v, e);
		else
			unread(v, 2);
	}
}

/*
 * "dur" that is a number past what int64_t holds in ns fails only an event that is kept:
 * Kineto before 2024-07 (kineto 18606c98) wrote a child profiler's "Trace" span with an
 * unsigned end - start that wrapped ("dur": 16739893950863769.6), and that span is skipped.
 */
void kineto_parser::event_dur(ondemand::value v, raw_event &e)
{
	int64_t ns;
	string_view tok;

	if (v.type() != ondemand::json_type::number)
		throw bad_event{ "expected a number for 'dur'" };
	tok = v.raw_json_token();
	if (orr__scan_us_to_ns(tok.data(), tok.size(), &ns))
		e.dur = ns, e.dur_range = false;
	else
		e.dur = -1, e.dur_range = true;
}

/*
 * Kineto writes "ph" and "cat" before "args": then args are read in place.  Otherwise
 * their text is kept (its end found by the scanner) and read once the kind is known.
 */
void kineto_parser::event_args(ondemand::value v, raw_event &e)
{
	ph p = e.ph.empty() ? ph::none : parse_ph(e.ph);

	if (p == ph::metadata || p == ph::counter || (p != ph::none && !e.cat.empty())) {
		ondemand::object obj;
		int kind = p == ph::metadata  ? ORR_EVENT_KIND_COUNT
			   : p == ph::counter ? KIND_COUNTER
					      : kind_of(e.cat);

		if (v.get_object().get(obj) != SUCCESS)
			throw bad_event{ "expected an object for 'args'" };
		nest(2);
		for (auto member : obj) {
			ondemand::field &field = field_of(member);

			arg_field(raw_key(field), field.value(), kind, e.a);
		}
		e.args_done = true;
		return;
	}
	const char *start = v.current_location().value();
	struct orr__scan_error se;
	size_t end;

	/* args is the event's second level. */
	if (orr__scan_value(buf_, hi_, (size_t)(start - buf_), max_depth() - 1, &end, &se)) {
		if (se.err == ORR_ETOOBIG)
			throw limit_hit{ ORR__LIMIT_DEPTH };
		throw bad_event{ se.what };
	}
	e.args = string_view(start, (size_t)(buf_ + end - start));
}

/* A thread_name or process_name record: what it names, for the import to resolve. */
void kineto_parser::store_meta(raw_event &e)
{
	raw_args &a = e.a;

	if (e.name != "thread_name" && e.name != "process_name")
		return;
	if (!e.args_done)
		args(e.args, ORR_EVENT_KIND_COUNT, a);
	auto *m = (struct orr__meta *)orr__vec_push(&rb_->metas);
	m->pid = e.pid.value;
	m->tid = e.tid.value;
	m->name = intern(a.meta_name);
	m->thread = e.name == "thread_name";
	m->rank = a.meta_rank;
	m->gpu = a.has_device;
	m->has_id = a.has_device || a.has_meta_pid;
	m->id = a.has_device ? a.device : a.meta_pid;
}

/* A launch's flow event ("ac2g"; PyTorch 1.8-1.10 wrote them as "async" "launch"). */
bool kineto_parser::store_flow(raw_event &e, ph p)
{
	if ((p != ph::flow_start && p != ph::flow_end) ||
	    !(e.cat == "ac2g" || e.cat == "async_cpu_to_gpu" ||
	      (e.cat == "async" && e.name == "launch")))
		return false;
	if (!e.has_ts || !e.pid.numeric || !e.tid.numeric || e.flow_id < 0)
		throw bad_event{ "flow event without numeric 'ts', 'pid', 'tid' and 'id'" };
	auto *f = (struct orr__flow *)orr__vec_push(&rb_->flows);
	f->pid = e.pid.value;
	f->tid = e.tid.value;
	f->ts_ns = e.ts;
	f->id = e.flow_id;
	return true;
}

/* An event of no kind orrery reads: counted by its category (or its ph). */
void kineto_parser::count_skipped(const raw_event &e)
{
	char cat[96];
	int n = snprintf(cat, sizeof(cat), "%.*s%s%.*s",
			 (int)(e.cat.size() > 64 ? 64 : e.cat.size()), e.cat.data(),
			 e.cat.empty() ? "ph:" : "",
			 e.cat.empty() ? (int)(e.ph.size() > 8 ? 8 : e.ph.size()) : 0, e.ph.data());

	orr__count_skipped(rb_, orr_strtab_intern(t_->strs, cat, (size_t)n));
}

/* The event's place: a GPU task's stream on its device, else its thread. */
uint32_t kineto_parser::event_place(const raw_event &e, int kind)
{
	const raw_args &a = e.a;
	uint32_t place;

	if (on_gpu(kind)) {
		int64_t device = a.device >= 0 ? a.device : e.pid.value;
		int64_t stream = a.stream != -1 || !e.tid.numeric ? a.stream : e.tid.value;

		if (device < INT32_MIN || device > INT32_MAX)
			throw bad_event{ "device id out of range" };
		rb_->gpu_device_arg |= a.device >= 0;
		place = orr__place(rb_, ORR_PLACE_STREAM, device, stream, (int32_t)device);
	} else {
		if (!e.pid.numeric || !e.tid.numeric)
			throw bad_event{ "expected numeric 'pid' and 'tid'" };
		place = orr__place(rb_, ORR_PLACE_THREAD, e.pid.value, e.tid.value, -1);
	}
	if (rb_->places.n > limits_->max[ORR__LIMIT_PLACES])
		throw limit_hit{ ORR__LIMIT_PLACES };
	return place;
}

/*
 * An op's input's strides, kept where they have the shape of its dims: a list's written
 * as a list, a tensor's as a tensor (a tensor's [[1]] flattens to as many numbers as two
 * dims), then one per dimension (orr__input_fit_strides()).
 */
void kineto_parser::fit_strides(struct orr_input *in)
{
	bool list_strides = in->is_list & STRIDES_LIST;

	in->is_list &= (uint8_t)~STRIDES_LIST;
	if (list_strides != (in->is_list != 0))
		in->nstrides = 0;
	orr__input_fit_strides(rb_, in);
}

/* What the event's kind keeps of its args (an op's inputs, a copy's bytes ...), in ev. */
void kineto_parser::event_kind_args(const raw_event &e, struct orr_event &ev)
{
	const raw_args &a = e.a;
	int kind = ev.kind;

	if (kind == ORR_EVENT_RUNTIME || kind == ORR_EVENT_DRIVER) {
		ev.sub = call_class(ev.name);
	} else if (kind == ORR_EVENT_OP && a.ninputs + (a.sequence >= 0) > 0) {
		auto *op = (struct orr_op_args *)orr__vec_push(&rb_->ops);
		*op = { a.first_input, a.ninputs, a.sequence };
		for (uint32_t i = 0; i < a.ninputs; i++)
			fit_strides(ORR__AT(rb_->inputs, struct orr_input, a.first_input + i));
		ev.args = (uint32_t)(rb_->ops.n - 1);
	} else if (kind == ORR_EVENT_KERNEL && a.has_launch) {
		*(struct orr_kernel_args *)orr__vec_push(&rb_->kernels) = a.launch;
		ev.args = (uint32_t)(rb_->kernels.n - 1);
	} else if (kind == ORR_EVENT_MEMCPY || kind == ORR_EVENT_MEMSET) {
		auto *c = (struct orr_copy_args *)orr__vec_push(&rb_->copies);
		c->bytes = a.bytes;
		ev.args = (uint32_t)(rb_->copies.n - 1);
	} else if (kind == ORR_EVENT_SYNC || kind == ORR_EVENT_CUDA_EVENT) {
		auto *s = (struct orr_sync_args *)orr__vec_push(&rb_->syncs);
		*s = { a.stream, a.wait_on_stream, a.record_corr, a.event_id };
		ev.args = (uint32_t)(rb_->syncs.n - 1);
		/* Kineto writes the kind in args and as the name; older writers only the name. */
		ev.sub = (uint8_t)(a.sync != ORR_SYNC_UNKNOWN ? a.sync : sync_kind_of(e.name));
	}
	if (a.has_coll) {
		auto *c = (struct orr_collective *)orr__vec_push(&rb_->colls);
		*c = a.coll;
		if (!c->nmembers)
			strided_members(a, c);
		ev.coll = (uint32_t)(rb_->colls.n - 1);
	}
}

void kineto_parser::store(raw_event &e)
{
	ph p = parse_ph(e.ph);
	int kind = kind_of(e.cat);
	raw_args &a = e.a;

	/* PyTorch 1.8-1.10 wrote the step marker as an op; it is the step's annotation. */
	if (kind == ORR_EVENT_OP && e.name.substr(0, 13) == "ProfilerStep#")
		kind = ORR_EVENT_ANNOTATION;

	if (e.ph.empty())
		throw bad_event{ "event without 'ph'" };
	if (p == ph::counter) {
		counter(e);
		return;
	}
	if (p == ph::metadata) {
		store_meta(e);
		return;
	}
	if (store_flow(e, p))
		return;
	if (p == ph::instant && e.pid.numeric && e.tid.numeric)
		kind = ORR_EVENT_MARKER;
	else if (p != ph::complete || kind == ORR_EVENT_KIND_COUNT) {
		count_skipped(e);
		return;
	}
	if (!e.has_ts)
		throw bad_event{ "event without 'ts'" };
	if (kind != ORR_EVENT_MARKER && e.dur_range)
		throw bad_event{ "'dur' out of range" };
	if (kind != ORR_EVENT_MARKER && e.dur < 0)
		throw bad_event{ "complete event ('ph' X) without a non-negative 'dur'" };
	int64_t end;
	if (__builtin_add_overflow(e.ts, e.dur < 0 ? 0 : e.dur, &end))
		throw bad_event{ "'ts' + 'dur' out of range" };
	if (!e.args_done)
		args(e.args, kind, a);

	struct orr_event ev = {};
	ev.start_ns = e.ts;
	ev.dur_ns = kind == ORR_EVENT_MARKER ? 0 : e.dur;
	ev.correlation = a.correlation;
	ev.external_id = a.external_id;
	ev.name = intern(e.name);
	ev.kind = (uint8_t)kind;
	ev.args = ORR_NONE;
	ev.coll = ORR_NONE;
	ev.place = event_place(e, kind);
	if (kind == ORR_EVENT_MARKER && e.name == "[memory]")
		memory_totals(a, e.ts, ev.place);
	if (rb_->events.n >= limits_->max[ORR__LIMIT_EVENTS])
		throw limit_hit{ ORR__LIMIT_EVENTS };
	values_fit();
	if (kind == ORR_EVENT_OP) {
		rb_->pub.ops_with_stack += a.call_stack;
		rb_->pub.ops_with_flops += a.flops;
	}
	event_kind_args(e, ev);
	*(struct orr_event *)orr__vec_push(&rb_->events) = ev;
}

} /* namespace orr__kineto */
