/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif under mpirun (docs/orrery-whatif.md, "Threads and MPI"): each process
 * evaluates its share of the configurations (orr_whatif_part()); the others stream their
 * results to rank 0 in blocks, and rank 0 merges them with its own in the order of the
 * configurations as it reports them, so that no process keeps more than a few blocks.
 * Before that, they compare digests of what they sweep (cli_whatif_mpi_same()): a
 * process given other options or files would otherwise be merged without a word.
 * MPI is started only when OpenMPI's launcher started this process (its environment
 * says so), so that a plain run never touches MPI; a build without MPI (meson
 * -Dmpi=disabled, or no libopenmpi-dev) refuses to run under mpirun rather than have
 * every process sweep everything.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "whatif.h"
#include "whatif-mpi-config.h"
#if ORR_HAVE_MPI
#include <mpi.h>
#endif
#include "banned.h"

#if ORR_HAVE_MPI

#define BLOCK    64 /* results in a message at most */
#define TAG_DATA 1
#define TAG_END  2    /* the last block of a process's results */
#define FLUSH_S  0.02 /* a block is sent when full or this old */

/* A block of results in flight, or being read. */
struct block {
	struct orr_whatif_result v[BLOCK];
	size_t n, at;
	MPI_Request req;
	bool busy; /* req pending */
	bool end;  /* received with TAG_END */
};

/* Rank 0: per other process, the block being merged and the one being received. */
struct peer {
	struct block b[2];
	int cur;
	bool ended;
	uint64_t next_min; /* no result of its to come has a smaller index */
};

struct cli_whatif_mpi {
	int rank, size;
	uint64_t count;      /* the plan's configurations */
	struct block out[2]; /* elsewhere: the block filled and the one being sent */
	int fill;
	double sent_s;
	struct peer *peer; /* rank 0: size of them, its own unused */
};

int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size)
{
	int provided = 0;

	*ret_rank = 0;
	*ret_size = 1;
	if (!cli_whatif_launched())
		return EXIT_OK;
	/* only the thread that called orr_whatif_run() calls MPI; the others evaluate */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		cli_error("cannot start MPI");
		return EXIT_FAIL;
	}
	if (provided < MPI_THREAD_FUNNELED)
		cli_warning("this MPI does not provide MPI_THREAD_FUNNELED: orrery's threads "
			    "never call MPI, but it may not expect them");
	MPI_Comm_rank(MPI_COMM_WORLD, ret_rank);
	MPI_Comm_size(MPI_COMM_WORLD, ret_size);
	if (*ret_size == 1) { /* one process: nothing to share */
		MPI_Finalize();
		return EXIT_OK;
	}
	return EXIT_OK;
}

/*
 * Waits for a request by testing it every millisecond: OpenMPI's blocking calls spin,
 * and would take a core from this process's threads.
 */
static void finish(MPI_Request *req, MPI_Status *st)
{
	struct timespec ms = { 0, 1000 * 1000 };
	int done = 0;

	for (;;) {
		MPI_Test(req, &done, st);
		if (done)
			return;
		nanosleep(&ms, NULL);
	}
}

/* Process r's first configuration from i on (its results come in that order); count past. */
static uint64_t first_of(int r, int size, uint64_t i, uint64_t count)
{
	while (i < count && orr_whatif_part(i, (uint64_t)size) != (uint64_t)r)
		i++;
	return i;
}

static void post_recv(struct block *b, int from)
{
	MPI_Irecv(b->v, (int)sizeof(b->v), MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &b->req);
	b->busy = true;
}

struct cli_whatif_mpi *cli_whatif_mpi_open(int rank, int size, uint64_t count)
{
	struct cli_whatif_mpi *m = orr_xcalloc(1, sizeof(*m));

	m->rank = rank;
	m->size = size;
	m->count = count;
	m->sent_s = cli_now_s();
	if (rank != 0)
		return m;
	m->peer = orr_xcalloc((size_t)size, sizeof(*m->peer));
	for (int r = 1; r < size; r++) {
		post_recv(&m->peer[r].b[0], r);
		m->peer[r].next_min = first_of(r, size, 0, count);
	}
	return m;
}

/* Elsewhere: the filled block to rank 0, once the one before is received. */
static void send_block(struct cli_whatif_mpi *m, int tag)
{
	struct block *b = &m->out[m->fill], *other = &m->out[!m->fill];

	if (other->busy) {
		finish(&other->req, MPI_STATUS_IGNORE);
		other->busy = false;
	}
	/* synchronous: done once rank 0 receives it, so that no more than two blocks wait */
	MPI_Issend(b->v, (int)(b->n * sizeof(b->v[0])), MPI_BYTE, 0, tag, MPI_COMM_WORLD, &b->req);
	b->busy = true;
	m->fill = !m->fill;
	m->out[m->fill].n = 0;
	m->sent_s = cli_now_s();
}

int cli_whatif_mpi_send(void *data, const struct orr_whatif_result *r)
{
	struct cli_whatif_mpi *m = data;
	struct block *b = &m->out[m->fill];

	b->v[b->n++] = *r;
	if (b->n == BLOCK || cli_now_s() - m->sent_s >= FLUSH_S)
		send_block(m, TAG_DATA);
	return 0;
}

void cli_whatif_mpi_flush(struct cli_whatif_mpi *m)
{
	send_block(m, TAG_END);
	for (int i = 0; i < 2; i++)
		if (m->out[i].busy)
			finish(&m->out[i].req, MPI_STATUS_IGNORE);
}

/*
 * Rank 0: the next result of process r, NULL past its last.  Its block being merged is
 * waited for when it is still being received; once received, the next one is received
 * into the other block, which the merge moves on to when this one is used up.
 */
static const struct orr_whatif_result *head(struct cli_whatif_mpi *m, int r)
{
	struct peer *p = &m->peer[r];

	for (;;) {
		struct block *b = &p->b[p->cur];

		if (b->busy) {
			MPI_Status st;
			int bytes = 0;

			finish(&b->req, &st);
			b->busy = false;
			MPI_Get_count(&st, MPI_BYTE, &bytes);
			b->n = (size_t)bytes / sizeof(b->v[0]);
			b->at = 0;
			p->ended = st.MPI_TAG == TAG_END;
			if (!p->ended)
				post_recv(&p->b[!p->cur], r);
		}
		if (b->at < b->n)
			return &b->v[b->at];
		if (p->ended)
			return NULL;
		p->cur = !p->cur;
	}
}

void cli_whatif_mpi_merge(struct cli_whatif_mpi *m, uint64_t below,
			  void (*emit)(void *data, const struct orr_whatif_result *r), void *data)
{
	for (;;) {
		const struct orr_whatif_result *best = NULL, *h;
		int from = 0;

		struct peer *p;

		/* a process whose next result cannot come before `below` is not waited for */
		for (int r = 1; r < m->size; r++)
			if (m->peer[r].next_min < below && (h = head(m, r)) &&
			    (!best || h->index < best->index)) {
				best = h;
				from = r;
			}
		if (!best || best->index >= below)
			return;
		emit(data, best);
		p = &m->peer[from];
		p->next_min = first_of(from, m->size, best->index + 1, m->count);
		p->b[p->cur].at++;
	}
}

void cli_whatif_mpi_close(struct cli_whatif_mpi *m)
{
	if (!m)
		return;
	free(m->peer);
	free(m);
}

void cli_whatif_mpi_finalize(int size)
{
	if (size > 1)
		MPI_Finalize();
}

int cli_whatif_mpi_agree(int size, int status)
{
	int worst = status;

	if (size > 1)
		MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

int cli_whatif_mpi_same(int rank, int size, const struct orr_whatif_digest *d)
{
	struct orr_whatif_digest *all;
	int ret = EXIT_OK;

	if (size < 2)
		return EXIT_OK;
	all = orr_xcalloc((size_t)size, sizeof(*all));
	MPI_Allgather(d->part, ORR_WHATIF_DIGEST_PARTS, MPI_UINT64_T, all, ORR_WHATIF_DIGEST_PARTS,
		      MPI_UINT64_T, MPI_COMM_WORLD);
	for (int r = 1; r < size && ret == EXIT_OK; r++) {
		enum orr_whatif_digest_part p = orr_whatif_digest_diff(&all[0], &all[r]);

		if (p == ORR_WHATIF_DIGEST_PARTS)
			continue;
		/* every process sees the same digests and stops; rank 0 alone says why */
		if (rank == 0)
			cli_error("the processes sweep different spaces: rank %d's %s differs from "
				  "rank 0's; give every process the same options and the same "
				  "files (costs, trace)",
				  r, orr_whatif_digest_part_name(p));
		ret = EXIT_FAIL;
	}
	free(all);
	return ret;
}

#else

int cli_whatif_mpi_init(int *argc, char ***argv, int *ret_rank, int *ret_size)
{
	(void)argc;
	(void)argv;
	*ret_rank = 0;
	*ret_size = 1;
	if (!cli_whatif_launched())
		return EXIT_OK;
	cli_error("this orrery was built without MPI (libopenmpi-dev, meson -Dmpi): under "
		  "mpirun every process would sweep everything; run it alone, with --jobs");
	return EXIT_FAIL;
}

/* Never called: without MPI there is one process. */
struct cli_whatif_mpi *cli_whatif_mpi_open(int rank, int size, uint64_t count)
{
	(void)rank;
	(void)size;
	(void)count;
	return NULL;
}

int cli_whatif_mpi_send(void *data, const struct orr_whatif_result *r)
{
	(void)data;
	(void)r;
	return 0;
}

void cli_whatif_mpi_flush(struct cli_whatif_mpi *m)
{
	(void)m;
}

void cli_whatif_mpi_merge(struct cli_whatif_mpi *m, uint64_t below,
			  void (*emit)(void *data, const struct orr_whatif_result *r), void *data)
{
	(void)m;
	(void)below;
	(void)emit;
	(void)data;
}

void cli_whatif_mpi_close(struct cli_whatif_mpi *m)
{
	(void)m;
}

void cli_whatif_mpi_finalize(int size)
{
	(void)size;
}

int cli_whatif_mpi_agree(int size, int status)
{
	(void)size;
	return status;
}

int cli_whatif_mpi_same(int rank, int size, const struct orr_whatif_digest *d)
{
	(void)rank;
	(void)size;
	(void)d;
	return EXIT_OK;
}

#endif
