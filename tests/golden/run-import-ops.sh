#!/bin/bash
# The ops of a CPU-only torch.profiler session (ops-PID.json, orrery_record's profiler
# mode) merged into the tracer's file of the same process (traces/import-ops.c).  In suite
# `golden`, from the source root with $ORRERY set:
#
#   run-import-ops.sh merge    the sample's two ranks, each cut by ops-split.py into what
#                              the profiler records (ops, annotations) and what the tracer
#                              records (calls, GPU work, steps; converted to .orr): the run
#                              directory of both reads as the sample does (summary, replay),
#                              every call under the same innermost op with the same shapes;
#                              orrery pack keeps the ops files
#   run-import-ops.sh orphan   an ops file without its process's .orr: skipped with a warning
#   run-import-ops.sh alone    an ops file given alone is a trace of its own
#   run-import-ops.sh comms    the ops' collectives (record_param_comms) kept with them when
#                              the tracer's file has none of its own (no NCCL kernels)
#   run-import-ops.sh twice    a second ops file of one process (ops-PID.json.gz or
#                              ops-0PID.json beside ops-PID.json): skipped with a warning
#                              naming the first, the ops merged once
#   run-import-ops.sh outside  an ops file whose ops all lie outside what the tracer recorded
#                              (another run's, another clock's): skipped with a warning
#   run-import-ops.sh places   ORR_MAX_PLACES holds for the merged rank: ops on 4 threads
#                              the tracer's file lacks (5 places) make 9, past 8
#   run-import-ops.sh values   ORR_MAX_VALUES holds for the merged rank: the ops' 405
#                              dimensions and an op of 400 in the tracer's file make 805,
#                              past 405, which each file alone is within; named at its
#                              byte and event, a plain file or a member of an archive
#   run-import-ops.sh suffixes ops files named as the importer reads JSON (ops-PID.JSON,
#                              ops-PID.Json.Gz: suffixes in any case, .json.zstd): merged
#   run-import-ops.sh legacy   torch.profiler's trace from a PyTorch without Kineto (Debian's
#                              1.13): skipped with the warning why (77 without such a torch)
set -uo pipefail

# shellcheck source=SCRIPTDIR/golden-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/golden-lib.sh"

sample=traces/samples/tiny-2rank
run_dir=$work/run

# The sample's rank $1 (process $2) cut into $run_dir/ops-$2.json and rank-$1.orr.
cut_rank() {
	python3 "$golden/ops-split.py" split "$sample/rank-$1.trace.json" \
		"$run_dir/ops-$2.json" "$work/rest-$1.json" || fail "ops-split.py split failed"
	run convert -o "$run_dir/rank-$1.orr" "$work/rest-$1.json"
	expect_rc 0
}

# The output of orrery $@ on the sample and on the run directory, less the trace's name.
same_output() {
	run "$@" "$sample"
	expect_rc 0
	grep -v '"trace":' "$work/out" >"$work/want"
	run "$@" "$run_dir"
	expect_rc 0
	grep -v '"trace":' "$work/out" >"$work/got"
	cmp -s "$work/want" "$work/got" || {
		diff "$work/want" "$work/got" | head -n 20 >&2
		fail "orrery $* differs on the merged run directory"
	}
}

mkdir -p "$run_dir"
case ${1:?case} in
merge)
	cut_rank 0 48213
	cut_rank 1 48214
	run info "$run_dir"
	expect_rc 0
	expect_in out "events  501: op 177"
	[[ ! -s $work/err ]] || {
		show
		fail "warnings on the merged run directory"
	}
	same_output summary --format=json
	same_output replay --format=json
	run convert --to chrome -o "$work/want.json" "$sample"
	expect_rc 0
	run convert --to chrome -o "$work/got.json" "$run_dir"
	expect_rc 0
	python3 "$golden/ops-split.py" enclosing "$work/want.json" "$work/got.json" ||
		fail "calls under other ops once merged"
	# orrery pack keeps the ops files: the archive reads as the directory.
	run info --format=json "$run_dir"
	grep -v '"trace":' "$work/out" >"$work/want"
	run pack -o "$work/run.tar.zst" "$run_dir"
	expect_rc 0
	run info --format=json "$work/run.tar.zst"
	expect_rc 0
	grep -v '"trace":' "$work/out" | sed "s#$work/run.tar.zst:#$run_dir/#" >"$work/got"
	cmp -s "$work/want" "$work/got" || {
		diff "$work/want" "$work/got" | head -n 20 >&2
		fail "the packed run directory reads otherwise"
	}
	;;
orphan)
	cut_rank 0 48213
	cut_rank 1 48214
	mv "$run_dir/ops-48214.json" "$run_dir/ops-99.json"
	run info "$run_dir"
	expect_rc 0
	expect_in err "skipped '$run_dir/ops-99.json': the ops of process 99, whose tracer file (.orr) is not read with it"
	expect_in out "rank 1 of 2"
	;;
alone)
	cut_rank 0 48213
	run info "$run_dir/ops-48213.json"
	expect_rc 0
	expect_in out "events  195: op 177, annotation 18"
	;;
comms)
	cut_rank 0 48213
	python3 - "$work/rest-0.json" <<-'EOF' || fail "cannot drop the NCCL kernels"
		import json, sys
		d = json.load(open(sys.argv[1]))
		d["traceEvents"] = [e for e in d["traceEvents"] if not e.get("name", "").startswith("nccl")]
		json.dump(d, open(sys.argv[1], "w"))
	EOF
	run convert -o "$run_dir/rank-0.orr" "$work/rest-0.json"
	expect_rc 0
	run convert --to chrome -o "$work/got.json" "$run_dir"
	expect_rc 0
	python3 - "$work/got.json" <<-'EOF' || fail "the ops' collectives are not theirs once merged"
		import json, sys
		d = json.load(open(sys.argv[1]))
		ops = [e for e in d["traceEvents"] if e.get("name") == "record_param_comms"]
		sizes = [e.get("args", {}).get("In msg nelems") for e in ops]
		assert len(ops) == 6 and sizes == [12583936, 16789504] * 3, sizes
	EOF
	;;
twice)
	cut_rank 0 48213
	gzip -c "$run_dir/ops-48213.json" >"$run_dir/ops-48213.json.gz"
	cp "$run_dir/ops-48213.json" "$run_dir/ops-048213.json"
	run info "$run_dir"
	expect_rc 0
	expect_in out "events  501: op 177, annotation 21"
	expect_in err "skipped '$run_dir/ops-48213.json': the ops of process 48213 are merged from '$run_dir/ops-048213.json' already"
	expect_in err "skipped '$run_dir/ops-48213.json.gz': the ops of process 48213 are merged from '$run_dir/ops-048213.json' already"
	;;
outside)
	cut_rank 0 48213
	python3 - "$run_dir/ops-48213.json" <<-'EOF' || fail "cannot move the ops"
		import json, sys
		d = json.load(open(sys.argv[1]))
		for e in d["traceEvents"]:
		    if "ts" in e:
		        e["ts"] += 3600e6
		json.dump(d, open(sys.argv[1], "w"))
	EOF
	run info "$run_dir"
	expect_rc 0
	expect_in out "events  306: annotation 3, runtime 153"
	expect_in err "skipped '$run_dir/ops-48213.json': its 195 ops and annotations of process 48213 all lie outside what the tracer recorded of it"
	;;
places)
	cut_rank 0 48213
	python3 - "$run_dir/ops-48213.json" <<-'EOF' || fail "cannot move the ops"
		import json, sys
		d = json.load(open(sys.argv[1]))
		ops = [e for e in d["traceEvents"] if e.get("ph") == "X"]
		for i, e in enumerate(ops):
		    e["tid"] = 1000 + i % 4
		json.dump(d, open(sys.argv[1], "w"))
	EOF
	ORR_MAX_PLACES=9 run info "$run_dir"
	expect_rc 0
	expect_in out "thread  pid 48213 tid 1003"
	ORR_MAX_PLACES=8 run info "$run_dir"
	expect_rc 1
	expect_in err "ops-48213.json': input exceeds a size limit"
	expect_in err "more than 8 threads and streams in one rank"
	;;
values)
	python3 "$golden/ops-split.py" split "$sample/rank-0.trace.json" \
		"$run_dir/ops-48213.json" "$work/rest-0.json" || fail "ops-split.py split failed"
	python3 - "$work/rest-0.json" <<-'EOF' || fail "cannot add the op"
		import json, sys
		d = json.load(open(sys.argv[1]))
		x = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 48213][0]
		d["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::wide",
		                         "pid": 48213, "tid": x["tid"], "ts": x["ts"], "dur": 0,
		                         "args": {"Input Dims": [list(range(1, 401))]}})
		json.dump(d, open(sys.argv[1], "w"))
	EOF
	run convert -o "$run_dir/rank-0.orr" "$work/rest-0.json"
	expect_rc 0
	ORR_MAX_VALUES=405 run info "$run_dir/ops-48213.json"
	expect_rc 0
	ORR_MAX_VALUES=405 run info "$run_dir/rank-0.orr"
	expect_rc 0
	ORR_MAX_VALUES=805 run info "$run_dir"
	expect_rc 0
	expect_in out "op 178"
	ORR_MAX_VALUES=804 run info "$run_dir"
	expect_rc 1
	expect_in err "ops-48213.json': input exceeds a size limit at byte "
	expect_in err "more than 804 tensor dimensions"
	# named where the ops file passes it, the rank's values counted (the file read again
	# alone; there was no place): the event at that byte, the first that does not fit
	cp "$work/err" "$work/err-804"
	cp "$run_dir/ops-48213.json" "$work/ops.json"
	python3 - "$work/ops.json" "$work/err-804" "$work/cut.json" "$work/cut1.json" <<-'EOF' ||
		import json, re, sys
		text = open(sys.argv[1]).read()
		d = json.loads(text)
		m = re.search(r"at byte (\d+) \(event (\d+)\)", open(sys.argv[2]).read())
		assert m, "no byte and event"
		at, ev = int(m.group(1)), int(m.group(2))
		assert json.JSONDecoder().raw_decode(text, at)[0] == d["traceEvents"][ev], (at, ev)
		for out, n in ((sys.argv[3], ev), (sys.argv[4], ev + 1)):
		    json.dump(dict(d, traceEvents=d["traceEvents"][:n]), open(out, "w"))
	EOF
		fail "the byte is not the event's"
	# the same run packed (tar, tar.gz, a gzip member in a tar): the member named at the
	# same byte and event (the member read again alone; it had no place)
	place=$(grep -o "at byte [0-9]* (event [0-9]*)" "$work/err-804")
	tar -C "$run_dir" -cf "$work/run.tar" ops-48213.json rank-0.orr || fail "tar failed"
	gzip -c "$work/run.tar" >"$work/run.tar.gz"
	mkdir "$work/gz" && gzip -c "$run_dir/ops-48213.json" >"$work/gz/ops-48213.json.gz"
	tar -C "$work/gz" -cf "$work/gz.tar" ops-48213.json.gz -C "$run_dir" rank-0.orr ||
		fail "tar failed"
	for a in run.tar run.tar.gz gz.tar; do
		m=ops-48213.json
		[[ $a == gz.tar ]] && m=ops-48213.json.gz
		ORR_MAX_VALUES=804 run info "$work/$a"
		expect_rc 1
		expect_in err "'$work/$a:$m': input exceeds a size limit $place"
		expect_in err "more than 804 tensor dimensions"
		ORR_MAX_VALUES=805 run info "$work/$a"
		expect_rc 0
	done
	cp "$work/cut.json" "$run_dir/ops-48213.json"
	ORR_MAX_VALUES=804 run info "$run_dir"
	expect_rc 0
	cp "$work/cut1.json" "$run_dir/ops-48213.json"
	ORR_MAX_VALUES=804 run info "$run_dir"
	expect_rc 1
	expect_in err "more than 804 tensor dimensions"
	;;
suffixes)
	cut_rank 0 48213
	cut_rank 1 48214
	mv "$run_dir/ops-48213.json" "$run_dir/ops-48213.JSON"
	gzip -c "$run_dir/ops-48214.json" >"$run_dir/ops-48214.Json.Gz"
	rm "$run_dir/ops-48214.json"
	run info "$run_dir"
	expect_rc 0
	[[ $(grep -c "events  501: op 177" "$work/out") == 2 ]] || {
		show
		fail "the ops of both processes are not merged"
	}
	[[ ! -s $work/err ]] || {
		show
		fail "warnings on the merged run directory"
	}
	;;
legacy)
	py=$(python_with 'import torch, sys; sys.exit(torch.autograd.kineto_available())')
	[[ -n $py ]] || {
		echo "skipped: no PyTorch without Kineto here" >&2
		exit 77
	}
	cut_rank 0 48213
	# A real export of such a PyTorch: ops on thread 1 of "CPU functions", relative times.
	"$py" -c '
import sys, torch
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
    torch.mm(torch.ones(4, 8), torch.ones(8, 2))
p.export_chrome_trace(sys.argv[1])' "$run_dir/ops-48213.json" || fail "torch.profiler failed"
	grep -qF '"aten::mm"' "$run_dir/ops-48213.json" || fail "no aten::mm in torch's export"
	run info "$run_dir"
	expect_rc 0
	expect_in err "skipped '$run_dir/ops-48213.json': no thread of process 48213 in it (torch.profiler's trace from a PyTorch built without Kineto"
	expect_in out "events  306: annotation 3, runtime 153"
	;;
*)
	fail "unknown case $1"
	;;
esac
echo "ok: $1"
