#!/bin/bash
# The measured rows of the what-if files (../shared/whatif/README.md) in orrery
# estimate's terms, and the A100 costs they are estimated with: the mapping and the
# cost set-up shared by bench/whatif-accuracy.sh (whose help states the settings they
# imply) and bench/whatif-ranking.py, so that both judge the same predictions.
#
#   bench/whatif-rows.sh ORRERY WHATIF_DIR COSTS_TRACE LIMIT OUT_DIR
#
# Fits the costs with ORRERY on COSTS_TRACE and vTrain's all-reduce tables into
# OUT_DIR/a100.costs.json (fit's output: OUT_DIR/fit.txt); writes one line per data row
# of vtrain-a100-single-node.csv, vtrain-a100-multi-node-dev.csv and published-dev.csv
# of WHATIF_DIR, in that order (the first LIMIT data rows of each; 0: all), to
# OUT_DIR/rows.tsv (its fields: at normalize below) and the orrery estimate options of
# each row that can be expressed (no skip reason) to OUT_DIR/args/N for line N of
# rows.tsv, one a line (--costs for rows of the costs' GPU); prints the GPU the costs
# were fitted on.
#
# COSTS_ET (environment): the execution traces recorded with COSTS_TRACE, given to fit
# as `orrery --et` so that the ExecutionTraceObserver's cost per op is taken out of the
# launch time with the profiler's (docs/estimator.md, "The profiler's cost"); by
# default the folder of COSTS_TRACE's name in the et/ folder beside its kineto/ one,
# when there is one (../shared/traces/et/astrasim-megatron-tp8); empty: none.  The
# execution traces also size collectives the profiler's trace leaves unsized (3 on the
# A100 trace), so the collectives' fit moves with them (golden-whatif-heldout's 720
# rows, at their fitted launch time, are the same either way).
set -euo pipefail

die() {
	echo "bench/whatif-rows.sh: error: $*" >&2
	exit 1
}

(($# == 5)) || die "usage: bench/whatif-rows.sh ORRERY WHATIF_DIR COSTS_TRACE LIMIT OUT_DIR"
orrery=$1
whatif=$2
costs_trace=$3
limit=$4
work=$5
[[ $limit =~ ^[0-9]+$ ]] || die "LIMIT '$limit' is not a number"
[[ -d $work ]] || die "no directory '$work'"

single=$whatif/vtrain-a100-single-node.csv
multi=$whatif/vtrain-a100-multi-node-dev.csv
published=$whatif/published-dev.csv
for f in "$single" "$multi" "$published"; do
	[[ -f $f ]] || die "no file '$f'"
done
[[ -e $costs_trace ]] || die "no trace '$costs_trace' to fit the costs on"

# vTrain's all-reduce tables (nccl-tests on 2..8 A100 of its node, 1 MiB to 1 GiB) are
# measurements of the machine its runs come from, as an nccl-tests run on the user's
# cluster would be: written as all_reduce_perf prints them, they go to fit's
# --nccl-tests, and the all-reduce model of the node is fitted on them with the trace's.
nccl_args=()
for ((n = 2; n <= 8; n++)); do
	lut=$whatif/vtrain-a100-allreduce/allreduce-${n}gpu.csv
	[[ -f $lut ]] || continue
	awk -F, -v n="$n" '
	BEGIN {
		print "# Collective test starting: all_reduce_perf"
		print "# nThread 1 nGpus " n " (vTrain AR_GPU" n " table, written as nccl-tests prints it)"
		for (i = 0; i < n; i++)
			printf "#  Rank %2d Group  0 Pid %d on vtrain-a100 device %2d [0x00] A100\n", i, 1000 + i, i
		print "#       size         count      type   redop    root     time   algbw   busbw #wrong"
	}
	NR > 1 { printf "%12d %13d %9s %7s %7d %10.3f %7.2f %7.2f %6d\n", $1, $2, $3, "sum", -1, $4 / 1000, $1 / $4, $5, 0 }
	' "$lut" >"$work/all_reduce_${n}gpu.txt" || die "cannot convert $lut"
	nccl_args+=(--nccl-tests "$work/all_reduce_${n}gpu.txt")
done
et_args=()
if [[ -z ${COSTS_ET+set} ]]; then
	kineto_dir=$(dirname "$costs_trace")
	COSTS_ET=
	[[ $(basename "$kineto_dir") == kineto &&
		-e $(dirname "$kineto_dir")/et/$(basename "$costs_trace") ]] &&
		COSTS_ET=$(dirname "$kineto_dir")/et/$(basename "$costs_trace")
fi
[[ -n $COSTS_ET ]] && et_args=(--et "$COSTS_ET")
costs=$work/a100.costs.json
"$orrery" "${et_args[@]}" fit "${nccl_args[@]}" -o "$costs" "$costs_trace" >"$work/fit.txt" 2>&1 ||
	die "orrery fit -o $costs $costs_trace failed: $(head -3 "$work/fit.txt")"
# The GPU the costs were fitted on: only its rows are estimated with them, and only
# they count in the absolute error.
costs_gpu=$(sed -n 's/^ *"spec": "\([^"]*\)".*/\1/p' "$costs" | head -1)
[[ -n $costs_gpu ]] || die "$costs names no GPU (device.spec)"

# --- 1. CSV to TSV -------------------------------------------------------------------
# A quote-aware splitter (fields may be double-quoted, hold commas and "" for a quote;
# a quoted field may run over lines).  Prints the record's first line number, then its
# fields, tab-separated; the header is record 0.  Keeps the first LIMIT data records
# (0: all).
csv2tsv() {
	awk -v limit="$limit" '
	function quotes(s,    t) { t = s; return gsub(/"/, "", t) }
	function split_csv(line, f,    n, i, c, L, inq, cur) {
		n = 0; cur = ""; inq = 0; L = length(line)
		for (i = 1; i <= L; i++) {
			c = substr(line, i, 1)
			if (inq) {
				if (c == "\"") {
					if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ }
					else inq = 0
				} else cur = cur c
			} else if (c == "\"") inq = 1
			else if (c == ",") { f[++n] = cur; cur = "" }
			else cur = cur c
		}
		f[++n] = cur
		return n
	}
	{ sub(/\r$/, "") }
	buf == "" { first = NR }
	{ buf = buf == "" ? $0 : buf " " $0 }
	quotes(buf) % 2 { next }
	{
		n = split_csv(buf, f); buf = ""
		if (limit > 0 && records > limit) exit
		line = first
		for (i = 1; i <= n; i++) { gsub(/\t/, " ", f[i]); line = line "\t" f[i] }
		print line
		records++
	}' "$1"
}

# --- 2. Rows: one line per measurement, in the estimator's terms ---------------------
# Output fields (tab-separated; "-" where none):
#   1 source  2 id (file:line)  3 gpus  4 tp  5 pp  6 dp  7 cp  8 vpp  9 mb  10 gb
#   11 layers  12 hidden  13 heads  14 seq  15 recompute  16 precision  17 gpu
#   18 metric  19 unit  20 measured  21 kv_heads  22 ffn  23 vocab  24 attention
#   25 flags (estimate's switches, comma-separated: "name" or "name=value")
#   26 costs (yes/no)  27 skip reason
# The network per GPU of vTrain's cluster, VTRAIN_NIC_GBPS (Gb/s, default 100), given to
# vTrain's rows as --nic-gbps: every validation config of vTrain@f8dda84
# (config/validation/{single,multi}/*.json) sets "inter_node_bandwidth": 800 (Gb/s, a
# node's, src/config.py) and "node_size": 8, which its predictor times inter-node
# collectives by, and the TP 16 rows' all-reduces took what NCCL's model gives at 100
# (docs/accuracy.md, "Issue 35: pipelines and groups across nodes").  200 is the hardware
# table's DGX A100.  And vTrain's runs are Megatron-DeepSpeed's, whose pipeline
# transfers scatter over the TP ranks and gather after (--scatter-gather-tensors-in-
# pipeline, its default: megatron/p2p_communication.py): --p2p-scatter-gather.  Which
# Megatron-DeepSpeed vTrain ran is not stated (data/README.md names the codebase only);
# its runs are estimated as one from before the July 2023 rebase, whose timers
# synchronize the device around every pass (megatron/global_vars.py's _Timer.start()
# and stop(), schedules.py's forward-compute and backward-compute): --sync-timers
# (docs/accuracy.md, "Issue 35: what vTrain's runs did").  Their checkpointed layers
# (vTrain's configs set use_checkpoint) are estimated as DeepSpeed's activation
# checkpointing with its synchronization at each layer's boundaries runs them
# (--synchronize-each-layer; Megatron-DeepSpeed's pipeline engine checkpoints through
# DeepSpeed's CheckpointFunction): --sync-layers, chosen by the fit rows as --sync-timers
# was, not stated by vTrain (docs/accuracy.md, "Issue 35: rows whose host and GPU take
# about the same time").
vtrain_nic=${VTRAIN_NIC_GBPS:-100}
[[ $vtrain_nic =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
	die "VTRAIN_NIC_GBPS '$vtrain_nic' is not a number of Gb/s"
vtrain_flags="p2p-scatter-gather,sync-timers,sync-layers,nic-gbps=$vtrain_nic"
# TRANSFER_COSTS=1: rows of every GPU are estimated with the costs, those of another GPU
# than the costs' with --transfer-costs (docs/orrery-estimate.md, "Costs of another GPU").
transfer=${TRANSFER_COSTS:-}
normalize() {
	awk -F '\t' -v kind="$1" -v file="$2" -v costs_gpu="$costs_gpu" -v vtrain_flags="$vtrain_flags" \
		-v transfer="$transfer" '
	function fail(r) { if (reason == "") reason = r }
	# The reason for a cell that is not a value: "not stated" or "impl default" says so.
	function bad(name, text, what) {
		text = trim(text)
		if (text == "not stated") fail(name " not stated")
		else if (text ~ /not stated|default/) fail(name " not stated: \"" text "\"")
		else fail(name " \"" text "\" is not " what)
	}
	function trim(s) { sub(/^[ ]+/, "", s); sub(/[ ]+$/, "", s); return s }
	# The leading token of a cell: "50257 (vTrain config default; ...)" is 50257.
	function lead(s) {
		s = trim(s)
		if (match(s, /^[^ (]+/)) return substr(s, RSTART, RLENGTH)
		return ""
	}
	function count(name, text, dflt,    t) {
		text = trim(text)
		if (text == "" && dflt != "") return dflt
		if (text == "") { fail(name " not given"); return "-" }
		t = lead(text)
		if (t ~ /^[0-9]+$/ && t + 0 > 0) return t + 0
		# torchtitan and llm-foundry give the data-parallel size as "FSDP 8" or
		# "FSDP FULL_SHARD 8" and the micro-batch as "local batch 2": the count is
		# the last word.
		if (text ~ /^(FSDP|FSDP FULL_SHARD|local batch) [0-9]+$/) {
			t = text; sub(/.* /, "", t); return t + 0
		}
		bad(name, text, "a count")
		return "-"
	}
	function number(name, text,    t) {
		t = lead(text)
		if (t ~ /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ || t ~ /^\.[0-9]+$/) return t + 0
		bad(name, text, "a number")
		return "-"
	}
	function gpu_id(text,    t) {
		t = tolower(text)
		if (t ~ /a100/) {
			if (t ~ /40 *gb/) return "a100-40gb-sxm"
			if (t ~ /pcie/) return "a100-80gb-pcie"
			return "a100-80gb-sxm"          # 80 GB SXM4 when the size is not stated
		}
		if (t ~ /a800/) return "a800-80gb-sxm"
		# "H100 96GB HBM2e @500W (Grand Teton)" is an SXM-class H100 with more, slower
		# memory and a lower power cap: h100-sxm is the nearest entry (ratios only).
		if (t ~ /h100/) {
			if (t ~ /pcie/) return "h100-pcie"
			if (t ~ /h100[ -]nvl/) return "h100-nvl"
			return "h100-sxm"
		}
		if (t ~ /h200/) return "h200-sxm"
		if (t ~ /h800/) return "h800-sxm"
		if (t ~ /b200/) return "b200"
		if (t ~ /mi300x/) return "mi300x"
		if (t ~ /l40s/) return "l40s"
		if (t ~ /v100/) return t ~ /16 *gb/ ? "v100-sxm2-16gb" : "v100-sxm2-32gb"
		fail("GPU \"" trim(text) "\" is not in the hardware table")
		return "-"
	}
	function recompute_mode(text,    t) {
		t = tolower(trim(text))
		if (t ~ /^(none|selective|full)([ (]|$)/) return lead(t)
		# llm-foundry activation_checkpointing checkpoints every block: full.
		if (t ~ /^activation checkpointing/) return "full"
		# torchtitan per-op selective activation checkpointing: selective.
		if (t ~ /^per-op sac/) return "selective"
		bad("recompute", text, "none, selective or full")
		return "-"
	}
	function precision_of(text,    t) {
		t = tolower(lead(text))
		if (t ~ /fp8|float8/) return "fp8"    # the estimator refuses it: its reason
		if (t == "mixed" && match(tolower(text), /\((bf16|fp16)/)) return substr(tolower(text), RSTART + 1, 4)
		if (t ~ /bf16/) return "bf16"
		if (t ~ /fp16/) return "fp16"
		if (t ~ /fp32/) return "fp32"
		bad("precision", text, "a precision")
		return "-"
	}
	FNR == 1 {
		for (i = 2; i <= NF; i++) col[$i] = i
		next
	}
	{
		reason = ""
		id = file ":" $1
		if (kind == "published") {
			source = file ": " $col["source"]
			layers = count("layers", $col["layers"])
			hidden = count("hidden", $col["hidden"])
			heads = count("heads", $col["heads"])
			# "32 (8 KV)": grouped-query attention with 8 KV heads.
			kv = heads
			if (match($col["heads"], /\([0-9]+ KV\)/)) kv = substr($col["heads"], RSTART + 1) + 0
			ffn = count("ffn", $col["ffn"])
			# The Megatron-LM CI configs name the GPT-2 vocabulary file: 50257 tokens.
			vocab = $col["vocab"] ~ /^GPT-2 vocab/ ? 50257 : count("vocab", $col["vocab"])
			seq = count("seq", $col["seq"])
			gpu = gpu_id($col["gpu"])
			gpus = count("gpus", $col["gpus"])
			tp = count("tp", $col["tp"], 1)
			pp = count("pp", $col["pp"], 1)
			dp = count("dp", $col["dp"], 1)
			cp = count("cp", $col["cp"], 1)
			ep = count("ep", $col["ep"], 1)
			vpp = count("vpp", $col["vpp"], 1)
			mb = count("micro_batch", $col["micro_batch"])
			gbtext = $col["global_batch"]
			# torchtitan accumulates no gradients by default: one micro-batch per
			# step (its rows that state the global batch have local batch x FSDP).
			if (trim(gbtext) == "" && $col["source"] == "torchtitan" && mb != "-" && dp != "-")
				gbtext = mb * dp
			gb = count("global_batch", gbtext)
			recompute = recompute_mode($col["recompute"])
			precision = precision_of($col["precision"])
			metric = $col["measured_metric"]
			unit = $col["unit"]
			measured = number("measured_value", $col["measured_value"])
			# Megatron-Core, torchtitan and llm-foundry use flash attention; the vTrain
			# rows (Megatron-DeepSpeed, no flash attention by default) and Megatron-LM
			# CI configs run with --transformer-impl local (unfused core attention)
			# do not.
			attention = "flash"
			if ($col["source"] ~ /^vTrain/ || $0 ~ /transformer-impl local/) attention = "unfused"
			# FSDP (torchtitan, llm-foundry) and ZeRO-3 (SC21 Table 2) shard weights,
			# gradients and optimizer state over DP: --fsdp.
			flags = ($col["dp"] ~ /FSDP/ || $col["notes"] ~ /ZeRO-3/) ? "fsdp" : "-"
			# Llama 2 and 3 (8B, 70B, 405B: torchtitan, Megatron-Bridge) have a SwiGLU
			# MLP, output weights of their own, RMSNorm and rotary positions
			# (Touvron et al. 2023; the Llama 3 configs of Meta: tie_word_embeddings
			# false, rms_norm_eps, rope_theta): the options of Megatron-LM for them.
			if (tolower($col["model"]) ~ /llama/)
				flags = (flags == "-" ? "" : flags ",") "swiglu,untie-embeddings-and-output-weights,normalization=RMSNorm,position-embedding-type=rope"
			if (ep != "-" && ep > 1) fail("ep " ep " > 1 (MoE): the estimator has no expert parallelism")
			if ($col["source"] ~ /^vTrain/)
				flags = (flags == "-" ? "" : flags ",") vtrain_flags
		} else {
			# vTrain (Megatron-DeepSpeed): GPT with ffn 4h and vTrain default vocab 50257
			# (its GPT-2 tokenizer), fp16 (vTrain default dtype), no flash attention
			# (Megatron-DeepSpeed default).  Every validation config of vTrain@f8dda84,
			# config/validation/single/*.json (all 1,440) and multi/*.json, sets
			# "use_checkpoint": true, as published-dev.csv notes for its vTrain rows:
			# full recompute for both files.
			source = file
			gpu = "a100-80gb-sxm"   # "A100" (vTrain), memory size not stated
			gpus = count("gpus", $col["# GPUs"])
			mb = count("micro_batch", $col["micro batch"])
			gb = count("global_batch", $col["global batch"])
			hidden = count("hidden", $col["hidden size"])
			heads = count("heads", $col["attention heads"])
			kv = heads
			layers = count("layers", $col["# layers"])
			seq = count("seq", $col["sequence length"])
			tp = count("tp", $col["tensor parallelism"])
			dp = count("dp", $col["data parallelism"])
			pp = count("pp", $col["pipeline parallelism"])
			cp = 1; vpp = 1
			ffn = "-"; vocab = 50257
			recompute = "full"
			precision = "fp16"
			attention = "unfused"
			flags = vtrain_flags
			metric = "iteration_time"; unit = "ms"
			measured = number("iteration time", $col["iteration time (ms)"])
		}
		if (reason == "" && gpus != tp * pp * dp * cp)
			fail("gpus " gpus " is not tp x pp x dp x cp (" tp * pp * dp * cp ")")
		if (reason == "" && gb % (mb * dp) != 0)
			fail("global batch " gb " is not a multiple of micro-batch x dp (" mb * dp ")")
		if (reason == "" && !((metric == "iteration_time" && (unit == "ms" || unit == "s")) ||
		    (metric ~ /^tokens_per_sec_per_GPU$/ && unit == "tok/s/GPU") ||
		    (metric ~ /TFLOPs_per_GPU$/ && unit == "TFLOP/s/GPU") ||
		    (tolower(metric) ~ /mfu/ && (unit == "%" || unit == "fraction" || unit == ""))))
			fail("metric " metric " in " unit " is not handled")
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			source, id, gpus, tp, pp, dp, cp, vpp, mb, gb, layers, hidden, heads, seq,
			recompute, precision, gpu, metric, unit == "" ? "-" : unit, measured, kv, ffn, vocab,
			attention, flags, gpu == costs_gpu || transfer != "" ? "yes" : "no",
			reason == "" ? "-" : reason
	}'
}

csv2tsv "$single" | normalize vtrain "$(basename "$single")" >"$work/rows.tsv"
csv2tsv "$multi" | normalize vtrain "$(basename "$multi")" >>"$work/rows.tsv"
csv2tsv "$published" | normalize published "$(basename "$published")" >>"$work/rows.tsv"

# --- 2b. The estimate options of every row that can be expressed ---------------------
# args/N for line N of rows.tsv, one a line.
mkdir -p "$work/args"
awk -F '\t' -v dir="$work/args" -v costs="$costs" -v costs_gpu="$costs_gpu" '
$27 == "-" {
	f = dir "/" NR
	print "--gpu\n" $17 "\n--layers\n" $11 "\n--hidden\n" $12 "\n--heads\n" $13 > f
	if ($21 != $13) print "--kv-heads\n" $21 > f
	print "--seq\n" $14 "\n--tp\n" $4 "\n--pp\n" $5 "\n--dp\n" $6 > f
	if ($7 > 1) print "--cp\n" $7 > f
	if ($8 > 1) print "--vpp\n" $8 > f
	print "--micro-batch\n" $9 "\n--global-batch\n" $10 > f
	if ($22 != "-") print "--ffn\n" $22 > f
	if ($23 != "-") print "--vocab\n" $23 > f
	print "--recompute\n" $15 "\n--precision\n" $16 "\n--attention\n" $24 > f
	if ($25 != "-") {
		nfl = split($25, fl, ",")
		for (i = 1; i <= nfl; i++) print "--" fl[i] > f
	}
	if ($26 == "yes") print "--costs\n" costs > f
	if ($26 == "yes" && $17 != costs_gpu) print "--transfer-costs" > f
	close(f)
}' "$work/rows.tsv"

echo "$costs_gpu"
