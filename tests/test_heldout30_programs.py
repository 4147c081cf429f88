"""Minimal reproductions of what bench/_rw_heldout30.py's programs (MorvanZhou/PyTorch-Tutorial's scripts run whole)
needed, each compared with torch (or, for the MNIST files, with the idx files' own bytes: torchvision does not import
next to this torch).

- `tensor.dot(tensor)` of 2-D tensors: torch refuses it (RuntimeError "1D tensors expected"), the conversion, a sum
  of products, printed 30.0 for [[1, 2], [3, 4]] and ran on. _ms_compat.dot now makes torch's checks (1-D, one
  length, one dtype) and raises its RuntimeError, in PYNATIVE and while a graph compiles (a constexpr).
- torchvision's deprecated MNIST names (`train_data`, `train_labels`, `test_data`, `test_labels`): the converted
  dataset had only `data` / `targets` (AttributeError at the script's first print).
- `self.online, self.frozen = Net(), Net()` in a plain class, then `self.online.forward(x)`: the tuple
  assignment left the attributes' types unknown, so `.forward` stayed and the converted Cell (whose forward is
  construct) raised AttributeError. A tuple of self attributes bound to a tuple of values is typed element by
  element now (`.construct(x)`).
- nn.RNN / LSTM / GRU / LSTMCell drew their initial weights from NumPy's global stream (MindSpore's layers call
  np.random.uniform / randn): a program that seeds np.random and draws from it after building its network
  (501_why_torch_dynamic_graph.py's random sequence lengths) drew other numbers than under torch, and trained on
  other data (1.1 relative at its first loss). They draw from the initializers' own stream now, the global one
  left where it was.
The programs here are written for these tests (the constructs, not the tutorial's code)."""
import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch

DOT_PROGRAM = '''
import torch

def products(a, b, m):
    return torch.dot(a, b), a.dot(b), torch.dot(a[:0], b[:0])

def flat_dot(m):
    return m.dot(m)

def short_dot(a):
    return torch.dot(a, a[:2])

def mixed_dot(a, i):
    return torch.dot(a, i)
'''


def test_dot_makes_torchs_checks():
    import mindspore as ms
    import torch

    ref = load_torch(DOT_PROGRAM)
    mod, code, _ = load_converted(DOT_PROGRAM)
    assert "_ms_compat.dot(" in code, code
    a, b = np.array([1.5, -2.0, 3.0], np.float32), np.array([0.5, 4.0, -1.0], np.float32)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    want = [float(v) for v in ref["products"](torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(m))]
    got = [float(v.asnumpy()) for v in mod.products(ms.Tensor(a), ms.Tensor(b), ms.Tensor(m))]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for fn, args in (("flat_dot", (m,)), ("short_dot", (a,)), ("mixed_dot", (a, np.arange(3)))):
        with pytest.raises(RuntimeError) as torch_error:
            ref[fn](*map(torch.from_numpy, args))
        with pytest.raises(RuntimeError) as ms_error:
            getattr(mod, fn)(*map(ms.Tensor, args))
        # the same refusal (torch's dtype names differ from MindSpore's: the message's start)
        assert str(ms_error.value).split(",")[0][:30] == str(torch_error.value).split(",")[0][:30], \
            (str(ms_error.value), str(torch_error.value))
    # a compiled graph refuses it as it compiles
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 2D tensors"):
        ms.jit(mod.flat_dot)(ms.Tensor(m))


MNIST_PROGRAM = '''
import torchvision

def read(root):
    train = torchvision.datasets.MNIST(root=root, train=True, transform=torchvision.transforms.ToTensor())
    test = torchvision.datasets.MNIST(root=root, train=False)
    first, label = train[0]
    return (train.train_data.numpy(), train.train_labels.numpy(), test.test_data.numpy(), test.test_labels.numpy(),
            tuple(train.train_data.size()), first.numpy(), label)
'''


def test_mnist_deprecated_names(tmp_path):
    from tests.corpus import write_mnist

    write_mnist(tmp_path, n_train=6, n_test=4)
    raw = tmp_path / "MNIST" / "raw"

    def idx(name, header):
        return np.frombuffer((raw / name).read_bytes(), np.uint8, offset=header)

    mod, code, _ = load_converted(MNIST_PROGRAM)
    train_data, train_labels, test_data, test_labels, size, first, label = mod.read(str(tmp_path))
    np.testing.assert_array_equal(train_data, idx("train-images-idx3-ubyte", 16).reshape(6, 28, 28))
    np.testing.assert_array_equal(train_labels, idx("train-labels-idx1-ubyte", 8))
    np.testing.assert_array_equal(test_data, idx("t10k-images-idx3-ubyte", 16).reshape(4, 28, 28))
    np.testing.assert_array_equal(test_labels, idx("t10k-labels-idx1-ubyte", 8))
    assert train_labels.dtype == np.int64 and size == (6, 28, 28)
    # ToTensor of the first image: torch's float32 x / 255
    np.testing.assert_array_equal(first, (train_data[0].astype(np.float32) / np.float32(255))[None])
    assert label == int(train_labels[0])


AGENT_PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(30)
rng = np.random.RandomState(7)


def fill(net):
    with torch.no_grad():
        for w in net.parameters():
            w.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(w.shape)).astype(np.float32)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)))


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=5, batch_first=True)
        self.lstm = nn.LSTM(1, 5)
        self.gru = nn.GRU(1, 5)
        self.cell = nn.LSTMCell(1, 5)


class Agent(object):
    def __init__(self):
        self.online, self.frozen = Net(), Net()
        fill(self.online)
        self.frozen.load_state_dict(self.online.state_dict())
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=0.05)
        self.criterion = nn.MSELoss()

    def act(self, s):
        x = torch.unsqueeze(torch.FloatTensor(s), 0)
        q = self.online.forward(x)
        return int(torch.max(q, 1)[1].data.numpy()[0]), q.data.numpy()

    def learn(self, s, a, r, s_):
        q_now = self.online(s).gather(1, a)
        q_next = self.frozen(s_).detach()
        q_goal = r + 0.9 * q_next.max(1)[0].view(-1, 1)
        loss = self.criterion(q_now, q_goal)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


agent = Agent()
recurrent = Recurrent()
# the program's own NumPy draws after its networks are built: the same numbers as under torch
lengths = [int(np.random.randint(1, 4)) for _ in range(6)]
noise = np.random.uniform(-1, 1, 5).tolist()
state = np.array([0.1, -0.2, 0.3, 0.05])
actions, values = [], []
for k in range(3):
    action, q = agent.act(state * (k + 1))
    actions.append(action)
    values.append(q)
values = np.stack(values)
batch = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
after = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
picked = torch.LongTensor(rng.randint(0, 2, (6, 1)))
rewards = torch.FloatTensor(rng.uniform(0, 1, (6, 1)))
losses = [agent.learn(torch.from_numpy(batch), picked, rewards, torch.from_numpy(after)) for _ in range(3)]
'''


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_agent_with_tuple_assigned_nets_and_recurrent_layers(graph):
    import mindspore as ms

    ref = load_torch(AGENT_PROGRAM)
    try:
        mod, code, _ = load_converted(AGENT_PROGRAM, pynative=not graph)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert "self.online.construct(x)" in code, code
    assert mod.lengths == ref["lengths"], (mod.lengths, ref["lengths"])
    np.testing.assert_allclose(mod.noise, ref["noise"], rtol=1e-12)
    assert mod.actions == ref["actions"]
    np.testing.assert_allclose(mod.values, ref["values"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mod.losses, ref["losses"], rtol=2e-5, atol=1e-6)
    assert ref["losses"][0] != ref["losses"][-1]
