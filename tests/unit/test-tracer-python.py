# SPDX-License-Identifier: MIT
"""Tests of tracer/python/orrery_record.py against a fake torch module.

Run by meson (suite unit) as: python3 test-tracer-python.py SOURCE_ROOT.  The fake
torch records the NVTX ranges pushed and popped and how often emit_nvtx is entered;
no real torch or GPU is needed.
"""

import atexit
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stderr


class FakeTorch:
    """Builds a module tree torch.cuda.nvtx / torch.autograd.profiler that logs calls."""

    def __init__(self, cuda=True, cuda_raises=False, kineto=True, profiler_on=False):
        self.log = []
        self.emit_nvtx_args = []
        self.profile_args = []
        log = self.log
        emit_args = self.emit_nvtx_args
        profile_args = self.profile_args

        class Profile:
            """torch.profiler.profile: logs enter, exit and the export, which writes."""

            def __init__(self, activities=None, record_shapes=False):
                profile_args.append((list(activities), record_shapes))

            def __enter__(self):
                log.append(("profile", "enter"))
                return self

            def __exit__(self, *exc):
                log.append(("profile", "exit"))
                return False

            def export_chrome_trace(self, path):
                log.append(("profile", "export"))
                with open(path, "w") as f:
                    f.write('{"traceEvents": []}')

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
        def profiler_enabled():
            """A profiler on in this thread: the user's, or one entered and not exited."""
            inside = {}
            for what, how in log:
                if what in ("emit_nvtx", "profile"):
                    inside[what] = how == "enter"
            return profiler_on or any(inside.values())

        torch.autograd = types.SimpleNamespace(
            profiler=types.SimpleNamespace(emit_nvtx=EmitNvtx),
            kineto_available=lambda: kineto,
            _profiler_enabled=profiler_enabled)
        torch.profiler = types.SimpleNamespace(
            ProfilerActivity=types.SimpleNamespace(CPU="CPU", CUDA="CUDA"),
            profile=Profile)
        self.module = torch


class Base(unittest.TestCase):
    """Saves and restores torch and the environment; loads a fresh orrery_record."""

    def setUp(self):
        self.saved_torch = sys.modules.get("torch", None)
        self.had_torch = "torch" in sys.modules
        self.saved_env = {k: os.environ.get(k) for k in (
            "ORR_RECORD_DIR", "ORR_RECORD_STEP_PREFIX", "ORR_RECORD_OPS", "ORR_RECORD_SKIP",
            "ORR_RECORD_STEPS")}
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


class RecordTest(Base):
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

    def test_step_prefix_past_the_tracers_limit_is_the_default(self):
        # as tracer/env.c: at most 127 bytes (ORR_RECORD_STEP_PREFIX_MAX), else the default
        for prefix, want in (("x" * 127, "x" * 127 + "4"), ("x" * 128, "ProfilerStep#4"),
                             ("\u00e9" * 63, "\u00e9" * 63 + "4"),
                             ("\u00e9" * 64, "ProfilerStep#4")):
            os.environ["ORR_RECORD_STEP_PREFIX"] = prefix
            fake = FakeTorch()
            rec = self.load(fake)
            with rec.step(4):
                pass
            self.assertEqual(fake.log[0], ("push", want))

    def test_enable_enters_emit_nvtx_once(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable())
        self.assertTrue(rec.enable(record_shapes=True))
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

    def test_profiler_already_on_records_no_ops(self):
        """torch.profiler on in the loop: PyTorch allows one profiler per thread."""
        for ops in ("nvtx", "profiler"):
            fake = FakeTorch(profiler_on=True)
            rec = self.load(fake)
            os.environ["ORR_RECORD_DIR"] = tempfile.gettempdir()
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertFalse(rec.enable(ops=ops))
                with rec.step():
                    pass
            lines = err.getvalue().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("already on in this thread", lines[0])
            self.assertIn("op names are not recorded", lines[0])
            self.assertEqual(fake.emit_nvtx_args, [])
            self.assertEqual(fake.profile_args, [])
            self.assertEqual(fake.log, [("push", "ProfilerStep#0"), ("pop", None)], ops)
            del os.environ["ORR_RECORD_DIR"]

    def test_enable_again_with_its_own_profiler_on(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable())
        self.assertTrue(fake.module.autograd._profiler_enabled())
        self.assertTrue(rec.enable())
        self.assertEqual(fake.emit_nvtx_args, [True])

    def test_without_torch_is_noop_with_one_warning(self):
        self.check_noop(None, "torch is not installed")

    def test_without_cuda_is_noop_with_one_warning(self):
        self.check_noop(FakeTorch(cuda=False), "CUDA is not available")

    def test_broken_cuda_is_noop_with_one_warning(self):
        self.check_noop(FakeTorch(cuda_raises=True), "driver too old")


class ProfilerOpsTest(Base):
    """enable(ops="profiler"): a CPU-only torch.profiler over the tracer's window."""

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp()
        self.ops_file = os.path.join(self.dir, "ops-%d.json" % os.getpid())
        os.environ["ORR_RECORD_DIR"] = self.dir

    def tearDown(self):
        rec = sys.modules.get("orrery_record")
        if rec is not None and rec._profiler is not None:
            atexit.unregister(rec._profiler.finish)
        shutil.rmtree(self.dir)
        super().tearDown()

    def steps(self, rec, fake, n):
        for i in range(n):
            with rec.step():
                fake.log.append(("body", i))

    def test_no_window_runs_from_enable_to_exit(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable(ops="profiler"))
        self.assertTrue(rec.enable(ops="profiler"))
        self.assertEqual(fake.profile_args, [(["CPU"], True)])
        self.assertEqual(fake.emit_nvtx_args, [])
        self.steps(rec, fake, 2)
        self.assertFalse(os.path.exists(self.ops_file))
        rec._profiler.finish()  # what atexit calls
        rec._profiler.finish()
        self.assertEqual([e for e in fake.log if e[0] == "profile"],
                         [("profile", "enter"), ("profile", "exit"), ("profile", "export")])
        self.assertEqual(fake.log[0], ("profile", "enter"))
        self.assertTrue(os.path.exists(self.ops_file))
        self.assertEqual(os.listdir(self.dir), [os.path.basename(self.ops_file)])

    def test_window_from_skip_to_skip_plus_steps(self):
        os.environ["ORR_RECORD_SKIP"] = "1"
        os.environ["ORR_RECORD_STEPS"] = "2"
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable(ops="profiler", record_shapes=False))
        self.assertEqual(fake.log, [])
        self.steps(rec, fake, 4)
        self.assertEqual(fake.log, [
            ("push", "ProfilerStep#0"), ("body", 0), ("pop", None),
            ("profile", "enter"),
            ("push", "ProfilerStep#1"), ("body", 1), ("pop", None),
            ("push", "ProfilerStep#2"), ("body", 2), ("pop", None),
            ("profile", "exit"), ("profile", "export"),
            ("push", "ProfilerStep#3"), ("body", 3), ("pop", None),
        ])
        self.assertEqual(fake.profile_args, [(["CPU"], False)])
        self.assertTrue(os.path.exists(self.ops_file))

    def test_window_counts_read_as_the_tracer_reads_them(self):
        # tracer/env.c: ASCII digits, at most about 2^63; anything else is 0 (from the
        # start), never an exception in the recorded job
        for skip in ("\u00b2", "\u0661", "1e3", " 1", "9223372036854775807", "-1"):
            os.environ["ORR_RECORD_SKIP"] = skip
            fake = FakeTorch()
            rec = self.load(fake)
            self.assertTrue(rec.enable(ops="profiler"), skip)
            self.assertEqual(fake.log, [("profile", "enter")], skip)
            atexit.unregister(rec._profiler.finish)
        os.environ["ORR_RECORD_SKIP"] = "922337203685477579"
        rec = self.load(FakeTorch())
        self.assertEqual(rec._env_count("ORR_RECORD_SKIP"), 922337203685477579)

    def test_mode_from_environment(self):
        os.environ["ORR_RECORD_OPS"] = "profiler"
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable())
        self.assertEqual(len(fake.profile_args), 1)
        self.assertEqual(fake.emit_nvtx_args, [])

    def test_none_records_no_ops(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertFalse(rec.enable(ops="none"))
        self.steps(rec, fake, 1)
        self.assertEqual(fake.profile_args, [])
        self.assertEqual(fake.emit_nvtx_args, [])
        self.assertEqual(fake.log, [("push", "ProfilerStep#0"), ("body", 0), ("pop", None)])

    def test_unknown_mode_is_an_error(self):
        rec = self.load(FakeTorch())
        with self.assertRaises(ValueError):
            rec.enable(ops="cupti")

    def test_unknown_mode_from_environment_warns(self):
        # the environment is not the script's to check: the job must not die of it
        os.environ["ORR_RECORD_OPS"] = "cupti"
        fake = FakeTorch()
        rec = self.load(fake)
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertTrue(rec.enable())
        self.assertIn("ORR_RECORD_OPS='cupti'", err.getvalue())
        self.assertEqual(len(err.getvalue().splitlines()), 1)
        self.assertEqual(len(fake.emit_nvtx_args), 1)
        self.assertEqual(fake.profile_args, [])

    def test_other_mode_after_nvtx_is_an_error(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable())
        for other in ("profiler", "none"):
            with self.assertRaisesRegex(RuntimeError, "already recorded with ops='nvtx'"):
                rec.enable(ops=other)
        self.assertTrue(rec.enable())  # the mode on, whatever ORR_RECORD_OPS says
        os.environ["ORR_RECORD_OPS"] = "profiler"
        self.assertTrue(rec.enable())
        self.assertEqual(fake.profile_args, [])
        self.assertEqual(fake.log, [("emit_nvtx", "enter")])

    def test_other_mode_after_profiler_is_an_error(self):
        fake = FakeTorch()
        rec = self.load(fake)
        self.assertTrue(rec.enable(ops="profiler"))
        with self.assertRaisesRegex(RuntimeError, "already recorded with ops='profiler'"):
            rec.enable(ops="nvtx")
        self.assertTrue(rec.enable())
        self.assertEqual(fake.emit_nvtx_args, [])
        self.assertEqual(fake.log, [("profile", "enter")])

    def test_other_record_shapes_is_an_error(self):
        # record_shapes is fixed as the mode's profiler starts: kept silently before
        for ops, first in (("nvtx", False), ("profiler", True)):
            fake = FakeTorch()
            rec = self.load(fake)
            self.assertTrue(rec.enable(ops=ops, record_shapes=first))
            for again in ({"ops": ops}, {}):
                with self.assertRaisesRegex(
                        RuntimeError, r"enable\(record_shapes=%r\): ops are already recorded "
                        r"with ops=%r and record_shapes=%r" % (not first, ops, first)):
                    rec.enable(record_shapes=not first, **again)
            self.assertTrue(rec.enable(ops=ops))  # the mode's own, unsaid
            self.assertTrue(rec.enable(record_shapes=first))
            self.assertEqual(fake.emit_nvtx_args + [a[1] for a in fake.profile_args],
                             [first])

    def test_mode_that_recorded_nothing_can_be_followed(self):
        # a script may fall back: enable(ops="profiler") or enable(ops="nvtx")
        fake = FakeTorch(kineto=False)
        rec = self.load(fake)
        with redirect_stderr(io.StringIO()):
            self.assertFalse(rec.enable(ops="none"))
            self.assertFalse(rec.enable(ops="profiler"))
        self.assertTrue(rec.enable(ops="nvtx"))
        self.assertEqual(fake.log, [("emit_nvtx", "enter")])

    def check_refused(self, fake, reason):
        rec = self.load(fake)
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertFalse(rec.enable(ops="profiler"))
            self.assertFalse(rec.enable(ops="profiler"))
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(reason, lines[0])
        self.assertIn("op names are not recorded", lines[0])
        self.assertEqual(fake.profile_args, [])

    def test_without_kineto_is_refused(self):
        self.check_refused(FakeTorch(kineto=False), "built without Kineto")

    def test_outside_record_is_refused(self):
        del os.environ["ORR_RECORD_DIR"]
        self.check_refused(FakeTorch(), "no ORR_RECORD_DIR")

    def test_real_torch(self):
        """The module with a real PyTorch (python3 or Debian's), in a child process."""
        py = next((p for p in ("python3", "/usr/bin/python3")
                   if shutil.which(p) and subprocess.run(
                       [p, "-c", "import torch"], capture_output=True).returncode == 0),
                  None)
        if py is None:
            self.skipTest("no PyTorch here")
        script = (
            "import orrery_record, os, threading, torch\n"
            "ok = orrery_record.enable(ops='profiler')\n"
            "torch.mm(torch.ones(4, 8), torch.ones(8, 2))\n"
            "print(ok, os.getpid(), threading.get_native_id())\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(sys.modules["orrery_record"].__file__)
                   if "orrery_record" in sys.modules else MODULE_DIR)
        out = subprocess.run([py, "-c", script], env=env, capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        ok, pid, tid = out.stdout.split()
        kineto = subprocess.run(
            [py, "-c", "import sys, torch; sys.exit(not torch.autograd.kineto_available())"]
        ).returncode == 0
        path = os.path.join(self.dir, "ops-%s.json" % pid)
        if not kineto:
            self.assertEqual(ok, "False")
            self.assertIn("built without Kineto", out.stderr)
            self.assertFalse(os.path.exists(path))
            return
        self.assertEqual(ok, "True")
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        mm = [e for e in events if e.get("name") == "aten::mm"]
        self.assertEqual(len(mm), 1, events)
        self.assertEqual((str(mm[0]["pid"]), str(mm[0]["tid"])), (pid, tid))
        self.assertEqual(mm[0]["args"]["Input Dims"], [[4, 8], [8, 2]])


MODULE_DIR = None

if __name__ == "__main__":
    root = sys.argv.pop(1) if len(sys.argv) > 1 else os.environ.get("ORR_SOURCE_ROOT", ".")
    MODULE_DIR = os.path.join(root, "tracer", "python")
    sys.path.insert(0, MODULE_DIR)
    unittest.main(verbosity=2)
