#!/bin/bash
# The benchmarks of DESIGN.md's speed goals. `make bench` runs them all.
#
#   bench/run.sh [import] [replay]     (no section: both)
#
# import: Kineto JSON import (goal: >= 400 MB/s per core, peak memory <= 1.5 x the file).
# Builds what it needs in build/ (configured by `make build`), generates a synthetic trace
# with bench/gen-kineto (reused while its size, seed and generator source are unchanged),
# runs `orrery info --format=json FILE` once to warm the page cache (it cannot be dropped
# here), then BENCH_RUNS times under /usr/bin/time -v, each run followed by Python's
# `json.load` of the same file (goal: orrery >= 10 x faster), so that both see the same
# load on a shared machine. Prints each run's wall time, CPU time, MB/s and maximum RSS,
# then the medians and the ratios of json.load's medians to orrery's, then one JSON line
# with the same numbers.
#
# replay: graph build and replay (goals: >= 5 M events/s and >= 10 M tasks/s per core;
# 1,024 ranks x 100 k events end to end in <= 60 s and <= 12 GB on 2 cores). For each size
# RxE of BENCH_REPLAY_SIZES, runs `bench-replay --ranks R --events E --json` (a synthetic
# job generated in memory, its graph, its replay) BENCH_RUNS times under /usr/bin/time -v.
# Prints each run's generate, graph and replay rates, wall time and maximum RSS, then the
# medians with their ranges, then one JSON line per size.
#
# Environment:
#   BENCH_DIR      where the trace goes (default /tmp/orrery-bench)
#   BENCH_RUNS     measured runs (default 3)
#   BENCH_SIZE_MB  trace size in MB of 10^6 bytes (default 600)
#   BENCH_SEED     generator seed (default 1)
#   BENCH_CMD      the command to measure, given FILE as its last argument
#                  (default: build/cli/orrery info --format=json)
#   BENCH_PYTHON   the Python that runs json.load (default python3; empty: not run)
#   BENCH_REPLAY_SIZES  ranks x events per rank (default "8x100000 64x100000 1024x100000")
#   BUILD_DIR      the meson build directory (default build)
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
bench_dir=${BENCH_DIR:-/tmp/orrery-bench}
runs=${BENCH_RUNS:-3}
size_mb=${BENCH_SIZE_MB:-600}
seed=${BENCH_SEED:-1}
replay_sizes=${BENCH_REPLAY_SIZES:-8x100000 64x100000 1024x100000}
python=${BENCH_PYTHON-python3}
gen=$build_dir/bench/gen-kineto
orrery=$build_dir/cli/orrery
bench_replay=$build_dir/bench/bench-replay
file=$bench_dir/big.trace.json

die() {
	echo "bench/run.sh: error: $*" >&2
	exit 1
}

sections=("$@")
((${#sections[@]})) || sections=(import replay)
for s in "${sections[@]}"; do
	[[ $s == import || $s == replay ]] || die "unknown section '$s' (import, replay)"
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ $size_mb =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZE_MB must be a positive integer, not '$size_mb'"
[[ $seed =~ ^[0-9]+$ ]] || die "BENCH_SEED must be a non-negative integer, not '$seed'"
for size in $replay_sizes; do
	[[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] ||
		die "BENCH_REPLAY_SIZES: '$size' is not RANKSxEVENTS (e.g. 64x100000)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (Debian package 'time')"
[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"

stats=$(mktemp)
trap 'rm -f "$stats"' EXIT

median() {
	sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2);
		printf "%.3f", NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2 }'
}

# "min-max" of the numbers on stdin.
range() {
	sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'
}

# Maximum RSS in KB from the /usr/bin/time -v output in $stats.
max_rss() {
	local rss

	rss=$(awk -F': ' '/Maximum resident set size \(kbytes\)/ { print $2 }' "$stats")
	[[ -n $rss ]] || die "no 'Maximum resident set size' in /usr/bin/time -v output"
	echo "$rss"
}

# ---- import --------------------------------------------------------------------------------

# One run of "$@" FILE (default: the command measured) under /usr/bin/time -v; sets
# wall (s), cpu (user + sys, s) and rss (KB).
measure() {
	local t0 t1 status=0

	(($#)) || set -- "${cmd[@]}"
	t0=$EPOCHREALTIME
	/usr/bin/time -v -o "$stats" "$@" "$file" >/dev/null || status=$?
	t1=$EPOCHREALTIME
	((status == 0)) || die "'$* $file' failed with exit status $status"
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	cpu=$(awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 }
		END { printf "%.3f", s }' "$stats")
	rss=$(max_rss)
}

mbs() {
	awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }'
}

ratio() {
	awk -v b="$bytes" -v k="$1" 'BEGIN { printf "%.2f", k * 1024 / b }'
}

# $1 / $2 with one decimal: how many times faster orrery ($2) is than json.load ($1).
speedup() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'
}

# One line of the report: label, wall s, cpu s, max RSS KB.
report() {
	printf '%-8s %7.3f s wall  %7.3f s cpu  %8s MB/s  %8s MB per cpu s  ' \
		"$1" "$2" "$3" "$(mbs "$2")" "$(mbs "$3")"
	printf 'max RSS %s KB (%s x file)\n' "$4" "$(ratio "$4")"
}

bench_import() {
	local targets walls cpus rsss m_wall m_cpu m_rss stamp py_walls py_cpus py_rsss
	local p_wall p_cpu p_rss
	local json_load=(-c 'import json, sys; json.load(open(sys.argv[1]))')

	[[ -z $python ]] || command -v "$python" >/dev/null ||
		die "'$python' is missing: set BENCH_PYTHON to a Python 3, or empty to skip json.load"

	# Build only what the benchmark runs, so unrelated work in progress cannot stop it.
	targets=(gen-kineto)
	[[ -n ${BENCH_CMD-} ]] || targets+=(orrery)
	meson compile -C "$build_dir" "${targets[@]}" >&2 ||
		die "building ${targets[*]} in '$build_dir' failed"
	[[ -x $gen ]] || die "'$gen' is missing after the build"
	if [[ -z ${BENCH_CMD-} ]]; then
		[[ -x $orrery ]] || die "'$orrery' is missing after the build: is cli/ built?"
		cmd=("$orrery" info --format=json)
	else
		read -r -a cmd <<<"$BENCH_CMD"
	fi

	# The trace: regenerated when the size, the seed or the generator changes.
	mkdir -p "$bench_dir"
	stamp="size_mb=$size_mb seed=$seed gen=$(cat bench/gen-kineto*.c bench/gen-kineto.h | sha256sum | cut -c1-16)"
	if [[ -f $file && -f $file.stamp ]] &&
		[[ $(<"$file.stamp") == "$stamp $(stat -c %s "$file")" ]]; then
		echo "trace: reusing $file" >&2
	else
		rm -f "$file" "$file.stamp"
		"$gen" -o "$file" --size-mb "$size_mb" --seed "$seed" || die "gen-kineto failed"
		echo "$stamp $(stat -c %s "$file")" >"$file.stamp"
	fi
	bytes=$(stat -c %s "$file")

	echo "file:    $file ($(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB, $bytes bytes)"
	echo "command: ${cmd[*]} FILE"
	[[ -z $python ]] || echo "against: $python -c '${json_load[1]}' FILE (after each run)"
	measure
	echo "warm-up: ${wall} s"
	walls=() cpus=() rsss=() py_walls=() py_cpus=() py_rsss=()
	for ((i = 1; i <= runs; i++)); do
		measure
		walls+=("$wall") cpus+=("$cpu") rsss+=("$rss")
		report "run $i:" "$wall" "$cpu" "$rss"
		[[ -n $python ]] || continue
		measure "$python" "${json_load[@]}"
		py_walls+=("$wall") py_cpus+=("$cpu") py_rsss+=("$rss")
		report "  json:" "$wall" "$cpu" "$rss"
	done
	m_wall=$(printf '%s\n' "${walls[@]}" | median)
	m_cpu=$(printf '%s\n' "${cpus[@]}" | median)
	m_rss=$(printf '%s\n' "${rsss[@]}" | median | cut -d. -f1)
	report "median:" "$m_wall" "$m_cpu" "$m_rss"
	if [[ -n $python ]]; then
		p_wall=$(printf '%s\n' "${py_walls[@]}" | median)
		p_cpu=$(printf '%s\n' "${py_cpus[@]}" | median)
		p_rss=$(printf '%s\n' "${py_rsss[@]}" | median | cut -d. -f1)
		report "  json:" "$p_wall" "$p_cpu" "$p_rss"
		printf 'orrery is %s x as fast as json.load in wall time, %s x in CPU time (goal: >= 10 x)\n' \
			"$(speedup "$p_wall" "$m_wall")" "$(speedup "$p_cpu" "$m_cpu")"
	fi
	printf '{"bench": "kineto-import", "command": "%s", "file_bytes": %s, "runs": %s, ' \
		"${cmd[*]//\"/\\\"}" "$bytes" "$runs"
	printf '"median_wall_s": %s, "median_cpu_s": %s, "mb_per_s": %s, "mb_per_cpu_s": %s, ' \
		"$m_wall" "$m_cpu" "$(mbs "$m_wall")" "$(mbs "$m_cpu")"
	printf '"max_rss_kb": %s, "rss_per_file": %s' "$m_rss" "$(ratio "$m_rss")"
	if [[ -n $python ]]; then
		printf ', "json_load_median_wall_s": %s, "json_load_median_cpu_s": %s' \
			"$p_wall" "$p_cpu"
		printf ', "json_load_max_rss_kb": %s, "times_json_load_wall": %s' \
			"$p_rss" "$(speedup "$p_wall" "$m_wall")"
		printf ', "times_json_load_cpu": %s' "$(speedup "$p_cpu" "$m_cpu")"
	fi
	echo "}"
}

# ---- replay --------------------------------------------------------------------------------

# The number after "KEY": in the JSON line $1.
field() {
	sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" <<<"$1"
}

# The values of KEY over the JSON lines in $out, one a line.
values() {
	sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<<"$out"
}

# Median and range of KEY over the runs, times SCALE (default 1).
summary() {
	local v

	v=$(values "$1" | awk -v s="${2:-1}" '{ printf "%.3f\n", $1 * s }')
	printf '%s (%s)' "$(median <<<"$v")" "$(range <<<"$v")"
}

# One size: BENCH_RUNS runs of bench-replay under /usr/bin/time -v.
replay_size() {
	local ranks=${1%x*} events=${1#*x} line t0 t1 wall rss out="" i

	echo "job: $ranks ranks x $events events, seed $seed"
	for ((i = 1; i <= runs; i++)); do
		t0=$EPOCHREALTIME
		line=$(/usr/bin/time -v -o "$stats" "$bench_replay" --ranks "$ranks" \
			--events "$events" --seed "$seed" --json) ||
			die "'$bench_replay --ranks $ranks --events $events' failed"
		t1=$EPOCHREALTIME
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		rss=$(max_rss)
		line="${line%\}}, \"process_wall_s\": $wall, \"time_max_rss_kb\": $rss}"
		out+="$line"$'\n'
		printf 'run %d:  generate %6s M events/s  graph %6s M events/s  ' "$i" \
			"$(field "$line" generate_m_per_s)" "$(field "$line" graph_m_per_s)"
		printf 'replay %6s M tasks/s  end to end %7s s  max RSS %s KB\n' \
			"$(field "$line" replay_m_per_s)" "$wall" "$rss"
	done
	echo "median (range) over $runs runs:"
	echo "  graph build   $(summary graph_m_per_s) M events/s, $(summary graph_m_per_cpu_s) per cpu s"
	echo "  replay        $(summary replay_m_per_s) M tasks/s, $(summary replay_m_per_cpu_s) per cpu s"
	echo "  generate      $(summary generate_m_per_s) M events/s"
	echo "  end to end    $(summary process_wall_s) s wall (process), $(summary total_cpu_s) s cpu"
	echo "  max RSS       $(summary time_max_rss_kb 0.001024) MB"
	printf '{"bench": "replay", "ranks": %s, "events_per_rank": %s, "runs": %s, ' \
		"$ranks" "$events" "$runs"
	printf '"events": %s, "tasks": %s, ' "$(field "$line" events)" "$(field "$line" tasks)"
	printf '"median_graph_m_events_per_s": %s, "median_replay_m_tasks_per_s": %s, ' \
		"$(values graph_m_per_s | median)" "$(values replay_m_per_s | median)"
	printf '"median_wall_s": %s, "median_max_rss_kb": %s}\n' \
		"$(values process_wall_s | median)" "$(values time_max_rss_kb | median | cut -d. -f1)"
}

bench_replay() {
	meson compile -C "$build_dir" bench-replay >&2 ||
		die "building bench-replay in '$build_dir' failed"
	[[ -x $bench_replay ]] || die "'$bench_replay' is missing after the build"
	for size in $replay_sizes; do
		replay_size "$size"
	done
}

for s in "${sections[@]}"; do
	"bench_$s"
done
