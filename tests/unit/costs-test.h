/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the costs file tests (test-estimator-costs.c, the round trips, and
 * test-estimator-costs-bad.c, the files refused): writing orr_rank_fit_write_json()'s
 * text to a file, and models fitted on synthetic samples made to reach every branch.
 */
#ifndef ORRERY_COSTS_TEST_H
#define ORRERY_COSTS_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orrery/estimator.h"
#include "orrery/analysis.h"
#include "test-util.h"

/* ---- writing ---- */

/*
 * The text of orr_rank_fit_write_json(f) (free()).  Never inlined (and so not inline, unlike the
 * rest): inlined, GCC takes the text for the stream's local buffer pointer and warns of a
 * dangling pointer.  Both tests use it.
 */
__attribute__((noinline)) static char *costs_text(const struct orr_rank_fit *f, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	orr_rank_fit_write_json(f, out);
	assert_int_equal(fclose(out), 0);
	*ret_len = len;
	return buf;
}

/* DIR/NAME holding text[0..len), written as orrery writes its outputs; the path (free()). */
static inline char *write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = orr_xasprintf("%s/%s", dir, name);
	struct orr_outfile out;

	assert_int_equal(orr_outfile_open(&out, path, 0), 0);
	assert_non_null(orr_outfile_stream(&out));
	assert_int_equal(fwrite(text, 1, len, orr_outfile_stream(&out)), len);
	assert_int_equal(orr_outfile_commit(&out, false), 0);
	return path;
}

/* ---- models fitted here, to reach every branch ---- */

/* A time near a + b·FLOP + c·bytes, off by a few per cent, so that fits are not exact. */
static inline double noisy(double flops, double bytes, size_t i)
{
	return (3000 + flops / 150e3 + bytes / 1500) * (1 + 0.03 * sin((double)i));
}

/*
 * GEMMs: a class fitted on four shapes, a bf16 class of one shape (pooled without a GPU,
 * roofline with one), an fp32 class on TF32 tensor cores of one shape (none without a
 * GPU: its dtype has too few shapes).
 */
static inline size_t synthetic_gemms(struct orr_gemm_sample *s)
{
	static const struct {
		const char *family;
		enum orr_dtype dtype, math;
		int64_t m, n, k;
	} g[] = {
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 512, 1024, 256 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 1024, 1024, 512 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 2048, 512, 1024 },
		{ "cutlass_a", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 4096, 4096, 1024 },
		{ "cutlass_b", ORR_DTYPE_BF16, ORR_DTYPE_BF16, 256, 256, 256 },
		{ "volta_sgemm", ORR_DTYPE_FP32, ORR_DTYPE_TF32, 128, 128, 128 },
	};
	size_t n = 0;

	for (size_t i = 0; i < 2 * sizeof(g) / sizeof(g[0]); i++, n++) {
		size_t j = i % (sizeof(g) / sizeof(g[0]));
		int eb = g[j].dtype == ORR_DTYPE_FP32 ? 4 : 2;

		memset(&s[n], 0, sizeof(s[n]));
		snprintf(s[n].family, sizeof(s[n].family), "%s", g[j].family);
		s[n].op = "aten::mm";
		s[n].dtype = g[j].dtype;
		s[n].math = g[j].math;
		s[n].elem_bytes = eb;
		s[n].batch = 1;
		s[n].m = g[j].m;
		s[n].n = g[j].n;
		s[n].k = g[j].k;
		s[n].flops = 2.0 * (double)(g[j].m * g[j].n * g[j].k);
		s[n].bytes = eb * (double)(g[j].m * g[j].k + g[j].k * g[j].n + g[j].m * g[j].n);
		s[n].ns = noisy(s[n].flops, s[n].bytes, i);
		s[n].kernels = 1;
	}
	return n;
}

/*
 * Other kernels: a norm family fitted on bytes, an attention family fitted with FLOPs,
 * an elementwise family fitted and one of one size (pooled, or the roofline), and a
 * copy with no dtype.
 */
static inline size_t synthetic_kernels(struct orr_kern_sample *s)
{
	static const struct {
		enum orr_kern_class cls;
		const char *family;
		enum orr_dtype dtype;
		double bytes, flops;
	} k[] = {
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 1 << 20, 0 },
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 4 << 20, 0 },
		{ ORR_KERN_NORM, "ln", ORR_DTYPE_BF16, 16 << 20, 0 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 8 << 20, 3e10 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 16 << 20, 1.2e11 },
		{ ORR_KERN_ATTENTION, "fa", ORR_DTYPE_BF16, 32 << 20, 4.8e11 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 2 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 8 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "mul", ORR_DTYPE_BF16, 64 << 20, 0 },
		{ ORR_KERN_ELEMENTWISE, "add", ORR_DTYPE_BF16, 3 << 20, 0 },
		{ ORR_KERN_COPY, "Memcpy DtoD (Device -> Device)", ORR_DTYPE_COUNT, 1 << 16, 0 },
	};
	size_t n = 0;

	for (size_t i = 0; i < 2 * sizeof(k) / sizeof(k[0]); i++, n++) {
		size_t j = i % (sizeof(k) / sizeof(k[0]));

		memset(&s[n], 0, sizeof(s[n]));
		snprintf(s[n].family, sizeof(s[n].family), "%s", k[j].family);
		s[n].cls = k[j].cls;
		s[n].dtype = k[j].dtype;
		s[n].bytes = k[j].bytes;
		s[n].flops = k[j].flops;
		s[n].ns = noisy(k[j].flops, k[j].bytes, i);
		s[n].kernels = 1;
	}
	return n;
}

/*
 * Collectives: all-reduces over 2, 4 and 8 ranks of 1 KiB to 1 GiB (several bands, a
 * per-rank latency), all-gathers over 16 (one band), and send/recv that did not fit.
 */
static inline void synthetic_colls(struct orr_rank_fit *f)
{
	struct orr_coll_sample ar[33], ag[8];
	size_t n = 0;

	f->coll = orr_xcalloc(3, sizeof(*f->coll));
	f->ncoll = 3;
	for (int g = 2; g <= 8; g *= 2)
		for (int e = 10; e <= 30; e += 2, n++)
			ar[n] = (struct orr_coll_sample){
				ldexp(1, e), g, noisy(0, ldexp(1, e) * 2, n) / 10 + g * 700
			};
	for (int i = 0; i < 8; i++)
		ag[i] = (struct orr_coll_sample){ ldexp(3, 16 + 2 * i), 16,
						  noisy(0, ldexp(3, 16 + 2 * i), (size_t)i) / 40 };
	f->coll[0] = (struct orr_rank_fit_coll){ .kind = ORR_COLL_ALL_REDUCE,
						 .link = ORR_LINK_NODE,
						 .samples = n,
						 .coupled = n,
						 .sizes = 11,
						 .groups = 3,
						 .median_bytes = ldexp(1, 20),
						 .median_ns = 12345.5,
						 .median_bus_bytes_per_s = 1.5e11,
						 .group = 4 };
	f->coll[0].err = orr_coll_model_fit(ORR_COLL_ALL_REDUCE, ar, n, &f->coll[0].m);
	f->coll[1] = (struct orr_rank_fit_coll){ .kind = ORR_COLL_ALL_GATHER,
						 .link = ORR_LINK_NETWORK,
						 .samples = 8,
						 .coupled = 8,
						 .sizes = 8,
						 .groups = 1,
						 .group = 16 };
	f->coll[1].err = orr_coll_model_fit(ORR_COLL_ALL_GATHER, ag, 8, &f->coll[1].m);
	f->coll[2] = (struct orr_rank_fit_coll){ .kind = ORR_COLL_SEND_RECV,
						 .samples = 1,
						 .from_alone = true,
						 .err = -EINVAL,
						 .group = 2 };
	f->coll[2].m.kind = ORR_COLL_SEND_RECV;
	assert_int_equal(f->coll[0].err, 0);
	assert_int_equal(f->coll[1].err, 0);
	assert_true(f->coll[0].m.nbands > 1 && f->coll[0].m.per_rank_latency);
}

/* A structure with some values read, the others unknown, and a named communicator. */
static inline void synthetic_structure(struct orr_structure *st)
{
	struct orr_named_value v[20];
	size_t n = orr_structure_values(st, v);

	for (size_t i = 0; i < n; i++) {
		struct orr_value *x = (struct orr_value *)v[i].v;

		snprintf(x->why, sizeof(x->why), "unknown \"%s\" here", v[i].name);
	}
	st->rank = 3;
	st->forward = st->optimizer = st->gated_mlp = true;
	st->layers = (struct orr_value){ 4, ORR_VALUE_READ, "read, \\ and \x01 escaped" };
	st->tp = (struct orr_value){ 8, ORR_VALUE_INFERRED, "inferred" };
	st->ncomms = 2;
	st->comms[0] = (struct orr_comm_role){ .name = "tp-group",
					       .desc = "tensor parallel",
					       .size = 8,
					       .collectives = 81,
					       .role = ORR_PAR_TP,
					       .how = ORR_VALUE_READ,
					       .why = "its description" };
	st->comms[1] = (struct orr_comm_role){ .size = -1, .why = "nothing tells" };
}

/* Everything fitted on the samples above, for gpu (may be NULL); orr_rank_fit_release(). */
static inline void synthetic_fit(const struct orr_gpu_spec *gpu, struct orr_rank_fit *f)
{
	struct orr_gemm_sample gs[12];
	struct orr_kern_sample ks[22];

	memset(f, 0, sizeof(*f));
	f->trace = "synthetic";
	f->rank = 3;
	f->device = gpu ? "NVIDIA H100 80GB HBM3" : NULL;
	f->gpu = gpu;
	synthetic_structure(&f->st);
	f->overlap = (struct orr_overlap){ 100, 10, 3, 40, 1.0123456789012345, 1.001, 1.2 };
	f->gemm_err = orr_gemm_model_fit(gs, synthetic_gemms(gs), gpu, &f->gemm);
	f->kern_err = orr_kern_model_fit(ks, synthetic_kernels(ks), gpu, &f->kern);
	assert_int_equal(f->gemm_err, 0);
	assert_int_equal(f->kern_err, 0);
	synthetic_colls(f);
}

#endif /* ORRERY_COSTS_TEST_H */
