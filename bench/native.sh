#!/bin/bash
# The native format against Kineto JSON, on every real trace: size and import time.
# Goals (issue 4): a native file >= 5x smaller than the JSON and >= 3x faster to load.
#
#   bench/native.sh            (after `make build`)
#
# For each trace in $ORR_SHARED_TRACES/kineto (default ../shared/traces/kineto):
#   - the JSON as stored (.json or .json.gz) and decompressed, in bytes;
#   - `orrery convert TRACE -o NAME.orr`, the native file's bytes;
#   - the import time (orr_trace_import, bench/bench-import.c) of the decompressed JSON,
#     of the JSON as stored and of the native file: median of BENCH_RUNS runs after a
#     warm-up, files in the page cache;
#   - peak RSS of one import of each (bench-import --runs 1 under /usr/bin/time -v; the
#     process's own baseline included).
# Prints a Markdown table (ratios: JSON / native), then the totals over all traces and
# one JSON line per trace.  Work files go to BENCH_DIR (default /tmp/orrery-bench/native).
#
# Environment: BENCH_RUNS (default 5), BENCH_DIR, BUILD_DIR (default build),
# ORR_SHARED_TRACES.
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
runs=${BENCH_RUNS:-5}
work=${BENCH_DIR:-/tmp/orrery-bench/native}
traces=${ORR_SHARED_TRACES:-../shared/traces}/kineto
orrery=$build_dir/cli/orrery
bench=$build_dir/bench/bench-import

die() {
	echo "bench/native.sh: error: $*" >&2
	exit 1
}

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, not '$runs'"
[[ -d $traces ]] || die "no traces in '$traces' (set ORR_SHARED_TRACES)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (Debian package 'time')"
[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"
meson compile -C "$build_dir" orrery bench-import >&2 || die "building orrery and bench-import failed"
mkdir -p "$work"
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT

# The median import time in seconds of $1.
import_s() {
	"$bench" --runs "$runs" "$1" | sed -n 's/.*"median_s": \([0-9.]*\).*/\1/p'
}

# Peak RSS in KB of one import of $1.
rss_kb() {
	/usr/bin/time -v -o "$stats" "$bench" --runs 1 "$1" >/dev/null || die "bench-import '$1' failed"
	awk -F': ' '/Maximum resident set size \(kbytes\)/ { print $2 }' "$stats"
}

div() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'
}

mb() {
	awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'
}

ms() {
	awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "runs: median of $runs after a warm-up; sizes in MB (10^6 bytes), times in ms"
echo
echo "| trace | events | JSON | stored | native | JSON/native | stored/native" \
	"| load JSON | load stored | load native | JSON/native | stored/native" \
	"| RSS JSON | RSS native |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
lines=()
tot_json=0 tot_stored=0 tot_native=0 tot_tj=0 tot_ts=0 tot_tn=0
for path in "$traces"/*; do
	name=$(basename "$path")
	base=${name%.gz}
	base=${base%.json}
	json=$work/$base.json
	native=$work/$base.orr
	if [[ $name == *.gz ]]; then
		gzip -dc "$path" >"$json"
	else
		cp "$path" "$json"
	fi
	"$orrery" convert "$path" -o "$native" 2>/dev/null || die "orrery convert '$path' failed"
	events=$("$bench" --runs 1 "$native" | sed -n 's/.*"events": \([0-9]*\).*/\1/p')
	s_json=$(stat -c %s "$json") s_stored=$(stat -c %s "$path") s_native=$(stat -c %s "$native")
	t_json=$(import_s "$json") t_stored=$(import_s "$path") t_native=$(import_s "$native")
	r_json=$(rss_kb "$json") r_native=$(rss_kb "$native")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f |\n' \
		"$base" "$events" "$(mb "$s_json")" "$(mb "$s_stored")" "$(mb "$s_native")" \
		"$(div "$s_json" "$s_native")" "$(div "$s_stored" "$s_native")" \
		"$(ms "$t_json")" "$(ms "$t_stored")" "$(ms "$t_native")" \
		"$(div "$t_json" "$t_native")" "$(div "$t_stored" "$t_native")" \
		"$(awk -v k="$r_json" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="$r_native" 'BEGIN { print k / 1024 }')"
	lines+=("{\"trace\": \"$base\", \"events\": $events, \"json_bytes\": $s_json, \"stored_bytes\": $s_stored, \"native_bytes\": $s_native, \"json_s\": $t_json, \"stored_s\": $t_stored, \"native_s\": $t_native, \"json_rss_kb\": $r_json, \"native_rss_kb\": $r_native}")
	tot_json=$((tot_json + s_json)) tot_stored=$((tot_stored + s_stored))
	tot_native=$((tot_native + s_native))
	tot_tj=$(awk -v a="$tot_tj" -v b="$t_json" 'BEGIN { print a + b }')
	tot_ts=$(awk -v a="$tot_ts" -v b="$t_stored" 'BEGIN { print a + b }')
	tot_tn=$(awk -v a="$tot_tn" -v b="$t_native" 'BEGIN { print a + b }')
done
printf '| **all** | | %s | %s | %s | **%s** | %s | %s | %s | %s | **%s** | %s | | |\n' \
	"$(mb "$tot_json")" "$(mb "$tot_stored")" "$(mb "$tot_native")" \
	"$(div "$tot_json" "$tot_native")" "$(div "$tot_stored" "$tot_native")" \
	"$(ms "$tot_tj")" "$(ms "$tot_ts")" "$(ms "$tot_tn")" \
	"$(div "$tot_tj" "$tot_tn")" "$(div "$tot_ts" "$tot_tn")"
echo
printf '%s\n' "${lines[@]}"
