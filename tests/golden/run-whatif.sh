#!/bin/bash
# CLI tests of `orrery whatif` (suite golden), from the source root with $ORRERY set:
#
#   run-whatif.sh estimate   a sweep of one configuration equals orrery estimate of it,
#                            from a description and from the Megatron trace (whose
#                            recorded configuration is marked and equals its replay)
#   run-whatif.sh threads    1 and 3 threads write the same JSON and CSV
#   run-whatif.sh mpi        mpirun --oversubscribe -n 2 writes what --jobs 1 writes, and
#                            stops (does not hang) when rank 0 cannot write -o
#                            (77 without mpirun or in a build without MPI)
#   run-whatif.sh mpi-differ mpirun -n 2 whose rank 1 is given other options or files
#                            (whatif-rank1.sh): the same costs under another name sweep
#                            as one process does; another budget, model, space or costs
#                            stop both processes with one error naming what differs,
#                            nothing written (77 without mpirun or in a build without MPI)
#   run-whatif.sh module     a copy of orrery without its MPI module beside it sweeps
#                            alone as the build does, and under a launcher's environment
#                            says it cannot load the module (77 in a build without MPI)
#   run-whatif.sh report     JSON and CSV checked by check-whatif.py (every configuration
#                            once, ranks in order, the Pareto front, the reasons), text
#                            has its tables, --show-infeasible lists the reasons
#   run-whatif.sh usage      usage errors and --help
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

shared=${ORR_SHARED_TRACES:-../shared/traces}
megatron=$shared/kineto/astrasim-megatron-tp8
model=(--gpu a100-80gb-sxm --layers 8 --hidden 1024 --heads 16 --seq 1024 --global-batch 32
	--launch-us 5)

case ${1:-} in
estimate)
	# from a description: TP 2, PP 2, DP 2, two sequences per micro-batch
	run whatif "${model[@]}" --gpus 8 --tp 2 --pp 2 --micro-batch 2 --recompute selective \
		--vpp 1 --format=json
	expect_rc 0
	cp "$work/out" "$work/w.json"
	run estimate "${model[@]}" --tp 2 --pp 2 --dp 2 --micro-batch 2 --recompute selective \
		--sequence-parallel --distributed-optimizer --format=json
	expect_rc 0
	cp "$work/out" "$work/e.json"
	python3 - "$work/w.json" "$work/e.json" <<'PY' || fail "whatif and estimate differ"
import json, sys
w, e = (json.load(open(p)) for p in sys.argv[1:])
assert w["configurations"] == 1 and w["feasible"] == 1, (w["configurations"], w["feasible"])
r = w["ranked"][0]
for k in ("iteration_ns", "memory_bytes_per_gpu", "fits", "breakdown", "config", "method",
          "tokens_per_s_per_gpu", "mfu", "synthesized", "sources"):
    assert r[k] == e[k], (k, r[k], e[k])
PY
	# --sync-layers holds for every configuration, as estimate takes it (full recompute)
	run whatif "${model[@]}" --gpus 8 --tp 2 --pp 2 --micro-batch 2 --recompute full \
		--vpp 1 --sequence-parallel off --distributed-optimizer off --sync-layers --format=json
	expect_rc 0
	cp "$work/out" "$work/w.json"
	run estimate "${model[@]}" --tp 2 --pp 2 --dp 2 --micro-batch 2 --recompute full \
		--sync-layers --format=json
	expect_rc 0
	python3 -c 'import json,sys
w, e = (json.load(open(p)) for p in sys.argv[1:])
r = w["ranked"][0]
assert r["config"]["sync_layers"] is True, r["config"]
for k in ("iteration_ns", "breakdown", "config"):
    assert r[k] == e[k], (k, r[k], e[k])' "$work/w.json" "$work/out" || fail "whatif --sync-layers differs"
	# a sweep without full recompute: --sync-layers changes nothing and says so
	run whatif "${model[@]}" --gpus 8 --tp 2 --pp 2 --recompute none,selective \
		--sync-layers --format=json
	expect_rc 0
	expect_in err "orrery: warning: --sync-layers does not apply: no configuration swept"
	cp "$work/out" "$work/w.json"
	run whatif "${model[@]}" --gpus 8 --tp 2 --pp 2 --recompute none,selective --format=json
	expect_rc 0
	[[ ! -s $work/err ]] || { show; fail "a warning without --sync-layers"; }
	python3 -c 'import json,sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["ranked"] and a["ranked"] == b["ranked"], "rows differ"' "$work/w.json" "$work/out" ||
		fail "whatif --sync-layers without full recompute differs"
	# context parallelism, TP and PP without sequence parallelism, an uneven split
	for c in "--cp 2 --tp 1 --pp 1 --dp 1 --micro-batch 1:2:--cp 2 --tp 1 --pp 1" \
		"--tp 2 --pp 2 --dp 2 --micro-batch 1:8:--tp 2 --pp 2" \
		"--tp 1 --pp 4 --dp 2 --first-stage-layers 3 --last-stage-layers 1:8:--tp 1 --pp 4 --first-stage-layers 3 --last-stage-layers 1"; do
		IFS=: read -r layout gpus lists <<<"$c"
		# shellcheck disable=SC2086 # the options
		run whatif "${model[@]}" --gpus "$gpus" $lists --vpp 1 --micro-batch 1 --recompute none \
			--sequence-parallel off --distributed-optimizer off --format=json
		expect_rc 0
		cp "$work/out" "$work/w.json"
		# shellcheck disable=SC2086
		run estimate "${model[@]}" $layout --recompute none --format=json
		expect_rc 0
		python3 -c 'import json,sys
w, e = (json.load(open(p)) for p in sys.argv[1:])
r = w["ranked"][0]
for k in ("iteration_ns", "breakdown", "memory_bytes_per_gpu", "config"):
    assert r[k] == e[k], (k, r[k], e[k])' "$work/w.json" "$work/out" || fail "whatif differs: $layout"
	done
	# from a trace: its recorded configuration, and a change of TP and PP
	needs "$megatron"
	run whatif "$megatron" --gpus 8 --tp 8,2 --pp 1,2 --format=json --top 0
	expect_rc 0
	cp "$work/out" "$work/t.json"
	run estimate "$megatron" --tp 2 --pp 2 --dp 2 --micro-batch 2 --global-batch 4 \
		--recompute none --format=json
	expect_rc 0
	cp "$work/out" "$work/e.json"
	run estimate "$megatron" --format=json
	expect_rc 0
	cp "$work/out" "$work/in-place.json"
	python3 - "$work/t.json" "$work/e.json" "$work/in-place.json" <<'PY' || fail "whatif of the trace"
import json, sys
w, e, same = (json.load(open(p)) for p in sys.argv[1:])
rec = [r for r in w["ranked"] if r["is_recorded"]]
assert len(rec) == 1, "the recorded configuration is marked once"
rec = rec[0]
assert rec["config"]["tp"] == 8 and rec["config"]["pp"] == 1, rec["config"]
# the recorded configuration as estimate estimates it in place: the replay without the
# host time the profiler added, and with it as traced
assert same["profiler_host_ns"] > 0, same
assert rec["iteration_ns"] == same["iteration_ns"], (rec["iteration_ns"], same["iteration_ns"])
assert rec["traced_ns"] == round(w["replayed_ns"]) == same["traced_ns"], (rec, w["replayed_ns"])
assert rec["profiler_host_ns"] == same["profiler_host_ns"], (rec, same)
m = [r for r in w["ranked"] if (r["config"]["tp"], r["config"]["pp"], r["config"]["dp"],
     r["config"]["vpp"], r["config"]["micro_batch"], r["config"]["recompute"]) ==
     (2, 2, 2, 1, 2, "none")]
assert len(m) == 1, m
for k in ("iteration_ns", "memory_bytes_per_gpu", "fits", "breakdown", "method", "changes",
          "traced_ns", "profiler_host_ns"):
    assert m[0][k] == e[k], (k, m[0][k], e[k])
assert e["traced_ns"] > e["iteration_ns"], e
PY
	# a value given twice in a list is one value: the same rows, once each
	run whatif "$megatron" --gpus 8 --tp 8,2,8 --pp 1,2,2 --format=json --top 0
	expect_rc 0
	python3 - "$work/t.json" "$work/out" <<'PY' || fail "whatif with a value twice"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["ranked"] == b["ranked"], (len(a["ranked"]), len(b["ranked"]))
PY
	;;
threads)
	for f in json csv; do
		run whatif "${model[@]}" --gpus 4-8 --format=$f --jobs 1
		expect_rc 0
		cp "$work/out" "$work/one.$f"
		run whatif "${model[@]}" --gpus 4-8 --format=$f --jobs 3
		expect_rc 0
		cmp -s "$work/out" "$work/one.$f" || fail "--jobs 3 differs from --jobs 1 ($f)"
	done
	;;
mpi)
	command -v mpirun >/dev/null || exit 77
	[[ -e ${orrery%/*}/orrery-mpi.so ]] || exit 77 # the MPI module, beside orrery when built
	run whatif "${model[@]}" --gpus 4-8 --format=csv --jobs 1
	expect_rc 0
	cp "$work/out" "$work/one.csv"
	# OpenMPI refuses root unless told (CI containers run as root); under ASan, OpenMPI's
	# own allocations at MPI_Init are reported as leaks (its components are dlopen'ed and
	# never closed): leak checking stays on for every run without MPI
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
		mpirun --oversubscribe -n 2 "$orrery" whatif "${model[@]}" --gpus 4-8 --format=csv \
		--jobs 1 >"$work/mpi.csv" 2>"$work/err"
	rc=$?
	expect_rc 0
	cmp -s "$work/mpi.csv" "$work/one.csv" || {
		diff "$work/one.csv" "$work/mpi.csv" | head >&2
		fail "mpirun -n 2 differs from one process"
	}
	# rank 0 cannot write -o: every process stops, none waits on it
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
		timeout 120 mpirun --oversubscribe -n 2 "$orrery" whatif "${model[@]}" --gpus 4-8 \
		--jobs 1 -o "$work/no/such/dir/w.csv" >/dev/null 2>"$work/err"
	rc=$?
	[[ $rc != 0 && $rc != 124 ]] || fail "mpirun with an -o rank 0 cannot write: rc $rc"
	grep -q "cannot write" "$work/err" || fail "mpirun: no error said"
	;;
module)
	[[ -e ${orrery%/*}/orrery-mpi.so ]] || { echo "skipped: a build without MPI" >&2; exit 77; }
	run whatif "${model[@]}" --gpus 4-8 --format=csv --jobs 1
	expect_rc 0
	cp "$work/out" "$work/one.csv"
	mkdir "$work/bin" && cp "$orrery" "$work/bin/orrery" || fail "cannot copy orrery"
	orrery=$work/bin/orrery
	run whatif "${model[@]}" --gpus 4-8 --format=csv --jobs 1
	expect_rc 0
	cmp -s "$work/out" "$work/one.csv" || fail "a copy without the MPI module sweeps otherwise"
	OMPI_COMM_WORLD_SIZE=2 run whatif "${model[@]}" --gpus 4-8 --format=csv --jobs 1
	expect_rc 1
	expect_in err "cannot load whatif's MPI module"
	;;
mpi-differ)
	command -v mpirun >/dev/null || { echo "skipped: no mpirun" >&2; exit 77; }
	[[ -e ${orrery%/*}/orrery-mpi.so ]] || { echo "skipped: a build without MPI" >&2; exit 77; }
	command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
	# costs fitted on the sample; a copy (the same values, another name); slower collectives
	"$orrery" fit -o "$work/c.json" traces/samples/tiny-2rank 2>/dev/null || fail "fit"
	cp "$work/c.json" "$work/copy.json"
	python3 - "$work/c.json" "$work/slow.json" <<'PY' || fail "slow.json"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["collectives"]:
    for b in c["bands"]:  # alpha_ns is the fit's intercept: both, or the file is refused
        b["alpha_ns"] *= 2
        b["fit"]["coef"][0] *= 2
json.dump(d, open(sys.argv[2], "w"))
PY
	sweep=(--gpu h100-sxm --layers 8 --hidden 1024 --heads 16 --seq 1024 --global-batch 32
		--gpus 4-8 --format=csv --jobs 1 --no-progress --costs "$work/c.json")
	run whatif "${sweep[@]}"
	expect_rc 0
	cp "$work/out" "$work/one.csv"
	# mpi EXTRA [ARGS]: mpirun -n 2, rank 1 with EXTRA appended (as in the mpi case)
	mpi() {
		echo "+ mpirun -n 2 orrery whatif ... (rank 1: ${1:-as rank 0})" >&2
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
			OMPI_MCA_rmaps_base_oversubscribe=1 timeout 120 mpirun --oversubscribe -n 2 \
			bash "$golden/whatif-rank1.sh" "$orrery" "$1" "${sweep[@]}" "${@:2}" \
			>"$work/out" 2>"$work/err"
		rc=$?
	}
	for extra in "" "--costs $work/copy.json"; do
		mpi "$extra"
		expect_rc 0
		cmp -s "$work/out" "$work/one.csv" || fail "rank 1 '$extra': differs from one process"
	done
	for c in "--gpus 16=GPU budget" "--layers 16=model" "--recompute full=space of layouts" \
		"--costs $work/slow.json=cost model"; do
		mpi "${c%%=*}"
		[[ $rc != 0 && $rc != 124 ]] || { show; fail "rank 1 '${c%%=*}': rc $rc"; }
		[[ -s $work/out ]] && { show; fail "rank 1 '${c%%=*}': output on stdout"; }
		[[ $(grep -c "orrery: error" "$work/err") == 1 ]] || { show; fail "not one error"; }
		expect_in err "orrery: error: the processes sweep different spaces: rank 1's ${c#*=} differs from rank 0's"
	done
	# -o: nothing written either
	mpi "--gpus 16" -o "$work/w.csv"
	[[ $rc != 0 && $rc != 124 ]] || { show; fail "-o: rc $rc"; }
	[[ -e $work/w.csv ]] && fail "-o written"
	[[ -z $(find "$work" -name '.w.csv.tmp*') ]] || fail "-o: a temporary file left"
	;;
report)
	run whatif "${model[@]}" --gpus 4-8 --format=json
	expect_rc 0
	cp "$work/out" "$work/w.json"
	run whatif "${model[@]}" --gpus 4-8 --format=csv
	expect_rc 0
	cp "$work/out" "$work/w.csv"
	python3 "$golden/check-whatif.py" "$work/w.json" "$work/w.csv" 10 || fail "check-whatif.py"
	run whatif "${model[@]}" --gpus 4-8 --format=json --top 0
	expect_rc 0
	python3 "$golden/check-whatif.py" "$work/out" "$work/w.csv" 100000 ||
		fail "check-whatif.py --top 0"
	run whatif "${model[@]}" --gpus 4-8 --top 3
	expect_rc 0
	for t in "configurations in" "ranked (" "Pareto front" "recompute"; do
		expect_in out "$t"
	done
	run whatif "${model[@]}" --gpus 8 --tp 1,3 --pp 2 --vpp 2 --micro-batch 1,5 \
		--show-infeasible
	expect_rc 0
	for t in "not feasible" "heads" "batch"; do
		expect_in out "$t"
	done
	# a model too large for the GPU: every configuration is refused for memory, the
	# report written, and the sweep fails with the reasons counted and what they suggest
	run whatif --gpu a100-80gb-sxm --layers 96 --hidden 12288 --heads 96 --seq 2048 \
		--global-batch 8 --gpus 2 --show-infeasible
	expect_rc 1
	expect_in out "no configuration is feasible"
	expect_in out "memory"
	expect_in err "no configuration is feasible (141 configurations: memory 114, interleave 27)"
	expect_in err "memory: try --fsdp"
	expect_in err "more GPUs than 2 (--gpus)"
	[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "not one line on stderr"; }
	# sharded already: more GPUs or recompute, not --fsdp
	run whatif --gpu a100-80gb-sxm --layers 96 --hidden 12288 --heads 96 --seq 2048 \
		--global-batch 8 --gpus 2 --fsdp --recompute none,selective
	expect_rc 1
	expect_in err "memory: try --recompute full or more GPUs than 2 (--gpus)"
	grep -qF -- "--fsdp" "$work/err" && { show; fail "--fsdp suggested with --fsdp"; }
	# a sweep that holds no configuration at all
	run whatif "${model[@]}" --gpus 4 --tp 4 --pp 2
	expect_rc 1
	expect_in err "the sweep holds none: --tp 4 x --pp 2 (8) does not divide --gpus 4"
	# each names the value that divides no GPU count, or the least product of the lists
	for c in "--gpus 8 --tp 3:--tp 3 does not divide --gpus 8" \
		"--gpus 8 --tp 2 --pp 3:--pp 3 does not divide --gpus 8" \
		"--gpus 8 --cp 3:--cp 3 does not divide --gpus 8" \
		"--gpus 8-12 --tp 7:--tp 7 does not divide any of --gpus 8-12" \
		"--gpus 8 --tp 2,4 --pp 3,5:none of --pp 3,5 divides --gpus 8" \
		"--gpus 8 --tp 4,8 --pp 4,8:no product of the --tp, --pp and --cp given divides --gpus 8; the least, --tp 4 x --pp 4 (16)"; do
		IFS=: read -r lists said <<<"$c"
		# shellcheck disable=SC2086 # the options
		run whatif "${model[@]}" $lists
		expect_rc 1
		expect_in err "orrery: error: no configuration is feasible: the sweep holds none: $said"
		[[ $(wc -l <"$work/err") == 1 ]] || { show; fail "$lists: not one line on stderr"; }
	done
	# a sweep whose configurations Megatron refuses names the first refused and why
	run whatif "${model[@]}" --gpus 6 --pp 3
	expect_rc 1
	expect_in err "layers: layers 8 is not divisible by pp 3 (the first refused), try a --pp"
	run whatif "${model[@]}" --gpus 6 --tp 3
	expect_rc 1
	expect_in err "heads: heads 16 is not divisible by tp 3 (the first refused), try a --tp"
	run whatif "${model[@]}" --gpus 6 --tp 1 --pp 1 --micro-batch 5
	expect_rc 1
	expect_in err "batch: global batch 32 is not divisible by dp 6 x micro-batch 5 (the first"
	run whatif "${model[@]}" --gpus 8 -o "$work/sweep.txt"
	expect_rc 0
	grep -q "ranked (" "$work/sweep.txt" || fail "-o FILE"
	;;
usage)
	run whatif --help
	expect_rc 0
	expect_in out "usage: orrery whatif"
	for bad in "--gpus 0" "--gpus 8-4" "--gpus x" "--tp 0" "--tp 1,,2" "--pp x" \
		"--recompute some" "--sequence-parallel maybe" "--rank-by speed" "--jobs 0" \
		"--format=xml" "--layers x" "--first-stage-layers -1" "--last-stage-layers 1,x"; do
		# shellcheck disable=SC2086 # the option and its value
		run whatif "${model[@]}" --gpus 8 $bad
		expect_rc 2
		[[ $(wc -l <"$work/err") == 1 ]] || fail "$bad: not one line"
	done
	run whatif "${model[@]}"
	expect_rc 2
	expect_in err "--gpus"
	run whatif --gpus 8 --layers 4
	expect_rc 2
	expect_in err "--global-batch"
	run whatif "${model[@]}" --gpus 8 --gpu nosuch
	expect_rc 1
	run whatif nosuch.json --gpus 8
	expect_rc 1
	# an empty output name, as for every command that writes one (docs/limits.md)
	run whatif "${model[@]}" --gpus 8 -o ''
	expect_rc 2
	expect_in err "empty output name"
	;;
*)
	fail "usage: run-whatif.sh estimate|threads|mpi|mpi-differ|report|usage"
	;;
esac
exit 0
