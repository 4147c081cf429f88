"""What each command needs beyond the converter, and the one line it prints when something is missing.

`pip install msmigrate` is the converter alone (convert, scan, api, census need only libcst, numpy, rich and
safetensors); the frameworks come with the extras named in pyproject.toml: [verify] (torch, MindSpore),
[keras], [tensorflow]. A command whose framework is not installed stops with one line naming the extra.
"""
from __future__ import annotations

import importlib.util
import os
import traceback
from typing import Optional

# command -> (import name, extra that installs it), in the order they are checked
NEEDS = {
    "weights": (("mindspore", "verify"),),
    "verify": (("torch", "verify"), ("mindspore", "verify")),
    "trace": (("torch", "verify"), ("mindspore", "verify")),
    "export": (("mindspore", "verify"),),
    "keras": (("keras", "keras"), ("mindspore", "verify")),
}

# set to see the full Python traceback instead of the one-line error
TRACEBACK_ENV = "MSMIGRATE_TRACEBACK"


def missing_requirement(command: str) -> Optional[str]:
    """The one-line error for a command whose framework is not importable, or None."""
    for module, extra in NEEDS.get(command, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return (f"msmigrate {command} needs {module}, which is not installed: "
                    f"pip install 'msmigrate[{extra}]' (or scripts/setup.sh)")
    return None


def hint(exc: BaseException) -> str:
    """What to do about a known environment problem behind `exc` ('; ...'), or ''."""
    text = str(exc)
    if "torchvision::" in text and "does not exist" in text:
        # the CUDA torchvision wheel from PyPI next to torch's CPU build: its C++ ops library cannot load
        return ("; torchvision does not match this torch build: install the CPU wheel of the same release, "
                "pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu")
    return ""


def _where(exc: BaseException) -> str:
    """file:line of the innermost frame in the user's code (not msmigrate's, not an installed package's)."""
    tb = traceback.extract_tb(exc.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    own = [f for f in tb if not f.filename.startswith(here)
           and "site-packages" not in f.filename and "dist-packages" not in f.filename
           and not f.filename.startswith("<")]
    frame = (own or tb or [None])[-1]
    return f" (at {frame.filename}:{frame.lineno})" if frame else ""


def one_line_error(command: str, exc: BaseException) -> str:
    """An unexpected exception of a command, said in one line; MSMIGRATE_TRACEBACK=1 shows the traceback."""
    if os.environ.get(TRACEBACK_ENV):
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    first = (str(exc).strip().splitlines() or [""])[0]
    return (f"msmigrate {command}: error: {type(exc).__name__}: {first}{_where(exc)}{hint(exc)}"
            + ("" if os.environ.get(TRACEBACK_ENV) else f" (set {TRACEBACK_ENV}=1 for the traceback)"))
