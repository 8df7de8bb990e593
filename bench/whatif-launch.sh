#!/bin/bash
# The launch time `--costs` carries into estimates, scored: vTrain's held-out rows
# estimated with the costs fitted on the A100 trace and no --launch-us, so that the
# launch time is the one `orrery fit` calibrated (with the profiler's cost removed, and
# the ExecutionTraceObserver's where the trace's execution traces are given: COSTS_ET of
# bench/whatif-rows.sh, by default those beside it; docs/estimator.md, "The profiler's
# cost").
#
#   bench/whatif-launch.sh [--launch-us US] [--rows N]
#
#   --launch-us US  give every estimate this launch time instead (to compare)
#   --rows N        the first N data rows of vtrain-a100-single-node.csv (default 80), of
#                   which the odd ones (0-based: 1, 3, ...) are scored: bench/whatif-
#                   accuracy.sh's held-out split, 40 rows by default
#
# The rows are mapped and the costs fitted by bench/whatif-rows.sh, as
# bench/whatif-accuracy.sh does (vTrain's all-reduce tables included).  Prints the
# launch time the first row used and where it came from, then the rows, their mean and
# maximum |predicted/measured - 1|.
#
# Environment: BUILD_DIR (default build), WHATIF_DIR (../shared/whatif), COSTS_TRACE
# (../shared/traces/kineto/astrasim-megatron-tp8).
set -euo pipefail

cd "$(dirname "$0")/.."

die() {
	echo "bench/whatif-launch.sh: error: $*" >&2
	exit 1
}

build_dir=${BUILD_DIR:-build}
whatif=${WHATIF_DIR:-../shared/whatif}
costs_trace=${COSTS_TRACE:-../shared/traces/kineto/astrasim-megatron-tp8}
rows=80
launch=()
while (($#)); do
	case $1 in
	--launch-us)
		(($# >= 2)) || die "--launch-us needs a number of microseconds"
		launch=(--launch-us "$2")
		shift 2
		;;
	--rows)
		(($# >= 2)) && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--rows needs a positive number"
		rows=$2
		shift 2
		;;
	*) die "unknown argument '$1'" ;;
	esac
done
[[ -x $build_dir/cli/orrery ]] || die "no $build_dir/cli/orrery (build it first)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The copy takes the shared library it loads from ../lib (its run path) with it.
mkdir "$work/bin" "$work/lib"
cp "$build_dir/cli/orrery" "$work/bin/orrery"
for lib in "$build_dir"/lib/*.so*; do
	[[ ! -f $lib ]] || cp -L "$lib" "$work/lib/" || die "cannot copy $lib"
done
ln -s bin/orrery "$work/orrery"
bench/whatif-rows.sh "$work/orrery" "$whatif" "$costs_trace" "$rows" "$work" >/dev/null ||
	die "bench/whatif-rows.sh failed (above)"

# Lines 2, 4, ... of rows.tsv within the single-node file: its odd data rows.
awk -F '\t' '$1 == "vtrain-a100-single-node.csv" && NR % 2 == 0 { print NR }' \
	"$work/rows.tsv" >"$work/held-out"
[[ -s $work/held-out ]] || die "no held-out row"
export work
run_row() {
	local n=$1 args
	mapfile -t args <"$work/args/$n"
	"$work/orrery" estimate "${args[@]}" "${@:2}" --format=json >"$work/$n.json" 2>"$work/$n.err" ||
		echo "row $n: $(head -1 "$work/$n.err")" >&2
}
export -f run_row
xargs -P "$(nproc)" -I{} bash -c 'run_row "$@"' _ {} "${launch[@]}" <"$work/held-out"

python3 - "$work" "$costs_trace" "${launch[1]:-none}" <<'EOF'
import json, sys
work, trace, given = sys.argv[1:4]
rows = [l.split("\t") for l in open(work + "/rows.tsv").read().splitlines()]
errs, first = [], None
for n in map(int, open(work + "/held-out").read().split()):
    try:
        d = json.load(open("%s/%d.json" % (work, n)))
    except (OSError, ValueError):
        continue
    first = first or d
    errs.append(abs(d["iteration_ns"] / 1e6 / float(rows[n - 1][19]) - 1))
if not errs:
    sys.exit("bench/whatif-launch.sh: error: no row was estimated")
src = first["sources"]
print("launch time: %.1f us per kernel (%s)" % (src["launch_ns"] / 1e3, src["launch"]))
print("vTrain single-node held-out rows, costs fitted on %s, --launch-us %s: %d rows, "
      "mean %.2f %%, max %.2f %%" % (trace, given, len(errs), 100 * sum(errs) / len(errs),
                                    100 * max(errs)))
EOF
