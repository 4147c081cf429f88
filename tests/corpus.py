"""Shared pieces of tests/test_training_corpus.py: synthetic data in the real on-disk
formats, and running a training program (torch original or converted) in a subprocess.

The torch programs import torchvision. The torchvision wheel installed next to the CPU
build of torch cannot load its C++ ops, and torchvision's CIFAR reader checks the md5 of
the real download; both are worked around in the launcher (bench/data_speed.py's
import_torchvision / allow_synthetic_cifar) before the program runs, so the programs
themselves stay as users write them. The converted programs run in a fresh interpreter
where `import torch` fails."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "training"

# ------------------------------------------------------------------ data in the real formats


def write_mnist(root, n_train=32, n_test=16, size=28, seed=0, name="MNIST"):
    """root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte, as torchvision
    downloads them (big-endian idx headers, uint8 pixels). Digits are blurry blobs whose
    position depends on the label, so the task is learnable."""
    rng = np.random.default_rng(seed)
    raw = Path(root) / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        yy, xx = np.mgrid[0:size, 0:size]
        images = np.empty((n, size, size), np.uint8)
        for i, lab in enumerate(labels):
            cy, cx = 6 + (lab // 5) * (size - 12), 4 + (lab % 5) * (size - 8) / 4
            blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 18.0)
            noise = rng.uniform(0, 0.3, (size, size))
            images[i] = np.clip((blob + noise) * 255, 0, 255).astype(np.uint8)
        with open(raw / f"{prefix}-images-idx3-ubyte", "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, size, size))
            f.write(images.tobytes())
        with open(raw / f"{prefix}-labels-idx1-ubyte", "wb") as f:
            f.write(struct.pack(">II", 0x801, n))
            f.write(labels.tobytes())
    return str(root)


def write_cifar10(root, n_train=40, n_test=16, seed=0):
    """root/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}: the pickles of
    CIFAR-10's "python version" (bench/data_speed.py writes them)."""
    from bench.data_speed import write_cifar10 as write
    write(root, n_train=n_train, n_test=n_test, seed=seed)
    return str(root)


def write_image_folder(root, classes=("cats", "dogs"), per_class=12, size=16, seed=0):
    """root/<class>/<n>.png: small RGB PNGs written with PIL (an ImageFolder tree)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for c, cls in enumerate(classes):
        d = Path(root) / cls
        d.mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            base = rng.integers(0, 256, 3)
            img = np.clip(base + rng.normal(0, 40, (size, size, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(img, "RGB").save(d / f"{k:04d}.png")
    return str(root)


_WORDS = ("the cat dog sat on mat a ran to house big small red green tree under over and "
          "it was in garden bird sang song day night moon sun light").split()


def write_word_corpus(root, lines=(40, 10, 10), seed=0):
    """root/{train,valid,test}.txt: tokenised text, one sentence a line (wikitext-style)."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for name, n in zip(("train", "valid", "test"), lines):
        text = []
        for _ in range(n):
            k = int(rng.integers(4, 12))
            text.append(" " + " ".join(rng.choice(_WORDS, k)) + " . ")
        (root / f"{name}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    return str(root)


def write_char_corpus(path, chars=2000, seed=0):
    """A plain text file (tiny-shakespeare-style input.txt) for a character-level model."""
    rng = np.random.default_rng(seed)
    words = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(str(rng.choice(_WORDS)))
    text = ""
    for i, w in enumerate(words):
        text += w + ("\n" if i % 9 == 8 else " ")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text[:chars], encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------ running the programs
TORCH_PRELUDE = f"""
import runpy, sys
sys.path.insert(0, {str(ROOT)!r})
from bench.data_speed import allow_synthetic_cifar
allow_synthetic_cifar()          # imports torchvision next to the CPU torch, skips the md5 check
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = __import__('os').path.dirname(__import__('os').path.abspath(script))
runpy.run_path(script, run_name='__main__')
"""

# torch and torchvision cannot be imported by the converted program
MS_PRELUDE = """
import runpy, sys, os
for name in ('torch', 'torchvision', 'torchaudio', 'msmigrate'):
    sys.modules[name] = None
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name='__main__')
"""


def run_program(script: Path, args: Sequence[str], *, torch: bool, cwd: Path, timeout=600):
    """Run a training program; returns (CompletedProcess, seconds). Fails the test on a non-zero exit."""
    env = dict(os.environ)
    env["MS_DEVICE_TARGET"] = "CPU"
    env["GLOG_v"] = "3"              # MindSpore: errors only
    env.pop("PYTHONPATH", None)
    if not torch:
        # MindSpore 2.10's oneDNN picks a partly reference ("jit_uni_ncsp:conv+ref:any") convolution
        # on AVX-512 CPUs: 100x slower than its AVX2 gemm convolution (2.5 s vs 0.026 s for
        # 8x64x32x32, 3x3, measured here). torch's own oneDNN is not affected.
        env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    cmd = [sys.executable, "-c", TORCH_PRELUDE if torch else MS_PRELUDE, str(script), *map(str, args)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise AssertionError(f"{'torch' if torch else 'converted'} {script} {' '.join(map(str, args))} "
                             f"exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
                             f"--- stderr\n{proc.stderr[-8000:]}")
    return proc, seconds


def read_metrics(path) -> List[Dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def step_values(records, key="loss"):
    """The per-optimizer-step values of `key` (records that carry a "step")."""
    return [r[key] for r in records if "step" in r and key in r]


def max_rel_diff(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, f"{a.shape} values vs {b.shape}"
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12))) if a.size else 0.0
