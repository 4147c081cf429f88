"""Exported ATen graph -> readable MindSpore model.py + checkpoint + node-by-node validation."""
from __future__ import annotations

import ast
import keyword
import math
import operator
import re
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from . import ops as R
from .check import max_diff, tolerance
from .ops import Alias, First, NotConverted

RUNTIME_FILE = Path(__file__).with_name("runtime_src.py")

_TORCH_KIND = {"Linear": "torch.nn.Linear", "Conv2d": "torch.nn.Conv2d", "BatchNorm": "torch.nn.modules.batchnorm._BatchNorm",
               "LayerNorm": "torch.nn.LayerNorm", "Embedding": "torch.nn.Embedding"}


def runtime_source() -> str:
    text = RUNTIME_FILE.read_text(encoding="utf-8")
    return text.split("# ---- runtime\n", 1)[1]


def _runtime_names() -> set:
    tree = ast.parse(runtime_source())
    names = set()
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return names


RESERVED = _runtime_names() | {"self", "ms", "np", "ops", "nn", "Tensor", "Parameter", "math", "os", "create_model",
                               "float", "int", "tuple", "list", "range", "len", "max", "min", "slice", "None"}


def _ms_dtype(dt) -> str:
    name = str(dt).replace("torch.", "")
    return {"bool": "ms.bool_", "float": "ms.float32", "double": "ms.float64", "long": "ms.int64",
            "int": "ms.int32", "half": "ms.float16"}.get(name, "ms." + name)


class Emit:
    """What a converter sees for one node."""

    def __init__(self, g: "Generator", node):
        self.g, self.node = g, node
        self.name = str(node.target)
        self.args = node.args
        self.a = _normalize(node)

    # values -> code
    def c(self, v) -> str:
        import torch

        if isinstance(v, torch.fx.Node):
            return self.g.value_code(v)
        if isinstance(v, (list, tuple)):
            inner = ", ".join(self.c(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, float):
            if math.isinf(v):
                return 'float("inf")' if v > 0 else 'float("-inf")'
            if math.isnan(v):
                return 'float("nan")'
            return repr(v)
        if isinstance(v, (int, str)):
            return repr(v)
        if isinstance(v, torch.dtype):
            return _ms_dtype(v)
        if isinstance(v, (torch.device, torch.memory_format, torch.layout)):
            return "None"
        raise NotConverted(f"argument of type {type(v).__name__}")

    def list_code(self, v) -> str:
        return "[" + ", ".join(self.c(x) for x in v) + "]"

    def shape_code(self, v) -> str:
        return self.c(list(v) if not isinstance(v, int) else [v])

    def tensor_code(self, v) -> str:
        import torch

        if isinstance(v, torch.fx.Node):
            return self.c(v)
        return f"Tensor({self.c(v)}, {self.dtype_code()})"

    # static facts from the trace
    def _val(self, v):
        return v.meta.get("val") if hasattr(v, "meta") else None

    def in_shape(self, v):
        return tuple(int(s) if _is_static(s) else s for s in self._val(v).shape)

    def in_dtype(self, v):
        return self._val(v).dtype

    def out_dtype(self):
        val = self.node.meta.get("val")
        return val.dtype if hasattr(val, "dtype") else None

    def dtype_code(self, dt=None) -> str:
        return _ms_dtype(dt if dt is not None else self.out_dtype())

    def is_float(self, v=None) -> bool:
        dt = self.in_dtype(v) if v is not None else self.out_dtype()
        return dt is not None and dt.is_floating_point

    def count(self, v, dims) -> int:
        shape = self.in_shape(v)
        if dims is None or dims == []:
            return int(np.prod(shape))
        dims = [dims] if isinstance(dims, int) else dims
        return int(np.prod([shape[d] for d in dims]))

    # parameters and cells
    def param_path(self, v) -> Optional[str]:
        return self.g.param_key.get(v.name) if hasattr(v, "name") else None

    def owner(self, w, kind, keys, bias=None, param_name="weight") -> Optional[str]:
        """The torch module path owning parameter `w` if a `kind` cell can stand for the module."""
        key = self.param_path(w)
        if not key or not key.endswith("." + param_name):
            return None
        path = key[: -len(param_name) - 1]
        mod = self.g.modules.get(path)
        if mod is None or not self.g.is_instance(mod, _TORCH_KIND[kind]):
            return None
        if bias is not None and self.param_path(bias) != path + ".bias":
            return None
        if set(self.g.direct_keys.get(path, ())) != set(keys) or self.g.has_param_children(path):
            return None
        return path

    def cell(self, path, ctor) -> str:
        old = self.g.cells.get(path)
        if old is not None and old != ctor:
            raise NotConverted(f"module {path} called with different settings ({old} / {ctor})")
        self.g.cells[path] = ctor
        return self.g.path_code(path)


def _ident(name) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


_CELL_NAMES: Optional[set] = None


def cell_attr(name: str) -> str:
    """The attribute a torch member `name` gets on the MindSpore container: its own name, unless
    nn.Cell already uses it (a method or an instance field such as `construct`, `cells`, `training`),
    then `name_` (torch_names() restores the parameter names)."""
    global _CELL_NAMES
    if _CELL_NAMES is None:
        from mindspore import nn

        _CELL_NAMES = set(dir(nn.Cell)) | set(vars(nn.Cell()))
    while name in _CELL_NAMES:
        name += "_"
    return name


def _is_static(s) -> bool:
    try:
        int(s)
        return not hasattr(s, "node")
    except Exception:
        return False


def _normalize(node) -> dict:
    """The node's arguments by schema name, defaults filled in."""
    target = node.target
    schema = getattr(target, "_schema", None)
    if schema is None:
        return {}
    out = {}
    pos = [a for a in schema.arguments if not a.kwarg_only]
    for a, v in zip(pos, node.args):
        out[a.name] = v
    out.update(node.kwargs)
    for a in schema.arguments:
        if a.name not in out:
            out[a.name] = a.default_value if a.has_default_value() else None
    return out


class Generator:
    def __init__(self, model, ep, class_name: str):
        import torch

        self.torch = torch
        self.ep = ep
        self.modules = dict(model.named_modules())
        self.children = {}
        for path in self.modules:
            if path:
                parent, _, name = path.rpartition(".")
                self.children.setdefault(parent, []).append(name)
        sig = ep.graph_signature
        self.param_key: Dict[str, str] = {}      # placeholder name -> state key (or constant name)
        self.empty: Dict[str, str] = {}          # placeholder name -> code of an empty constant
        self.user_inputs: List[str] = []
        self.values: Dict[str, object] = {}       # state key -> tensor
        state = ep.state_dict
        for spec in sig.input_specs:
            k = spec.kind.name
            if k == "USER_INPUT":
                self.user_inputs.append(spec.arg.name)
            elif k in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
                tgt = spec.target
                val = state[tgt] if tgt in state else ep.constants[tgt]
                if k != "PARAMETER" and val.numel() == 0:
                    # an empty tensor (a KV cache before its first update): written as code, since a
                    # checkpoint holds no empty tensors
                    self.empty[spec.arg.name] = f"ops.zeros({tuple(val.shape)!r}, {_ms_dtype(val.dtype)})"
                    continue
                if k == "CONSTANT_TENSOR" and tgt not in self.modules_keys(model):
                    tgt = tgt if "." in tgt else "constants." + tgt
                self.param_key[spec.arg.name] = tgt
                self.values[tgt] = val
            else:
                raise NotConverted(f"graph input of kind {k}")
        # what torch trains: parameters with requires_grad (buffers and lifted constants are fixed)
        self.trainable = {k for k, v in model.named_parameters(remove_duplicate=False) if v.requires_grad}
        self.frozen = {k for k, v in model.named_parameters(remove_duplicate=False) if not v.requires_grad}
        # every state_dict key goes to the checkpoint, used by the graph or not
        self.tied: List[tuple] = []   # (key, the key it is tied to): one tensor in torch, one Parameter here
        seen: Dict[tuple, str] = {}
        for k, v in model.state_dict().items():
            self.values.setdefault(k, v)
            if v.numel() > 1:
                ident = (v.data_ptr(), tuple(v.shape), tuple(v.stride()))
                if ident in seen:
                    self.tied.append((k, seen[ident]))
                else:
                    seen[ident] = k
        self.direct_keys: Dict[str, List[str]] = {}
        for k in self.values:
            parent, _, name = k.rpartition(".")
            self.direct_keys.setdefault(parent, []).append(name)
        self.cells: Dict[str, str] = {}
        self.renamed: Dict[str, str] = {}   # container attribute -> torch member name (see cell_attr)
        self.class_name = class_name if class_name not in RESERVED else class_name + "Net"
        self.var: Dict[str, str] = {}
        self.counts: Dict[str, int] = {}
        self.taken: set = set()
        self.alias: Dict[str, str] = {}
        self.first: set = set()
        self.lines: List[tuple] = []     # (node, var, code, module comment)
        self.missing: List[tuple] = []   # (op, reason, where)

    @staticmethod
    def modules_keys(model):
        return set(model.state_dict().keys())

    def is_instance(self, mod, qualname) -> bool:
        modname, _, cls = qualname.rpartition(".")
        import importlib

        return isinstance(mod, getattr(importlib.import_module(modname), cls))

    def has_param_children(self, path) -> bool:
        prefix = path + "."
        return any(k.startswith(prefix) and "." in k[len(prefix):] for k in self.values)

    # ---------------------------------------------------------------- names and paths
    def is_list(self, path) -> bool:
        kids = self._tree_children(path)
        return bool(kids) and all(k.isdigit() for k in kids)

    def _tree_children(self, path):
        prefix = path + "." if path else ""
        kids = []
        for k in list(self.values):
            if k.startswith(prefix):
                rest = k[len(prefix):].split(".")
                if len(rest) > 1 and rest[0] not in kids:
                    kids.append(rest[0])
        return kids

    def path_code(self, path) -> str:
        """`self.layer1[0].conv1` for torch path layer1.0.conv1 (getattr for names like `block1-0`)."""
        code, cur = "self", ""
        for part in path.split("."):
            if self.is_list(cur) and part.isdigit():
                code += f"[{part}]"
            elif _ident(cell_attr(part)):
                code += "." + cell_attr(part)
            else:
                code = f"getattr({code}, {cell_attr(part)!r})"
            cur = f"{cur}.{part}" if cur else part
        return code

    def value_code(self, node) -> str:
        if node.name in self.param_key:
            return self.path_code(self.param_key[node.name])
        if node.name in self.empty:
            return self.empty[node.name]
        if node.name in self.alias:
            return self.alias[node.name]
        if node.name in self.var:
            return self.var[node.name]
        raise NotConverted(f"value {node.name} used before it is computed")

    def new_var(self, node) -> str:
        if node.op == "placeholder":
            name = re.sub(r"\W", "_", node.name)
        elif node.target is operator.getitem and node.args[0].name in self.var:
            name = f"{self.var[node.args[0].name]}_{node.args[1]}"
        else:
            base = str(node.target).split(".")[1] if str(node.target).startswith("aten.") else node.name
            base = re.sub(r"_\d+$", "", re.sub(r"\W", "_", base))
            base = _SHORT.get(base, base.strip("_")) or "v"
            self.counts[base] = self.counts.get(base, 0) + 1
            name = base if self.counts[base] == 1 else f"{base}_{self.counts[base] - 1}"
        while name in RESERVED or keyword.iskeyword(name) or name in self.taken:
            name += "_"
        self.taken.add(name)
        self.var[node.name] = name
        return name

    # ---------------------------------------------------------------- conversion
    def convert(self):
        g = self.ep.graph
        for node in g.nodes:
            if node.op == "placeholder":
                if node.name not in self.param_key and node.name not in self.empty:
                    self.new_var(node)
                continue
            if node.op == "output":
                self.output = node.args[0]
                continue
            if node.op != "call_function":
                self.missing.append((f"{node.op} {node.target}", "graph node kind not supported", _where(node)))
                continue
            name = str(node.target)
            if name in R.SKIP:
                continue
            e = Emit(self, node)
            try:
                if node.target is operator.getitem:
                    src, idx = node.args
                    if src.name in self.first and idx == 0:
                        self.alias[node.name] = self.value_code(src)
                        continue
                    code = f"{self.value_code(src)}[{idx}]"
                elif name in R.CONVERTERS:
                    code = R.CONVERTERS[name](e)
                elif not hasattr(node.target, "_schema"):
                    code = R.python_op(e, node.target)
                else:
                    raise NotConverted("no converter for this ATen op")
            except NotConverted as exc:
                self.missing.append((name, str(exc), _where(node)))
                self.var[node.name] = f"UNCONVERTED_{re.sub(chr(92) + 'W', '_', node.name)}"
                continue
            if isinstance(code, Alias):
                self.alias[node.name] = str(code)
                self.lines.append((node, None, str(code), _module_of(node)))
                continue
            if isinstance(code, First):
                self.first.add(node.name)
            var = self.new_var(node)
            self.lines.append((node, var, str(code), _module_of(node)))

    # ---------------------------------------------------------------- the module tree
    def _member_code(self, path, indent) -> str:
        """Code building the MindSpore stand-in for torch submodule `path`."""
        if path in self.cells:
            return self.cells[path]
        pad = " " * indent
        kids = self._tree_children(path)
        mod = self.modules.get(path)
        label = f"  # {type(mod).__name__}" if mod is not None else ""
        params = [k for k in self.direct_keys.get(path, [])]
        if self.is_list(path) and not params:
            n = max(int(k) for k in kids) + 1
            items = []
            for i in range(n):
                child = f"{path}.{i}" if path else str(i)
                items.append(self._member_code(child, indent + 4) if str(i) in kids else "Empty()")
            body = "".join(f"{pad}    {it},\n" for it in items)
            return f"nn.CellList([{label}\n{body}{pad}])"
        members = self._members(path, kids, params, indent + 4)
        if not members:
            return "Empty()"
        body = "".join(f"{pad}    {k}={v},\n" if _ident(k) else f"{pad}    **{{{k!r}: {v}}},\n" for k, v in members)
        return f"Module({label}\n{body}{pad})"

    def _members(self, path, kids, params, indent):
        """(attribute name, code) of the members of `path`; attribute names differ from the torch names
        only where nn.Cell owns the name (recorded in self.renamed)."""
        out = []
        for k in params:
            key = f"{path}.{k}" if path else k
            out.append((self._attr(k), self._param_code(key)))
        for k in kids:
            child = f"{path}.{k}" if path else k
            out.append((self._attr(k), self._member_code(child, indent)))
        return out

    def _attr(self, name):
        attr = cell_attr(name)
        if attr != name:
            self.renamed[attr] = name
        return attr

    def _param_code(self, key) -> str:
        v = self.values[key]
        shape = tuple(v.shape)
        dt = _ms_dtype(v.dtype)
        kind = "param" if key in self.trainable else "buffer"   # a buffer gets no gradient and no update
        return f"{kind}({shape!r})" if dt == "ms.float32" else f"{kind}({shape!r}, {dt})"

    def tie_lines(self) -> List[str]:
        """`a.weight = b.weight` for each tied pair: torch trains one tensor, so the MindSpore model holds
        one Parameter under the first key (its gradient sums both uses; create_model drops the second
        key from the checkpoint after checking it holds the same values)."""
        lines = []
        for key, source in self.tied:
            parent, _, name = key.rpartition(".")
            holder = self.path_code(parent) if parent else "self"
            value = self.path_code(source)
            if _ident(cell_attr(name)):
                lines.append(f"        {holder}.{cell_attr(name)} = {value}")
            else:
                lines.append(f"        setattr({holder}, {cell_attr(name)!r}, {value})")
        return lines

    def init_lines(self) -> List[str]:
        kids = self._tree_children("")
        params = self.direct_keys.get("", [])
        lines = []
        for k, code in self._members("", kids, params, 8):
            lines.append(f"        self.{k} = {code}" if _ident(k) else f"        setattr(self, {k!r}, {code})")
        lines += self.tie_lines()
        if self.renamed:
            lines.append(f"        torch_names(self, {self.renamed!r})")
        # frozen torch parameters inside cells (Linear, Embedding...), whose own parameters are trainable
        frozen = sorted(f"{path}.{name}" for path in self.cells for name in self.direct_keys.get(path, ())
                        if f"{path}.{name}" in self.frozen and f"{path}.{name}" not in dict(self.tied))
        if frozen:
            lines.append(f"        freeze(self, {frozen!r})")
        return lines

    # ---------------------------------------------------------------- model.py
    def source(self, header: str, extra_code: str = "") -> str:
        """model.py; `extra_code`: more generated code that follows (its runtime helpers are kept too)."""
        runtime = prune_runtime(runtime_source(), extra_code + ("untie_checkpoint\n" if self.tied else "")
                                + "\n".join(c for _, _, c, _ in self.lines)
                                + "\n".join(self.cells.values()) + "\n".join(self.init_lines()))
        out = [f'"""{header}"""', runtime.rstrip(), "", ""]
        out.append(f"class {self.class_name}(nn.Cell):")
        out.append('    """Traced from torch; parameter names are the torch state_dict keys."""')
        out.append("")
        out.append("    def __init__(self):")
        out.append("        super().__init__()")
        out += self.init_lines() or ["        pass"]
        out.append("")
        out += self.construct_lines()
        out.append("")
        out.append("")
        if self.tied:
            out.append("# tied in torch (one tensor): checkpoint key -> the key of the one Parameter it is here")
            out.append(f"TIED = {dict(self.tied)!r}")
            out.append("")
            out.append("")
        create = CREATE_MODEL.replace("CLASS", self.class_name)
        out.append(create.replace(_LOAD, _LOAD_TIED) if self.tied else create)
        return "\n".join(out) + "\n"

    def construct_lines(self) -> List[str]:
        """`def construct(...)` of the class: one line per converted node, a comment where the torch module
        changes, then the return."""
        args = ", ".join(self.var[n] for n in self.user_inputs)
        out = [f"    def construct(self, {args}):"]
        last_mod = None
        for _node, var, code, mod in self.lines:
            if var is None:
                continue
            if mod != last_mod and mod:
                out.append(f"        # {mod}")
                last_mod = mod
            out.append(f"        {var} = {code}")
        out.append(f"        return {self.output_code()}")
        return out

    def output_code(self) -> str:
        import torch

        outs = self.output
        if isinstance(outs, (list, tuple)):
            codes = [self.value_code(o) if isinstance(o, torch.fx.Node) else repr(o) for o in outs]
            return codes[0] if len(codes) == 1 else "(" + ", ".join(codes) + ")"
        return self.value_code(outs)


CREATE_MODEL = '''def create_model(checkpoint=None):
    """The network with its weights (model.ckpt next to this file unless `checkpoint` is given), in eval mode."""
    net = CLASS()
    path = checkpoint or os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.ckpt")
    if list(net.get_parameters()):
        # load_param_into_net only warns on missing or extra names: check both lists
        not_loaded, unused = ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)
        if not_loaded or unused:
            raise RuntimeError(f"checkpoint does not fit the network: missing {not_loaded[:5]}, unused {unused[:5]}")
    net.set_train(False)
    return net'''

_LOAD = "ms.load_param_into_net(net, ms.load_checkpoint(path), strict_load=True)"
_LOAD_TIED = "ms.load_param_into_net(net, untie_checkpoint(ms.load_checkpoint(path), TIED), strict_load=True)"


def prune_runtime(runtime: str, used_code: str) -> str:
    """Keep the runtime's imports and only the helpers the generated code uses (transitively;
    the mechanism `convert` uses for _ms_compat.py, msmigrate/runtime_prune.py)."""
    from ..runtime_prune import prune_source

    defs = {n.name for n in ast.parse(runtime).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    roots = [w for w in re.findall(r"[A-Za-z_]\w*", used_code) if w in defs] + ["Module", "Empty", "param"]
    return prune_source(runtime, roots, keep_imports=True)


_SHORT = {"_native_batch_norm_legit_no_training": "bn", "batch_norm": "bn", "conv2d": "conv", "convolution": "conv",
          "scaled_dot_product_attention": "attn", "layer_norm": "ln", "native_layer_norm": "ln", "getitem": "item",
          "max_pool2d": "pool", "avg_pool2d": "pool", "adaptive_avg_pool2d": "pool", "_unsafe_view": "view",
          "sym_size": "n", "_softmax": "softmax", "_log_softmax": "log_softmax", "_to_copy": "cast"}

_LEAF_TYPES = ("Conv", "Linear", "BatchNorm", "LayerNorm", "Embedding", "ReLU", "GELU", "SiLU", "Hardswish", "Dropout",
               "Hardsigmoid", "Sigmoid", "Tanh", "Pool", "Flatten", "Identity", "Softmax", "LSTM", "GRU", "ReLU6",
               "GroupNorm", "StochasticDepth", "Permute")


def _module_of(node) -> str:
    """The block a node belongs to (the innermost module above leaf layers), for a comment."""
    stack = node.meta.get("nn_module_stack") or {}
    entries = [(re.sub(r"@\d+$", "", str(p)), getattr(c, "__name__", str(c)).rsplit(".", 1)[-1])
               for p, c in stack.values()]
    entries = [(p, c) for p, c in entries if p and not p.startswith("_") and not c.startswith("_")]
    while len(entries) > 1 and any(t in entries[-1][1] for t in _LEAF_TYPES):
        entries.pop()
    if not entries:
        return ""
    path, cls = entries[-1]
    return f"{path} ({cls})"


def _where(node) -> str:
    st = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)\n\s*(.*)', st)
    user = [f for f in frames if "/torch/" not in f[0]]
    f = (user or frames or [None])[-1]
    return f"{f[0]}:{f[1]} ({f[3].strip()})" if f else ""


# ---------------------------------------------------------------- validation
def record_torch(ep, user_args):
    """Run the exported graph with torch, keeping every node's value."""
    import torch

    sig = ep.graph_signature
    flat = []
    it = iter(user_args)
    for spec in sig.input_specs:
        k = spec.kind.name
        if k == "USER_INPUT":
            flat.append(next(it))
        else:
            flat.append(ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target])
    values = {}

    class Rec(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            values[n.name] = out
            return out

    with torch.no_grad():
        Rec(ep.graph_module).run(*flat)
    return values


def to_ms(v):
    import mindspore as ms
    import torch

    if isinstance(v, torch.Tensor):
        return ms.Tensor(v.detach().cpu().numpy())
    if isinstance(v, (list, tuple)):
        return type(v)(to_ms(x) for x in v)
    if isinstance(v, torch.SymInt):
        return int(v)
    return v


def compare(ms_val, t_val):
    """max|d| and tolerance between a MindSpore value and the torch value (tuples: the worst item)."""
    import torch

    if isinstance(t_val, (list, tuple)):
        if not isinstance(ms_val, (list, tuple)) or len(ms_val) != len(t_val):
            return float("inf"), 0.0, f"expected {len(t_val)} outputs"
        worst = (0.0, 1.0, "")
        for a, b in zip(ms_val, t_val):
            d = compare(a, b)
            if d[0] - d[1] > worst[0] - worst[1] or d[2]:
                worst = d
        return worst
    if isinstance(t_val, torch.Tensor):
        y = t_val.detach().cpu().numpy()
        try:
            x = ms_val.asnumpy() if hasattr(ms_val, "asnumpy") else np.asarray(ms_val)
        except Exception as exc:  # noqa: BLE001
            return float("inf"), 0.0, f"{type(exc).__name__}: {exc}"
        if x.shape != y.shape:
            return float("inf"), 0.0, f"shape {x.shape} instead of {y.shape}"
        if y.size == 0:
            return 0.0, 0.0, ""
        if y.dtype == np.bool_:
            return float((x != y).sum()), 0.0, ""
        return max_diff(x, y), tolerance(y.astype(np.float64)) if y.dtype.kind == "f" else 0.0, ""
    try:
        same = ms_val == t_val
    except Exception:  # noqa: BLE001
        same = False
    return (0.0 if same else float("inf")), 0.0, "" if same else f"{ms_val!r} instead of {t_val!r}"


class LazyVars(dict):
    """eval() locals: node values converted from torch on first use."""

    def __init__(self, names, recorded, first):
        super().__init__()
        self.names, self.recorded, self.first = names, recorded, first

    def __missing__(self, key):
        if key in self.names:
            v = self.recorded[self.names[key]]
            v = to_ms(v[0] if self.names[key] in self.first else v)
            self[key] = v
            return v
        raise KeyError(key)


def validate_nodes(gen: Generator, recorded, ns, net) -> List[dict]:
    """Run each emitted expression (PyNative) on the recorded torch inputs of its node and compare
    with the recorded torch output."""
    names = {v: k for k, v in gen.var.items()}
    rows = []
    local_ns = LazyVars(names, recorded, gen.first)
    local_ns["self"] = net
    for node, var, code, mod in gen.lines:
        row = {"node": node.name, "op": str(node.target), "code": code, "module": mod}
        t = recorded.get(node.name)
        try:
            got = eval(code, ns, local_ns)  # noqa: S307 - our own generated code
            ref = t[0] if node.name in gen.first else t
            d, tol, err = compare(got, ref)
            row.update(max_abs_diff=d, tol=tol, error=err, ok=(not err and d <= tol))
        except Exception as exc:  # noqa: BLE001
            row.update(max_abs_diff=float("inf"), tol=0.0, error=f"{type(exc).__name__}: {str(exc).strip()[:300]}",
                       ok=False)
        rows.append(row)
    return rows

