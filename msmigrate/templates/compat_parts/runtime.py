# Devices, seeds, determinism, mixed precision and logging.
#
# MindSpore picks its device once for the whole program (mindspore.set_device(...) or
# set_context(device_target=...) at the top of the main script); tensors and cells need no
# .to(device). So torch's device queries are answered from MindSpore's context: on a CPU
# run torch.cuda.is_available() is False, on a GPU or Ascend run it is True.
import csv
import json
import os
import platform
import socket
import time
import warnings
from datetime import datetime


# ----------------------------------------------------------------- devices
class _Backend:
    """Where this MindSpore program runs, read from its context when asked.

    torch.cuda.is_available() -> backend.on_accelerator, torch.cuda.device_count() ->
    backend.device_count, torch.cuda.current_device() -> backend.device_id. They are
    properties, not functions, because inside construct under GRAPH mode MindSpore cannot
    call mindspore.get_context but reads an object's properties while it compiles."""

    @property
    def target(self):
        """'CPU', 'GPU' or 'Ascend'."""
        return ms.get_context("device_target")

    @property
    def on_accelerator(self):
        """True on a GPU or an Ascend NPU, False on CPU."""
        return self.target in ("GPU", "Ascend")

    @property
    def device_count(self):
        """The accelerators of the kind the program runs on; 0 on a CPU run."""
        if self.target == "CPU":
            return 0
        return getattr(ms.device_context, self.target.lower()).device_count()

    @property
    def device_id(self):
        return ms.get_context("device_id")


backend = _Backend()


_MS_DEVICE_TYPES = {"CPU": "cpu", "GPU": "cuda", "Ascend": "npu"}


def _torch_device_text(text):
    """'GPU:0' (MindSpore's name) -> 'cuda:0' (torch's); torch's names are kept."""
    kind, sep, index = text.partition(":")
    return _MS_DEVICE_TYPES.get(kind, kind) + sep + index


class Device(str):
    """torch.device(...) kept as its string ('cpu', 'cuda', 'cuda:1'), so str(device),
    f-strings and comparisons with strings work, with torch's .type and .index.
    MindSpore places tensors by its context, so a device value only matters where the
    program looks at it."""

    def __new__(cls, type="cpu", index=None):
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type          # torch.device(0) is cuda:0
        text = _torch_device_text(str(type))     # torch.device(x.device): MindSpore's 'CPU' is 'cpu'
        if index is not None:
            if ":" in text:
                raise ValueError(f"device {text!r} already has an index")
            text = f"{text}:{int(index)}"
        return super().__new__(cls, text)

    # a MindSpore tensor's .device is 'CPU' / 'GPU:0' / 'Ascend:0': equal to torch's 'cpu' / 'cuda:0' / 'npu:0'
    # (`x.device == torch.device("cpu")`; the subclass's __eq__ also answers `'CPU' == device`)
    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, _torch_device_text(other))
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__

    @property
    def type(self):
        return str(self).partition(":")[0]     # a plain str: a subclass's partition may give self back

    @property
    def index(self):
        idx = str(self).partition(":")[2]
        return int(idx) if idx else None

    def __repr__(self):
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    # `with torch.device("meta"):` makes it torch's default device until the block ends
    def __enter__(self):
        _default_devices.append(self)
        return self

    def __exit__(self, *exc):
        _default_devices.pop()       # `with` blocks end innermost first
        return False


# torch's default device, as a value the program reads back (set_default_device, `with
# torch.device(...)`): the global setting first, the innermost `with` last. MindSpore itself
# still places every tensor on the device of its context.
_default_devices = [None]


def set_default_device(device):
    """torch.set_default_device(device); None is torch's default, the CPU."""
    _default_devices[0] = None if device is None else Device(device)


def get_default_device():
    """torch.get_default_device(): 'cpu' unless set; an accelerator without an index gets the
    one MindSpore runs on (torch gives the current one)."""
    device = next((d for d in reversed(_default_devices) if d is not None), None)
    if device is None:
        return Device("cpu")
    if device.index is None and device.type not in ("cpu", "meta"):
        return Device(device.type, ms.get_context("device_id"))
    return device


def _device_index(device):
    if device is None:
        return ms.get_context("device_id")
    if isinstance(device, int):
        return device
    idx = Device(device).index
    return ms.get_context("device_id") if idx is None else idx


def cuda_set_device(device):
    """torch.cuda.set_device(i). On a CPU run there is nothing to choose. On an
    accelerator MindSpore accepts a device id only before its runtime starts (before the
    first operation): later calls keep the device already in use and warn."""
    target = backend.target
    if target == "CPU":
        return
    idx = _device_index(device)
    if idx == ms.get_context("device_id"):
        return
    try:
        ms.set_device(target, idx)
    except (RuntimeError, ValueError) as exc:
        warnings.warn(f"set_device({idx}) ignored: MindSpore already runs on {target} "
                      f"{ms.get_context('device_id')} ({exc})")


class cuda_device:
    """torch.cuda.device(i) as a `with` block: torch makes device i current inside it and does nothing for
    None or a negative index. MindSpore runs the program on one device: i is chosen as cuda_set_device
    chooses it (nothing on CPU), and the block's values are the same on any device."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        if self.device is not None and not (isinstance(self.device, int) and self.device < 0):
            cuda_set_device(self.device)
        return self

    def __exit__(self, *exc):
        return False


def cuda_synchronize(device=None):
    """torch.cuda.synchronize(): wait for queued device work; nothing to wait for on CPU."""
    if backend.target != "CPU":
        ms.runtime.synchronize()


def cuda_empty_cache():
    """torch.cuda.empty_cache(): release cached device memory (nothing to do on CPU)."""
    if backend.target != "CPU":
        ms.runtime.empty_cache()


def cuda_get_device_name(device=None):
    """torch.cuda.get_device_name(): the accelerator's name; on a CPU run the processor."""
    target = backend.target
    if target == "CPU":
        return platform.processor() or platform.machine() or "CPU"
    return ms.hal.get_device_name(_device_index(device), target)


def _memory_stat(name, default=0):
    # MindSpore's memory counters exist for GPU/Ascend; on CPU they log an error: answer 0
    if backend.target == "CPU":
        return default
    return getattr(ms.runtime, name)()


def cuda_memory_allocated(device=None):
    """Bytes held by tensors on the device (0 on a CPU run)."""
    return _memory_stat("memory_allocated")


def cuda_max_memory_allocated(device=None):
    """Peak bytes held by tensors on the device (0 on a CPU run)."""
    return _memory_stat("max_memory_allocated")


def cuda_memory_reserved(device=None):
    """Bytes reserved by MindSpore's memory pool (0 on a CPU run)."""
    return _memory_stat("memory_reserved")


def cuda_max_memory_reserved(device=None):
    """Peak bytes reserved by MindSpore's memory pool (0 on a CPU run)."""
    return _memory_stat("max_memory_reserved")


def cuda_reset_peak_memory_stats(device=None):
    """Start the peak-memory counters afresh (nothing to do on a CPU run)."""
    _memory_stat("reset_peak_memory_stats", None)


# ----------------------------------------------------------------- process-wide switches
_SET_ONCE = {}


def _set_once(key, value, setter):
    # MindSpore accepts some process-wide settings only once ("can not be set repeatedly");
    # torch programs often set them twice (e.g. cudnn.deterministic and
    # use_deterministic_algorithms). The first value stays; a different later one warns.
    if key in _SET_ONCE:
        if _SET_ONCE[key] != value:
            warnings.warn(f"{key}={value!r} ignored: MindSpore accepts this setting once per "
                          f"process and it is already {_SET_ONCE[key]!r}")
        return
    try:
        setter(value)
    except RuntimeError as exc:
        warnings.warn(f"{key}={value!r} ignored: {exc}")
    _SET_ONCE[key] = value


def set_deterministic(flag=True):
    """torch.use_deterministic_algorithms(flag) / torch.backends.cudnn.deterministic = flag:
    mindspore.set_deterministic, which MindSpore accepts once per process."""
    _set_once("deterministic", bool(flag), ms.set_deterministic)


def deterministic_algorithms_enabled():
    """torch.are_deterministic_algorithms_enabled(): whether MindSpore runs deterministically (what
    torch.use_deterministic_algorithms, converted to set_deterministic, set; off by default, as torch's)."""
    return ms.get_context("deterministic") == "ON"


def set_num_threads(num):
    """torch.set_num_threads(n): the number of threads MindSpore's CPU kernels use
    (mindspore.device_context.cpu.op_tuning.threads_num, accepted once per process)."""
    _set_once("threads_num", int(num), ms.device_context.cpu.op_tuning.threads_num)


# ----------------------------------------------------------------- mixed precision
@ms.jit_class   # a `with` inside construct/ms.jit needs a jit_class object
class autocast(_NullContext):
    """torch.autocast / torch.cuda.amp.autocast kept where it is not a plain `with` line
    (assigned, `with ... as name`, used as a decorator): it does nothing, the code runs in
    the network's own precision. MindSpore sets mixed precision on the network instead:
    net = mindspore.amp.auto_mixed_precision(net, 'O1')."""


# `ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(...)` then `with ctx:` in the
# train step (nanoGPT's train.py): compiled, MindSpore enters only jit_class objects ("Only support
# jit_class instance, but got PythonObject(type: <class 'contextlib.nullcontext'>...)").
@ms.jit_class
class nullcontext:
    """contextlib.nullcontext(enter_result=None), also entered inside construct/ms.jit."""

    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result

    def __exit__(self, *exc):
        return False


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError / torch.cuda.OutOfMemoryError: a RuntimeError, as torch's. MindSpore reports device
    memory exhaustion as a plain RuntimeError of its own, so `except OutOfMemoryError:` does not catch it: the
    program stops with MindSpore's error instead of taking the handler (on CPU torch never raises it either)."""


class GradScaler:
    """torch.cuda.amp.GradScaler / torch.amp.GradScaler with loss scaling switched off.

    Float32 training needs no loss scaling, so scale(loss) returns the loss itself and
    unscale_/update do nothing; get_scale() is 1.0 and is_enabled() False, which is what
    the converted program really does. step(optimizer) calls optimizer.step() when the
    optimizer has one; msmigrate's training-loop conversion folds
    `scaler.scale(loss).backward(); scaler.step(opt); scaler.update()` into the MindSpore
    train step, so calls left elsewhere are harmless. For float16 training in MindSpore use
    mindspore.amp.auto_mixed_precision(net, 'O2') with mindspore.amp.DynamicLossScaler
    (or mindspore.amp.build_train_network(..., level='O2'))."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self.requested = bool(enabled)   # what the torch program asked for (not acted on)

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        step = getattr(optimizer, "step", None)
        if callable(step):
            return step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def is_enabled(self):
        return False

    def state_dict(self):
        return {}          # what torch's GradScaler returns when it is disabled

    def load_state_dict(self, state_dict):
        pass               # a saved torch scale has no use without loss scaling


# ----------------------------------------------------------------- logging
def _log_array(value):
    if hasattr(value, "asnumpy"):      # a MindSpore tensor
        return value.asnumpy()
    return np.asarray(value)


def _log_float(value):
    a = _log_array(value)
    if a.size != 1:
        raise ValueError(f"a scalar is needed, got an array of shape {a.shape}")
    return float(a.reshape(-1)[0])


def _log_file_name(tag):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(tag))


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter, writing plain files into log_dir so the
    program runs without TensorBoard or torch:

      scalars.csv       wall_time,step,tag,value  (add_scalar; add_scalars as main_tag/key)
      histograms.csv    wall_time,step,tag,count,min,max,mean,std  (add_histogram)
      text.jsonl        {"wall_time", "step", "tag", "text"}  (add_text)
      hparams.jsonl     {"wall_time", "hparams", "metrics"}  (add_hparams)
      images/TAG_STEP.npy, figures/TAG_STEP.png  (add_image(s), add_figure)

    Read scalars back with e.g. pandas.read_csv(log_dir + '/scalars.csv'). add_graph and
    the other add_* methods do nothing (MindSpore's own logging: mindspore.SummaryRecord,
    whose files need MindInsight)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        os.makedirs(self.log_dir, exist_ok=True)
        self._files = {}
        self._warned = set()

    def get_logdir(self):
        return self.log_dir

    def _csv(self, name, header):
        if name not in self._files:
            path = os.path.join(self.log_dir, name)
            new = not os.path.exists(path) or os.path.getsize(path) == 0
            f = open(path, "a", newline="", encoding="utf-8", buffering=1)  # line-buffered: survives crashes
            writer = csv.writer(f)
            if new:
                writer.writerow(header)
            self._files[name] = (f, writer)
        return self._files[name][1]

    def _jsonl(self, name, record):
        if name not in self._files:
            f = open(os.path.join(self.log_dir, name), "a", encoding="utf-8", buffering=1)
            self._files[name] = (f, None)
        self._files[name][0].write(json.dumps(record, default=str) + "\n")

    @staticmethod
    def _time(walltime):
        return time.time() if walltime is None else walltime

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._csv("scalars.csv", ["wall_time", "step", "tag", "value"]).writerow(
            [self._time(walltime), global_step, tag, _log_float(scalar_value)])

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        for key, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{key}", value, global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        a = _log_array(values).astype(np.float64).reshape(-1)
        stats = [a.size, a.min(), a.max(), a.mean(), a.std()] if a.size else [0, "", "", "", ""]
        self._csv("histograms.csv", ["wall_time", "step", "tag", "count", "min", "max", "mean", "std"]).writerow(
            [self._time(walltime), global_step, tag] + stats)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        folder = os.path.join(self.log_dir, "images")
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, f"{_log_file_name(tag)}_{global_step}.npy"), _log_array(img_tensor))

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        folder = os.path.join(self.log_dir, "figures")
        os.makedirs(folder, exist_ok=True)
        for i, fig in enumerate(figure if isinstance(figure, (list, tuple)) else [figure]):
            suffix = f"_{i}" if isinstance(figure, (list, tuple)) else ""
            fig.savefig(os.path.join(folder, f"{_log_file_name(tag)}_{global_step}{suffix}.png"))
            if close:
                import matplotlib.pyplot as plt
                plt.close(fig)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._jsonl("text.jsonl", {"wall_time": self._time(walltime), "step": global_step, "tag": tag,
                                   "text": text_string})

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        self._jsonl("hparams.jsonl", {"wall_time": time.time(), "run_name": run_name,
                                      "hparams": hparam_dict,
                                      "metrics": {k: _log_float(v) for k, v in metric_dict.items()}})

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        pass   # no graph export; mindspore.export(net, x, file_format='MINDIR') writes the network

    def __getattr__(self, name):
        # add_embedding, add_pr_curve, add_audio, add_video, add_mesh...: kept runnable, not written
        if name.startswith("add_"):
            def skipped(*args, **kwargs):
                if name not in self._warned:
                    self._warned.add(name)
                    warnings.warn(f"SummaryWriter.{name} is not written by the MindSpore port")
            return skipped
        raise AttributeError(name)

    def flush(self):
        for f, _ in self._files.values():
            f.flush()

    def close(self):
        for f, _ in self._files.values():
            f.close()
        self._files = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
