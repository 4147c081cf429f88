"""The slow tests CI skips (tests/heavy_tests.txt): runs them, with MSMIGRATE_HEAVY_TESTS=1.

    .venv/bin/python bench/heavy_tests.py [pytest options]

Each listed test checks a converter path that a faster test in CI also reaches (another parametrization, the
same rewrite on a smaller program); they stay runnable here, never deleted. A listed id is a test's node id, or a
parametrized test's id without its parameters (all of them)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    listed = [ln.split("#")[0].strip() for ln in (ROOT / "tests" / "heavy_tests.txt").read_text().splitlines()]
    ids = [i for i in listed if i]
    env = dict(os.environ, MSMIGRATE_HEAVY_TESTS="1")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *sys.argv[1:], *ids]
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
