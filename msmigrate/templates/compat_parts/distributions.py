"""torch.distributions (the distributions, transforms, constraints, kl_divergence) on MindSpore ops, with
torch's formulas, shapes and argument checks (validate_args defaults on, as in torch).

sample() draws with MindSpore's generator (ops.standard_normal / ops.rand, seeded by ms.set_seed): the
same distribution as torch, not the same numbers. rsample() is loc + scale * eps, differentiable in the
parameters as torch's. Argument and support checks read tensor values, so they run in PyNative mode
(pass validate_args=False inside a GRAPH-mode construct)."""
import math

import mindspore as ms
import numpy as np
from mindspore import ops

_DIST_F32_EPS = float(np.finfo(np.float32).eps)


# MindSpore 2.10's CPU float32 exp, expm1, log, log1p, sigmoid, tanh, softplus and logsumexp are 2e-6 to 2e-4 off
# (torch: ~1 ulp) and its erfinv loses the tails (erfinv(0.99999) = 2.43, not 3.12); their float64 kernels are exact
# to rounding, so the formulas below take these in float64 and round back once, as torch's float32 kernels do.
def _dist_in_f64(op, x, *args):
    out = x.dtype if x.dtype in (ms.float16, ms.float32, ms.bfloat16, ms.float64) else ms.float32
    return op(x.astype(ms.float64), *args).astype(out)


def _dist_exp(x):
    return _dist_in_f64(ops.exp, x)


def _dist_expm1(x):
    return _dist_in_f64(ops.expm1, x)


def _dist_log(x):
    return _dist_in_f64(ops.log, x)


def _dist_log1p(x):
    return special_log1p(x if x.dtype in (ms.float16, ms.float32, ms.bfloat16, ms.float64) else x.astype(ms.float32))


def _dist_sigmoid(x):
    """1 / (1 + exp(-x)) in x's dtype, as torch's CPU kernel rounds it (sigmoid(15.) is 1 - 6 ulp there)."""
    return 1 / (1 + _dist_exp(-x))


def _dist_tanh(x):
    return _dist_in_f64(ops.tanh, x)


def _dist_softplus(x):
    """torch's softplus (beta 1, threshold 20): log1p(exp(-|x|)) + relu(x) in float64 (ops.softplus is ~2e-4 off
    in either dtype)."""
    return _dist_in_f64(_dist_softplus_f64, x)


def _dist_softplus_f64(z):
    return special_log1p(ops.exp(-ops.abs(z))) + ops.relu(z)


def _dist_bce_logits(logits, target):
    """torch's binary_cross_entropy_with_logits (no reduction), in its own order of operations:
    (1 - target) * logits - logsigmoid(logits), logsigmoid in float64 (so a tiny loss rounds as torch's)."""
    return (1 - target) * logits - _dist_in_f64(_dist_logsigmoid_f64, logits)


def _dist_logsigmoid_f64(z):
    return ops.minimum(z, ops.zeros_like(z)) - special_log1p(ops.exp(-ops.abs(z)))


def _dist_logsumexp(x, dim, keepdim=False):
    return _dist_in_f64(ops.logsumexp, x, dim, keepdim)


def _dist_erfinv(y):
    """erfinv(y) = ndtri((y + 1) / 2) / sqrt 2, in float64 (exact for a float32 y)."""
    out = y.dtype if y.dtype in (ms.float16, ms.float32, ms.bfloat16, ms.float64) else ms.float32
    return (special_ndtri((y.astype(ms.float64) + 1) / 2) / math.sqrt(2)).astype(out)


def _dist_np_dtype(dtype):
    """The NumPy dtype of a MindSpore float dtype (finfo lookups)."""
    return {ms.float16: np.float16, ms.float64: np.float64, ms.bfloat16: np.float32}.get(dtype, np.float32)


def _dist_tensor(v, like=None):
    if isinstance(v, ms.Tensor):
        return v if v.dtype in (ms.float16, ms.float32, ms.float64, ms.bfloat16) else v.astype(ms.float32)
    return ms.Tensor(v, like.dtype if like is not None else ms.float32)


def _dist_broadcast_all(*values):
    """torch.distributions.utils.broadcast_all: numbers take the tensors' dtype, shapes broadcast."""
    like = next((v for v in values if isinstance(v, ms.Tensor)), None)
    ts = [_dist_tensor(v, like) for v in values]
    shape = tuple(np.broadcast_shapes(*[tuple(t.shape) for t in ts]))
    return [t if tuple(t.shape) == shape else ops.broadcast_to(t, shape) for t in ts]


def _dist_shape(sample_shape):
    return tuple(int(s) for s in sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)


def _dist_check(ok, what):
    if not bool(ops.all(ok)):
        raise ValueError(what)


def _dist_clamp_probs(p):
    eps = _DIST_F32_EPS if p.dtype == ms.float32 else float(np.finfo(_dist_np_dtype(p.dtype)).eps)
    return ops.clamp(p, eps, 1 - eps)


def _dist_params(dist, validate_args, positive=(), **params):
    """torch's parameter handling: the parameters broadcast together (broadcast_all) onto attributes of their
    names, the batch shape theirs, and those named in `positive` checked > 0 when validating."""
    for name, value in zip(params, _dist_broadcast_all(*params.values())):
        setattr(dist, name, value)
    Distribution.__init__(dist, tuple(value.shape), (), validate_args)
    what = f"parameters {' and '.join(positive)}" if len(positive) > 1 else f"parameter {''.join(positive)}"
    for name in positive if dist._validate_args else ():
        got = "" if len(positive) > 1 else f", got {getattr(dist, name)}"
        _dist_check(getattr(dist, name) > 0, f"Expected {what} of {type(dist).__name__} to be positive{got}")


def _dist_probs_logits(probs, logits, *others):
    """torch's probs/logits pair (exactly one given) -> (*others, probs, logits), broadcast with `others`."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        *others, probs = _dist_broadcast_all(*others, probs)
        return (*others, probs, _dist_log(_dist_clamp_probs(probs)) - _dist_log1p(-_dist_clamp_probs(probs)))
    *others, logits = _dist_broadcast_all(*others, logits)
    return (*others, _dist_sigmoid(logits), logits)


class Distribution:
    """The shared part of torch.distributions.Distribution."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self.batch_shape = tuple(batch_shape)
        self.event_shape = tuple(event_shape)
        self._validate_args = validate_args is not False

    def _extended_shape(self, sample_shape=()):
        return _dist_shape(sample_shape) + self.batch_shape + self.event_shape

    def sample(self, sample_shape=()):
        return ops.stop_gradient(self.rsample(sample_shape))

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no rsample (torch: not reparameterizable)")

    def rsample_named(self, where, sample_shape=()):
        """rsample(), its refusal naming the original line (rsample_at); inside a compiled graph the distribution
        runs in Python (JIT Fallback), so the refusal comes as MindSpore's RuntimeError with this message."""
        if getattr(self, "no_rsample", False):
            _dist_no_rsample(type(self).__name__, where)
        return self.rsample(sample_shape)

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    def perplexity(self):
        return _dist_exp(self.entropy())

    def __repr__(self):
        return f"{type(self).__name__}()"


class _DistLocScale(Distribution):
    """A location and a positive scale (Normal, Laplace, Cauchy, Gumbel)."""
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        _dist_params(self, validate_args, ("scale",), loc=loc, scale=scale)

    mode = property(lambda self: self.loc)


class Normal(_DistLocScale):
    _kl_family = "Normal"   # kl_divergence's closed form (a subclass keeps it)
    mean = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale ** 2)

    def rsample(self, sample_shape=()):
        eps = ops.standard_normal(self._extended_shape(sample_shape)).astype(self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = _dist_tensor(value, self.loc)
        return -((value - self.loc) ** 2) / (2 * self.variance) - _dist_log(self.scale) - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        value = _dist_tensor(value, self.loc)
        return 0.5 * (1 + ops.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        value = _dist_tensor(value, self.loc)
        return self.loc + self.scale * _dist_erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _dist_log(self.scale)


class Uniform(Distribution):
    _kl_family = "Uniform"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        _dist_params(self, validate_args, low=low, high=high)
        if self._validate_args:
            _dist_check(self.low < self.high, "Expected parameter low of Uniform to be less than high")

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: ops.full_like(self.low, float("nan")))
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low) ** 2 / 12)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = _dist_tensor(value, self.low)
        if self._validate_args:
            _dist_check((value >= self.low) & (value < self.high),
                   "Expected value argument to be within the support (Interval) of Uniform")
        inside = ((self.low <= value) & (value < self.high)).astype(self.low.dtype)
        return _dist_log(inside) - _dist_log(self.high - self.low)

    def cdf(self, value):
        value = _dist_tensor(value, self.low)
        return ops.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return _dist_tensor(value, self.low) * (self.high - self.low) + self.low

    def entropy(self):
        return _dist_log(self.high - self.low)


class Bernoulli(Distribution):
    _kl_family = "Bernoulli"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _dist_probs_logits(probs, logits)
        super().__init__(tuple(self.probs.shape), (), validate_args)
        if self._validate_args:
            _dist_check((self.probs >= 0) & (self.probs <= 1) if probs is not None
                        else ops.isfinite(self.logits) | ~ops.isnan(self.logits),
                        "Expected parameter of Bernoulli to satisfy its constraint")

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        mode = (self.probs >= 0.5).astype(self.probs.dtype)
        return ops.select(self.probs == 0.5, ops.full_like(mode, float("nan")), mode)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ops.rand(shape, dtype=self.probs.dtype)
        return ops.stop_gradient((u < ops.broadcast_to(self.probs, shape)).astype(self.probs.dtype))

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        if self._validate_args:
            _dist_check((value == 0) | (value == 1), "Expected value argument to be within the support (Boolean) "
                                                "of Bernoulli")
        logits, value = _dist_broadcast_all(self.logits, value)
        return -_dist_bce_logits(logits, value)

    def entropy(self):
        l, p = self.logits, self.probs
        return _dist_bce_logits(l, p)


class ContinuousBernoulli(Distribution):
    """torch's ContinuousBernoulli: density proportional to p^x (1-p)^(1-x) on [0, 1]. Where probs lies in
    torch's unstable band `lims` around 1/2 the normaliser and moments are its Taylor series, as in torch."""
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if probs is not None and validate_args is not False:
            _dist_check((_dist_tensor(probs) >= 0) & (_dist_tensor(probs) <= 1),
                        "The parameter probs has invalid values")
        probs, self.logits = _dist_probs_logits(probs, logits)
        self.probs = _dist_clamp_probs(probs)
        self._lims = (float(lims[0]), float(lims[1]))
        super().__init__(tuple(self.probs.shape), (), validate_args)

    def _stable(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut(self):
        """probs outside the unstable band; a stand-in inside it (the Taylor branch is taken there)."""
        return ops.select(self._stable(), self.probs, ops.full_like(self.probs, self._lims[0]))

    def _log_norm(self):
        cut = self._cut()
        below = ops.select(cut <= 0.5, cut, ops.zeros_like(cut))
        above = ops.select(cut >= 0.5, cut, ops.ones_like(cut))
        exact = _dist_log(ops.abs(_dist_log1p(-cut) - _dist_log(cut))) - ops.select(
            cut <= 0.5, _dist_log1p(-2.0 * below), _dist_log(2.0 * above - 1.0))
        x = (self.probs - 0.5) ** 2
        return ops.select(self._stable(), exact, math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x)

    @property
    def mean(self):
        cut = self._cut()
        exact = cut / (2.0 * cut - 1.0) + 1.0 / (_dist_log1p(-cut) - _dist_log(cut))
        x = self.probs - 0.5
        return ops.select(self._stable(), exact, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x)

    @property
    def variance(self):
        cut = self._cut()
        exact = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / (_dist_log1p(-cut) - _dist_log(cut)) ** 2
        x = (self.probs - 0.5) ** 2
        return ops.select(self._stable(), exact, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def _check_support(self, value):
        if self._validate_args:
            _dist_check((value >= 0) & (value <= 1), "Expected value argument to be within the support (Interval) "
                                                    "of ContinuousBernoulli")

    def rsample(self, sample_shape=()):
        return self.icdf(ops.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        self._check_support(value)
        logits, value = _dist_broadcast_all(self.logits, value)
        # minus binary_cross_entropy_with_logits(logits, value), plus the log normaliser
        return -_dist_bce_logits(logits, value) + self._log_norm()

    def cdf(self, value):
        value = _dist_tensor(value, self.probs)
        self._check_support(value)
        cut = self._cut()
        inner = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inner = ops.select(ops.broadcast_to(self._stable(), inner.shape), inner, ops.broadcast_to(value, inner.shape))
        return ops.select(value <= 0.0, ops.zeros_like(inner), ops.select(value >= 1.0, ops.ones_like(inner), inner))

    def icdf(self, value):
        value = _dist_tensor(value, self.probs)
        cut = self._cut()
        exact = (_dist_log1p(-cut + value * (2.0 * cut - 1.0)) - _dist_log1p(-cut)) / (_dist_log(cut) - _dist_log1p(-cut))
        return ops.select(ops.broadcast_to(self._stable(), exact.shape), exact, ops.broadcast_to(value, exact.shape))

    def entropy(self):
        log_p0, log_p1 = _dist_log1p(-self.probs), _dist_log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._log_norm() - log_p0


class Categorical(Distribution):
    _kl_family = "Categorical"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _dist_tensor(probs)
            if len(probs.shape) < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            if validate_args is not False:
                _dist_check(probs >= 0, "Expected parameter probs of Categorical to be non-negative")
            self.probs = probs / probs.sum(-1, keepdims=True)
            self.logits = _dist_log(_dist_clamp_probs(self.probs))
        else:
            logits = _dist_tensor(logits)
            if len(logits.shape) < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - _dist_logsumexp(logits, -1, True)
            self.probs = _softmax_kernel(self.logits, -1)   # compat_parts/softmax_slices.py
        self._num_events = self.probs.shape[-1]
        super().__init__(tuple(self.probs.shape[:-1]), (), validate_args)

    mean = property(lambda self: ops.full(self.batch_shape, float("nan"), dtype=self.probs.dtype))
    variance = property(lambda self: ops.full(self.batch_shape, float("nan"), dtype=self.probs.dtype))
    mode = property(lambda self: ops.argmax(self.probs, -1).astype(ms.int64))
    param_shape = property(lambda self: tuple(self.probs.shape))

    def sample(self, sample_shape=()):
        # inverse CDF: the number of cumulative probabilities below a uniform draw
        shape = self._extended_shape(sample_shape)
        u = ops.rand(shape + (1,), dtype=self.probs.dtype)
        cdf = ops.broadcast_to(ops.cumsum(self.probs, -1), shape + (self._num_events,))
        idx = (cdf <= u).astype(ms.int64).sum(-1)
        return ops.stop_gradient(ops.clamp(idx, 0, self._num_events - 1))

    def log_prob(self, value):
        value = value if isinstance(value, ms.Tensor) else ms.Tensor(value, ms.int64)
        if self._validate_args:
            _dist_check((value >= 0) & (value < self._num_events) & (value == ops.floor(value.astype(ms.float32))),
                   "Expected value argument to be within the support (IntegerInterval) of Categorical")
        shape = tuple(np.broadcast_shapes(tuple(value.shape), self.batch_shape))
        v = ops.broadcast_to(value.astype(ms.int64), shape)
        logits = ops.broadcast_to(self.logits, shape + (self._num_events,))
        return ops.gather_elements(logits, -1, ops.expand_dims(v, -1)).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(_dist_np_dtype(self.logits.dtype)).min)
        return -(ops.clamp(self.logits, min=min_real) * self.probs).sum(-1)



class Exponential(Distribution):
    _kl_family = "Exponential"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        _dist_params(self, validate_args, ("rate",), rate=rate)

    mean = property(lambda self: 1 / self.rate)
    mode = property(lambda self: ops.zeros_like(self.rate))
    stddev = property(lambda self: 1 / self.rate)
    variance = property(lambda self: self.rate ** -2)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.rate.dtype)
        return -_dist_log1p(-u) / self.rate

    def log_prob(self, value):
        value = _dist_tensor(value, self.rate)
        if self._validate_args:
            _dist_check(value >= 0, "Expected value argument to be within the support (GreaterThanEq(0)) of "
                                    "Exponential")
        return _dist_log(self.rate) - self.rate * value

    def cdf(self, value):
        return 1 - _dist_exp(-self.rate * _dist_tensor(value, self.rate))

    def icdf(self, value):
        return -_dist_log1p(-_dist_tensor(value, self.rate)) / self.rate

    def entropy(self):
        return 1.0 - _dist_log(self.rate)


class Laplace(_DistLocScale):
    _kl_family = "Laplace"   # kl_divergence's closed form (a subclass keeps it)
    mean = property(lambda self: self.loc)
    stddev = property(lambda self: (2 ** 0.5) * self.scale)
    variance = property(lambda self: 2 * self.scale ** 2)

    def rsample(self, sample_shape=()):
        eps = float(np.finfo(_dist_np_dtype(self.loc.dtype)).eps)
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * (2 - eps) - (1 - eps)
        return self.loc - self.scale * ops.sign(u) * _dist_log1p(-ops.abs(u))

    def log_prob(self, value):
        value = _dist_tensor(value, self.loc)
        return -_dist_log(2 * self.scale) - ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        d = _dist_tensor(value, self.loc) - self.loc
        return 0.5 - 0.5 * ops.sign(d) * _dist_expm1(-ops.abs(d) / self.scale)

    def icdf(self, value):
        term = _dist_tensor(value, self.loc) - 0.5
        return self.loc - self.scale * ops.sign(term) * _dist_log1p(-2 * ops.abs(term))

    def entropy(self):
        return 1 + _dist_log(2 * self.scale)


def _dist_no_rsample(name, where=None):
    at = "" if where is None else f" at {where}"
    raise MigrationError(f"{name}.rsample{at}: MindSpore's gamma sampler (ops.random_gamma) has no gradient, so the "
                         f"reparameterised sample torch differentiates cannot be built; use sample() where no "
                         f"gradient flows through the draw")


@_migration_constexpr(check=False)
def _dist_in_graph(dist):
    """A distribution reaching compiled code: one built in the graph arrives here as the Tensor standing for its
    JIT Fallback object (a real Tensor has no rsample), one held by a Cell as itself; a Cell comes as None."""
    return isinstance(dist, (Distribution, ms.Tensor))


_DIST_COMPILED = (
    "rsample at {} inside a compiled graph (GRAPH mode or ms.jit): MindSpore runs a distribution object there "
    "through its Python fallback, whose samples come out with a zero gradient (Normal(mu, sigma).rsample(): "
    "measured, mu's gradient 0), and refuses a gamma-based sampler only when the graph runs. Run this network in "
    "PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


def rsample_at(dist, where, *args, **kwargs):
    """`dist.rsample(...)` written at `where` (the converter's form of the call): a distribution without a
    reparameterised sampler here (Gamma, Beta, Dirichlet, Chi2, StudentT, InverseGamma) stops with MigrationError
    naming that line, and so does any distribution's rsample in a graph being compiled (its gradient would be
    lost); any other object's rsample runs as written."""
    if _compiling(_draw_probe) and _dist_in_graph(dist):
        _refuse_compiled(_DIST_COMPILED, where)
    if isinstance(dist, Distribution):
        return dist.rsample_named(where, *args, **kwargs)
    return dist.rsample(*args, **kwargs)


class Gamma(Distribution):
    _kl_family = "Gamma"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        _dist_params(self, validate_args, ("concentration", "rate"), concentration=concentration, rate=rate)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ops.clamp((self.concentration - 1) / self.rate, min=0))
    variance = property(lambda self: self.concentration / self.rate ** 2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = ops.random_gamma(ms.Tensor(np.array(_dist_shape(sample_shape) or (1,), np.int64)),
                             ops.reshape(self.concentration, (-1,)) if self.batch_shape else self.concentration)
        return ops.stop_gradient(ops.reshape(g, shape) / self.rate)

    no_rsample = True   # rsample_at names the call's line

    def rsample(self, sample_shape=()):
        _dist_no_rsample("Gamma")

    def log_prob(self, value):
        value = _dist_tensor(value, self.rate)
        if self._validate_args:
            _dist_check(value > 0, "Expected value argument to be within the support (GreaterThan(0)) of Gamma")
        c = self.concentration
        return ops.xlogy(c, self.rate) + ops.xlogy(c - 1, value) - self.rate * value - ops.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - _dist_log(self.rate) + ops.lgamma(c) + (1.0 - c) * ops.digamma(c)


class Dirichlet(Distribution):
    _kl_family = "Dirichlet"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        self.concentration = _dist_tensor(concentration)
        if len(self.concentration.shape) < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        super().__init__(tuple(self.concentration.shape[:-1]), tuple(self.concentration.shape[-1:]), validate_args)
        if self._validate_args:
            _dist_check(self.concentration > 0, "Expected parameter concentration of Dirichlet to be positive")

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdims=True)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdims=True)
        return self.concentration * (a0 - self.concentration) / (a0 ** 2 * (a0 + 1))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = ops.random_gamma(ms.Tensor(np.array(_dist_shape(sample_shape) or (1,), np.int64)),
                             ops.reshape(self.concentration, (-1,)))
        g = ops.reshape(g, shape)
        return ops.stop_gradient(g / g.sum(-1, keepdims=True))

    no_rsample = True   # rsample_at names the call's line

    def rsample(self, sample_shape=()):
        _dist_no_rsample("Dirichlet")

    def log_prob(self, value):
        value = _dist_tensor(value, self.concentration)
        c = self.concentration
        return (ops.xlogy(c - 1.0, value).sum(-1) + ops.lgamma(c.sum(-1)) - ops.lgamma(c).sum(-1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (ops.lgamma(c).sum(-1) - ops.lgamma(a0) - (k - a0) * ops.digamma(a0)
                - ((c - 1.0) * ops.digamma(c)).sum(-1))


class Beta(Distribution):
    _kl_family = "Beta"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _dist_broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ops.stack([self.concentration1, self.concentration0], -1), validate_args)
        super().__init__(tuple(self.concentration1.shape), (), validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def sample(self, sample_shape=()):
        return self._dirichlet.sample(sample_shape)[..., 0]

    no_rsample = True   # rsample_at names the call's line

    def rsample(self, sample_shape=()):
        _dist_no_rsample("Beta")

    def log_prob(self, value):
        value = _dist_tensor(value, self.concentration1)
        if self._validate_args:
            _dist_check((value >= 0) & (value <= 1), "Expected value argument to be within the support (Interval) "
                                                    "of Beta")
        return self._dirichlet.log_prob(ops.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()


class Poisson(Distribution):
    _kl_family = "Poisson"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _dist_broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)
        if self._validate_args:
            _dist_check(self.rate >= 0, "Expected parameter rate of Poisson to be non-negative")

    mean = property(lambda self: self.rate)
    mode = property(lambda self: ops.floor(self.rate))
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = ops.random_poisson(ms.Tensor(np.array(_dist_shape(sample_shape) or (1,), np.int64)),
                                   ops.reshape(self.rate, (-1,)) if self.batch_shape else self.rate)
        return ops.stop_gradient(ops.reshape(draws, shape).astype(self.rate.dtype))

    def log_prob(self, value):
        value = _dist_tensor(value, self.rate)
        if self._validate_args:
            _dist_check((value >= 0) & (value == ops.floor(value)), "Expected value argument to be within the "
                                                                   "support (IntegerGreaterThan(0)) of Poisson")
        return ops.xlogy(value, self.rate) - self.rate - ops.lgamma(value + 1)


class MultivariateNormal(Distribution):
    _kl_family = "MultivariateNormal"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        loc = _dist_tensor(loc)
        if scale_tril is not None:
            tril = _dist_tensor(scale_tril, loc)
        elif covariance_matrix is not None:
            cov = _dist_tensor(covariance_matrix, loc)
            if validate_args is not False:
                _dist_check(ops.isfinite(cov).all() & (ops.abs(cov - cov.swapaxes(-1, -2)) < 1e-6).all(),
                            "Expected parameter covariance_matrix of MultivariateNormal to be positive-definite")
            tril = ops.cholesky(cov)
        else:
            tril = ops.cholesky(ops.inverse(_dist_tensor(precision_matrix, loc)))
        batch = tuple(np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(tril.shape[:-2])))
        k = loc.shape[-1]
        self.loc = ops.broadcast_to(loc, batch + (k,))
        self.scale_tril = ops.broadcast_to(tril, batch + (k, k))
        super().__init__(batch, (k,), validate_args)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    covariance_matrix = property(lambda self: ops.matmul(self.scale_tril, self.scale_tril.swapaxes(-1, -2)))
    precision_matrix = property(lambda self: ops.inverse(self.covariance_matrix))
    variance = property(lambda self: (self.scale_tril ** 2).sum(-1))

    def _half_log_det(self):
        return _dist_log(ops.diagonal(self.scale_tril, 0, -2, -1)).sum(-1)

    def rsample(self, sample_shape=()):
        eps = ops.standard_normal(self._extended_shape(sample_shape)).astype(self.loc.dtype)
        return self.loc + ops.matmul(self.scale_tril, ops.expand_dims(eps, -1)).squeeze(-1)

    def log_prob(self, value):
        diff = _dist_tensor(value, self.loc) - self.loc
        k = self.event_shape[0]
        shape = tuple(np.broadcast_shapes(tuple(diff.shape[:-1]), self.batch_shape))
        inv = ops.broadcast_to(ops.inverse(self.scale_tril), shape + (k, k))
        z = ops.matmul(inv, ops.expand_dims(ops.broadcast_to(diff, shape + (k,)), -1)).squeeze(-1)
        return -0.5 * (k * math.log(2 * math.pi) + (z ** 2).sum(-1)) - self._half_log_det()

    def entropy(self):
        k = self.event_shape[0]
        return 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()


class Independent(Distribution):
    _kl_family = "Independent"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = int(reinterpreted_batch_ndims)
        shape = base_distribution.batch_shape + base_distribution.event_shape
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(base_distribution.batch_shape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        split = len(shape) - len(base_distribution.event_shape) - n
        super().__init__(shape[:split], shape[split:], validate_args)
        self.has_rsample = base_distribution.has_rsample

    mean = property(lambda self: self.base_dist.mean)
    variance = property(lambda self: self.base_dist.variance)

    def _sum_rightmost(self, x):
        n = self.reinterpreted_batch_ndims
        return x.sum(tuple(range(-n, 0))) if n > 0 else x

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())



_EULER_GAMMA = 0.57721566490153286060


def _dist_tiny(x):
    return float(np.finfo(_dist_np_dtype(x.dtype)).tiny)


def _dist_eps(x):
    return float(np.finfo(_dist_np_dtype(x.dtype)).eps)


class Cauchy(_DistLocScale):
    _kl_family = "Cauchy"   # kl_divergence's closed form (a subclass keeps it)
    mean = property(lambda self: ops.full_like(self.loc, float("nan")))
    variance = property(lambda self: ops.full_like(self.loc, float("inf")))

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + self.scale * ops.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        z = (_dist_tensor(value, self.loc) - self.loc) / self.scale
        return -math.log(math.pi) - _dist_log(self.scale) - _dist_log1p(z ** 2)

    def cdf(self, value):
        return ops.atan((_dist_tensor(value, self.loc) - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ops.tan(math.pi * (_dist_tensor(value, self.loc) - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + _dist_log(self.scale)


class _DistHalf(Distribution):
    """|X| of a base distribution centred at 0 (HalfNormal, HalfCauchy): the density doubles on [0, inf)."""
    has_rsample = True

    def __init__(self, base, validate_args):
        self.base_dist = base
        self.scale = self.base_dist.scale
        super().__init__(tuple(self.scale.shape), (), validate_args)

    mode = property(lambda self: ops.zeros_like(self.scale))

    def rsample(self, sample_shape=()):
        return ops.abs(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        value = _dist_tensor(value, self.scale)
        if self._validate_args:
            _dist_check(value >= 0, "Expected value argument to be within the support (GreaterThanEq(0)) of "
                                    f"{type(self).__name__}")
        lp = self.base_dist.log_prob(value) + math.log(2)
        return ops.select(value >= 0, lp, ops.full_like(lp, float("-inf")))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((_dist_tensor(prob, self.scale) + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_DistHalf):
    _kl_family = "HalfNormal"   # kl_divergence's closed form (a subclass keeps it)
    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0.0, scale, validate_args), validate_args)

    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    variance = property(lambda self: self.scale ** 2 * (1 - 2 / math.pi))


class HalfCauchy(_DistHalf):
    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0.0, scale, validate_args), validate_args)

    mean = property(lambda self: ops.full_like(self.scale, float("inf")))
    variance = property(lambda self: ops.full_like(self.scale, float("inf")))


class LogNormal(Distribution):
    _kl_family = "LogNormal"   # kl_divergence's closed form (a subclass keeps it)
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args)
        self.loc, self.scale = self.base_dist.loc, self.base_dist.scale
        super().__init__(tuple(self.loc.shape), (), validate_args)

    mean = property(lambda self: _dist_exp(self.loc + self.scale ** 2 / 2))
    mode = property(lambda self: _dist_exp(self.loc - self.scale ** 2))
    variance = property(lambda self: _dist_expm1(self.scale ** 2) * _dist_exp(2 * self.loc + self.scale ** 2))

    def rsample(self, sample_shape=()):
        return _dist_exp(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        value = _dist_tensor(value, self.loc)
        if self._validate_args:
            _dist_check(value > 0, "Expected value argument to be within the support (GreaterThan(0)) of LogNormal")
        return self.base_dist.log_prob(_dist_log(value)) - _dist_log(value)

    def cdf(self, value):
        return self.base_dist.cdf(_dist_log(_dist_tensor(value, self.loc)))

    def icdf(self, value):
        return _dist_exp(self.base_dist.icdf(value))

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class Gumbel(_DistLocScale):
    _kl_family = "Gumbel"   # kl_divergence's closed form (a subclass keeps it)
    mean = property(lambda self: self.loc + self.scale * _EULER_GAMMA)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: (math.pi ** 2 / 6) * self.scale ** 2)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        u = ops.clamp(u, _dist_tiny(self.loc), 1 - _dist_eps(self.loc))
        return self.loc - self.scale * _dist_log(-_dist_log(u))

    def log_prob(self, value):
        z = (_dist_tensor(value, self.loc) - self.loc) / self.scale
        return -(z + _dist_exp(-z)) - _dist_log(self.scale)

    def cdf(self, value):
        # torch's Gumbel is a TransformedDistribution whose transforms' sign is a tensor: its cdf is
        # sign * (u - 1/2) + 1/2, which rounds values below ~3e-8 to 0 in float32; the same rounding here
        u = _dist_exp(-_dist_exp(-(_dist_tensor(value, self.loc) - self.loc) / self.scale))
        return (u - 0.5) + 0.5

    def icdf(self, value):
        return self.loc - self.scale * _dist_log(-_dist_log(_dist_tensor(value, self.loc)))

    def entropy(self):
        return _dist_log(self.scale) + (1 + _EULER_GAMMA)


class Geometric(Distribution):
    _kl_family = "Geometric"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _dist_probs_logits(probs, logits)
        if probs is not None and validate_args is not False:
            _dist_check((self.probs > 0) & (self.probs <= 1),
                        "Expected parameter probs of Geometric to be within (0, 1]")
        super().__init__(tuple(self.probs.shape), (), validate_args)

    mean = property(lambda self: 1.0 / self.probs - 1.0)
    mode = property(lambda self: ops.zeros_like(self.probs))
    variance = property(lambda self: (1.0 / self.probs - 1.0) / self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ops.clamp(ops.rand(shape, dtype=self.probs.dtype), _dist_tiny(self.probs), 1.0)
        return ops.stop_gradient(ops.floor(_dist_log(u) / _dist_log1p(-ops.broadcast_to(self.probs, shape))))

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        if self._validate_args:
            _dist_check((value >= 0) & (value == ops.floor(value)), "Expected value argument to be within the "
                                                                   "support (IntegerGreaterThan(0)) of Geometric")
        value, probs = _dist_broadcast_all(value, self.probs)
        probs = ops.select((probs == 1) & (value == 0), ops.zeros_like(probs), probs)
        return value * _dist_log1p(-probs) + _dist_log(self.probs)

    def entropy(self):
        l, p = self.logits, self.probs
        return _dist_bce_logits(l, p) / p


class Chi2(Gamma):

    def __init__(self, df, validate_args=None):
        (df,) = _dist_broadcast_all(df)
        super().__init__(0.5 * df, ops.full_like(df, 0.5), validate_args)

    df = property(lambda self: self.concentration * 2)


class StudentT(Distribution):
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        _dist_params(self, validate_args, ("df", "scale"), df=df, loc=loc, scale=scale)

    @property
    def mean(self):
        return ops.select(self.df > 1, self.loc, ops.full_like(self.loc, float("nan")))

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        m = self.scale ** 2 * self.df / (self.df - 2)
        m = ops.select(self.df <= 2, ops.full_like(m, float("inf")), m)
        return ops.select(self.df <= 1, ops.full_like(m, float("nan")), m)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = ops.standard_normal(shape).astype(self.df.dtype)
        z = Chi2(self.df, validate_args=False).sample(sample_shape)
        return ops.stop_gradient(self.loc + self.scale * x * ops.rsqrt(z / self.df))

    no_rsample = True   # rsample_at names the call's line

    def rsample(self, sample_shape=()):
        _dist_no_rsample("StudentT")

    def log_prob(self, value):
        y = (_dist_tensor(value, self.loc) - self.loc) / self.scale
        z = (_dist_log(self.scale) + 0.5 * _dist_log(self.df) + 0.5 * math.log(math.pi)
             + ops.lgamma(0.5 * self.df) - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * _dist_log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (_dist_log(self.scale) + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1))
                                                             - ops.digamma(0.5 * self.df))
                + 0.5 * _dist_log(self.df) + lbeta)


class Weibull(Distribution):
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        _dist_params(self, validate_args, ("scale", "concentration"), scale=scale, concentration=concentration)

    mean = property(lambda self: self.scale * _dist_exp(ops.lgamma(1 + 1 / self.concentration)))

    @property
    def variance(self):
        c = self.concentration
        return self.scale ** 2 * (_dist_exp(ops.lgamma(1 + 2 / c)) - _dist_exp(2 * ops.lgamma(1 + 1 / c)))

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.scale.dtype)
        return self.scale * ops.pow(-_dist_log1p(-u), 1 / self.concentration)

    def log_prob(self, value):
        value = _dist_tensor(value, self.scale)
        c, z = self.concentration, value / self.scale
        return _dist_log(c / self.scale) + (c - 1) * _dist_log(z) - ops.pow(z, c)

    def cdf(self, value):
        return 1 - _dist_exp(-ops.pow(_dist_tensor(value, self.scale) / self.scale, self.concentration))

    def entropy(self):
        c = self.concentration
        return _EULER_GAMMA * (1 - 1 / c) + _dist_log(self.scale / c) + 1


class Pareto(Distribution):
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        _dist_params(self, validate_args, ("scale", "alpha"), scale=scale, alpha=alpha)

    @property
    def mean(self):
        a = ops.clamp(self.alpha, min=1)
        return ops.select(self.alpha > 1, a * self.scale / (a - 1), ops.full_like(a, float("inf")))

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = ops.clamp(self.alpha, min=2)
        v = self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))
        return ops.select(self.alpha > 2, v, ops.full_like(v, float("inf")))

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.scale.dtype)
        return self.scale * _dist_exp(-_dist_log1p(-u) / self.alpha)

    def log_prob(self, value):
        value = _dist_tensor(value, self.scale)
        if self._validate_args:
            _dist_check(value >= self.scale, "Expected value argument to be within the support (GreaterThanEq) "
                                             "of Pareto")
        return _dist_log(self.alpha) + self.alpha * _dist_log(self.scale) - (self.alpha + 1) * _dist_log(value)

    def cdf(self, value):
        return 1 - ops.pow(self.scale / _dist_tensor(value, self.scale), self.alpha)

    def entropy(self):
        return _dist_log(self.scale / self.alpha) + 1 / self.alpha + 1


class OneHotCategorical(Distribution):
    _kl_family = "OneHotCategorical"   # kl_divergence's closed form (a subclass keeps it)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, tuple(self.probs.shape[-1:]), validate_args)

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        return ops.one_hot(self._categorical.mode, self.probs.shape[-1]).astype(self.probs.dtype)

    def sample(self, sample_shape=()):
        idx = self._categorical.sample(sample_shape)
        return ops.one_hot(idx, self.probs.shape[-1]).astype(self.probs.dtype)

    def log_prob(self, value):
        return self._categorical.log_prob(ops.argmax(_dist_tensor(value, self.probs), -1))

    def entropy(self):
        return self._categorical.entropy()


def _dist_clamp_by_zero(x):
    return (ops.clamp(x, min=0) + x - ops.clamp(x, max=0)) / 2


def _dist_trials(dist, total_count, probs, logits, validate_args, probs_ok):
    """Binomial/NegativeBinomial's parameters: total_count (as the probs' dtype) and torch's probs/logits pair,
    checked (total_count >= 0, probs_ok(probs)) when validating."""
    total_count, dist.probs, dist.logits = _dist_probs_logits(probs, logits, total_count)
    dist.total_count = total_count.astype(dist.probs.dtype)
    Distribution.__init__(dist, tuple(dist.probs.shape), (), validate_args)
    if dist._validate_args:
        _dist_check((dist.total_count >= 0) & probs_ok(dist.probs),
                    f"Expected parameters of {type(dist).__name__} to satisfy their constraints")


class Binomial(Distribution):

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _dist_trials(self, total_count, probs, logits, validate_args, lambda p: (p >= 0) & (p <= 1))

    mean = property(lambda self: self.total_count * self.probs)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n_max = int(self.total_count.max()) if self.total_count.size else 0
        u = ops.rand((n_max,) + shape, dtype=self.probs.dtype)
        trial = ops.arange(n_max).astype(self.probs.dtype).reshape((n_max,) + (1,) * len(shape))
        hits = (u < ops.broadcast_to(self.probs, shape)) & (trial < ops.broadcast_to(self.total_count, shape))
        return ops.stop_gradient(hits.astype(self.probs.dtype).sum(0))

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        if self._validate_args:
            _dist_check((value >= 0) & (value <= self.total_count) & (value == ops.floor(value)),
                        "Expected value argument to be within the support (IntegerInterval) of Binomial")
        n, l = self.total_count, self.logits
        normalize = n * _dist_clamp_by_zero(l) + n * _dist_log1p(_dist_exp(-ops.abs(l))) - ops.lgamma(n + 1)
        return value * l - ops.lgamma(value + 1) - ops.lgamma(n - value + 1) - normalize


class Multinomial(Distribution):

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs, logits, validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, tuple(self.probs.shape[-1:]), validate_args)

    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        idx = self._categorical.sample((self.total_count,) + _dist_shape(sample_shape))
        return ops.one_hot(idx, self.probs.shape[-1]).astype(self.probs.dtype).sum(0)

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        if self._validate_args:
            _dist_check((value >= 0) & (value == ops.floor(value)),
                        "Expected value argument to be within the support (Multinomial) of Multinomial")
            _dist_check(value.sum(-1) <= self.total_count,
                        "Expected value argument to be within the support (Multinomial) of Multinomial")
        shape = tuple(np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape)))
        logits = ops.broadcast_to(self.logits, shape)
        value = ops.broadcast_to(value, shape)
        logits = ops.select((value == 0) & ops.isinf(logits), ops.zeros_like(logits), logits)
        return ops.lgamma(value.sum(-1) + 1) - ops.lgamma(value + 1).sum(-1) + (logits * value).sum(-1)


# ------------------------------------------------------------------ transforms
class Transform:
    """torch.distributions.transforms.Transform: y = t(x), t.inv(y), log|dy/dx| elementwise."""

    event_dim = 0

    def __init__(self, cache_size=0):
        pass

    def __call__(self, x):
        return self._call(x)

    @property
    def inv(self):
        return _InverseTransform(self)

    @property
    def sign(self):
        """+1 or -1 (a number, or a tensor where a parameter is one) for a monotone transform, as torch's."""
        raise NotImplementedError(f"{type(self).__name__} has no sign (not monotone, as in torch)")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__} has no log_abs_det_jacobian")

    def forward_shape(self, shape):
        """The shape of t(x) for an x of `shape` (elementwise: the same, as given)."""
        return shape

    def inverse_shape(self, shape):
        return shape


def _dist_shapes_broadcast(shape, *params):
    """torch.broadcast_shapes(shape, param.shape...): a number parameter has shape (); RuntimeError as torch's."""
    try:
        return tuple(np.broadcast_shapes(tuple(shape), *(tuple(getattr(p, "shape", ())) for p in params)))
    except ValueError:
        raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape") from None


class _InverseTransform(Transform):

    def __init__(self, transform):
        self._inv = transform
        self.event_dim = transform.event_dim

    inv = property(lambda self: self._inv)
    sign = property(lambda self: self._inv.sign)

    def __call__(self, y):
        return self._inv._inverse(y)

    def _inverse(self, x):
        return self._inv._call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _dist_sign_of(v):
    """torch's sign of a transform parameter: a number's as an int, a tensor's elementwise."""
    if isinstance(v, ms.Tensor):
        return ops.sign(v)
    return 1 if float(v) > 0 else -1 if float(v) < 0 else 0


class ExpTransform(Transform):
    sign = 1
    _call = staticmethod(_dist_exp)
    _inverse = staticmethod(_dist_log)

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        self.loc, self.scale, self.event_dim = loc, scale, event_dim

    sign = property(lambda self: _dist_sign_of(self.scale))

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale if isinstance(self.scale, ms.Tensor) else ms.Tensor(float(self.scale), x.dtype)
        result = ops.broadcast_to(_dist_log(ops.abs(scale)), x.shape)
        return result.sum(tuple(range(-self.event_dim, 0))) if self.event_dim else result

    def forward_shape(self, shape):
        return _dist_shapes_broadcast(shape, self.loc, self.scale)

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    sign = 1

    def _call(self, x):
        return ops.clamp(_dist_sigmoid(x), _dist_tiny(x), 1.0 - _dist_eps(x))

    def _inverse(self, y):
        y = ops.clamp(y, _dist_tiny(y), 1.0 - _dist_eps(y))
        return _dist_log(y) - _dist_log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        return -_dist_softplus(-x) - _dist_softplus(x)


class TanhTransform(Transform):
    sign = 1
    _call = staticmethod(_dist_tanh)
    _inverse = staticmethod(ops.atanh)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _dist_softplus(-2.0 * x))


class AbsTransform(Transform):
    _call = staticmethod(ops.abs)

    def _inverse(self, y):
        return y


class PowerTransform(Transform):

    def __init__(self, exponent, cache_size=0):
        self.exponent = exponent

    # torch broadcasts the exponent to a tensor: its sign is always one
    sign = property(lambda self: ops.sign(_dist_tensor(self.exponent)))

    def _call(self, x):
        return ops.pow(x, self.exponent)

    def _inverse(self, y):
        return ops.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return _dist_log(ops.abs(self.exponent * y / x))

    def forward_shape(self, shape):
        return _dist_shapes_broadcast(shape, self.exponent)

    inverse_shape = forward_shape


class SoftplusTransform(Transform):
    sign = 1
    _call = staticmethod(_dist_softplus)

    def _inverse(self, y):
        return y + _dist_log(-_dist_expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -_dist_softplus(-x)


class ComposeTransform(Transform):

    def __init__(self, parts, cache_size=0):
        self.parts = list(parts)

    @property
    def event_dim(self):    # read when used, as torch's (building one checks nothing of its parts)
        return max([p.event_dim for p in self.parts], default=0)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    def _call(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        total = ops.zeros_like(x)
        for part in self.parts:
            y_part = part(x)
            total = total + part.log_abs_det_jacobian(x, y_part)
            x = y_part
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape


identity_transform = ComposeTransform([])


class TransformedDistribution(Distribution):

    def __init__(self, base_distribution, transforms, validate_args=None):
        self.base_dist = base_distribution
        self.transforms = [transforms] if isinstance(transforms, Transform) else list(transforms)
        super().__init__(base_distribution.batch_shape, base_distribution.event_shape, validate_args)
        self.has_rsample = base_distribution.has_rsample

    def _sum_event(self, x):
        n = len(self.event_shape)
        return x.sum(tuple(range(-n, 0))) if n else x

    def sample(self, sample_shape=()):
        return ops.stop_gradient(self.rsample(sample_shape) if self.has_rsample
                                 else self._forward(self.base_dist.sample(sample_shape)))

    def rsample(self, sample_shape=()):
        return self._forward(self.base_dist.rsample(sample_shape))

    def _forward(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        y = _dist_tensor(value)
        lp = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            lp = lp - self._sum_event(t.log_abs_det_jacobian(x, y))
            y = x
        return lp + self.base_dist.log_prob(y)

    def _monotonize_cdf(self, value):
        """torch's: a decreasing chain of transforms flips u -> 1 - u, as sign * (u - 1/2) + 1/2 (also for a sign
        tensor of +1, whose rounding torch's values carry)."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        x = self.base_dist.icdf(self._monotonize_cdf(_dist_tensor(value)))
        return self._forward(x)


class NegativeBinomial(Distribution):

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _dist_trials(self, total_count, probs, logits, validate_args, lambda p: (p >= 0) & (p < 1))

    mean = property(lambda self: self.total_count * _dist_exp(self.logits))
    variance = property(lambda self: self.total_count * _dist_exp(self.logits) / _dist_sigmoid(-self.logits))

    def sample(self, sample_shape=()):
        rate = Gamma(self.total_count, _dist_exp(-self.logits), validate_args=False).sample(sample_shape)
        return Poisson(rate, validate_args=False).sample()

    def log_prob(self, value):
        value = _dist_tensor(value, self.probs)
        if self._validate_args:
            _dist_check((value >= 0) & (value == ops.floor(value)), "Expected value argument to be within the "
                                                                   "support (IntegerGreaterThan(0)) of "
                                                                   "NegativeBinomial")
        n, l = self.total_count, self.logits
        unnormalized = n * -_dist_softplus(l) + value * -_dist_softplus(-l)
        normalization = -ops.lgamma(n + value) + ops.lgamma(1.0 + value) + ops.lgamma(n)
        normalization = ops.select(n + value == 0, ops.zeros_like(normalization), normalization)
        return unnormalized - normalization


class InverseGamma(Distribution):

    def __init__(self, concentration, rate, validate_args=None):
        self.base_dist = Gamma(concentration, rate, validate_args)
        self.concentration, self.rate = self.base_dist.concentration, self.base_dist.rate
        super().__init__(self.base_dist.batch_shape, (), validate_args)
        self.has_rsample = True

    @property
    def mean(self):
        m = self.rate / (self.concentration - 1)
        return ops.select(self.concentration <= 1, ops.full_like(m, float("inf")), m)

    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def variance(self):
        c = self.concentration
        v = self.rate ** 2 / ((c - 1) ** 2 * (c - 2))
        return ops.select(c <= 2, ops.full_like(v, float("inf")), v)

    def sample(self, sample_shape=()):
        return 1.0 / self.base_dist.sample(sample_shape)

    no_rsample = True   # rsample_at names the call's line

    def rsample(self, sample_shape=()):
        _dist_no_rsample("InverseGamma")

    def log_prob(self, value):
        value = _dist_tensor(value, self.rate)
        return self.base_dist.log_prob(1.0 / value) - 2 * _dist_log(value)

    def entropy(self):
        c = self.concentration
        return c + _dist_log(self.rate) + ops.lgamma(c) - (1 + c) * ops.digamma(c)


def _dist_kumaraswamy_moments(a, b, n):
    arg1 = 1 + n / a
    return b * _dist_exp(ops.lgamma(arg1) + ops.lgamma(b) - ops.lgamma(arg1 + b))


class Kumaraswamy(Distribution):
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        _dist_params(self, validate_args, ("concentration1", "concentration0"), concentration1=concentration1,
                     concentration0=concentration0)

    mean = property(lambda self: _dist_kumaraswamy_moments(self.concentration1, self.concentration0, 1))
    variance = property(lambda self: _dist_kumaraswamy_moments(self.concentration1, self.concentration0, 2)
                        - self.mean ** 2)

    def rsample(self, sample_shape=()):
        u = ops.rand(self._extended_shape(sample_shape), dtype=self.concentration1.dtype)
        u = ops.clamp(u, _dist_tiny(u), 1 - _dist_eps(u))
        return ops.pow(1 - ops.pow(u, 1 / self.concentration0), 1 / self.concentration1)

    def log_prob(self, value):
        x = _dist_tensor(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return _dist_log(a) + _dist_log(b) + (a - 1) * _dist_log(x) + (b - 1) * _dist_log1p(-ops.pow(x, a))

    def entropy(self):
        t1 = 1 - 1 / self.concentration1
        t0 = 1 - 1 / self.concentration0
        h0 = ops.digamma(self.concentration0 + 1) + _EULER_GAMMA
        return t0 + t1 * h0 - _dist_log(self.concentration1) - _dist_log(self.concentration0)


class MixtureSameFamily(Distribution):

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of torch.distributions.Categorical")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_distribution.batch_shape[:-1], component_distribution.event_shape,
                         validate_args)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    def _pad_probs(self):
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        return (self._pad_probs() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs, axis = self._pad_probs(), -1 - self._event_ndims
        comp = self._component_distribution
        mean_cond_var = (probs * comp.variance).sum(axis)
        var_cond_mean = (probs * (comp.mean - ops.expand_dims(self.mean, axis)) ** 2).sum(axis)
        return mean_cond_var + var_cond_mean

    def log_prob(self, x):
        x = ops.expand_dims(_dist_tensor(x), -1 - self._event_ndims)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix = log_softmax(self._mixture_distribution.logits, -1)   # compat_parts/softmax_slices.py: float64 kept
        return _dist_logsumexp(log_prob_x + log_mix, -1)

    def sample(self, sample_shape=()):
        sample_shape = _dist_shape(sample_shape)
        axis = len(sample_shape) + len(self.batch_shape)
        comp = self._component_distribution.sample(sample_shape)
        idx = self._mixture_distribution.sample(sample_shape)
        idx = idx.reshape(tuple(idx.shape) + (1,) * (1 + self._event_ndims))
        idx = ops.broadcast_to(idx, tuple(idx.shape[:axis + 1]) + tuple(comp.shape[axis + 1:]))
        return ops.stop_gradient(ops.gather_elements(comp, axis, idx).squeeze(axis))


class SoftmaxTransform(Transform):
    event_dim = 1

    def __init__(self, cache_size=0):
        pass

    def _call(self, x):
        probs = _dist_exp(x - x.max(-1, keepdims=True))
        return probs / probs.sum(-1, keepdims=True)

    def _inverse(self, y):
        return _dist_log(y)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


ExponentialFamily = Distribution   # torch's base for exponential families; its Bregman entropy is not used here


class FisherSnedecor(Distribution):
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        _dist_params(self, validate_args, ("df1", "df2"), df1=df1, df2=df2)

    mean = property(lambda self: ops.select(self.df2 <= 2, ops.full_like(self.df2, float("nan")),
                                            self.df2 / (self.df2 - 2)))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        v = 2 * df2 ** 2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))
        return ops.select(df2 <= 4, ops.full_like(v, float("nan")), v)

    def sample(self, sample_shape=()):
        x1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False).sample(sample_shape)
        x2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False).sample(sample_shape)
        tiny = _dist_tiny(x2)
        return ops.clamp(x1 / ops.clamp(x2, min=tiny), min=tiny)

    def rsample(self, sample_shape=()):
        _dist_no_rsample("FisherSnedecor")

    def log_prob(self, value):
        value = _dist_tensor(value, self.df1)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = ops.lgamma(ct1 + ct2) - ops.lgamma(ct1) - ops.lgamma(ct2)
        t2 = ct1 * _dist_log(ct3) + (ct1 - 1) * _dist_log(value)
        t3 = (ct1 + ct2) * _dist_log1p(ct3 * value)
        return t1 + t2 - t3


class OneHotCategoricalStraightThrough(OneHotCategorical):
    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        return samples + (self.probs - ops.stop_gradient(self.probs))


class LowRankMultivariateNormal(MultivariateNormal):
    """covariance cov_factor @ cov_factor.T + diag(cov_diag), through MultivariateNormal's Cholesky factor."""

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        self.cov_factor = _dist_tensor(cov_factor)
        self.cov_diag = _dist_tensor(cov_diag, self.cov_factor)
        if validate_args is not False:
            _dist_check(self.cov_diag > 0, "Expected parameter cov_diag of LowRankMultivariateNormal to be positive")
        cov = ops.matmul(self.cov_factor, self.cov_factor.swapaxes(-1, -2)) + ops.diag_embed(self.cov_diag)
        super().__init__(loc, covariance_matrix=cov, validate_args=validate_args)


class ReshapeTransform(Transform):

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if int(np.prod(self.in_shape)) != int(np.prod(self.out_shape)):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        self.event_dim = len(self.in_shape)

    def _call(self, x):
        batch = tuple(x.shape[:len(x.shape) - len(self.in_shape)])
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = tuple(y.shape[:len(y.shape) - len(self.out_shape)])
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:len(x.shape) - len(self.in_shape)])
        return ops.zeros(batch, x.dtype)

    @staticmethod
    def _reshaped(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)
        self.event_dim = base_transform.event_dim + self.reinterpreted_batch_ndims

    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        n = self.reinterpreted_batch_ndims
        return result.sum(tuple(range(-n, 0))) if n else result

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class StickBreakingTransform(Transform):
    """Unconstrained R^K -> the simplex in R^(K+1), torch's stick-breaking construction."""
    event_dim = 1

    @staticmethod
    def _offset(k, dtype):
        return ms.Tensor(np.arange(k, 0, -1, dtype=np.float64)).astype(dtype)

    def _call(self, x):
        k = x.shape[-1]
        z = ops.clamp(_dist_sigmoid(x - _dist_log(self._offset(k, x.dtype))), _dist_tiny(x), 1.0 - _dist_eps(x))
        z_cumprod = ops.cumprod(1 - z, -1)
        ones = ops.ones(tuple(x.shape[:-1]) + (1,), x.dtype)
        return ops.cat([z, ones], -1) * ops.cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        k = y_crop.shape[-1]
        sf = ops.clamp(1 - ops.cumsum(y_crop, -1), min=_dist_tiny(y))
        return _dist_log(y_crop) - _dist_log(sf) + _dist_log(self._offset(k, y.dtype))

    def log_abs_det_jacobian(self, x, y):
        x = x - _dist_log(self._offset(x.shape[-1], x.dtype))
        return (-x - _dist_softplus(-x) + _dist_log(y[..., :-1])).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LogisticNormal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args)
        if not self.base_dist.batch_shape:
            self.base_dist = Normal(self.base_dist.loc.reshape(1), self.base_dist.scale.reshape(1), validate_args)
        self.loc, self.scale = self.base_dist.loc, self.base_dist.scale
        self._transform = StickBreakingTransform()
        shape = self.base_dist.batch_shape
        super().__init__(shape[:-1], (shape[-1] + 1,), validate_args)

    def rsample(self, sample_shape=()):
        return self._transform(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        y = _dist_tensor(value, self.loc)
        x = self._transform.inv(y)
        return self.base_dist.log_prob(x).sum(-1) - self._transform.log_abs_det_jacobian(x, y)


class _LogitRelaxedBernoulli(Distribution):
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        b = Bernoulli(probs, logits, validate_args)
        self.probs, self.logits = b.probs, b.logits
        self.temperature = _dist_tensor(temperature, self.probs)
        super().__init__(b.batch_shape, (), validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = _dist_clamp_probs(ops.broadcast_to(self.probs, shape))
        u = _dist_clamp_probs(ops.rand(shape, dtype=probs.dtype))
        return (_dist_log(u) - _dist_log1p(-u) + _dist_log(probs) - _dist_log1p(-probs)) / self.temperature

    def log_prob(self, value):
        logits, value = _dist_broadcast_all(self.logits, _dist_tensor(value, self.logits))
        diff = logits - value * self.temperature
        return _dist_log(self.temperature) + diff - 2 * _dist_log1p(_dist_exp(diff))


class _ExpRelaxedCategorical(Distribution):
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self.temperature = _dist_tensor(temperature, self.probs)
        super().__init__(self._categorical.batch_shape, (self._categorical._num_events,), validate_args)

    def rsample(self, sample_shape=()):
        u = _dist_clamp_probs(ops.rand(self._extended_shape(sample_shape), dtype=self.logits.dtype))
        scores = (self.logits - _dist_log(-_dist_log(u))) / self.temperature
        return scores - _dist_logsumexp(scores, -1, True)

    def log_prob(self, value):
        k = self._categorical._num_events
        logits, value = _dist_broadcast_all(self.logits, _dist_tensor(value, self.logits))
        log_scale = math.lgamma(k) + (k - 1) * _dist_log(self.temperature)
        score = logits - value * self.temperature
        return (score - _dist_logsumexp(score, -1, True)).sum(-1) + log_scale


class RelaxedBernoulli(TransformedDistribution):

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = _LogitRelaxedBernoulli(temperature, probs, logits, validate_args)
        super().__init__(base, SigmoidTransform(), validate_args)
        self.temperature, self.probs, self.logits = base.temperature, base.probs, base.logits


class RelaxedOneHotCategorical(TransformedDistribution):

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = _ExpRelaxedCategorical(temperature, probs, logits, validate_args)
        super().__init__(base, ExpTransform(), validate_args)
        self.temperature, self.probs, self.logits = base.temperature, base.probs, base.logits


class LowerCholeskyTransform(Transform):
    event_dim = 2

    def _call(self, x):
        return ops.tril(x, -1) + ops.diag_embed(_dist_exp(ops.diagonal(x, 0, -2, -1)))

    def _inverse(self, y):
        return ops.tril(y, -1) + ops.diag_embed(_dist_log(ops.diagonal(y, 0, -2, -1)))


class CumulativeDistributionTransform(Transform):

    def __init__(self, distribution, cache_size=0):
        self.distribution = distribution

    sign = 1

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class CatTransform(Transform):

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        self.dim = dim
        self.event_dim = max([t.event_dim for t in self.transforms], default=0)

    def _pieces(self, x):
        return ops.split(x, self.lengths, self.dim)

    def _call(self, x):
        return ops.cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y):
        return ops.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            part = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                part = part.sum(tuple(range(-(self.event_dim - t.event_dim), 0)))
            parts.append(part)
        dim = self.dim - len(x.shape) if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        return ops.cat(parts, dim) if dim < 0 else sum(parts)


class StackTransform(Transform):

    def __init__(self, tseq, dim=0, cache_size=0):
        self.transforms = list(tseq)
        self.dim = dim

    def _slices(self, x):
        return [ops.gather(x, ms.Tensor(i, ms.int64), self.dim) for i in range(x.shape[self.dim])]

    def _call(self, x):
        return ops.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return ops.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ops.stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                          zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class GeneralizedPareto(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = _dist_broadcast_all(loc, scale, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)
        if self._validate_args:
            _dist_check(self.scale > 0, "Expected parameter scale of GeneralizedPareto to be positive")

    def _safe(self):
        eq_zero = ops.abs(self.concentration) <= 1e-8   # torch.isclose(c, 0)
        return eq_zero, ops.select(eq_zero, ops.ones_like(self.concentration), self.concentration)

    mode = property(lambda self: self.loc)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = ops.select(valid, self.concentration, ops.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - safe)
        return ops.select(valid, result, ops.full_like(result, float("nan")))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = ops.select(valid, self.concentration, ops.full_like(self.concentration, 0.25))
        result = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return ops.select(valid, result, ops.full_like(result, float("nan")))

    def rsample(self, sample_shape=()):
        return self.icdf(ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value):
        z = (_dist_tensor(value, self.loc) - self.loc) / self.scale
        eq_zero, safe = self._safe()
        y = 1 / safe + ops.ones_like(z)
        nonzero = ops.select(y == 0, y, y * _dist_log1p(safe * z))
        return -_dist_log(self.scale) - ops.select(ops.broadcast_to(eq_zero, z.shape), z, nonzero)

    def log_survival_function(self, value):
        z = (_dist_tensor(value, self.loc) - self.loc) / self.scale
        eq_zero, safe = self._safe()
        return ops.select(ops.broadcast_to(eq_zero, z.shape), -z, -_dist_log1p(safe * z) / safe)

    def cdf(self, value):
        return _dist_exp(_dist_log1p(-_dist_exp(self.log_survival_function(value))))

    def icdf(self, value):
        eq_zero, safe = self._safe()
        logu = _dist_log1p(-_dist_tensor(value, self.loc))
        nonzero = self.loc + self.scale / safe * _dist_expm1(-safe * logu)
        return ops.select(ops.broadcast_to(eq_zero, logu.shape), self.loc - self.scale * logu, nonzero)

    def entropy(self):
        return ops.broadcast_to(_dist_log(self.scale) + self.concentration + 1, self.batch_shape)


class PositiveDefiniteTransform(Transform):
    event_dim = 2

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return ops.matmul(low, low.swapaxes(-1, -2))

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ops.cholesky(y))


class VonMises(Distribution):
    """A circular distribution on [-pi, pi); log I0 from MindSpore's scaled Bessel function (i0e)."""

    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = _dist_broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)
        if self._validate_args:
            _dist_check(self.concentration > 0, "Expected parameter concentration of VonMises to be positive")

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        k = self.concentration
        return 1 - ops.bessel_i1e(k) / ops.bessel_i0e(k)

    def log_prob(self, value):
        k = self.concentration
        log_i0 = _dist_log(ops.bessel_i0e(k)) + k
        return k * ops.cos(_dist_tensor(value, self.loc) - self.loc) - math.log(2 * math.pi) - log_i0

    def sample(self, sample_shape=()):
        # torch's rejection sampler (Best & Fisher), in float64 like torch
        shape = self._extended_shape(sample_shape)
        kappa = ops.broadcast_to(self.concentration, shape).astype(ms.float64)
        tau = 1 + ops.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - ops.sqrt(2 * tau)) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        x = ops.zeros(shape, ms.float64)
        done = ops.zeros(shape, ms.bool_)
        while not bool(done.all()):
            u1, u2, u3 = (ops.rand(shape, dtype=ms.float64) for _ in range(3))
            z = ops.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | ((_dist_log(c / u2) + 1 - c) >= 0)
            x = ops.select(accept & ~done, ops.sign(u3 - 0.5) * ops.acos(f), x)
            done = done | accept
        loc = ops.broadcast_to(self.loc, shape).astype(ms.float64)
        return ops.stop_gradient(((x + math.pi + loc) % (2 * math.pi) - math.pi).astype(self.loc.dtype))


class LKJCholesky(Distribution):
    """torch's LKJCholesky: lower Cholesky factors of dim x dim correlation matrices, drawn by torch's vectorised
    onion method (Beta radii, normal directions), log_prob with torch's normaliser."""

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = _dist_broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = ops.concat([ops.zeros((1,), self.concentration.dtype),
                             ops.arange(dim - 1).astype(self.concentration.dtype)])
        self._beta = Beta(offset + 0.5, ops.expand_dims(marginal, -1) - 0.5 * offset, validate_args)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args)

    def sample(self, sample_shape=()):
        y = ops.expand_dims(self._beta.sample(sample_shape), -1)
        shape = self._extended_shape(sample_shape)
        u = ops.tril(ops.standard_normal(shape).astype(y.dtype), -1)
        norm = ops.sqrt((u ** 2).sum(-1, keepdims=True))
        first_row = ops.arange(self.dim).reshape(self.dim, 1) == 0    # 0/0 there: zeros, as torch
        w = ops.sqrt(y) * ops.select(ops.broadcast_to(first_row, shape), ops.zeros_like(u), u / norm)
        diag = ops.sqrt(ops.clamp(1 - (w ** 2).sum(-1), min=_dist_tiny(w)))
        return ops.stop_gradient(w + ops.eye(self.dim, self.dim, w.dtype) * ops.expand_dims(diag, -1))

    def log_prob(self, value):
        value = _dist_tensor(value, self.concentration)
        diag = ops.diagonal(value, 0, -2, -1)[..., 1:]
        order = 2 * ops.expand_dims(self.concentration - 1, -1) + self.dim - ops.arange(2, self.dim + 1).astype(
            value.dtype)
        unnormalized = (order * _dist_log(diag)).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + special_multigammaln(alpha - 0.5, dm1) - ops.lgamma(alpha) * dm1
        return unnormalized - normalize


class _DistConstraint:
    """torch.distributions.constraints.Constraint: check(value) is a bool tensor over the batch (the base raises
    NotImplementedError, as torch's)."""
    is_discrete = False
    event_dim = 0
    _name = "Constraint"

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self._name + "()"


def _dist_bounded(name, test, bounds):
    """A constraint class of bounds (lower/upper) with torch's check and repr."""
    def __init__(self, *args):
        for attr, v in zip(bounds, args):
            setattr(self, attr, v)

    def __repr__(self):
        return f"{name}({', '.join(f'{a}={getattr(self, a)}' for a in bounds)})"
    return type("_Dist" + name, (_DistConstraint,), {"__init__": __init__, "__repr__": __repr__, "_name": name,
                                                     "check": lambda self, v: test(self, _dist_tensor(v))})


def _dist_matrices_ok(value, test, symmetric_first=False):
    """test(matrix) -> bool for each matrix of a batch (NumPy on the values: torch's checks read them too). With
    symmetric_first, torch's order: where any matrix of the batch is not symmetric, the symmetry check is the
    answer for all of them."""
    a = value.asnumpy()
    flat = a.reshape((-1,) + a.shape[-2:])
    ok = [_dist_symmetric(m) for m in flat] if symmetric_first else [True]
    if all(ok):
        ok = [bool(test(m)) for m in flat]
    return ms.Tensor(np.array(ok, np.bool_).reshape(a.shape[:-2]))


def _dist_cholesky_ok(m):
    try:
        np.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


class _DistMatrixConstraint(_DistConstraint):
    event_dim = 2

    def __init__(self, name, test, symmetric_first=False):
        self._name, self._test, self._symmetric_first = name, test, symmetric_first

    def check(self, value):
        return _dist_matrices_ok(_dist_tensor(value), self._test, self._symmetric_first)


def _dist_symmetric(m):
    return m.shape[-1] == m.shape[-2] and bool(np.isclose(m, m.T, atol=1e-6).all())


class _DistIndependentConstraint(_DistConstraint):

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        return result.all(tuple(range(-n, 0))) if n else result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class constraints:
    """torch.distributions.constraints: the constraint objects and classes (check() reads values: PyNative)."""
    Constraint = _DistConstraint
    real = _dist_bounded("Real", lambda c, v: v == v, ())()
    boolean = _dist_bounded("Boolean", lambda c, v: (v == 0) | (v == 1), ())()
    greater_than = _dist_bounded("GreaterThan", lambda c, v: c.lower_bound < v, ("lower_bound",))
    greater_than_eq = _dist_bounded("GreaterThanEq", lambda c, v: c.lower_bound <= v, ("lower_bound",))
    less_than = _dist_bounded("LessThan", lambda c, v: v < c.upper_bound, ("upper_bound",))
    interval = _dist_bounded("Interval", lambda c, v: (c.lower_bound <= v) & (v <= c.upper_bound),
                             ("lower_bound", "upper_bound"))
    half_open_interval = _dist_bounded("HalfOpenInterval", lambda c, v: (c.lower_bound <= v) & (v < c.upper_bound),
                                       ("lower_bound", "upper_bound"))
    integer_interval = _dist_bounded("IntegerInterval", lambda c, v: (v % 1 == 0) & (c.lower_bound <= v)
                                     & (v <= c.upper_bound), ("lower_bound", "upper_bound"))
    positive = greater_than(0.0)
    nonnegative = greater_than_eq(0.0)
    unit_interval = interval(0.0, 1.0)
    nonnegative_integer = _dist_bounded("IntegerGreaterThan", lambda c, v: (v % 1 == 0) & (v >= c.lower_bound),
                                        ("lower_bound",))(0)
    positive_integer = _dist_bounded("IntegerGreaterThan", lambda c, v: (v % 1 == 0) & (v >= c.lower_bound),
                                     ("lower_bound",))(1)
    simplex = _dist_bounded("Simplex", lambda c, v: (v >= 0).all(-1) & (ops.abs(v.sum(-1) - 1) < 1e-6), ())()
    independent = _DistIndependentConstraint
    lower_triangular = _DistMatrixConstraint("LowerTriangular", lambda m: (np.tril(m) == m).all())
    lower_cholesky = _DistMatrixConstraint("LowerCholesky",
                                           lambda m: (np.tril(m) == m).all() and (np.diagonal(m) > 0).all())
    square = _DistMatrixConstraint("Square", lambda m: m.shape[-1] == m.shape[-2])
    symmetric = _DistMatrixConstraint("Symmetric", _dist_symmetric)
    positive_semidefinite = _DistMatrixConstraint("PositiveSemidefinite", lambda m: (np.linalg.eigvalsh(m) >= 0).all(),
                                                  True)
    positive_definite = _DistMatrixConstraint("PositiveDefinite", _dist_cholesky_ok, True)


_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """torch.distributions.register_kl: a decorator adding a KL function for a pair of classes."""
    def decorator(fn):
        _KL_REGISTRY[(type_p, type_q)] = fn
        return fn
    return decorator


def _dist_inf_where(x, cond):
    return ops.select(cond, ops.full_like(x, float("inf")), x)


def _dist_zero_where(x, cond):
    return ops.select(cond, ops.zeros_like(x), x)


def _kl_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - _dist_log(var_ratio))


def _kl_uniform(p, q):
    result = _dist_log((q.high - q.low) / (p.high - p.low))
    return _dist_inf_where(result, (q.low > p.low) | (q.high < p.high))


def _kl_bernoulli(p, q):
    t1 = p.probs * (_dist_softplus(-q.logits) - _dist_softplus(-p.logits))
    t1 = _dist_zero_where(_dist_inf_where(t1, q.probs == 0), p.probs == 0)
    t2 = (1 - p.probs) * (_dist_softplus(q.logits) - _dist_softplus(p.logits))
    t2 = _dist_zero_where(_dist_inf_where(t2, q.probs == 1), p.probs == 1)
    return t1 + t2


def _kl_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _dist_zero_where(_dist_inf_where(t, ops.broadcast_to(q.probs == 0, t.shape)),
                         ops.broadcast_to(p.probs == 0, t.shape))
    return t.sum(-1)


def _kl_beta(p, q):
    sum_p, sum_q = p.concentration1 + p.concentration0, q.concentration1 + q.concentration0
    t1 = ops.lgamma(q.concentration1) + ops.lgamma(q.concentration0) + ops.lgamma(sum_p)
    t2 = ops.lgamma(p.concentration1) + ops.lgamma(p.concentration0) + ops.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * ops.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ops.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * ops.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


def _kl_gamma(p, q):
    t1 = q.concentration * _dist_log(p.rate / q.rate)
    t2 = ops.lgamma(q.concentration) - ops.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -_dist_log(rate_ratio) + rate_ratio - 1


def _kl_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = ops.lgamma(sum_p) - ops.lgamma(sum_q)
    t2 = (ops.lgamma(p.concentration) - ops.lgamma(q.concentration)).sum(-1)
    t4 = ops.digamma(p.concentration) - ops.expand_dims(ops.digamma(sum_p), -1)
    return t1 - t2 + ((p.concentration - q.concentration) * t4).sum(-1)


def _kl_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = ops.abs(p.loc - q.loc)
    return -_dist_log(scale_ratio) + loc_abs_diff / q.scale + scale_ratio * _dist_exp(-loc_abs_diff / p.scale) - 1


def _kl_poisson(p, q):
    return p.rate * (_dist_log(p.rate) - _dist_log(q.rate)) - (p.rate - q.rate)


def _kl_geometric(p, q):
    return -p.entropy() - _dist_log1p(-q.probs) / p.probs - q.logits


def _kl_cauchy(p, q):
    return _dist_log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) - _dist_log(4 * p.scale * q.scale)


def _kl_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t3 = _dist_exp(ct2 + ops.lgamma(1 + ct1) - ct3)
    return -_dist_log(ct1) - ct2 + ct3 + ct1 * _EULER_GAMMA + t3 - (1 + _EULER_GAMMA)


def _kl_onehot(p, q):
    return _kl_categorical(p._categorical, q._categorical)


def _kl_half_or_log_normal(p, q):
    return _kl_normal(p.base_dist, q.base_dist)




def _kl_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    n = p.event_shape[0]
    shape = tuple(np.broadcast_shapes(tuple(p.scale_tril.shape[:-2]), tuple(q.scale_tril.shape[:-2])))
    q_inv = ops.broadcast_to(ops.inverse(q.scale_tril), shape + (n, n))
    half_term1 = q._half_log_det() - p._half_log_det()
    term2 = (ops.matmul(q_inv, ops.broadcast_to(p.scale_tril, shape + (n, n))) ** 2).sum((-2, -1))
    diff = ops.broadcast_to(q.loc - p.loc, shape + (n,))
    term3 = (ops.matmul(q_inv, ops.expand_dims(diff, -1)).squeeze(-1) ** 2).sum(-1)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _kl_same_family(family, p, q):
    """torch's closed form for two distributions of one family (a chain of string tests, not a table: a
    GRAPH-mode construct compiles it)."""
    if family == "Normal":
        return _kl_normal(p, q)
    if family == "Uniform":
        return _kl_uniform(p, q)
    if family == "Bernoulli":
        return _kl_bernoulli(p, q)
    if family == "Categorical":
        return _kl_categorical(p, q)
    if family == "Beta":
        return _kl_beta(p, q)
    if family == "Gamma":
        return _kl_gamma(p, q)
    if family == "Exponential":
        return _kl_exponential(p, q)
    if family == "Dirichlet":
        return _kl_dirichlet(p, q)
    if family == "Laplace":
        return _kl_laplace(p, q)
    if family == "Poisson":
        return _kl_poisson(p, q)
    if family == "Geometric":
        return _kl_geometric(p, q)
    if family == "Cauchy":
        return _kl_cauchy(p, q)
    if family == "Gumbel":
        return _kl_gumbel(p, q)
    if family == "OneHotCategorical":
        return _kl_onehot(p, q)
    if family == "HalfNormal":
        return _kl_half_or_log_normal(p, q)
    if family == "LogNormal":
        return _kl_half_or_log_normal(p, q)
    if family == "MultivariateNormal":
        return _kl_mvn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for {type(p).__name__} and {type(q).__name__}")


def kl_divergence(p, q):
    """torch.distributions.kl_divergence: the functions given to register_kl first (by the classes' method
    resolution order), then torch's closed forms for a pair of the same family; NotImplementedError for another
    pair, as torch's for an unregistered one."""
    if _KL_REGISTRY:   # (the registered pairs are looked up in PyNative mode only)
        for tp in type(p).__mro__:
            for tq in type(q).__mro__:
                if (tp, tq) in _KL_REGISTRY:
                    return _KL_REGISTRY[(tp, tq)](p, q)
    # the family a class or its base declares (Chi2's is Gamma's, a program's own Normal's is Normal's): no walk
    # over classes, so that a GRAPH-mode construct compiles it
    family = getattr(p, "_kl_family", None)
    if family is not None and family == getattr(q, "_kl_family", None):
        if family != "Independent":
            return _kl_same_family(family, p, q)
        if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
            raise NotImplementedError("KL of Independent distributions over different reinterpreted dims")
        n = p.reinterpreted_batch_ndims
        # the bases' KL: through kl_divergence where a pair is registered (PyNative), else their family's form
        # (one level, no recursion: GRAPH mode compiles no recursive function)
        result = kl_divergence(p.base_dist, q.base_dist) if _KL_REGISTRY else _kl_same_family(
            getattr(p.base_dist, "_kl_family", None), p.base_dist, q.base_dist)
        return result.sum(tuple(range(-n, 0))) if n else result
    pair = (type(p).__name__, type(q).__name__)
    raise NotImplementedError(f"No KL(p || q) is implemented for {pair[0]} and {pair[1]}")
