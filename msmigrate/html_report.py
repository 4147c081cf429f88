"""The HTML migration report: ``OUT/msmigrate-report.html``.

One self-contained page (inline CSS and JS, nothing fetched from the network) that opens from disk:

- a summary: conversion rate by sites and by files, what still needs a human, and an effort estimate;
- one section per file: every torch site (line in the ORIGINAL file, API, what it became, status, note),
  each TODO explained, and a side-by-side diff of the original and converted code, with each changed
  site's mapping note shown under the line it came from;
- filters by status and by API.

The texts are read back from SRC and OUT one file at a time and the page is written as it is built, so
memory stays flat for big trees; the embedded diff is capped per file and for the whole page.

Effort estimate (a deliberately simple rule, printed in the report):
  TODO site 15 min, converted-with-difference site 3 min (review), failed file 30 min, converted site 0.
"""
from __future__ import annotations

import difflib
import html
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from .proof import names_existing_test
from .registry import CONVERTED, DIFFERENCE, TODO

EFFORT_MINUTES = {TODO: 15, DIFFERENCE: 3, "failed-file": 30}
MAX_DIFF_ROWS_PER_FILE = 600        # diff rows embedded per file (the rest: "see the file")
MAX_DIFF_ROWS_TOTAL = 60_000        # diff rows embedded in the whole page
MAX_DIFF_FILE_BYTES = 2 * 2**20     # files larger than this get no embedded diff
CONTEXT_LINES = 3


def esc(x) -> str:
    return html.escape(str(x), quote=True)


def effort_minutes(summary: Dict) -> int:
    return (summary["todo"] * EFFORT_MINUTES[TODO]
            + summary["converted_with_difference"] * EFFORT_MINUTES[DIFFERENCE]
            + summary["files"]["failed"] * EFFORT_MINUTES["failed-file"])


def file_rates(tree) -> Tuple[int, int]:
    """(files fully converted, files that involve torch): a file involves torch when it has sites or failed."""
    relevant = [f for f in tree.files if f.sites or f.status == "failed"]
    done = [f for f in relevant if f.status != "failed" and not any(s.status == TODO for s in f.sites)]
    return len(done), len(relevant)


def todo_explanation(site) -> str:
    why = site.note or "no MindSpore mapping known"
    return (f"{site.api} was not converted ({why}). The output keeps the original code in a "
            f"'# msmigrate: TODO' comment and replaces it with a placeholder that raises MigrationError only "
            f"when this line runs: rewrite it with MindSpore APIs (see 'msmigrate api {site.api}').")


def _paths(tree, rel: str) -> Tuple[Path, Path]:
    src, out = Path(tree.src), Path(tree.out)
    if src.is_file():
        return src, (out if out.suffix == ".py" else out / src.name)
    return src / rel, out / rel


def _read(p: Path) -> Optional[List[str]]:
    try:
        if p.stat().st_size > MAX_DIFF_FILE_BYTES:
            return None
        return p.read_bytes().decode("utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return None


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1f3a5f;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header .paths{font:12px monospace;opacity:.85;margin-top:4px;word-break:break-all}
main{padding:16px 24px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:12px}
.card{background:#fff;border:1px solid #d8dde4;border-radius:6px;padding:10px 14px;min-width:150px}
.card .num{font-size:24px;font-weight:600}.card .lbl{color:#5b6675;font-size:12px}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #e0e4ea;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#eef1f5}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.st-converted{color:#1b7a35}.st-converted-with-difference{color:#9a6400}.st-todo{color:#b3261e;font-weight:600}
.st-failed{color:#b3261e;font-weight:600}.st-unchanged{color:#5b6675}
#filters{position:sticky;top:0;background:#f6f7f9;padding:8px 0;border-bottom:1px solid #d8dde4;z-index:2}
#filters label{margin-right:14px}
section.file{background:#fff;border:1px solid #d8dde4;border-radius:6px;margin:14px 0;padding:8px 12px}
section.file h3{margin:4px 0 8px;font-size:15px;word-break:break-all}
.todo-why{background:#fdecea;border-left:3px solid #b3261e;padding:4px 8px;margin:2px 0}
table.diff{width:100%;table-layout:fixed;margin-top:8px}
table.diff td{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;
  word-break:break-all;border:none;padding:0 4px}
table.diff .n{width:42px;color:#8a94a3;text-align:right;user-select:none;background:#fafbfc}
table.diff tr.chg td.l{background:#fdecea}table.diff tr.chg td.r{background:#e6f4ea}
table.diff tr.del td.l{background:#fdecea}table.diff tr.add td.r{background:#e6f4ea}
table.diff tr.gap td{background:#eef1f5;color:#5b6675;text-align:center}
table.diff tr.ann td{background:#fff8e1;font-family:system-ui,sans-serif;font-size:12px;padding:2px 8px}
table.diff tr.ann.st-todo td{background:#fdecea}
.hidden{display:none!important}
.note{color:#5b6675;font-size:12px}
"""

_JS = """
function msmApply(){
  var st=document.getElementById('filter-status').value;
  var api=document.getElementById('filter-api').value;
  var shownSites=0, shownFiles=0;
  document.querySelectorAll('[data-site]').forEach(function(el){
    var ok=(!st||el.getAttribute('data-status')===st)&&(!api||el.getAttribute('data-api')===api);
    el.classList.toggle('hidden',!ok);
    if(ok&&el.tagName==='TR'&&el.classList.contains('site'))shownSites++;
  });
  document.querySelectorAll('section.file').forEach(function(sec){
    var show;
    if(st==='failed'){show=sec.getAttribute('data-status')==='failed'&&!api;}
    else if(!st&&!api){show=true;}
    else{show=sec.querySelector('tr.site[data-site]:not(.hidden)')!==null;}
    sec.classList.toggle('hidden',!show);
    if(show)shownFiles++;
  });
  document.getElementById('filter-count').textContent=shownFiles+' files, '+shownSites+' sites shown';
}
document.addEventListener('DOMContentLoaded',function(){
  document.getElementById('filter-status').addEventListener('change',msmApply);
  document.getElementById('filter-api').addEventListener('change',msmApply);
  document.getElementById('filter-reset').addEventListener('click',function(){
    document.getElementById('filter-status').value='';document.getElementById('filter-api').value='';msmApply();});
  // a link may preselect filters: msmigrate-report.html#status=todo&api=torch.save
  location.hash.replace(/^#/,'').split('&').forEach(function(kv){
    var i=kv.indexOf('=');if(i<0)return;var k=kv.slice(0,i),v=decodeURIComponent(kv.slice(i+1));
    if(k==='status')document.getElementById('filter-status').value=v;
    if(k==='api')document.getElementById('filter-api').value=v;
  });
  msmApply();
});
"""


def _site_row(f_rel: str, s) -> str:
    cells = (f'<td class="mono">{esc(s.line)}</td><td><code>{esc(s.api)}</code></td>'
             f'<td><code>{esc(s.target) if s.target else "-"}</code></td>'
             f'<td class="st-{esc(s.status)}">{esc(s.status)}</td>')
    note = esc(s.note)
    if s.status == TODO:
        note = f'<div class="todo-why">{esc(todo_explanation(s))}</div>'
    elif names_existing_test(s.test):
        note += f'<div class="note proof">proven by <code>{esc(s.test)}</code></div>'
    else:
        note += '<div class="note proof">no parity test proves this mapping</div>'
    return (f'<tr class="site" data-site="1" data-status="{esc(s.status)}" data-api="{esc(s.api)}">'
            f'{cells}<td>{note}</td></tr>')


def _annotation(s) -> str:
    if s.status == TODO:
        text = f"TODO {s.api}: {todo_explanation(s)}"
    else:
        text = f"{s.api} \u2192 {s.target or '?'} ({s.status})" + (f": {s.note}" if s.note else "")
    return (f'<tr class="ann st-{esc(s.status)}" data-site="1" data-status="{esc(s.status)}" '
            f'data-api="{esc(s.api)}"><td class="n"></td><td colspan="3">\u25b2 line {esc(s.line)}: '
            f'{esc(text)}</td></tr>')


def _diff_rows(a: List[str], b: List[str], sites_by_line: Dict[int, list], limit: int) -> Tuple[List[str], bool]:
    """Side-by-side rows for the changed hunks; site annotations under their original line."""
    rows: List[str] = []
    truncated = False
    sm = difflib.SequenceMatcher(None, a, b, autojunk=len(a) > 2000)

    def row(cls: str, i: Optional[int], j: Optional[int]) -> None:
        left = esc(a[i]) if i is not None else ""
        right = esc(b[j]) if j is not None else ""
        rows.append(f'<tr class="{cls}"><td class="n">{"" if i is None else i + 1}</td><td class="l">{left}</td>'
                    f'<td class="n">{"" if j is None else j + 1}</td><td class="r">{right}</td></tr>')
        if i is not None:
            for s in sites_by_line.pop(i + 1, ()):
                rows.append(_annotation(s))

    def pairs():
        first = True
        for group in sm.get_grouped_opcodes(CONTEXT_LINES):
            if not first:
                yield "gap", None, None
            first = False
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    for k in range(i2 - i1):
                        yield "eq", i1 + k, j1 + k
                elif tag == "delete":
                    for i in range(i1, i2):
                        yield "del", i, None
                elif tag == "insert":
                    for j in range(j1, j2):
                        yield "add", None, j
                else:
                    for k in range(max(i2 - i1, j2 - j1)):
                        yield "chg", (i1 + k if i1 + k < i2 else None), (j1 + k if j1 + k < j2 else None)

    for cls, i, j in pairs():
        if len(rows) >= limit:
            truncated = True
            break
        if cls == "gap":
            rows.append('<tr class="gap"><td colspan="4">\u22ef</td></tr>')
        else:
            row(cls, i, j)
    return rows, truncated


def _summary_html(tree, s: Dict) -> Iterable[str]:
    done_files, relevant_files = file_rates(tree)
    file_rate = done_files / relevant_files if relevant_files else 1.0
    minutes = effort_minutes(s)
    cards = [
        ("sites", s["sites"], "torch API sites"),
        ("rate-sites", f"{s['conversion_rate'] * 100:.1f}%", "converted, by sites (exact or with a difference)"),
        ("rate-proven", f"{s['proven_rate'] * 100:.1f}%", f"of sites proven by a parity test ({s['proven']})"),
        ("rate-files", f"{file_rate * 100:.1f}%", f"files fully converted ({done_files} of {relevant_files})"),
        ("converted", s["converted"], "converted"),
        ("difference", s["converted_with_difference"], "converted with a difference (review)"),
        ("todo", s["todo"], "TODO: needs a human"),
        ("failed", s["files"]["failed"], "files not converted (copied unchanged)"),
        ("effort", f"{minutes / 60:.1f} h", f"estimated effort ({minutes} min)"),
    ]
    yield '<section id="summary"><h2>Summary</h2><div class="cards">'
    for key, num, label in cards:
        yield (f'<div class="card" id="card-{key}"><div class="num" data-key="{key}">{esc(num)}</div>'
               f'<div class="lbl">{esc(label)}</div></div>')
    yield "</div>"
    yield (f'<p class="note" id="rates-meaning">Converted: {s["converted_total"]} of {s["sites"]} sites became '
           f'MindSpore code ({s["converted"]} exact, {s["converted_with_difference"]} with a documented '
           f'difference); {s["proven"]} of them are proven by a parity test that exists in msmigrate\'s tests/ '
           f'(torch and the converted form run on the same inputs), {s["unproven"]} are not. TODO sites are not '
           f'converted: the program stops there with MigrationError.'
           + (f' Files that could not be converted hold about {s["torch_refs_in_failed_files"]} more torch '
              f'references; counting them, {s["conversion_rate_with_failed_files"] * 100:.1f}% is converted.'
              if s["files"]["failed"] else "") + '</p>')
    yield (f'<p class="note">Files: {s["files"]["total"]} in all: {s["files"]["converted"]} converted, '
           f'{s["files"]["unchanged"]} unchanged, {s["files"]["copied"]} copied (not Python), '
           f'{s["files"]["failed"]} failed; {s["files_with_todo"]} carry TODOs. Effort rule: '
           f'{EFFORT_MINUTES[TODO]} min per TODO site, {EFFORT_MINUTES[DIFFERENCE]} min per site converted with '
           f'a difference (review), {EFFORT_MINUTES["failed-file"]} min per file that could not be converted; '
           f'converted sites count 0. A rough guide, not a promise.</p>')
    todo_sites = [(f.rel, x) for f in tree.files for x in f.sites if x.status == TODO]
    failed = [f for f in tree.files if f.status == "failed"]
    yield '<h2 id="needs-human">What needs a human</h2>'
    if not todo_sites and not failed:
        yield "<p>Nothing: every torch site was converted.</p>"
    if s["most_frequent_unconverted"]:
        yield "<table id=\"todo-apis\"><tr><th>unconverted API</th><th>sites</th></tr>"
        for r in s["most_frequent_unconverted"]:
            yield f"<tr><td><code>{esc(r['api'])}</code></td><td>{esc(r['count'])}</td></tr>"
        yield "</table>"
    if failed:
        yield "<h3>Files that could not be converted (copied unchanged)</h3><ul id=\"failed-files\">"
        for f in failed:
            yield f'<li><code>{esc(f.rel)}</code>: {esc(f.reason)}</li>'
        yield "</ul>"
    yield '<h3 id="every-file">Every file</h3><table id="file-list"><tr><th>file</th><th>status</th>' \
        '<th>sites</th><th>TODO</th></tr>'
    for f in tree.files:
        n_todo = sum(1 for x in f.sites if x.status == TODO)
        yield (f'<tr><td><code>{esc(f.rel)}</code></td><td class="st-{esc(f.status)}">{esc(f.status)}</td>'
               f'<td>{len(f.sites)}</td><td>{n_todo}</td></tr>')
    yield "</table>"
    yield "</section>"


def write_html(tree, path: Path, summary: Dict) -> None:
    """The HTML report of `tree`; `summary` is report.summarize(tree) (report.py writes all three reports)."""
    s = summary
    api_counts = Counter(x.api for f in tree.files for x in f.sites)
    total_rows = 0
    with open(path, "w", encoding="utf-8") as fh:
        w = fh.write
        w('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
          '<meta name="viewport" content="width=device-width,initial-scale=1">'
          '<title>msmigrate migration report</title>'
          f'<style>{_CSS}</style><script>{_JS}</script></head><body>')
        w(f'<header><h1>msmigrate migration report</h1><div class="paths">source: {esc(tree.src)}<br>'
          f'output: {esc(tree.out)}</div></header><main>')
        for part in _summary_html(tree, s):
            w(part)
        w('<div id="filters"><label>Status <select id="filter-status">'
          '<option value="">all</option>'
          f'<option value="{CONVERTED}">converted</option>'
          f'<option value="{DIFFERENCE}">converted with a difference</option>'
          f'<option value="{TODO}">TODO</option>'
          '<option value="failed">failed files</option></select></label>'
          '<label>API <select id="filter-api"><option value="">all</option>')
        for api, n in sorted(api_counts.items()):
            w(f'<option value="{esc(api)}">{esc(api)} ({n})</option>')
        w('</select></label><button id="filter-reset" type="button">reset</button> '
          '<span id="filter-count" class="note"></span></div>')
        w('<h2>Files</h2>')
        for f in tree.files:
            if f.status in ("unchanged", "copied") and not f.sites:
                continue      # listed in "Every file" above
            n_todo = sum(1 for x in f.sites if x.status == TODO)
            w(f'<section class="file" data-status="{esc(f.status)}" data-file="{esc(f.rel)}">'
              f'<h3><code>{esc(f.rel)}</code> <span class="st-{esc(f.status)}">{esc(f.status)}</span> '
              f'<span class="note">{len(f.sites)} sites, {n_todo} TODO, {f.lines} lines</span></h3>')
            if f.reason:
                w(f'<p class="st-failed">{esc(f.reason)}</p>')
            if f.sites:
                w('<table class="sites"><tr><th>line</th><th>torch API</th><th>became</th><th>status</th>'
                  '<th>note</th></tr>')
                for x in sorted(f.sites, key=lambda x: x.line):
                    w(_site_row(f.rel, x))
                w("</table>")
            if f.status == "converted":
                src_p, out_p = _paths(tree, f.rel)
                a, b = _read(src_p), _read(out_p)
                if a is None or b is None:
                    w('<p class="note">diff not embedded (file too large or unreadable); compare '
                      f'<code>{esc(src_p)}</code> with <code>{esc(out_p)}</code></p>')
                elif total_rows >= MAX_DIFF_ROWS_TOTAL:
                    w('<p class="note">diff not embedded: the report reached its size cap '
                      f'({MAX_DIFF_ROWS_TOTAL} diff rows); compare the files directly</p>')
                else:
                    by_line: Dict[int, list] = defaultdict(list)
                    for x in f.sites:
                        by_line[x.line].append(x)
                    limit = min(MAX_DIFF_ROWS_PER_FILE, MAX_DIFF_ROWS_TOTAL - total_rows)
                    rows, truncated = _diff_rows(a, b, by_line, limit)
                    del a, b
                    total_rows += len(rows)
                    w('<table class="diff"><tr><th class="n"></th><th>original</th><th class="n"></th>'
                      '<th>converted</th></tr>')
                    w("".join(rows))
                    w("</table>")
                    if truncated:
                        w(f'<p class="note">diff truncated after {len(rows)} rows; see '
                          f'<code>{esc(out_p)}</code></p>')
            w("</section>")
        w('</main></body></html>\n')
