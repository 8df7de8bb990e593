/* SPDX-License-Identifier: MIT */
/*
 * Import limits (docs/limits.md).  They bound what a small or hostile input can make the
 * importer read and allocate: a 26 KB native file that decompresses to gigabytes, a
 * compressed file of whitespace, an archive of many such members.  The defaults leave
 * real jobs far inside them; each can be raised by its option or environment variable,
 * and every refusal says which and how.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static const char *const env_names[] = {
#define ORR__LIMIT_ENV(name, env, def, what) env,
	ORR__LIMITS(ORR__LIMIT_ENV)
#undef ORR__LIMIT_ENV
};

static const uint64_t defaults[] = {
#define ORR__LIMIT_DEF(name, env, def, what) def,
	ORR__LIMITS(ORR__LIMIT_DEF)
#undef ORR__LIMIT_DEF
};

static const char *const whats[] = {
#define ORR__LIMIT_WHAT(name, env, def, what) what,
	ORR__LIMITS(ORR__LIMIT_WHAT)
#undef ORR__LIMIT_WHAT
};

/* "123", "64K", "4G": a positive count, the suffix a power of 1024. */
static bool parse_count(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	case 'T':
	case 't':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return false;
	}
	if (shift && *++p)
		return false;
	if (v == 0 || v > UINT64_MAX >> shift)
		return false;
	*ret = v << shift;
	return true;
}

/*
 * simdjson's parsers allocate their stacks for the whole depth at once (some 16 bytes a
 * level), so a depth of 2^40 was an allocation of 16 TB and "out of memory" for every
 * file: at most ORR__MAX_DEPTH_CEILING, 64 times the default, a megabyte of stacks.
 */
#define ORR__MAX_DEPTH_CEILING 65536

static int depth_fits(const struct orr__limits *l, struct orr_diag *diag)
{
	if (l->max[ORR__LIMIT_DEPTH] <= ORR__MAX_DEPTH_CEILING)
		return 0;
	return orr_diag_set(diag, -EINVAL, "", -1, -1,
			    "%s=%llu: at most %d (the JSON parsers' stacks are allocated for the "
			    "whole depth)",
			    env_names[ORR__LIMIT_DEPTH],
			    (unsigned long long)l->max[ORR__LIMIT_DEPTH], ORR__MAX_DEPTH_CEILING);
}

int orr__limits_init(struct orr__limits *l, const struct orr_import_options *opts,
		     struct orr_diag *diag)
{
	*l = (struct orr__limits){ 0 };
	for (size_t i = 0; i < ORR__LIMIT_COUNT; i++) {
		const char *env = getenv(env_names[i]);

		l->max[i] = defaults[i];
		if (env && *env && !parse_count(env, &l->max[i]))
			return orr_diag_set(diag, -EINVAL, "", -1, -1,
					    "%s='%.64s': expected a positive integer, optionally "
					    "followed by K, M, G or T",
					    env_names[i], env);
	}
	if (opts && opts->max_events)
		l->max[ORR__LIMIT_EVENTS] = opts->max_events;
	/* Events, nodes and values are indexed by 32 bits. */
	if (l->max[ORR__LIMIT_EVENTS] > UINT32_MAX - 1)
		l->max[ORR__LIMIT_EVENTS] = UINT32_MAX - 1;
	/*
	 * Dimensions, strides, inputs and members too (orr_input.first_dim ...): past 2^32 - 2
	 * they would wrap, however large ORR_MAX_FILE_BYTES lets a file be.
	 */
	if (l->max[ORR__LIMIT_VALUES] > UINT32_MAX - 1)
		return orr_diag_set(diag, -EINVAL, "", -1, -1,
				    "%s=%llu: at most %u (orrery indexes them with 32 bits)",
				    env_names[ORR__LIMIT_VALUES],
				    (unsigned long long)l->max[ORR__LIMIT_VALUES], UINT32_MAX - 1);
	if (!opts)
		return depth_fits(l, diag);
	if (opts->max_bytes)
		l->max[ORR__LIMIT_FILE_BYTES] = opts->max_bytes;
	if (opts->max_run_bytes)
		l->max[ORR__LIMIT_RUN_BYTES] = opts->max_run_bytes;
	if (opts->max_ranks)
		l->max[ORR__LIMIT_RANKS] = opts->max_ranks;
	if (opts->max_places)
		l->max[ORR__LIMIT_PLACES] = opts->max_places;
	if (opts->max_string_bytes)
		l->max[ORR__LIMIT_STRING_BYTES] = opts->max_string_bytes;
	if (opts->max_depth)
		l->max[ORR__LIMIT_DEPTH] = opts->max_depth;
	if (opts->max_ratio)
		l->max[ORR__LIMIT_RATIO] = opts->max_ratio;
	return depth_fits(l, diag);
}

void orr__limits_for_ranks(const struct orr__limits *l, size_t ranks, struct orr__limits *ret)
{
	static const enum orr__limit scaled[] = { ORR__LIMIT_EVENTS, ORR__LIMIT_PLACES,
						  ORR__LIMIT_VALUES };

	*ret = *l;
	if (ranks < 2)
		return;
	ret->file_ranks = ranks;
	for (size_t i = 0; i < sizeof(scaled) / sizeof(scaled[0]); i++) {
		uint64_t m = l->max[scaled[i]];

		/* a rank's event, place and value indices are 32 bits, the file's too */
		ret->max[scaled[i]] = m > (UINT32_MAX - 1) / ranks ? UINT32_MAX - 1 : m * ranks;
	}
}

int orr__limit_fail_rank(const struct orr__limits *l, enum orr__limit which, struct orr_diag *diag,
			 const char *file, int32_t rank)
{
	return orr_diag_set(diag, ORR_ETOOBIG, file, -1, -1,
			    "rank %d: more than %llu %s: raise the limit %s to read it", rank,
			    (unsigned long long)l->max[which], whats[which], env_names[which]);
}

int orr__limit_fail(const struct orr__limits *l, enum orr__limit which, struct orr_diag *diag,
		    const char *file, int64_t offset, int64_t event)
{
	bool per_rank = which == ORR__LIMIT_EVENTS || which == ORR__LIMIT_PLACES ||
			which == ORR__LIMIT_VALUES;

	if (l->file_ranks > 1 && per_rank && l->max[which] < UINT32_MAX - 1)
		return orr_diag_set(diag, ORR_ETOOBIG, file, offset, event,
				    "more than %llu %s on average over its %llu ranks, read as one "
				    "before it is split: raise the limit %s to read it",
				    (unsigned long long)(l->max[which] / l->file_ranks),
				    whats[which], (unsigned long long)l->file_ranks,
				    env_names[which]);
	if (l->file_ranks > 1 && per_rank) {
		/* The whole file's count reached 32 bits: no limit raises that. */
		int n = (int)(strlen(whats[which]) - strlen(" in one rank"));

		return orr_diag_set(diag, ORR_ETOOBIG, file, offset, event,
				    "more than %llu %.*s in its %llu ranks together, read as one "
				    "before it is split: orrery indexes them with 32 bits; write a "
				    "file per rank",
				    (unsigned long long)l->max[which], n, whats[which],
				    (unsigned long long)l->file_ranks);
	}
	if (which == ORR__LIMIT_VALUES && l->max[which] == UINT32_MAX - 1)
		return orr_diag_set(diag, ORR_ETOOBIG, file, offset, event,
				    "more than %llu %s: orrery indexes them with 32 bits",
				    (unsigned long long)l->max[which], whats[which]);
	return orr_diag_set(diag, ORR_ETOOBIG, file, offset, event,
			    "more than %llu %s: raise the limit %s to read it",
			    (unsigned long long)l->max[which], whats[which], env_names[which]);
}
