"""torch.distributions beyond the common families (test_distributions.py): Cauchy, Gumbel, LogNormal, the half
and count distributions, StudentT, Weibull, Pareto, one-hot and multinomial, transforms and
TransformedDistribution, mixtures, LowRank/Logistic normals, a program's own Distribution/Transform subclasses.
Values against torch on the same inputs; draws by shape, dtype and statistics."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import assert_close, load_converted, load_torch, rnd
from tests.parity.test_distributions import LOC, LOGITS, P, SCALE, U, X, _m, _run, _t


EXTRA_SRC = '''
import torch
import torch.distributions as D
from torch.distributions import (AbsTransform, AffineTransform, Binomial, Cauchy, Chi2, ComposeTransform,
                                 ExpTransform, Geometric, Gumbel, HalfCauchy, HalfNormal, LogNormal, Multinomial,
                                 Normal, OneHotCategorical, Pareto, PowerTransform, SigmoidTransform,
                                 SoftplusTransform, StudentT, TanhTransform, TransformedDistribution, Weibull,
                                 identity_transform, kl_divergence, register_kl)


def located(loc, scale, x, u):
    out = []
    for d in (Cauchy(loc, scale), Gumbel(loc, scale), LogNormal(loc, scale)):
        v = x.exp() if isinstance(d, LogNormal) else x
        out += [d.log_prob(v), d.cdf(v), d.icdf(u), d.entropy(), d.mean, d.variance]
    return out


def halves(scale, x, u):
    out = []
    for d in (HalfNormal(scale), HalfCauchy(scale)):
        out += [d.log_prob(x), d.cdf(x), d.icdf(u), d.entropy(), d.mean, d.variance]
    return out


def shaped(a, b, x):
    w, p = Weibull(a, b), Pareto(a, b)
    return (w.log_prob(x), w.cdf(x), w.entropy(), w.mean, w.variance,
            p.log_prob(a + x), p.cdf(a + x), p.entropy(), p.mean, p.variance)


def counts(p, k, logits):
    g, gl = Geometric(probs=p), Geometric(logits=logits)
    b, bl = Binomial(10, probs=p), Binomial(total_count=torch.full_like(p, 12.0), logits=logits)
    return (g.log_prob(k), g.entropy(), g.mean, g.variance, gl.log_prob(k),
            b.log_prob(k), b.mean, b.variance, bl.log_prob(k))


def students(df, loc, scale, x):
    t, c = StudentT(df, loc, scale), Chi2(df)
    return t.log_prob(x), t.entropy(), t.mean, t.variance, c.log_prob(df), c.entropy(), c.mean


def one_hots(p, onehot, counts_):
    o, m = OneHotCategorical(probs=p), Multinomial(7, probs=p)
    return o.log_prob(onehot), o.entropy(), o.mean, o.variance, m.log_prob(counts_), m.mean, m.variance


def extra_samples(n):
    return (Cauchy(0.0, 1.0).sample((n,)), Gumbel(torch.tensor([0.0, 1.0]), 2.0).rsample((n,)),
            LogNormal(0.0, 0.5).sample((n,)), HalfNormal(torch.tensor([1.0, 3.0])).sample((n,)),
            Geometric(torch.tensor([0.3, 0.8])).sample((n,)), StudentT(torch.tensor([5.0, 9.0])).sample((n,)),
            Weibull(torch.tensor([1.0, 2.0]), 1.5).rsample((n,)), Pareto(1.0, torch.tensor([3.0, 5.0])).sample((n,)),
            OneHotCategorical(torch.tensor([0.2, 0.3, 0.5])).sample((n,)),
            Binomial(10, torch.tensor([0.2, 0.6])).sample((n,)),
            Multinomial(6, torch.tensor([0.2, 0.3, 0.5])).sample((n,)))
'''

TRANSFORM_SRC = '''
import torch
from torch.distributions import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, Normal,
                                 PowerTransform, SigmoidTransform, SoftplusTransform, TanhTransform,
                                 TransformedDistribution, identity_transform, kl_divergence, register_kl)


def transforms(x, p):
    out = []
    for t in (ExpTransform(), AffineTransform(0.5, -2.0), SigmoidTransform(), TanhTransform(),
              PowerTransform(3.0), SoftplusTransform(), ComposeTransform([ExpTransform(), AffineTransform(1.0, 3.0)])):
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y), t.inv.log_abs_det_jacobian(y, x)]
    out += [AbsTransform()(x), identity_transform(x), AffineTransform(loc=p, scale=2.0, event_dim=1)
            .log_abs_det_jacobian(x, x)]
    return out


def transformed(loc, scale, x):
    d = TransformedDistribution(Normal(loc, scale), [ExpTransform(), AffineTransform(1.0, 2.0)])
    s = TransformedDistribution(Normal(loc, scale), SigmoidTransform())
    v = 1.0 + 2.0 * x.exp()
    return d.log_prob(v), d.cdf(v), s.log_prob(torch.sigmoid(x)), s.icdf(torch.sigmoid(x) * 0.9 + 0.05)


class Shifted(Normal):
    pass


@register_kl(Shifted, Normal)
def _kl_shifted(p, q):
    return (p.loc - q.loc).abs()


def registered(loc, scale):
    return kl_divergence(Shifted(loc, scale), Normal(loc * 2, scale)), kl_divergence(Normal(loc, scale),
                                                                                     Normal(loc * 2, scale))
'''


@pytest.fixture(scope="module")
def extra():
    tns = load_torch(EXTRA_SRC)
    mod, code, sites = load_converted(EXTRA_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    return tns, mod


def test_extra_distributions_match_torch(extra):
    import mindspore as ms
    import torch

    pos = (np.abs(rnd(3, 4, seed=30)) + 0.5).astype(np.float32)
    _run(extra, "located", LOC, SCALE, X, U, rtol=1e-4, atol=1e-5)
    _run(extra, "halves", SCALE, np.abs(X), U, rtol=1e-4, atol=1e-5)
    _run(extra, "shaped", pos, pos[::-1].copy() + 0.5, np.abs(X) + 0.1, rtol=1e-4, atol=1e-5)
    k = np.floor(pos * 3).astype(np.float32)
    _run(extra, "counts", P, k, LOGITS, rtol=1e-4, atol=1e-4)
    _run(extra, "students", pos * 3, LOC, SCALE, X, rtol=1e-4, atol=1e-5)
    onehot = np.eye(4, dtype=np.float32)[[1, 3, 0]]
    cnt = np.array([[1, 2, 4, 0], [7, 0, 0, 0], [2, 2, 2, 1]], np.float32)
    _run(extra, "one_hots", P, onehot, cnt, rtol=1e-4, atol=1e-5)
    # draws: shapes, dtypes, means, spreads (Cauchy: median and quartiles, it has no moments)
    tns, mod = extra
    n = 20000
    torch.manual_seed(0)
    ms.set_seed(0)
    want = [w.numpy() for w in tns["extra_samples"](n)]
    got = [g.asnumpy() for g in mod.extra_samples(n)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        if i == 0:
            np.testing.assert_allclose(np.percentile(g, [25, 50, 75]), [-1, 0, 1], atol=0.06)
            continue
        sd = w.std(0)
        np.testing.assert_allclose(g.mean(0), w.mean(0), atol=float(8 * sd.max() / np.sqrt(n)) + 1e-3,
                                   err_msg=f"mean of sample set {i}")
        np.testing.assert_allclose(g.std(0), sd, rtol=0.08, err_msg=f"spread of sample set {i}")
    assert (got[9] == np.floor(got[9])).all() and (got[10].sum(-1) == 6).all()


def test_transforms_match_torch():
    tns = load_torch(TRANSFORM_SRC)
    mod, code, sites = load_converted(TRANSFORM_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    x = (rnd(3, 4, seed=40) * 0.5).astype(np.float32)
    for name, arrays in (("transforms", (x, rnd(4, seed=41))), ("transformed", (LOC, SCALE, x)),
                         ("registered", (LOC, SCALE))):
        want = tns[name](*map(_t, arrays))
        got = getattr(mod, name)(*map(_m, arrays))
        assert_close(got, want, rtol=1e-4, atol=1e-5, what=name)


MIX_SRC = '''
import torch
from torch.distributions import (Categorical, Distribution, InverseGamma, Kumaraswamy, MixtureSameFamily,
                                 MultivariateNormal, NegativeBinomial, Normal, SoftmaxTransform, Transform)


class Shift(Distribution):
    """A program's own distribution: a unit normal moved by loc."""

    def __init__(self, loc):
        self.loc = loc
        super().__init__(batch_shape=loc.shape, validate_args=False)

    def log_prob(self, value):
        return -0.5 * (value - self.loc) ** 2 - 0.9189385332046727

    def rsample(self, sample_shape=()):
        return self.loc + torch.randn(tuple(sample_shape) + tuple(self.loc.shape))

    @property
    def variance(self):
        return torch.ones_like(self.loc)


class Double(Transform):
    def __init__(self):
        super().__init__(cache_size=0)

    def _call(self, x):
        return 2 * x

    def _inverse(self, y):
        return y / 2


def mixtures(w, loc, scale, x, locv, xv):
    m = MixtureSameFamily(Categorical(logits=w), Normal(loc, scale))
    mv = MixtureSameFamily(Categorical(logits=w), MultivariateNormal(locv, scale_tril=torch.eye(2) * 0.5))
    return m.log_prob(x), m.mean, m.variance, mv.log_prob(xv), mv.mean


def counted(n, p, logits, k):
    a, b = NegativeBinomial(n, probs=p), NegativeBinomial(total_count=n, logits=logits)
    return a.log_prob(k), a.mean, a.variance, b.log_prob(k), b.mean


def shaped_more(a, b, x):
    ig, ku = InverseGamma(a, b), Kumaraswamy(a, b)
    return (ig.log_prob(x + 0.1), ig.entropy(), ig.mean, ig.variance, ku.log_prob(x), ku.entropy(), ku.mean,
            ku.variance)


def own(loc, x):
    d = Shift(loc)
    t, s = Double(), SoftmaxTransform()
    return (d.log_prob(x), d.batch_shape == loc.shape, d.stddev, d.sample((3,)).shape == (3,) + tuple(loc.shape),
            t(x), t.inv(x), s(x), s.inv(s(x)).exp().sum(-1))


def mix_samples(n):
    m = MixtureSameFamily(Categorical(torch.tensor([0.3, 0.7])), Normal(torch.tensor([-2.0, 3.0]), 0.5))
    return (m.sample((n,)), NegativeBinomial(5.0, torch.tensor([0.3, 0.6])).sample((n,)),
            Kumaraswamy(2.0, torch.tensor([3.0, 1.5])).rsample((n,)), InverseGamma(torch.tensor([4.0, 6.0]), 2.0)
            .sample((n,)))
'''


def test_mixture_and_counts_match_torch():
    import mindspore as ms
    import torch

    tns = load_torch(MIX_SRC)
    mod, code, sites = load_converted(MIX_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    pos = (np.abs(rnd(3, 4, seed=50)) + 0.5).astype(np.float32)
    both = (tns, mod)
    _run(both, "mixtures", rnd(3, 4, seed=51), LOC, SCALE, rnd(5, 3, seed=52), rnd(3, 4, 2, seed=54),
         rnd(5, 3, 2, seed=53),
         rtol=1e-4, atol=1e-5)
    _run(both, "counted", pos * 3, P, LOGITS, np.floor(pos * 4).astype(np.float32), rtol=1e-4, atol=1e-4)
    _run(both, "shaped_more", pos + 2.0, pos[::-1].copy() + 1.0, U, rtol=1e-4, atol=1e-5)
    _run(both, "own", LOC, X, rtol=1e-5, atol=1e-6)
    n = 20000
    torch.manual_seed(0)
    ms.set_seed(0)
    want = [w.numpy() for w in tns["mix_samples"](n)]
    got = [g.asnumpy() for g in mod.mix_samples(n)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        sd = w.std(0)
        np.testing.assert_allclose(g.mean(0), w.mean(0), atol=float(8 * np.max(sd) / np.sqrt(n)) + 1e-3,
                                   err_msg=f"mean of sample set {i}")
        np.testing.assert_allclose(g.std(0), sd, rtol=0.08, err_msg=f"spread of sample set {i}")


SIMPLEX_SRC = '''
import torch
from torch.distributions import (ExpTransform, ExponentialFamily, FisherSnedecor, IndependentTransform,
                                 LogisticNormal, LowRankMultivariateNormal, OneHotCategoricalStraightThrough,
                                 ReshapeTransform, StickBreakingTransform)


def simplex(x, loc, scale, y):
    t = StickBreakingTransform()
    s = t(x)
    d = LogisticNormal(loc, scale)
    return s, t.inv(s), t.log_abs_det_jacobian(x, s), d.log_prob(y)


def low_rank(loc, w, diag, x):
    d = LowRankMultivariateNormal(loc, w, diag)
    return d.log_prob(x), d.entropy(), d.mean, d.variance, d.covariance_matrix


def fisher(a, b, x):
    d = FisherSnedecor(a, b)
    return d.log_prob(x), d.mean, d.variance


def reshaped(x):
    r, i = ReshapeTransform((4,), (2, 2)), IndependentTransform(ExpTransform(), 1)
    return r(x), r.inv(r(x)), r.log_abs_det_jacobian(x, r(x)), i(x), i.inv(i(x)), i.log_abs_det_jacobian(x, i(x))


def straight_through(logits):
    d = OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample((5,))
    return s.sum(-1), d.log_prob(s).shape == (5, 3)


def st_grad(logits, w):
    return (OneHotCategoricalStraightThrough(logits=logits).rsample() * w).sum()


def fisher_samples(n):
    return FisherSnedecor(torch.tensor([5.0, 10.0]), 20.0).sample((n,)), LogisticNormal(torch.zeros(2), 0.5).sample((n,))
'''


def test_simplex_and_low_rank_match_torch():
    import mindspore as ms
    import torch

    tns = load_torch(SIMPLEX_SRC)
    mod, code, sites = load_converted(SIMPLEX_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    both = (tns, mod)
    y = np.random.default_rng(60).dirichlet(np.ones(5), size=3).astype(np.float32)
    _run(both, "simplex", rnd(3, 4, seed=61), LOC, SCALE, y, rtol=1e-4, atol=1e-5)
    _run(both, "low_rank", rnd(2, 3, seed=62), rnd(2, 3, 2, seed=63) * 0.5, (np.abs(rnd(2, 3, seed=64)) + 0.5),
         rnd(4, 2, 3, seed=65), rtol=1e-4, atol=1e-4)
    pos = (np.abs(rnd(3, 4, seed=66)) + 0.5).astype(np.float32)
    _run(both, "fisher", pos * 6, pos[::-1].copy() * 8, pos, rtol=1e-4, atol=1e-5)
    _run(both, "reshaped", rnd(3, 4, seed=67))
    _run(both, "straight_through", LOGITS[:, :3].copy())
    # the straight-through gradient: d/dlogits of sum(onehot_sample * w) is d/dlogits sum(probs * w)
    logits, w = LOGITS[0, :3].copy(), rnd(3, seed=68)
    tl = _t(logits).requires_grad_()
    tns["st_grad"](tl, _t(w)).backward()
    g = ms.grad(mod.st_grad)(_m(logits), _m(w))
    np.testing.assert_allclose(g.asnumpy(), tl.grad.numpy(), rtol=1e-5, atol=1e-6)
    n = 20000
    torch.manual_seed(0)
    ms.set_seed(0)
    want = [w_.numpy() for w_ in tns["fisher_samples"](n)]
    got = [g_.asnumpy() for g_ in mod.fisher_samples(n)]
    for i, (g_, w_) in enumerate(zip(got, want)):
        assert g_.shape == w_.shape and g_.dtype == w_.dtype, (i, g_.shape, w_.shape)
        np.testing.assert_allclose(np.median(g_, 0), np.median(w_, 0), rtol=0.05, atol=0.01)
        np.testing.assert_allclose(np.percentile(g_, 90, 0), np.percentile(w_, 90, 0), rtol=0.06)


STRUCT_SRC = '''
import torch
from torch.distributions import (CatTransform, CumulativeDistributionTransform, ExpTransform, AffineTransform,
                                 LowerCholeskyTransform, Normal, RelaxedBernoulli, RelaxedOneHotCategorical,
                                 StackTransform)


def relaxed(p, logits, y, yc):
    b, bl = RelaxedBernoulli(torch.tensor(0.5), probs=p), RelaxedBernoulli(torch.tensor(2.0), logits=logits)
    c = RelaxedOneHotCategorical(torch.tensor(0.7), logits=logits)
    return b.log_prob(y), bl.log_prob(y), c.log_prob(yc), b.rsample((4,)).shape == (4,) + tuple(p.shape)


def structured(x, sq):
    low, cdf = LowerCholeskyTransform(), CumulativeDistributionTransform(Normal(0.5, 2.0))
    cat = CatTransform([ExpTransform(), AffineTransform(1.0, 3.0)], dim=1, lengths=[1, 3])
    st = StackTransform([ExpTransform(), AffineTransform(0.0, -2.0), ExpTransform()], dim=0)
    out = [low(sq), low.inv(low(sq)), cdf(x), cdf.inv(cdf(x)), cdf.log_abs_det_jacobian(x, cdf(x))]
    for t in (cat, st):
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y)]
    return out


def pareto_g(loc, scale, c, x, u):
    d = torch.distributions.GeneralizedPareto(loc, scale, c)
    return d.log_prob(loc + x), d.cdf(loc + x), d.icdf(u), d.entropy(), d.mean, d.variance


def circular(loc, k, x, sq):
    d = torch.distributions.VonMises(loc, k)
    t = torch.distributions.PositiveDefiniteTransform()
    return d.log_prob(x), d.mean, d.variance, t(sq), t.inv(t(sq))


def relaxed_samples(n):
    return (RelaxedBernoulli(0.5, probs=torch.tensor([0.2, 0.7])).sample((n,)),
            RelaxedOneHotCategorical(1.0, probs=torch.tensor([0.2, 0.3, 0.5])).sample((n,)),
            torch.distributions.GeneralizedPareto(0.0, 1.0, torch.tensor([0.0, 0.2])).rsample((n,)),
            torch.distributions.VonMises(torch.tensor([0.5, -2.0]), torch.tensor([0.7, 4.0])).sample((n,)))
'''


def test_relaxed_and_structured_match_torch():
    import mindspore as ms
    import torch

    tns = load_torch(STRUCT_SRC)
    mod, code, sites = load_converted(STRUCT_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    both = (tns, mod)
    yc = np.random.default_rng(70).dirichlet(np.ones(4), size=3).astype(np.float32)
    _run(both, "relaxed", P, LOGITS, U, yc, rtol=1e-4, atol=1e-5)
    _run(both, "structured", rnd(3, 4, seed=71), rnd(2, 3, 3, seed=72), rtol=1e-4, atol=1e-5)
    conc = np.array([[0.0, 0.1, 0.3, 0.45]] * 3, np.float32)          # the exponential limit c = 0 included
    _run(both, "pareto_g", LOC, SCALE, conc, np.abs(X), U, rtol=1e-4, atol=1e-5)
    _run(both, "circular", LOC, SCALE * 3, X, rnd(2, 3, 3, seed=73) * 0.5, rtol=1e-4, atol=1e-5)
    n = 20000
    torch.manual_seed(0)
    ms.set_seed(0)
    want = [w.numpy() for w in tns["relaxed_samples"](n)]
    got = [g.asnumpy() for g in mod.relaxed_samples(n)]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape)
        np.testing.assert_allclose(g.mean(0), w.mean(0), atol=float(8 * w.std(0).max() / np.sqrt(n)) + 1e-3,
                                   err_msg=f"mean of sample set {i}")
        np.testing.assert_allclose(g.std(0), w.std(0), rtol=0.08, err_msg=f"spread of sample set {i}")


SHAPES_SRC = '''
import torch
import torch.distributions.transforms as T
from torch.distributions import (AffineTransform, ComposeTransform, IndependentTransform, PowerTransform,
                                 ReshapeTransform, SoftmaxTransform, StickBreakingTransform)


def shapes(loc):
    ts = [T.ExpTransform(), AffineTransform(loc, 2.0), AffineTransform(0.5, -2.0), PowerTransform(torch.ones(3, 1)),
          T.PowerTransform(2.0), SoftmaxTransform(), StickBreakingTransform(), ReshapeTransform((2, 3), (3, 2)),
          IndependentTransform(T.StickBreakingTransform(), 1), T.SigmoidTransform().inv,
          ComposeTransform([T.AffineTransform(1.0, loc), StickBreakingTransform(), T.ExpTransform()]),
          T.ComposeTransform([ReshapeTransform((6,), (2, 3)), T.TanhTransform()]).inv, T.CatTransform(
              [T.ExpTransform()], dim=0, lengths=[2]), T.StackTransform([T.AbsTransform()]), T.identity_transform]
    out = []
    for t in ts:
        for shape in ((5, 2, 3), [4, 6], (3, 4)):
            for f in (t.forward_shape, t.inverse_shape):
                try:
                    out.append(tuple(f(shape)))
                except (ValueError, RuntimeError, TypeError) as e:
                    out.append(type(e).__name__)
    return out


def applied(x):
    t = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
    return t(x), t.inv(t(x)), T.StickBreakingTransform()(x)
'''


def test_transform_shapes_match_torch():
    """forward_shape / inverse_shape of each transform (broadcast with Affine/Power parameters, Reshape's and
    StickBreaking's event shapes, Compose/Independent/inverse chains, the errors torch raises), and the transforms
    named by their module torch.distributions.transforms."""
    tns = load_torch(SHAPES_SRC)
    mod, code, sites = load_converted(SHAPES_SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    loc = rnd(4, seed=42)
    want, got = tns["shapes"](_t(loc)), mod.shapes(_m(loc))
    assert "ValueError" in want and got == want
    x = rnd(2, 3, seed=43)
    assert_close(mod.applied(_m(x)), tns["applied"](_t(x)), rtol=1e-5, atol=1e-6)
