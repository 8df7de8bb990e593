/* SPDX-License-Identifier: MIT */
/*
 * orrery estimate: the step time of a configuration that was never run, from a trace
 * of one that was (docs/orrery-estimate.md): the options parsed, the trace loaded, the
 * estimate made by the library (include/orrery/analysis-estimate.h) and reported
 * (cli/estimate-report.c).
 */
#include <stdlib.h>

#include "cli.h"
#include "estimate.h"
#include "fit.h"
#include "banned.h"

const char cli_estimate_usage[] =
	"usage: orrery estimate [OPTIONS] TRACE\n"
	"       orrery estimate --gpu NAME --layers L --hidden H --heads A --seq S [OPTIONS]\n\n"
	"Estimates the step time and the memory per GPU of a training configuration.\n"
	"With TRACE, of the job it recorded under another configuration: every option\n"
	"defaults to what the trace recorded (orrery fit TRACE shows it); a change of\n"
	"sizes re-times the tasks whose work changes with models fitted on the trace and\n"
	"replays the graph; a change of structure (layers, pipeline, batch, recompute, ...)\n"
	"scales the trace's replay (or, with sizes changed too, the trace re-timed to\n"
	"them) by the ratio of two synthesized steps, timed by the same models.  Without\n"
	"TRACE, synthesizes a Megatron-LM step from the description and replays it,\n"
	"timed by --costs or by the hardware table alone (a lower bound).\n\n"
	"  --gpu NAME              the GPU (hardware table id, e.g. a100-80gb-sxm, or a\n"
	"                          device name); default: the trace's or the costs'\n"
	"  --layers N, --hidden N, --ffn N (4h), --heads N, --kv-heads N (heads),\n"
	"  --seq N, --vocab N (50257, padded as Megatron pads it)\n"
	"                          the model\n"
	"  --tp N, --pp N, --dp N, --cp N, --vpp N (1 each)\n"
	"                          tensor, pipeline, data and context parallelism, model\n"
	"                          chunks per stage (interleaved 1F1B)\n"
	"  --first-stage-layers N, --last-stage-layers N\n"
	"                          an uneven pipeline split (Megatron-Core's\n"
	"                          --decoder-first/last-pipeline-num-layers): the first\n"
	"                          or last stage's layers, the rest shared evenly (no VPP)\n"
	"  --micro-batch N         sequences per micro-batch (1)\n"
	"  --global-batch N        sequences per step (micro-batch x dp)\n"
	"  --recompute MODE        none (default), selective or full\n"
	"  --sequence-parallel     with TP, norms and dropouts split over the sequence\n"
	"  --distributed-optimizer shard the optimizer state over DP\n"
	"  --fsdp                  shard weights, gradients and optimizer state over DP\n"
	"                          (PyTorch FSDP, DeepSpeed ZeRO-3): each layer's weights\n"
	"                          all-gathered for its passes, its gradients\n"
	"                          reduce-scattered\n"
	"  --overlap-grad-reduce   reduce the gradients' DP buckets during the last\n"
	"                          micro-batch's backward pass (Megatron's option)\n"
	"  --p2p-scatter-gather    with TP (no sequence parallelism), each TP rank sends\n"
	"                          1/TP of a stage's output, all-gathered over TP after\n"
	"                          (the default of Megatron-DeepSpeed before its July 2023\n"
	"                          rebase and of Megatron-LM before Megatron-Core)\n"
	"  --sync-timers           the device is synchronized when each forward and backward\n"
	"                          pass starts and ends (Megatron-DeepSpeed before July\n"
	"                          2023; later ones with --timing-log-level 2)\n"
	"  --sync-layers           with --recompute full, the device is synchronized when\n"
	"                          each layer's forward and backward pass starts and ends\n"
	"                          (DeepSpeed's activation checkpointing: Megatron-DeepSpeed's\n"
	"                          --synchronize-each-layer)\n"
	"  --precision P           bf16 (default), fp16, fp32 or fp8 (FP8 GEMMs)\n"
	"  --attention MODE        flash (default) or unfused (scores, softmax, dropout)\n"
	"  --swiglu                a gated MLP: FC1 is 2 x ffn wide (Megatron's option)\n"
	"  --untie-embeddings-and-output-weights\n"
	"                          the output layer has its own weights\n"
	"  --normalization NAME    LayerNorm (default) or RMSNorm\n"
	"  --position-embedding-type NAME\n"
	"                          learned_absolute (default) or rope (rotary, on q and k)\n"
	"  --gpus-per-node N       GPUs a node holds (default: the hardware table's): a\n"
	"                          larger group talks over the network\n"
	"  --nic-gbps N            the network per GPU, Gb/s per direction (default: the\n"
	"                          hardware table's node, e.g. 200 for the DGX A100)\n"
	"  --forward-only          forward passes only\n"
	"  --costs FILE            models from orrery fit -o FILE (of a trace of the same\n"
	"                          GPU) instead of fitting them on TRACE\n"
	"  --transfer-costs        without TRACE: --costs fitted on another GPU time --gpu\n"
	"                          by their efficiencies over the roofline (collectives by\n"
	"                          the hardware table)\n"
	"  --launch-us US          the launch thread's time per kernel (default: measured\n"
	"                          on TRACE, else on the trace of --costs; 0 without\n"
	"                          either: the GPU never waits for it)\n"
	"  --gemm-model MODEL      roofline (default: the roofline x a measured efficiency)\n"
	"                          or tiles (tile and wave quantization, docs/estimator.md)\n"
	"  --timeline FILE         write the estimated timeline (Chrome/Perfetto JSON)\n"
	"  --rank N                the rank whose structure is the recorded configuration\n"
	"  --format=FMT            text (default) or json (docs/orrery-estimate.md)\n"
	"  -h, --help              this help\n\n"
	"A --timeline FILE of '-' is standard output; the report then goes to standard error.\n";

/* From a model description: the exit status. */
static int describe(const struct orr_estimate_options *o, int format)
{
	struct orr_estimate e;
	struct orr_diag d;
	int err = orr_estimate_describe(o, &e, &d);

	if (err)
		return cli_estimate_error("estimate", o, err, &d, true);
	cli_estimate_report(&e, format);
	return EXIT_OK;
}

int cmd_estimate(int argc, char **argv)
{
	struct orr_estimate_options o;
	struct orr_estimate_base b;
	struct orr_trace *t = NULL;
	struct orr_graph *g = NULL;
	struct orr_diag d;
	const char *timeline;
	size_t ri;
	int format, ret, err;

	ret = cli_estimate_parse_as("estimate", argc, argv, &o, &format);
	if (ret >= 0)
		return ret;
	timeline = o.timeline;
	if (o.timeline) {
		orr_outfile_catch_signals();
		o.timeline = cli_output_path(o.timeline);
	}
	if (!o.trace)
		return describe(&o, format);
	ret = cli_fit_open(o.trace, timeline, o.rank, &t, &g, &ri);
	if (ret == EXIT_OK && (err = orr_estimate_base_open(&o, g, ri, &b, &d)))
		ret = cli_estimate_error("estimate", NULL, err, &d, false);
	if (ret == EXIT_OK) {
		if ((err = orr_estimate_trace(&o, &b, &d)))
			ret = cli_estimate_error("estimate", NULL, err, &d, false);
		else
			cli_estimate_report(&b.e, format);
		orr_estimate_base_close(&b);
	}
	orr_graph_free(g);
	orr_trace_free(t);
	return ret;
}
