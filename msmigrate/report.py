"""The migration report: every torch site, what it became, what differs, what still
needs a human. Written as JSON (for tools), Markdown and HTML (for people; see html_report.py)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Dict, List

from .registry import CONVERTED, DIFFERENCE, TODO
from .trace_hints import trace_candidates

SCHEMA_VERSION = 1


def summarize(tree) -> Dict:
    sites = tree.sites
    counts = Counter(s.status for s in sites)
    total = len(sites)
    done = counts.get(CONVERTED, 0) + counts.get(DIFFERENCE, 0)
    todo_apis = Counter(s.api for s in sites if s.status == TODO)
    files = Counter(f.status for f in tree.files)
    return {
        "sites": total,
        "converted": counts.get(CONVERTED, 0),
        "converted_with_difference": counts.get(DIFFERENCE, 0),
        "todo": counts.get(TODO, 0),
        "conversion_rate": round(done / total, 4) if total else 1.0,
        "files": {"converted": files.get("converted", 0), "unchanged": files.get("unchanged", 0),
                  "failed": files.get("failed", 0)},
        "files_with_todo": sum(1 for f in tree.files if any(s.status == TODO for s in f.sites)),
        "most_frequent_unconverted": [{"api": a, "count": c} for a, c in todo_apis.most_common(20)],
    }


def to_json(tree) -> Dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "source": str(tree.src),
        "output": str(tree.out),
        "summary": summarize(tree),
        "files": [f.to_json() for f in tree.files],
        "trace_route": trace_candidates(tree),
        "dependencies": getattr(tree, "dependencies", []),
    }


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(tree) -> str:
    s = summarize(tree)
    out: List[str] = []
    out.append("# msmigrate migration report\n")
    out.append(f"Source: `{tree.src}`  \nOutput: `{tree.out}`\n")
    out.append("## Summary\n")
    out.append(f"- torch API sites: **{s['sites']}**")
    out.append(f"- converted: {s['converted']}; converted with a difference to review: "
               f"{s['converted_with_difference']}; TODO (needs a human): **{s['todo']}**")
    out.append(f"- conversion rate by sites: **{s['conversion_rate'] * 100:.1f}%**")
    out.append(f"- files: {s['files']['converted']} converted, {s['files']['unchanged']} unchanged, "
               f"{s['files']['failed']} failed (copied unchanged); {s['files_with_todo']} files carry TODOs\n")
    if s["most_frequent_unconverted"]:
        out.append("## Most frequent unconverted APIs\n")
        out.append("| API | sites |\n|---|---|")
        for row in s["most_frequent_unconverted"]:
            out.append(f"| `{row['api']}` | {row['count']} |")
        out.append("")
    traceable = trace_candidates(tree)
    if traceable:
        out.append("## Classes left with TODOs: the graph-capture route\n")
        out.append("`msmigrate trace` captures a model with torch.export and writes a MindSpore Cell and checkpoint "
                   "without reading its code. For an nn.Module class below, pass a callable that builds it "
                   "(the class itself when its arguments have defaults) and the shape of its input:\n")
        out.append("| file | class | line | TODO sites | command |\n|---|---|---|---|---|")
        for c in traceable:
            out.append(f"| `{c['file']}` | `{c['class']}` | {c['line']} | {c['todo']} | `{c['command']}` |")
        out.append("")
    launch = getattr(tree, "launch_scripts", [])
    if launch:
        out.append("## Distributed programs: start them with msrun\n")
        out.append("These programs use torch.distributed; msrun (MindSpore's torchrun) starts their processes. "
                   "Run the script written next to each (`NPROC=4 sh SCRIPT ARGS` for 4 processes):\n")
        for script in launch:
            out.append(f"- `{script}`")
        out.append("")
    from .deps import markdown as dependencies_markdown
    out.extend(dependencies_markdown(getattr(tree, "dependencies", [])))
    failed = [f for f in tree.files if f.status == "failed"]
    if failed:
        out.append("## Files that could not be converted (copied unchanged)\n")
        for f in failed:
            out.append(f"- `{f.rel}`: {f.reason}")
        out.append("")
    out.append("## Sites by file\n")
    for f in tree.files:
        if not f.sites:
            continue
        n_todo = sum(1 for x in f.sites if x.status == TODO)
        out.append(f"### `{f.rel}` ({len(f.sites)} sites, {n_todo} TODO)\n")
        out.append("| line | torch API | became | status | note |\n|---|---|---|---|---|")
        for x in sorted(f.sites, key=lambda x: x.line):
            out.append(f"| {x.line} | `{_md_escape(x.api)}` | `{_md_escape(x.target) or '-'}` | {x.status} | "
                       f"{_md_escape(x.note)} |")
        out.append("")
    return "\n".join(out) + "\n"


def write_reports(tree, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "msmigrate-report.json").write_text(json.dumps(to_json(tree), indent=1), encoding="utf-8")
    (out_dir / "msmigrate-report.md").write_text(to_markdown(tree), encoding="utf-8")
    from .html_report import write_html

    write_html(tree, out_dir / "msmigrate-report.html")
