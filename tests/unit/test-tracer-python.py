# SPDX-License-Identifier: MIT
"""Tests of tracer/python/orrery_record.py against a fake torch module.

Run by meson (suite unit) as: python3 test-tracer-python.py SOURCE_ROOT.  The fake
torch records the NVTX ranges pushed and popped and how often emit_nvtx is entered;
no real torch or GPU is needed.
"""

import importlib
import io
import os
import sys
import types
import unittest
from contextlib import redirect_stderr


class FakeTorch:
    """Builds a module tree torch.cuda.nvtx / torch.autograd.profiler that logs calls."""

    def __init__(self, cuda=True, cuda_raises=False):
        self.log = []
        self.emit_nvtx_args = []
        log = self.log
        emit_args = self.emit_nvtx_args

        def is_available():
            if cuda_raises:
                raise RuntimeError("driver too old")
            return cuda

        class EmitNvtx:
            def __init__(self, enabled=True, record_shapes=False):
                emit_args.append(record_shapes)

            def __enter__(self):
                log.append(("emit_nvtx", "enter"))
                return self

            def __exit__(self, *exc):
                log.append(("emit_nvtx", "exit"))
                return False

        torch = types.ModuleType("torch")
        torch.cuda = types.SimpleNamespace(
            is_available=is_available,
            nvtx=types.SimpleNamespace(
                range_push=lambda name: log.append(("push", name)),
                range_pop=lambda: log.append(("pop", None)),
            ),
        )
        torch.autograd = types.SimpleNamespace(
            profiler=types.SimpleNamespace(emit_nvtx=EmitNvtx))
        self.module = torch


class RecordTest(unittest.TestCase):
    def setUp(self):
        self.saved_torch = sys.modules.get("torch", None)
        self.had_torch = "torch" in sys.modules
        self.saved_env = {k: os.environ.get(k) for k in ("ORR_RECORD_DIR",
                                                         "ORR_RECORD_STEP_PREFIX")}
        for k in self.saved_env:
            os.environ.pop(k, None)

    def tearDown(self):
        if self.had_torch:
            sys.modules["torch"] = self.saved_torch
        else:
            sys.modules.pop("torch", None)
        for k, v in self.saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def load(self, torch):
        """A fresh orrery_record with TORCH (a FakeTorch, or None for 'not installed')."""
        sys.modules["torch"] = torch.module if torch else None
        sys.modules.pop("orrery_record", None)
        return importlib.import_module("orrery_record")

    def test_step_pushes_numbered_ranges(self):
        fake = FakeTorch()
        rec = self.load(fake)
        for i in range(3):
            with rec.step() as n:
                self.assertEqual(n, i)
                fake.log.append(("body", i))
        self.assertEqual(fake.log, [
            ("push", "ProfilerStep#0"), ("body", 0), ("pop", None),
            ("push", "ProfilerStep#1"), ("body", 1), ("pop", None),
            ("push", "ProfilerStep#2"), ("body", 2), ("pop", None),
        ])

    def test_step_explicit_number_continues_count(self):
        fake = FakeTorch()
        rec = self.load(fake)
        with rec.step(10):
            pass
        with rec.step():
            pass
        self.assertEqual([e for e in fake.log if e[0] == "push"],
                         [("push", "ProfilerStep#10"), ("push", "ProfilerStep#11")])

    def test_step_pops_on_exception(self):
        fake = FakeTorch()
        rec = self.load(fake)
        with self.assertRaises(ValueError):
            with rec.step():
                raise ValueError("boom")
        self.assertEqual(fake.log, [("push", "ProfilerStep#0"), ("pop", None)])

    def test_step_prefix_from_environment(self):
        os.environ["ORR_RECORD_STEP_PREFIX"] = "iteration "
        fake = FakeTorch()
        rec = self.load(fake)
        with rec.step(4):
            pass
        self.assertEqual(fake.log[0], ("push", "iteration 4"))

    def test_enable_enters_emit_nvtx_once(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable())
        self.assertTrue(rec.enable(record_shapes=False))
        self.assertEqual(fake.log, [("emit_nvtx", "enter")])
        self.assertEqual(fake.emit_nvtx_args, [True])

    def test_enable_passes_record_shapes(self):
        fake = FakeTorch()
        rec = self.load(fake)
        rec.enable(record_shapes=False)
        self.assertEqual(fake.emit_nvtx_args, [False])

    def test_active_follows_record_dir(self):
        rec = self.load(FakeTorch())
        self.assertFalse(rec.active())
        os.environ["ORR_RECORD_DIR"] = "/tmp/run"
        self.assertTrue(rec.active())
        os.environ["ORR_RECORD_DIR"] = ""
        self.assertFalse(rec.active())

    def check_noop(self, torch, reason):
        rec = self.load(torch)
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertFalse(rec.enable())
            for i in range(3):
                with rec.step() as n:
                    self.assertEqual(n, i)
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("orrery_record: warning: ", lines[0])
        self.assertIn(reason, lines[0])
        if torch:
            self.assertEqual(torch.log, [])

    def test_without_torch_is_noop_with_one_warning(self):
        self.check_noop(None, "torch is not installed")

    def test_without_cuda_is_noop_with_one_warning(self):
        self.check_noop(FakeTorch(cuda=False), "CUDA is not available")

    def test_broken_cuda_is_noop_with_one_warning(self):
        self.check_noop(FakeTorch(cuda_raises=True), "driver too old")


if __name__ == "__main__":
    root = sys.argv.pop(1) if len(sys.argv) > 1 else os.environ.get("ORR_SOURCE_ROOT", ".")
    sys.path.insert(0, os.path.join(root, "tracer", "python"))
    unittest.main(verbosity=2)
