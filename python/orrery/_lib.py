"""liborrery through ctypes: finding the library, its functions, and the result structs.

The structs are copies of include/orrery/analysis.h's (and of the replay's and graph's
they hold).  Each copy is checked at import against the library's own sizes and offsets
(orr_analysis_layout()), so that a library built from other headers is refused with a
message rather than read wrongly.  The large result structs are copied up to the fields
read here and padded to their size.
"""
import ctypes
import ctypes.util
import os

from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_double, c_int, c_int32,
                    c_int64, c_size_t, c_ubyte, c_uint8, c_uint32, c_uint64, c_void_p)

SONAME = "liborrery.so.0"


class OrreryError(Exception):
    """A failure liborrery reported: its error's name and the diagnostic's message."""


def _candidates():
    env = os.environ.get("ORRERY_LIB")
    if env:
        yield env
        return
    try:
        from . import _where  # written by setup.py at install: the build it was installed against
        if _where.LIB:
            yield _where.LIB
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    if here.endswith(os.path.join("share", "orrery", "python", "orrery")):
        yield os.path.normpath(os.path.join(here, "../../../../lib", SONAME))  # a bundle's
    yield os.path.normpath(os.path.join(here, "../../build/lib", SONAME))  # a clone's make build
    found = ctypes.util.find_library("orrery")
    if found:
        yield found
    yield SONAME


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise OrreryError("cannot load liborrery (set ORRERY_LIB to liborrery.so.0; tried %s)"
                      % "; ".join(tried))


lib = _load()
libc = ctypes.CDLL(None)
libc.free.argtypes = [c_void_p]
libc.free.restype = None


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


lib.orr_analysis_layout.restype = c_size_t
lib.orr_analysis_layout.argtypes = [c_char_p, c_char_p]
_MISSING = ctypes.c_size_t(-1).value


def _size(name):
    n = lib.orr_analysis_layout(name.encode(), None)
    if n == _MISSING:
        raise OrreryError("liborrery does not describe struct %s: it is older than this package"
                          % name)
    return n


def _padded(name, fields):
    """A struct whose first fields are these, padded to the library's size of it."""
    head = type(name + "_head", (Structure,), {"_fields_": fields})
    rest = _size(name) - ctypes.sizeof(head)
    if rest < 0:
        raise OrreryError("struct %s: liborrery's is smaller than this package's" % name)
    return type(name, (Structure,), {"_fields_": fields + [("_rest", c_ubyte * rest)]})


def _check(cls, name, offsets=()):
    if ctypes.sizeof(cls) != _size(name):
        raise OrreryError("struct %s: %d bytes here, %d in liborrery" %
                          (name, ctypes.sizeof(cls), _size(name)))
    for f in offsets:
        theirs = lib.orr_analysis_layout(name.encode(), f.encode())
        if theirs != getattr(cls, f).offset:
            raise OrreryError("struct %s: field %s at %d here, %s in liborrery" %
                              (name, f, getattr(cls, f).offset, theirs))


class Value(Structure):
    _fields_ = [("value", c_int64), ("how", c_int), ("why", c_char * 192)]


class NamedValue(Structure):
    _fields_ = [("name", c_char_p), ("v", POINTER(Value))]


class Diag(Structure):
    _fields_ = [("file", c_char * 512), ("msg", c_char * 1024), ("offset", c_int64),
                ("event", c_int64)]


class Select(Structure):
    _fields_ = [("steps_given", c_bool), ("step_lo", c_int64), ("step_hi", c_int64),
                ("ranks", POINTER(c_int32)), ("nranks", c_size_t), ("cap", c_size_t)]


class Breakdown(Structure):
    _fields_ = [("exposed_compute_ns", c_int64), ("overlapped_ns", c_int64),
                ("exposed_comm_ns", c_int64), ("other_ns", c_int64),
                ("exposed_wait_ns", c_int64)]


class ReplayStep(Structure):
    _fields_ = [("step", c_int64), ("measured_start_ns", c_int64), ("measured_end_ns", c_int64),
                ("predicted_start_ns", c_int64), ("predicted_end_ns", c_int64)]


class Unexplained(Structure):
    _fields_ = [("gpu_idle_ns", c_int64), ("cpu_blocked_ns", c_int64), ("total_ns", c_int64)]


class PathSeg(Structure):
    _fields_ = [("task", c_uint32), ("cat", c_uint8), ("via", c_uint8), ("start_ns", c_int64),
                ("end_ns", c_int64)]


class SumIdle(Structure):
    _fields_ = [("idle_ns", c_int64), ("host_wait_ns", c_int64), ("kernel_wait_ns", c_int64),
                ("other_ns", c_int64)]


class SumStep(Structure):
    _fields_ = [("rank", c_int32), ("step", c_int64), ("step_ns", c_int64), ("b", Breakdown),
                ("busy_ns", c_int64), ("copy_ns", c_int64), ("idle", SumIdle)]


class SumItem(Structure):
    _fields_ = [("name", c_uint32), ("rank", c_int32), ("stream", c_int64), ("count", c_size_t),
                ("ns", c_int64)]


class SumColl(Structure):
    _fields_ = [("kind", c_int), ("link", c_int), ("bytes", c_double),
                ("sized_by_caller", c_bool), ("group", c_int), ("count", c_size_t),
                ("alone", c_size_t), ("ns", c_double), ("algo_task", c_uint32)]


class SumDelays(Structure):
    _fields_ = [("name", c_char_p), ("ns", POINTER(c_int64)), ("n", c_size_t), ("cap", c_size_t),
                ("p50", c_int64), ("p90", c_int64), ("max", c_int64)]


Summary = _padded("orr_summary", [
    ("path", c_char_p), ("g", c_void_p), ("nranks", c_size_t), ("steps", POINTER(SumStep)),
    ("nsteps", c_size_t), ("kernels", POINTER(SumItem)), ("ops", POINTER(SumItem)),
    ("streams", POINTER(SumItem)), ("nkernels", c_size_t), ("nops", c_size_t),
    ("nstreams", c_size_t), ("kernel_ns", c_int64), ("op_ns", c_int64),
    ("class_tasks", c_size_t * 7), ("class_ns", c_int64 * 7), ("colls", POINTER(SumColl)), ("ncolls", c_size_t), ("colls_unknown", c_size_t),
    ("straggler", c_int32), ("straggler_wait_ns", c_double), ("others_wait_ns", c_double),
    ("stream_idle", c_void_p), ("nstream_idle", c_size_t), ("cap_stream_idle", c_size_t),
    ("delays", SumDelays * 7)])


class ReplayRow(Structure):
    _fields_ = [("rank", c_int32), ("s", ReplayStep), ("error", c_double), ("busy_l1", c_double),
                ("measured", Breakdown), ("predicted", Breakdown),
                ("unexplained", Unexplained), ("unexplained_share", c_double),
                ("trust_low", c_bool)]


ReplayReport = _padded("orr_replay_report", [
    ("path", c_char_p), ("g", c_void_p), ("nranks", c_size_t), ("rows", POINTER(ReplayRow)),
    ("nrows", c_size_t), ("job", POINTER(ReplayRow)), ("njob", c_size_t),
    ("mean_error", c_double), ("max_error", c_double), ("job_mean_error", c_double),
    ("job_max_error", c_double), ("trust_low", c_size_t), ("max_unexplained_share", c_double)])


class Scales(Structure):
    _fields_ = [("v", c_void_p), ("n", c_size_t), ("cap", c_size_t), ("cpu", c_void_p),
                ("ncpu", c_size_t), ("cpucap", c_size_t), ("comm", c_void_p),
                ("ncomm", c_size_t), ("commcap", c_size_t)]


class Scenarios(Structure):
    _fields_ = [("v", c_void_p), ("n", c_size_t), ("cap", c_size_t)]


class RuleMatch(Structure):
    _fields_ = [("tasks", c_size_t), ("gpu_ns", c_int64), ("rank_steps", c_size_t),
                ("latency_ns", c_int64), ("unsplit", c_size_t)]


ScenarioRun = _padded("orr_scenario_run", [
    ("sc", c_void_p), ("rep", ReplayReport), ("matches", POINTER(RuleMatch))])

ScenarioReport = _padded("orr_scenario_report", [
    ("path", c_char_p), ("costs", c_bool), ("base", ReplayReport),
    ("runs", POINTER(ScenarioRun)), ("nruns", c_size_t)])


class DiffMap(Structure):
    _fields_ = [("ids", c_void_p), ("v", c_void_p), ("n", c_size_t), ("cap", c_size_t)]


DiffProfile = _padded("orr_diff_profile", [
    ("label", c_char_p), ("predicted", c_bool), ("steps", c_size_t), ("ranks", c_void_p),
    ("nranks", c_size_t), ("kernels", DiffMap), ("ops", DiffMap), ("ops_shaped", DiffMap)])


class DiffRow(Structure):
    _fields_ = [("kind", c_char_p), ("key", c_char_p), ("a", c_double), ("b", c_double),
                ("ca", c_uint64), ("cb", c_uint64)]


class DiffTable(Structure):
    _fields_ = [("v", POINTER(DiffRow)), ("n", c_size_t), ("cap", c_size_t)]


RankFit = _padded("orr_rank_fit", [
    ("trace", c_char_p), ("g", c_void_p), ("rank", c_int32), ("device", c_char_p)])
RANK_FIT_ST = lib.orr_analysis_layout(b"orr_rank_fit", b"st")

_check(Value, "orr_value", ["why"])
_check(NamedValue, "orr_named_value")
_check(RankFit, "orr_rank_fit", ["device"])
_check(Diag, "orr_diag", ["msg"])
_check(Select, "orr_select")
_check(Breakdown, "orr_breakdown")
_check(ReplayStep, "orr_replay_step")
_check(Unexplained, "orr_unexplained")
_check(PathSeg, "orr_path_seg", ["start_ns"])
_check(SumIdle, "orr_sum_idle")
_check(SumStep, "orr_sum_step", ["b", "idle"])
_check(SumItem, "orr_sum_item")
_check(SumColl, "orr_sum_coll", ["ns"])
_check(SumDelays, "orr_sum_delays")
_check(Summary, "orr_summary", ["steps", "nsteps", "kernels", "nkernels", "kernel_ns", "colls",
                                "straggler", "others_wait_ns", "delays"])
_check(ReplayRow, "orr_replay_row", ["measured", "unexplained", "trust_low"])
_check(ReplayReport, "orr_replay_report", ["rows", "job", "max_unexplained_share"])
_check(Scales, "orr_scales")
_check(Scenarios, "orr_scenarios")
_check(RuleMatch, "orr_rule_match")
_check(ScenarioRun, "orr_scenario_run", ["rep", "matches"])
_check(ScenarioReport, "orr_scenario_report", ["base", "runs", "nruns"])
_check(DiffProfile, "orr_diff_profile", ["predicted", "kernels", "ops", "ops_shaped"])
_check(DiffRow, "orr_diff_row")
_check(DiffTable, "orr_diff_table")

P = c_void_p
strerror = _fn("orr_strerror", c_char_p, c_int)
trace_import = _fn("orr_trace_import", c_int, c_char_p, c_void_p, POINTER(P), POINTER(Diag))
trace_free = _fn("orr_trace_free", None, P)
trace_str = _fn("orr_trace_str", c_char_p, P, c_uint32)
graph_build = _fn("orr_graph_build", c_int, P, c_void_p, POINTER(P), POINTER(Diag))
graph_free = _fn("orr_graph_free", None, P)
graph_task_name = _fn("orr_graph_task_name", c_char_p, P, c_uint32)
dep_kind_name = _fn("orr_dep_kind_name", c_char_p, c_int)
replay_run = _fn("orr_replay_run", c_int, P, c_void_p, POINTER(P), POINTER(Diag))
replay_free = _fn("orr_replay_free", None, P)
replay_job_steps = _fn("orr_replay_job_steps", None, P, POINTER(POINTER(ReplayStep)),
                       POINTER(c_size_t))
replay_critical_path = _fn("orr_replay_critical_path", None, P, c_int64, c_int64,
                           POINTER(POINTER(PathSeg)), POINTER(c_size_t))
path_cat_name = _fn("orr_path_cat_name", c_char_p, c_int)
summary_gather = _fn("orr_summary_gather", None, POINTER(Summary), c_char_p, P,
                     POINTER(Select))
summary_release = _fn("orr_summary_release", None, POINTER(Summary))
replay_report_init = _fn("orr_replay_report_init", None, POINTER(ReplayReport), c_char_p, P,
                         POINTER(Select))
replay_report_release = _fn("orr_replay_report_release", None, POINTER(ReplayReport))
replay_report_table = _fn("orr_replay_report_table", POINTER(ReplayRow), POINTER(ReplayReport),
                          POINTER(c_size_t))
scales_add = _fn("orr_scales_add", c_int, POINTER(Scales), c_char_p)
scales_release = _fn("orr_scales_release", None, POINTER(Scales))
scenarios_take_scales = _fn("orr_scenarios_take_scales", None, POINTER(Scenarios),
                            POINTER(Scales))
scenarios_release = _fn("orr_scenarios_release", None, POINTER(Scenarios))
scenario_report_run = _fn("orr_scenario_report_run", c_int, POINTER(ScenarioReport), c_char_p,
                          P, POINTER(Scenarios), c_void_p, POINTER(Select), c_void_p, c_void_p,
                          POINTER(Diag))
scenario_report_release = _fn("orr_scenario_report_release", None, POINTER(ScenarioReport))
diff_profile_build = _fn("orr_diff_profile_build", None, POINTER(DiffProfile), c_char_p, P,
                         c_bool)
diff_profile_release = _fn("orr_diff_profile_release", None, POINTER(DiffProfile))
diff_class_rows = _fn("orr_diff_class_rows", None, POINTER(DiffTable), POINTER(DiffProfile),
                      POINTER(DiffProfile))
diff_union_rows = _fn("orr_diff_union_rows", None, POINTER(DiffTable), c_char_p,
                      POINTER(DiffMap), POINTER(DiffMap), POINTER(DiffProfile),
                      POINTER(DiffProfile))
diff_op_rows = _fn("orr_diff_op_rows", None, POINTER(DiffTable), POINTER(DiffProfile),
                   POINTER(DiffProfile))
diff_table_release = _fn("orr_diff_table_release", None, POINTER(DiffTable))
graph_rank_index = _fn("orr_graph_rank_index", c_size_t, P, c_int64)
rank_fit_run = _fn("orr_rank_fit_run", None, P, c_size_t, c_char_p, c_void_p, c_size_t,
                   POINTER(RankFit))
rank_fit_release = _fn("orr_rank_fit_release", None, POINTER(RankFit))
structure_values = _fn("orr_structure_values", c_size_t, c_void_p, POINTER(NamedValue))
value_how_name = _fn("orr_value_how_name", c_char_p, c_int)
coll_kind_name = _fn("orr_coll_kind_name", c_char_p, c_int)
link_name = _fn("orr_link_name", c_char_p, c_int)
