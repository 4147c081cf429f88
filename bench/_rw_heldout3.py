"""The `heldout3` set of bench/real_world.py (`--set heldout3`): repositories the converter was not
tuned on, run as a new user would.

    python bench/real_world.py --mirrors /work/.mirror --set heldout3 [--only makemore_rnn,aiayn]

- karpathy/makemore: makemore.py as written, once per --type (transformer, bigram, mlp, rnn, gru, bow),
  small through its own flags, on a synthetic names file (one lowercase name a line) beside it. Its
  torch.utils.tensorboard import needs the tensorboard package: where that is missing, the runner's
  torch side gives it a SummaryWriter that logs nothing (it computes nothing the losses depend on).
- jadore801120/attention-is-all-you-need-pytorch: the transformer/ package (Models, Layers, SubLayers,
  Modules, Optim, Translator) through a driver: Transformer forward, training steps with a label-smoothed
  cross entropy (train.py's cal_loss, which imports torchtext at module level: the driver has its own)
  under ScheduledOptim, then Translator's beam search.
- lucidrains/vector-quantize-pytorch: VectorQuantize (EMA codebook) and ResidualVQ in a small autoencoder;
  FSQ and LFQ (no codebook) under a linear encoder/decoder.
- lucidrains/perceiver-pytorch: Perceiver (image classification) and PerceiverIO (PerceiverLM).

Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

MAKEMORE = "karpathy+makemore"
AIAYN = "jadore801120+attention-is-all-you-need-pytorch"
VQ = "lucidrains+vector-quantize-pytorch"
PERCEIVER = "lucidrains+perceiver-pytorch"


def names(root: Path):
    """makemore's input file: 120 synthetic lowercase names, one a line, beside makemore.py."""
    prog = root.parent / "x" / "prog"
    if not prog.is_dir():
        return
    rs = np.random.RandomState(13)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    lines = ["".join(rs.choice(letters, rs.randint(3, 9))) for _ in range(120)]
    (prog / "names.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


MAKEMORE_ARGS = ["-i", "names.txt", "-o", "out", "-n", "0", "--max-steps", "20", "--n-layer", "2", "--n-head", "2",
                 "--n-embd", "16", "--n-embd2", "16", "-b", "8", "--learning-rate", "1e-2"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    (f"makemore_{t}", MAKEMORE, ".", "makemore.py", MAKEMORE_ARGS + ["--type", t], names)
    for t in ("transformer", "bigram", "mlp", "rnn", "gru", "bow")
] + [
    ("aiayn", AIAYN, "transformer", "driver.py", [], None),
    ("vq", VQ, "vector_quantize_pytorch", "driver.py", [], None),
    ("vq_scalar", VQ, "vector_quantize_pytorch", "driver.py", [], None),
    ("perceiver", PERCEIVER, "perceiver_pytorch", "driver.py", [], None),
    ("perceiver_io", PERCEIVER, "perceiver_pytorch", "driver.py", [], None),
]

DEPS = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "aiayn": '''
import torch
import torch.nn.functional as F
from transformer.Models import Transformer
from transformer.Optim import ScheduledOptim
from transformer.Translator import Translator

PAD, BOS, EOS = 1, 2, 3      # the vocabulary's <blank>, <s>, </s> (train.py reads them from its fields)
VOCAB = 24


def smoothed_cross_entropy(logits, target, pad, eps=0.1):
    """Cross entropy against (1 - eps) on the target class and eps spread over the others, pads left out."""
    target = target.reshape(-1)
    classes = logits.size(1)
    hot = torch.zeros_like(logits).scatter(1, target.view(-1, 1), 1)
    soft = hot * (1 - eps) + (1 - hot) * eps / (classes - 1)
    per_token = -(soft * F.log_softmax(logits, dim=1)).sum(dim=1)
    return per_token.masked_select(target.ne(pad)).sum()


model = Transformer(VOCAB, VOCAB, src_pad_idx=PAD, trg_pad_idx=PAD, d_word_vec=32, d_model=32, d_inner=64,
                    n_layers=2, n_head=2, d_k=16, d_v=16, dropout=0.1, n_position=40,
                    trg_emb_prj_weight_sharing=True, emb_src_trg_weight_sharing=True, scale_emb_or_prj="prj")
optimizer = ScheduledOptim(torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-09), 2.0, 32, 10)
src = torch.randint(4, VOCAB, (3, 9))
src[0, 7:] = PAD
trg = torch.randint(4, VOCAB, (3, 8))
trg[:, 0] = BOS
trg[1, 6:] = PAD
with torch.no_grad():
    print("VALUE logits", float(model(src, trg).abs().mean()))
model.train()
for step in range(4):
    optimizer.zero_grad()
    logits = model(src, trg[:, :-1])
    gold = trg[:, 1:].contiguous().view(-1)
    loss = smoothed_cross_entropy(logits, gold, PAD)
    n_correct = logits.max(1)[1].eq(gold).masked_select(gold.ne(PAD)).sum().item()
    loss.backward()
    optimizer.step_and_update_lr()
    print("loss", loss.item(), n_correct)
print("VALUE correct", float(n_correct))
model.eval()
translator = Translator(model=model, beam_size=2, max_seq_len=6, src_pad_idx=PAD, trg_pad_idx=PAD,
                        trg_bos_idx=BOS, trg_eos_idx=EOS)
hypothesis = translator.translate_sentence(src[:1])
print("VALUE beam", float(sum((i + 1) * t for i, t in enumerate(hypothesis))))
''',
    "vq": '''
import torch
import torch.nn.functional as F
from torch import nn
from vector_quantize_pytorch import VectorQuantize, ResidualVQ


class AutoEncoder(nn.Module):
    def __init__(self, quantizer):
        super().__init__()
        self.encode = nn.Linear(6, 8)
        self.quantize = quantizer
        self.decode = nn.Linear(8, 6)

    def forward(self, x):
        quantized, indices, commit_loss = self.quantize(self.encode(x))
        return self.decode(quantized), indices, commit_loss.sum()


# each quantizer built right before its autoencoder: the runner syncs the weights of the top-level models at
# their first call, so a quantizer built earlier and wrapped later would go unsynced
for name, make in (("vq", lambda: VectorQuantize(dim=8, codebook_size=16, decay=0.8, commitment_weight=1.0)),
                   ("rvq", lambda: ResidualVQ(dim=8, num_quantizers=2, codebook_size=16))):
    model = AutoEncoder(make())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(2, 10, 6)
    for step in range(3):
        optimizer.zero_grad()
        out, indices, commit_loss = model(x)
        loss = F.mse_loss(out, x) + commit_loss
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    print("VALUE " + name + "_indices", float(indices.float().mean()))
    print("VALUE " + name + "_codebook", float(model.quantize.codebook.abs().mean()) if name == "vq"
          else float(model.quantize.codebooks.abs().mean()))
''',
    # the codebook-free quantizers: FSQ (rounding to fixed levels) and LFQ (signs, with an entropy loss)
    "vq_scalar": '''
import torch
import torch.nn.functional as F
from torch import nn
from vector_quantize_pytorch import FSQ, LFQ

for name, quantizer in (("fsq", FSQ(levels=[8, 5, 5, 5])), ("lfq", LFQ(codebook_size=16, dim=4,
                                                                        entropy_loss_weight=0.1))):
    encode, decode = nn.Linear(6, 4), nn.Linear(4, 6)
    params = list(encode.parameters()) + list(decode.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-2)
    x = torch.randn(2, 10, 6)
    for step in range(3):
        optimizer.zero_grad()
        if name == "fsq":
            quantized, indices = quantizer(encode(x))
            aux = 0.0
        else:
            quantized, indices, aux = quantizer(encode(x))
        loss = F.mse_loss(decode(quantized), x) + aux
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    print("VALUE " + name + "_indices", float(indices.float().mean()))
    print("VALUE " + name + "_codes", float(quantizer.indices_to_codes(indices).abs().mean()))
''',
    "perceiver": '''
import torch
import torch.nn.functional as F
from perceiver_pytorch import Perceiver

model = Perceiver(input_channels=3, input_axis=2, num_freq_bands=4, max_freq=8.0, depth=2, num_latents=8,
                  latent_dim=16, cross_heads=1, latent_heads=2, cross_dim_head=8, latent_dim_head=8, num_classes=5,
                  weight_tie_layers=False, fourier_encode_data=True, self_per_cross_attn=1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.randn(2, 6, 6, 3)
labels = torch.tensor([1, 4])
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE logits", float(model(images).abs().mean()))
''',
    "perceiver_io": '''
import torch
import torch.nn.functional as F
from perceiver_pytorch import PerceiverLM

model = PerceiverLM(num_tokens=20, dim=16, depth=2, max_seq_len=12, num_latents=6, latent_dim=16, cross_heads=1,
                    latent_heads=2, cross_dim_head=8, latent_dim_head=8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
seq = torch.randint(0, 20, (2, 12))
mask = torch.ones(2, 12).bool()
mask[1, 9:] = False
for step in range(3):
    optimizer.zero_grad()
    logits = model(seq, mask=mask)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), seq[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE logits", float(model(seq, mask=mask).abs().mean()))
''',
}
