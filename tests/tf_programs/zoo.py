"""TensorFlow/Keras program exercising layers, models, optimizers, schedules, losses, metrics and tf ops.
tests/test_tf_training.py runs it with TensorFlow and, converted by msmigrate, with MindSpore.
    python zoo.py OUT.npz INIT_PREFIX   (initial weights: INIT_PREFIX_<key>.npz, written if absent)"""
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

OUT, INIT = sys.argv[1], sys.argv[2]
results = {}
keras.utils.set_random_seed(0)   # the same initial weights on every run
rng = np.random.default_rng(0)


def init(model, key):
    path = f"{INIT}_{key}.npz"
    if os.path.exists(path):
        saved = np.load(path)
        model.set_weights([saved[k] for k in saved.files])
    else:
        np.savez(path, *model.get_weights())


# ---------------------------------------------------------------- layers and models
class Scale(layers.Layer):
    def build(self, input_shape):
        self.alpha = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="alpha")

    def call(self, x):
        return x * self.alpha


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = layers.Conv2D(4, 3, strides=2, padding="same")
        self.pool = layers.AveragePooling2D(2)
        self.act = layers.ReLU()
        self.drop = layers.Dropout(0.5)
        self.gap = layers.GlobalAveragePooling2D()
        self.scale = Scale()
        self.out = layers.Dense(3)

    def call(self, x, training=False):
        h = self.act(self.pool(self.conv(x)))
        h = self.drop(h, training=training)
        return self.out(self.scale(self.gap(h)))


x_img = rng.random((2, 12, 12, 3)).astype(np.float32)
net = Net()
net(x_img[:1])
init(net, "net")
results["subclassed"] = np.asarray(net(x_img, training=False))

inp = keras.Input(shape=(8, 8, 2))
a = layers.Conv2D(3, 3, padding="same", activation="tanh")(inp)
b = layers.MaxPool2D(pool_size=2, strides=1, padding="same")(a)
c = layers.AvgPool2D(2)(a)
merged = layers.Add()([a, b])
g1 = layers.GlobalMaxPooling2D()(merged)
g2 = layers.Flatten()(c)
cat = layers.Concatenate()([g1, g2])
r = layers.Reshape((3, 17))(cat)
out = layers.Activation("sigmoid")(r)
func = keras.Model(inp, out)
init(func, "func")
x_fn = rng.normal(size=(2, 8, 8, 2)).astype(np.float32)
results["functional"] = np.asarray(func(x_fn))

# ---------------------------------------------------------------- sequences
tokens_in = keras.Input(shape=(10,), dtype="int32")
e = layers.Embedding(12, 6)(tokens_in)
c1 = layers.Conv1D(5, 3, padding="causal", dilation_rate=2, activation="relu")(e)
c2 = layers.Conv1D(5, 2, padding="same")(e)
m1 = layers.MaxPooling1D(2)(layers.Multiply()([c1, c2]))
m2 = layers.AveragePooling1D(3, strides=2, padding="same")(layers.Subtract()([c1, c2]))
n = layers.LayerNormalization()(layers.Average()([m1, m2]))
v = layers.Conv1D(4, 2, strides=2)(layers.Maximum()([n, layers.Minimum()([m1, m2])]))
pooled = layers.Concatenate()([layers.GlobalAveragePooling1D()(v), layers.GlobalMaxPooling1D()(n)])
seq = keras.Model(tokens_in, layers.Dense(3)(pooled))
init(seq, "seq")
tokens = rng.integers(0, 12, size=(4, 10)).astype(np.int32)
seq_labels = np.array([0, 2, 1, 2])
seq_opt = keras.optimizers.SGD(0.1)
seq_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
results["sequence_out"] = np.asarray(seq(tokens))


def tape_steps(model, opt, steps=3):
    """`steps` GradientTape steps of the model on the token batch; their losses."""
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = seq_loss(seq_labels, model(tokens, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return losses


results["sequence_losses"] = tape_steps(seq, seq_opt)
results["sequence_embeddings"] = np.asarray(seq.get_weights()[0])

rnn_in = keras.Input(shape=(10,), dtype="int32")
r_seq = layers.LSTM(5, return_sequences=True)(layers.Embedding(12, 6)(rnn_in))
r_out, r_h = layers.GRU(4, return_state=True)(r_seq)
l_out, l_h, l_c = layers.LSTM(3, return_state=True)(r_seq)
rnn = keras.Model(rnn_in, layers.Dense(3)(layers.Concatenate()([r_out, r_h, l_out, l_h, l_c])))
init(rnn, "rnn")
results["recurrent_out"] = np.asarray(rnn(tokens))
results["recurrent_losses"] = tape_steps(rnn, keras.optimizers.SGD(0.1, momentum=0.9))
results["recurrent_weights"] = np.concatenate([w.ravel() for w in rnn.get_weights()])

class Block(keras.Model):     # a subclassed transformer block, first called inside the tape
    def __init__(self):
        super().__init__()
        self.emb = layers.Embedding(12, 8)
        self.att = layers.MultiHeadAttention(num_heads=2, key_dim=3)
        self.norm = layers.LayerNormalization()
        self.out = layers.Dense(3)

    def call(self, x, training=False):
        h = self.emb(x)
        h = self.norm(h + self.att(h, h, use_causal_mask=True))
        return self.out(h[:, -1])


att_in = keras.Input(shape=(10, 6))
att_mem = keras.Input(shape=(4, 5))
a_out, a_scores = layers.MultiHeadAttention(3, 2, value_dim=4, output_shape=7)(att_in, att_mem,
                                                                              return_attention_scores=True)
att = keras.Model([att_in, att_mem], [a_out, a_scores])
init(att, "att")
att_x, att_m = rng.normal(size=(2, 10, 6)).astype(np.float32), rng.normal(size=(2, 4, 5)).astype(np.float32)
results["attention_out"], results["attention_scores"] = [np.asarray(v) for v in att([att_x, att_m])]
block = Block()
block(tokens[:1])
init(block, "block")
results["block_losses"] = tape_steps(block, keras.optimizers.SGD(0.1))
results["block_weights"] = np.concatenate([w.ravel() for w in block.get_weights()])

# ---------------------------------------------------------------- optimizers, schedules, losses
x_tab = rng.normal(size=(8, 6)).astype(np.float32)
labels = rng.integers(0, 3, size=(8,))
onehot = tf.one_hot(labels, 3)
binary = (rng.random((8, 1)) > 0.5).astype(np.float32)
target = rng.normal(size=(8, 3)).astype(np.float32)


def train(key, opt, loss_fn, y, units, final_act, steps=4):
    model = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(5, activation="relu"),
                              layers.Dense(units, activation=final_act)])
    init(model, key)
    out = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            pred = model(x_tab, training=True)
            loss = loss_fn(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        out.append(float(loss))
    return out, pred


results["rmsprop_cce_logits"], _ = train(
    "o1", keras.optimizers.RMSprop(0.01), keras.losses.CategoricalCrossentropy(from_logits=True), onehot, 3, None)
results["rmsprop_centered_mse"], _ = train(
    "o2", keras.optimizers.RMSprop(0.01, momentum=0.9, centered=True), keras.losses.MeanSquaredError(), target, 3, None)
schedule = keras.optimizers.schedules.PiecewiseConstantDecay([1, 2], [0.5, 0.2, 0.05])
results["sgd_piecewise_bce"], p_bin = train(
    "o3", keras.optimizers.SGD(schedule), keras.losses.BinaryCrossentropy(), binary, 1, "sigmoid")
cosine = keras.optimizers.schedules.CosineDecay(0.01, 3, alpha=0.1)
results["adam_cosine_amsgrad_cce"], p_cat = train(
    "o4", keras.optimizers.Adam(cosine, amsgrad=True), keras.losses.CategoricalCrossentropy(label_smoothing=0.1),
    onehot, 3, "softmax")
results["sgd_momentum_mae"], _ = train(
    "o5", keras.optimizers.SGD(0.05, momentum=0.9), keras.losses.MeanAbsoluteError(), target, 3, None)
results["bce_logits"] = float(keras.losses.BinaryCrossentropy(from_logits=True)(binary, x_tab[:, :1]))
acc = keras.metrics.CategoricalAccuracy()
acc.update_state(onehot, p_cat)
bacc = keras.metrics.BinaryAccuracy()
bacc.update_state(binary, p_bin)
results["metrics"] = [float(acc.result()), float(bacc.result())]
results["schedules"] = [float(schedule(s)) for s in range(4)] + [float(cosine(s)) for s in range(5)]

# ---------------------------------------------------------------- tf ops
t = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])
results["reduce_mean"] = np.asarray(tf.reduce_mean(t))
results["reduce_mean_keep"] = np.asarray(tf.reduce_mean(t, axis=1, keepdims=True))
results["math_reduce_mean"] = np.asarray(tf.math.reduce_mean(t, 0))
results["reduce_max"] = np.asarray(tf.reduce_max(t, axis=1))
results["argmax"] = np.asarray(tf.math.argmax(t, 1))
results["argmax_default"] = np.asarray(tf.argmax(t))
results["matmul"] = np.asarray(tf.matmul(t, tf.reshape(t, (3, 2))))
results["square"] = np.asarray(tf.square(t))
results["relu"] = np.asarray(tf.nn.relu(t - 3.0))
results["softmax"] = np.asarray(tf.nn.softmax(t))
results["equal"] = np.asarray(tf.cast(tf.math.equal(t, 2.0), tf.float32))
results["casts"] = [np.asarray(tf.cast(t, tf.int64)).tolist(), np.asarray(tf.cast(t, tf.float16)).tolist(),
                    np.asarray(tf.cast(tf.cast(t, tf.bool), tf.float32)).tolist()]
results["convert"] = np.asarray(tf.convert_to_tensor(np.ones(2), dtype=tf.float64))
results["one_hot"] = np.asarray(onehot)
with tf.device("/cpu:0"):
    results["device_sum"] = np.asarray(tf.reduce_sum(t))
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    scoped = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(2)])
results["replicas"] = [strategy.num_replicas_in_sync, tf.distribute.OneDeviceStrategy("/cpu:0").num_replicas_in_sync,
                       len(scoped.trainable_variables)]

# ---------------------------------------------------------------- a model built inside the tape (first call)
class Lazy(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = layers.Dense(4, activation="relu", kernel_initializer="ones")
        self.bn = layers.BatchNormalization()
        self.d2 = layers.Dense(3, kernel_initializer="zeros")

    def call(self, x, training=False):
        return self.d2(self.bn(self.d1(x), training=training))


lazy = Lazy()
lazy_opt = keras.optimizers.SGD(0.1)
lazy_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
lazy_losses = []
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = lazy_loss(labels, lazy(x_tab, training=True))
    grads = tape.gradient(loss, lazy.trainable_variables)
    lazy_opt.apply_gradients(zip(grads, lazy.trainable_variables))
    lazy_losses.append(float(loss))
results["lazy_losses"] = lazy_losses
results["lazy_weights"] = np.concatenate([w.ravel() for w in lazy.get_weights()])

# ---------------------------------------------------------------- tf.data and saving
data = np.arange(10, dtype=np.float32)
ds = tf.data.Dataset.from_tensor_slices((data, data * 2)).map(lambda a, b: (a + 1, b)).batch(4).repeat(2).take(5)
results["dataset"] = np.concatenate([np.asarray(a) + 100 * np.asarray(b) for a, b in ds])
results["dataset_len"] = len(tf.data.Dataset.from_tensor_slices(data).batch(3))
shuffled = tf.data.Dataset.from_tensor_slices(data).shuffle(10, seed=1).batch(5)
results["shuffled_sorted"] = np.sort(np.concatenate([np.asarray(b) for b in shuffled]))
func.save_weights(OUT + ".weights.h5")
before = np.asarray(func(x_fn))
func.set_weights([w * 0 for w in func.get_weights()])
func.load_weights(OUT + ".weights.h5")
results["reloaded"] = np.asarray(func(x_fn)) - before

# ---------------------------------------------------------------- fit extras and boilerplate
keras.backend.clear_session()
for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)
results["cpus"] = len(tf.config.list_physical_devices("CPU"))
y_cat = keras.utils.to_categorical(labels, 3)
results["to_categorical"] = y_cat
results["newaxis"] = np.asarray(tf.constant(x_tab)[:, tf.newaxis, :2])
tf.print("to_categorical rows:", len(y_cat))
es_model = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(4, activation="relu", kernel_initializer="he_normal"),
                             layers.Dense(3, activation="softmax")])
init(es_model, "es")
es_model.compile(optimizer=keras.optimizers.Adam(0.05), loss="categorical_crossentropy", metrics=["accuracy"])
hist = es_model.fit(x_tab, y_cat, batch_size=4, epochs=30, validation_split=0.25, shuffle=False, verbose=0,
                    callbacks=[keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)])
results["es_epochs"] = len(hist.history["loss"])
results["es_loss"] = hist.history["loss"]
results["es_val_loss"] = hist.history["val_loss"]
results["es_accuracy"] = hist.history["accuracy"]
results["es_evaluate"] = es_model.evaluate(x_tab, y_cat, verbose=0)

np.savez(OUT, **{k: np.asarray(v) for k, v in results.items()})
