"""A tabular classifier trained with Keras' compile/fit, then evaluated and used for prediction.

Synthetic data (no download):
    python keras_fit.py --epochs 2 --init-weights init.npz --loss-log losses.txt
"""
import argparse
import os

import numpy as np
import tensorflow as tf
from tensorflow import keras


class BatchLossLogger(keras.callbacks.Callback):
    """Records the running loss Keras reports after every batch."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(logs["loss"])


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 20)).astype(np.float32)
    w = rng.normal(size=(20, 3)).astype(np.float32)
    y = np.argmax(x @ w, axis=1)
    return x, y


def build_model():
    inputs = keras.Input(shape=(20,))
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Dense(32, activation="tanh")(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--init-weights", default="")
    parser.add_argument("--loss-log", default="")
    args = parser.parse_args()

    x_train, y_train = make_data(80)
    x_val, y_val = make_data(32, seed=1)
    model = build_model()
    if args.init_weights:
        if os.path.exists(args.init_weights):
            saved = np.load(args.init_weights)
            model.set_weights([saved[k] for k in saved.files])
        else:
            np.savez(args.init_weights, *model.get_weights())

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])
    logger = BatchLossLogger()
    history = model.fit(x_train, y_train, batch_size=16, epochs=args.epochs, shuffle=False,
                        validation_data=(x_val, y_val), callbacks=[logger], verbose=0)
    print("history:", {k: [round(float(v), 4) for v in vs] for k, vs in history.history.items()})
    val_loss, val_acc = model.evaluate(x_val, y_val, verbose=0)
    print(f"validation loss {val_loss:.4f} accuracy {val_acc:.4f}")
    probs = model.predict(x_val[:4], verbose=0)
    print("predicted classes:", np.argmax(probs, axis=1).tolist())

    if args.loss_log:
        with open(args.loss_log, "w") as f:
            f.write("\n".join(f"{v:.9g}" for v in logger.losses) + "\n")


if __name__ == "__main__":
    main()
