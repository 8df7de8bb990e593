/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input as a costs file (orr_costs_read_buffer()), then the models
 * read back predicting GEMMs, kernels and collectives like those they hold and unlike
 * them, and a small step synthesized with them: whatever a file holds, the models it
 * gives must be safe to use.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "orrery/estimate.h"
#include "orrery/estimator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A GEMM of each class's dtype and family, and of every dtype with none of them. */
static void gemms(const struct orr_gemm_model *m)
{
	struct orr_gemm_sample q;

	memset(&q, 0, sizeof(q));
	q.flops = 2e9;
	q.bytes = 3e6;
	for (size_t i = 0; i < m->nclasses + ORR_DTYPE_COUNT; i++) {
		if (i < m->nclasses) {
			q.dtype = q.math = m->classes[i].dtype;
			memcpy(q.family, m->classes[i].family, sizeof(q.family));
		} else {
			q.dtype = q.math = (enum orr_dtype)(i - m->nclasses);
			snprintf(q.family, sizeof(q.family), "none");
		}
		(void)orr_gemm_model_time(m, &q, NULL);
	}
}

/* A kernel of each family's class, dtype and name, and of every class with none of them. */
static void kernels(const struct orr_kern_model *m)
{
	struct orr_kern_sample q;

	memset(&q, 0, sizeof(q));
	q.bytes = 1e6;
	for (size_t i = 0; i < m->nfamilies + ORR_KERN_CLASS_COUNT; i++) {
		if (i < m->nfamilies) {
			q.cls = m->families[i].cls;
			q.dtype = m->families[i].dtype;
			q.flops = m->families[i].flops ? 1e9 : 0;
			memcpy(q.family, m->families[i].name, sizeof(q.family));
		} else {
			q.cls = (enum orr_kern_class)(i - m->nfamilies);
			q.dtype = ORR_DTYPE_COUNT;
			snprintf(q.family, sizeof(q.family), "none");
		}
		(void)orr_kern_model_time(m, &q, NULL);
	}
}

/*
 * A small step synthesized with the models read, as `orrery estimate --costs` does: what
 * the reader accepts must time a step without overflowing its placement (issue 31, N6),
 * or be refused with a reason.
 */
static void step(const struct orr_costs *c)
{
	struct orr_train_config t = {
		.layers = 2,
		.hidden = 256,
		.heads = 4,
		.kv_groups = 4,
		.ffn = 1024,
		.vocab = 1024,
		.seq = 128,
		.micro_batch = 1,
		.micro_batches = 2,
		.tp = 1,
		.pp = 2,
		.dp = 2,
		.cp = 1,
		.vpp = 1,
		.flash_attention = true,
		.precision = ORR_DTYPE_BF16,
	};
	struct orr_synth_costs k;
	struct orr_synth s;

	memset(&k, 0, sizeof(k));
	k.gpu = c->gpu ? c->gpu : orr_gpu_spec_by_id("h100-sxm");
	k.m.gemm = c->gemm_fitted ? &c->gemm : NULL;
	k.m.kern = c->kern_fitted ? &c->kern : NULL;
	k.cpu_op_ns = c->launch_step_ns > 0 ? c->launch_step_ns / 100 : 0;
	for (size_t i = 0; i < c->ncoll; i++) {
		if (c->coll[i].m.constrained)
			k.m.coll[c->coll[i].kind][c->coll[i].link] = &c->coll[i].m;
		if (c->coll[i].measured_bus_bytes_per_s > 0)
			k.bus_bytes_per_s[c->coll[i].kind][c->coll[i].link] =
				c->coll[i].measured_bus_bytes_per_s;
	}
	if (orr_synth_time(&t, false, &k, NULL, &s, NULL) == 0)
		orr_synth_release(&s);
}

/* The input read, and its models asked for GEMMs, kernels and collectives. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double bytes[] = { 0, 1, 4096, 1e9, 1e15 };
	struct orr_costs c;
	struct orr_diag diag;

	if (orr_costs_read_buffer("fuzz.json", (const char *)data, size, &c, &diag) != 0)
		return 0;
	gemms(&c.gemm);
	kernels(&c.kern);
	for (size_t i = 0; i < c.ncoll; i++)
		for (size_t b = 0; b < sizeof(bytes) / sizeof(bytes[0]); b++)
			for (int g = 1; g <= 64; g *= 4)
				(void)orr_coll_model_time(&c.coll[i].m, bytes[b], g);
	step(&c);
	orr_costs_release(&c);
	return 0;
}
