"""A command that runs the user's code (the `--net` factory of `msmigrate weights`) runs it in a process of
its own: code that ends its process (os._exit, a crash in native code) then fails the command with one line
and a non-zero exit, instead of ending msmigrate with whatever status that code chose."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import List

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # where this msmigrate is imported from


def run_isolated(module: str, function: str, argv: List[str], command: str, what: str) -> int:
    """`module.function(argv, status_file=PATH)` in a child Python; it writes its exit status to PATH when it
    returns. The child's output is passed on; a child that ended before writing its status is an error."""
    with tempfile.TemporaryDirectory(prefix="msmigrate-") as tmp:
        status_file = os.path.join(tmp, "status")
        code = (f"import sys\nsys.path.insert(0, {_ROOT!r})\nfrom {module} import {function}\n"
                f"{function}(sys.argv[1:], status_file={status_file!r})\n")
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                              errors="replace")
        try:
            with open(status_file, encoding="utf-8") as f:
                status = int(f.read())
        except (OSError, ValueError):
            status = None
    sys.stdout.write(proc.stdout)
    if status is None:   # what it printed on the way out (a traceback from a dying thread) stays out
        how = f"exit status {proc.returncode}" if proc.returncode >= 0 else f"signal {-proc.returncode}"
        print(f"{command}: error: {what} ended the process ({how}) before the command finished; "
              "nothing was written", file=sys.stderr)
        return 2
    sys.stderr.write(proc.stderr)
    return status


def write_status(status_file: str, status: int) -> None:
    with open(status_file, "w", encoding="utf-8") as f:
        f.write(str(status))
