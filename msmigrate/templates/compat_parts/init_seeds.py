# Building a model leaves np.random alone, as in torch. MindSpore's initializers draw each tensor's
# seed from NumPy's global stream, so a converted program's own np.random draws after building its
# models (noise, labels) would differ from the original's; here they draw from a stream of their
# own, seeded by mindspore.set_seed (what torch.manual_seed becomes): the same seed, the same weights.
from mindspore.common import initializer as _ms_initializer

_INIT_STREAM = {"rng": np.random.RandomState(ms.get_seed())}   # a seed set before this import counts


def _seeding_init_stream(set_seed):
    def seeded(seed):
        set_seed(seed)
        _INIT_STREAM["rng"] = np.random.RandomState(seed)
    return seeded


_ms_initializer._numpy_seed = lambda: _INIT_STREAM["rng"].randint(1, 1 << 63, dtype=np.int64)
ms.set_seed = _seeding_init_stream(ms.set_seed)
