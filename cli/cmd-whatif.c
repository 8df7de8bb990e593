/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif: every layout of a model on a GPU budget, estimated and ranked
 * (docs/orrery-whatif.md).  The library makes the sweep ready (orr_whatif_job_open():
 * the space, the inputs every configuration shares) once per process, and what-if/
 * evaluates the configurations on threads; here the processes under mpirun share them,
 * and rank 0 reports.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "whatif.h"
#include "banned.h"

/* The sweep's options as the library takes them. */
static void sweep_options(const struct cli_whatif_options *o, struct orr_whatif_options *ret)
{
	*ret = (struct orr_whatif_options){
		.gpus_min = o->gpus_min,
		.gpus_max = o->gpus_max,
		.recompute = o->recompute,
		.sp = o->sp,
		.distopt = o->distopt,
		.allow_cross_node_tp = o->allow_cross_node_tp,
	};
	for (int i = 0; i < CLI_WHATIF_LISTS; i++)
		ret->list[i] = (struct orr_whatif_list){ o->list[i], o->nlist[i] };
}

static bool show_progress(const struct cli_whatif_options *o, int rank)
{
	if (rank != 0)
		return false;
	/* JSON or CSV streaming to the terminal shows its progress itself */
	if (o->progress < 0 && o->format != CLI_FORMAT_TEXT && !o->out && isatty(STDOUT_FILENO))
		return false;
	return o->progress == 1 || (o->progress < 0 && isatty(STDERR_FILENO));
}

/* A sweep made ready: what its results point to. */
struct cli_whatif_sweep {
	struct orr_trace *t; /* the trace and its graph, with one */
	struct orr_graph *g;
	struct orr_whatif_options wo;
	struct orr_whatif_job job;
	struct cli_layouts w;
	int rank, size;
	struct cli_whatif_mpi *mpi;
	void (*row)(void *data, const struct orr_whatif_result *r);
	void *row_data;
};

/* Rank 0: a result in the plan's order, tallied and handed to the report. */
static void emit(void *data, const struct orr_whatif_result *r)
{
	struct cli_whatif_sweep *s = data;

	orr_whatif_tally_add(&s->w.tally, r);
	if (s->row)
		s->row(s->row_data, r);
}

/* Rank 0's sink: the other processes' results that come before r, then r. */
static int collect(void *data, const struct orr_whatif_result *r)
{
	struct cli_whatif_sweep *s = data;

	if (s->mpi)
		cli_whatif_mpi_merge(s->mpi, r->index, emit, s);
	emit(s, r);
	return 0;
}

/* The sweep's inputs and plan: from the trace (loaded here), or a description. */
static int open_job(const struct cli_whatif_options *o, struct cli_whatif_sweep *s)
{
	struct orr_diag d;
	size_t ri = 0;
	int ret, err;

	if (!o->est.trace && !o->est.global_batch)
		return cli_usage_error("whatif", "no trace: give the batch, --global-batch");
	if (o->est.trace &&
	    (ret = cli_fit_open(o->est.trace, o->est.timeline, o->est.rank, &s->t, &s->g, &ri)))
		return ret;
	sweep_options(o, &s->wo);
	if ((err = orr_whatif_job_open(&o->est, &s->wo, s->g, ri, &s->job, &d)))
		return cli_estimate_error("estimate", o->est.trace ? NULL : &o->est, err, &d,
					  !o->est.trace);
	return EXIT_OK;
}

int cli_whatif_sweep_new(const struct cli_whatif_options *o, int rank, int size,
			 struct cli_whatif_sweep **ret)
{
	struct cli_whatif_sweep *s = orr_xcalloc(1, sizeof(*s));
	struct cli_layouts *w = &s->w;
	const struct orr_whatif_job *j = &s->job;
	int err;

	*ret = s;
	s->rank = rank;
	s->size = size;
	w->o = o;
	w->x = &s->job.x;
	w->recorded_index = UINT64_MAX;
	w->processes = size;
	w->jobs = (int)o->jobs;
	err = open_job(o, s);
	if (err != EXIT_OK)
		return err;
	if (rank == 0 && j->swept.sync_layers && !orr_whatif_plan_syncs_layers(j->plan))
		cli_warning("--sync-layers does not apply: no configuration swept has full "
			    "recompute, and only checkpointed layers synchronize");
	w->plan = j->plan;
	w->base = j->base;
	w->have_trace = j->have_trace;
	w->replayed_ns = j->replayed_ns;
	w->recorded = j->recorded;
	w->swept = j->swept;
	w->global_batch = j->global_batch;
	w->considered = j->considered;
	/*
	 * rank 0: the recorded configuration, when the plan has it, estimated before the
	 * sweep so that its place can be counted as the results go by
	 */
	if (rank == 0)
		w->recorded_index = orr_whatif_job_tally(j, o->rank_by, (size_t)o->top, &w->tally);
	return EXIT_OK;
}

int cli_whatif_sweep_run(struct cli_whatif_sweep *s,
			 void (*row)(void *data, const struct orr_whatif_result *r), void *data)
{
	const struct cli_whatif_options *o = s->w.o;
	struct cli_layouts *w = &s->w;
	bool progress = show_progress(o, s->rank);
	double t0 = cli_now_s();
	int err;

	s->row = row;
	s->row_data = data;
	if (s->size > 1)
		s->mpi = cli_whatif_mpi_open(s->rank, s->size, w->considered);
	if (progress)
		cli_progress_begin_forced("sweeping", "configurations", o->progress == 1);
	err = orr_whatif_run(w->plan, w->x, (uint64_t)s->rank, (uint64_t)s->size, (int)o->jobs,
			     progress ? cli_progress_count : NULL, NULL,
			     s->rank == 0 ? collect : cli_whatif_mpi_send,
			     s->rank == 0 ? (void *)s : (void *)s->mpi);
	if (progress)
		cli_progress_done();
	if (s->mpi && s->rank == 0)
		cli_whatif_mpi_merge(s->mpi, UINT64_MAX, emit, s);
	else if (s->mpi)
		cli_whatif_mpi_flush(s->mpi);
	if (err) {
		cli_error("cannot sweep: %s", orr_strerror(err));
		return EXIT_FAIL;
	}
	w->seconds = cli_now_s() - t0;
	if (s->rank == 0)
		orr_whatif_tally_finish(&w->tally);
	return EXIT_OK;
}

const struct cli_layouts *cli_whatif_sweep_result(const struct cli_whatif_sweep *s)
{
	return &s->w;
}

void cli_whatif_sweep_free(struct cli_whatif_sweep *s)
{
	if (!s)
		return;
	cli_whatif_mpi_close(s->mpi);
	orr_whatif_tally_release(&s->w.tally);
	orr_whatif_job_close(&s->job);
	orr_graph_free(s->g);
	orr_trace_free(s->t);
	free(s);
}

/* Whether every process sweeps this one's space, with its inputs (under mpirun). */
static int same_sweep(const struct cli_whatif_sweep *s, int rank, int size)
{
	struct orr_whatif_digest d;

	orr_whatif_digest(s->job.plan, &s->job.x, &d);
	return cli_whatif_mpi_same(rank, size, &d);
}

/* Rank 0's report: written as the sweep goes, to stdout or -o FILE (committed whole). */
struct report {
	struct orr_outfile out;
	bool file, open;
	struct cli_whatif_writer wr;
};

static int report_open(const struct cli_whatif_options *o, const struct cli_whatif_sweep *s,
		       struct report *r)
{
	FILE *f = stdout;
	int err;

	if (o->out) {
		if ((err = orr_outfile_open(&r->out, cli_output_path(o->out), 0)) ||
		    !orr_outfile_stream(&r->out)) {
			cli_error("cannot write '%s': %s", cli_output_name(o->out),
				  orr_strerror(err ? err : -ENOMEM));
			if (!err)
				orr_outfile_abort(&r->out);
			return EXIT_FAIL;
		}
		r->file = true;
		f = orr_outfile_stream(&r->out);
	}
	r->open = true;
	return cli_whatif_write_begin(&r->wr, cli_whatif_sweep_result(s), f);
}

/* The report ended when the sweep succeeded (ret), and committed; else dropped. */
static int report_close(const struct cli_whatif_options *o, struct report *r, int ret)
{
	int err;

	if (!r->open)
		return ret;
	if (ret == EXIT_OK)
		cli_whatif_write_end(&r->wr);
	cli_whatif_write_release(&r->wr);
	if (!r->file)
		return ret;
	if (ret != EXIT_OK) {
		orr_outfile_abort(&r->out);
		return ret;
	}
	if ((err = orr_outfile_commit(&r->out, false))) {
		cli_error("cannot write '%s': %s", cli_output_name(o->out), orr_strerror(err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* What a memory refusal suggests: what shards or frees memory that the sweep did not try. */
static void memory_hint(const struct orr_whatif_hint *h, char *buf, size_t size)
{
	const char *item[4];
	size_t n = 0, len = 0;
	char gpus[64];

	if (h->tries & ORR_WHATIF_TRY_FSDP)
		item[n++] = "--fsdp (weights, gradients and optimizer state sharded over DP)";
	if (h->tries & ORR_WHATIF_TRY_DISTOPT)
		item[n++] = "--distributed-optimizer on";
	if (h->tries & ORR_WHATIF_TRY_RECOMPUTE)
		item[n++] = "--recompute full";
	snprintf(gpus, sizeof(gpus), "more GPUs than %lld (--gpus)", (long long)h->value);
	item[n++] = gpus;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					!i          ? "try "
					: i + 1 < n ? ", "
						    : " or ",
					item[i]);
}

/* What a reason for refusing suggests to change, written into buf. */
static const char *hint(const struct orr_whatif_hint *h, char *buf, size_t size)
{
	switch (h->why) {
	case ORR_WHATIF_HEADS:
		snprintf(buf, size,
			 "try a --tp that divides the %lld heads, the KV heads and the FFN",
			 (long long)h->value);
		break;
	case ORR_WHATIF_CROSS_NODE:
		snprintf(buf, size,
			 "try a --tp within a node (--gpus-per-node) or --allow-cross-node-tp");
		break;
	case ORR_WHATIF_LAYERS:
		snprintf(buf, size, "try a --pp (x --vpp) that divides the %lld layers",
			 (long long)h->value);
		break;
	case ORR_WHATIF_SEQUENCE:
		snprintf(buf, size,
			 "try a --cp (2 x cp) and a --tp that divide the sequence (%lld)",
			 (long long)h->value);
		break;
	case ORR_WHATIF_BATCH:
		snprintf(buf, size, "try a --global-batch (%lld) that dp x micro-batch divides",
			 (long long)h->value);
		break;
	case ORR_WHATIF_INTERLEAVE:
		snprintf(buf, size, "try --vpp 1 or a --global-batch of more micro-batches");
		break;
	case ORR_WHATIF_MEMORY:
		memory_hint(h, buf, size);
		break;
	default:
		snprintf(buf, size, "--show-infeasible says why each was refused");
		break;
	}
	return buf;
}

/*
 * A sweep with no feasible configuration fails (exit 1), after its report: the
 * reasons counted, most first, each with what it suggests.
 */
static int none_feasible(const struct cli_whatif_sweep *s)
{
	const struct cli_layouts *w = &s->w;
	const struct orr_whatif_tally *t = &w->tally;
	char counts[512] = "", hints[1024] = "", buf[256];
	size_t nc = 0, nh = 0, n;
	struct orr_whatif_hint v[ORR_WHATIF_WHY_COUNT];

	if (t->count[ORR_WHATIF_FEASIBLE])
		return EXIT_OK;
	n = orr_whatif_hints(&s->job, &s->wo, t, v);
	for (size_t i = 0; i < n; i++) {
		nc += (size_t)snprintf(counts + nc, sizeof(counts) - nc, "%s%s %llu",
				       nc ? ", " : "", orr_whatif_why_name(v[i].why),
				       (unsigned long long)v[i].count);
		nh += (size_t)snprintf(hints + nh, sizeof(hints) - nh, "; %s: %s%s%s",
				       orr_whatif_why_name(v[i].why), v[i].example,
				       *v[i].example ? " (the first refused), " : "",
				       hint(&v[i], buf, sizeof(buf)));
		if (nc >= sizeof(counts) || nh >= sizeof(hints))
			break;
	}
	if (!t->n && orr_whatif_plan_why_empty(s->job.plan, buf, sizeof(buf)))
		cli_error("no configuration is feasible: the sweep holds none: %s", buf);
	else if (!t->n)
		cli_error("no configuration is feasible: the sweep holds none (--gpus %lld-%lld "
			  "and the lists given)",
			  (long long)w->o->gpus_min, (long long)w->o->gpus_max);
	else
		cli_error("no configuration is feasible (%llu configurations: %s)%s",
			  (unsigned long long)t->n, counts, hints);
	return EXIT_FAIL;
}

int cmd_whatif(int argc, char **argv)
{
	struct cli_whatif_options o;
	struct cli_whatif_sweep *s = NULL;
	struct report r = { 0 };
	int rank = 0, size = 1, ret;

	ret = cli_whatif_parse(argc, argv, &o);
	if (ret >= 0)
		goto out;
	if (o.out && o.est.trace && cli_output_inside(o.out, o.est.trace)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.out, o.est.trace);
		ret = EXIT_FAIL;
		goto out;
	}
	if ((ret = cli_whatif_mpi_init(&argc, &argv, &rank, &size)) != EXIT_OK)
		goto out;
	ret = cli_whatif_sweep_new(&o, rank, size, &s);
	/*
	 * every process sweeps, or none: the others would wait on one that does not; and all
	 * sweep one space, before rank 0 writes anything: a process given other options or
	 * files is refused, not merged
	 */
	ret = cli_whatif_mpi_agree(size, ret);
	if (ret == EXIT_OK && size > 1)
		ret = same_sweep(s, rank, size);
	if (ret == EXIT_OK && rank == 0)
		ret = report_open(&o, s, &r);
	ret = cli_whatif_mpi_agree(size, ret);
	if (ret == EXIT_OK)
		ret = cli_whatif_sweep_run(s, rank == 0 ? cli_whatif_write_row : NULL,
					   rank == 0 ? &r.wr : NULL);
	if (rank == 0)
		ret = report_close(&o, &r, ret);
	if (rank == 0 && ret == EXIT_OK)
		ret = none_feasible(s);
	cli_whatif_mpi_finalize(size);
out:
	cli_whatif_sweep_free(s);
	cli_whatif_options_release(&o);
	return ret;
}
