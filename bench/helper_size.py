"""Size of the emitted helper module, by converted tree: `_ms_compat.py` holds only what the converted
code uses (msmigrate/runtime_prune.py), once per tree, and sites where the tree shows no helper
difference are MindSpore's own forms (msmigrate/native_forms.py).

The baseline is issue 15's "today": what each tree received when the issue was filed, at commit 03af0f7
(runtime 7,125 lines; every package directory with converted code got a whole copy). Measured by
converting these same trees (unchanged since) with that commit: `git archive 03af0f7 | tar -x -C DIR`,
then `convert_tree` with DIR on PYTHONPATH, summing the lines of every `_ms_compat.py` written.

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

# lines of helpers each tree received at issue 15 (commit 03af0f7), by tree
AT_ISSUE = {"examples/torch_project": 14250, "examples/tensorflow": 7125, "examples/training/cifar_resnet": 14250,
            "examples/training/dcgan": 7125, "examples/training/lstm_lm": 7125, "examples/training/mnist_cnn": 7125,
            "examples/training/transformer_lm": 7125, "examples/training/vae": 7125}
# the issue's other figure: the template sections a training program used then (a range, not per program)
SECTIONS_USED_AT_ISSUE = (2900, 4900)
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
    print(f"runtime: {source.count(chr(10))} lines (7,125 at the issue)")
    print(f"{'tree':<34} {'at issue':>8} {'now':>6} {'now/issue':>9} {'uses/100 lines':>15} {'Keras':>6}")
    corpus = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in TREES:
            out = Path(tmp) / src.name
            tree = convert_tree(src, out, jobs=1)
            keras = "keras = " in (out / "_ms_compat.py").read_text()
            name = str(src.relative_to(ROOT))
            base, now = AT_ISSUE.get(name), tree.helper["lines"]
            if "training" in name:
                corpus.append(now)
            ratio = f"{now / base:.2f}" if base else "-"
            print(f"{name:<34} {base or '-':>8} {now:>6} {ratio:>9} "
                  f"{tree.helper['uses_per_100_lines']:>15} {'yes' if keras else 'no':>6}")
            if why:
                why_report(source, out, top)
    lo, hi = SECTIONS_USED_AT_ISSUE
    verdict = "met for every program" if 2 * max(corpus) < lo else \
        "met for none" if 2 * min(corpus) >= hi else "not shown to be met"
    print(f"training corpus: {min(corpus)}-{max(corpus)} lines now; under half of what each program received at "
          f"the issue: {'yes' if all(2 * n < AT_ISSUE[k] for k, n in zip(_corpus_names(), corpus)) else 'NO'}. "
          f"Against the issue's count of the sections a program used ({lo:,}-{hi:,}), half would be "
          f"{lo // 2:,}-{hi // 2:,}: {verdict} (the issue gives a range, not a figure per program).")


def _corpus_names():
    return [str(p.relative_to(ROOT)) for p in TREES if "training" in str(p)]


if __name__ == "__main__":
    main()
