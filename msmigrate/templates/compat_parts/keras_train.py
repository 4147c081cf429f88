"""TensorFlow/Keras training programs on MindSpore: layers, models, optimizers, losses, metrics,
learning-rate schedules, tf.data and Keras' compile/fit, with Keras' semantics.

Converted TensorFlow code reaches these as `_ms_compat.keras.layers.Dense(...)`, `_ms_compat.tf_data.Dataset`...
Conventions kept from Keras, so that a converted script computes what the original did:
- layers take and return channels-last (NHWC) tensors; convolution and pooling transpose to MindSpore's NCHW
  and back inside the layer, and Flatten therefore flattens in Keras' (H, W, C) order;
- weights are stored in Keras' layouts (Dense kernel (in, out), Conv2D kernel (kh, kw, in, out)), so
  `model.get_weights()`/`set_weights()` exchange the same list of arrays as Keras and `np.savez` files written by
  the TensorFlow program load unchanged;
- layers create their Parameters when they first see an input shape (keras.Input, input_shape=, model.build()
  or a first call), as Keras does; build the model before collecting `model.trainable_variables`;
- optimizers use Keras' update formulas (Adam's epsilon is added after the bias correction, RMSprop's inside the
  square root), losses reduce with Keras' "sum over batch size" mean, probabilities are clipped to [1e-7, 1-1e-7].
"""
import types as _types
import weakref
import itertools as _itertools

_KERAS_EPS = 1e-7  # keras.backend.epsilon(): clipping of probabilities in the losses
_KERAS_NAMES = {}  # Keras-style unique layer names: dense, dense_1, ...
_UNBUILT = weakref.WeakSet()   # layers whose Parameters do not exist yet
# the helpers' own draws (initial weights, fit's shuffle), as Keras draws from its own generator: never NumPy's
# global stream, which the program's own np.random data comes from (demo_functional.py builds its model before
# `x = np.random.random(...)`); keras.utils.set_random_seed seeds it
_KERAS_RNG = [np.random.RandomState()]
_BUILD_PASSES = set()          # forward functions (their code) already run once to build the layers
_BUILDING = [False]            # True during such a run: BatchNormalization leaves its statistics alone


def build_before_grad(forward):
    """Keras builds a layer (creates its weights) at its first call, often inside the GradientTape; MindSpore's
    value_and_grad needs the weights before it starts. So while some layer is unbuilt, the forward function runs
    once beforehand (its result discarded, BatchNormalization statistics untouched) to create them."""
    if len(_UNBUILT) and forward.__code__ not in _BUILD_PASSES:
        _BUILD_PASSES.add(forward.__code__)
        _BUILDING[0] = True
        try:
            forward()
        finally:
            _BUILDING[0] = False


def _keras_unique_name(base):
    n = _KERAS_NAMES.get(base, 0)
    _KERAS_NAMES[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


# classes whose names would clash with the torch helpers in this module carry a "Keras" prefix here;
# Keras names layers and models after the class without it ("dropout", "sequential", "adam")
_KERAS_PREFIXED = ("KerasSequential", "KerasDropout", "KerasReLU", "KerasSGD", "KerasAdam", "KerasRMSprop",
                   "KerasEmbedding", "KerasLSTM", "KerasGRU")


def _snake(name):
    if name in _KERAS_PREFIXED:
        name = name[len("Keras"):]
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out += "_"
        out += ch.lower()
    return out


def _as_tensor(x, dtype=None):
    """numpy arrays, lists and scalars -> Tensor; float64 input becomes float32 as in Keras."""
    if isinstance(x, ms.Tensor):
        return x if dtype is None else x.astype(dtype)
    a = np.asarray(x)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    t = ms.Tensor(a)
    return t if dtype is None else t.astype(dtype)


def tf_cast(x, dtype):
    """tf.cast: Tensors, NumPy arrays and Python numbers alike."""
    return _as_tensor(x).astype(dtype)


# ------------------------------------------------------------------ activations
def _keras_activation(name):
    if name is None or callable(name):
        return name
    table = {
        "linear": None,
        "relu": ops.relu,
        "sigmoid": ops.sigmoid,
        "tanh": ops.tanh,
        "softmax": lambda x: _softmax_kernel(x, -1),   # compat_parts/softmax_slices.py
        "gelu": lambda x: ops.gelu(x, approximate="none"),  # Keras' gelu default is the exact erf form
        "elu": ops.elu,
        "softplus": ops.softplus,
        "swish": lambda x: x * ops.sigmoid(x),
        "silu": lambda x: x * ops.sigmoid(x),
    }
    if name not in table:
        raise MigrationError(f"Keras activation {name!r} has no counterpart in _ms_compat")
    return table[name]


# ------------------------------------------------------------------ initializers (numpy, Keras' defaults)
def _glorot_uniform(shape, fan_in, fan_out):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return _KERAS_RNG[0].uniform(-limit, limit, shape).astype(np.float32)


# ------------------------------------------------------------------ layers
class KerasTensor:
    """A symbolic input (keras.Input) or a layer output in a functional model: only its shape is known."""

    def __init__(self, shape, layer=None, parents=(), kwargs=None, index=None, call=None):
        self.shape = tuple(shape)       # with the batch dimension (None)
        self.layer, self.parents, self.kwargs = layer, tuple(parents), dict(kwargs or {})
        # one of several outputs (an LSTM's [output, h, c]): its index, and the call the outputs share
        self.index, self.call = index, call if call is not None else self

    # Keras 3's operators on symbolic tensors (`x += residual` in demo_functional.py): a layer of the op, recorded in
    # the functional graph as any layer call
    def _op(self, other, fn, swap=False):
        if isinstance(other, KerasTensor):
            pair = [other, self] if swap else [self, other]
            return KerasOperation(fn)(pair)
        return KerasOperation(lambda x: fn(other, x) if swap else fn(x, other))(self)

    def __add__(self, other):
        return self._op(other, ops.add)

    def __radd__(self, other):
        return self._op(other, ops.add, swap=True)

    def __sub__(self, other):
        return self._op(other, ops.sub)

    def __rsub__(self, other):
        return self._op(other, ops.sub, swap=True)

    def __mul__(self, other):
        return self._op(other, ops.mul)

    def __rmul__(self, other):
        return self._op(other, ops.mul, swap=True)

    def __truediv__(self, other):
        return self._op(other, ops.div)

    def __rtruediv__(self, other):
        return self._op(other, ops.div, swap=True)

    def __neg__(self):
        return KerasOperation(ops.neg)(self)


def Input(shape=None, batch_size=None, dtype=None, name=None, **kwargs):
    """keras.Input: a symbolic tensor; the batch dimension stays unknown."""
    return KerasTensor((batch_size,) + tuple(shape))


class Layer(nn.Cell):
    """Base of the Keras layers: a Cell that builds its Parameters from the first input shape it sees."""

    def __init__(self, name=None, input_shape=None, trainable=True, dtype=None, **kwargs):
        for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                    "bias_constraint"):
            if kwargs.get(key) is not None:
                raise MigrationError(f"{type(self).__name__}({key}=...) is not supported by _ms_compat: it changes "
                                     "the loss or the update; add the penalty to the loss in the converted program")
        unknown = set(kwargs) - {"kernel_initializer", "bias_initializer", "input_dim", "batch_input_shape",
                                 "autocast", "kernel_regularizer", "bias_regularizer", "activity_regularizer",
                                 "kernel_constraint", "bias_constraint", "beta_initializer", "gamma_initializer",
                                 "moving_mean_initializer", "moving_variance_initializer"}
        if unknown:
            raise MigrationError(f"{type(self).__name__}: arguments {sorted(unknown)} are not supported by _ms_compat")
        if input_shape is None and kwargs.get("input_dim") is not None:
            input_shape = (kwargs["input_dim"],)
        super().__init__()
        self._kernel_init = kwargs.get("kernel_initializer", "glorot_uniform")
        self._bias_init = kwargs.get("bias_initializer", "zeros")
        self.name = name or _keras_unique_name(_snake(type(self).__name__))
        self.built = False
        self.trainable = trainable
        self._keras_weights = []       # Keras' weight order (get_weights/set_weights)
        self._input_shape_arg = input_shape
        _UNBUILT.add(self)

    def add_weight(self, shape=None, initializer="glorot_uniform", dtype=None, trainable=True, name=None, **kwargs):
        """Keras' add_weight: returns a Parameter named "<layer>.<name>" (assign it to an attribute)."""
        shape = tuple(shape or ())
        if isinstance(initializer, KerasInitializer):
            initializer = initializer.kind
        if isinstance(initializer, np.ndarray):
            value = initializer
        elif initializer == "ones":
            value = np.ones(shape, np.float32)
        elif initializer == "zeros":
            value = np.zeros(shape, np.float32)
        elif initializer in ("glorot_uniform", "glorot_normal", "he_uniform", "he_normal"):
            # Keras' fans: the receptive field times the input / output channels
            receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
            fan_in = receptive * shape[-2] if len(shape) > 1 else (shape[0] if shape else 1)
            fan_out = receptive * shape[-1] if len(shape) > 1 else (shape[0] if shape else 1)
            if initializer == "glorot_uniform":
                value = _glorot_uniform(shape, fan_in, fan_out)
            elif initializer == "he_uniform":
                value = _KERAS_RNG[0].uniform(-math.sqrt(6.0 / fan_in), math.sqrt(6.0 / fan_in), shape)
            else:   # Keras' *_normal initializers are truncated at two standard deviations
                std = math.sqrt(2.0 / (fan_in + fan_out)) if initializer == "glorot_normal" else math.sqrt(2.0 / fan_in)
                std /= 0.87962566103423978      # the truncated normal's standard deviation ratio
                value = np.clip(_KERAS_RNG[0].normal(0.0, std, shape), -2 * std, 2 * std)
        elif initializer == "orthogonal":   # Keras: Q of a normal matrix's QR, signs from R's diagonal
            rows, cols = int(np.prod(shape[:-1])), shape[-1]
            a = _KERAS_RNG[0].normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
            q, r = np.linalg.qr(a)
            q = q * np.sign(np.diag(r))
            value = (q.T if rows < cols else q).reshape(shape)
        elif initializer == "random_normal":
            value = _KERAS_RNG[0].normal(0.0, 0.05, shape).astype(np.float32)
        elif initializer == "random_uniform":
            value = _KERAS_RNG[0].uniform(-0.05, 0.05, shape).astype(np.float32)
        else:
            raise MigrationError(f"initializer {initializer!r} not supported by _ms_compat")
        name = name or f"weight_{len(self._keras_weights)}"
        p = ms.Parameter(ms.Tensor(np.asarray(value, np.float32)), name=f"{self.name}.{name}",
                         requires_grad=trainable and self.trainable)
        self._keras_weights.append(p)
        return p

    def construct(self, *args, **kwargs):
        # a layer written in the program defines `call`, maybe without Keras' `training` argument
        if "training" in kwargs and not self._call_takes_training():
            kwargs.pop("training")
        return self.call(*args, **kwargs)

    def call(self, inputs, training=None):
        # a built-in layer's call is its construct (keras-tcn reads `inspect.signature(layer.call)`)
        if type(self).construct is Layer.construct:
            _raise_migration_error(f"{type(self).__name__}: a keras Layer subclass needs a `call` method")
        return self.construct(inputs, training=training)

    def compute_output_shape(self, input_shape):
        """The output shape of a call on zeros of INPUT_SHAPE (an unknown batch as 1, given back as it was)."""
        shape = tuple(input_shape)
        out = self(ms.Tensor(np.zeros(tuple(1 if d is None else d for d in shape), np.float32)), training=False)
        if isinstance(out, (list, tuple)):
            return [(shape[0],) + tuple(o.shape[1:]) for o in out]
        return (shape[0],) + tuple(out.shape[1:])

    def add_flags_recursive(self, **flags):
        # the training flag reaches the layers held in lists too (not sub-cells of MindSpore's)
        super().add_flags_recursive(**flags)
        for layer in self._keras_sublayers():
            layer.add_flags_recursive(**flags)
        return self

    def _call_takes_training(self):
        import inspect
        params = inspect.signature(self.call).parameters
        return "training" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())

    def build(self, input_shape):
        pass

    def __init_subclass__(cls, **kwargs):
        # as Keras' build wrapper: a layer whose build() ran (its first call, or an explicit `layer.build(shape)`
        # in another layer's build, as keras-tcn's) is built, and its first call does not build it again
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_keras_marks_built", False):
            def marked_build(self, *args, **kw):
                out = build(self, *args, **kw)
                self.built = True
                _UNBUILT.discard(self)
                return out
            marked_build._keras_marks_built = True
            marked_build.__name__, marked_build.__doc__ = build.__name__, build.__doc__
            cls.build = marked_build

    def _maybe_build(self, shape):
        if not self.built:
            self.build(tuple(shape))
            self.built = True
            _UNBUILT.discard(self)

    def __call__(self, *args, **kwargs):
        _keras_op_by_op(self)
        first = args[0] if args else None
        if len(args) > 1 and isinstance(first, KerasTensor):    # layer(query, value): one list of parents
            return self._symbolic_call(list(args), kwargs)
        if isinstance(first, KerasTensor) or (isinstance(first, (list, tuple)) and first
                                              and isinstance(first[0], KerasTensor)):
            return self._symbolic_call(first, kwargs)
        if not self.built:
            x = first[0] if isinstance(first, (list, tuple)) else first
            self._maybe_build(x.shape)
        return super().__call__(*args, **kwargs)

    def _symbolic_call(self, inputs, kwargs):
        """Functional API: run the layer on zeros of the symbolic shape (batch 1) to build it and learn the
        output shape; the returned KerasTensor remembers where it came from."""
        many = isinstance(inputs, (list, tuple))
        parents = list(inputs) if many else [inputs]
        zeros = [ms.Tensor(np.zeros((1,) + p.shape[1:], np.float32)) for p in parents]
        out = self(zeros if many else zeros[0], **kwargs)
        if isinstance(out, (list, tuple)):
            call = object()
            return [KerasTensor((None,) + tuple(o.shape[1:]), self, parents, kwargs, i, call)
                    for i, o in enumerate(out)]
        return KerasTensor((None,) + tuple(out.shape[1:]), self, parents, kwargs)

    def __setattr__(self, name, value):
        # Keras tracks the layers a layer holds (as attributes, or in lists, tuples and dicts assigned to
        # attributes, a list's later appends too), in the order it first meets them: their weights follow the
        # layer's own in `weights` (keras-tcn's ResidualBlock keeps its convolutions in `self.layers = []`)
        if type(value) is list:
            value = _TrackedLayerList(value, self)
        _keras_track(self, value)
        super().__setattr__(name, value)

    def _keras_sublayers(self):
        return list(self.__dict__.get("_keras_tracked", ()))

    @property
    def weights(self):
        ws, seen = [], set()
        for w in list(self._keras_weights) + [w for layer in self._keras_sublayers() for w in layer.weights]:
            if id(w) not in seen:
                seen.add(id(w))
                ws.append(w)
        return ws

    @property
    def trainable_variables(self):
        return [p for p in self.weights if p.requires_grad]

    trainable_weights = trainable_variables

    def get_weights(self):
        return [p.asnumpy().copy() for p in self.weights]   # copies: asnumpy() can share the memory

    def set_weights(self, arrays):
        _keras_set(self.weights, arrays)


def _keras_op_by_op(layer):
    """The Keras helpers run op by op (PyNative): under GRAPH_MODE MindSpore would compile each Cell's construct
    on its own, and a Keras model's compile() is also the name of MindSpore's Cell.compile (called with the
    inputs), so a layer or model called in GRAPH_MODE stops here, naming the program's line."""
    if ms.get_context("mode") == ms.GRAPH_MODE:
        where = calling_line()
        _raise_migration_error(f"{where or 'a Keras layer call'}: {type(layer).__name__} called with "
                               "mindspore's GRAPH_MODE set; the Keras helpers (_ms_compat.keras) run op by op: set "
                               "mindspore.set_context(mode=mindspore.PYNATIVE_MODE) (compile a step of your own "
                               "with mindspore.jit where one is needed)")


def _keras_track(owner, value):
    """Records the Layers VALUE holds (itself, or the items of a list, tuple or dict) as OWNER's sublayers, once
    each, in order (Keras' tracker: Layer.weights lists the layer's own weights, then each sublayer's)."""
    if isinstance(value, Layer):
        if value is owner:
            return
        tracked = owner.__dict__.setdefault("_keras_tracked", [])
        if all(value is not t for t in tracked):
            tracked.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _keras_track(owner, item)
    elif isinstance(value, dict):
        for item in value.values():
            _keras_track(owner, item)


class _TrackedLayerList(list):
    """A list assigned to a Keras layer's attribute: the layers appended to it later are tracked too."""

    def __init__(self, items, owner):
        super().__init__(items)
        object.__setattr__(self, "_owner", owner)

    def append(self, item):
        _keras_track(self._owner, item)
        super().append(item)

    def extend(self, items):
        items = list(items)
        _keras_track(self._owner, items)
        super().extend(items)

    def insert(self, index, item):
        _keras_track(self._owner, item)
        super().insert(index, item)

    def __setitem__(self, index, item):
        _keras_track(self._owner, item)
        super().__setitem__(index, item)


def _keras_set(params, arrays):
    arrays = list(arrays)
    if len(arrays) != len(params):
        raise MigrationError(f"set_weights: got {len(arrays)} arrays for {len(params)} weights")
    for p, a in zip(params, arrays):
        a = np.asarray(a, dtype=np.float32)
        if tuple(a.shape) != tuple(p.shape):
            raise MigrationError(f"set_weights: {p.name} has shape {tuple(p.shape)}, array {a.shape}")
        ops.assign(p, ms.Tensor(a))


class Dense(Layer):
    def __init__(self, units, activation=None, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        self.units, self.use_bias = units, use_bias
        self.activation = _keras_activation(activation)

    def build(self, input_shape):
        fan_in = input_shape[-1]
        self.kernel = self.add_weight((fan_in, self.units), self._kernel_init, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight((self.units,), self._bias_init, name="bias")

    def construct(self, x, training=None):
        y = ops.matmul(x, self.kernel)       # kernel kept in Keras' (in, out) layout
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _check_channels_last(data_format):
    if data_format not in (None, "channels_last"):
        raise MigrationError("only data_format='channels_last' (Keras' default) is supported by _ms_compat")


class Conv2D(Layer):
    """Keras Conv2D on NHWC input. 'same' padding is MindSpore's pad_mode='same' (both pad the extra row/column
    at the bottom/right)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1),
                 activation=None, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        _check_channels_last(data_format)
        self.filters, self.kernel_size = filters, _pair(kernel_size)
        self.strides, self.dilation = _pair(strides), _pair(dilation_rate)
        self.padding, self.use_bias = padding.lower(), use_bias
        self.activation = _keras_activation(activation)

    def build(self, input_shape):
        kh, kw = self.kernel_size
        cin = input_shape[-1]
        shape = (kh, kw, cin, self.filters)
        self.kernel = self.add_weight(shape, self._kernel_init, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight((self.filters,), self._bias_init, name="bias")

    def construct(self, x, training=None):
        w = ops.transpose(self.kernel, (3, 2, 0, 1))           # HWIO -> OIHW
        y = ops.conv2d(ops.transpose(x, (0, 3, 1, 2)), w, stride=self.strides, pad_mode=self.padding,
                       dilation=self.dilation)
        y = ops.transpose(y, (0, 2, 3, 1))                       # back to NHWC
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y


class _Pool2D(Layer):
    _cell = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _check_channels_last(data_format)
        size = _pair(pool_size)
        self.pool = self._cell(kernel_size=size, stride=_pair(strides) if strides is not None else size,
                               pad_mode=padding.lower())

    def construct(self, x, training=None):
        return ops.transpose(self.pool(ops.transpose(x, (0, 3, 1, 2))), (0, 2, 3, 1))


class MaxPooling2D(_Pool2D):
    _cell = nn.MaxPool2d


class AveragePooling2D(_Pool2D):
    _cell = nn.AvgPool2d


class GlobalAveragePooling2D(Layer):
    _axes = (1, 2)      # the spatial axes of a channels-last tensor

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _check_channels_last(data_format)
        self.keepdims = keepdims

    def construct(self, x, training=None):
        return ops.mean(x, self._axes, keep_dims=self.keepdims)


class GlobalMaxPooling2D(GlobalAveragePooling2D):
    def construct(self, x, training=None):
        return ops.amax(x, self._axes, keepdims=self.keepdims)


class Flatten(Layer):
    """Flattens in channels-last order, exactly as Keras (layers keep NHWC)."""

    def construct(self, x, training=None):
        return ops.reshape(x, (x.shape[0], -1))


class RepeatVector(Layer):
    """keras.layers.RepeatVector(n): (batch, features) -> (batch, n, features), each row repeated n times."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def construct(self, x, training=None):
        if len(x.shape) != 2:
            _raise_migration_error(f"RepeatVector takes (batch, features) inputs, got shape {tuple(x.shape)}")
        return ops.broadcast_to(ops.expand_dims(x, 1), (x.shape[0], self.n, x.shape[1]))


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def construct(self, x, training=None):
        return ops.reshape(x, (x.shape[0],) + self.target_shape)


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _keras_activation(activation)

    def construct(self, x, training=None):
        return self.activation(x) if self.activation is not None else x


class KerasReLU(Activation):
    def __init__(self, **kwargs):
        super().__init__("relu", **kwargs)


class SpatialDropout1D(Layer):
    """keras.layers.SpatialDropout1D: drops whole channels of (batch, steps, channels) inputs (one mask per sample
    and channel), in training only, scaled by 1/(1-rate). The random stream differs from TensorFlow's."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(rate)

    def construct(self, x, training=None):
        active = self.training if training is None else training
        if not active or self.rate == 0.0:
            return x
        mask = ops.dropout(ops.ones((x.shape[0], 1, x.shape[2]), x.dtype), p=self.rate, training=True)
        return x * mask


class Lambda(Layer):
    """keras.layers.Lambda(function): a layer computing function(inputs); no weights of its own."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, inputs, mask=None, training=None):
        return self.function(inputs, **self.arguments)


class KerasOperation(Layer):
    """An operator applied to symbolic tensors in a functional model (x + y, x * 2.0): a layer without weights."""

    def __init__(self, fn, **kwargs):
        super().__init__(**kwargs)
        self.fn = fn

    def construct(self, inputs, training=None):
        return self.fn(*inputs) if isinstance(inputs, (list, tuple)) else self.fn(inputs)


def keras_add(inputs, **kwargs):
    """keras.layers.add(inputs): an Add layer applied to the list (symbolic or not)."""
    return Add(**kwargs)(inputs)


class KerasInitializer:
    """keras.initializers.GlorotNormal()... as objects: add_weight(initializer=...) draws as for its string name;
    calling one with a shape gives a Tensor of those draws (NumPy's stream, not Keras')."""

    def __init__(self, kind, seed=None):
        self.kind = kind

    def __call__(self, shape, dtype=None):
        holder = _types.SimpleNamespace(name=self.kind, trainable=True, _keras_weights=[])   # no layer name taken
        return ms.Tensor(Layer.add_weight(holder, tuple(shape), self.kind).asnumpy())


def _initializer_of(kind):
    def make(seed=None, **kwargs):
        if kwargs:
            raise MigrationError(f"keras initializer {kind!r}: arguments {sorted(kwargs)} are not supported by "
                                 "_ms_compat")
        return KerasInitializer(kind, seed)
    return make


class SeedGenerator:
    """keras.random.SeedGenerator: a seed holder; the draws it seeds come from MindSpore's generator instead."""

    def __init__(self, seed=None, **kwargs):
        self.seed = seed


def keras_random_dropout(inputs, rate, noise_shape=None, seed=None):
    """keras.random.dropout: always drops (no training flag), scaled by 1/(1-rate); MindSpore's random stream."""
    if noise_shape is not None:
        _raise_migration_error("keras.random.dropout(noise_shape=...) is not supported by _ms_compat")
    return ops.dropout(inputs, p=float(rate), training=True)


def register_keras_serializable(package="Custom", name=None):
    """keras.saving.register_keras_serializable: Keras' registry of classes for deserialising saved models;
    nothing converted reads it, so the decorator hands the class back unchanged."""
    def register(obj):
        return obj
    return register


def name_scope(name, **kwargs):
    """keras.backend.name_scope: a scope for TensorFlow's variable names; MindSpore's Parameters are named after
    their layers, so the scope adds nothing."""
    import contextlib
    return contextlib.nullcontext()


class KerasDropout(Layer):
    """`rate` is the probability to DROP, as in Keras. Active only when called with training=True (or the model
    is in training mode and no flag is given). The random stream differs from TensorFlow's."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(rate)

    def construct(self, x, training=None):
        active = self.training if training is None else training
        if not active or self.rate == 0.0:
            return x
        return ops.dropout(x, p=self.rate, training=True)


class BatchNormalization(Layer):
    """Keras BatchNormalization over the last axis: epsilon 1e-3, momentum 0.99 with Keras' convention
    (moving = moving * momentum + batch * (1 - momentum)); the biased batch variance is used for both the
    normalisation and the moving variance, as Keras does."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        if axis not in (-1,):
            raise MigrationError("BatchNormalization: only axis=-1 (channels-last) is supported by _ms_compat")
        self.momentum, self.epsilon, self.center, self.scale = float(momentum), float(epsilon), center, scale

    def build(self, input_shape):
        c = input_shape[-1]
        if self.scale:
            self.gamma = self.add_weight((c,), "ones", name="gamma")
        if self.center:
            self.beta = self.add_weight((c,), "zeros", name="beta")
        self.moving_mean = self.add_weight((c,), "zeros", trainable=False, name="moving_mean")
        self.moving_variance = self.add_weight((c,), "ones", trainable=False, name="moving_variance")

    def construct(self, x, training=None):
        active = self.training if training is None else training
        axes = tuple(range(len(x.shape) - 1))
        if active and _BUILDING[0]:
            mean = ops.mean(x, axes)
            var = ops.mean(ops.square(x - mean), axes)
        elif active:
            mean = ops.mean(x, axes)
            var = ops.mean(ops.square(x - mean), axes)
            m = self.momentum
            ops.assign(self.moving_mean, self.moving_mean * m + ops.stop_gradient(mean) * (1 - m))
            ops.assign(self.moving_variance, self.moving_variance * m + ops.stop_gradient(var) * (1 - m))
        else:
            mean, var = self.moving_mean, self.moving_variance
        y = (x - mean) * ops.rsqrt(var + self.epsilon)
        if self.scale:
            y = y * self.gamma
        if self.center:
            y = y + self.beta
        return y


class _Merge(Layer):
    def construct(self, inputs, training=None):
        return self._merge(list(inputs))


class Add(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, xs):
        return ops.concat(xs, self.axis)


class Subtract(_Merge):
    def _merge(self, xs):
        return xs[0] - xs[1]


class Multiply(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x
        return out


class Average(Add):
    def _merge(self, xs):
        return Add._merge(self, xs) / len(xs)


class Maximum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = ops.maximum(out, x)
        return out


class Minimum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = ops.minimum(out, x)
        return out


# sequences (batch, steps, features), channels-last as Keras keeps them
class KerasEmbedding(Layer):
    """Keras Embedding: a lookup of integer ids in `embeddings` (input_dim, output_dim), initialised uniformly in
    [-0.05, 0.05] as Keras does."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", mask_zero=False, input_length=None,
                 **kwargs):
        super().__init__(**kwargs)
        if mask_zero:
            raise MigrationError("Embedding(mask_zero=True): Keras' masks are not supported by _ms_compat; pad "
                                 "with an id the loss ignores, or mask the outputs in the program")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self._embeddings_init = "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer

    def build(self, input_shape):
        self.embeddings = self.add_weight((self.input_dim, self.output_dim), self._embeddings_init,
                                          name="embeddings")

    def construct(self, x, training=None):
        return ops.gather(self.embeddings, ops.cast(x, ms.int32), 0)


class Conv1D(Layer):
    """Keras Conv1D on (batch, steps, channels): the kernel kept in Keras' (k, in, out) layout, run as a 2-D
    convolution of height 1; padding 'valid', 'same' (MindSpore's, the extra zero at the end as Keras) or 'causal'
    (d * (k - 1) zeros concatenated before the sequence, then 'valid')."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation=None, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        _check_channels_last(data_format)
        one = lambda v: int(v[0]) if isinstance(v, (tuple, list)) else int(v)   # noqa: E731
        self.filters, self.kernel_size = filters, one(kernel_size)
        self.strides, self.dilation = one(strides), one(dilation_rate)
        self.padding, self.use_bias = padding.lower(), use_bias
        self.activation = _keras_activation(activation)

    def build(self, input_shape):
        self.kernel = self.add_weight((self.kernel_size, input_shape[-1], self.filters), self._kernel_init,
                                      name="kernel")
        if self.use_bias:
            self.bias = self.add_weight((self.filters,), self._bias_init, name="bias")

    def construct(self, x, training=None):
        x = ops.transpose(x, (0, 2, 1))
        pad = self.padding
        if pad == "causal":
            left = self.dilation * (self.kernel_size - 1)
            if left:
                x = ops.concat((ops.zeros(x.shape[:2] + (left,), x.dtype), x), 2)
            pad = "valid"
        w = ops.expand_dims(ops.transpose(self.kernel, (2, 1, 0)), 2)     # (k, in, out) -> (out, in, 1, k)
        y = ops.conv2d(ops.expand_dims(x, 2), w, stride=(1, self.strides), pad_mode=pad,
                       dilation=(1, self.dilation))
        y = ops.transpose(ops.squeeze(y, 2), (0, 2, 1))
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y


class _Recurrent(Layer):
    """Keras' LSTM/GRU over (batch, steps, features), one step at a time (run op by op): Keras' weights `kernel`
    (in, gates*units), `recurrent_kernel` (units, gates*units) and `bias`, in Keras' gate order."""
    _gates = 0

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
                 dropout=0.0, recurrent_dropout=0.0, recurrent_initializer="orthogonal", **kwargs):
        super().__init__(**kwargs)
        if go_backwards or stateful or dropout or recurrent_dropout:
            raise MigrationError(f"{type(self).__name__[5:]}(go_backwards/stateful/dropout/recurrent_dropout) is not "
                                 "supported by _ms_compat")
        self.units, self.use_bias = int(units), use_bias
        self.activation = _keras_activation(activation)
        self.recurrent_activation = _keras_activation(recurrent_activation)
        self.return_sequences, self.return_state = return_sequences, return_state
        self._recurrent_init = recurrent_initializer

    def build(self, input_shape):
        n = self._gates * self.units
        self.kernel = self.add_weight((input_shape[-1], n), self._kernel_init, name="kernel")
        self.recurrent_kernel = self.add_weight((self.units, n), self._recurrent_init, name="recurrent_kernel")
        if self.use_bias:
            self.bias = self.add_weight(self._bias_shape(), self._initial_bias(), name="bias")

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _initial_bias(self):
        return self._bias_init

    def construct(self, x, training=None):
        batch, steps = x.shape[0], x.shape[1]
        state = [ops.zeros((batch, self.units), x.dtype) for _ in range(self._states)]
        inputs = ops.matmul(x, self.kernel)       # every step's input part at once
        outputs = []
        for t in range(steps):
            state = self._step(inputs[:, t], state)
            outputs.append(state[0])
        out = ops.stack(outputs, 1) if self.return_sequences else state[0]
        return [out] + state if self.return_state else out


class KerasLSTM(_Recurrent):
    """Gates i, f, c, o as Keras orders them; unit_forget_bias (the forget gate's bias starts at 1) as Keras."""
    _gates, _states = 4, 2

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def _initial_bias(self):
        if self._bias_init != "zeros" or not self.unit_forget_bias:
            return self._bias_init
        u = self.units
        return np.concatenate([np.zeros(u), np.ones(u), np.zeros(2 * u)]).astype(np.float32)

    def _step(self, x_t, state):
        h, c = state
        z = x_t + ops.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            z = z + self.bias
        u = self.units
        i, f = self.recurrent_activation(z[:, :u]), self.recurrent_activation(z[:, u:2 * u])
        c = f * c + i * self.activation(z[:, 2 * u:3 * u])
        h = self.recurrent_activation(z[:, 3 * u:]) * self.activation(c)
        return [h, c]


class KerasGRU(_Recurrent):
    """Keras' GRU with reset_after=True (its default): gates z, r, h; bias (2, 3 * units), the input's row and the
    recurrent one, the reset gate applied after the recurrent matmul."""
    _gates, _states = 3, 1

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        if not reset_after:
            raise MigrationError("GRU(reset_after=False) is not supported by _ms_compat")

    def _bias_shape(self):
        return (2, 3 * self.units)

    def _step(self, x_t, state):
        h = state[0]
        r_all = ops.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            x_t, r_all = x_t + self.bias[0], r_all + self.bias[1]
        u = self.units
        z = self.recurrent_activation(x_t[:, :u] + r_all[:, :u])
        r = self.recurrent_activation(x_t[:, u:2 * u] + r_all[:, u:2 * u])
        candidate = self.activation(x_t[:, 2 * u:] + r * r_all[:, 2 * u:])
        return [z * h + (1 - z) * candidate]


class MultiHeadAttention(Layer):
    """Keras MultiHeadAttention over (batch, steps, features): Keras' weights (query/key/value kernels
    (in, heads, dim) with (heads, dim) biases, the output kernel (heads, value_dim, out)), the query scaled by
    1/sqrt(key_dim), masked scores set to -1e9 as Keras' softmax does, dropout on the scores in training."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, **kwargs):
        super().__init__(**kwargs)
        if attention_axes is not None:
            raise MigrationError("MultiHeadAttention(attention_axes=...) is not supported by _ms_compat")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim is not None else self.key_dim
        self.dropout, self.use_bias = float(dropout), use_bias
        self._output_dim = output_shape

    def _maybe_build(self, shape):
        pass    # built on the first call, which sees the query's and the value's widths (_UNBUILT until then)

    def _build(self, q_dim, k_dim, v_dim):
        h, kd, vd = self.num_heads, self.key_dim, self.value_dim
        for name, width, dim in (("query", q_dim, kd), ("key", k_dim, kd), ("value", v_dim, vd)):
            setattr(self, f"{name}_kernel", self.add_weight((width, h, dim), self._kernel_init, name=f"{name}.kernel"))
            if self.use_bias:
                setattr(self, f"{name}_bias", self.add_weight((h, dim), self._bias_init, name=f"{name}.bias"))
        out = self._output_dim if self._output_dim is not None else q_dim
        out = out[-1] if isinstance(out, (tuple, list)) else int(out)
        self.output_kernel = self.add_weight((h, vd, out), self._kernel_init, name="output.kernel")
        if self.use_bias:
            self.output_bias = self.add_weight((out,), self._bias_init, name="output.bias")

    def _project(self, x, name):
        kernel = getattr(self, f"{name}_kernel")
        y = ops.tensor_dot(x, kernel, ((2,), (0,)))         # (B, T, heads, dim)
        return y + getattr(self, f"{name}_bias") if self.use_bias else y

    def construct(self, query, value=None, key=None, attention_mask=None, return_attention_scores=False,
                  training=None, use_causal_mask=False):
        if value is None and isinstance(query, (list, tuple)):    # a functional model's replay: [query, value, key]
            query, value, key = (list(query) + [None])[:3]
        key = value if key is None else key
        query, value, key = _as_tensor(query), _as_tensor(value), _as_tensor(key)
        if not self.built:
            self._build(query.shape[-1], key.shape[-1], value.shape[-1])
            self.built = True
            _UNBUILT.discard(self)
        q = self._project(query, "query") * (1.0 / math.sqrt(float(self.key_dim)))
        k, v = self._project(key, "key"), self._project(value, "value")
        scores = ops.matmul(ops.transpose(q, (0, 2, 1, 3)), ops.transpose(k, (0, 2, 3, 1)))   # (B, heads, T, S)
        mask = None if attention_mask is None else ops.cast(attention_mask, ms.bool_)
        if use_causal_mask:
            causal = ms.Tensor(np.tril(np.ones((scores.shape[2], scores.shape[3]), np.bool_)))
            mask = causal if mask is None else ops.logical_and(mask, causal)
        if mask is not None:
            while mask.ndim < 4:
                mask = ops.expand_dims(mask, -3)
            scores = ops.where(mask, scores, ops.full_like(scores, -1e9))
        scores = _softmax_kernel(scores, -1)
        active = self.training if training is None else training
        probs = ops.dropout(scores, p=self.dropout, training=True) if active and self.dropout > 0 else scores
        out = ops.transpose(ops.matmul(probs, ops.transpose(v, (0, 2, 1, 3))), (0, 2, 1, 3))   # (B, T, heads, vd)
        out = ops.tensor_dot(out, self.output_kernel, ((2, 3), (0, 1)))
        if self.use_bias:
            out = out + self.output_bias
        return (out, scores) if return_attention_scores else out


class _Pool1D(Layer):
    _cell = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _check_channels_last(data_format)
        one = lambda v: int(v[0]) if isinstance(v, (tuple, list)) else int(v)   # noqa: E731
        size = one(pool_size)
        self.pool = self._cell(kernel_size=(1, size), stride=(1, one(strides) if strides is not None else size),
                               pad_mode=padding.lower())

    def construct(self, x, training=None):
        y = self.pool(ops.expand_dims(ops.transpose(x, (0, 2, 1)), 2))
        return ops.transpose(ops.squeeze(y, 2), (0, 2, 1))


class MaxPooling1D(_Pool1D):
    _cell = nn.MaxPool2d


class AveragePooling1D(_Pool1D):
    _cell = nn.AvgPool2d


class GlobalAveragePooling1D(GlobalAveragePooling2D):
    _axes = (1,)


class GlobalMaxPooling1D(GlobalMaxPooling2D):
    _axes = (1,)


class LayerNormalization(Layer):
    """Keras LayerNormalization over the last axis: epsilon 1e-3 (Keras' default), the biased variance."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        if axis not in (-1, [-1], (-1,)):
            raise MigrationError("LayerNormalization: only axis=-1 is supported by _ms_compat")
        self.epsilon, self.center, self.scale = float(epsilon), center, scale

    def build(self, input_shape):
        c = input_shape[-1]
        if self.scale:
            self.gamma = self.add_weight((c,), "ones", name="gamma")
        if self.center:
            self.beta = self.add_weight((c,), "zeros", name="beta")

    def construct(self, x, training=None):
        mean = ops.mean(x, -1, keep_dims=True)
        var = ops.mean(ops.square(x - mean), -1, keep_dims=True)
        y = (x - mean) * ops.rsqrt(var + self.epsilon)
        if self.scale:
            y = y * self.gamma
        if self.center:
            y = y + self.beta
        return y


# ------------------------------------------------------------------ models
class Model(Layer):
    """keras.Model in its three forms: functional (Model(inputs, outputs)), subclassed (a `call` method)
    and Sequential (below). Also carries compile/fit/evaluate/predict (see fit())."""

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        super().__init__(name=name)
        _UNBUILT.discard(self)      # a model has no weights of its own: its layers are tracked
        self._functional = None
        self._keras_compiled = False
        if inputs is not None:
            self._init_functional(inputs, outputs)

    # ---- functional API: replay the recorded layer graph
    def _init_functional(self, inputs, outputs):
        self._inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        self._outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        self._multi_in, self._multi_out = isinstance(inputs, (list, tuple)), isinstance(outputs, (list, tuple))
        order, seen = [], set()

        def visit(t):
            if id(t) in seen or t.layer is None:
                return
            seen.add(id(t))
            for p in t.parents:
                visit(p)
            order.append(t)
        for o in self._outputs:
            visit(o)
        self._functional = order
        layers = []
        for t in order:
            if all(t.layer is not l for l in layers):
                layers.append(t.layer)
        self.layer_list = nn.CellList(layers)
        self.built = True

    def _run_functional(self, x, training):
        values = {id(t): v for t, v in zip(self._inputs, list(x) if self._multi_in else [x])}
        calls = {}      # a layer call with several outputs runs once
        for t in self._functional:
            if id(t.call) not in calls:
                args = [values[id(p)] for p in t.parents]
                kw = dict(t.kwargs)
                if training is not None:
                    kw["training"] = training
                calls[id(t.call)] = t.layer(args if len(args) > 1 else args[0], **kw)
            out = calls[id(t.call)]
            values[id(t)] = out if t.index is None else out[t.index]
        outs = [values[id(o)] for o in self._outputs]
        return tuple(outs) if self._multi_out else outs[0]

    def construct(self, *args, **kwargs):
        if self._functional is not None:
            return self._run_functional(args[0], kwargs.get("training"))
        return Layer.construct(self, *args, **kwargs)

    def call(self, *args, **kwargs):
        raise MigrationError(f"{type(self).__name__}: a subclassed keras.Model needs a `call` method")

    def __call__(self, *args, **kwargs):
        _keras_op_by_op(self)
        if args and isinstance(args[0], ms.Tensor) is False and not isinstance(args[0], (KerasTensor, list, tuple)):
            args = (_as_tensor(args[0]),) + args[1:]
        if isinstance(args[0], (KerasTensor,)):
            return self._symbolic_call(args[0], kwargs)
        self.built = True
        return nn.Cell.__call__(self, *args, **kwargs)

    def build(self, input_shape):
        """Build by a call on zeros (batch 1), in inference mode so BatchNorm statistics stay unchanged."""
        shape = tuple(1 if d is None else d for d in input_shape)
        self(ms.Tensor(np.zeros(shape, np.float32)), training=False)

    @property
    def layers(self):
        return [c for c in self.cells() if isinstance(c, Layer)] if self._functional is None \
            else list(self.layer_list)

    def _all_layers(self):
        out = []
        for c in self.layers:
            out.extend(c._all_layers() if isinstance(c, Model) else [c])
        return out

    @property
    def weights(self):
        ws = []
        for layer in self._all_layers():
            ws.extend(layer.weights)
        return ws

    @property
    def trainable_variables(self):
        return [p for p in self.weights if p.requires_grad]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return [p for p in self.weights if not p.requires_grad]

    def summary(self, *args, **kwargs):
        print(f'Model: "{self.name}"')
        for layer in self._all_layers():
            n = sum(int(np.prod(p.shape)) for p in layer.weights)
            print(f"  {layer.name:<28} {type(layer).__name__:<24} {n:>10}")
        print(f"Total params: {sum(int(np.prod(p.shape)) for p in self.weights)}")

    # ---- saving: MindSpore checkpoints (not Keras' .h5/.keras formats)
    def save_weights(self, filepath, overwrite=True):
        """Writes a MindSpore checkpoint of every weight (trainable or not), under Keras-style names."""
        ms.save_checkpoint([{"name": p.name, "data": p} for p in self.weights], _ckpt_path(filepath))

    def load_weights(self, filepath, **kwargs):
        if str(filepath).endswith(".npz"):
            data = np.load(filepath)
            self.set_weights([data[k] for k in data.files])
            return
        state = ms.load_checkpoint(_ckpt_path(filepath))
        missing = [p.name for p in self.weights if p.name not in state]
        if missing:
            raise MigrationError(f"load_weights: {filepath} lacks {missing[:5]}")
        self.set_weights([state[p.name].asnumpy() for p in self.weights])

    def save(self, filepath, **kwargs):
        self.save_weights(filepath)

    # ---- compile / fit / evaluate / predict
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, **kwargs):
        self.optimizer = optimizers.get(optimizer)
        self.loss = losses.get(loss)
        self.compiled_metrics = [metrics_.get(m, self.loss) for m in (metrics or [])]
        self._step = None
        self._keras_compiled = True

    def _make_train_step(self):
        model, loss_fn, optimizer = self, self.loss, self.optimizer

        def forward(x, y):
            y_pred = model(x, training=True)
            return loss_fn(y, y_pred), y_pred

        grad_fn = ms.value_and_grad(forward, None, self.trainable_variables, has_aux=True)

        def train_step(x, y):
            (loss, y_pred), grads = grad_fn(x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss, y_pred
        return train_step

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_data=None,
            shuffle=True, initial_epoch=0, steps_per_epoch=None, validation_split=0.0, class_weight=None,
            sample_weight=None, **kwargs):
        """Keras' fit loop: per batch one train step; the logged 'loss' and metrics are running means over the
        epoch weighted by batch size (what Keras' callbacks and History see); validation at each epoch end.
        shuffle=True permutes the arrays each epoch with NumPy's generator: a different order than TensorFlow's."""
        if not self._keras_compiled:
            raise MigrationError("fit() before compile()")
        if class_weight is not None or sample_weight is not None or kwargs:
            raise MigrationError("fit(): class_weight/sample_weight/" + ", ".join(kwargs) + " not supported by "
                                 "_ms_compat")
        if validation_split:
            # Keras holds out the LAST fraction of the arrays, before any shuffling
            n = len(x)
            cut = int(n * (1.0 - validation_split))
            validation_data = (x[cut:], y[cut:])
            x, y = x[:cut], y[:cut]
        self.stop_training = False
        if self._step is None:
            if len(_UNBUILT):    # a model without a known input shape builds on the first batch
                xb, _ = next(iter(_batches(x, y, batch_size, False)))
                self(xb, training=False)
            self._step = self._make_train_step()
        history = History()
        cbs = CallbackList(list(callbacks or []) + [history], self)
        self.set_train(True)
        cbs.call("on_train_begin", {})
        logs = {}
        for epoch in range(initial_epoch, epochs):
            cbs.call("on_epoch_begin", epoch, {})
            loss_sum, count = 0.0, 0
            for m in self.compiled_metrics:
                m.reset_state()
            batches = _batches(x, y, batch_size, shuffle)
            if steps_per_epoch is not None:
                batches = _itertools.islice(batches, steps_per_epoch)
            for step, (xb, yb) in enumerate(batches):
                cbs.call("on_train_batch_begin", step, {})
                loss, y_pred = self._step(xb, yb)
                n = int(xb.shape[0])
                loss_sum += float(loss.asnumpy()) * n
                count += n
                for m in self.compiled_metrics:
                    m.update_state(yb, y_pred)
                logs = {"loss": loss_sum / count}
                logs.update({m.name: float(m.result()) for m in self.compiled_metrics})
                cbs.call("on_train_batch_end", step, logs)
            if validation_data is not None:
                val = self.evaluate(*validation_data[:2], batch_size=batch_size, verbose=0, return_dict=True)
                self.set_train(True)
                logs.update({"val_" + k: v for k, v in val.items()})
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
            cbs.call("on_epoch_end", epoch, dict(logs))
            if self.stop_training:
                break
        cbs.call("on_train_end", dict(logs))
        self.set_train(False)
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, **kwargs):
        self.set_train(False)
        loss_sum, count = 0.0, 0
        for m in self.compiled_metrics:
            m.reset_state()
        for xb, yb in _batches(x, y, batch_size, False):
            y_pred = self(xb, training=False)
            n = int(xb.shape[0])
            loss_sum += float(self.loss(yb, y_pred).asnumpy()) * n
            count += n
            for m in self.compiled_metrics:
                m.update_state(yb, y_pred)
        out = {"loss": loss_sum / count}
        out.update({m.name: float(m.result()) for m in self.compiled_metrics})
        if return_dict:
            return out
        vals = list(out.values())
        return vals[0] if len(vals) == 1 else vals

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        self.set_train(False)
        outs = [self(xb, training=False).asnumpy() for xb, _ in _batches(x, None, batch_size, False)]
        return np.concatenate(outs, axis=0)

    def predict_on_batch(self, x):
        return self(_as_tensor(x), training=False).asnumpy()


class KerasSequential(Model):
    """keras.Sequential: layers applied in order. A leading keras.Input (or input_shape= on the first layer)
    builds it at once; otherwise it builds at the first call or model.build()."""

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name)
        self._input = None
        self.layer_list = nn.CellList()
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if isinstance(layer, KerasTensor):
            self._input = layer
            return
        self.layer_list.append(layer)
        shape = self._input.shape if self._input is not None else (
            (None,) + tuple(layer._input_shape_arg) if len(self.layer_list) == 1
            and getattr(layer, "_input_shape_arg", None) else None)
        if shape is not None:
            self._input = KerasTensor(shape)
            self.build(shape)

    @property
    def layers(self):
        return list(self.layer_list)

    def construct(self, x, training=None):
        layers = list(self.layer_list)
        if (isinstance(x, ms.Tensor) and x.dtype in (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.bool_)
                and layers and not isinstance(layers[0], KerasEmbedding)):
            # Keras' Sequential casts its inputs to its input layer's dtype, float32 (integer series read by
            # pandas: keras-tcn's time_series_forecasting.py); an Embedding first takes the ids as they are
            x = x.astype(ms.float32)
        for layer in layers:
            x = layer(x, training=training)
        return x


def mnist_load_data(path="mnist.npz"):
    """keras.datasets.mnist.load_data: Keras' cached file, $KERAS_HOME/datasets/PATH (~/.keras/datasets/PATH
    without KERAS_HOME; /tmp/.keras where ~/.keras is not writable, as Keras), read as Keras reads it (np.load of
    x_train, y_train, x_test, y_test). Keras downloads the file where it is missing, and downloads it again where
    its SHA-256 is not MNIST's: the converted program cannot, so both stop with MigrationError."""
    import hashlib
    import os
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    if not os.access(home, os.W_OK) and not os.environ.get("KERAS_HOME"):
        home = os.path.join("/tmp", ".keras")
    fpath = path if os.path.isabs(path) else os.path.join(home, "datasets", path)
    if not os.path.exists(fpath):
        raise MigrationError(f"keras.datasets.mnist.load_data: {fpath} is missing; Keras would download it "
                             "(https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz): put it there")
    digest = hashlib.sha256()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != _MNIST_SHA256 and not os.environ.get("MSMIGRATE_KERAS_DATASET_UNCHECKED"):
        raise MigrationError(f"keras.datasets.mnist.load_data: {fpath} is not Keras' mnist.npz (its SHA-256 "
                             "differs), which Keras would download again; MSMIGRATE_KERAS_DATASET_UNCHECKED=1 reads "
                             "it as it is")
    with np.load(fpath, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


_MNIST_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


def _ckpt_path(filepath):
    p = str(filepath)
    for ext in (".weights.h5", ".h5", ".keras", ".tf"):
        if p.endswith(ext):
            return p[: -len(ext)] + ".ckpt"
    return p if p.endswith(".ckpt") else p + ".ckpt"


def _batches(x, y, batch_size, shuffle):
    """Batches of (x, y) from arrays (in order unless shuffle) or from a _ms_compat Dataset (as it yields)."""
    if isinstance(x, Dataset):
        for item in x:
            if isinstance(item, (tuple, list)):
                yield item[0], (item[1] if len(item) > 1 else None)
            else:
                yield item, None
        return
    xa = np.asarray(x.asnumpy() if isinstance(x, ms.Tensor) else x)
    ya = None if y is None else np.asarray(y.asnumpy() if isinstance(y, ms.Tensor) else y)
    n = len(xa)
    bs = batch_size or 32
    idx = _KERAS_RNG[0].permutation(n) if shuffle else np.arange(n)
    for i in range(0, n, bs):
        j = idx[i:i + bs]
        yield _as_tensor(xa[j]), (None if ya is None else _as_tensor(ya[j]))


# ------------------------------------------------------------------ callbacks
class Callback:
    """keras.callbacks.Callback: override the on_* methods; `self.model` is the model being fitted."""

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass


class History(Callback):
    """history.history: per-epoch logs ({'loss': [...], 'accuracy': [...]}), as Keras keeps them."""

    def __init__(self):
        self.history, self.epoch = {}, []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class EarlyStopping(Callback):
    """keras.callbacks.EarlyStopping: stop when `monitor` has not improved by min_delta for `patience` epochs."""

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch
        if mode == "auto":
            mode = "max" if "acc" in monitor or "auc" in monitor else "min"
        self.sign = 1.0 if mode == "min" else -1.0

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights = 0, 0, None
        self.best = float("inf")

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self.sign * value - self.min_delta < self.best:
            self.best = self.sign * value
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self.sign * value - self.min_delta < self.sign * self.baseline:
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.best_weights is not None:
            self.model.set_weights(self.best_weights)


def set_random_seed(seed):
    """keras.utils.set_random_seed: Python's, NumPy's and MindSpore's generators (the streams differ from
    TensorFlow's: the same seed gives other numbers)."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    _KERAS_RNG[0] = np.random.RandomState(seed)
    ms.set_seed(seed)


def to_categorical(y, num_classes=None, dtype="float32"):
    """keras.utils.to_categorical (NumPy, as in Keras)."""
    y = np.asarray(y, dtype="int64").reshape(-1)
    num_classes = int(y.max()) + 1 if num_classes is None else num_classes
    out = np.zeros((y.size, num_classes), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out


def list_physical_devices(device_type=None):
    """tf.config.list_physical_devices: MindSpore's device target, as one entry (memory growth has no
    counterpart: MindSpore manages device memory itself)."""
    target = ms.get_context("device_target")
    if device_type is None or str(device_type).upper() == target.upper():
        return [_types.SimpleNamespace(name=f"/physical_device:{target}:0", device_type=target)]
    return []


class CallbackList:
    def __init__(self, callbacks, model):
        self.callbacks = callbacks
        for cb in callbacks:
            cb.set_model(model)

    def call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(*args)


# ------------------------------------------------------------------ losses (Keras: mean over the batch)
class Loss:
    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name=None, **kwargs):
        if reduction not in ("sum_over_batch_size", "auto", "sum", "none", None):
            raise MigrationError(f"loss reduction {reduction!r} not supported by _ms_compat")
        self.from_logits, self.reduction = from_logits, reduction
        self.name = name or _snake(type(self).__name__)

    def __call__(self, y_true, y_pred, sample_weight=None):
        per_sample = self.call(_as_tensor(y_true), _as_tensor(y_pred))
        if sample_weight is not None:
            per_sample = per_sample * _as_tensor(sample_weight, per_sample.dtype)
        if self.reduction == "none":
            return per_sample
        if self.reduction == "sum":
            return ops.sum(per_sample)
        return ops.mean(per_sample)


def _log_probs(y_pred, from_logits):
    if from_logits:
        return ops.log_softmax(y_pred, axis=-1)
    # Keras renormalises the probabilities and clips them to [eps, 1 - eps] before the log
    p = y_pred / ops.sum(y_pred, -1, keepdim=True)
    return ops.log(ops.clamp(p, _KERAS_EPS, 1.0 - _KERAS_EPS))


class SparseCategoricalCrossentropy(Loss):
    def call(self, y_true, y_pred):
        logp = _log_probs(y_pred, self.from_logits)
        labels = ops.reshape(y_true, (-1,)).astype(ms.int32) if len(y_true.shape) == len(y_pred.shape) \
            else y_true.astype(ms.int32)
        onehot = ops.one_hot(labels, y_pred.shape[-1], ms.Tensor(1.0, y_pred.dtype), ms.Tensor(0.0, y_pred.dtype))
        return -ops.sum(onehot * logp, -1)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False, label_smoothing=0.0, **kwargs):
        super().__init__(from_logits=from_logits, **kwargs)
        self.label_smoothing = float(label_smoothing)

    def call(self, y_true, y_pred):
        y = y_true.astype(y_pred.dtype)
        if self.label_smoothing:
            y = y * (1.0 - self.label_smoothing) + self.label_smoothing / y_pred.shape[-1]
        return -ops.sum(y * _log_probs(y_pred, self.from_logits), -1)


class BinaryCrossentropy(Loss):
    def call(self, y_true, y_pred):
        y = y_true.astype(y_pred.dtype)
        if self.from_logits:
            # max(x, 0) - x * y + log(1 + exp(-|x|)): the stable form TensorFlow uses
            per = ops.relu(y_pred) - y_pred * y + ops.log1p(ops.exp(-ops.abs(y_pred)))
        else:
            p = ops.clamp(y_pred, _KERAS_EPS, 1.0 - _KERAS_EPS)
            per = -(y * ops.log(p) + (1.0 - y) * ops.log(1.0 - p))
        return ops.mean(per, -1)


class MeanSquaredError(Loss):
    def call(self, y_true, y_pred):
        return ops.mean(ops.square(y_pred - y_true.astype(y_pred.dtype)), -1)


class MeanAbsoluteError(Loss):
    def call(self, y_true, y_pred):
        return ops.mean(ops.abs(y_pred - y_true.astype(y_pred.dtype)), -1)


def _loss_get(identifier):
    if identifier is None or isinstance(identifier, Loss) or (callable(identifier) and not isinstance(identifier, str)):
        return identifier
    table = {"sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
             "categorical_crossentropy": CategoricalCrossentropy, "binary_crossentropy": BinaryCrossentropy,
             "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
             "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError}
    if identifier not in table:
        raise MigrationError(f"Keras loss {identifier!r} not supported by _ms_compat")
    return table[identifier]()


losses = _types.SimpleNamespace(
    Loss=Loss, SparseCategoricalCrossentropy=SparseCategoricalCrossentropy,
    CategoricalCrossentropy=CategoricalCrossentropy, BinaryCrossentropy=BinaryCrossentropy,
    MeanSquaredError=MeanSquaredError, MeanAbsoluteError=MeanAbsoluteError, get=_loss_get)


# ------------------------------------------------------------------ metrics (host side, NumPy)
class Metric:
    def __init__(self, name=None, dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reset_state()

    def reset_state(self):
        self.total, self.count = 0.0, 0.0

    reset_states = reset_state

    def result(self):
        return np.float32(self.total / self.count) if self.count else np.float32(0.0)

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()


def _np(x):
    return x.asnumpy() if isinstance(x, ms.Tensor) else np.asarray(x)


class Mean(Metric):
    def update_state(self, values, sample_weight=None):
        v = _np(values).astype(np.float64)
        w = np.ones_like(v) if sample_weight is None else np.broadcast_to(_np(sample_weight), v.shape)
        self.total += float((v * w).sum())
        self.count += float(w.sum())


class SparseCategoricalAccuracy(Metric):
    def update_state(self, y_true, y_pred, sample_weight=None):
        t = _np(y_true).reshape(-1)
        p = _np(y_pred).argmax(-1).reshape(-1)
        self.total += float((t.astype(np.int64) == p).sum())
        self.count += float(t.size)


class CategoricalAccuracy(Metric):
    def update_state(self, y_true, y_pred, sample_weight=None):
        t, p = _np(y_true).argmax(-1), _np(y_pred).argmax(-1)
        self.total += float((t == p).sum())
        self.count += float(t.size)


class BinaryAccuracy(Metric):
    def __init__(self, name=None, dtype=None, threshold=0.5):
        self.threshold = threshold
        super().__init__(name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        t, p = _np(y_true), (_np(y_pred) > self.threshold)
        self.total += float((t.astype(bool) == p).sum())
        self.count += float(t.size)


class MeanErrorMetric(Metric):
    """keras.metrics.MeanSquaredError / MeanAbsoluteError: each sample's mean over the last axis (Keras'
    mean_squared_error / mean_absolute_error), averaged over every sample seen (a float64 sum on the host)."""
    _default_name, _power = "mean_squared_error", 2

    def __init__(self, name=None, dtype=None):
        super().__init__(name or self._default_name, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise MigrationError(f"{type(self).__name__}.update_state(sample_weight=...) is not supported by "
                                 "_ms_compat")
        t, p = _np(y_true).astype(np.float64), _np(y_pred).astype(np.float32).astype(np.float64)
        if t.ndim == p.ndim - 1:     # Keras' squeeze/expand of (batch,) targets against (batch, 1) predictions
            t = t[..., None]
        err = np.abs(p - t) ** self._power
        per_sample = err.mean(-1) if err.ndim else err
        self.total += float(per_sample.sum())
        self.count += float(per_sample.size)


class MeanAbsoluteErrorMetric(MeanErrorMetric):
    _default_name, _power = "mean_absolute_error", 1


def _metric_get(identifier, loss=None):
    if isinstance(identifier, Metric):
        return identifier
    if identifier in ("accuracy", "acc"):
        # Keras picks the accuracy that fits the loss
        kind = {SparseCategoricalCrossentropy: SparseCategoricalAccuracy, CategoricalCrossentropy: CategoricalAccuracy,
                BinaryCrossentropy: BinaryAccuracy}.get(type(loss), SparseCategoricalAccuracy)
        return kind(name="accuracy")
    table = {"sparse_categorical_accuracy": SparseCategoricalAccuracy, "categorical_accuracy": CategoricalAccuracy,
             "binary_accuracy": BinaryAccuracy, "mean_squared_error": MeanErrorMetric, "mse": MeanErrorMetric,
             "mean_absolute_error": MeanAbsoluteErrorMetric, "mae": MeanAbsoluteErrorMetric}
    if identifier not in table:
        raise MigrationError(f"Keras metric {identifier!r} not supported by _ms_compat")
    return table[identifier](name=identifier)


metrics_ = _types.SimpleNamespace(
    Metric=Metric, Mean=Mean, SparseCategoricalAccuracy=SparseCategoricalAccuracy,
    CategoricalAccuracy=CategoricalAccuracy, BinaryAccuracy=BinaryAccuracy, MeanSquaredError=MeanErrorMetric,
    MeanAbsoluteError=MeanAbsoluteErrorMetric, get=_metric_get)


# ------------------------------------------------------------------ learning-rate schedules (Keras' formulas)
class LearningRateSchedule:
    """Called with the optimizer's step count (0 for the first update), as Keras does."""


class ExponentialDecay(LearningRateSchedule):
    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        self.initial, self.decay_steps, self.rate, self.staircase = initial_learning_rate, decay_steps, decay_rate, staircase

    def __call__(self, step):
        p = step / self.decay_steps
        return self.initial * self.rate ** (math.floor(p) if self.staircase else p)


class PiecewiseConstantDecay(LearningRateSchedule):
    def __init__(self, boundaries, values, name=None):
        self.boundaries, self.values = list(boundaries), list(values)

    def __call__(self, step):
        for b, v in zip(self.boundaries, self.values):
            if step <= b:                       # Keras: values[0] while step <= boundaries[0]
                return v
        return self.values[-1]


class CosineDecay(LearningRateSchedule):
    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None, warmup_target=None, warmup_steps=0):
        self.initial, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def __call__(self, step):
        if self.warmup_target is not None and step < self.warmup_steps:
            return self.initial + (self.warmup_target - self.initial) * step / self.warmup_steps
        top = self.initial if self.warmup_target is None else self.warmup_target
        s = min(step - self.warmup_steps, self.decay_steps)
        cosine = 0.5 * (1.0 + math.cos(math.pi * s / self.decay_steps))
        return top * ((1.0 - self.alpha) * cosine + self.alpha)


# ------------------------------------------------------------------ optimizers (Keras' update formulas)
class Optimizer:
    """Keras optimizer: `apply_gradients(zip(grads, vars))` updates the variables in place. The learning rate (a
    float or a schedule evaluated at `iterations`, the number of updates done so far) is computed on the host;
    the update itself runs as one compiled graph per set of variables (an _Update cell below: op-by-op it took
    ~40x longer), with the slot variables (momentum, Adam's m and v...) as Parameters of that cell."""

    def __init__(self, learning_rate=0.001, name=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 weight_decay=None, **kwargs):
        if clipnorm or clipvalue or global_clipnorm or weight_decay:
            raise MigrationError("optimizer clipnorm/clipvalue/global_clipnorm/weight_decay not supported by "
                                 "_ms_compat yet")
        self._learning_rate = learning_rate
        self.iterations = 0
        self._updates = {}
        self.name = name or _snake(type(self).__name__)

    @property
    def learning_rate(self):
        lr = self._learning_rate
        return float(lr(self.iterations)) if isinstance(lr, LearningRateSchedule) else float(lr)

    @learning_rate.setter
    def learning_rate(self, value):
        self._learning_rate = value

    lr = learning_rate

    def apply_gradients(self, grads_and_vars):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise MigrationError("apply_gradients: no gradients (was the model built before its "
                                 "trainable_variables were read?)")
        lr = self.learning_rate
        self.iterations += 1
        variables = [v for _, v in pairs]
        key = tuple(id(v) for v in variables)
        if key not in self._updates:
            self._updates[key] = self._update_cell(variables)
        # mutable: the gradients are inputs of the compiled update, not constants baked into it
        self._updates[key](ms.mutable(tuple(g for g, _ in pairs)), ms.Tensor(self._step_size(lr), ms.float32))
        return self.iterations

    def _step_size(self, lr):
        return lr

    def minimize(self, loss, var_list, tape=None):
        raise MigrationError("optimizer.minimize(): compute grads with mindspore.value_and_grad and call "
                             "apply_gradients")


class _Update(nn.Cell):
    """Holds the variables and one ParameterTuple per slot; `construct` (compiled) applies one update."""

    def __init__(self, opt, variables, slot_names):
        super().__init__(auto_prefix=False)
        self.params = ms.ParameterTuple(variables)
        for slot in slot_names:
            setattr(self, slot, ms.ParameterTuple([
                ms.Parameter(ops.zeros(v.shape, v.dtype), name=f"{opt.name}.{v.name}.{slot}", requires_grad=False)
                for v in variables]))


class _SGDUpdate(_Update):
    def __init__(self, opt, variables):
        self.momentum, self.nesterov = opt.momentum, opt.nesterov
        super().__init__(opt, variables, ("moments",) if opt.momentum else ())

    @ms.jit
    def construct(self, grads, lr):
        for i in range(len(self.params)):
            g, p = grads[i], self.params[i]
            if self.momentum == 0.0:
                ops.assign(p, p - g * lr)
            else:
                m = self.moments[i] * self.momentum - g * lr        # Keras: m = momentum*m - lr*g
                ops.assign(self.moments[i], m)
                if self.nesterov:
                    ops.assign(p, p + (m * self.momentum - g * lr))
                else:
                    ops.assign(p, p + m)
        return lr


class _AdamUpdate(_Update):
    def __init__(self, opt, variables):
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = opt.beta_1, opt.beta_2, opt.epsilon, opt.amsgrad
        super().__init__(opt, variables, ("m", "v", "v_hat") if opt.amsgrad else ("m", "v"))

    @ms.jit
    def construct(self, grads, alpha):
        for i in range(len(self.params)):
            g, p = grads[i], self.params[i]
            m = self.m[i] + (g - self.m[i]) * (1 - self.beta_1)
            v = self.v[i] + (ops.square(g) - self.v[i]) * (1 - self.beta_2)
            ops.assign(self.m[i], m)
            ops.assign(self.v[i], v)
            if self.amsgrad:
                v = ops.maximum(self.v_hat[i], v)
                ops.assign(self.v_hat[i], v)
            ops.assign(p, p - (m * alpha) / (ops.sqrt(v) + self.epsilon))
        return alpha


class _RMSpropUpdate(_Update):
    def __init__(self, opt, variables):
        self.rho, self.momentum, self.epsilon, self.centered = opt.rho, opt.momentum, opt.epsilon, opt.centered
        slots = ("velocity",) + (("average",) if opt.centered else ()) + (("moments",) if opt.momentum > 0 else ())
        super().__init__(opt, variables, slots)

    @ms.jit
    def construct(self, grads, lr):
        for i in range(len(self.params)):
            g, p = grads[i], self.params[i]
            vel = self.velocity[i] * self.rho + ops.square(g) * (1 - self.rho)
            ops.assign(self.velocity[i], vel)
            if self.centered:
                avg = self.average[i] * self.rho + g * (1 - self.rho)
                ops.assign(self.average[i], avg)
                denom = vel - ops.square(avg) + self.epsilon
            else:
                denom = vel + self.epsilon
            inc = g * lr / ops.sqrt(denom)                    # Keras: epsilon inside the square root
            if self.momentum > 0:
                mom = self.moments[i] * self.momentum + inc
                ops.assign(self.moments[i], mom)
                ops.assign(p, p - mom)
            else:
                ops.assign(p, p - inc)
        return lr


class KerasSGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def _update_cell(self, variables):
        return _SGDUpdate(self, variables)


class KerasAdam(Optimizer):
    """Keras Adam: the bias correction folds into the step size and epsilon (1e-7) is added to sqrt(v) after
    it (torch adds eps to the bias-corrected sqrt(v_hat): a different number for the same epsilon)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = float(beta_1), float(beta_2), float(epsilon), bool(amsgrad)

    def _step_size(self, lr):
        t = self.iterations                    # already counts this update (Keras: iterations + 1)
        return lr * math.sqrt(1 - self.beta_2 ** t) / (1 - self.beta_1 ** t)

    def _update_cell(self, variables):
        return _AdamUpdate(self, variables)


class KerasRMSprop(Optimizer):
    """Keras RMSprop: rho 0.9, epsilon 1e-7 INSIDE the square root (torch: alpha 0.99, eps 1e-8 outside)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = float(rho), float(momentum), float(epsilon), bool(centered)

    def _update_cell(self, variables):
        return _RMSpropUpdate(self, variables)


def _optimizer_get(identifier):
    if isinstance(identifier, Optimizer):
        return identifier
    table = {"sgd": KerasSGD, "adam": KerasAdam, "rmsprop": KerasRMSprop}
    if str(identifier).lower() not in table:
        raise MigrationError(f"Keras optimizer {identifier!r} not supported by _ms_compat")
    return table[str(identifier).lower()]()


optimizers = _types.SimpleNamespace(
    Optimizer=Optimizer, SGD=KerasSGD, Adam=KerasAdam, RMSprop=KerasRMSprop, get=_optimizer_get,
    schedules=_types.SimpleNamespace(LearningRateSchedule=LearningRateSchedule, ExponentialDecay=ExponentialDecay,
                                     PiecewiseConstantDecay=PiecewiseConstantDecay, CosineDecay=CosineDecay))


# ------------------------------------------------------------------ tf.data
class Dataset:
    """tf.data.Dataset over in-memory arrays: from_tensor_slices, shuffle, batch, map, repeat, take, prefetch.
    Yields tuples of MindSpore Tensors. shuffle uses NumPy's generator (seeded by `seed`): the order differs
    from TensorFlow's, even with the same seed; without shuffle the order is the same."""

    def __init__(self, columns, single, ops_=()):
        self._columns, self._single, self._ops = columns, single, tuple(ops_)

    @classmethod
    def from_tensor_slices(cls, tensors):
        single = not isinstance(tensors, (tuple, list))
        cols = [_np(t) for t in ([tensors] if single else tensors)]
        cols = [c.astype(np.float32) if c.dtype == np.float64 else c for c in cols]
        return cls(cols, single)

    def _with(self, op):
        return Dataset(self._columns, self._single, self._ops + (op,))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        return self._with(("shuffle", np.random.default_rng(seed)))

    def batch(self, batch_size, drop_remainder=False, **kwargs):
        return self._with(("batch", batch_size, drop_remainder))

    def map(self, fn, num_parallel_calls=None, **kwargs):
        return self._with(("map", fn))

    def repeat(self, count=None):
        return self._with(("repeat", count))

    def take(self, count):
        return self._with(("take", count))

    def prefetch(self, buffer_size=None):
        return self           # nothing to overlap: batches are sliced from memory

    cache = prefetch

    def __iter__(self):
        n = len(self._columns[0])
        rng = None                        # shuffle: a fresh permutation of the elements per pass
        batched, fns, take, repeat = None, [], None, 1
        for op in self._ops:
            if op[0] == "shuffle":
                rng = op[1]
            elif op[0] == "batch":
                batched = (op[1], op[2])
            elif op[0] == "map":
                fns.append((op[1], batched is not None))
            elif op[0] == "repeat":
                repeat = op[1]
            elif op[0] == "take":
                take = op[1]
        produced = 0
        epoch = 0
        while repeat is None or epoch < repeat:
            idx = rng.permutation(n) if rng is not None else np.arange(n)
            if batched is None:
                chunks = [idx[i:i + 1] for i in range(n)]
            else:
                bs, drop = batched
                chunks = [idx[i:i + bs] for i in range(0, n, bs) if not drop or i + bs <= n]
            for j in chunks:
                if take is not None and produced >= take:
                    return
                cols = [c[j] if batched is not None else c[j[0]] for c in self._columns]
                item = tuple(_as_tensor(c) for c in cols)
                for fn, _ in fns:
                    item = fn(*item)
                    item = item if isinstance(item, tuple) else (item,)
                produced += 1
                yield item[0] if self._single and len(item) == 1 else item
            epoch += 1

    def __len__(self):
        n = len(self._columns[0])
        for op in self._ops:
            if op[0] == "batch":
                n = n // op[1] if op[2] else -(-n // op[1])
            elif op[0] == "take":
                n = min(n, op[1])
        return n

    def cardinality(self):
        return len(self)


tf_data = _types.SimpleNamespace(Dataset=Dataset, AUTOTUNE=-1,
                                 experimental=_types.SimpleNamespace(AUTOTUNE=-1))


# ------------------------------------------------------------------ tf.distribute (single device)
class OneDeviceStrategy:
    """Stands for tf.distribute.MirroredStrategy/OneDeviceStrategy: runs on one device. For data parallelism on
    MindSpore launch with msrun and use mindspore.communication + set_auto_parallel_context(DATA_PARALLEL)
    (see the torch DDP conversion in the migration report)."""

    num_replicas_in_sync = 1

    def __init__(self, *args, **kwargs):
        pass

    def scope(self):
        import contextlib
        return contextlib.nullcontext()

    def experimental_distribute_dataset(self, dataset):
        return dataset

    def run(self, fn, args=(), kwargs=None):
        return fn(*args, **(kwargs or {}))


keras = _types.SimpleNamespace(
    Input=Input, Model=Model, Sequential=KerasSequential,
    layers=_types.SimpleNamespace(
        Layer=Layer, Input=Input, InputLayer=None, Dense=Dense, Conv2D=Conv2D, MaxPooling2D=MaxPooling2D,
        MaxPool2D=MaxPooling2D, AveragePooling2D=AveragePooling2D, AvgPool2D=AveragePooling2D,
        GlobalAveragePooling2D=GlobalAveragePooling2D, GlobalMaxPooling2D=GlobalMaxPooling2D, Flatten=Flatten,
        Reshape=Reshape, Activation=Activation, ReLU=KerasReLU, Dropout=KerasDropout, BatchNormalization=BatchNormalization,
        Add=Add, Concatenate=Concatenate, Subtract=Subtract, Multiply=Multiply, Average=Average, Maximum=Maximum,
        Minimum=Minimum, Embedding=KerasEmbedding, Conv1D=Conv1D, MaxPooling1D=MaxPooling1D, MaxPool1D=MaxPooling1D,
        AveragePooling1D=AveragePooling1D, AvgPool1D=AveragePooling1D, GlobalAveragePooling1D=GlobalAveragePooling1D,
        GlobalMaxPooling1D=GlobalMaxPooling1D, LayerNormalization=LayerNormalization, LSTM=KerasLSTM, GRU=KerasGRU,
        MultiHeadAttention=MultiHeadAttention, RepeatVector=RepeatVector, SpatialDropout1D=SpatialDropout1D,
        Lambda=Lambda, add=keras_add),
    initializers=_types.SimpleNamespace(**{name: _initializer_of(kind) for name, kind in (
        ("GlorotNormal", "glorot_normal"), ("GlorotUniform", "glorot_uniform"), ("HeNormal", "he_normal"),
        ("HeUniform", "he_uniform"), ("Zeros", "zeros"), ("Ones", "ones"), ("Orthogonal", "orthogonal"))}),
    random=_types.SimpleNamespace(SeedGenerator=SeedGenerator, dropout=keras_random_dropout),
    saving=_types.SimpleNamespace(register_keras_serializable=register_keras_serializable),
    backend=_types.SimpleNamespace(name_scope=name_scope),
    losses=losses, metrics=metrics_, optimizers=optimizers,
    callbacks=_types.SimpleNamespace(Callback=Callback, History=History, EarlyStopping=EarlyStopping),
    utils=_types.SimpleNamespace(to_categorical=to_categorical, set_random_seed=set_random_seed),
    datasets=_types.SimpleNamespace(mnist=_types.SimpleNamespace(load_data=mnist_load_data)))
