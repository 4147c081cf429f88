"""Train-step speed of the converted CIFAR ResNet-18 program against the original, and of
the converted input pipeline against torch's DataLoader — side by side in one run.

    python bench/train_speed.py [--batch-size 32] [--steps 20]

The torch program (examples/training/cifar_resnet/main.py) and its conversion run on the
same synthetic CIFAR-10 files (torchvision's pickle format) from the same initial weights,
each in its own process, one after the other; each logs a wall-clock time per optimizer step
(--metrics), and the median time between consecutive steps after the first few (compilation)
is the step time. The pipeline ratios come from bench/data_speed.py. Prints the ratios:
targets are <= 1.0 for the train step and <= 1.5 for the pipeline.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.corpus import CORPUS, read_metrics, run_program, write_cifar10  # noqa: E402

WORK = ROOT / "bench" / "_work" / "train_speed"


def step_times(records, skip):
    times = [r["time"] for r in records if "step" in r]
    gaps = [b - a for a, b in zip(times, times[1:])]
    return gaps[skip:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--skip", type=int, default=3, help="first step gaps left out (compilation, warm-up)")
    ap.add_argument("--pipeline-images", type=int, default=2000)
    args = ap.parse_args(argv)

    import shutil
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    data = WORK / "data"
    write_cifar10(data, n_train=args.batch_size * args.steps, n_test=100)
    # initial weights: the torch model, saved as the program's --init-weights expects
    init = WORK / "init.pth"
    code = ("import sys, torch; sys.path.insert(0, sys.argv[1]); from models import ResNet18; "
            "torch.manual_seed(0); torch.save(ResNet18().state_dict(), sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(CORPUS / "cifar_resnet"), str(init)], check=True)
    out = WORK / "cifar_resnet_ms"
    subprocess.run([sys.executable, "-m", "msmigrate.cli", "convert", str(CORPUS / "cifar_resnet"), "-o", str(out), "-q"],
                   check=False)

    results = {}
    for name, script, is_torch in (("torch", CORPUS / "cifar_resnet" / "main.py", True),
                                   ("converted", out / "main.py", False)):
        run_dir = WORK / name
        run_dir.mkdir()
        metrics = run_dir / "m.jsonl"
        run_program(script, ["--data", data, "--epochs", 1, "--batch-size", args.batch_size, "--workers", 0,
                             "--deterministic", "--lr", 0.01, "--max-steps", args.steps, "--init-weights", init,
                             "--metrics", metrics, "--save", run_dir / "ckpt.pth"],
                    torch=is_torch, cwd=run_dir, timeout=3600)
        records = read_metrics(metrics)
        results[name] = (statistics.median(step_times(records, args.skip)), [r["loss"] for r in records if "step" in r])

    t_step, t_loss = results["torch"]
    m_step, m_loss = results["converted"]
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(m_loss, t_loss))
    print(f"CIFAR ResNet-18 train step, batch {args.batch_size}, {args.steps} steps (median after {args.skip}):")
    print(f"  torch program       {t_step:8.3f} s/step")
    print(f"  converted (GRAPH)   {m_step:8.3f} s/step")
    print(f"  ratio converted/torch: {m_step / t_step:.2f}   (target <= 1.0)")
    print(f"  per-step losses agree within {worst:.1e} (relative)")

    from bench.data_speed import format_results, measure_pipelines
    print("\nInput pipeline, seconds per epoch (converted over torch DataLoader; target <= 1.5):")
    print(format_results(measure_pipelines(images=args.pipeline_images, repeats=2)))


if __name__ == "__main__":
    main()
