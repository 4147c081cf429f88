"""Size of the emitted helper module, by converted tree: `_ms_compat.py` holds only what the converted
code uses (msmigrate/runtime_prune.py), once per tree. Before, every package directory with converted
code got the whole runtime (the first column counts those copies).

    python bench/helper_size.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msmigrate.converter import compat_source, convert_tree  # noqa: E402

TREES = [ROOT / "examples" / "torch_project", ROOT / "examples" / "tensorflow"] + sorted(
    p for p in (ROOT / "examples" / "training").iterdir() if p.is_dir())


def main() -> None:
    full = compat_source().count("\n")
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


if __name__ == "__main__":
    main()
