/* SPDX-License-Identifier: MIT */
/*
 * Kineto JSON: who takes part in a collective (its args' group, and the members PyTorch's
 * start and stride give when the list is cut) and the file's top-level metadata
 * (distributedInfo, deviceProperties, the ranks a file of several declares).
 */
#include <algorithm>
#include <cstdint>

#include "kineto-parser.h"

namespace orr__kineto {

/*
 * Ranks written as an array or as a string "[0, 1, 2]".  PyTorch writes a list of more
 * than 30 ranks cut, "[0, 1, ..., 29, ...]" (format_list() in
 * torch/csrc/profiler/util.cpp, kTruncatLength): a part of a group is not its
 * membership, so such a list gives no members (the group size and name still say which
 * group it is), counted as ignored.
 */
void kineto_parser::members(ondemand::value v, string_view key, uint32_t *first, uint32_t *n)
{
	*first = (uint32_t)rb_->members.n;
	*n = 0;
	auto push = [&](int64_t r) {
		if (r < INT32_MIN || r > INT32_MAX)
			throw bad_event{ "rank out of range" };
		*(int32_t *)orr__vec_push(&rb_->members) = (int32_t)r;
		(*n)++;
	};
	if (v.type() == ondemand::json_type::array) {
		ondemand::array ranks = v.get_array();

		nest(3);
		for (auto r : ranks)
			push(get_int(r.value(), "expected integer ranks"));
		return;
	}
	string_view s = v.get_string();
	if (s.find("...") != string_view::npos) {
		orr__count_coerced(rb_, intern(key), ORR_COERCION_IGNORED);
		return;
	}
	for (size_t i = 0; i < s.size();) {
		if (s[i] < '0' || s[i] > '9') {
			i++;
			continue;
		}
		int64_t r = 0;
		for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && r < INT32_MAX; i++)
			r = r * 10 + (s[i] - '0');
		push(r);
	}
}

/*
 * A collective's members from its size, "Global rank start" and "Global rank stride"
 * when "Process Group Ranks" gave none (cut past 30 ranks, or absent): PyTorch's
 * getGlobalRankStartAndStride() (torch/csrc/distributed/c10d) writes the first rank and
 * the spacing of evenly spaced ranks (0, 1 for the default group; 0 for a group of one;
 * -1 when they are not evenly spaced, and then nothing is made).  A job has few groups:
 * a range made is shared by the collectives of the same group, and at most 1 Mi members
 * are made per piece of a file, so a hostile file cannot grow them past its own size.
 */
void kineto_parser::strided_members(const raw_args &a, struct orr_collective *c)
{
	static const uint64_t budget = UINT64_C(1) << 20;
	int64_t size = c->group_size, start = a.rank_start, stride = a.rank_stride;
	uint32_t first;

	if (size < 1 || start < 0 || start > INT32_MAX || stride < 0 || stride > INT32_MAX ||
	    (stride == 0 && size != 1) || (uint64_t)size > limits_->max[ORR__LIMIT_RANKS] ||
	    start + (size - 1) * stride > INT32_MAX)
		return;
	for (const strided &g : strided_)
		if (g.start == start && g.stride == stride && g.size == size) {
			c->first_member = g.first;
			c->nmembers = (uint32_t)size;
			return;
		}
	if (strided_made_ + (uint64_t)size > budget) {
		orr__count_coerced(rb_, intern("Global rank start"), ORR_COERCION_IGNORED);
		return;
	}
	first = (uint32_t)rb_->members.n;
	for (int64_t i = 0; i < size; i++)
		*(int32_t *)orr__vec_push(&rb_->members) = (int32_t)(start + i * stride);
	values_fit();
	strided_made_ += (uint64_t)size;
	if (strided_.size() < 256)
		strided_.push_back({ start, stride, size, first });
	c->first_member = first;
	c->nmembers = (uint32_t)size;
}

void kineto_parser::coll_field(string_view key, ondemand::value v, raw_args &a)
{
	struct orr_collective &c = a.coll;

	if (key == "Collective name")
		c.type = intern(v.get_string()), a.has_coll = true;
	else if (key == "dtype")
		c.dtype = intern(v.get_string());
	else if (key == "In msg nelems")
		set_int(v, key, &c.in_nelems);
	else if (key == "Out msg nelems")
		set_int(v, key, &c.out_nelems);
	else if (key == "In msg bytes") /* orrery's, when there are no nelems */
		set_int(v, key, &c.in_bytes);
	else if (key == "Out msg bytes")
		set_int(v, key, &c.out_bytes);
	else if (key == "Group size")
		set_int32(v, key, &c.group_size);
	else if (key == "Process Group Name" || key == "Process Group ID")
		c.pg_name = v.type() == ondemand::json_type::string ? intern(v.get_string())
								    : intern(v.raw_json_token());
	else if (key == "Process Group Description")
		c.pg_desc = intern(v.get_string());
	else if (key == "Process Group Ranks")
		members(v, key, &c.first_member, &c.nmembers);
	else if (key == "Global rank start")
		set_int(v, key, &a.rank_start);
	else if (key == "Global rank stride")
		set_int(v, key, &a.rank_stride);
	else if (key == "Seq")
		set_int(v, key, &c.sequence);
	else if (key == "Src Rank")
		set_int32(v, key, &c.src_rank);
	else if (key == "Dst Rank")
		set_int32(v, key, &c.dst_rank);
	else
		unread(v, 3);
}

/* ---- top-level metadata ---- */

/*
 * An integer of the metadata that a field of 32 bits holds, from lo: out of range, it is
 * unknown (dflt), as a world_size is, not cut to 32 bits (2^32 + 2 read as 2).
 */
static int32_t int32_in(ondemand::value v, const char *what, int64_t lo, int32_t dflt)
{
	int64_t x = get_int(v, what);

	return x >= lo && x <= INT32_MAX ? (int32_t)x : dflt;
}

void kineto_parser::distributed_info(ondemand::object obj)
{
	for (auto field : obj) {
		string_view key = field.unescaped_key();
		ondemand::value v = field.value();

		if (key == "rank") {
			int64_t r = get_int(v, "expected an integer distributedInfo.rank");
			if (r < 0 || r > INT32_MAX)
				throw bad_event{ "distributedInfo.rank out of range" };
			rb_->pub.rank = (int32_t)r;
			rb_->has_rank = true;
		} else if (key == "world_size") {
			int64_t w = get_int(v, "expected an integer distributedInfo.world_size");
			rb_->pub.world_size = w > 0 && w <= INT32_MAX ? (int32_t)w : -1;
		} else if (key == "backend") {
			rb_->pub.backend = intern(v.get_string());
		} else if (key == "pg_config") {
			for (auto pg : v.get_array()) {
				struct orr_comm c = {};
				c.size = -1;
				for (auto f : pg.get_object()) {
					string_view k = f.unescaped_key();
					ondemand::value x = f.value();
					if (k == "pg_name")
						c.name = x.type() == ondemand::json_type::string
								 ? intern(x.get_string())
								 : intern(x.raw_json_token());
					else if (k == "pg_desc")
						c.desc = intern(x.get_string());
					else if (k == "backend_config")
						c.backend = intern(x.get_string());
					else if (k == "pg_size")
						c.size = int32_in(x, "expected integer pg_size", 1,
								  -1);
					else if (k == "ranks")
						members(x, k, &c.first_member, &c.nmembers);
				}
				values_fit();
				*(struct orr_comm *)orr__vec_push(&rb_->comms) = c;
			}
		}
	}
}

void kineto_parser::device_properties(ondemand::array arr)
{
	for (auto dev : arr) {
		struct orr_device d = {};
		d.id = -1;
		for (auto f : dev.get_object()) {
			string_view k = f.unescaped_key();
			ondemand::value x = f.value();
			if (k == "id")
				d.id = int32_in(x, "expected integer device id", 0, -1);
			else if (k == "name")
				d.name = intern(x.get_string());
			else if (k == "numSms")
				d.num_sms = int32_in(x, "expected integer numSms", 1, 0);
			else if (k == "computeMajor")
				d.compute_major =
					int32_in(x, "expected integer computeMajor", 0, 0);
			else if (k == "computeMinor")
				d.compute_minor =
					int32_in(x, "expected integer computeMinor", 0, 0);
			else if (k == "totalGlobalMem")
				d.total_mem_bytes = std::max<int64_t>(
					get_int(x, "expected integer totalGlobalMem"), 0);
		}
		*(struct orr_device *)orr__vec_push(&rb_->devices) = d;
	}
}

/*
 * One entry of "orreryRanks" (a file of several ranks): the Kineto header keys of one
 * of its ranks, read into a rank of its own.
 */
void kineto_parser::declared_rank(ondemand::object obj)
{
	struct orr__rank_build *file = rb_;

	rb_ = orr__rank_new_part(file);
	try {
		for (auto field : obj) {
			string_view key = field.unescaped_key();
			ondemand::value v = field.value();

			if (key == "distributedInfo") {
				distributed_info(v.get_object());
			} else if (key == "deviceProperties") {
				device_properties(v.get_array());
			} else if (key == "baseTimeNanoseconds") {
				if (v.get_int64().get(rb_->pub.base_time_ns) != SUCCESS)
					throw bad_event{
						"expected an integer 'baseTimeNanoseconds'"
					};
				rb_->has_base = true;
			}
		}
	} catch (...) {
		rb_ = file;
		throw;
	}
	rb_ = file;
}

} /* namespace orr__kineto */
