"""Parity of torch's *_copy and unsafe_* ops (msmigrate/mappings/torch_tensor_ops.py): values and gradients in
PyNative and ms.jit."""
from __future__ import annotations

import numpy as np

from tests.parity.table_harness import assert_every_record_cased, case, run_table

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
A3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
T = "torch."


COPIES = [
    case([T + "diagonal_copy", T + "permute_copy", T + "t_copy", T + "transpose_copy", T + "unsqueeze_copy",
          T + "squeeze_copy", T + "expand_copy", T + "alias_copy", T + "view_copy"],
         "x, a: (torch.diagonal_copy(a), torch.diagonal_copy(x, 1, 1, 2), torch.permute_copy(x, (2, 0, 1)),"
         " torch.t_copy(a), torch.transpose_copy(x, 0, 2), torch.unsqueeze_copy(a, 1), torch.squeeze_copy(a[None]),"
         " torch.squeeze_copy(x[:1], 0), torch.expand_copy(a[:1], (3, 4)),"
         " torch.alias_copy(a) * 2, torch.view_copy(x, (6, 4)))", [A3, A], grad=True),
    case(T + "detach_copy", "a: torch.detach_copy(a) * 2", [A]),   # torch has no derivative for detach_copy
    case([T + "select_copy", T + "narrow_copy", T + "unbind_copy", T + "split_copy", T + "split_with_sizes",
          T + "split_with_sizes_copy", T + "unsafe_split", T + "unsafe_split_with_sizes", T + "unsafe_chunk"],
         "a: (torch.select_copy(a, 1, -1), torch.narrow_copy(a, 1, 1, 2), torch.unbind_copy(a, 1),"
         " torch.split_copy(a, 2, 1), torch.split_with_sizes(a, [1, 3], 1), torch.split_with_sizes_copy(a, [2, 1]),"
         " torch.unsafe_split(a, 2), torch.unsafe_split_with_sizes(a, [3, 1], dim=1), torch.unsafe_chunk(a, 2, 1))",
         [A], grad=True),
]


def test_copy_variants():
    failures = run_table(COPIES, graph_every=1)
    assert not failures, "\n".join(failures)


def test_every_copy_record_has_a_case():
    assert_every_record_cased("tests/parity/test_torch_copy_ops.py", {"test_copy_variants": COPIES})
