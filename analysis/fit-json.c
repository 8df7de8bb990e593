/* SPDX-License-Identifier: MIT */
/*
 * The models fitted on a rank as JSON (docs/orrery-fit.md): orrery fit's JSON report and
 * the costs file it writes (-o), which orr_costs_read() reads back.  Whatever the models'
 * predictions read is written with orr_json_double_exact(), so that the models read back
 * predict exactly as these do.
 */
#include <math.h>
#include <stdio.h>

#include "orrery/analysis.h"
#include "banned.h"

/* A least-squares fit: its coefficients (nparams of them) and its errors. */
static void json_fit(struct orr_json_out *j, const char *key, const struct orr_fit *fit)
{
	orr_json_object(j, key);
	orr_json_int(j, "samples", (int64_t)fit->samples);
	orr_json_int(j, "rank", (int64_t)fit->rank);
	orr_json_bool(j, "relative", fit->relative);
	orr_json_array(j, "coef");
	for (size_t i = 0; i < fit->nparams && i < ORR_FIT_MAX_PARAMS; i++)
		orr_json_double_exact(j, NULL, fit->coef[i]);
	orr_json_close_array(j);
	orr_json_double(j, "fit_median", fit->fit_median);
	orr_json_double(j, "fit_max", fit->fit_max);
	orr_json_double(j, "loo_median", fit->loo_median);
	orr_json_double(j, "loo_max", fit->loo_max);
	orr_json_close_object(j);
}

/* A pooled fit (no GPU known) of the dtype or class `name`, when there is one. */
static void json_pooled(struct orr_json_out *j, const char *key, const char *name,
			const struct orr_fit *fit)
{
	if (!fit->nparams)
		return;
	orr_json_object(j, NULL);
	orr_json_str(j, key, name);
	json_fit(j, "fit", fit);
	orr_json_close_object(j);
}

/* The hardware table's entry a model was fitted for: its id, or null. */
static void json_spec(struct orr_json_out *j, const struct orr_gpu_spec *gpu)
{
	if (gpu)
		orr_json_str(j, "spec", gpu->id);
	else
		orr_json_double(j, "spec", NAN); /* null */
}

/* The efficiency over every group, the fallback of a group without samples. */
static void json_efficiency_all(struct orr_json_out *j, const struct orr_gemm_efficiency *e,
				bool ok)
{
	orr_json_double_exact(j, "efficiency_all", ok ? e->median : NAN);
	orr_json_int(j, "efficiency_all_samples", ok ? (int64_t)e->samples : 0);
	orr_json_bool(j, "efficiency_all_fitted", ok && e->fitted);
}

static void json_structure(struct orr_json_out *j, const struct orr_structure *s)
{
	struct orr_named_value v[20];
	size_t n = orr_structure_values(s, v);

	orr_json_object(j, "structure");
	orr_json_int(j, "rank", s->rank);
	orr_json_object(j, "phases");
	orr_json_bool(j, "forward", s->forward);
	orr_json_bool(j, "backward", s->backward);
	orr_json_bool(j, "optimizer", s->optimizer);
	orr_json_bool(j, "data_loading", s->data_loading);
	orr_json_close_object(j);
	orr_json_bool(j, "gated_mlp", s->gated_mlp);
	/* Megatron's names: a gated MLP is --swiglu; tied or untied, a trace does not tell */
	orr_json_bool(j, "swiglu", s->gated_mlp);
	orr_json_bool(j, "fused_attention", s->fused_attention);
	orr_json_double(j, "untie_embeddings_and_output_weights", NAN); /* null */
	orr_json_int(j, "repeat_kernels", (int64_t)s->repeat_kernels);
	orr_json_array(j, "communicators");
	for (size_t i = 0; i < s->ncomms; i++) {
		const struct orr_comm_role *c = &s->comms[i];

		orr_json_object(j, NULL);
		if (c->name)
			orr_json_str(j, "name", c->name);
		if (c->desc)
			orr_json_str(j, "desc", c->desc);
		orr_json_int(j, "size", c->size);
		orr_json_int(j, "collectives", (int64_t)c->collectives);
		orr_json_str(j, "role", orr_par_name(c->role));
		orr_json_str(j, "how", orr_value_how_name(c->how));
		orr_json_str(j, "why", c->why);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	for (size_t i = 0; i < n; i++) {
		orr_json_object(j, v[i].name);
		if (v[i].v->how == ORR_VALUE_UNKNOWN)
			orr_json_double(j, "value", NAN); /* null */
		else
			orr_json_int(j, "value", v[i].v->value);
		orr_json_str(j, "how", orr_value_how_name(v[i].v->how));
		orr_json_str(j, "why", v[i].v->why);
		orr_json_close_object(j);
	}
	orr_json_close_object(j);
}

static void json_coll(struct orr_json_out *j, const struct orr_rank_fit *f,
		      const struct orr_rank_fit_coll *c)
{
	orr_json_object(j, NULL);
	orr_json_str(j, "kind", orr_coll_kind_name(c->kind));
	orr_json_str(j, "link", orr_link_name(c->link));
	orr_json_int(j, "samples", (int64_t)c->samples);
	orr_json_int(j, "coupled", (int64_t)c->coupled);
	orr_json_int(j, "sized_by_caller", (int64_t)c->by_caller);
	orr_json_int(j, "sizes", (int64_t)c->sizes);
	orr_json_int(j, "group_sizes", (int64_t)c->groups);
	orr_json_bool(j, "from_alone", c->from_alone);
	orr_json_object(j, "measured");
	orr_json_double(j, "median_bytes", c->median_bytes);
	orr_json_double(j, "median_ns", c->median_ns);
	orr_json_int(j, "group", c->group);
	orr_json_double(j, "bus_bytes_per_s", c->median_bus_bytes_per_s);
	orr_json_double(j, "spec_bytes_per_s",
			orr_rank_fit_spec_link(f, c->link) > 0 ? orr_rank_fit_spec_link(f, c->link)
							       : NAN);
	orr_json_close_object(j);
	orr_json_bool(j, "fitted", c->err == 0);
	orr_json_bool(j, "constrained", c->err == 0 && c->m.constrained);
	orr_json_bool(j, "per_rank_latency", c->err == 0 && c->m.per_rank_latency);
	orr_json_double(j, "fit_median", c->err ? NAN : c->m.fit_median);
	orr_json_double(j, "fit_max", c->err ? NAN : c->m.fit_max);
	orr_json_double(j, "loo_median", c->err ? NAN : c->m.loo_median);
	orr_json_double(j, "loo_max", c->err ? NAN : c->m.loo_max);
	orr_json_array(j, "bands");
	for (size_t i = 0; !c->err && i < c->m.nbands; i++) {
		const struct orr_coll_band *b = &c->m.bands[i];

		orr_json_object(j, NULL);
		orr_json_double_exact(j, "lo_bytes", b->lo_bytes);
		orr_json_double_exact(j, "hi_bytes", b->hi_bytes); /* null: no upper end */
		orr_json_double_exact(j, "alpha_ns", b->alpha_ns);
		orr_json_double_exact(j, "alpha_rank_ns", b->alpha_rank_ns);
		orr_json_double_exact(j, "bus_bytes_per_s", b->bus_bytes_per_s);
		json_fit(j, "fit", &b->fit);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	orr_json_close_object(j);
}

/* One class of the GEMM model: its fit, or how it falls back. */
static void json_gemm_class(struct orr_json_out *j, const struct orr_gemm_class *k)
{
	orr_json_object(j, NULL);
	orr_json_str(j, "dtype", orr_dtype_name(k->dtype));
	orr_json_str(j, "family", k->family);
	orr_json_int(j, "samples", (int64_t)k->samples);
	orr_json_int(j, "shapes", (int64_t)k->shapes);
	orr_json_str(j, "how", orr_gemm_how_name(k->how));
	orr_json_str(j, "why", k->why);
	if (k->how == ORR_GEMM_FIT) {
		orr_json_double_exact(j, "a_ns", k->fit.coef[0]);
		orr_json_double_exact(j, "ns_per_flop", k->fit.coef[1]);
		orr_json_double_exact(j, "ns_per_byte", k->fit.coef[2]);
		json_fit(j, "fit", &k->fit);
	}
	orr_json_int(j, "loso_shapes", (int64_t)k->loso_shapes);
	orr_json_double(j, "loso_median", k->loso_median);
	orr_json_double(j, "loso_max", k->loso_max);
	orr_json_close_object(j);
}

static void json_gemms(struct orr_json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_gemm_counts *c = &f->gemm_counts;
	const struct orr_gemm_model *m = &f->gemm;

	orr_json_object(j, "gemm");
	orr_json_int(j, "kernels", (int64_t)c->kernels);
	orr_json_int(j, "samples", (int64_t)c->samples);
	orr_json_int(j, "outside", (int64_t)c->outside);
	orr_json_int(j, "no_shapes", (int64_t)c->no_shapes);
	orr_json_int(j, "bad_shapes", (int64_t)c->bad_shapes);
	orr_json_int(j, "incomplete", (int64_t)c->incomplete);
	orr_json_bool(j, "fitted", f->gemm_err == 0);
	json_spec(j, f->gemm_err ? NULL : m->gpu);
	orr_json_int(j, "below_roofline", f->gemm_err ? 0 : (int64_t)m->below_roofline);
	orr_json_array(j, "efficiency");
	for (int d = 0; !f->gemm_err && d < ORR_DTYPE_COUNT; d++) {
		if (!m->efficiency[d].samples)
			continue;
		orr_json_object(j, NULL);
		orr_json_str(j, "math", orr_dtype_name(d));
		orr_json_double_exact(j, "median", m->efficiency[d].median);
		orr_json_int(j, "samples", (int64_t)m->efficiency[d].samples);
		orr_json_bool(j, "fitted", m->efficiency[d].fitted);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	orr_json_array(j, "efficiency_memory"); /* the bandwidth-bound GEMMs' */
	for (int d = 0; !f->gemm_err && d < ORR_DTYPE_COUNT; d++) {
		if (!m->efficiency_memory[d].samples)
			continue;
		orr_json_object(j, NULL);
		orr_json_str(j, "math", orr_dtype_name(d));
		orr_json_double_exact(j, "median", m->efficiency_memory[d].median);
		orr_json_int(j, "samples", (int64_t)m->efficiency_memory[d].samples);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	json_efficiency_all(j, &m->efficiency_all, !f->gemm_err);
	orr_json_array(j, "classes");
	for (size_t i = 0; !f->gemm_err && i < m->nclasses; i++)
		json_gemm_class(j, &m->classes[i]);
	orr_json_close_array(j);
	orr_json_array(j, "pooled");
	for (int d = 0; !f->gemm_err && d < ORR_DTYPE_COUNT; d++)
		json_pooled(j, "dtype", orr_dtype_name(d), &m->pooled[d]);
	orr_json_close_array(j);
	orr_json_array(j, "tiles");
	for (int d = 0; !f->gemm_err && m->tiles.gpu && d < ORR_DTYPE_COUNT; d++) {
		if (!m->tiles.samples[d])
			continue;
		orr_json_object(j, NULL);
		orr_json_str(j, "math", orr_dtype_name(d));
		orr_json_int(j, "samples", (int64_t)m->tiles.samples[d]);
		orr_json_double_exact(j, "fixed_ns", m->tiles.fixed_ns[d]);
		orr_json_double_exact(j, "ns_per_ns", m->tiles.ns_per_ns[d]);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	orr_json_int(j, "loso_predicted", f->gemm_err ? 0 : (int64_t)m->loso_predicted);
	orr_json_double(j, "loso_median", f->gemm_err ? NAN : m->loso_median);
	orr_json_double(j, "loso_max", f->gemm_err ? NAN : m->loso_max);
	orr_json_close_object(j);
}

/* The rank's parts and its GEMMs by role, summed over parts.steps steps. */
static void json_parts(struct orr_json_out *j, const struct orr_rank_fit *f)
{
	orr_json_object(j, "parts");
	orr_json_int(j, "steps", (int64_t)f->parts.steps);
	orr_json_array(j, "parts");
	for (int p = 0; p < ORR_PART_COUNT; p++) {
		orr_json_object(j, NULL);
		orr_json_str(j, "part", orr_part_name(p));
		orr_json_int(j, "kernels", (int64_t)f->parts.part[p].kernels);
		orr_json_double(j, "ns", f->parts.part[p].ns);
		orr_json_double(j, "backward_ns", f->parts.part[p].backward_ns);
		orr_json_close_object(j);
	}
	orr_json_close_array(j);
	orr_json_int(j, "gemms", (int64_t)f->rank_gemms);
	orr_json_int(j, "gemms_labeled", (int64_t)f->labeled);
	orr_json_array(j, "gemm_roles");
	for (int r = 0; r < ORR_GEMM_ROLE_COUNT; r++)
		for (int p = 0; p < ORR_GEMM_PASS_COUNT; p++) {
			if (!f->roles[r][p].gemms)
				continue;
			orr_json_object(j, NULL);
			orr_json_str(j, "role", orr_gemm_role_name(r));
			orr_json_str(j, "pass", orr_gemm_pass_name(p));
			orr_json_int(j, "gemms", (int64_t)f->roles[r][p].gemms);
			orr_json_double(j, "ns", f->roles[r][p].ns);
			orr_json_close_object(j);
		}
	orr_json_close_array(j);
	orr_json_close_object(j);
}

static void json_kern_family(struct orr_json_out *j, const struct orr_kern_family *k)
{
	orr_json_object(j, NULL);
	orr_json_str(j, "class", orr_kern_class_name(k->cls));
	if (k->dtype < ORR_DTYPE_COUNT)
		orr_json_str(j, "dtype", orr_dtype_name(k->dtype));
	else
		orr_json_double(j, "dtype", NAN); /* null: no floating type */
	orr_json_str(j, "family", k->name);
	orr_json_int(j, "samples", (int64_t)k->samples);
	orr_json_int(j, "sizes", (int64_t)k->sizes);
	orr_json_bool(j, "flops", k->flops);
	orr_json_str(j, "how", orr_gemm_how_name(k->how));
	orr_json_str(j, "why", k->why);
	if (k->how == ORR_GEMM_FIT) {
		orr_json_double_exact(j, "a_ns", k->fit.coef[0]);
		orr_json_double_exact(j, "ns_per_flop", k->flops ? k->fit.coef[1] : 0);
		orr_json_double_exact(j, "ns_per_byte", k->fit.coef[k->flops ? 2 : 1]);
		json_fit(j, "fit", &k->fit);
	}
	orr_json_int(j, "loso_sizes", (int64_t)k->loso_sizes);
	orr_json_double(j, "loso_median", k->loso_median);
	orr_json_double(j, "loso_max", k->loso_max);
	orr_json_close_object(j);
}

/* Class k of the other kernels, when it has kernels or families: counts, efficiency, errors. */
static void json_kern_class(struct orr_json_out *j, const struct orr_rank_fit *f, int k)
{
	const struct orr_kern_counts *c = &f->kern_counts;
	const struct orr_kern_model *m = &f->kern;
	const struct orr_kern_class_summary *s = &m->classes[k];

	if (!c->by_class[k] && !s->families)
		return;
	orr_json_object(j, NULL);
	orr_json_str(j, "class", orr_kern_class_name(k));
	orr_json_int(j, "kernels", (int64_t)c->by_class[k]);
	orr_json_int(j, "samples", (int64_t)c->samples_by_class[k]);
	orr_json_int(j, "sizes", f->kern_err ? 0 : (int64_t)s->sizes);
	orr_json_int(j, "families", f->kern_err ? 0 : (int64_t)s->families);
	orr_json_int(j, "fitted_families", f->kern_err ? 0 : (int64_t)s->fitted);
	orr_json_double_exact(j, "efficiency", f->kern_err ? NAN : m->efficiency[k].median);
	orr_json_int(j, "efficiency_samples", f->kern_err ? 0 : (int64_t)m->efficiency[k].samples);
	orr_json_bool(j, "efficiency_fitted", !f->kern_err && m->efficiency[k].fitted);
	orr_json_int(j, "loso_sizes", f->kern_err ? 0 : (int64_t)s->loso_sizes);
	orr_json_double(j, "loso_median", f->kern_err ? NAN : s->loso_median);
	orr_json_double(j, "loso_max", f->kern_err ? NAN : s->loso_max);
	orr_json_close_object(j);
}

static void json_kernels(struct orr_json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_kern_counts *c = &f->kern_counts;
	const struct orr_kern_model *m = &f->kern;

	orr_json_object(j, "kernels");
	orr_json_int(j, "kernels", (int64_t)c->kernels);
	orr_json_int(j, "samples", (int64_t)c->samples);
	orr_json_int(j, "outside", (int64_t)c->outside);
	orr_json_int(j, "no_shapes", (int64_t)c->no_shapes);
	orr_json_int(j, "composite", (int64_t)c->composite);
	orr_json_int(j, "bad_shapes", (int64_t)c->bad_shapes);
	orr_json_int(j, "no_bytes", (int64_t)c->no_bytes);
	orr_json_int(j, "no_time", (int64_t)c->no_time);
	orr_json_int(j, "layout_guessed", (int64_t)c->layout_guessed);
	orr_json_bool(j, "fitted", f->kern_err == 0);
	json_spec(j, f->kern_err ? NULL : m->gpu);
	orr_json_double_exact(j, "floor_ns", f->kern_err ? NAN : m->floor_ns);
	orr_json_int(j, "below_roofline", f->kern_err ? 0 : (int64_t)m->below_roofline);
	orr_json_array(j, "classes");
	for (int k = 0; k < ORR_KERN_CLASS_COUNT; k++)
		json_kern_class(j, f, k);
	orr_json_close_array(j);
	json_efficiency_all(j, &m->efficiency_all, !f->kern_err);
	orr_json_array(j, "families");
	for (size_t i = 0; !f->kern_err && i < m->nfamilies; i++)
		json_kern_family(j, &m->families[i]);
	orr_json_close_array(j);
	orr_json_array(j, "pooled");
	for (int k = 0; !f->kern_err && k < ORR_KERN_CLASS_COUNT; k++)
		json_pooled(j, "class", orr_kern_class_name(k), &m->pooled[k]);
	orr_json_close_array(j);
	orr_json_int(j, "loso_predicted", f->kern_err ? 0 : (int64_t)m->loso_predicted);
	orr_json_double(j, "loso_median", f->kern_err ? NAN : m->loso_median);
	orr_json_double(j, "loso_max", f->kern_err ? NAN : m->loso_max);
	orr_json_close_object(j);
}

/*
 * "launch"'s fields: the time as traced, the profiler's part and without it, the
 * stalls' part and the job's (without both).
 */
static void json_launch(struct orr_json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_launch_time *l = &f->launch;
	char opts[128];

	orr_prof_options_format(f->prof.options, opts, sizeof(opts));
	orr_json_double_exact(j, "step_ns", l->step_ns);
	orr_json_double_exact(j, "profiler_ns", isfinite(l->step_ns) ? l->profiler_ns : NAN);
	orr_json_double_exact(j, "profiler_free_step_ns", l->step_ns - l->profiler_ns);
	orr_json_double_exact(j, "stall_ns", isfinite(l->step_ns) ? l->stall_ns : NAN);
	orr_json_int(j, "stall_peers", (int64_t)l->peers);
	orr_json_double_exact(j, "job_step_ns", l->step_ns - l->profiler_ns - l->stall_ns);
	orr_json_str(j, "profiler_options", opts);
	orr_json_double(j, "profiler_op_ns", f->prof.op_ns);
	orr_json_double(j, "profiler_call_ns", f->prof.call_ns);
	orr_json_double(j, "ops_per_step", isfinite(l->step_ns) ? l->ops : NAN);
	orr_json_double(j, "calls_per_step", isfinite(l->step_ns) ? l->calls : NAN);
	orr_json_str(j, "profiler_source", f->prof.source);
	orr_json_double(j, "observer_op_ns", f->prof.observer_ns);
	orr_json_double(j, "observed_ops_per_step", isfinite(l->step_ns) ? l->observed_ops : NAN);
	orr_json_str(j, "observer_source", f->prof.observer_source);
}

void orr_rank_fit_write_json(const struct orr_rank_fit *f, FILE *out)
{
	struct orr_json_out j;

	orr_json_begin(&j, out);
	orr_json_int(&j, "orrery_costs", 1);
	orr_json_str(&j, "trace", f->trace);
	orr_json_int(&j, "rank", f->rank);
	orr_json_object(&j, "device");
	if (f->device)
		orr_json_str(&j, "name", f->device);
	if (f->gpu)
		orr_json_str(&j, "spec", f->gpu->id);
	orr_json_close_object(&j);
	json_structure(&j, &f->st);
	orr_json_object(&j, "overlap");
	orr_json_int(&j, "kernels", (int64_t)f->overlap.kernels);
	orr_json_int(&j, "overlapped", (int64_t)f->overlap.overlapped);
	orr_json_int(&j, "names", (int64_t)f->overlap.names);
	orr_json_int(&j, "kernels_compared", (int64_t)f->overlap.kernels_compared);
	orr_json_double_exact(&j, "slowdown", f->overlap.names ? f->overlap.slowdown : NAN);
	orr_json_double_exact(&j, "slowdown_min", f->overlap.names ? f->overlap.slowdown_min : NAN);
	orr_json_double_exact(&j, "slowdown_max", f->overlap.names ? f->overlap.slowdown_max : NAN);
	orr_json_close_object(&j);
	orr_json_object(&j, "launch");
	json_launch(&j, f);
	orr_json_close_object(&j);
	json_parts(&j, f);
	json_gemms(&j, f);
	json_kernels(&j, f);
	orr_json_int(&j, "collective_samples", (int64_t)f->nobs);
	orr_json_object(&j, "nccl_tests");
	orr_json_int(&j, "runs", (int64_t)f->nccl_runs);
	orr_json_int(&j, "samples", (int64_t)f->nccl_samples);
	orr_json_close_object(&j);
	orr_json_array(&j, "collectives");
	for (size_t i = 0; i < f->ncoll; i++)
		json_coll(&j, f, &f->coll[i]);
	orr_json_close_array(&j);
	orr_json_end(&j);
}
