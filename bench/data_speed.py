"""Data pipeline speed: torch's DataLoader against the pipeline msmigrate converts it to.

One process runs, side by side, on the same machine:
  (a) torchvision CIFAR10 (synthetic files in the real "python version" format, 5k images)
      + RandomCrop(32, 4) + RandomHorizontalFlip + ToTensor + Normalize, batch 128,
      shuffle, num_workers=0 and 2, through torch's DataLoader;
  (b) the same torch source converted by msmigrate (it uses _ms_compat.DataLoader and the
      emitted transforms/datasets, yielding mindspore Tensors);
  (c) a TensorDataset of 10k small samples, batch 128, shuffle, both ways.
It prints seconds per epoch (median over the repeats; frameworks alternate so machine load
hits both alike) and converted/torch ratios. The target is a ratio <= 1.5.

    python bench/data_speed.py [--images 5000] [--repeats 3]

`measure_pipelines(...)` returns the ratios for other benchmarks (bench/train_speed.py).
"""
from __future__ import annotations

import argparse
import importlib
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TORCH_SOURCE = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
import torchvision.transforms as T
from torchvision import datasets

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def cifar_loader(root, num_workers):
    tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    train = datasets.CIFAR10(root=root, train=True, download=False, transform=tf)
    return DataLoader(train, batch_size=128, shuffle=True, num_workers=num_workers)


def tensor_loader(x, y):
    return DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True)
'''


def import_torchvision():
    """torchvision, importable next to a CPU-only torch.

    The torchvision wheel on the package index is built for CUDA: its C++ ops library
    (detection boxes: nms, roi_align...) cannot load next to torch's CPU build, and
    torchvision's import then fails declaring fake kernels for `torchvision::nms`.
    transforms and datasets do not use those ops, so the two ops are declared (without
    kernels) and the import goes through."""
    import torch
    try:
        import torchvision
    except RuntimeError as exc:
        if "torchvision::" not in str(exc):
            raise
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        for op in ("nms", "qnms"):
            try:
                torch.library.define(f"torchvision::{op}",
                                     "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            except RuntimeError:
                pass  # already declared by an earlier attempt
        import torchvision
    return torchvision


def allow_synthetic_cifar():
    """torchvision checks CIFAR files against the md5 of the real download; synthetic
    files in the same format are accepted by skipping that check."""
    import_torchvision()
    import torchvision.datasets.cifar as cifar
    cifar.CIFAR10._check_integrity = lambda self: True
    cifar.check_integrity = lambda *args, **kwargs: True


def write_cifar10(root, n_train=5000, n_test=100, seed=0, folder="cifar-10-batches-py"):
    """CIFAR-10 "python version" files (data_batch_1..5, test_batch, batches.meta) with
    random pixels: the format torchvision reads."""
    rng = np.random.default_rng(seed)
    base = Path(root) / folder
    base.mkdir(parents=True, exist_ok=True)
    per = [n_train // 5 + (1 if i < n_train % 5 else 0) for i in range(5)]
    for i, n in enumerate(per):
        entry = {"batch_label": f"training batch {i + 1} of 5", "labels": rng.integers(0, 10, n).tolist(),
                 "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 "filenames": [f"img_{i}_{k}.png" for k in range(n)]}
        with open(base / f"data_batch_{i + 1}", "wb") as f:
            pickle.dump(entry, f)
    entry = {"batch_label": "testing batch 1 of 1", "labels": rng.integers(0, 10, n_test).tolist(),
             "data": rng.integers(0, 256, (n_test, 3072), dtype=np.uint8),
             "filenames": [f"test_{k}.png" for k in range(n_test)]}
    with open(base / "test_batch", "wb") as f:
        pickle.dump(entry, f)
    with open(base / "batches.meta", "wb") as f:
        pickle.dump({"label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                                     "ship", "truck"], "num_cases_per_batch": per[0], "num_vis": 3072}, f)
    return str(root)


def load_converted(source, workdir):
    """Convert torch source with msmigrate and import it (with its _ms_compat.py)."""
    from msmigrate.converter import compat_source, convert_code

    code, _, _ = convert_code(source)
    workdir = Path(workdir)
    (workdir / "_ms_compat.py").write_text(compat_source(), encoding="utf-8")
    (workdir / "ms_data_pipeline.py").write_text(code, encoding="utf-8")
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    importlib.invalidate_caches()
    sys.modules.pop("ms_data_pipeline", None)   # an _ms_compat already imported (same source) is kept
    return importlib.import_module("ms_data_pipeline")


def _epoch_seconds(loader):
    start = time.perf_counter()
    n = 0
    for batch in loader:
        n += batch[0].shape[0]
    return time.perf_counter() - start, n


def measure_pipelines(images=5000, tensor_samples=10000, workers=(0, 2), repeats=3, verbose=False):
    """Seconds per epoch of torch's DataLoader and of the converted pipeline.

    Returns {case: {"torch": s, "converted": s, "ratio": converted / torch}} with cases
    "cifar_workers=N" and "tensor_dataset"."""
    import mindspore as ms
    import torch

    allow_synthetic_cifar()
    tmp = tempfile.mkdtemp(prefix="msmigrate-data-speed-")
    root = write_cifar10(os.path.join(tmp, "data"), n_train=images)
    ns = {}
    exec(compile(TORCH_SOURCE, "<torch pipeline>", "exec"), ns)
    conv = load_converted(TORCH_SOURCE, tmp)
    torch.manual_seed(0)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((tensor_samples, 16)).astype(np.float32)
    y = rng.integers(0, 10, tensor_samples)
    cases = {}
    for w in workers:
        cases[f"cifar_workers={w}"] = (ns["cifar_loader"](root, w), conv.cifar_loader(root, w))
    cases["tensor_dataset"] = (ns["tensor_loader"](torch.from_numpy(x), torch.from_numpy(y)),
                               conv.tensor_loader(ms.Tensor(x), ms.Tensor(y)))
    results = {}
    for name, (t_loader, m_loader) in cases.items():
        _epoch_seconds(t_loader)   # warm up: imports, first forks, page cache
        _epoch_seconds(m_loader)
        t_times, m_times = [], []
        for _ in range(repeats):
            t_s, t_n = _epoch_seconds(t_loader)
            m_s, m_n = _epoch_seconds(m_loader)
            if t_n != m_n:
                raise AssertionError(f"{name}: torch saw {t_n} samples per epoch, the converted loader {m_n}")
            t_times.append(t_s)
            m_times.append(m_s)
        t_med, m_med = statistics.median(t_times), statistics.median(m_times)
        results[name] = {"torch": t_med, "converted": m_med, "ratio": m_med / t_med}
        if verbose:
            print(f"  {name}: torch {['%.3f' % t for t in t_times]}  converted {['%.3f' % t for t in m_times]}",
                  flush=True)
    return results


def format_results(results):
    lines = [f"{'pipeline':<22}{'torch s/epoch':>15}{'converted s/epoch':>19}{'ratio':>8}"]
    for name, r in results.items():
        flag = "" if r["ratio"] <= 1.5 else "  (over 1.5x)"
        lines.append(f"{name:<22}{r['torch']:>15.3f}{r['converted']:>19.3f}{r['ratio']:>8.2f}{flag}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--tensor-samples", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    args = ap.parse_args(argv)
    results = measure_pipelines(args.images, args.tensor_samples, tuple(args.workers), args.repeats, verbose=True)
    print(format_results(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
