# Profiling and hooks. torch.profiler becomes mindspore.profiler (2.10: profile, schedule,
# tensorboard_trace_handler, ProfilerActivity), which runs on CPU too: it writes its
# results under <dir>/<host>_<pid>_<time>_ascend_ms/ (ASCEND_PROFILER_OUTPUT/trace_view.json,
# FRAMEWORK/cpu_op_detail_info_0.csv). Profile below adds what torch programs call on
# the profiler object (key_averages().table(), export_chrome_trace) on top of those files.
import csv as _csv
import glob as _glob
import shutil as _shutil
import warnings as _warnings

from mindspore import profiler as _ms_profiler

# where results go when the program gives no tensorboard_trace_handler (MindSpore's own
# default, ./data, is where many projects keep their datasets)
PROFILER_DEFAULT_DIR = "./ms_profiler"


class ProfilerActivity:
    """torch.profiler.ProfilerActivity. CPU is MindSpore's CPU activity (framework and host
    ops); CUDA stands for the accelerator MindSpore runs on: Profile turns it into
    ProfilerActivity.GPU or .NPU (Ascend), and drops it on a CPU run."""
    CPU = _ms_profiler.ProfilerActivity.CPU
    CUDA = "accelerator"


def _profiler_activities(activities, use_cuda=False):
    target = ms.get_context("device_target")
    accelerator = {"GPU": _ms_profiler.ProfilerActivity.GPU,
                   "Ascend": _ms_profiler.ProfilerActivity.NPU}.get(target)
    wanted = list(activities) if activities is not None else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    if use_cuda:
        wanted.append(ProfilerActivity.CUDA)
    out = []
    for a in wanted:
        a = accelerator if a == ProfilerActivity.CUDA else a
        if a is not None and a not in out:
            out.append(a)
    return out or [ProfilerActivity.CPU]


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """torch.profiler.tensorboard_trace_handler: results go to dir_name, written by
    MindSpore's analysis (not torch's *.pt.trace.json: a <worker>_ascend_ms folder whose
    ASCEND_PROFILER_OUTPUT/trace_view.json opens in chrome://tracing or Perfetto;
    TensorBoard's profiler plugin does not read it). use_gzip has no counterpart."""
    def handler(prof):
        pass   # Profile analyses the data itself, into the folder named here
    handler.ms_dir_name, handler.ms_worker_name = dir_name, worker_name
    return handler


class Profile(_ms_profiler.profile):
    """torch.profiler.profile (and torch.autograd.profiler.profile) on mindspore.profiler.profile.

    As in torch, profiling starts at `with` (or start()) and follows `schedule` with
    step(); when a recording cycle ends, MindSpore analyses the data and on_trace_ready is
    called with this object. key_averages().table() reads MindSpore's host-op table
    (MindSpore kernel names such as MatMul and BiasAdd, not torch's aten:: ops);
    export_chrome_trace copies MindSpore's trace_view.json. record_shapes, profile_memory and
    with_stack are passed on (MindSpore collects them on Ascend only); with_flops,
    with_modules have no counterpart."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 enabled=True, use_cuda=False, use_device=None, use_cpu=True, use_kineto=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self._handler = on_trace_ready
        self._trace_dirs = []
        # the folder is chosen through MindSpore's handler (it sets the profiler's output path)
        _ms_profiler.tensorboard_trace_handler(
            getattr(on_trace_ready, "ms_dir_name", PROFILER_DEFAULT_DIR),
            getattr(on_trace_ready, "ms_worker_name", None), analyse_flag=False)
        super().__init__(activities=_profiler_activities(activities, use_cuda or use_device == "cuda"),
                         schedule=schedule, on_trace_ready=self._trace_ready, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack, start_profile=False)

    def _trace_ready(self, prof_interface):
        prof_interface.analyse()          # writes trace_view.json and the op tables
        from mindspore.profiler.common.profiler_context import ProfilerContext
        self._trace_dirs.append(ProfilerContext().ascend_ms_dir)
        if self._handler is not None and not hasattr(self._handler, "ms_dir_name"):
            self._handler(self)           # a torch-style handler: it may call key_averages()

    def start(self):
        if self.enabled:
            super().start()

    def stop(self):
        if self.enabled:
            super().stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()

    @property
    def trace_dir(self):
        """The folder MindSpore wrote the last analysed recording to (None before one)."""
        return self._trace_dirs[-1] if self._trace_dirs else None

    def _require_trace(self, what):
        if self.trace_dir is None:
            raise MigrationError(f"{what}: no profiling results yet (MindSpore writes them when a "
                                 f"recording ends: after the `with` block or the schedule's active steps)")
        return self.trace_dir

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Per-operator totals of the last recording, from MindSpore's host-op table."""
        folder = self._require_trace("key_averages()")
        rows = []
        for path in sorted(_glob.glob(os.path.join(folder, "FRAMEWORK", "cpu_op_detail_info_*.csv"))):
            with open(path, newline="") as fh:
                rows.extend(_csv.DictReader(fh))
        return ProfilerOpTable(rows)

    def export_chrome_trace(self, path):
        """Copy MindSpore's Chrome trace (a JSON list of events; torch writes {"traceEvents": [...]};
        both open in chrome://tracing and Perfetto)."""
        folder = self._require_trace("export_chrome_trace()")
        found = _glob.glob(os.path.join(folder, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
        if not found:
            raise MigrationError(f"MindSpore wrote no trace_view.json under {folder}")
        _shutil.copyfile(found[0], path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        _warnings.warn("export_stacks: MindSpore writes no stack samples; nothing was written")


class ProfilerOpStat:
    """One operator's totals (times in microseconds, like torch's FunctionEventAvg)."""

    def __init__(self, key, count, total_us):
        self.key, self.count = key, count
        self.cpu_time_total = self.self_cpu_time_total = total_us
        self.cpu_time = total_us / count if count else 0.0
        self.device_time_total = self.cuda_time_total = 0.0

    def __repr__(self):
        return f"<ProfilerOpStat key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us>"


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class ProfilerOpTable(list):
    """torch's key_averages() result: a list of per-operator totals with table()."""

    def __init__(self, rows):
        stats = {}
        for r in rows:
            key = r.get("op_type") or r.get("op_name")
            count, total = stats.get(key, (0, 0.0))
            stats[key] = (count + int(float(r.get("op_occurrences") or 0)),
                          total + float(r.get("op_total_time(ms)") or 0) * 1000.0)
        super().__init__(ProfilerOpStat(k, c, t) for k, (c, t) in stats.items())

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None, **unused):
        """A text table with torch's columns for the host ops (sort_by: a ProfilerOpStat
        attribute such as "cpu_time_total" or "count"; device times are 0 here)."""
        key = sort_by if sort_by and hasattr(ProfilerOpStat("", 1, 0.0), sort_by) else "cpu_time_total"
        items = sorted(self, key=lambda s: getattr(s, key), reverse=True)
        if row_limit is not None and row_limit > 0:
            items = items[:row_limit]
        total = sum(s.self_cpu_time_total for s in self) or 1.0
        width = min(max([len(s.key) for s in items] + [4]), max_name_column_width)
        cols = ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")
        line = "-" * (width + 2 + 15 * len(cols))
        out = [header] if header else []
        out += [line, "Name".ljust(width) + "  " + "".join(c.rjust(15) for c in cols), line]
        for s in items:
            pct = f"{100.0 * s.self_cpu_time_total / total:.2f}%"
            vals = (pct, _fmt_us(s.self_cpu_time_total), pct, _fmt_us(s.cpu_time_total), _fmt_us(s.cpu_time),
                    str(s.count))
            out.append(s.key[:width].ljust(width) + "  " + "".join(v.rjust(15) for v in vals))
        out += [line, f"Self CPU time total: {_fmt_us(sum(s.self_cpu_time_total for s in self))}"]
        return "\n".join(out)

    def __str__(self):
        return self.table()


class record_function(_NullContext):
    """torch.profiler.record_function outside a `with` line (a decorator, or start/stop by
    hand): MindSpore 2.10 has no public user range on CPU/GPU (mindspore.profiler.mstx
    marks ranges on Ascend only), so this marks nothing; the code inside runs unchanged."""

    def __init__(self, name, args=None):
        self.name = name


# ---------------------------------------------------------------------------- hooks
# MindSpore's Cell hooks have torch's signatures (cell, args, output) and may replace the
# output or the inputs as in torch, but they run in PYNATIVE mode only: under GRAPH mode
# (which converted programs set at the top for speed) MindSpore silently never calls them.
def _warn_hooks_in_graph_mode(kind):
    if _compiling(_draw_probe):      # registered inside a compiled graph: the hook would never run
        _refuse_compiled("{}: a hook registered inside a compiled graph (GRAPH mode, ms.jit) is never called "
                         "(MindSpore calls Cell hooks in PYNATIVE mode only): run in PYNATIVE_MODE", kind)
    elif ms.get_context("mode") == ms.GRAPH_MODE:
        _warnings.warn(f"{kind}: MindSpore calls Cell hooks in PYNATIVE mode only; this program runs in GRAPH "
                       f"mode, where the hook never fires. Use ms.set_context(mode=ms.PYNATIVE_MODE) while "
                       f"you need the hook", stacklevel=3)


def register_forward_hook(cell, hook, *, prepend=False, with_kwargs=False, always_call=False):
    """Cell.register_forward_hook: hook(cell, args, output) -> None or a new output."""
    _warn_hooks_in_graph_mode("register_forward_hook")
    return cell.register_forward_hook(hook, prepend=prepend, with_kwargs=with_kwargs, always_call=always_call)


def register_forward_pre_hook(cell, hook, *, prepend=False, with_kwargs=False):
    """Cell.register_forward_pre_hook: hook(cell, args) -> None or new args."""
    _warn_hooks_in_graph_mode("register_forward_pre_hook")
    return cell.register_forward_pre_hook(hook, prepend=prepend, with_kwargs=with_kwargs)


def register_backward_hook(cell, hook, prepend=False):
    """Cell.register_backward_hook: hook(cell, grad_input, grad_output) -> None or new
    grad_input, called while mindspore.grad/value_and_grad differentiate through the cell."""
    _warn_hooks_in_graph_mode("register_full_backward_hook")
    return cell.register_backward_hook(hook)


def register_backward_pre_hook(cell, hook, prepend=False):
    """Cell.register_backward_pre_hook: hook(cell, grad_output) -> None or new grad_output."""
    _warn_hooks_in_graph_mode("register_full_backward_pre_hook")
    return cell.register_backward_pre_hook(hook)
