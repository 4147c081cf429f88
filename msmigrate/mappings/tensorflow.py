"""TensorFlow / Keras training programs -> MindSpore (converted by msmigrate/tf_convert.py).

Sources are canonical names: "tensorflow.X" for tf.X, "keras.X" for keras.X, tf.keras.X and tf_keras.X.
Keras classes become the Keras-semantics classes emitted in _ms_compat (templates/compat_parts/keras_train.py):
they take Keras' arguments unchanged, keep channels-last tensors and Keras' weight layouts (so get_weights /
set_weights exchange the same arrays), and use Keras' formulas (Adam epsilon after the bias correction, RMSprop
epsilon inside the square root, BatchNormalization epsilon 1e-3 / momentum 0.99, probability clipping 1e-7).
The per-layer facts are the ones `msmigrate keras` (msmigrate/keras/convert.py) relies on for built models.
"""
from __future__ import annotations

from ..records import CONVERTED, DIFFERENCE, mapping

T = "tests/test_tf_training.py"
TAPE = f"{T}::test_gradient_tape_script_matches_tensorflow"
FIT = f"{T}::test_keras_fit_script_matches_tensorflow"
OPT = f"{T}::test_optimizers_schedules_losses_match_keras"
LAY = f"{T}::test_layers_and_models_match_keras"
OPS = f"{T}::test_tf_ops_and_misc_convert"
DATA = f"{T}::test_data_pipeline_and_saving"

_LAYOUT = ("channels-last in and out (NCHW only inside conv/pool), Keras' weight layout and order "
           "(get_weights/set_weights exchange Keras' arrays)")


def _k(path, test, note="", status=CONVERTED):
    mapping("keras." + path, "_ms_compat.keras." + path, status=status, note=note, test=test)


# ---- models and layers
_k("Input", TAPE, "a symbolic shape; layers called on it build their Parameters at once")
_k("Sequential", TAPE, "a Cell applying its layers in order; builds when the input shape is known "
   "(keras.Input, input_shape=, model.build() or the first call)")
_k("Model", FIT, "functional (Model(inputs, outputs): the recorded layer graph is replayed) or subclassed "
   "(construct calls `call`); compile/fit/evaluate/predict/save_weights/load_weights/get_weights/set_weights are "
   "methods of the helper", status=DIFFERENCE)
mapping("keras.models.Sequential", "_ms_compat.keras.Sequential", note="as keras.Sequential", test=TAPE)
mapping("keras.models.Model", "_ms_compat.keras.Model", note="as keras.Model", test=FIT)
mapping("keras.layers.InputLayer", None, note="use keras.Input(shape=...) instead")
for _name, _test in (("Dense", TAPE), ("Conv2D", TAPE), ("MaxPooling2D", TAPE), ("MaxPool2D", LAY),
                     ("AveragePooling2D", LAY), ("AvgPool2D", LAY), ("GlobalAveragePooling2D", LAY),
                     ("GlobalMaxPooling2D", LAY), ("Flatten", TAPE), ("Reshape", LAY), ("Activation", LAY),
                     ("ReLU", LAY), ("Add", LAY), ("Concatenate", LAY), ("Input", TAPE), ("Layer", LAY)):
    _k("layers." + _name, _test, _LAYOUT)
SEQ = f"{T}::test_sequence_layers_match_keras"
for _name in ("Conv1D", "MaxPooling1D", "MaxPool1D", "AveragePooling1D", "AvgPool1D", "GlobalAveragePooling1D",
              "GlobalMaxPooling1D", "Subtract", "Multiply", "Average", "Maximum", "Minimum"):
    _k("layers." + _name, SEQ, "(batch, steps, channels) in and out, Keras' weight layout; Conv1D's 'causal' "
       "padding as zeros before the sequence" if _name == "Conv1D" else _LAYOUT)
_k("layers.Embedding", SEQ, "a lookup in Keras' (input_dim, output_dim) table, initialised uniformly in "
   "[-0.05, 0.05]; mask_zero=True raises MigrationError. Its gradient is the dense table's: TensorFlow hands "
   "Keras' optimizers one gradient row per looked-up id (IndexedSlices), and Adam, RMSprop and the others that "
   "square the gradient square each row before summing the rows of an id repeated in a batch (measured: 6e-2 "
   "apart after 3 Adam steps); SGD and momentum update the same", status=DIFFERENCE)
RNN = f"{T}::test_recurrent_layers_match_keras"
_k("layers.LSTM", RNN, "one step at a time (op by op), Keras' gate order i, f, c, o and weights kernel / "
   "recurrent_kernel / bias (unit_forget_bias), return_sequences and return_state; go_backwards, stateful and "
   "dropout raise MigrationError")
_k("layers.GRU", RNN, "reset_after=True (Keras' default; False raises MigrationError): gates z, r, h, bias "
   "(2, 3*units), return_sequences and return_state")
_k("layers.MultiHeadAttention", f"{T}::test_multi_head_attention_matches_keras", "Keras' weights and order "
   "(query, key, value, output), the query scaled by 1/sqrt(key_dim), masks (attention_mask, use_causal_mask) as "
   "-1e9 scores, return_attention_scores; attention_axes raises MigrationError")
_k("layers.LayerNormalization", SEQ, "over the last axis (only), Keras' epsilon 1e-3, the biased variance")
_k("layers.Dropout", LAY, "rate = probability to drop, as in Keras; active only in training; the random stream "
   "differs from TensorFlow's", status=DIFFERENCE)
_k("layers.BatchNormalization", FIT, "Keras' epsilon 1e-3 and momentum 0.99 convention; biased batch variance for "
   "the moving variance, as Keras; only axis=-1")

H70 = "tests/test_heldout70_programs.py"
_k("layers.RepeatVector", f"{H70}::test_repeat_vector_and_error_metrics_match_keras",
   "(batch, features) -> (batch, n, features)")
_k("datasets.mnist.load_data", f"{H70}::test_mnist_load_data_reads_keras_cache",
   "reads Keras' cached mnist.npz ($KERAS_HOME/datasets or ~/.keras/datasets) as Keras does; a missing file, or "
   "one whose SHA-256 is not MNIST's (which Keras would download again), raises MigrationError: no download",
   status=DIFFERENCE)

TCN = f"{H70}::test_tcn_style_layers_match_keras"
_k("layers.SpatialDropout1D", TCN, "one mask per sample and channel, in training only; MindSpore's random stream "
   "(not TensorFlow's)", status=DIFFERENCE)
_k("layers.Lambda", TCN, "a layer computing function(inputs, **arguments)")
_k("layers.add", TCN, "an Add layer applied to the list")
_k("saving.register_keras_serializable", TCN, "Keras' registry for deserialising saved models: the class is handed "
   "back unchanged (nothing converted reads the registry)")
mapping("keras.utils.register_keras_serializable", "_ms_compat.keras.saving.register_keras_serializable",
        note="as keras.saving.register_keras_serializable", test=TCN)
for _name in ("disable_traceback_filtering", "enable_traceback_filtering"):
    mapping("keras.config." + _name, "drop", test=f"{H70}::test_names_of_imports_as_attributes_keywords_and_locals",
            note="Keras' filtering of its own frames from tracebacks: nothing to filter, the call is removed")
_k("backend.name_scope", TCN, "a no-op context: MindSpore's Parameters are named after their layers")
for _name in ("GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Zeros", "Ones", "Orthogonal"):
    _k("initializers." + _name, TCN, "an initializer object: add_weight(initializer=...) draws as for its string "
       "name, a call with a shape gives a Tensor; NumPy's stream (the same distribution, not Keras' draws)",
       status=DIFFERENCE)
_k("random.SeedGenerator", TCN, "a seed holder; the draws come from MindSpore's generator", status=DIFFERENCE)
_k("random.dropout", TCN, "always drops (no training flag, as Keras), scaled by 1/(1-rate); MindSpore's random "
   "stream", status=DIFFERENCE)
mapping("keras.ops.matmul", "mindspore.ops.matmul", test=TCN, note="as keras.ops.matmul (Tensors)")
mapping("keras.ops.concatenate", "mindspore.ops.cat", test=TCN, note="axis 0 by default, as Keras")
mapping("keras.ops.sum", "mindspore.ops.sum", args=("x", "axis", "keepdims"), target_args=("input", "dim", "keepdim"),
        rename={"x": "input", "axis": "dim", "keepdims": "keepdim"}, test=TCN, note="as keras.ops.sum (Tensors)")

# ---- losses, metrics
for _name, _test in (("SparseCategoricalCrossentropy", TAPE), ("CategoricalCrossentropy", OPT),
                     ("BinaryCrossentropy", OPT), ("MeanSquaredError", OPT), ("MeanAbsoluteError", OPT)):
    _k("losses." + _name, _test, "Keras' mean over the batch; probabilities clipped to [1e-7, 1-1e-7] when "
       "from_logits=False")
for _name, _test in (("Mean", TAPE), ("SparseCategoricalAccuracy", TAPE), ("CategoricalAccuracy", OPT),
                     ("BinaryAccuracy", OPT)):
    _k("metrics." + _name, _test, "computed on the host with NumPy (update_state/result/reset_state)")
for _name in ("MeanSquaredError", "MeanAbsoluteError"):
    _k("metrics." + _name, f"{H70}::test_repeat_vector_and_error_metrics_match_keras",
       "each sample's mean over the last axis, averaged over the samples, on the host (float64 sums)")

# ---- optimizers and schedules
_k("optimizers.SGD", FIT, "Keras' momentum form (m = momentum*m - lr*g; p += m), nesterov too")
_k("optimizers.Adam", TAPE, "Keras' form: lr*sqrt(1-b2^t)/(1-b1^t) and epsilon (1e-7) added to sqrt(v) after "
   "the bias correction (torch/mindspore.nn.Adam place eps differently)")
_k("optimizers.RMSprop", OPT, "Keras' form: rho 0.9, epsilon 1e-7 inside the square root")
_k("optimizers.schedules.ExponentialDecay", TAPE, "evaluated on the host at the optimizer's step count")
_k("optimizers.schedules.PiecewiseConstantDecay", OPT, "evaluated on the host at the optimizer's step count")
_k("optimizers.schedules.CosineDecay", OPT, "evaluated on the host at the optimizer's step count (warmup too)")
_k("callbacks.Callback", FIT, "the helper's fit() calls on_train_begin/end, on_epoch_begin/end and "
   "on_train_batch_begin/end with Keras' logs (running means over the epoch)")
_k("callbacks.History", FIT, "history.history holds the per-epoch logs")

# ---- tf.* training machinery
mapping("tensorflow.GradientTape", "mindspore.value_and_grad", status=DIFFERENCE, test=TAPE,
        note="the tape's block becomes a forward function returning the gradient target and every name it "
             "assigns; mindspore.value_and_grad(forward, None, sources, has_aux=True) replaces "
             "tape.gradient(target, sources). Persistent tapes and tape.watch of non-Parameters are TODOs")
mapping("tensorflow.function", "drop", status=DIFFERENCE, test=TAPE,
        note="removed: the step runs in PyNative mode (host-side metrics and the schedule stay valid)")
mapping("tensorflow.device", "drop", test=OPS, note="the `with` keeps only its body: MindSpore places work on "
        "the device chosen by mindspore.set_device")
mapping("tensorflow.data.Dataset", "_ms_compat.tf_data.Dataset", status=DIFFERENCE, test=DATA,
        note="in-memory from_tensor_slices/shuffle/batch/map/repeat/take/prefetch yielding MindSpore Tensors; "
             "shuffle order differs from TensorFlow's (NumPy generator), unshuffled order is the same")
mapping("tensorflow.data.AUTOTUNE", "_ms_compat.tf_data.AUTOTUNE", test=TAPE, note="prefetch is a no-op")
mapping("tensorflow.data.experimental.AUTOTUNE", "_ms_compat.tf_data.AUTOTUNE", test=TAPE, note="prefetch is a no-op")
mapping("tensorflow.distribute.MirroredStrategy", "_ms_compat.OneDeviceStrategy", status=DIFFERENCE, test=OPS,
        note="runs on one device (scope() is a no-op). For data parallelism launch with msrun and use "
             "mindspore.communication.init() + set_auto_parallel_context(parallel_mode=DATA_PARALLEL) with "
             "nn.DistributedGradReducer, as the torch DDP conversion (mappings/distributed.py) emits")
mapping("tensorflow.distribute.OneDeviceStrategy", "_ms_compat.OneDeviceStrategy", test=OPS, note="one device")
mapping("tensorflow.random.set_seed", "mindspore.set_seed", args=("seed",), target_args=("seed",), test=TAPE,
        status=DIFFERENCE, note="random streams differ from TensorFlow's")
mapping("tensorflow.train.Checkpoint", None, note="use model.save_weights(path) (a MindSpore checkpoint) or "
        "mindspore.save_checkpoint(model, path); optimizer slots are not saved")

# ---- tf.* math used in training loops
mapping("tensorflow.float32", "mindspore.float32", test=OPS)
mapping("tensorflow.float16", "mindspore.float16", test=OPS)
mapping("tensorflow.float64", "mindspore.float64", test=OPS)
mapping("tensorflow.int32", "mindspore.int32", test=TAPE)
mapping("tensorflow.int64", "mindspore.int64", test=OPS)
mapping("tensorflow.bool", "mindspore.bool_", test=OPS)
mapping("tensorflow.reduce_mean", "mindspore.ops.mean", args=("input_tensor", "axis", "keepdims", "name"),
        target_args=("input", "axis", "keep_dims"), rename={"input_tensor": "input", "keepdims": "keep_dims"},
        drop=("name",), test=OPS)
mapping("tensorflow.math.reduce_mean", "mindspore.ops.mean", args=("input_tensor", "axis", "keepdims", "name"),
        target_args=("input", "axis", "keep_dims"), rename={"input_tensor": "input", "keepdims": "keep_dims"},
        drop=("name",), test=OPS)
mapping("tensorflow.reduce_sum", "mindspore.ops.sum", args=("input_tensor", "axis", "keepdims", "name"),
        target_args=("input", "dim", "keepdim"), rename={"input_tensor": "input", "axis": "dim", "keepdims": "keepdim"},
        drop=("name",), test=TAPE)
mapping("tensorflow.reduce_max", "mindspore.ops.amax", args=("input_tensor", "axis", "keepdims", "name"),
        target_args=("input", "axis", "keepdims"), rename={"input_tensor": "input"}, drop=("name",), test=OPS)
mapping("tensorflow.argmax", "expr:ops.argmax({input}, {axis})", args=("input", "axis", "output_type", "name"),
        extra={"axis": "0"}, test=TAPE, note="TensorFlow's default axis is 0; the result is int64 as in TF")
mapping("tensorflow.math.argmax", "expr:ops.argmax({input}, {axis})", args=("input", "axis", "output_type", "name"),
        extra={"axis": "0"}, test=OPS, note="TensorFlow's default axis is 0")
mapping("tensorflow.cast", "expr:_ms_compat.tf_cast({x}, {dtype})", args=("x", "dtype", "name"), test=TAPE)
mapping("tensorflow.equal", "mindspore.ops.equal", args=("x", "y", "name"), target_args=("input", "other"),
        rename={"x": "input", "y": "other"}, drop=("name",), test=TAPE)
mapping("tensorflow.math.equal", "mindspore.ops.equal", args=("x", "y", "name"), target_args=("input", "other"),
        rename={"x": "input", "y": "other"}, drop=("name",), test=OPS)
mapping("tensorflow.one_hot", "expr:ops.one_hot(_ms_compat.tf_cast({indices}, ms.int32), {depth}, ms.Tensor(1.0, ms.float32), "
        "ms.Tensor(0.0, ms.float32))", args=("indices", "depth", "on_value", "off_value", "axis", "dtype", "name"),
        unsupported={"on_value": "only the default 1/0", "off_value": "only the default 1/0"}, test=OPS,
        note="float32 one-hot along the last axis (the default)")
mapping("tensorflow.constant", "expr:ms.Tensor({value}, {dtype})", args=("value", "dtype", "shape", "name"),
        extra={"dtype": "None"}, test=OPS)
mapping("tensorflow.convert_to_tensor", "expr:ms.Tensor({value}, {dtype})", args=("value", "dtype", "dtype_hint", "name"),
        extra={"dtype": "None"}, test=OPS)
mapping("tensorflow.matmul", "mindspore.ops.matmul", args=("a", "b"), target_args=("input", "other"),
        rename={"a": "input", "b": "other"}, test=OPS)
mapping("tensorflow.reshape", "mindspore.ops.reshape", args=("tensor", "shape", "name"),
        target_args=("input", "shape"), rename={"tensor": "input"}, drop=("name",), test=OPS)
mapping("tensorflow.square", "mindspore.ops.square", args=("x", "name"), target_args=("input",),
        rename={"x": "input"}, drop=("name",), test=OPS)
mapping("tensorflow.nn.relu", "mindspore.ops.relu", args=("features", "name"), target_args=("input",),
        rename={"features": "input"}, drop=("name",), test=OPS)
# through _ms_compat.softmax: over an axis of length 1 ops.softmax leaves a wrong gradient for later inputs of the
# same rank (MindSpore 2.10), and a slice of all -inf gives TF's nan
mapping("tensorflow.nn.softmax", "_ms_compat.softmax", args=("logits", "axis", "name"),
        target_args=("input", "axis"), rename={"logits": "input"}, drop=("name",), test=OPS)

# ---- boilerplate around training
MISC = f"{T}::test_fit_extras_and_boilerplate"
_k("callbacks.EarlyStopping", MISC, "Keras' rule (monitor, min_delta, patience, mode, baseline, "
   "restore_best_weights, start_from_epoch) on the epoch logs of the helper's fit()")
_k("utils.to_categorical", MISC, "NumPy, as in Keras")
mapping("tensorflow.config.list_physical_devices", "_ms_compat.list_physical_devices", args=("device_type",),
        target_args=("device_type",), status=DIFFERENCE, test=MISC,
        note="one entry for MindSpore's device target when the type matches (GPU loops run zero times on CPU)")
mapping("tensorflow.config.experimental.set_memory_growth", "drop", args=("device", "enable"), test=MISC,
        note="MindSpore manages device memory itself")
mapping("keras.backend.clear_session", "drop", args=("free_memory",), test=MISC,
        note="nothing to clear: layer names keep counting")
mapping("tensorflow.print", "print", test=MISC, note="Python's print (Tensors print their values)")
mapping("tensorflow.newaxis", "expr:None", test=MISC, note="indexing with None adds an axis, as np.newaxis")
_k("utils.set_random_seed", MISC, "seeds Python, NumPy and MindSpore; the random streams differ from TensorFlow's",
   status=DIFFERENCE)
