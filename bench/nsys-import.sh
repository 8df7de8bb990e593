#!/bin/bash
# The import of an Nsight Systems SQLite export (issue 16): throughput and peak memory.
#
#   bench/nsys-import.sh            (after `make build`)
#
# Writes an export of BENCH_NSYS_STEPS steps with tests/golden/make-nsys.py (per step a
# copy, two runtime calls, a driver call, a kernel and an NVTX range: six rows), reused
# while it exists, then imports it with bench/bench-import (orr_trace_import alone, the
# median of BENCH_RUNS runs after a warm-up, the file in the page cache) and once under
# /usr/bin/time -v for the peak RSS.  Prints the file's size, events, the median time, MB/s
# and events/s, and the peak RSS.
#
# Environment: BENCH_NSYS_STEPS (default 200000), BENCH_RUNS (default 5), BENCH_DIR
# (default /tmp/orrery-bench/nsys), BUILD_DIR (default build).
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
steps=${BENCH_NSYS_STEPS:-200000}
runs=${BENCH_RUNS:-5}
work=${BENCH_DIR:-/tmp/orrery-bench/nsys}
bench=$build_dir/bench/bench-import
db=$work/steps-$steps.sqlite

[[ -x $bench ]] || { echo "run 'make build' first" >&2; exit 1; }
mkdir -p "$work"
[[ -s $db ]] || python3 tests/golden/make-nsys.py "$db" --steps "$steps"
bytes=$(stat -c %s "$db")
"$bench" --runs 1 "$db" >/dev/null
out=$("$bench" --runs "$runs" "$db")
echo "$out" >&2
events=$(echo "$out" | sed -n 's/.*"events": \([0-9]*\).*/\1/p')
median_s=$(echo "$out" | sed -n 's/.*"median_s": \([0-9.]*\).*/\1/p')
rss_kb=$(/usr/bin/time -v "$bench" --runs 1 "$db" 2>&1 >/dev/null |
	sed -n 's/.*Maximum resident set size (kbytes): //p')
python3 - "$bytes" "$events" "$median_s" "$rss_kb" <<'PY'
import sys
size, events, s, rss = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"file {size / 1e6:.1f} MB, {events} events: median {s:.3f} s, "
      f"{size / 1e6 / s:.0f} MB/s, {events / 1e6 / s:.2f} M events/s, "
      f"peak RSS {rss / 1e3:.0f} MB ({rss * 1e3 / size:.2f} x the file)")
PY
