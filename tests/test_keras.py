"""``msmigrate keras``: Keras 3 models -> MindSpore nn.Cell + checkpoint, compared with Keras.

Keras runs here with the torch backend; the converted model runs in a worker process that refuses to import
keras/torch/tensorflow (msmigrate.keras.worker), in PyNative and GRAPH mode. Pass: max|d| <= 1e-4 * max(1, max|y|).
"""
import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

keras = pytest.importorskip("keras")
L = keras.layers

from msmigrate.cli import main  # noqa: E402
from msmigrate.keras import KerasConversionError, convert_keras_model  # noqa: E402
from msmigrate.keras.cli import convert_and_check  # noqa: E402
from msmigrate.keras.worker import write_checkpoint  # noqa: E402


def _randomize(model, seed=0):
    """Random BN statistics / affine and LayerNorm affine, so the conversion of every weight is tested."""
    rng = np.random.default_rng(seed)
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if isinstance(layer, L.BatchNormalization):
            c = layer.moving_mean.shape
            layer.moving_mean.assign(rng.normal(0, 0.2, c).astype("f4"))
            layer.moving_variance.assign(rng.uniform(0.5, 1.5, c).astype("f4"))
            if layer.scale:
                layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype("f4"))
            if layer.center:
                layer.beta.assign(rng.normal(0, 0.2, c).astype("f4"))
        elif isinstance(layer, L.LayerNormalization):
            layer.gamma.assign(rng.uniform(0.5, 1.5, layer.gamma.shape).astype("f4"))
            layer.beta.assign(rng.normal(0, 0.2, layer.beta.shape).astype("f4"))
    for w in model.weights:
        if w.path.endswith("bias"):
            w.assign(rng.normal(0, 0.2, w.shape).astype("f4"))
    return model


def _assert_pass(res, modes=("pynative", "graph")):
    for mode in modes:
        r = res[mode]
        assert "error" not in r, r
        assert r["max_abs_diff"] <= 1e-4 * max(1.0, r["max_abs_ref"]), (mode, r)
        assert r["max_abs_ref"] > 1e-3, r  # the outputs are not trivially zero


def _tiny():
    inp = keras.Input((12, 12, 3))
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)  # TF pads bottom/right here
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D(2)(x)
    x = L.Flatten()(x)  # NHWC flatten order: the Dense kernel rows must be permuted for NCHW
    x = L.Dense(5)(x)
    return _randomize(keras.Model(inp, x, name="tiny"))


def test_cli_keras_file_check(tmp_path, capsys):
    path = str(tmp_path / "tiny.keras")
    _tiny().save(path)
    out = tmp_path / "out"
    assert main(["keras", path, "-o", str(out), "--check"]) == 0
    text = capsys.readouterr().out
    assert "check pynative: pass" in text and "check graph: pass" in text
    src = (out / "model.py").read_text()
    assert "def create_model(" in src and "mint" not in src and "keras" not in src.split('"""', 2)[2]
    assert 'os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"' in src
    assert "nn.Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), pad_mode='same'" in src
    assert "ops.transpose" not in src  # NCHW in, logits out: no transpose at all
    assert (out / "model.ckpt").exists()
    report = (out / "keras-report.md").read_text()
    assert "rows permuted from NHWC to NCHW flatten order" in report


def test_layer_zoo_nchw_and_keep_nhwc(tmp_path):
    inp = keras.Input((15, 15, 3))
    x = L.Rescaling(1 / 127.5, offset=-1)(inp)
    x = L.Normalization(mean=[0.1, 0.2, 0.3], variance=[1.0, 2.0, 0.5])(x)
    a = L.Conv2D(6, 3, padding="same", dilation_rate=2)(x)
    b = L.SeparableConv2D(6, 3, padding="same", depth_multiplier=2, activation="swish")(x)
    x = L.Concatenate()([a, b])
    x = L.PReLU()(x)
    x = L.Conv2D(8, 4, strides=2, padding="same", groups=2)(x)
    x = L.LeakyReLU(0.1)(x)
    x = L.Cropping2D(((1, 0), (0, 1)))(x)
    x = L.UpSampling2D(2)(x)
    x = L.Conv2DTranspose(4, 3, strides=2, padding="same")(x)
    x = L.ZeroPadding2D(((1, 2), (0, 1)))(x)
    y = L.ReLU(max_value=3.0, negative_slope=0.1, threshold=0.5)(x)
    x = L.Maximum()([L.Subtract()([x, y]), y])
    x = L.BatchNormalization(center=False)(x)
    x = L.AveragePooling2D(3, strides=1, padding="same")(x)
    g = L.Reshape((1, 1, 4))(L.GlobalMaxPooling2D()(x))
    x = L.Multiply()([x, g])
    x = L.Dense(5)(x)  # Dense on a spatial tensor: a 1x1 conv in NCHW
    x = L.LayerNormalization()(x)  # over channels: axis 1 in NCHW
    s = L.Softmax(axis=-1)(x)
    f = L.Dense(7, activation="gelu")(L.Dropout(0.3)(L.Flatten()(x)))
    f = L.BatchNormalization()(f)
    m = _randomize(keras.Model(inp, [s, f], name="zoo"))
    for keep in (False, True):
        conv, res = convert_and_check(m, str(tmp_path / f"zoo{keep}"), keep_nhwc=keep)
        src = open(conv.model_py).read()
        # transposes only at the boundary: none for NCHW, input + spatial output for NHWC
        assert src.count("ops.transpose(") == (2 if keep else 0), src
        _assert_pass(res)


def test_spatial_layers_in_1d_and_3d(tmp_path):
    """ZeroPadding, Cropping, UpSampling, pooling and convolutions of every spatial rank (int, per-axis and
    (before, after) forms; 'same' and 'valid' pooling; Conv1D's 'causal' padding, dilated too)."""
    inp = keras.Input((9, 3))
    x = L.Conv1D(4, 3, padding="same")(inp)
    x = L.Conv1D(5, 3, padding="causal", dilation_rate=2, activation="relu")(x)
    x = L.Conv1D(4, 2, padding="causal")(x)
    x = L.ZeroPadding1D((1, 2))(x)
    x = L.Cropping1D((2, 0))(x)
    x = L.UpSampling1D(2)(x)
    x = L.ZeroPadding1D(1)(x)
    x = L.MaxPooling1D(2)(x)
    x = L.AveragePooling1D(3, strides=1, padding="same")(x)
    x = L.AveragePooling1D(2, padding="valid")(x)
    one = L.Dense(3)(L.Flatten()(x))
    inp3 = keras.Input((3, 4, 2, 2))
    v = L.Conv3D(3, (2, 3, 1), padding="same")(inp3)
    v = L.Conv3D(2, 2, strides=(1, 2, 1), padding="valid", activation="tanh")(L.ZeroPadding3D(1)(v))
    v = L.ZeroPadding3D(((1, 0), (0, 2), (1, 1)))(v)
    v = L.Cropping3D((1, (1, 0), 0))(v)
    v = L.UpSampling3D((2, 1, 3))(v)
    v = L.ZeroPadding3D(1)(v)
    v = L.MaxPooling3D((2, 1, 2), strides=1, padding="same")(v)
    v = L.AveragePooling3D(2, padding="same")(v)
    three = L.Dense(2)(L.Flatten()(v))
    m = _randomize(keras.Model([inp, inp3], [one, three, L.GlobalAveragePooling3D()(v)], name="ranks"))
    conv, res = convert_and_check(m, str(tmp_path / "ranks"))
    src = open(conv.model_py).read()
    assert "ops.pad(" not in src and "zero_pad(" in src, src
    _assert_pass(res)


def test_augmentation_layers_are_identity_at_inference(tmp_path):
    from msmigrate.keras.convert import _AUGMENTATIONS
    needs = {"RandomRotation": (0.2,), "RandomZoom": (0.2,), "RandomTranslation": (0.2, 0.2),
             "RandomContrast": (0.5,), "RandomBrightness": (0.3,), "RandomHue": (0.3,), "RandomSaturation": (0.3,),
             "RandomSharpness": (0.3,), "RandomShear": (0.2,), "RandomPosterization": ((0, 255),),
             "RandomColorDegeneration": (0.5,)}
    inp = keras.Input((16, 16, 3))
    x = inp
    for name in _AUGMENTATIONS:
        x = getattr(L, name)(*needs.get(name, ()))(x)
    m = _randomize(keras.Model(inp, L.Conv2D(4, 3)(x), name="augment"))
    conv, res = convert_and_check(m, str(tmp_path / "augment"))
    _assert_pass(res)
    report = (tmp_path / "augment" / "keras-report.md").read_text()
    assert report.count("identity at inference") >= len(_AUGMENTATIONS)


def test_sequences_and_recurrent_layers(tmp_path):
    inp = keras.Input((7,), dtype="int32")
    x = L.Embedding(20, 6)(inp)
    x = L.Conv1D(6, 3, padding="same", activation="relu")(x)
    x = L.LSTM(5, return_sequences=True)(x)
    x = L.GRU(4, return_sequences=True)(x)  # reset_after=True; gates (z, r, h) -> (r, z, n)
    x = L.LayerNormalization(epsilon=1e-5)(L.Dense(4)(x))
    x2 = L.Bidirectional(L.LSTM(3, return_sequences=True))(x)
    x3 = L.Bidirectional(L.GRU(3))(x)
    s, h = L.SimpleRNN(4, return_state=True)(x2)
    o, lh, lc = L.LSTM(3, return_state=True)(x2)
    pooled = L.GlobalAveragePooling1D()(x)
    y = L.Concatenate()([s, h, x3, o, lh, lc, pooled])
    m = _randomize(keras.Model(inp, y, name="seq"))
    _assert_pass(convert_and_check(m, str(tmp_path / "seq"))[1])


@pytest.mark.parametrize("name", ["MobileNetV3Small", "EfficientNetB0"])
def test_keras_applications(tmp_path, name):
    m = getattr(keras.applications, name)(input_shape=(32, 32, 3), weights=None, classes=10,
                                           classifier_activation=None)
    _randomize(m)
    _assert_pass(convert_and_check(m, str(tmp_path / name), batch=1)[1])


def test_asymmetric_same_average_pool_uses_tf_semantics(tmp_path):
    # TF: stride 2 on an even input pads bottom/right only and averages over real cells only. (Keras' torch
    # backend pads by replication and counts the pad, so the reference here is computed with numpy.)
    inp = keras.Input((8, 8, 2))
    m = keras.Model(inp, L.AveragePooling2D(3, strides=2, padding="same")(inp))
    conv = convert_keras_model(m, str(tmp_path / "pool"))
    x = np.random.default_rng(0).standard_normal((1, 8, 8, 2)).astype("f4")
    xp = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)))
    cnt = np.pad(np.ones_like(x), ((0, 0), (0, 1), (0, 1), (0, 0)))
    ref = np.zeros((1, 4, 4, 2), "f4")
    for i in range(4):
        for j in range(4):
            ref[0, i, j] = xp[0, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum((0, 1)) / cnt[0, 2 * i:2 * i + 3,
                                                                                 2 * j:2 * j + 3].sum((0, 1))
    res = write_checkpoint(conv.out_dir, conv.class_name, conv.weights,
                           check={"inputs": [x.transpose(0, 3, 1, 2)], "refs": [ref.transpose(0, 3, 1, 2)]})
    _assert_pass(res)


def test_errors_are_one_line(tmp_path, capsys):
    class Unbuilt(keras.Model):
        def call(self, x):
            return x

    with pytest.raises(KerasConversionError, match="never built"):
        convert_keras_model(Unbuilt(), str(tmp_path / "u"))
    inp = keras.Input((4, 4, 3))
    m = keras.Model(inp, L.AutoContrast()(inp))     # a layer with no handler
    with pytest.raises(KerasConversionError, match="AutoContrast"):
        convert_keras_model(m, str(tmp_path / "r"))
    sm = tmp_path / "sm"
    sm.mkdir()
    (sm / "saved_model.pb").write_bytes(b"")
    rc = main(["keras", str(sm), "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        assert rc == 2 and "needs tensorflow-cpu" in err


def test_mindspore_worker_refuses_keras_and_torch():
    from msmigrate.keras.worker import _Blocker

    for name in ("keras", "keras.layers", "torch", "tensorflow"):
        with pytest.raises(ImportError, match="must not import"):
            _Blocker().find_spec(name)
    assert _Blocker().find_spec("mindspore") is None


def test_softmax_over_a_length_1_axis_is_exp_of_zero(tmp_path):
    """`Dense(1, activation="softmax")` (always 1) and a Softmax layer over a length-1 axis: not ops.softmax, whose
    gradient MindSpore 2.10 builds once per rank and, built over a length-1 axis, reuses wrong for every later
    softmax of that rank (tests/test_heldout23_programs.py); exp(x - x) gives the value, 1, and the zero gradient."""
    inp = keras.Input((6,))
    one = L.Dense(1, activation="softmax")(inp)
    col = L.Softmax(axis=1)(L.Reshape((1, 3))(L.Dense(3)(inp)))
    many = L.Dense(4, activation="softmax")(inp)
    m = _randomize(keras.Model(inp, [one, L.Flatten()(col), many], name="single"))
    conv, res = convert_and_check(m, str(tmp_path / "single"))
    src = open(conv.model_py).read()
    assert src.count("ops.softmax(") == 1 and src.count("ops.exp(") == 2, src
    _assert_pass(res)
