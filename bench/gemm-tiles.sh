#!/bin/bash
# The GEMM model of tiles and waves against the roofline x a measured efficiency
# (issue 35, item 2): every GEMM of every shared trace that records GEMM shapes on a
# GPU of the hardware table, and of the H200 GPT's traces, each distinct shape
# predicted by the model fitted without it (bench/bench-gemm).  docs/accuracy.md
# records its output.
#
#   bench/gemm-tiles.sh [TRACE...]
#
# Default traces: every file and job folder of ../shared/traces/{kineto,kineto-old,rocm}
# and ../shared/whatif/h200-gpt/*.json.gz (a trace without shapes or without a known
# GPU gives no line).  Prints a Markdown table per trace and model: shapes, mean, p90
# and max of |predicted/measured - 1|, the mean signed error; then the same over every
# shape of every trace, and the tiles model fitted on all of each trace's samples; then
# the kernels a synthesized step times by the kernel model's fallback (norms, softmax,
# element-wise, attention), each size left out, by max(floor, roofline x efficiency)
# and by floor + roofline x efficiency (bench-gemm --kernels); then the batched GEMMs
# bound by memory, each shape left out (bench-gemm --memory; docs/estimator.md).
#
# Environment:
#   BUILD_DIR   the meson build directory (default build)
set -euo pipefail

cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}

die() {
	echo "bench/gemm-tiles.sh: error: $*" >&2
	exit 1
}

[[ -f $build_dir/build.ninja ]] || die "'$build_dir' is not configured: run 'make build' first"
meson compile -C "$build_dir" bench-gemm >&2 || die "building bench-gemm in '$build_dir' failed"
bin=$build_dir/bench/bench-gemm

traces=("$@")
if ((${#traces[@]} == 0)); then
	for d in ../shared/traces/kineto ../shared/traces/kineto-old ../shared/traces/rocm; do
		[[ -d $d ]] || continue
		for t in "$d"/*; do traces+=("$t"); done
	done
	for t in ../shared/whatif/h200-gpt/*.json.gz; do [[ -e $t ]] && traces+=("$t"); done
fi
((${#traces[@]})) || die "no trace (is ../shared there?)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" "${traces[@]}" >"$work/lines" 2>"$work/fits" || die "bench-gemm failed: $(tail -1 "$work/fits")"
"$bin" --samples "${traces[@]}" >"$work/shapes" 2>/dev/null

echo "| trace | model | shapes | mean | p90 | max | bias |"
echo "|---|---|---|---|---|---|---|"
awk -F '\t' '{ t = $1; sub(/.*\//, "", t); printf "| %s | %s | %d | %.1f %% | %.1f %% | %.1f %% | %+.1f %% |\n", t, $2, $3, $4, $5, $6, $7 }' "$work/lines"
# every shape of every trace: fields 9 measured, 10 roofline, 11 tiles
for col in 10 11; do
	awk -F '\t' -v c="$col" '$c != "nan" && $c + 0 > 0 { e = $c / $9 - 1; print (e < 0 ? -e : e) "\t" e }' "$work/shapes" |
		sort -g | awk -F '\t' -v name="$([[ $col == 10 ]] && echo roofline || echo tiles)" '
		{ v[++n] = $1; s += $1; b += $2 }
		END {
			p = int(0.9 * n); if (p < 0.9 * n) p++
			printf "| **every trace** | %s | %d | %.1f %% | %.1f %% | %.1f %% | %+.1f %% |\n", name, n, 100 * s / n, 100 * v[p], 100 * v[n], 100 * b / n
		}'
done
echo
echo "Fitted on all of each trace's samples:"
echo
sed 's/^/- /' "$work/fits"
echo
echo "Kernels other than GEMMs, each size left out:"
echo
echo "| trace | class and model | sizes | mean | p90 | max | bias |"
echo "|---|---|---|---|---|---|---|"
"$bin" --kernels "${traces[@]}" 2>/dev/null |
	awk -F '\t' '{ t = $1; sub(/.*\//, "", t); printf "| %s | %s | %d | %.1f %% | %.1f %% | %.1f %% | %+.1f %% |\n", t, $2, $3, $4, $5, $6, $7 }'
echo
echo "Batched GEMMs bound by memory, each shape left out as a synthesized step asks it (no"
echo "family): by its tiles' bytes x the other such samples' efficiency (the model), by the"
echo "roofline x the math's median, by the roofline x the other such samples' median:"
echo
echo "| trace | math | B x M x N x K | measured | tiles' bytes | roofline x median | operands' bytes |"
echo "|---|---|---|---|---|---|---|"
"$bin" --memory "${traces[@]}" 2>/dev/null |
	awk -F '\t' '
	function e(p) { return sprintf("%+.1f %%", 100 * (p / $8 - 1)) }
	{ t = $1; sub(/.*\//, "", t); printf "| %s | %s | %s x %s x %s x %s | %.1f us | %s | %s | %s |\n", t, $2, $3, $4, $5, $6, $8 / 1e3, e($9), e($10), e($11) }'
