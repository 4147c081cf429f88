"""A fast whole-project pre-pass (stdlib `ast`): module names, which classes are
Modules (directly or through project classes in other files), and torch names
re-exported by project modules. The libcst pass then converts one file at a time."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

# Packages whose code needs torch; a project's own copy of one of them is local.
TORCH_ECOSYSTEM = (
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "functorch",
    "timm", "pytorch_lightning", "lightning", "torchmetrics",
)

# torch.nn classes a user class can inherit from and still be a Module.
_MODULE_BASE_PREFIXES = ("torch.nn.",)


# torch-only modules of framework-neutral packages (safetensors.numpy needs no torch).
TORCH_SUBMODULES = ("safetensors.torch",)


def is_torch_name(qname: str) -> bool:
    top = qname.split(".", 1)[0]
    return top in TORCH_ECOSYSTEM or any(qname == m or qname.startswith(m + ".") for m in TORCH_SUBMODULES)


@dataclass
class ModuleInfo:
    name: str                     # dotted module name as the project imports it
    path: Path
    is_package: bool              # an __init__.py
    imports: Dict[str, str] = field(default_factory=dict)   # local name -> absolute qualified name
    classes: Dict[str, List[str]] = field(default_factory=dict)  # class name -> absolute base names
    parse_error: Optional[str] = None


def module_name_for(root: Path, path: Path) -> Tuple[str, bool]:
    """Dotted module name of `path`, for a tree rooted at `root`.

    If `root` is itself a package (has __init__.py) its own name is the first part,
    so `torchvision/models/resnet.py` is `torchvision.models.resnet`."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    if (root / "__init__.py").exists():
        parts = [root.name] + parts
    return ".".join(parts), is_pkg


def resolve_relative(current_module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    pkg = current_module.split(".") if is_package else current_module.split(".")[:-1]
    if level > 1:
        pkg = pkg[: len(pkg) - (level - 1)]
    base = ".".join(p for p in pkg if p)
    if name:
        return f"{base}.{name}" if base else name
    return base


def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Subscript):  # Generic[T] style bases
        return _dotted(node.value)
    return None


def _scan_module(info: ModuleInfo, source: str) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        info.parse_error = str(exc)
        return
    except (RecursionError, MemoryError):   # nesting too deep for Python's own parser
        info.parse_error = "nested too deeply for Python's parser"
        return
    imports = info.imports
    classes = []
    # imports and classes are statements: walk statement bodies only, not expressions
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(info.name, info.is_package, node.level, node.module) if node.level else (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        else:
            if isinstance(node, ast.ClassDef):
                classes.append(node)
            for attr in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, attr, ()) or ())
    for node in classes:
        bases = []
        for b in node.bases:
            d = _dotted(b)
            if not d:
                continue
            head, _, rest = d.partition(".")
            if head in imports:
                d = imports[head] + ("." + rest if rest else "")
            else:
                d = f"{info.name}.{d}"
            bases.append(d)
        info.classes.setdefault(node.name, bases)


class ProjectIndex:
    def __init__(self, root: Path, files: Iterable[Path], sources: Optional[Dict[Path, str]] = None):
        self.root = root
        self.modules: Dict[str, ModuleInfo] = {}
        self.by_path: Dict[Path, ModuleInfo] = {}
        for path in files:
            name, is_pkg = module_name_for(root, path)
            info = ModuleInfo(name, path, is_pkg)
            src = sources.get(path) if sources else None
            if src is None:
                try:
                    src = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    info.parse_error = str(exc)
                    src = None
            if src is not None:
                _scan_module(info, src)
            self.modules[name] = info
            self.by_path[path] = info
        self.local_tops: Set[str] = {n.split(".")[0] for n in self.modules if n}
        # every absolute name some project module imports (to keep re-exported names alive)
        self.imported_names: Set[str] = {v for info in self.modules.values() for v in info.imports.values()}
        self.cell_classes: Set[str] = self._cell_closure()

    def resolve_alias(self, qname: str, depth: int = 0) -> str:
        """Follow project re-exports: `pkg.common.nn.Conv2d` -> `torch.nn.Conv2d`
        when `pkg/common.py` did `from torch import nn`."""
        if depth > 8:
            return qname
        parts = qname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:i])
            info = self.modules.get(mod)
            if info is None:
                continue
            target = info.imports.get(parts[i])
            if target is None:
                return qname
            resolved = ".".join([target] + parts[i + 1:])
            if resolved == qname:
                return qname
            return self.resolve_alias(resolved, depth + 1)
        return qname

    def _cell_closure(self) -> Set[str]:
        classes: Dict[str, List[str]] = {}
        for info in self.modules.values():
            for cname, bases in info.classes.items():
                classes[f"{info.name}.{cname}"] = [self.resolve_alias(b) for b in bases]
        cells: Set[str] = set()
        changed = True
        while changed:
            changed = False
            for cname, bases in classes.items():
                if cname in cells:
                    continue
                for b in bases:
                    if b.startswith(_MODULE_BASE_PREFIXES) or b in cells:
                        cells.add(cname)
                        changed = True
                        break
        return cells

    def is_cell_class(self, module: str, class_name: str) -> bool:
        return f"{module}.{class_name}" in self.cell_classes

    def package_root_depth(self, path: Path) -> Optional[int]:
        """How many package levels sit above `path` inside the tree (0: the file is
        in the top package's own directory); None for a loose script."""
        info = self.by_path.get(path)
        if info is None:
            return None
        d = path.parent
        if not (d / "__init__.py").exists():
            return None
        depth = 0
        while d != self.root and (d.parent / "__init__.py").exists():
            d = d.parent
            depth += 1
        if d == self.root and (self.root / "__init__.py").exists():
            return depth
        # the top package lies below root
        return depth

    def helper_dir(self, path: Path) -> Path:
        """Directory where this file's `_ms_compat.py` lives (top package dir, or the
        script's own dir)."""
        d = path.parent
        if not (d / "__init__.py").exists():
            return d
        while d != self.root and (d.parent / "__init__.py").exists():
            d = d.parent
        return d
