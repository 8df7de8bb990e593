/* SPDX-License-Identifier: MIT */
/*
 * Lists of tensors without an execution trace (docs/orrery-compose.md, "Without an
 * execution trace").  PyTorch 2.x's profiler records each member's shape and strides of
 * a list argument ("Input Dims": [[8, 1024, 1024], [8, 1024, 1024]]), but its type is
 * "TensorList", without a dtype.  The members' dtype is taken where the trace shows it:
 * the element size the op's kernel is compiled for, when its name carries one (ATen's
 * cat kernels, CatArrayBatchedCopy*<OpaqueType<N>, ...>, are instantiated per element
 * size, not per dtype: at::native's cat_out_cuda dispatches on sizeof(scalar_t)), and the
 * one tensor dtype of that size the rank's ops recorded (c10::BFloat16 for 2 bytes in a
 * bf16 autocast job).  Where the kernel shows no size, or the rank recorded no dtype or
 * several of that size (float and int, 4 bytes), the op stays a stand-in.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MAX_SIZE 8

struct xkernel {
	int64_t xid;
	uint32_t name;
};

struct orr__compose_lists {
	struct xkernel *k; /* the rank's kernels by external id */
	size_t nk;
	/* per element size: the one tensor dtype (interned) of that size, else ORR_STR_NONE */
	uint32_t by_size[MAX_SIZE + 1];
};

static int by_xid(const void *a, const void *b)
{
	const struct xkernel *x = a, *y = b;

	if (x->xid != y->xid)
		return (x->xid > y->xid) - (x->xid < y->xid);
	return (x->name > y->name) - (x->name < y->name);
}

/* The tensor dtype of each element size r's ops recorded, when there is one only. */
static void dtypes_by_size(const struct orr_trace *t, const struct orr_rank *r, uint32_t *by_size)
{
	bool several[MAX_SIZE + 1] = { false };

	for (size_t i = 0; i <= MAX_SIZE; i++)
		by_size[i] = ORR_STR_NONE;
	for (size_t i = 0; i < r->ninputs; i++) {
		const char *name = orr_trace_str(t, r->inputs[i].dtype);
		int size;

		if (r->inputs[i].is_list || r->inputs[i].dtype == ORR_STR_NONE ||
		    !orr__compose_dtype(name))
			continue;
		size = orr_dtype_bytes(name);
		if (size <= 0 || size > MAX_SIZE || several[size])
			continue;
		/* one string per distinct name: interned ids compare as the names */
		if (by_size[size] == ORR_STR_NONE)
			by_size[size] = r->inputs[i].dtype;
		else if (by_size[size] != r->inputs[i].dtype)
			several[size] = true;
	}
	for (size_t i = 0; i <= MAX_SIZE; i++)
		if (several[i])
			by_size[i] = ORR_STR_NONE;
}

struct orr__compose_lists *orr__compose_lists_new(const struct orr_trace *t,
						  const struct orr_rank *r)
{
	struct orr__compose_lists *l = orr_xcalloc(1, sizeof(*l));
	size_t cap = 0;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct orr_event *e = &r->events[i];

		if (e->kind != ORR_EVENT_KERNEL || e->external_id < 0)
			continue;
		ORR_VEC_PUSH(l->k, l->nk, cap, ((struct xkernel){ e->external_id, e->name }));
	}
	if (l->nk)
		qsort(l->k, l->nk, sizeof(*l->k), by_xid);
	dtypes_by_size(t, r, l->by_size);
	return l;
}

void orr__compose_lists_free(struct orr__compose_lists *l)
{
	if (!l)
		return;
	free(l->k);
	free(l);
}

/* N of "OpaqueType<N" in a kernel's name (u or > after it); 0 for none. */
static int opaque_size(const char *name)
{
	const char *p = strstr(name, "OpaqueType<");
	int n = 0;

	if (!p)
		return 0;
	for (p += strlen("OpaqueType<"); *p >= '0' && *p <= '9' && n <= MAX_SIZE; p++)
		n = n * 10 + (*p - '0');
	return (*p == 'u' || *p == '>') && n <= MAX_SIZE ? n : 0;
}

/* The element size op e's kernels are compiled for, or 0 when none says (or they differ). */
static int kernel_size(const struct orr__compose_lists *l, const struct orr_trace *t,
		       const struct orr_event *e)
{
	size_t lo = 0, hi = l->nk;
	int size = 0;

	if (e->external_id < 0)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->k[mid].xid < e->external_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->nk && l->k[lo].xid == e->external_id; lo++) {
		int n = opaque_size(orr_trace_str(t, l->k[lo].name));

		if (n && size && n != size)
			return 0;
		if (n)
			size = n;
	}
	return size;
}

uint32_t orr__compose_list_dtype(const struct orr__compose_lists *l, const struct orr_trace *t,
				 const struct orr_event *e)
{
	int size = l ? kernel_size(l, t, e) : 0;

	return size ? l->by_size[size] : ORR_STR_NONE;
}

bool orr__compose_list_members(const int64_t *v, uint32_t n)
{
	uint32_t i = 0, members = 0;

	while (i < n) {
		if (v[i] < 0 || v[i] > ORR_COMPOSE_MAX_DIMS || v[i] > (int64_t)(n - i - 1))
			return false;
		i += 1 + (uint32_t)v[i];
		members++;
	}
	return members > 0;
}
