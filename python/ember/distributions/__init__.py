"""ember.distributions: parameterized probability distributions and sampling (torch.distributions).

Distributions follow torch's API: ``batch_shape``/``event_shape``, ``sample``/``rsample`` (the
reparameterization trick where ``has_rsample``), ``log_prob``, ``entropy``, moments, ``cdf``/``icdf``,
``expand``, ``support`` and ``arg_constraints`` with argument validation (on by default; see
``Distribution.set_default_validate_args``). ``constraints`` and ``transforms`` describe and map
between constrained spaces (``biject_to``/``transform_to``), and ``kl_divergence`` dispatches to
the closed forms registered with ``register_kl``.

Score-function (REINFORCE) estimators use ``log_prob`` of a ``sample()``; pathwise estimators
differentiate through ``rsample()``.
"""
from ember.distributions import constraints, transforms  # noqa: F401
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.beta import Beta
from ember.distributions.binomial import Binomial
from ember.distributions.categorical import Categorical
from ember.distributions.cauchy import Cauchy
from ember.distributions.chi2 import Chi2
from ember.distributions.constraint_registry import biject_to, transform_to
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.dirichlet import Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.exponential import Exponential
from ember.distributions.fishersnedecor import FisherSnedecor
from ember.distributions.gamma import Gamma
from ember.distributions.generalized_pareto import GeneralizedPareto
from ember.distributions.geometric import Geometric
from ember.distributions.gumbel import Gumbel
from ember.distributions.half_cauchy import HalfCauchy
from ember.distributions.half_normal import HalfNormal
from ember.distributions.independent import Independent
from ember.distributions.inverse_gamma import InverseGamma
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.kumaraswamy import Kumaraswamy
from ember.distributions.laplace import Laplace
from ember.distributions.lkj_cholesky import LKJCholesky
from ember.distributions.log_normal import LogNormal
from ember.distributions.logistic_normal import LogisticNormal
from ember.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ember.distributions.mixture_same_family import MixtureSameFamily
from ember.distributions.multinomial import Multinomial
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.negative_binomial import NegativeBinomial
from ember.distributions.normal import Normal
from ember.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from ember.distributions.pareto import Pareto
from ember.distributions.poisson import Poisson
from ember.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from ember.distributions.relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from ember.distributions.studentT import StudentT
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import *  # noqa: F401,F403
from ember.distributions.transforms import __all__ as _transforms_all
from ember.distributions.uniform import Uniform
from ember.distributions.von_mises import VonMises
from ember.distributions.weibull import Weibull
from ember.distributions.wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
    "LogNormal", "LogisticNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
    "biject_to", "kl_divergence", "register_kl", "transform_to",
]
__all__.extend(_transforms_all)
