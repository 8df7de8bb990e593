/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif under mpirun (docs/orrery-whatif.md, "Threads and MPI"): each process
 * evaluates the configurations i with i % processes == its rank, and rank 0 gathers the
 * results and reports.  MPI is started only when OpenMPI's launcher started this
 * process (its environment says so), so that a plain run never touches MPI; a build
 * without MPI (meson -Dmpi=disabled, or no libopenmpi-dev) refuses to run under mpirun
 * rather than have every process sweep everything.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "whatif.h"
#include "whatif-mpi-config.h"
#if ORR_HAVE_MPI
#include <mpi.h>
#endif
#include "banned.h"

/* Whether a launcher started this process as one of several. */
static bool launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	return false;
}

#if ORR_HAVE_MPI

int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size)
{
	*ret_rank = 0;
	*ret_size = 1;
	if (!launched())
		return EXIT_OK;
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		cli_error("cannot start MPI");
		return EXIT_FAIL;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, ret_rank);
	MPI_Comm_size(MPI_COMM_WORLD, ret_size);
	if (*ret_size == 1) { /* one process: nothing to share */
		MPI_Finalize();
		return EXIT_OK;
	}
	return EXIT_OK;
}

int cli_whatif_mpi_gather(int rank, int size, struct orr_whatif_result **v, size_t *n)
{
	long long mine = (long long)*n, *counts = NULL;
	int *bytes = NULL, *at = NULL, ok = 1;
	struct orr_whatif_result *all = NULL;
	size_t total = 0;
	const size_t one = sizeof(**v);

	if (rank == 0)
		counts = orr_xcalloc((size_t)size, sizeof(*counts));
	MPI_Gather(&mine, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		bytes = orr_xcalloc((size_t)size, sizeof(*bytes));
		at = orr_xcalloc((size_t)size, sizeof(*at));
		for (int r = 0; r < size; r++) {
			if ((unsigned long long)counts[r] > (INT_MAX - total * one) / one) {
				ok = 0;
				break;
			}
			at[r] = (int)(total * one);
			bytes[r] = (int)((size_t)counts[r] * one);
			total += (size_t)counts[r];
		}
		all = orr_xmalloc((total + 1) * one);
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (ok)
		MPI_Gatherv(*v, (int)(*n * one), MPI_BYTE, all, bytes, at, MPI_BYTE, 0,
			    MPI_COMM_WORLD);
	if (rank == 0 && ok) {
		orr_whatif_sort(all, total);
		free(*v);
		*v = all;
		*n = total;
		all = NULL;
	}
	free(all);
	free(counts);
	free(bytes);
	free(at);
	if (!ok && rank == 0)
		cli_error("the results are too many to gather over MPI (2 GiB)");
	return ok ? EXIT_OK : EXIT_FAIL;
}

void cli_whatif_mpi_finalize(int size)
{
	if (size > 1)
		MPI_Finalize();
}

#else

int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size)
{
	(void)argc;
	(void)argv;
	*ret_rank = 0;
	*ret_size = 1;
	if (!launched())
		return EXIT_OK;
	cli_error("this orrery was built without MPI (libopenmpi-dev, meson -Dmpi): under "
		  "mpirun every process would sweep everything; run it alone, with --jobs");
	return EXIT_FAIL;
}

int cli_whatif_mpi_gather(int rank, int size, struct orr_whatif_result **v, size_t *n)
{
	(void)rank;
	(void)size;
	(void)v;
	(void)n;
	return EXIT_OK;
}

void cli_whatif_mpi_finalize(int size)
{
	(void)size;
}

#endif
