"""The `heldout37` set of bench/real_world.py (`--set heldout37`): yunjey/pytorch-tutorial's tutorial scripts run
whole, and utkuozbulak/pytorch-cnn-visualizations' gradient and CAM methods driven by programs of ours, converted as
a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout37 [--only yt_cnn,vis_backprop]

- yunjey/pytorch-tutorial (tutorials/): each main.py run whole, its loop constants made small in the torch copy
  before the conversion (`num_epochs` to 1 or a few, the language model's 1000 sampled words to 20), on synthetic
  data laid out where the script reads it (../../data/MNIST/raw idx files, ../../data/cifar-10-batches-py
  pickles, data/train.txt: 2000 words of ours over a 40-word vocabulary). The per-step losses are compared, and the
  accuracy lines each prints (a set's PRINTED). torchvision does not import next to this CPU torch: the torch side
  gets a stand-in of ours (MNIST and CIFAR10 reading those files, the transforms as torchvision computes them,
  utils.save_image), written after the conversion.
  - yt_linear: linear regression (NumPy data, SGD), yt_logistic: logistic regression on MNIST, yt_feedforward:
    a two-layer net on MNIST (Adam), yt_cnn: two convolution blocks with BatchNorm (Adam, eval for the test).
  - yt_resnet: the deep residual network on CIFAR-10 (Pad, RandomHorizontalFlip, RandomCrop: torch draws, matched
    by the runner; the learning-rate update through `param_group['lr']`).
  - yt_rnn, yt_birnn: LSTM classifiers over MNIST rows (2 layers; bidirectional).
  - yt_lm: the LSTM language model (data_utils' Corpus, states detached between steps, clip_grad_norm_, sampling
    with torch.multinomial; words written to sample.txt).
  - yt_gan: the MNIST GAN (two Adam optimizers, reset_grad, denorm, save_image), yt_vae: the VAE
    (reparameterize, BCE + KL, save_image of samples and reconstructions).
- utkuozbulak/pytorch-cnn-visualizations (src/): torchvision's pretrained AlexNet / VGG are replaced by a small
  AlexNet-shaped net of ours (`features` and `classifier` Sequentials, 1000 classes: LRP assumes them), random
  weights from a fixed seed, on a 16x16 image normalized as the repository's preprocess_image does it (a leaf
  requiring grad, made by the driver; preprocess_image itself is run once, `VIS preprocess`, so that its
  `Variable(..., requires_grad=True)` does not stop every method: deep_dream and the class samples call it). Each method's array is
  printed as VALUEs (its sum, its sum weighted by a fixed ramp, its largest magnitude) and a `VIS name ok` line (or
  the error it raised: a PRINTED line compared with torch's, so one method that stops does not hide the others).
  PIL 13 has no `Image.ANTIALIAS` (the CAMs' resize): the driver sets it to `Image.LANCZOS`, its old meaning.
  - vis_backprop: VanillaBackprop (register_backward_hook on the first convolution: grad_in[0], the input's
    gradient), GuidedBackprop (backward hooks on every ReLU that return a changed grad_in, forward hooks keeping
    outputs), grad_times_image, generate_smooth_grad with both (normal_ noise), IntegratedGradients,
    convert_to_grayscale and get_positive_negative_saliency.
  - vis_cam: GradCam, LayerCam (tensor hooks: `x.register_hook` on a layer's output inside the forward loop),
    ScoreCam (F.interpolate of each activation map to 224x224 as a mask, a forward per mask: a 224x224 image
    and the net sized for it), guided_grad_cam.
  - vis_lrp: LRP (deep copies of layers with gamma-rule Parameters, `requires_grad_` on a detached forward output
    and its `.grad` after backward, per layer).
  - vis_optimize: the image-optimisation methods with SGD on the image: ClassSpecificImageGeneration (np.random
    uniform start, 6 iterations), InvertedRepresentation (alpha and total-variation norms, 201 iterations of its
    own) and DeepDream (a forward hook raising to stop the forward at a layer: 250 iterations of its own; the image
    files it reads written by the driver).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

from bench._rw_heldout30 import _TV_DATASETS as _MNIST_STANDIN
from bench._rw_heldout32 import _TV_TRANSFORMS
from bench._rw_heldout34 import _TV_DATASETS as _CIFAR_STANDIN

TUTORIAL = "yunjey+pytorch-tutorial@0500d3df5a2a8080ccfccbc00aca0eacc21818db"
VIS = "utkuozbulak+pytorch-cnn-visualizations@ba22fa07c9f31964e6cfa669e80f3461e11c4ebc"


def _writer(script, patches, mnist=None, cifar=None, words=False):
    """A data writer: on the torch side (written before the conversion) the script's loop constants made small
    (each must be found); on both sides the synthetic data where the script reads it."""
    def write(root):
        root = Path(root)
        prog = root.parent / "x" / "prog"
        prog.mkdir(parents=True, exist_ok=True)
        if mnist:
            from tests.corpus import write_mnist
            write_mnist(root, n_train=mnist[0], n_test=mnist[1])
        if cifar:
            from tests.corpus import write_cifar10
            write_cifar10(root, n_train=cifar[0], n_test=cifar[1])
        if words:
            import numpy as np
            rng = np.random.RandomState(3)
            vocab = [f"w{k}" for k in range(40)]
            lines = [" ".join(rng.choice(vocab, rng.randint(5, 15))) for _ in range(200)]
            (prog / "data").mkdir(exist_ok=True)
            (prog / "data" / "train.txt").write_text("\n".join(lines) + "\n")
        path = prog / script
        if root.parent.name != "torch" or not path.exists():
            return
        text = path.read_text()
        for old, new in patches:
            if old not in text:
                raise RuntimeError(f"{script}: {old!r} not found")
            text = text.replace(old, new)
        path.write_text(text)
    return write


_B = "tutorials/01-basics/"
_I = "tutorials/02-intermediate/"
_A = "tutorials/03-advanced/"
_ONE = [("num_epochs = 5", "num_epochs = 1")]

# (name, directory, patches, MNIST (train, test), CIFAR-10 (train, test), words, loss budget)
_TUTORIALS = [
    ("yt_linear", _B + "linear_regression", [("num_epochs = 60", "num_epochs = 12")], None, None, False, 20),
    ("yt_logistic", _B + "logistic_regression", _ONE, (300, 100), None, False, 6),
    ("yt_feedforward", _B + "feedforward_neural_network", _ONE, (300, 100), None, False, 6),
    ("yt_cnn", _I + "convolutional_neural_network", _ONE, (200, 100), None, False, 6),
    ("yt_resnet", _I + "deep_residual_network", [("num_epochs = 80", "num_epochs = 2")], None, (100, 20), False,
     6),
    ("yt_rnn", _I + "recurrent_neural_network", [("num_epochs = 2", "num_epochs = 1")], (200, 100), None, False, 6),
    ("yt_birnn", _I + "bidirectional_recurrent_neural_network", [("num_epochs = 2", "num_epochs = 1")], (200, 100),
     None, False, 6),
    ("yt_lm", _I + "language_model", [("num_epochs = 5", "num_epochs = 2"), ("num_samples = 1000", "num_samples = 20"),
                                      ("hidden_size = 1024", "hidden_size = 64")], None, None, True, 12),
    ("yt_gan", _A + "generative_adversarial_network", [("num_epochs = 200", "num_epochs = 2")], (200, 16), None,
     False, 12),
    ("yt_vae", _A + "variational_autoencoder", [("num_epochs = 15", "num_epochs = 2")], (256, 16), None, False, 12),
]

_VIS_FILES = ",".join("src/" + f for f in (
    "misc_functions.py", "vanilla_backprop.py", "guided_backprop.py", "smooth_grad.py", "integrated_gradients.py",
    "grad_times_image.py", "gradcam.py", "layercam.py", "scorecam.py", "guided_gradcam.py", "LRP.py",
    "generate_class_specific_samples.py", "inverted_representation.py", "deep_dream.py"))

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, TUTORIAL, path, "main.py", [], _writer("main.py", patches, mnist, cifar, words))
            for name, path, patches, mnist, cifar, words, _ in _TUTORIALS] + [
    (name, VIS, _VIS_FILES, "driver.py", [], None) for name in ("vis_backprop", "vis_cam", "vis_lrp",
                                                                  "vis_optimize")]

DEPS: dict = {}

# torchvision does not import next to this CPU torch: the torch side's stand-in (ours), written after the conversion
_TV_MORE = '''


class Pad:
    def __init__(self, padding):
        self.padding = padding

    def __call__(self, picture):
        return ImageOps.expand(picture, border=(self.padding,) * 4, fill=(0,) * len(picture.getbands()))


class _ToTensorAnyChannels(ToTensor):
    def __call__(self, picture):
        pixels = np.array(picture, np.uint8, copy=True)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        return torch.from_numpy(pixels).permute(2, 0, 1).contiguous().to(torch.get_default_dtype()).div(255)


ToTensor = _ToTensorAnyChannels
'''

_TV_UTILS = '''
"""A stand-in written by bench/_rw_heldout37.py: save_image as torchvision's grid (padding 2, 8 a row)."""
import torch
from PIL import Image


def save_image(tensor, fp, nrow=8, padding=2, pad_value=0.0):
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    if tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    n = tensor.size(0)
    cols = min(nrow, n)
    rows = (n + cols - 1) // cols
    h, w = tensor.size(2) + padding, tensor.size(3) + padding
    grid = tensor.new_full((3, h * rows + padding, w * cols + padding), pad_value)
    for k in range(n):
        r, c = divmod(k, cols)
        grid[:, r * h + padding:(r + 1) * h, c * w + padding:(c + 1) * w] = tensor[k]
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    Image.fromarray(ndarr).save(fp)
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout37.py."""\nfrom . import datasets, '
                               'transforms, utils, models\n',
    "torchvision/datasets.py": _MNIST_STANDIN.replace("import os", "import os\nimport pickle\n\nfrom PIL import "
                                                      "Image", 1)
    + _CIFAR_STANDIN.split("class CIFAR10:", 1)[1].join(["\n\nclass CIFAR10:", ""]).split("class ImageFolder")[0],
    "torchvision/transforms.py": _TV_TRANSFORMS + _TV_MORE,
    "torchvision/utils.py": _TV_UTILS,
    "torchvision/models.py": '"""A stand-in written by bench/_rw_heldout37.py (nothing here is called)."""\n',
}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

LOSSES = {name: budget for name, *_, budget in _TUTORIALS}
LOSSES.update({"vis_backprop": 100, "vis_cam": 100, "vis_lrp": 100, "vis_optimize": 600})

# the accuracy lines; the methods' outcomes (ok, or the error raised)
PRINTED = {name: r"^(?:Accuracy|Test Accuracy).*$" for name, *_ in _TUTORIALS}
PRINTED.update({name: r"^VIS .*$" for name in ("vis_backprop", "vis_cam", "vis_lrp", "vis_optimize")})

_SETUP = '''
import numpy as np
import torch
import torch.nn as nn
from PIL import Image

if not hasattr(Image, "ANTIALIAS"):      # PIL >= 10 removed the alias; its meaning was LANCZOS
    Image.ANTIALIAS = Image.LANCZOS

from misc_functions import preprocess_image, convert_to_grayscale, get_positive_negative_saliency

torch.manual_seed(0)


class SmallAlexNet(nn.Module):
    """AlexNet's layout (features, classifier of 1000 classes), small."""
    def __init__(self, size):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 12, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(12, 16, 3, padding=1), nn.ReLU())
        self.classifier = nn.Sequential(nn.Dropout(), nn.Linear(16 * (size // 4) ** 2, 32), nn.ReLU(), nn.Linear(32, 1000))

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.view(x.size(0), -1))


def fresh(size=16):
    torch.manual_seed(0)
    return SmallAlexNet(size).eval()


rng = np.random.RandomState(0)
picture = Image.fromarray(rng.randint(0, 256, (16, 16, 3)).astype(np.uint8))
large = Image.fromarray(rng.randint(0, 256, (224, 224, 3)).astype(np.uint8))     # ScoreCam's masks are 224x224
target = 7


_MEAN, _STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def image(of=picture):
    """the image as preprocess_image makes it (a leaf that requires grad), made here: the repository's
    preprocess_image is run once on its own (`VIS preprocess`), so that a method is not stopped by it"""
    normed = ((np.asarray(of, np.float32) / 255 - _MEAN) / _STD).transpose(2, 0, 1).astype(np.float32)
    return torch.from_numpy(normed).unsqueeze(0).requires_grad_(True)


def report(name, arr):
    arr = np.asarray(arr, dtype=np.float64)
    ramp = np.linspace(0.5, 1.5, arr.size).reshape(arr.shape)
    print("VALUE", name + "_sum", float(arr.sum()))
    print("VALUE", name + "_ramp", float((arr * ramp).sum()))
    print("VALUE", name + "_max", float(np.abs(arr).max()))
    print("VIS", name, "shape", tuple(arr.shape))


def _preprocessed():
    made = preprocess_image(picture, resize_im=False)
    return np.concatenate([made.detach().numpy().ravel(), [float(made.requires_grad)]])


def run(name, make):
    """one method's VALUEs, or the error it raised (a PRINTED line, compared with torch's)"""
    try:
        out = make()
    except Exception as e:
        print("VIS", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return None
    print("VIS", name, "ok")
    if out is not None:
        report(name, out)
    return out


run("preprocess", _preprocessed)
'''

# Drivers: our own code, through the repository's modules.
DRIVERS = {
    "vis_backprop": _SETUP + '''
from vanilla_backprop import VanillaBackprop
from guided_backprop import GuidedBackprop
from smooth_grad import generate_smooth_grad
from integrated_gradients import IntegratedGradients

vanilla = run("vanilla", lambda: VanillaBackprop(fresh()).generate_gradients(image(), target))
if vanilla is not None:
    run("vanilla_gray", lambda: convert_to_grayscale(vanilla))
    run("grad_times_image", lambda: vanilla * image().detach().numpy()[0])
guided = run("guided", lambda: GuidedBackprop(fresh()).generate_gradients(image(), target))
if guided is not None:
    run("guided_positive", lambda: get_positive_negative_saliency(guided)[0])
    run("guided_negative", lambda: get_positive_negative_saliency(guided)[1])
run("smooth_vanilla", lambda: generate_smooth_grad(VanillaBackprop(fresh()), image(), target, 3, 4))
run("smooth_guided", lambda: generate_smooth_grad(GuidedBackprop(fresh()), image(), target, 3, 4))
run("integrated", lambda: IntegratedGradients(fresh()).generate_integrated_gradients(image(), target, 5))
''',
    "vis_cam": _SETUP + '''
from gradcam import GradCam
from layercam import LayerCam
from scorecam import ScoreCam
from guided_backprop import GuidedBackprop
from guided_gradcam import guided_grad_cam

gradcam = run("gradcam", lambda: GradCam(fresh(), target_layer=6).generate_cam(image(), target))
run("gradcam_argmax", lambda: GradCam(fresh(), target_layer=3).generate_cam(image()))
run("layercam", lambda: LayerCam(fresh(), target_layer=7).generate_cam(image(), target))
run("scorecam", lambda: ScoreCam(fresh(224), target_layer=6).generate_cam(image(large), target))
if gradcam is not None:
    run("guided_gradcam", lambda: guided_grad_cam(gradcam, GuidedBackprop(fresh()).generate_gradients(image(),
                                                                                                        target)))
''',
    "vis_lrp": _SETUP + '''
from LRP import LRP


def relevance():
    per_layer = LRP(fresh()).generate(image(), target)
    for k, layer in enumerate(per_layer):
        if layer is not None:
            report("lrp_layer%d" % k, layer.numpy())
    return per_layer[1].numpy()


run("lrp", relevance)
''',
    "vis_optimize": _SETUP + '''
import os

from generate_class_specific_samples import ClassSpecificImageGeneration
from inverted_representation import InvertedRepresentation
from deep_dream import DeepDream


def class_sample():
    np.random.seed(1)
    gen = ClassSpecificImageGeneration(fresh(), target)
    gen.created_image = np.uint8(np.random.uniform(0, 255, (16, 16, 3)))
    return gen.generate(iterations=6).detach().numpy()


run("class_sample", class_sample)
run("inverted", lambda: InvertedRepresentation(fresh()).generate_inverted_image_specific_layer(image(), 16, 4))

os.makedirs("../input_images", exist_ok=True)
picture.save("../input_images/tree.png")


def dream():
    dd = DeepDream(fresh().features, 6, 3, "../input_images/tree.png")
    dd.dream()
    return np.asarray(dd.created_image)


run("deep_dream", dream)
''',
}

FILES: dict = {}
