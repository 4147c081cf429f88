"""Runs one program (the original under torch, or its conversion under MindSpore) for
bench/real_world.py, changing nothing in the program's code: it only patches the
frameworks' own entry points, identically on both sides.

    python bench/_rw_runner.py --side torch|ms --script S --record R.json --weights DIR \
        [--losses K] [--cwd DIR] [-- program args ...]

What the runner does, the same way on both sides:
- seeds: random, numpy (np.random.seed(0)), the framework's own (MindSpore side: NumPy marked seeded, so the
  converted torch.manual_seed leaves its stream where it is, as torch's does);
- module/cell tracking: every nn.Module (torch) / nn.Cell (MindSpore) construction (copy.deepcopy's too: a
  target network) is recorded in creation order, except those built while a module/cell (or a compiled step) runs: a forward
  that wraps its own layers in a new nn.Sequential at each call builds one per call in torch and PYNATIVE,
  one while compiling in GRAPH mode. The *models* are the tracked objects that hold parameters or
  buffers and are not inside another such object (optimizers, loss objects and the compiled
  step are left out);
- same initial weights: torch side, the first time a model (or anything in it) is called,
  the state_dict of every model built so far is written to DIR/model{i}.npz; MindSpore
  side, at the first Cell call or compiled-step call, model i loads DIR/model{i}.npz with
  msmigrate.weights.load_torch_state_dict (strict), so both start from torch's weights;
- same data order: RandomSampler (torch.utils.data's / _ms_compat's) yields
  numpy RandomState(1000 + epoch).permutation(n) on both sides; SubsetRandomSampler its indices in that order;
  DistributedSampler keeps torch's own permutation of its seed + epoch (the converted one computes it exactly);
- same augmentation: torchvision's random flips and crops draw through torch.rand/randint (patched,
  below); the converted RandomHorizontal/VerticalFlip, RandomCrop and RandomResizedCrop draw the same numbers
  from the same stream (RandomResizedCrop's area and aspect ratio as torchvision's Tensor.uniform_ draws), and the
  converted RandomRotation its angle as torchvision's Tensor.uniform_ draw (other random transforms are not
  aligned);
- same worker draws: a DataLoader with workers gets each epoch's base seed from one numpy RandomState(2468) on
  both sides, each worker's NumPy and Python streams are seeded from base seed + worker id (torch's NumPy seed
  hash, _generate_state, made that sum), and the noise below drawn inside a worker comes from a stream of that
  worker's own (align_worker_seeds_torch/_ms): a transform's np.random or torch.randint draws in workers
  (Cutout's holes, RandomCrop) match whichever process reads the batch;
- same noise: torch.randn/rand/randn_like/rand_like/randint/randperm (and multinomial, outside compiled steps),
  Tensor.normal_ and Tensor.uniform_ of a tensor that is no Parameter (Normal.rsample draws so, torchattacks' random
  starts), and their MindSpore ops
  counterparts (_ms_compat.normal_ of such a tensor) (ops.shuffle for randperm) draw from one numpy RandomState(1234) on both sides (GRAPH runs: inside Cells and
  compiled steps too, through msmigrate.draw_replay's ordered side-effect ops, drawn when the graph runs);
  the seed the converted torch.get_rng_state draws for MindSpore's generators is MindSpore's own (torch's
  draws nothing: torchvision's FakeData calls it for every image);
- same weights for layers a forward builds at each call (nlp-tutorial's BERT: `nn.Linear(...)(context)` in
  forward, fresh random weights per call): at such a layer's first call its parameters are drawn from one numpy
  RandomState(4321) on both sides (uniform in +-1/sqrt(fan_in), torch's default; a LayerNorm's ones and zeros
  kept; a layer's own parameters only, not those of existing layers a container built in forward holds), in the
  order and shapes both frameworks list them (drawn_layer_values);
- torch.utils.tensorboard: where the tensorboard package is missing, the torch side gets a SummaryWriter that
  logs nothing (the converted side's is _ms_compat's own, which needs no package);
- dropout off: torch.nn.functional.dropout* and mindspore Dropout cells / ops.dropout* are
  identities (their masks cannot match across frameworks), attention dropout too (torch's
  scaled_dot_product_attention gets dropout_p=0, MindSpore's nn_func._inner_dropout is the identity);
- losses: torch side, every Tensor.backward() records the value being differentiated (`sum(t * gradient)`
  for `t.backward(gradient)`);
  MindSpore side, every call of a step compiled by _ms_compat.compile_step records the first
  value it returns (the converted step returns its loss first), every _ms_compat.autograd_backward and
  _ms_compat.backward_to_grads of a tensor the value it differentiates (as torch's side), and so does every call, outside such a
  step, of a function made by mindspore.value_and_grad (a hand-written update of tensors the program
  differentiates itself: `w1 -= lr * w1.grad`, which the conversion computes without a step). After K
  recorded losses the
  next one stops the program (a BaseException that a program's `except Exception` does not
  swallow), so both sides run the same number of steps;
- the first call of each model records its inputs' shapes and dtypes (for msmigrate verify).

Reference runs of the torch side (--reference, for real_world.py's judgement of a difference over its
tolerance): every model loads DIR/model{i}.npz (what the plain torch run wrote) instead of writing it,
data order and noise as above, and
- float64: torch's default dtype float64 (legacy torch.FloatTensor, Tensor.float() and torch.from_numpy of float32
  arrays too; the noise streams' float32
  values and the weights cast up), so the losses differ from the plain run by float32's rounding alone;
- native-kernels: float32 through torch's own CPU kernels instead of oneDNN's (torch.backends.mkldnn
  off): another order of accumulation torch itself ships, to measure how far float32 runs of the same
  program drift apart;
- float64-kinks: float64, and every ReLU (F.relu, torch.relu, Tensor.relu, nn.ReLU) takes the side the
  converted run took at the same call (--kinks FILE, written by a PYNATIVE run of the converted side with
  --kinks: ops.relu and nn.ReLU record x > 0 in call order): where an input within float32 rounding of 0
  fell on the other side in the converted run, this run follows it (value x * side, derivative side) and
  otherwise computes in float64. The record's "kinks" says how many inputs took the converted side against
  their own sign and how far from 0 the farthest was (relative to its tensor's largest magnitude); a call
  whose shape differs stops the replay ("mismatch").

TensorFlow/Keras originals (--side tf, bench/_rw_heldout70.py; the converted side then runs with --original tf,
where tensorflow, keras and tf_keras cannot be imported either): functions run eagerly (tf.function's steps too),
Keras seeded (keras.utils.set_random_seed(0)); each Keras model's initial weights are its get_weights() at its first
outermost call (after a call in inference mode on the same inputs, which builds the layers a subclassed model
creates at its first call), written to DIR/keras{i}.npz, and the converted side's model i loads them there with
set_weights (install_tf, align_keras_ms); fit reads its arrays in order on both sides (shuffle off); Keras' Dropout
and SpatialDropout layers and keras.random.dropout are identities (the converted side's go through ops.dropout,
patched as above); the losses are each GradientTape.gradient's target (Keras' own fit differentiates its batch
loss with one) and each converted mindspore.value_and_grad call; keras.datasets' files are ours (Keras' hash
check skipped, and the converted load_data's too). The GRAPH run of a converted TF program sets GRAPH_MODE first
(the conversion sets no mode). --reference float64 runs Keras with floatx float64 from DIR/keras{i}.npz.

The record (JSON) holds: losses, models (class, input specs), status ("stopped" when the
budget ended the run, "finished" when the program ended first, "error" with the traceback's
last lines)."""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import types
import sys
import traceback
from pathlib import Path

import numpy as np


class BenchStop(BaseException):
    """The loss budget is spent (not an Exception: programs' handlers must not catch it)."""


STATE = {"original": "torch",     # the original's framework: torch, or tf (--side tf / --original tf)
         "losses": [], "step_losses": [], "step_scales": [], "models": [], "model_objs": [], "limit": 6, "weights": None, "loaded": False,
         "capture": None, "captured": None, "epoch": 0, "reference": None, "kinks": None}
REFERENCES = ("float64", "native-kernels", "float64-kinks")
KINKS = {"sides": [], "next": 0, "differ": 0, "margin": 0.0, "mismatch": None, "unreplayed": 0}
class _Streams:
    """NOISE: one stream in the main process and, inside a DataLoader worker (torch's forked worker, or the
    converted DataLoader reading a batch as its worker w would, in the main process or forked), a stream of that
    worker's own, keyed by the worker's seed (the epoch's base seed + its id, aligned on both sides by
    align_worker_seeds): a worker's draws (RandomCrop's torch.randint in a dataset's transform) are the same
    numbers whichever process reads its batches. worker_seed: the side's WorkerInfo seed, None outside workers."""

    def __init__(self, seed):
        self.main = np.random.RandomState(seed)
        self.workers = {}
        self.worker_seed = lambda: None

    def __getattr__(self, name):
        seed = self.worker_seed()
        if seed is None:
            return getattr(self.main, name)
        if seed not in self.workers:
            self.workers[seed] = np.random.RandomState([1234, int(seed) % 2 ** 32])
        return getattr(self.workers[seed], name)


NOISE = _Streams(1234)
# each epoch's DataLoader worker base seed, drawn from this stream on both sides (align_worker_seeds)
WORKER_BASE_SEEDS = np.random.RandomState(2468)
# the weights of layers a forward builds at each call (nlp-tutorial's BERT: `nn.Linear(...)(context)` in
# MultiHeadAttention.forward): drawn from this stream at the layer's first call, on both sides (fill_built_in_forward)
LAYER_DRAWS = np.random.RandomState(4321)
INSTANCES = []
CACHE = {}
RESTORE = []     # (object, attribute, original value): undone by restore()


def _patch(obj, name, value):
    # a class's attribute as the class holds it: getattr gives a staticmethod's plain function, which restore()
    # would set back as a method (the converted RandomCrop/RandomResizedCrop.get_params under msmigrate verify)
    import inspect
    RESTORE.append((obj, name, inspect.getattr_static(obj, name) if isinstance(obj, type) else getattr(obj, name)))
    setattr(obj, name, value)


def restore():
    """Undo every patch (a captured model is then checked by msmigrate verify unpatched)."""
    while RESTORE:
        obj, name, value = RESTORE.pop()
        setattr(obj, name, value)
    for name in ("torch", "torchvision", "torchaudio"):
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]


def _permutation(n):
    perm = np.random.RandomState(1000 + STATE["epoch"]).permutation(n)
    STATE["epoch"] += 1
    return perm


def _takes_positional(module, args) -> bool:
    """Whether `module.forward(*args)` binds: False where the call must have passed keyword arguments too (forward
    pre-hooks see the positional ones only), which msmigrate verify's --input cannot give."""
    import inspect
    try:
        inspect.signature(module.forward).bind(*args)
    except TypeError:
        return False
    except ValueError:      # no signature to read
        return True
    return True


def _stable_tops(stateful, subs):
    """The models, in the order they were recorded (STATE["model_objs"]) then the new ones: the tracked objects
    holding parameters or buffers that no other such object holds. A module built after a model was recorded that
    wraps it (torchdiffeq's odeint wraps the given function in a new _PerturbFunc at each call: built outside a
    forward in torch, inside the compiled step on the converted side) is no new model: the recorded one stays.
    Only parts holding parameters or buffers count as held: a stateless layer shared by every model a library
    builds (performer-pytorch's `kernel_fn = nn.ReLU()` default argument) makes no later model a wrapper."""
    recorded = STATE["model_objs"]
    inner = set()
    for m in stateful:
        for sub in subs(m):
            if sub is not m:
                inner.add(id(sub))
    has_state = {id(m) for m in stateful}
    held = {id(sub) for m in recorded for sub in subs(m) if id(sub) in has_state}
    new = [m for m in stateful if id(m) not in inner and id(m) not in held
           and not any(id(sub) in held for sub in subs(m))]
    return list(recorded) + new


def _unwrapped(state):
    """A torch state_dict whose every key starts with one attribute name (`base_func.net.0.weight`: the model as
    the torch side first called it, inside a wrapper, or wrappers: tried again), without that name; None where the
    keys have no one prefix."""
    heads = {k.split(".", 1)[0] for k in state}
    if len(heads) != 1 or any("." not in k for k in state):
        return None
    return {k.split(".", 1)[1]: v for k, v in state.items()}


def drawn_layer_values(shapes):
    """Values for the parameters of a layer built inside a forward, in its parameters' order (torch's
    module.parameters(), MindSpore's cell.get_parameters(): Linear/Dense, Embedding and convolutions list the same
    shapes, a Conv1d's (o, i, k) as (o, i, 1, k), one flat order), from LAYER_DRAWS: uniform in +-1/sqrt(fan_in) as
    torch's default initialisation draws them. A 1-D parameter (a bias) takes the bound of the last parameter of 2 or
    more dimensions before it in the layer; one with none before it (a LayerNorm's weight and bias) keeps its value:
    None in its place."""
    out, bound = [], None
    for shape in shapes:
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            bound = 1.0 / np.sqrt(fan_in) if fan_in else 0.0
        if len(shape) < 2 and bound is None:
            out.append(None)
            continue
        out.append(LAYER_DRAWS.uniform(-bound, bound, int(np.prod(shape))).astype(np.float32))
    return out


def _record_loss(value):
    if len(STATE["losses"]) >= STATE["limit"]:
        raise BenchStop()
    STATE["losses"].append(float(value))


# [0] > 0 while a Cell or compiled step runs (GRAPH mode: while it is compiled). A list read through a
# closure: GRAPH mode resolves a patched function's globals in sys.modules["__main__"], the program's.
IN_GRAPH = [0]


def in_graph(fn, *args, **kwargs):
    IN_GRAPH[0] += 1
    try:
        return fn(*args, **kwargs)
    finally:
        IN_GRAPH[0] -= 1


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _initialising():
    """Whether Tensor.normal_/uniform_ is called by one of torch.nn.init's initialisers other than its normal_ and
    uniform_ (kaiming_uniform_, xavier_normal_, trunc_normal_ ... of a plain tensor: vector-quantize-pytorch's
    `t = torch.empty(shape); nn.init.kaiming_uniform_(t)` codebook). Those stay torch's own draws: their
    conversions (_ms_compat.kaiming_uniform_ ...) draw from the initializers' own stream, not the shared one, so
    taking the shared stream's numbers on the torch side alone shifts every later draw (the program's inputs) off
    the converted side's. nn.init.normal_/uniform_ convert to _ms_compat.normal_/uniform_, which draw from the
    shared stream (install_ms), so they draw from it here too."""
    frame, outer = sys._getframe(2), None
    while frame is not None and frame.f_globals.get("__name__") == "torch.nn.init":     # the outermost initialiser
        outer = frame.f_code.co_name
        frame = frame.f_back
    return outer is not None and outer not in ("normal_", "uniform_")


# ------------------------------------------------------------------ torch side
def install_torch():
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.data_speed import allow_synthetic_cifar
    try:
        allow_synthetic_cifar()     # torchvision next to this CPU torch; no md5 check of synthetic CIFAR
    except Exception as e:          # noqa: BLE001 - programs without torchvision still run
        print(f"[runner] torchvision unavailable: {e}", file=sys.stderr)
    _tensorboard_stand_in()
    torch.manual_seed(0)
    if STATE["reference"] in ("float64", "float64-kinks"):
        torch.set_default_dtype(torch.float64)
        _patch(torch, "FloatTensor", torch.DoubleTensor)     # Tensor = torch.FloatTensor (PyTorch-GAN)
        # `torch.from_numpy(x).float()` of float64 data (MorvanZhou's 504_batch_normalization.py): kept float64
        _patch(torch.Tensor, "float", lambda self, *args, **kwargs: self.double(*args, **kwargs))
        # a dataset's float32 arrays made tensors (Prototypical-Networks' load_img: `torch.from_numpy(x)` of a
        # float32 image): float64 as the default dtype (a copy: the array is no longer shared)
        from_numpy = torch.from_numpy
        _patch(torch, "from_numpy", lambda a: from_numpy(a.astype(np.float64) if a.dtype == np.float32 else a))
        # and a DataLoader's batches of float32 arrays (default_collate's torch.as_tensor: Pointnet_Pointnet2's
        # test() fed float32 points to float64 weights)
        as_tensor = torch.as_tensor
        _patch(torch, "as_tensor", lambda a, *args, **kwargs: as_tensor(
            a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 and not args and
            "dtype" not in kwargs else a, *args, **kwargs))
        # and `torch.tensor(array)` of a float32 array without a dtype (pytorch-GAT's node features from a CSR
        # matrix's todense()): float64
        tensor = torch.tensor
        _patch(torch, "tensor", lambda a, *args, **kwargs: tensor(
            a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 and not args and
            "dtype" not in kwargs else a, *args, **kwargs))
    elif STATE["reference"] == "native-kernels":
        _patch(torch.backends.mkldnn, "enabled", False)
    if STATE["reference"] == "float64-kinks":
        replay_kinks(torch, F)

    init = torch.nn.Module.__init__

    forwards = [0]      # module calls under way

    def tracked_init(self, *a, **k):
        init(self, *a, **k)
        if not forwards[0]:     # built inside a forward (gMLP's nn.Sequential(*layers) per call): no model
            INSTANCES.append(self)
        else:                   # its weights drawn from LAYER_DRAWS at its first call
            object.__setattr__(self, "_rw_built_in_forward", True)
    _patch(torch.nn.Module, "__init__", tracked_init)
    setstate = torch.nn.Module.__setstate__

    def tracked_setstate(self, state):
        # copy.deepcopy(model) builds without __init__ (TD3's target networks): a model too, its weights aligned
        setstate(self, state)
        if not forwards[0]:
            INSTANCES.append(self)
    _patch(torch.nn.Module, "__setstate__", tracked_setstate)

    def entered(module, args):
        forwards[0] += 1
        if module.__dict__.pop("_rw_built_in_forward", False):
            # its own parameters only: a container built in forward around existing layers (gMLP's
            # nn.Sequential(*layers) per call) leaves them as they are; a new layer inside it is marked itself
            params = [p for p in module.parameters(recurse=False)]
            with torch.no_grad():
                for p, v in zip(params, drawn_layer_values([tuple(p.shape) for p in params])):
                    if v is not None:
                        p.copy_(torch.from_numpy(v.reshape(tuple(p.shape))).to(p.dtype))

    def left(module, args, output):
        forwards[0] -= 1
    torch.nn.modules.module.register_module_forward_pre_hook(entered)
    torch.nn.modules.module.register_module_forward_hook(left)

    def models():
        if CACHE.get("n") == len(INSTANCES):
            return CACHE["tops"]
        stateful = [m for m in INSTANCES if len(m.state_dict()) > 0]
        tops = _stable_tops(stateful, lambda m: list(m.modules()))
        CACHE.update(n=len(INSTANCES), tops=tops, inside={id(s) for m in tops for s in m.modules()})
        return tops

    def pre_hook(module, args):
        tops = models()
        if id(module) not in CACHE["inside"]:
            return None
        for i, m in enumerate(tops):
            if i < len(STATE["models"]):
                continue
            path = Path(STATE["weights"]) / f"model{i}.npz"
            if STATE["reference"]:      # the plain run's weights (cast to this run's dtypes)
                with np.load(path) as z:
                    m.load_state_dict({k: torch.from_numpy(z[k]) for k in z.files})
            else:
                np.savez(path, **{k: v.detach().cpu().numpy() for k, v in m.state_dict().items()})
            STATE["models"].append({"class": type(m).__name__, "inputs": None})
            STATE["model_objs"].append(m)
        for i, m in enumerate(tops):
            if module is m and STATE["models"][i]["inputs"] is None:
                STATE["models"][i]["inputs"] = [
                    # int(): under torch.jit.trace (SummaryWriter.add_graph) a shape's sizes are tensors
                    {"shape": [int(n) for n in a.shape], "dtype": str(a.dtype).replace("torch.", ""),
                     # integer inputs (token ids): verify draws below the largest value the program passed
                     **({"high": int(a.max()) + 1} if a.dtype in (torch.int32, torch.int64) and a.numel() else {})}
                    if isinstance(a, torch.Tensor) else {"type": type(a).__name__} for a in args]
                if not _takes_positional(m, args):     # `model(x, t, y=y)` (DiT): a global hook sees no keywords
                    STATE["models"][i]["inputs"].append({"type": "keyword arguments"})
                if STATE["capture"] == i:
                    STATE["captured"] = m
                    raise BenchStop()
        return None
    torch.nn.modules.module.register_module_forward_pre_hook(pre_hook)

    backward = torch.Tensor.backward
    pending = []

    def recording_backward(self, *a, **k):
        # backward(gradient) differentiates sum(self * gradient) (WassersteinGAN's `errD_fake.backward(mone)`,
        # wgan-gp's `D_real.backward(mone)`): the value the converted step's loss holds
        gradient = a[0] if a else k.get("gradient")
        value = (self.detach() * gradient.detach() if isinstance(gradient, torch.Tensor)
                 else self.detach()).sum().item()
        _record_loss(value)
        pending.append(value)
        return backward(self, *a, **k)
    _patch(torch.Tensor, "backward", recording_backward)

    # the backward() values summed per optimizer step (dcgan: errD_real.backward(); errD_fake.backward();
    # optimizerD.step(), which the conversion differentiates as one loss)
    def grouped(optimizer, args, kwargs):
        if pending:
            STATE["step_losses"].append(float(sum(pending)))
            # the size of what was summed: WassersteinGAN's critic loss errD_real - errD_fake cancels to 1e-6 of
            # its halves, where float32's rounding of the halves is all the sum holds
            STATE["step_scales"].append(float(sum(abs(v) for v in pending)))
            pending.clear()
    from torch.optim.optimizer import register_optimizer_step_post_hook
    register_optimizer_step_post_hook(grouped)

    def identity(input, *a, **k):
        return input
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        if hasattr(F, name):
            _patch(F, name, identity)
    # attention dropout (nn.MultiheadAttention with need_weights=False) is scaled_dot_product_attention's own
    sdpa = F.scaled_dot_product_attention

    def sdpa_without_dropout(*args, **kwargs):
        if len(args) > 4:
            args = args[:4] + (0.0,) + args[5:]
        kwargs.pop("dropout_p", None)
        return sdpa(*args, **kwargs)
    _patch(F, "scaled_dot_product_attention", sdpa_without_dropout)

    def t(arr, like=None, dtype=None, device=None, requires_grad=False, **_):
        out = torch.from_numpy(np.ascontiguousarray(arr))
        if dtype is not None:
            out = out.to(dtype)
        elif like is not None:
            out = out.to(like.dtype)
        elif out.dtype == torch.float32:    # the default dtype, as torch.randn's (float64 reference runs)
            out = out.to(torch.get_default_dtype())
        # `w = torch.randn(D, H, requires_grad=True)`: a leaf the program differentiates (jcjohnson's autograd/)
        return out.requires_grad_() if requires_grad else out
    _patch(torch, "randn", lambda *s, **k: t(NOISE.standard_normal(_shape(s)).astype(np.float32), **k))
    _patch(torch, "rand", lambda *s, **k: t(NOISE.random_sample(_shape(s)).astype(np.float32), **k))
    _patch(torch, "randn_like", lambda x, **k: t(NOISE.standard_normal(tuple(x.shape)).astype(np.float32), like=x, **k))
    _patch(torch, "rand_like", lambda x, **k: t(NOISE.random_sample(tuple(x.shape)).astype(np.float32), like=x, **k))

    tensor_normal_ = torch.Tensor.normal_

    def aligned_normal_(self, mean=0.0, std=1.0, *, generator=None):
        # a tensor filled with noise (Normal.rsample's `torch.empty(shape).normal_()`, SAC's `self.noise.normal_(0.,
        # std=0.1)`): drawn from the stream; a Parameter's initialisation (nn.init.normal_) stays torch's own
        if isinstance(self, torch.nn.Parameter) or _initialising():
            return tensor_normal_(self, mean, std, generator=generator)
        with torch.no_grad():
            self.copy_(mean + std * t(NOISE.standard_normal(tuple(self.shape)).astype(np.float32), like=self))
        return self
    _patch(torch.Tensor, "normal_", aligned_normal_)
    tensor_uniform_ = torch.Tensor.uniform_

    def aligned_uniform_(self, a=0.0, b=1.0, *, generator=None):
        # a tensor filled with uniform noise (torchattacks' random starts: `torch.empty_like(x).uniform_(-eps, eps)`):
        # drawn from the stream, as normal_ above; a Parameter's initialisation stays torch's own
        if isinstance(self, torch.nn.Parameter) or _initialising():
            return tensor_uniform_(self, a, b, generator=generator)
        with torch.no_grad():
            self.copy_(t(NOISE.uniform(a, b, tuple(self.shape)).astype(np.float32), like=self))
        return self
    _patch(torch.Tensor, "uniform_", aligned_uniform_)

    def normal(mean, std=1.0, size=None, **k):
        # mean + std * z, z of the broadcast shape of the tensor arguments (or size): what ops.normal draws
        k.pop("generator", None)
        shape = _shape((size,)) if size is not None else tuple(torch.broadcast_shapes(
            *(tuple(v.shape) for v in (mean, std) if isinstance(v, torch.Tensor))))
        return mean + std * t(NOISE.standard_normal(shape).astype(np.float32), **k)
    _patch(torch, "normal", normal)

    def randint(*a, size=None, low=None, high=None, **k):
        if high is not None:     # torch.randint(low=..., high=..., size=...) (torchattacks' input diversity)
            low = low if low is not None else (a[0] if len(a) > (1 if size is None else 0) else 0)
        else:
            low, high = (0, a[0]) if len(a) == 1 or (len(a) == 2 and size is None and not isinstance(a[1], int)) \
                else (a[0], a[1])
        if size is None:
            size = a[-1]
        out = torch.from_numpy(NOISE.randint(low, high, _shape((size,))).astype(np.int64))
        return out.to(k["dtype"]) if k.get("dtype") is not None else out
    _patch(torch, "randint", randint)
    torch_randperm = torch.randperm
    _patch(torch, "randperm", lambda n, **k: t(NOISE.permutation(int(n)).astype(np.int64), **k))
    _patch(torch, "multinomial", lambda p, num_samples, replacement=False, **k: torch.from_numpy(
        multinomial_draw(p.detach().double().numpy(), num_samples, replacement)))

    import torch.utils.data as tud

    def sampler_iter(self):
        return iter(_permutation(len(self.data_source)).tolist())
    _patch(tud.RandomSampler, "__iter__", sampler_iter)

    def subset_sampler_iter(self):      # the indices in the same drawn order (recurrent-visual-attention's split)
        return iter([self.indices[i] for i in _permutation(len(self.indices)).tolist()])
    _patch(tud.SubsetRandomSampler, "__iter__", subset_sampler_iter)
    distributed_iter = tud.distributed.DistributedSampler.__iter__

    def distributed_sampler_iter(self):
        # torch's own permutation for seed + epoch (its generator's), which the converted DistributedSampler
        # computes exactly (distributed.py's torch_randperm): not the noise stream patched in above
        patched, torch.randperm = torch.randperm, torch_randperm
        try:
            return distributed_iter(self)
        finally:
            torch.randperm = patched
    _patch(tud.distributed.DistributedSampler, "__iter__", distributed_sampler_iter)
    align_worker_seeds_torch(tud)
    return torch


def _next_base_seed():
    return int(WORKER_BASE_SEEDS.randint(0, 2 ** 62, dtype=np.int64))


def align_worker_seeds_torch(tud):
    """DataLoader workers, torch side: each epoch's base seed from WORKER_BASE_SEEDS (a loader with workers;
    torch draws it from its generator) and each worker's NumPy seed (base seed + worker id) % 2**32, as the
    converted DataLoader seeds it (torch hashes the two: _generate_state), so a dataset's np.random draws
    (Cutout's hole) are the same numbers on both sides; NOISE inside a worker is that worker's stream."""
    from torch.utils.data import dataloader as tdl
    from torch.utils.data._utils import worker as tworker
    base_init = tdl._BaseDataLoaderIter.__init__

    def seeded_init(self, loader, *a, **k):
        base_init(self, loader, *a, **k)
        if loader.num_workers > 0:
            self._base_seed = _next_base_seed()
    _patch(tdl._BaseDataLoaderIter, "__init__", seeded_init)
    _patch(tworker, "_generate_state", lambda base_seed, worker_id: (base_seed + worker_id) % 2 ** 32)

    def worker_seed():
        info = tud.get_worker_info()
        return None if info is None else info.seed
    NOISE.worker_seed = worker_seed


def align_worker_seeds_ms(compat):
    """The converted side of align_worker_seeds_torch: its DataLoader's base seed from WORKER_BASE_SEEDS (it
    seeds each worker's NumPy and Python streams from base seed + worker id itself), NOISE per worker."""
    if hasattr(compat, "_dl_base_seed"):
        _patch(compat, "_dl_base_seed", lambda generator=None: _next_base_seed())
    if hasattr(compat, "_dl_worker_info"):     # (get_worker_info itself is pruned where the program never calls it)
        def worker_seed():
            info = compat._dl_worker_info
            return None if info is None else info.seed
        NOISE.worker_seed = worker_seed


def replay_kinks(torch, F):
    """float64-kinks (the module's docstring): each ReLU call takes the converted run's recorded side."""
    with np.load(STATE["kinks"]) as z:
        KINKS["sides"] = [(tuple(z[f"shape{i}"]), z[f"side{i}"]) for i in range(len(z.files) // 2)]
    relu, relu_ = torch.relu, torch.relu_    # F.relu calls torch.relu: the plain ReLU is torch's own

    def replayed(input, inplace=False):
        i = KINKS["next"]
        if KINKS["mismatch"] or i >= len(KINKS["sides"]):
            KINKS["unreplayed"] += 1
            return relu_(input) if inplace else relu(input)
        KINKS["next"] += 1
        shape, packed = KINKS["sides"][i]
        if tuple(input.shape) != shape:
            KINKS["mismatch"] = f"ReLU call {i}: {tuple(input.shape)} here, {shape} in the converted run"
            return relu_(input) if inplace else relu(input)
        side = torch.from_numpy(np.unpackbits(packed, count=int(np.prod(shape))).reshape(shape).astype(bool))
        x = input.detach()
        differ = side != (x > 0)
        if bool(differ.any()):
            KINKS["differ"] += int(differ.sum())
            KINKS["margin"] = max(KINKS["margin"], float(x.abs()[differ].max() / x.abs().max()))
        mask = side.to(input.dtype)
        return input.mul_(mask) if inplace else input * mask
    _patch(F, "relu", replayed)
    _patch(torch, "relu", replayed)
    _patch(torch.Tensor, "relu", lambda self: replayed(self))


def record_kinks(ms, nn, ops):
    """The converted side's ReLU sides (x > 0), in call order, for a float64-kinks reference run."""
    relu = ops.relu

    def recorded(input):
        KINKS["sides"].append((tuple(input.shape), np.packbits(input.asnumpy() > 0)))
        return relu(input)
    _patch(ops, "relu", recorded)
    _patch(nn.ReLU, "construct", lambda self, x: recorded(x))


def save_kinks(path):
    arrays = {}
    for i, (shape, side) in enumerate(KINKS["sides"]):
        arrays[f"shape{i}"], arrays[f"side{i}"] = np.array(shape, np.int64), side
    np.savez(path, **arrays)


def _tensorboard_stand_in():
    """torch.utils.tensorboard needs the tensorboard package; where it is missing, a SummaryWriter that logs
    nothing stands in (makemore logs its losses through one: nothing the losses depend on)."""
    try:
        import torch.utils.tensorboard  # noqa: F401
        return
    except ImportError:
        pass
    import torch.utils

    class SummaryWriter:
        def __init__(self, log_dir=None, *a, **k):
            self.log_dir = log_dir

        def __getattr__(self, name):     # add_scalar, add_histogram, flush, close...
            return lambda *a, **k: None
    stand_in = types.ModuleType("torch.utils.tensorboard")
    stand_in.SummaryWriter = SummaryWriter
    sys.modules["torch.utils.tensorboard"] = stand_in
    torch.utils.tensorboard = stand_in


# ------------------------------------------------------------------ TensorFlow/Keras side
# Keras models in the order of their first outermost call (both sides): model i starts from DIR/keras{i}.npz, the
# TF side's get_weights() at that call (not model{i}.npz: the MindSpore side's torch loading reads those)
KERAS = {"models": [], "depth": [0]}


def _keras_first_call(model, args, kwargs, save):
    """At a Keras model's first outermost call (outside another model's call), on either side: a call in inference
    mode on the same inputs builds every layer a subclassed model creates at its first call (a dropout-free,
    statistics-free forward: dropout is off, BatchNormalization in inference reads its moving statistics), then
    `save(i, model)` (TF: write get_weights(); MindSpore: set_weights from the file)."""
    if KERAS["depth"][0] or any(model is m for m in KERAS["models"]):
        return
    KERAS["models"].append(model)
    i = len(KERAS["models"]) - 1
    entry = {"class": type(model).__name__, "inputs": None}
    STATE["models"].append(entry)
    KERAS["depth"][0] += 1
    try:
        dry = dict(kwargs)
        if "training" in dry:
            dry["training"] = False
        model(*args, **dry)
    finally:
        KERAS["depth"][0] -= 1
    entry["load"] = save(i, model)


def _keras_call(call, save):
    def first_call_aligned(self, *args, **kwargs):
        _keras_first_call(self, args, kwargs, save)
        KERAS["depth"][0] += 1
        try:
            return call(self, *args, **kwargs)
        finally:
            KERAS["depth"][0] -= 1
    return first_call_aligned


def _fit_in_order(fit):
    """Keras' fit with shuffle off: Keras permutes the arrays each epoch with tf.random.shuffle inside its tf.data
    pipeline, the converted fit with NumPy's generator; both sides read the batches in array order instead."""
    def fit_in_order(self, *args, **kwargs):
        kwargs["shuffle"] = False
        return fit(self, *args, **kwargs)
    return fit_in_order


def install_tf():
    """The original TensorFlow/Keras program (see the module's docstring): functions run eagerly (the first model
    call and each tape's loss are read on the host; a `@tf.function(jit_compile=True)` step runs op by op), Keras'
    dropout layers and keras.random.dropout are identities, fit reads its arrays in order, every
    GradientTape.gradient records the value it differentiates (Keras' own fit differentiates its batch loss with
    one: the per-batch losses), Keras' dataset files are read without their hash check (the data is ours, in the
    real format), and each model's initial weights are written at its first call."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import keras
    keras.utils.set_random_seed(0)
    tf.config.run_functions_eagerly(True)
    from keras.src.layers.regularization import dropout as k_dropout, spatial_dropout
    from keras.src.utils import file_utils

    def identity_call(self, inputs, training=False):
        return inputs
    _patch(k_dropout.Dropout, "call", identity_call)
    _patch(spatial_dropout.BaseSpatialDropout, "call", identity_call)

    def no_dropout(inputs, rate, noise_shape=None, seed=None):
        return inputs
    import keras.src.random.random as k_random
    _patch(k_random, "dropout", no_dropout)
    _patch(keras.random, "dropout", no_dropout)
    _patch(file_utils, "validate_file", lambda fpath, file_hash, algorithm="auto", chunk_size=65535: True)

    if STATE["reference"] == "float64":
        # the float64 reference (--reference float64): Keras computes in float64 (floatx: its layers' weights,
        # and the inputs fit casts to the model's input dtype) from the plain run's weights, loaded, not saved
        keras.config.set_floatx("float64")

    def save(i, model):
        path = Path(STATE["weights"]) / f"keras{i}.npz"
        if STATE["reference"]:
            with np.load(path) as z:
                model.set_weights([z[f"arr_{j}"].astype(np.float64) for j in range(len(z.files))])
            return "loaded"
        np.savez(path, *[np.asarray(w) for w in model.get_weights()])
        return "saved"
    _patch(keras.Model, "__call__", _keras_call(keras.Model.__call__, save))
    _patch(keras.Model, "fit", _fit_in_order(keras.Model.fit))
    gradient = tf.GradientTape.gradient

    def recording_gradient(self, target, *a, **k):
        if tf.executing_eagerly():
            _record_loss(float(sum(float(tf.reduce_sum(t)) for t in tf.nest.flatten(target))))
        return gradient(self, target, *a, **k)
    _patch(tf.GradientTape, "gradient", recording_gradient)


def align_keras_ms(compat):
    """The converted side's Keras helpers as install_tf aligns Keras: each model loads the TF side's initial
    weights (set_weights) at its first outermost call, fit reads its arrays in order (dropout is off through
    ops.dropout, patched in install_ms; the losses are recorded by record_uncompiled_grads, the fit step being
    mindspore.value_and_grad called op by op)."""
    # the dataset files are ours, in Keras' format (install_tf skips Keras' hash check the same way)
    os.environ["MSMIGRATE_KERAS_DATASET_UNCHECKED"] = "1"
    model_cls = getattr(compat, "Model", None)      # the helper's Keras Model class (the namespace may omit it)
    if model_cls is None:
        return

    def load(i, model):
        path = Path(STATE["weights"]) / f"keras{i}.npz"
        if not path.exists():
            return "no TensorFlow weights for this model"
        with np.load(path) as z:
            model.set_weights([z[f"arr_{j}"] for j in range(len(z.files))])
        return "ok"
    _patch(model_cls, "__call__", _keras_call(model_cls.__call__, load))

    def constructing(method):
        # a model's own calls while it is built (a Sequential builds itself by a call on zeros as layers are added)
        # are no first call of the program's
        def built_quietly(self, *args, **kwargs):
            KERAS["depth"][0] += 1
            try:
                return method(self, *args, **kwargs)
            finally:
                KERAS["depth"][0] -= 1
        return built_quietly
    for cls in {model_cls, getattr(compat, "KerasSequential", model_cls)}:
        for name in ("__init__", "build", "add"):
            if name in vars(cls):
                _patch(cls, name, constructing(vars(cls)[name]))
    _patch(model_cls, "fit", _fit_in_order(model_cls.fit))


# ------------------------------------------------------------------ MindSpore side
class _Unimportable:
    """A meta path finder refusing `import torch` (and torchvision/torchaudio): ImportError, as where torch is
    not installed. Not `sys.modules[name] = None`: SciPy's array-API helpers (scipy.stats draws, torchattacks'
    TIFGSM kernel) read sys.modules["torch"] when it is there and fail on a None entry."""
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ImportError(f"No module named {fullname!r} (the converted program must not reach torch)")
        return None


def install_ms(script_dir, mode):
    blocked = [name for name in ("torch", "torchvision", "torchaudio", *(("tensorflow", "keras", "tf_keras")
                                                                        if STATE["original"] == "tf" else ()))
               # converted with the program (--deps, or a stand-in package of the program's own tree written
               # before the conversion: bench/_rw_heldout40.py's small torchvision.models): its copy needs no torch
               if name == "torch" or not any((Path(script_dir) / where / name).is_dir() for where in ("_deps", "."))]
    for name in blocked:
        sys.modules.pop(name, None)
    # the converted program must not reach torch (nor TensorFlow/Keras, where the original is a TF program)
    sys.meta_path.insert(0, _Unimportable(blocked))
    import mindspore as ms
    from mindspore import nn, ops
    ms.set_seed(0)
    if mode != "pynative" and STATE["original"] == "tf":
        # a converted TF/Keras program sets no mode (MindSpore's default, PYNATIVE): its GRAPH run is the program
        # with GRAPH_MODE set first, as a user would set it
        ms.set_context(mode=ms.GRAPH_MODE)
    if mode == "pynative":
        # the program's mode line asks for GRAPH; this run goes op by op so numpy noise can be drawn
        set_context = ms.set_context

        def pynative_context(*a, **k):
            # but a step the converted code compiles in PYNATIVE mode too (compile_step's _in_graph_mode: the
            # gradient of a gradient, wrong op by op) runs in GRAPH mode, as it would in the user's program
            caller = sys._getframe(1)
            if "mode" in k and not (caller.f_code.co_qualname == "_in_mode.<locals>.run"
                                    and caller.f_locals.get("restored") == ms.PYNATIVE_MODE):
                k["mode"] = ms.PYNATIVE_MODE
            return set_context(*a, **k)
        _patch(ms, "set_context", pynative_context)
    if STATE["kinks"]:
        record_kinks(ms, nn, ops)
    sys.path.insert(0, str(script_dir))
    try:
        import _ms_compat
    except ImportError:
        _ms_compat = None
    from msmigrate.weights import load_torch_state_dict

    init = nn.Cell.__init__

    def tracked_init(self, *a, **k):
        init(self, *a, **k)
        if not IN_GRAPH[0]:     # built inside a construct or a step (compiled once in GRAPH mode): no model
            INSTANCES.append(self)
        else:                   # its weights drawn from LAYER_DRAWS at its first call (PYNATIVE), as on torch's side
            object.__setattr__(self, "_rw_built_in_forward", True)
    _patch(nn.Cell, "__init__", tracked_init)
    setstate = nn.Cell.__setstate__

    def tracked_setstate(self, state):     # copy.deepcopy(cell), as on the torch side
        setstate(self, state)
        if not IN_GRAPH[0]:
            INSTANCES.append(self)
    _patch(nn.Cell, "__setstate__", tracked_setstate)

    def is_model(c):
        if hasattr(c, "param_groups") or isinstance(c, nn.Optimizer) or type(c).__name__ == "StepCell":
            return False
        try:
            return len(c.parameters_dict()) > 0
        except Exception:   # noqa: BLE001 - a half-built cell
            return False

    def models():
        if CACHE.get("n") == len(INSTANCES):
            return CACHE["tops"]
        stateful = [c for c in INSTANCES if is_model(c)]
        tops = _stable_tops(stateful, lambda c: [sub for _, sub in c.cells_and_names()])
        CACHE.update(n=len(INSTANCES), tops=tops)
        return tops

    def load_weights():
        tops = models()
        for i, c in enumerate(tops):
            if i < len(STATE["models"]):
                continue
            path = Path(STATE["weights"]) / f"model{i}.npz"
            entry = {"class": type(c).__name__, "inputs": None}
            STATE["models"].append(entry)
            STATE["model_objs"].append(c)
            if not path.exists():
                entry["load"] = "no torch weights for this model"
                continue
            with np.load(path) as z:
                sd = {k: z[k] for k in z.files}
            try:
                load_torch_state_dict(c, sd, strict=True)
            except Exception as first:      # noqa: BLE001 - retried without wrappers' prefixes, else raised
                inner = _unwrapped(sd)
                while inner is not None:
                    try:
                        load_torch_state_dict(c, inner, strict=True)
                        break
                    except Exception:       # noqa: BLE001 - one wrapper fewer
                        inner = _unwrapped(inner)
                if inner is None:
                    raise first from None
            entry["load"] = "ok"

    call = nn.Cell.__call__

    def tracked_call(self, *args, **kwargs):
        load_weights()
        if self.__dict__.pop("_rw_built_in_forward", False):
            params = list(self.get_parameters(expand=False))      # its own, as on the torch side
            for p, v in zip(params, drawn_layer_values([tuple(p.shape) for p in params])):
                if v is not None:
                    p.set_data(ms.Tensor(v.reshape(tuple(p.shape))).astype(p.dtype))
        tops = models()
        for i, c in enumerate(tops):
            if self is c and i < len(STATE["models"]) and STATE["models"][i]["inputs"] is None:
                STATE["models"][i]["inputs"] = [
                    {"shape": list(a.shape), "dtype": str(a.dtype)} if isinstance(a, ms.Tensor)
                    else {"type": type(a).__name__} for a in args]
                if STATE["capture"] == i:
                    STATE["captured"] = c
                    raise BenchStop()
        return in_graph(call, self, *args, **kwargs)
    _patch(nn.Cell, "__call__", tracked_call)

    def identity_construct(self, x):
        return x
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"):
        if hasattr(nn, name):
            getattr(nn, name).construct = identity_construct

    def identity(input, *a, **k):
        return input
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d"):
        if hasattr(ops, name):
            _patch(ops, name, identity)
    # MindSpore's attention dropout (nn.MultiheadAttention, scaled dot-product attention) is its own helper
    from mindspore.ops.function import nn_func
    def no_dropout(x, p, training):     # a def: GRAPH mode parses it (a lambda inside a call it cannot)
        return x
    if hasattr(nn_func, "_inner_dropout"):
        _patch(nn_func, "_inner_dropout", no_dropout)

    def t(arr, like=None, dtype=None, **_):
        out = ms.Tensor(np.ascontiguousarray(arr))
        if dtype is not None:
            out = out.astype(dtype)
        elif like is not None:
            out = out.astype(like.dtype)
        return out
    # GRAPH: a compiled construct or step draws through a side-effect op that calls numpy when it runs
    # PYNATIVE: a step compile_step compiles all the same (a gradient of a gradient through a convolution, which
    # MindSpore computes wrongly op by op: wgan-gp's gan_mnist.py) draws the same way while its graph is built
    compiling = ((_ms_compat._compiling, _ms_compat._draw_probe) if mode == "pynative" and _ms_compat is not None
                 and hasattr(_ms_compat, "_compiling") else None)
    patch_ms_noise(ops, t, graph=mode != "pynative", own=mode == "graph-own-noise", compiling=compiling)

    if _ms_compat is not None and hasattr(_ms_compat, "normal_"):
        own_normal_, host_normal_ = _ms_compat.normal_, _host_normal     # closure names only (see _host_normal)

        def aligned_normal_(param, mean=0.0, std=1.0, generator=None):
            # the torch side's Tensor.normal_ (above): a plain tensor filled outside a compiled graph draws from the
            # stream (inside one, _ms_compat.normal_ draws by ops.standard_normal, replayed from it)
            if isinstance(param, ms.Parameter) or _ms_compat._compiling(_ms_compat._draw_probe):
                return own_normal_(param, mean, std, generator)
            return host_normal_(param, mean, std)
            # (the draw is _host_normal's: a name of this module read here would be looked up in the program's
            # module when a compiled graph holds this function, a NameError naming no line of the program)
        _patch(_ms_compat, "normal_", aligned_normal_)
    if _ms_compat is not None and hasattr(_ms_compat, "uniform_"):
        own_uniform_, host_uniform_ = _ms_compat.uniform_, _host_uniform     # closure names only (see _host_normal)

        def aligned_uniform_(param, a=0.0, b=1.0, generator=None):
            # the torch side's Tensor.uniform_ (above), outside a compiled graph
            if isinstance(param, ms.Parameter) or _ms_compat._compiling(_ms_compat._draw_probe):
                return own_uniform_(param, a, b, generator)
            return host_uniform_(param, a, b)
            # (the draw is _host_uniform's, as normal_'s above)

        _patch(_ms_compat, "uniform_", aligned_uniform_)
    if _ms_compat is not None:
        def sampler_iter(self):
            return iter(_permutation(len(self.data_source)).tolist())
        if hasattr(_ms_compat, "RandomSampler"):
            _patch(_ms_compat.RandomSampler, "__iter__", sampler_iter)

        def subset_sampler_iter(self):
            return iter([self.indices[i] for i in _permutation(len(self.indices)).tolist()])
        if hasattr(_ms_compat, "SubsetRandomSampler"):
            _patch(_ms_compat.SubsetRandomSampler, "__iter__", subset_sampler_iter)
        align_worker_seeds_ms(_ms_compat)
        patch_ms_augmentation(_ms_compat)
        record_uncompiled_grads(ms, load_weights)
        if STATE["original"] == "tf":
            align_keras_ms(_ms_compat)
        tape_backward = getattr(_ms_compat, "tape_backward", None)
        if tape_backward is not None:
            def recording_tape_backward(loss, *a, **k):
                # a backward() of a loss built before its step (taped_backward.py): one loss per backward, as torch's
                if len(STATE["losses"]) >= STATE["limit"]:
                    raise BenchStop()
                gradient = a[0] if a else k.get("gradient")     # the value differentiated, as torch's side
                _record_loss(float((loss * gradient if isinstance(gradient, ms.Tensor) else loss).sum().asnumpy()))
                return tape_backward(loss, *a, **k)
            _patch(_ms_compat, "tape_backward", recording_tape_backward)
        autograd_backward = getattr(_ms_compat, "autograd_backward", None)
        if autograd_backward is not None:
            def recording_autograd_backward(where, receiver, *a, **k):
                # a backward() run by PyNative's autograd (recorded_backward.py): the value torch's side records
                if isinstance(receiver, ms.Tensor):
                    gradient = a[0] if a else k.get("gradient")     # the value differentiated, as torch's side
                    _record_loss(float((receiver * gradient if isinstance(gradient, ms.Tensor) else receiver)
                                       .sum().asnumpy()))
                return autograd_backward(where, receiver, *a, **k)
            _patch(_ms_compat, "autograd_backward", recording_autograd_backward)
        backward_to_grads = getattr(_ms_compat, "backward_to_grads", None)
        if backward_to_grads is not None:
            def recording_backward_to_grads(where, receiver, *a, **k):
                # a backward() of a loss handed to a function (a loss scaler: argument_backward.py), as torch's
                if isinstance(receiver, ms.Tensor):
                    if len(STATE["losses"]) >= STATE["limit"]:
                        raise BenchStop()
                    gradient = a[0] if a else k.get("gradient")     # the value differentiated, as torch's side
                    _record_loss(float((receiver * gradient if isinstance(gradient, ms.Tensor) else receiver)
                                       .sum().asnumpy()))
                return backward_to_grads(where, receiver, *a, **k)
            _patch(_ms_compat, "backward_to_grads", recording_backward_to_grads)
        compile_step = getattr(_ms_compat, "compile_step", None)
        if compile_step is not None:
            def recording_compile_step(step, **options):
                compiled = compile_step(step, **options)

                def run(*args, **kwargs):
                    if len(STATE["losses"]) >= STATE["limit"]:
                        raise BenchStop()
                    load_weights()
                    out = in_graph(compiled, *args, **kwargs)
                    first = out[0] if isinstance(out, (tuple, list)) else out
                    _record_loss(float(first.sum().asnumpy()) if hasattr(first, "asnumpy") else float(first))
                    return out
                return run
            _patch(_ms_compat, "compile_step", recording_compile_step)
    return ms


def record_uncompiled_grads(ms, load_weights):
    """A mindspore.value_and_grad function called outside a compiled step records the value it differentiates
    (the first of `(value, aux...)`): the losses of a program whose update the conversion wrote without a step.
    Inside a step (IN_GRAPH, read where the step is compiled, as eager_draw reads it) it is the plain function.
    Before the call the models built so far load torch's weights, as at a compiled step's call: in GRAPH mode
    the function runs compiled, its Cells' calls never reaching the patched Cell.__call__ (made.py's check
    differentiating `model(xtr)[0, k]` with respect to xtr)."""
    value_and_grad = ms.value_and_grad
    depth = IN_GRAPH

    def recorded(grad, args, kwargs):
        if len(STATE["losses"]) >= STATE["limit"]:
            raise BenchStop()
        load_weights()
        out = grad(*args, **kwargs)
        value = out[0][0] if isinstance(out[0], (tuple, list)) else out[0]
        _record_loss(float(value.sum().asnumpy()))
        return out

    def recording_value_and_grad(fn, *a, **k):
        grad = value_and_grad(fn, *a, **k)
        if depth[0]:
            return grad
        record = recorded

        def run(*args, **kwargs):
            # closure names only: a step compiled with this inside resolves globals in the program's module
            if depth[0]:
                return grad(*args, **kwargs)
            return record(grad, args, kwargs)
        # MindSpore's function as far as the helper's reading of a step goes: the runner's recording (its
        # .asnumpy()) is no host read of the program's (compat_parts/train.py _names_reached stops at MindSpore's
        # functions; as the runner's code, run as __main__, it made wgan-gp's critic step run op by op in GRAPH mode)
        run.__module__ = value_and_grad.__module__
        return run
    _patch(ms, "value_and_grad", recording_value_and_grad)


def _noise_source(op, kind, template, params):
    """Draws of compiled steps (msmigrate.draw_replay): what the torch side's patched function draws, in order."""
    if kind == "normal":
        return NOISE.standard_normal(template.shape).astype(np.float32)
    if kind == "uniform":
        return NOISE.random_sample(template.shape).astype(np.float32)
    if kind == "integer":
        return NOISE.randint(int(params[0]), int(params[1]), template.shape).astype(np.int64)
    if kind == "permutation":       # ops.shuffle(x): x's rows in torch.randperm's order
        return template[NOISE.permutation(template.shape[0])]
    raise RuntimeError(f"the runner has no {kind} stream for {op}")


def multinomial_draw(p, n, replacement):
    """torch.multinomial's / ops.multinomial's indices, by the inverse of the rows' distribution at uniform draws of
    the stream (one per sample: with replacement, or a single sample)."""
    if n > 1 and not replacement:
        raise RuntimeError("the runner draws multinomial samples without replacement one at a time only")
    rows = p.reshape(-1, p.shape[-1])
    cdf = np.cumsum(rows / rows.sum(-1, keepdims=True), -1)
    u = NOISE.random_sample((rows.shape[0], n))
    idx = np.minimum((u[:, :, None] > cdf[:, None, :]).sum(-1), p.shape[-1] - 1)
    return idx.reshape(p.shape[:-1] + (n,)).astype(np.int64)


def patch_ms_noise(ops, t, graph=False, own=False, compiling=None):
    """own: compiled graphs draw with MindSpore's own generator (a pyfunc op cannot run in a graph that holds
    JIT-fallback values: real_world.py reruns such a program so). compiling: PYNATIVE mode's (the helper's
    _compiling and its probe), where a draw inside a graph being compiled is the stream's side-effect op and any
    other is drawn here."""
    import mindspore as ms
    from msmigrate.draw_replay import replay_functions
    compiled = replay_functions(ms, _noise_source) if (graph or compiling) and not own else {}

    def patch(name, draw):
        if not graph and compiling is None:
            _patch(ops, name, draw)
            return
        if not graph:
            is_compiling, probe, inside = *compiling, compiled[name]

            def pynative_draw(*a, **k):
                if is_compiling(probe):
                    return inside(*a, **k)
                return draw(*a, **k)
            _patch(ops, name, pynative_draw)
            return
        inside = getattr(ops, name) if own else compiled[name]
        depth = IN_GRAPH

        def eager_draw(*a, **k):
            # read when a construct/step is compiled (a constant there): a draw from the stream when the
            # compiled graph runs (a side-effect op, in program order); outside graphs, drawn here
            if depth[0]:
                return inside(*a, **k)
            return draw(*a, **k)
        _patch(ops, name, eager_draw)
    patch("randn", lambda *s, **k: t(NOISE.standard_normal(_shape(s)).astype(np.float32), **k))
    patch("rand", lambda *s, **k: t(NOISE.random_sample(_shape(s)).astype(np.float32), **k))
    patch("standard_normal", lambda s, *a, **k: t(NOISE.standard_normal(_shape((s,))).astype(np.float32)))
    patch("randn_like", lambda x, **k: t(NOISE.standard_normal(tuple(x.shape)).astype(np.float32), like=x, **k))
    patch("rand_like", lambda x, **k: t(NOISE.random_sample(tuple(x.shape)).astype(np.float32), like=x, **k))

    # torch.normal converts to ops.normal(shape, mean, stddev): mean + std * z, as the torch side draws it (the
    # replay's normal gives a recorded value, here z: scaled where the step runs)
    if graph and not own:
        replay_normal = compiled["normal"]

        def scaled_normal(shape, mean, stddev, seed=None):
            return mean + stddev * replay_normal(shape, 0.0, 1.0)
        compiled["normal"] = scaled_normal
    patch("normal", lambda shape, mean, stddev, seed=None: mean + stddev * t(
        NOISE.standard_normal(_shape((shape,))).astype(np.float32)))

    own_randint = ops.randint

    def randint(low, high, size, **k):
        if _seed_bookkeeping():
            return own_randint(low, high, size, **k)
        return ms.Tensor(NOISE.randint(low, high, _shape((size,))).astype(np.int64))
    patch("randint", randint)
    # torch.randperm(n) converts to ops.shuffle(ops.arange(n)): the arange in the stream's permutation order
    patch("shuffle", lambda x, seed=None: t(x.asnumpy()[NOISE.permutation(x.shape[0])]))
    own_multinomial = ops.multinomial

    def multinomial(p, num_samples, replacement=True, seed=None):     # outside graphs only (sample.py's loop)
        if IN_GRAPH[0]:
            return own_multinomial(p, num_samples, replacement)
        return ms.Tensor(multinomial_draw(p.asnumpy().astype(np.float64), num_samples, replacement))
    _patch(ops, "multinomial", multinomial)


def _seed_bookkeeping():
    """Whether the draw is the converted torch.get_rng_state's (_ms_compat.get_rng_state draws the seed it
    restarts MindSpore's generators from): torch.get_rng_state draws nothing from the stream, so neither may
    it (else every FakeData image after the first is drawn one number later than torch's)."""
    frame = sys._getframe(2)
    for _ in range(4):      # the patched op, GRAPH runs' eager_draw, the helper
        if frame is None:
            return False
        if frame.f_code.co_name == "get_rng_state" and frame.f_code.co_filename.endswith("_ms_compat.py"):
            return True
        frame = frame.f_back
    return False


def patch_ms_augmentation(compat):
    """Random flips and crops of the converted input pipeline draw what torchvision's draw
    (torch.rand(1) < p; torch.randint(0, h - th + 1, (1,)), then for the width) from the
    runner's stream, in the same order, so both sides augment identically."""
    transforms = getattr(compat, "transforms", None)
    if transforms is not None and hasattr(transforms, "RandomRotation"):
        # torchvision's angle: torch.empty(1).uniform_(lo, hi), which the torch side draws from the stream
        _patch(transforms.RandomRotation, "get_params", staticmethod(
            lambda degrees: float(NOISE.uniform(float(degrees[0]), float(degrees[1]), (1,)).astype(np.float32)[0])))
    if transforms is None:
        return

    def flip(self, img):
        return compat._tv_flip(img, self.axis) if NOISE.random_sample((1,)).astype(np.float32)[0] < self.p \
            else img
    # a helper pruned to what the program uses may have flips only (StarGAN: flip, centre crop, resize), or crops
    # only: each patched where it is
    if hasattr(transforms, "_RandomFlip"):
        _patch(transforms._RandomFlip, "__call__", flip)
    if hasattr(transforms, "RandomResizedCrop"):
        _patch(transforms.RandomResizedCrop, "get_params", staticmethod(
            lambda img, scale, ratio: resized_crop_params(compat, img, scale, ratio)))
    if not hasattr(transforms, "RandomCrop"):
        return

    def crop_params(img, output_size):
        h, w = compat._tv_hw(img if compat._tv_is_pil(img) else compat._tv_unwrap(img)[0])
        th, tw = output_size
        if (h, w) == (th, tw):
            return 0, 0, h, w
        return int(NOISE.randint(0, h - th + 1, (1,))[0]), int(NOISE.randint(0, w - tw + 1, (1,))[0]), th, tw
    _patch(transforms.RandomCrop, "get_params", staticmethod(crop_params))


def resized_crop_params(compat, img, scale, ratio):
    """torchvision's RandomResizedCrop.get_params drawing from the runner's stream as the torch side's does: the
    area and the log aspect ratio by `torch.empty(1).uniform_(lo, hi)` (float32; the log ratio's bounds are
    torch.log of a float32 tensor), the corner by torch.randint; ten tries, then torchvision's centre crop."""
    height, width = compat._tv_hw(img if compat._tv_is_pil(img) else compat._tv_unwrap(img)[0])
    area = height * width
    log_ratio = np.log(np.asarray(ratio, dtype=np.float32))
    for _ in range(10):
        target_area = area * float(NOISE.uniform(scale[0], scale[1], (1,)).astype(np.float32)[0])
        aspect_ratio = float(np.exp(NOISE.uniform(log_ratio[0], log_ratio[1], (1,)).astype(np.float32))[0])
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            return int(NOISE.randint(0, height - h + 1, (1,))[0]), int(NOISE.randint(0, width - w + 1, (1,))[0]), h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def serve_urls():
    """RW_URLS (a JSON file {url: local file}): requests.get of those URLs answers the local file, on both sides
    (nothing can be downloaded here; gcn downloads its dataset on every run). Other URLs are left alone."""
    path = os.environ.get("RW_URLS")
    if not path:
        return
    import requests
    served = json.loads(Path(path).read_text())
    get = requests.get

    def local_get(url, *a, **k):
        if url not in served:
            return get(url, *a, **k)
        response = requests.models.Response()
        response.status_code, response.url = 200, url
        response.raw = open(served[url], "rb")
        return response
    _patch(requests, "get", local_get)


# ------------------------------------------------------------------ running
def own_modules_first(script_dir):
    """A module or package beside the program (a set's stand-in: bench/_rw_heldout26.py's matplotlib) that the
    runner's own imports loaded from elsewhere first (torch.utils.tensorboard imports matplotlib) is dropped from
    sys.modules, so the program imports its own, as it does when it runs alone."""
    script_dir = Path(script_dir).resolve()
    for name in list(sys.modules):
        top = name.split(".")[0]
        if not ((script_dir / top / "__init__.py").exists() or (script_dir / f"{top}.py").exists()):
            continue
        module = sys.modules[name]
        if module is not None and not str(getattr(module, "__file__", None) or "").startswith(str(script_dir)) \
                and not _helper_stand_in(script_dir / f"{top}.py"):
            del sys.modules[name]


def _helper_stand_in(path):
    """Whether PATH is msmigrate's stand-in for the one helper module at the top of the converted tree (a program in
    a directory below it: spro/practical-pytorch's char-rnn-classification/driver.py beside a _ms_compat.py that
    loads ../_ms_compat.py). The module it stands for is the one install_ms patched (compile_step, value_and_grad,
    the samplers, the noise): dropping it made the program import that module again, unpatched, so its steps
    recorded no loss, drew their own noise and, in GRAPH mode, compiled the runner's recording value_and_grad
    (NameError: STATE). The stand-in gives the program the same module object, as it does when it runs alone."""
    try:
        head = path.read_text(errors="replace")[:200]
    except OSError:
        return False
    return head.startswith('"""Small helpers written by msmigrate: this file stands for the one ')


def run_program(side, script, args, cwd, weights, limit, capture=None, mode="pynative", reference=None, kinks=None):
    """Runs the program under the patches; returns the record (and the captured model)."""
    STATE.update(limit=limit, weights=weights, capture=capture, reference=reference, kinks=kinks)
    script = Path(script).resolve()
    random.seed(0)
    np.random.seed(0)
    if side == "torch":
        install_torch()
    elif side == "tf":
        install_tf()
    else:
        install_ms(script.parent, mode)
    serve_urls()
    # rich draws `random.getrandbits(24)` when first imported (rich/style.py): the converted side's installs import
    # it, torch's side only where the program imports something that does (sklearn.datasets next to torch:
    # wgan-gp's gan_toy.py), which shifted its random.choice data against the converted side's. Imported here on
    # both sides, before the seeds.
    try:
        import rich.style  # noqa: F401
    except ImportError:
        pass
    # again: what the installs import may draw from Python's random (torch's side did, 5 numbers), which shifted
    # minimalRL DQN's epsilon-greedy coins against the converted side's
    random.seed(0)
    np.random.seed(0)
    if side == "ms":
        # NumPy is seeded (just above), so the program's np.random numbers are defined: the converted
        # torch.manual_seed (_ms_compat.manual_seed) leaves them where they are, as torch's does
        from mindspore.common import initializer
        vars(initializer).setdefault("_msmigrate_init_stream", {"state": None, "rng": None})["numpy_seeded"] = True
    own_modules_first(script.parent)
    os.chdir(cwd or script.parent)
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.parent))
    status, error = "finished", None
    # run as __main__ in a module of its own (not runpy's temporary one): MindSpore's graph
    # parser resolves a function's globals through sys.modules[fn.__module__]
    module = types.ModuleType("__main__")
    module.__file__ = str(script)
    previous_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        exec(compile(script.read_bytes(), str(script), "exec"), module.__dict__)
    except BenchStop:
        status = "stopped"
    except SystemExit as e:
        if e.code not in (0, None):
            status, error = "error", f"SystemExit({e.code})"
    except BaseException:   # noqa: BLE001 - reported, never swallowed silently
        status = "error"
        # the exception's own first lines (MindSpore puts its message before a long trace) and the tail
        head = "".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip().splitlines()[:3]
        error = "\n".join(head)[:600] + "\n...\n" + traceback.format_exc(limit=-6)[-3000:]
    finally:
        if capture is None:
            sys.modules["__main__"] = previous_main
    record = {"status": status, "error": error, "losses": STATE["losses"], "step_losses": STATE["step_losses"],
              "step_scales": STATE["step_scales"],
              "models": STATE["models"]}
    if kinks and side == "ms":
        save_kinks(kinks)
        record["kinks"] = {"recorded": len(KINKS["sides"])}
    elif kinks:
        record["kinks"] = {k: KINKS[k] for k in ("differ", "margin", "mismatch", "unreplayed")} | {
            "replayed": KINKS["next"], "recorded": len(KINKS["sides"])}
    return record


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--side", choices=("torch", "tf", "ms"), required=True,
                   help="torch or tf: the original program (PyTorch, or TensorFlow/Keras); ms: its conversion")
    p.add_argument("--original", choices=("torch", "tf"), default="torch",
                   help="ms side: the original's framework (tf: tensorflow/keras cannot be imported either, and "
                        "Keras models load the TF side's initial weights with set_weights)")
    p.add_argument("--script", required=True)
    p.add_argument("--record", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--losses", type=int, default=6)
    p.add_argument("--cwd")
    p.add_argument("--mode", choices=("pynative", "graph", "graph-own-noise"), default="pynative",
                   help="MindSpore side: pynative forces op-by-op runs; graph keeps the program's GRAPH mode line "
                        "(compiled draws from the numpy stream too); graph-own-noise: MindSpore's generator in graphs")
    p.add_argument("--reference", choices=REFERENCES,
                   help="torch side: a reference run from the plain run's weights (see the module's docstring)")
    p.add_argument("--kinks", help="ms side (pynative): write its ReLU sides here; torch side with --reference "
                                   "float64-kinks: follow them")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    STATE["original"] = "tf" if a.side == "tf" else a.original
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    Path(a.weights).mkdir(parents=True, exist_ok=True)
    record = run_program(a.side, a.script, args, a.cwd, a.weights, a.losses, mode=a.mode, reference=a.reference,
                         kinks=a.kinks)
    Path(a.record).write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(f"[runner] {a.side}: {record['status']}, {len(record['losses'])} losses", file=sys.stderr)


def _host_normal(param, mean, std):
    """The converted side's _ms_compat.normal_ of a plain tensor outside a compiled graph: drawn from the stream.
    A function of its own, reached from aligned_normal_ (install_ms) through a closure name: when a compiled graph
    holds a call of _ms_compat.normal_ (mlm-pytorch's mask probabilities in its train step), MindSpore parses
    aligned_normal_ whole, both branches, and looks up its global names in sys.modules[__name__], the program's
    module here: `NOISE` written there stopped the GRAPH run with "NameError: The name 'NOISE' is not defined"."""
    import mindspore as ms
    value = ms.Tensor(NOISE.standard_normal(tuple(param.shape)).astype(np.float32)) * std + mean
    param.copy_(value.astype(param.dtype))
    return param


def _host_uniform(param, a, b):
    """_ms_compat.uniform_'s draw of a plain tensor outside a compiled graph, as _host_normal."""
    import mindspore as ms
    value = ms.Tensor(NOISE.uniform(float(a), float(b), tuple(param.shape)).astype(np.float32))
    param.copy_(value.astype(param.dtype))
    return param


if __name__ == "__main__":
    sys.exit(main())
