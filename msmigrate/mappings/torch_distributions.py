"""torch.distributions -> the classes in templates/compat_parts/distributions.py (torch's formulas on
MindSpore ops). Proven by tests/parity/test_distributions.py: log_prob/cdf/icdf/entropy/moments and their
gradients against torch, sample/rsample by shape, dtype and statistics (the random streams differ)."""
from __future__ import annotations

from ..records import DIFFERENCE, METHOD_OWNERS, mapping

T = "tests/parity/test_distributions.py"
T2 = "tests/parity/test_distributions_more.py"
_SAMPLE_NOTE = ("sample()/rsample() draw with MindSpore's generator (ms.set_seed), so the numbers differ from "
                "torch's while the distribution is the same; argument and support checks (validate_args) read "
                "tensor values and run in PyNative mode")

for _name, _args in (("Normal", ("loc", "scale", "validate_args")), ("Uniform", ("low", "high", "validate_args")),
                     ("Bernoulli", ("probs", "logits", "validate_args")),
                     ("Categorical", ("probs", "logits", "validate_args"))):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops; " + _SAMPLE_NOTE,
            test=f"{T}::test_values_match_torch")
mapping("torch.distributions.kl_divergence", "_ms_compat.kl_divergence", args=("p", "q"), target_args=("p", "q"),
        note="torch's closed forms for two distributions of one family (Normal, Uniform, Bernoulli, Categorical, "
             "Beta, Gamma, Exponential, Dirichlet, Laplace, Poisson, Geometric, Cauchy, Gumbel, OneHotCategorical, "
             "HalfNormal, LogNormal, Independent, MultivariateNormal; a subclass takes its family's) and the "
             "pairs given to register_kl; a pair across families raises NotImplementedError (torch has a few, "
             "such as Normal-Laplace). Compiles in a GRAPH-mode construct while no pair is registered (the "
             "registered ones are found by walking the classes: PyNative)",
        test="tests/parity/test_distributions_paths.py::test_kl_closed_forms_match_torch")

_NO_RSAMPLE = ("; rsample() raises MigrationError: MindSpore's gamma sampler has no gradient (sample() works)")
for _name, _args, _extra in (
        ("Exponential", ("rate", "validate_args"), ""), ("Laplace", ("loc", "scale", "validate_args"), ""),
        ("Poisson", ("rate", "validate_args"), ""),
        ("Gamma", ("concentration", "rate", "validate_args"), _NO_RSAMPLE),
        ("Beta", ("concentration1", "concentration0", "validate_args"), _NO_RSAMPLE),
        ("Dirichlet", ("concentration", "validate_args"), _NO_RSAMPLE),
        ("MultivariateNormal", ("loc", "covariance_matrix", "precision_matrix", "scale_tril", "validate_args"),
         "; the Cholesky factor is inverted (ops.inverse) where torch solves a triangular system"),
        ("Independent", ("base_distribution", "reinterpreted_batch_ndims", "validate_args"), "")):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops; " + _SAMPLE_NOTE + _extra,
            test=f"{T}::test_more_distributions_match_torch")

for _name, _args, _extra in (
        ("Cauchy", ("loc", "scale", "validate_args"), ""), ("HalfNormal", ("scale", "validate_args"), ""),
        ("HalfCauchy", ("scale", "validate_args"), ""), ("LogNormal", ("loc", "scale", "validate_args"), ""),
        ("Gumbel", ("loc", "scale", "validate_args"), ""), ("Geometric", ("probs", "logits", "validate_args"), ""),
        ("Chi2", ("df", "validate_args"), _NO_RSAMPLE), ("StudentT", ("df", "loc", "scale", "validate_args"),
                                                         _NO_RSAMPLE),
        ("Weibull", ("scale", "concentration", "validate_args"), ""),
        ("Pareto", ("scale", "alpha", "validate_args"), ""),
        ("OneHotCategorical", ("probs", "logits", "validate_args"), ""),
        ("Binomial", ("total_count", "probs", "logits", "validate_args"), ""),
        ("Multinomial", ("total_count", "probs", "logits", "validate_args"),
         "; an integer total_count only (torch's own limit)"),
        ("TransformedDistribution", ("base_distribution", "transforms", "validate_args"),
         "; elementwise transforms (log_prob sums their log-Jacobians over the base's event dims)")):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops; " + _SAMPLE_NOTE + _extra,
            test=f"{T2}::test_extra_distributions_match_torch")

_TRANSFORM_NOTE = ("y = t(x), t.inv(y), log|dy/dx| and forward_shape/inverse_shape with torch's formulas "
                   "(no caching)")


def _transform(name, args, test, note=_TRANSFORM_NOTE):
    """A transform's record, under torch.distributions.NAME and torch.distributions.transforms.NAME (its module)."""
    for path in ("torch.distributions.", "torch.distributions.transforms."):
        mapping(path + name, f"_ms_compat.{name}", args=args, target_args=args, drop=("cache_size",), note=note,
                test=test)


for _name, _args in (("ExpTransform", ("cache_size",)), ("AffineTransform", ("loc", "scale", "event_dim", "cache_size")),
                     ("SigmoidTransform", ("cache_size",)), ("TanhTransform", ("cache_size",)),
                     ("AbsTransform", ("cache_size",)), ("PowerTransform", ("exponent", "cache_size")),
                     ("SoftplusTransform", ("cache_size",)), ("ComposeTransform", ("parts", "cache_size"))):
    _transform(_name, _args, f"{T2}::test_transforms_match_torch")
for _path in ("torch.distributions.", "torch.distributions.transforms."):
    mapping(_path + "identity_transform", "_ms_compat.identity_transform", takes_torch_args=True,
            note="ComposeTransform([]), as torch", test=f"{T2}::test_transforms_match_torch")
mapping("torch.distributions.register_kl", "_ms_compat.register_kl", args=("type_p", "type_q"),
        target_args=("type_p", "type_q"), note="kl_divergence consults the registered functions first, by the "
        "classes' method resolution order", test=f"{T2}::test_transforms_match_torch")

for _name, _args, _extra in (
        ("NegativeBinomial", ("total_count", "probs", "logits", "validate_args"), ""),
        ("InverseGamma", ("concentration", "rate", "validate_args"), _NO_RSAMPLE),
        ("Kumaraswamy", ("concentration1", "concentration0", "validate_args"), ""),
        ("MixtureSameFamily", ("mixture_distribution", "component_distribution", "validate_args"), ""),
        ("Distribution", ("batch_shape", "event_shape", "validate_args"),
         "; the base class for a program's own distributions (batch_shape/event_shape, sample from rsample, "
         "stddev from variance); torch's arg_constraints are not checked")):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops; " + _SAMPLE_NOTE + _extra,
            test=f"{T2}::test_mixture_and_counts_match_torch")
for _name, _args in (("SoftmaxTransform", ("cache_size",)), ("Transform", ("cache_size",))):
    _transform(_name, _args, f"{T2}::test_mixture_and_counts_match_torch")

for _name, _args, _extra in (
        ("FisherSnedecor", ("df1", "df2", "validate_args"), _NO_RSAMPLE),
        ("OneHotCategoricalStraightThrough", ("probs", "logits", "validate_args"), ""),
        ("LowRankMultivariateNormal", ("loc", "cov_factor", "cov_diag", "validate_args"),
         "; the full covariance W W^T + diag(D) goes through MultivariateNormal (torch uses the Woodbury identity: "
         "the same values, more work for a large event size)"),
        ("LogisticNormal", ("loc", "scale", "validate_args"), ""),
        ("ExponentialFamily", ("batch_shape", "event_shape", "validate_args"),
         "; the Distribution base (torch's Bregman-divergence entropy of exponential families is not provided)")):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops; " + _SAMPLE_NOTE + _extra,
            test=f"{T2}::test_simplex_and_low_rank_match_torch")
for _name, _args in (("ReshapeTransform", ("in_shape", "out_shape", "cache_size")),
                     ("IndependentTransform", ("base_transform", "reinterpreted_batch_ndims", "cache_size")),
                     ("StickBreakingTransform", ("cache_size",))):
    _transform(_name, _args, f"{T2}::test_simplex_and_low_rank_match_torch")

for _name, _args in (("RelaxedBernoulli", ("temperature", "probs", "logits", "validate_args")),
                     ("RelaxedOneHotCategorical", ("temperature", "probs", "logits", "validate_args"))):
    mapping(f"torch.distributions.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE, note=f"torch's {_name} formulas on MindSpore ops (a TransformedDistribution of the "
                                    f"logit/log relaxed base, as torch); " + _SAMPLE_NOTE,
            test=f"{T2}::test_relaxed_and_structured_match_torch")
for _name, _args in (("LowerCholeskyTransform", ("cache_size",)),
                     ("CumulativeDistributionTransform", ("distribution", "cache_size")),
                     ("CatTransform", ("tseq", "dim", "lengths", "cache_size")),
                     ("StackTransform", ("tseq", "dim", "cache_size"))):
    _transform(_name, _args, f"{T2}::test_relaxed_and_structured_match_torch")
mapping("torch.distributions.GeneralizedPareto", "_ms_compat.GeneralizedPareto",
        args=("loc", "scale", "concentration", "validate_args"),
        target_args=("loc", "scale", "concentration", "validate_args"), status=DIFFERENCE,
        note="torch's GeneralizedPareto formulas on MindSpore ops; " + _SAMPLE_NOTE,
        test=f"{T2}::test_relaxed_and_structured_match_torch")
mapping("torch.distributions.VonMises", "_ms_compat.VonMises", args=("loc", "concentration", "validate_args"),
        target_args=("loc", "concentration", "validate_args"), status=DIFFERENCE,
        note="log I0 from ops.bessel_i0e (torch: a polynomial approximation, equal to float32 precision); "
             "torch's rejection sampler; " + _SAMPLE_NOTE, test=f"{T2}::test_relaxed_and_structured_match_torch")
_transform("PositiveDefiniteTransform", ("cache_size",), f"{T2}::test_relaxed_and_structured_match_torch",
           "L L^T of the lower-Cholesky transform; the inverse through ops.cholesky")
mapping("torch.distributions.ContinuousBernoulli", "_ms_compat.ContinuousBernoulli",
        args=("probs", "logits", "lims", "validate_args"), target_args=("probs", "logits", "lims", "validate_args"),
        status=DIFFERENCE, note="torch's ContinuousBernoulli formulas on MindSpore ops (the Taylor series inside "
                                "lims, as torch); " + _SAMPLE_NOTE,
        test="tests/parity/test_distributions_paths.py::test_continuous_bernoulli_matches_torch")
mapping("torch.distributions.LKJCholesky", "_ms_compat.LKJCholesky", args=("dim", "concentration", "validate_args"),
        target_args=("dim", "concentration", "validate_args"), status=DIFFERENCE,
        note="torch's onion-method sampler and log_prob on MindSpore ops; " + _SAMPLE_NOTE,
        test="tests/parity/test_distributions_paths.py::test_lkj_cholesky_matches_torch")
for _name in ("Constraint", "real", "boolean", "greater_than", "greater_than_eq", "less_than", "interval",
              "half_open_interval", "integer_interval", "positive", "nonnegative", "unit_interval",
              "nonnegative_integer", "positive_integer", "simplex", "independent", "lower_triangular",
              "lower_cholesky", "square", "symmetric", "positive_semidefinite", "positive_definite"):
    mapping(f"torch.distributions.constraints.{_name}", f"_ms_compat.constraints.{_name}", takes_torch_args=True,
            note="torch's constraint check (a bool tensor over the batch; reads values, so PyNative; the matrix "
                 "constraints check with NumPy, positive_definite by a Cholesky factorisation as torch)",
            test="tests/parity/test_distributions_paths.py::test_constraints_match_torch")
    METHOD_OWNERS.add(f"torch.distributions.constraints.{_name}")
for _path in ("torch.distributions.", "torch.distributions.transforms."):
    METHOD_OWNERS.add(_path + "identity_transform")
