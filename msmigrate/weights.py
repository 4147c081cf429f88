"""Move PyTorch weights into MindSpore networks, without torch and without running pickled code.

Public API
----------
read_torch_weights(path)                      -> dict[str, np.ndarray]   (torch zip / legacy pickle / safetensors)
convert_state_dict(net, state, strict=True)   -> (dict[str, np.ndarray], MappingReport)
load_torch_state_dict(net, path_or_dict, strict=True) -> MappingReport
convert_weights_file(in_path, out_ckpt, net=None, strict=True) -> MappingReport
build_net(spec, path=None)                    -> mindspore.nn.Cell
main_weights(argv=None)                       -> int   (``msmigrate weights IN -o OUT.ckpt ...``)

Torch checkpoints are pickles. They are read by the emitted runtime's reader (templates/compat_parts/torch_files.py,
loaded on its own: one restricted unpickler for this command and the converted programs), whose ``find_class`` only
resolves the handful of globals a state_dict needs, each mapped to an inert stand-in: no torch code (and no code from
the file) ever runs. Any other global raises :class:`UnsafeWeightsError`. Sizes declared by the file are checked
before memory is spent (at most 32 dimensions; MSMIGRATE_MAX_EXPANSION times the file's size).

Neither torch nor mindspore is imported at module level.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import os
import pickle
import sys
import tarfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

__all__ = [
    "WeightsError",
    "UnsafeWeightsError",
    "WeightsMismatchError",
    "WeightsDict",
    "MappingReport",
    "read_torch_weights",
    "convert_state_dict",
    "load_torch_state_dict",
    "convert_weights_file",
    "build_net",
    "main_weights",
]


# ----------------------------------------------------------------------------------------------------------------------
# errors


class WeightsError(Exception):
    """A weights file or state dict could not be used (one-line message)."""


class UnsafeWeightsError(WeightsError):
    """The pickle references a global that a state_dict never needs. Nothing from the file was executed."""


class WeightsMismatchError(WeightsError):
    """The state dict does not fit the network. ``.report`` holds the full MappingReport."""

    def __init__(self, message: str, report: "MappingReport | None" = None):
        super().__init__(message)
        self.report = report


# ----------------------------------------------------------------------------------------------------------------------
# reading torch files without torch


class WeightsDict(dict):
    """``dict[str, np.ndarray]`` plus ``notes`` (what the reader decided, e.g. which sub-dict it used)."""

    def __init__(self, *args, notes: Optional[List[str]] = None, source: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.notes: List[str] = list(notes or [])
        self.source = source


def _load_torch_files():
    """The emitted runtime's torch-file reader (templates/compat_parts/torch_files.py), loaded on its own:
    one restricted unpickler for `msmigrate weights` and the converted programs."""
    name = "msmigrate._torch_files"
    mod = sys.modules.get(name)
    if mod is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates", "compat_parts",
                            "torch_files.py")
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod


_tf = _load_torch_files()
_TensorRef = _tf._TorchTensor


def _one_line(e: BaseException, limit: int = 300) -> str:
    s = " ".join(str(e).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _as_weights_error(e: BaseException) -> WeightsError:
    """The shared reader's errors as this module's (one line)."""
    if isinstance(e, _tf.UnsafeCheckpointError):
        return UnsafeWeightsError(_one_line(e, 600))
    return WeightsError(_one_line(e, 600))


def _read_torch_file(path: str):
    try:
        with _tf.read_torch_file(path) as torch_file:
            return _select_and_materialize(torch_file.obj, torch_file, path)
    except WeightsError:
        raise
    except pickle.UnpicklingError as e:
        raise _as_weights_error(e) from None
    except OSError as e:
        raise WeightsError(f"{path}: cannot read ({_one_line(e)})") from None
    except RecursionError:
        raise WeightsError(f"{path}: the pickle nests too deeply (corrupt or hostile file)") from None
    except MemoryError:
        raise WeightsError(f"{path}: not enough memory to read this file") from None


def _contig(a: np.ndarray) -> np.ndarray:
    # np.ascontiguousarray would turn 0-d arrays into shape (1,)
    return a if a.flags.c_contiguous else np.array(a, order="C", copy=True)


def _bf16_to_f32(raw_u16: np.ndarray) -> np.ndarray:
    return (raw_u16.astype(np.uint32) << 16).view(np.float32)


_WRAPPER_KEYS = ("state_dict", "model_state_dict", "model")


def _has_tensors(d) -> bool:
    return isinstance(d, dict) and any(isinstance(v, (_TensorRef, np.ndarray)) for v in d.values())


def _select_state_dict(obj, source: str, notes: List[str], where: str = "", depth: int = 0) -> dict:
    if not isinstance(obj, dict):
        raise WeightsError(f"{source}: holds a {type(obj).__name__}, not a state_dict")
    if _has_tensors(obj):
        return obj
    if depth < 2:
        for k in _WRAPPER_KEYS:
            sub = obj.get(k)
            if isinstance(sub, dict):
                try:
                    chosen = _select_state_dict(sub, source, notes, f"{where}[{k!r}]", depth + 1)
                except WeightsError:
                    continue
                if depth == 0:
                    others = [x if isinstance(x, str) else _tf._short(x) for x in obj.keys() if x != k]
                    notes.insert(0, f"using checkpoint{where}[{k!r}] as the state_dict"
                                 + (f" (ignored top-level keys: {', '.join(others[:10])}"
                                    f"{', ...' if len(others) > 10 else ''})" if others else ""))
                else:
                    notes.insert(0, f"using checkpoint{where}[{k!r}] as the state_dict")
                return chosen
    keys = ", ".join(k if isinstance(k, str) else _tf._short(k) for k in list(obj.keys())[:10])
    raise WeightsError(f"{source}: no state_dict found (a dict of tensors, or one under "
                       f"{'/'.join(repr(k) for k in _WRAPPER_KEYS)}); top-level keys: {keys or '(none)'}")


def _select_and_materialize(obj, reader, source: str) -> WeightsDict:
    notes: List[str] = []
    sd = _select_state_dict(obj, source, notes)
    out = WeightsDict(source=source)
    skipped, widened = [], []
    for k, v in sd.items():
        if not isinstance(k, str):
            skipped.append(_tf._short(k))
            continue
        if isinstance(v, _TensorRef):
            out[k] = _contig(reader.array(v))
            if v.dtype.startswith("float8"):
                widened.append(f"{k} ({v.dtype})")
        elif isinstance(v, np.ndarray):
            out[k] = v
        else:
            skipped.append(k)
    if skipped:
        notes.append(f"skipped {len(skipped)} non-tensor entr{'y' if len(skipped) == 1 else 'ies'}: "
                     f"{', '.join(skipped[:10])}{', ...' if len(skipped) > 10 else ''}")
    if widened:   # MindSpore checkpoints get them as float32: the values are exact, the storage 4x larger
        notes.append(f"read {len(widened)} float8 tensor{'s' if len(widened) != 1 else ''} as float32 (exact): "
                     f"{', '.join(widened[:5])}{', ...' if len(widened) > 5 else ''}")
    out.notes.extend(notes)
    return out


def _read_safetensors(path: str) -> WeightsDict:
    # the shared strict reader, also for files the safetensors library would read: it checks the shape
    # (at most 32 dimensions) before NumPy sees it, and reads bf16/float8 exactly as float32
    try:
        data = _read_safetensors_raw(path)
    except OSError as e:
        raise WeightsError(f"{path}: cannot read ({_one_line(e)})") from None
    out = WeightsDict(source=path)
    for k, v in data.items():
        v = np.asarray(v)
        if v.dtype.name == "bfloat16":
            v = _bf16_to_f32(v.view(np.uint16))
        out[k] = _contig(v)
    return out


def _read_safetensors_raw(path: str) -> Dict[str, np.ndarray]:
    """The shared strict reader (bf16 as float32): the safetensors library's rules, without the library."""
    import mmap

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < 8:
            raise WeightsError(f"{path}: not a valid safetensors file (shorter than the 8-byte header length)")
        # mapped, not read: the file's bytes are not held twice (each tensor is copied out of the map)
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as blob:
            try:
                return _tf.safetensors_arrays(blob, path)
            except pickle.UnpicklingError as e:
                raise WeightsError(_one_line(e)) from None


def read_torch_weights(path) -> WeightsDict:
    """Read a torch ``.pt/.pth/.bin`` (zip or legacy pickle) or ``.safetensors`` file into numpy arrays.

    Never imports torch and never executes code from the file. bf16 becomes float32 (exactly). A checkpoint dict
    that wraps the weights under 'state_dict', 'model_state_dict' or 'model' is unwrapped; ``result.notes`` says so.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise WeightsError(f"{path}: no such file")
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise WeightsError(f"{path}: cannot read ({_one_line(e)})") from None
    if not head:
        raise WeightsError(f"{path}: empty file")
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _read_torch_file(path)
    if path.lower().endswith(".safetensors") or (len(head) > 8 and head[8:9] == b"{"):
        return _read_safetensors(path)
    if head[:1] == b"\x80":
        return _read_torch_file(path)
    if path.lower().endswith(".tar") or tarfile.is_tarfile(path):
        raise WeightsError(f"{path}: legacy tar-format torch checkpoints are not supported")
    raise WeightsError(f"{path}: unrecognised weights format (expected a torch.save file or .safetensors)")


# ----------------------------------------------------------------------------------------------------------------------
# mapping torch names/layouts onto a MindSpore network


@dataclasses.dataclass
class MappingReport:
    """What convert/load did. Lists hold tuples; ``ok`` is True when nothing is missing/unexpected/mis-shaped."""

    source: str = ""
    loaded: List[Tuple[str, str]] = dataclasses.field(default_factory=list)        # (ms_name, src_key)
    renamed: List[Tuple[str, str]] = dataclasses.field(default_factory=list)       # (src_key, ms_name)
    reshaped: List[Tuple[str, tuple, tuple]] = dataclasses.field(default_factory=list)  # (ms_name, src, dst)
    cast: List[Tuple[str, str, str]] = dataclasses.field(default_factory=list)     # (ms_name, src dtype, dst dtype)
    consumed: List[Tuple[str, str]] = dataclasses.field(default_factory=list)      # (src_key, why) no counterpart
    defaulted: List[Tuple[str, str]] = dataclasses.field(default_factory=list)     # (ms_name, why) kept at init
    aliases: List[Tuple[str, str]] = dataclasses.field(default_factory=list)       # (src_key, ms_name) tied weights
    missing: List[Tuple[str, tuple, str]] = dataclasses.field(default_factory=list)  # (ms_name, shape, wanted key)
    unexpected: List[Tuple[str, tuple]] = dataclasses.field(default_factory=list)  # (src_key, shape)
    shape_mismatch: List[Tuple[str, str, tuple, tuple]] = dataclasses.field(default_factory=list)
    conflicts: List[str] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)
    written: str = ""

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.shape_mismatch or self.conflicts)

    def mismatch_lines(self) -> List[str]:
        lines = [f"missing in checkpoint: {n} {tuple(s)} (looked for {w})" for n, s, w in self.missing]
        lines += [f"unexpected in checkpoint: {k} {tuple(s)}" for k, s in self.unexpected]
        lines += [f"shape mismatch: {n} is {tuple(d)} in MindSpore but {k} is {tuple(s)}"
                  for n, k, s, d in self.shape_mismatch]
        lines += list(self.conflicts)
        return lines

    def summary(self) -> str:
        parts = [f"{len(self.loaded)} parameters loaded"]
        for label, lst in (("renamed", self.renamed), ("reshaped", self.reshaped), ("cast", self.cast),
                           ("consumed without counterpart", self.consumed), ("kept at init", self.defaulted),
                           ("tied aliases", self.aliases), ("missing", self.missing),
                           ("unexpected", self.unexpected), ("shape mismatches", self.shape_mismatch),
                           ("conflicts", self.conflicts)):
            if lst:
                parts.append(f"{len(lst)} {label}")
        return ", ".join(parts)


@dataclasses.dataclass
class _Rule:
    src: Tuple[str, ...]                       # torch local names to try, in order
    transform: Optional[Callable[[np.ndarray, tuple], Tuple[np.ndarray, bool]]] = None
    optional: str = ""                         # non-empty: may stay at init, with this reason


def _conv1d_weight(a: np.ndarray, ms_shape: tuple):
    # torch (out, in, k) / (in, out, k) -> classic MindSpore (out, in, 1, k) / (in, out, 1, k)
    if a.ndim == 3 and len(ms_shape) == 4:
        return np.expand_dims(a, 2), True
    return a, False


def _affine_optional(cell) -> str:
    """Norm layers built with affine=False keep frozen identity gamma/beta that torch does not save."""
    gamma, beta = getattr(cell, "gamma", None), getattr(cell, "beta", None)
    if gamma is not None and beta is not None and not gamma.requires_grad and not beta.requires_grad:
        return "affine=False: frozen identity gamma/beta (torch saves none)"
    return ""


def _class_rules(cell, nn) -> Tuple[Dict[str, _Rule], Tuple[str, ...], Dict[str, str]]:
    """Per cell type: {ms local param: rule}, torch local keys consumed without counterpart, child prefix remap."""
    norm = getattr(nn.layer, "normalization", None)
    bn_base = getattr(norm, "_BatchNorm", None) if norm else None
    in_base = getattr(norm, "_InstanceNorm", None) if norm else None
    rules: Dict[str, _Rule] = {}
    consumes: Tuple[str, ...] = ()
    child_remap: Dict[str, str] = {}
    if getattr(cell, "torch_flat_child", None):
        child_remap[cell.torch_flat_child] = ""   # a torch lazy layer: its built layer's params are its own
    if isinstance(cell, (nn.Conv1d, nn.Conv1dTranspose)):
        rules["weight"] = _Rule(("weight",), _conv1d_weight)
    elif isinstance(cell, nn.BatchNorm3d):
        child_remap["bn2d"] = ""   # torch keeps BN3d params on the BN3d module itself
        # _ms_compat's momentum=None layer counts batches on its bn2d child, which loads torch's count
        consumes = () if "num_batches_tracked" in cell.bn2d._params else ("num_batches_tracked",)
    elif (bn_base is not None and isinstance(cell, bn_base)) or isinstance(
            cell, (nn.BatchNorm1d, nn.BatchNorm2d)):
        stats_optional = "use_batch_statistics=True never reads running stats" \
            if getattr(cell, "use_batch_statistics", None) is True else ""
        aff = _affine_optional(cell)
        rules.update(gamma=_Rule(("weight",), optional=aff), beta=_Rule(("bias",), optional=aff),
                     moving_mean=_Rule(("running_mean",), optional=stats_optional),
                     moving_variance=_Rule(("running_var",), optional=stats_optional))
        consumes = ("num_batches_tracked",)
    elif in_base is not None and isinstance(cell, in_base):
        opt = _affine_optional(cell)
        rules.update(gamma=_Rule(("weight",), optional=opt), beta=_Rule(("bias",), optional=opt),
                     moving_mean=_Rule(("running_mean",), optional="InstanceNorm always uses instance statistics"),
                     moving_variance=_Rule(("running_var",),
                                           optional="InstanceNorm always uses instance statistics"))
        consumes = ("num_batches_tracked",)
    elif isinstance(cell, nn.GroupNorm):
        aff = _affine_optional(cell)
        beta = getattr(cell, "beta", None)
        frozen_beta = beta is not None and not beta.requires_grad
        no_bias = "bias=False: frozen zero beta (torch saves none)" if frozen_beta else ""
        rules.update(gamma=_Rule(("weight",), optional=aff), beta=_Rule(("bias",), optional=aff or no_bias))
    elif isinstance(cell, nn.LayerNorm):
        rules.update(gamma=_Rule(("weight",)), beta=_Rule(("bias",)))
    elif isinstance(cell, nn.Embedding):
        rules["embedding_table"] = _Rule(("weight",))
    elif isinstance(cell, nn.PReLU):
        rules["w"] = _Rule(("weight",))
    return rules, consumes, child_remap


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix and name else (prefix or name)


def _is_optimizer(cell) -> bool:
    """A MindSpore optimizer (a Cell) or _ms_compat's torch-style one (param_groups)."""
    import mindspore.nn as nn

    return isinstance(cell, nn.Optimizer) or hasattr(cell, "param_groups")


def optimizer_state(net) -> Dict[int, str]:
    """{id: name} of the parameters that only optimizers held as attributes of ``net`` own (their moments,
    step counts): a torch module's state_dict never holds them, since a torch optimizer is no Module
    (mnist_forward_forward's Layer keeps its Adam in self.opt)."""
    own = {id(p) for _, cell in _walk_cells(net) for p in cell._params.values() if p is not None}
    state: Dict[int, str] = {}
    for _, cell in _walk_cells(net, into_optimizers=True):
        if cell is not net and _is_optimizer(cell):
            state.update((id(p), p.name) for _, p in cell.parameters_and_names() if id(p) not in own)
    return state


def _walk_cells(net, into_optimizers: bool = False):
    """Every (path, cell), shared sub-cells once per path (torch's state_dict repeats them too); not into
    optimizers held as attributes (optimizer_state) unless asked."""
    stack: List[int] = []

    def rec(prefix, cell):
        if id(cell) in stack or (not into_optimizers and cell is not net and _is_optimizer(cell)):
            return
        stack.append(id(cell))
        yield prefix, cell
        for name, child in cell._cells.items():
            if child is not None:
                yield from rec(_join(prefix, name), child)
        stack.pop()

    yield from rec("", net)


def _np_dtype_of(param) -> np.dtype:
    import mindspore as ms

    return np.dtype(ms.dtype_to_nptype(param.dtype))


def _to_numpy(v, key: str) -> np.ndarray:
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "detach") and hasattr(v, "cpu"):  # a torch tensor; torch is only touched through the object
        t = v.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    if hasattr(v, "asnumpy"):  # a MindSpore tensor/parameter
        return v.asnumpy()
    try:
        a = np.asarray(v)
    except Exception as e:  # noqa: BLE001
        raise WeightsError(f"state dict entry {key!r} is a {type(v).__name__}, not an array ({_one_line(e)})") from None
    if a.dtype.kind not in "biufc":
        raise WeightsError(f"state dict entry {key!r} is a {type(v).__name__}, not a numeric array")
    return a


def _distinct_parameter_names(net) -> None:
    """Parameters of distinct objects that share a name get their path in the network as their name. MindSpore
    prefixes a Parameter's name with its path when the cell holding it is assigned to its parent; a buffer a
    program registers after the network is built (thop's per-layer `register_buffer("total_ops", ...)`) keeps
    its bare name on every layer, which the mapping by name would take for one tied parameter."""
    pairs = list(net.parameters_and_names())
    owners: Dict[str, set] = {}
    for _, p in pairs:
        owners.setdefault(p.name, set()).add(id(p))
    for path, p in pairs:
        if len(owners[p.name]) > 1 and path != p.name:
            p.name = path


def convert_state_dict(net, state: Mapping[str, Any], strict: bool = True):
    """Map a torch state dict onto ``net``'s MindSpore parameters.

    Returns ``(arrays keyed by MindSpore parameter name, MappingReport)``. With ``strict`` every source tensor must
    land in exactly one parameter, every parameter must be filled and shapes must agree, otherwise
    :class:`WeightsMismatchError` lists every mismatch.
    """
    import mindspore.nn as nn

    _distinct_parameter_names(net)
    report = MappingReport(source=getattr(state, "source", ""))
    report.notes.extend(getattr(state, "notes", []) or [])
    src: Dict[str, np.ndarray] = {}
    for k, v in state.items():
        if not isinstance(k, str):
            raise WeightsError(f"state dict key {k!r} is not a string")
        src[k] = _to_numpy(v, k)

    structural = {name for name, _ in net.parameters_and_names()}
    if src and all(k.startswith("module.") for k in src) and not any(n.startswith("module.") for n in structural):
        src = {k[len("module."):]: v for k, v in src.items()}
        report.notes.append("stripped the 'module.' prefix (DataParallel checkpoint)")

    used: Dict[str, str] = {}                 # src key -> ms param name (or '' for consumed)
    out: Dict[str, np.ndarray] = {}
    src_of: Dict[str, str] = {}               # ms param name -> src key it came from
    wanted: Dict[str, Tuple[tuple, str, str]] = {}  # ms param name -> (shape, looked-for key, optional reason)
    visited: Dict[int, Any] = {}
    remap: Dict[str, str] = {}                # ms cell prefix -> torch prefix

    def place(param, ms_path: str, rule: _Rule, src_prefix: str, local: str):
        pname = param.name
        shape = tuple(param.shape)
        cands = []
        for s in rule.src + (local,):
            key = _join(src_prefix, s)
            if key not in cands:
                cands.append(key)
        if ms_path not in cands:
            cands.append(ms_path)
        key = next((c for c in cands if c in src and c not in used), None)
        if key is None:
            key = next((c for c in cands if c in src and used.get(c) == pname), None)
            if key is not None:
                return
            if pname not in wanted:
                wanted[pname] = (shape, cands[0], rule.optional)
            return
        arr = src[key]
        moved = False
        if rule.transform is not None:
            arr, moved = rule.transform(arr, shape)
        if tuple(arr.shape) != shape:
            report.shape_mismatch.append((pname, key, tuple(src[key].shape), shape))
            used[key] = pname
            wanted.pop(pname, None)
            return
        if pname in out:  # a tied parameter seen again under another path
            used[key] = pname
            report.aliases.append((key, pname))
            if not _same_values(out[pname], arr.astype(out[pname].dtype, copy=False)):
                report.conflicts.append(f"tied parameter {pname} gets different values from {src_of[pname]} "
                                        f"and {key}")
            return
        want = _np_dtype_of(param)
        if arr.dtype != want:
            report.cast.append((pname, str(arr.dtype), str(want)))
            arr = arr.astype(want)
        else:
            arr = np.array(arr, copy=True)
        out[pname] = _contig(arr)
        src_of[pname] = key
        used[key] = pname
        wanted.pop(pname, None)
        report.loaded.append((pname, key))
        if key != pname:
            report.renamed.append((key, pname))
        if moved:
            report.reshaped.append((pname, tuple(src[key].shape), shape))

    for prefix, cell in _walk_cells(net):
        src_prefix = remap.get(prefix, prefix)
        rules, consumes, child_remap = _class_rules(cell, nn)
        for child, target in child_remap.items():
            remap[_join(prefix, child)] = _join(src_prefix, target) if target else src_prefix
        for local, param in cell._params.items():
            if param is None:
                continue
            visited[id(param)] = param
            place(param, _join(prefix, local), rules.get(local, _Rule((local,))), src_prefix, local)
        for c in consumes:
            key = _join(src_prefix, c)
            if key in src and key not in used:
                used[key] = ""
                report.consumed.append((key, f"{type(cell).__name__} has no counterpart"))

    # parameters the cell walk did not reach (e.g. held in a ParameterTuple): identical name
    skipped = optimizer_state(net)
    for name, param in net.parameters_and_names():
        if id(param) not in visited and id(param) not in skipped:
            visited[id(param)] = param
            place(param, name, _Rule((name,)), "", name)

    for pname, (shape, looked, optional) in wanted.items():
        if pname in out:
            continue
        if optional:
            report.defaulted.append((pname, optional))
        else:
            report.missing.append((pname, shape, looked))
    for k, v in src.items():
        if k not in used:
            report.unexpected.append((k, tuple(v.shape)))

    if strict and not report.ok:
        raise _mismatch_error(report)
    return out, report


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def _mismatch_error(report: MappingReport) -> WeightsMismatchError:
    lines = report.mismatch_lines()
    return WeightsMismatchError(f"{len(lines)} mismatch{'es' if len(lines) != 1 else ''} between checkpoint and "
                                f"network: " + "; ".join(lines), report)


def load_torch_state_dict(net, path_or_dict, strict: bool = True) -> MappingReport:
    """Convert a torch checkpoint (path, or dict of numpy arrays / torch tensors) and load it into ``net``."""
    import mindspore as ms

    if isinstance(path_or_dict, (str, os.PathLike)):
        state = read_torch_weights(path_or_dict)
    elif isinstance(path_or_dict, Mapping):
        state = path_or_dict
    else:
        raise WeightsError(f"expected a path or a state dict, got {type(path_or_dict).__name__}")
    arrays, report = convert_state_dict(net, state, strict=strict)
    params = {name: ms.Parameter(ms.Tensor(arr), name=name) for name, arr in arrays.items()}
    try:
        not_loaded, unused = ms.load_param_into_net(net, params, strict_load=True)
    except (RuntimeError, TypeError, ValueError) as e:
        raise WeightsError(f"load_param_into_net failed: {_one_line(e)}") from None
    expected_missing = {n for n, _, _ in report.missing} | {n for n, _ in report.defaulted} | \
        {n for n, _, _, _ in report.shape_mismatch} | set(optimizer_state(net).values())
    surprise = [n for n in not_loaded if n not in expected_missing]
    for n in surprise:
        report.missing.append((n, (), "(not reached by the name mapping)"))
    if unused:
        report.conflicts.append(f"load_param_into_net did not use converted entries: {', '.join(unused)}")
    if unused or (strict and not report.ok):
        raise _mismatch_error(report)
    return report


def _refuse_overwriting_input(in_path, written: str) -> None:
    """The checkpoint must not replace the file it is read from (also through links)."""
    try:
        same = os.path.exists(written) and os.path.samefile(in_path, written)
    except OSError:
        same = False
    if same:
        raise WeightsError(f"output {written} is the input file {os.fspath(in_path)}; choose another output name")


def _save_checkpoint(ms, what, written: str) -> None:
    """mindspore.save_checkpoint into a temporary name next to `written`, then one rename: a failure leaves
    an existing file as it was, and a link at `written` is replaced, not written through."""
    tmp = f"{written}.{os.getpid()}.tmp.ckpt"
    try:
        ms.save_checkpoint(what, tmp)
        os.replace(tmp, written)
    except Exception as e:  # noqa: BLE001
        raise WeightsError(f"cannot write {written}: {_one_line(e)}") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def convert_weights_file(in_path, out_ckpt, net=None, strict: bool = True) -> MappingReport:
    """Write a MindSpore ``.ckpt``: tensors as-is by name (no net), or ``net`` after loading the converted weights."""
    out_ckpt = os.fspath(out_ckpt)
    written = out_ckpt if out_ckpt.endswith(".ckpt") else out_ckpt + ".ckpt"  # what MindSpore names it
    _refuse_overwriting_input(in_path, written)
    parent = os.path.dirname(os.path.abspath(written))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise WeightsError(f"cannot write {written}: {parent} is a file, not a directory")
    if os.path.isdir(written):
        raise WeightsError(f"cannot write {written}: it is a directory")
    state = read_torch_weights(in_path)   # before MindSpore is imported: a bad file fails fast
    import mindspore as ms

    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise WeightsError(f"cannot create {parent}: {_one_line(e)}") from None
    if net is None:
        report = MappingReport(source=os.fspath(in_path), notes=list(state.notes))
        items = []
        for k, v in state.items():
            items.append({"name": k, "data": ms.Tensor(v)})
            report.loaded.append((k, k))
        _save_checkpoint(ms, items, written)
        report.notes.append("no network given: tensors written by their torch names and layouts")
    else:
        report = load_torch_state_dict(net, state, strict=strict)
        _save_checkpoint(ms, net, written)
    report.written = written
    return report


def build_net(spec: str, path: Optional[str] = None):
    """Import ``MODULE:CALLABLE`` (``path`` first on sys.path) and call it with no arguments."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise WeightsError(f"--net must look like MODULE:CALLABLE, got {spec!r}")
    mod_name, attr = spec.split(":")
    if path:
        path = os.path.abspath(path)
        if not os.path.isdir(path):
            raise WeightsError(f"--path {path}: no such directory")
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        obj = importlib.import_module(mod_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except SystemExit as e:  # user code that exits must not end this command as a success
        raise WeightsError(f"cannot import {spec}: it called sys.exit({e.code!r})") from None
    except Exception as e:  # noqa: BLE001 - user code; report in one line
        raise WeightsError(f"cannot import {spec}: {type(e).__name__}: {_one_line(e)}") from None
    if not callable(obj):
        raise WeightsError(f"{spec} is not callable")
    try:
        net = obj()
    except SystemExit as e:
        raise WeightsError(f"{spec}() called sys.exit({e.code!r}) instead of returning a network") from None
    except Exception as e:  # noqa: BLE001
        raise WeightsError(f"{spec}() failed: {type(e).__name__}: {_one_line(e)}") from None
    import mindspore.nn as nn   # after the user's module, which imports MindSpore itself

    if not isinstance(net, nn.Cell):
        raise WeightsError(f"{spec}() returned a {type(net).__name__}, not a mindspore.nn.Cell")
    return net


# ----------------------------------------------------------------------------------------------------------------------
# CLI


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="msmigrate weights",
        description="Convert PyTorch weights (.pt/.pth/.bin/.safetensors) into a MindSpore .ckpt without running "
                    "code from the file.")
    p.add_argument("input", metavar="IN", help="torch.save file or .safetensors")
    p.add_argument("-o", "--output", required=True, metavar="OUT.ckpt", help="MindSpore checkpoint to write")
    p.add_argument("--net", metavar="MODULE:CALLABLE",
                   help="build the converted MindSpore network and map names/layouts onto it")
    p.add_argument("--path", metavar="DIR", help="directory put first on sys.path to import --net")
    p.add_argument("--no-strict", action="store_true",
                   help="write what matches even when tensors are missing, unexpected or mis-shaped")
    return p


def main_weights(argv=None, status_file: Optional[str] = None) -> int:
    """``msmigrate weights IN -o OUT.ckpt [--net MODULE:CALLABLE] [--path DIR] [--no-strict]``.

    Exit 0 when written, 1 on a checkpoint/network mismatch, 2 on bad input. With --net the work runs in a
    child process (msmigrate/user_process.py): the factory is the user's code and may end its process;
    ``status_file`` is where that child writes its exit status.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return int(e.code) if isinstance(e.code, int) else 2
    if args.net and status_file is None and args.net.count(":") == 1 and all(args.net.split(":")):
        from .user_process import run_isolated
        return run_isolated(__name__, "main_weights", [os.fspath(a) for a in argv], "msmigrate weights",
                            f"the --net code ({args.net})")
    status = _main_weights(args)
    if status_file is not None:
        from .user_process import write_status
        write_status(status_file, status)
    return status


def _main_weights(args) -> int:
    os.environ.setdefault("GLOG_v", "3")  # keep MindSpore's own warnings out of the CLI output
    strict = not args.no_strict
    try:
        if args.path and not args.net:
            raise WeightsError("--path only makes sense with --net")
        net = build_net(args.net, args.path) if args.net else None
        report = convert_weights_file(args.input, args.output, net=net, strict=strict)
    except WeightsMismatchError as e:
        print(f"msmigrate weights: error: {e}", file=sys.stderr)
        return 1
    except WeightsError as e:
        print(f"msmigrate weights: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - never a traceback
        print(f"msmigrate weights: error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return 2
    for note in report.notes:
        print(f"note: {note}")
    if not report.ok:
        for line in report.mismatch_lines():
            print(f"warning: {line}", file=sys.stderr)
    print(f"wrote {report.written}: {report.summary()}")
    return 0
