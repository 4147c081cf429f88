#!/usr/bin/env bash
# The test command: installs what is missing, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
exec python -m pytest "$@"   # -q comes from pyproject (a second -q would hide the pass count)
