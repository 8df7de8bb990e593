#!/bin/bash
# Replay accuracy on the real traces (DESIGN.md goal: mean <= 1 %, max <= 3 % per
# rank-step).  docs/accuracy.md records its output.
#
#   bench/accuracy.sh [TRACES_DIR]
#
# Walks TRACES_DIR (default ../shared/traces) as it is: every trace in every folder of
# traces (kineto/, kineto-old/, rocm/, nsys/ and any added later; not et/ or chakra/:
# a file is one trace, a directory one several-rank job), plus the two pyper ranks as one
# 2-rank job (any of these folders may be missing: `bench/accuracy.sh DIR` with only
# DIR/nsys/ replays a set of Nsight Systems exports), and runs
# `orrery replay --format=json` on each.  Prints two Markdown tables: per trace
# (rank-steps, mean and max error, job steps and their max error, the graph's inferred
# edges per kind, what was found by timing) and per rank-step (measured, predicted,
# error, the time the graph cannot explain and the trust signal).  A trace orrery
# cannot read yet is listed with the reason, not counted.  Exits 1 when a trace it
# reads misses the goal.
#
# Environment:
#   BUILD_DIR   the meson build directory (default build)
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
root=${1:-../shared/traces}
traces=$root/kineto
orrery=$build_dir/cli/orrery

die() {
	echo "bench/accuracy.sh: error: $*" >&2
	exit 1
}

[[ -d $root ]] || die "no traces directory '$root'"
[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"
meson compile -C "$build_dir" orrery >&2 || die "building orrery in '$build_dir' failed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/pyper"
if [[ -e $traces/hta-pyper-sampled-rank0.json.gz ]]; then
	ln -s "$(realpath "$traces/hta-pyper-sampled-rank0.json.gz")" "$work/pyper/rank0.json.gz"
	ln -s "$(realpath "$traces/hta-pyper-sampled-rank1.json.gz")" "$work/pyper/rank1.json.gz"
fi

inputs=()
# kineto/ first, then every other folder of traces (not et/: execution traces go with
# their profiler trace; not chakra/: Chakra files are written, not replayed).
folders=("$traces")
for dir in "$root"/*/; do
	dir=${dir%/}
	case ${dir##*/} in kineto | et | chakra) continue ;; esac
	folders+=("$dir")
done
for dir in "${folders[@]}"; do
	[[ -d $dir ]] || continue
	for input in "$dir"/*; do
		[[ -d $input || $input == *.json || $input == *.json.gz || $input == *.json.zst ||
			$input == *.sqlite || $input == *.sqlite.gz ]] &&
			inputs+=("$input")
	done
done
[[ -e $traces/hta-pyper-sampled-rank0.json.gz ]] && inputs+=("$work/pyper")

for input in "${inputs[@]}"; do
	name=$(basename "$input")
	[[ $input == "$work/pyper" ]] && name="hta-pyper-sampled-rank{0,1} (one job)"
	[[ -d $input && $input != "$work/pyper" ]] && name="$name/ (one job)"
	if ! "$orrery" replay --format=json "$input" >"$work/out.json" 2>"$work/err"; then
		echo "| $name | not read: $(sed 's/^orrery: error: //; s/|/\\|/g' "$work/err" | head -1) | | | | | |"
		continue
	fi
	python3 - "$name" "$work/out.json" "$work/steps" <<'EOF'
import json, sys
name, path, steps_path = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(path))
steps = [(r["rank"], s) for r in d["ranks"] for s in r["steps"]]
errs = [s["error"] for _, s in steps]
job = d.get("job") or []
jerr = max((s["error"] for s in job), default=None) if len(d["ranks"]) > 1 else None
g = d.get("graph", {})
edges = g.get("edges", {})
inf = ", ".join(f"{k} {e['inferred']}/{e['count']}" for k, e in sorted(edges.items()) if e["inferred"])
timed = f"{g.get('graph_nodes', 0)} / {g.get('timed_waits', 0)} / {g.get('delayed', {}).get('tasks', 0)}"
print(f"| {name} | {len(errs)} | {100 * sum(errs) / len(errs):.3f} % | {100 * max(errs):.3f} % | "
      f"{'%d, max %.3f %%' % (len(job), 100 * jerr) if jerr is not None else '-'} | {inf or '-'} | {timed} |")
with open(steps_path, "a") as f:
    for rank, s in steps:
        u = s.get("unexplained_ns", {})
        f.write(f"| {name} | {rank} | {s['step']} | {s['measured_ns'] / 1e6:.3f} | "
                f"{s['predicted_ns'] / 1e6:.3f} | {100 * s['error']:.3f} % | "
                f"{u.get('total', 0) / 1e6:.3f} ({100 * s.get('unexplained_share', 0):.1f} %) | "
                f"{s.get('trust', '-')} |\n")
ok = sum(errs) / len(errs) <= 0.01 and max(errs) <= 0.03
open(path + ".ok", "w").write("1" if ok else "0")
EOF
	[[ $(cat "$work/out.json.ok") == 1 ]] || failed=1
done >"$work/rows"
echo "| trace | rank-steps | mean error | max error | job steps | inferred edges (inferred/all) | by timing: graph nodes / stream waits / delays kept |"
echo "|---|---|---|---|---|---|---|"
cat "$work/rows"
echo
echo "| trace | rank | step | measured ms | predicted ms | error | unexplained ms (share) | trust |"
echo "|---|---|---|---|---|---|---|---|"
cat "$work/steps"
exit "${failed:-0}"
