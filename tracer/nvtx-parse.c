/* SPDX-License-Identifier: MIT */
/*
 * NVTX range names as torch.autograd.profiler.emit_nvtx writes them (PyTorch's
 * getNvtxStr): "NAME[, seq = N][, op_id = N][, sizes = [[d, ...], ...]][, input_op_ids = ...]".
 * The name ends where the first of those fields begins, so a name that itself holds
 * ", " stays whole.  Shapes are two levels of lists of integers; anything else leaves
 * the shapes out rather than guessing.
 */
#include <string.h>

#include "internal.h"
#include "banned.h"

static const char *const fields[] = { ", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = " };

/* The earliest emit_nvtx field in s, or NULL. */
static const char *first_field(const char *s)
{
	const char *first = NULL;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *p = strstr(s, fields[i]);

		if (p && (!first || p < first))
			first = p;
	}
	return first;
}

static bool parse_int(const char **ps, int64_t *ret)
{
	const char *p = *ps;
	int64_t v = 0;
	bool neg = *p == '-';

	p += neg;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*ret = neg ? -v : v;
	*ps = p;
	return true;
}

static void skip_spaces(const char **ps)
{
	while (**ps == ' ')
		(*ps)++;
}

/* One "[d, d, ...]" into the next input; false when malformed or over the limits. */
static bool parse_shape(const char **ps, struct orr__nvtx_name *n)
{
	const char *p = *ps;
	struct orr_native_input *in;
	int64_t d;

	if (*p++ != '[' || n->ninputs == ORR__NVTX_MAX_INPUTS)
		return false;
	in = &n->inputs[n->ninputs++];
	*in = (struct orr_native_input){ .dims = &n->dims[n->ndims], .dtype = ORR_STR_NONE };
	skip_spaces(&p);
	while (*p != ']') {
		if (in->ndims && *p++ != ',')
			return false;
		skip_spaces(&p);
		if (!parse_int(&p, &d) || n->ndims == ORR__NVTX_MAX_DIMS || in->ndims == UINT16_MAX)
			return false;
		n->dims[n->ndims++] = d;
		in->ndims++;
		skip_spaces(&p);
	}
	*ps = p + 1;
	return true;
}

static void parse_sizes(const char *p, struct orr__nvtx_name *n)
{
	if (*p++ != '[')
		return;
	skip_spaces(&p);
	while (*p != ']') {
		if (n->ninputs && *p++ != ',')
			goto bad;
		skip_spaces(&p);
		if (!parse_shape(&p, n))
			goto bad;
		skip_spaces(&p);
	}
	return;
bad:
	n->ninputs = 0;
	n->ndims = 0;
}

void orr__nvtx_parse(const char *s, struct orr__nvtx_name *ret)
{
	const char *end = first_field(s), *p;
	int64_t v;

	ret->name = s;
	ret->len = end ? (size_t)(end - s) : strlen(s);
	ret->emit_nvtx = end != NULL;
	ret->seq = -1;
	ret->ninputs = 0;
	ret->ndims = 0;
	if (!end)
		return;
	p = strstr(end, fields[0]);
	if (p == end) {
		p += strlen(fields[0]);
		if (parse_int(&p, &v) && v >= 0)
			ret->seq = v;
	}
	p = strstr(end, fields[2]);
	if (p)
		parse_sizes(p + strlen(fields[2]), ret);
}
