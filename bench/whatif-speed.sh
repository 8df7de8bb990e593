#!/bin/bash
# Speed of `orrery whatif` (docs/performance.md, "orrery whatif"): the full enumeration of
# a GPT-3 175B-class model (96 layers, hidden 12288, 96 heads, sequence 2048, global
# batch 1536) on 1,024 A100s, from the description with the hardware table and a launch
# time of 5 us per kernel, on 1 thread, on every core, and under mpirun on every core
# (1 thread per process); each run 3 times, the median wall time and the max RSS of
# each kept.  Then the memory per process against the number of configurations: the
# same model with --pp 1 and micro-batch 1 (most configurations refused for memory, the
# rest cheap) on 1024 GPUs, 512-1024 and 64-65536 (21 to 390,000 configurations).  And a
# sweep most of whose configurations are feasible: a 7B model (32 layers, hidden 4096,
# 32 heads, sequence 4096, global batch 256) on 64 H100s, on every core.
#
#   bench/whatif-speed.sh [--orrery PATH] [--runs N]
#
# Prints a Markdown table: configurations swept, those estimated (synthesized and
# placed: the feasible ones and those the synthesis refused; the rest are refused by a
# rule or for memory in microseconds), those feasible, wall and CPU seconds, the
# configurations estimated per second and per core, and all of them per second and per
# core, max RSS.
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
		# exit 1: a sweep with no feasible configuration (its report written all the same)
		/usr/bin/time -v "$@" >"$work/out" 2>"$work/time" || [[ $? == 1 ]]
		awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
			for (k = 1; k <= n; k++) s = s * 60 + t[k]; w = s }
			/User time/ { u = $2 } /System time/ { y = $2 }
			/Maximum resident/ { r = $2 } END { print w, u + y, r }' "$work/time" >>"$work/times"
	done
	# the CSV's rows by their why: estimated (feasible or refused by the synthesis), feasible
	local counts
	counts=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "why") c = i; next }
		{ n++; if ($c == "feasible") f++; if ($c == "feasible" || $c == "refused") e++ }
		END { print n + 0, e + 0, f + 0 }' "$work/out")
	sort -n "$work/times" | awk -v counts="$counts" -v c="$used" -v l="$label" -v runs="$runs" '
		{ w[NR] = $1; cpu[NR] = $2; if ($3 > r) r = $3 }
		END { split(counts, k, " "); n = k[1]; e = k[2]; f = k[3]
			m = w[int((runs + 1) / 2)]; u = cpu[int((runs + 1) / 2)]
			printf "| %s | %d | %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
				l, n, e, f, m, u, e / m, e / m / c, n / m, n / m / c, r / 1024 }'
}

echo "| run | configurations | estimated | feasible | wall s (median of $runs) | CPU s |" \
	"estimated/s | per core | configurations/s | per core | max RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
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
one "7B on 64 H100s, $cores threads" "$cores" "$orrery" whatif --gpu h100-sxm --layers 32 \
	--hidden 4096 --heads 32 --seq 4096 --global-batch 256 --launch-us 5 --format=csv \
	--no-progress --gpus 64 --jobs "$cores"
