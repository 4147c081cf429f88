"""torch's in-place random fills of a whole tensor (x.exponential_(), x.bernoulli_(p), x.random_(a, b)...):
drawn on the host from the initializers' stream and written like uniform_ (Parameter.set_data / Tensor.copy_,
_assign), so the name and every other reference see the new values. The random stream differs from torch's;
the distribution is torch's. Not inside construct under GRAPH mode (host draws)."""
import mindspore as ms
import numpy as np


def _fill_drawn(x, draw):
    data = np.asarray(draw(init_stream(), tuple(x.shape))).astype(ms.dtype_to_nptype(x.dtype))
    return _assign(x, ms.Tensor(data))


def exponential_(x, lambd=1.0, generator=None):
    return _fill_drawn(x, lambda r, s: r.exponential(1.0 / lambd, size=s))


def log_normal_(x, mean=1.0, std=2.0, generator=None):
    return _fill_drawn(x, lambda r, s: r.lognormal(mean, std, size=s))


def cauchy_(x, median=0.0, sigma=1.0, generator=None):
    return _fill_drawn(x, lambda r, s: median + sigma * r.standard_cauchy(size=s))


def geometric_(x, p, generator=None):
    return _fill_drawn(x, lambda r, s: r.geometric(p, size=s))


def bernoulli_(x, p=0.5, generator=None):
    """p: a probability or a tensor of probabilities broadcast to x"""
    probs = p.asnumpy() if isinstance(p, ms.Tensor) else p
    return _fill_drawn(x, lambda r, s: r.random_sample(s) < probs)


# torch's default upper bound (inclusive) of random_() per dtype: 2^mantissa for floats, the maximum for integers
_RANDOM_TOP = {ms.float16: 2 ** 11, ms.bfloat16: 2 ** 8, ms.float32: 2 ** 24, ms.float64: 2 ** 53, ms.bool_: 1,
               ms.uint8: 255, ms.int8: 127, ms.int16: 2 ** 15 - 1, ms.int32: 2 ** 31 - 1, ms.int64: 2 ** 63 - 1}


def random_(x, from_=0, to=None, generator=None):
    """x.random_(to) / x.random_(from, to): integers uniform on [from, to - 1]; x.random_(): on [0, top]
    (torch's bound for x's dtype)."""
    if to is None and from_ != 0:
        from_, to = 0, from_          # one argument is the upper bound, as in torch
    hi = (_RANDOM_TOP[x.dtype] + 1) if to is None else to
    return _fill_drawn(x, lambda r, s: r.randint(from_, hi, size=s, dtype=np.int64))
