"""Size of the emitted helper module, by converted tree: `_ms_compat.py` holds only what the converted
code uses (msmigrate/runtime_prune.py), once per tree. Before, every package directory with converted
code got the whole runtime (the first column counts those copies).

    python bench/helper_size.py            # the figures
    python bench/helper_size.py --why [N]  # and, per tree, the N biggest definitions kept (default 25),
                                           # each with the chain of uses from a root that keeps it
"""
from __future__ import annotations

import collections
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msmigrate.converter import COMPAT, compat_source, convert_tree  # noqa: E402
from msmigrate.runtime_prune import helper_roots, why_kept  # noqa: E402

TREES = [ROOT / "examples" / "torch_project", ROOT / "examples" / "tensorflow"] + sorted(
    p for p in (ROOT / "examples" / "training").iterdir() if p.is_dir())


def why_report(helper: str, out: Path, top: int) -> None:
    roots, _, _ = helper_roots(sorted(out.rglob("*.py")), COMPAT)
    if roots is None:
        print("    (the helper module is used as a value: all of it is kept)")
        return
    rows = why_kept(helper, roots)
    by_section = collections.Counter()
    for r in rows:
        by_section[r["section"]] += r["lines"]
    print("    lines by section: " + ", ".join(f"{s} {n}" for s, n in by_section.most_common()))
    for r in rows[:top]:
        print(f"    {r['lines']:5}  [{r['section']}] {r['label']}: {r['chain']}")


def main() -> None:
    why = "--why" in sys.argv
    top = int(sys.argv[sys.argv.index("--why") + 1]) if why and sys.argv[-1].isdigit() else 25
    source = compat_source()
    full = source.count("\n")
    print(f"runtime: {full} lines")
    print(f"{'tree':<34} {'before':>8} {'after':>6} {'uses/100 lines':>15} {'Keras':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for src in TREES:
            out = Path(tmp) / src.name
            tree = convert_tree(src, out, jobs=1)
            copies = len({f.compat_dir for f in tree.files if f.compat_dir is not None})
            keras = "keras = " in (out / "_ms_compat.py").read_text()
            print(f"{str(src.relative_to(ROOT)):<34} {copies * full:>8} {tree.helper['lines']:>6} "
                  f"{tree.helper['uses_per_100_lines']:>15} {'yes' if keras else 'no':>6}")
            if why:
                why_report(source, out, top)


if __name__ == "__main__":
    main()
