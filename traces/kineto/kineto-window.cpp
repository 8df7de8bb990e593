/* SPDX-License-Identifier: MIT */
/*
 * Kineto JSON: the windows over "traceEvents", the top level around them, and the entry
 * points (orr__kineto_parse(), orr__kineto_parse_source()).  How the windows keep memory
 * near 1x the file, read a plain file while it is parsed and bound the depth is told in
 * kineto-json.cpp, which reads each event of a window.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kineto-parser.h"

namespace orr__kineto {

/* ---- windows over traceEvents ---- */

/* The last "}" ws "," ws "{" (or "}" ws "]") at or before pos + WINDOW_BYTES. */
size_t kineto_parser::guess_cut(size_t pos) const
{
	size_t i = pos + WINDOW_BYTES < hi_ ? pos + WINDOW_BYTES : hi_ - 1;

	for (; i > pos; i--) {
		size_t j;

		if (buf_[i] != '}')
			continue;
		j = orr__scan_ws(buf_, hi_, i + 1);
		if (j < hi_ && buf_[j] == ']')
			return i;
		if (j >= hi_ || buf_[j] != ',')
			continue;
		j = orr__scan_ws(buf_, hi_, j + 1);
		if (j < hi_ && buf_[j] == '{')
			return i;
	}
	return SIZE_MAX;
}

/*
 * Parses the events in buf[start..cut] (cut is the '}' of the last one) as one array,
 * borrowing the byte before start and the one after cut for the brackets.  A failed
 * window leaves the rank as it was.  Only an exact window reports its error.
 */
int kineto_parser::window(size_t start, size_t cut, bool exact)
{
	char before = buf_[start - 1], after = buf_[cut + 1];
	int64_t first = nevents_;
	int64_t at = (int64_t)start;
	struct orr__mark mark;
	int r = 0;

	orr__rank_mark(rb_, &mark);
	buf_[start - 1] = '[';
	buf_[cut + 1] = ']';
	try {
		ondemand::document doc = parser_.iterate(buf_ + start - 1, cut - start + 3,
							 hi_ + ORR__JSON_PADDING - start + 1);
		for (auto elem : doc.get_array()) {
			ondemand::value v = elem.value();
			const char *loc;

			if (v.current_location().get(loc) == SUCCESS)
				at = loc - buf_;
			event(v.get_object());
			nevents_++;
		}
		const char *rest;
		if (doc.current_location().get(rest) == SUCCESS)
			throw bad_event{ "trailing data after the events" };
	} catch (const simdjson_error &e) {
		int err = e.error() == UNCLOSED_STRING || e.error() == INCOMPLETE_ARRAY_OR_OBJECT
				  ? ORR_ETRUNCATED
				  : ORR_EMALFORMED;
		if (!exact)
			r = ORR_EMALFORMED;
		else if (e.error() == DEPTH_ERROR)
			r = fail_limit(ORR__LIMIT_DEPTH, at, nevents_);
		else
			r = fail(err, field_at_ >= at ? field_at_ : at, nevents_,
				 error_message(e.error()));
	} catch (const bad_event &e) {
		r = exact ? fail(ORR_EMALFORMED, field_at_ >= at ? field_at_ : at, nevents_, e.what)
			  : ORR_EMALFORMED;
	} catch (const limit_hit &e) {
		r = exact ? fail_limit(e.which, field_at_ >= at ? field_at_ : at, nevents_)
			  : ORR_EMALFORMED;
	}
	field_at_ = -1;
	buf_[start - 1] = before;
	buf_[cut + 1] = after;
	if (r) {
		orr__rank_rollback(rb_, &mark);
		nevents_ = first;
	}
	return r;
}

/*
 * Loads the file's bytes up to want (or its end), letting go of those before keep: the
 * parse never goes back past the byte before the window it is at.
 */
void kineto_parser::load(size_t keep, size_t want)
{
	int r;

	if (hi_ >= len_)
		return;
	if ((r = src_->more(src_, keep, want)))
		throw read_error{ r };
	buf_ = src_->p - src_->lo;
	hi_ = src_->hi;
}

/* In traceEvents: whitespace from pos, loading more as it reaches what is loaded. */
size_t kineto_parser::skip_ws(size_t pos)
{
	for (;;) {
		pos = orr__scan_ws(buf_, hi_, pos);
		if (pos < hi_ || hi_ >= len_)
			return pos;
		load(pos - 1, pos + WINDOW_BYTES);
	}
}

int kineto_parser::events(size_t pos, size_t *ret_end)
{
	struct orr__scan_error se;

	for (;;) {
		size_t cut, next;
		int r;

		pos = skip_ws(pos);
		if (pos < len_ && buf_[pos] == ']') {
			*ret_end = pos + 1;
			return 0;
		}
		/*
		 * A window and a half from pos on, else four (the byte before is the
		 * window's '['): what is kept is moved, so it is kept short of what is read.
		 */
		if (hi_ < len_ && hi_ - pos < WINDOW_BYTES + WINDOW_BYTES / 2)
			load(pos - 1, pos + 4 * WINDOW_BYTES);
		cut = guess_cut(pos);
		if (cut == SIZE_MAX || window(pos, cut, false) != 0) {
			/* An event past what is loaded: twice as much, until the file's end. */
			while (orr__scan_events(buf_, hi_, pos, WINDOW_BYTES, max_depth(), &cut,
						&se)) {
				if (hi_ >= len_)
					return fail_scan(se);
				load(pos - 1, hi_ + (hi_ - pos));
			}
			if ((r = window(pos, cut, true)))
				return r;
		}
		next = skip_ws(cut + 1);
		if (next < len_ && buf_[next] == ',') {
			pos = skip_ws(next + 1);
			if (pos >= len_ || buf_[pos] != '{')
				return fail(ORR_EMALFORMED, (int64_t)pos, nevents_,
					    "expected an event object after ','");
		} else {
			pos = next;
		}
	}
}

/* ---- the top-level object ---- */

int kineto_parser::top_value(string_view key, size_t pos, size_t end)
{
	if (key != "distributedInfo" && key != "deviceProperties" && key != "baseTimeNanoseconds" &&
	    key != "orreryRanks")
		return 0;
	try {
		ondemand::document doc =
			parser_.iterate(buf_ + pos, end - pos, hi_ + ORR__JSON_PADDING - pos);
		if (key == "baseTimeNanoseconds") {
			int64_t base;
			if (doc.get_int64().get(base) != SUCCESS)
				throw bad_event{ "expected an integer 'baseTimeNanoseconds'" };
			rb_->pub.base_time_ns = base;
			rb_->has_base = true;
		} else if (key == "distributedInfo") {
			distributed_info(doc.get_object());
		} else if (key == "orreryRanks") {
			for (auto elem : doc.get_array())
				declared_rank(elem.get_object());
		} else {
			device_properties(doc.get_array());
		}
	} catch (const simdjson_error &e) {
		if (e.error() == DEPTH_ERROR)
			return fail_limit(ORR__LIMIT_DEPTH, (int64_t)pos, -1);
		snprintf(msg_, sizeof(msg_), "'%.*s': %s", (int)key.size(), key.data(),
			 e.error() == INCORRECT_TYPE ? "a value of another type than expected"
						     : error_message(e.error()));
		return fail(ORR_EMALFORMED, (int64_t)pos, -1, msg_);
	} catch (const bad_event &e) {
		return fail(ORR_EMALFORMED, (int64_t)pos, -1, e.what);
	} catch (const limit_hit &e) {
		return fail_limit(e.which, (int64_t)pos, -1);
	}
	return 0;
}

/* Outside traceEvents: whitespace from pos; need_more when it reaches what is loaded. */
size_t kineto_parser::top_ws(size_t pos)
{
	pos = orr__scan_ws(buf_, hi_, pos);
	if (pos >= hi_ && hi_ < len_)
		throw need_more{};
	return pos;
}

/* Where top_item() is: before the top value, in its object, after a member, after it. */
enum { TOP_START, TOP_OBJECT, TOP_AFTER, TOP_END };

/*
 * The top level from *pos in *state, which it advances past each whole value, so that
 * after need_more (a value outside traceEvents past what is loaded) it goes on from there.
 */
int kineto_parser::top_item(size_t *pos, int *state)
{
	struct orr__scan_error se;
	size_t p, kend, vpos, end;
	int r;

	if (*state == TOP_START) {
		p = top_ws(*pos);
		if (p >= len_)
			return fail(ORR_EEMPTY, -1, -1, "no JSON value");
		if (buf_[p] == '[') { /* JSON Array Format: the events alone */
			saw_events_ = true;
			if ((r = events(p + 1, &end)))
				return r;
			*pos = end, *state = TOP_END;
		} else if (buf_[p] == '{') {
			*pos = p + 1, *state = TOP_OBJECT;
		} else {
			return fail(ORR_EFORMAT, (int64_t)p, -1,
				    "expected a Kineto JSON trace (an object with 'traceEvents')");
		}
	}
	while (*state == TOP_OBJECT || *state == TOP_AFTER) {
		p = top_ws(*pos);
		if (*state == TOP_AFTER) {
			if (p < len_ && buf_[p] == ',')
				p = top_ws(p + 1);
			else if (p < len_ && buf_[p] != '}')
				return fail(ORR_EMALFORMED, (int64_t)p, -1, "expected ',' or '}'");
			*pos = p, *state = TOP_OBJECT;
		}
		if (p >= len_)
			return fail(ORR_ETRUNCATED, (int64_t)len_, -1,
				    "unterminated top-level object");
		if (buf_[p] == '}') {
			*pos = p + 1, *state = TOP_END;
			break;
		}
		if (buf_[p] != '"')
			return fail(ORR_EMALFORMED, (int64_t)p, -1, "expected a key string");
		if (orr__scan_string(buf_, hi_, p, &kend, &se)) {
			if (hi_ < len_)
				throw need_more{};
			return fail_scan(se);
		}
		string_view key(buf_ + p + 1, kend - p - 2);
		vpos = top_ws(kend);
		if (vpos >= len_ || buf_[vpos] != ':')
			return fail(ORR_EMALFORMED, (int64_t)vpos, -1, "expected ':'");
		vpos = top_ws(vpos + 1);
		if (key == "traceEvents") {
			if (vpos >= len_ || buf_[vpos] != '[')
				return fail(ORR_EMALFORMED, (int64_t)vpos, -1,
					    "expected an array for 'traceEvents'");
			saw_events_ = true;
			if ((r = events(vpos + 1, &end)))
				return r;
		} else {
			if (orr__scan_value(buf_, hi_, vpos, max_depth(), &end, &se)) {
				if (hi_ < len_)
					throw need_more{};
				return fail_scan(se);
			}
			if ((r = top_value(key, vpos, end)))
				return r;
		}
		*pos = end, *state = TOP_AFTER;
	}
	p = top_ws(*pos);
	if (p < len_)
		return fail(ORR_EMALFORMED, (int64_t)p, -1, "trailing data after the JSON value");
	if (!saw_events_)
		return fail(ORR_EFORMAT, -1, -1, "no 'traceEvents' array");
	return 0;
}

/* Outside traceEvents, a value past what is loaded loads the rest of the file. */
int kineto_parser::top_level()
{
	size_t pos = 0;
	int state = TOP_START;

	/* A UTF-8 byte order mark, as some editors and Windows tools write. */
	if (hi_ >= 3 && memcmp(buf_, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	for (;;) {
		try {
			return top_item(&pos, &state);
		} catch (const need_more &) {
			load(src_->lo, len_);
		}
	}
}

int kineto_parser::run()
{
	int r;

	try {
		r = top_level();
	} catch (const read_error &e) {
		return e.r;
	}

	if (r == 0 && rb_->has_base) {
		/* Timestamps are relative to baseTimeNanoseconds when it is present. */
		int64_t base = rb_->pub.base_time_ns, end;
		auto *ev = (struct orr_event *)rb_->events.p;
		for (size_t i = 0; i < rb_->events.n; i++) {
			if (__builtin_add_overflow(ev[i].start_ns, base, &ev[i].start_ns) ||
			    __builtin_add_overflow(ev[i].start_ns, ev[i].dur_ns, &end))
				return fail(ORR_EMALFORMED, -1, -1,
					    "'baseTimeNanoseconds' + 'ts' + 'dur' out of range");
		}
		auto *f = (struct orr__flow *)rb_->flows.p;
		for (size_t i = 0; i < rb_->flows.n; i++)
			if (__builtin_add_overflow(f[i].ts_ns, base, &f[i].ts_ns))
				return fail(ORR_EMALFORMED, -1, -1,
					    "'baseTimeNanoseconds' + 'ts' out of range");
	}
	return r ? r : finish_samples(rb_->has_base);
}

} /* namespace orr__kineto */

static thread_local size_t last_capacity;

extern "C" size_t orr__kineto_last_capacity(void)
{
	return last_capacity;
}

extern "C" int orr__kineto_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
				 char *buf, size_t len, const struct orr__limits *limits,
				 struct orr_diag *diag)
{
	struct orr__source src = { buf, 0, len, len, len, NULL, NULL };

	return orr__kineto_parse_source(t, rb, name, &src, limits, diag);
}

extern "C" int orr__kineto_parse_source(struct orr_trace *t, struct orr__rank_build *rb,
					const char *name, struct orr__source *src,
					const struct orr__limits *limits, struct orr_diag *diag)
{
	try {
		orr__kineto::kineto_parser p(t, rb, name, src, limits, diag);
		int r = p.run();

		last_capacity = p.capacity();
		return r;
	} catch (const std::bad_alloc &) {
		fprintf(stderr, "orrery: error: cannot import '%s': out of memory\n", name);
		exit(1);
	}
}
