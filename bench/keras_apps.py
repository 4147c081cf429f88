"""Convert keras.applications architectures (weights=None, random weights and BN statistics) with
``msmigrate keras`` and compare the MindSpore model with Keras on the same input, PyNative and GRAPH mode.

    python bench/keras_apps.py [NAME ...] [--size N] [--batch B]

One row per architecture: layers, convert seconds (model.py + ckpt), max|d| per mode, pass per mode; then pass
counts. Pass: max|d| <= 1e-4 * max(1, max|y|) on the logits (classifier_activation=None).
Keras runs with the torch backend (KERAS_BACKEND=torch); the MindSpore side runs in a process that never
imports keras or torch.
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "torch")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def _nasnet_mobile(**kw):
    # keras refuses NASNetMobile under the torch backend because its AveragePooling2D 'same' with asymmetric
    # padding pads by replication and counts the pad (TF excludes it). Build the same network through
    # keras.src.applications.nasnet.NASNet at an input size where every 'same' average pool pads symmetrically,
    # so Keras-torch computes TF's numbers (the converted model implements TF's semantics everywhere).
    from keras.src.applications import nasnet

    return nasnet.NASNet(kw.pop("input_shape"), penultimate_filters=1056, num_blocks=4, stem_block_filters=32,
                         skip_reduction=False, filter_multiplier=2, default_size=224, **kw)


def architectures():
    import keras

    A = keras.applications
    return {  # name: (builder, input size)
        "ResNet50": (A.ResNet50, 64),
        "MobileNetV2": (A.MobileNetV2, 64),
        "MobileNetV3Small": (A.MobileNetV3Small, 64),
        "EfficientNetB0": (A.EfficientNetB0, 64),
        "DenseNet121": (A.DenseNet121, 64),
        "VGG16": (A.VGG16, 64),
        "InceptionV3": (A.InceptionV3, 75),
        "Xception": (A.Xception, 71),
        "ConvNeXtTiny": (A.ConvNeXtTiny, 64),
        "NASNetMobile": (_nasnet_mobile, 67),
    }


def randomize(model, seed=0):
    """Non-trivial BN statistics/affine, LayerNorm affine and LayerScale, so every weight really matters."""
    import keras

    rng = np.random.default_rng(seed)
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if isinstance(layer, keras.layers.BatchNormalization):
            c = layer.moving_mean.shape
            layer.moving_mean.assign(rng.normal(0, 0.2, c).astype("f4"))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, c).astype("f4"))
            if layer.scale:
                layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype("f4"))
            if layer.center:
                layer.beta.assign(rng.normal(0, 0.2, c).astype("f4"))
        elif isinstance(layer, keras.layers.LayerNormalization):
            c = layer.gamma.shape
            layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype("f4"))
            layer.beta.assign(rng.normal(0, 0.2, c).astype("f4"))
        elif type(layer).__name__ == "LayerScale":
            layer.gamma.assign(rng.uniform(0.5, 1.0, layer.gamma.shape).astype("f4"))


def build(name, size=None, classes=10):
    fn, default = architectures()[name]
    s = size or default
    kw = dict(input_shape=(s, s, 3), weights=None, classes=classes, classifier_activation=None)
    m = fn(**kw)
    randomize(m)
    return m


def run_one(name, out_root, size=None, batch=2, keep_nhwc=False):
    from msmigrate.keras.cli import check_conversion, convert_model

    m = build(name, size)
    n_layers = len(m._flatten_layers(include_self=False, recursive=True))
    out = os.path.join(out_root, name)
    t0 = time.time()
    conv = convert_model(m, out, keep_nhwc=keep_nhwc, source=f"keras.applications.{name}")
    t_conv = time.time() - t0  # model.py + report + model.ckpt (its MindSpore worker included)
    t0 = time.time()
    res = check_conversion(m, conv, batch=batch)  # Keras reference + a MindSpore worker: both modes
    return {"name": name, "layers": n_layers, "convert_s": t_conv, "check_s": time.time() - t0, "res": res}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--size", type=int)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--keep-nhwc", action="store_true")
    ap.add_argument("--out", help="keep the converted models here")
    a = ap.parse_args()
    names = a.names or list(architectures())
    out_root = a.out or tempfile.mkdtemp(prefix="keras-apps-")
    print(f"{'model':18} {'layers':>6} {'convert s':>9} {'check s':>8} {'max|d| pynative':>16} {'max|d| graph':>13}"
          f" {'max|y|':>9}  pynative graph")
    passes = {"pynative": 0, "graph": 0}
    for n in names:
        try:
            r = run_one(n, out_root, a.size, a.batch, a.keep_nhwc)
        except Exception as e:  # noqa: BLE001
            print(f"{n:18} ERROR {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        cells = []
        for mode in ("pynative", "graph"):
            m = r["res"].get(mode, {})
            passes[mode] += bool(m.get("ok"))
            cells.append(m)
        d = [f"{c['max_abs_diff']:.2e}" if "max_abs_diff" in c else "error" for c in cells]
        ok = ["pass" if c.get("ok") else "FAIL" for c in cells]
        ymax = cells[0].get("max_abs_ref", 0)
        print(f"{n:18} {r['layers']:6d} {r['convert_s']:9.1f} {r['check_s']:8.1f} {d[0]:>16} {d[1]:>13} "
              f"{ymax:9.3g}  {ok[0]:8} {ok[1]}", flush=True)
        for c in cells:
            if c.get("error"):
                print(f"    error: {c['error']}", flush=True)
    print(f"pass: pynative {passes['pynative']}/{len(names)}, graph {passes['graph']}/{len(names)}")
    return 0 if passes["pynative"] == passes["graph"] == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
