/* SPDX-License-Identifier: MIT */
/*
 * The collective model: t(S, n) = α + S·F(n) / B, per collective type and link class,
 * with S the whole buffer and F(n) the bus-bandwidth factor of nccl-tests
 * (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
 * reduce-scatter and all-to-all, 1 for broadcast, reduce and point-to-point.  B is then
 * the bus bandwidth nccl-tests reports, the same for every n on one fabric when the
 * algorithm keeps every link busy (ring and tree on NVLink/NVSwitch; notes/estimator.md
 * B.2), which is what lets a model fitted on some group sizes predict others.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

static const struct {
	const char *prefix; /* of the name lowercased, without "nccl:", '_', '-' and ' ' */
	enum orr_coll_kind kind;
} kinds[] = {
	/* Longest first where one prefixes another ("reduce" of "reducescatter"). */
	{ "allreduce", ORR_COLL_ALL_REDUCE },
	{ "allgather", ORR_COLL_ALL_GATHER },
	{ "reducescatter", ORR_COLL_REDUCE_SCATTER },
	{ "alltoall", ORR_COLL_ALL_TO_ALL },
	{ "broadcast", ORR_COLL_BROADCAST },
	{ "reduce", ORR_COLL_REDUCE },
	{ "sendrecv", ORR_COLL_SEND_RECV },
	{ "send", ORR_COLL_SEND_RECV },
	{ "recv", ORR_COLL_SEND_RECV },
};

static const char *const kind_names[ORR_COLL_KIND_COUNT] = {
	[ORR_COLL_ALL_REDUCE] = "AllReduce",         [ORR_COLL_ALL_GATHER] = "AllGather",
	[ORR_COLL_REDUCE_SCATTER] = "ReduceScatter", [ORR_COLL_ALL_TO_ALL] = "AllToAll",
	[ORR_COLL_BROADCAST] = "Broadcast",          [ORR_COLL_REDUCE] = "Reduce",
	[ORR_COLL_SEND_RECV] = "SendRecv",
};

enum orr_coll_kind orr_coll_kind_of(const char *type)
{
	char norm[64];
	size_t n = 0;

	if (!type)
		return ORR_COLL_UNKNOWN;
	if (strncmp(type, "nccl:", 5) == 0)
		type += 5;
	for (; *type && n + 1 < sizeof(norm); type++)
		if (*type != '_' && *type != '-' && *type != ' ')
			norm[n++] = (char)tolower((unsigned char)*type);
	norm[n] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(norm, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
			return kinds[i].kind;
	return ORR_COLL_UNKNOWN;
}

const char *orr_coll_kind_name(enum orr_coll_kind k)
{
	return k >= 0 && k < ORR_COLL_KIND_COUNT ? kind_names[k] : NULL;
}

double orr_coll_bus_factor(enum orr_coll_kind k, int n)
{
	if (n < 1)
		return 0;
	switch (k) {
	case ORR_COLL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case ORR_COLL_ALL_GATHER:
	case ORR_COLL_REDUCE_SCATTER:
	case ORR_COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	case ORR_COLL_BROADCAST:
	case ORR_COLL_REDUCE:
	case ORR_COLL_SEND_RECV:
		return 1.0;
	default:
		return 0;
	}
}

static int cmp_bytes(const void *a, const void *b)
{
	double x = ((const struct orr_coll_sample *)a)->bytes;
	double y = ((const struct orr_coll_sample *)b)->bytes;

	return (x > y) - (x < y);
}

/* Features of one sample: [1, n, S·F(n)] with a per-rank latency, else [1, S·F(n)]. */
static void features(const struct orr_coll_model *m, const struct orr_coll_sample *s, double *row)
{
	size_t k = 0;

	row[k++] = 1.0;
	if (m->per_rank_latency)
		row[k++] = s->group;
	row[k] = s->bytes * orr_coll_bus_factor(m->kind, s->group);
}

/* Fits band b on samples s[0..n); its per-sample errors go to fit_err and loo. */
/* α, α per rank and the bus bandwidth from the band's fit: what costs files copy. */
void orr__coll_band_derive(struct orr_coll_band *b, bool per_rank)
{
	double inv = b->fit.coef[per_rank ? 2 : 1];

	b->alpha_ns = b->fit.coef[0];
	b->alpha_rank_ns = per_rank ? b->fit.coef[1] : 0;
	b->bus_bytes_per_s = inv > 0 ? 1e9 / inv : 0;
}

static int fit_band(struct orr_coll_model *m, struct orr_coll_band *b,
		    const struct orr_coll_sample *s, size_t n, double *fit_err, double *loo)
{
	size_t k = m->per_rank_latency ? 3 : 2;
	double *x = malloc(n * (k + 1) * sizeof(*x)), *y;
	int r;

	if (!x)
		return -ENOMEM;
	y = x + k * n;
	for (size_t i = 0; i < n; i++) {
		features(m, &s[i], x + i * k);
		y[i] = s[i].ns;
	}
	r = orr_fit_linear(x, y, n, k, true, &b->fit, loo);
	if (!r) {
		orr__coll_band_derive(b, m->per_rank_latency);
		for (size_t i = 0; i < n; i++)
			fit_err[i] = fabs(orr_fit_eval(&b->fit, x + i * k) / y[i] - 1.0);
		if (b->fit.rank < k || !(b->bus_bytes_per_s > 0))
			m->constrained = false;
	}
	free(x);
	return r;
}

/*
 * Where the band starting at s[i] ends: whole octaves of S until it has min samples of
 * two sizes or more, and to the end when what would be left has fewer than min.
 */
static size_t band_end(const struct orr_coll_sample *s, size_t i, size_t n, size_t min)
{
	size_t j = i;

	while (j < n) {
		int oct = ilogb(s[j].bytes);

		while (j < n && ilogb(s[j].bytes) == oct)
			j++;
		if (j - i >= min && s[j - 1].bytes > s[i].bytes)
			break;
	}
	if (n - j < min)
		j = n;
	return j;
}

int orr_coll_model_fit(enum orr_coll_kind kind, const struct orr_coll_sample *samples, size_t n,
		       struct orr_coll_model *ret)
{
	struct orr_coll_sample *s;
	double *err, *loo;
	size_t min;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	ret->kind = kind;
	if (!orr_coll_kind_name(kind) || n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(samples[i].bytes > 0) || !isfinite(samples[i].bytes) ||
		    !(samples[i].ns > 0) || !isfinite(samples[i].ns) ||
		    orr_coll_bus_factor(kind, samples[i].group) <= 0)
			return -EINVAL;
	s = malloc(n * sizeof(*s) + 2 * n * sizeof(double));
	if (!s)
		return -ENOMEM;
	err = (double *)(void *)(s + n);
	loo = err + n;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_bytes);
	for (size_t i = 1; i < n; i++)
		ret->per_rank_latency |= s[i].group != s[0].group;
	/* Three samples per parameter make a band; octaves merge until they have them. */
	min = 3 * (ret->per_rank_latency ? 3 : 2);
	ret->constrained = true;
	ret->samples = n;
	for (size_t i = 0, j; i < n && !r; i = j) {
		struct orr_coll_band *b = &ret->bands[ret->nbands++];

		j = band_end(s, i, n, min);
		if (ret->nbands == ORR_COLL_MAX_BANDS)
			j = n;
		b->lo_bytes = i ? ldexp(1.0, ilogb(s[i].bytes)) : 0;
		b->hi_bytes = j < n ? ldexp(1.0, ilogb(s[j].bytes)) : INFINITY;
		r = fit_band(ret, b, s + i, j - i, err + i, loo + i);
	}
	if (!r) {
		size_t m = 0;

		orr__median_max(err, n, &ret->fit_median, &ret->fit_max);
		for (size_t i = 0; i < n; i++)
			if (!isnan(loo[i]))
				loo[m++] = loo[i];
		orr__median_max(loo, m, &ret->loo_median, &ret->loo_max);
	}
	free(s);
	return r;
}

/* The band holding bytes (the first or last beyond the samples' range); NULL when none. */
static const struct orr_coll_band *band_of(const struct orr_coll_model *m, double bytes, int group)
{
	if (orr_coll_bus_factor(m->kind, group) <= 0 || !(bytes >= 0))
		return NULL;
	for (size_t i = 0; i < m->nbands; i++)
		if (bytes < m->bands[i].hi_bytes)
			return m->bands[i].bus_bytes_per_s > 0 ? &m->bands[i] : NULL;
	return NULL;
}

double orr_coll_model_time(const struct orr_coll_model *m, double bytes, int group)
{
	const struct orr_coll_band *b = band_of(m, bytes, group);

	if (!b)
		return NAN;
	return b->alpha_ns + b->alpha_rank_ns * group +
	       bytes * orr_coll_bus_factor(m->kind, group) / b->bus_bytes_per_s * 1e9;
}

double orr_coll_model_latency(const struct orr_coll_model *m, double bytes, int group)
{
	const struct orr_coll_band *b = band_of(m, bytes, group);

	return b ? b->alpha_ns + b->alpha_rank_ns * group : NAN;
}
