/* SPDX-License-Identifier: MIT */
/* Helpers of the GEMM model's unit tests (test-estimator-gemm*.c); after cmocka.h. */
#ifndef ORRERY_GEMM_TEST_H
#define ORRERY_GEMM_TEST_H

#include <stdint.h>
#include <stdio.h>

#include "orrery/estimator.h"

/* The synthetic GEMMs' t = a + b·FLOP + c·bytes. */
#define A_NS 4000.0
#define B_NS (1.0 / 150e3) /* ns per FLOP: 150 TFLOP/s */
#define C_NS (1.0 / 1500)  /* ns per byte: 1.5 TB/s */

/* A bf16 sample of family, m x k . k x n, taking A_NS + B_NS x its FLOPs + C_NS x its bytes. */
static inline struct orr_gemm_sample gemm(const char *family, int64_t m, int64_t n, int64_t k)
{
	struct orr_gemm_sample s = { .op = "aten::mm",
				     .dtype = ORR_DTYPE_BF16,
				     .math = ORR_DTYPE_BF16,
				     .elem_bytes = 2,
				     .batch = 1,
				     .m = m,
				     .n = n,
				     .k = k,
				     .kernels = 1 };

	snprintf(s.family, sizeof(s.family), "%s", family);
	s.flops = 2.0 * (double)(m * n * k);
	s.bytes = 2.0 * (double)(m * k + k * n + m * n);
	s.ns = A_NS + B_NS * s.flops + C_NS * s.bytes;
	return s;
}

#endif
