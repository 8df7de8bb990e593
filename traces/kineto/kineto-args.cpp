/* SPDX-License-Identifier: MIT */
/*
 * Kineto JSON: what an event's "args" say (ids, sizes, inputs' shapes and types, the
 * allocator's totals, counters); a collective's and the file's metadata are in
 * kineto-meta.cpp.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kineto-parser.h"

namespace orr__kineto {

/* ---- args ---- */

/*
 * An integer in a metadata record's args (a process's rank, pid): other writers' keys
 * of the same name, of any type, are not ours and are ignored (but for their depth).
 */
bool kineto_parser::meta_int(ondemand::value v, int64_t *ret)
{
	int64_t x;

	unread(v, 3);
	if (v.type() != ondemand::json_type::number || v.get_int64().get(x) != SUCCESS)
		return false;
	*ret = x;
	return true;
}

void kineto_parser::args(string_view raw, int kind, raw_args &a)
{
	ondemand::document doc;

	if (raw.empty())
		return;
	/* raw lies inside buf_, whose padding follows what is loaded. */
	doc = args_parser_.iterate(raw.data(), raw.size(),
				   (size_t)(buf_ + hi_ + ORR__JSON_PADDING - raw.data()));
	ondemand::object obj;
	if (doc.get_object().get(obj) != SUCCESS)
		throw bad_event{ "expected an object for 'args'" };
	for (auto member : obj) {
		ondemand::field &field = field_of(member);

		arg_field(raw_key(field), field.value(), kind, a);
	}
}

void kineto_parser::arg_field(string_view key, ondemand::value v, int kind, raw_args &a)
{
	try {
		arg(key, v, kind, a);
	} catch (const simdjson_error &err) {
		if (!is_value_error(err.error()))
			throw;
		bad_value("args ", key, v, err.error());
	}
}

/* Parses s whole as a decimal or 0x-hexadecimal integer (blanks around allowed). */
static bool parse_int_text(string_view s, int64_t *ret, bool *ret_hex)
{
	size_t i = 0, n = s.size();
	bool neg = false;
	uint64_t x = 0;
	int base = 10, digits = 0;

	while (i < n && s[i] == ' ')
		i++;
	while (n > i && s[n - 1] == ' ')
		n--;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		base = 16, i += 2;
	for (; i < n; i++, digits++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'                 ? c - '0'
			: base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10
			: base == 16 && c >= 'A' && c <= 'F' ? c - 'A' + 10
							     : -1;

		if (d < 0 || x > (UINT64_C(1) << 62) / (uint64_t)base)
			return false;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (!digits)
		return false;
	*ret = neg ? -(int64_t)x : (int64_t)x;
	*ret_hex = base == 16;
	return true;
}

/*
 * An integer of args: a number as itself; a decimal or hexadecimal string as the
 * integer it spells (ROCm's "stream": "0x0"), counted; anything else ignored for the
 * event, counted (docs/inputs.md).  False when ignored.
 */
bool kineto_parser::arg_int(ondemand::value v, string_view key, int64_t *ret)
{
	ondemand::json_type t;
	string_view s;
	bool hex;

	if (try_int(v, ret))
		return true;
	if (v.type().get(t) != SUCCESS)
		throw bad_event{ "malformed value" };
	if (t == ondemand::json_type::string && v.get_string().get(s) == SUCCESS &&
	    parse_int_text(s, ret, &hex)) {
		orr__count_coerced(rb_, intern(key), hex ? ORR_COERCED_HEX : ORR_COERCED_STRING);
		return true;
	}
	unread(v, 3);
	orr__count_coerced(rb_, intern(key), ORR_COERCION_IGNORED);
	return false;
}

/* *ret = the integer of args value v, unchanged when it is ignored. */
void kineto_parser::set_int(ondemand::value v, string_view key, int64_t *ret)
{
	int64_t x;

	if (arg_int(v, key, &x))
		*ret = x;
}

/* The same for a rank or a group size: one out of int32_t's range is ignored. */
void kineto_parser::set_int32(ondemand::value v, string_view key, int32_t *ret)
{
	int64_t x;

	if (!arg_int(v, key, &x))
		return;
	if (x < INT32_MIN || x > INT32_MAX)
		orr__count_coerced(rb_, intern(key), ORR_COERCION_IGNORED);
	else
		*ret = (int32_t)x;
}

/* A counter event's series: every numeric arg (a string or null one is not a value). */
static void counter_arg(string_view key, ondemand::value v, raw_args &a)
{
	double x;

	if (a.nseries == MAX_SERIES || v.type() != ondemand::json_type::number ||
	    v.get_double().get(x) != SUCCESS || !std::isfinite(x))
		return;
	a.series[a.nseries++] = { key.data(), key.size(), x };
}

/* The ids and sizes any event may carry (its op, its launch, its stream): true if key is one. */
bool kineto_parser::id_arg(string_view key, ondemand::value v, raw_args &a)
{
	if (key == "External id" || key == "external id") /* the latter: PyTorch 1.8-1.10 */
		set_int(v, key, &a.external_id);
	else if (key == "correlation")
		set_int(v, key, &a.correlation);
	else if (key == "stream")
		set_int(v, key, &a.stream);
	else if (key == "device")
		a.has_device |= arg_int(v, key, &a.device);
	else if (key == "Sequence number")
		set_int(v, key, &a.sequence);
	else if (key == "bytes")
		set_int(v, key, &a.bytes);
	else if (key == "wait_on_stream")
		set_int(v, key, &a.wait_on_stream);
	else if (key == "wait_on_cuda_event_record_corr_id")
		set_int(v, key, &a.record_corr);
	else if (key == "wait_on_cuda_event_id" || key == "event_id")
		set_int(v, key, &a.event_id);
	else if (key == "cuda_sync_kind")
		a.sync = sync_kind_of(v.get_string());
	else
		return false;
	return true;
}

/* A metadata record's (process_name of a file of several ranks): true if key is one. */
bool kineto_parser::meta_arg(string_view key, ondemand::value v, raw_args &a)
{
	if (key == "name")
		a.meta_name = v.get_string();
	else if (key == "rank")
		meta_int(v, &a.meta_rank);
	else if (key == "pid")
		a.has_meta_pid = meta_int(v, &a.meta_pid);
	else
		return false;
	return true;
}

/* A "[memory]" instant's allocator totals: true if key is one. */
bool kineto_parser::memory_arg(string_view key, ondemand::value v, raw_args &a)
{
	if (key == "Total Allocated")
		set_int(v, key, &a.mem_allocated);
	else if (key == "Total Reserved")
		set_int(v, key, &a.mem_reserved);
	else if (key == "Device Type")
		set_int(v, key, &a.mem_device_type);
	else if (key == "Device Id")
		set_int(v, key, &a.mem_device);
	else
		return false;
	return true;
}

/* An op's inputs (record_shapes) and the profiler's options it shows: true if key is one. */
bool kineto_parser::op_arg(string_view key, ondemand::value v, raw_args &a)
{
	if (key == "Input Dims")
		input_dims(v, a);
	else if (key == "Input type")
		input_types(v, a);
	else if (key == "Input Strides")
		input_strides(key, v, a);
	else if (key == "Concrete Inputs")
		concrete_inputs(key, v, a);
	else if (key == "Call stack" || key == "flops") {
		/* the profiler's options (with_stack, with_flops): that they are there */
		(key == "flops" ? a.flops : a.call_stack) = true;
		unread(v, 3);
	} else
		return false;
	return true;
}

/* A kernel's launch (for display): true if key is one. */
bool kineto_parser::launch_arg(string_view key, ondemand::value v, raw_args &a)
{
	if (key == "grid")
		a.has_launch |= launch_dims(v, a.launch.grid);
	else if (key == "block")
		a.has_launch |= launch_dims(v, a.launch.block);
	else if (key == "shared memory")
		a.has_launch |= launch_count(v, &a.launch.shared_bytes);
	else if (key == "registers per thread")
		a.has_launch |= launch_count(v, &a.launch.registers);
	else
		return false;
	return true;
}

/*
 * One arg of an event of this kind: each kind's own keys (they are distinct across
 * kinds), then a collective's record on the CPU and GPU events that carry one.
 */
void kineto_parser::arg(string_view key, ondemand::value v, int kind, raw_args &a)
{
	if (kind == KIND_COUNTER) {
		counter_arg(key, v, a);
		return;
	}
	if (id_arg(key, v, a) || (kind == ORR_EVENT_KIND_COUNT && meta_arg(key, v, a)) ||
	    /* "[memory]" instants: their category is no kind's until the event is stored */
	    (marker_or_unknown(kind) && memory_arg(key, v, a)) ||
	    (kind == ORR_EVENT_OP && op_arg(key, v, a)) ||
	    (kind == ORR_EVENT_KERNEL && launch_arg(key, v, a)))
		return;
	if (kind == ORR_EVENT_OP || kind == ORR_EVENT_KERNEL || kind == ORR_EVENT_RUNTIME ||
	    kind == ORR_EVENT_DRIVER)
		coll_field(key, v, a);
	else
		unread(v, 3);
}

/* A "[memory]" event of a CUDA device (PyTorch's DeviceType 1): a sample, and the peaks. */
void kineto_parser::memory_totals(const raw_args &a, int64_t ts, uint32_t place)
{
	struct orr_rank *r = &rb_->pub;

	if (a.mem_device_type != 1 || a.mem_allocated < 0)
		return;
	*(struct orr_mem_sample *)orr__vec_push(&rb_->mems) = (struct orr_mem_sample){
		ts, a.mem_allocated, a.mem_reserved < 0 ? -1 : a.mem_reserved,
		a.mem_device >= 0 && a.mem_device <= INT32_MAX ? (int32_t)a.mem_device : -1, place
	};
	if (a.mem_allocated > r->mem_peak_allocated_bytes)
		r->mem_peak_allocated_bytes = a.mem_allocated;
	if (a.mem_reserved > r->mem_peak_reserved_bytes)
		r->mem_peak_reserved_bytes = a.mem_reserved;
}

/*
 * A counter event ("ph": "C"): a sample per series, on its process's (and thread's) place.
 * One whose pid is a name, not a process (Kineto's CUPTI PM sampling writes "pid": "GPU 0
 * Counters"), has no place orrery knows: skipped and counted by its category, as an
 * event of no kind orrery reads.
 */
void kineto_parser::counter(raw_event &e)
{
	uint32_t place;

	if (!e.has_ts)
		throw bad_event{ "counter event without numeric 'ts'" };
	if (!e.pid.numeric) {
		count_skipped(e);
		return;
	}
	if (!e.args_done)
		args(e.args, KIND_COUNTER, e.a);
	place = orr__place(rb_, ORR_PLACE_THREAD, e.pid.value, e.tid.numeric ? e.tid.value : 0, -1);
	if (rb_->places.n > limits_->max[ORR__LIMIT_PLACES])
		throw limit_hit{ ORR__LIMIT_PLACES };
	for (size_t i = 0; i < e.a.nseries; i++) {
		if (rb_->counters.n >= limits_->max[ORR__LIMIT_EVENTS])
			throw limit_hit{ ORR__LIMIT_EVENTS };
		*(struct orr_counter_sample *)orr__vec_push(&rb_->counters) =
			(struct orr_counter_sample){
				e.ts, e.a.series[i].value, intern(e.name),
				intern(string_view(e.a.series[i].key, e.a.series[i].len)), place
			};
	}
}

int kineto_parser::finish_samples(bool base)
{
	auto *m = (struct orr_mem_sample *)rb_->mems.p;
	auto *c = (struct orr_counter_sample *)rb_->counters.p;
	int64_t b = rb_->pub.base_time_ns;

	for (size_t i = 0; base && i < rb_->mems.n; i++)
		if (__builtin_add_overflow(m[i].ts_ns, b, &m[i].ts_ns))
			return fail(ORR_EMALFORMED, -1, -1,
				    "'baseTimeNanoseconds' + 'ts' out of range");
	for (size_t i = 0; base && i < rb_->counters.n; i++)
		if (__builtin_add_overflow(c[i].ts_ns, b, &c[i].ts_ns))
			return fail(ORR_EMALFORMED, -1, -1,
				    "'baseTimeNanoseconds' + 'ts' out of range");
	/* a stable sort keeps equal times as read */
	std::stable_sort(m, m + rb_->mems.n,
			 [](const struct orr_mem_sample &x, const struct orr_mem_sample &y) {
				 return x.ts_ns < y.ts_ns;
			 });
	std::stable_sort(c, c + rb_->counters.n,
			 [](const struct orr_counter_sample &x,
			    const struct orr_counter_sample &y) {
				 if (x.name != y.name)
					 return x.name < y.name;
				 if (x.series != y.series)
					 return x.series < y.series;
				 return x.ts_ns < y.ts_ns;
			 });
	return 0;
}

/* Input i of the op being read, created (with those before it) on first use. */
static struct orr_input *input_at(struct orr__rank_build *rb, raw_args &a, uint32_t i)
{
	if (a.ninputs == 0)
		a.first_input = (uint32_t)rb->inputs.n;
	while (a.ninputs <= i) {
		auto *in = (struct orr_input *)orr__vec_push(&rb->inputs);
		in->first_dim = (uint32_t)rb->dims.n;
		in->first_stride = (uint32_t)rb->strides.n;
		a.ninputs++;
	}
	return ORR__AT(rb->inputs, struct orr_input, a.first_input + i);
}

/*
 * A kernel's launch is for display: a value of another shape than the profiler's (an
 * array of three counts, a count) is skipped, not an error.
 */
bool kineto_parser::launch_count(ondemand::value v, uint32_t *ret)
{
	uint64_t x;

	if (v.type() != ondemand::json_type::number || v.get_uint64().get(x) != SUCCESS ||
	    x > UINT32_MAX) {
		unread(v, 3);
		return false;
	}
	*ret = (uint32_t)x;
	return true;
}

bool kineto_parser::launch_dims(ondemand::value v, uint32_t *ret)
{
	uint32_t d[3] = { 0, 0, 0 }, n = 0;
	ondemand::array arr;

	if (v.type() != ondemand::json_type::array || v.get_array().get(arr) != SUCCESS) {
		unread(v, 3);
		return false;
	}
	nest(3);
	for (auto elem : arr) {
		ondemand::value x = elem.value();
		uint64_t u;

		if (n < 3 && x.type() == ondemand::json_type::number &&
		    x.get_uint64().get(u) == SUCCESS && u <= UINT32_MAX)
			d[n++] = (uint32_t)u;
		else
			unread(x, 4), n = 4;
	}
	if (n != 3)
		return false;
	memcpy(ret, d, sizeof(d));
	return true;
}

/*
 * One input's "Input Dims" or "Input Strides" entry x into tab: a tensor's integers, or
 * a list of tensors' (a list of such lists) as each member's count then its integers.
 * Dims must be integers (an error otherwise, as ever); a stride that is not is skipped
 * with the rest of its input's.  0 for an empty entry, 1 for a tensor, 2 for a list of
 * tensors, 3 for anything else (a list of what is not integers, mixed, past 65535
 * values: nothing kept).
 */
int kineto_parser::input_shape(ondemand::value x, struct orr__vec *tab, bool strict)
{
	size_t first = tab->n;
	int shape = 0; /* 1 integers seen, 2 lists seen */
	bool ok = true;

	nest(4);
	for (auto d : x.get_array()) {
		ondemand::value dv = d.value();
		ondemand::json_type t = dv.type();
		int64_t n;

		if (ok && t == ondemand::json_type::number && shape != 2) {
			shape = 1;
			if (strict)
				n = get_int(dv, "expected integer dims");
			else if (!try_int(dv, &n)) {
				ok = false;
				continue;
			}
			*(int64_t *)orr__vec_push(tab) = n;
		} else if (ok && t == ondemand::json_type::array && shape != 1) {
			shape = 2;
			ok = input_member(dv, tab, strict);
		} else {
			unread(dv, 5);
			ok = false;
		}
	}
	if (ok && tab->n - first > UINT16_MAX && shape == 1 && strict)
		throw bad_event{ "tensor with more than 65535 dimensions" };
	if (!ok || tab->n - first > UINT16_MAX) {
		tab->n = first;
		return 3;
	}
	return shape;
}

/*
 * One member of a list of tensors: its count, then its integers; false if not.  Every
 * element is looked at, past one that is not kept too: what simdjson skips unread has
 * neither its depth nor its brackets checked.
 */
bool kineto_parser::input_member(ondemand::value m, struct orr__vec *tab, bool strict)
{
	size_t at = tab->n;
	bool ok = true;

	nest(5);
	*(int64_t *)orr__vec_push(tab) = 0;
	for (auto d : m.get_array()) {
		ondemand::value dv = d.value();
		int64_t n;

		if (!ok || dv.type() != ondemand::json_type::number) {
			unread(dv, 6);
			ok = false;
			continue;
		}
		if (strict)
			n = get_int(dv, "expected integer dims");
		else if (!try_int(dv, &n)) {
			ok = false;
			continue;
		}
		*(int64_t *)orr__vec_push(tab) = n;
		(*ORR__AT(*tab, int64_t, at))++;
	}
	return ok;
}

void kineto_parser::input_dims(ondemand::value v, raw_args &a)
{
	uint32_t i = 0;
	ondemand::array dims = v.get_array();

	nest(3);
	for (auto elem : dims) {
		ondemand::value x = elem.value();
		struct orr_input *in = input_at(rb_, a, i++);
		uint32_t first = (uint32_t)rb_->dims.n;
		int shape;

		if (x.type() != ondemand::json_type::array) {
			unread(x, 4);
			continue;
		}
		shape = input_shape(x, &rb_->dims, true);
		in = input_at(rb_, a, i - 1);
		in->first_dim = first;
		in->ndims = (uint16_t)(rb_->dims.n - first);
		/* any element that is not a number marks a list of tensors */
		if (shape >= 2)
			in->is_list |= 1;
	}
}

/*
 * "Input Strides" (PyTorch 2.x, record_shapes): as "Input Dims", in elements.  They are
 * for compose: a value of another shape is skipped, not an error (a whole entry that is
 * not an array counted as ignored; an input whose strides are not integers left
 * without).
 */
void kineto_parser::input_strides(string_view key, ondemand::value v, raw_args &a)
{
	uint32_t i = 0;
	ondemand::array all;

	if (v.type() != ondemand::json_type::array || v.get_array().get(all) != SUCCESS) {
		unread(v, 3);
		orr__count_coerced(rb_, intern(key), ORR_COERCION_IGNORED);
		return;
	}
	nest(3);
	for (auto elem : all) {
		ondemand::value x = elem.value();
		struct orr_input *in = input_at(rb_, a, i++);
		uint32_t first = (uint32_t)rb_->strides.n;
		int shape;

		if (x.type() != ondemand::json_type::array) {
			unread(x, 4);
			continue;
		}
		shape = input_shape(x, &rb_->strides, false);
		in = input_at(rb_, a, i - 1);
		in->first_stride = first;
		in->nstrides = (uint16_t)(rb_->strides.n - first);
		/* whether they are a list's, for fit_strides() once the dims are read too */
		in->is_list =
			(uint8_t)((in->is_list & ~STRIDES_LIST) | (shape == 2 ? STRIDES_LIST : 0));
	}
}

void kineto_parser::input_types(ondemand::value v, raw_args &a)
{
	uint32_t i = 0;
	ondemand::array types = v.get_array();

	nest(3);
	for (auto elem : types) {
		ondemand::value x = elem.value();
		uint32_t dtype = ORR_STR_NONE;

		if (x.type() == ondemand::json_type::string)
			dtype = intern(x.get_string());
		else
			unread(x, 4);
		input_at(rb_, a, i++)->dtype = dtype;
	}
}

/*
 * "Concrete Inputs" (PyTorch 2.1+, record_shapes): a string per input, the value of a
 * scalar or a list of scalars as the profiler prints it ("1", "0.", "True", "[8, 1024]"),
 * empty for anything else.  Only compose reads them: a value of another shape is
 * ignored, not an error (the array counted as ignored, an element left without value).
 */
void kineto_parser::concrete_inputs(string_view key, ondemand::value v, raw_args &a)
{
	uint32_t i = 0;
	ondemand::array values;

	if (v.type() != ondemand::json_type::array || v.get_array().get(values) != SUCCESS) {
		unread(v, 3);
		orr__count_coerced(rb_, intern(key), ORR_COERCION_IGNORED);
		return;
	}
	nest(3);
	for (auto elem : values) {
		ondemand::value x = elem.value();
		struct orr_input *in = input_at(rb_, a, i++);

		if (x.type() != ondemand::json_type::string) {
			unread(x, 4);
			continue;
		}
		in->value = intern(x.get_string());
		in->has_value = 1;
	}
}

} /* namespace orr__kineto */
