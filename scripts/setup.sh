#!/usr/bin/env bash
# Creates .venv with msmigrate, MindSpore 2.10 (CPU), torch 2.13.0 (CPU) and numpy<2.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
if ! python -c "import mindspore, torch, PIL, libcst, pytest, msmigrate, importlib.util as u; assert u.find_spec('torchvision') and u.find_spec('keras') and u.find_spec('tensorflow') and u.find_spec('onnx') and u.find_spec('einops')" >/dev/null 2>&1; then
  python -m pip install -q --upgrade pip
  # numpy<2: MindSpore's PyNative mode breaks with numpy 2; torch==2.13.0 is the CPU build
  python -m pip install -q "numpy<2" "torch==2.13.0" "mindspore==2.10.0" "libcst>=1.1" "rich>=13" \
      "safetensors>=0.4" "pytest>=7"
  # torchvision 0.28.0 is the release built for torch 2.13 (data/transforms parity tests);
  # --no-deps keeps pip from replacing the CPU torch
  python -m pip install -q --no-deps "torchvision==0.28.0"
  python -m pip install -q "pillow"
  # Keras 3 for `msmigrate keras` (run with KERAS_BACKEND=torch: no TensorFlow needed); numpy<2 kept pinned
  python -m pip install -q "keras==3.15.1" "numpy<2"
  # TensorFlow (CPU) runs the original TensorFlow/Keras programs in tests/test_tf_training.py; numpy<2 kept
  python -m pip install -q "tensorflow-cpu==2.21.0" "numpy<2"
  # onnx: tests/parity/test_deploy.py evaluates exported ONNX files with onnx.reference
  python -m pip install -q "onnx==1.23.2" "numpy<2"
  # einops: tests/parity/test_einops.py compares converted einops calls with einops on torch tensors
  python -m pip install -q "einops==0.8.2"
  python -m pip install -q --no-deps -e .
fi
# Headless Chromium renders the HTML report in tests/test_html_report.py (Debian's chromium package).
# Without apt (or rights to use it) this only warns; with CI=true it must succeed.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
  if command -v apt-get >/dev/null 2>&1; then
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium; } >&2 \
      || echo "setup: warning: could not install chromium with apt-get" >&2
  else
    echo "setup: warning: chromium is missing and apt-get is not available; the HTML report test will skip" >&2
  fi
  if [ "${CI:-}" = "true" ] && ! command -v chromium >/dev/null 2>&1; then
    echo "setup: error: chromium is required on CI (CI=true)" >&2
    exit 1
  fi
fi
# bench/real_world.py and bench/library_imports.py (not the tests): what the original library
# programs import under torch. Opt in with MSMIGRATE_BENCH_DEPS=1; numpy<2 and torch kept pinned.
if [ "${MSMIGRATE_BENCH_DEPS:-}" = "1" ]; then
  printf 'numpy<2\ntorch==2.13.0\n' > .bench-constraints.txt
  python -m pip install -q -c .bench-constraints.txt transformers ema-pytorch accelerate pytorch-fid einx loguru \
    torch-einops-utils ftfy regex tqdm matplotlib scipy timm
fi
