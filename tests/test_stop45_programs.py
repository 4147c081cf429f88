"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- A helper returning `Variable(img, requires_grad=True)` whose caller gives it to an optimizer and steps it
  (utkuozbulak/pytorch-cnn-visualizations' class-specific sample generation: a fresh image per turn, `SGD([image])`,
  the class score's backward(), `optimizer.step()`). The Variable was a raising TODO wherever the optimizer was not
  in the same scope. It is now a Parameter of its own (`_ms_compat.grad_leaf`), which MindSpore's optimizers take
  and the converted step differentiates; `model.zero_grad()` beside that step is accepted for a leaf made since
  (torch's .grad of a fresh leaf is None: nothing accumulates), and still refused for one stepped before."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

LEAF_FROM_A_HELPER = _FILL + '''
import torch.nn as nn
from torch.autograd import Variable
from torch.optim import SGD


def as_leaf(arr):
    t = torch.from_numpy(arr).float()
    t.unsqueeze_(0)
    return Variable(t, requires_grad=True)


class Sampler:
    def __init__(self, model, target):
        self.model = model
        self.target = target

    def generate(self, arr, steps):
        for _ in range(steps):
            self.image = as_leaf(arr)
            optimizer = SGD([self.image], lr=0.5)
            out = self.model(self.image)
            loss = -out[0, self.target] + (self.image ** 2).sum()
            self.model.zero_grad()
            loss.backward()
            optimizer.step()
            arr = self.image.data.numpy()[0]
        return arr


net = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
fill(net, 2)
image = Sampler(net, 1).generate(np.linspace(-1, 1, 4).astype(np.float32), 3)
weights = [torch.from_numpy(image)] + list(net.parameters())
'''


@pytest.mark.parametrize("graph", [False, True])
def test_leaf_from_a_helper_is_optimised(graph):
    code, _ = program_weights_match_torch(LEAF_FROM_A_HELPER, graph=graph)
    assert "_ms_compat.grad_leaf(" in code, code


STEPPED_LEAF_KEPT = _FILL + '''
import torch.nn as nn
from torch.autograd import Variable


def as_leaf(t):
    return Variable(t, requires_grad=True)


net = nn.Linear(3, 1)
fill(net, 1)
x = as_leaf(torch.ones(1, 3))
opt = torch.optim.SGD([x], lr=0.1)
for _ in range(2):
    net.zero_grad()
    loss = net(x).sum()
    loss.backward()
    opt.step()
weights = [x]
'''


def test_zero_grad_beside_a_stepped_leaf_is_refused():
    """The same leaf in a second turn: torch's .grad keeps growing (net.zero_grad() does not clear it), the
    converted step would apply fresh gradients: MigrationError naming the zero_grad() line."""
    import mindspore as ms
    from tests.parity.harness import load_converted

    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(Exception, match=r"MigrationError|zero_grad\(\) on Dense") as info:
        load_converted(STEPPED_LEAF_KEPT, pynative=True)
    line = STEPPED_LEAF_KEPT.splitlines().index("    net.zero_grad()") + 1
    assert type(info.value).__name__ == "MigrationError" and f":{line}:" in str(info.value), info.value


LEAF_IN_A_FORWARD = '''
import torch
import torch.nn as nn
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        h = Variable(torch.zeros(1, 3), requires_grad=True)
        return self.fc(x + h)
'''


def test_leaf_made_in_a_compiled_forward_is_refused():
    """A Parameter cannot be made while a graph compiles: MigrationError naming the Variable's line, not
    MindSpore's own error."""
    import mindspore as ms
    import numpy as np
    from tests.parity.harness import load_converted

    mod, _, _ = load_converted(LEAF_IN_A_FORWARD, pynative=True)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception) as info:
            mod.Net()(ms.Tensor(np.ones((1, 3), np.float32)))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    line = LEAF_IN_A_FORWARD.splitlines().index("        h = Variable(torch.zeros(1, 3), requires_grad=True)") + 1
    assert "MigrationError" in type(info.value).__name__ + str(info.value) and f":{line}" in str(info.value), \
        info.value


WORKERS_RUNNING_OPS = '''
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Rows(Dataset):
    def __init__(self, n, tensor_ops):
        self.n, self.tensor_ops = n, tensor_ops

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = get_worker_info()
        x = np.full((2,), i, np.float32)
        if self.tensor_ops:
            x = torch.from_numpy(x) * 2 + 1
        else:
            x = x * 2 + 1
        return x, -1 if info is None else info.id, np.random.random()


def loader(tensor_ops, workers):
    return DataLoader(Rows(10, tensor_ops), batch_size=2, shuffle=False, num_workers=workers,
                      generator=torch.Generator().manual_seed(3))
'''


def test_workers_whose_dataset_runs_ops_do_not_hang():
    """A Dataset whose __getitem__ runs tensor ops, read by num_workers=2 (the common `torch.from_numpy(x) * 2`):
    MindSpore's runtime does not survive a fork, and the converted loader's forked worker waited forever on its
    first op (PyTorch-GAN's context_encoder: past the bench's 480 s). Such batches are now read in the main process
    as the workers would read them: the same batches as without workers, batch k from worker k % 2 as torch hands
    them out, and the same per-worker NumPy draws as the forked workers give a dataset that runs no ops."""
    import signal

    import numpy as np
    from tests.parity.harness import load_converted

    def stuck(*_):
        raise TimeoutError("the converted DataLoader's workers did not answer in 120 s")

    import mindspore as ms

    mod, _, _ = load_converted(WORKERS_RUNNING_OPS)
    # a program has run ops before its loader forks (a model built, an epoch trained): the runtime's threads are up
    assert float((ms.Tensor(np.ones(3, np.float32)) * 2).sum()) == 6.0
    before = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(120)
    try:
        with_ops, plain, alone = list(mod.loader(True, 2)), list(mod.loader(False, 2)), list(mod.loader(True, 0))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert len(with_ops) == len(plain) == len(alone) == 5
    for k, (a, b, c) in enumerate(zip(with_ops, plain, alone)):
        np.testing.assert_array_equal(a[0].asnumpy(), c[0].asnumpy())
        np.testing.assert_array_equal(b[0].asnumpy(), c[0].asnumpy())
        assert a[1].asnumpy().tolist() == b[1].asnumpy().tolist() == [k % 2] * 2
        np.testing.assert_array_equal(a[2].asnumpy(), b[2].asnumpy())
    assert len({float(v) for batch in with_ops for v in batch[2].asnumpy()}) == 10
