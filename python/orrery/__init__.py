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
    t.estimate(tp=4)                  # another configuration of the traced job (orrery estimate)
    t.whatif(gpus=(8, 16))            # every layout on 8 to 16 GPUs (orrery whatif)
    orrery.estimate(gpu="h100-sxm", layers=24, hidden=2048, heads=16, seq=2048, tp=2)
    orrery.whatif(gpus=8, gpu="h100-sxm", layers=24, hidden=2048, heads=16, seq=2048,
                  global_batch=64)    # the same without a trace, from a description

Every table is a pandas DataFrame when pandas is installed, else a list of dicts with the
same columns.  Times are integer nanoseconds (columns *_ns), as the library gives them;
the definitions are docs/design.md's.  docs/python.md shows a session.
"""
import ctypes
import errno
import math
import os

from . import _lib
from ._lib import OrreryError

__all__ = ["load", "Trace", "OrreryError", "estimate", "whatif"]
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


def estimate(**description):
    """A configuration estimated from a model description alone (orrery estimate without a
    trace): gpu= and the model (layers=, hidden=, heads=, seq=, ...), options named as the
    command's with underscores (tp=2, micro_batch=4, recompute="full", costs="FILE", ...).
    One row, the fields of orrery estimate --format=json (docs/orrery-estimate.md)."""
    o = _estimate_options(description)
    e, d = _lib.Estimate(), _lib.Diag()
    err = _lib.estimate_describe(ctypes.byref(o), ctypes.byref(e), ctypes.byref(d))
    if err:
        _estimate_fail(err, d, o)
    return _table([_estimate_row(e)], _ESTIMATE_COLUMNS)


def whatif(gpus, **description):
    """Every layout of a described model on a GPU budget (orrery whatif without a trace):
    gpus an int or (min, max); the model as estimate() takes it and global_batch=; the
    lists tp=, pp=, cp=, vpp=, micro_batch=, first_stage_layers=, last_stage_layers= (an
    int or a list), recompute= (a mode or a list), sequence_parallel= and
    distributed_optimizer= ("auto", True, False), allow_cross_node_tp=, jobs=.  One row
    per configuration in the sweep's order, the columns of orrery whatif --format=csv."""
    return _whatif(None, 0, gpus, description)


def _cpath(path, what="path"):
    """path as the C library takes it: the file system's bytes (bytes, os.PathLike or str, a
    name that is not UTF-8 included); a NUL byte in it is refused, as C would read only
    what is before it (another file)."""
    b = os.fsencode(path)
    if b"\0" in b:
        raise ValueError("%s %r: a NUL byte in it" % (what, path))
    return b


def load(path):
    """Imports the trace at path (a file, a directory of per-rank files, an archive: what
    `orrery info` reads), builds its graph and replays it as recorded."""
    return Trace(path)


class Trace:
    """A trace, its execution graph and its replay as recorded (owned; close() frees them,
    as does the garbage collector)."""

    def __init__(self, path):
        self.path = os.fsdecode(os.fspath(path))
        self._t = self._g = self._r = None
        d = _lib.Diag()
        t, g, r = _lib.P(), _lib.P(), _lib.P()
        err = _lib.trace_import(_cpath(self.path), None, ctypes.byref(t), ctypes.byref(d))
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
        _lib.summary_gather(ctypes.byref(s), _cpath(self.path), self._live(), None)
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
        one what-if scenario of those rules ("GLOB=F", "gpu@RANK:GLOB=F", "cpu:GLOB=F", ...,
        as --scale takes them; a string or a list): baseline and scenario per rank-step."""
        r = self._live()
        if scale is None:
            rep = _lib.ReplayReport()
            _lib.replay_report_init(ctypes.byref(rep), _cpath(self.path), r, None)
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
                raise ValueError("scale %r: GLOB=FACTOR, gpu@RANK:GLOB=FACTOR, cpu:GLOB=FACTOR, "
                                 "cpu@RANK:GLOB=FACTOR, latency:GLOB=FACTOR or "
                                 "bandwidth:GLOB=FACTOR, FACTOR from 0 to 1e6" % rule)
        _lib.scenarios_take_scales(ctypes.byref(sc), ctypes.byref(scales))
        w, d = _lib.ScenarioReport(), _lib.Diag()
        try:
            err = _lib.scenario_report_run(ctypes.byref(w), _cpath(self.path), self._live(),
                                           ctypes.byref(sc), None, None, None, None,
                                           ctypes.byref(d))
            if err:
                _fail("replay the scenario of", self.path, err, d)
            base, run = w.base, w.runs[0].rep
            cols = ["rank", "step", "measured_ns", "baseline_ns", "scenario_ns", "change"]
            rows = []
            for i in range(base.nrows):
                b, s = base.rows[i], run.rows[i]
                rows.append(dict(zip(cols, [
                    b.rank, b.s.step, b.s.measured_end_ns - b.s.measured_start_ns,
                    b.s.predicted_end_ns - b.s.predicted_start_ns,
                    s.s.predicted_end_ns - s.s.predicted_start_ns,
                    _lib.scenario_change(ctypes.byref(b), ctypes.byref(s))])))
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
        _lib.rank_fit_run(self._live() and self._g, ri, _cpath(self.path), None, 0,
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
        _lib.diff_profile_build(ctypes.byref(a), _cpath(self.path), self._live(), False)
        _lib.diff_profile_build(ctypes.byref(b), _cpath(other.path), other._live(), False)
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


    # ---- orrery estimate and whatif ----

    def _rank_index(self, options):
        rank = options.get("rank")
        ri = _lib.graph_rank_index(self._g, -1 if rank is None else int(rank))
        if ri == _lib._MISSING:
            raise OrreryError("%s: no rank %s in the trace" % (self.path, rank))
        return ri

    def estimate(self, **options):
        """This trace's job in another configuration (orrery estimate TRACE): options named
        as the command's with underscores (layers=48, tp=4, dp=8, micro_batch=2,
        global_batch=..., recompute="full", launch_us=..., costs="FILE", rank=...); every
        other size as the trace recorded it.  One row, the fields of orrery estimate
        --format=json: method, iteration_ns, replayed_ns, tokens_per_s_per_gpu, mfu, ...,
        the breakdown's parts and the target configuration."""
        self._live()
        o = _estimate_options(options)
        o.trace = _cpath(self.path)
        ri = self._rank_index(options)
        b, d = _lib.EstimateBase(), _lib.Diag()
        err = _lib.estimate_base_open(ctypes.byref(o), self._g, ri, ctypes.byref(b),
                                      ctypes.byref(d))
        if err:
            _estimate_fail(err, d)
        try:
            err = _lib.estimate_trace(ctypes.byref(o), ctypes.byref(b), ctypes.byref(d))
            if err:
                _estimate_fail(err, d)
            return _table([_estimate_row(b.e)], _ESTIMATE_COLUMNS)
        finally:
            _lib.estimate_base_close(ctypes.byref(b))

    def whatif(self, gpus, **options):
        """Every layout of this trace's model on a GPU budget (orrery whatif TRACE), each
        estimated as estimate() would: gpus an int or (min, max); options as the
        module's whatif() takes them.  One row per configuration in the sweep's order, the
        columns of orrery whatif --format=csv (recorded: the trace's own layout)."""
        self._live()
        return _whatif(self, self._rank_index(options), gpus, options)


_SUMMARY = {
    "steps": Trace._summary_steps,
    "kernels": lambda t, s: t._summary_items(s.kernels, s.nkernels, True),
    "ops": lambda t, s: t._summary_items(s.ops, s.nops, True),
    "streams": lambda t, s: t._summary_items(s.streams, s.nstreams, False),
    "collectives": Trace._summary_colls,
    "delays": Trace._summary_delays,
}


# ---- orrery estimate and whatif: options in, rows out ----

_CHOICES = {  # option: (field, its values in the library's order)
    "recompute": ("recompute", ["none", "selective", "full"]),
    "precision": ("precision", ["bf16", "fp16", "fp32", "fp8"]),
    "attention": ("attention", ["flash", "unfused"]),
    "normalization": ("norm", ["LayerNorm", "RMSNorm"]),
    "position_embedding_type": ("positions", ["learned_absolute", "rope"]),
}
_FLAGS = {"sequence_parallel": "sp", "distributed_optimizer": "distopt", "fsdp": "fsdp",
          "overlap_grad_reduce": "overlap_grad", "forward_only": "forward_only",
          "swiglu": "swiglu", "untie_embeddings_and_output_weights": "untie",
          "p2p_scatter_gather": "p2p_scatter", "sync_timers": "sync_timers",
          "sync_layers": "sync_layers", "transfer_costs": "transfer_costs"}
_COUNTS = {"global_batch": "global_batch", "gpus_per_node": "gpus_per_node", "rank": "rank"}
_PATHS = {"costs": "costs", "gpu": "gpu", "timeline": "timeline"}


def _size_names():
    names, i = {}, 0
    while True:
        n = _lib.estimate_size_name(i)
        if n is None:
            return names
        names[_text(n).replace("-", "_")] = i
        i += 1


_SIZES = _size_names()


def _count(name, v, least=1):
    if isinstance(v, bool) or int(v) != v or v < least:
        raise ValueError("%s=%r: a count, %d or more" % (name, v, least))
    return int(v)


def _estimate_options(options):
    o = _lib.EstimateOptions()
    _lib.estimate_options_init(ctypes.byref(o))
    for k, v in options.items():
        if v is None:
            continue
        if k in _SIZES:
            o.size[_SIZES[k]] = _count(k, v)
        elif k in _CHOICES:
            field, values = _CHOICES[k]
            if v not in values:
                raise ValueError("%s=%r: one of %s" % (k, v, ", ".join(values)))
            setattr(o, field, values.index(v))
        elif k in _FLAGS:
            setattr(o, _FLAGS[k], bool(v))
        elif k in _COUNTS:
            setattr(o, _COUNTS[k], _count(k, v, 0 if k == "rank" else 1))
        elif k in _PATHS:
            v = v if isinstance(v, (bytes, os.PathLike)) else str(v)
            setattr(o, _PATHS[k], _cpath(v, k))
        elif k == "launch_us":
            if not 0 <= float(v) <= 1e6:
                raise ValueError("launch_us=%r: microseconds, 0 to 1e6" % (v,))
            o.launch_us = float(v)
        elif k == "nic_gbps":
            o.nic_gbps = float(v)  # its range is the library's (below)
        elif k == "gemm_model":
            if v not in ("roofline", "tiles"):
                raise ValueError("gemm_model=%r: roofline or tiles" % (v,))
            o.gemm_tiles = v == "tiles"
        else:
            raise TypeError("unknown option %r (orrery estimate --help lists them, named "
                            "here with underscores)" % k)
    d = _lib.Diag()
    if _lib.estimate_options_check(ctypes.byref(o), ctypes.byref(d)):
        raise ValueError(_text(d.msg))  # an option out of its range, named
    return o


def _estimate_fail(err, d, o=None):
    """The library's error: a ValueError for a description o that lacks a size (the
    command's usage error), else an OrreryError with the command's message."""
    msg = _text(d.msg) or _text(_lib.strerror(err))
    if err == -errno.EINVAL and o is not None and _lib.estimate_missing(ctypes.byref(o)):
        raise ValueError(msg)
    raise OrreryError(msg)


def _whole(v):
    """A time or size as the JSON writes it: rounded half away from zero; None if not
    finite."""
    if not math.isfinite(v):
        return None
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def _num(v):
    return v if math.isfinite(v) else None


_CONFIG = ["layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq", "micro_batch",
           "micro_batches", "tp", "pp", "dp", "cp", "vpp", "first_stage_layers",
           "last_stage_layers", "precision", "recompute", "sequence_parallel",
           "distributed_optimizer", "fully_sharded"]
_ESTIMATE_COLUMNS = (["method", "trace", "gpu", "rank", "steps", "iteration_ns", "measured_ns",
                      "replayed_ns", "traced_ns", "profiler_host_ns", "change",
                      "tokens_per_s_per_gpu", "mfu", "hfu", "memory_bytes_per_gpu", "fits",
                      "fits_why", "memory_reserve_bytes", "memory_measured_peak_bytes",
                      "compute_ns", "exposed_comm_ns", "bubble_ns", "other_ns", "launch_ns",
                      "caveats"] +
                     _CONFIG)


def _config(c):
    row = {}
    for k in _CONFIG:
        if k == "kv_heads":
            row[k] = c.kv_groups
        elif k == "precision":
            row[k] = _text(_lib.dtype_name(c.precision))
        elif k == "recompute":
            row[k] = _text(_lib.recompute_name(c.recompute))
        else:
            row[k] = getattr(c, k)
            if isinstance(row[k], bool):
                row[k] = bool(row[k])
    return row


def _caveats(e):
    """What the reader should know beside the numbers, by name (orr_estimate_caveats():
    peaks, launch-as-recorded, no-allocator, reserve, no-memory, sync-layers-unused,
    costs-transferred, ffn-kept)."""
    bits = _lib.estimate_caveats(ctypes.byref(e))
    names, i = [], 0
    while True:
        n = _lib.estimate_caveat_name(i)
        if n is None:
            return names
        if bits & (1 << i):
            names.append(_text(n))
        i += 1


def _estimate_row(e):
    traced = e.traced.step_ns > 0  # as the CLI: the estimate with the profiler's host time
    parts = (ctypes.c_double * 4)()
    _lib.estimate_parts(ctypes.byref(e), parts)
    row = {
        "method": _text(_lib.estimate_how_name(e.how)),
        "trace": _text(e.trace),
        "gpu": _text(e.gpu.contents.id) if e.gpu else None,
        "rank": e.rank,
        "steps": e.steps,
        "iteration_ns": _whole(e.estimated.step_ns),
        "measured_ns": _whole(e.measured_ns),
        "replayed_ns": _whole(e.replayed.step_ns),
        "traced_ns": _whole(e.traced.step_ns) if traced else None,
        "profiler_host_ns": _whole(e.profiler_host_ns) if traced else None,
        "change": _num(_lib.estimate_change(ctypes.byref(e))),
        "tokens_per_s_per_gpu": _num(e.tokens_per_s_per_gpu),
        "mfu": _num(e.mfu),
        "hfu": _num(e.hfu),
        "memory_bytes_per_gpu": None if e.memory_err else _whole(e.memory.total_bytes),
        "fits": not e.memory_err and bool(e.memory.fits),
        "fits_why": _text(_lib.strerror(e.memory_err)) if e.memory_err
        else _text(e.memory.why),
        "memory_reserve_bytes": _whole(e.reserve_bytes),
        "memory_measured_peak_bytes": _whole(e.measured_peak_bytes),
        "compute_ns": _whole(parts[0]),
        "exposed_comm_ns": _whole(parts[1]),
        "bubble_ns": _whole(parts[2]),
        "other_ns": _whole(parts[3]),
        "launch_ns": e.cpu_op_ns,
        "caveats": _caveats(e),
    }
    row.update(_config(getattr(e, "to")))
    return row


_WHATIF_LISTS = ["tp", "pp", "cp", "vpp", "micro_batch", "first_stage_layers",
                 "last_stage_layers"]
_WHATIF_COLUMNS = ["index", "gpus", "tp", "pp", "dp", "cp", "vpp", "first_stage_layers",
                   "last_stage_layers", "micro_batch", "micro_batches", "recompute",
                   "sequence_parallel", "distributed_optimizer", "feasible", "why",
                   "iteration_ns", "tokens_per_s_per_gpu", "mfu", "hfu", "memory_bytes_per_gpu",
                   "compute_ns", "exposed_comm_ns", "bubble_ns", "other_ns", "limit", "recorded"]


def _switch(name, v):
    if v is None or v == "auto":
        return -1  # ORR_WHATIF_AUTO
    if v in (True, "on", 1):
        return 1
    if v in (False, "off", 0):
        return 0
    raise ValueError("%s=%r: auto, True or False" % (name, v))


def _whatif_options(gpus, options):
    w = _lib.WhatifOptions()
    lo, hi = (gpus, gpus) if not isinstance(gpus, (tuple, list)) else gpus
    w.gpus_min, w.gpus_max = _count("gpus", lo), _count("gpus", hi)
    if w.gpus_max < w.gpus_min:
        raise ValueError("gpus=%r: (min, max) with min <= max" % (gpus,))
    keep = []
    for i, k in enumerate(_WHATIF_LISTS):
        v = options.pop(k, None)
        if v is None:
            continue
        v = [v] if not isinstance(v, (list, tuple)) else list(v)
        least = 0 if k.endswith("stage_layers") else 1
        arr = (ctypes.c_int64 * len(v))(*[_count(k, x, least) for x in v])
        keep.append(arr)
        w.list[i].v, w.list[i].n = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64)), len(v)
    modes = options.pop("recompute", None)
    if modes is not None:
        names = _CHOICES["recompute"][1]
        for m in [modes] if isinstance(modes, str) else modes:
            if m not in names:
                raise ValueError("recompute=%r: none, selective or full, or a list" % (m,))
            w.recompute |= 1 << names.index(m)
    w.sp = _switch("sequence_parallel", options.pop("sequence_parallel", None))
    w.distopt = _switch("distributed_optimizer", options.pop("distributed_optimizer", None))
    w.allow_cross_node_tp = bool(options.pop("allow_cross_node_tp", False))
    return w, keep


def _whatif_row(r, parts, recorded):
    c = r.c
    ok = r.why == 0
    row = {"index": r.index, "gpus": r.gpus, "tp": c.tp, "pp": c.pp, "dp": c.dp, "cp": c.cp,
           "vpp": c.vpp, "first_stage_layers": c.first_stage_layers,
           "last_stage_layers": c.last_stage_layers, "micro_batch": c.micro_batch,
           "micro_batches": c.micro_batches, "recompute": _text(_lib.recompute_name(c.recompute)),
           "sequence_parallel": bool(c.sequence_parallel),
           "distributed_optimizer": bool(c.distributed_optimizer), "feasible": ok,
           "why": _text(_lib.whatif_why_name(r.why)),
           "iteration_ns": _whole(r.step_ns) if ok else None,
           "tokens_per_s_per_gpu": _num(r.tokens_per_s_per_gpu) if ok else None,
           "mfu": _num(r.mfu) if ok else None, "hfu": _num(r.hfu) if ok else None,
           "memory_bytes_per_gpu": _whole(r.memory.total_bytes) if ok or r.why == 7 else None,
           "limit": _text(_lib.whatif_limit_name(r.limit)) if ok else None,
           "recorded": r.index == recorded}
    for k, v in zip(["compute_ns", "exposed_comm_ns", "bubble_ns", "other_ns"], parts):
        row[k] = _whole(v) if ok else None
    return row


def _whatif(trace, ri, gpus, options):
    options = dict(options)
    jobs = int(options.pop("jobs", 0) or os.cpu_count() or 1)
    w, keep = _whatif_options(gpus, options)
    o = _estimate_options(options)
    g = None
    if trace is not None:
        o.trace = _cpath(trace.path)
        g = trace._g
    j, d = _lib.WhatifJob(), _lib.Diag()
    err = _lib.whatif_job_open(ctypes.byref(o), ctypes.byref(w), g, ri, ctypes.byref(j),
                               ctypes.byref(d))
    try:
        if err:
            _estimate_fail(err, d, None if trace is not None else o)
        tally = _lib.WhatifTally()
        recorded = _lib.whatif_job_tally(ctypes.byref(j), 0, 1, ctypes.byref(tally))
        _lib.whatif_tally_release(ctypes.byref(tally))
        rows = []
        e = _lib.Estimate()
        parts = (ctypes.c_double * 4)()
        rec = ctypes.addressof(j) + _lib.WHATIF_JOB_RECORDED

        raised = []

        def sink(data, rp):
            # an exception cannot cross the library: ctypes would print it and go on
            # without the row, so it stops the sweep and is raised after it
            try:
                r = rp.contents
                if r.why == 0:
                    _lib.estimate_of_result(ctypes.byref(j.base), trace is not None, rec,
                                            j.replayed_ns, rp, ctypes.byref(e))
                    _lib.estimate_parts(ctypes.byref(e), parts)
                rows.append(_whatif_row(r, list(parts), recorded))
                return 0
            except BaseException as x:  # KeyboardInterrupt too
                raised.append(x)
                return 1

        cb = _lib.WHATIF_SINK(sink)
        err = _lib.whatif_run(j.plan, ctypes.addressof(j) + _lib.WHATIF_JOB_X, 0, 1, jobs, None,
                              None, cb, None)
        if raised:
            raise raised[0]
        if err:
            raise OrreryError("cannot sweep: %s" % _text(_lib.strerror(err)))
        return _table(rows, _WHATIF_COLUMNS)
    finally:
        _lib.whatif_job_close(ctypes.byref(j))
        del keep
