"""Parity of torch.masked's functions with mask= (msmigrate/mappings/torch_masked.py): values and dtypes against
torch on the same inputs, for a mask of the input's shape, a mask that broadcasts, a row with nothing kept (the
identity of the operation: 0, -inf, nan...), mask=None and a 0-d input; gradients where every row keeps two
elements (a row with nothing kept, or var's one element, has torch's nan/inf values there)."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
SOME = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 1, 0]], bool)       # every row keeps two elements
NONE_ROW = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1]], bool)   # the second row keeps nothing
COL = np.array([[True], [False], [True]])                               # broadcast along the rows
S = np.array(0.75, np.float32)
INTS = np.arange(12, dtype=np.int64).reshape(3, 4) - 4
M = "torch.masked."
_REDUCE = ("sum", "prod", "amax", "amin", "mean", "logsumexp")

MASKED = [
    case([M + n for n in _REDUCE],
         "x, m: (" + ", ".join(f"torch.masked.{n}(x, 1, mask=m), torch.masked.{n}(x, mask=m), "
                               f"torch.masked.{n}(x, (0, 1), keepdim=True, mask=m), torch.masked.{n}(x, 0, mask=None)"
                               for n in _REDUCE) + ")", [X, SOME], grad=True),
    case([M + n for n in _REDUCE],
         "x, m, c, s: (" + ", ".join(f"torch.masked.{n}(x, 1, mask=m), torch.masked.{n}(x, 0, keepdim=True, mask=c),"
                                     f" torch.masked.{n}(s, mask=s > 1), torch.masked.{n}(s, 0, keepdim=True, mask=None)"
                                     for n in _REDUCE) + ")", [X, NONE_ROW, COL, S]),
    case([M + "sum", M + "prod", M + "amax", M + "cumsum"],
         "i, m: (torch.masked.sum(i, 1, mask=m), torch.masked.prod(i, mask=m), torch.masked.amax(i, 1, mask=m),"
         " torch.masked.cumsum(i, 1, mask=m), torch.masked.sum(i > 0, 0, mask=m))", [INTS, NONE_ROW]),
    case([M + "argmax", M + "argmin"],
         "x, m, s: (torch.masked.argmax(x, 1, mask=m), torch.masked.argmin(x, 0, mask=m), torch.masked.argmax(x, mask=m),"
         " torch.masked.argmin(x, 1, keepdim=True, mask=None), torch.masked.argmax(s, mask=s > 1),"
         " torch.masked.argmin(s, 0, keepdim=True))", [X, NONE_ROW, S]),
    case([M + "norm", M + "normalize"],
         "x, m: (torch.masked.norm(x, 2.0, 1, mask=m), torch.masked.norm(x, 1.0, mask=m),"
         " torch.masked.norm(x, float('inf'), 0, keepdim=True, mask=m), torch.masked.norm(x, 3.0, 1, mask=None),"
         " torch.masked.normalize(x, 2.0, 1, mask=m), torch.masked.normalize(x, 1.0, 0))", [X, SOME], grad=True),
    case([M + "norm", M + "normalize"],
         "x, m, s: (torch.masked.norm(x, 2.0, 1, mask=m), torch.masked.norm(x, float('-inf'), 1, mask=m),"
         " torch.masked.norm(x, 0.0, 1, mask=m), torch.masked.norm(s, 2.0, mask=s > 1),"
         " torch.masked.normalize(x, 2.0, 1, mask=m), torch.masked.normalize(x, 2.0, 1, eps=0.5, mask=m))",
         [X, NONE_ROW, S]),
    case([M + "var", M + "std"],
         "x, m, c: (torch.masked.var(x, 1, mask=m), torch.masked.std(x, mask=m), torch.masked.var(x, 0, unbiased=False,"
         " mask=m), torch.masked.std(x, 1, correction=0, keepdim=True, mask=m), torch.masked.var(x, mask=None),"
         " torch.masked.var(x, 0, mask=c))", [X, SOME, COL], grad=True),
    case([M + "var", M + "std"],
         "x, m, c: (torch.masked.var(x, 1, mask=m), torch.masked.std(x, 0, correction=2, mask=m),"
         " torch.masked.var(x, 1, mask=c))", [X, NONE_ROW, COL]),
    case([M + "softmax", M + "log_softmax", M + "softmin"],
         "x, m: (torch.masked.softmax(x, 1, mask=m), torch.masked.log_softmax(x, 0, mask=m),"
         " torch.masked.softmin(x, 1, mask=m), torch.masked.softmax(x, 0, mask=None),"
         " torch.masked.log_softmax(x, -1, dtype=torch.float64, mask=m))", [X, SOME], grad=True),
    case([M + "softmax", M + "log_softmax", M + "softmin"],
         "x, m: (torch.masked.softmax(x, 1, mask=m), torch.masked.log_softmax(x, 1, mask=m),"
         " torch.masked.softmin(x, 1, mask=m))", [X, NONE_ROW]),
    case([M + "cumsum", M + "cumprod", M + "logaddexp"],
         "x, y, m, n: (torch.masked.cumsum(x, 1, mask=m), torch.masked.cumprod(x, 0, mask=m),"
         " torch.masked.cumsum(x, 0, mask=None), torch.masked.logaddexp(x, y, input_mask=m, other_mask=n),"
         " torch.masked.logaddexp(x, y))", [X, Y, SOME, ~SOME], grad=True),
    case([M + "median"],
         "x, m, n: (torch.masked.median(x, 1, mask=m), torch.masked.median(x, 0, keepdim=True, mask=n),"
         " torch.masked.median(x, mask=None))", [X, SOME, NONE_ROW]),
]


def test_masked():
    failures = run_table(MASKED, graph_every=2)
    assert not failures, "\n".join(failures)


def test_every_masked_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_masked.py", {"test_masked": MASKED})
