"""orrery for notebooks: the analyses of liborrery, as tables.

    import orrery
    t = orrery.load("traces/samples/tiny-2rank")
    t.summary()                       # per rank-step: step, busy, breakdown, idle explained
    t.summary("kernels")              # kernels by GPU time (also "ops", "streams", "collectives")
    t.replay()                        # per rank-step: measured, predicted, error, trust
    t.replay(scale="nccl*=0.5")       # a what-if: baseline and scenario per step
    t.critical_path()                 # each job step's critical path, segment by segment
    t.fit()                           # the structure recovered: layers, hidden, tp, pp, dp, ...
    t.diff(orrery.load("other"))      # kernels, ops and kernel classes compared per rank-step

Every table is a pandas DataFrame when pandas is installed, else a list of dicts with the
same columns.  Times are integer nanoseconds (columns *_ns), as the library gives them;
the definitions are docs/design.md's.  docs/python.md shows a session.
"""
import ctypes
import math

from . import _lib
from ._lib import OrreryError

__all__ = ["load", "Trace", "OrreryError"]
__version__ = "0.1.0"


# The breakdown of a step's GPU time (docs/design.md), as replay() names its columns.
_BREAKDOWN = ["exposed_compute_ns", "overlapped_ns", "exposed_comm_ns", "exposed_wait_ns",
              "other_ns"]


def _table(rows, columns):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows, columns=columns)


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _fail(what, path, err, diag):
    msg = _text(diag.msg) if diag is not None else ""
    raise OrreryError("cannot %s '%s': %s%s%s" % (what, path, _text(_lib.strerror(err)),
                                                  ": " if msg else "", msg))


def load(path):
    """Imports the trace at path (a file, a directory of per-rank files, an archive: what
    `orrery info` reads), builds its graph and replays it as recorded."""
    return Trace(path)


class Trace:
    """A trace, its execution graph and its replay as recorded (owned; close() frees them,
    as does the garbage collector)."""

    def __init__(self, path):
        self.path = str(path)
        self._t = self._g = self._r = None
        d = _lib.Diag()
        t, g, r = _lib.P(), _lib.P(), _lib.P()
        err = _lib.trace_import(self.path.encode(), None, ctypes.byref(t), ctypes.byref(d))
        if err:
            _fail("import", self.path, err, d)
        self._t = t
        err = _lib.graph_build(t, None, ctypes.byref(g), ctypes.byref(d))
        if err:
            self.close()
            _fail("build the graph of", self.path, err, d)
        self._g = g
        err = _lib.replay_run(g, None, ctypes.byref(r), ctypes.byref(d))
        if err:
            self.close()
            _fail("replay", self.path, err, d)
        self._r = r

    def close(self):
        if self._r:
            _lib.replay_free(self._r)
        if self._g:
            _lib.graph_free(self._g)
        if self._t:
            _lib.trace_free(self._t)
        self._t = self._g = self._r = None

    def __del__(self):
        self.close()

    def __repr__(self):
        return "orrery.Trace(%r)" % self.path

    def _live(self):
        if not self._r:
            raise OrreryError("trace '%s' is closed" % self.path)
        return self._r

    def _str(self, sid):
        return _text(_lib.trace_str(self._t, sid))

    # ---- orrery summary ----

    def summary(self, what="steps"):
        """Where the measured time goes (orrery summary): "steps" (per rank-step), "kernels"
        (by GPU time), "ops" (by CPU self time), "streams", "collectives" or "delays" (the
        launch delay, GPU start less the launch call's start, per kernel class)."""
        s = _lib.Summary()
        _lib.summary_gather(ctypes.byref(s), self.path.encode(), self._live(), None)
        try:
            return _SUMMARY[what](self, s)
        except KeyError:
            raise ValueError("summary(%r): one of %s" % (what, ", ".join(_SUMMARY))) from None
        finally:
            _lib.summary_release(ctypes.byref(s))

    def _summary_steps(self, s):
        cols = ["rank", "step", "step_ns", "busy_ns", "exposed_compute_ns", "overlapped_ns",
                "exposed_comm_ns", "exposed_wait_ns", "other_ns", "copy_ns", "idle_ns",
                "host_wait_ns", "kernel_wait_ns", "idle_other_ns"]
        rows = []
        for i in range(s.nsteps):
            x = s.steps[i]
            rows.append(dict(zip(cols, [
                x.rank, x.step, x.step_ns, x.busy_ns, x.b.exposed_compute_ns, x.b.overlapped_ns,
                x.b.exposed_comm_ns, x.b.exposed_wait_ns, x.b.other_ns, x.copy_ns,
                x.idle.idle_ns, x.idle.host_wait_ns, x.idle.kernel_wait_ns, x.idle.other_ns])))
        return _table(rows, cols)

    def _summary_items(self, v, n, named):
        cols = ["name", "count", "ns"] if named else ["rank", "stream", "count", "ns"]
        rows = []
        for i in range(n):
            x = v[i]
            if named:
                rows.append({"name": self._str(x.name), "count": x.count, "ns": x.ns})
            else:
                rows.append({"rank": x.rank, "stream": x.stream, "count": x.count, "ns": x.ns})
        return _table(rows, cols)

    def _summary_colls(self, s):
        cols = ["kind", "link", "bytes", "group", "count", "alone", "ns", "kernel"]
        rows = []
        for i in range(s.ncolls):
            c = s.colls[i]
            rows.append({"kind": _text(_lib.coll_kind_name(c.kind)),
                         "link": _text(_lib.link_name(c.link)),
                         "bytes": None if math.isnan(c.bytes) else c.bytes, "group": c.group,
                         "count": c.count, "alone": c.alone, "ns": c.ns,
                         "kernel": _text(_lib.graph_task_name(self._g, c.algo_task))})
        return _table(rows, cols)

    def _summary_delays(self, s):
        cols = ["class", "tasks", "median_ns", "p90_ns", "max_ns"]
        rows = [dict(zip(cols, [_text(d.name), d.n, d.p50, d.p90, d.max]))
                for d in s.delays if d.n]
        return _table(rows, cols)

    # ---- orrery replay ----

    def replay(self, scale=None):
        """The replay against the measured trace per rank-step (orrery replay), with the
        breakdown of the measured and the predicted step (measured_*, predicted_*); with scale,
        one what-if scenario of those rules ("GLOB=F", "cpu:GLOB=F", "latency:GLOB=F", ...,
        as --scale takes them; a string or a list): baseline and scenario per rank-step."""
        r = self._live()
        if scale is None:
            rep = _lib.ReplayReport()
            _lib.replay_report_init(ctypes.byref(rep), self.path.encode(), r, None)
            try:
                return self._replay_rows(rep)
            finally:
                _lib.replay_report_release(ctypes.byref(rep))
        return self._whatif([scale] if isinstance(scale, str) else list(scale))

    def _replay_rows(self, rep):
        cols = ["rank", "step", "measured_ns", "predicted_ns", "error", "busy_l1",
                "unexplained_ns", "trust_low"]
        parts = [side + "_" + k for side in ("measured", "predicted") for k in _BREAKDOWN]
        rows = []
        for i in range(rep.nrows):
            x = rep.rows[i]
            row = dict(zip(cols, [
                x.rank, x.s.step, x.s.measured_end_ns - x.s.measured_start_ns,
                x.s.predicted_end_ns - x.s.predicted_start_ns, x.error, x.busy_l1,
                x.unexplained.total_ns, bool(x.trust_low)]))
            for side, b in (("measured", x.measured), ("predicted", x.predicted)):
                for k in _BREAKDOWN:
                    row[side + "_" + k] = getattr(b, k)
            rows.append(row)
        return _table(rows, cols + parts)

    def _whatif(self, rules):
        scales, sc = _lib.Scales(), _lib.Scenarios()
        for rule in rules:
            if _lib.scales_add(ctypes.byref(scales), rule.encode()) < 0:
                _lib.scales_release(ctypes.byref(scales))
                raise ValueError("scale %r: GLOB=FACTOR, cpu:GLOB=FACTOR, cpu@RANK:GLOB=FACTOR, "
                                 "latency:GLOB=FACTOR or bandwidth:GLOB=FACTOR, FACTOR from "
                                 "0 to 1e6" % rule)
        _lib.scenarios_take_scales(ctypes.byref(sc), ctypes.byref(scales))
        w, d = _lib.ScenarioReport(), _lib.Diag()
        try:
            err = _lib.scenario_report_run(ctypes.byref(w), self.path.encode(), self._live(),
                                           ctypes.byref(sc), None, None, None, None,
                                           ctypes.byref(d))
            if err:
                _fail("replay the scenario of", self.path, err, d)
            base, run = w.base, w.runs[0].rep
            cols = ["rank", "step", "measured_ns", "baseline_ns", "scenario_ns", "change"]
            rows = []
            for i in range(base.nrows):
                b, s = base.rows[i], run.rows[i]
                bp = b.s.predicted_end_ns - b.s.predicted_start_ns
                sp = s.s.predicted_end_ns - s.s.predicted_start_ns
                rows.append(dict(zip(cols, [
                    b.rank, b.s.step, b.s.measured_end_ns - b.s.measured_start_ns, bp, sp,
                    sp / bp - 1 if bp > 0 else float("nan")])))
            return _table(rows, cols)
        finally:
            _lib.scenario_report_release(ctypes.byref(w))
            _lib.scenarios_release(ctypes.byref(sc))

    # ---- orrery critical-path ----

    def critical_path(self):
        """Each job step's critical path on the predicted timeline, segment by segment:
        its category (compute, communication, CPU, ...), the task and the dependency by
        which the earlier part of the path decided it (orrery critical-path)."""
        r = self._live()
        steps, n = ctypes.POINTER(_lib.ReplayStep)(), ctypes.c_size_t()
        _lib.replay_job_steps(r, ctypes.byref(steps), ctypes.byref(n))
        cols = ["step", "start_ns", "end_ns", "dur_ns", "category", "via", "task"]
        rows = []
        try:
            for k in range(n.value):
                st = steps[k]
                segs, ns = ctypes.POINTER(_lib.PathSeg)(), ctypes.c_size_t()
                _lib.replay_critical_path(r, st.predicted_start_ns, st.predicted_end_ns,
                                          ctypes.byref(segs), ctypes.byref(ns))
                for i in range(ns.value):
                    x = segs[i]
                    rows.append(dict(zip(cols, [
                        st.step, x.start_ns, x.end_ns, x.end_ns - x.start_ns,
                        _text(_lib.path_cat_name(x.cat)),
                        _text(_lib.dep_kind_name(x.via)) if x.via else None,
                        _text(_lib.graph_task_name(self._g, x.task))
                        if x.task != 0xFFFFFFFF else None])))
                _lib.libc.free(segs)
        finally:
            _lib.libc.free(steps)
        return _table(rows, cols)

    # ---- orrery fit ----

    def fit(self, rank=None):
        """The structure orrery fit recovers on one rank (global rank `rank`, default the
        first): per value (layers, hidden, heads, ..., tp, pp, dp, world) the value (0 when
        unknown), how it was found ("read", "inferred", "unknown") and why."""
        ri = _lib.graph_rank_index(self._g, -1 if rank is None else int(rank))
        if ri == _lib._MISSING:
            raise OrreryError("trace '%s' has no rank %s" % (self.path, rank))
        f = _lib.RankFit()
        _lib.rank_fit_run(self._live() and self._g, ri, self.path.encode(), None, 0,
                          ctypes.byref(f))
        try:
            v = (_lib.NamedValue * 20)()
            n = _lib.structure_values(ctypes.addressof(f) + _lib.RANK_FIT_ST, v)
            cols = ["name", "value", "how", "why"]
            rows = [{"name": _text(v[i].name), "value": v[i].v.contents.value,
                     "how": _text(_lib.value_how_name(v[i].v.contents.how)),
                     "why": _text(v[i].v.contents.why)} for i in range(n)]
            return _table(rows, cols)
        finally:
            _lib.rank_fit_release(ctypes.byref(f))

    # ---- orrery diff ----

    def diff(self, other):
        """This trace (a) against another (b), per rank-step (orrery diff): kernel classes,
        kernels and framework ops by how much their time changed."""
        a, b = _lib.DiffProfile(), _lib.DiffProfile()
        _lib.diff_profile_build(ctypes.byref(a), self.path.encode(), self._live(), False)
        _lib.diff_profile_build(ctypes.byref(b), other.path.encode(), other._live(), False)
        tabs = [_lib.DiffTable() for _ in range(3)]
        try:
            _lib.diff_class_rows(ctypes.byref(tabs[0]), ctypes.byref(a), ctypes.byref(b))
            _lib.diff_union_rows(ctypes.byref(tabs[1]), b"kernel", ctypes.byref(a.kernels),
                                 ctypes.byref(b.kernels), ctypes.byref(a), ctypes.byref(b))
            _lib.diff_op_rows(ctypes.byref(tabs[2]), ctypes.byref(a), ctypes.byref(b))
            cols = ["kind", "name", "a_ns", "b_ns", "delta_ns", "a_count", "b_count"]
            rows = []
            for t in tabs:
                for i in range(t.n):
                    x = t.v[i]
                    rows.append(dict(zip(cols, [_text(x.kind), _text(x.key), x.a, x.b,
                                                x.b - x.a, x.ca, x.cb])))
            return _table(rows, cols)
        finally:
            for t in tabs:
                _lib.diff_table_release(ctypes.byref(t))
            _lib.diff_profile_release(ctypes.byref(a))
            _lib.diff_profile_release(ctypes.byref(b))


_SUMMARY = {
    "steps": Trace._summary_steps,
    "kernels": lambda t, s: t._summary_items(s.kernels, s.nkernels, True),
    "ops": lambda t, s: t._summary_items(s.ops, s.nops, True),
    "streams": lambda t, s: t._summary_items(s.streams, s.nstreams, False),
    "collectives": Trace._summary_colls,
    "delays": Trace._summary_delays,
}
