"""torch's random functions given `generator=g` (torch.randn(2, 3, generator=g), torch.randperm(n, generator=g)):
drawn from that generator's own stream, as torch draws them. MindSpore's generator= ops (mint.randn, mint.randperm,
mint.randint, mint.normal) have no CPU kernels on 2.10, and its plain ops draw from the global seed: two generators
seeded alike gave two different permutations (a sampler's shuffle shared by every process, an epoch's order
seeded by its number). The draw is NumPy's, seeded from the generator's seed and offset and advancing it (the data
section's _dl_rng): the same seed gives the same draws, not torch's numbers."""
import mindspore as ms
import numpy as np


_GENERATOR_IN_GRAPH = (
    "the draw at {} takes generator= inside a compiled graph (GRAPH mode or ms.jit), where it would be drawn once, "
    "while compiling. Draw it outside construct, or run this network in PYNATIVE mode "
    "(ms.set_context(mode=ms.PYNATIVE_MODE))")


def _draw_parameter(x):
    return x.asnumpy() if isinstance(x, ms.Tensor) else np.asarray(x)


def generator_draw(generator, kind, size, dtype, params, where):
    """torch's rand/randn (kind random/standard_normal, over `size`), randint (integers in [params)), randperm
    (permutation of `size` values), normal (params mean, std; `size`, or their broadcast shape), bernoulli and
    multinomial (below)."""
    if _compiling(_draw_probe):
        _refuse_compiled(_GENERATOR_IN_GRAPH, where)
    rng = _dl_rng(generator)
    if kind == "permutation":
        return ms.Tensor(rng.permutation(int(size)), dtype or ms.int64)
    shape = tuple(int(n) for n in size) if isinstance(size, (tuple, list)) else size
    if kind == "integers":
        low, high = (int(v) for v in params)
        return ms.Tensor(rng.integers(low, high, size=shape), dtype or ms.int64)
    if kind == "bernoulli":     # params: input, p (None: input holds the probabilities)
        x, p = params
        probs = _draw_parameter(x if p is None else p)
        drawn = rng.random(np.broadcast_shapes(probs.shape, tuple(x.shape))) < probs
        return ms.Tensor(drawn.astype(np.float32), x.dtype)
    if kind == "multinomial":   # params: input (probabilities, 1-d or 2-d), replacement; size: num_samples
        x, replacement = params
        probs = _draw_parameter(x).astype(np.float64)
        rows = [rng.choice(len(row), int(size), bool(replacement), row / row.sum())
                for row in probs.reshape(-1, probs.shape[-1])]
        return ms.Tensor(np.stack(rows).reshape(*probs.shape[:-1], int(size)), ms.int64)
    if kind == "normal":
        mean, std = (_draw_parameter(v) for v in params)
        shape = np.broadcast_shapes(mean.shape, std.shape) if shape is None else shape
        values = mean + std * rng.standard_normal(shape)
    else:
        values = getattr(rng, kind)(shape)
    return ms.Tensor(np.asarray(values, np.float32), dtype or ms.float32)
