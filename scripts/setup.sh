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
if ! python -c "import mindspore, torch, libcst, pytest, msmigrate" >/dev/null 2>&1; then
  python -m pip install -q --upgrade pip
  # numpy<2: MindSpore's PyNative mode breaks with numpy 2; torch==2.13.0 is the CPU build
  python -m pip install -q "numpy<2" "torch==2.13.0" "mindspore==2.10.0" "libcst>=1.1" "rich>=13" \
      "safetensors>=0.4" "pytest>=7"
  python -m pip install -q --no-deps -e .
fi
