"""Several optimizers stepped right after one another on the same backward()s (train_loop._co_step): an
encoder's and a decoder's optimizer after `loss.backward()` (the seq2seq shape), or two models' losses
backward()ed one after the other and both optimizers stepped (a dropout-vs-overfitting comparison). torch's
backward()s fill each parameter's .grad with the gradient of the sum of the losses; the converted step takes
that sum's gradients w.r.t. every stepped optimizer's parameters and hands each optimizer its share. Before,
only the first optimizer was stepped and the second `opt.step()` stopped the program (a MigrationError). Run
in torch and converted, PYNATIVE and GRAPH (the step compiled); the parameters after three steps must agree."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity.harness import load_converted, program_weights_match_torch  # noqa: E402

HEAD = '''
import torch
enc = torch.nn.Linear(3, 4)
dec = torch.nn.Linear(4, 2)
other = torch.nn.Linear(3, 2)
with torch.no_grad():
    enc.weight.copy_(torch.tensor([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2], [-0.1, 0.2, 0.4], [0.6, -0.3, 0.05]]))
    enc.bias.copy_(torch.tensor([0.1, -0.1, 0.2, 0.0]))
    dec.weight.copy_(torch.tensor([[0.5, -0.2, 0.3, 0.1], [-0.4, 0.2, 0.1, 0.3]]))
    dec.bias.copy_(torch.tensor([0.05, -0.05]))
    other.weight.copy_(torch.tensor([[0.3, 0.1, -0.2], [0.2, -0.5, 0.4]]))
    other.bias.copy_(torch.tensor([0.0, 0.1]))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
tgt = torch.tensor([[0.5, -1.0], [1.0, 0.0]])
enc_opt = torch.optim.SGD(enc.parameters(), lr=0.05, momentum=0.5)
dec_opt = torch.optim.Adam(dec.parameters(), lr=0.01)
other_opt = torch.optim.Adam(other.parameters(), lr=0.02)
'''
TAIL = '''
weights = [enc.weight, enc.bias, dec.weight, dec.bias, other.weight, other.bias]
'''

PROGRAMS = {
    # one loss through two modules, each with its own optimizer (the seq2seq tutorial's encoder and decoder)
    "encoder_decoder": '''
for i in range(3):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    loss = ((dec(torch.tanh(enc(inp * (i + 1)))) - tgt) ** 2).mean()
    loss.backward()
    enc_opt.step()
    dec_opt.step()
''',
    # two models, two losses, both backward()ed, then both stepped (each loss reaches its own model only)
    "two_models_two_losses": '''
for i in range(3):
    pred_a = dec(torch.relu(enc(inp)))
    pred_b = other(inp)
    loss_a = ((pred_a - tgt) ** 2).mean()
    loss_b = ((pred_b - tgt) ** 2).mean()
    enc_opt.zero_grad()
    other_opt.zero_grad()
    dec_opt.zero_grad()
    loss_a.backward()
    loss_b.backward()
    enc_opt.step()
    dec_opt.step()
    other_opt.step()
''',
    # a loss reaching both models' parameters, summed with one reaching the second only: each optimizer steps
    # on the gradient of the sum (torch's .grad after both backward()s)
    "shared_loss_terms": '''
def train(n):
    for i in range(n):
        enc_opt.zero_grad(); other_opt.zero_grad()
        h = enc(inp)
        loss = ((h[:, :2] + other(inp) - tgt) ** 2).mean()
        reg = (other.weight ** 2).sum() * 0.1
        loss.backward()
        reg.backward()
        other_opt.step()
        enc_opt.step()
train(3)
''',
    # the seq2seq tutorial's step function: the modules and both optimizers are its arguments
    "step_function": '''
def train(x, y, encoder, decoder, encoder_optimizer, decoder_optimizer):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = ((decoder(torch.tanh(encoder(x))) - y) ** 2).mean()
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item()
for i in range(3):
    train(inp * (i + 1), tgt, enc, dec, enc_opt, dec_opt)
''',
}


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("shape", sorted(PROGRAMS))
def test_optimizers_stepped_together_match_torch(shape, graph):
    code, sites = program_weights_match_torch(HEAD + PROGRAMS[shape] + TAIL, graph, what=f"{shape}: ")
    assert ".step()" not in code, code
    assert [s for s in sites if s.api == "Optimizer.step" and "share of grads" in s.target], sites


def test_an_optimizer_the_loop_never_clears_stays_a_raising_step():
    """other_opt is stepped beside enc_opt but never cleared: torch's step applies the gradients of every
    iteration so far (its .grad grows), which the shared step would not; its step() stays and stops the
    program naming its line."""
    src = HEAD + '''
for i in range(2):
    enc_opt.zero_grad()
    loss = ((enc(inp)[:, :2] + other(inp) - tgt) ** 2).mean()
    loss.backward()
    enc_opt.step()
    other_opt.step()
''' + TAIL
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert "optimizer.step() outside a converted train step" in str(err.value), err.value
