#!/bin/bash
# How every command writes its outputs (docs/limits.md, "Outputs"), from the source root
# with $ORRERY set:
#
#   run-outputs.sh CASE TRACE
#
#   concurrent   5 `replay --timeline` at once on one name: a valid file, no temporary
#   symlink      links planted at every predictable temporary name and at the output:
#                their target is never written (timeline, convert, chrome, pack)
#   special      /dev/null, a character device, a FIFO with a reader and /dev/stdout
#                are written in place and stay what they are
#   fifo         -o FIFO that no process reads: refused in about 1 s by fit, report,
#                replay --timeline, convert and whatif; written when a reader comes
#   dirlink      compose, convert --to chakra and convert -o LINK to an empty directory
#                fill it; -o LINK to nothing is refused
#   mode         a replaced 0600 output stays 0600; a new one gets 0666 & ~umask
#   signal       SIGTERM during a large convert leaves no temporary and no output
#   failure      a write that fails (file size limit, /dev/full): one error line, the
#                old output intact, no temporary
#   inside       outputs inside the input are refused (convert, pack, replay --timeline)
#   suffix       -o x.JSON and -o x.ORR are files, as on input
#   record       `record` removes the directories it made when nothing was recorded
set -uo pipefail

case_=${1:?usage: $0 CASE TRACE}
trace=${2:-traces/samples/tiny-2rank}
root=$PWD
# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

[[ -e $trace ]] || fail "$trace does not exist"
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }

valid_json() {
	python3 -m json.tool "$1" >/dev/null 2>&1 || fail "'$1' is not valid JSON"
}

# No temporary of any writer is left in DIR.
no_temporaries() {
	local left
	left=$(find "$1" -maxdepth 2 -name '*.tmp*' 2>/dev/null)
	[[ -z $left ]] || fail "temporaries left: $left"
}

one_error_line() {
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	expect_in err "orrery: error: "
}

# Links named as every writer named its temporaries before: NAME.tmp and NAME.tmp.PID
# for the next few hundred pids.
plant() {
	local name=$1 victim=$2 pid
	ln -s "$victim" "$name.tmp"
	pid=$(sh -c 'echo $$')
	for ((p = pid; p < pid + 300; p++)); do
		ln -sf "$victim" "$name.tmp.$p"
	done
}

case $case_ in
concurrent)
	for round in 1 2 3; do
		pids=()
		for i in 1 2 3 4 5; do
			"$orrery" replay --timeline "$work/tl.json" "$trace" >"$work/out$i" 2>&1 &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do
			wait "${pids[$i]}" || { cat "$work/out$((i + 1))" >&2; fail "round $round: writer $i failed"; }
		done
		python3 "$golden/check-timeline.py" "$work/tl.json" || fail "round $round: invalid timeline"
		left=$(find "$work" -maxdepth 1 -name '*tl.json*' | wc -l)
		[[ $left == 1 ]] || fail "round $round: $(ls -A "$work")"
	done
	;;
symlink)
	cd "$work" || fail "cd"
	echo precious >victim.txt
	plant tl.json victim.txt
	plant out.json victim.txt
	plant out.orr victim.txt
	plant outdir victim.txt
	plant run.tar.zst victim.txt
	ln -s victim.txt final.json
	"$orrery" replay --timeline tl.json "$root/$trace" >/dev/null 2>err || fail "timeline: $(cat err)"
	"$orrery" convert "$root/$trace" -o out.json 2>err || fail "convert chrome: $(cat err)"
	"$orrery" convert "$root/$trace/rank-0.trace.json" -o out.orr 2>err || fail "convert native: $(cat err)"
	"$orrery" convert "$root/$trace" -o outdir 2>err || fail "convert dir: $(cat err)"
	"$orrery" pack outdir -o run.tar.zst 2>err || fail "pack: $(cat err)"
	"$orrery" replay --timeline final.json "$root/$trace" >/dev/null 2>err || fail "final: $(cat err)"
	[[ $(cat victim.txt) == precious ]] || fail "the victim was written: $(head -c 100 victim.txt)"
	[[ -L final.json ]] && fail "final.json is still a link"
	valid_json final.json
	valid_json tl.json
	valid_json out.json
	"$orrery" info run.tar.zst >/dev/null 2>err || fail "the pack does not read: $(cat err)"
	;;
special)
	cd "$work" || fail "cd"
	run replay --timeline /dev/null "$root/$trace"
	expect_rc 0
	[[ -c /dev/null ]] || fail "/dev/null is no longer a device"
	run convert "$root/$trace" --to chrome -o /dev/null
	expect_rc 0
	"$orrery" convert "$root/$trace" -o run 2>/dev/null || fail "convert to a run"
	run pack -o /dev/null run
	expect_rc 0
	[[ -c /dev/null ]] || fail "/dev/null is no longer a device"
	if [[ $(id -u) == 0 ]]; then
		mknod fakenull.json c 1 3 || fail "mknod"
		run replay --timeline fakenull.json "$root/$trace"
		expect_rc 0
		[[ -c fakenull.json ]] || fail "the device output was replaced"
	fi
	# A FIFO with a reader gets the whole file; it stays a FIFO.
	mkfifo fifo.json
	cat fifo.json >got.json &
	reader=$!
	run convert "$root/$trace" -o fifo.json
	expect_rc 0
	wait $reader
	[[ -p fifo.json ]] || fail "the FIFO was replaced"
	valid_json got.json
	mkfifo tl-fifo.json
	cat tl-fifo.json >got-tl.json &
	reader=$!
	run replay --timeline tl-fifo.json "$root/$trace"
	expect_rc 0
	wait $reader
	python3 "$root/$golden/check-timeline.py" got-tl.json || fail "timeline through a FIFO"
	# /dev/stdout is the descriptor itself, whatever it leads to (here a file).
	"$orrery" convert "$root/$trace" --to chrome -o /dev/stdout >stdout.json 2>err ||
		fail "convert -o /dev/stdout: $(cat err)"
	valid_json stdout.json
	no_temporaries .
	;;
fifo)
	# -o FIFO that no process reads: refused after a short wait (never waited on), one
	# line, by every command; with a reader started at the same time, written
	command -v timeout >/dev/null || { echo "skipped: no timeout" >&2; exit 77; }
	cd "$work" || fail "cd"
	mkfifo o.fifo || fail "mkfifo"
	for args in "fit -o o.fifo $root/$trace" "report -o o.fifo $root/$trace" \
		"replay --timeline o.fifo $root/$trace" "convert -o o.fifo $root/$trace/rank-0.trace.json" \
		"whatif --gpu a100-80gb-sxm --layers 4 --hidden 1024 --heads 16 --seq 1024 --global-batch 64 --gpus 8 --no-progress -o o.fifo"; do
		echo "+ timeout 20 orrery $args" >&2
		# shellcheck disable=SC2086 # the arguments split as written
		timeout 20 "$orrery" $args >"$work/out" 2>"$work/err"
		rc=$?
		[[ $rc == 124 ]] && fail "orrery $args: still waiting for a reader at 20 s"
		expect_rc 1
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
		expect_in err "cannot write 'o.fifo': a FIFO that no process reads"
		[[ -p o.fifo ]] || fail "the FIFO was replaced"
	done
	# the reader started in the background beside orrery, whichever opens first
	timeout 20 cat o.fifo >got.json &
	reader=$!
	timeout 20 "$orrery" fit -o o.fifo "$root/$trace" >/dev/null 2>"$work/err" ||
		fail "fit -o FIFO with a reader: $(cat "$work/err")"
	wait $reader || fail "the reader failed"
	valid_json got.json
	no_temporaries .
	;;
dirlink)
	# a directory output (compose, convert --to chakra, convert to native) at a link
	# to an empty directory fills that directory; at a link to nothing, refused
	cd "$work" || fail "cd"
	for cmd in "compose" "convert --to chakra" "convert"; do
		rm -rf e l lm && mkdir e && ln -s e l && ln -s missing lm || fail "links"
		echo "+ timeout 60 orrery $cmd -o l $trace" >&2
		# shellcheck disable=SC2086 # the command splits as written
		timeout 60 "$orrery" $cmd -o l "$root/$trace" >"$work/out" 2>"$work/err"
		rc=$?
		expect_rc 0
		[[ -L l && -d e && -n $(ls -A e) ]] || { show; fail "$cmd: e not filled through l"; }
		echo "+ timeout 60 orrery $cmd -o lm $trace" >&2
		# shellcheck disable=SC2086
		timeout 60 "$orrery" $cmd -o lm "$root/$trace" >"$work/out" 2>"$work/err"
		rc=$?
		expect_rc 1
		expect_in err "cannot write 'lm': a symbolic link to nothing"
		[[ -L lm && ! -e missing ]] || fail "$cmd: written through a link to nothing"
		no_temporaries .
	done
	;;
mode)
	cd "$work" || fail "cd"
	for out in tl.json c.json c.orr p.tar.zst; do
		echo old >$out
		chmod 600 $out
	done
	"$orrery" replay --timeline tl.json "$root/$trace" >/dev/null 2>&1 || fail "timeline"
	"$orrery" convert "$root/$trace" -o c.json 2>/dev/null || fail "convert chrome"
	"$orrery" convert "$root/$trace/rank-0.trace.json" -o c.orr 2>/dev/null || fail "convert native"
	"$orrery" convert "$root/$trace" -o run 2>/dev/null || fail "convert run"
	"$orrery" pack run -o p.tar.zst 2>/dev/null || fail "pack"
	for out in tl.json c.json c.orr p.tar.zst; do
		[[ $(stat -c %a $out) == 600 ]] || fail "$out is now $(stat -c %a $out)"
	done
	(umask 027 && "$orrery" replay --timeline new.json "$root/$trace" >/dev/null 2>&1) || fail "new"
	[[ $(stat -c %a new.json) == 640 ]] || fail "new.json is $(stat -c %a new.json) under umask 027"
	(umask 022 && "$orrery" convert "$root/$trace" -o newrun 2>/dev/null) || fail "newrun"
	[[ $(stat -c %a newrun) == 755 ]] || fail "newrun is $(stat -c %a newrun) under umask 022"
	[[ $(stat -c %a newrun/rank-0.orr) == 644 ]] || fail "newrun/rank-0.orr is $(stat -c %a newrun/rank-0.orr)"
	;;
signal)
	gen=${ORR_BUILD_ROOT:-}/bench/gen-kineto
	[[ -x $gen ]] || { echo "skipped: no bench/gen-kineto" >&2; exit 77; }
	"$gen" -o "$work/big.json" --size-mb 60 >/dev/null 2>&1 || fail "gen-kineto"
	for out in out.json outdir; do
		mkdir "$work/o"
		"$orrery" convert "$work/big.json" -o "$work/o/$out" 2>"$work/err" &
		pid=$!
		seen=
		for _ in $(seq 2000); do
			if compgen -G "$work/o/.$out.tmp.*" >/dev/null; then
				seen=1
				break
			fi
			kill -0 $pid 2>/dev/null || break
			sleep 0.01
		done
		[[ -n $seen ]] || fail "$out: no temporary seen (convert ended first?)"
		kill -TERM $pid
		wait $pid
		rc=$?
		[[ $rc == 143 ]] || fail "$out: exit status $rc, expected 143 (SIGTERM)"
		[[ -z $(ls -A "$work/o") ]] || fail "$out: left $(ls -A "$work/o")"
		rm -rf "$work/o"
	done
	;;
failure)
	cd "$work" || fail "cd"
	echo old >out.json
	# A file size limit makes every write past 4 KiB fail with EFBIG (SIGXFSZ ignored).
	(
		trap '' XFSZ
		ulimit -f 4
		exec "$orrery" convert "$root/$trace" -o out.json
	) >out 2>err
	rc=$?
	[[ $rc == 1 ]] || fail "exit status $rc, expected 1"
	[[ $(wc -l <err) == 1 ]] || fail "not one line on stderr: $(cat err)"
	grep -qF "orrery: error: cannot write 'out.json': File too large" err || fail "message: $(cat err)"
	[[ $(cat out.json) == old ]] || fail "the old output was changed"
	no_temporaries .
	run replay --timeline /dev/full "$root/$trace"
	expect_rc 1
	expect_in err "orrery: error: cannot write '/dev/full': No space left on device"
	;;
inside)
	cd "$work" || fail "cd"
	cp -R "$root/$trace" in
	"$orrery" convert in -o run 2>/dev/null || fail "convert"
	before=$( (find in run | sort && cat in/* run/*) | md5sum)
	for out in in/all.json in/new-run in run-alias/x.orr ./in/../in/y.json; do
		ln -sfn in run-alias
		run convert in -o $out
		expect_rc 1
		one_error_line
		expect_in err "is inside the trace 'in'"
	done
	run convert in/rank-0.trace.json -o in/rank-0.trace.json
	expect_rc 1
	expect_in err "is inside the trace"
	# replay --timeline too, before anything is imported or written.
	for out in in/tl.json run-alias/tl.json ./in/../in/tl.json; do
		run replay --timeline $out in
		expect_rc 1
		one_error_line
		expect_in err "cannot write '$out': it is inside the trace 'in'"
		[[ -s $work/out ]] && fail "replay printed a report"
	done
	run replay --timeline in/rank-0.trace.json in/rank-0.trace.json
	expect_rc 1
	one_error_line
	expect_in err "is inside the trace 'in/rank-0.trace.json'"
	run replay --timeline tl.json in
	expect_rc 0
	valid_json tl.json
	rm tl.json
	for out in run/zz.orr run/manifest.json run; do
		run pack run -o $out
		expect_rc 1
		one_error_line
		expect_in err "is inside the run directory 'run'"
	done
	[[ $( (find in run | sort && cat in/* run/*) | md5sum) == "$before" ]] || fail "the inputs changed"
	# A symbolic link inside the run is refused, not followed.
	echo secret >secret.txt
	rm run/manifest.json
	ln -s "$work/secret.txt" run/manifest.json
	run pack run -o p.tar.zst
	expect_rc 1
	one_error_line
	expect_in err "symbolic link"
	[[ -e p.tar.zst ]] && fail "a pack was written"
	no_temporaries .
	;;
suffix)
	cd "$work" || fail "cd"
	run convert "$root/$trace" -o x.JSON
	expect_rc 0
	[[ -f x.JSON ]] || fail "x.JSON is not a file"
	valid_json x.JSON
	run convert "$root/$trace/rank-0.trace.json" -o y.ORR
	expect_rc 0
	[[ -f y.ORR ]] || fail "y.ORR is not a file"
	run info y.ORR
	expect_rc 0
	run convert "$root/$trace" --to native -o z.Json
	expect_rc 2
	;;
record)
	: >"$work/fake-tracer.so"
	: >"$work/fake-cupti.so"
	export ORR_TRACER=$work/fake-tracer.so ORR_CUPTI=$work/fake-cupti.so
	cd "$work" || fail "cd"
	run record -o a/b/c/d -- ./no-such-command
	expect_rc 127
	[[ -e a ]] && fail "left $(find a)"
	run record -q -o e/f/g -- true
	expect_rc 1
	expect_in err "no process initialized CUDA"
	[[ -e e ]] && fail "left $(find e)"
	# Its own empty directory is left as it was, with no manifest.
	mkdir mine
	run record -q -o mine/r -- true
	expect_rc 1
	[[ -d mine && -z $(ls -A mine) ]] || fail "mine: $(ls -A mine)"
	# The next recording into the same name is not refused.
	run record -q -o e/f/g -- true
	expect_rc 1
	grep -qF "exists and is not empty" "$work/err" && fail "refused the second time"
	;;
*)
	fail "unknown case '$case_'"
	;;
esac
echo "ok" >&2
