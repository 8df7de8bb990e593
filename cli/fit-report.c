/* SPDX-License-Identifier: MIT */
/* orrery fit: fitting the models on a graph, and their text and JSON reports. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fit.h"
#include "banned.h"

/* ---- fitting ---- */

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

/* The device the rank's streams run on, by name; NULL when unknown. */
static const char *rank_device(const struct orr_trace *t, const struct orr_rank *r)
{
	int32_t dev = -1;

	for (size_t p = 0; p < r->nplaces && dev < 0; p++)
		if (r->places[p].kind == ORR_PLACE_STREAM)
			dev = r->places[p].device;
	for (size_t d = 0; d < r->ndevices; d++)
		if (r->devices[d].id == dev || (dev < 0 && d == 0))
			return r->devices[d].name == ORR_STR_NONE
				       ? NULL
				       : orr_trace_str(t, r->devices[d].name);
	return NULL;
}

/*
 * The samples of one (kind, link): the coupled ones when there are any (their times
 * are transfers), else those seen alone (their times include waiting).
 */
static void fit_class(const struct orr_coll_obs *o, size_t n, struct cli_fit_coll *c)
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

/* The GEMMs of every rank, and their model on the trace's GPU. */
static void fit_gemms(const struct orr_graph *g, struct cli_fit *f)
{
	struct orr_gemm_sample *s;
	size_t n = orr_gemm_observe(g, &s, &f->gemm_counts);

	f->gemm_err = orr_gemm_model_fit(s, n, orr_gpu_spec_find(g), &f->gemm);
	free(s);
}

/* The other kernels of every rank, and their model on the trace's GPU. */
static void fit_kernels(const struct orr_graph *g, struct cli_fit *f)
{
	struct orr_kern_sample *s;
	size_t n = orr_kern_observe(g, &s, &f->kern_counts);

	f->kern_err = orr_kern_model_fit(s, n, orr_gpu_spec_find(g), &f->kern);
	free(s);
}

void cli_fit_run(const struct orr_graph *g, size_t ri, const char *trace, struct cli_fit *ret)
{
	const struct orr_rank *r = orr_graph_get_rank(g, ri)->rank;
	struct orr_coll_obs *o;
	size_t cap = 0;

	memset(ret, 0, sizeof(*ret));
	ret->trace = trace;
	ret->g = g;
	ret->rank = r->rank;
	ret->device = rank_device(orr_graph_trace(g), r);
	ret->gpu = ret->device ? orr_gpu_spec_match(ret->device) : NULL;
	orr_structure_recover(g, ri, &ret->st);
	orr_overlap_slowdown(r, &ret->overlap);
	fit_gemms(g, ret);
	fit_kernels(g, ret);
	ret->nobs = orr_coll_observe(g, &o);
	for (int k = 0; k < ORR_COLL_KIND_COUNT; k++)
		for (int l = ORR_LINK_UNKNOWN; l <= ORR_LINK_NETWORK; l++) {
			bool any = false;

			for (size_t i = 0; i < ret->nobs && !any; i++)
				any = (int)o[i].kind == k && (int)o[i].link == l;
			if (!any)
				continue;
			ORR_VEC_PUSH(ret->coll, ret->ncoll, cap,
				     ((struct cli_fit_coll){ .kind = k, .link = l }));
			fit_class(o, ret->nobs, &ret->coll[ret->ncoll - 1]);
		}
	free(o);
}

void cli_fit_release(struct cli_fit *f)
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
double cli_fit_spec_link(const struct cli_fit *f, enum orr_link l)
{
	if (!f->gpu)
		return 0;
	return l == ORR_LINK_NETWORK ? f->gpu->nic_bytes_per_s : f->gpu->link_bytes_per_s;
}

/* ---- text ---- */

size_t cli_fit_structure_values(const struct orr_structure *s, struct cli_named_value *v)
{
	size_t n = 0;

#define V(field) v[n++] = (struct cli_named_value){ #field, &s->field }
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

static const char *bytes_text(double b, char *buf, size_t size)
{
	if (b >= 1 << 30)
		snprintf(buf, size, "%.1f GiB", b / (1 << 30));
	else if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, size, "%.1f KiB", b / (1 << 10));
	else
		snprintf(buf, size, "%.0f B", b);
	return buf;
}

static void text_structure(const struct cli_fit *f)
{
	struct cli_named_value v[20];
	size_t n = cli_fit_structure_values(&f->st, v);
	const struct orr_structure *s = &f->st;

	printf("\nstructure of rank %d\n", (int)f->rank);
	printf("  phases         %s%s%s%s\n", s->forward ? "forward" : "",
	       s->backward ? ", backward" : "", s->optimizer ? ", optimizer" : "",
	       s->data_loading ? ", data loading" : "");
	/* Values unknown for one reason (no transformer) are said once. */
	if (s->layers.how == ORR_VALUE_UNKNOWN)
		printf("  %-14s %8s  %-8s  %s\n", "transformer", "?", "unknown",
		       cli_text(s->layers.why));
	for (size_t i = 0; i < n; i++) {
		if (v[i].v->how == ORR_VALUE_UNKNOWN && v[i].v != &s->layers &&
		    strcmp(v[i].v->why, s->layers.why) == 0)
			continue;
		if (v[i].v->how == ORR_VALUE_UNKNOWN && v[i].v == &s->layers)
			continue;
		if (v[i].v->how == ORR_VALUE_UNKNOWN)
			printf("  %-14s %8s  %-8s  %s\n", v[i].name, "?", "unknown",
			       cli_text(v[i].v->why));
		else
			printf("  %-14s %8lld  %-8s  %s\n", v[i].name, (long long)v[i].v->value,
			       orr_value_how_name(v[i].v->how), cli_text(v[i].v->why));
	}
	if (s->hidden.how != ORR_VALUE_UNKNOWN)
		printf("  MLP            %s\n",
		       s->gated_mlp ? "gated (FC1 is 2 x ffn / tp wide)" : "not gated");
	for (size_t i = 0; i < s->ncomms; i++) {
		const struct orr_comm_role *c = &s->comms[i];
		char size[16] = "?";

		if (c->size > 0)
			snprintf(size, sizeof(size), "%d", (int)c->size);
		printf("  communicator   %s%s%s%s%s, %s ranks, %zu collectives: %s, %s: %s\n",
		       c->name ? "'" : "(unnamed)", c->name ? cli_text(c->name) : "",
		       c->name ? "'" : "", c->desc ? " " : "", c->desc ? cli_text(c->desc) : "",
		       size, c->collectives, orr_par_name(c->role), orr_value_how_name(c->how),
		       cli_text(c->why));
	}
}

static void text_band(const struct orr_coll_band *b)
{
	char lo[32], hi[32];

	printf("    [%s, %s)  alpha %.1f us + %.2f us/rank, bus %.1f GB/s; %zu samples, "
	       "error %.1f %% (max %.1f %%), left out %.1f %% (max %.1f %%)\n",
	       bytes_text(b->lo_bytes, lo, sizeof(lo)),
	       isinf(b->hi_bytes) ? "inf" : bytes_text(b->hi_bytes, hi, sizeof(hi)),
	       b->alpha_ns / 1e3, b->alpha_rank_ns / 1e3, b->bus_bytes_per_s / 1e9, b->fit.samples,
	       100 * b->fit.fit_median, 100 * b->fit.fit_max, 100 * b->fit.loo_median,
	       100 * b->fit.loo_max);
}

static void text_coll(const struct cli_fit *f, const struct cli_fit_coll *c)
{
	double spec = cli_fit_spec_link(f, c->link);
	char b[32];

	printf("  %s, link %s: %zu samples (%zu coupled across ranks, %zu sized by their "
	       "calling op), %zu size%s, %zu group size%s\n",
	       orr_coll_kind_name(c->kind), orr_link_name(c->link), c->samples, c->coupled,
	       c->by_caller, c->sizes, c->sizes == 1 ? "" : "s", c->groups,
	       c->groups == 1 ? "" : "s");
	if (c->from_alone)
		printf("    seen on one rank each: times include waiting for the other ranks\n");
	printf("    measured: median %s over %d ranks in %.3f ms, bus bandwidth %.1f GB/s",
	       bytes_text(c->median_bytes, b, sizeof(b)), c->group, c->median_ns / 1e6,
	       c->median_bus_bytes_per_s / 1e9);
	if (spec > 0)
		printf(" (%.0f %% of the %s's %.0f GB/s per direction, hardware table)",
		       100 * c->median_bus_bytes_per_s / spec,
		       c->link == ORR_LINK_NETWORK ? "NIC" : "GPU link", spec / 1e9);
	printf("\n");
	if (c->err) {
		printf("    not fitted: %s\n", orr_strerror(c->err));
		return;
	}
	if (!c->m.constrained) {
		printf("    not constrained: %s; predictions fall back to the measured bus "
		       "bandwidth%s\n",
		       c->sizes == 1 ? "one size cannot separate latency from bandwidth"
				     : "the sizes do not separate latency from bandwidth",
		       spec > 0 ? " and the hardware table" : "");
		return;
	}
	printf("    t = alpha + alpha_rank x n + S x F(n) / bus, in %zu band%s: error %.1f %% "
	       "(max %.1f %%), left out %.1f %% (max %.1f %%)\n",
	       c->m.nbands, c->m.nbands == 1 ? "" : "s", 100 * c->m.fit_median, 100 * c->m.fit_max,
	       100 * c->m.loo_median, 100 * c->m.loo_max);
	for (size_t i = 0; i < c->m.nbands; i++)
		text_band(&c->m.bands[i]);
}

static void text_gemms(const struct cli_fit *f)
{
	const struct orr_gemm_counts *c = &f->gemm_counts;
	const struct orr_gemm_model *m = &f->gemm;

	printf("\nGEMMs (every rank): %zu samples from %zu kernels", c->samples, c->kernels);
	if (c->outside || c->no_shapes || c->bad_shapes || c->incomplete)
		printf(" (%zu outside a matrix-multiply op, %zu ops without shapes, %zu with "
		       "shapes of no GEMM, %zu incomplete)",
		       c->outside, c->no_shapes, c->bad_shapes, c->incomplete);
	printf("\n");
	if (f->gemm_err) {
		printf("  not fitted: %s\n", orr_strerror(f->gemm_err));
		return;
	}
	for (size_t i = 0; i < m->nclasses; i++) {
		const struct orr_gemm_class *k = &m->classes[i];

		printf("  %s %s: %zu samples, %zu shape%s: %s", orr_dtype_name(k->dtype),
		       cli_text(k->family), k->samples, k->shapes, k->shapes == 1 ? "" : "s",
		       orr_gemm_how_name(k->how));
		if (k->how == ORR_GEMM_FIT)
			printf(", error %.1f %% (max %.1f %%), left out %.1f %% (max %.1f %%)",
			       100 * k->fit.fit_median, 100 * k->fit.fit_max,
			       100 * k->fit.loo_median, 100 * k->fit.loo_max);
		else
			printf(" (%s)", cli_text(k->why));
		printf("\n");
	}
	if (m->loso_predicted)
		printf("  each shape left out: %zu of %zu predicted, median error %.1f %%, max "
		       "%.1f %%\n",
		       m->loso_predicted, m->nshapes, 100 * m->loso_median, 100 * m->loso_max);
}

/* How a class's families that were not fitted predict: "1 roofline x 2.066 (...)". */
static void text_fallbacks(const struct orr_kern_model *m, enum orr_kern_class cls)
{
	const struct orr_gemm_efficiency *e = m->efficiency[cls].samples ? &m->efficiency[cls]
									 : &m->efficiency_all;
	const char *of = e == &m->efficiency_all ? "" : orr_kern_class_name(cls);
	size_t by[ORR_GEMM_POOLED + 1] = { 0 };

	for (size_t i = 0; i < m->nfamilies; i++)
		if (m->families[i].cls == cls && m->families[i].how != ORR_GEMM_FIT)
			by[m->families[i].how]++;
	if (by[ORR_GEMM_ROOFLINE])
		printf(", %zu roofline x %.3f (the median efficiency of %s%s%s%s)",
		       by[ORR_GEMM_ROOFLINE], e->median,
		       e->fitted ? "the fitted families' " : "every ", of, *of ? " " : "",
		       e->fitted ? "kernels" : "kernel");
	if (by[ORR_GEMM_POOLED])
		printf(", %zu pooled (no GPU known: the fit over every %s kernel)",
		       by[ORR_GEMM_POOLED], orr_kern_class_name(cls));
	if (by[ORR_GEMM_NONE])
		printf(", %zu not predicted (%s)", by[ORR_GEMM_NONE],
		       m->gpu ? "no sample has a roofline"
			      : "no GPU known, and fewer than 3 sizes in the class");
}

static void text_kernels(const struct cli_fit *f)
{
	const struct orr_kern_counts *c = &f->kern_counts;
	const struct orr_kern_model *m = &f->kern;

	printf("\nkernels other than GEMMs (every rank): %zu samples from %zu kernels", c->samples,
	       c->kernels);
	if (c->kernels > c->sampled)
		printf(" (%zu outside any op, %zu under ops without shapes, %zu under ops that "
		       "launched GEMMs, collectives or a compiled graph, %zu with tensors of "
		       "unknown or no size, %zu copies without a size, %zu without time)",
		       c->outside, c->no_shapes, c->composite, c->bad_shapes, c->no_bytes,
		       c->no_time);
	printf("\n");
	if (f->kern_err) {
		printf("  not fitted: %s\n", orr_strerror(f->kern_err));
		return;
	}
	if (m->gpu && isfinite(m->floor_ns))
		printf("  fallback: the %s roofline x a median efficiency, at least %.1f us (the "
		       "median time of kernels that move next to nothing)\n",
		       m->gpu->id, m->floor_ns / 1e3);
	for (int k = 0; k < ORR_KERN_CLASS_COUNT; k++) {
		const struct orr_kern_class_summary *s = &m->classes[k];

		if (!s->samples)
			continue;
		printf("  %s: %zu samples, %zu size%s in %zu famil%s: %zu fitted",
		       orr_kern_class_name(k), s->samples, s->sizes, s->sizes == 1 ? "" : "s",
		       s->families, s->families == 1 ? "y" : "ies", s->fitted);
		text_fallbacks(m, k);
		if (s->loso_sizes)
			printf("; each size left out: median %.1f %%, max %.1f %%",
			       100 * s->loso_median, 100 * s->loso_max);
		printf("\n");
	}
	if (m->loso_predicted)
		printf("  each size left out: %zu of %zu predicted, median error %.1f %%, max "
		       "%.1f %%\n",
		       m->loso_predicted, m->nsizes, 100 * m->loso_median, 100 * m->loso_max);
}

void cli_fit_text(const struct cli_fit *f)
{
	printf("%s: rank %d", cli_text(f->trace), (int)f->rank);
	if (f->device)
		printf(", %s", cli_text(f->device));
	if (f->gpu)
		printf(" (hardware table: %s)", f->gpu->id);
	else if (f->device)
		printf(" (not in the hardware table)");
	printf("\n");
	text_structure(f);
	printf("\nkernels beside collectives: %zu of %zu compute kernels overlap one\n",
	       f->overlap.overlapped, f->overlap.kernels);
	if (f->overlap.names)
		printf("  slowdown %.3f (median over %zu kernel names, %zu kernels; from %.3f to "
		       "%.3f)\n",
		       f->overlap.slowdown, f->overlap.names, f->overlap.kernels_compared,
		       f->overlap.slowdown_min, f->overlap.slowdown_max);
	else
		printf("  slowdown not measured: no kernel name ran twice beside a collective and "
		       "twice without; 1 is assumed\n");
	text_gemms(f);
	text_kernels(f);
	printf("\ncollectives: %zu samples\n", f->nobs);
	if (!f->ncoll)
		printf("  none with a known kind, group size and size\n");
	for (size_t i = 0; i < f->ncoll; i++)
		text_coll(f, &f->coll[i]);
}
