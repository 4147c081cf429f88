"""Minimal reproductions of what bench/_rw_heldout63.py's programs (ultralytics/yolov5, JingyunLiang/SwinIR,
facebookresearch/segment-anything) met, each run under torch and converted.

- `torch.set_printoptions(linewidth=320, precision=5, profile='long')` (YOLOv5's utils/general.py, at import): torch
  knows three profiles and sets nothing for another; the helper looked the name up and raised KeyError: 'long'."""
import re

import numpy as np

from tests.parity.test_torch_runtime import _both

UNKNOWN_PRINT_PROFILE = '''
import torch


def fn(x):
    torch.set_printoptions(linewidth=320, precision=5, profile='long')
    shown = str(x)
    torch.set_printoptions(profile="default")
    return shown
'''


def test_unknown_print_profile_sets_nothing():
    x = np.array([1.23456789, 2.5, -3.0], np.float32)
    saved = np.get_printoptions()
    try:
        t_out, m_out, _, _ = _both(UNKNOWN_PRINT_PROFILE, x)
    finally:
        np.set_printoptions(**saved)
        import torch
        torch.set_printoptions(profile="default")
    # precision 5 as given: the first number shown with five decimals on both sides
    assert re.search(r"1\.2\d*", t_out).group() == re.search(r"1\.2\d*", m_out).group() == "1.23457", (t_out, m_out)
