/* SPDX-License-Identifier: MIT */
/*
 * orrery fit: the JSON report (docs/orrery-fit.md), also what -o writes and
 * orr_costs_read() reads back.  Whatever the models' predictions read is written with
 * json_double_exact(), so that the models read back predict exactly as these do.
 */
#include <math.h>

#include "cli.h"
#include "fit.h"
#include "banned.h"

/* A least-squares fit: its coefficients (nparams of them) and its errors. */
static void json_fit(struct json_out *j, const char *key, const struct orr_fit *fit)
{
	json_object(j, key);
	json_int(j, "samples", (int64_t)fit->samples);
	json_int(j, "rank", (int64_t)fit->rank);
	json_bool(j, "relative", fit->relative);
	json_array(j, "coef");
	for (size_t i = 0; i < fit->nparams && i < ORR_FIT_MAX_PARAMS; i++)
		json_double_exact(j, NULL, fit->coef[i]);
	json_close_array(j);
	json_double(j, "fit_median", fit->fit_median);
	json_double(j, "fit_max", fit->fit_max);
	json_double(j, "loo_median", fit->loo_median);
	json_double(j, "loo_max", fit->loo_max);
	json_close_object(j);
}

/* A pooled fit (no GPU known) of the dtype or class `name`, when there is one. */
static void json_pooled(struct json_out *j, const char *key, const char *name,
			const struct orr_fit *fit)
{
	if (!fit->nparams)
		return;
	json_object(j, NULL);
	json_str(j, key, name);
	json_fit(j, "fit", fit);
	json_close_object(j);
}

/* The hardware table's entry a model was fitted for: its id, or null. */
static void json_spec(struct json_out *j, const struct orr_gpu_spec *gpu)
{
	if (gpu)
		json_str(j, "spec", gpu->id);
	else
		json_double(j, "spec", NAN); /* null */
}

/* The efficiency over every group, the fallback of a group without samples. */
static void json_efficiency_all(struct json_out *j, const struct orr_gemm_efficiency *e, bool ok)
{
	json_double_exact(j, "efficiency_all", ok ? e->median : NAN);
	json_int(j, "efficiency_all_samples", ok ? (int64_t)e->samples : 0);
	json_bool(j, "efficiency_all_fitted", ok && e->fitted);
}

static void json_structure(struct json_out *j, const struct orr_structure *s)
{
	struct orr_named_value v[20];
	size_t n = orr_structure_values(s, v);

	json_object(j, "structure");
	json_int(j, "rank", s->rank);
	json_object(j, "phases");
	json_bool(j, "forward", s->forward);
	json_bool(j, "backward", s->backward);
	json_bool(j, "optimizer", s->optimizer);
	json_bool(j, "data_loading", s->data_loading);
	json_close_object(j);
	json_bool(j, "gated_mlp", s->gated_mlp);
	/* Megatron's names: a gated MLP is --swiglu; tied or untied, a trace does not tell */
	json_bool(j, "swiglu", s->gated_mlp);
	json_double(j, "untie_embeddings_and_output_weights", NAN); /* null */
	json_int(j, "repeat_kernels", (int64_t)s->repeat_kernels);
	json_array(j, "communicators");
	for (size_t i = 0; i < s->ncomms; i++) {
		const struct orr_comm_role *c = &s->comms[i];

		json_object(j, NULL);
		if (c->name)
			json_str(j, "name", c->name);
		if (c->desc)
			json_str(j, "desc", c->desc);
		json_int(j, "size", c->size);
		json_int(j, "collectives", (int64_t)c->collectives);
		json_str(j, "role", orr_par_name(c->role));
		json_str(j, "how", orr_value_how_name(c->how));
		json_str(j, "why", c->why);
		json_close_object(j);
	}
	json_close_array(j);
	for (size_t i = 0; i < n; i++) {
		json_object(j, v[i].name);
		if (v[i].v->how == ORR_VALUE_UNKNOWN)
			json_double(j, "value", NAN); /* null */
		else
			json_int(j, "value", v[i].v->value);
		json_str(j, "how", orr_value_how_name(v[i].v->how));
		json_str(j, "why", v[i].v->why);
		json_close_object(j);
	}
	json_close_object(j);
}

static void json_coll(struct json_out *j, const struct orr_rank_fit *f,
		      const struct orr_rank_fit_coll *c)
{
	json_object(j, NULL);
	json_str(j, "kind", orr_coll_kind_name(c->kind));
	json_str(j, "link", orr_link_name(c->link));
	json_int(j, "samples", (int64_t)c->samples);
	json_int(j, "coupled", (int64_t)c->coupled);
	json_int(j, "sized_by_caller", (int64_t)c->by_caller);
	json_int(j, "sizes", (int64_t)c->sizes);
	json_int(j, "group_sizes", (int64_t)c->groups);
	json_bool(j, "from_alone", c->from_alone);
	json_object(j, "measured");
	json_double(j, "median_bytes", c->median_bytes);
	json_double(j, "median_ns", c->median_ns);
	json_int(j, "group", c->group);
	json_double(j, "bus_bytes_per_s", c->median_bus_bytes_per_s);
	json_double(j, "spec_bytes_per_s",
		    orr_rank_fit_spec_link(f, c->link) > 0 ? orr_rank_fit_spec_link(f, c->link)
							   : NAN);
	json_close_object(j);
	json_bool(j, "fitted", c->err == 0);
	json_bool(j, "constrained", c->err == 0 && c->m.constrained);
	json_bool(j, "per_rank_latency", c->err == 0 && c->m.per_rank_latency);
	json_double(j, "fit_median", c->err ? NAN : c->m.fit_median);
	json_double(j, "fit_max", c->err ? NAN : c->m.fit_max);
	json_double(j, "loo_median", c->err ? NAN : c->m.loo_median);
	json_double(j, "loo_max", c->err ? NAN : c->m.loo_max);
	json_array(j, "bands");
	for (size_t i = 0; !c->err && i < c->m.nbands; i++) {
		const struct orr_coll_band *b = &c->m.bands[i];

		json_object(j, NULL);
		json_double_exact(j, "lo_bytes", b->lo_bytes);
		json_double_exact(j, "hi_bytes", b->hi_bytes); /* null: no upper end */
		json_double_exact(j, "alpha_ns", b->alpha_ns);
		json_double_exact(j, "alpha_rank_ns", b->alpha_rank_ns);
		json_double_exact(j, "bus_bytes_per_s", b->bus_bytes_per_s);
		json_fit(j, "fit", &b->fit);
		json_close_object(j);
	}
	json_close_array(j);
	json_close_object(j);
}

/* One class of the GEMM model: its fit, or how it falls back. */
static void json_gemm_class(struct json_out *j, const struct orr_gemm_class *k)
{
	json_object(j, NULL);
	json_str(j, "dtype", orr_dtype_name(k->dtype));
	json_str(j, "family", k->family);
	json_int(j, "samples", (int64_t)k->samples);
	json_int(j, "shapes", (int64_t)k->shapes);
	json_str(j, "how", orr_gemm_how_name(k->how));
	json_str(j, "why", k->why);
	if (k->how == ORR_GEMM_FIT) {
		json_double_exact(j, "a_ns", k->fit.coef[0]);
		json_double_exact(j, "ns_per_flop", k->fit.coef[1]);
		json_double_exact(j, "ns_per_byte", k->fit.coef[2]);
		json_fit(j, "fit", &k->fit);
	}
	json_int(j, "loso_shapes", (int64_t)k->loso_shapes);
	json_double(j, "loso_median", k->loso_median);
	json_double(j, "loso_max", k->loso_max);
	json_close_object(j);
}

static void json_gemms(struct json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_gemm_counts *c = &f->gemm_counts;
	const struct orr_gemm_model *m = &f->gemm;

	json_object(j, "gemm");
	json_int(j, "kernels", (int64_t)c->kernels);
	json_int(j, "samples", (int64_t)c->samples);
	json_int(j, "outside", (int64_t)c->outside);
	json_int(j, "no_shapes", (int64_t)c->no_shapes);
	json_int(j, "bad_shapes", (int64_t)c->bad_shapes);
	json_int(j, "incomplete", (int64_t)c->incomplete);
	json_bool(j, "fitted", f->gemm_err == 0);
	json_spec(j, f->gemm_err ? NULL : m->gpu);
	json_int(j, "below_roofline", f->gemm_err ? 0 : (int64_t)m->below_roofline);
	json_array(j, "efficiency");
	for (int d = 0; !f->gemm_err && d < ORR_DTYPE_COUNT; d++) {
		if (!m->efficiency[d].samples)
			continue;
		json_object(j, NULL);
		json_str(j, "math", orr_dtype_name(d));
		json_double_exact(j, "median", m->efficiency[d].median);
		json_int(j, "samples", (int64_t)m->efficiency[d].samples);
		json_bool(j, "fitted", m->efficiency[d].fitted);
		json_close_object(j);
	}
	json_close_array(j);
	json_efficiency_all(j, &m->efficiency_all, !f->gemm_err);
	json_array(j, "classes");
	for (size_t i = 0; !f->gemm_err && i < m->nclasses; i++)
		json_gemm_class(j, &m->classes[i]);
	json_close_array(j);
	json_array(j, "pooled");
	for (int d = 0; !f->gemm_err && d < ORR_DTYPE_COUNT; d++)
		json_pooled(j, "dtype", orr_dtype_name(d), &m->pooled[d]);
	json_close_array(j);
	json_array(j, "tiles");
	for (int d = 0; !f->gemm_err && m->tiles.gpu && d < ORR_DTYPE_COUNT; d++) {
		if (!m->tiles.samples[d])
			continue;
		json_object(j, NULL);
		json_str(j, "math", orr_dtype_name(d));
		json_int(j, "samples", (int64_t)m->tiles.samples[d]);
		json_double_exact(j, "fixed_ns", m->tiles.fixed_ns[d]);
		json_double_exact(j, "ns_per_ns", m->tiles.ns_per_ns[d]);
		json_close_object(j);
	}
	json_close_array(j);
	json_int(j, "loso_predicted", f->gemm_err ? 0 : (int64_t)m->loso_predicted);
	json_double(j, "loso_median", f->gemm_err ? NAN : m->loso_median);
	json_double(j, "loso_max", f->gemm_err ? NAN : m->loso_max);
	json_close_object(j);
}

/* The rank's parts and its GEMMs by role, summed over parts.steps steps. */
static void json_parts(struct json_out *j, const struct orr_rank_fit *f)
{
	json_object(j, "parts");
	json_int(j, "steps", (int64_t)f->parts.steps);
	json_array(j, "parts");
	for (int p = 0; p < ORR_PART_COUNT; p++) {
		json_object(j, NULL);
		json_str(j, "part", orr_part_name(p));
		json_int(j, "kernels", (int64_t)f->parts.part[p].kernels);
		json_double(j, "ns", f->parts.part[p].ns);
		json_double(j, "backward_ns", f->parts.part[p].backward_ns);
		json_close_object(j);
	}
	json_close_array(j);
	json_int(j, "gemms", (int64_t)f->rank_gemms);
	json_int(j, "gemms_labeled", (int64_t)f->labeled);
	json_array(j, "gemm_roles");
	for (int r = 0; r < ORR_GEMM_ROLE_COUNT; r++)
		for (int p = 0; p < ORR_GEMM_PASS_COUNT; p++) {
			if (!f->roles[r][p].gemms)
				continue;
			json_object(j, NULL);
			json_str(j, "role", orr_gemm_role_name(r));
			json_str(j, "pass", orr_gemm_pass_name(p));
			json_int(j, "gemms", (int64_t)f->roles[r][p].gemms);
			json_double(j, "ns", f->roles[r][p].ns);
			json_close_object(j);
		}
	json_close_array(j);
	json_close_object(j);
}

static void json_kern_family(struct json_out *j, const struct orr_kern_family *k)
{
	json_object(j, NULL);
	json_str(j, "class", orr_kern_class_name(k->cls));
	if (k->dtype < ORR_DTYPE_COUNT)
		json_str(j, "dtype", orr_dtype_name(k->dtype));
	else
		json_double(j, "dtype", NAN); /* null: no floating type */
	json_str(j, "family", k->name);
	json_int(j, "samples", (int64_t)k->samples);
	json_int(j, "sizes", (int64_t)k->sizes);
	json_bool(j, "flops", k->flops);
	json_str(j, "how", orr_gemm_how_name(k->how));
	json_str(j, "why", k->why);
	if (k->how == ORR_GEMM_FIT) {
		json_double_exact(j, "a_ns", k->fit.coef[0]);
		json_double_exact(j, "ns_per_flop", k->flops ? k->fit.coef[1] : 0);
		json_double_exact(j, "ns_per_byte", k->fit.coef[k->flops ? 2 : 1]);
		json_fit(j, "fit", &k->fit);
	}
	json_int(j, "loso_sizes", (int64_t)k->loso_sizes);
	json_double(j, "loso_median", k->loso_median);
	json_double(j, "loso_max", k->loso_max);
	json_close_object(j);
}

/* Class k of the other kernels, when it has kernels or families: counts, efficiency, errors. */
static void json_kern_class(struct json_out *j, const struct orr_rank_fit *f, int k)
{
	const struct orr_kern_counts *c = &f->kern_counts;
	const struct orr_kern_model *m = &f->kern;
	const struct orr_kern_class_summary *s = &m->classes[k];

	if (!c->by_class[k] && !s->families)
		return;
	json_object(j, NULL);
	json_str(j, "class", orr_kern_class_name(k));
	json_int(j, "kernels", (int64_t)c->by_class[k]);
	json_int(j, "samples", (int64_t)c->samples_by_class[k]);
	json_int(j, "sizes", f->kern_err ? 0 : (int64_t)s->sizes);
	json_int(j, "families", f->kern_err ? 0 : (int64_t)s->families);
	json_int(j, "fitted_families", f->kern_err ? 0 : (int64_t)s->fitted);
	json_double_exact(j, "efficiency", f->kern_err ? NAN : m->efficiency[k].median);
	json_int(j, "efficiency_samples", f->kern_err ? 0 : (int64_t)m->efficiency[k].samples);
	json_bool(j, "efficiency_fitted", !f->kern_err && m->efficiency[k].fitted);
	json_int(j, "loso_sizes", f->kern_err ? 0 : (int64_t)s->loso_sizes);
	json_double(j, "loso_median", f->kern_err ? NAN : s->loso_median);
	json_double(j, "loso_max", f->kern_err ? NAN : s->loso_max);
	json_close_object(j);
}

static void json_kernels(struct json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_kern_counts *c = &f->kern_counts;
	const struct orr_kern_model *m = &f->kern;

	json_object(j, "kernels");
	json_int(j, "kernels", (int64_t)c->kernels);
	json_int(j, "samples", (int64_t)c->samples);
	json_int(j, "outside", (int64_t)c->outside);
	json_int(j, "no_shapes", (int64_t)c->no_shapes);
	json_int(j, "composite", (int64_t)c->composite);
	json_int(j, "bad_shapes", (int64_t)c->bad_shapes);
	json_int(j, "no_bytes", (int64_t)c->no_bytes);
	json_int(j, "no_time", (int64_t)c->no_time);
	json_int(j, "layout_guessed", (int64_t)c->layout_guessed);
	json_bool(j, "fitted", f->kern_err == 0);
	json_spec(j, f->kern_err ? NULL : m->gpu);
	json_double_exact(j, "floor_ns", f->kern_err ? NAN : m->floor_ns);
	json_int(j, "below_roofline", f->kern_err ? 0 : (int64_t)m->below_roofline);
	json_array(j, "classes");
	for (int k = 0; k < ORR_KERN_CLASS_COUNT; k++)
		json_kern_class(j, f, k);
	json_close_array(j);
	json_efficiency_all(j, &m->efficiency_all, !f->kern_err);
	json_array(j, "families");
	for (size_t i = 0; !f->kern_err && i < m->nfamilies; i++)
		json_kern_family(j, &m->families[i]);
	json_close_array(j);
	json_array(j, "pooled");
	for (int k = 0; !f->kern_err && k < ORR_KERN_CLASS_COUNT; k++)
		json_pooled(j, "class", orr_kern_class_name(k), &m->pooled[k]);
	json_close_array(j);
	json_int(j, "loso_predicted", f->kern_err ? 0 : (int64_t)m->loso_predicted);
	json_double(j, "loso_median", f->kern_err ? NAN : m->loso_median);
	json_double(j, "loso_max", f->kern_err ? NAN : m->loso_max);
	json_close_object(j);
}

/* "launch"'s fields: the time as traced, the profiler's part and without it. */
static void json_launch(struct json_out *j, const struct orr_rank_fit *f)
{
	const struct orr_launch_time *l = &f->launch;
	char opts[128];

	orr_prof_options_format(f->prof.options, opts, sizeof(opts));
	json_double_exact(j, "step_ns", l->step_ns);
	json_double_exact(j, "profiler_ns", isfinite(l->step_ns) ? l->profiler_ns : NAN);
	json_double_exact(j, "profiler_free_step_ns", l->step_ns - l->profiler_ns);
	json_str(j, "profiler_options", opts);
	json_double(j, "profiler_op_ns", f->prof.op_ns);
	json_double(j, "profiler_call_ns", f->prof.call_ns);
	json_double(j, "ops_per_step", isfinite(l->step_ns) ? l->ops : NAN);
	json_double(j, "calls_per_step", isfinite(l->step_ns) ? l->calls : NAN);
	json_str(j, "profiler_source", f->prof.source);
}

void cli_fit_json(const struct orr_rank_fit *f, FILE *out)
{
	struct json_out j;

	json_begin(&j, out);
	json_int(&j, "orrery_costs", 1);
	json_str(&j, "trace", f->trace);
	json_int(&j, "rank", f->rank);
	json_object(&j, "device");
	if (f->device)
		json_str(&j, "name", f->device);
	if (f->gpu)
		json_str(&j, "spec", f->gpu->id);
	json_close_object(&j);
	json_structure(&j, &f->st);
	json_object(&j, "overlap");
	json_int(&j, "kernels", (int64_t)f->overlap.kernels);
	json_int(&j, "overlapped", (int64_t)f->overlap.overlapped);
	json_int(&j, "names", (int64_t)f->overlap.names);
	json_int(&j, "kernels_compared", (int64_t)f->overlap.kernels_compared);
	json_double_exact(&j, "slowdown", f->overlap.names ? f->overlap.slowdown : NAN);
	json_double_exact(&j, "slowdown_min", f->overlap.names ? f->overlap.slowdown_min : NAN);
	json_double_exact(&j, "slowdown_max", f->overlap.names ? f->overlap.slowdown_max : NAN);
	json_close_object(&j);
	json_object(&j, "launch");
	json_launch(&j, f);
	json_close_object(&j);
	json_parts(&j, f);
	json_gemms(&j, f);
	json_kernels(&j, f);
	json_int(&j, "collective_samples", (int64_t)f->nobs);
	json_object(&j, "nccl_tests");
	json_int(&j, "runs", (int64_t)f->nccl_runs);
	json_int(&j, "samples", (int64_t)f->nccl_samples);
	json_close_object(&j);
	json_array(&j, "collectives");
	for (size_t i = 0; i < f->ncoll; i++)
		json_coll(&j, f, &f->coll[i]);
	json_close_array(&j);
	json_end(&j);
}
