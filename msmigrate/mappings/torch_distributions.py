"""torch.distributions -> the classes in templates/compat_parts/distributions.py (torch's formulas on
MindSpore ops). Proven by tests/parity/test_distributions.py: log_prob/cdf/icdf/entropy/moments and their
gradients against torch, sample/rsample by shape, dtype and statistics (the random streams differ)."""
from __future__ import annotations

from ..registry import DIFFERENCE, mapping

T = "tests/parity/test_distributions.py"
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
        note="closed forms for Normal, Uniform, Bernoulli and Categorical pairs (others raise "
             "NotImplementedError, as torch does for an unregistered pair)", test=f"{T}::test_values_match_torch")

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
