#!/bin/bash
# CLI tests of `orrery report` (suite golden), from the source root with $ORRERY set:
#
#   run-report.sh page      the sample's, the Megatron job's and a recommender's pages:
#                           self-contained, every section and chart there
#                           (check-report.py); with --diff, its section too; with
#                           --whatif, the Megatron job's layouts as orrery whatif ranks them
#   run-report.sh browser   headless Chromium (Debian's chromium) loads the sample's page
#                           without a console message and its screenshot is not blank;
#                           skipped (77) where Chromium is absent
#   run-report.sh whatif-names   --whatif with the trace named mt, --help, --jobs=1024
#                           and -o: the same layouts section each time
#   run-report.sh usage     usage errors and --help
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
tiny=traces/samples/tiny-2rank

case ${1:-} in
page)
	needs "$shared"
	for t in $tiny "$shared/kineto/astrasim-megatron-tp8" "$shared/kineto/hta-recsys-rank3.json.gz"; do
		run report -o "$work/page.html" "$t"
		expect_rc 0
		[[ -s $work/out ]] && { show; fail "output on stdout"; }
		"$orrery" replay --format=json "$t" >"$work/replay.json" || fail "replay $t"
		python3 "$golden/check-report.py" "$work/page.html" --replay "$work/replay.json" ||
			fail "$t: bad page"
	done
	run report -o "$work/page.html" --diff $tiny/rank-1.trace.json $tiny/rank-0.trace.json
	expect_rc 0
	python3 "$golden/check-report.py" "$work/page.html" || fail "--diff: bad page"
	grep -q '<h2 id="diff">' "$work/page.html" || fail "--diff: no diff section"
	"$orrery" diff --format=json $tiny/rank-0.trace.json $tiny/rank-1.trace.json >"$work/d.json"
	python3 - "$work/page.html" "$work/d.json" <<'PY' || fail "--diff: not orrery diff's numbers"
import json, re, sys
page, d = open(sys.argv[1]).read().split('<h2 id="diff">', 1)[1], json.load(open(sys.argv[2]))
row = re.search(r">step</td><td>([-0-9.]+)</td><td>([-0-9.]+)</td>", page)
assert row, "no step row"
assert abs(float(row.group(1)) - d["step"]["a_ns"] / 1e6) < 0.0006, row.group(1)
assert abs(float(row.group(2)) - d["step"]["b_ns"] / 1e6) < 0.0006, row.group(2)
PY
	run report -o - $tiny
	expect_rc 0
	head -c 15 "$work/out" | grep -q "<!DOCTYPE html>" || fail "-o - wrote no page on stdout"	# --whatif: the layouts section, its rows orrery whatif's best, the Pareto front
	megatron=$shared/kineto/astrasim-megatron-tp8
	run report -o "$work/page.html" --whatif 4-8 "$megatron"
	expect_rc 0
	python3 "$golden/check-report.py" "$work/page.html" || fail "--whatif: bad page"
	"$orrery" whatif --format=json --gpus 4-8 "$megatron" >"$work/w.json" || fail "whatif"
	python3 - "$work/page.html" "$work/w.json" <<'PY' || fail "--whatif: not orrery whatif's"
import json, re, sys
page, w = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
assert '<h2 id="whatif">' in page, "no whatif section"
sec = page.split('<h2 id="whatif">', 1)[1]
ranked, front = sec.split("Pareto front", 1)
rows = re.findall(r"<tr><td>(\*? ?)([0-9]+)</td><td class=\"name\">[^<]*</td><td>([0-9.]+)</td>", ranked)
want = w["ranked"][:10]
assert [int(r[1]) for r in rows[:10]] == [r["place"] for r in want], rows
for r, x in zip(rows, want):
    assert abs(float(r[2]) - x["iteration_ns"] / 1e6) < 0.0006, (r, x["iteration_ns"])
    assert (r[0] == "* ") == x["is_recorded"], r
# a layout of the front is labelled by its place among the best, else by its GPUs
fr = re.findall(r"<tr><td>(?:\* )?([^<]*)</td>", front)
place = {x["index"]: str(x["place"]) for x in w["ranked"]}
gpus = {x["index"]: "%d GPUs" % x["gpus"] for x in w["results"]}
assert fr == [place.get(i, gpus[i]) for i in w["pareto"]], (fr, w["pareto"])
assert sec.count("<rect") >= len(rows) + len(fr), "no bars"
PY
	;;
whatif-names)
	# --whatif gives the trace to whatif after "--": a trace named like an option is a
	# trace, and the page has its layouts as for any other name
	needs "$shared/kineto/astrasim-megatron-tp8"
	for name in mt --help --jobs=1024 -o; do
		ln -s "$(realpath "$shared/kineto/astrasim-megatron-tp8")" "$work/$name" || fail "ln $name"
		echo "+ (cd \$work && timeout 120 orrery report -o page.html --whatif 8 -- $name)" >&2
		(cd "$work" && timeout 120 "$orrery" report -o page.html --whatif 8 -- "$name") \
			>"$work/out" 2>"$work/err"
		rc=$?
		expect_rc 0
		[[ -s $work/out ]] && { show; fail "$name: output on stdout"; }
		grep -q '<h2 id="whatif">' "$work/page.html" || { show; fail "$name: no layouts section"; }
		rm -f "$work/page.html"
	done
	# ... as whatif's own parser reads it ("--" passed on to the estimate options)
	(cd "$work" && timeout 120 "$orrery" whatif --gpus 8 --no-progress --top 1 -- --help) \
		>"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 0
	expect_in out "--help, rank 0: recorded tp 8"
	;;
browser)
	browser=$(command -v chromium || command -v chromium-browser || true)
	[[ -n $browser ]] || { echo "skipped: no chromium" >&2; exit 77; }
	run report -o "$work/page.html" $tiny
	expect_rc 0
	# Chromium writes the page's console messages to stderr with --enable-logging.
	HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --enable-logging=stderr --v=0 --window-size=1000,1400 \
		--screenshot="$work/shot.png" "file://$work/page.html" 2>"$work/browser.err" ||
		{ cat "$work/browser.err" >&2; fail "chromium failed"; }
	if grep -E "CONSOLE|Uncaught" "$work/browser.err" >&2; then
		fail "console messages while loading the page"
	fi
	python3 "$golden/check-report.py" "$work/page.html" --png "$work/shot.png" ||
		fail "the screenshot is blank"
	;;
usage)
	run report --help
	expect_rc 0
	expect_in out "usage: orrery report"
	run report $tiny
	expect_rc 2
	expect_in err "no output given"
	run report -o "$work/x.html.gz" $tiny
	expect_rc 2
	run report -o "$work/x.html" --top 0 $tiny
	expect_rc 2
	run report -o "$work/x.html" --whatif 8 - <$tiny/rank-0.trace.json
	expect_rc 2
	expect_in err "--whatif"
	run report -o "$work/x.html" --whatif 0 $tiny
	expect_rc 2
	# a trace that holds no transformer has no layouts to sweep
	run report -o "$work/x.html" --whatif 8 $tiny
	expect_rc 1
	;;
*)
	echo "usage: $0 page|browser|usage" >&2
	exit 2
	;;
esac
exit 0
