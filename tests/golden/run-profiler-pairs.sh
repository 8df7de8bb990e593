#!/bin/bash
# bench/gpu/profiler-pairs.py (suite golden), from the source root: the analysis of the
# GPU script that measures the profiler's cost per op, given the one pair measured so far
# laid out as the script writes it (../shared/whatif/h200-gpt's base: plain and
# torch.profiler with shapes).  It must find estimator/profiler-cost.c's 4.8 us per op,
# marked a lower bound (that plain run is within 15 % of its GPU's busy time), the
# observer's part beside the profiler (shapes-et - shapes, here a made-up run), and leave
# out a configuration without a plain run.  77 without ../shared.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

runs=${ORR_SHARED_WHATIF:-../shared/whatif}/h200-gpt
needs "$runs/base.json.gz" "$runs/base.plain.jsonl" "$runs/base.times.jsonl"
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }

mkdir -p "$work/pairs/base" "$work/pairs/noplain"
ln -s "$(realpath "$runs/base.plain.jsonl")" "$work/pairs/base/plain.jsonl"
ln -s "$(realpath "$runs/base.times.jsonl")" "$work/pairs/base/shapes.jsonl"
ln -s "$(realpath "$runs/base.json.gz")" "$work/pairs/base/shapes.json.gz"
ln -s "$(realpath "$runs/base.times.jsonl")" "$work/pairs/noplain/shapes.jsonl"
# an observer beside the profiler that took 5.219 ms more a step: 1,000 ns per op
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        r = json.loads(line)
        r["ms"] += 5.219
        print(json.dumps(r))' "$runs/base.times.jsonl" >"$work/pairs/base/shapes-et.jsonl"
python3 bench/gpu/profiler-pairs.py "$work/pairs" >"$work/out" 2>"$work/err" ||
	{ show; fail "profiler-pairs.py failed"; }
grep -q "noplain: no plain run or no trace, left out" "$work/err" ||
	{ show; fail "the configuration without a plain run is not said to be left out"; }
python3 - "$work/pairs/profiler-pairs.json" <<'PY' || { show; fail "wrong cost per op"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert list(r) == ["base"], r
s = r["base"]["modes"]["shapes"]
assert s["ops"] == 5219 and s["lower_bound"] and not r["base"]["plain_host_bound"], s
assert 4700 < s["op_ns"] < 4900, s["op_ns"]
assert abs(r["base"]["observer_beside_profiler_op_ns"] - 1000) < 1e-6, r["base"]
PY
grep -q '| base | 34.0 | 32.2 | shapes | 59.1 | 5219 | 983 | ≥ 48' "$work/out" ||
	{ show; fail "the table row"; }
grep -q '^base: the observer beside torch.profiler (shapes-et - shapes): 1000 ns per op$' "$work/out" ||
	{ show; fail "the observer's line"; }
