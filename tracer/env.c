/* SPDX-License-Identifier: MIT */
/*
 * The tracer's configuration, from the environment `orrery record` (or the launcher)
 * sets: where to write, the rank identity, and the step window.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "banned.h"

/* A non-negative decimal integer, whole string; -1 when absent or malformed. */
static int64_t parse_count(const char *s)
{
	int64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* The first of the variables that holds a valid number below 2^31, or -1. */
static int32_t first_env(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v = parse_count(getenv(names[i]));

		if (v >= 0 && v <= INT32_MAX)
			return (int32_t)v;
	}
	return -1;
}

static void identity(struct orr__config *c)
{
	static const char *const ranks[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					     "SLURM_PROCID", "LOCAL_RANK" };
	static const char *const worlds[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					      "SLURM_NTASKS" };
	static const char *const locals[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					      "SLURM_LOCALID" };

	c->rank = first_env(ranks, sizeof(ranks) / sizeof(ranks[0]));
	c->world_size = first_env(worlds, sizeof(worlds) / sizeof(worlds[0]));
	c->local_rank = first_env(locals, sizeof(locals) / sizeof(locals[0]));
}

static bool debug_enabled(const char *env)
{
	while (env && *env) {
		size_t n = strcspn(env, ",");

		if ((n == 6 && strncmp(env, "tracer", 6) == 0) ||
		    (n == 3 && strncmp(env, "all", 3) == 0))
			return true;
		env += n;
		if (*env == ',')
			env++;
	}
	return false;
}

static void note_bad(char *bad, size_t size, const char *name)
{
	size_t used = strlen(bad);

	if (used < size)
		snprintf(bad + used, size - used, "%s%s", used ? ", " : "", name);
}

/* A count from NAME, or the default when unset; a malformed value is noted. */
static int64_t count_env(const char *name, char *bad, size_t bad_size)
{
	const char *s = getenv(name);
	int64_t v = parse_count(s);

	if (s && *s && v < 0)
		note_bad(bad, bad_size, name);
	return v < 0 ? 0 : v;
}

static void output_path(struct orr__config *c)
{
	int n;

	if (c->rank >= 0)
		n = snprintf(c->path, sizeof(c->path), "%s/rank-%d-%lld%s", c->dir, (int)c->rank,
			     (long long)c->pid, ORR_NATIVE_SUFFIX);
	else
		n = snprintf(c->path, sizeof(c->path), "%s/pid-%lld%s", c->dir, (long long)c->pid,
			     ORR_NATIVE_SUFFIX);
	c->path_too_long = n < 0 || (size_t)n >= sizeof(c->path);
}

void orr__config_from_env(struct orr__config *c, char *bad, size_t bad_size)
{
	const char *dir = getenv("ORR_RECORD_DIR"), *prefix = getenv("ORR_RECORD_STEP_PREFIX");
	char resolved[PATH_MAX];

	memset(c, 0, sizeof(*c));
	if (bad_size)
		bad[0] = '\0';
	if (!dir || !*dir)
		dir = ".";
	/* Absolute, so that a job changing its directory still writes where it was told. */
	if (realpath(dir, resolved))
		dir = resolved;
	c->path_too_long = strlen(dir) >= sizeof(c->dir);
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	if (!prefix || !*prefix || strlen(prefix) >= sizeof(c->step_prefix)) {
		if (prefix && *prefix)
			note_bad(bad, bad_size, "ORR_RECORD_STEP_PREFIX");
		prefix = "ProfilerStep#";
	}
	snprintf(c->step_prefix, sizeof(c->step_prefix), "%s", prefix);
	c->pid = (int64_t)getpid();
	if (gethostname(c->host, sizeof(c->host)) != 0)
		c->host[0] = '\0';
	c->host[sizeof(c->host) - 1] = '\0';
	identity(c);
	c->skip = count_env("ORR_RECORD_SKIP", bad, bad_size);
	c->steps = count_env("ORR_RECORD_STEPS", bad, bad_size);
	c->debug = debug_enabled(getenv("ORR_DEBUG"));
	if (!c->path_too_long)
		output_path(c);
}
