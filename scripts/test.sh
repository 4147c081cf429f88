#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh test), then runs the whole suite.
# VENV=DIR picks the environment (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV=${VENV:-.venv}
bash scripts/setup.sh test
exec "$VENV/bin/python" -m pytest "$@"   # -q comes from pyproject (a second -q would hide the pass count)
