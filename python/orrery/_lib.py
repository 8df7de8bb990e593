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
            found = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        if not hasattr(found, "orr_analysis_layout"):
            tried.append("%s (not liborrery: no orr_analysis_layout)" % path)
            continue
        return found
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
    _fields_ = [("v", c_void_p), ("n", c_size_t), ("cap", c_size_t), ("gpu", c_void_p),
                ("ngpu", c_size_t), ("gpucap", c_size_t), ("cpu", c_void_p),
                ("ncpu", c_size_t), ("cpucap", c_size_t), ("stall", c_void_p),
                ("nstall", c_size_t), ("stallcap", c_size_t), ("comm", c_void_p),
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
scenario_change = _fn("orr_scenario_change", c_double, POINTER(ReplayRow), POINTER(ReplayRow))
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


# ---- orrery estimate and whatif (include/orrery/analysis-estimate.h) ----

def _at_offsets(name, fields):
    """A struct of the library's size with these fields at the library's offsets of them
    (padding between), for the large structs of which only some fields are read."""
    out, pos, k = [], 0, 0
    for fname, ftype in fields:
        off = lib.orr_analysis_layout(name.encode(), fname.encode())
        if off == _MISSING:
            raise OrreryError("liborrery does not describe %s.%s: it is older than this package"
                              % (name, fname))
        if off < pos:
            raise OrreryError("struct %s: field %s at %d, before the fields above it"
                              % (name, fname, off))
        if off > pos:
            out.append(("_pad%d" % k, c_ubyte * (off - pos)))
            k += 1
        out.append((fname, ftype))
        pos = off + ctypes.sizeof(ftype)
    rest = _size(name) - pos
    if rest < 0:
        raise OrreryError("struct %s: liborrery's is smaller than this package's" % name)
    if rest:
        out.append(("_rest", c_ubyte * rest))
    return type(name, (Structure,), {"_fields_": out})


ESTIMATE_NSIZE = 15


class EstimateOptions(Structure):
    _fields_ = [("rank", c_int64), ("global_batch", c_int64), ("gpus_per_node", c_int64),
                ("size", c_int64 * ESTIMATE_NSIZE), ("recompute", c_int), ("sp", c_bool),
                ("distopt", c_bool), ("fsdp", c_bool), ("overlap_grad", c_bool),
                ("forward_only", c_bool), ("p2p_scatter", c_bool), ("sync_timers", c_bool), ("sync_layers", c_bool), ("precision", c_int), ("attention", c_int),
                ("swiglu", c_bool), ("untie", c_bool), ("norm", c_int), ("positions", c_int),
                ("launch_us", c_double), ("nic_gbps", c_double), ("gemm_tiles", c_bool),
                ("transfer_costs", c_bool),
                ("timeline", c_char_p), ("costs", c_char_p), ("trace", c_char_p), ("gpu", c_char_p),
                ("phase", c_void_p), ("progress", c_void_p), ("progress_data", c_void_p)]


TRAIN_SIZES = ["layers", "hidden", "heads", "kv_groups", "ffn", "vocab", "seq", "micro_batch",
               "micro_batches", "tp", "pp", "dp", "cp", "vpp", "first_stage_layers",
               "last_stage_layers"]
TRAIN_SWITCHES = ["gated_mlp", "sequence_parallel", "distributed_optimizer", "fully_sharded",
                  "overlap_grad_reduce", "flash_attention", "untied_embeddings", "rms_norm",
                  "rope", "scatter_gather_p2p", "sync_timers", "sync_layers"]


class TrainConfig(Structure):
    _fields_ = ([(n, c_int64) for n in TRAIN_SIZES] + [(n, c_bool) for n in TRAIN_SWITCHES] +
                [("recompute", c_int), ("precision", c_int)])


class Memory(Structure):
    _fields_ = [("params", c_double), ("bytes_per_param", c_double), ("model_bytes", c_double),
                ("activation_bytes", c_double), ("reserve_bytes", c_double),
                ("total_bytes", c_double), ("capacity_bytes", c_double), ("fits", c_bool),
                ("why", c_char * 192), ("stage", c_int64)]


class EstimateStep(Structure):
    _fields_ = [("step_ns", c_double), ("breakdown", Breakdown)]


class GpuSpec(Structure):
    _fields_ = [("id", c_char_p)]


Estimate = _at_offsets("orr_estimate", [
    ("how", c_int), ("trace", c_char_p), ("costs", c_char_p), ("rank", c_int32),
    ("gpu", POINTER(GpuSpec)), ("forward_only", c_bool), ("steps", c_size_t),
    ("ranks", c_size_t), ("from", TrainConfig), ("to", TrainConfig), ("measured_ns", c_double),
    ("replayed", EstimateStep), ("estimated", EstimateStep), ("traced", EstimateStep),
    ("profiler_host_ns", c_double), ("memory", Memory), ("memory_err", c_int),
    ("reserve_bytes", c_double), ("measured_peak_bytes", c_double),
    ("tokens_per_s_per_gpu", c_double), ("mfu", c_double), ("hfu", c_double),
    ("cpu_op_ns", c_double), ("cpu_op_from", c_int), ("cpu_op_profiler_ns", c_double),
    ("cpu_op_stall_ns", c_double)])
EstimateBase = _at_offsets("orr_estimate_base", [("e", Estimate)])


class WhatifList(Structure):
    _fields_ = [("v", POINTER(c_int64)), ("n", c_size_t)]


WHATIF_NLISTS = 7


class WhatifOptions(Structure):
    _fields_ = [("gpus_min", c_int64), ("gpus_max", c_int64), ("list", WhatifList * WHATIF_NLISTS),
                ("recompute", c_uint32), ("sp", c_int), ("distopt", c_int),
                ("allow_cross_node_tp", c_bool)]


WhatifJob = _at_offsets("orr_whatif_job", [
    ("base", Estimate), ("replayed_ns", c_double), ("recorded", c_ubyte),
    ("x", c_ubyte), ("plan", c_void_p), ("considered", c_uint64)])
WhatifResult = _at_offsets("orr_whatif_result", [
    ("index", c_uint64), ("c", TrainConfig), ("why", c_int), ("refused", c_char * 96),
    ("memory", Memory), ("gpus", c_int64), ("step_ns", c_double),
    ("tokens_per_s_per_gpu", c_double), ("mfu", c_double), ("hfu", c_double), ("limit", c_int)])
WhatifTally = _padded("orr_whatif_tally", [])
WHATIF_JOB_RECORDED = lib.orr_analysis_layout(b"orr_whatif_job", b"recorded")
WHATIF_JOB_X = lib.orr_analysis_layout(b"orr_whatif_job", b"x")

_check(EstimateOptions, "orr_estimate_options",
       [f for f, _ in EstimateOptions._fields_])
_check(TrainConfig, "orr_train_config", ["first_stage_layers", "gated_mlp", "rope", "recompute",
                                         "precision"])
_check(Memory, "orr_memory", ["fits", "why", "stage"])
_check(EstimateStep, "orr_estimate_step")
_check(WhatifOptions, "orr_whatif_options", ["list", "recompute", "sp", "distopt",
                                              "allow_cross_node_tp"])

WHATIF_SINK = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(WhatifResult))

estimate_size_name = _fn("orr_estimate_size_name", c_char_p, c_size_t)
estimate_options_init = _fn("orr_estimate_options_init", None, POINTER(EstimateOptions))
estimate_base_open = _fn("orr_estimate_base_open", c_int, POINTER(EstimateOptions), P, c_size_t,
                         POINTER(EstimateBase), POINTER(Diag))
estimate_base_close = _fn("orr_estimate_base_close", None, POINTER(EstimateBase))
estimate_trace = _fn("orr_estimate_trace", c_int, POINTER(EstimateOptions), POINTER(EstimateBase),
                     POINTER(Diag))
estimate_describe = _fn("orr_estimate_describe", c_int, POINTER(EstimateOptions),
                        POINTER(Estimate), POINTER(Diag))
estimate_how_name = _fn("orr_estimate_how_name", c_char_p, c_int)
estimate_parts = _fn("orr_estimate_parts", None, POINTER(Estimate), POINTER(c_double))
estimate_change = _fn("orr_estimate_change", c_double, POINTER(Estimate))
estimate_of_result = _fn("orr_estimate_of_result", None, POINTER(Estimate), c_bool, c_void_p,
                         c_double, POINTER(WhatifResult), POINTER(Estimate))
recompute_name = _fn("orr_recompute_name", c_char_p, c_int)
dtype_name = _fn("orr_dtype_name", c_char_p, c_int)
whatif_job_open = _fn("orr_whatif_job_open", c_int, POINTER(EstimateOptions),
                      POINTER(WhatifOptions), P, c_size_t, POINTER(WhatifJob), POINTER(Diag))
whatif_job_close = _fn("orr_whatif_job_close", None, POINTER(WhatifJob))
whatif_job_tally = _fn("orr_whatif_job_tally", c_uint64, POINTER(WhatifJob), c_int, c_size_t,
                       POINTER(WhatifTally))
whatif_tally_release = _fn("orr_whatif_tally_release", None, POINTER(WhatifTally))
whatif_run = _fn("orr_whatif_run", c_int, c_void_p, c_void_p, c_uint64, c_uint64, c_int,
                 c_void_p, c_void_p, WHATIF_SINK, c_void_p)
whatif_why_name = _fn("orr_whatif_why_name", c_char_p, c_int)
whatif_limit_name = _fn("orr_whatif_limit_name", c_char_p, c_int)
estimate_caveats = _fn("orr_estimate_caveats", c_uint32, POINTER(Estimate))
estimate_caveat_name = _fn("orr_estimate_caveat_name", c_char_p, c_uint32)
estimate_missing = _fn("orr_estimate_missing", c_char_p, POINTER(EstimateOptions))
estimate_options_check = _fn("orr_estimate_options_check", c_int, POINTER(EstimateOptions),
                             POINTER(Diag))
