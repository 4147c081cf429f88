"""Minimal reproductions of what bench/_rw_heldout41.py's programs (sgrvinod's super-resolution and object-detection
tutorials) needed, each compared with torch in PYNATIVE and GRAPH mode.

- A membership test against a set display (`assert kind in {'a', 'b'}`) in a module-level function
  that a network's forward or a training step calls (the super-resolution tutorial's convert_image, called inside
  the SRGAN generator's step): GRAPH mode has no set expression and stopped compiling ("Unsupported expression
  'Set'", reported as MigrationError at the call). The rewrite to a tuple display was made only inside a Module's
  own methods; it is now made wherever the conversion writes GRAPH forms (module-level functions a compiled graph
  may reach included).
- A tensor read through an index tensor, then written by subscript (the detection loss's prior matching: a label
  per prior gathered through the matched object's index, then `labels[overlap < threshold] = 0`): torch's read is
  a copy; MindSpore 2.10's PYNATIVE result stayed tied to its source, and the masked write changed the source too
  (the next gather read a label overwritten with 0; under a gradient the loss found no positive prior and was nan,
  or MindSpore stopped with "Can not find top cell for backward"). Such a read, of a name written by subscript
  in the same scope, is bound through `_ms_compat.own_gathered(read, index parts)`: a copy when a part is a tensor
  or a list, the read itself for int and slice indices (torch's views, which MindSpore's PYNATIVE writes through
  as torch does).
- A uint8 tensor used as an index (the detection tutorial's NMS keeps `boxes[1 - suppress]`, suppress a byte
  tensor grown by torch.max with a bool comparison): torch reads it as a mask (its legacy byte mask); MindSpore
  refused it ("IndexError: The tensor index must be int or bool type", naming no line). The PYNATIVE indexing
  hook of _ms_compat (_numpy_index) now gives such an index, and a NumPy uint8 array, as the bool mask. In GRAPH
  mode the index is still refused by MindSpore's compiler (not reproduced here; the tutorial runs its NMS
  eagerly)."""
import numpy as np
import pytest

from tests.parity.harness import check_function, check_layer, rnd

SET_MEMBERSHIP = '''
import torch
import torch.nn as nn


def rescale(img, target):
    assert target in {'half', 'double'}, "unknown target %s" % target
    if target == 'half':
        return img * 0.5
    return torch.tanh(img) * 2.


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return rescale(self.fc(x), target='double') + rescale(x[:, :3], 'half')


def make():
    return Net()
'''


@pytest.mark.parametrize("graph", [False, True])
def test_set_membership_in_a_function_a_graph_calls(graph):
    code, _ = check_layer(SET_MEMBERSHIP, [rnd(2, 4, seed=1)], graph=graph)
    assert "target in ('half', 'double')" in code


GATHERED = '''
import torch


def fn(weights, match, rank):
    source = weights * 1.
    picked = source[match]
    picked[rank < 3] = 0.
    again = source[match]
    return picked * 2., again + 1., source * 1.
'''


@pytest.mark.parametrize("graph", [False, True])
def test_gathered_read_written_by_mask_leaves_its_source(graph):
    source = rnd(3, seed=2)
    match = np.array([0, 1, 1, 0, 2, 1], dtype=np.int64)
    rank = np.array([4, 0, 5, 1, 3, 2], dtype=np.int64)
    code, _ = check_function(GATHERED, [source, match, rank], graph=graph, grad=not graph)
    assert "own_gathered(source[match], match)" in code


BYTE_MASK = '''
import torch


def fn(boxes, scores):
    overlap = boxes @ boxes.t()
    dropped = torch.zeros(len(boxes), dtype=torch.uint8)
    for k in range(len(boxes)):
        if dropped[k] == 1:
            continue
        dropped = torch.max(dropped, overlap[k] > 0.5)
        dropped[k] = 0
    kept = 1 - dropped
    return boxes[kept], scores[kept], kept.sum()
'''


def test_uint8_tensor_index_is_a_mask():
    boxes = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.2, 0.1]], dtype=np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.1], dtype=np.float32)
    check_function(BYTE_MASK, [boxes, scores], graph=False)
