/* SPDX-License-Identifier: MIT */
/*
 * Samples of the kernels that are no GEMM's or collective's (docs/estimator.md,
 * "Kernels other than GEMMs"); the model fitted on them is in kernels-model.c.
 *
 * A kernel's class comes from its name first, because a name that says layer_norm or
 * flash_fwd is the most specific thing the trace knows; then from the ops and
 * annotations around its launch, innermost first, for names that say nothing
 * (PyTorch's elementwise_kernel under an optimizer step, Triton's triton__0d1d2de
 * under the triton_poi_fused_... op Inductor wraps it in).  The rules, in order:
 *
 *   1. copies and memsets by Kineto's names: device-to-device ones and memsets move
 *      bytes inside HBM (copy), the others cross PCIe or NVLink (transfer);
 *   2. names that say what the kernel computes: attention, norm, softmax, optimizer;
 *   3. any kernel under Optimizer.step: a non-fused optimizer is elementwise kernels,
 *      and its time is the optimizer's (what a ZeRO or DP what-if re-times);
 *   4. names of generic kernels: Triton's pointwise / reduction prefixes, copy kernels,
 *      reduce kernels, elementwise kernels and activations;
 *   5. the callers' names, by the same words and PyTorch's op names;
 *   6. other (convolutions' helpers, sorts, embeddings).
 *
 * Words are matched ignoring case and underscores, so "layer_norm" is found in
 * cuApplyLayerNorm and FusedLayerNormAffineFunction alike, and against the kernel's
 * family (no template arguments, where functor names would mislead), except copy_kernel,
 * which PyTorch writes only as a template argument of elementwise_kernel.
 *
 * Bytes are an op's: its launch is walked up to the innermost op that records tensor
 * shapes, and every kernel whose walk ends there is one sample, their times summed (a
 * layer norm's backward is two or three kernels).  The profiler records inputs only:
 * the output is taken as large as the largest input, but for reductions, which write
 * far less than they read.  An op that also launched a GEMM or a collective somewhere
 * below it is a whole module (a TorchScript forward): its inputs say nothing of one
 * kernel, and its kernels give none; so for compiled graphs (op_sample()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "banned.h"

#define MAX_DEPTH 64

const char *orr_kern_class_name(enum orr_kern_class c)
{
	static const char *const names[] = {
		[ORR_KERN_ATTENTION] = "attention", [ORR_KERN_NORM] = "norm",
		[ORR_KERN_SOFTMAX] = "softmax",     [ORR_KERN_ELEMENTWISE] = "elementwise",
		[ORR_KERN_REDUCTION] = "reduction", [ORR_KERN_OPTIMIZER] = "optimizer",
		[ORR_KERN_COPY] = "copy",           [ORR_KERN_TRANSFER] = "transfer",
		[ORR_KERN_OTHER] = "other",
	};

	return (int)c >= 0 && c < ORR_KERN_CLASS_COUNT ? names[c] : NULL;
}

/* ---- names ---- */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Whether s contains word (lowercase, no underscores), ignoring case and '_' in s. */
static bool has_word(const char *s, const char *word)
{
	for (; *s; s++) {
		const char *p = s, *w = word;

		while (*w && *p) {
			if (*p == '_') {
				p++;
				continue;
			}
			if (lower(*p) != *w)
				break;
			p++;
			w++;
		}
		if (!*w)
			return true;
	}
	return false;
}

static bool has_any(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (has_word(s, *words))
			return true;
	return false;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_copy_name(const char *name)
{
	return starts(name, "Memcpy") || starts(name, "Memset");
}

void orr_kern_family(const char *kernel_name, char *buf, size_t size)
{
	static const char anon[] = "(anonymous namespace)";
	char base[ORR_KERN_FAMILY_MAX];
	size_t n = 0;
	int depth = 0;

	if (!size)
		return;
	if (is_copy_name(kernel_name)) {
		snprintf(buf, size, "%s", kernel_name);
		return;
	}
	/* Characters outside <...>, up to the argument list; a space ends a return type. */
	for (const char *s = kernel_name; *s; s++) {
		if (*s == '(' && strncmp(s, anon, sizeof(anon) - 1) == 0) {
			s += sizeof(anon) - 2;
			if (s[1] == ':' && s[2] == ':')
				s += 2;
		} else if (*s == '<') {
			depth++;
		} else if (*s == '>' && depth > 0) {
			depth--;
		} else if (depth == 0 && *s == '(') {
			break;
		} else if (depth == 0 && *s == ' ') {
			n = 0;
		} else if (depth == 0 && n + 1 < sizeof(base)) {
			base[n++] = *s;
		}
	}
	base[n] = '\0';
	snprintf(buf, size, "%s", base);
}

static const char *const attention_words[] = {
	"flashfwd",         "flashbwd", "flashattn",
	"flashattention",   "fmha",     "efficientattention",
	"scaleddotproduct", "sdpa",     "maskedsoftmax",
	"scaledsoftmax",    NULL,
};
static const char *const norm_words[] = {
	"layernorm", "rmsnorm", "batchnorm", "groupnorm", "instancenorm",
	"gammabeta", "bnfw",    "bnbw",      NULL,
};
static const char *const optimizer_words[] = {
	"multitensorapply", "fusedadam", "fusedsgd", "fusedlamb", "adagrad", "optimizer", NULL,
};
static const char *const activation_words[] = {
	"elementwise", "gelu", "relu", "silu", "swiglu", "sigmoid", "tanh", "dropout", NULL,
};

/* The specific classes (rule 2); ORR_KERN_CLASS_COUNT for none. */
static enum orr_kern_class specific(const char *s)
{
	if (has_any(s, attention_words))
		return ORR_KERN_ATTENTION;
	if (has_any(s, norm_words))
		return ORR_KERN_NORM;
	if (has_word(s, "softmax"))
		return ORR_KERN_SOFTMAX;
	if (has_any(s, optimizer_words))
		return ORR_KERN_OPTIMIZER;
	return ORR_KERN_CLASS_COUNT;
}

/* Triton's kernel kinds: Inductor names a kernel (and its op) by what it fuses. */
static enum orr_kern_class triton(const char *s)
{
	if (starts(s, "triton_poi_"))
		return ORR_KERN_ELEMENTWISE;
	if (starts(s, "triton_red_") || starts(s, "triton_per_"))
		return ORR_KERN_REDUCTION;
	return ORR_KERN_CLASS_COUNT;
}

/* The generic kernels (rule 4) by family, and full name for copy_kernel. */
static enum orr_kern_class generic(const char *family, const char *name)
{
	enum orr_kern_class c = triton(family);

	if (c != ORR_KERN_CLASS_COUNT)
		return c;
	if (has_word(name, "copykernel") || has_word(family, "copy"))
		return ORR_KERN_COPY;
	if (has_word(family, "reduce"))
		return ORR_KERN_REDUCTION;
	if (has_any(family, activation_words))
		return ORR_KERN_ELEMENTWISE;
	return ORR_KERN_CLASS_COUNT;
}

/* PyTorch's ops by name (rule 5, after the words). */
static enum orr_kern_class by_op(const char *op)
{
	static const char *const copies[] = { "copy_", "_to_copy", "clone", "contiguous",
					      "cat",   "_cat",     "stack", NULL };
	static const char *const reductions[] = {
		"sum",      "mean",   "amax", "amin",      "max",    "min",
		"argmax",   "argmin", "norm", "var",       "std",    "prod",
		"var_mean", "any",    "all",  "logsumexp", "cumsum", "linalg_vector_norm",
		NULL,
	};
	enum orr_kern_class c = specific(op);

	if (c != ORR_KERN_CLASS_COUNT)
		return c;
	if ((c = triton(op)) != ORR_KERN_CLASS_COUNT)
		return c;
	for (size_t i = 0; starts(op, "aten::") && copies[i]; i++)
		if (strcmp(op + 6, copies[i]) == 0)
			return ORR_KERN_COPY;
	for (size_t i = 0; starts(op, "aten::") && reductions[i]; i++)
		if (strcmp(op + 6, reductions[i]) == 0)
			return ORR_KERN_REDUCTION;
	if (has_any(op, activation_words))
		return ORR_KERN_ELEMENTWISE;
	return ORR_KERN_CLASS_COUNT;
}

enum orr_kern_class orr_kern_classify(const char *kernel_name, const char *const *callers, size_t n)
{
	char family[ORR_KERN_FAMILY_MAX];
	enum orr_kern_class c;

	if (is_copy_name(kernel_name))
		return starts(kernel_name, "Memset") || strstr(kernel_name, "DtoD")
			       ? ORR_KERN_COPY
			       : ORR_KERN_TRANSFER;
	orr_kern_family(kernel_name, family, sizeof(family));
	if ((c = specific(family)) != ORR_KERN_CLASS_COUNT)
		return c;
	for (size_t i = 0; i < n; i++)
		if (starts(callers[i], "Optimizer.step"))
			return ORR_KERN_OPTIMIZER;
	if ((c = generic(family, kernel_name)) != ORR_KERN_CLASS_COUNT)
		return c;
	for (size_t i = 0; i < n; i++)
		if ((c = by_op(callers[i])) != ORR_KERN_CLASS_COUNT)
			return c;
	return ORR_KERN_OTHER;
}

/* ---- bytes and FLOPs of an op ---- */

/* The shape of one tensor input of an op. */
struct tensor {
	const int64_t *d;
	size_t n;
	double bytes;
	uint32_t dtype;
};

/* Input i of op event e when it is a tensor with a shape; bytes < 0: unknown size. */
static bool tensor_of(const struct orr_trace *t, const struct orr_rank *r,
		      const struct orr_event *e, uint32_t i, struct tensor *ret)
{
	const struct orr_op_args *a = &r->ops[e->args];
	const struct orr_input *in;
	double elems = 1;
	int size;

	if (i >= a->ninputs || a->first_input + i >= r->ninputs)
		return false;
	in = &r->inputs[a->first_input + i];
	if (in->is_list || !in->ndims || (size_t)in->first_dim + in->ndims > r->ndims)
		return false;
	*ret = (struct tensor){ r->dims + in->first_dim, in->ndims, -1, in->dtype };
	for (size_t k = 0; k < ret->n; k++) {
		if (ret->d[k] < 0)
			return true;
		elems *= (double)ret->d[k];
	}
	size = in->dtype == ORR_STR_NONE ? 0 : orr_dtype_bytes(orr_trace_str(t, in->dtype));
	if (size > 0)
		ret->bytes = elems * size;
	return true;
}

/*
 * The bytes of op e: its tensor inputs, and an output the size of the largest (the
 * profiler records no outputs); its dtype is the largest's.  False when a tensor's
 * element size is unknown.
 */
static bool op_bytes(const struct orr_trace *t, const struct orr_rank *r, const struct orr_event *e,
		     double *ret_bytes, double *ret_largest, enum orr_dtype *ret_dtype)
{
	const struct orr_op_args *a = &r->ops[e->args];
	double sum = 0, largest = -1;
	uint32_t dtype = ORR_STR_NONE;
	struct tensor x;

	for (uint32_t i = 0; i < a->ninputs; i++) {
		if (!tensor_of(t, r, e, i, &x))
			continue;
		if (x.bytes < 0)
			return false;
		sum += x.bytes;
		if (x.bytes > largest) {
			largest = x.bytes;
			dtype = x.dtype;
		}
	}
	if (dtype == ORR_STR_NONE || !orr__dtype_of(orr_trace_str(t, dtype), ret_dtype))
		*ret_dtype = ORR_DTYPE_COUNT;
	*ret_bytes = sum + largest;
	*ret_largest = largest;
	return largest >= 0;
}

/*
 * FLOPs of an attention op from its first tensor, the query (forward) or the output's
 * gradient (backward), of the same shape when heads have one width: [b, h, s, d] for
 * PyTorch's scaled_dot_product ops, [b, s, h, d] for the flash and memory-efficient
 * kernels' own ops and flash-attn's functions; for others the longer of the two
 * middle dimensions is taken as the sequence (*ret_guessed).  Keys as long as queries.
 */
static double attention_flops(const struct orr_trace *t, const struct orr_rank *r,
			      const struct orr_event *e, const char *family, bool causal,
			      bool *ret_guessed)
{
	static const char *const bshd[] = { "flashattn", "flashattention", "efficientattention",
					    NULL };
	static const char *const backward[] = { "bwd", "backward", "cutlassb", NULL };
	const char *op = orr_trace_str(t, e->name);
	bool sdpa = has_word(op, "scaleddotproduct"), flash = !sdpa && has_any(op, bshd), hsd;
	struct tensor q;
	int64_t h, s;
	double f;

	*ret_guessed = false;
	if (has_word(family, "softmax") || !tensor_of(t, r, e, 0, &q) || q.n != 4)
		return 0;
	hsd = sdpa || (!flash && q.d[1] <= q.d[2]);
	h = q.d[hsd ? 1 : 2];
	s = q.d[hsd ? 2 : 1];
	if (q.d[0] <= 0 || h <= 0 || s <= 0 || q.d[3] <= 0)
		return 0;
	*ret_guessed = !sdpa && !flash;
	f = 4.0 * (double)q.d[0] * (double)h * (double)s * (double)s * (double)q.d[3];
	if (has_any(family, backward) || has_word(op, "backward"))
		f *= 2.5;
	return causal ? 0.5 * f : f;
}

/* ---- from a graph ---- */

/* The ops and annotations around a GPU task's launch, innermost first. */
struct callers {
	const char *names[MAX_DEPTH];
	uint32_t events[MAX_DEPTH];
	size_t n;
	bool any_op;
	bool compiled;   /* a compiled graph's kernel: under CompiledFunction or a
			    Torch-Compiled Region, below or at shaped */
	uint32_t shaped; /* the innermost op that records a tensor shape, or ORR_NONE */
};

/* Inductor's graphs: AOTAutograd's functions, and Dynamo's region around a call. */
static bool is_compiled(const char *name)
{
	return starts(name, "CompiledFunction") || strcmp(name, "Torch-Compiled Region") == 0;
}

static void callers_of(const struct orr_graph *g, const struct orr_rank *r, const uint32_t *parent,
		       uint32_t t, struct callers *c)
{
	uint32_t e = orr__launch_event(g, t);

	c->n = 0;
	c->any_op = c->compiled = false;
	c->shaped = ORR_NONE;
	if (e == ORR_NONE || e >= r->nevents)
		return;
	while (c->n < MAX_DEPTH && (e = parent[e]) != ORR_NONE) {
		const struct orr_event *ev = &r->events[e];

		if (ev->kind != ORR_EVENT_OP && ev->kind != ORR_EVENT_ANNOTATION)
			continue;
		c->names[c->n] = orr_trace_str(orr_graph_trace(g), ev->name);
		c->events[c->n] = e;
		if (c->shaped == ORR_NONE && is_compiled(c->names[c->n]))
			c->compiled = true;
		c->n++;
		if (ev->kind != ORR_EVENT_OP)
			continue;
		c->any_op = true;
		if (c->shaped == ORR_NONE && orr__op_has_shapes(r, ev))
			c->shaped = e;
	}
}

/* A kernel that gives its op's sample. */
struct hit {
	uint32_t op, task;
	enum orr_kern_class cls;
	bool causal, compiled;
};

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

struct out {
	struct orr_kern_sample *v;
	size_t n, cap;
	struct orr_kern_counts c;
};

static void add(struct out *o, const struct orr_kern_sample *s)
{
	ORR_VEC_PUSH(o->v, o->n, o->cap, *s);
	o->c.samples++;
	o->c.samples_by_class[s->cls]++;
	o->c.sampled += s->kernels;
}

/* A copy or memset: its bytes are the trace's. */
static void copy_sample(const struct orr_graph *g, const struct orr_rank *r, uint32_t t,
			const struct callers *cl, enum orr_kern_class cls, struct out *o)
{
	const struct orr_event *e = orr_graph_task_event(g, t);
	int64_t bytes = e->args < r->ncopies ? r->copies[e->args].bytes : -1;
	int64_t ns = orr_graph_tasks(g)[t].dur_ns;
	struct orr_kern_sample s = { .cls = cls,
				     .dtype = ORR_DTYPE_COUNT,
				     .bytes = (double)bytes,
				     .ns = (double)ns,
				     .task = t,
				     .kernels = 1 };

	if (bytes <= 0) {
		o->c.no_bytes++;
		return;
	}
	if (ns <= 0) {
		o->c.no_time++;
		return;
	}
	for (size_t i = 0; i < cl->n && !s.op; i++)
		if (r->events[cl->events[i]].kind == ORR_EVENT_OP)
			s.op = cl->names[i];
	orr_kern_family(orr_graph_task_name(g, t), s.family, sizeof(s.family));
	add(o, &s);
}

/*
 * The sample of op h[0].op and its kernels h[0..n); busy: it launched GEMMs or
 * collectives.  Compiled graphs are composite as well: AOTAutograd's CompiledFunction
 * records the graph's inputs, parameters and (backward) every saved activation, which
 * say nothing of one kernel; an op around a Torch-Compiled Region of several kernels
 * gives the inputs of all of them.  One kernel under such a region (Megatron's
 * compiled GeLU under GeLUFunction) reads and writes what its op gives.
 */
static void op_sample(const struct orr_graph *g, const struct orr_rank *r, const struct hit *h,
		      size_t n, bool busy, struct out *o)
{
	const struct orr_trace *t = orr_graph_trace(g);
	const struct orr_task *tasks = orr_graph_tasks(g);
	const struct orr_event *op = &r->events[h[0].op];
	double by_class[ORR_KERN_CLASS_COUNT] = { 0 };
	struct orr_kern_sample s = { .kernels = (uint32_t)n };
	size_t longest = 0;
	bool causal = false, guessed;
	double output;

	busy |= starts(orr_trace_str(t, op->name), "CompiledFunction");
	for (size_t i = 0; i < n && n > 1; i++)
		busy |= h[i].compiled;
	if (busy) {
		o->c.composite += n;
		return;
	}
	if (!op_bytes(t, r, op, &s.bytes, &output, &s.dtype) || !(s.bytes > 0)) {
		o->c.bad_shapes += n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double ns = (double)tasks[h[i].task].dur_ns;

		s.ns += ns;
		by_class[h[i].cls] += ns;
		if (ns > (double)tasks[h[longest].task].dur_ns)
			longest = i;
		causal |= h[i].causal;
	}
	if (!(s.ns > 0)) {
		o->c.no_time += n;
		return;
	}
	for (int c = 1; c < ORR_KERN_CLASS_COUNT; c++)
		if (by_class[c] > by_class[s.cls])
			s.cls = (enum orr_kern_class)c;
	/* A reduction writes far less than it reads. */
	if (s.cls == ORR_KERN_REDUCTION)
		s.bytes -= output;
	s.op = orr_trace_str(t, op->name);
	s.task = h[longest].task;
	orr_kern_family(orr_graph_task_name(g, s.task), s.family, sizeof(s.family));
	if (s.cls == ORR_KERN_ATTENTION) {
		s.flops = attention_flops(t, r, op, s.family, causal, &guessed);
		o->c.layout_guessed += s.flops > 0 && guessed;
	}
	add(o, &s);
}

/* Whether a kernel or one of its callers says the attention is causal. */
static bool says_causal(const char *name, const struct callers *cl)
{
	bool causal = has_word(name, "causal");

	for (size_t i = 0; i < cl->n && !causal; i++)
		causal = has_word(cl->names[i], "causal");
	return causal;
}

/* Graph rank ri's kernels: copies as samples, the others as hits on their op. */
static void observe_rank(const struct orr_graph *g, size_t ri, struct out *o)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, ri);
	const struct orr_rank *r = gr->rank;
	const struct orr_task *tasks = orr_graph_tasks(g);
	uint32_t *parent = orr__call_parents(r);
	bool *busy = orr_xcalloc(r->nevents + 1, sizeof(*busy));
	struct hit *h = NULL;
	size_t nh = 0, cap = 0;
	struct callers cl;

	for (uint32_t t = gr->first_task; t < gr->first_task + gr->ntasks; t++) {
		const struct orr_event *e = orr_graph_task_event(g, t);
		const char *name = orr_graph_task_name(g, t);
		bool copy = e->kind == ORR_EVENT_MEMCPY || e->kind == ORR_EVENT_MEMSET;
		enum orr_kern_class cls;

		if (tasks[t].kind != ORR_TASK_GPU || (e->kind != ORR_EVENT_KERNEL && !copy))
			continue;
		callers_of(g, r, parent, t, &cl);
		if ((tasks[t].flags & ORR_TASK_F_COMM) ||
		    (!copy && orr_gemm_kernel_family(name, NULL, 0))) {
			for (size_t i = 0; i < cl.n; i++)
				busy[cl.events[i]] = true;
			continue;
		}
		cls = orr_kern_classify(name, cl.names, cl.n);
		o->c.kernels++;
		o->c.by_class[cls]++;
		if (copy)
			copy_sample(g, r, t, &cl, cls, o);
		else if (!cl.any_op)
			o->c.outside++;
		else if (cl.shaped == ORR_NONE)
			o->c.no_shapes++;
		else
			ORR_VEC_PUSH(h, nh, cap,
				     ((struct hit){ cl.shaped, t, cls, says_causal(name, &cl),
						    cl.compiled }));
	}
	if (nh)
		qsort(h, nh, sizeof(*h), cmp_hit);
	for (size_t i = 0, j; i < nh; i = j) {
		for (j = i + 1; j < nh && h[j].op == h[i].op;)
			j++;
		op_sample(g, r, h + i, j - i, busy[h[i].op], o);
	}
	free(h);
	free(busy);
	free(parent);
}

size_t orr_kern_observe(const struct orr_graph *g, struct orr_kern_sample **ret,
			struct orr_kern_counts *ret_counts)
{
	struct out o = { 0 };

	for (size_t ri = 0; ri < orr_graph_rank_count(g); ri++)
		observe_rank(g, ri, &o);
	if (ret_counts)
		*ret_counts = o.c;
	*ret = o.v;
	return o.n;
}
