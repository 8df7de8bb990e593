/* SPDX-License-Identifier: MIT */
/*
 * orrery whatif: every layout of a model on a GPU budget, estimated and ranked
 * (docs/orrery-whatif.md).  The space comes from the options and the trace's recorded
 * configuration (or a description), the shared inputs (the trace's replay, the fitted
 * costs, the recorded configuration's synthesized step) are made once per process, and
 * what-if/ evaluates the configurations on threads, shared among processes under mpirun.
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

/* What the sweep reads: the base configuration, the costs, the GPU. */
struct inputs {
	struct cli_estimate_base b; /* with a trace */
	bool have_base;
	struct orr_costs costs; /* --costs without a trace */
	bool have_costs;
	struct orr_train_config base;
	int64_t global_batch;
	struct orr_whatif_context x;
};

/* The recorded job: its configuration (changed by the model options), its replay. */
static int from_trace(const struct cli_whatif_options *o, struct inputs *in, struct cli_layouts *w)
{
	const char *why = NULL;
	int ret, err;

	if ((ret = cli_estimate_base_open(&o->est, &in->b)) != EXIT_OK)
		return ret;
	in->have_base = true;
	ret = cli_estimate_base_sweep(&o->est, &in->b, &in->x.costs, &w->replayed_ns);
	if (ret != EXIT_OK)
		return ret;
	w->base = in->b.e;
	w->have_trace = true;
	in->base = in->b.e.to;
	/* the switches as recorded (what auto keeps), unless the options turn them on */
	in->base.sequence_parallel = in->b.e.from.sequence_parallel;
	in->base.distributed_optimizer = in->b.e.from.distributed_optimizer;
	in->base.fully_sharded = in->b.e.from.fully_sharded || o->est.fsdp;
	in->base.overlap_grad_reduce = in->b.e.from.overlap_grad_reduce || o->est.overlap_grad;
	in->global_batch =
		o->est.global_batch
			? o->est.global_batch
			: in->b.e.from.micro_batch * in->b.e.from.micro_batches * in->b.e.from.dp;
	in->x.gpu = in->b.e.gpu;
	in->x.forward_only = in->b.e.forward_only || o->est.forward_only;
	in->x.reserve_bytes = in->b.e.reserve_bytes;
	in->x.replayed_ns = w->replayed_ns;
	err = orr_synth_time(&in->b.e.from, in->b.e.forward_only, &in->x.costs, NULL, &w->recorded,
			     &why);
	if (err) {
		cli_error("cannot synthesize the recorded configuration: %s%s%s", orr_strerror(err),
			  why ? ": " : "", why ? why : "");
		return EXIT_FAIL;
	}
	in->x.recorded_synth_ns = w->recorded.placed_ns;
	return EXIT_OK;
}

/* A described model: Megatron-LM's defaults, timed by --costs or the hardware table. */
static int from_description(const struct cli_whatif_options *o, struct inputs *in,
			    struct cli_layouts *w)
{
	struct orr_retime_models m = { .gpus_per_node = (int)o->est.gpus_per_node };
	const struct orr_gpu_spec *gpu;
	int ret;

	if (!o->est.global_batch)
		return cli_usage_error("whatif", "no trace: give the batch, --global-batch");
	if ((ret = cli_estimate_description(&o->est, &in->base)) != EXIT_OK)
		return ret;
	if (o->est.costs && (ret = cli_read_costs(o->est.costs, &in->costs)) != EXIT_OK)
		return ret;
	in->have_costs = o->est.costs != NULL;
	if ((ret = cli_estimate_pick_gpu(&o->est, in->have_costs ? &in->costs : NULL, &gpu)))
		return ret;
	if (in->have_costs)
		cli_estimate_models(NULL, &in->costs, (int)o->est.gpus_per_node, &m);
	w->base.how = CLI_ESTIMATE_SYNTH;
	w->base.gpu = gpu;
	w->base.costs = o->est.costs;
	w->base.forward_only = o->est.forward_only;
	w->base.cpu_op_ns = isnan(o->est.launch_us) ? 0 : o->est.launch_us * 1e3;
	w->base.cpu_op_from = isnan(o->est.launch_us) ? "none" : "--launch-us";
	w->base.measured_ns = w->base.replayed.step_ns = NAN;
	w->base.measured_peak_bytes = NAN;
	cli_synth_costs(&m, gpu, NULL, in->have_costs ? &in->costs : NULL, w->base.cpu_op_ns,
			&in->x.costs);
	in->x.costs.gemm_tiles = o->est.gemm_tiles;
	if (in->have_costs && isnan(o->est.launch_us) &&
	    (ret = cli_estimate_calibrate_costs(&in->costs, &in->x.costs, &w->base)) != EXIT_OK)
		return ret;
	in->global_batch = o->est.global_batch;
	in->x.gpu = gpu;
	in->x.forward_only = o->est.forward_only;
	in->x.replayed_ns = in->x.recorded_synth_ns = NAN;
	w->replayed_ns = NAN;
	return EXIT_OK;
}

static void inputs_release(struct inputs *in)
{
	if (in->have_base)
		cli_estimate_base_close(&in->b);
	if (in->have_costs)
		orr_costs_release(&in->costs);
}

static int make_plan(const struct cli_whatif_options *o, const struct inputs *in,
		     struct orr_whatif_plan **ret)
{
	const struct orr_gpu_spec *gpu = in->x.gpu;
	struct orr_whatif_space s = {
		.base = in->base,
		.gpus_min = o->gpus_min,
		.gpus_max = o->gpus_max,
		.global_batch = in->global_batch,
		.recompute = o->recompute,
		.sequence_parallel = o->sp,
		.distributed_optimizer = o->distopt,
		.gpus_per_node = o->est.gpus_per_node     ? (int)o->est.gpus_per_node
				 : gpu->gpus_per_node > 0 ? gpu->gpus_per_node
							  : 8,
		.allow_cross_node_tp = o->allow_cross_node_tp,
	};
	struct orr_whatif_list *l[CLI_WHATIF_LISTS] = {
		&s.tp, &s.pp, &s.cp, &s.vpp, &s.micro_batch, &s.first_stage, &s.last_stage
	};
	int err;

	/* without a trace, auto means on */
	if (!in->have_base)
		s.base.sequence_parallel = s.base.distributed_optimizer = true;
	/* forward passes only: recompute changes nothing but the memory a backward needs */
	if (in->x.forward_only && !o->recompute)
		s.recompute = 1u << ORR_RECOMPUTE_NONE;
	for (int i = 0; i < CLI_WHATIF_LISTS; i++)
		*l[i] = (struct orr_whatif_list){ o->list[i], o->nlist[i] };
	err = orr_whatif_plan_new(&s, ret);
	if (err == -E2BIG)
		cli_error("--gpus %lld-%lld: too many GPU counts to sweep with these lists; give a "
			  "narrower range or fewer --tp, --pp or --cp values",
			  (long long)o->gpus_min, (long long)o->gpus_max);
	else if (err)
		cli_error("cannot sweep this space: %s (a global batch, GPU count or model size "
			  "below 1, hidden not a multiple of heads, or too many configurations)",
			  orr_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
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
	struct inputs in;
	struct cli_layouts w;
	struct orr_whatif_plan *plan;
	int rank, size;
	struct cli_whatif_mpi *mpi;
	void (*row)(void *data, const struct orr_whatif_result *r);
	void *row_data;
};

/*
 * Rank 0: the recorded configuration, when the plan has it, estimated before the sweep
 * so that its place can be counted as the results go by.
 */
static void mark_recorded(struct cli_whatif_sweep *s)
{
	struct cli_layouts *w = &s->w;
	struct orr_whatif_result r;

	w->recorded_index = w->have_trace ? orr_whatif_find(s->plan, &w->base.from) : UINT64_MAX;
	if (w->recorded_index != UINT64_MAX &&
	    orr_whatif_eval(s->plan, &s->in.x, w->recorded_index, NULL, &r) == 0) {
		orr_whatif_tally_init(&w->tally, s->w.o->rank_by, (size_t)s->w.o->top, &r);
		return;
	}
	w->recorded_index = UINT64_MAX;
	orr_whatif_tally_init(&w->tally, s->w.o->rank_by, (size_t)s->w.o->top, NULL);
}

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

int cli_whatif_sweep_new(const struct cli_whatif_options *o, int rank, int size,
			 struct cli_whatif_sweep **ret)
{
	struct cli_whatif_sweep *s = orr_xcalloc(1, sizeof(*s));
	struct cli_layouts *w = &s->w;
	int err;

	*ret = s;
	s->rank = rank;
	s->size = size;
	w->o = o;
	w->x = &s->in.x;
	w->recorded_index = UINT64_MAX;
	w->processes = size;
	w->jobs = (int)o->jobs;
	err = o->est.trace ? from_trace(o, &s->in, w) : from_description(o, &s->in, w);
	w->swept = s->in.base;
	w->global_batch = s->in.global_batch;
	if (err == EXIT_OK)
		err = make_plan(o, &s->in, &s->plan);
	w->plan = s->plan;
	if (err != EXIT_OK)
		return err;
	w->considered = orr_whatif_plan_count(s->plan);
	if (rank == 0)
		mark_recorded(s);
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
	orr_whatif_plan_free(s->plan);
	inputs_release(&s->in);
	free(s);
}

/* Whether every process sweeps this one's space, with its inputs (under mpirun). */
static int same_sweep(const struct cli_whatif_sweep *s, int rank, int size)
{
	struct orr_whatif_digest d;

	orr_whatif_digest(s->plan, &s->in.x, &d);
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

/* What the memory refusals suggest: what shards or frees memory that the sweep did not try. */
static void memory_hint(const struct cli_layouts *w, char *buf, size_t size)
{
	const struct cli_whatif_options *o = w->o;
	const char *item[4];
	size_t n = 0, len = 0;
	char gpus[64];

	if (!w->swept.fully_sharded)
		item[n++] = "--fsdp (weights, gradients and optimizer state sharded over DP)";
	if (!w->swept.fully_sharded && o->distopt == 0)
		item[n++] = "--distributed-optimizer on";
	if (o->recompute && !(o->recompute & (1u << ORR_RECOMPUTE_FULL)))
		item[n++] = "--recompute full";
	snprintf(gpus, sizeof(gpus), "more GPUs than %lld (--gpus)", (long long)o->gpus_max);
	item[n++] = gpus;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					!i          ? "try "
					: i + 1 < n ? ", "
						    : " or ",
					item[i]);
}

/* What a reason for refusing suggests to change, written into buf. */
static const char *hint(const struct cli_layouts *w, enum orr_whatif_why k, char *buf, size_t size)
{
	const struct orr_train_config *c = &w->swept;

	switch (k) {
	case ORR_WHATIF_HEADS:
		snprintf(buf, size,
			 "try a --tp that divides the %lld heads, the KV heads and the FFN",
			 (long long)c->heads);
		break;
	case ORR_WHATIF_CROSS_NODE:
		snprintf(buf, size,
			 "try a --tp within a node (--gpus-per-node) or --allow-cross-node-tp");
		break;
	case ORR_WHATIF_LAYERS:
		snprintf(buf, size, "try a --pp (x --vpp) that divides the %lld layers",
			 (long long)c->layers);
		break;
	case ORR_WHATIF_SEQUENCE:
		snprintf(buf, size,
			 "try a --cp (2 x cp) and a --tp that divide the sequence (%lld)",
			 (long long)c->seq);
		break;
	case ORR_WHATIF_BATCH:
		snprintf(buf, size, "try a --global-batch (%lld) that dp x micro-batch divides",
			 (long long)w->global_batch);
		break;
	case ORR_WHATIF_INTERLEAVE:
		snprintf(buf, size, "try --vpp 1 or a --global-batch of more micro-batches");
		break;
	case ORR_WHATIF_MEMORY:
		memory_hint(w, buf, size);
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
static int none_feasible(const struct cli_layouts *w)
{
	const struct orr_whatif_tally *t = &w->tally;
	char counts[512] = "", hints[1024] = "", buf[256];
	size_t nc = 0, nh = 0;
	bool done[ORR_WHATIF_WHY_COUNT] = { false };

	if (t->count[ORR_WHATIF_FEASIBLE])
		return EXIT_OK;
	for (int i = ORR_WHATIF_HEADS; i < ORR_WHATIF_WHY_COUNT; i++) {
		int k = 0;

		for (int j = ORR_WHATIF_HEADS; j < ORR_WHATIF_WHY_COUNT; j++)
			if (!done[j] && t->count[j] && (!k || t->count[j] > t->count[k]))
				k = j;
		if (!k)
			break;
		done[k] = true;
		nc += (size_t)snprintf(counts + nc, sizeof(counts) - nc, "%s%s %llu",
				       nc ? ", " : "", orr_whatif_why_name(k),
				       (unsigned long long)t->count[k]);
		nh += (size_t)snprintf(hints + nh, sizeof(hints) - nh, "; %s: %s",
				       orr_whatif_why_name(k), hint(w, k, buf, sizeof(buf)));
		if (nc >= sizeof(counts) || nh >= sizeof(hints))
			break;
	}
	if (!t->n)
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
		ret = none_feasible(cli_whatif_sweep_result(s));
	cli_whatif_mpi_finalize(size);
out:
	cli_whatif_sweep_free(s);
	cli_whatif_options_release(&o);
	return ret;
}
