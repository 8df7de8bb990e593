#!/bin/bash
# A large plain Kineto file is read by two threads, the second half of traceEvents beside
# the first (traces/kineto/kineto-window.cpp, docs/performance.md).  Whatever the file,
# what comes out must be what one thread gives, byte for byte.  In suite `golden`, from
# the source root with $ORRERY set:
#
#   run-import-threads.sh made        the traces of mk-split-traces.py: every kind of row,
#                                     a middle inside a string that looks like events, a
#                                     bad event and a cut in the second half, a middle past
#                                     traceEvents, traceEvents twice
#   run-import-threads.sh shared DIR  every Kineto file under DIR, decompressed
#
# Each file is converted to native and summarised by `info --format=json` with one thread
# (ORR_IMPORT_THREADS=1) and with two that split it whatever its size
# (ORR_IMPORT_SPLIT_BYTES=1): exit statuses, outputs and messages must be the same.
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

# One command on file $1 with threads $2; its output and messages in $work/$3.{out,err,rc}.
one_way() {
	local file=$1 threads=$2 tag=$3
	shift 3
	env ORR_IMPORT_THREADS="$threads" ORR_IMPORT_SPLIT_BYTES=1 "$orrery" "$@" "$file" \
		>"$work/$tag.out" 2>"$work/$tag.err"
	echo $? >"$work/$tag.rc"
}

# $1 reads the same with one thread and with two.
same_both_ways() {
	local file=$1 n
	for n in 1 2; do
		rm -f "$work/n$n.orr"
		one_way "$file" "$n" "c$n" convert --to native -o "$work/n$n.orr"
		one_way "$file" "$n" "i$n" info --format=json
		sed -i "s#$work/n$n.orr#OUT#" "$work/c$n.out" "$work/c$n.err"
	done
	for t in c i; do
		cmp -s "$work/${t}1.rc" "$work/${t}2.rc" ||
			fail "$file: exit status $(<"$work/${t}1.rc") with one thread, $(<"$work/${t}2.rc") with two"
		cmp -s "$work/${t}1.out" "$work/${t}2.out" || {
			diff "$work/${t}1.out" "$work/${t}2.out" | head -n 20 >&2
			fail "$file: output differs with two threads"
		}
		cmp -s "$work/${t}1.err" "$work/${t}2.err" || {
			diff "$work/${t}1.err" "$work/${t}2.err" | head -n 20 >&2
			fail "$file: messages differ with two threads"
		}
	done
	if [[ -e $work/n1.orr ]]; then
		cmp -s "$work/n1.orr" "$work/n2.orr" || fail "$file: native files differ"
	elif [[ -e $work/n2.orr ]]; then
		fail "$file: a native file with two threads only"
	fi
	checked=$((checked + 1))
}

checked=0
mode=${1:-}
shift || true
case $mode in
made)
	python3 "$golden/mk-split-traces.py" "$work/made" || fail "mk-split-traces.py failed"
	for f in "$work"/made/*.json; do
		same_both_ways "$f"
		[[ $f != */rows.json ]] && continue
		# counted once each, though the last window (past traceEvents) is read twice
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["ranks"][0]
skipped = {s["category"]: s["count"] for s in r["skipped"]}
sys.exit(skipped != {"python_function": 1500})' "$work/i1.out" ||
			fail "rows.json: python_function events not counted 1500 times"
	done
	# the cases that must fail do, the rest pass
	for f in bad-second cut; do
		one_way "$work/made/$f.json" 2 bad info
		[[ $(<"$work/bad.rc") == 1 ]] || fail "$f.json: exit status $(<"$work/bad.rc"), expected 1"
	done
	for f in rows fake-cut middle-after twice; do
		one_way "$work/made/$f.json" 2 good info
		[[ $(<"$work/good.rc") == 0 ]] || fail "$f.json: exit status $(<"$work/good.rc")"
	done
	;;
shared)
	needs "$@"
	mkdir -p "$work/plain"
	while IFS= read -r -d '' f; do
		plain=$work/plain/$(basename "$f")
		case $f in
		*.json.gz) gzip -dc "$f" >"${plain%.gz}" && plain=${plain%.gz} ;;
		*.json) cp "$f" "$plain" ;;
		*) continue ;;
		esac
		same_both_ways "$plain"
		rm -f "$plain"
	done < <(find -L "$@" -type f \( -name '*.json' -o -name '*.json.gz' \) -print0 | sort -z)
	;;
*)
	fail "usage: run-import-threads.sh made | shared DIR..."
	;;
esac
((checked > 0)) || fail "no file was checked"
echo "checked $checked files, the same with one thread and with two"
