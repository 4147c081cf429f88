"""The `heldout26` set of bench/real_world.py (`--set heldout26`): graykode/nlp-tutorial's single-file programs run
whole, from their inline toy data through training to their test and prediction code, converted as a new user would
convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout26 [--only nnlm,bert]

heldout2 ran the same programs' first six steps (the runner's step cap stops a program at its seventh loss, before
its test code). Here each script's epoch count is made small in the torch copy before the conversion (the data
writer below: `for epoch in range(5000)` to `range(8)`, and the print interval to 4, so the
`'{:.6f}'.format(loss)` lines run), so the program ends on its own: its per-step losses are compared, and the lines
it prints after training (the predicted words, classes and translations: argmax of the trained model's logits,
`.data.max(1, keepdim=True)[1]`, `n.item()` dictionary lookups) must be the same on both sides (PRINTED). The
ignored archive/ directory is TensorFlow v1.

- nnlm (1-1.NNLM/NNLM.py): Embedding, `nn.Parameter(torch.ones(n))` biases, `X.view(-1, n_step * m)`, tanh.
- word2vec (1-2.Word2Vec/Word2Vec-Skipgram(Softmax).py): batches drawn by np.random.choice of one-hot NumPy rows
  (`torch.Tensor(list of arrays)`), then `W, WT = model.parameters()` and `W[0][i].item()` into matplotlib's
  scatter and annotate (Agg).
- textcnn (2-1.TextCNN/TextCNN.py): Conv2d over an unsqueezed embedding, `nn.MaxPool2d` built in forward,
  permute and `torch.cat(..., 3)`, `torch.reshape(x, [-1, n])`; the test sentence's class
  (`if predict[0][0] == 0`).
- textrnn, textlstm, bilstm (3-x): nn.RNN / nn.LSTM / bidirectional LSTM on one-hot sequences, with
  `torch.zeros` initial states built in forward (`len(X)`), `outputs[-1]`.
- seq2seq (4-1.Seq2Seq/Seq2Seq.py): encoder and decoder nn.RNN (dropout=0.5 on one layer), the loss summed over
  `for i in range(len(target_batch))`, then `translate`: `output.data.max(2, keepdim=True)[1]` and
  `[char_arr[i] for i in predict]` (iterating a [6, 1, 1] index tensor), `decoded.index('E')`.
- seq2seq_attention (4-2.Seq2Seq(Attention)/Seq2Seq(Attention).py): a decoder loop writing `model[i] = ...` into
  `torch.empty`, attention scores written one by one into `torch.zeros(n_step)` from `torch.dot`,
  `F.softmax` without dim, `attn_weights.squeeze().data.numpy()` collected per step and drawn by matshow.
- bilstm_attention (4-3.Bi-LSTM(Attention)/Bi-LSTM(Attention).py): bmm attention over the final hidden state, the
  weights returned as `.data.numpy()` beside the logits, matshow.
- transformer, transformer_greedy (5-1.Transformer/Transformer.py, Transformer(Greedy_decoder).py): the
  6-layer encoder-decoder (d_model 512) with `masked_fill_` of a pad mask plus `torch.from_numpy(np.triu(...)).byte()`,
  `torch.gt(a + b, 0)`, `nn.Embedding.from_pretrained(table, freeze=True)`, Conv1d feed-forward, `nn.Softmax(dim=-1)`
  built in forward; the greedy decoder writes `dec_input[0][i] = next_symbol` and reads `prob.data[i].item()`;
  showgraph's matshow of `attn[-1].squeeze(0)[0]`. 20 epochs made 6.
- bert (5-2.BERT/BERT.py): make_batch's masking through Python's `random` (seeded alike), `torch.erf` gelu, the
  decoder weight tied to the token embedding, `torch.gather` of masked positions, `criterion(logits.transpose(1, 2),
  tokens)`, `map(torch.LongTensor, zip(*batch))`; 100 epochs made 6. Its MultiHeadAttention builds an
  `nn.Linear` and an `nn.LayerNorm` in every forward call (fresh random weights each call in torch): the runner
  draws such a layer's parameters from one stream on both sides at its first call (bench/_rw_runner.py
  drawn_layer_values); d_model etc. as written.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

NLP = "graykode+nlp-tutorial@d05e31ec81d56d70c1db89b99ab07e948f7ebc11"


def _patched(script, patches):
    """A data writer: on the torch side (written before the conversion) the script's loop constants made small (each
    must be found)."""
    def write(root):
        path = Path(root).parent / "x" / "prog" / script
        if Path(root).parent.name != "torch" or not path.exists():
            return
        text = path.read_text()
        for old, new in patches:
            if old not in text:
                raise RuntimeError(f"{script}: {old!r} not found")
            text = text.replace(old, new)
        path.write_text(text)
    return write


def _epochs(n, every, new_n=8, new_every=4):
    return [(f"for epoch in range({n}):", f"for epoch in range({new_n}):"),
            (f"(epoch + 1) % {every} == 0", f"(epoch + 1) % {new_every} == 0")]


_TRANSFORMER = [("for epoch in range(20):", "for epoch in range(6):")]

# (name, directory, script, patches)
_PROGRAMS = [
    ("nnlm", "1-1.NNLM", "NNLM.py", _epochs(5000, 1000)),
    ("word2vec", "1-2.Word2Vec", "Word2Vec-Skipgram(Softmax).py", _epochs(5000, 1000)),
    ("textcnn", "2-1.TextCNN", "TextCNN.py", _epochs(5000, 1000)),
    ("textrnn", "3-1.TextRNN", "TextRNN.py", _epochs(5000, 1000)),
    ("textlstm", "3-2.TextLSTM", "TextLSTM.py", _epochs(1000, 100)),
    ("bilstm", "3-3.Bi-LSTM", "Bi-LSTM.py", _epochs(10000, 1000)),
    ("seq2seq", "4-1.Seq2Seq", "Seq2Seq.py", _epochs(5000, 1000)),
    ("seq2seq_attention", "4-2.Seq2Seq(Attention)", "Seq2Seq(Attention).py", _epochs(2000, 400)),
    ("bilstm_attention", "4-3.Bi-LSTM(Attention)", "Bi-LSTM(Attention).py", _epochs(5000, 1000)),
    ("transformer", "5-1.Transformer", "Transformer.py", _TRANSFORMER),
    ("transformer_greedy", "5-1.Transformer", "Transformer(Greedy_decoder).py", _TRANSFORMER),
    ("bert", "5-2.BERT", "BERT.py", _epochs(100, 10, 6, 3)),
]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, NLP, d, script, [], _patched(script, patches)) for name, d, script, patches in _PROGRAMS]

DEPS: dict = {}
DRIVERS: dict = {}

# matplotlib's pyplot as the programs use it, a stand-in beside each program: what they draw (word2vec's scatter of
# the trained embedding, the attention maps' matshow) printed as VALUE lines, compared with torch's like a loss
_PYPLOT = '''"""A stand-in written by bench/_rw_heldout26.py: what the program draws, printed as VALUE lines."""
import numpy as np

_drawn = {}


def _value(kind, data):
    n = _drawn.get(kind, 0)
    _drawn[kind] = n + 1
    a = np.asarray(data, dtype=np.float64)
    print(f"VALUE {kind}{n}_abs {float(np.abs(a).mean())!r}")


def scatter(x, y, *args, **kwargs):
    _value("scatter", [x, y])


def annotate(*args, **kwargs):
    pass


def show(*args, **kwargs):
    pass


class _Axes:
    def matshow(self, data, *args, **kwargs):
        _value("matshow", data)

    def set_xticklabels(self, *args, **kwargs):
        pass

    set_yticklabels = set_xticklabels


class _Figure:
    def add_subplot(self, *args, **kwargs):
        return _Axes()


def figure(*args, **kwargs):
    return _Figure()
'''

FILES = {name: {"matplotlib/__init__.py": '"""A stand-in written by bench/_rw_heldout26.py."""\n',
                "matplotlib/pyplot.py": _PYPLOT} for name, *_ in _PROGRAMS}

# each runs to its end: a budget over its epochs (the runner stops a side at the budget's next loss)
LOSSES = {name: 10 for name, *_ in _PROGRAMS}

# the lines each program prints after training, which must be the same on both sides (its predictions); the
# "Epoch: ... cost = ..." lines print the losses compared above, rounded to 6 digits, and VALUE lines are compared
# as numbers
PRINTED = {name: r"^(?!Epoch:|VALUE )\S.*$" for name, *_ in _PROGRAMS}
