/* SPDX-License-Identifier: MIT */
/*
 * GEMM samples from a graph (docs/estimator.md, "GEMMs"); the model fitted on them is
 * in gemm-model.c.
 *
 * A kernel is a GEMM's by its name (gemm, gemv, nvjet, split-K's reduction).  Its
 * launch is walked up the thread's call tree to the innermost op that multiplies
 * matrices, whose Input Dims give M, N, K and the batch.  Autograd's backward nodes
 * (AddmmBackward0, MmBackward0, BmmBackward0, CompiledFunctionBackward) record only
 * the gradient they receive; the aten::mm and aten::bmm they call record the data- and
 * weight-gradient GEMMs' operands, so those are the ops read, and backward GEMMs need
 * no rule of their own.  An op's GEMM kernels are one sample, their times summed:
 * split-K's reduction kernel is part of its GEMM.  The other kernels a
 * matrix-multiply op launches (cuBLASLt's bias epilogue, a scaling kernel, copies) are
 * not GEMMs and are left out.
 *
 * Convolutions run implicit GEMMs (cuDNN's kernels, and CUTLASS GEMMs inside
 * cudnn_convolution): the walk finds no matrix-multiply op around them, and names
 * that say cudnn, conv or implicit_gemm are not counted as GEMMs at all.
 *
 * The family is the kernel's name up to its tile size, which leaves the library, the
 * architecture and the math (cutlass_80_tensorop_s1688gemm, ampere_fp16_s16816gemm_fp16,
 * volta_sgemm).  cuBLAS picks the tile by shape, so a shape a what-if asks for may get
 * another tile of the same family, and per-tile classes leave most of a trace's
 * kernels with one or two shapes, too few to fit (docs/estimator.md has the numbers).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "banned.h"

/* ---- kernel names ---- */

static bool contains(const char *s, const char *word)
{
	return strcasestr(s, word) != NULL;
}

/* "gemm" or "gemv" anywhere but in fbgemm (FBGEMM's embedding and permute kernels). */
static bool names_gemm(const char *name)
{
	for (const char *s = name; (s = strcasestr(s, "gem")); s++)
		if ((s[3] == 'm' || s[3] == 'M' || s[3] == 'v' || s[3] == 'V') &&
		    !(s - name >= 2 && strncasecmp(s - 2, "fb", 2) == 0))
			return true;
	return false;
}

static bool is_reduction(const char *name)
{
	return contains(name, "splitKreduce");
}

static bool is_gemm_kernel(const char *name)
{
	if (contains(name, "cudnn") || contains(name, "conv") || contains(name, "implicit_gemm"))
		return false;
	return names_gemm(name) || contains(name, "nvjet") || is_reduction(name);
}

/* Whether s[0..n) is one C identifier (a CUTLASS kernel's name as a template argument). */
static bool one_identifier(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return n > 0;
}

static void copy(char *buf, size_t size, const char *s, size_t n)
{
	if (!size)
		return;
	n = n < size - 1 ? n : size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The length of s[0..n) before its first tile size ("_128x64", "tilesize192x128"),
 * without the separator before it; n when it names none.
 */
static size_t before_tiles(const char *s, size_t n)
{
	for (size_t i = 1, j; i < n; i++) {
		size_t cut = i;

		if (!is_digit(s[i]) || is_digit(s[i - 1]))
			continue;
		for (j = i; j < n && is_digit(s[j]);)
			j++;
		if (j + 1 >= n || s[j] != 'x' || !is_digit(s[j + 1]))
			continue;
		if (cut >= 8 && strncmp(s + cut - 8, "tilesize", 8) == 0)
			cut -= 8;
		while (cut && s[cut - 1] == '_')
			cut--;
		return cut ? cut : n;
	}
	return n;
}

bool orr_gemm_kernel_family(const char *kernel_name, char *buf, size_t size)
{
	char base[ORR_GEMM_FAMILY_MAX];
	const char *arg = NULL; /* the last top-level token's first template argument list */
	size_t nbase = 0, narg = 0;
	int depth = 0;

	if (!is_gemm_kernel(kernel_name))
		return false;
	/* Characters outside <...>, up to the argument list; a space ends a return type. */
	for (const char *s = kernel_name; *s; s++) {
		if (*s == '<') {
			if (depth++ == 0 && !arg)
				arg = s + 1;
		} else if (*s == '>' && depth > 0) {
			if (--depth == 0 && !narg)
				narg = (size_t)(s - arg);
		} else if (depth == 0 && *s == '(') {
			break;
		} else if (depth == 0 && *s == ' ') {
			nbase = narg = 0;
			arg = NULL;
		} else if (depth == 0 && nbase + 1 < sizeof(base)) {
			base[nbase++] = *s;
		}
	}
	if (arg && one_identifier(arg, narg) && names_gemm(arg))
		copy(buf, size, arg, before_tiles(arg, narg));
	else
		copy(buf, size, base, before_tiles(base, nbase));
	return true;
}

/* ---- shapes ---- */

enum mm_kind { MM_2D, MM_BATCHED, MM_MATMUL, MM_LINEAR };

static const struct mm_op {
	const char *name;
	enum mm_kind kind;
	uint32_t first; /* the input that is operand A */
} mm_ops[] = {
	{ "aten::mm", MM_2D, 0 },         { "aten::addmm", MM_2D, 1 },
	{ "aten::addmm_", MM_2D, 1 },     { "aten::_scaled_mm", MM_2D, 0 },
	{ "aten::bmm", MM_BATCHED, 0 },   { "aten::baddbmm", MM_BATCHED, 1 },
	{ "aten::matmul", MM_MATMUL, 0 }, { "aten::linear", MM_LINEAR, 0 },
};

static const struct mm_op *mm_op_of(const char *name)
{
	for (size_t i = 0; i < sizeof(mm_ops) / sizeof(mm_ops[0]); i++)
		if (strcmp(name, mm_ops[i].name) == 0)
			return &mm_ops[i];
	return NULL;
}

struct operand {
	const int64_t *d;
	size_t n;
	uint32_t dtype;
};

/* Input i of op event e; false when it is absent or a list. */
static bool operand_of(const struct orr_rank *r, const struct orr_event *e, uint32_t i,
		       struct operand *ret)
{
	const struct orr_op_args *a;
	const struct orr_input *in;

	if (e->kind != ORR_EVENT_OP || e->args >= r->nops)
		return false;
	a = &r->ops[e->args];
	if (i >= a->ninputs || a->first_input + i >= r->ninputs)
		return false;
	in = &r->inputs[a->first_input + i];
	if (in->is_list || (size_t)in->first_dim + in->ndims > r->ndims)
		return false;
	*ret = (struct operand){ r->dims + in->first_dim, in->ndims, in->dtype };
	return true;
}

/* The product of d[0..n), or -1 when a factor is not positive or it overflows. */
static int64_t product(const int64_t *d, size_t n)
{
	int64_t p = 1;

	for (size_t i = 0; i < n; i++)
		if (d[i] <= 0 || __builtin_mul_overflow(p, d[i], &p))
			return -1;
	return p;
}

struct shape {
	int64_t b, m, n, k;
};

/*
 * torch.matmul by rank: a 1-D operand is a vector (M or N is 1); a 2-D B folds A's
 * leading dimensions into M; otherwise the leading dimensions are the batch, broadcast
 * (the larger product of the two).
 */
static bool matmul_shape(const struct operand *a, const struct operand *b, struct shape *s)
{
	int64_t ba, bb;

	if (!a->n || !b->n || a->d[a->n - 1] != b->d[b->n == 1 ? 0 : b->n - 2])
		return false;
	s->k = a->d[a->n - 1];
	s->n = b->n == 1 ? 1 : b->d[b->n - 1];
	if (b->n <= 2) {
		s->b = 1;
		s->m = product(a->d, a->n - 1);
		return true;
	}
	s->m = a->n == 1 ? 1 : a->d[a->n - 2];
	ba = a->n > 2 ? product(a->d, a->n - 2) : 1;
	bb = product(b->d, b->n - 2);
	s->b = ba > bb ? ba : bb;
	return ba > 0 && bb > 0;
}

static bool read_shape(enum mm_kind kind, const struct operand *a, const struct operand *b,
		       struct shape *s)
{
	*s = (struct shape){ 0 };
	switch (kind) {
	case MM_2D: /* [M, K]·[K, N] */
		if (a->n != 2 || b->n != 2 || a->d[1] != b->d[0])
			return false;
		*s = (struct shape){ 1, a->d[0], b->d[1], a->d[1] };
		break;
	case MM_BATCHED: /* [B, M, K]·[B, K, N] */
		if (a->n != 3 || b->n != 3 || a->d[0] != b->d[0] || a->d[2] != b->d[1])
			return false;
		*s = (struct shape){ a->d[0], a->d[1], b->d[2], a->d[2] };
		break;
	case MM_LINEAR: /* input [.., K], weight [N, K] */
		if (!a->n || b->n != 2 || a->d[a->n - 1] != b->d[1])
			return false;
		*s = (struct shape){ 1, product(a->d, a->n - 1), b->d[0], b->d[1] };
		break;
	case MM_MATMUL:
		if (!matmul_shape(a, b, s))
			return false;
		break;
	}
	return s->b > 0 && s->m > 0 && s->n > 0 && s->k > 0;
}

bool orr__dtype_of(const char *name, enum orr_dtype *ret)
{
	static const struct {
		const char *name;
		enum orr_dtype t;
	} table[] = {
		{ "float", ORR_DTYPE_FP32 },        { "Float", ORR_DTYPE_FP32 },
		{ "double", ORR_DTYPE_FP64 },       { "Double", ORR_DTYPE_FP64 },
		{ "Half", ORR_DTYPE_FP16 },         { "BFloat16", ORR_DTYPE_BF16 },
		{ "Float8_e4m3fn", ORR_DTYPE_FP8 }, { "Float8_e5m2", ORR_DTYPE_FP8 },
		{ "Char", ORR_DTYPE_INT8 },
	};

	if (strncmp(name, "c10::", 5) == 0)
		name += 5;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(name, table[i].name) == 0) {
			*ret = table[i].t;
			return true;
		}
	return false;
}

/* FP32 operands on tensor cores run as TF32: CUTLASS's and cuBLAS's names say so. */
static enum orr_dtype math_of(enum orr_dtype t, const char *family)
{
	static const char *const tensor[] = { "tf32", "tensorop", "s1688", "s16816", "xmma" };

	for (size_t i = 0; t == ORR_DTYPE_FP32 && i < sizeof(tensor) / sizeof(tensor[0]); i++)
		if (contains(family, tensor[i]))
			return ORR_DTYPE_TF32;
	return t;
}

bool orr__op_has_shapes(const struct orr_rank *r, const struct orr_event *e)
{
	const struct orr_op_args *a =
		e->kind == ORR_EVENT_OP && e->args < r->nops ? &r->ops[e->args] : NULL;

	/* a tensor's shape; a list of tensors' members (traces/kineto/) are not counted */
	for (uint32_t i = 0; a && i < a->ninputs && a->first_input + i < r->ninputs; i++)
		if (r->inputs[a->first_input + i].ndims && !r->inputs[a->first_input + i].is_list)
			return true;
	return false;
}

/* The shape and dtype of matrix-multiply op e into s; false when it has none usable. */
static bool op_shape(const struct orr_trace *t, const struct orr_rank *r, const struct mm_op *op,
		     const struct orr_event *e, struct orr_gemm_sample *s)
{
	struct operand a, b;
	struct shape sh;
	double e_bytes;

	if (!operand_of(r, e, op->first, &a) || !operand_of(r, e, op->first + 1, &b) ||
	    !read_shape(op->kind, &a, &b, &sh) || a.dtype == ORR_STR_NONE ||
	    !orr__dtype_of(orr_trace_str(t, a.dtype), &s->dtype))
		return false;
	s->elem_bytes = orr_dtype_bytes(orr_trace_str(t, a.dtype));
	s->batch = sh.b;
	s->m = sh.m;
	s->n = sh.n;
	s->k = sh.k;
	e_bytes = s->elem_bytes;
	s->flops = 2.0 * (double)sh.b * (double)sh.m * (double)sh.n * (double)sh.k;
	s->bytes = e_bytes * (double)sh.b *
		   ((double)sh.m * (double)sh.k + (double)sh.k * (double)sh.n +
		    (double)sh.m * (double)sh.n);
	return s->elem_bytes > 0;
}

/* ---- from a graph ---- */

/* A GEMM kernel (GPU task) and the matrix-multiply op around its launch. */
struct hit {
	uint32_t op, task;
};

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

/* The innermost matrix-multiply op around GPU task t's launch, or ORR_NONE. */
static uint32_t mm_op_around(const struct orr_graph *g, const struct orr_rank *r,
			     const uint32_t *parent, uint32_t t)
{
	uint32_t e = orr__launch_event(g, t);

	if (e == ORR_NONE || e >= r->nevents)
		return ORR_NONE;
	for (int depth = 0; depth < 64 && (e = parent[e]) != ORR_NONE; depth++) {
		const struct orr_event *ev = &r->events[e];

		if (ev->kind == ORR_EVENT_OP &&
		    mm_op_of(orr_trace_str(orr_graph_trace(g), ev->name)))
			return e;
	}
	return ORR_NONE;
}

/* The sample of op h[0].op and its kernels h[0..n); false when it gives none. */
static bool sample_of(const struct orr_graph *g, const struct orr_rank *r, const struct hit *h,
		      size_t n, struct orr_gemm_sample *s, struct orr_gemm_counts *c)
{
	const struct orr_trace *t = orr_graph_trace(g);
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_event *op = &r->events[h[0].op];
	const char *first = NULL;

	memset(s, 0, sizeof(*s));
	c->ops++;
	if (!orr__op_has_shapes(r, op)) {
		c->no_shapes++;
		return false;
	}
	s->op = orr_trace_str(t, op->name);
	if (!op_shape(t, r, mm_op_of(s->op), op, s)) {
		c->bad_shapes++;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = orr_graph_task_name(g, h[i].task);

		if (!first || (is_reduction(first) && !is_reduction(name)))
			first = name;
		s->ns += (double)tasks[h[i].task].dur_ns;
	}
	if (is_reduction(first) || !(s->ns > 0)) {
		c->incomplete++;
		return false;
	}
	orr_gemm_kernel_family(first, s->family, sizeof(s->family));
	s->math = math_of(s->dtype, s->family);
	s->task = h[0].task;
	s->kernels = (uint32_t)n;
	c->samples++;
	return true;
}

/*
 * The GEMM kernels of graph rank ri with the op around each; returns how many.  parent:
 * orr__call_parents() of its rank.
 */
static size_t rank_hits(const struct orr_graph *g, size_t ri, const uint32_t *parent,
			struct hit **ret, struct orr_gemm_counts *c)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, ri);
	const struct orr_task *tasks = orr_graph_tasks(g);
	struct hit *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_event *e = orr_graph_task_event(g, t);
		uint32_t op;

		if (tasks[t].kind != ORR_TASK_GPU || e->kind != ORR_EVENT_KERNEL ||
		    !is_gemm_kernel(orr_graph_task_name(g, t)))
			continue;
		c->kernels++;
		op = mm_op_around(g, gr->rank, parent, t);
		if (op == ORR_NONE)
			c->outside++;
		else
			ORR_VEC_PUSH(v, n, cap, ((struct hit){ op, t }));
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_hit);
	*ret = v;
	return n;
}

/* A backward sample of a rank: its autograd node, its op's start, its index. */
struct grad {
	uint32_t node;
	int64_t start;
	size_t i;
};

static int cmp_grad(const void *a, const void *b)
{
	const struct grad *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/*
 * Each backward sample's autograd node (numbered after *nodes) and its place among the
 * node's GEMMs: a node computes the data gradient before the weight gradient
 * (PyTorch's MmBackward0 and AddmmBackward0 compute mat1's gradient first, Megatron's
 * linear layers grad_input first), which tells them apart where their shapes are the
 * same (T = h, T = f/t).
 */
static void grad_order(struct grad *v, size_t n, struct orr_gemm_sample *s, uint32_t *nodes)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_grad);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].node == v[i].node;)
			j++;
		++*nodes;
		for (size_t k = i; k < j; k++) {
			s[v[k].i].grad_node = *nodes;
			s[v[k].i].grad_index = (uint16_t)(k - i < UINT16_MAX ? k - i : UINT16_MAX);
			s[v[k].i].grad_count = (uint16_t)(j - i < UINT16_MAX ? j - i : UINT16_MAX);
		}
	}
}

size_t orr_gemm_observe(const struct orr_graph *g, struct orr_gemm_sample **ret,
			struct orr_gemm_counts *ret_counts)
{
	struct orr_gemm_sample *v = NULL, s;
	struct orr_gemm_counts c = { 0 };
	size_t n = 0, cap = 0;
	uint32_t nodes = 0;

	for (size_t ri = 0; ri < orr_graph_rank_count(g); ri++) {
		const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
		uint32_t *parent = orr__call_parents(r);
		struct hit *h;
		size_t nh = rank_hits(g, ri, parent, &h, &c);

		struct grad *gv = NULL;
		size_t ng = 0, gcap = 0;

		for (size_t i = 0, j; i < nh; i = j) {
			uint32_t node;

			for (j = i + 1; j < nh && h[j].op == h[i].op;)
				j++;
			if (!sample_of(g, r, h + i, j - i, &s, &c))
				continue;
			node = orr__backward_node(orr_graph_trace(g), r, parent, h[i].op);
			s.backward = node != ORR_NONE;
			if (s.backward)
				ORR_VEC_PUSH(
					gv, ng, gcap,
					((struct grad){ node, r->events[h[i].op].start_ns, n }));
			ORR_VEC_PUSH(v, n, cap, s);
		}
		grad_order(gv, ng, v, &nodes);
		free(gv);
		free(h);
		free(parent);
	}
	if (ret_counts)
		*ret_counts = c;
	*ret = v;
	return n;
}

const struct orr_gpu_spec *orr_gpu_spec_find(const struct orr_graph *g)
{
	const struct orr_trace *t = orr_graph_trace(g);

	for (size_t ri = 0; ri < orr_graph_rank_count(g); ri++) {
		const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
		int32_t dev = -1;

		for (size_t p = 0; p < r->nplaces && dev < 0; p++)
			if (r->places[p].kind == ORR_PLACE_STREAM)
				dev = r->places[p].device;
		for (size_t d = 0; d < r->ndevices; d++)
			if ((r->devices[d].id == dev || dev < 0) &&
			    r->devices[d].name != ORR_STR_NONE)
				return orr_gpu_spec_match(orr_trace_str(t, r->devices[d].name));
	}
	return NULL;
}
