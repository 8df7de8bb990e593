/* SPDX-License-Identifier: MIT */
/*
 * whatif's MPI, loaded when whatif runs.  cli/whatif-mpi.c is built into orrery-mpi.so,
 * linked with OpenMPI, and these functions forward to it: the other commands start
 * without MPI's seven libraries, about a third of what is left of a start
 * (docs/performance.md, "Start cost").  The module is looked for beside the executable
 * (the build tree), else where meson installs it; it calls the executable's cli_* and
 * orr_* functions, which the executable exports for it (cli/meson.build).  It is loaded
 * RTLD_GLOBAL: OpenMPI's own plugins, which it loads in MPI_Init, need its symbols.  It
 * is loaded only under a launcher: alone, whatif is rank 0 of 1 and needs no module, so
 * an orrery copied without it still sweeps.
 */
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "whatif.h"
#include "whatif-mpi-config.h"
#include "banned.h"

static struct {
	__typeof__(cli_whatif_mpi_init) *init;
	__typeof__(cli_whatif_mpi_finalize) *finalize;
	__typeof__(cli_whatif_mpi_agree) *agree;
	__typeof__(cli_whatif_mpi_same) *same;
	__typeof__(cli_whatif_mpi_open) *open;
	__typeof__(cli_whatif_mpi_send) *send;
	__typeof__(cli_whatif_mpi_flush) *flush;
	__typeof__(cli_whatif_mpi_merge) *merge;
	__typeof__(cli_whatif_mpi_close) *close;
} mpi;

/* The module beside /proc/self/exe when there is one there, else the installed one. */
static void *open_module(const char **ret_path)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n > 0) {
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (slash && (size_t)(slash + 1 - path) + sizeof(ORR_MPI_MODULE) <= sizeof(path)) {
			memcpy(slash + 1, ORR_MPI_MODULE, sizeof(ORR_MPI_MODULE));
			if (access(path, F_OK) == 0) {
				*ret_path = path;
				return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
			}
		}
	}
	*ret_path = ORR_MPI_MODULE_INSTALL;
	return dlopen(ORR_MPI_MODULE_INSTALL, RTLD_NOW | RTLD_GLOBAL);
}

/* Never closed: MPI stays until the process ends. */
static int load(void)
{
	const char *path;
	void *h = open_module(&path);

	if (!h && access(path, F_OK) != 0) {
		cli_error(
			"cannot load whatif's MPI module: this orrery has none (neither beside it "
			"nor '%s'; a bundle of `make bundle` leaves it out, since it is linked "
			"with the OpenMPI of the machine that built it): run whatif alone, with "
			"--jobs, or an orrery built on this machine",
			ORR_MPI_MODULE_INSTALL);
		return EXIT_FAIL;
	}
	if (!h) {
		cli_error("cannot load whatif's MPI module: %s", dlerror());
		return EXIT_FAIL;
	}
	*(void **)&mpi.finalize = dlsym(h, "cli_whatif_mpi_finalize");
	*(void **)&mpi.agree = dlsym(h, "cli_whatif_mpi_agree");
	*(void **)&mpi.same = dlsym(h, "cli_whatif_mpi_same");
	*(void **)&mpi.open = dlsym(h, "cli_whatif_mpi_open");
	*(void **)&mpi.send = dlsym(h, "cli_whatif_mpi_send");
	*(void **)&mpi.flush = dlsym(h, "cli_whatif_mpi_flush");
	*(void **)&mpi.merge = dlsym(h, "cli_whatif_mpi_merge");
	*(void **)&mpi.close = dlsym(h, "cli_whatif_mpi_close");
	*(void **)&mpi.init = dlsym(h, "cli_whatif_mpi_init");
	if (!mpi.finalize || !mpi.agree || !mpi.same || !mpi.open || !mpi.send || !mpi.flush ||
	    !mpi.merge || !mpi.close || !mpi.init) {
		mpi.init = NULL;
		cli_error("whatif's MPI module '%s' is not this orrery's", path);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size)
{
	*ret_rank = 0;
	*ret_size = 1;
	if (!cli_whatif_launched())
		return EXIT_OK;
	if (!mpi.init && load() != EXIT_OK)
		return EXIT_FAIL;
	return mpi.init(argc, argv, ret_rank, ret_size);
}

/* These three run in one process too, where the module may not be loaded. */
void cli_whatif_mpi_finalize(int size)
{
	if (size > 1)
		mpi.finalize(size);
}

int cli_whatif_mpi_agree(int size, int status)
{
	return size > 1 ? mpi.agree(size, status) : status;
}

int cli_whatif_mpi_same(int rank, int size, const struct orr_whatif_digest *d)
{
	return size > 1 ? mpi.same(rank, size, d) : EXIT_OK;
}

/* The others run only with several processes, after cli_whatif_mpi_init() loaded them. */

struct cli_whatif_mpi *cli_whatif_mpi_open(int rank, int size, uint64_t count)
{
	return mpi.open(rank, size, count);
}

int cli_whatif_mpi_send(void *data, const struct orr_whatif_result *r)
{
	return mpi.send(data, r);
}

void cli_whatif_mpi_flush(struct cli_whatif_mpi *m)
{
	mpi.flush(m);
}

void cli_whatif_mpi_merge(struct cli_whatif_mpi *m, uint64_t below,
			  void (*emit)(void *data, const struct orr_whatif_result *r), void *data)
{
	mpi.merge(m, below, emit, data);
}

void cli_whatif_mpi_close(struct cli_whatif_mpi *m)
{
	if (mpi.close) /* also from a sweep freed before MPI was loaded */
		mpi.close(m);
}
