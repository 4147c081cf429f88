"""Constructs found by bench/real_world.py --set heldout12 (bench/_rw_heldout12.py: aitorzip/PyTorch-CycleGAN and
Shawn1993/cnn-text-classification-pytorch) in programs the converter was never run on, each reduced to a minimal
torch snippet of our own run against its conversion."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.cli import main  # noqa: E402
from tests.treeutil import run_printed, write_tree  # noqa: E402


def _run(root, side, mode=""):
    return run_printed(root, side, mode)


def _matches_torch(tmp_path, program):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"train.py": program})
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    want = _run(src, "torch")
    for mode in ("pynative", "graph"):
        got = _run(out, "ms", mode)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6, err_msg=mode)
    return (out / "train.py").read_text()

# ------------------------------------------------------------------ torch.Tensor bound to a name, called with sizes
TENSOR_ALIAS = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    gen = nn.Linear(4, 4)
    disc = nn.Linear(4, 1)
    with torch.no_grad():
        gen.weight.copy_(torch.linspace(-0.5, 0.5, 16).reshape(4, 4))
        gen.bias.copy_(torch.linspace(0.1, -0.1, 4))
        disc.weight.copy_(torch.linspace(-0.3, 0.4, 4).reshape(1, 4))
        disc.bias.fill_(0.05)
    Tensor = torch.Tensor
    input_A = Tensor(3, 4)
    target_real = Variable(Tensor(3).fill_(1.0), requires_grad=False)
    assert isinstance(input_A, Tensor) and not isinstance(3, Tensor)


    class Own(Tensor):
        pass


    assert issubclass(Own, Tensor) and not issubclass(int, Tensor)
    optimizer = torch.optim.Adam(list(gen.parameters()) + list(disc.parameters()), lr=0.05)
    criterion = nn.MSELoss()
    losses = []
    for batch in [torch.linspace(-1, 1, 12).reshape(3, 4), torch.linspace(2, -1, 12).reshape(3, 4)]:
        real_A = Variable(input_A.copy_(batch))
        optimizer.zero_grad()
        loss = criterion(disc(gen(real_A)).view(-1), target_real) + (gen(real_A) - real_A).abs().mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    made = [Tensor(torch.arange(3)), Tensor([1, 2]), Tensor(2, 1)]
    out = [float(t.sum()) for t in [gen.weight, gen.bias, disc.weight, disc.bias, input_A] + made[:2]]
    out += [float(str(t.dtype).lower().endswith("int64")) for t in made] + list(made[2].shape)
    print("OUT", repr(losses + out))
    """


def test_torch_tensor_bound_to_a_name_and_called_with_sizes(tmp_path):
    """CycleGAN's train script: `Tensor = torch.cuda.FloatTensor if opt.cuda else torch.Tensor`, then
    `input_A = Tensor(batch, nc, size, size)` filled by `input_A.copy_(batch['A'])` in the loop, and
    `Tensor(batch).fill_(1.0)` as the GAN target. torch.Tensor as a value became mindspore.Tensor, whose
    constructor takes (input_data, dtype, shape): `Tensor(1, 3, 32, 32)` raised "'shape' should be set to None",
    and `Tensor(3)` would have been the scalar 3. torch.Tensor bound to a name is now _ms_compat.Tensor: called,
    it builds as torch's constructor (sizes: a tensor of that shape; data: float32; a tensor keeps its dtype);
    as a type it matches every tensor, and a class deriving from it derives from mindspore.Tensor. The losses and parameters after two Adam steps, and the tensors built,
    PYNATIVE and GRAPH, vs torch."""
    code = _matches_torch(tmp_path, TENSOR_ALIAS)
    assert "Tensor = _ms_compat.Tensor" in code, code


# ------------------------------------------------------------------ a buffer filled in place, read by two steps
BUFFER_TWO_STEPS = """\
    import torch
    import torch.nn as nn

    gen = nn.Linear(4, 4)
    disc = nn.Linear(4, 1)
    with torch.no_grad():
        gen.weight.copy_(torch.linspace(-0.5, 0.5, 16).reshape(4, 4))
        gen.bias.copy_(torch.linspace(0.1, -0.1, 4))
        disc.weight.copy_(torch.linspace(-0.3, 0.4, 4).reshape(1, 4))
        disc.bias.fill_(0.05)
    input_A = torch.zeros(3, 4)
    ones, zeros = torch.ones(3, 1), torch.zeros(3, 1)
    opt_G = torch.optim.Adam(gen.parameters(), lr=0.05)
    opt_D = torch.optim.SGD(disc.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    losses = []
    for batch in [{"A": torch.linspace(-1, 1, 12).reshape(3, 4)}, {"A": torch.linspace(2, -1, 12).reshape(3, 4)},
                  {"A": torch.linspace(0, 1, 12).reshape(3, 4)}]:
        real_A = input_A.copy_(batch["A"])
        opt_G.zero_grad()
        fake = gen(real_A)
        loss_G = criterion(disc(fake), ones) + (fake - real_A).abs().mean()
        loss_G.backward()
        opt_G.step()

        opt_D.zero_grad()
        loss_D = criterion(disc(real_A), ones) + criterion(disc(fake.detach()), zeros)
        loss_D.backward()
        opt_D.step()
        losses += [loss_G.item(), loss_D.item()]
    print("OUT", repr(losses + [float(t.sum()) for t in (gen.weight, gen.bias, disc.weight, disc.bias, input_A)]))
    """


def test_buffer_written_in_place_read_by_two_steps(tmp_path):
    """CycleGAN's loop: `real_A = Variable(input_A.copy_(batch['A']))` before the generators' step, and real_A read
    again by the discriminator's step. The discriminator's step recomputed the statement (a value handed over from
    an earlier step, recomputed for its gradient): a second in-place write, which op by op MindSpore refused, "A leaf tensor that requires grad is being used in an inplace operator" (the
    value the first step returned aliases input_A, which PyNative had marked as the second step's leaf input). A
    statement whose calls only write tensors in place is now handed over as its value, not run again; and a step
    run op by op leaves what it receives as it was (no gradient required), as torch's backward() does. The losses
    and the tensors after three steps of each, PYNATIVE and GRAPH, vs torch."""
    code = _matches_torch(tmp_path, BUFFER_TWO_STEPS)
    assert "def forward_fn_D(real_A, fake)" in code, code


# ------------------------------------------------------------------ t_() on a batch's tensor, in a tuple statement
LEGACY_BATCHES = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Batch:                # torchtext's legacy batches: text (length, batch), labels from 1
        def __init__(self, text, label):
            self.text, self.label = text, label


    emb = nn.Embedding(10, 3)
    head = nn.Linear(3, 2)
    with torch.no_grad():
        emb.weight.copy_(torch.linspace(-1, 1, 30).reshape(10, 3))
        head.weight.copy_(torch.linspace(0.5, -0.5, 6).reshape(2, 3))
        head.bias.zero_()


    def train(batches):
        optimizer = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.5)
        out = []
        for batch in batches:
            feature, target = batch.text, batch.label
            feature.t_(), target.sub_(1)  # batch first, index align
            optimizer.zero_grad()
            logit = head(emb(feature).mean(1))
            loss = F.cross_entropy(logit, target)
            loss.backward()
            optimizer.step()
            out += [loss.item(), *batch.text.shape, float(batch.text[0].sum()), int(batch.label.sum())]
        return out


    batches = [Batch((torch.arange(12).reshape(4, 3) * (k + 1)) % 10, torch.tensor([1, 2, 2])) for k in range(3)]
    out = train(batches)
    print("OUT", repr(out + [float(p.sum()) for p in (emb.weight, head.weight, head.bias)]))
    """


def test_transpose_in_place_of_a_batch_tensor(tmp_path):
    """cnn-text-classification's train.py before it dropped torchtext: `feature, target = batch.text, batch.label`
    then `feature.t_(), target.sub_(1)` (batch first, labels from 0). The tensor others hold (the batch's) got the
    out-of-place value written into its memory, _ms_compat.write_into(feature, ops.t(feature)): MindSpore's copy_
    refused the (batch, length) value for a (length, batch) tensor. t_(), transpose_(), squeeze_() and unsqueeze_()
    change the tensor's own shape in torch, which every holder sees: write_into gives it the new value's shape
    (reshapes=True). The losses, the batch's tensors after the statement and the parameters after three SGD
    steps, PYNATIVE and GRAPH, vs torch."""
    code = _matches_torch(tmp_path, LEGACY_BATCHES)
    assert "reshapes=True" in code, code
