"""Parity of msmigrate/mappings/torch_functional_more.py (3-d pooling, Lp pooling, pdist, instance_norm): values
and dtypes in PyNative and ms.jit, gradients where they matter."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
VOL = RNG.standard_normal((1, 2, 4, 5, 4)).astype(np.float32)
SEQ = RNG.uniform(0.1, 2.0, (2, 3, 8)).astype(np.float32)
IMG = RNG.uniform(0.1, 2.0, (2, 3, 6, 6)).astype(np.float32)
PTS = RNG.standard_normal((5, 3)).astype(np.float32)
W = RNG.uniform(0.5, 1.5, 3).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
F = "torch.nn.functional."

CASES = [
    case([F + "adaptive_avg_pool3d", F + "avg_pool3d"],
         "v: (torch.nn.functional.adaptive_avg_pool3d(v, (2, 2, 2)), torch.nn.functional.adaptive_avg_pool3d(v, 1),"
         " torch.nn.functional.avg_pool3d(v, 2), torch.nn.functional.avg_pool3d(v, 3, 1, 1),"
         " torch.nn.functional.avg_pool3d(v, 2, stride=1, count_include_pad=False, divisor_override=None),"
         " torch.nn.functional.avg_pool3d(v, (2, 3, 2), stride=(1, 2, 2), padding=(0, 1, 1), ceil_mode=True))", [VOL],
         graph=False),
    case([F + "max_pool3d", F + "max_pool3d_with_indices", "torch.max_pool3d"],
         "v: (torch.nn.functional.max_pool3d(v, 2), torch.nn.functional.max_pool3d(v, 3, 1, 1),"
         " torch.nn.functional.max_pool3d(v, 2, return_indices=True), torch.nn.functional.max_pool3d_with_indices(v,"
         " (2, 2, 1)), torch.max_pool3d(v, 2), torch.max_pool3d(v, [2, 3, 2], [1, 1, 1]),"
         " torch.max_pool3d(input=v, kernel_size=3, stride=1, padding=1, ceil_mode=True))", [VOL]),
    case([F + "lp_pool1d", F + "lp_pool2d", F + "pdist"],
         "s, i, p: (torch.nn.functional.lp_pool1d(s, 2, 3), torch.nn.functional.lp_pool1d(s, 1, 2, stride=1),"
         " torch.nn.functional.lp_pool2d(i, 2, 2), torch.nn.functional.lp_pool2d(i, 3, (2, 3), 1),"
         " torch.nn.functional.pdist(p), torch.nn.functional.pdist(p, 1))", [SEQ, IMG, PTS], rtol=1e-4,
         atol=1e-5, graph=False),
    case([F + "instance_norm", "torch.instance_norm"],
         "i, v, w, b: (torch.nn.functional.instance_norm(i), torch.nn.functional.instance_norm(i, weight=w, bias=b,"
         " eps=1e-3), torch.nn.functional.instance_norm(v[0]), torch.instance_norm(i, w, b, None, None, True, 0.1,"
         " 1e-5, False), torch.instance_norm(i, None, None, None, None, True, 0.1, 1e-5, True))",
         [IMG, VOL, W, B], grad=True, rtol=1e-4, atol=1e-4, graph=False),
    # given running statistics: moved in place toward the batch's average (unbiased variance), or, with
    # use_input_stats=False, the statistics that normalise
    case([F + "instance_norm", "torch.instance_norm"],
         "i, s, w, b: (lambda rm, rv: (torch.nn.functional.instance_norm(i, rm, rv, w, b, momentum=0.3), rm.clone(),"
         " rv.clone(), torch.nn.functional.instance_norm(i * 2 + 1, rm, rv), rm.clone(), rv.clone(),"
         " torch.nn.functional.instance_norm(i, rm, rv, w, use_input_stats=False, eps=1e-3),"
         " torch.instance_norm(s, None, None, rm, rv, True, 0.5, 1e-5, False), rm, rv))(torch.zeros(3), torch.ones(3))",
         [IMG, SEQ, W, B], grad=True, rtol=1e-4, atol=1e-4, graph=False),
    # one tensor as both statistics and the weight: the output reads the values from before the update
    case(F + "instance_norm", "s, w: (lambda d: (torch.nn.functional.instance_norm(s, d, d, d, d), d))(w * 1)",
         [SEQ, W], rtol=1e-4, atol=1e-4, graph=False),
]


def test_functional_more():
    # gradients of the instance_norm expression written here; the pooling ops are MindSpore's own
    failures = run_table(CASES, graph_every=1)
    assert not failures, "\n".join(failures)


def test_every_functional_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_functional_more.py", {"test_functional_more": CASES})
