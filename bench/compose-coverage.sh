#!/bin/bash
# How much of each shared trace's step `orrery compose` re-creates (docs/accuracy.md):
#
#   bench/compose-coverage.sh [ORRERY] [SHARED_TRACES]
#
# Composes a benchmark of every trace in SHARED_TRACES (../shared/traces: every folder
# but et/ and chakra/, and the Kineto traces that have an execution trace there, with
# it) and prints one Markdown row each: ranks, operators, collectives, stand-ins, and the
# shares of the step's GPU time re-created by operators (compose's coverage), by
# collectives (and the part of those spent waiting for their peers), and by stand-ins.
set -euo pipefail

orrery=${1:-build/cli/orrery}
shared=${2:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

row() { # row LABEL ARGS...
	local label=$1
	shift
	rm -rf "$work/b"
	"$orrery" compose --format=json -o "$work/b" "$@" >"$work/r.json"
	python3 - "$label" "$work/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
ranks = r["ranks"]
gpu = sum(x["gpu_ns"] for x in ranks)
pct = lambda k: "%.1f %%" % (100.0 * sum(x[k] for x in ranks) / gpu) if gpu else "-"
print("| %s | %d | %d | %d | %d | %.3f | %s | %s | %s | %s |" % (
    sys.argv[1], len(ranks), sum(x["ops"] for x in ranks), sum(x["comms"] for x in ranks),
    sum(x["fills"] for x in ranks), gpu / 1e6, pct("op_ns"), pct("comm_ns"),
    pct("comm_wait_ns"), pct("fill_ns")))
PY
}

echo "| trace | ranks | operators | collectives | stand-ins | GPU ms | by operators | by collectives | of which waiting | stand-ins |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for f in "$shared"/*/*; do
	case $f in */et/* | */chakra/*) continue ;; esac
	row "$(basename "$(dirname "$f")")/$(basename "$f")" "$f"
done
row "kineto/param-linear.json.gz + et/param-linear-et.json.gz" \
	--et "$shared/et/param-linear-et.json.gz" "$shared/kineto/param-linear.json.gz"
row "kineto/hta-microbench-simple-add-et-pair.json.gz + et/hta-simple-add-et.json.gz" \
	--et "$shared/et/hta-simple-add-et.json.gz" "$shared/kineto/hta-microbench-simple-add-et-pair.json.gz"
row "kineto/astrasim-megatron-tp8 + et/astrasim-megatron-tp8" \
	--et "$shared/et/astrasim-megatron-tp8" "$shared/kineto/astrasim-megatron-tp8"
