"""Terminal output shared by the commands: rich's console and tables where the stream is a terminal
and rich is installed; None where it is not, and the command prints its plain-text report."""
from __future__ import annotations

import sys
from typing import Any, Iterable, Optional, Sequence


def rich_console(stream: Any = None):
    """A rich Console writing to `stream` (stdout by default) when it is a terminal and rich is
    installed; None otherwise."""
    stream = sys.stdout if stream is None else stream
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream)


def result_table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Iterable[str]):
    """A rich Table of string rows whose last column is a verdict: "ok" in green, anything else in red.
    The columns named in `right` are right-aligned."""
    from rich.markup import escape
    from rich.table import Table

    right = set(right)
    table = Table(show_edge=False, pad_edge=False)
    for h in header:
        table.add_column(h, justify="right" if h in right else "left")
    for r in rows:
        style = "green" if r[-1] == "ok" else "red"
        table.add_row(*map(escape, r[:-1]), f"[{style}]{escape(r[-1])}[/{style}]")
    return table


def spinner(text: str) -> Optional[Any]:
    """A started rich spinner on stderr when stderr is a terminal and rich is installed (call its
    update(text) and stop()); None otherwise."""
    console = rich_console(sys.stderr)
    if console is None:
        return None
    status = console.status(text, spinner="dots")
    status.start()
    return status
