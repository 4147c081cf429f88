#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh test), then runs the whole suite.
# VENV=DIR picks the environment (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
export VENV=${VENV:-.venv}
bash scripts/setup.sh test
# one pytest worker per core (pytest-xdist); a test file stays on one worker, so its module fixtures are built once.
# MSMIGRATE_TEST_WORKERS=0 runs everything in this process.
exec "$VENV/bin/python" -m pytest -n "${MSMIGRATE_TEST_WORKERS:-auto}" --dist loadfile "$@"   # -q comes from pyproject
