# SPDX-License-Identifier: MIT
"""Marks training steps and operator names for `orrery record`.

`orrery record` puts this directory on PYTHONPATH, so a training script can say::

    import orrery_record

    orrery_record.enable()              # PyTorch op names and shapes as NVTX ranges
    for batch in loader:
        with orrery_record.step():      # one NVTX range "ProfilerStep#<n>" per step
            train_step(batch)

enable(ops="profiler") (or ORR_RECORD_OPS=profiler) takes the ops from a CPU-only
torch.profiler session instead (RecordFunction observed with record_shapes, no CUPTI),
written as ORR_RECORD_DIR/ops-<pid>.json when the step window ends or the process exits;
orrery's import puts them on the tracer's threads (docs/tracer.md).

The tracer (liborrery-tracer.so) is NVTX's injection library, so it sees the NVTX
ranges of every library in the process (PyTorch's two NVTX instances, NCCL's); it
starts and stops recording at step boundaries (ORR_RECORD_SKIP, ORR_RECORD_STEPS) and
names the steps after them.  Take torch.profiler out of the loop under `orrery
record` and mark the steps with step(): PyTorch allows one profiler per thread, which
enable() takes (a torch.profiler started after it raises "Profiler is already enabled on
this thread"; one already on makes enable() record no ops, with a warning), and
torch.profiler's CUDA activities would take CUPTI from the tracer.

Everything here is harmless outside `orrery record` (the NVTX ranges then reach no one
unless another tool listens) and without torch or CUDA (the functions then do nothing,
after one warning on stderr).  The module imports torch only when one of them is first
called.
"""

import atexit
import contextlib
import os
import sys
import threading

__all__ = ["active", "enable", "step", "OPS_MODES", "STEP_PREFIX"]

# How enable() records ops: NVTX ranges of emit_nvtx, a CPU-only torch.profiler
# session, or not at all.  ORR_RECORD_OPS chooses when enable() is not told.
OPS_MODES = ("nvtx", "profiler", "none")

# The tracer's default step prefix; `orrery record --step-prefix` changes both.
STEP_PREFIX = "ProfilerStep#"

_lock = threading.Lock()
_warned = False
_next_step = 0
_steps_begun = 0  # step() calls so far, whatever numbers they were given
_emit_nvtx = None  # the entered torch.autograd.profiler.emit_nvtx, kept open
_nvtx_shapes = None  # the record_shapes _emit_nvtx was entered with
_torch = None  # torch once found usable, False once found unusable
_profiler = None  # the ops session of enable(ops="profiler"): _OpsSession


def active():
    """True when the process runs under `orrery record` (ORR_RECORD_DIR is set)."""
    return bool(os.environ.get("ORR_RECORD_DIR"))


def _warn(why, what="steps and op names are not marked"):
    global _warned
    with _lock:
        if _warned:
            return
        _warned = True
    sys.stderr.write("orrery_record: warning: %s; %s\n" % (why, what))


def _torch_cuda():
    """The torch module when torch with CUDA is usable, else None (after one warning).

    The answer is kept: step() asks once per step.
    """
    global _torch
    if _torch is None:
        _torch = _find_torch() or False
    return _torch or None


def _find_torch():
    try:
        import torch
    except ImportError:
        _warn("torch is not installed")
        return None
    try:
        available = torch.cuda.is_available()
    except Exception as e:  # a broken CUDA install raises instead of answering
        _warn("torch.cuda is not usable (%s)" % e)
        return None
    if not available:
        _warn("CUDA is not available to torch")
        return None
    return torch


# The longest ORR_RECORD_STEP_PREFIX the tracer takes, in bytes (include/orrery/native.h's
# ORR_RECORD_STEP_PREFIX_MAX): it ignores a longer one for STEP_PREFIX, and so do we.
_STEP_PREFIX_MAX = 127


def _prefix():
    p = os.environ.get("ORR_RECORD_STEP_PREFIX")
    return p if p and len(os.fsencode(p)) <= _STEP_PREFIX_MAX else STEP_PREFIX


def _env_count(name):
    """A whole non-negative number from the environment, else 0, as the tracer reads it
    (tracer/env.c): ASCII digits only, and past about 2^63 malformed (0)."""
    v = os.environ.get(name, "")
    if not v or any(c not in "0123456789" for c in v):
        return 0
    n = 0
    for c in v:
        if n > (2**63 - 1 - 9) // 10:
            return 0
        n = n * 10 + ord(c) - ord("0")
    return n


class _OpsSession:
    """A CPU-only torch.profiler session over the tracer's step window.

    Its ops go to ORR_RECORD_DIR/ops-<pid>.json.  With ORR_RECORD_SKIP = K it starts at
    the start of the (K+1)-th step() (before its NVTX range, so that its start-up is not
    in the step), else at once; with ORR_RECORD_STEPS = N it stops and writes after the
    (K+N)-th step() ends, else at exit.
    """

    def __init__(self, torch, record_shapes):
        self.torch = torch
        self.record_shapes = record_shapes
        self.skip = _env_count("ORR_RECORD_SKIP")
        self.steps = _env_count("ORR_RECORD_STEPS")
        self.prof = None
        self.done = False
        self.path = os.path.join(os.environ["ORR_RECORD_DIR"], "ops-%d.json" % os.getpid())
        if self.skip == 0:
            self.start()
        atexit.register(self.finish)

    def start(self):
        if self.prof is not None or self.done:
            return
        tp = self.torch.profiler
        self.prof = tp.profile(activities=[tp.ProfilerActivity.CPU],
                               record_shapes=self.record_shapes)
        self.prof.__enter__()

    def finish(self):
        """Stops the session and writes its trace (under a temporary name, then renamed)."""
        if self.prof is None or self.done:
            self.done = True
            return
        self.done = True
        prof, self.prof = self.prof, None
        prof.__exit__(None, None, None)
        tmp = self.path + ".tmp"
        try:
            prof.export_chrome_trace(tmp)
            os.replace(tmp, self.path)
        except Exception as e:  # a full disk must not end the job
            sys.stderr.write("orrery_record: warning: cannot write %s (%s); its ops are "
                             "not recorded\n" % (self.path, e))

    def step_begins(self, index):
        if index == self.skip:
            self.start()

    def step_ends(self, index):
        if self.steps and index == self.skip + self.steps - 1:
            self.finish()


_NO_OPS = "op names are not recorded"


def _torch_any():
    """The torch module, CUDA or not, else None (after one warning)."""
    try:
        import torch
    except ImportError:
        _warn("torch is not installed", _NO_OPS)
        return None
    return torch


def _other_profiler(torch):
    """True, after one warning, when a profiler of PyTorch's (torch.profiler, emit_nvtx,
    autograd's profile) is already on in this thread and none of ours is: PyTorch allows
    one, so ours could not start (called without _lock)."""
    enabled = getattr(torch.autograd, "_profiler_enabled", None)
    with _lock:
        ours = _mode_on() is not None
    if ours or enabled is None or not enabled():
        return False
    _warn("a PyTorch profiler (torch.profiler, emit_nvtx) is already on in this thread, "
          "and PyTorch allows one; take it out of the loop and mark steps with step()",
          _NO_OPS)
    return True


def _enable_profiler(record_shapes):
    global _profiler
    if not active():
        _warn("ops=\"profiler\" writes its ops beside the tracer's files, and no "
              "ORR_RECORD_DIR is set (not under orrery record)", _NO_OPS)
        return False
    torch = _torch_any()
    if torch is None:
        return False
    if not torch.autograd.kineto_available():
        _warn("this PyTorch was built without Kineto: its profiler's trace has no "
              "thread ids or times to match the tracer's", _NO_OPS)
        return False
    if _other_profiler(torch):
        return False
    with _lock:
        _refuse_other("profiler", record_shapes)
        if _profiler is None:
            _profiler = _OpsSession(torch, record_shapes)
    return True


def _mode_on():
    """The mode whose ops are being recorded, else None (called with _lock held)."""
    if _emit_nvtx is not None:
        return "nvtx"
    if _profiler is not None:
        return "profiler"
    return None


def _shapes_on():
    """The record_shapes of the mode on, else None (called with _lock held)."""
    if _emit_nvtx is not None:
        return _nvtx_shapes
    if _profiler is not None:
        return _profiler.record_shapes
    return None


def _refuse_other(ops, record_shapes=None):
    """Raises when ops are already recorded in another mode than ops, or in it with
    another record_shapes than one given (with _lock held).

    One mode per process, as PyTorch allows one profiler per thread ("Profiler is
    already enabled on this thread."): both on would record every op twice, and a
    switch would end the first mode's ops inside the step window.  record_shapes is
    fixed as the mode's profiler starts, so it cannot change either.
    """
    on = _mode_on()
    if on is not None and on != ops:
        raise RuntimeError("orrery_record.enable(ops=%r): ops are already recorded with "
                           "ops=%r in this process, which cannot be switched or combined"
                           % (ops, on))
    shapes = _shapes_on()
    if on is not None and record_shapes is not None and bool(record_shapes) != shapes:
        raise RuntimeError("orrery_record.enable(record_shapes=%r): ops are already "
                           "recorded with ops=%r and record_shapes=%r in this process, "
                           "which cannot be changed" % (record_shapes, on, shapes))


def enable(record_shapes=None, ops=None):
    """Records every PyTorch operator's name (and, with record_shapes, its input shapes
    and dtypes) for the rest of the process, in one of OPS_MODES:

    - "nvtx" (the default): torch.autograd.profiler.emit_nvtx, every op an NVTX range
      that the tracer records as a framework op;
    - "profiler": a CPU-only torch.profiler session (record_shapes, no CUPTI) over the
      step window, written as ORR_RECORD_DIR/ops-<pid>.json, which orrery's import
      puts on the tracer's threads; needs a PyTorch with Kineto and orrery record;
    - "none": no op names (steps only).

    ops defaults to the mode already on, else ORR_RECORD_OPS (one that is none of them:
    a warning, then "nvtx"), else "nvtx"; record_shapes to the mode on's, else True.
    Calling it again in the mode on does nothing; in another mode (ops="none" included),
    or with another record_shapes than the mode on's, it raises RuntimeError naming both.
    A call that recorded nothing (it returned False) turns no mode on.
    Returns True when ops are recorded.
    """
    global _emit_nvtx, _nvtx_shapes
    with _lock:
        on = _mode_on()
        if ops is None and on is not None:
            _refuse_other(on, record_shapes)
            return True
    if ops is None:
        ops = os.environ.get("ORR_RECORD_OPS") or "nvtx"
        if ops not in OPS_MODES:  # the environment's, not the script's: not fatal
            sys.stderr.write("orrery_record: warning: ORR_RECORD_OPS=%r is none of %s; "
                             "nvtx is used\n" % (ops, ", ".join(OPS_MODES)))
            ops = "nvtx"
    if ops not in OPS_MODES:
        raise ValueError("ops must be one of %s, not %r" % (", ".join(OPS_MODES), ops))
    with _lock:
        _refuse_other(ops, record_shapes)
        if record_shapes is None:  # the mode on's (ops), else True
            record_shapes = _shapes_on() if _mode_on() == ops else True
    record_shapes = bool(record_shapes)
    if ops == "none":
        return False
    if ops == "profiler":
        return _enable_profiler(record_shapes)
    with _lock:
        if _emit_nvtx is not None:
            return True
    torch = _torch_cuda()
    if torch is None or _other_profiler(torch):
        return False
    with _lock:
        _refuse_other(ops, record_shapes)  # another thread may have turned one on
        if _emit_nvtx is None:
            ctx = torch.autograd.profiler.emit_nvtx(record_shapes=record_shapes)
            ctx.__enter__()
            _emit_nvtx, _nvtx_shapes = ctx, record_shapes
    return True


@contextlib.contextmanager
def step(n=None):
    """A context manager marking one training step as the NVTX range "ProfilerStep#<n>".

    n defaults to one more than the previous step (starting at 0); giving n sets the
    count, so that the next step() without n is n + 1.
    """
    global _next_step, _steps_begun
    with _lock:
        if n is None:
            n = _next_step
        _next_step = int(n) + 1
        index = _steps_begun  # the tracer counts step markers in the order they come
        _steps_begun += 1
    if _profiler is not None:
        _profiler.step_begins(index)
    try:
        torch = _torch_cuda()
        if torch is None:
            yield n
            return
        torch.cuda.nvtx.range_push("%s%d" % (_prefix(), int(n)))
        try:
            yield n
        finally:
            torch.cuda.nvtx.range_pop()
    finally:
        if _profiler is not None:
            _profiler.step_ends(index)
