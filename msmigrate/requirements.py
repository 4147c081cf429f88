"""`OUT/requirements-mindspore.txt`: every third-party package the converted tree still imports
(MindSpore and NumPy first), found by reading the imports of the written Python files. The standard
library (sys.stdlib_module_names) and the project's own modules are left out; import names that differ
from their distribution's name (PIL -> pillow) are translated."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, Iterable, Set

from .source_limits import source_problem

# import name -> name on PyPI, where they differ
DISTRIBUTIONS = {
    "PIL": "pillow", "yaml": "pyyaml", "sklearn": "scikit-learn", "skimage": "scikit-image",
    "cv2": "opencv-python", "bs4": "beautifulsoup4", "attr": "attrs", "dateutil": "python-dateutil",
    "google": "protobuf", "Crypto": "pycryptodome", "serial": "pyserial", "dotenv": "python-dotenv",
    "git": "GitPython", "jwt": "PyJWT", "magic": "python-magic", "OpenSSL": "pyOpenSSL", "fitz": "PyMuPDF",
    "docx": "python-docx", "pptx": "python-pptx", "lmdb": "lmdb", "h5py": "h5py", "tensorboardX": "tensorboardX",
    "Levenshtein": "python-Levenshtein", "sentencepiece": "sentencepiece", "mpl_toolkits": "matplotlib",
    "pkg_resources": "setuptools", "usb": "pyusb", "zmq": "pyzmq", "win32api": "pywin32",
}
PINNED = {"mindspore": "mindspore==2.10.0", "numpy": "numpy<2  # MindSpore's PyNative mode breaks with numpy 2"}
# torch's ecosystem: left in files that could not be converted (or TODO code); listed apart
_TORCH_FAMILY = {"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "functorch", "timm",
                 "pytorch_lightning", "lightning", "torchmetrics"}

_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]+([A-Za-z_]\w*)", re.M)


def _imports(tree: ast.AST, top_level_only: bool) -> Set[str]:
    """Top names of absolute imports; with top_level_only, not those inside functions (lazy imports)."""
    out: Set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if not node.level and node.module:
                out.add(node.module.split(".")[0])
        elif top_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        else:
            stack.extend(ast.iter_child_nodes(node))
    return out


def third_party_imports(files: Iterable[Path], root: Path, helper_name: str = "_ms_compat") -> Set[str]:
    """Top-level import names of the Python files under `root` that are neither standard library nor
    modules or packages of the tree itself. The helper module counts only with its module-level imports
    (its function-level ones serve programs that already import that package themselves)."""
    files = list(files)
    local: Set[str] = {helper_name, "__future__", "__main__"}
    for p in files:
        rel = p.relative_to(root)
        local.add(rel.stem)
        local.update(rel.parts[:-1])
    found: Set[str] = set()
    for p in files:
        try:
            text = p.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
        try:
            if source_problem(text):        # too deep or too long for the parser: copied unchanged
                raise ValueError(source_problem(text))
            found |= _imports(ast.parse(text), top_level_only=p.stem == helper_name)
        except (SyntaxError, ValueError, RecursionError, MemoryError):   # a file copied unchanged
            found |= set(_IMPORT_LINE.findall(text))
    return {n for n in found if n not in local and n not in sys.stdlib_module_names}


def requirements_text(names: Set[str]) -> str:
    lines = ["# written by msmigrate: the third-party packages the converted code imports"]
    lines += [PINNED["mindspore"], PINNED["numpy"]]
    rest: Dict[str, str] = {}
    for n in names - set(PINNED) - _TORCH_FAMILY:
        rest[DISTRIBUTIONS.get(n, n).lower()] = DISTRIBUTIONS.get(n, n)
    lines += [rest[k] for k in sorted(rest)]
    torch_left = sorted(names & _TORCH_FAMILY)
    if torch_left:
        lines.append("# still imported by code that was not converted (see the report's failed files and TODOs):")
        lines += [f"# {n}" for n in torch_left]
    return "\n".join(lines) + "\n"


def write_requirements(out_root: Path, py_files: Iterable[Path]) -> Path:
    path = out_root / "requirements-mindspore.txt"
    path.write_text(requirements_text(third_party_imports(py_files, out_root)), encoding="utf-8")
    return path
