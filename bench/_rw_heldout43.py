"""The `heldout43` set of bench/real_world.py (`--set heldout43`): kazuto1011/grad-cam-pytorch's grad_cam.py and
Lyken17/pytorch-OpCounter's thop package, converted as a new user would convert them, driven by programs of ours
that import their modules.

    python bench/real_world.py --mirrors /work/.mirror --set heldout43 [--only gc_backprop,thop_cnn]

grad_cam.py imports Sequence from collections, which Python 3.10+ no longer offers there: the drivers set
`collections.Sequence = collections.abc.Sequence` first (both sides). main.py (click, cv2, torchvision's
pretrained models) is not converted; the drivers do what its demo1/demo3 do on a small CNN of ours (two
convolutions with ReLU modules, max pooling, an adaptive average pool and a Linear head; 5 classes, two random
3x12x12 images), each method's outcome a PRINTED `GC name ok` line (or the error it raised), so one method that
stops does not hide the others.

- gc_backprop: BackPropagation: forward (requires_grad_ on the images, softmax, sort), for the top-2 classes
  backward of a one-hot (the logits' backward with it as the gradient, the graph retained, after zero_grad()) and
  generate (the images' `.grad`, cloned, then zeroed). VALUEs: the probabilities, the ids, each gradient map's
  sum and absolute sum.
- gc_guided: GuidedBackPropagation (a backward hook on every module that returns `F.relu(grad_in[0])` for the ReLU
  modules) and Deconvnet (the same returning `F.relu(grad_out[0])`), forward/backward/generate for the top-2
  classes, then remove_hook. VALUEs: the maps' sums and absolute sums.
- gc_gradcam: GradCAM with candidate layers (the second convolution and the ReLU after it: a forward hook keeping
  the detached output, a backward hook keeping the detached grad_out[0]), generate for each layer and the top-2
  classes (weights by adaptive average pooling, ReLU, bilinear upsampling, per-image min-max), and guided
  Grad-CAM (GuidedBackPropagation's map times the region). VALUEs: the regions' sums, their value at a pixel.
- gc_occlusion: occlusion_sensitivity (patch 5, stride 2, batches of 8: F.pad with the mean, the patched copies
  written by slicing, the scores gathered at the ids, torch.split; it turns gradients off globally). VALUEs: the
  sensitivity maps' sums, absolute sums and one entry.
- thop_cnn: thop.profile (register_buffer of float64 counters on every module through Module.apply, forward hooks
  counting per layer type and parameters, dfs_count over named_children, the buffers popped afterwards) on a CNN
  of ours (Conv2d with and without bias, grouped, BatchNorm2d, ReLU, LeakyReLU, MaxPool2d, AvgPool2d,
  AdaptiveAvgPool2d, Upsample, Dropout, Linear, Softmax) with ret_layer_info and custom_ops for a module of ours,
  profile_origin on the same network, clever_format. VALUEs: the MACs and parameters of each call, the per-layer
  counts, the formatted strings as PRINTED lines; the network's output after profiling (the hooks removed).
- thop_rnn: thop.profile on RNN, GRU, LSTM (two layers, bidirectional, batch_first) and the RNNCell, GRUCell,
  LSTMCell. VALUEs: each model's MACs and parameters.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

GC = "kazuto1011+grad-cam-pytorch@fd10ff7fc85ae064938531235a5dd3889ca46fed"
THOP = "Lyken17+pytorch-OpCounter@43c064afb71383501e41eaef9e8c8407265cf77f"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    (name, GC, "grad_cam.py", "driver.py", [], None)
    for name in ("gc_backprop", "gc_guided", "gc_gradcam", "gc_occlusion")
] + [(name, THOP, "thop", "driver.py", [], None) for name in ("thop_cnn", "thop_rnn")]

DEPS: dict = {}

LOSSES = {name: 100 for name in ("gc_backprop", "gc_guided", "gc_gradcam", "gc_occlusion")}

PRINTED = {name: r"^GC .*$" for name in ("gc_backprop", "gc_guided", "gc_gradcam", "gc_occlusion")}
PRINTED.update({name: r"^THOP .*$" for name in ("thop_cnn", "thop_rnn")})

_GC_SETUP = '''
import collections
import collections.abc

collections.Sequence = collections.abc.Sequence     # grad_cam.py's import, gone since Python 3.10

import torch
import torch.nn as nn

import grad_cam

torch.manual_seed(0)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.head = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


model = TinyNet().eval()
images = torch.randn(2, 3, 12, 12)


def show(name, t):
    print("VALUE", name + "_sum", float(t.sum()))
    print("VALUE", name + "_abs", float(t.abs().sum()))


def method(name, fn):
    """one method's VALUEs, or the error it raised (a PRINTED line, compared with torch's)"""
    try:
        fn()
    except Exception as e:
        print("GC", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return
    print("GC", name, "ok")


def maps_of(cls, name):
    explainer = cls(model=model)
    probs, ids = explainer.forward(images.clone())
    for k in range(2):
        explainer.backward(ids=ids[:, [k]])
        show(name + str(k), explainer.generate())
    explainer.remove_hook()
    return probs, ids
'''

DRIVERS = {
    "gc_backprop": _GC_SETUP + '''

def vanilla():
    probs, ids = maps_of(grad_cam.BackPropagation, "bp")
    print("VALUE probs_top", float(probs[:, 0].sum()))
    print("VALUE ids", float(ids.float().mul(torch.arange(1.0, 6.0)).sum()))


method("backprop", vanilla)
''',
    "gc_guided": _GC_SETUP + '''
method("guided", lambda: maps_of(grad_cam.GuidedBackPropagation, "guided"))
method("deconv", lambda: maps_of(grad_cam.Deconvnet, "deconv"))
''',
    "gc_gradcam": _GC_SETUP + '''

def cams():
    cam_maker = grad_cam.GradCAM(model, candidate_layers=["features.3", "features.4"])
    _, top = cam_maker.forward(images.clone())
    guide = grad_cam.GuidedBackPropagation(model)
    guide.forward(images.clone())
    for k in range(2):
        cam_maker.backward(ids=top[:, [k]])
        guide.backward(ids=top[:, [k]])
        guided = guide.generate()
        for layer in ("features.3", "features.4"):
            region = cam_maker.generate(target_layer=layer)
            show("cam" + str(k) + layer, region)
            print("VALUE px" + str(k) + layer, float(region[1, 0, 5, 7]))
            show("ggcam" + str(k) + layer, guided * region)
    guide.remove_hook()
    cam_maker.remove_hook()


method("gradcam", cams)
''',
    "gc_occlusion": _GC_SETUP + '''

def occlusion():
    with torch.no_grad():
        ids = model(images).argsort(dim=1, descending=True)
    for k in range(2):
        maps = grad_cam.occlusion_sensitivity(model, images, ids[:, [k]], patch=5, stride=2, n_batches=8)
        show("occ" + str(k), maps)
        print("VALUE occ_px" + str(k), float(maps[0, 2, 3]))


method("occlusion", occlusion)
''',
}

_THOP_SETUP = '''
import torch
import torch.nn as nn

from thop import clever_format, profile, profile_origin

torch.manual_seed(0)


def counted(name, model, inputs, **kw):
    """thop's counts for one model (a PRINTED line with the formatted counts, or the error it raised)"""
    try:
        res = profile(model, inputs=inputs, verbose=False, **kw)
    except Exception as e:
        print("THOP", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return None
    macs, params = res[0], res[1]
    print("VALUE", name + "_macs", float(macs))
    print("VALUE", name + "_params", float(params))
    print("THOP", name, *clever_format([macs, params], "%.3f"))
    return res
'''

DRIVERS.update({
    "thop_cnn": _THOP_SETUP + '''


class Scale(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1, c, 1, 1))

    def forward(self, x):
        return x * self.w


def count_scale(m, x, y):
    m.total_ops += y.numel()


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=4), nn.LeakyReLU(0.1), nn.MaxPool2d(2),
                                   Scale(8), nn.AvgPool2d(2), nn.Upsample(scale_factor=2, mode="nearest"))
        self.pool = nn.AdaptiveAvgPool2d(3)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(8 * 3 * 3, 6)
        self.soft = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.pool(self.block(self.stem(x)))
        return self.soft(self.fc(self.drop(x.flatten(1))))


net = SmallCNN()
x = torch.randn(2, 3, 8, 8)
res = counted("cnn", net, (x,), custom_ops={Scale: count_scale}, ret_layer_info=True)
if res is not None:
    for key, (n_ops, params, inner) in res[2].items():
        print("VALUE layer_" + key + "_ops", float(n_ops))
        print("VALUE layer_" + key + "_params", float(params))
        for sub, (sops, sparams, _) in inner.items():
            print("VALUE layer_" + key + sub + "_ops", float(sops))
counted("linear", nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2)), (torch.randn(3, 5),))
try:
    macs, params = profile_origin(SmallCNN(), inputs=(x,), verbose=False)
    print("VALUE origin_macs", float(macs))
    print("VALUE origin_params", float(params))
    print("THOP origin", *clever_format([macs, params]))
except Exception as e:
    print("THOP origin raised", type(e).__name__, str(e).split(" (")[0][:120])
print("THOP formats", clever_format(123.0), clever_format([4.5e3, 6.7e6, 8.9e9, 1.2e13], "%.1f"))
print("VALUE buffers", float(len(list(net.buffers()))))
print("VALUE out", float(net(x).sum()))
print("VALUE train_mode", float(net.training))
''',
    "thop_rnn": _THOP_SETUP + '''
seq = torch.randn(2, 4, 3)
counted("rnn", nn.RNN(3, 5, num_layers=2, batch_first=True), (seq,))
counted("gru", nn.GRU(3, 5, bidirectional=True, batch_first=True), (seq,))
counted("lstm", nn.LSTM(3, 5, num_layers=2, bidirectional=True, batch_first=True), (seq,))
counted("lstm_nobias", nn.LSTM(3, 4, bias=False), (seq.transpose(0, 1),))
counted("rnn_cell", nn.RNNCell(3, 5), (seq[:, 0],))
counted("gru_cell", nn.GRUCell(3, 5), (seq[:, 0],))
counted("lstm_cell", nn.LSTMCell(3, 5), (seq[:, 0],))
''',
})
