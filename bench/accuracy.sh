#!/bin/bash
# Replay accuracy on the real traces (DESIGN.md goal: mean <= 1 %, max <= 3 % per
# rank-step).  docs/accuracy.md records its output.
#
#   bench/accuracy.sh [TRACES_DIR]
#
# Runs `orrery replay --format=json` on every step-annotated trace in TRACES_DIR
# (default ../shared/traces/kineto) and on the two pyper ranks as one 2-rank job, and
# prints a Markdown table: rank-steps, mean and max error, job steps and their max
# error, and the graph's inferred edges per kind (inferred/all).  Exits 1 when a trace misses the goal.
#
# Environment:
#   BUILD_DIR   the meson build directory (default build)
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
traces=${1:-../shared/traces/kineto}
orrery=$build_dir/cli/orrery

die() {
	echo "bench/accuracy.sh: error: $*" >&2
	exit 1
}

[[ -d $traces ]] || die "no traces directory '$traces'"
[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"
meson compile -C "$build_dir" orrery >&2 || die "building orrery in '$build_dir' failed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/pyper"
ln -s "$(realpath "$traces/hta-pyper-sampled-rank0.json.gz")" "$work/pyper/rank0.json.gz"
ln -s "$(realpath "$traces/hta-pyper-sampled-rank1.json.gz")" "$work/pyper/rank1.json.gz"

inputs=(
	"$traces/hta-ddp-dense-rank1.json.gz"
	"$traces/hta-ddp-nsres-rank0.json.gz"
	"$traces/hta-ddp-resnet-rank0.json.gz"
	"$traces/hta-microbench-event-sync.json.gz"
	"$traces/hta-pyper-sampled-rank0.json.gz"
	"$traces/hta-pyper-sampled-rank1.json.gz"
	"$traces/hta-recsys-rank3.json.gz"
	"$work/pyper"
)

for input in "${inputs[@]}"; do
	name=$(basename "$input")
	[[ $input == "$work/pyper" ]] && name="hta-pyper-sampled-rank{0,1} (one job)"
	"$orrery" replay --format=json "$input" >"$work/out.json" ||
		die "orrery replay failed on '$input'"
	python3 - "$name" "$work/out.json" <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
steps = [s for r in d["ranks"] for s in r["steps"]]
errs = [s["error"] for s in steps]
job = d.get("job") or []
jerr = max((s["error"] for s in job), default=None) if len(d["ranks"]) > 1 else None
edges = d.get("graph", {}).get("edges", {})
inf = ", ".join(f"{k} {e['inferred']}/{e['count']}" for k, e in sorted(edges.items()) if e["inferred"])
print(f"| {name} | {len(errs)} | {100 * sum(errs) / len(errs):.3f} % | {100 * max(errs):.3f} % | "
      f"{'%d, max %.3f %%' % (len(job), 100 * jerr) if jerr is not None else '-'} | {inf or '-'} |")
ok = sum(errs) / len(errs) <= 0.01 and max(errs) <= 0.03
open(path + ".ok", "w").write("1" if ok else "0")
EOF
	[[ $(cat "$work/out.json.ok") == 1 ]] || failed=1
done >"$work/rows"
echo "| trace | rank-steps | mean error | max error | job steps | inferred edges |"
echo "|---|---|---|---|---|---|"
cat "$work/rows"
exit "${failed:-0}"
