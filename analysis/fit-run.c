/* SPDX-License-Identifier: MIT */
/*
 * Fitting the models on one rank of a graph (orrery fit; the estimator's structure, GEMM,
 * kernel and collective models, the profiler's cost and the launch time), for every
 * front end; cli/fit-text.c and cli/fit-json.c print the result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* How many distinct values v[0..n) holds (it sorts them). */
static size_t count_distinct(double *v, size_t n)
{
	size_t d = 0;

	if (n)
		qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		d += !i || v[i] != v[i - 1];
	return d;
}

/* The device the rank's streams run on (its first without streams); NULL when none. */
static const struct orr_device *rank_dev(const struct orr_rank *r)
{
	int32_t dev = -1;

	for (size_t p = 0; p < r->nplaces && dev < 0; p++)
		if (r->places[p].kind == ORR_PLACE_STREAM)
			dev = r->places[p].device;
	for (size_t d = 0; d < r->ndevices; d++)
		if (r->devices[d].id == dev || (dev < 0 && d == 0))
			return &r->devices[d];
	return NULL;
}

/* That device's name; NULL when unknown. */
static const char *rank_device(const struct orr_trace *t, const struct orr_rank *r)
{
	const struct orr_device *d = rank_dev(r);

	return d && d->name != ORR_STR_NONE ? orr_trace_str(t, d->name) : NULL;
}

/* The memory it reported (cudaDeviceProp.totalGlobalMem); 0 unknown. */
static int64_t rank_device_memory(const struct orr_rank *r)
{
	const struct orr_device *d = rank_dev(r);

	return d && d->total_mem_bytes > 0 ? d->total_mem_bytes : 0;
}

/*
 * The samples of one (kind, link): the coupled ones when there are any (their times
 * are transfers), else those seen alone (their times include waiting).
 */
void orr_rank_fit_coll_class(const struct orr_coll_obs *o, size_t n, struct orr_rank_fit_coll *c)
{
	struct orr_coll_sample *s = orr_xcalloc(n, sizeof(*s));
	double *bytes = orr_xcalloc(3 * n + 1, sizeof(*bytes)), *ns = bytes + n, *bus = ns + n;
	double *groups = orr_xcalloc(n + 1, sizeof(*groups));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (o[i].kind == c->kind && o[i].link == c->link) {
			c->samples++;
			c->coupled += !o[i].alone;
			c->by_caller += o[i].sized_by_caller;
		}
	c->from_alone = c->coupled == 0;
	for (size_t i = 0; i < n; i++) {
		if (o[i].kind != c->kind || o[i].link != c->link || o[i].alone != c->from_alone)
			continue;
		s[m] = o[i].s;
		bytes[m] = s[m].bytes;
		ns[m] = s[m].ns;
		bus[m] = s[m].bytes * orr_coll_bus_factor(c->kind, s[m].group) / s[m].ns * 1e9;
		groups[m] = s[m].group;
		m++;
	}
	c->err = orr_coll_model_fit(c->kind, s, m, &c->m);
	c->median_bytes = median(bytes, m);
	c->median_ns = median(ns, m);
	c->median_bus_bytes_per_s = median(bus, m);
	c->group = (int)median(groups, m);
	c->sizes = count_distinct(bytes, m);
	c->groups = count_distinct(groups, m);
	free(groups);
	free(bytes);
	free(s);
}

/* Rank ri's GEMMs by role and pass, and its parts. */
static void roles_and_parts(const struct orr_graph *g, size_t ri, const struct orr_gemm_sample *s,
			    size_t n, struct orr_rank_fit *f)
{
	const struct orr_graph_rank *gr = orr_graph_get_rank(g, ri);

	orr_parts_measure(g, ri, s, n, &f->parts);
	for (size_t i = 0; i < n; i++) {
		struct orr_rank_fit_role *r = &f->roles[s[i].role][s[i].pass];
		int64_t start;

		if (s[i].task < gr->first_task || s[i].task - gr->first_task >= gr->ntasks)
			continue;
		start = orr_graph_task_event(g, s[i].task)->start_ns;
		if (start < f->parts.from_ns || start >= f->parts.to_ns)
			continue;
		f->rank_gemms++;
		f->labeled += s[i].role != ORR_GEMM_ROLE_UNKNOWN;
		r->gemms++;
		r->ns += s[i].ns;
	}
}

/* The GEMMs of every rank, labeled by a rank's structure st; how many. */
static size_t labeled_gemms(const struct orr_graph *g, const struct orr_structure *st,
			    struct orr_gemm_sample **ret, struct orr_gemm_counts *ret_counts)
{
	size_t n = orr_gemm_observe(g, ret, ret_counts);

	orr_gemm_label(st, *ret, n);
	return n;
}

/*
 * Rank r's GPU in the hardware table, named `device` (NULL: unnamed): its own; where
 * its file names no device (a rank whose file has no deviceProperties), the job's, the
 * first any rank names; NULL where its name is none the table knows.  The models'
 * efficiencies are over it, and the costs file names it as its device (a costs reader
 * refuses a model of another GPU, or of one where the device names none).
 */
static const struct orr_gpu_spec *rank_gpu(const struct orr_graph *g, const char *device)
{
	return device ? orr_gpu_spec_match(device) : orr_gpu_spec_find(g);
}

/* The GEMMs of every rank, labeled by rank ri's structure, and their model on the GPU. */
static void fit_gemms(const struct orr_graph *g, size_t ri, struct orr_rank_fit *f)
{
	struct orr_gemm_sample *s;
	size_t n = labeled_gemms(g, &f->st, &s, &f->gemm_counts);

	roles_and_parts(g, ri, s, n, f);
	f->gemm_err = orr_gemm_model_fit(s, n, f->gpu, &f->gemm);
	free(s);
}

/* The other kernels of every rank, and their model on the rank's GPU. */
static void fit_kernels(const struct orr_graph *g, struct orr_rank_fit *f)
{
	struct orr_kern_sample *s;
	size_t n = orr_kern_observe(g, &s, &f->kern_counts);

	f->kern_err = orr_kern_model_fit(s, n, f->gpu, &f->kern);
	free(s);
}

void orr_rank_fit_launch_time(const struct orr_graph *g, struct orr_launch_time *ret,
			      struct orr_prof_cost *ret_prof)
{
	struct orr_prof_cost c;

	orr_prof_cost_find(orr_graph_trace(g), &c);
	orr_launch_time_measure(g, &c, ret);
	if (ret_prof)
		*ret_prof = c;
}

/* The trace's collectives and nt's samples, coupled (their times are transfers). */
static size_t observe(const struct orr_graph *g, const struct orr_nccl_tests *nt, size_t nnt,
		      struct orr_coll_obs **ret)
{
	struct orr_coll_obs *o;
	size_t n = orr_coll_observe(g, &o), cap = n;

	for (size_t i = 0; i < nnt; i++)
		for (size_t k = 0; k < nt[i].n; k++)
			ORR_VEC_PUSH(o, n, cap,
				     ((struct orr_coll_obs){ .kind = nt[i].kind,
							     .link = nt[i].link,
							     .task = UINT32_MAX,
							     .s = nt[i].s[k] }));
	*ret = o;
	return n;
}

void orr_rank_fit_run(const struct orr_graph *g, size_t ri, const char *trace,
		      const struct orr_nccl_tests *nt, size_t nnt, struct orr_rank_fit *ret)
{
	const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
	struct orr_coll_obs *o;
	size_t cap = 0;

	memset(ret, 0, sizeof(*ret));
	ret->trace = trace;
	ret->g = g;
	ret->rank = r->rank;
	ret->device = rank_device(orr_graph_trace(g), r);
	ret->gpu = rank_gpu(g, ret->device);
	ret->nobs = observe(g, nt, nnt, &o);
	ret->nccl_runs = nnt;
	for (size_t i = 0; i < nnt; i++)
		ret->nccl_samples += nt[i].n;
	/* the trace's collectives, before the nccl-tests samples (observe()) */
	orr_structure_recover_obs(g, ri, o, ret->nobs - ret->nccl_samples, &ret->st);
	orr_overlap_slowdown(r, &ret->overlap);
	orr_rank_fit_launch_time(g, &ret->launch, &ret->prof);
	fit_gemms(g, ri, ret);
	fit_kernels(g, ret);
	for (int k = 0; k < ORR_COLL_KIND_COUNT; k++)
		for (int l = ORR_LINK_UNKNOWN; l <= ORR_LINK_NETWORK; l++) {
			bool any = false;

			for (size_t i = 0; i < ret->nobs && !any; i++)
				any = (int)o[i].kind == k && (int)o[i].link == l;
			if (!any)
				continue;
			ORR_VEC_PUSH(ret->coll, ret->ncoll, cap,
				     ((struct orr_rank_fit_coll){ .kind = k, .link = l }));
			orr_rank_fit_coll_class(o, ret->nobs, &ret->coll[ret->ncoll - 1]);
		}
	free(o);
}

void orr_rank_gpu_as_seen(const struct orr_graph *g, size_t ri, const struct orr_gpu_spec *gpu,
			  struct orr_gpu_spec *ret)
{
	int64_t mem = rank_device_memory(orr_graph_get_rank(g, ri)->rank);

	*ret = *gpu;
	if (mem > 0 && (ret->hbm_bytes <= 0 || (double)mem < ret->hbm_bytes))
		ret->hbm_bytes = (double)mem;
}

const struct orr_gpu_spec *orr_rank_gpu(const struct orr_graph *g, size_t ri)
{
	return rank_gpu(g, rank_device(orr_graph_trace(g), orr_graph_get_rank(g, ri)->rank));
}

enum orr_dtype orr_gemm_trace_precision(const struct orr_graph *g, const struct orr_gpu_spec *gpu)
{
	struct orr_gemm_sample *s;
	struct orr_gemm_counts counts;
	struct orr_gemm_model m;
	enum orr_dtype p = ORR_DTYPE_BF16;
	size_t n = orr_gemm_observe(g, &s, &counts);

	/* The classes are by dtype and kernel family: no rank's roles are needed. */
	if (!orr_gemm_model_fit_classes(s, n, gpu, &m)) {
		p = orr_gemm_precision(&m);
		orr_gemm_model_release(&m);
	}
	free(s);
	return p;
}

void orr_rank_fit_release(struct orr_rank_fit *f)
{
	if (!f->gemm_err)
		orr_gemm_model_release(&f->gemm);
	if (!f->kern_err)
		orr_kern_model_release(&f->kern);
	free(f->coll);
	f->coll = NULL;
	f->ncoll = 0;
}

/* The link bandwidth the hardware table gives for a link class, per direction; 0. */
double orr_rank_fit_spec_link(const struct orr_rank_fit *f, enum orr_link l)
{
	if (!f->gpu)
		return 0;
	return l == ORR_LINK_NETWORK ? f->gpu->nic_bytes_per_s : f->gpu->link_bytes_per_s;
}

enum orr_dtype orr_gemm_precision(const struct orr_gemm_model *m)
{
	for (size_t i = 0; i < m->nclasses; i++)
		if (m->classes[i].dtype == ORR_DTYPE_FP16 ||
		    m->classes[i].dtype == ORR_DTYPE_BF16 || m->classes[i].dtype == ORR_DTYPE_FP32)
			return m->classes[i].dtype;
	return ORR_DTYPE_BF16;
}

size_t orr_graph_rank_index(const struct orr_graph *g, int64_t rank)
{
	for (size_t i = 0; i < orr_graph_rank_count(g); i++)
		if (rank < 0 || orr_graph_get_rank(g, i)->rank->rank == rank)
			return i;
	return SIZE_MAX;
}

size_t orr_structure_values(const struct orr_structure *s, struct orr_named_value *v)
{
	size_t n = 0;

#define V(field) v[n++] = (struct orr_named_value){ #field, &s->field }
	V(layers);
	V(hidden);
	V(heads);
	V(head_dim);
	V(kv_groups);
	V(ffn);
	V(vocab);
	V(seq);
	V(micro_batch);
	V(tokens);
	V(micro_batches);
	V(tp);
	V(pp);
	V(dp);
	V(world);
	V(annotated_layers);
	V(repeats);
#undef V
	return n;
}
