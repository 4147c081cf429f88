"""Minimal reproductions of what bench/_rw_heldout70.py's TensorFlow/Keras programs (philipperemy/keras-tcn,
keras-team/keras' examples) met, each run with TensorFlow/Keras and converted (the converted side in a process that
cannot import tensorflow, keras, torch or msmigrate).

- A name that a TensorFlow/Keras import binds (`from tensorflow.keras import layers, metrics`) written as an
  attribute (`self.layers = []` in a Layer subclass, keras-tcn's ResidualBlock), a keyword
  (`Sequential(layers=[...])`, `compile(metrics=[...])`: demo_subclass.py, many_to_many.py) or a function's own
  variable (`layers = model._layers.copy()`, tcn_full_summary, which also imports tensorflow inside: that name stays
  the import's) was taken for the import and replaced by the
  import's conversion: the file no longer parsed ("cannot assign to function call"), and was copied unconverted.
  Attribute names, keywords, parameters and the names a function binds are no references to an import now
  (tf_convert.TFToMindSpore visit_Attribute/visit_Arg/visit_Param, _local_names).
- The helpers drew initial weights (and fit's shuffle) from NumPy's global stream, which Keras never touches:
  demo_functional.py builds its model before `x = np.random.random(...)`, so its converted data differed (first
  loss 0.375 against 0.353). They draw from a stream of their own (keras_train.py _KERAS_RNG).
- `x += residual` on symbolic tensors (demo_functional.py): TypeError, the helper's KerasTensor had no operators;
  they are layers of the functional graph now (keras_train.py KerasTensor._op, KerasOperation).
- keras.layers.RepeatVector and keras.metrics.MeanSquaredError / MeanAbsoluteError had no record (TODOs raising
  MigrationError): helper classes with Keras' semantics (compat_parts/keras_train.py RepeatVector,
  MeanErrorMetric).
- keras.datasets.mnist.load_data had no record: it reads Keras' cached file as Keras does, and stops with
  MigrationError where Keras would download (the file missing, or not MNIST's by its SHA-256)
  (compat_parts/keras_train.py mnist_load_data).
- A converted Keras program run with GRAPH_MODE set called MindSpore's Cell.compile with the model's inputs, which
  is Keras' Model.compile in the helper: MigrationError about an "optimizer", naming no line. A Keras layer or model
  called in GRAPH_MODE stops with MigrationError naming the call's original line (keras_train.py _keras_op_by_op;
  the TF pass now writes _ms_lines.json too: converter.convert_code)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

# (found, not imported: TensorFlow runs in a subprocess of its own; importing it here costs seconds)
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("tensorflow is not installed", allow_module_level=True)

# the converted program must not reach TensorFlow, Keras, torch or the converter
_RUNNER = ("import sys, runpy\n"
           "for m in ('tensorflow', 'keras', 'tf_keras', 'torch', 'msmigrate'):\n"
           "    sys.modules[m] = None\n"
           "sys.path.insert(0, '.')\n"
           "sys.argv = sys.argv[1:]\n"
           "runpy.run_path(sys.argv[0], run_name='__main__')\n")

# keras-tcn's ResidualBlock keeps its sublayers in `self.layers`; demo_subclass.py passes `metrics=[metrics...]`;
# many_to_many.py builds `Sequential(layers=[...])` with a RepeatVector
PROGRAM = '''
import sys
import numpy as np
from tensorflow.keras import Sequential, layers, metrics, optimizers
from tensorflow.keras.layers import Dense, Input, Layer, RepeatVector
import keras

keras.config.disable_traceback_filtering()      # demo_functional.py's first call


class Block(Layer):
    def __init__(self, units, **kwargs):
        self.units = units
        self.layers = []
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.layers = [Dense(self.units, activation="tanh"), Dense(self.units)]
        for layer in self.layers:
            layer.build(input_shape)
            input_shape = input_shape[:-1] + (self.units,)
        super().build(input_shape)

    def call(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def sizes(model):
    import tensorflow as tf         # an import inside the function (keras-tcn's tcn_full_summary)
    layers = [type(l).__name__ for l in model.layers]     # a local variable named as the import
    return layers + [int(tf.reduce_sum(tf.constant([1, 2])))]


np.random.seed(5)
rng = np.random.RandomState(0)
x = rng.rand(8, 5).astype("float32")
y = rng.rand(8, 3, 2).astype("float32")
model = Sequential(layers=[Input(shape=(5,)), Block(4), RepeatVector(3), Dense(2)])
init, out = sys.argv[1], sys.argv[2]
if init.endswith("tf.npz"):
    np.savez(init, *model.get_weights())
else:
    with np.load(init.replace("ms.npz", "tf.npz")) as z:
        model.set_weights([z["arr_%d" % i] for i in range(len(z.files))])
model.compile(optimizer=optimizers.SGD(learning_rate=0.1), loss="mse",
              metrics=[metrics.MeanSquaredError(), metrics.MeanAbsoluteError(), "mae"], run_eagerly=True)
history = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
print("layers", sizes(model))
np.savez(out, pred=model.predict(x, verbose=0), **{k: np.array(v) for k, v in history.history.items()})

# keras-tcn's ResidualBlock pattern: sublayers built explicitly in build() (in a name scope) and kept in a list,
# compute_output_shape, `inspect.signature(layer.call)`, SpatialDropout1D, layers.add, a Lambda slicing the last
# step, register_keras_serializable; keras.ops and initializer objects (demo_custom_layer_backend_agnostic.py);
# integer inputs (a pandas series) cast by the Sequential
import inspect
from tensorflow.keras import backend as K, initializers, ops, random
from tensorflow.keras.layers import Activation, Conv1D, Lambda, SpatialDropout1D
try:
    from keras.src.saving import register_keras_serializable
except ImportError:
    from tensorflow.keras.saving import register_keras_serializable


@register_keras_serializable()
class Res(Layer):
    def __init__(self, filters, **kwargs):
        self.filters = filters
        self.layers = []
        super().__init__(**kwargs)

    def build(self, input_shape):
        with K.name_scope(self.name):
            shape = input_shape
            for k in range(2):
                for layer in (Conv1D(self.filters, 2, dilation_rate=2, padding="causal", name="conv_%d" % k),
                              Activation("relu"), SpatialDropout1D(0.0)):
                    self.layers.append(layer)
                    layer.build(shape)
                    shape = layer.compute_output_shape(shape)
            self.match = Conv1D(self.filters, 1, padding="same")
            self.match.build(input_shape)
            self.scale = self.add_weight(shape=(self.filters,), initializer=initializers.Ones(), name="scale")
            self.mix = self.add_weight(shape=(2 * self.filters, self.filters), initializer=initializers.GlorotNormal(),
                                       name="mix")
            self.seeds = random.SeedGenerator(3)
        super().build(input_shape)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self.layers:
            x = layer(x, training=training) if "training" in inspect.signature(layer.call).parameters else layer(x)
        both = ops.concatenate([x * self.scale, self.match(inputs)], axis=-1)
        mixed = random.dropout(ops.matmul(both, self.mix), 0.0, seed=self.seeds)
        return layers.add([mixed, x])


series = np.arange(40) % 7 + np.arange(40) // 8        # integers, as pandas reads a count series
xs = np.stack([np.stack([series[i:i + 6], series[i + 1:i + 7]], -1) for i in range(32)])
ys = series[7:39, None]
tcn = Sequential([Input(shape=(6, 2)), Res(4), Lambda(lambda t: t[:, -1, :]), Dense(1)])
init2 = init.replace(".npz", "_tcn.npz")
if init.endswith("tf.npz"):
    np.savez(init2, *tcn.get_weights())
else:
    with np.load(init2.replace("ms_tcn.npz", "tf_tcn.npz")) as z:
        tcn.set_weights([z["arr_%d" % i] for i in range(len(z.files))])
# (SGD and mse: Adam's sign-like first steps on MAE's sign gradients turn TensorFlow's own run-to-run rounding into
# differences of 1e-4)
tcn.compile(optimizers.SGD(learning_rate=1e-3), "mse", run_eagerly=True)
tcn_history = tcn.fit(xs, ys, batch_size=8, epochs=2, shuffle=False, verbose=0)
# demo_functional.py's residuals written with operators on symbolic tensors
inp = Input(shape=(3,))
h = Dense(3, activation="relu")(inp)
h += inp
h = 0.5 * h - inp / 4.0
func = keras.Model(inp, h)
print("numpy stream after building", np.random.random(3).tolist())     # Keras draws none of NumPy's numbers
init3 = init.replace(".npz", "_func.npz")
if init.endswith("tf.npz"):
    np.savez(init3, *func.get_weights())
else:
    with np.load(init3.replace("ms_func.npz", "tf_func.npz")) as z:
        func.set_weights([z["arr_%d" % i] for i in range(len(z.files))])
np.savez(out.replace(".npz", "_tcn.npz"), loss=np.array(tcn_history.history["loss"]), pred=tcn.predict(xs, verbose=0),
         summed=np.asarray(ops.sum(tcn(xs[:2].astype("float32")), axis=0)),
         func=np.asarray(func(rng.randn(4, 3).astype("float32"))))
'''

LOAD_MNIST = '''
import os, sys
import numpy as np
from tensorflow import keras

home = os.environ["KERAS_HOME"]
try:
    keras.datasets.mnist.load_data()
except Exception as e:
    print("missing:", type(e).__name__, str(e)[:80])
rng = np.random.RandomState(1)
arrays = dict(x_train=rng.randint(0, 256, (6, 28, 28)).astype(np.uint8), y_train=np.arange(6, dtype=np.uint8),
              x_test=rng.randint(0, 256, (2, 28, 28)).astype(np.uint8), y_test=np.arange(2, dtype=np.uint8))
os.makedirs(os.path.join(home, "datasets"))
np.savez(os.path.join(home, "datasets", "mnist.npz"), **arrays)
try:
    keras.datasets.mnist.load_data()
except Exception as e:
    print("not mnist:", type(e).__name__, str(e)[:80])
os.environ["MSMIGRATE_KERAS_DATASET_UNCHECKED"] = "1"
(xa, ya), (xb, yb) = keras.datasets.mnist.load_data()
for name, got in (("x_train", xa), ("y_train", ya), ("x_test", xb), ("y_test", yb)):
    assert got.dtype == np.uint8 and np.array_equal(got, arrays[name]), name
print("read as written")
'''


# a Keras model called with MindSpore's GRAPH_MODE set (converted; run with the mode set first)
GRAPH = '''
import numpy as np
from tensorflow import keras

model = keras.Sequential([keras.layers.Dense(2)])
try:
    model(np.ones((1, 3), "float32"))
except Exception as e:
    print("graph:", type(e).__name__, str(e))
'''


def _run(cmd, cwd, **env):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3", GLOG_v="3",
                                CUDA_VISIBLE_DEVICES="", **env))
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout[-3000:]}\n{r.stderr[-4000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("h70")
    src = tmp / "src"
    src.mkdir()
    (src / "program.py").write_text(PROGRAM.lstrip())
    (src / "load_mnist.py").write_text(LOAD_MNIST.lstrip())
    (src / "graph.py").write_text(GRAPH.lstrip())
    tf_out = _run([sys.executable, "program.py", str(tmp / "tf.npz"), str(tmp / "tf_out.npz")], cwd=src)
    out = tmp / "out"
    from msmigrate.converter import convert_tree     # in this process: `msmigrate convert`'s own conversion
    report = {"files": [r.to_json() for r in convert_tree(src, out, jobs=1).files]}
    # one process for both converted programs (load_mnist.py after program.py, with its own KERAS_HOME)
    both = _RUNNER + (f"os = __import__('os'); os.environ['KERAS_HOME'] = {str(tmp / 'keras')!r}\n"
                      "print('--- load_mnist')\nsys.argv = ['load_mnist.py']\n"
                      "runpy.run_path('load_mnist.py', run_name='__main__')\n"
                      "import mindspore\nmindspore.set_context(mode=mindspore.GRAPH_MODE)\n"
                      "runpy.run_path('graph.py', run_name='__main__')\n")
    ms_out = _run([sys.executable, "-c", both, "program.py", str(tmp / "ms.npz"), str(tmp / "ms_out.npz")], cwd=out)
    program_out, _, mnist_out = ms_out.partition("--- load_mnist")
    return tmp, out, report, tf_out, program_out, mnist_out


def test_names_of_imports_as_attributes_keywords_and_locals(converted):
    """`self.layers`, `Sequential(layers=...)`, `compile(metrics=...)` and a local `layers` beside
    `from tensorflow.keras import layers, metrics`: the file converts (no TODO) and runs as Keras does."""
    tmp, out, report, tf_out, ms_out, _ = converted
    files = {f["file"]: f for f in report["files"]}
    assert files["program.py"]["status"] == "converted" and files["program.py"]["sites"], files["program.py"]
    assert not [s for s in files["program.py"]["sites"] if s["status"] == "todo"]
    code = (out / "program.py").read_text()
    assert "self.layers = []" in code and "Sequential(layers=[" in code and "    layers = [type(l)" in code
    line = [l for l in tf_out.splitlines() if l.startswith("layers")]
    assert line == [l for l in ms_out.splitlines() if l.startswith("layers")] == [
        "layers ['Block', 'RepeatVector', 'Dense', 3]"]


def test_repeat_vector_and_error_metrics_match_keras(converted):
    """RepeatVector after a custom Layer in a Sequential, trained by fit (SGD, mse) with the MeanSquaredError and
    MeanAbsoluteError metrics (objects and 'mae'): the history (loss and metrics per epoch) and the predictions
    after training are Keras'."""
    tmp, *_ = converted
    tf_r, ms_r = np.load(tmp / "tf_out.npz"), np.load(tmp / "ms_out.npz")
    assert sorted(tf_r.files) == sorted(ms_r.files) == sorted(
        ["pred", "loss", "mean_squared_error", "mean_absolute_error", "mae"])
    assert tf_r["pred"].shape == (8, 3, 2)
    assert abs(tf_r["loss"][0] - tf_r["loss"][-1]) > 1e-3     # the training moves
    for k in tf_r.files:
        np.testing.assert_allclose(ms_r[k], tf_r[k], rtol=1e-4, atol=1e-6, err_msg=k)


def test_tcn_style_layers_match_keras(converted):
    """keras-tcn's residual-block pattern (sublayers built explicitly in build(), in a list, compute_output_shape,
    `inspect.signature(layer.call)`, SpatialDropout1D, layers.add, a Lambda, register_keras_serializable,
    K.name_scope) with keras.ops, initializer objects and keras.random.dropout, fit on integer inputs: the weights
    exchanged by get_weights/set_weights in Keras' order, the losses of two epochs and the predictions; a
    functional model whose residuals are operators on symbolic tensors (`h += inp`, `0.5 * h - inp / 4.0`)."""
    tmp, out, report, tf_out, ms_out, _ = converted
    stream = [[l for l in text.splitlines() if l.startswith("numpy stream")] for text in (tf_out, ms_out)]
    assert stream[0] and stream[0] == stream[1], stream      # the helpers' weight draws leave NumPy's stream alone
    tf_r, ms_r = np.load(tmp / "tf_out_tcn.npz"), np.load(tmp / "ms_out_tcn.npz")
    assert abs(tf_r["loss"][0] - tf_r["loss"][-1]) > 1e-3
    for k in ("loss", "pred", "summed", "func"):
        np.testing.assert_allclose(ms_r[k], tf_r[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_keras_model_in_graph_mode_stops_naming_its_line(converted):
    """The Keras helpers run op by op: a model called with GRAPH_MODE set stopped with a MigrationError about an
    optimizer (MindSpore's Cell.compile, called by Cell.__call__ in GRAPH_MODE, is also Keras' Model.compile, which
    got the inputs), naming no line of the program; it names the call's original line now."""
    got = converted[-1]
    assert "graph: MigrationError graph.py:6: KerasSequential called with mindspore's GRAPH_MODE set" in got, got


def test_mnist_load_data_reads_keras_cache(converted):
    """keras.datasets.mnist.load_data, converted: a missing cache file and a file that is not MNIST's (Keras
    would download the real one in both cases) stop with MigrationError; with the check waived, the arrays are
    read as written (Keras' keys and dtypes)."""
    got = converted[-1]
    assert "missing: MigrationError" in got and "not mnist: MigrationError" in got and "read as written" in got
