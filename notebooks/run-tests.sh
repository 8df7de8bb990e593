#!/bin/bash
# The notebooks as CI runs them (suite notebooks), from the source root with $ORRERY set:
# every notebook on the project's sample trace, then on shared traces (the Megatron TP=8
# job, the two pyper ranks for the diff, a layout sweep of the Megatron job; a one-rank
# trace without collectives), with
# nbclient (notebooks/run.py); and run.py
# itself fails a notebook whose cell fails or that was committed with outputs.
# Skipped (77) where no Python here has nbclient, pandas and matplotlib.
set -uo pipefail

py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import nbclient, nbformat, pandas, matplotlib, ipykernel' 2>/dev/null; then
		py=$p
		break
	fi
done
[[ -n $py ]] || { echo "skipped: no nbclient, pandas, matplotlib and ipykernel" >&2; exit 77; }
shared=${ORR_SHARED_TRACES:-../shared/traces}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

"$py" notebooks/run.py || fail "a notebook failed on the sample trace"
[[ -d $shared ]] || {
	echo "skipped: the sample passed; $shared does not exist" >&2
	exit 77
}
ORR_TRACE=$shared/kineto/astrasim-megatron-tp8 \
	ORR_TRACE_A=$shared/kineto/hta-pyper-sampled-rank0.json.gz \
	ORR_TRACE_B=$shared/kineto/hta-pyper-sampled-rank1.json.gz \
	ORR_WHATIF_ARGS="$shared/kineto/astrasim-megatron-tp8 --gpus 4-8" \
	"$py" notebooks/run.py || fail "a notebook failed on the shared traces"
# one rank, no collectives, no record_shapes
ORR_TRACE=$shared/kineto/hta-microbench-alexnet.json.gz "$py" notebooks/run.py ||
	fail "a notebook failed on a one-rank trace without collectives"

# run.py's own checks: a failing cell, and outputs committed
"$py" - "$work" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb.cells = [nbformat.v4.new_code_cell("raise SystemExit('this cell fails')")]
nbformat.write(nb, sys.argv[1] + "/fails.ipynb")
nb.cells = [nbformat.v4.new_code_cell("1")]
nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1)]
nb.cells[0].execution_count = 1
nbformat.write(nb, sys.argv[1] + "/outputs.ipynb")
PY
for nb in fails outputs; do
	if "$py" notebooks/run.py "$work/$nb.ipynb" 2>"$work/err"; then
		fail "run.py passed $nb.ipynb"
	fi
	grep -q FAILED "$work/err" || fail "run.py did not say why $nb.ipynb fails"
done
exit 0
