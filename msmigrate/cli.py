"""`msmigrate` command line: convert, scan, weights, verify, api."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

EXIT_OK, EXIT_TODO, EXIT_USAGE = 0, 1, 2


def _print_todo_sites(tree, stream=None) -> None:
    """-v: every TODO site as file:line, and every failed file."""
    from .registry import TODO

    stream = stream or sys.stdout
    for f in tree.files:
        for x in sorted(f.sites, key=lambda x: x.line):
            if x.status == TODO:
                print(f"{f.rel}:{x.line}: TODO {x.api}: {x.note or 'no MindSpore mapping known'}", file=stream)
        if f.status == "failed":
            print(f"{f.rel}: not converted: {f.reason}", file=stream)


def _source_text(tree, rel: str) -> str:
    p = tree.src if tree.src.is_file() else tree.src / rel
    return p.read_bytes().decode("utf-8-sig")


def _convert(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="msmigrate convert",
                                description="Convert a PyTorch file or project tree to MindSpore.")
    p.add_argument("src", help="a .py file or a directory tree")
    p.add_argument("-o", "--out", help="output file or directory (never inside SRC); not needed with --diff/--check")
    p.add_argument("--force", action="store_true", help="write into an existing non-empty output directory")
    p.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--diff", action="store_true",
                   help="write nothing; print a unified diff of every file that would change to stdout")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if any file would change, 0 otherwise (for CI)")
    p.add_argument("--parallel-mode", choices=("data", "auto", "semi_auto"), default="data",
                   help="torch.distributed programs: MindSpore's parallel mode set by init_process_group "
                        "(data: DATA_PARALLEL, like DDP; auto: AUTO_PARALLEL, MindSpore splits operators itself, "
                        "GRAPH mode; semi_auto: SEMI_AUTO_PARALLEL, your shard strategies). Default: data")
    p.add_argument("--deps", action="append", metavar="NAME[,NAME]",
                   help="also convert these installed torch packages (e.g. torchvision) into OUT/_deps/ and "
                        "point the project's imports at them; msmigrate's own mappings of their APIs come first")
    p.add_argument("--no-cache", action="store_true",
                   help="convert the --deps packages again even where the same conversion is cached "
                        "(~/.cache/msmigrate, or $MSMIGRATE_CACHE_DIR; MSMIGRATE_CACHE_DIR=off: never cached)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="no summary, no progress bar")
    g.add_argument("-v", "--verbose", action="store_true", help="also list every TODO site as file:line")
    args = p.parse_args(argv)
    from .converter import ConversionError, convert_tree
    from .deps import DependencyError, locate, parse_names
    from .report import summarize, write_reports

    try:
        deps = parse_names(args.deps)
        for name in deps:
            locate(name)
        if deps and not args.no_cache:      # the --deps cache's key: msmigrate as this process loaded it
            from .deps_cache import msmigrate_digest
            msmigrate_digest()
    except DependencyError as exc:
        print(f"msmigrate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    dry = args.diff or args.check
    if not dry and not args.out:
        print("msmigrate: error: -o/--out is required (or use --diff / --check to write nothing)", file=sys.stderr)
        return EXIT_USAGE
    src, out = Path(args.src), (Path(args.out) if args.out else None)
    if dry:
        try:
            tree = convert_tree(src, out, force=args.force, jobs=args.jobs, progress=not args.quiet, dry_run=dry,
                                parallel_mode=args.parallel_mode, deps=deps)
        except (ConversionError, DependencyError) as exc:
            print(f"msmigrate: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return _convert_dry(args, tree, summarize(tree))
    report_dir = out.parent if (src.is_file() and out.suffix == ".py") else out
    try:
        tree = _convert_and_report(args, src, out, convert_tree, write_reports, deps)
    except (ConversionError, DependencyError) as exc:
        print(f"msmigrate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"msmigrate: interrupted: {out} was not written" if not out.exists() else
              f"msmigrate: interrupted: {out} is incomplete (run the conversion again)", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"msmigrate: error: cannot write {out}: {exc.strerror or exc}"
              f"{f' ({exc.filename})' if exc.filename else ''}", file=sys.stderr)
        return EXIT_USAGE
    s = summarize(tree)
    if not args.quiet:
        print(f"msmigrate: {s['sites']} torch sites: {s['converted']} converted, "
              f"{s['converted_with_difference']} converted with a difference, {s['todo']} TODO "
              f"({s['conversion_rate'] * 100:.1f}% converted, {s['proven_rate'] * 100:.1f}% proven by a parity "
              f"test); files: {s['files']['converted']} converted, {s['files']['unchanged']} unchanged, "
              f"{s['files']['copied']} copied, {s['files']['failed']} failed"
              # the rate above leaves out the files that failed: what it is with their torch uses counted
              + (f" ({s['conversion_rate_with_failed_files'] * 100:.1f}% converted counting the "
                 f"{s['torch_refs_in_failed_files']} torch uses in them)" if s["files"]["failed"] else ""))
        print(f"msmigrate: report: {report_dir / 'msmigrate-report.md'} "
              f"(and {report_dir / 'msmigrate-report.html'})")
        for d in tree.dependencies:
            print(f"msmigrate: dependency {d['name']}: {d['output']}/: {d['converted_files']} of {d['files']} "
                  f"files converted, {d['failed_files']} failed; {d['sites']} sites, {d['todo']} TODO "
                  f"({d['conversion_rate'] * 100:.1f}%)")
        for script in tree.launch_scripts:
            print(f"msmigrate: distributed program: start it with msrun: sh {report_dir / script} [ARGS] "
                  f"(NPROC=2 by default)")
        for f in tree.files:
            if f.status == "failed":
                print(f"msmigrate: warning: {f.rel}: {f.reason} (copied unchanged)", file=sys.stderr)
        if args.verbose:
            _print_todo_sites(tree)
    failed = s["files"]["failed"] > 0
    dep_todo = any(d["todo"] or d["failed_files"] for d in tree.dependencies)   # --deps packages' own TODOs
    return EXIT_TODO if (s["todo"] or failed or dep_todo) else EXIT_OK


def _convert_and_report(args, src: Path, out: Path, convert_tree, write_reports, deps=()):
    """Convert and write the reports. A tree goes to a new OUT through a hidden folder renamed at the
    end (an interrupted run leaves no half-written OUT); see out_files."""
    from .converter import _check_paths
    from .out_files import REPORT_NAMES, finish_output, staged_output, unlink_links

    _check_paths(src, out, args.force)       # against the real OUT, before any staging
    if src.is_file():
        tree = convert_tree(src, out, force=args.force, jobs=args.jobs, progress=not args.quiet,
                            parallel_mode=args.parallel_mode, deps=deps)
        _convert_deps(args, tree, deps)
        report_dir = out.parent if out.suffix == ".py" else out
        unlink_links([report_dir / n for n in REPORT_NAMES])
        write_reports(tree, report_dir)
        return tree
    with staged_output(out) as target:
        tree = convert_tree(src, target, force=True, jobs=args.jobs, progress=not args.quiet,
                            parallel_mode=args.parallel_mode, deps=deps)
        _convert_deps(args, tree, deps)      # into the staged folder, renamed with it
    tree.out = out                           # the reports read the written files back from OUT
    unlink_links([out / n for n in REPORT_NAMES])
    write_reports(tree, out)
    finish_output(out)
    return tree


def _convert_deps(args, tree, deps) -> None:
    """--deps: convert the named installed packages into _deps/ of the output tree."""
    from .deps_convert import finish

    if not deps:
        return
    if not args.quiet:
        print(f"msmigrate: converting dependencies {', '.join(deps)} into _deps/ of the output", file=sys.stderr)
    tree.dependencies = finish(tree, deps, args.jobs, cache=not args.no_cache)


def _convert_dry(args, tree, s) -> int:
    """--diff / --check: nothing is written."""
    import difflib

    changed = sorted(tree.outputs)
    if args.diff:
        for rel in changed:
            try:
                old = _source_text(tree, rel)
            except (OSError, UnicodeDecodeError) as exc:  # vanished or changed since it was read
                print(f"msmigrate: warning: {rel}: cannot read back for the diff: {exc}", file=sys.stderr)
                continue
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), tree.outputs[rel].splitlines(keepends=True),
                fromfile=f"a/{rel}", tofile=f"b/{rel}"))
            if not tree.outputs[rel].endswith("\n"):
                sys.stdout.write("\n\\ No newline at end of file\n")
    if not args.quiet:
        err = sys.stderr
        if args.check and not args.diff:
            for rel in changed:
                print(f"would convert {rel}", file=err)
        for f in tree.files:
            if f.status == "failed":
                print(f"msmigrate: warning: {f.rel}: {f.reason} (would be copied unchanged)", file=err)
        if args.verbose:
            _print_todo_sites(tree, err)
        print(f"msmigrate: {len(changed)} file(s) would change; {s['sites']} torch sites, {s['todo']} TODO; "
              f"nothing written", file=err)
    if args.check:
        return EXIT_TODO if changed else EXIT_OK
    return EXIT_OK


def _scan(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="msmigrate scan",
                                description="Inventory of the torch APIs a file or tree uses; nothing is written.")
    p.add_argument("path", help="a .py file or a directory tree")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="only the table (no summary line)")
    g.add_argument("-v", "--verbose", action="store_true", help="also list every TODO site as file:line")
    args = p.parse_args(argv)
    from .converter import ConversionError, convert_tree
    from .scan import inventory, print_inventory

    try:
        tree = convert_tree(Path(args.path), None, jobs=args.jobs, progress=not (args.quiet or args.json),
                            dry_run=True)
    except ConversionError as exc:
        print(f"msmigrate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    inv = inventory(tree)
    if args.json:
        import json

        if args.verbose:
            inv["todo_sites"] = [{"file": f.rel, "line": x.line, "api": x.api, "note": x.note}
                                 for f in tree.files for x in f.sites if x.status == "todo"]
        print(json.dumps(inv, indent=1))
        return EXIT_OK
    print_inventory(inv, quiet=args.quiet)
    if args.verbose:
        _print_todo_sites(tree)
    return EXIT_OK


def _api(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="msmigrate api", description="What a torch API becomes, and why.")
    p.add_argument("name", help="e.g. torch.nn.Conv2d, nn.Conv2d, F.relu, Tensor.view")
    args = p.parse_args(argv)
    from .registry import all_mappings, lookup

    name = args.name
    candidates = [name]
    for short, full in (("nn.functional.", "torch.nn.functional."), ("F.", "torch.nn.functional."),
                        ("nn.", "torch.nn."), ("Tensor.", "Tensor."), ("Module.", "Module."),
                        ("torch.Tensor.", "Tensor."), ("torch.nn.Module.", "Module."), ("nn.Module.", "Module.")):
        if name.startswith(short):
            candidates.append(full + name[len(short):])
    if not name.startswith(("torch.", "Tensor.", "Module.")):
        candidates += ["torch." + name, "Tensor." + name]
    from .census import describe, find, public_paths
    candidates += public_paths(name)   # a canonical path (torch.nn.modules.loss.MSELoss): its public name
    for c in candidates:
        m = lookup(c)
        if m is not None:
            if c != m.source:   # a canonical path (torch.nn.modules.loss.MSELoss) of a public name
                print(f"{c} is {m.source}")
            print(f"{m.source} -> {m.target or ('(a rule, below)' if m.rule else '(no MindSpore counterpart: TODO)')}")
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
    entry = next((e for e in map(find, [name] + candidates) if e is not None), None)
    if entry is not None:   # no record: the API census says why (TODO or out of scope)
        print(describe(entry))
        return EXIT_OK
    close = [m.source for m in all_mappings() if name.split(".")[-1] == m.source.split(".")[-1]]
    print(f"msmigrate: no mapping for {name}" + (f"; did you mean: {', '.join(close[:6])}" if close else ""),
          file=sys.stderr)
    return EXIT_TODO


def _census(argv: List[str]) -> int:
    from .census import main as main_census
    return main_census(argv)


_BIG_WEIGHTS = 256 * 2**20   # show a spinner on a terminal for weight files at least this large


def _weights_args(rest: List[str]):
    """The weights command's arguments, parsed silently (None on a usage error: main_weights reports it)."""
    import contextlib
    import io

    from .weights import _parser

    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return _parser().parse_known_args(rest)[0]
    except SystemExit:
        return None


def _weights_input_problem(rest: List[str]) -> Optional[str]:
    """A MindSpore .ckpt given as IN: say so in one line (torch.save files named .ckpt, e.g. Lightning's, pass)."""
    import os

    args = _weights_args(rest)
    if args is None:
        return None                      # main_weights reports the usage error
    path = args.input
    if not path.lower().endswith(".ckpt") or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None                      # main_weights reports it
    if not head or head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or head[:1] == b"\x80" or head[8:9] == b"{":
        return None
    return (f"{path}: not a torch checkpoint (a MindSpore .ckpt is what this command writes, not what it reads; "
            f"give the .pt/.pth/.bin/.safetensors file saved by PyTorch)")


def _weights(rest: List[str]) -> int:
    import os

    from .weights import main_weights

    problem = _weights_input_problem(rest)
    if problem:
        print(f"msmigrate weights: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    big = False
    if sys.stderr.isatty():
        args = _weights_args(rest)
        try:
            big = args is not None and os.path.getsize(args.input) >= _BIG_WEIGHTS
        except OSError:
            big = False
    if not big:
        return main_weights(rest)
    from rich.console import Console

    with Console(stderr=True).status("reading and converting weights...", spinner="dots"):
        return main_weights(rest)


def _verify(rest: List[str]) -> int:
    from .verify import main_verify
    from .verify_train import run_train_cli
    return main_verify(rest, train=run_train_cli)


def _trace(rest: List[str]) -> int:
    from .trace import main_trace
    return main_trace(rest)


def _hf(rest: List[str]) -> int:
    from .trace.hf import main_hf
    return main_hf(rest)


def _keras(rest: List[str]) -> int:
    from .keras import main_keras
    return main_keras(rest)


def _export(rest: List[str]) -> int:
    from .export import main_export
    return main_export(rest)


def _dump_config(rest: List[str]) -> int:
    from .dump_config import main as main_dump_config
    return main_dump_config(rest)


# The one command table: the dispatcher, the usage text and the unknown-command message read it.
# name -> (runner, usage lines: the first starts with the command's synopsis)
COMMANDS = {
    "convert": (_convert, ["convert SRC -o OUT      convert a PyTorch file or project to MindSpore",
                           "                        (--diff / --check: write nothing, show / test what would change)"]),
    "scan": (_scan, ["scan PATH [--json]      which torch APIs a project uses, how often, which have no mapping"]),
    "weights": (_weights, ["weights IN -o OUT.ckpt  convert a state_dict (.pt/.pth/.bin/.safetensors) to a MindSpore "
                           "checkpoint"]),
    "verify": (_verify, ["verify --torch M:F --ms M:F --input SHAPE   prove the converted model computes the same",
                         "                        (--train N [--optimizer SPEC --scheduler SPEC]: and trains the same)"]),
    "export": (_export, ["export --ms M:F --input SHAPE -o OUT.mindir   export a converted net to MindIR and prove",
                         "                        the reloaded file (nn.GraphCell) reproduces its output "
                         "([--ckpt W.ckpt])"]),
    "dump-config": (_dump_config, ["dump-config --layers conv1,layer1.0 --path DIR -o dump.json   a MindSpore dump "
                                   "configuration",
                                   "                        for those layers ([--compare torch_acts.npz]: compare the "
                                   "dumps with torch)"]),
    "api": (_api, ["api NAME                what a torch API becomes, and why"]),
    "census": (_census, ["census [--list STATUS]  every public torch name: converted / TODO / out of scope, per "
                         "namespace"]),
    "trace": (_trace, ["trace --torch M:F --input SHAPE -o OUT   capture a model with torch.export and write a "
                       "MindSpore",
                       "                        model.py + model.ckpt (code the converter cannot read; --mindir)"]),
    "hf": (_hf, ["hf MODEL_DIR -o OUT     a transformers save_pretrained folder -> model.py + model.ckpt (trace "
                 "route)"]),
    "keras": (_keras, ["keras MODEL -o OUT      convert a Keras 3 model (.keras/.h5/MODULE:CALLABLE) to a MindSpore",
                       "                        nn.Cell (model.py) + model.ckpt (--keep-nhwc, --check)"]),
}


def usage() -> str:
    lines = [f"usage: msmigrate {{{','.join(COMMANDS)}}} ...", ""]
    for _, text in COMMANDS.values():
        lines.extend("  " + t for t in text)
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return EXIT_OK if argv else EXIT_USAGE
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"msmigrate: error: unknown command {cmd!r} ({', '.join(COMMANDS)})", file=sys.stderr)
        return EXIT_USAGE
    from .extras import missing_requirement

    missing = None if {"-h", "--help"} & set(rest) else missing_requirement(cmd)
    if missing:
        print(missing, file=sys.stderr)
        return EXIT_USAGE
    return run_command(cmd, rest, isolate=cmd in USER_CODE_COMMANDS and not {"-h", "--help"} & set(rest))


# Commands that call the user's MODULE:CALLABLE in their own process (verify, export and weights --net have
# workers of their own): they run in a child process (user_process.py), so that code which ends its process
# (sys.exit, os._exit, a native crash) fails the command instead of choosing msmigrate's exit status.
USER_CODE_COMMANDS = ("trace", "keras")


def run_command(cmd: str, rest: List[str], isolate: bool = False, in_child: bool = False) -> int:
    from .extras import one_line_error

    try:
        if isolate:
            from .user_process import run_isolated
            return run_isolated("msmigrate.cli", "command_in_child", [cmd, *rest], f"msmigrate {cmd}", "the user's code")
        return COMMANDS[cmd][0](rest)
    except SystemExit as exc:  # argparse; in the child (no --help there) also the user's code calling sys.exit
        if in_child and exc.code in (0, None):
            print(f"msmigrate {cmd}: error: the user's code called sys.exit({exc.code!r}) before the command "
                  "finished; nothing was written", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_USAGE if exc.code not in (0, None) else EXIT_OK
    except KeyboardInterrupt:
        print("msmigrate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, never a raw traceback (MSMIGRATE_TRACEBACK=1 shows it)
        print(one_line_error(cmd, exc), file=sys.stderr)
        return 1


def command_in_child(argv: List[str], status_file: str) -> None:
    """The child side of an isolated command: its exit status goes to ``status_file`` (user_process.py)."""
    from .user_process import write_status
    write_status(status_file, run_command(argv[0], argv[1:], in_child=True))


if __name__ == "__main__":
    sys.exit(main())
