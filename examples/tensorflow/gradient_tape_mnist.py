"""A small CNN trained on MNIST-shaped data with a custom tf.GradientTape loop over a tf.data pipeline.

Synthetic data (no download) so that it runs anywhere:
    python gradient_tape_mnist.py --epochs 1 --steps 5 --init-weights init.npz --loss-log losses.txt
"""
import argparse
import os

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.random((n, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, size=(n,)).astype(np.int64)
    return images, labels


def build_model():
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(8, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(16, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(32, activation="relu"),
        layers.Dense(10),
    ])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: full epochs)")
    parser.add_argument("--init-weights", default="", help=".npz of initial weights: loaded if present, else written")
    parser.add_argument("--loss-log", default="")
    args = parser.parse_args()

    tf.random.set_seed(0)
    x_train, y_train = make_data(256)
    x_test, y_test = make_data(64, seed=1)
    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(args.batch_size).prefetch(tf.data.AUTOTUNE)
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)

    model = build_model()
    if args.init_weights:
        if os.path.exists(args.init_weights):
            saved = np.load(args.init_weights)
            model.set_weights([saved[k] for k in saved.files])
        else:
            np.savez(args.init_weights, *model.get_weights())

    schedule = keras.optimizers.schedules.ExponentialDecay(1e-3, decay_steps=2, decay_rate=0.9)
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_loss = keras.metrics.Mean(name="train_loss")
    train_acc = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_loss.update_state(loss)
        train_acc.update_state(labels, logits)
        return loss

    def test_accuracy():
        correct, total = 0, 0
        for images, labels in test_ds:
            logits = model(images, training=False)
            pred = tf.argmax(logits, axis=1)
            correct += int(tf.reduce_sum(tf.cast(tf.equal(pred, labels), tf.int32)))
            total += int(labels.shape[0])
        return correct / total

    losses = []
    step = 0
    for epoch in range(args.epochs):
        train_loss.reset_state()
        train_acc.reset_state()
        for images, labels in train_ds:
            loss = train_step(images, labels)
            losses.append(float(loss))
            step += 1
            if args.steps and step >= args.steps:
                break
        print(f"epoch {epoch + 1}: loss {float(train_loss.result()):.4f} "
              f"accuracy {float(train_acc.result()):.4f} test accuracy {test_accuracy():.4f}")
        if args.steps and step >= args.steps:
            break

    if args.loss_log:
        with open(args.loss_log, "w") as f:
            f.write("\n".join(f"{v:.9g}" for v in losses) + "\n")


if __name__ == "__main__":
    main()
