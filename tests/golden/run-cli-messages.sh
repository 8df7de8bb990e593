#!/bin/bash
# What a user who mistypes is told (suite golden), from the source root with $ORRERY set:
#
#   run-cli-messages.sh critical-path-select  --steps that select no job step and --ranks
#                                             that name no rank are errors (exit 1, one
#                                             line), as in orrery replay and summary
#   run-cli-messages.sh fit-rank              fit and estimate --rank naming no rank of the
#                                             trace say which ranks it has
#   run-cli-messages.sh whatif-top            a bad --top (whatif, summary, critical-path)
#                                             or fit --rank says the range it takes
#   run-cli-messages.sh help-commands         orrery --help names every format convert
#                                             writes (convert --help's --to)
#   run-cli-messages.sh whatif-legend         whatif's ranked table says what each short
#                                             column name means (mb, mbs, do, 1st/last, limit)
#   run-cli-messages.sh synth-too-large       a step too large to synthesize is named by
#                                             its count and what to try, not by E2BIG's text
#   run-cli-messages.sh whatif-compressed     whatif -o refuses a compressed name, as every
#                                             other output does, and writes nothing
#   run-cli-messages.sh estimate-range        a size out of range says the range, also
#                                             past its top (where "1 or more" was no help)
#   run-cli-messages.sh info-steps            info --steps that select no step warn (the
#                                             counts are still listed, exit 0)
#   run-cli-messages.sh scale-rank            a cpu@RANK: or gpu@RANK: rule naming a rank
#                                             the trace does not hold says so and lists its
#                                             ranks; --strict makes it an error; diff
#                                             --scale without --predicted is refused
#   run-cli-messages.sh synth-limits          estimate's synthesized step is not held to the
#                                             limits on input files (ORR_MAX_*): it was
#                                             "cannot replay the synthesized step (a bug)"
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

tiny=traces/samples/tiny-2rank

# The last run failed with exactly one line on stderr, holding $1.
one_error() {
	expect_rc 1
	expect_in err "orrery: error: $1"
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
}

case ${1:-} in
critical-path-select)
	run critical-path --steps 99 "$tiny"
	one_error "--steps selects no job step of '$tiny' ('orrery info' lists them)"
	[[ -s $work/out ]] && { show; fail "a report of no step printed"; }
	run critical-path --ranks 9 "$tiny"
	one_error "no rank 9 in '$tiny'; its ranks are 0-1"
	run critical-path --ranks 5,7-9 --timeline "$work/t.json" "$tiny"
	one_error "no rank of 5,7-9 in '$tiny'; its ranks are 0-1"
	[[ -e $work/t.json ]] && fail "a timeline of no rank written"
	# A selection that holds something still reports it.
	run critical-path --steps 11 --ranks 1 "$tiny"
	expect_rc 0
	expect_in out "$tiny: critical path of 1 job step"
	;;
fit-rank)
	run fit --rank 5 "$tiny"
	one_error "no rank 5 in '$tiny'; its ranks are 0-1"
	run estimate --rank 7 "$tiny"
	one_error "no rank 7 in '$tiny'; its ranks are 0-1"
	;;
whatif-top)
	run whatif --gpu h100-sxm --layers 4 --hidden 1024 --heads 16 --seq 1024 \
		--global-batch 16 --gpus 8 --top -1
	expect_rc 2
	expect_in err "orrery: error: bad --top '-1' (a count, 0 to 2147483647; 0: every feasible one)"
	# Past the top of the range too, the message gives the range.
	for cmd in summary critical-path; do
		run "$cmd" --top 99999999999 "$tiny"
		expect_rc 2
		expect_in err "orrery: error: bad --top '99999999999' (a count, 0 to 2147483647)"
	done
	run fit --rank 99999999999 "$tiny"
	expect_rc 2
	expect_in err "orrery: error: bad --rank '99999999999' (a rank, 0 to 2147483647)"
	;;
help-commands)
	run convert --help
	expect_rc 0
	expect_in out "--to FORMAT        native, chrome or chakra"
	run --help
	expect_rc 0
	grep -E '^  convert ' "$work/out" >"$work/line" || { show; fail "no convert line"; }
	for f in native Chrome Chakra; do
		grep -qF "$f" "$work/line" || { show; fail "orrery --help's convert omits $f"; }
	done
	;;
whatif-legend)
	sweep=(whatif --gpu h100-sxm --layers 8 --hidden 1024 --heads 16 --seq 1024
		--global-batch 16 --gpus 8 --tp 1 --recompute none)
	run "${sweep[@]}"
	expect_rc 0
	legend=$(grep '^ranked (' "$work/out") || { show; fail "no legend"; }
	for t in "mb: sequences per micro-batch" "mbs: micro-batches per step" \
		"do: distributed optimizer" "limit: the step's largest part"; do
		[[ $legend == *"$t"* ]] || { show; fail "the legend lacks '$t'"; }
	done
	[[ $legend == *"1st/last"* ]] && { show; fail "1st/last explained without its column"; }
	run "${sweep[@]}" --pp 2 --last-stage-layers 0,3
	expect_rc 0
	expect_in out "1st/last: the first and last stages' layers, - as the others;"
	;;
synth-too-large)
	run estimate --gpu h100-sxm --layers 2 --hidden 1073741824 --heads 16 --seq 1024
	one_error "cannot synthesize the step: more than 2^24 instructions per stage, too many to place; try a smaller model, or more pipeline stages (--pp) to share its layers"
	grep -qF "Argument list too long" "$work/err" && { show; fail "E2BIG's text shown"; }
	;;
whatif-compressed)
	for ext in gz zst; do
		run whatif --gpu h100-sxm --layers 4 --hidden 1024 --heads 16 --seq 1024 \
			--global-batch 16 --gpus 8 --format=csv -o "$work/sweep.csv.$ext"
		expect_rc 2
		expect_in err "orrery: error: -o '$work/sweep.csv.$ext': orrery writes plain text, JSON or CSV; name it without '.$ext' and compress it afterwards"
		[[ -e $work/sweep.csv.$ext ]] && fail "a plain file named .$ext written"
	done
	;;
estimate-range)
	desc=(--gpu h100-sxm --layers 4 --heads 16 --seq 1024)
	for bad in "--hidden 99999999999999" "--hidden 0" "--gpus-per-node 0" \
		"--global-batch 0"; do
		set -- $bad
		run estimate "${desc[@]}" --hidden 1024 "$1" "$2"
		expect_rc 2
		expect_in err "orrery: error: bad $1 '$2' (a count, 1 to 2147483647)"
	done
	run whatif "${desc[@]}" --hidden 1024 --global-batch 16 --gpus 8 --gpus-per-node 0
	expect_rc 2
	expect_in err "bad --gpus-per-node '0' (a count, 1 to 2147483647)"
	;;
info-steps)
	run info --steps 99 "$tiny"
	expect_rc 0
	expect_in err "orrery: warning: --steps selects no step of '$tiny'; its counts are listed without step times"
	expect_in out "events  501"
	run info --steps 11 --ranks 1 "$tiny"
	expect_rc 0
	[[ -s $work/err ]] && { show; fail "a warning for a selection that holds a step"; }
	expect_in out "step  #11"
	;;
scale-rank)
	run replay --scale 'cpu@9:*=0.5' "$tiny"
	expect_rc 0
	expect_in err "orrery: warning: scenario 'cpu@9:*=0.5': rule 'cpu@9:*=0.5' names rank 9, which '$tiny' does not hold; its ranks are 0-1"
	run replay --strict --scale 'cpu@9:*=0.5' "$tiny"
	expect_rc 1
	expect_in err "names rank 9"
	# a rank the trace holds, with an op that matches nothing: as before
	run replay --scale 'cpu@1:nosuchop*=0.5' "$tiny"
	expect_rc 0
	expect_in err "rule 'cpu@1:nosuchop*=0.5' matches no CPU task in the trace's steps"
	run replay --scale 'gpu@9:*=0.5' "$tiny"
	expect_rc 0
	expect_in err "orrery: warning: scenario 'gpu@9:*=0.5': rule 'gpu@9:*=0.5' names rank 9, which '$tiny' does not hold; its ranks are 0-1"
	run replay --scale 'gpu@1:nosuchkernel*=0.5' "$tiny"
	expect_rc 0
	expect_in err "rule 'gpu@1:nosuchkernel*=0.5' matches no GPU task in the trace's steps"
	run replay --scale 'gpu@x:*=0.5' "$tiny"
	expect_rc 2
	expect_in err "bad --scale 'gpu@x:*=0.5' ([gpu[@RANK]:|cpu[@RANK]:"
	# every rule kind goes with --predicted, not only those on every rank's GPU
	run diff --scale 'cpu@1:*=0.5' "$tiny" "$tiny"
	expect_rc 2
	expect_in err "--scale goes with --predicted"
	;;
synth-limits)
	# Two stages' threads and streams, past ORR_MAX_PLACES=2, as --pp 10000's were past
	# the default 65,536; a user's limits on traces stay theirs: a trace past one is refused.
	desc=(--gpu h100-sxm --layers 2 --hidden 256 --heads 4 --seq 128 --pp 2)
	for limit in ORR_MAX_PLACES=2 ORR_MAX_RANKS=1 ORR_MAX_FILE_BYTES=1000 \
		ORR_MAX_STRING_BYTES=8 ORR_MAX_DEPTH=2; do
		export "$limit"
		run estimate "${desc[@]}"
		expect_rc 0
		expect_in out "synthesized: 2 ranks (one per pipeline stage)"
		[[ -s $work/err ]] && { show; fail "$limit: a message on stderr"; }
		unset "${limit%%=*}"
	done
	ORR_MAX_PLACES=2 run info "$tiny"
	expect_rc 1
	expect_in err "raise the limit ORR_MAX_PLACES to read it"
	;;
*)
	fail "unknown case '${1:-}'"
	;;
esac
exit 0
