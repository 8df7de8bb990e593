/* SPDX-License-Identifier: MIT */
/*
 * Kineto JSON: the windows over "traceEvents", the top level around them, and the entry
 * points (orr__kineto_parse(), orr__kineto_parse_source()).  How the windows keep memory
 * near 1x the file, read a plain file while it is parsed and bound the depth is told in
 * kineto-json.cpp, which reads each event of a window.
 */
#include <sched.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "kineto-parser.h"

/* For tests: orr__kineto_last_capacity(), orr__kineto_last_split(). */
static thread_local size_t last_capacity, last_split;

namespace orr__kineto {

/* ---- windows over traceEvents ---- */

/* The last "}" ws "," ws "{" (or "}" ws "]") at or before pos + WINDOW_BYTES. */
size_t kineto_parser::guess_cut(size_t pos) const
{
	size_t i = pos + WINDOW_BYTES < hi_ ? pos + WINDOW_BYTES : hi_ - 1;

	if (i > stop_cut_ && stop_cut_ > pos)
		i = stop_cut_;

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
 * window leaves the rank as it was.  Only an exact window reports its error.  Memory
 * refused (std::bad_alloc, or simdjson's MEMALLOC: its index grows for an event longer
 * than a window) is thrown on as std::bad_alloc once the rank and the bytes are restored.
 */
int kineto_parser::window(size_t start, size_t cut, bool exact)
{
	char before = buf_[start - 1], after = buf_[cut + 1];
	int64_t first = nevents_;
	int64_t at = (int64_t)start;
	struct orr__mark mark;
	bool no_memory = false;
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
		if (e.error() == MEMALLOC)
			no_memory = true;
		else if (!exact)
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
	} catch (const std::bad_alloc &) {
		no_memory = true;
	}
	field_at_ = -1;
	buf_[start - 1] = before;
	buf_[cut + 1] = after;
	if (r || no_memory) {
		orr__rank_rollback(rb_, &mark);
		nevents_ = first;
	}
	if (no_memory)
		throw std::bad_alloc();
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

/* ---- two threads: pieces of traceEvents read by a second one ---- */

/*
 * How many threads read a large file: ORR_IMPORT_THREADS (1 or 2), else 2 where this
 * process may run on two CPUs or more.
 */
static int import_threads()
{
	const char *env = getenv("ORR_IMPORT_THREADS");
	cpu_set_t set;

	if (env && *env)
		return strcmp(env, "1") == 0 ? 1 : 2;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	return CPU_COUNT(&set) >= 2 ? 2 : 1;
}

/* traceEvents shorter than this (ORR_IMPORT_SPLIT_BYTES) are read by one thread. */
static size_t split_min_bytes()
{
	const char *env = getenv("ORR_IMPORT_SPLIT_BYTES");
	char *end;

	if (env && *env) {
		unsigned long long v = strtoull(env, &end, 10);
		if (*end == '\0')
			return (size_t)v;
	}
	return (size_t)16 << 20;
}

/*
 * traceEvents in pieces of about equal bytes (PIECE_BYTES, at least MIN_PIECES and at
 * most MAX_PIECES of them), each from the first event boundary guessed at or after its
 * share of the file.  The first thread reads from the first piece on; a second one
 * takes pieces from the last one back, each into a rank and strings of its own.  They
 * meet where their work does (events cost more than bytes, and a file's first and
 * second halves differ).  A piece the second thread read is taken (appended) only when
 * the first thread reaches its start exactly, so a guess inside an event is never
 * taken: the first thread then reads on alone.
 */
constexpr int MAX_PIECES = 32, MIN_PIECES = 8;
/* About 10 ms of reading each: where the threads meet, one waits half a piece at most. */
constexpr size_t PIECE_BYTES = (size_t)4 << 20;
enum { PIECE_FREE, PIECE_SECOND, PIECE_DONE, PIECE_FIRST };

struct piece {
	size_t cut = 0, start = 0; /* the '}' before its first event, and that event's '{' */
	size_t end = 0;            /* the next piece's start, or past the ']' */
	struct orr_trace *t = nullptr;
	struct orr__rank_build *rb = nullptr;
	int r = -1;
	int64_t nevents = 0;
	std::atomic<int> state{ PIECE_FREE };

	~piece()
	{
		orr_trace_free(t);
	}
};

struct pieces {
	struct piece p[MAX_PIECES]; /* p[0]: the first thread's, from traceEvents' start */
	int n = 0;
	struct orr__source *src = nullptr; /* the second thread's */
	struct orr_diag diag = {};
	std::atomic<bool> cancel{ false };
	std::mutex mu;
	std::condition_variable done;
	std::thread th;

	~pieces()
	{
		cancel.store(true, std::memory_order_relaxed);
		if (th.joinable())
			th.join();
		if (src)
			src->close(src);
	}
};

int kineto_parser::piece(struct orr_trace *t, struct orr__rank_build *rb, size_t pos,
			 size_t stop_cut, size_t stop, size_t *ret_end,
			 const std::atomic<bool> *cancel)
{
	t_ = t;
	rb_ = rb;
	nevents_ = 0;
	call_cache_.clear();
	strided_.clear();
	strided_made_ = 0;
	cancel_ = cancel;
	stop_cut_ = stop_cut;
	stop_ = stop;
	seek(pos - 1);
	return events(pos, ret_end);
}

/* The second thread: pieces from the last back, until one is the first thread's. */
static void read_pieces(struct pieces *ps, const char *name, const struct orr__limits *limits)
{
	std::unique_ptr<kineto_parser> kp;

	for (int k = ps->n - 1; k >= 1; k--) {
		struct piece &pc = ps->p[k];
		int expect = PIECE_FREE;

		if (!pc.state.compare_exchange_strong(expect, PIECE_SECOND))
			break;
		try {
			pc.t = orr__trace_new();
			pc.rb = orr__rank_new(pc.t, ORR_STR_NONE);
			if (!kp)
				kp.reset(new kineto_parser(pc.t, pc.rb, name, ps->src, limits,
							   &ps->diag));
			pc.r = kp->piece(pc.t, pc.rb, pc.start,
					 k + 1 < ps->n ? ps->p[k + 1].cut : SIZE_MAX,
					 k + 1 < ps->n ? ps->p[k + 1].start : SIZE_MAX, &pc.end,
					 &ps->cancel);
			pc.nevents = kp->nevents();
		} catch (...) { /* a read error, or no memory: the first thread reads it again */
			pc.r = ORR_EMALFORMED;
		}
		{
			std::lock_guard<std::mutex> lock(ps->mu);
			pc.state.store(PIECE_DONE);
		}
		ps->done.notify_all();
		if (pc.r)
			break;
	}
}

/*
 * The first "}" ws "," ws "{" at or after at, in the next GUESS_BYTES of the file (a
 * Kineto event is a few hundred bytes); or false.
 */
static bool guess_start(struct orr__source *src, size_t at, size_t *ret_cut, size_t *ret_start)
{
	const size_t GUESS_BYTES = WINDOW_BYTES < 65536 ? WINDOW_BYTES : 65536;
	const char *b;
	size_t i, j, end;

	if (src->more(src, at, at + GUESS_BYTES))
		return false;
	b = src->p - src->lo;
	for (i = at, end = src->hi; i < end; i++) {
		if (b[i] != '}')
			continue;
		j = orr__scan_ws(b, end, i + 1);
		if (j >= end || b[j] != ',')
			continue;
		j = orr__scan_ws(b, end, j + 1);
		if (j < end && b[j] == '{') {
			*ret_cut = i;
			*ret_start = j;
			return true;
		}
	}
	return false;
}

/* The pieces of traceEvents from pos on, the second thread started; or false. */
bool kineto_parser::start_pieces(size_t pos, struct pieces &ps)
{
	size_t size = len_ - pos, cut, start;

	if (!src_->fork || size < split_min_bytes() || size < 4 || import_threads() < 2)
		return false;
	ps.src = src_->fork(src_, pos);
	ps.p[0].start = pos;
	ps.n = 1;
	size_t want = size / PIECE_BYTES;
	unsigned n = want < MIN_PIECES   ? MIN_PIECES
		     : want > MAX_PIECES ? MAX_PIECES
					 : (unsigned)want;

	for (unsigned k = 1; k < n; k++) {
		size_t at = pos + (size_t)((unsigned __int128)size * k / n);

		if (at <= ps.p[ps.n - 1].start || !guess_start(ps.src, at, &cut, &start) ||
		    cut <= ps.p[ps.n - 1].start)
			continue;
		ps.p[ps.n].cut = cut;
		ps.p[ps.n].start = start;
		ps.n++;
	}
	if (ps.n < 2)
		return false;
	try {
		ps.th = std::thread(read_pieces, &ps, name_, limits_);
	} catch (const std::system_error &) { /* no thread to be had: one reads it all */
		return false;
	}
	stop_cut_ = ps.p[1].cut;
	return true;
}

/* The first thread reached a piece the second read: it takes it, if whole. */
bool kineto_parser::adopt(struct piece &pc)
{
	/*
	 * The piece's dimensions, strides, inputs and members join this rank's within
	 * ORR_MAX_VALUES (at most 2^32 - 2): the indices into them (orr_input.first_dim ...)
	 * are 32 bits, and are moved by the rank's rows when the piece is appended.
	 */
	if (pc.r != 0 || rb_->events.n + pc.rb->events.n > limits_->max[ORR__LIMIT_EVENTS] ||
	    rb_->counters.n + pc.rb->counters.n > limits_->max[ORR__LIMIT_EVENTS] ||
	    rb_->places.n + pc.rb->places.n > limits_->max[ORR__LIMIT_PLACES] ||
	    !orr__values_fit(limits_, pc.rb->dims.n + rb_->dims.n,
			     pc.rb->strides.n + rb_->strides.n, pc.rb->inputs.n + rb_->inputs.n,
			     pc.rb->members.n + rb_->members.n))
		return false; /* read again by this thread, which says where it fails */
	orr__rank_append(t_, rb_, pc.t, pc.rb);
	nevents_ += pc.nevents;
	last_split = last_split ? last_split : pc.start;
	return true;
}

/*
 * The first thread at piece k's start, *pos: it reads the piece itself if the second
 * has not begun it, else waits for it and takes it (*pos past it).  False where the
 * second thread's piece cannot be taken: the first reads on alone from *pos.
 */
bool kineto_parser::take_piece(struct pieces &ps, int k, size_t *pos)
{
	struct piece &pc = ps.p[k];
	int expect = PIECE_FREE;

	if (pc.state.compare_exchange_strong(expect, PIECE_FIRST)) {
		stop_cut_ = k + 1 < ps.n ? ps.p[k + 1].cut : SIZE_MAX;
		return true;
	}
	{
		std::unique_lock<std::mutex> lock(ps.mu);
		ps.done.wait(lock, [&pc] {
			return pc.state.load() == PIECE_DONE;
		});
	}
	if (!adopt(pc))
		return false;
	*pos = pc.end;
	/*
	 * From the byte before: a window from pc.end borrows it for its '[' (the next piece
	 * not taken is read from there by this thread; from pc.end on, the window wrote
	 * one byte before the buffer)
	 */
	seek(pc.end - 1);
	return true;
}

/* The file's bytes from at on, letting go of every byte before. */
void kineto_parser::seek(size_t at)
{
	int r;

	if ((r = src_->more(src_, at, at + WINDOW_BYTES)))
		throw read_error{ r };
	buf_ = src_->p - src_->lo;
	hi_ = src_->hi;
}

/*
 * The window of events from pos: cut where guess_cut() says, else where a scan ends it
 * (loading more as needed); *ret_cut is its last byte.  0, or fail()'s.
 */
int kineto_parser::next_window(size_t pos, size_t *ret_cut)
{
	struct orr__scan_error se;
	size_t cut;
	int r;

	/*
	 * A window and a half from pos on, else four (the byte before is the window's
	 * '['): what is kept is moved, so it is kept short of what is read.
	 */
	if (hi_ < len_ && hi_ - pos < WINDOW_BYTES + WINDOW_BYTES / 2)
		load(pos - 1, pos + 4 * WINDOW_BYTES);
	cut = guess_cut(pos);
	if (cut == SIZE_MAX || window(pos, cut, false) != 0) {
		/* An event past what is loaded: twice as much, until the file's end. */
		while (orr__scan_events(buf_, hi_, pos, WINDOW_BYTES, max_depth(), &cut, &se)) {
			if (hi_ >= len_)
				return fail_scan(se);
			load(pos - 1, hi_ + (hi_ - pos));
		}
		if ((r = window(pos, cut, true)))
			return r;
	}
	*ret_cut = cut;
	return 0;
}

int kineto_parser::events(size_t pos, size_t *ret_end)
{
	struct pieces ps;
	int next = 1; /* the first thread's next piece */
	bool split;

	if (!cancel_) /* a first thread's: no bound left from an earlier traceEvents */
		stop_cut_ = SIZE_MAX;
	split = !cancel_ && start_pieces(pos, ps);

	for (;;) {
		size_t cut, next_pos;
		int r;

		if (cancel_ && cancel_->load(std::memory_order_relaxed))
			return ORR_EMALFORMED;
		pos = skip_ws(pos);
		if (pos >= stop_) { /* a second thread's piece: exactly at the next one */
			*ret_end = pos;
			return pos == stop_ ? 0 : ORR_EMALFORMED;
		}
		while (split && next < ps.n && pos >= ps.p[next].start) {
			if (pos != ps.p[next].start || !take_piece(ps, next, &pos)) {
				split = false;
				break;
			}
			next++;
		}
		if (split && next >= ps.n && ps.p[ps.n - 1].state.load() == PIECE_DONE) {
			*ret_end = pos; /* the last piece taken: past traceEvents' ']' */
			return 0;
		}
		if (!split && stop_cut_ != SIZE_MAX && !cancel_) {
			stop_cut_ = SIZE_MAX; /* a wrong guess: the rest read by this thread */
			ps.cancel.store(true, std::memory_order_relaxed);
		}
		if (pos < len_ && buf_[pos] == ']') {
			if (stop_ != SIZE_MAX) /* a second thread's piece that is no piece */
				return ORR_EMALFORMED;
			*ret_end = pos + 1;
			return 0;
		}
		if ((r = next_window(pos, &cut)))
			return r;
		next_pos = skip_ws(cut + 1);
		if (next_pos < len_ && buf_[next_pos] == ',') {
			pos = skip_ws(next_pos + 1);
			if (pos >= len_ || buf_[pos] != '{')
				return fail(ORR_EMALFORMED, (int64_t)pos, nevents_,
					    "expected an event object after ','");
		} else {
			pos = next_pos;
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
			/*
			 * Its ranks are read as one until traces/chrome/ splits them, each then
			 * held to the limits: the file to as many times them.
			 */
			if (limits_ != &file_limits_ && rb_->nparts > 1) {
				orr__limits_for_ranks(limits_, rb_->nparts, &file_limits_);
				limits_ = &file_limits_;
			}
		} else {
			device_properties(doc.get_array());
		}
	} catch (const simdjson_error &e) {
		if (e.error() == DEPTH_ERROR)
			return fail_limit(ORR__LIMIT_DEPTH, (int64_t)pos, -1);
		if (e.error() == MEMALLOC)
			throw std::bad_alloc();
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

/* The top value's first byte at *pos: the events alone (an array), or the object's '{'. */
int kineto_parser::top_start(size_t *pos, int *state)
{
	size_t p = top_ws(*pos), end;
	int r;

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
	return 0;
}

/*
 * One member of the top-level object, from its key at p: traceEvents read, another
 * value kept if it is one of ours (top_value()); *ret_end is past its value.
 */
int kineto_parser::top_member(size_t p, size_t *ret_end)
{
	struct orr__scan_error se;
	size_t kend, vpos, end;
	int r;

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
	*ret_end = end;
	return 0;
}

/*
 * The top level from *pos in *state, which it advances past each whole value, so that
 * after need_more (a value outside traceEvents past what is loaded) it goes on from there.
 */
int kineto_parser::top_item(size_t *pos, int *state)
{
	size_t p, end;
	int r;

	if (*state == TOP_START && (r = top_start(pos, state)))
		return r;
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
		if ((r = top_member(p, &end)))
			return r;
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

extern "C" size_t orr__kineto_last_capacity(void)
{
	return last_capacity;
}

extern "C" size_t orr__kineto_last_split(void)
{
	return last_split;
}

extern "C" int orr__kineto_parse(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
				 char *buf, size_t len, const struct orr__limits *limits,
				 struct orr_diag *diag)
{
	struct orr__source src = {};

	src.p = buf;
	src.hi = src.size = src.cap = len;

	return orr__kineto_parse_source(t, rb, name, &src, limits, diag);
}

extern "C" int orr__kineto_parse_source(struct orr_trace *t, struct orr__rank_build *rb,
					const char *name, struct orr__source *src,
					const struct orr__limits *limits, struct orr_diag *diag)
{
	last_split = 0;
	try {
		orr__kineto::kineto_parser p(t, rb, name, src, limits, diag);
		int r = p.run();

		last_capacity = p.capacity();
		return r;
	} catch (const std::bad_alloc &) {
		/* simdjson's index (4 bytes per byte of a window, or of a longer event) or ours */
		return orr_diag_set(diag, -ENOMEM, name, -1, -1,
				    "Kineto trace: out of memory parsing its %zu bytes", src->size);
	}
}
