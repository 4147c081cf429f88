"""torch's random-state and dtype-promotion functions (torch.seed, get_rng_state, promote_types, result_type,
can_cast, broadcast_shapes), torch.frexp / binomial, and torch.utils.data's ChainDataset / StackDataset.

Random state: MindSpore's random ops (ops.rand, randn, randint, multinomial, dropout...) draw from streams that
mindspore.set_seed(s) restarts, and mindspore.get_rng_state() does not capture them. So get_rng_state() starts
the streams afresh from a seed drawn from them (the same one in every run of a seeded program) and returns that
seed as the state (a uint8 tensor, like torch's ByteTensor);
set_rng_state(state) restarts them from it: the draws after set_rng_state repeat those after get_rng_state, as in
torch (the numbers are MindSpore's, not torch's)."""
import numpy as np
import mindspore as ms
from mindspore import ops

_SEED_STATE = {"initial": None}


def _restart_streams(seed):
    seed = int(seed)
    ms.set_seed(seed)
    ms.manual_seed(seed)   # mindspore.Generator-based ops (ops.bernoulli) as well
    _SEED_STATE["initial"] = seed
    return seed


def seed():
    """torch.seed: a non-deterministic seed, set for every MindSpore random stream and returned."""
    return _restart_streams(int(np.random.SeedSequence().entropy % (2 ** 31 - 1)))


def initial_seed():
    """torch.initial_seed: the seed last set (torch.manual_seed is mindspore.set_seed), or, when none was, a
    non-deterministic one set now (torch picks one at start-up)."""
    s = ms.get_seed()
    if s is not None:
        return int(s)
    return seed()


def get_rng_state():
    """torch.get_rng_state: restart the random streams from a seed drawn from them (so a seeded program stays
    reproducible run to run) and return that seed as the state."""
    s = _restart_streams(int(ops.randint(0, 2 ** 31 - 1, (1,))[0]))
    return ms.Tensor(np.frombuffer(np.int64(s).tobytes(), np.uint8).copy())


def set_rng_state(new_state):
    """torch.set_rng_state: restart the random streams from a state get_rng_state returned."""
    raw = new_state.asnumpy() if isinstance(new_state, ms.Tensor) else np.asarray(new_state)
    raw = np.ascontiguousarray(raw, np.uint8)
    if raw.size != 8:
        raise ValueError("set_rng_state: the state must come from get_rng_state of the converted code "
                         f"(8 bytes), got {raw.size} bytes (a torch generator state cannot be replayed)")
    _restart_streams(int(np.frombuffer(raw.tobytes(), np.int64)[0]))


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes: the broadcast shape of the given shapes (ints or tuples), as a tuple."""
    return tuple(int(d) for d in np.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))


# torch's type promotion: category (bool < integer < floating < complex), then width within a category
_CATEGORY = {}
for _d in (ms.bool_,):
    _CATEGORY[_d] = 0
for _d in (ms.uint8, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint16, ms.uint32, ms.uint64):
    _CATEGORY[_d] = 1
for _d in (ms.float16, ms.bfloat16, ms.float32, ms.float64):
    _CATEGORY[_d] = 2
for _d in (ms.complex64, ms.complex128):
    _CATEGORY[_d] = 3
_INT_ORDER = (ms.int8, ms.int16, ms.int32, ms.int64)
_FLOAT_ORDER = (ms.float16, ms.float32, ms.float64)
_COMPLEX_OF = {ms.float16: ms.complex64, ms.bfloat16: ms.complex64, ms.float32: ms.complex64,
               ms.float64: ms.complex128}


def _width(d):
    return {ms.bool_: 1, ms.uint8: 1, ms.int8: 1, ms.int16: 2, ms.int32: 4, ms.int64: 8, ms.uint16: 2,
            ms.uint32: 4, ms.uint64: 8, ms.float16: 2, ms.bfloat16: 2, ms.float32: 4, ms.float64: 8,
            ms.complex64: 8, ms.complex128: 16}[d]


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both convert to without leaving their category."""
    if type1 == type2:
        return type1
    c1, c2 = _CATEGORY[type1], _CATEGORY[type2]
    if c1 != c2:
        hi, lo = (type1, type2) if c1 > c2 else (type2, type1)
        if _CATEGORY[hi] == 3 and lo == ms.float64:
            return ms.complex128
        return hi
    if c1 == 1:
        unsigned = {ms.uint8, ms.uint16, ms.uint32, ms.uint64}
        if (type1 in unsigned) != (type2 in unsigned):
            u, s = (type1, type2) if type1 in unsigned else (type2, type1)
            if u != ms.uint8:
                raise TypeError(f"promote_types: {type1} and {type2} have no common type in torch")
            return ms.int16 if s == ms.int8 else s
        return max(type1, type2, key=_width)
    if c1 == 2:
        if {type1, type2} == {ms.float16, ms.bfloat16}:
            return ms.float32
        return max(type1, type2, key=_width)
    return max(type1, type2, key=_width)


def _combine(higher, lower):
    # torch's combine_categories(higher-priority result, lower-priority result)
    if higher is None:
        return lower
    if lower is None or _CATEGORY[higher] == 3:
        return higher
    if _CATEGORY[lower] == 3:
        return _COMPLEX_OF.get(higher, lower) if _CATEGORY[higher] == 2 else lower
    if _CATEGORY[higher] == 2:
        return higher
    if higher == ms.bool_ or _CATEGORY[lower] == 2:
        return promote_types(higher, lower)
    return higher


def result_type(tensor1, tensor2):
    """torch.result_type: the dtype torch's arithmetic gives these operands (tensors with dimensions first,
    then 0-dim tensors, then Python numbers, each lower group counting only when its category is higher)."""
    groups = [None, None, None]
    for x in (tensor1, tensor2):
        if isinstance(x, ms.Tensor):
            g, d = (0 if x.ndim > 0 else 1), x.dtype
        elif isinstance(x, bool):
            g, d = 2, ms.bool_
        elif isinstance(x, int):
            g, d = 2, ms.int64
        elif isinstance(x, float):
            g, d = 2, ms.float32
        elif isinstance(x, complex):
            g, d = 2, ms.complex64
        else:
            raise TypeError(f"result_type: unsupported operand {type(x).__name__}")
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    return _combine(_combine(groups[0], groups[1]), groups[2])


def can_cast(from_, to):
    """torch.can_cast: casting is allowed unless it lowers the category (complex -> real, floating -> integer,
    anything but bool -> bool)."""
    return _CATEGORY[from_] <= _CATEGORY[to]


def frexp(input):
    """torch.frexp: (mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1 and an
    int32 exponent; 0, inf and nan give exponent 0 and themselves as mantissa. Computed in float64, which holds
    float32/float16 subnormals exactly."""
    x = input.astype(ms.float64)
    finite = ops.logical_and(ops.isfinite(x), x != 0)
    safe = ops.where(finite, ops.abs(x), ops.ones_like(x))
    e = ops.floor(ops.log2(safe)) + 1
    m = safe / ops.exp2(e)
    # log2 rounds near powers of two: bring |m| into [0.5, 1)
    e = ops.where(m >= 1, e + 1, ops.where(m < 0.5, e - 1, e))
    m = safe / ops.exp2(e)
    mantissa = ops.where(finite, ops.sign(x) * m, x).astype(input.dtype)
    return mantissa, ops.where(finite, e, ops.zeros_like(e)).astype(ms.int32)


def binomial(count, prob):
    """torch.binomial: per element, the number of successes in `count` draws with probability `prob`; drawn as
    count.max() uniform numbers per element, those below prob counted among the first `count`."""
    n = int(count.max()) if count.size else 0
    shape = broadcast_shapes(count.shape, prob.shape)
    if n <= 0:
        return ops.zeros(shape, prob.dtype)
    u = ops.rand((n,) + tuple(shape), dtype=ms.float32)
    first = ops.arange(n).reshape((n,) + (1,) * len(shape)) < count.astype(ms.int64)
    hits = ops.logical_and(u < prob.astype(ms.float32), first)
    return hits.astype(ms.int32).sum(0).astype(prob.dtype)


def _keep_mask(x, p, channels):
    shape = x.shape[:2] + (1,) * (x.ndim - 2) if channels else x.shape
    return ops.rand(shape, dtype=ms.float32) >= p


# torch.alpha_dropout / feature_alpha_dropout(input, p, train=True): nn_extra.py's F.alpha_dropout with training


def feature_dropout(input, p):
    """torch.feature_dropout(input, p, train=True): whole channels zeroed, the others scaled by 1/(1-p)."""
    if p == 1:
        return input * 0
    return input * _keep_mask(input, p, True).astype(input.dtype) / (1 - p)


def native_dropout(input, p):
    """torch.native_dropout(input, p, train=True): (dropout output, boolean keep mask)."""
    keep = _keep_mask(input, p, False)
    out = input * keep.astype(input.dtype) / (1 - p) if p < 1 else input * 0
    return out, keep


def segment_reduce(data, reduce, lengths=None, offsets=None, axis=0, initial=None):
    """torch.segment_reduce with 1-D lengths (or offsets) along axis 0: sum, mean, max, min or prod of each run of
    rows; an empty segment gives 0, nan, -inf, inf or 1, or `initial` (which also joins every reduction)."""
    if axis != 0:
        raise ValueError("segment_reduce: 1-D lengths reduce along axis 0 (torch requires the same)")
    if lengths is None:
        lengths = offsets[1:] - offsets[:-1]
    n = lengths.shape[0]
    ids = ops.repeat_interleave(ops.arange(n, dtype=ms.int32), lengths.astype(ms.int32), 0)
    count = lengths.astype(data.dtype).reshape((n,) + (1,) * (data.ndim - 1))
    if reduce == "sum":
        out = ops.unsorted_segment_sum(data, ids, n)
        return out if initial is None else out + initial
    if reduce == "mean":
        if initial is not None:
            out = (ops.unsorted_segment_sum(data, ids, n) + initial) / (count + 1)
            return out
        return ops.unsorted_segment_sum(data, ids, n) / count
    if reduce == "prod":
        out = ops.unsorted_segment_prod(data, ids, n)
        return out if initial is None else out * initial
    if reduce in ("max", "min"):
        big = float("inf") if reduce == "min" else float("-inf")
        out = (ops.unsorted_segment_max if reduce == "max" else ops.unsorted_segment_min)(data, ids, n)
        out = ops.where(count > 0, out, ops.full_like(out, big))
        if initial is not None:
            out = (ops.maximum if reduce == "max" else ops.minimum)(out, ops.full_like(out, initial))
        return out
    raise ValueError(f"segment_reduce: unknown reduction {reduce!r}")


class ChainDataset:
    """torch.utils.data.ChainDataset: the samples of several iterable datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class StackDataset:
    """torch.utils.data.StackDataset: sample i is the tuple (or dict, for keyword datasets) of every dataset's
    sample i; the datasets must have the same length."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else dict(kwargs)

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length



# torch.set_printoptions' profiles (torch/_tensor_str.py)
_PRINT_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
                   "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
                   "full": dict(precision=4, threshold=2 ** 63 - 1, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions for MindSpore tensors, which print through NumPy: the same options (a profile's
    presets first, as torch) on np.set_printoptions, every element with `precision` decimals; sci_mode=False suppresses scientific notation, True or None
    leave NumPy's choice. Options not given stay as they are, as in torch; a profile torch does not know (YOLOv5's
    `profile='long'`) sets nothing, as in torch."""
    opts = dict(_PRINT_PROFILES.get(profile, {})) if profile is not None else {}
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            opts[name] = value
    if sci_mode is not None:
        opts["suppress"] = not sci_mode
    if "precision" in opts:
        opts["floatmode"] = "fixed"     # torch shows `precision` decimals for every element
    np.set_printoptions(**opts)
