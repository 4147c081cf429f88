"""The `heldout42` set of bench/real_world.py (`--set heldout42`): gordicaleksa/pytorch-original-transformer,
its models/, utils/ and training_script.py converted together as a new user would convert them, driven by programs
of ours that import its modules.

    python bench/real_world.py --mirrors /work/.mirror --set heldout42 [--only xf_train,xf_decode]

The repository reads its data through torchtext's legacy Field/BucketIterator and spaCy tokenizers, and its
utils.py imports GitPython and nltk: none is installed here and none is needed by what runs. Both sides get
stand-ins of ours written before the conversion (converted with the program): a `torchtext` package with empty
Dataset/BucketIterator/Field/Example classes, interleave_keys and a datasets module, `spacy`, `git`, and an
`nltk` package whose corpus_bleu nothing calls. The token batches are ours: lists of ids built from a seeded
random.Random (pad id 1, begin 2, end 3, sentences of different lengths padded at the end), wrapped in objects
with `.src` and `.trg` as torchtext's batches have.

- xf_train: models.definitions.transformer_model.Transformer (model dimension 16, 2 heads, 2 layers, source and
  target vocabularies of 13 and 11, dropout 0; its xavier init, then the runner gives both sides torch's
  weights), training_script.get_train_val_loop's train_val_loop itself (training_script's module-level
  training_config set by the driver: no tensorboard, no console log, no checkpoints) on 3 batches:
  data_utils.get_src_and_trg_batches, get_masks_and_count_tokens (the padding mask and the causal mask, masked_fill_
  with -inf in the attention), the KLDivLoss (batchmean) of the log-softmax against
  optimizers_and_distributions.LabelSmoothingDistribution (fill_, scatter_, a column set to 0, masked_fill_), and
  CustomLRAdamOptimizer (Adam betas (0.9, 0.98), eps 1e-9, the warm-up/inverse-square-root rate written into
  param_groups before each step, 4 warm-up steps); then the loop again with is_train False under torch.no_grad.
  VALUEs: each step's learning rate, the smoothing distribution of a batch, the parameters' sums per top module,
  a validation loss computed by the driver through the model's forward.
- xf_decode: the same model trained by the same loop for 2 batches, then in eval mode
  decoding_utils.greedy_decoding (its growing target batch, the causal mask per length, the argmax of the last
  position, torch.cat of the new column) on the encoder's output of 3 source sentences, max 7 target tokens,
  through a field processor of ours (vocab.stoi/itos). Printed: each decoded sentence (a PRINTED line, compared
  with torch's) and the ids as VALUEs; then get_beam_decoder's beam_decoding, which raises 'Not yet implemented.'
  at its first line in the repository: the raised message is a PRINTED line too.
- xf_selfcheck: the repository's own check, transformer_model.py's `if __name__ == "__main__":` part, run by
  runpy (the baseline transformer: dimension 512, 8 heads, 6 layers; random token batches of 3x2 from
  torch.randint, matched by the runner; masks None). Its 260 printed lines are read back by the driver (redirected
  stdout) and reduced to PRINTED lines: the md5 of the parameter names in named_parameters' order, the md5 of their
  shapes as integers, the parameter count line; VALUEs: the number of state_dict entries and of named parameters,
  the output's shape and sums (from the run's globals).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

XF = "gordicaleksa+pytorch-original-transformer@d5b29a41c5c3f68e1bcd0c528a58281632fa9d6d"
_PARTS = "models,utils,training_script.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, XF, _PARTS, "driver.py", [], None) for name in ("xf_train", "xf_decode", "xf_selfcheck")]

DEPS: dict = {}

_STANDINS = {
    "torchtext/__init__.py": '"""A stand-in written by bench/_rw_heldout42.py: torchtext is not installed."""\n',
    "torchtext/data/__init__.py": '''"""A stand-in written by bench/_rw_heldout42.py (nothing that runs uses it)."""


class Dataset:
    def __init__(self, examples=(), fields=(), **kwargs):
        self.examples = list(examples)


class BucketIterator:
    pass


class Field:
    pass


class Example:
    pass
''',
    "torchtext/data/utils.py": '''"""A stand-in written by bench/_rw_heldout42.py."""


def interleave_keys(a, b):
    return (a, b)
''',
    "torchtext/datasets.py": '"""A stand-in written by bench/_rw_heldout42.py (no dataset is read)."""\n',
    "spacy.py": '''"""A stand-in written by bench/_rw_heldout42.py: spaCy is not installed (nothing calls it)."""


def load(name):
    raise RuntimeError("spaCy stand-in: no models here")
''',
    "git.py": '"""A stand-in written by bench/_rw_heldout42.py: GitPython is not installed (nothing calls it)."""\n',
    "nltk/__init__.py": '"""A stand-in written by bench/_rw_heldout42.py: nltk is not installed."""\n',
    "nltk/translate/__init__.py": "",
    "nltk/translate/bleu_score.py": '''"""A stand-in written by bench/_rw_heldout42.py (nothing calls it)."""


def corpus_bleu(references, hypotheses):
    raise RuntimeError("nltk stand-in")
''',
}

FILES = {name: _STANDINS for name, *_ in PROGRAMS}

LOSSES = {"xf_train": 3, "xf_decode": 2}

# xf_selfcheck: the repository's check prints 260 lines (past the runner's 20,000 characters of stdout kept): its
# driver prints their digest. The md5 of the parameter names in named_parameters' order, of their shapes (printed
# torch.Size([..]) on one side, a tuple on the other: compared as integers) and the count line. The state_dict's
# keys are compared by number only: the converted state_dict has MindSpore's names (LayerNorm gamma/beta, Embedding
# embedding_table; mappings/checkpoints.py's documented difference).
PRINTED = {"xf_decode": r"^(?:DECODED|BEAM) .*$", "xf_selfcheck": r"^(?:NAMES|SHAPES|Size of the) .*$"}

# token batches, the model and the training loop's pieces: our code, through the repository's modules
_COMMON = '''
import random
import time

import torch
from torch import nn
from torch.optim import Adam

import training_script
from models.definitions.transformer_model import Transformer
from utils.optimizers_and_distributions import CustomLRAdamOptimizer, LabelSmoothingDistribution
from utils.data_utils import get_masks_and_count_tokens, get_masks_and_count_tokens_src, get_src_and_trg_batches

PAD, BOS, EOS = 1, 2, 3
SRC_VOCAB, TRG_VOCAB, DIM = 13, 11, 16


class TokenBatch:
    """what torchtext's BucketIterator yields: .src (B, S) and .trg (B, T), padded at the end"""

    def __init__(self, seed, rows=3, src_len=6, trg_len=5):
        draw = random.Random(seed)
        src, trg = [], []
        for r in range(rows):
            n = src_len - (r % 3)
            src.append([draw.randrange(4, SRC_VOCAB) for _ in range(n)] + [PAD] * (src_len - n))
            m = trg_len - ((r + 1) % 3)
            words = [draw.randrange(4, TRG_VOCAB) for _ in range(m)]
            trg.append([BOS] + words + [EOS] + [PAD] * (trg_len - m))
        self.src = torch.tensor(src)
        self.trg = torch.tensor(trg)


torch.manual_seed(0)
net = Transformer(model_dimension=DIM, src_vocab_size=SRC_VOCAB, trg_vocab_size=TRG_VOCAB, number_of_heads=2,
                  number_of_layers=2, dropout_probability=0.0)
kl_div = nn.KLDivLoss(reduction="batchmean")
smoothing = LabelSmoothingDistribution(0.1, PAD, TRG_VOCAB, torch.device("cpu"))
schedule = CustomLRAdamOptimizer(Adam(net.parameters(), betas=(0.9, 0.98), eps=1e-9), DIM, 4)
training_script.training_config = {"enable_tensorboard": False, "console_log_freq": None, "checkpoint_freq": None}
loop = training_script.get_train_val_loop(net, schedule, kl_div, smoothing, PAD, time.time())


def module_sums(tag):
    for name, child in net.named_children():
        total = sum(float(p.detach().double().sum()) for p in child.parameters())
        print("VALUE", tag + "_" + name, total)
'''

DRIVERS = {
    "xf_train": _COMMON + '''
train_batches = [TokenBatch(k) for k in range(3)]
for k, batch in enumerate(train_batches):
    loop(is_train=True, token_ids_loader=[batch], epoch=0)
    print("VALUE lr_%d" % k, schedule.optimizer.param_groups[0]["lr"])
    print("VALUE step_%d" % k, schedule.current_step_number)

_, _, gold = get_src_and_trg_batches(train_batches[0])
dist = smoothing(gold)
print("VALUE smooth_sum", float(dist.sum()))
print("VALUE smooth_first", float(dist[0].sum()))
print("VALUE smooth_pad_col", float(dist[:, PAD].abs().sum()))
print("VALUE smooth_weighted", float((dist * torch.arange(TRG_VOCAB).float()).sum()))
module_sums("trained")

held_out = TokenBatch(7)
with torch.no_grad():
    loop(is_train=False, token_ids_loader=[held_out], epoch=0)
    src, trg_in, gold = get_src_and_trg_batches(held_out)
    src_mask, trg_mask, n_src, n_trg = get_masks_and_count_tokens(src, trg_in, PAD, torch.device("cpu"))
    print("VALUE n_src", int(n_src))
    print("VALUE n_trg", int(n_trg))
    print("VALUE trg_mask", float(trg_mask.float().sum()))
    log_probs = net(src, trg_in, src_mask, trg_mask)
    print("VALUE val_loss", float(kl_div(log_probs, smoothing(gold))))
    print("VALUE val_logp", float(log_probs.double().sum()))
''',
    "xf_decode": _COMMON + '''
from utils.decoding_utils import greedy_decoding, get_beam_decoder


class Vocab:
    def __init__(self):
        self.itos = ["<unk>", "<pad>", "<s>", "</s>"] + ["w%d" % i for i in range(4, TRG_VOCAB)]
        self.stoi = {word: i for i, word in enumerate(self.itos)}


class FieldProcessor:
    vocab = Vocab()


for k in range(2):
    loop(is_train=True, token_ids_loader=[TokenBatch(10 + k)], epoch=0)
net.eval()
src = TokenBatch(20).src
with torch.no_grad():
    src_mask, _ = get_masks_and_count_tokens_src(src, PAD)
    memory = net.encode(src, src_mask)
    print("VALUE memory", float(memory.double().sum()))
    sentences = greedy_decoding(net, memory, src_mask, FieldProcessor(), max_target_tokens=7)
for i, words in enumerate(sentences):
    print("DECODED", i, " ".join(words))
    ids = [FieldProcessor.vocab.stoi[w] for w in words]
    print("VALUE decoded_%d_len" % i, len(ids))
    print("VALUE decoded_%d_ids" % i, sum(j * 100 ** n for n, j in enumerate(ids[:5])))
beam = get_beam_decoder({"beam_size": 2, "length_penalty_coefficient": 0.6})
try:
    with torch.no_grad():
        beam(net, memory, src_mask, FieldProcessor(), max_target_tokens=5)
    print("BEAM ok")
except Exception as e:
    print("BEAM raised", type(e).__name__, str(e)[:80])
''',
    "xf_selfcheck": '''
import contextlib
import hashlib
import io
import re
import runpy

printed = io.StringIO()
with contextlib.redirect_stdout(printed):      # 260 lines: reduced below to what is compared
    scope = runpy.run_path("models/definitions/transformer_model.py", run_name="__main__")
lines = printed.getvalue().splitlines()
keys = next(line for line in lines if line.startswith("odict_keys("))
print("VALUE state_dict_entries", keys.count("'") // 2)
named = [line.split(" ", 1) for line in lines if re.match(r"^\\S+ (torch\\.Size\\(|\\()", line)]
print("VALUE named_parameters", len(named))
print("NAMES", hashlib.md5("\\n".join(name for name, _ in named).encode()).hexdigest())
shapes = [tuple(int(d) for d in re.findall(r"\\d+", shape)) for _, shape in named]
print("SHAPES", hashlib.md5(repr(shapes).encode()).hexdigest())
for line in lines:
    if line.startswith("Size of the"):
        print(line)
out = scope["out"]
print("VALUE out_shape", float(out.shape[0] * 1000 + out.shape[1]))
print("VALUE out_sum", float(out.double().sum()))
print("VALUE out_exp_sum", float(out.double().exp().sum()))
print("VALUE out_max", float(out.max()))
''',
}
