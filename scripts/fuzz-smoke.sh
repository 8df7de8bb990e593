#!/bin/bash
# A libFuzzer run of every fuzz target in a fuzz build:
#   scripts/fuzz-smoke.sh BUILD_DIR
# runs each BUILD_DIR/tests/fuzz/fuzz-<target>-libfuzzer for FUZZ_SECONDS (default 20)
# seconds over a copy of tests/fuzz/corpus/<target>/, so the checked-in corpus is never
# modified.  Fails when a target crashes, leaks, times out or finds undefined behaviour;
# the reproducer is left in BUILD_DIR/$FUZZ_WORK/<target>/ (FUZZ_WORK defaults to
# fuzz-smoke; `make fuzz-long` uses fuzz-long, so a long run's grown corpus survives the
# smoke).  FUZZ_TARGETS="kineto replay" runs only those targets.
set -euo pipefail

if (($# != 1)); then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
build=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${FUZZ_SECONDS:-20}
workdir=${FUZZ_WORK:-fuzz-smoke}
only=${FUZZ_TARGETS:-}
# Undefined behaviour is a finding, not a warning.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

shopt -s nullglob
targets=()
for exe in "$build"/tests/fuzz/fuzz-*-libfuzzer; do
	[[ -f $exe && -x $exe ]] || continue
	name=${exe##*/}
	name=${name#fuzz-}
	name=${name%-libfuzzer}
	if [[ -n $only && " $only " != *" $name "* ]]; then
		continue
	fi
	targets+=("$exe")
done
if ((${#targets[@]} == 0)); then
	echo "fuzz-smoke: no libFuzzer targets (fuzz-*-libfuzzer${only:+ among: $only}) under $build/tests/fuzz" >&2
	exit 1
fi

failed=()
for exe in "${targets[@]}"; do
	name=${exe##*/}
	name=${name#fuzz-}
	name=${name%-libfuzzer}
	work=$build/$workdir/$name
	rm -rf "$work"
	mkdir -p "$work/corpus"
	if [[ -d $root/tests/fuzz/corpus/$name ]]; then
		cp -R "$root/tests/fuzz/corpus/$name/." "$work/corpus/"
	else
		echo "fuzz-smoke: $name: no corpus in tests/fuzz/corpus/$name, starting empty" >&2
	fi
	echo "fuzz-smoke: $name for ${seconds}s" >&2
	if "$exe" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1; then
		tail -n 12 "$work/log" | grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' >&2 || true
	else
		echo "fuzz-smoke: $name FAILED (full log: $work/log):" >&2
		report=$(sed -n '/ERROR\|runtime error/,/^SUMMARY/p' "$work/log" | head -n 40)
		[[ -n $report ]] || report=$(tail -n 30 "$work/log")
		printf '%s\n' "$report" >&2
		grep -h 'Test unit written to' "$work/log" >&2 || true
		failed+=("$name")
	fi
done

if ((${#failed[@]})); then
	echo "fuzz-smoke: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz-smoke: ${#targets[@]} targets ran ${seconds}s each without a finding" >&2
