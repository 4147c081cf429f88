"""Minimal reproductions of what bench/_rw_heldout50.py's programs (salesforce/awd-lstm-lm,
xternalz/WideResNet-pytorch) met, each run under torch and converted.

- `datasets.__dict__[args.dataset.upper()](root, ...)` (WideResNet's train.py): torchvision.datasets' module
  dictionary read with a name known at run time was a TODO that stopped the program; now the table of
  `getattr(torchvision.datasets, name)` (heldout47): a dataset converted here by its name, any other name
  MigrationError naming the line."""
import pytest

from tests.test_heldout47_programs import _cifar, _run_main
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

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


RNN_INT_DROPOUT = '''
import torch
import torch.nn as nn


def make():
    return nn.ModuleList([nn.LSTM(3, 4, 1, dropout=0), nn.GRU(4, 3, 1, dropout=0)])


'''


def test_recurrent_layers_take_an_integer_dropout():
    """awd-lstm-lm's `torch.nn.LSTM(ninp, nhid, 1, dropout=0)`: torch takes any number; MindSpore's LSTM/GRU/RNN
    refuse an int ('dropout' must be 'float')"""
    from tests.parity.harness import check_layer, rnd
    check_layer(RNN_INT_DROPOUT, [rnd(5, 2, 3)], call=_run, graph=False)


def _run(net, x):
    y, _ = net[0](x)
    return net[1](y)[0]


RNN_BASE_TYPE = '''
import torch
import torch.nn as nn

lstm, gru, linear = nn.LSTM(3, 4), nn.GRU(3, 4), nn.Linear(3, 4)
answers = [issubclass(type(lstm), torch.nn.RNNBase), isinstance(gru, nn.RNNBase), isinstance(linear, nn.RNNBase),
           issubclass(type(linear), (nn.RNNBase, nn.Linear))]
'''


def test_rnn_base_as_a_type():
    """awd-lstm-lm's WeightDrop: `issubclass(type(self.module), torch.nn.RNNBase)` was a TODO stopping the program
    (torch.nn.RNNBase converts its construction only); as a type it is MindSpore's base of LSTM/GRU/RNN"""
    from tests.parity.harness import load_converted, load_torch
    want = load_torch(RNN_BASE_TYPE)["answers"]
    mod, code, _ = load_converted(RNN_BASE_TYPE, pynative=True)
    assert "_RNNBase" in code and "Unconverted" not in code, code
    assert mod.answers == want == [True, True, False, True]


LEGACY_NEW = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.rnns = nn.ModuleList([nn.Linear(3, 3) for _ in range(n)])
        self.nhid = 4

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return [weight.new(1, bsz, self.nhid if l else 2).zero_() for l in range(2)]

    def forward(self, x):
        m = x.data.new(1, x.size(1), x.size(2)).fill_(0.5)
        return m * x


def fn(x):
    model = Model(2)
    return [model(x)] + model.init_hidden(x.shape[1])
'''


def test_legacy_new_with_sizes_of_any_form():
    """`weight.new(1, bsz, self.nhid)` (awd-lstm-lm's init_hidden, weight = next(self.parameters()).data) and
    `x.data.new(1, x.size(1), x.size(2))` (its LockedDropout): two or more arguments are sizes, whatever they are
    written as; `next(self.parameters())` is a tensor (init_hidden's `weight.new` was left unconverted: an
    AttributeError)"""
    from tests.parity.harness import check_function, rnd
    code, _ = check_function(LEGACY_NEW, [rnd(3, 2, 5)], graph=False)
    assert "ops.zeros((1, bsz, " in code and "ops.zeros((1, x.shape[1], x.shape[2])" in code, code


CACHED_CORPUS = '''
import os
from collections import Counter

import torch


class Vocabulary(object):
    def __init__(self):
        self.word2idx = {}
        self.counter = Counter()

    def add(self, word):
        self.word2idx.setdefault(word, len(self.word2idx))
        self.counter[self.word2idx[word]] += 1


class Corpus(object):
    def __init__(self, words):
        self.vocabulary = Vocabulary()
        for w in words:
            self.vocabulary.add(w)
        self.ids = torch.LongTensor(len(words))
        for i, w in enumerate(words):
            self.ids[i] = self.vocabulary.word2idx[w]


torch.save(Corpus("a b a c b a".split()), FILE)
corpus = torch.load(FILE, weights_only=False)
seen = (type(corpus).__name__, type(corpus.vocabulary).__name__, type(corpus.vocabulary.counter).__name__,
        corpus.vocabulary.word2idx, dict(corpus.vocabulary.counter), corpus.vocabulary.counter[99],
        corpus.ids.tolist())
'''


def _torch_module(src, name):
    """the torch snippet run as a module of that name (pickle finds its classes there, as in a program)"""
    import sys
    import types
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    try:
        exec(compile(src, f"<{name}>", "exec"), mod.__dict__)
    finally:
        del sys.modules[name]
    return mod


def test_a_plain_object_saved_and_loaded(tmp_path):
    """awd-lstm-lm's `torch.save(corpus, fn)` then `torch.load(fn)`: an object of the program's own class (its
    __dict__: a dict, a Counter, a LongTensor) was refused at the save (TypeError); now saved as its class and
    __dict__ and loaded back as that class's object (the Counter a Counter)"""
    from tests.parity.harness import load_converted
    src = CACHED_CORPUS.replace("FILE", repr(str(tmp_path / "corpus.data")))
    want = _torch_module(src, "h50_corpus_torch").seen
    got = load_converted(src.replace("corpus.data", "corpus.ms.data"), pynative=True)[0].seen
    assert got == want and want[0] == "Corpus" and want[2] == "Counter", (got, want)


WHOLE_SAVED = _FILL + '''
import sys

import torch.nn as nn

model = nn.Linear(3, 2)
fill(model, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
x, y = torch.linspace(-1, 1, 12).reshape(4, 3), torch.ones(4, 2)


def model_save(fn):
    with open(fn, 'wb') as f:
        torch.save([model, criterion, optimizer], f)


def model_load(fn):
    global model, criterion, optimizer
    with open(fn, 'rb') as f:
        model, criterion, optimizer = torch.load(f, weights_only=False)


def step():
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()


if sys.argv[1] == "save":
    step()
    model_save(sys.argv[2])
    saved = model(x).detach()
    step()
    trained = model(x).detach()
    model_load(sys.argv[2])
    loaded = model(x).detach()
    loaded_criterion = criterion(model(x), y).detach()
    print("OUT", [round(float(v), 5) for v in loaded.reshape(-1)], round(float(loaded_criterion), 5))
    if sys.argv[3] == "step":
        step()
else:
    model_load(sys.argv[2])
'''


def test_a_list_holding_a_model_saved_and_loaded(tmp_path):
    """awd-lstm-lm's model_save `torch.save([model, criterion, optimizer], f)` and model_load: refused at the save
    (TypeError); now the file holds their state_dicts, and in the process that saved it torch.load gives back a
    copy of the objects as saved (a pickle's round trip)"""
    import sys

    import numpy as np
    from tests.parity.harness import load_converted
    argv = sys.argv
    try:
        sys.argv = ["main.py", "save", str(tmp_path / "best.pt"), "-"]
        want = vars(_torch_module(WHOLE_SAVED, "h50_whole_torch"))
        sys.argv = ["main.py", "save", str(tmp_path / "best.ms.pt"), "-"]
        got = load_converted(WHOLE_SAVED, pynative=True)[0]
    finally:
        sys.argv = argv
    for name in ("saved", "trained", "loaded", "loaded_criterion"):
        np.testing.assert_allclose(getattr(got, name).asnumpy(), want[name].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert not np.allclose(want["loaded"].numpy(), want["trained"].numpy())


def test_a_loaded_optimizer_and_another_process_stop_at_the_line(tmp_path):
    """the optimizer inside, which MindSpore cannot copy, stops the program where it is used (MigrationError naming
    that line); the file read where no copy is kept (another process) stops at the torch.load line"""
    import re

    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(WHOLE_SAVED.lstrip())
    convert_tree(src, out)
    lines = WHOLE_SAVED.lstrip().splitlines()
    use = lines.index("def step():") + 1     # the converted step: step() as a whole (its first line)
    load = lines.index("        model, criterion, optimizer = torch.load(f, weights_only=False)") + 1
    got = _run_main(out, ["save", str(tmp_path / "best.pt"), "step"])
    assert got.startswith("MigrationError: ") and re.search(r"main(\.py)?:%d: " % use, got), got
    assert "MindSpore cannot rebuild an optimizer" in got, got
    got = _run_main(out, ["load", str(tmp_path / "best.pt")])      # a fresh helper: another process
    assert got.startswith("MigrationError: ") and re.search(r"main(\.py)?:%d: " % load, got), got
