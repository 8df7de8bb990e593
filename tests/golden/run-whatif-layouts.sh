#!/bin/bash
# bench/whatif-accuracy.sh reports the absolute error of the rows on more than one node
# by source, GPU count and layout (issue 35: "report the bias per source and per
# layout"), suite golden, from the source root with $ORRERY set: the harness on the
# first 45 data rows of each file (every row of vtrain-a100-multi-node-dev.csv) with
# --launch-us 70 prints a row of its layout table for each of the multi-node file's
# seven (GPU count, layout) groups, and each row's count, mean, max and bias are those
# of the rows it names in the harness's own --out file.  77 without ../shared.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

whatif=${ORR_SHARED_WHATIF:-../shared/whatif}
trace=${ORR_SHARED_TRACES:-../shared/traces}/kineto/astrasim-megatron-tp8
needs "$whatif/vtrain-a100-multi-node-dev.csv" "$whatif/vtrain-a100-single-node.csv" \
	"$whatif/published-dev.csv" "$whatif/vtrain-a100-allreduce" "$trace"

BUILD_DIR=$(dirname "$(dirname "$orrery")") WHATIF_DIR=$whatif COSTS_TRACE=$trace \
	bash bench/whatif-accuracy.sh --limit 45 --launch-us 70 --out "$work/rows.tsv" \
	>"$work/report.md" 2>"$work/err" || {
	cat "$work/err" >&2
	fail "bench/whatif-accuracy.sh failed"
}
sed -n '/^## Absolute error by layout/,/^## /p' "$work/report.md" |
	awk -F ' [|] ' '/^[|] vtrain-a100-multi-node-dev.csv [|]/ {
		sub(/^[|] /, ""); gsub(/ %/, ""); sub(/ [|]$/, ""); print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7
	}' >"$work/table"
[[ $(wc -l <"$work/table") == 7 ]] ||
	fail "$(wc -l <"$work/table") layout rows of vtrain-a100-multi-node-dev.csv, not 7"
# The same groups computed here from the rows' own errors (field 29).
awk -F '\t' '$1 == "vtrain-a100-multi-node-dev.csv" && $27 == "-" && $29 != "-" {
	name = $4 > 8 ? "TP > 8 across nodes" : $5 > 1 ? "PP > 1, TP <= 8" : \
		$4 > 1 ? "TP 2-8 inside a node, PP 1" : "TP 1, PP 1 (DP alone)"
	k = $3 "\t" name; e = $29 + 0; a = e < 0 ? -e : e
	n[k]++; s[k] += a; b[k] += e; if (a > m[k]) m[k] = a
}
END { for (k in n) printf "%s\t%d\t%.2f\t%.2f\t%+.2f\n", k, n[k], 100 * s[k] / n[k], 100 * m[k], 100 * b[k] / n[k] }' \
	"$work/rows.tsv" | sort >"$work/expected"
[[ $(awk -F '\t' '{ r += $3 } END { print r }' "$work/expected") == 41 ]] ||
	fail "not the 41 rows of vtrain-a100-multi-node-dev.csv in the --out file"
sort "$work/table" >"$work/got"
diff "$work/expected" "$work/got" >&2 || fail "the layout table is not the rows' errors (diff above)"
echo "layout rows: $(tr '\t' ' ' <"$work/got" | paste -sd ';')" >&2
