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
*)
	echo "usage: $0 pairs|same|scaled|usage" >&2
	exit 2
	;;
esac
exit 0
