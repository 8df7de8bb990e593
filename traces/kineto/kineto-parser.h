/* SPDX-License-Identifier: MIT */
/*
 * traces/kineto/kineto-parser.h — what kineto-json.cpp (the events), kineto-window.cpp
 * (their windows, the top level) and kineto-args.cpp (an event's args, the file's
 * metadata) share: the parser and the helpers that read values.  C++ only, internal to
 * traces/kineto/.
 */
#ifndef ORRERY_TRACES_KINETO_PARSER_H
#define ORRERY_TRACES_KINETO_PARSER_H

#include <simdjson.h>

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../internal.h"
#include "scan.h"

namespace orr__kineto {

using namespace simdjson;
using std::string_view;

constexpr size_t WINDOW_BYTES = ORR__WINDOW_BYTES;

/* Data errors found while reading values simdjson parsed fine. */
struct bad_event {
	const char *what;
};

/* A limit passed (orr__limit_fail()). */
struct limit_hit {
	enum orr__limit which;
};

/* Reading the source failed: r, with the diag set (orr__source.more()). */
struct read_error {
	int r;
};

/* Outside traceEvents, the bytes loaded ended before what was read: load the rest. */
struct need_more {};

/* Values as the events write them (kineto-json.cpp). */
const char *type_name(ondemand::json_type t);
const char *expected_type(string_view key);
bool is_value_error(error_code e);
int64_t get_int(ondemand::value v, const char *what);
/* The same without throwing: false when v is no integer (nor an integral number). */
bool try_int(ondemand::value v, int64_t *ret);
int64_t get_time(ondemand::value v, const char *what);

/* Ids that may be written as numbers or strings ("stream 7", "Spans"). */
struct loose_id {
	int64_t value = -1;
	bool present = false, numeric = false;
};

enum class ph { none, complete, instant, flow_start, flow_end, metadata, counter, other };

/*
 * In orr_input.is_list while an op's args are read: its "Input Strides" entry was a list
 * of lists (a list of tensors' members), to be checked against its dims' shape when the
 * event is stored (fit_strides()), then cleared.
 */
constexpr uint8_t STRIDES_LIST = 2;

/* arg()'s kind for a counter event's args: every number is a series. */
constexpr int KIND_COUNTER = ORR_EVENT_KIND_COUNT + 1;
constexpr size_t MAX_SERIES = 16; /* per counter event; more are not kept */

loose_id get_loose_id(ondemand::value v);

/*
 * An object's member itself, not its simdjson_result: what is read of it is then neither
 * checked nor copied again (copies of results, a third of reading an event's fields).
 */
inline ondemand::field &field_of(simdjson_result<ondemand::field> &r)
{
	if (r.error())
		throw simdjson_error(r.error());
	return r.value_unsafe();
}
ph parse_ph(string_view s);
int kind_of(string_view cat);
bool marker_or_unknown(int kind);
bool on_gpu(int kind);
enum orr_sync_kind sync_kind_of(string_view s);

/* What the args of an event say, by key. */
struct raw_args {
	int64_t external_id = -1, correlation = -1, stream = -1, device = -1, sequence = -1;
	int64_t bytes = -1, wait_on_stream = -1, record_corr = -1, event_id = -1;
	enum orr_sync_kind sync = ORR_SYNC_UNKNOWN;
	string_view meta_name;
	int64_t meta_rank = -1, meta_pid = -1; /* process_name of a file with several ranks */
	bool has_meta_pid = false, has_device = false;
	bool has_coll = false;
	/* a collective's "Global rank start" and "Global rank stride" (PyTorch 2.1+) */
	int64_t rank_start = -1, rank_stride = -1;
	/* "[memory]" markers: the allocator's totals after the event, and the device type */
	int64_t mem_allocated = -1, mem_reserved = -1, mem_device_type = -1, mem_device = -1;
	struct orr_collective coll = {
		ORR_STR_NONE, ORR_STR_NONE, ORR_STR_NONE, ORR_STR_NONE, -1, -1, -1,
		-1,           -1,           -1,           -1,           -1, 0,  0
	};
	uint32_t first_input = 0, ninputs = 0;
	/* A kernel's launch: "grid", "block", "shared memory", "registers per thread". */
	struct orr_kernel_args launch = {};
	bool has_launch = false;
	bool call_stack = false, flops = false; /* an op's "Call stack", "flops" */
	/*
	 * A counter event's series, key and value: the first nseries are set (plain data,
	 * left unset: an event's raw_args are made for every event, counters are few).
	 */
	struct {
		const char *key;
		size_t len;
		double value;
	} series[MAX_SERIES];
	size_t nseries = 0;
};

/* The fields of one event, gathered in any key order before it is stored. */
struct raw_event {
	string_view ph, cat, name;
	loose_id pid, tid;
	int64_t ts = 0, dur = -1;
	bool has_ts = false;
	bool dur_range = false; /* a number past int64_t's ns: an error only if kept */
	int64_t flow_id = -1;
	string_view args; /* raw JSON of "args" when it came before "cat" */
	bool args_done = false;
	raw_args a;
};

class kineto_parser {
public:
	/*
	 * buf_ is biased by the source's lo so that buf_[pos] is the file's byte pos for
	 * every pos in [lo, hi): positions and messages' offsets are the file's.
	 */
	kineto_parser(struct orr_trace *t, struct orr__rank_build *rb, const char *name,
		      struct orr__source *src, const struct orr__limits *limits,
		      struct orr_diag *diag)
		: t_(t), rb_(rb), name_(name), src_(src), buf_(src->p - src->lo), len_(src->size),
		  hi_(src->hi), limits_(limits), diag_(diag)
	{
		size_t len = len_;

		size_t depth = (size_t)limits->max[ORR__LIMIT_DEPTH];

		/*
		 * simdjson counts the window's own brackets as a level.  Its index is 4 bytes
		 * per byte of the largest document: a window, or less in a smaller file (a
		 * bigger one, an event longer than a window, grows it in iterate()).
		 */
		if (parser_.allocate(parser_bytes(len), depth + 1) != SUCCESS ||
		    args_parser_.allocate(4096, depth + 1) != SUCCESS)
			throw std::bad_alloc();
	}
	int run();
	/*
	 * A second thread's piece of traceEvents (kineto-window.cpp), into t and rb: the
	 * events from pos (the first byte of one) to exactly stop (the first byte of the
	 * next piece's first event; no window ends past stop_cut, the '}' before it), or past
	 * the ']' that ends them when stop is SIZE_MAX; where it stopped in *ret_end.  It
	 * fails where an event does, where it would pass stop, and once *cancel is set.
	 */
	int piece(struct orr_trace *t, struct orr__rank_build *rb, size_t pos, size_t stop_cut,
		  size_t stop, size_t *ret_end, const std::atomic<bool> *cancel);
	int64_t nevents() const
	{
		return nevents_;
	}
	/* What simdjson's parser for the windows holds now, in bytes of document. */
	size_t capacity() const
	{
		return parser_.capacity();
	}
	/* A guessed window is at most WINDOW_BYTES + 1 of events and its two brackets, never past len. */
	static size_t parser_bytes(size_t len)
	{
		return len < WINDOW_BYTES + 3 ? len : WINDOW_BYTES + 3;
	}

private:
	int top_level();
	int top_item(size_t *pos, int *state);
	int top_start(size_t *pos, int *state);
	int top_member(size_t p, size_t *ret_end);
	size_t top_ws(size_t pos);
	void load(size_t keep, size_t want);
	size_t skip_ws(size_t pos);
	int top_value(string_view key, size_t pos, size_t end);
	int events(size_t pos, size_t *ret_end);
	int next_window(size_t pos, size_t *ret_cut);
	int window(size_t start, size_t cut, bool exact);
	size_t guess_cut(size_t pos) const;
	bool start_pieces(size_t pos, struct pieces &ps);
	bool take_piece(struct pieces &ps, int k, size_t *pos);
	bool adopt(struct piece &pc);
	void seek(size_t at);
	int fail(int err, int64_t offset, int64_t event, const char *what);
	int fail_scan(const struct orr__scan_error &e);
	int fail_limit(enum orr__limit which, int64_t offset, int64_t event);
	[[noreturn]] void bad_value(const char *where, string_view key, ondemand::value v,
				    error_code err);
	size_t max_depth() const
	{
		return (size_t)limits_->max[ORR__LIMIT_DEPTH];
	}

	void nest(size_t level) const;
	void values_fit() const;
	void unread(ondemand::value v, size_t level);
	bool meta_int(ondemand::value v, int64_t *ret);
	void event(ondemand::object obj);
	void event_field(string_view key, ondemand::value v, raw_event &e);
	void event_dur(ondemand::value v, raw_event &e);
	void arg_field(string_view key, ondemand::value v, int kind, raw_args &a);
	void store(raw_event &e);
	void store_meta(raw_event &e);
	bool store_flow(raw_event &e, ph p);
	void count_skipped(const raw_event &e);
	uint32_t event_place(const raw_event &e, int kind);
	void event_kind_args(const raw_event &e, struct orr_event &ev);
	void fit_strides(struct orr_input *in);
	void args(string_view raw, int kind, raw_args &a);
	void event_args(ondemand::value v, raw_event &e);
	void arg(string_view key, ondemand::value v, int kind, raw_args &a);
	bool id_arg(string_view key, ondemand::value v, raw_args &a);
	bool meta_arg(string_view key, ondemand::value v, raw_args &a);
	bool memory_arg(string_view key, ondemand::value v, raw_args &a);
	bool op_arg(string_view key, ondemand::value v, raw_args &a);
	bool launch_arg(string_view key, ondemand::value v, raw_args &a);
	void input_dims(ondemand::value v, raw_args &a);
	int input_shape(ondemand::value x, struct orr__vec *tab, bool strict);
	bool input_member(ondemand::value m, struct orr__vec *tab, bool strict);
	void input_strides(string_view key, ondemand::value v, raw_args &a);
	bool launch_dims(ondemand::value v, uint32_t *ret);
	bool arg_int(ondemand::value v, string_view key, int64_t *ret);
	void set_int(ondemand::value v, string_view key, int64_t *ret);
	void set_int32(ondemand::value v, string_view key, int32_t *ret);
	bool launch_count(ondemand::value v, uint32_t *ret);
	void input_types(ondemand::value v, raw_args &a);
	void concrete_inputs(string_view key, ondemand::value v, raw_args &a);
	void coll_field(string_view key, ondemand::value v, raw_args &a);
	void memory_totals(const raw_args &a, int64_t ts, uint32_t place);
	void counter(raw_event &e);
	/* The samples' times from baseTimeNanoseconds (when base), then their order: 0, or fail()'s. */
	int finish_samples(bool base);
	void members(ondemand::value v, string_view key, uint32_t *first, uint32_t *n);
	void strided_members(const raw_args &a, struct orr_collective *c);
	void distributed_info(ondemand::object obj);
	void device_properties(ondemand::array arr);
	void declared_rank(ondemand::object obj);
	uint32_t intern(string_view s);
	string_view raw_key(ondemand::field &f) const;
	uint8_t call_class(uint32_t name);

	struct orr_trace *t_;
	struct orr__rank_build *rb_;
	const char *name_;
	struct orr__source *src_;
	char *buf_;
	size_t len_;
	size_t hi_; /* the file's bytes are loaded up to here (src_->hi) */
	const struct orr__limits *limits_;
	/* A file that declares its ranks ("orreryRanks"): limits_ for all of them at once. */
	struct orr__limits file_limits_;
	struct orr_diag *diag_;
	ondemand::parser parser_, args_parser_;
	int64_t field_at_ = -1; /* the key of the event's field being read, -1 */
	char msg_[256];         /* bad_event::what when it is formatted */
	int64_t nevents_ = 0;
	bool saw_events_ = false;
	std::vector<uint8_t> call_cache_; /* enum orr_call + 1 by name id, 0 = not yet */
	/* Members made from a start and a stride (strided_members()), shared by range. */
	struct strided {
		int64_t start, stride, size;
		uint32_t first;
	};
	std::vector<strided> strided_;
	uint64_t strided_made_ = 0;
	/* A second thread's parser: stop once set.  The first's: NULL. */
	const std::atomic<bool> *cancel_ = nullptr;
	size_t stop_cut_ = SIZE_MAX; /* no window ends past it: the next piece's '}' */
	size_t stop_ = SIZE_MAX;     /* a second thread's piece ends exactly here */
};

} /* namespace orr__kineto */

#endif
