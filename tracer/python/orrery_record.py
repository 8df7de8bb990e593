# SPDX-License-Identifier: MIT
"""Marks training steps and operator names for `orrery record`.

`orrery record` puts this directory on PYTHONPATH, so a training script can say::

    import orrery_record

    orrery_record.enable()              # PyTorch op names and shapes as NVTX ranges
    for batch in loader:
        with orrery_record.step():      # one NVTX range "ProfilerStep#<n>" per step
            train_step(batch)

The tracer (liborrery-tracer.so) is NVTX's injection library, so it sees the NVTX
ranges of every library in the process (PyTorch's two NVTX instances, NCCL's); it
starts and stops recording at step boundaries (ORR_RECORD_SKIP, ORR_RECORD_STEPS) and
names the steps after them.  A loop driven by torch.profiler already gets
"ProfilerStep#<n>" ranges once enable() is on, so it does not need step().

Everything here is harmless outside `orrery record` (the NVTX ranges then reach no one
unless another tool listens) and without torch or CUDA (the functions then do nothing,
after one warning on stderr).  The module imports torch only when one of them is first
called.
"""

import contextlib
import os
import sys
import threading

__all__ = ["active", "enable", "step", "STEP_PREFIX"]

# The tracer's default step prefix; `orrery record --step-prefix` changes both.
STEP_PREFIX = "ProfilerStep#"

_lock = threading.Lock()
_warned = False
_next_step = 0
_emit_nvtx = None  # the entered torch.autograd.profiler.emit_nvtx, kept open
_torch = None  # torch once found usable, False once found unusable


def active():
    """True when the process runs under `orrery record` (ORR_RECORD_DIR is set)."""
    return bool(os.environ.get("ORR_RECORD_DIR"))


def _warn(why):
    global _warned
    with _lock:
        if _warned:
            return
        _warned = True
    sys.stderr.write("orrery_record: warning: %s; steps and op names are not marked\n" % why)


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


def _prefix():
    return os.environ.get("ORR_RECORD_STEP_PREFIX") or STEP_PREFIX


def enable(record_shapes=True):
    """Turns on torch.autograd.profiler.emit_nvtx for the rest of the process.

    Every PyTorch operator then pushes an NVTX range with its name (and, with
    record_shapes, its input shapes), which the tracer records as framework ops.
    Calling it again does nothing.  Returns True when emit_nvtx is on.
    """
    global _emit_nvtx
    with _lock:
        if _emit_nvtx is not None:
            return True
    torch = _torch_cuda()
    if torch is None:
        return False
    with _lock:
        if _emit_nvtx is None:
            ctx = torch.autograd.profiler.emit_nvtx(record_shapes=record_shapes)
            ctx.__enter__()
            _emit_nvtx = ctx
    return True


@contextlib.contextmanager
def step(n=None):
    """A context manager marking one training step as the NVTX range "ProfilerStep#<n>".

    n defaults to one more than the previous step (starting at 0); giving n sets the
    count, so that the next step() without n is n + 1.
    """
    global _next_step
    with _lock:
        if n is None:
            n = _next_step
        _next_step = int(n) + 1
    torch = _torch_cuda()
    if torch is None:
        yield n
        return
    torch.cuda.nvtx.range_push("%s%d" % (_prefix(), int(n)))
    try:
        yield n
    finally:
        torch.cuda.nvtx.range_pop()
