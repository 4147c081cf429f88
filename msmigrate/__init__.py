from __future__ import annotations

__version__ = "0.1.0"

# the converter's analyses walk libcst trees read-only dozens of times per file: walk them without
# rebuilding every node (msmigrate/fast_visit.py)
from .fast_visit import install as _install_fast_visit  # noqa: E402

_install_fast_visit()
