/* SPDX-License-Identifier: MIT */
/*
 * What-if rules as written (orrery replay --scale, a --scenario file's lines): GLOB=FACTOR
 * on GPU tasks, cpu:GLOB=FACTOR and cpu@RANK:GLOB=FACTOR on CPU tasks, latency:GLOB=FACTOR
 * and bandwidth:GLOB=FACTOR on collective kernels.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

/* "cpu:" or "cpu@RANK:" before a CPU rule's glob: its length, the rank in *ret_rank. */
static size_t cpu_prefix(const char *arg, int32_t *ret_rank)
{
	char *end;
	long r;

	*ret_rank = -1;
	if (strncmp(arg, "cpu:", 4) == 0)
		return 4;
	if (strncmp(arg, "cpu@", 4) != 0)
		return 0;
	if (arg[4] < '0' || arg[4] > '9')
		return (size_t)-1;
	r = strtol(arg + 4, &end, 10);
	if (*end != ':' || r > INT32_MAX)
		return (size_t)-1;
	*ret_rank = (int32_t)r;
	return (size_t)(end + 1 - arg);
}

/* "latency:" or "bandwidth:" before a communication rule's glob: its length, else 0. */
static size_t comm_prefix(const char *arg, bool *ret_bandwidth)
{
	*ret_bandwidth = strncmp(arg, "bandwidth:", 10) == 0;
	if (*ret_bandwidth)
		return 10;
	return strncmp(arg, "latency:", 8) == 0 ? 8 : 0;
}

int orr_scales_add(struct orr_scales *s, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	int32_t rank;
	bool bw;
	size_t pre = cpu_prefix(arg, &rank), cpre = comm_prefix(arg, &bw);
	char *end;
	double f;

	if (pre == (size_t)-1 || !eq || eq == arg + pre || eq == arg + cpre)
		return -EINVAL;
	/* decimal only: strtod() also reads " 2" and "0x10" (16) */
	if (strspn(eq + 1, "0123456789.eE+-") != strlen(eq + 1))
		return -EINVAL;
	f = strtod(eq + 1, &end);
	/* Beyond ORR_SCALE_MAX a millisecond kernel would outlast 2^62 ns in a few steps. */
	if (end == eq + 1 || *end || !(f >= 0 && f <= ORR_SCALE_MAX))
		return -EINVAL;
	/* A bandwidth divides the transfer: 1/ORR_SCALE_MAX at least, as a factor is. */
	if (cpre && bw && !(f >= 1 / ORR_SCALE_MAX))
		return -EINVAL;
	if (cpre)
		ORR_VEC_PUSH(s->comm, s->ncomm, s->commcap,
			     ((struct orr_comm_rule){
				     orr_xstrndup(arg + cpre, (size_t)(eq - arg) - cpre), f, bw }));
	else if (pre)
		ORR_VEC_PUSH(s->cpu, s->ncpu, s->cpucap,
			     ((struct orr_cpu_rule){
				     orr_xstrndup(arg + pre, (size_t)(eq - arg) - pre), f, rank }));
	else
		ORR_VEC_PUSH(s->v, s->n, s->cap,
			     ((struct orr_scale){ orr_xstrndup(arg, (size_t)(eq - arg)), f }));
	return 0;
}

void orr_scales_release(struct orr_scales *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((char *)s->v[i].glob);
	for (size_t i = 0; i < s->ncpu; i++)
		free(s->cpu[i].glob);
	for (size_t i = 0; i < s->ncomm; i++)
		free(s->comm[i].glob);
	free(s->comm);
	free(s->cpu);
	free(s->v);
	*s = (struct orr_scales){ 0 };
}
