"""`msmigrate` command line: convert, weights, verify, api."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

EXIT_OK, EXIT_TODO, EXIT_USAGE = 0, 1, 2


def _convert(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="msmigrate convert",
                                description="Convert a PyTorch file or project tree to MindSpore.")
    p.add_argument("src", help="a .py file or a directory tree")
    p.add_argument("-o", "--out", required=True, help="output file or directory (never inside SRC)")
    p.add_argument("--force", action="store_true", help="write into an existing non-empty output directory")
    p.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    from .converter import ConversionError, convert_tree
    from .report import summarize, write_reports

    src, out = Path(args.src), Path(args.out)
    try:
        tree = convert_tree(src, out, force=args.force, jobs=args.jobs, progress=not args.quiet)
    except ConversionError as exc:
        print(f"msmigrate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    report_dir = out.parent if (src.is_file() and out.suffix == ".py") else out
    write_reports(tree, report_dir)
    s = summarize(tree)
    if not args.quiet:
        print(f"msmigrate: {s['sites']} torch sites: {s['converted']} converted, "
              f"{s['converted_with_difference']} converted with a difference, {s['todo']} TODO "
              f"({s['conversion_rate'] * 100:.1f}%); files: {s['files']['converted']} converted, "
              f"{s['files']['unchanged']} unchanged, {s['files']['failed']} failed")
        print(f"msmigrate: report: {report_dir / 'msmigrate-report.md'}")
        for f in tree.files:
            if f.status == "failed":
                print(f"msmigrate: warning: {f.rel}: {f.reason} (copied unchanged)", file=sys.stderr)
    failed = s["files"]["failed"] > 0
    return EXIT_TODO if (s["todo"] or failed) else EXIT_OK


def _api(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="msmigrate api", description="What a torch API becomes, and why.")
    p.add_argument("name", help="e.g. torch.nn.Conv2d, nn.Conv2d, F.relu, Tensor.view")
    args = p.parse_args(argv)
    from .registry import all_mappings, lookup

    name = args.name
    candidates = [name]
    for short, full in (("nn.functional.", "torch.nn.functional."), ("F.", "torch.nn.functional."),
                        ("nn.", "torch.nn."), ("Tensor.", "Tensor."), ("Module.", "Module.")):
        if name.startswith(short):
            candidates.append(full + name[len(short):])
    if not name.startswith(("torch.", "Tensor.", "Module.")):
        candidates += ["torch." + name, "Tensor." + name]
    for c in candidates:
        m = lookup(c)
        if m is not None:
            print(f"{m.source} -> {m.target or '(no MindSpore counterpart: TODO)'}")
            print(f"  status: {m.status if m.target or m.rule else 'todo'}")
            if m.note:
                print(f"  differences: {m.note}")
            for a, b in m.rename.items():
                print(f"  argument {a} -> {b}")
            for a, t in m.transforms.items():
                print(f"  argument {a}: value becomes {t.replace('{v}', a)}")
            for a, table in m.values.items():
                for k, v in table.items():
                    print(f"  argument {a}={k} -> {v}")
            for a in m.drop:
                print(f"  argument {a}: dropped")
            for a, v in m.extra.items():
                print(f"  always passes {a}={v}")
            for a, why in m.unsupported.items():
                print(f"  argument {a}: TODO unless {m.unsupported_ok.get(a, ())}: {why}")
            if m.rule is not None:
                print(f"  converted by rule {m.rule.__module__}.{m.rule.__name__}")
            print(f"  proven by: {m.test or 'no parity test'}")
            return EXIT_OK
    close = [m.source for m in all_mappings() if name.split(".")[-1] == m.source.split(".")[-1]]
    print(f"msmigrate: no mapping for {name}" + (f"; did you mean: {', '.join(close[:6])}" if close else ""),
          file=sys.stderr)
    return EXIT_TODO


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"convert": _convert, "api": _api}
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: msmigrate {convert,weights,verify,api} ...\n\n"
              "  convert SRC -o OUT      convert a PyTorch file or project to MindSpore\n"
              "  weights IN -o OUT.ckpt  convert a state_dict (.pt/.pth/.bin/.safetensors) to a MindSpore checkpoint\n"
              "  verify --torch M:F --ms M:F --input SHAPE   prove the converted model computes the same\n"
              "  api NAME                what a torch API becomes, and why")
        return EXIT_OK if argv else EXIT_USAGE
    cmd, rest = argv[0], argv[1:]
    try:
        if cmd == "weights":
            from .weights import main_weights
            return main_weights(rest)
        if cmd == "verify":
            from .verify import main_verify
            return main_verify(rest)
        if cmd in commands:
            return commands[cmd](rest)
    except SystemExit as exc:  # argparse
        return EXIT_USAGE if exc.code not in (0, None) else EXIT_OK
    except KeyboardInterrupt:
        return 130
    print(f"msmigrate: error: unknown command {cmd!r} (convert, weights, verify, api)", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
