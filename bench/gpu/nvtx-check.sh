#!/bin/bash
# The tracer's NVTX injection on a GPU (docs/tracer.md, "Not verified without a GPU"): a
# small PyTorch loop recorded under `orrery record --skip 2 --steps 3`, about a minute on
# one GPU:
#
#   bash bench/gpu/nvtx-check.sh ORRERY [OUT]      # ORRERY: a build's or a bundle's orrery
#
# The job marks an NVTX range before CUDA initializes, turns on emit_nvtx with shapes
# (orrery_record.enable(): libtorch's NVTX instance) and marks its steps with
# orrery_record.step() (torch.cuda.nvtx: libtorch_python's instance).  Checks, on the
# recorded .orr converted to Chrome JSON: exactly ProfilerStep#2 to #4; in each, an
# aten::mm op with its input shapes, a kernel, and the kernel's launch inside an op
# (the runtime or driver call with the kernel's correlation id within an op); the device in
# the file's header (`orrery info`).  Prints one line per check; exits 1 when one fails.
set -euo pipefail

orrery=${1:?usage: $0 ORRERY [OUT]}
out=${2:-$PWD/nvtx-check}
python=${PYTHON:-python3}
[[ -x $orrery ]] || {
	echo "nvtx-check: $orrery is not executable" >&2
	exit 2
}
rm -rf "$out"
mkdir -p "$out"
cat >"$out/job.py" <<'EOF'
import torch
import orrery_record

torch.cuda.nvtx.mark("before-cuda")  # NVTX before CUDA initializes
orrery_record.enable()
a = torch.randn(256, 512, device="cuda")
b = torch.randn(512, 128, device="cuda")
for _ in range(7):
    with orrery_record.step():
        c = a @ b
        torch.cuda.synchronize()
print("job done")
EOF
"$orrery" record --skip 2 --steps 3 -o "$out/run" -- "$python" "$out/job.py" 2>&1 |
	tee "$out/record.txt"
files=("$out"/run/*.orr)
[[ ${#files[@]} == 1 ]] || {
	echo "nvtx-check: FAIL expected one .orr, got ${#files[@]}" >&2
	exit 1
}
"$orrery" info "$out/run" >"$out/info.txt"
"$orrery" convert "${files[0]}" -o "$out/run.json" >/dev/null
if ! grep -q "^  device  [0-9]" "$out/info.txt"; then
	echo "FAIL: no device in orrery info" >&2
	exit 1
fi
echo "ok: the header lists the device"
"$python" - "$out/run.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
names = [e["name"] for e in steps]
assert names == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"], names
print("ok: steps", names)
ops = [e for e in ev if e.get("cat") == "cpu_op"]
kernels = [e for e in ev if e.get("cat") == "kernel"]
calls = {e["args"].get("correlation"): e for e in ev
         if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
for s in steps:
    lo, hi = s["ts"], s["ts"] + s["dur"]
    mm = [o for o in ops if o["name"] == "aten::mm" and lo <= o["ts"] < hi]
    assert mm, ("no aten::mm in", s["name"])
    dims = mm[0]["args"].get("Input Dims")
    assert dims == [[256, 512], [512, 128]], (s["name"], dims)
    ks = [k for k in kernels if lo <= k["ts"] < hi + 1e4]
    assert ks, ("no kernel in", s["name"])
    inside = 0
    for k in ks:
        c = calls.get(k["args"].get("correlation"))
        if c and any(o["ts"] <= c["ts"] <= o["ts"] + o["dur"] for o in ops):
            inside += 1
    assert inside, ("no kernel launched inside an op in", s["name"])
    print("ok: %s: aten::mm %s, %d kernels, %d launched inside an op"
          % (s["name"], dims, len(ks), inside))
EOF
echo "nvtx-check: all checks passed ($out)"
