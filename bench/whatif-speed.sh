#!/bin/bash
# Speed of `orrery whatif` (docs/performance.md, "orrery whatif"): the full enumeration of
# a GPT-3 175B-class model (96 layers, hidden 12288, 96 heads, sequence 2048, global
# batch 1536) on 1,024 A100s, from the description with the hardware table and a launch
# time of 5 us per kernel, on 1 thread, on every core, and under mpirun on every core
# (1 thread per process); each run 3 times, the median wall time and the max RSS of
# each kept.  Then the memory per process against the number of configurations: the
# same model with --pp 1 and micro-batch 1 (most configurations refused for memory, the
# rest cheap) on 1024 GPUs, 512-1024 and 64-65536 (21 to 390,000 configurations).
#
#   bench/whatif-speed.sh [--orrery PATH] [--runs N]
#
# Prints a Markdown table: configurations, wall seconds, configurations per second and
# per core, max RSS.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
orrery=$root/build/cli/orrery
runs=3
while (($#)); do
	case $1 in
	--orrery) orrery=$2 && shift 2 ;;
	--runs) runs=$2 && shift 2 ;;
	*) echo "usage: $0 [--orrery PATH] [--runs N]" >&2 && exit 2 ;;
	esac
done
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model=(--gpu a100-80gb-sxm --layers 96 --hidden 12288 --heads 96 --seq 2048
	--global-batch 1536 --launch-us 5 --format=csv --no-progress)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# one LABEL CORES CMD...: runs CMD $runs times, prints a table row of the median
one() {
	local label=$1 used=$2 i
	shift 2
	: >"$work/times"
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -v "$@" >"$work/out" 2>"$work/time"
		awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
			for (k = 1; k <= n; k++) s = s * 60 + t[k]; w = s }
			/Maximum resident/ { r = $2 } END { print w, r }' "$work/time" >>"$work/times"
	done
	local n
	n=$(($(wc -l <"$work/out") - 1))
	sort -n "$work/times" | awk -v n="$n" -v c="$used" -v l="$label" -v runs="$runs" '
		{ w[NR] = $1; if ($2 > r) r = $2 }
		END { m = w[int((runs + 1) / 2)]
			printf "| %s | %d | %.2f | %.0f | %.0f | %.0f |\n", l, n, m, n / m, n / m / c, r / 1024 }'
}

echo "| run | configurations | wall s (median of $runs) | configurations/s | per core | max RSS MiB |"
echo "|---|---|---|---|---|---|"
one "1 thread" 1 "$orrery" whatif "${model[@]}" --gpus 1024 --jobs 1
one "$cores threads" "$cores" "$orrery" whatif "${model[@]}" --gpus 1024 --jobs "$cores"
if command -v mpirun >/dev/null && [[ -e ${orrery%/*}/orrery-mpi.so ]]; then # an MPI build
	one "mpirun -n $cores, 1 thread each" "$cores" \
		mpirun --oversubscribe -n "$cores" "$orrery" whatif "${model[@]}" --gpus 1024 --jobs 1
fi
one "1024 GPUs, PP 1, micro-batch 1" 1 "$orrery" whatif "${model[@]}" --gpus 1024 --pp 1 \
	--micro-batch 1 --jobs 1
one "512-1024 GPUs, PP 1, micro-batch 1" 1 "$orrery" whatif "${model[@]}" --gpus 512-1024 \
	--pp 1 --micro-batch 1 --jobs 1
one "64-65536 GPUs, PP 1, micro-batch 1" 1 "$orrery" whatif "${model[@]}" --gpus 64-65536 \
	--pp 1 --micro-batch 1 --jobs 1
