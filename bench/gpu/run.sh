#!/bin/bash
# orrery record on a real training loop (bench/gpu/README.md): run on a machine with an
# NVIDIA GPU, the CUDA toolkit and PyTorch, from anywhere:
#
#   bash bench/gpu/run.sh            # OUT=DIR to choose where results go
#   bash bench/gpu/run.sh compose    # the fidelity of orrery compose instead
#   bash bench/gpu/run.sh ops        # the cost per op of op names: nvtx, profiler, none
#   BUNDLE=orrery-0.1.0-x86_64.tar.gz bash bench/gpu/run.sh   # a `make bundle` tarball
#
# Builds orrery with the tracer (BUILD_DIR, default build-gpu), or takes the orrery of a
# relocatable bundle (BUNDLE: the tarball of `make bundle` or the folder it holds, which
# needs none of orrery's build dependencies here), then runs bench/gpu/gpt.py
# plain, under `orrery record`, and under torch.profiler, ROUNDS times each, alternating;
# checks replay accuracy, tracer overhead and kernel counts; writes OUT/results.json and
# the packed recorded run.  Exits 1 when a check fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
bundle=${BUNDLE:-}
out=${OUT:-$build/bench-gpu}
[[ -n $bundle && -z ${OUT:-} ]] && out=$PWD/bench-gpu
cuda=${CUDA_HOME:-/usr/local/cuda}
warmup=${WARMUP:-10}
steps=${STEPS:-20}
rounds=${ROUNDS:-2}
python=${PYTHON:-python3}
gpt=$root/bench/gpu/gpt.py
shared=${ORR_SHARED_TRACES:-$root/../shared/traces}

say() { echo "run.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# meson directly: `make build` would try apt, and the GPU machine has no network.
check_build_deps() {
	local missing=()
	for p in meson ninja pkg-config protoc-c; do
		command -v $p >/dev/null || missing+=("$p")
	done
	for p in simdjson libarchive igraph libprotobuf-c libzstd; do
		pkg-config --exists $p 2>/dev/null || missing+=("$p (pkg-config)")
	done
	[[ -f $cuda/include/cupti.h ]] || missing+=("$cuda/include/cupti.h (CUDA_HOME)")
	((${#missing[@]} == 0)) || die "cannot build orrery here, missing: ${missing[*]}"
}

build_orrery() {
	if [[ ! -f $build/meson-private/coredata.dat ]]; then
		check_build_deps
		meson setup "$build" "$root" -Dbuildtype=release -Dtests=disabled \
			-Dcupti=enabled -Dcudadir="$cuda" >&2
	fi
	ninja -C "$build" >&2
	[[ -x $build/cli/orrery ]] || die "no $build/cli/orrery after the build"
}

# Sets orrery: the bundle's (extracted once, beside OUT) or the build's.  With an
# argument (compose), the bundle need not hold the tracer: only orrery runs.
find_orrery() {
	local dir=$bundle tracer=lib/orrery/liborrery-tracer.so
	if [[ -z $bundle ]]; then
		build_orrery
		orrery=$build/cli/orrery
		return
	fi
	if [[ -f $bundle ]]; then
		dir=$(dirname "$out")/.orrery-bundle
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -C "$dir" -xzf "$bundle" || die "cannot extract BUNDLE=$bundle"
		dir=$(echo "$dir"/orrery-*)
	fi
	local need="bin/orrery with its tracer (lib/orrery/)"
	if [[ -n ${1:-} ]]; then
		tracer=bin/orrery need=bin/orrery
	fi
	[[ -x $dir/bin/orrery && -f $dir/$tracer ]] || die "BUNDLE=$bundle holds no $need"
	orrery=$dir/bin/orrery
	"$orrery" --version >&2 || die "the bundle's orrery does not run here"
}

median_of() { # FILE.jsonl...: the median ms of the measured steps
	"$python" - "$@" <<'EOF'
import json, statistics, sys
ms = [r["ms"] for f in sys.argv[1:] for r in map(json.loads, open(f)) if r["measured"]]
print(statistics.median(ms))
EOF
}

# Only a directory this script made (or an empty one) is emptied.
prepare_out() {
	if [[ -d $out && -n $(ls -A "$out") && ! -e $out/.bench-gpu ]]; then
		die "OUT=$out is not empty and was not made by run.sh"
	fi
	rm -rf "$out"
	mkdir -p "$out"
	: >"$out/.bench-gpu"
}

# What every mode does first: orrery found, PyTorch with CUDA checked, OUT made.
start() {
	find_orrery
	"$python" -c 'import torch; assert torch.cuda.is_available()' ||
		die "PyTorch with CUDA is not usable by $python"
	prepare_out
}

main() {
	start
	local common=(--warmup "$warmup" --steps "$steps")
	for r in $(seq "$rounds"); do
		say "round $r/$rounds: plain"
		"$python" "$gpt" --mode plain "${common[@]}" --times "$out/plain-$r.jsonl"
		say "round $r/$rounds: orrery record"
		"$orrery" record -o "$out/run-$r" --skip "$warmup" --steps "$steps" -- \
			"$python" "$gpt" --mode orrery "${common[@]}" --times "$out/orrery-$r.jsonl"
		say "round $r/$rounds: torch.profiler"
		"$python" "$gpt" --mode torch-profiler "${common[@]}" --times "$out/torch-$r.jsonl" \
			--trace "$out/torch-trace-$r.json" --counts "$out/torch-kernels-$r.json"
	done
	"$orrery" info --format=json "$out/run-1" >"$out/info-orrery.json"
	"$orrery" info --format=json "$out/torch-trace-1.json" >"$out/info-torch.json"
	"$orrery" replay --format=json "$out/run-1" >"$out/replay.json"
	"$orrery" replay "$out/run-1" >"$out/replay.txt"
	"$orrery" pack -o "$out/run.tar.zst" "$out/run-1"
	# Kernels by name, as Chrome JSON like torch.profiler's, to compare name by name.
	"$orrery" convert --to chrome -o "$out/run-1.json" "$out/run-1"
	plain=$(median_of "$out"/plain-*.jsonl)
	traced=$(median_of "$out"/orrery-*.jsonl)
	torchp=$(median_of "$out"/torch-*.jsonl)
	"$python" - "$out" "$plain" "$traced" "$torchp" "$warmup" "$steps" "$rounds" <<'EOF'
import json, subprocess, sys
out, plain, traced, torchp = sys.argv[1], *map(float, sys.argv[2:5])
warmup, steps, rounds = map(int, sys.argv[5:8])
load = lambda name: json.load(open("%s/%s" % (out, name)))
info_o, info_t, replay = load("info-orrery.json"), load("info-torch.json"), load("replay.json")
kern_o = sum(r["events"]["kernel"] for r in info_o["ranks"])
kern_t = sum(r["events"]["kernel"] for r in info_t["ranks"])
def by_name(path):
    counts = {}
    for e in json.load(open(path)).get("traceEvents", []):
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            counts[e.get("name", "")] = counts.get(e.get("name", ""), 0) + 1
    return counts
names_o, names_t = by_name("%s/run-1.json" % out), by_name("%s/torch-trace-1.json" % out)
differ = {n: [names_o.get(n, 0), names_t.get(n, 0)] for n in sorted(set(names_o) | set(names_t))
          if names_o.get(n, 0) != names_t.get(n, 0)}
steps_o = [s["step"] for s in info_o["ranks"][0]["steps"]]
summ = replay["summary"]
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except OSError:
    gpu = None
res = {
    "gpu": gpu, "warmup": warmup, "steps": steps, "rounds": rounds,
    "median_step_ms": {"plain": plain, "orrery": traced, "torch_profiler": torchp},
    "overhead": {"orrery": traced / plain - 1, "torch_profiler": torchp / plain - 1},
    "kernels": {"orrery": kern_o, "torch_profiler": kern_t, "names": len(names_t),
                "names_differ_orrery_vs_torch_profiler": differ},
    "recorded_steps": steps_o,
    "replay": {"mean_error": summ["mean_error"], "max_error": summ["max_error"],
               "rank_steps": summ["rank_steps"]},
}
res["checks"] = {
    "replay_mean_error_le_1pct": summ["mean_error"] is not None and summ["mean_error"] <= 0.01,
    "orrery_overhead_le_1pct": res["overhead"]["orrery"] <= 0.01,
    "kernel_counts_equal": kern_o == kern_t and not differ,
    "recorded_steps_are_the_window": steps_o == list(range(warmup, warmup + steps)),
}
json.dump(res, open("%s/results.json" % out, "w"), indent=1)
print(json.dumps(res, indent=1))
failed = [k for k, ok in res["checks"].items() if not ok]
print("run.sh: %s" % ("all checks pass" if not failed else "FAILED: " + ", ".join(failed)),
      file=sys.stderr)
sys.exit(1 if failed else 0)
EOF
}

# The fidelity of `orrery compose` (docs/orrery-compose.md): gpt.py under torch.profiler
# with an execution trace of its first measured step; the benchmark composed from it run
# with --profile; step time, GPU time and kernel counts by class (as orrery summary
# classes kernels) compared with the profiled steps recorded without the observer
# (compose-check.py); then the shared A100 Megatron TP=8 rank 0 composed and run here
# with its collectives as timed stand-ins (--emulate-comms), profiled, its classes beside
# the A100's scaled by the hardware table.  The shared traces: ORR_SHARED_TRACES (default
# ../shared/traces beside the sources).
compose_main() {
	find_orrery compose
	"$python" -c 'import torch; assert torch.cuda.is_available()' ||
		die "PyTorch with CUDA is not usable by $python"
	prepare_out
	"$python" "$gpt" --mode torch-profiler --warmup "$warmup" --steps "$steps" \
		--times "$out/torch.jsonl" --trace "$out/torch-trace.json" --et "$out/gpt.et.json"
	"$orrery" compose --format=json --et "$out/gpt.et.json" -o "$out/bench" \
		"$out/torch-trace.json" >"$out/compose.json"
	"$python" "$out/bench/bench.py" --steps "$steps" --warmup "$warmup" --json \
		--profile "$out/bench-prof" >"$out/bench-run.json"
	# The GPT's comparison first, written before the Megatron rank runs: that one is a
	# comparison, and neither its failure nor a time limit reached there loses this.
	local rc=0
	"$python" "$root/bench/gpu/compose-check.py" --orrery "$orrery" "$out" || rc=$?
	((rc != 2)) || return 2
	local kineto=$shared/kineto/astrasim-megatron-tp8
	if [[ ! -d $kineto ]]; then
		say "no $kineto (ORR_SHARED_TRACES): the Megatron rank left out"
	elif compose_megatron "$kineto"; then
		rc=0
		"$python" "$root/bench/gpu/compose-check.py" --orrery "$orrery" \
			--mega-trace "$kineto/rank-0.json.gz" "$out" || rc=$?
	else
		say "the Megatron rank failed (above): compose-results.json holds the GPT's alone"
	fi
	return "$rc"
}

# The shared A100 Megatron rank 0 composed from $1 and run here with its collectives as
# timed stand-ins; fails (status) where either step does.
compose_megatron() {
	"$orrery" compose --format=json --et "$shared/et/astrasim-megatron-tp8" \
		-o "$out/mega" "$1" >"$out/mega-compose.json" &&
		"$python" "$out/mega/bench.py" --rank 0 --steps "${MEGA_STEPS:-5}" --warmup 2 --json \
			--emulate-comms --profile "$out/mega-prof" >"$out/mega-run.json"
}

# The cost of op names (orrery_record.enable(ops=...)): per round, gpt.py plain, under
# orrery record with ops none (steps only), nvtx (emit_nvtx) and profiler (a CPU-only
# torch.profiler merged at import), and under torch.profiler (CPU, CUDA, shapes); then
# ops-check.py: medians, ops per step, launches inside an op, cost per op, in
# OUT/ops-results.json.
ops_main() {
	start
	local common=(--warmup "$warmup" --steps "$steps")
	for r in $(seq "$rounds"); do
		say "round $r/$rounds: plain"
		"$python" "$gpt" --mode plain "${common[@]}" --times "$out/plain-$r.jsonl"
		for m in none nvtx profiler; do
			say "round $r/$rounds: orrery record, ops $m"
			"$orrery" record -q -o "$out/run-$m-$r" --skip "$warmup" --steps "$steps" -- \
				"$python" "$gpt" --mode orrery --ops "$m" "${common[@]}" \
				--times "$out/orrery-$m-$r.jsonl"
		done
		say "round $r/$rounds: torch.profiler"
		"$python" "$gpt" --mode torch-profiler "${common[@]}" --times "$out/torch-$r.jsonl" \
			--trace "$out/torch-trace-$r.json"
	done
	"$python" "$root/bench/gpu/ops-check.py" --orrery "$orrery" "$out"
}

case ${1:-record} in
record) main ;;
compose) compose_main ;;
ops) ops_main ;;
*) die "usage: run.sh [record|compose|ops]" ;;
esac
