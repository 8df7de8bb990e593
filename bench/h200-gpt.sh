#!/bin/bash
# Host-bound steps (issue 33, item 2): each neighbour of the plain PyTorch GPT of
# ../shared/whatif/h200-gpt predicted from base.json.gz alone with `orrery estimate`
# (the traced host timeline kept, its GPU work re-timed, the layers stretched, and
# the profiler's host time taken out), against the same configuration run without
# any profiler (NAME.plain.jsonl, the median of its measured steps) and, as traced
# (the profiler's host time kept), against the neighbour's own trace (the median of
# its ProfilerSteps).  Then the base and the same neighbours described by options
# (bench/gpu/gpt.py's model), timed by the costs `orrery fit` writes from base.json.gz,
# against the plain runs.  docs/accuracy.md records its output.
#
#   bench/h200-gpt.sh [RUNS_DIR]
#
# Prints Markdown tables and the mean and largest error of each kind; with MAX_MEAN
# and MAX_ABS (percent) set, exits 1 when the errors of the estimates from the trace
# against the plain runs exceed them, and with MAX_OPTIONS_MEAN when the mean error of
# those described by options does (tests/golden/run-h200-gpt.sh).
#
# Environment:
#   BUILD_DIR   the meson build directory (default build)
#   ORRERY      the orrery binary (default BUILD_DIR/cli/orrery, built first)
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
runs=${1:-../shared/whatif/h200-gpt}

die() {
	echo "bench/h200-gpt.sh: error: $*" >&2
	exit 1
}

[[ -f $runs/base.json.gz ]] || die "no '$runs/base.json.gz'"
if [[ -z ${ORRERY:-} ]]; then
	[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"
	meson compile -C "$build_dir" orrery >&2 || die "building orrery in '$build_dir' failed"
	ORRERY=$build_dir/cli/orrery
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each neighbour: its name and the options that make base it.  bench/gpu/gpt.py sets
# the FFN to 4 x hidden.
neighbours=(
	"layers24 --layers 24"
	"hidden2048 --hidden 2048 --ffn 8192"
	"batch16 --micro-batch 16"
)
for n in "${neighbours[@]}"; do
	read -r name opts <<<"$n"
	[[ -f $runs/$name.plain.jsonl && -f $runs/$name.json.gz ]] || die "no '$runs/$name.*'"
	# shellcheck disable=SC2086 # the options are words
	"$ORRERY" estimate --format=json $opts "$runs/base.json.gz" >"$work/$name.json" ||
		die "orrery estimate $opts failed"
done

# The same runs described by options (the base's model, bench/gpu/gpt.py's), timed by
# the costs `orrery fit` writes from base.json.gz: what a user gets who sweeps a model
# rather than a trace.  The base itself is the first row.
"$ORRERY" fit -o "$work/costs.json" "$runs/base.json.gz" >/dev/null || die "orrery fit failed"
described=(--gpu h200-sxm --costs "$work/costs.json" --layers 12 --hidden 1024 --heads 16
	--ffn 4096 --vocab 50304 --seq 1024 --micro-batch 8 --global-batch 8 --attention flash)
# Each run and the options that make the base it (one micro-batch a step).
described_runs=(
	"base"
	"layers24 --layers 24"
	"hidden2048 --hidden 2048 --ffn 8192"
	"batch16 --micro-batch 16 --global-batch 16"
)
for n in "${described_runs[@]}"; do
	read -r name opts <<<"$n"
	echo "$n" >>"$work/described.txt"
	# shellcheck disable=SC2086 # the options are words
	"$ORRERY" estimate --format=json "${described[@]}" $opts >"$work/$name.options.json" ||
		die "orrery estimate ${described[*]} $opts failed"
done

python3 - "$runs" "$work" "${neighbours[@]}" <<'PY'
import gzip, json, os, statistics, sys

runs, work, neighbours = sys.argv[1], sys.argv[2], sys.argv[3:]


def plain_ms(name):
    with open(os.path.join(runs, name + ".plain.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return statistics.median(r["ms"] for r in rows if r.get("measured"))


def traced_ms(name):
    with gzip.open(os.path.join(runs, name + ".json.gz"), "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = [e["dur"] for e in events
             if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")]
    return statistics.median(steps) / 1e3


print("| neighbour | options | plain ms | estimated ms | error | traced ms | as traced ms | error | method |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
errs, traced_errs = [], []
for n in neighbours:
    name, opts = n.split(" ", 1)
    e = json.load(open(os.path.join(work, name + ".json")))
    p, t = plain_ms(name), traced_ms(name)
    est = e["iteration_ns"] / 1e6
    tr = e["traced_ns"] / 1e6 if e.get("traced_ns") is not None else float("nan")
    err, terr = 100 * (est / p - 1), 100 * (tr / t - 1)
    errs.append(abs(err))
    traced_errs.append(abs(terr))
    print(f"| {name} | `{opts}` | {p:.1f} | {est:.1f} | {err:+.1f} % | {t:.1f} | {tr:.1f} | {terr:+.1f} % | {e['method']} |")
mean, worst = statistics.mean(errs), max(errs)
print()
print(f"against the plain runs: mean {mean:.1f} %, max {worst:.1f} %")
print(f"as traced, against the neighbours' traces: mean {statistics.mean(traced_errs):.1f} %, "
      f"max {max(traced_errs):.1f} %")

print()
print("described by options, timed by the costs `orrery fit` writes from base.json.gz:")
print()
print("| run | options | plain ms | estimated ms | error |")
print("|---|---|---:|---:|---:|")
opt_errs = []
for n in open(os.path.join(work, "described.txt")).read().splitlines():
    name, _, opts = n.partition(" ")
    e = json.load(open(os.path.join(work, name + ".options.json")))
    p, est = plain_ms(name), e["iteration_ns"] / 1e6
    err = 100 * (est / p - 1)
    opt_errs.append(abs(err))
    shown = f"`{opts}`" if opts else "-"
    print(f"| {name} | {shown} | {p:.1f} | {est:.1f} | {err:+.1f} % |")
opt_mean = statistics.mean(opt_errs)
print()
print(f"described by options, against the plain runs: mean {opt_mean:.1f} %, max {max(opt_errs):.1f} %")
lim_opt = os.environ.get("MAX_OPTIONS_MEAN")
if lim_opt and opt_mean > float(lim_opt):
    sys.exit(f"bench/h200-gpt.sh: described by options, mean error {opt_mean:.1f} % above {lim_opt} %")
lim_mean, lim_max = os.environ.get("MAX_MEAN"), os.environ.get("MAX_ABS")
if lim_mean and mean > float(lim_mean):
    sys.exit(f"bench/h200-gpt.sh: mean error {mean:.1f} % above {lim_mean} %")
if lim_max and worst > float(lim_max):
    sys.exit(f"bench/h200-gpt.sh: largest error {worst:.1f} % above {lim_max} %")
PY
