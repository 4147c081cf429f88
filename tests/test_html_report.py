"""The HTML report: written by every convert, self-contained, escaped, capped, and rendered by
headless Chromium (summary numbers, file sections, TODO explanations, working filters, a screenshot)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from msmigrate import html_report
from msmigrate.cli import main
from tests.treeutil import write_tree

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/models.py": """\
        # <script>alert("comment")</script> & friends
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.bn = nn.BatchNorm1d(3)
                self.tag = "</td><b>not bold</b>"

            def forward(self, x):
                return torch.flatten(self.bn(self.fc(x)), 1)

            def odd(self, x):
                return torch.frobnicate(x)
        """,
    "pkg/broken.py": "import torch\ndef f(:\n",
    "pkg/plain.py": "X = 1\n",
}




@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    src, out = tmp / "src", tmp / "out"
    write_tree(src, PROJECT)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 1
    return out


def test_written_self_contained_and_escaped(converted):
    page = (converted / "msmigrate-report.html").read_text(encoding="utf-8")
    report = json.loads((converted / "msmigrate-report.json").read_text())
    s = report["summary"]
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing fetched from anywhere
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    assert "@import" not in page and "<link" not in page
    # escaped: the source's markup never becomes markup
    assert '<script>alert("comment")</script>' not in page
    assert "&lt;script&gt;alert(&quot;comment&quot;)&lt;/script&gt;" in page
    assert "<b>not bold</b>" not in page and "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert page.count("<script>") == 1, "only the report's own inline script"
    # summary, file sections, sites with ORIGINAL line numbers, TODO explanation, filters
    assert f'data-key="sites">{s["sites"]}<' in page
    assert f'data-key="todo">{s["todo"]}<' in page
    assert 'data-file="pkg/models.py"' in page and 'data-file="pkg/broken.py"' in page
    assert 'data-file="pkg/plain.py"' not in page, "files without torch are not listed"
    assert "not valid Python" in page
    assert "torch.frobnicate was not converted" in page and "MigrationError" in page
    assert 'id="filter-status"' in page and 'id="filter-api"' in page
    assert '<option value="torch.nn.Linear">' in page
    assert re.search(r'<tr class="site"[^>]*data-api="torch.frobnicate"[^>]*>\s*<td class="mono">17</td>', page)
    # side-by-side diff, with the mapping note under the original line
    assert '<table class="diff">' in page
    assert "torch.nn.BatchNorm1d \u2192" in page and "momentum" in page
    minutes = s["todo"] * 15 + s["converted_with_difference"] * 3 + s["files"]["failed"] * 30
    assert f"({minutes} min)" in page


def test_diff_is_capped(tmp_path, monkeypatch):
    src, out = tmp_path / "src", tmp_path / "out"
    body = "".join(f"    x{i} = torch.zeros({i})\n" for i in range(400))
    write_tree(src, {"big.py": "import torch\n\ndef f():\n" + body})
    monkeypatch.setattr(html_report, "MAX_DIFF_ROWS_PER_FILE", 50)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    page = (out / "msmigrate-report.html").read_text()
    assert "diff truncated after" in page
    assert page.count('<tr class="chg"') + page.count('<tr class="eq"') <= 60
    monkeypatch.setattr(html_report, "MAX_DIFF_ROWS_TOTAL", 0)
    shutil.rmtree(out)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert "reached its size cap" in (out / "msmigrate-report.html").read_text()


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is required on CI (scripts/setup.sh installs Debian's chromium package)")
        pytest.skip("chromium is not installed: this test renders the HTML report in headless Chromium "
                    "(install it, e.g. 'sudo apt-get install chromium'; with CI=true scripts/setup.sh does)")
    return exe


def _chromium_cmd(exe: str, profile: Path):
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"]


def test_renders_in_headless_chromium(converted, tmp_path):
    exe = _chromium()
    page = (converted / "msmigrate-report.html").resolve()
    report = json.loads((converted / "msmigrate-report.json").read_text())
    s = report["summary"]
    png = tmp_path / "report.png"
    r = subprocess.run(_chromium_cmd(exe, tmp_path / "profile1") + [
        f"--screenshot={png}", "--window-size=1280,2000", page.as_uri()],
        capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 2000)

    def dom(url: str, profile: str) -> str:
        r = subprocess.run(_chromium_cmd(exe, tmp_path / profile) + ["--dump-dom", url],
                           capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout

    d = dom(page.as_uri(), "profile2")
    assert f'data-key="sites">{s["sites"]}<' in d
    assert f'data-key="rate-sites">{s["conversion_rate"] * 100:.1f}%<' in d
    assert '<section class="file" data-status="converted" data-file="pkg/models.py">' in d
    assert "torch.frobnicate was not converted" in d
    assert 'id="filter-status"' in d and 'id="filter-api"' in d and 'id="filter-reset"' in d
    # the inline script ran: the filter counter is filled in
    m = re.search(r'id="filter-count"[^>]*>(\d+) files, (\d+) sites shown<', d)
    assert m and int(m.group(2)) == s["sites"], m
    # a filter preselected through the URL hides what does not match
    d = dom(page.as_uri() + "#status=todo", "profile3")
    m = re.search(r'id="filter-count"[^>]*>(\d+) files, (\d+) sites shown<', d)
    assert m and int(m.group(2)) == s["todo"], m
    assert re.search(r'<section class="file hidden" data-status="failed" data-file="pkg/broken.py">', d)
    assert re.search(r'<tr class="site hidden"[^>]*data-status="converted"', d)
