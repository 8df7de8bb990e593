/* SPDX-License-Identifier: MIT */
/* orrery fit: the text report (docs/orrery-fit.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fit.h"
#include "banned.h"

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

/*
 * One value of the structure: its name and value take 23 columns, the value's right edge
 * where the others' are even when the name is longer than 14 (annotated_layers).
 */
static void value_line(const char *name, const char *value, const char *how, const char *why)
{
	int w = 22 - (int)strlen(name);

	printf("  %s %*s  %-8s  %s\n", name, w < 1 ? 1 : w, value, how, cli_text(why));
}

static void text_structure(const struct orr_rank_fit *f)
{
	struct orr_named_value v[20];
	size_t n = orr_structure_values(&f->st, v);
	const struct orr_structure *s = &f->st;
	char num[32];

	printf("\nstructure of rank %d\n", (int)f->rank);
	printf("  phases         %s%s%s%s\n", s->forward ? "forward" : "",
	       s->backward ? ", backward" : "", s->optimizer ? ", optimizer" : "",
	       s->data_loading ? ", data loading" : "");
	/* Values unknown for one reason (no transformer) are said once. */
	if (s->layers.how == ORR_VALUE_UNKNOWN)
		value_line("transformer", "?", "unknown", s->layers.why);
	for (size_t i = 0; i < n; i++) {
		if (v[i].v->how == ORR_VALUE_UNKNOWN && v[i].v != &s->layers &&
		    strcmp(v[i].v->why, s->layers.why) == 0)
			continue;
		if (v[i].v->how == ORR_VALUE_UNKNOWN && v[i].v == &s->layers)
			continue;
		if (v[i].v->how == ORR_VALUE_UNKNOWN) {
			value_line(v[i].name, "?", "unknown", v[i].v->why);
		} else {
			snprintf(num, sizeof(num), "%lld", (long long)v[i].v->value);
			value_line(v[i].name, num, orr_value_how_name(v[i].v->how), v[i].v->why);
		}
	}
	if (s->hidden.how != ORR_VALUE_UNKNOWN) {
		printf("  MLP            %s\n",
		       s->gated_mlp ? "gated (FC1 is 2 x ffn / tp wide): --swiglu" : "not gated");
		printf("  attention      %s\n",
		       s->fused_attention
			       ? "fused (scaled_dot_product or flash-attn ops: no scores stored): "
				 "--attention flash"
			       : "unfused (the scores' batched GEMMs): --attention unfused");
		printf("  embeddings     tied or untied: a trace does not tell (estimate and "
		       "whatif take them as tied; --untie-embeddings-and-output-weights says "
		       "otherwise)\n");
	}
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

static void text_coll(const struct orr_rank_fit *f, const struct orr_rank_fit_coll *c)
{
	double spec = orr_rank_fit_spec_link(f, c->link);
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

/* The batched memory-bound GEMMs' efficiency per math, where a sample had one. */
static void text_memory(const struct orr_gemm_model *m)
{
	for (int d = 0; d < ORR_DTYPE_COUNT; d++)
		if (m->efficiency_memory[d].samples)
			printf("  batched %s GEMMs bound by memory: the bytes their tiles move at "
			       "HBM's rate x %.3f, the median of %zu samples not faster than their "
			       "roofline\n",
			       orr_dtype_name((enum orr_dtype)d), m->efficiency_memory[d].median,
			       m->efficiency_memory[d].samples);
}

static void text_gemms(const struct orr_rank_fit *f)
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
	text_memory(m);
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
		printf(", %zu roofline x %.3f (the median efficiency of %s%s%s%s whose roofline "
		       "is between the floor and %s time)",
		       by[ORR_GEMM_ROOFLINE], e->median,
		       e->fitted ? "the fitted families' " : "every ", of, *of ? " " : "",
		       e->fitted ? "kernels" : "kernel", e->fitted ? "their" : "its");
	if (by[ORR_GEMM_POOLED])
		printf(", %zu pooled (no GPU known: the fit over every %s kernel)",
		       by[ORR_GEMM_POOLED], orr_kern_class_name(cls));
	if (by[ORR_GEMM_NONE])
		printf(", %zu not predicted (%s)", by[ORR_GEMM_NONE],
		       m->gpu ? "no sample has a roofline"
			      : "no GPU known, and fewer than 3 sizes in the class");
}

static void text_kernels(const struct orr_rank_fit *f)
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

/* The rank's step by part, then its GEMMs by role: per step. */
static void text_parts(const struct orr_rank_fit *f)
{
	double steps = f->parts.steps ? (double)f->parts.steps : 1, total = 0;

	for (int p = 0; p < ORR_PART_COUNT; p++)
		total += f->parts.part[p].ns;
	printf("\nparts of rank %d's step (kernels, copies and memsets; not collectives), ",
	       (int)f->rank);
	if (f->parts.steps)
		printf("per step over %zu step%s\n", f->parts.steps,
		       f->parts.steps == 1 ? "" : "s");
	else
		printf("over the whole capture (no step marked)\n");
	for (int p = 0; p < ORR_PART_COUNT; p++) {
		const struct orr_part_time *t = &f->parts.part[p];

		printf("  %-10s %8.0f kernels %10.3f ms %5.1f %%", orr_part_name(p),
		       (double)t->kernels / steps, t->ns / steps / 1e6,
		       total > 0 ? 100 * t->ns / total : 0.0);
		if (t->backward_ns > 0)
			printf("  (backward %.3f ms)", t->backward_ns / steps / 1e6);
		printf("\n");
	}
}

static void text_roles(const struct orr_rank_fit *f)
{
	double steps = f->parts.steps ? (double)f->parts.steps : 1, total = 0;

	for (int r = 0; r < ORR_GEMM_ROLE_COUNT; r++)
		for (int p = 0; p < ORR_GEMM_PASS_COUNT; p++)
			total += f->roles[r][p].ns;
	printf("\nGEMMs of rank %d by role, per step; %zu of its steps' %zu GEMMs with a role",
	       (int)f->rank, f->labeled, f->rank_gemms);
	if (f->st.hidden.how == ORR_VALUE_UNKNOWN || f->st.tp.how == ORR_VALUE_UNKNOWN)
		printf(" (no transformer's dimensions to label them by)");
	printf("\n");
	for (int r = 1; r <= ORR_GEMM_ROLE_COUNT; r++)
		for (int p = 0; p < ORR_GEMM_PASS_COUNT; p++) {
			/* unknown last */
			const struct orr_rank_fit_role *x = &f->roles[r % ORR_GEMM_ROLE_COUNT][p];

			if (!x->gemms)
				continue;
			printf("  %-10s %-8s %6.0f GEMMs %10.3f ms %5.1f %%\n",
			       orr_gemm_role_name(r % ORR_GEMM_ROLE_COUNT), orr_gemm_pass_name(p),
			       (double)x->gemms / steps, x->ns / steps / 1e6,
			       total > 0 ? 100 * x->ns / total : 0.0);
		}
}

/* The launch threads' time per step, what the profiler added to it and the stalls. */
static void text_launch(const struct orr_rank_fit *f)
{
	const struct orr_launch_time *l = &f->launch;
	char opts[128];

	if (!isfinite(l->step_ns))
		return;
	printf("\nlaunch threads: %.3f ms per step between launches, less blocking calls "
	       "(the slowest rank's without the two below)\n",
	       l->step_ns / 1e6);
	orr_prof_options_format(f->prof.options, opts, sizeof(opts));
	if (!f->prof.source)
		printf("  profiler: none recorded ops (options: %s): nothing removed\n", opts);
	else {
		printf("  profiler (%s): %.3f ms of it, %.0f ops x %.2f us + %.0f calls x %.2f us "
		       "(%s%s)",
		       opts, l->profiler_ns / 1e6, l->ops, f->prof.op_ns / 1e3, l->calls,
		       f->prof.call_ns / 1e3,
		       f->prof.exact ? "" : "measured with other options: ", f->prof.source);
		if (f->prof.observer_source)
			printf(" + %.0f ops observed x %.2f us (%s)", l->observed_ops,
			       f->prof.observer_ns / 1e3, f->prof.observer_source);
		printf("; without it %.3f ms\n", (l->step_ns - l->profiler_ns) / 1e6);
	}
	if (l->peers)
		printf("  stalls: %.3f ms of it beyond the median of %zu ranks running the same "
		       "launches (threads not running); the job's %.3f ms\n",
		       l->stall_ns / 1e6, l->peers,
		       (l->step_ns - l->profiler_ns - l->stall_ns) / 1e6);
	else
		printf("  stalls: none found (no 3 ranks run the same launches to compare)\n");
}

void cli_fit_text(const struct orr_rank_fit *f)
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
	text_launch(f);
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
	text_parts(f);
	text_roles(f);
	text_gemms(f);
	text_kernels(f);
	printf("\ncollectives: %zu samples\n", f->nobs);
	if (f->nccl_runs)
		printf("  %zu of them from %zu nccl-tests run%s (--nccl-tests)\n", f->nccl_samples,
		       f->nccl_runs, f->nccl_runs == 1 ? "" : "s");
	if (!f->ncoll)
		printf("  none with a known kind, group size and size\n");
	for (size_t i = 0; i < f->ncoll; i++)
		text_coll(f, &f->coll[i]);
}
