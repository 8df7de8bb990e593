#!/bin/bash
# A trace whose clocks contradict themselves cannot be replayed; the error names one cycle
# of waits, wait by wait, and the wait the trace contradicts (graph/stuck.c).  The H200
# GPT's base trace with its autograd thread moved 100 ms later (mk-thread-late.py): the
# kernels that thread launched start before their launches.  In suite `golden`, from the
# source root with $ORRERY set.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

base=../shared/whatif/h200-gpt/base.json.gz
needs "$base"
ag=$(python3 "$golden/mk-thread-late.py" "$base" "$work/late.json") ||
	fail "mk-thread-late.py failed"

for cmd in replay critical-path; do
	run "$cmd" "$work/late.json"
	expect_rc 1
	expect_in err "dependency cycle: "
	expect_in err "tasks can never run: "
	# the contradiction: a kernel that starts before its launch on the moved thread
	expect_in err "ms before 'cudaLaunchKernel' on rank 0 thread $ag ("
	expect_in err "(D2 launch): no run records that, so two clocks disagree"
	# the cycle, with igraph's count and each kind of wait it passes
	expect_in err "tasks wait for each other, as in this cycle: "
	expect_in err "which waits for the call that hands it its work (D6)"
	expect_in err "which waits for GPU work it synchronizes with (D5)"
	expect_in err "tasks before it on its thread, back to "
	# not the same task named again and again (before: six times 'cudaLaunchKernel' on
	# the autograd thread, "the first" of the tasks that never ran)
	[[ $(grep -o "'cudaLaunchKernel' on rank 0 thread $ag" "$work/err" | wc -l) -le 2 ]] || {
		show
		fail "the same launch named more than twice"
	}
	[[ $(wc -l <"$work/err") == 1 ]] || fail "$cmd: more than one line of error"
done
# estimate and whatif replay the trace first: the same error, naming the file
for cmd in estimate whatif; do
	args=()
	[[ $cmd == whatif ]] && args=(--gpus 1)
	run "$cmd" "$work/late.json" "${args[@]}"
	expect_rc 1
	expect_in err "cannot replay '$work/late.json': dependency cycle: "
	expect_in err "tasks wait for each other, as in this cycle: "
done
echo "ok: replay, critical-path, estimate and whatif name the cycle and the contradiction"
