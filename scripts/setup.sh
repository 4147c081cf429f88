#!/usr/bin/env bash
# Creates a virtual environment with what one job needs, says what it installs and how long it may take,
# and ends with the time of each step and the size of the environment.
#
#   bash scripts/setup.sh example   the main job (scripts/example.sh): msmigrate, torch 2.13.0 (CPU build),
#                                   MindSpore 2.10 and numpy<2. No TensorFlow, no browser, no system package.
#   bash scripts/setup.sh test      what the tests need (scripts/test.sh): the above plus torchvision, pillow,
#                                   Keras, TensorFlow (CPU), onnx, einops, transformers, PyTorch Lightning, pytest and pytest-xdist. Chromium (for the HTML
#                                   report test) comes from apt only when CI=true; elsewhere the test skips.
#
# VENV=DIR picks the environment (default .venv in the repository). Safe to run again: a step whose packages
# are already there is skipped. MSMIGRATE_BENCH_DEPS=1 also installs what bench/ programs import.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${1:-test}
case "$PROFILE" in example|test) ;; *) echo "usage: scripts/setup.sh [example|test]" >&2; exit 2 ;; esac
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}
START=$SECONDS
TIMES=()

say() { echo "setup: $*" >&2; }
timed() {   # timed "what" command...: run it, remember how long it took
  local what=$1 t=$SECONDS
  shift
  "$@"
  TIMES+=("$what: $((SECONDS - t)) s")
}
have() {    # have MODULE...: every module can be found in the venv (without importing it)
  "$VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in sys.argv[1:]) else 1)" \
    "$@" >/dev/null 2>&1
}
pip_install() { "$VENV/bin/python" -m pip install --progress-bar on "$@"; }

say "profile '$PROFILE' into $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating the virtual environment with $("$PY" --version 2>&1)"
  timed "venv" "$PY" -m venv "$VENV"
  timed "pip upgrade" "$VENV/bin/python" -m pip install -q --upgrade pip
fi

# torch's CPU build lives on PyTorch's own index (PyPI's Linux torch is the CUDA build, with 3 GB of CUDA
# libraries). Used when it can be reached; otherwise torch comes from the configured indexes (pip.conf).
TORCH_INDEX=()
if "$VENV/bin/python" - <<'EOF' 2>/dev/null
import sys, urllib.request
try:
    urllib.request.urlopen("https://download.pytorch.org/whl/cpu/torch/", timeout=8).close()
except Exception:
    sys.exit(1)
EOF
then
  TORCH_INDEX=(--extra-index-url https://download.pytorch.org/whl/cpu)
else
  say "note: download.pytorch.org cannot be reached; torch and torchvision come from the configured pip indexes"
fi

# The main job: the converter ([verify] = MindSpore + torch, see pyproject.toml), installed editable.
if ! have mindspore torch libcst rich safetensors || [ ! -x "$VENV/bin/msmigrate" ]; then
  say "installing msmigrate with torch 2.13.0 (CPU, ~190 MB) and MindSpore 2.10 (~800 MB download);"
  say "  about 2-6 minutes (MindSpore unpacks 2.5 GB), more on a slow network"
  # numpy<2: MindSpore's PyNative mode breaks with numpy 2 (also pinned by pyproject.toml)
  timed "msmigrate[verify]" pip_install "${TORCH_INDEX[@]}" -e ".[verify]" "numpy<2"
fi

if [ "$PROFILE" = test ]; then
  if ! have keras tensorflow onnx einops einx pytest xdist PIL transformers pytorch_lightning; then
    say "installing the test tools: Keras, TensorFlow CPU (~250 MB download, 1.3 GB installed), onnx, einops,"
    say "  pillow, pytest (+ xdist), transformers (tiny models built from configs, nothing downloaded), PyTorch"
    say "  Lightning (tests/test_lightning.py runs its Trainer), einx; about 1-3 minutes"
    # Keras 3 for `msmigrate keras`; TensorFlow runs the original TF/Keras programs (tests/test_tf_training.py);
    # onnx evaluates exported files (tests/parity/test_deploy.py); einops is compared in tests/parity/test_einops.py
    timed "test tools" pip_install -e ".[verify,keras,tensorflow,dev]" "numpy<2" "torch==2.13.0" "${TORCH_INDEX[@]}"
  fi
  if ! have torchvision; then
    # torchvision 0.28.0 is the release built for torch 2.13. Its CPU wheel (0.28.0+cpu) is on PyTorch's index;
    # PyPI's wheel is built for CUDA torch and its C++ ops library cannot load next to the CPU torch.
    say "installing torchvision 0.28.0 (~8 MB, a few seconds)"
    if [ ${#TORCH_INDEX[@]} -gt 0 ]; then
      timed "torchvision" pip_install "${TORCH_INDEX[@]}" "torchvision==0.28.0" "torch==2.13.0" "numpy<2"
    else
      # --no-deps keeps pip from replacing the CPU torch with PyPI's CUDA build
      timed "torchvision" pip_install --no-deps "torchvision==0.28.0"
    fi
  fi
  if ! "$VENV/bin/python" -c "import torchvision" >/dev/null 2>&1; then
    say "warning: torchvision is installed but does not import next to this torch (a wheel built for CUDA torch);"
    say "  install the CPU wheel: $VENV/bin/pip install torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu"
    say "  tests/test_install.py::test_torchvision_imports skips until then"
  fi
  # Headless Chromium renders the HTML report in tests/test_html_report.py. Only CI (CI=true) installs it,
  # with Debian's package; on your machine nothing system-wide is changed: the test skips and says why.
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    if [ "${CI:-}" = "true" ]; then
      SUDO=""
      if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
      say "CI=true: installing Debian's chromium with apt-get (about 1-2 minutes)"
      timed "chromium (apt)" bash -c "{ $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive \
          $SUDO apt-get install -y -q chromium; } >&2" || true
      if ! command -v chromium >/dev/null 2>&1; then
        say "error: chromium is required on CI (CI=true) and apt-get could not install it"
        exit 1
      fi
    else
      say "note: chromium is not installed; tests/test_html_report.py's rendering test will skip"
      say "  (install it yourself, e.g. 'sudo apt-get install chromium', to run it; CI=true installs it)"
    fi
  fi
fi

# bench/real_world.py and bench/library_imports.py (not the tests): what the original library programs import
# under torch. Opt in with MSMIGRATE_BENCH_DEPS=1; numpy<2 and torch kept pinned.
if [ "${MSMIGRATE_BENCH_DEPS:-}" = "1" ]; then
  say "MSMIGRATE_BENCH_DEPS=1: installing the bench programs' libraries (about 1-2 minutes)"
  printf 'numpy<2\ntorch==2.13.0\n' > .bench-constraints.txt
  timed "bench libraries" pip_install -c .bench-constraints.txt transformers ema-pytorch accelerate pytorch-fid \
    einx loguru torch-einops-utils ftfy regex tqdm matplotlib scipy timm tensorboard pyyaml progress \
    "opencv-python-headless<4.11" ttach scikit-learn pandas
fi

SIZE=$(du -sh "$VENV" 2>/dev/null | cut -f1)
say "done in $((SECONDS - START)) s"
for t in "${TIMES[@]}"; do say "  $t"; done
say "$VENV is $SIZE; the command is $VENV/bin/msmigrate (or: . $VENV/bin/activate; msmigrate ...)"
