"""Minimal reproductions of what bench/_rw_heldout50.py's programs (salesforce/awd-lstm-lm,
xternalz/WideResNet-pytorch) met, each run under torch and converted.

- `datasets.__dict__[args.dataset.upper()](root, ...)` (WideResNet's train.py): torchvision.datasets' module
  dictionary read with a name known at run time was a TODO that stopped the program; now the table of
  `getattr(torchvision.datasets, name)` (heldout47): a dataset converted here by its name, any other name
  MigrationError naming the line."""
import pytest

from tests.test_heldout47_programs import _cifar, _run_main

DATASET_BY_DICT = '''
import sys

import torch
import torchvision.datasets as datasets

ds = datasets.__dict__[sys.argv[1].upper()]
data = ds(sys.argv[2], train=True, download=False)
print("OUT", len(data), [data[i][1] for i in range(len(data))], data[0][0].size)
'''


def test_datasets_dict_by_name(tmp_path):
    """the converted tree reads CIFAR10 from the table (a string literal names it); another name stops at the
    line with MigrationError"""
    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(DATASET_BY_DICT.lstrip() + "assert sys.argv[1] in ('cifar10', 'mnist')\n")
    convert_tree(src, out)
    code = (out / "main.py").read_text()
    assert "torch_dict_item('torchvision.datasets', sys.argv[1].upper()" in code, code
    _cifar(tmp_path / "data", [3, 1, 4, 1, 5])
    got = _run_main(out, ["cifar10", str(tmp_path / "data")])
    assert "OUT 5 [3, 1, 4, 1, 5] (32, 32)" in got, got
    got = _run_main(out, ["stl10", str(tmp_path / "data")])
    assert got.startswith("MigrationError: getattr(torchvision.datasets, 'STL10') at main:6"), got


NN_DICT = '''
import torch
import torch.nn as nn


def fn(x, name):
    return nn.__dict__[name]()(x)
'''


def test_torch_module_dict_by_name():
    """`nn.__dict__[name]` over torch's own module: the converted layer by name, as getattr; a name torch lacks is
    a KeyError, as torch's"""
    from tests.parity.harness import check_function, load_converted, rnd
    check_function(NN_DICT.replace("name):", "name='Tanh'):"), [rnd(3, 4)], graph=False)   # host code
    mod, code, _ = load_converted(NN_DICT)
    assert "torch_dict_item('torch.nn', name" in code, code
    with pytest.raises(KeyError):
        mod.fn(None, "NoSuchLayer")
