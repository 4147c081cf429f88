"""Constructs found by bench/real_world.py --set wider (bench/_rw_wider.py) in real programs the
converter was not built against, each reduced to a minimal torch snippet run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .test_train_loop import MLP, _batches, run_both  # noqa: E402


def test_hand_written_update_one_data_add():
    """pytorch/examples regression: `for p in fc.parameters(): p.data.add_(-0.1 * p.grad)` alone in its loop
    (no no_grad, no if), the loss read with .item() before backward(): the step differentiates it (the loop
    was taken for an update of the values outside any step, which read p.grad and left backward() a TODO)."""
    src = MLP + """

def make():
    return {"model": Net()}


def train(objs, batches):
    model = objs["model"]
    losses = []
    for x, y in batches:
        model.zero_grad()
        output = F.cross_entropy(model(x), y)
        loss = output.item()
        output.backward()
        for param in model.parameters():
            param.data.add_(-0.1 * param.grad)
        losses.append(loss)
    return losses
"""
    code, sites, _ = run_both(src, _batches(n=3), modes=("pynative",))   # GRAPH: test_train_loop.py
    assert "Unconverted" not in code and ".grad" not in code, code
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]


DEVICE_KINDS = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        if (x.is_cuda or x.is_xpu or x.is_mps) and self.fc.in_features > 100:   # dcgan's data_parallel branch:
            return nn.parallel.data_parallel(self.fc, x, range(2))                 # GRAPH mode must drop it
        return self.fc(x) * (2 if x.is_meta else 1)


def make():
    return Head()
"""


def test_other_device_kinds_answer_false():
    """pytorch/examples dcgan: `input.is_xpu` (and is_mps, is_meta...) were TODOs raising in forward(); a
    tensor is never on those devices after conversion: False, as torch answers on CPU (PyNative and GRAPH)."""
    import numpy as np
    from .parity.harness import check_layer

    code, sites = check_layer(DEVICE_KINDS, [np.ones((4, 3), np.float32)])
    assert "is_on_device(x, 'xpu', 'is_xpu')" in code, code
    todo = [s.api for s in sites if s.status == TODO]
    assert todo == ["torch.nn.parallel.data_parallel"], todo


OPTIONAL_BIAS_NORM = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, ndim))
        self.bias = nn.Parameter(torch.linspace(-0.5, 0.25, ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = LayerNorm(4, bias=False)
        self.b = LayerNorm(4, bias=True)

    def forward(self, x):
        return self.b(self.a(x) * 2)


def make():
    return Net()
"""


def test_layer_norm_with_a_bias_that_is_none_at_run_time():
    """nanoGPT's LayerNorm(bias=False): F.layer_norm(x, shape, self.weight, self.bias) with self.bias None
    failed in MindSpore's LayerNorm primitive; zeros stand in for it, as torch (values and gradients)."""
    import numpy as np
    from .parity.harness import check_layer

    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    check_layer(OPTIONAL_BIAS_NORM, [x], grad=True)


RECURRENT_BY_NAME = """
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ninp=4, nhid=6, nlayers=2):
        super().__init__()
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=0.0)
        else:
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity='relu')
        self.extra = getattr(nn, 'RNN')(nhid, 3, 1, 'relu', False, True)
        self.gru = getattr(nn, 'GRU')(3, 2, bias=False, batch_first=True)

    def forward(self, x):
        out, hidden = self.rnn(x)
        out2, _ = self.extra(out.transpose(0, 1))
        out3, _ = self.gru(out2)
        return out, out2, out3


def make_lstm():
    return RNNModel('LSTM')
"""


def test_recurrent_layer_by_name():
    """pytorch/examples word_language_model: `getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=...)` (a
    name known at run time) raised; LSTM/GRU/RNN take torch's arguments (bias -> has_bias, positions kept)."""
    import numpy as np
    from .parity.harness import check_layer

    x = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32)
    check_layer(RECURRENT_BY_NAME, [x], entry="make_lstm", graph=False, rtol=1e-4, atol=1e-5)


FORMATTED = """
import torch


def fn(x):
    losses = {"train": x.mean(), "val": x.sum()}
    n = 7
    return (f"step {n:3d}: train loss {losses['train']:.4f}, val loss {losses['val']:.2f}",
            "lr {:.3e} loss {} / {best:.1f}".format(x[0], n, best=x.max()),
            "{0:.2f}-{0:.1f}".format(x.min()))
"""


def test_tensor_formatted_with_a_spec():
    """nanoGPT's train.py: f"{losses['train']:.4f}" of a 0-d tensor (torch formats its number) raised
    TypeError in MindSpore (Tensor has no __format__); "{:.4f}".format(t) too."""
    import mindspore as ms
    import numpy as np
    import torch
    from .parity.harness import load_converted, load_torch

    x = np.array([0.5, 1.25, 3.0], np.float32)
    mod, code, _ = load_converted(FORMATTED)
    assert "_ms_compat.format_value(losses['train']):.4f" in code, code
    assert mod.fn(ms.Tensor(x)) == load_torch(FORMATTED)["fn"](torch.from_numpy(x))


ACCELERATOR = """
import torch


def fn():
    use_accel = torch.accelerator.is_available()
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")
    return (use_accel, str(device), torch.accelerator.current_accelerator(), torch.accelerator.device_count(),
            torch.zeros(2, device=device).sum().item())


def wait():
    torch.accelerator.synchronize()     # CPU-only torch raises here; nothing to wait for on a MindSpore CPU run
"""


def test_torch_accelerator_queries():
    """pytorch/examples (mnist, vae, dcgan, word_language_model...) choose their device with
    torch.accelerator.is_available() / current_accelerator(): TODOs that raised unless --no-accel was
    given; they answer as CPU torch does on a MindSpore CPU run."""
    from .parity.harness import load_converted, load_torch

    mod, code, sites = load_converted(ACCELERATOR)
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]
    assert mod.fn() == load_torch(ACCELERATOR)["fn"]()
    assert mod.wait() is None


SCRIPT_MODEL_CAST = """
import torch
import torch.nn as nn


class Sequence(nn.Module):
    def __init__(self, width=3):
        super(Sequence, self).__init__()
        self.fc, self.act = nn.Linear(width, 2), nn.Tanh()

    def forward(self, x):
        return self.act(self.fc(x)) * 3


seq = Sequence()
seq.double()


def fn(x):
    return seq(x)
"""


def test_model_built_at_a_script_top_level_is_cast_as_a_model():
    """pytorch/examples time_sequence_prediction: `seq = Sequence(); seq.double()` at the top level of the
    script was taken for a tensor (`seq.astype(ms.float64)`: AttributeError on a Cell): the model's
    parameters are cast, as torch's Module.double() does."""
    import mindspore as ms
    import numpy as np
    import torch
    from msmigrate.weights import load_torch_state_dict
    from .parity.harness import assert_close, load_converted, load_torch, no_todo

    mod, code, sites = load_converted(SCRIPT_MODEL_CAST)
    no_todo(sites)
    assert "seq.astype" not in code, code
    t_ns = load_torch(SCRIPT_MODEL_CAST)
    assert all(p.dtype == ms.float64 for p in mod.seq.get_parameters())
    load_torch_state_dict(mod.seq, {k: v.numpy() for k, v in t_ns["seq"].state_dict().items()}, strict=True)
    x = np.random.default_rng(1).standard_normal((4, 3))
    got = mod.fn(ms.Tensor(x))
    assert got.dtype == ms.float64
    assert_close(got, t_ns["fn"](torch.from_numpy(x)), rtol=1e-12, atol=1e-12)
