"""The `heldout50` set of bench/real_world.py (`--set heldout50`): salesforce/awd-lstm-lm (the AWD-LSTM word-level
language model: weight-dropped LSTMs, embedding and locked dropout, the split cross-entropy, activation
regularization, the switch to ASGD and its averaged weights) and xternalz/WideResNet-pytorch (train.py run whole on
CIFAR-10), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout50 [--only awd_lstm,wrn_augment]

- salesforce/awd-lstm-lm (main.py, model.py, data.py, embed_regularize.py, locked_dropout.py, weight_drop.py,
  splitcross.py, utils.py, as they are): main.py run whole on a synthetic corpus in data/penn's on-disk format
  (train.txt 16 sentences, valid.txt 8, test.txt 4 of a small grammar, one a line; `--data ../../data/corpus`),
  `--cuda` (the flag is store_false: given, CUDA is off) `--emsize 16 --nhid 24 --nlayers 2 --bptt 8
  --batch_size 4 --seed 141 --log-interval 1 --save best.pt`, the dropouts (`--dropout --dropouth --dropouti
  --dropoute`) 0: LockedDropout's and embedded_dropout's masks are drawn by `Tensor.bernoulli_`, which the runner
  does not align across frameworks. What runs: data.Corpus (Dictionary with a Counter, LongTensor filled by
  item assignment) cached by `torch.save(corpus, fn)`, batchify (narrow, view, t, contiguous), RNNModel (a
  ModuleList of one-layer RNNs, the decoder's weight tied to the encoder's, init_weights by `.data.uniform_`),
  init_hidden by `weight.new(...).zero_()`, embedded_dropout through F.embedding with the Embedding's fields,
  the random sequence length per step from np.random (bptt or bptt/2, then normal(bptt, 5)), the learning rate
  scaled by seq_len/bptt in param_groups, repackage_hidden (detach), SplitCrossEntropyLoss (no splits below
  75,000 words: one softmax over the tied decoder's weight and bias, F.linear, log_softmax, gather), activation
  regularization (`.pow(2).mean()` of the last layer's outputs) and temporal activation regularization
  (differences of consecutive steps), clip_grad_norm_ over the model's and criterion's parameters, the log
  lines every step, evaluate() in eval mode, model_save `torch.save([model, criterion, optimizer], f)` at each
  best validation loss, and at the end model_load (`torch.load` of that list) and the test set's loss.
  - awd_lstm: `--model LSTM --wdrop 0.5 --lr 30 --epochs 2`: WeightDrop around each LSTM (its weight_hh_l0
    deleted from the module's _parameters, registered again as weight_hh_l0_raw, set back as a plain tensor
    attribute by F.dropout at each forward, flatten_parameters replaced by a function); the runner's dropout is
    the identity, so the weights are the raw ones.
  - awd_lstm_asgd: `--model LSTM --wdrop 0 --lr 30 --epochs 4 --nonmono 1`: the validation loss of epoch 3 is
    above epoch 1's, so main.py switches to `torch.optim.ASGD(t0=0, lambd=0.)` ("Switching to ASGD"); epoch 4
    trains with it and evaluates the averaged weights (`prm.data = optimizer.state[prm]['ax'].clone()`, then the
    trained ones put back).
  - awd_gru_adam: `--model GRU --wdrop 0 --optimizer adam --lr 3e-3 --epochs 2 --when 1`: GRUs, Adam, and
    after epoch 1 a model_save under `best.pt.e1` and the learning rate divided by 10 in param_groups.
  PRINTED: the valid and test losses, "Saving", "Switching to ASGD" and "Dividing" lines.
- xternalz/WideResNet-pytorch (train.py, wideresnet.py): train.py run whole on a synthetic CIFAR-10 in
  torchvision's on-disk format (16 training and 8 test images under x/data, train.py's `../data`), `--dataset
  cifar10 --layers 10 -b 8 --epochs 2 --print-freq 1`: `datasets.__dict__[args.dataset.upper()]`, the loaders
  (one worker, shuffled, also the validation one), WideResNet (one BasicBlock per stage, the 1x1 convolution
  shortcut where the width changes, kaiming_normal_ fan_out, avg_pool2d(8)), SGD (momentum, nesterov, weight
  decay), CosineAnnealingLR stepped per batch, accuracy() by topk, validate() under no_grad, save_checkpoint
  (torch.save of the state_dict, shutil.copyfile of the best). tensorboard_logger is not installed: a stand-in
  of ours on both sides (nothing logged; `--tensorboard` is off). Before converting, both sides get
  accuracy()'s `correct[:k].view(-1)` as `.reshape(-1)` (a view of the transposed top-k is a RuntimeError since
  torch 1.x). The torch side's `.cuda()` and `.cuda(non_blocking=True)` are made `.cpu()` (no GPU here; the
  converted side's are the converter's).
  - wrn_augment: `--widen-factor 2`: the augmentation (ToTensor, F.pad by reflection in a transforms.Lambda,
    ToPILImage, RandomCrop(32), RandomHorizontalFlip, ToTensor, Normalize).
  - wrn_plain: `--widen-factor 1 --no-augment` (ToTensor, Normalize).
  PRINTED: the " * Prec@1" and "Best accuracy" lines.

torchvision does not import next to this CPU torch: the torch side gets heldout39's CIFAR10 and transforms
stand-ins with Lambda and ToPILImage added (torchvision's to_pil_image of a float tensor: mul(255).byte(), HWC);
the converted side's torchvision is the converter's own.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import re
from pathlib import Path

from bench._rw_heldout39 import _TV_DATASETS, _TV_TRANSFORMS

AWD = "salesforce+awd-lstm-lm@1d466ec5875675ca6b6f0caacbb741240a29da9e"
WRN = "xternalz+WideResNet-pytorch@1171f93d5a9ae28eb5e603e5e7545f488d0df6ab"


def _corpus(root):
    """Both sides: a word-level corpus in the on-disk format of data/penn (train.txt, valid.txt, test.txt: one
    sentence a line, words separated by spaces), under RUN/SIDE/data/corpus (main.py's `--data
    ../../data/corpus`). Sentences follow a small grammar drawn from RandomState(50), so that there is something
    to learn."""
    import numpy as np
    rs = np.random.RandomState(50)
    subjects = ["the cat", "a dog", "the man", "my friend", "the bird"]
    verbs = ["sees", "likes", "eats", "finds", "wants"]
    objects = ["the fish", "a ball", "the bread", "some milk", "a stone", "the tree"]
    tails = ["today", "again", "in the park", "at home", "quickly"]

    def sentences(n):
        return "".join(" %s %s %s %s \n" % (subjects[rs.randint(5)], verbs[rs.randint(5)],
                                           objects[rs.randint(6)], tails[rs.randint(5)]) for _ in range(n))
    out = Path(root) / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    for name, n in (("train.txt", 16), ("valid.txt", 8), ("test.txt", 4)):
        (out / name).write_text(sentences(n))


def _cifar(root):
    """Both sides: a synthetic CIFAR-10 where train.py reads it (`../data` from x/prog)."""
    from bench.data_speed import write_cifar10
    write_cifar10(Path(root).parent / "x" / "data", n_train=16, n_test=8, seed=50)


def _wrn_successors(proj):
    """Both sides, before converting: accuracy()'s `correct[:k].view(-1)` of a transposed tensor is a RuntimeError
    since torch 1.x (not contiguous): written `.reshape(-1)`, its successor."""
    train = Path(proj) / "train.py"
    train.write_text(train.read_text().replace("correct[:k].view(-1)", "correct[:k].reshape(-1)"))


def _wrn_cpu(proj):
    """The torch side only: no GPU here (train.py calls `.cuda()` and `.cuda(non_blocking=True)` whatever is
    available)."""
    train = Path(proj) / "train.py"
    train.write_text(re.sub(r"\.cuda\([^)]*\)", ".cpu()", train.read_text()))


_TV_MORE_TRANSFORMS = _TV_TRANSFORMS + '''

class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)


class ToPILImage:
    """torchvision's to_pil_image of a float CHW tensor: mul(255).byte() (truncating), HWC, RGB"""
    def __call__(self, pic):
        if pic.is_floating_point():
            pic = pic.mul(255).byte()
        return Image.fromarray(np.transpose(pic.numpy(), (1, 2, 0)), mode="RGB")
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout50.py."""\nfrom . import datasets, '
                               'transforms\n',
    "torchvision/datasets.py": _TV_DATASETS,
    "torchvision/transforms.py": _TV_MORE_TRANSFORMS,
}

_TENSORBOARD_LOGGER = '''
"""A stand-in written by bench/_rw_heldout50.py: tensorboard_logger is not installed; nothing is logged."""


def configure(folder):
    pass


def log_value(name, value, step):
    pass
'''

_AWD_FILES = "main.py,model.py,data.py,embed_regularize.py,locked_dropout.py,weight_drop.py,splitcross.py,utils.py"
_AWD_COMMON = ["--data", "../../data/corpus", "--cuda", "--emsize", "16", "--nhid", "24", "--nlayers", "2",
               "--bptt", "8", "--batch_size", "4", "--dropout", "0", "--dropouth", "0", "--dropouti", "0",
               "--dropoute", "0", "--seed", "141", "--log-interval", "1", "--save", "best.pt"]
_WRN_FILES = "train.py,wideresnet.py"
_WRN_COMMON = ["--dataset", "cifar10", "--layers", "10", "-b", "8", "--epochs", "2", "--print-freq", "1"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("awd_lstm", AWD, _AWD_FILES, "main.py", _AWD_COMMON + ["--model", "LSTM", "--wdrop", "0.5", "--lr", "30",
                                                             "--epochs", "2"], _corpus),
    ("awd_lstm_asgd", AWD, _AWD_FILES, "main.py", _AWD_COMMON + ["--model", "LSTM", "--wdrop", "0", "--lr", "30",
                                                                  "--epochs", "4", "--nonmono", "1"], _corpus),
    ("awd_gru_adam", AWD, _AWD_FILES, "main.py", _AWD_COMMON + ["--model", "GRU", "--wdrop", "0", "--lr", "3e-3",
                                                                 "--optimizer", "adam", "--epochs", "2",
                                                                 "--when", "1"], _corpus),
    ("wrn_augment", WRN, _WRN_FILES, "train.py", _WRN_COMMON + ["--widen-factor", "2", "--name", "wa"], _cifar),
    ("wrn_plain", WRN, _WRN_FILES, "train.py", _WRN_COMMON + ["--widen-factor", "1", "--no-augment",
                                                                "--name", "wp"], _cifar),
]

DEPS: dict = {}

DRIVERS: dict = {}

FILES = {name: {".successors": _wrn_successors, "tensorboard_logger.py": _TENSORBOARD_LOGGER}
         for name, *_ in PROGRAMS if name.startswith("wrn_")}

TORCH_FILES = {name: {**_TORCHVISION, ".cuda": _wrn_cpu} for name, *_ in PROGRAMS if name.startswith("wrn_")}

LOSSES = {"awd_lstm": 8, "awd_lstm_asgd": 16, "awd_gru_adam": 8, "wrn_augment": 4, "wrn_plain": 4}

PRINTED = {name: r"valid loss +[0-9.]+|test loss +[0-9.]+|Switching to ASGD|Saving.*$|Dividing.*$"
           for name, *_ in PROGRAMS if name.startswith("awd_")}
PRINTED.update({name: r"^ \* Prec@1 .*$|^Best accuracy.*$" for name, *_ in PROGRAMS if name.startswith("wrn_")})
