"""Minimal reproductions of what bench/_rw_heldout26.py's programs (graykode/nlp-tutorial run whole: training, then
the predictions each prints) needed, each compared with torch.

- A Module method that reads a tensor on the host (`attn_weights.squeeze().data.numpy()` collected in forward,
  Seq2Seq(Attention); `soft_attn_weights.data.numpy()` returned by attention_net, which forward calls,
  Bi-LSTM(Attention)): the train step ran op by op in either mode and matched torch, but the program's mode line
  stayed GRAPH_MODE, so the network's call after training (`predict, trained_attn = model(...)`, its predictions
  and attention map) was compiled and stopped with MigrationError naming the `.numpy()` line, where torch runs to
  its end. A program reaching such a forward now starts in PYNATIVE mode (msmigrate/project_index.py
  host_reads_in_forward), as one reaching a host library call (host_result) does.
  The program in small below also keeps the set's other post-training constructs (all matched torch as converted):
  `.data.max(1, keepdim=True)[1]` and `n.item()` dictionary lookups, iterating an index tensor of shape [n, 1, 1]
  as list indices (Seq2Seq's translate), the greedy decoder's `dec_input[0][i] = next_symbol` write through a
  row view with `prob.data[i].item()`, and in the step `model[i] = ...` rows of a `torch.empty` and attention
  scores written one by one from `torch.dot`, `F.softmax` without a dim.
- _ms_compat.Adam's update, written inline in its loop over the parameters (unrolled by a compiled graph), nested
  the rest of the loop one call deeper at each of its branches: the Transformers' GRAPH runs (6+6 layers, ~250
  parameters) stopped before their first step with "Exceed function call depth limit 1000". Each parameter's
  update is now a call of its own (Adam._update_param); reproduced with 48 parameters under a limit of 120. The
  loop still nests about 2 calls per parameter (a limit of 80 stops 32 parameters): ~500 parameters is the
  bound now, not ~250.
- BERT.py's pretraining step in small (tied decoder weight, gather of the masked positions, erf gelu, a cross
  entropy over `transpose(1, 2)`): it matched torch as converted; kept as the set's BERT regression test (its key
  bias left out: a key bias has no gradient but rounding, which Adam's first step turns into +-lr on either side)."""
import pytest

from tests.parity.harness import load_converted, load_torch

ATTENTION_PROGRAM = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_class, n_hidden, n_step = 6, 8, 4
words = ["P", "S", "E", "a", "b", "c"]
number_dict = {i: w for i, w in enumerate(words)}


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_cell = nn.RNN(input_size=n_class, hidden_size=n_hidden)
        self.dec_cell = nn.RNN(input_size=n_class, hidden_size=n_hidden)
        self.attn = nn.Linear(n_hidden, n_hidden)
        self.out = nn.Linear(n_hidden * 2, n_class)

    def forward(self, enc_inputs, hidden, dec_inputs):
        enc_inputs = enc_inputs.transpose(0, 1)
        dec_inputs = dec_inputs.transpose(0, 1)
        enc_outputs, enc_hidden = self.enc_cell(enc_inputs, hidden)
        trained_attn = []
        hidden = enc_hidden
        n_dec = len(dec_inputs)
        model = torch.empty([n_dec, 1, n_class])
        for i in range(n_dec):
            dec_output, hidden = self.dec_cell(dec_inputs[i].unsqueeze(0), hidden)
            attn_weights = self.get_att_weight(dec_output, enc_outputs)
            trained_attn.append(attn_weights.squeeze().data.numpy())
            context = attn_weights.bmm(enc_outputs.transpose(0, 1))
            model[i] = self.out(torch.cat((dec_output.squeeze(0), context.squeeze(1)), 1))
        return model.transpose(0, 1).squeeze(0), trained_attn

    def get_att_weight(self, dec_output, enc_outputs):
        attn_scores = torch.zeros(len(enc_outputs))
        for i in range(len(enc_outputs)):
            attn_scores[i] = torch.dot(dec_output.view(-1), self.attn(enc_outputs[i]).view(-1))
        return F.softmax(attn_scores).view(1, 1, -1)

    def summary(self, weights):
        return self.pool(weights).data.numpy()      # a helper method reading on the host too

    def pool(self, weights):
        return weights.sum(0)


rng = np.random.RandomState(26)
model = Attention()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
input_batch = torch.FloatTensor([np.eye(n_class)[[3, 4, 5, 0]]])
output_batch = torch.FloatTensor([np.eye(n_class)[[1, 3, 4, 5]]])
target_batch = torch.LongTensor([[3, 4, 5, 2]])
hidden = torch.zeros(1, 1, n_hidden)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for epoch in range(3):
    optimizer.zero_grad()
    output, _ = model(input_batch, hidden, output_batch)
    loss = criterion(output, target_batch.squeeze(0))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

# after training: the predictions, the attention map, a greedy decode
test_batch = torch.FloatTensor([np.eye(n_class)[[1, 0, 0, 0]]])
predict, trained_attn = model(input_batch, hidden, test_batch)
logits = predict.detach().numpy().copy()
predict = predict.data.max(1, keepdim=True)[1]
predicted = [number_dict[n.item()] for n in predict.squeeze()]
attn_map = np.stack(trained_attn)
summary = model.summary(torch.from_numpy(attn_map))
indices = predict.unsqueeze(1)                  # [n, 1, 1]: iterated as list indices
decoded = [words[i] for i in indices]

dec_input = torch.zeros(1, n_step).type_as(target_batch.data)
next_symbol = 1
for i in range(n_step):
    dec_input[0][i] = next_symbol
    onehot = torch.FloatTensor(np.eye(n_class)[dec_input[0].numpy()]).unsqueeze(0)
    out, _ = model(input_batch, hidden, onehot)
    prob = out.max(dim=-1, keepdim=False)[1]
    next_symbol = prob.data[i].item()
greedy = dec_input[0].tolist()
'''

_COMPARED = ("losses", "logits", "predicted", "attn_map", "summary", "decoded", "greedy")


def test_host_read_in_forward_program_runs_to_its_predictions():
    """The program as converted (its own mode line, which was GRAPH_MODE) runs through its post-training calls of
    the network, every value as torch's."""
    import mindspore as ms
    import numpy as np

    ref = load_torch(ATTENTION_PROGRAM)
    try:
        mod, code, sites = load_converted(ATTENTION_PROGRAM)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert "TODO" not in code, code
    assert "mode=ms.PYNATIVE_MODE" in code and "_ms_compat.host_value(" in code, code
    for name in _COMPARED:
        got, want = getattr(mod, name), ref[name]
        if isinstance(want, list) and want and isinstance(want[0], (str, int)):
            assert got == want, (name, got, want)
        else:
            np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2e-5,
                                       atol=1e-6, err_msg=name)
    assert ref["losses"][0] != ref["losses"][-1]


# many parameters under torch.optim.Adam (with amsgrad and weight decay: every branch of the update), trained in a
# compiled step
MANY_PARAMETERS = '''
import numpy as np
import torch
import torch.nn as nn


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(24)])

    def forward(self, x):
        for layer in self.layers:
            x = x + 0.5 * torch.tanh(layer(x))
        return x


model = Deep()
rng = np.random.RandomState(7)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.1, amsgrad=True)
x = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


def test_adam_over_many_parameters_compiles_within_the_call_depth():
    """_ms_compat.Adam's update written inline in its unrolled loop over the parameters nested the rest of the loop
    one call deeper at each branch: nlp-tutorial's Transformer (6+6 layers, ~250 parameters) passed MindSpore's
    call depth limit of 1000 and its GRAPH run stopped at the first step. Here 48 parameters under a limit of 120
    (the same growth, smaller): the compiled step runs and its weights are torch's."""
    import mindspore as ms
    from tests.parity.harness import program_weights_match_torch

    ms.set_recursion_limit(120)
    try:
        program_weights_match_torch(MANY_PARAMETERS, graph=True)
    finally:
        ms.set_recursion_limit(1000)


# BERT.py's pretraining step in small (its per-call nn.Linear left out: fresh random weights at every call):
# segment and position embeddings, an erf gelu, a pad mask by masked_fill_, the decoder weight tied to the token
# embedding beside its own bias, torch.gather of the masked positions through expand, a cross entropy over
# `logits.transpose(1, 2)` and `loss.float().mean()`, `map(torch.LongTensor, zip(*batch))`
BERT_STEP = '''
import math

import numpy as np
import torch
import torch.nn as nn

d_model, n_heads, d_k, vocab, maxlen = 16, 2, 8, 12, 8


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class TinyBERT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embed = nn.Embedding(vocab, d_model)
        self.pos_embed = nn.Embedding(maxlen, d_model)
        self.seg_embed = nn.Embedding(2, d_model)
        self.norm = nn.LayerNorm(d_model)
        self.W_Q = nn.Linear(d_model, d_k * n_heads)
        self.W_K = nn.Linear(d_model, d_k * n_heads, bias=False)   # a key bias: no gradient but rounding
        self.W_V = nn.Linear(d_model, d_k * n_heads)
        self.fc = nn.Linear(d_model, d_model)
        self.activ1 = nn.Tanh()
        self.linear = nn.Linear(d_model, d_model)
        self.classifier = nn.Linear(d_model, 2)
        embed_weight = self.tok_embed.weight
        n_vocab, n_dim = embed_weight.size()
        self.decoder = nn.Linear(n_dim, n_vocab, bias=False)
        self.decoder.weight = embed_weight
        self.decoder_bias = nn.Parameter(torch.zeros(n_vocab))

    def forward(self, input_ids, segment_ids, masked_pos):
        pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        x = self.norm(self.tok_embed(input_ids) + self.pos_embed(pos) + self.seg_embed(segment_ids))
        b = x.size(0)
        q = self.W_Q(x).view(b, -1, n_heads, d_k).transpose(1, 2)
        k = self.W_K(x).view(b, -1, n_heads, d_k).transpose(1, 2)
        v = self.W_V(x).view(b, -1, n_heads, d_k).transpose(1, 2)
        mask = input_ids.data.eq(0).unsqueeze(1).expand(b, input_ids.size(1), input_ids.size(1))
        scores = torch.matmul(q, k.transpose(-1, -2)) / np.sqrt(d_k)
        scores.masked_fill_(mask.unsqueeze(1).repeat(1, n_heads, 1, 1), -1e9)
        context = torch.matmul(nn.Softmax(dim=-1)(scores), v).transpose(1, 2).contiguous().view(b, -1, d_model)
        output = x + context
        logits_clsf = self.classifier(self.activ1(self.fc(output[:, 0])))
        masked_pos = masked_pos[:, :, None].expand(-1, -1, output.size(-1))
        h_masked = torch.gather(output, 1, masked_pos)
        h_masked = self.norm(gelu(self.linear(h_masked)))
        return self.decoder(h_masked) + self.decoder_bias, logits_clsf


model = TinyBERT()
rng = np.random.RandomState(5)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
batch = [[[1, 5, 3, 2, 7, 2, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0], [6, 0], [2, 0], True],
         [[1, 4, 2, 3, 9, 8, 2, 0], [0, 0, 0, 1, 1, 1, 1, 0], [11, 10], [3, 5], False]]
input_ids, segment_ids, masked_tokens, masked_pos, isNext = map(torch.LongTensor, zip(*batch))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in range(3):
    optimizer.zero_grad()
    logits_lm, logits_clsf = model(input_ids, segment_ids, masked_pos)
    loss_lm = criterion(logits_lm.transpose(1, 2), masked_tokens)
    loss_lm = (loss_lm.float()).mean()
    loss = loss_lm + criterion(logits_clsf, isNext)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


def test_bert_pretraining_step():
    """nlp-tutorial's BERT step as converted, PYNATIVE (the program itself runs so: its forward builds layers):
    every weight after three Adam steps as torch's. It passed; kept as the set's BERT regression test."""
    from tests.parity.harness import program_weights_match_torch

    program_weights_match_torch(BERT_STEP, graph=False)
