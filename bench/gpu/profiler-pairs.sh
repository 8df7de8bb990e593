#!/bin/bash
# The cost per op of each torch.profiler option set and of the ExecutionTraceObserver,
# measured on pairs whose plain run is host-bound (issue 33, item 3; docs/estimator.md,
# "The profiler's cost").  Needs an NVIDIA GPU and PyTorch with CUDA; builds nothing.
#
#   bash bench/gpu/profiler-pairs.sh [OUT]          (OUT: ./profiler-pairs by default)
#
# The one pair measured so far (the H200 GPT's base) has a plain step within 6 % of its
# GPU's busy time, so its difference is a lower bound of the profiler's cost.  Here each
# configuration runs bench/gpu/gpt.py in every mode below, one after another:
#   base   gpt.py's defaults (12 layers, hidden 1024: the measured pair again)
#   host   the same 12 layers and ops at hidden 256, sequence 256, batch 2: every kernel
#          takes microseconds, so plain and traced are both host-bound and their
#          difference is what the profiler adds to the host
# modes: plain; torch.profiler CPU+CUDA without shapes (cpu), with record_shapes
# (shapes), with record_shapes and with_stack (stack); the ExecutionTraceObserver alone
# over every measured step (et); torch.profiler with shapes and the observer together
# (shapes-et: how the shared A100 Megatron trace and its execution trace were recorded).
# WARMUP (5) + STEPS (15) steps a run; about 3 minutes on an H100.  Then
# profiler-pairs.py writes OUT/profiler-pairs.json and prints the table: per configuration
# and mode, the median step, the ops and runtime calls per traced step, the GPU's busy
# time, whether plain is host-bound, and the cost per op, (mode - plain) / ops.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$PWD/profiler-pairs}
python=${PYTHON:-python3}
warmup=${WARMUP:-5}
steps=${STEPS:-15}
gpt=$root/bench/gpu/gpt.py
mkdir -p "$out"
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0))s] profiler-pairs: $*" >&2; }

declare -A sizes=(
	[base]=""
	[host]="--hidden 256 --heads 4 --seq 256 --batch 2"
)
declare -A modes=(
	[plain]="--mode plain"
	[cpu]="--mode torch-profiler --no-ops"
	[shapes]="--mode torch-profiler"
	[stack]="--mode torch-profiler --with-stack"
	[et]="--mode plain --et-all"
	[shapes-et]="--mode torch-profiler --et-all"
)
failed=0
for c in base host; do
	for m in plain cpu shapes stack et shapes-et; do
		d=$out/$c
		mkdir -p "$d"
		# shellcheck disable=SC2206 # the sizes and modes are words
		args=(${sizes[$c]} ${modes[$m]} --warmup "$warmup" --steps "$steps"
			--times "$d/$m.jsonl" --trace "$d/$m.json")
		[[ $m == et || $m == shapes-et ]] && args+=(--et "$d/$m.et.json")
		say "$c $m"
		if ! timeout 120 "$python" "$gpt" "${args[@]}" >"$d/$m.log" 2>&1; then
			say "$c $m failed: $(tail -n 3 "$d/$m.log")"
			failed=1
		fi
		rm -f "$d/$m.et.json" # large; its op count is the trace's
	done
done
"$python" "$root/bench/gpu/profiler-pairs.py" "$out" || failed=1
say "done"
exit $failed
