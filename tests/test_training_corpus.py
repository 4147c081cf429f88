"""The training-program corpus (examples/training/): six complete PyTorch programs that
`msmigrate convert` must turn into MindSpore programs that run with no manual edit.

For each program: synthetic data is written in the real on-disk format (MNIST idx files,
CIFAR-10 python pickles, an ImageFolder of PNGs, text files), initial weights are made with
the torch model and torch.save, the torch program runs a few optimizer steps with
--deterministic (same data order, dropout off, noise from NumPy's seeded generator) and
--init-weights, the project is converted (no TODO anywhere in the report), and the converted
program runs in a fresh interpreter where `import torch` fails, in GRAPH mode (the mode line
the converter writes), from the same torch.save file. Both write one JSON line per optimizer
step (--metrics); every logged number (losses, learning rates, evaluation losses) must agree
within RTOL. One program also runs in PYNATIVE mode, switched by editing that one mode line.

Measured relative differences of the per-step losses (GRAPH, this machine): mnist_cnn 9e-7,
cifar_resnet 5e-5 (resumed from torch's checkpoint: 6e-7), lstm_lm 8e-7, vae 4e-7, dcgan 7e-7
(PYNATIVE the same), transformer_lm 3e-7; about 2.5 minutes for the file on 2 busy cores, most of
it MindSpore's compilation. CIFAR's bound holds at --lr 0.01:
at kuangliu's default 0.1, ResNet-18 on 8 random images per batch is chaotic (torch against
torch with the initial weights perturbed by 1e-7 relative already differs by 4e-3 at step 4),
so no implementation can match it closer; its first steps still match to 2e-6 there."""
from __future__ import annotations

import importlib.util
import json
import operator
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Sequence

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.cli import main as msmigrate_main  # noqa: E402
from msmigrate.converter import compat_source  # noqa: E402
from msmigrate.runtime_prune import compat_references  # noqa: E402
from .test_runtime_pruning import KERAS_NAMES  # noqa: E402
from .test_golden_output import compare_with_golden  # noqa: E402

from .corpus import (CORPUS, max_rel_diff, read_metrics, run_program, write_char_corpus,  # noqa: E402
                     write_cifar10, write_image_folder, write_mnist, write_word_corpus)

RTOL = 1e-4
# what is logged but not computed by the program's numerics
NOT_COMPARED = {"seconds", "step", "epoch", "iter"}
MODE_LINE = "ms.set_context(mode=ms.GRAPH_MODE)"


def load_module(path: Path, name: str):
    """Import a torch program's model file (or package) under a unique name."""
    path = Path(path)
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(name, path / "__init__.py",
                                                      submodule_search_locations=[str(path)])
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Program:
    name: str
    script: str
    args: Callable[[Path, Path], List[str]]    # (data dir, output dir) -> program flags (but --metrics)
    write_data: Callable[[Path], None]
    write_init: Callable[[Path], None]          # writes the initial weights under the data dir
    steps: int                                  # optimizer steps the run makes
    # what the run saves -> (initial weights file, key of the state_dict inside it or None)
    saves: Dict[str, tuple] = field(default_factory=dict)
    loss_keys: Sequence[str] = ("loss",)


# ------------------------------------------------------------------ initial weights (torch.save)
def _save(module, path):
    import torch
    torch.save(module.state_dict(), path)


def _init_mnist(d: Path):
    import torch
    torch.manual_seed(0)
    _save(load_module(CORPUS / "mnist_cnn" / "model.py", "corpus_mnist_model").Net(), d / "init.pt")


def _init_cifar(d: Path):
    import torch
    torch.manual_seed(0)
    _save(load_module(CORPUS / "cifar_resnet" / "models", "corpus_cifar_models").ResNet18(), d / "init.pt")


def _init_lstm(d: Path):
    import torch
    corpus = load_module(CORPUS / "lstm_lm" / "data.py", "corpus_lstm_data").Corpus(str(d / "text"))
    torch.manual_seed(0)
    model = load_module(CORPUS / "lstm_lm" / "model.py", "corpus_lstm_model").RNNModel(
        len(corpus.dictionary), 16, 16, 2, 0.0, True)
    _save(model, d / "init.pt")


def _init_vae(d: Path):
    import torch
    torch.manual_seed(0)
    _save(load_module(CORPUS / "vae" / "model.py", "corpus_vae_model").VAE(latent=8), d / "init.pt")


def _init_dcgan(d: Path):
    import torch
    models = load_module(CORPUS / "dcgan" / "models.py", "corpus_dcgan_models")
    torch.manual_seed(0)
    net_g = models.Generator(16, 8, 3)
    net_g.apply(models.weights_init)
    net_d = models.Discriminator(8, 3)
    net_d.apply(models.weights_init)
    _save(net_g, d / "netG.pt")
    _save(net_d, d / "netD.pt")


def _init_gpt(d: Path):
    import torch
    model = load_module(CORPUS / "transformer_lm" / "model.py", "corpus_gpt_model")
    vocab = len(set((d / "input.txt").read_text(encoding="utf-8")))
    torch.manual_seed(0)
    _save(model.GPT(model.GPTConfig(block_size=16, vocab_size=vocab, n_layer=2, n_head=2, n_embd=16,
                                    dropout=0.0)), d / "init.pt")


PROGRAMS = {p.name: p for p in [
    # 32 training images, batch 16, 2 epochs: 4 steps, StepLR between the epochs, a test pass after each
    Program("mnist_cnn", "train.py",
            lambda d, o: ["--data", d, "--epochs", 2, "--batch-size", 16, "--test-batch-size", 8, "--log-interval", 1,
                       "--deterministic", "--init-weights", d / "init.pt", "--save", o / "mnist_cnn.pt"],
            lambda d: write_mnist(d, n_train=32, n_test=16), _init_mnist, steps=4,
            saves={"mnist_cnn.pt": ("init.pt", None)}),
    # ResNet-18 at 32x32, batch 8, 2 epochs of 2 steps, OneCycleLR stepped per batch (momentum cycled),
    # label smoothing, weight decay, 2 loader workers, best-accuracy checkpoint
    Program("cifar_resnet", "main.py",
            lambda d, o: ["--data", d, "--epochs", 2, "--batch-size", 8, "--workers", 2, "--sched", "onecycle",
                       "--lr", 0.01, "--log-interval", 1, "--deterministic", "--init-weights", d / "init.pt",
                       "--save", o / "checkpoint" / "ckpt.pth"],
            lambda d: write_cifar10(d, n_train=20, n_test=8), _init_cifar, steps=4,
            saves={"checkpoint/ckpt.pth": ("init.pt", "net")}),
    # 2-layer LSTM, tied weights, BPTT 8 over 4 columns, clipping at 0.25, SGD lr 1; validation/test passes
    Program("lstm_lm", "main.py",
            lambda d, o: ["--data", d / "text", "--emsize", 16, "--nhid", 16, "--tied", "--epochs", 1,
                       "--batch-size", 4, "--bptt", 8, "--lr", 1.0, "--clip", 0.25, "--max-steps", 4,
                       "--log-interval", 1, "--deterministic", "--init-weights", d / "init.pt",
                       "--save", o / "model.pt"],
            lambda d: write_word_corpus(d / "text"), _init_lstm, steps=4, saves={"model.pt": ("init.pt", None)}),
    # VAE on 28x28 MNIST, latent 8, Adam; reparameterisation noise from NumPy
    Program("vae", "main.py",
            lambda d, o: ["--data", d, "--epochs", 2, "--batch-size", 16, "--latent", 8, "--log-interval", 1,
                       "--deterministic", "--init-weights", d / "init.pt", "--save", o / "vae.pt"],
            lambda d: write_mnist(d, n_train=32, n_test=16, seed=1), _init_vae, steps=4,
            saves={"vae.pt": ("init.pt", None)}),
    # DCGAN on a folder of 24x24 PNGs resized to 32, two Adam optimizers, BCELoss
    Program("dcgan", "main.py",
            lambda d, o: ["--dataroot", d / "images", "--workers", 0, "--batchSize", 8, "--nz", 16, "--ngf", 8,
                       "--ndf", 8, "--niter", 2, "--seed", 3, "--deterministic", "--netG", d / "netG.pt",
                       "--netD", d / "netD.pt", "--outf", o],
            lambda d: write_image_folder(d / "images", per_class=8, size=24), _init_dcgan, steps=4,
            saves={"netG_epoch_1.pth": ("netG.pt", None), "netD_epoch_1.pth": ("netD.pt", None)},
            loss_keys=("loss_D", "loss_G")),
    # char-level GPT: AdamW with decay/no-decay groups, LambdaLR warmup+cosine, clipping, an evaluation
    # at step 3, sampling (torch.multinomial) at the end
    Program("transformer_lm", "train.py",
            lambda d, o: ["--data", d / "input.txt", "--block-size", 16, "--batch-size", 4, "--n-layer", 2,
                       "--n-head", 2, "--n-embd", 16, "--lr", 3e-3, "--warmup-iters", 2, "--max-iters", 20,
                       "--max-steps", 5, "--eval-interval", 3, "--eval-iters", 2, "--log-interval", 1,
                       "--sample-len", 3, "--deterministic", "--init-weights", d / "init.pt",
                       "--save", o / "ckpt.pt"],
            lambda d: write_char_corpus(d / "input.txt", chars=3000), _init_gpt, steps=5,
            saves={"ckpt.pt": ("init.pt", "model")}),
]}


# ------------------------------------------------------------------ the checks
# Final weights are compared loosely: per tensor, the largest difference must stay within
# WEIGHT_TOL of the largest change training made to it. A few steps of ResNet-18 with
# BatchNorm on 8 random images are chaotic: torch against torch from initial weights perturbed
# by 1e-7 (relative) differs by 4.4% of the update after 2 steps (the converted program: 5.6%);
# the other programs agree within 1.5%. A lost update, a wrong hyper-parameter or statistics
# updated twice show up as differences of the order of the update itself.
WEIGHT_TOL = 0.2
_MS_NAMES = [(r"\.gamma$", ".weight"), (r"\.beta$", ".bias"), (r"\.moving_mean$", ".running_mean"),
             (r"\.moving_variance$", ".running_var"), (r"\.embedding_table$", ".weight")]
# known differences, kept visible: (program, saved file, key pattern) -> why
KNOWN = {
    ("dcgan", "netG_epoch_1.pth", r"running_(mean|var)$"):
        "the generator runs forward in both train steps (D's for the fake images, G's for its gradients), "
        "so MindSpore updates its BatchNorm statistics twice per iteration, torch once",
}


def compare_weights(name: str, prog: Program, tmp_path: Path, compat) -> float:
    import torch
    worst = 0.0
    for saved, (init_name, key) in prog.saves.items():
        t = torch.load(tmp_path / "torch" / saved, map_location="cpu", weights_only=False)
        m = compat.load(str(tmp_path / "graph" / saved))
        init = torch.load(tmp_path / "data" / init_name, map_location="cpu")
        if key is not None:
            t, m = t[key], m[key]
        ms_values = {}
        for k, v in m.items():
            for pattern, repl in _MS_NAMES:
                k = re.sub(pattern, repl, k)
            ms_values[k] = v.asnumpy()
        for k, v in t.items():
            if k.endswith("num_batches_tracked") or any(
                    (name, saved) == kn[:2] and re.search(kn[2], k) for kn in KNOWN):
                continue
            assert k in ms_values, f"{name}: {saved} has no {k} (has {sorted(ms_values)})"
            expected, got = v.numpy(), ms_values[k]
            assert got.shape == expected.shape, (name, saved, k, got.shape, expected.shape)
            update = float(np.abs(expected - init[k].numpy()).max())
            diff = float(np.abs(got - expected).max())
            assert diff <= WEIGHT_TOL * update + 1e-6, \
                f"{name}: {saved}:{k} differs by {diff:.2e}, training changed it by {update:.2e}"
            worst = max(worst, diff / max(update, 1e-12))
    return worst


def converted_compat(out: Path):
    """The _ms_compat.py the conversion emitted (reads the converted programs' checkpoints)."""
    return load_module(out / "_ms_compat.py", "corpus_ms_compat_" + out.name)


def convert(name: str, out: Path) -> dict:
    """msmigrate convert on the program's directory; returns the JSON report."""
    rc = msmigrate_main(["convert", str(CORPUS / name), "-o", str(out), "-q"])
    report = json.loads((out / "msmigrate-report.json").read_text())
    todo = [(f["file"], s["line"], s["api"], s["note"]) for f in report["files"] for s in f["sites"]
            if s["status"] == "todo"]
    assert not todo, f"{name}: TODO sites in the conversion: {todo}"
    assert report["summary"]["todo"] == 0 and report["summary"]["files"]["failed"] == 0, report["summary"]
    assert rc == 0, f"msmigrate convert {name} exited {rc}"
    for py in out.rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import torch|from torch|import torchvision|from torchvision)", text, re.M), py
    compare_with_golden(out, name)     # the converted text, verbatim (tests/golden/training/NAME)
    check_helper(name, out)
    return report


# helper lines by program: guards against growth, about 10% over the figures when written (the issue's
# "less than half of 2,267-3,736" is not met: load() reads torch.save files, --init-weights, with the torch
# files section and the checkpoints section, 1,160 lines, in every program; see bench/helper_size.py --why).
# +14 for mnist_cnn/vae, +9 transformer_lm, +1 dcgan: _ms_compat.cross_entropy (class indices gathered, finite
# beside a -inf logit) and affine_off (frozen norm parameters stay parameters). +125 to +132 each: the unused
# parameters section (value_and_grad_reached in every train step; optimizers skipping a None gradient). +18: a
# compile error's refusal and line found through the helper and _ms_lines.json of the tree that raised it. +1: load()
# of a whole saved model names the original torch.load line. +4: an optimizer given a plain tensor names its line.
# +15: a step's op-by-op gradient call leaves the requires_grad flags of its inputs as they were (unused_params.py)
# +37 transformer_lm: _ms_compat.numel (`p.numel()` of an untyped receiver: a tensor's, or a torch.Size's product)
# and no_grad_value (the results of its @torch.no_grad() generate/estimate_loss carry no gradient)
# +30 dcgan: _ms_compat.LeakyReLU and leaky_relu (torch's gradient, the slope, at an input of exactly 0)
# +18 cifar_resnet: _ms_compat.DataParallel (its `net = torch.nn.DataParallel(net)` on cuda keeps `.module`)
# +23 each: compile_step's _reaches_object_tensor (a step reading a tensor a plain object holds, SAC's
# `self.alpha`/`self.log_alpha`, runs op by op in GRAPH mode: a graph froze it; tests/test_heldout19_programs.py)
# +11 lstm_lm, +10 transformer_lm, +3 dcgan: module_tree's _optimizer_cell (an optimizer kept in a module's
# attribute, minimalRL's `self.optimizer = optim.Adam(...)`, is no submodule; tests/test_heldout21_programs.py)
# +16 lstm_lm: _ms_compat.tensor_data (its data.py's `torch.tensor(ids)` of a list filled by append: a one-element
# tensor in such a list is a number, as torch reads it; tests/test_heldout21_programs.py)
# +16 each (heldout23): value_and_grad_reached keeps host values among a step's extra outputs aside (_host_value);
# +11 for the programs with Adam: its zero moments for an empty parameter too (_zero_state)
# +13 each (heldout25): torch.load of an argparse.Namespace or a dataclass (build-nanogpt's GPTConfig in its
# checkpoint) saved by torch.save, found in its module (checkpoints.py's "object" entries)
# +10 transformer_lm: _ms_compat._softmax_kernel (softmax never gives ops.softmax an axis of length 1: MindSpore
# reuses that gradient, wrong, for later inputs of the same rank; tests/test_heldout23_programs.py)
# +9 for the programs with Adam (heldout26): its update of one parameter is a method of its own
# (Adam._update_param: inline in the unrolled loop, a model of ~250 parameters passed MindSpore's call depth limit)
# +10 for the programs with a torch optimizer: _allow_call_depth raises MindSpore's call depth limit with the
# number of parameters (a compiled step of ~500 parameter tensors passed 1000; bench/optimizer_call_depth.py)
# +10 (heldout29): _ms_compat.manual_seed, torch.manual_seed leaving a NumPy stream the program seeded where it was
# mnist_cnn +3, vae +3: the MNIST dataset's deprecated train_data / test_labels names (bench/_rw_heldout30.py)
# +14 (heldout33; lstm_lm stays within its bound): load_state_dict's result prints as torch's (IncompatibleKeys'
# __repr__), and an optimizer's or scheduler's load_state_dict(strict=...) raises torch's TypeError
# (tests/test_heldout33_programs.py)
# heldout32: ms.Tensor's __format__ as torch's, set at the helper's import, adds 10 lines (11 to cifar_resnet)
# +10 (stop 42): compile_step's train_mode_by_default looks inside a training container (a new torch container's own
# flag) and _closure_cells reaches networks handed over in a dict, list or tuple (nerf-pytorch's render_kwargs)
# +17 (heldout35): ms.Tensor's indexing reads NumPy integers and integer arrays as torch's, set at the helper's
# import (_numpy_index; lstm_lm's bound had the room)
# +10 each since heldout36: the helper's Tensor indexing reads slices with NumPy integer bounds (3 lines, always
# emitted) and the optimizers' parameter list refuses a Parameter given twice (7 lines of _trainable; every corpus
# program has an optimizer); +4 since stop 44 where a compiled step is written (StepCell's tuple and list arguments
# of tensors enter as ms.mutable; lstm_lm had the room)
# +84 since stop 45 where a DataLoader is written: its workers read in the main process where reading calls
# MindSpore (an op in a forked worker waits forever), each worker's random states kept apart (lstm_lm had the room)
# +4 each since heldout41: the helper's Tensor indexing reads a uint8 tensor (or NumPy array) as torch's byte mask
# (_numpy_index, always emitted)
# +40 (all but lstm_lm, under its bound): a compiled step's argument that is a program's object holding tensors
# (torchtext's Batch) enters the graph as a jit_class record, a step writing into it refused (train.py, heldout42).
# +38 since heldout43: torch's names of layer settings on MindSpore's layer classes (`m.groups`, `m.in_features`,
# a BatchNorm's `affine`), set at the helper's import (compat_parts/layer_names.py, always emitted)
# +9 (the programs whose DataLoaders have workers) since heldout45: each epoch's worker base seed drawn from
# MindSpore's default generator, not NumPy's global stream (compat_parts/data.py _dl_base_seed).
# Stop 47: +17 where Module.apply runs (dcgan, transformer_lm: an apply() view of an any_batch cell compares and
# hashes as MindSpore's layer, module_tree._layer_class), +2 in every optimizer (add_param_group's refusal names
# its line), +1 (torch's Sequential as a value stands for SequentialCell), Adam's log(0) for betas=(0.0, ...)
# heldout44: +13 each (ms.Tensor's item stores drop a value's leading size-1 dimensions as torch's, set at the
# helper's import: _unit_dims_off, always emitted), +18 where transforms.Normalize is written (cifar_resnet, dcgan,
# mnist_cnn: _tv_same_channels, torchvision's refusal of a mean of another channel count), +14/+16 where BCE is
# written (dcgan, vae: _same_bce_sizes, torch's refusal of a target shaped unlike the input); measured
# Stop 47: +11 each (an optimizer's load_state_dict takes the scheduler keys, initial_lr..., with the saved groups:
# compat_parts/checkpoints.py _SCHEDULER_KEYS); measured
# heldout46: +5 each (every program has an optimizer: ParamGroup.update, `group.update(lr=x)` through the
# learning-rate setter, not dict.update; compat_parts/optim.py); measured
# heldout47: +19 each (compile_step leaves the cells inside a cell switched to eval as they are, _inside_eval_cells;
# a cell's primitives among the constants its graph is chosen by, graph_constants.py); measured
# Stop 48: +107 each (compile_step never runs a step taking the gradient of a gradient through a convolution or a
# normalization op by op: compat_parts/train.py second_order_wrong_op_by_op; an op-by-op record holding such a
# gradient stops: unused_params.py wrong_second_order); measured
# Stop 48, continued: +28 each (a step taking the gradient of a gradient through a convolution, reading a small tensor a
# plain object holds, compiles, that tensor's values among the constants its graph is chosen by:
# graph_constants.py keyed_tensor, train.py _object_tensors); measured
# heldout48: +48 each (a cell reading tensors on the host, itself or through a plain object it holds, runs op by
# op when called in GRAPH mode, and so does a train step reaching it: graph_constants.reads_on_host,
# compat_parts/train.py _reaches_host_reads_in_cells; +1 at the merge, a blank line between definitions); measured
# heldout50: +150 each (torch.save of a plain object and of a list holding a model and an optimizer, loaded back
# in the saving process: compat_parts/checkpoints.py; the optimizers' `state[p]` under torch's names and their
# param groups read as floats: compat_parts/optim.py); measured
# heldout51: +13 each (steps after a branch that leaves the iteration, host reads in a step's functions); stop 48's
# third session: +8 each (set_device stops, in GRAPH mode, the record a module imported before the mode line
# started); measured on all six after merging both; heldout60 and stop 51: +41 for the three whose helper builds a
# layer adapter (a subclass of nn.Embedding gets torch's reset, names and weight tying, Conv2d torch's _conv_forward),
# measured after both merges; heldout62, heldout63 and stop 52: +53 to +62 each (add_param_group on a built
# optimizer, torch.cat's dtype promotion, BatchNorm/Dropout adapters starting in training mode, a step's arguments
# closed over and its loss checked for a graph), measured after both merges; heldout64, heldout65 and stop 53:
# +87 to +106 each (a compiled step's Enum argument run op by op, 14, and the same wrapper for the same compiled
# step, 9; SGD's momentum a Parameter read at run time, 23 and the _cycled_momentum it calls, 17; the optimizers
# registered for a loss scaler's backward() and what reads its gradients, 11; a 0-d bool mask index, 19; a blank
# line each), measured after both merges; heldout66, heldout67 and stop 54: +14 each (GRAPH_CELL_HOOKS, the table
# through which a compiled Cell's return is rebuilt where the tree builds a record), dcgan +32 (heldout67's
# value_kept, a value handed from one step to the next item by item), measured after both merges
HELPER_BOUNDS = {"cifar_resnet": 4841, "dcgan": 5099, "lstm_lm": 4080, "mnist_cnn": 4603, "transformer_lm": 4567,
                 "vae": 4598}


def check_helper(name: str, out: Path) -> None:
    """The pruned helper of this conversion (runtime_prune.py): under half the runtime and under its bound, no
    Keras helpers in a torch program, short stand-ins, and every name the converted code reads defined in it.
    Made here, on the conversion this file makes anyway (tests/test_runtime_pruning.py converted the corpus
    a second time for it); the converted program's run imports that helper with torch blocked."""
    helper = (out / "_ms_compat.py").read_text(encoding="utf-8")
    lines, full = helper.count("\n"), compat_source().count("\n")
    print(f"\n{name}: helper {lines} lines of the runtime's {full}")
    assert lines < full / 2 and lines <= HELPER_BOUNDS[name], (name, lines, HELPER_BOUNDS[name])
    assert not any(k in helper for k in KERAS_NAMES), f"{name}: Keras helpers in a torch program"
    assert all(p.read_text(encoding="utf-8").count("\n") < 20 for p in out.rglob("_ms_compat.py") if p.parent != out)
    compat = load_module(out / "_ms_compat.py", "corpus_helper_" + name)
    reads = {n for p in out.rglob("*.py") if p.name != "_ms_compat.py"
             for n in compat_references(p.read_text(encoding="utf-8"), "_ms_compat") or () if not n.endswith(".*")}
    missing = []
    for read in sorted(reads):
        try:
            operator.attrgetter(read)(compat)
        except AttributeError:
            missing.append(read)
    assert len(reads) > 5 and not missing, (name, missing)


def compare(name: str, torch_records: List[dict], ms_records: List[dict], loss_keys: Sequence[str]):
    """Every logged number agrees within RTOL; returns the max relative difference of the
    per-step losses and of everything logged."""
    assert len(torch_records) == len(ms_records), (name, torch_records, ms_records)
    worst_loss, worst_all = 0.0, 0.0
    for t, m in zip(torch_records, ms_records):
        assert set(t) == set(m), (name, t, m)
        for key, value in t.items():
            if key in NOT_COMPARED or not isinstance(value, (int, float)):
                continue
            d = max_rel_diff([m[key]], [value])
            assert d <= RTOL, f"{name}: {key} differs by {d:.2e} (torch {value}, converted {m[key]})\n" \
                              f"torch: {torch_records}\nconverted: {ms_records}"
            worst_all = max(worst_all, d)
            if key in loss_keys and "step" in t:
                worst_loss = max(worst_loss, d)
    return worst_loss, worst_all


def run_case(name: str, tmp_path: Path, pynative: bool = False):
    prog = PROGRAMS[name]
    data = tmp_path / "data"
    data.mkdir()
    prog.write_data(data)
    prog.write_init(data)
    for run in ("torch", "graph", "pynative"):
        (tmp_path / run).mkdir()

    t_metrics = tmp_path / "torch.jsonl"
    _, t_seconds = run_program(CORPUS / name / prog.script, prog.args(data, tmp_path / "torch") + [
        "--metrics", t_metrics], torch=True, cwd=tmp_path / "torch")
    out = tmp_path / f"{name}_ms"
    convert(name, out)
    script = out / prog.script
    assert script.read_text(encoding="utf-8").count(MODE_LINE) == 1, "the converted program has one mode line"

    m_metrics = tmp_path / "graph.jsonl"
    _, m_seconds = run_program(script, prog.args(data, tmp_path / "graph") + ["--metrics", m_metrics], torch=False,
                               cwd=tmp_path / "graph")
    torch_records, ms_records = read_metrics(t_metrics), read_metrics(m_metrics)
    steps = [r for r in torch_records if "step" in r]
    assert len(steps) == prog.steps, (name, torch_records)
    loss, everything = compare(name, torch_records, ms_records, prog.loss_keys)
    weights = compare_weights(name, prog, tmp_path, converted_compat(out))
    print(f"\n{name}: GRAPH max relative difference: per-step losses {loss:.1e}, all logged values "
          f"{everything:.1e}, final weights {weights:.1e} of the update; torch {t_seconds:.0f} s, "
          f"converted {m_seconds:.0f} s")
    if pynative:
        text = script.read_text(encoding="utf-8")
        script.write_text(text.replace(MODE_LINE, "ms.set_context(mode=ms.PYNATIVE_MODE)"), encoding="utf-8")
        p_metrics = tmp_path / "pynative.jsonl"
        _, p_seconds = run_program(script, prog.args(data, tmp_path / "pynative") + ["--metrics", p_metrics],
                                   torch=False, cwd=tmp_path / "pynative")
        loss, everything = compare(name + " (PYNATIVE)", torch_records, read_metrics(p_metrics), prog.loss_keys)
        print(f"{name}: PYNATIVE max relative difference: per-step losses {loss:.1e}, all logged values "
              f"{everything:.1e}; {p_seconds:.0f} s")
    return out


def test_mnist_cnn(tmp_path):
    run_case("mnist_cnn", tmp_path)


def test_cifar_resnet(tmp_path):
    run_case("cifar_resnet", tmp_path)       # its best-accuracy checkpoint holds net, optimizer, acc, epoch
    # --resume from the checkpoint the torch run saved (a torch.save file: network, SGD momentum
    # buffers, accuracy, epoch), in both programs: the converted one reads it without torch
    prog = PROGRAMS["cifar_resnet"]
    ckpt = tmp_path / "torch" / "checkpoint" / "ckpt.pth"
    records = {}
    for run, script, is_torch in (("torch", CORPUS / "cifar_resnet" / "main.py", True),
                                  ("graph", tmp_path / "cifar_resnet_ms" / "main.py", False)):
        out = tmp_path / f"resume_{run}"
        out.mkdir()
        args = prog.args(tmp_path / "data", out)
        args = args[:args.index("--init-weights")] + ["--resume", ckpt, "--epochs", 3, "--max-steps", 2,
                                                      "--save", out / "ckpt.pth", "--metrics", out / "m.jsonl"]
        run_program(script, args, torch=is_torch, cwd=out)
        records[run] = read_metrics(out / "m.jsonl")
    assert [r["epoch"] for r in records["torch"] if "step" in r] == [1, 1], records["torch"]
    loss, _ = compare("cifar_resnet --resume", records["torch"], records["graph"], prog.loss_keys)
    print(f"cifar_resnet --resume from torch's checkpoint: per-step losses {loss:.1e}")


def test_lstm_lm(tmp_path):
    run_case("lstm_lm", tmp_path)            # the program reads its saved model back for the test pass


def test_vae(tmp_path):
    run_case("vae", tmp_path)


def test_dcgan(tmp_path):
    run_case("dcgan", tmp_path, pynative=True)


def test_transformer_lm(tmp_path):
    run_case("transformer_lm", tmp_path)
