/* SPDX-License-Identifier: MIT */
/*
 * What-if rules as written (orrery replay --scale, a --scenario file's lines): GLOB=FACTOR,
 * gpu:GLOB=FACTOR and gpu@RANK:GLOB=FACTOR on GPU tasks, cpu:GLOB=FACTOR and
 * cpu@RANK:GLOB=FACTOR on CPU tasks, stalls:GLOB=FACTOR and stalls@RANK:GLOB=FACTOR on
 * their stalls, latency:GLOB=FACTOR and bandwidth:GLOB=FACTOR on collective kernels.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orrery/analysis.h"
#include "banned.h"

/*
 * WHAT ("cpu", "gpu" or "stalls") and ":" or "@RANK:" before a rule's glob: the
 * prefix's length, the rank in *ret_rank (-1: none); 0 without one, (size_t)-1 for a
 * bad rank.
 */
static size_t proc_prefix(const char *arg, const char *what, int32_t *ret_rank)
{
	size_t w = strlen(what);
	char *end;
	long r;

	*ret_rank = -1;
	if (strncmp(arg, what, w) != 0)
		return 0;
	if (arg[w] == ':')
		return w + 1;
	if (arg[w] != '@')
		return 0;
	if (arg[w + 1] < '0' || arg[w + 1] > '9')
		return (size_t)-1;
	r = strtol(arg + w + 1, &end, 10);
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
	int32_t rank, grank, srank;
	bool bw;
	size_t pre = proc_prefix(arg, "cpu", &rank), gpre = proc_prefix(arg, "gpu", &grank),
	       spre = proc_prefix(arg, "stalls", &srank), cpre = comm_prefix(arg, &bw);
	char *end;
	double f;

	if (pre == (size_t)-1 || gpre == (size_t)-1 || spre == (size_t)-1 || !eq ||
	    eq == arg + pre || eq == arg + gpre || eq == arg + spre || eq == arg + cpre)
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
	else if (spre)
		ORR_VEC_PUSH(
			s->stall, s->nstall, s->stallcap,
			((struct orr_cpu_rule){ orr_xstrndup(arg + spre, (size_t)(eq - arg) - spre),
						f, srank }));
	else if (pre)
		ORR_VEC_PUSH(s->cpu, s->ncpu, s->cpucap,
			     ((struct orr_cpu_rule){
				     orr_xstrndup(arg + pre, (size_t)(eq - arg) - pre), f, rank }));
	else if (grank >= 0)
		ORR_VEC_PUSH(
			s->gpu, s->ngpu, s->gpucap,
			((struct orr_gpu_rule){ orr_xstrndup(arg + gpre, (size_t)(eq - arg) - gpre),
						f, grank }));
	else
		ORR_VEC_PUSH(s->v, s->n, s->cap,
			     ((struct orr_scale){
				     orr_xstrndup(arg + gpre, (size_t)(eq - arg) - gpre), f }));
	return 0;
}

struct orr_rule orr_scales_rule(const struct orr_scales *s, size_t k)
{
	if (k < s->n)
		return (struct orr_rule){ ORR_RULE_GPU, s->v[k].glob, s->v[k].factor, -1 };
	k -= s->n;
	if (k < s->ngpu)
		return (struct orr_rule){ ORR_RULE_GPU, s->gpu[k].glob, s->gpu[k].factor,
					  s->gpu[k].rank };
	k -= s->ngpu;
	if (k < s->ncpu)
		return (struct orr_rule){ ORR_RULE_CPU, s->cpu[k].glob, s->cpu[k].factor,
					  s->cpu[k].rank };
	k -= s->ncpu;
	if (k < s->nstall)
		return (struct orr_rule){ ORR_RULE_STALLS, s->stall[k].glob, s->stall[k].factor,
					  s->stall[k].rank };
	k -= s->nstall;
	return (struct orr_rule){ s->comm[k].bandwidth ? ORR_RULE_BANDWIDTH : ORR_RULE_LATENCY,
				  s->comm[k].glob, s->comm[k].factor, -1 };
}

const char *orr_rule_on_name(enum orr_rule_on on)
{
	static const char *const names[] = { "gpu", "cpu", "stalls", "latency", "bandwidth" };

	return (unsigned)on < sizeof(names) / sizeof(names[0]) ? names[on] : "?";
}

void orr_scales_release(struct orr_scales *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((char *)s->v[i].glob);
	for (size_t i = 0; i < s->ngpu; i++)
		free(s->gpu[i].glob);
	for (size_t i = 0; i < s->ncpu; i++)
		free(s->cpu[i].glob);
	for (size_t i = 0; i < s->nstall; i++)
		free(s->stall[i].glob);
	for (size_t i = 0; i < s->ncomm; i++)
		free(s->comm[i].glob);
	free(s->comm);
	free(s->stall);
	free(s->cpu);
	free(s->gpu);
	free(s->v);
	*s = (struct orr_scales){ 0 };
}
