"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- A layer chosen by its exact class, `type(layer) in kinds and layer.bias is not None` with `kinds = [nn.Conv2d,
  nn.BatchNorm2d]` (jacobgil/pytorch-grad-cam's FullGrad): the access after the test was left `layer.bias`, which a
  MindSpore BatchNorm2d does not have (it holds beta): an AttributeError naming no line of the program. A `type(m) in
  LIST` / `type(m) == C` test narrows m as isinstance() does, and the operands after a test joined by `and` see the
  narrowing (before, only an `if`'s body did): the access chooses the name the cell has.
- An input's gradient read after backward() in a loop (torchattacks' PIFGSM: `if images.grad is not None:
  images.grad.detach_(); images.grad.zero_()` then `loss.backward(); noise = images.grad.data`; the iterative
  attacks of tutorials: `images.requires_grad = True; ...; cost.backward(); ... images.grad.sign(); images =
  (...).detach()`) stayed a raising TODO: only a tensor made in the loop body before the backward() was taken as a
  leaf. A .grad cleared before the backward(), or a tensor marked requires_grad in the body and bound again after
  the backward(), holds that backward's gradient alone: value_and_grad over it. A .grad that accumulates over the
  turns (marked once before the loop, never cleared nor bound again) stays the TODO.
- Where `torch.autograd.grad`'s copy form stays (a value between the input and the cost is read after the gradient:
  torchattacks' APGD keeps `logits`), the gradient's function runs the forward again: a network in training mode
  with a BatchNorm or Dropout would give other values than torch's, silently (statistics moved twice, a second
  mask). The call is now preceded by `_ms_compat.forward_run_again('module:line', <the objects the statements
  call>)`: MigrationError naming the original line where one holds such a layer in training mode; in eval mode the
  program runs and matches torch.""" 
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides
from tests.test_heldout31_programs import _BN_NET     # a network whose BatchNorm moves its statistics

EXACT_CLASS_TESTS = _FILL + '''
import torch.nn as nn


def with_bias(layer):
    kinds = [nn.Conv2d, nn.BatchNorm2d]
    if type(layer) in kinds and layer.bias is not None:
        return True
    return False


def bias_of(layer):
    if isinstance(layer, nn.BatchNorm2d) and layer.bias is not None:
        return layer.bias * 2 + layer.running_mean
    if type(layer) == nn.Conv2d:
        return layer.bias + 1
    return None


net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Conv2d(3, 2, 1, bias=False))
fill(net, 3)
weights = [bias_of(m) for m in net.modules() if with_bias(m)]
'''


@pytest.mark.parametrize("graph", [False])
def test_exact_class_tests_narrow_the_layer(graph):
    code, _ = program_weights_match_torch(EXACT_CLASS_TESTS, graph=graph)
    assert "hasattr(layer, 'beta')" in code, code


INPUT_GRAD_IN_A_LOOP = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


def cleared_each_turn(net, x, y):
    x = x.clone()
    x.requires_grad = True
    for _ in range(3):
        if x.grad is not None:
            x.grad.detach_()
            x.grad.zero_()
        out = net(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        noise = x.grad.data
        x = x + 0.1 * noise.sign() + 0.05 * noise
        x = x.detach().requires_grad_()
    return x.detach()


def marked_each_turn(net, x, y):
    for _ in range(2):
        x.requires_grad = True
        out = torch.tanh(net(x))
        loss = (out ** 2).sum()
        loss.backward()
        step = 0.1 * x.grad
        x = (x + step).detach()
    return x


def accumulating(net, x, y):
    x.requires_grad = True
    for _ in range(2):
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        print(x.grad)


net = nn.Linear(4, 3)
fill(net, 2)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
y = torch.tensor([0, 2])
weights = [cleared_each_turn(net, x, y), marked_each_turn(net, x, y)]
'''


@pytest.mark.parametrize("graph", [False])
def test_input_gradient_after_backward_in_a_loop(graph):
    import mindspore as ms

    from tests.parity.harness import load_converted

    code, _ = program_weights_match_torch(INPUT_GRAD_IN_A_LOOP, graph=graph)
    assert code.count("value_and_grad(forward_fn") == 2, code
    # accumulating's backward() goes to PyNative's recorded autograd (heldout46), which the module's own
    # value_and_grad steps stopped: called, it stops at its line, never a silent .grad
    assert "_ms_compat.autograd_backward('__main__:48', loss)" in code.split("def accumulating")[1], code
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, _, _ = load_converted(INPUT_GRAD_IN_A_LOOP, pynative=True)
    with pytest.raises(mod._ms_compat.MigrationError, match="__main__:48: backward"):
        mod.accumulating(mod.net, mod.x, mod.y)


BATCH_TUPLES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


def loss_of(model, batch):
    x, y = batch
    return F.cross_entropy(model(x), y)


def train(model, optimizer, batches):
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''


def test_step_over_batch_tuples_compiles_once():
    """A compiled train step called with each batch as one tuple (`for batch in loader: step(batch)`): a graph
    takes a plain tuple argument for a constant, so every batch compiled the step again (10 s a step on a small
    MLP instead of milliseconds). The step's tuple and list arguments of tensors enter as mutable: one compile."""
    import mindspore as ms
    import numpy as np
    from mindspore.common.api import _cell_graph_executor
    from tests.parity.harness import load_converted

    mod, code, _ = load_converted(BATCH_TUPLES)
    compiled = []
    plain = _cell_graph_executor.compile

    def counting(obj, *args, **kwargs):
        phase, new = plain(obj, *args, **kwargs)
        compiled.append(new)
        return phase, new
    rng = np.random.default_rng(0)
    batches = [(ms.Tensor(rng.standard_normal((4, 3)).astype(np.float32)), ms.Tensor(np.array([0, 1, 1, 0])))
               for _ in range(3)]
    ms.set_context(mode=ms.GRAPH_MODE)
    _cell_graph_executor.compile = counting
    try:
        model = ms.nn.Dense(3, 2)
        optimizer = mod._ms_compat.SGD(model.trainable_params(), lr=0.1)
        losses = mod.train(model, optimizer, batches)
    finally:
        del _cell_graph_executor.compile
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(losses) == 3 and losses[0] != losses[2], losses
    assert compiled.count(True) == 1, compiled


COPY_FORM = _FILL + _BN_NET + '''


def input_gradient(model, x):
    x = x.clone().detach()
    x.requires_grad = True
    out = model(x)
    cost = (out * out).sum()
    g = torch.autograd.grad(cost, x)[0]
    return g, out.detach()


net = Net()
fill(net, 5)
net.eval()
x = torch.linspace(-1, 1, 20).reshape(5, 4)
g, out = input_gradient(net, x)
weights = [g, out, net.bn.running_mean]
'''


def test_copy_form_refuses_a_network_in_training_mode():
    from tests.parity.harness import load_converted

    code, _ = program_weights_match_torch(COPY_FORM, graph=False)
    assert "_ms_compat.forward_run_again(" in code and "moved into it" not in code, code
    training = COPY_FORM.replace("net.eval()", "net.train()")
    line = training.splitlines().index("    g = torch.autograd.grad(cost, x)[0]") + 1
    with pytest.raises(Exception, match=rf":{line}: torch.autograd.grad .* BatchNorm1d in training mode") as raised:
        load_converted(training)
    assert raised.type.__name__ == "MigrationError", raised.type
