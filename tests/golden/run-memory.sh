#!/bin/bash
# Memory and counters in orrery summary and orrery report (suite golden), from the source
# root:
#
#   - HTA's DDP trace (26,770 "[memory]" events of its CUDA device): the summary's
#     samples and peaks are those of the file's events, counted here with Python, and
#     its timeline's bins never exceed the peaks; no model (not a transformer)
#   - the Megatron TP=8 job with memory and counter events added to rank 0
#     (add-memory.py): rank 0's peak is what was added, the CPU's event is not taken, the
#     model of the recorded configuration is orrery estimate's memory of it (its reserve
#     left out), each counter series has the samples, min, mean and max added
#   - a Chrome conversion of the eight ranks into one file keeps every sample, on its rank
#   - the report's memory section draws a line per rank
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
ddp=$shared/kineto/hta-ddp-dense-rank1.json.gz
megatron=$shared/kineto/astrasim-megatron-tp8
needs "$shared"

run summary --format=json "$ddp"
expect_rc 0
cp "$work/out" "$work/ddp.json"
python3 - "$work/ddp.json" "$ddp" <<'PY' || fail "DDP trace: memory"
import gzip, json, sys
s, t = json.load(open(sys.argv[1])), json.load(gzip.open(sys.argv[2]))
mem = [e["args"] for e in t["traceEvents"]
       if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 1]
m = s["memory"]
assert len(m) == 1, m
m = m[0]
assert m["samples"] == len(mem), (m["samples"], len(mem))
assert m["peak_allocated_bytes"] == max(a["Total Allocated"] for a in mem)
assert m["peak_reserved_bytes"] == max(a["Total Reserved"] for a in mem)
tl = m["timeline"]
assert len(tl["allocated_bytes"]) == len(tl["reserved_bytes"]) == 200
assert max(tl["allocated_bytes"]) == m["peak_allocated_bytes"]
assert max(tl["reserved_bytes"]) == m["peak_reserved_bytes"]
assert m["model_bytes"] is None
PY
run summary "$ddp"
expect_rc 0
expect_in out "memory of the CUDA caching allocator"

mkdir -p "$work/mt"
for f in "$megatron"/rank-*.json.gz; do
	ln -s "$(realpath "$f")" "$work/mt/$(basename "$f")"
done
rm "$work/mt/rank-0.json.gz"
python3 "$golden/add-memory.py" "$megatron/rank-0.json.gz" "$work/mt/rank-0.json" 30000000000 ||
	fail "add-memory.py"
run summary --format=json "$work/mt"
expect_rc 0
cp "$work/out" "$work/mt.json"
run estimate --format=json "$work/mt"
expect_rc 0
cp "$work/out" "$work/est.json"
python3 - "$work/mt.json" "$work/est.json" <<'PY' || fail "Megatron with memory: summary"
import json, sys
s, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
m = s["memory"]
assert [x["rank"] for x in m] == [0], m
m = m[0]
assert m["samples"] == 101, m["samples"]
assert m["peak_allocated_bytes"] == 30000000000, m["peak_allocated_bytes"]
assert m["peak_reserved_bytes"] == 37500000000, m["peak_reserved_bytes"]
want = e["memory_bytes_per_gpu"] - e["memory_reserve_bytes"]
assert abs(m["model_bytes"] - want) <= 1, (m["model_bytes"], want)
assert abs(m["model_state_bytes"] + m["model_activation_bytes"] - m["model_bytes"]) <= 1
PY
python3 - "$work/mt.json" <<'PY' || fail "Megatron with counters: summary"
import json, sys
c = {(x["name"], x["series"]): x for x in json.load(open(sys.argv[1]))["counters"]}
assert set(c) == {("GPU metrics", "SM active"), ("GPU metrics", "DRAM bandwidth"),
                  ("clock", "MHz")}, sorted(c)  # the string arg is no series
sm, dram = c[("GPU metrics", "SM active")], c[("GPU metrics", "DRAM bandwidth")]
assert all(x["samples"] == 101 and x["rank"] == 0 for x in c.values())
assert (sm["min"], sm["max"]) == (0, 6) and abs(sm["mean"] - sum(i % 7 for i in range(101)) / 101) < 1e-12
assert (dram["min"], dram["max"], dram["mean"]) == (0, 1000, 500)
assert c[("clock", "MHz")]["timeline"]["values"] == [1410] * 200
assert max(dram["timeline"]["values"]) == 1000
PY
run summary "$work/mt"
expect_rc 0
expect_in out "the peak allocated"
expect_in out "GPU metrics: DRAM bandwidth"

# the eight ranks in one Chrome file, read back (split by rank): rank 0 keeps its samples
run convert "$work/mt" -o "$work/back.json"
expect_rc 0
run summary --format=json "$work/back.json"
expect_rc 0
python3 -c 'import json,sys
a, b = (json.load(open(p))["memory"][0] for p in sys.argv[1:])
for k in ("samples", "peak_allocated_bytes", "peak_reserved_bytes", "timeline"):
    assert a[k] == b[k], k' "$work/mt.json" "$work/out" || fail "the Chrome conversion lost memory"
python3 -c 'import json,sys
a, b = (json.load(open(p))["counters"] for p in sys.argv[1:])
assert a == b, (a[:1], b[:1])' "$work/mt.json" "$work/out" || fail "the Chrome conversion lost counters"

run report -o "$work/page.html" "$work/mt"
expect_rc 0
python3 "$golden/check-report.py" "$work/page.html" || fail "report: bad page"
grep -q '<h2 id="memory">' "$work/page.html" || fail "report: no memory section"
grep -q '<h2 id="counters">' "$work/page.html" || fail "report: no counters section"
[[ $(grep -c "<polyline" "$work/page.html") -ge 5 ]] || fail "report: no memory or counter lines"
exit 0
