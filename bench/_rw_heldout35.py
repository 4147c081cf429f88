"""The `heldout35` set of bench/real_world.py (`--set heldout35`): jacobgil/pytorch-grad-cam, the
pytorch_grad_cam package converted as a new user would convert it, driven by programs of ours that import it.

    python bench/real_world.py --mirrors /work/.mirror --set heldout35 [--only cam_gradient,cam_forward_only]

The package reads a layer's activations through `register_forward_hook` and its gradient through a tensor hook
(`output.register_hook`) registered in that forward hook, calls `backward(retain_graph=True)` on the sum of the
targets' scores, then computes the heatmaps in NumPy and resizes them with OpenCV (`cv2.resize`); it imports ttach
(test-time augmentation, a small torch library: converted with it, DEPS), scikit-learn (KernelPCA), SciPy and
tqdm. OpenCV, ttach and scikit-learn are not in the project's venv: the set runs under a bench venv that has them
(`opencv-python-headless<4.11` for numpy<2, `ttach`, `scikit-learn`; see docs/benchmarks.md's heldout35 section).
torchvision does not import next to this CPU torch: the torch side gets a stand-in of ours with the names the
package reads at import (nothing of it called), written after the conversion.

The model is a small CNN of ours (two convolution blocks with BatchNorm and ReLU, max pooling, adaptive average
pooling, a linear head of 5 classes), eval mode, on 2 random 3x16x16 images. Every CAM's heatmap (a NumPy array)
is printed as VALUEs: its sum, its sum weighted by a fixed ramp over its pixels (a heatmap moved or mirrored
changes it), its largest value and its shape; and a `CAM name ok` line (or the error it raised, a PRINTED line
compared with torch's, so one variant that stops does not hide the others).

- cam_gradient: the gradient-weighted variants on the second convolution: GradCAM, HiResCAM, GradCAMElementWise,
  XGradCAM, GradCAMPlusPlus, LayerCAM, EigenGradCAM, GradCAM with eigen_smooth, GradCAM on two target layers (the
  first convolution too: two hooks, gradients listed in reverse order), GradCAM with targets=None (the argmax
  class) and with ClassifierOutputSoftmaxTarget, and GradCAM with aug_smooth (ttach's flips and multiplies).
- cam_forward_only: variants without gradients: EigenCAM, KPCA_CAM, ScoreCAM (the activations upsampled as
  masks, a forward per mask under no_grad), AblationCAM (the target layer swapped for AblationLayer, a batched
  forward per ablated channel).
- cam_input_grad: FullGrad (every Conv2d and BatchNorm2d bias layer hooked, the gradient of the input),
  GuidedBackpropReLUModel (the ReLUs swapped for a torch.autograd.Function with its own backward, the input's
  gradient read after backward), and ShapleyCAM (detach=False: torch.autograd.grad with create_graph and a
  Hessian-vector product of the hooked gradient).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

GRADCAM = "jacobgil+pytorch-grad-cam@084273b3f30b54ad0c64cf8020a4337d979a66e0"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, GRADCAM, "pytorch_grad_cam", "driver.py", [], None)
            for name in ("cam_gradient", "cam_forward_only", "cam_input_grad")]

DEPS = {name: ["ttach"] for name, *_ in PROGRAMS}

FILES: dict = {}

# every CAM's backward is a recorded loss on the torch side: no stop before the end
LOSSES = {name: 200 for name, *_ in PROGRAMS}

# each variant's outcome (ok, or the error it raised) as torch's
PRINTED = {name: r"^CAM .*$" for name, *_ in PROGRAMS}

# torchvision does not import next to this CPU torch: a stand-in for the torch side, after the conversion
_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout35.py."""\nfrom . import transforms, '
                               'ops\n',
    "torchvision/ops.py": '"""A stand-in written by bench/_rw_heldout35.py (nothing here is called)."""\n',
    "torchvision/transforms.py": '"""A stand-in written by bench/_rw_heldout35.py (nothing here is called)."""\n\n'
                                 '\nclass Compose:\n    pass\n\n\nclass Normalize:\n    pass\n\n\n'
                                 'class ToTensor:\n    pass\n',
}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

_SETUP = '''
import numpy as np
import torch
import torch.nn as nn

from pytorch_grad_cam import (GradCAM, HiResCAM, GradCAMElementWise, XGradCAM, GradCAMPlusPlus, LayerCAM,
                              EigenGradCAM, EigenCAM, KPCA_CAM, ScoreCAM, AblationCAM, FullGrad,
                              GuidedBackpropReLUModel, ShapleyCAM)
from pytorch_grad_cam.utils import model_targets as mt

torch.manual_seed(0)


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2))
        self.block2 = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = self.block2(self.block1(x))
        return self.fc(self.pool(h).flatten(1))


net = TinyNet()
with torch.no_grad():    # BatchNorm statistics of ours, so that eval mode is not the identity
    for layer in net.modules():
        if isinstance(layer, nn.BatchNorm2d):
            layer.running_mean.copy_(torch.linspace(-0.2, 0.3, 6))
            layer.running_var.copy_(torch.linspace(0.5, 1.5, 6))
net.eval()
images = torch.rand(2, 3, 16, 16)
wanted = [mt.ClassifierOutputTarget(c) for c in (1, 3)]


def report(name, cam):
    cam = np.asarray(cam, dtype=np.float64)
    ramp = np.linspace(0.5, 1.5, cam.size).reshape(cam.shape)
    print("VALUE", name + "_sum", float(cam.sum()))
    print("VALUE", name + "_ramp", float((cam * ramp).sum()))
    print("VALUE", name + "_max", float(cam.max()))
    print("CAM", name, "shape", tuple(cam.shape))


def run(name, make, **call):
    """one variant's VALUEs, or the error it raised (a PRINTED line, compared with torch's)"""
    try:
        cam = make()(**call)
    except Exception as e:
        print("CAM", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return None
    print("CAM", name, "ok")
    report(name, cam)
    return cam
'''

_LAYER = "[net.block2[0]]"

# Drivers: our own code, through the repository's package.
DRIVERS = {
    "cam_gradient": _SETUP + f'''
for label, cls in [("gradcam", GradCAM), ("hirescam", HiResCAM), ("elementwise", GradCAMElementWise),
                   ("xgradcam", XGradCAM), ("gradcam_pp", GradCAMPlusPlus), ("layercam", LayerCAM),
                   ("eigengradcam", EigenGradCAM)]:
    run(label, lambda: cls(model=net, target_layers={_LAYER}), input_tensor=images, targets=wanted)
run("gradcam_eigen_smooth", lambda: GradCAM(model=net, target_layers={_LAYER}), input_tensor=images,
    eigen_smooth=True, targets=wanted)
run("gradcam_two_layers", lambda: GradCAM(model=net, target_layers=[net.block1[0], net.block2[0]]),
    input_tensor=images, targets=wanted)
run("gradcam_argmax", lambda: GradCAM(model=net, target_layers={_LAYER}), input_tensor=images, targets=None)
run("gradcam_softmax", lambda: GradCAM(model=net, target_layers={_LAYER}), input_tensor=images,
    targets=[mt.ClassifierOutputSoftmaxTarget(c) for c in (2, 4)])
run("gradcam_aug_smooth", lambda: GradCAM(model=net, target_layers={_LAYER}), input_tensor=images,
    targets=wanted, aug_smooth=True)
''',
    "cam_forward_only": _SETUP + f'''
run("eigencam", lambda: EigenCAM(model=net, target_layers={_LAYER}), input_tensor=images, targets=wanted)
run("kpca_cam", lambda: KPCA_CAM(model=net, target_layers={_LAYER}), input_tensor=images, targets=wanted)
def score_cam():
    cam = ScoreCAM(model=net, target_layers={_LAYER})
    cam.batch_size = 4
    return cam
run("scorecam", score_cam, input_tensor=images, targets=wanted)
run("ablationcam", lambda: AblationCAM(model=net, target_layers={_LAYER}, batch_size=4), input_tensor=images,
    targets=wanted)
''',
    "cam_input_grad": _SETUP + f'''
run("fullgrad", lambda: FullGrad(model=net, target_layers=[]), input_tensor=images, targets=wanted)
guided = GuidedBackpropReLUModel(net, device="cpu")
run("guided_backprop", lambda: guided, input_img=images[:1], target_category=2)
run("shapleycam", lambda: ShapleyCAM(model=net, target_layers={_LAYER}), input_tensor=images, targets=wanted)
''',
}
