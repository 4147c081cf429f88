"""Weight initialisation that leaves the program's NumPy random stream alone.

MindSpore's initializers take their seeds from NumPy's global stream (one np.random.randint per
initialised tensor, mindspore.common.initializer._numpy_seed); torch's take them from torch's own
generator. A program that builds its networks and then draws noise with np.random (GAN programs:
`z = np.random.normal(0, 1, (n, latent_dim))`) would draw other noise than under torch. Here the
initializers draw from a stream of their own, seeded from the global stream's state without
advancing it, and from mindspore.set_seed's seed (what torch.manual_seed becomes): the same seeds still
give the same weights, another torch seed other weights, and the program's own np.random draws are the
ones it makes under torch."""
import numpy as np
import mindspore as ms
from mindspore.common import initializer as init

# kept on the initializer module: every copy of this helper in a process (one per converted tree) shares it;
# "numpy_seeded" once np.random.seed / set_state was called (the NumPy stream's numbers are defined)
_INIT_STREAM = vars(init).setdefault("_msmigrate_init_stream", {"state": None, "rng": None})


def init_stream():
    """The RandomState initializers draw from, derived again whenever the global stream moved."""
    _, keys, pos, has_gauss, cached = np.random.get_state()
    seed = ms.get_seed()
    state = (keys[:4].tobytes(), int(pos), int(has_gauss), float(cached), seed)
    if state != _INIT_STREAM["state"]:
        _INIT_STREAM["state"] = state
        _INIT_STREAM["rng"] = np.random.RandomState(
            (np.concatenate([keys[:8], [pos, 0x5EED, -1 if seed is None else seed]]).astype(np.uint64)
             & 0xFFFFFFFF).astype(np.uint32))
    return _INIT_STREAM["rng"]


def _initializer_seed():
    return init_stream().randint(low=1, high=(1 << 63), dtype=np.int64)


init._numpy_seed = _initializer_seed


def _reseeding(set_global):
    """np.random.seed / set_state that also restart the initializers' stream (same seed, same weights)."""
    def reseed(*args, **kwargs):
        _INIT_STREAM["state"] = None
        _INIT_STREAM["numpy_seeded"] = True
        return set_global(*args, **kwargs)
    reseed.__name__, reseed.__doc__, reseed.__wrapped__ = set_global.__name__, set_global.__doc__, set_global
    return reseed


if not hasattr(np.random.seed, "__wrapped__"):
    np.random.seed = _reseeding(np.random.seed)
    np.random.set_state = _reseeding(np.random.set_state)


class from_init_stream:
    """`with from_init_stream(): super().__init__(...)` for a MindSpore layer whose constructor draws its weights
    from NumPy's global stream itself (nn.RNN / LSTM / GRU and their cells call np.random.uniform / randn): they
    draw from the initializers' stream instead, and the global stream stays where it was, as torch's layers leave
    a program's np.random draws alone (`np.random.seed(0)`, an RNN built, then `np.random.randint(1, 4)`: the
    same numbers as torch's program draws)."""

    def __enter__(self):
        self.saved, self.rng = np.random.get_state(), init_stream()
        _set_global_state(self.rng.get_state())
        return self

    def __exit__(self, *exc):
        self.rng.set_state(np.random.get_state())     # the initializers' stream moved on by what was drawn
        _set_global_state(self.saved)                 # init_stream() gives the same (moved) stream again
        return False


def _set_global_state(state):
    getattr(np.random.set_state, "__wrapped__", np.random.set_state)(state)


def manual_seed(seed):
    """torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy alone): a NumPy
    stream the program seeded is put back where it was; an unseeded one keeps the seed (reproducible runs)."""
    import random   # here: the data helpers' section, which imports it too, stays out of programs without them
    state, seeded, py_state = np.random.get_state(), _INIT_STREAM.get("numpy_seeded"), random.getstate()
    ms.set_seed(seed)   # its np.random.seed is _reseeding's: the initializers' stream restarts
    random.setstate(py_state)   # set_seed reseeds Python's random (its dataset seed); torch's never touches it
    if seeded:
        np.random.set_state(state)
