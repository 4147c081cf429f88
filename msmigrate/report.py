"""The migration report: every torch site, what it became, what differs, what still
needs a human. Written as JSON (for tools), Markdown and HTML (for people; see html_report.py)."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Dict, List

from .html_report import write_html
from .proof import names_existing_test, tests_dir_present
from .registry import CONVERTED, DIFFERENCE, TODO
from .trace_hints import trace_candidates

SCHEMA_VERSION = 1


# torch references in a file that could not be converted (its sites are unknown): a lexical estimate
_TORCH_REF = re.compile(r"\b(?:torch|nn|F)\.[A-Za-z_]")

# what each summary number means; written into the JSON report and the Markdown report
MEANING = {
    "sites": "torch API uses found in the Python files that were converted or left unchanged",
    "converted": "sites rewritten into MindSpore code with the same meaning (exact)",
    "converted_with_difference": "sites rewritten into MindSpore code with a documented difference to review "
                                 "(in the site's note)",
    "converted_total": "converted + converted_with_difference: every site that became MindSpore code",
    "todo": "sites NOT converted: the original code stays in a '# msmigrate: TODO' comment and the "
            "converted code raises MigrationError naming the file and line when it is reached",
    "conversion_rate": "converted_total / sites (TODO sites count against it; sites in files that failed "
                       "are not in it: see conversion_rate_with_failed_files)",
    "exact_rate": "converted / sites",
    "proven": "converted sites whose mapping record names a parity test (torch and the converted form run on "
              "the same inputs) and that test exists in msmigrate's tests/",
    "proven_rate": "proven / sites",
    "unproven": "converted sites no existing test proves (no mapping record, or the record names none)",
    "torch_refs_in_failed_files": "a lexical count of `torch.X`, `nn.X` and `F.X` uses in Python files that could not "
                                  "be converted (copied unchanged): their sites are unknown",
    "conversion_rate_with_failed_files": "converted_total / (sites + torch_refs_in_failed_files)",
    "files": "every file of the tree: converted (rewritten), unchanged (no torch use; copied as is), "
             "copied (not Python; copied as is), failed (could not be converted; copied unchanged)",
}


def _torch_refs_in_failed(tree) -> int:
    n = 0
    for f in tree.files:
        if f.status != "failed" or not f.rel.endswith(".py"):
            continue
        p = Path(tree.src) if Path(tree.src).is_file() else Path(tree.src) / f.rel
        try:
            if p.is_symlink() or not p.is_file() or p.stat().st_size > 5 * 2**20:
                continue
            text = p.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        n += sum(len(_TORCH_REF.findall(line)) for line in text.splitlines()
                 if not line.lstrip().startswith("#"))
    return n


def summarize(tree) -> Dict:
    sites = tree.sites
    counts = Counter(s.status for s in sites)
    total = len(sites)
    exact, diff, todo = counts.get(CONVERTED, 0), counts.get(DIFFERENCE, 0), counts.get(TODO, 0)
    done = exact + diff
    proven = sum(1 for s in sites if s.status != TODO and names_existing_test(s.test))
    failed_refs = _torch_refs_in_failed(tree)
    todo_apis = Counter(s.api for s in sites if s.status == TODO)
    files = Counter(f.status for f in tree.files)

    def rate(n, d):
        return round(n / d, 4) if d else 1.0

    return {
        "sites": total,
        "converted": exact,
        "converted_with_difference": diff,
        "converted_total": done,
        "todo": todo,
        "conversion_rate": rate(done, total),
        "exact_rate": rate(exact, total),
        "proven": proven,
        "proven_rate": rate(proven, total),
        "unproven": done - proven,
        "tests_checked": tests_dir_present(),
        "torch_refs_in_failed_files": failed_refs,
        "conversion_rate_with_failed_files": rate(done, total + failed_refs),
        "files": {"converted": files.get("converted", 0), "unchanged": files.get("unchanged", 0),
                  "copied": files.get("copied", 0), "failed": files.get("failed", 0), "total": len(tree.files)},
        "files_with_todo": sum(1 for f in tree.files if any(s.status == TODO for s in f.sites)),
        "most_frequent_unconverted": [{"api": a, "count": c} for a, c in todo_apis.most_common(20)],
    }


def to_json(tree) -> Dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "source": str(tree.src),
        "output": str(tree.out),
        "summary": summarize(tree),
        "meaning": MEANING,
        "files": [f.to_json() for f in tree.files],
        "trace_route": trace_candidates(tree),
        "dependencies": getattr(tree, "dependencies", []),
        "helper": getattr(tree, "helper", {}),
    }


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(tree) -> str:
    s = summarize(tree)
    out: List[str] = []
    out.append("# msmigrate migration report\n")
    out.append(f"Source: `{tree.src}`  \nOutput: `{tree.out}`\n")
    out.append("## Summary\n")
    n = s["sites"]

    def pct(k):
        return f"{k / n * 100:.1f}%" if n else "-"

    out.append(f"- torch API sites: **{n}**")
    out.append(f"- converted into MindSpore code: **{s['converted_total']} ({pct(s['converted_total'])})**: "
               f"{s['converted']} exact ({pct(s['converted'])}), {s['converted_with_difference']} with a "
               f"documented difference to review ({pct(s['converted_with_difference'])})")
    proof_where = "in msmigrate's tests/" if s["tests_checked"] else "(msmigrate's tests/ is not installed here: no test could be checked)"
    out.append(f"- of those, proven by the parity test their mapping names, a test that exists {proof_where}: **{s['proven']} "
               f"({pct(s['proven'])} of all sites)**; not proven by a test: {s['unproven']}")
    out.append(f"- TODO, not converted (needs a human; raises MigrationError when reached): **{s['todo']} "
               f"({pct(s['todo'])})**")
    if s["files"]["failed"]:
        out.append(f"- files that could not be converted hold about {s['torch_refs_in_failed_files']} more torch "
                   f"references (not counted as sites); counting them as unconverted, the conversion rate is "
                   f"**{s['conversion_rate_with_failed_files'] * 100:.1f}%**")
    out.append(f"- conversion rate by sites: **{s['conversion_rate'] * 100:.1f}%** (converted / all sites; "
               f"proven by a test: {s['proven_rate'] * 100:.1f}%)")
    out.append(f"- files: {s['files']['total']} in all: {s['files']['converted']} converted, "
               f"{s['files']['unchanged']} unchanged (no torch use), {s['files']['copied']} copied (not Python), "
               f"{s['files']['failed']} failed (copied unchanged); {s['files_with_todo']} files carry TODOs")
    helper = getattr(tree, "helper", {})
    if helper:
        out.append(f"- helper module `_ms_compat.py`: {helper['lines']} lines (of the {helper['runtime_lines']}-line "
                   f"runtime: only what the converted code uses), {helper['uses_per_100_lines']} uses per 100 lines "
                   f"of converted code")
    out.append("")
    out.append("What the numbers mean: a converted site is code msmigrate rewrote (exact, or with the difference "
               "its note names); only a parity test shows that it computes what torch computes, and \"proven\" "
               "counts the sites whose mapping names such a test that exists. A TODO site is not converted: "
               "the program stops there with MigrationError. The JSON report's `meaning` explains every "
               "number.\n")
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
    out.append("## Every file\n")
    out.append("| file | status | lines | sites | TODO | note |\n|---|---|---|---|---|---|")
    for f in tree.files:
        n_todo = sum(1 for x in f.sites if x.status == TODO)
        out.append(f"| `{_md_escape(f.rel)}` | {f.status} | {f.lines or ''} | {len(f.sites)} | {n_todo} | "
                   f"{_md_escape(f.reason)} |")
    out.append("")
    out.append("## Sites by file\n")
    for f in tree.files:
        if not f.sites:
            continue
        n_todo = sum(1 for x in f.sites if x.status == TODO)
        out.append(f"### `{f.rel}` ({len(f.sites)} sites, {n_todo} TODO)\n")
        out.append("| line | torch API | became | status | proven by | note |\n|---|---|---|---|---|---|")
        for x in sorted(f.sites, key=lambda x: x.line):
            proof = f"`{_md_escape(x.test)}`" if x.status != TODO and names_existing_test(x.test) else "-"
            out.append(f"| {x.line} | `{_md_escape(x.api)}` | `{_md_escape(x.target) or '-'}` | {x.status} | "
                       f"{proof} | {_md_escape(x.note)} |")
        out.append("")
    return "\n".join(out) + "\n"


def write_reports(tree, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "msmigrate-report.json").write_text(json.dumps(to_json(tree), indent=1), encoding="utf-8")
    (out_dir / "msmigrate-report.md").write_text(to_markdown(tree), encoding="utf-8")
    write_html(tree, out_dir / "msmigrate-report.html", summarize(tree))
