"""`msmigrate scan PATH`: an inventory of the torch APIs a project uses, from the converter's own
analysis (every file converted in memory, nothing written)."""
from __future__ import annotations

import sys
from collections import Counter, defaultdict
from typing import Dict, List

from .registry import CONVERTED, DIFFERENCE, TODO, lookup
from .terminal import rich_console


def _has_mapping(api: str) -> bool:
    m = lookup(api)
    return m is not None and bool(m.target or m.rule)


def _how(api: str, counts: Counter) -> str:
    """"record" (a registry record), "rule" (converted by the converter's own rules, e.g. forward ->
    construct, parameter renames: every site converted, no record) or "none"."""
    if _has_mapping(api):
        return "record"
    return "rule" if counts.get(TODO, 0) == 0 else "none"


def inventory(tree) -> Dict:
    per_api: Dict[str, Counter] = defaultdict(Counter)
    files_of: Dict[str, set] = defaultdict(set)
    targets: Dict[str, Counter] = defaultdict(Counter)
    for f in tree.files:
        for s in f.sites:
            per_api[s.api][s.status] += 1
            files_of[s.api].add(f.rel)
            if s.target:
                targets[s.api][s.target] += 1
    apis: List[Dict] = []
    for api, c in per_api.items():
        apis.append({
            "api": api,
            "sites": sum(c.values()),
            "files": len(files_of[api]),
            "converted": c.get(CONVERTED, 0),
            "converted_with_difference": c.get(DIFFERENCE, 0),
            "todo": c.get(TODO, 0),
            "target": targets[api].most_common(1)[0][0] if targets[api] else "",
            "mapping": _how(api, c) != "none",
            "how": _how(api, c),
        })
    apis.sort(key=lambda r: (-r["todo"], -r["sites"], r["api"]))
    sites = sum(r["sites"] for r in apis)
    todo = sum(r["todo"] for r in apis)
    status = Counter(f.status for f in tree.files)
    return {
        "path": str(tree.src),
        "summary": {
            "python_files": sum(1 for f in tree.files if f.rel.endswith(".py")),
            "files_using_torch": sum(1 for f in tree.files if f.sites),
            "files_that_would_change": len(tree.outputs),
            "files_not_convertible": status.get("failed", 0),
            "apis": len(apis),
            "apis_without_mapping": sum(1 for r in apis if not r["mapping"]),
            "sites": sites,
            "todo": todo,
            "conversion_rate": round((sites - todo) / sites, 4) if sites else 1.0,
        },
        "apis": apis,
        "not_convertible": [{"file": f.rel, "reason": f.reason} for f in tree.files if f.status == "failed"],
    }


def print_inventory(inv: Dict, quiet: bool = False, stream=None) -> None:
    stream = stream or sys.stdout
    rows = [(r["api"], str(r["sites"]), str(r["files"]), str(r["converted"]),
             str(r["converted_with_difference"]), str(r["todo"]), r["target"] or "-",
             {"record": "yes", "rule": "rule"}.get(r.get("how", ""), "NO")) for r in inv["apis"]]
    head = ("torch API", "sites", "files", "converted", "with diff.", "TODO", "becomes", "mapping")
    console = rich_console(stream)
    if console is not None:
        from rich.table import Table

        t = Table(title=f"torch APIs in {inv['path']}")
        for i, h in enumerate(head):
            t.add_column(h, justify="right" if 1 <= i <= 5 else "left", overflow="fold")
        for r in rows:
            style = "red" if r[7] == "NO" else ("yellow" if r[5] != "0" else None)
            t.add_row(*r, style=style)
        console.print(t)
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
        widths[6] = min(widths[6], 48)
        fmt = lambda r: "  ".join(  # noqa: E731
            (c.rjust(widths[i]) if 1 <= i <= 5 else c.ljust(widths[i])) for i, c in enumerate(r)).rstrip()
        print(fmt(head), file=stream)
        print(fmt(tuple("-" * w for w in widths)), file=stream)
        for r in rows:
            print(fmt(r), file=stream)
    if not quiet:
        s = inv["summary"]
        print(f"{s['sites']} torch sites, {s['apis']} APIs ({s['apis_without_mapping']} without a mapping), "
              f"{s['todo']} TODO ({s['conversion_rate'] * 100:.1f}% convertible); {s['files_using_torch']} of "
              f"{s['python_files']} Python files use torch, {s['files_that_would_change']} would change, "
              f"{s['files_not_convertible']} cannot be converted; nothing written", file=stream)
        for r in inv["not_convertible"]:
            print(f"  not convertible: {r['file']}: {r['reason']}", file=stream)
