"""The `heldout70` set of bench/real_world.py (`--set heldout70`): TensorFlow/Keras training programs, the first
held-out set whose originals are Keras code: philipperemy/keras-tcn (its `tcn` package, a TCN layer subclassing
keras Layer with build(), dilated causal Conv1D residual blocks, trained by the repository's own task scripts) and
keras-team/keras' examples/ (Keras 3's own demos: a convnet on MNIST, a subclassed model, a functional residual
MLP, custom layers written with keras.ops), converted as a new user would convert them (`msmigrate convert`, no
edit) and run as they are.

    python bench/real_world.py --mirrors /work/.mirror --set heldout70 [--only keras_subclass]

The originals run under TensorFlow 2.21 / Keras 3.15 (bench/_rw_runner.py --side tf; the converted side runs where
tensorflow, keras and torch cannot be imported). Extra packages: time_series_forecasting.py reads its CSV with pandas
and plots with matplotlib (`pip install "pandas<3" matplotlib`).

- keras-tcn (tcn/ as it is, beside the task script):
  - tcn_many_to_many: tasks/many_to_many.py (TCN(input_shape=(24, 8)) -> RepeatVector(6) -> Dense(2) in a
    Sequential, Adam, mse, one fit epoch over 64 uniform samples: one batch).
  - tcn_time_series: tasks/time_series_forecasting.py with the repository's monthly milk CSV (pandas.read_csv,
    lookback 12: 156 windows), TCN(kernel_size 2, no skip connections) -> Dense(1) in a Sequential, Adam, mae, fit
    (batch 32) then predict and matplotlib's plot (Agg).
- keras examples (the file as it is):
  - keras_mnist_convnet: demo_mnist_convnet.py, keras.datasets.mnist.load_data reading our mnist.npz (512 training
    and 64 test images of blurry digit-dependent blobs, uint8, Keras' keys) from KERAS_HOME/datasets, Conv2D/
    MaxPooling2D x2, Flatten, Dropout(0.5) (off), Dense softmax, categorical_crossentropy, Adam, validation_split
    0.1, evaluate.
  - keras_subclass: demo_subclass.py, a subclassed Model of three Dense layers built at its first call, SGD, mse,
    validation_split 0.2.
  - keras_functional: demo_functional.py, a functional model of nine Dense(512) layers with residual `x +=
    residual` on symbolic tensors, Adam, MeanSquaredError with CategoricalAccuracy and MeanSquaredError metrics,
    validation_split 0.2, then evaluate and predict.
  - keras_custom_layer: demo_custom_layer_backend_agnostic.py, custom layers with add_weight(initializer=
    initializers.GlorotNormal()/Zeros()), keras.ops.matmul and concatenate, a dropout layer through
    keras.random.dropout with a SeedGenerator (off), SGD, mse.
  demo_custom_tf_workflow.py (the custom tf.GradientTape step), first meant for this set, does not run under Keras
  3.15 itself: its MyDense.build calls `keras.backend.Variable`, which Keras 3.15 no longer has (AttributeError
  in the original), so it is left out.

Aligned on both sides (bench/_rw_runner.py): NumPy seeded (the programs' data), each model's initial weights (the
TF side's get_weights() at the model's first call, set_weights on the converted side), fit's batches in array order
(shuffle off on both sides: Keras shuffles with tf.random.shuffle, the converted fit with NumPy), dropout off, and
the losses: each GradientTape.gradient's target on the TF side (Keras' own fit differentiates its batch loss with
one, functions run eagerly), each mindspore.value_and_grad call on the converted side.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

TCN = "philipperemy+keras-tcn@7576256b8b2a138b88ae2483b8616681686e424f"
KERAS = "keras-team+keras@3422977a5e38fb2f7709aaa9a08e47f0c43d0f60"


def write_keras_mnist(root: Path) -> None:
    """KERAS_HOME/datasets/mnist.npz as keras.datasets.mnist.load_data reads it: x_train (n, 28, 28) uint8,
    y_train (n,) uint8, x_test, y_test; blurry blobs whose position follows the label (learnable)."""
    rng = np.random.RandomState(7)

    def images(n):
        ys = rng.randint(0, 10, n).astype(np.uint8)
        xs = np.zeros((n, 28, 28), np.float64)
        yy, xx = np.mgrid[0:28, 0:28]
        for i, c in enumerate(ys):
            cy, cx = 6 + 2 * (c % 5) + rng.rand(), 8 + 6 * (c // 5) + rng.rand()
            xs[i] = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 18.0)
        xs = np.clip(xs * 255 + rng.rand(n, 28, 28) * 30, 0, 255)
        return xs.astype(np.uint8), ys
    x_train, y_train = images(512)
    x_test, y_test = images(64)
    out = Path(root) / "keras" / "datasets"
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "mnist.npz", x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("tcn_many_to_many", TCN, "tcn,tasks/many_to_many.py", "many_to_many.py", [], None),
    ("tcn_time_series", TCN, "tcn,tasks/time_series_forecasting.py,tasks/monthly-milk-production-pounds-p.csv",
     "time_series_forecasting.py", [], None),
    ("keras_mnist_convnet", KERAS, "examples/demo_mnist_convnet.py,", "demo_mnist_convnet.py", [], write_keras_mnist),
    ("keras_subclass", KERAS, "examples/demo_subclass.py,", "demo_subclass.py", [], None),
    ("keras_functional", KERAS, "examples/demo_functional.py,", "demo_functional.py", [], None),
    ("keras_custom_layer", KERAS, "examples/demo_custom_layer_backend_agnostic.py,",
     "demo_custom_layer_backend_agnostic.py", [], None),
]

DEPS: dict = {}
DRIVERS: dict = {}

ORIGINAL = {name: "tf" for name, *_ in PROGRAMS}

# 6 steps each (fit's batches, or the custom loop's steps); tcn_many_to_many's fit has one batch
LOSSES = {name: 6 for name, *_ in PROGRAMS}
