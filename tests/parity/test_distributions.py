"""torch.distributions Normal / Uniform / Bernoulli / Categorical and kl_divergence: log_prob, cdf, icdf,
entropy, moments and KL values (and log_prob gradients) against torch on the same inputs; sample/rsample by
shape, dtype and statistics (MindSpore's random stream differs from torch's); invalid arguments raise
ValueError in both. One converted snippet for the file."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import assert_close, check_function, load_converted, load_torch, rnd

SRC = '''
import torch
import torch.distributions as D
from torch.distributions import Bernoulli, Categorical, Normal, Uniform, kl_divergence


def normal_values(loc, scale, x):
    d = Normal(loc, scale)
    return (d.log_prob(x), d.cdf(x), d.icdf(torch.sigmoid(x)), d.entropy(), d.mean, d.stddev, d.variance,
            d.mode)


def normal_numbers(x):
    d = D.Normal(loc=0.5, scale=2.0)
    return d.log_prob(x), d.entropy(), d.cdf(x)


def normal_log_prob(loc, scale, x):
    return Normal(loc, scale, validate_args=False).log_prob(x)


def uniform_values(low, high, u):
    d = Uniform(low, high)
    x = low + u * (high - low)
    return d.log_prob(x), d.cdf(x), d.icdf(u), d.entropy(), d.mean, d.variance, d.stddev


def bernoulli_values(p, v):
    d = Bernoulli(probs=p)
    return d.log_prob(v), d.entropy(), d.mean, d.variance, d.logits


def bernoulli_logits(logits, v):
    d = Bernoulli(logits=logits)
    return d.log_prob(v), d.entropy(), d.probs


def categorical_values(p, v):
    d = Categorical(probs=p)
    return d.log_prob(v), d.entropy(), d.probs, d.logits, d.mode


def categorical_logits(logits, v):
    d = Categorical(logits=logits)
    return d.log_prob(v), d.entropy(), d.probs, d.logits


def kls(loc, scale, p, logits):
    return (kl_divergence(Normal(loc, scale), Normal(loc * 0.5, scale + 1.0)),
            kl_divergence(Uniform(loc - 2.0, loc + 2.0), Uniform(loc - 3.0, loc + 2.5)),
            kl_divergence(Uniform(loc - 2.0, loc + 2.0), Uniform(loc - 1.0, loc + 2.5)),
            kl_divergence(Bernoulli(probs=p), Bernoulli(logits=logits)),
            kl_divergence(Categorical(logits=logits), Categorical(probs=p)))


def samples(loc, scale, p, logits, n):
    return (Normal(loc, scale).sample((n,)), Normal(loc, scale).rsample((n,)),
            Uniform(loc - 1.0, loc + 3.0).sample((n,)), Bernoulli(p).sample((n,)),
            Categorical(logits=logits).sample((n,)), Categorical(probs=p).sample())


def rsample_sum(loc, scale):
    return Normal(loc, scale).rsample((1000,)).sum()


def invalid(which):
    if which == 0:
        return Normal(0.0, -1.0)
    if which == 1:
        return Uniform(1.0, 0.0)
    if which == 2:
        return Bernoulli(probs=torch.tensor([0.5, 1.5]))
    if which == 3:
        return Bernoulli(torch.tensor([0.5])).log_prob(torch.tensor([0.5]))
    return Categorical(probs=torch.tensor([0.5, 0.5])).log_prob(torch.tensor(2))
'''

LOC, SCALE = rnd(3, 4, seed=1), (np.abs(rnd(3, 4, seed=2)) + 0.3).astype(np.float32)
X = rnd(3, 4, seed=3)
U = np.random.default_rng(4).uniform(0.05, 0.95, (3, 4)).astype(np.float32)
P = np.random.default_rng(5).uniform(0.05, 0.95, (3, 4)).astype(np.float32)
LOGITS = rnd(3, 4, seed=6)
V01 = (np.random.default_rng(7).uniform(size=(3, 4)) < 0.5).astype(np.float32)
IDX = np.array([0, 3, 1], dtype=np.int64)


@pytest.fixture(scope="module")
def both():
    tns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    return tns, mod


def _t(a):
    import torch
    return torch.from_numpy(np.array(a))


def _m(a):
    import mindspore as ms
    return ms.Tensor(np.array(a))


def _run(both, name, *arrays, rtol=1e-5, atol=1e-5):
    tns, mod = both
    want = tns[name](*map(_t, arrays))
    got = getattr(mod, name)(*map(_m, arrays))
    assert_close(got, want, rtol=rtol, atol=atol, what=name)


def test_values_match_torch(both):
    _run(both, "normal_values", LOC, SCALE, X)
    _run(both, "normal_numbers", X)
    _run(both, "uniform_values", LOC, LOC + SCALE, U)
    _run(both, "bernoulli_values", P, V01)
    _run(both, "bernoulli_logits", LOGITS, V01)
    _run(both, "categorical_values", P, IDX)
    _run(both, "categorical_values", P, IDX.reshape(3, 1))      # a value broadcast against the batch
    _run(both, "categorical_logits", LOGITS, IDX)
    _run(both, "kls", LOC, SCALE, P, LOGITS)
    # the inf cases: q's support does not cover p's, an impossible Bernoulli outcome
    zero_one = np.array([0.0, 1.0, 0.3], np.float32)
    _run(both, "bernoulli_values", zero_one, np.array([0.0, 1.0, 1.0], np.float32))


def test_log_prob_gradients():
    """d log_prob / d (loc, scale, x) as torch (the reparameterised parameters train the same way)."""
    check_function(SRC, [LOC, SCALE, X], entry="normal_log_prob", grad=True, graph=False)


def test_samples_statistics(both):
    import mindspore as ms
    import torch

    tns, mod = both
    n = 20000
    loc, scale = np.array([0.0, 2.0], np.float32), np.array([1.0, 0.5], np.float32)
    p = np.array([0.2, 0.7], np.float32)
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
    torch.manual_seed(0)
    ms.set_seed(0)
    want = tns["samples"](_t(loc), _t(scale), _t(p), _t(logits), n)
    got = mod.samples(_m(loc), _m(scale), _m(p), _m(logits), n)
    for i, (g, w) in enumerate(zip(got, want)):
        assert tuple(g.shape) == tuple(w.shape), (i, g.shape, w.shape)
        assert str(g.dtype).lower() == str(w.dtype).replace("torch.", ""), (i, g.dtype, w.dtype)
    g, w = [x.asnumpy() for x in got], [x.numpy() for x in want]
    se = 6 / np.sqrt(n)
    for i in (0, 1, 2, 3):   # Normal sample/rsample, Uniform, Bernoulli: mean and spread per batch entry
        np.testing.assert_allclose(g[i].mean(0), w[i].mean(0), atol=se * (w[i].std(0).max() + 1e-3) * 1.5)
        np.testing.assert_allclose(g[i].std(0), w[i].std(0), rtol=0.05)
    assert g[2].min() >= loc.min() - 1.0 and g[2].max() < loc.max() + 3.0
    assert set(np.unique(g[3])) <= {0.0, 1.0}
    freq_g = np.stack([(g[4] == k).mean(0) for k in range(3)], -1)
    freq_w = np.stack([(w[4] == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq_g, freq_w, atol=0.02)
    np.testing.assert_allclose(freq_g, np.exp(logits), atol=0.02)


def test_rsample_gradient(both):
    """rsample is loc + scale * eps: d/dloc of 1000 draws summed is 1000, d/dscale is sum(eps) ~ N(0, 1000)."""
    import mindspore as ms

    tns, mod = both
    loc, scale = _t(np.array([0.5], np.float32)).requires_grad_(), _t(np.array([2.0], np.float32)).requires_grad_()
    tns["rsample_sum"](loc, scale).backward()
    g_loc, g_scale = ms.grad(mod.rsample_sum, grad_position=(0, 1))(_m(np.array([0.5], np.float32)),
                                                                     _m(np.array([2.0], np.float32)))
    np.testing.assert_allclose(g_loc.asnumpy(), loc.grad.numpy())
    assert abs(float(g_scale.asnumpy()[0])) < 6 * np.sqrt(1000) and float(g_scale.asnumpy()[0]) != 0.0


@pytest.mark.parametrize("which", range(5))
def test_invalid_arguments_raise(both, which):
    tns, mod = both
    with pytest.raises(ValueError):
        tns["invalid"](which)
    with pytest.raises(ValueError):
        mod.invalid(which)


MORE_SRC = '''
import torch
from torch.distributions import (Beta, Dirichlet, Exponential, Gamma, Independent, Laplace, MultivariateNormal,
                                 Normal, Poisson)


def exponential(rate, x):
    d = Exponential(rate)
    return d.log_prob(x), d.cdf(x), d.icdf(torch.sigmoid(x - 1.0)), d.entropy(), d.mean, d.variance, d.stddev


def laplace(loc, scale, x):
    d = Laplace(loc, scale)
    return (d.log_prob(x), d.cdf(x), d.icdf(torch.sigmoid(x)), d.entropy(), d.mean, d.variance, d.stddev)


def gamma(c, rate, x):
    d = Gamma(c, rate)
    return d.log_prob(x), d.entropy(), d.mean, d.variance, d.mode


def beta(a, b, x):
    d = Beta(a, b)
    return d.log_prob(x), d.entropy(), d.mean, d.variance


def dirichlet(c, x):
    d = Dirichlet(c)
    return d.log_prob(x), d.entropy(), d.mean, d.variance


def poisson(rate, k):
    d = Poisson(rate)
    return d.log_prob(k), d.mean, d.variance


def mvn(loc, cov, tril, prec, x):
    d = MultivariateNormal(loc, covariance_matrix=cov)
    t = MultivariateNormal(loc, scale_tril=tril)
    p = MultivariateNormal(loc, precision_matrix=prec)
    return (d.log_prob(x), d.entropy(), d.mean, d.variance, d.covariance_matrix, t.log_prob(x), p.log_prob(x),
            p.entropy())


def independent(loc, scale, x):
    d = Independent(Normal(loc, scale), 1)
    return d.log_prob(x), d.entropy(), d.mean


def more_samples(n):
    return (Exponential(torch.tensor([0.5, 2.0])).sample((n,)), Laplace(torch.tensor([0.0, 1.0]), 2.0).rsample((n,)),
            Gamma(torch.tensor([0.5, 3.0]), 2.0).sample((n,)), Beta(torch.tensor([2.0]), 5.0).sample((n,)),
            Dirichlet(torch.tensor([1.0, 2.0, 3.0])).sample((n,)), Poisson(torch.tensor([0.5, 4.0])).sample((n,)),
            MultivariateNormal(torch.zeros(2), torch.tensor([[2.0, 0.5], [0.5, 1.0]])).sample((n,)),
            Independent(Normal(torch.zeros(3), 1.0), 1).sample((n,)))


def gamma_rsample(c):
    return Gamma(c, 1.0).rsample()
'''


@pytest.fixture(scope="module")
def more():
    tns = load_torch(MORE_SRC)
    mod, code, sites = load_converted(MORE_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    return tns, mod


def test_more_distributions_match_torch(more):
    pos = (np.abs(rnd(3, 4, seed=20)) + 0.5).astype(np.float32)
    unit = np.random.default_rng(21).uniform(0.05, 0.95, (3, 4)).astype(np.float32)
    _run(more, "exponential", pos, X * X)
    _run(more, "laplace", LOC, SCALE, X)
    _run(more, "gamma", pos, pos[::-1].copy(), pos * 0.7, rtol=1e-4)
    _run(more, "beta", pos, pos[::-1].copy(), unit, rtol=1e-4)
    simplex = (pos / pos.sum(-1, keepdims=True)).astype(np.float32)
    _run(more, "dirichlet", pos, simplex, rtol=1e-4)
    _run(more, "poisson", pos * 3, np.floor(pos * 4).astype(np.float32), rtol=1e-4)
    a = rnd(2, 3, 3, seed=23).astype(np.float64) * 0.5
    cov = a @ a.swapaxes(-1, -2) + np.eye(3)
    tril, prec = np.linalg.cholesky(cov), np.linalg.inv(cov)
    _run(more, "mvn", rnd(2, 3, seed=22), *(m.astype(np.float32) for m in (cov, tril, prec)), rnd(4, 1, 3, seed=24),
         rtol=1e-4, atol=1e-4)
    _run(more, "independent", LOC, SCALE, X)


def test_more_samples_statistics(more):
    """Shapes, dtypes, means and spreads of draws against torch's (the streams differ); Gamma's rsample,
    which MindSpore cannot differentiate, raises instead of losing the gradient."""
    import mindspore as ms
    import torch

    tns, mod = more
    n = 20000
    torch.manual_seed(0)
    ms.set_seed(0)
    want = [w.numpy() for w in tns["more_samples"](n)]
    got = [g.asnumpy() for g in mod.more_samples(n)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        sd = w.std(0)
        np.testing.assert_allclose(g.mean(0), w.mean(0), atol=float(8 * sd.max() / np.sqrt(n)) + 1e-3,
                                   err_msg=f"mean of sample set {i}")
        np.testing.assert_allclose(g.std(0), sd, rtol=0.06, err_msg=f"spread of sample set {i}")
    assert (got[4].sum(-1) - 1 < 1e-5).all() and (got[3] > 0).all() and (got[3] < 1).all()
    assert (got[5] == np.floor(got[5])).all()
    np.testing.assert_allclose(np.cov(got[6].T), [[2.0, 0.5], [0.5, 1.0]], atol=0.08)
    with pytest.raises(Exception, match="rsample"):
        mod.gamma_rsample(ms.Tensor(np.array([2.0], np.float32)))

