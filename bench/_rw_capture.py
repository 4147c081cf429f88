"""Model factories for `msmigrate verify` over whole programs (bench/real_world.py).

A program's models are built by running the program itself under bench/_rw_runner.py until
model i (RW_CAPTURE["index"], counted as the runner counts models) is first called; that object
is returned and every runner patch is undone. RW_CAPTURE (JSON in the environment) names the
torch and converted scripts, their working directories and the program's arguments.

    msmigrate verify --torch bench._rw_capture:torch_model --ms bench._rw_capture:ms_model ...
"""
from __future__ import annotations

import json
import os
import sys
import tempfile


def _capture(side):
    spec = json.loads(os.environ["RW_CAPTURE"])
    from bench import _rw_runner as runner
    cwd = os.getcwd()
    argv = list(sys.argv)
    try:
        runner.run_program(side, spec[f"{side}_script"], spec["args"], spec[f"{side}_cwd"],
                           tempfile.mkdtemp(prefix="rw_capture_"), limit=10 ** 9, capture=spec["index"],
                           mode="pynative")
    finally:
        runner.restore()
        os.chdir(cwd)
        sys.argv = argv
    model = runner.STATE["captured"]
    if model is None:
        raise RuntimeError(f"the {side} program never called model {spec['index']}")
    return model


def torch_model():
    return _capture("torch")


def ms_model():
    return _capture("ms")
