#!/bin/bash
# CLI test of `orrery report`'s chart axes (suite golden), from the source root with
# $ORRERY set: a one-rank trace with one counter series whose value is each of the
# hostile maxima below (subnormal, the largest doubles, negative, 0) gives a page in
# bounded time and size, with a bounded number of ticks and no non-finite coordinate.
# Before the fix, a maximum in [2e-323, 4e-323) made a tick of 0 and the page endless
# (issue 31, N2); each run is under `timeout` so that a regression fails, not hangs.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

# trace VALUE: a Kineto trace of one step, one kernel and one counter of VALUE
trace() {
	local ev='{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1000,"dur":100000}'
	ev+=',{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1010,"dur":500,"args":{"External id":1}}'
	ev+=',{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1011,"dur":10,"args":{"correlation":1,"External id":1}}'
	ev+=',{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1030,"dur":200,"args":{"correlation":1,"stream":7,"device":0,"External id":1}}'
	for i in 0 1 2 3 4; do
		ev+=',{"ph":"C","name":"ctr","pid":1,"tid":1,"ts":'$((1000 + i * 20000))',"args":{"series":'$1'}}'
	done
	echo '{"traceEvents":['"$ev"']}'
}

for v in 2e-323 3.5e-323 4.9e-324 1e-310 1e-300 1e300 1e308 1.7976931348623157e308 \
	-1.7976931348623157e308 -1 0 1 0.001; do
	trace "$v" >"$work/c.json"
	echo "+ orrery report -o page.html c.json (counter $v)" >&2
	timeout -s KILL 20 "$orrery" report -o "$work/page.html" "$work/c.json" \
		>"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 0
	size=$(stat -c %s "$work/page.html")
	((size < 4000000)) || fail "counter $v: a page of $size bytes"
	python3 - "$work/page.html" "$v" <<'PY' || fail "counter $v: bad chart"
import re, sys
page, v = open(sys.argv[1]).read(), sys.argv[2]
sec = page.split('<h2 id="counters">', 1)[1].split("<h2", 1)[0]
svg = sec.split("<svg", 1)[1].split("</svg>", 1)[0]
assert svg.count("<line") <= 24, "%d y ticks" % svg.count("<line")
assert svg.count("<text") <= 48, "%d ticks" % svg.count("<text")
for bad in ("nan", "inf"):
    assert bad not in re.sub(r"<title>.*?</title>", "", svg).lower(), bad
# a drawable maximum gets its axis and its line; a tiny one is drawn as 0 (no line)
big = float(v) >= 1e-290
assert ("<polyline" in svg) == big, "polyline %s" % ("missing" if big else "drawn")
PY
done
for f in "$work"/.page.html.tmp.*; do
	[[ -e $f ]] && fail "a temporary left behind: $f"
done
exit 0
