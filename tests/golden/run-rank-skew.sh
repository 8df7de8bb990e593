#!/bin/bash
# bench/rank-skew.py (suite golden), from the source root: the GPUs' spread on the shared
# Megatron TP=8 job, as docs/accuracy.md ("Stragglers") quotes it: 606 compute kernels on
# every rank, a coefficient of variation of 0.525 %, the expected slowest of 256 GPUs
# +0.736 % over the slowest of 8; and a directory of one rank refused.  77 without
# ../shared.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

job=${ORR_SHARED_TRACES:-../shared/traces}/kineto/astrasim-megatron-tp8
needs "$job/rank-0.json.gz"
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }

python3 bench/rank-skew.py "$job" >"$work/out" 2>"$work/err" || { show; fail "rank-skew.py failed"; }
expect_in out "ranks: 8, compute kernels each: [606]"
expect_in out "coefficient of variation 0.525 %, slowest over mean 1.103 %"
expect_in out "N   256: e(N) 2.827, +1.483 % (+0.736 % over N = 8)"
mkdir "$work/one"
ln -s "$(realpath "$job/rank-0.json.gz")" "$work/one/rank-0.json.gz"
python3 bench/rank-skew.py "$work/one" >"$work/out" 2>"$work/err" && { show; fail "one rank accepted"; }
expect_in err "holds fewer than two rank-R.json[.gz] traces"
echo ok >&2
