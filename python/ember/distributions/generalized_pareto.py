import math
from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location `loc`, scale `scale` and shape
    `concentration` (xi): survival function (1 + xi z)^(-1/xi) for z = (x - loc) / scale, and
    exp(-z) at xi = 0 (the exponential distribution)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(ember.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _xi(self):
        """(xi == 0 within isclose's tolerance, xi with those entries replaced by 1)."""
        zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return zero, ember.where(zero, ember.ones_like(self.concentration), self.concentration)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ember.rand(shape, dtype=self.loc.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._xi()
        power = 1 / xi + 1  # 0 at xi = -1 (uniform): the density is then flat
        nonzero = ember.where(power == 0, power, power * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._xi()
        return ember.where(zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, xi = self._xi()
        log_s = ember.log1p(-value)  # log of the survival probability
        nonzero = self.loc + self.scale / xi * ember.expm1(-xi * log_s)
        return ember.where(zero, self.loc - self.scale * log_s, nonzero)

    @property
    def mean(self):
        xi = self.concentration
        finite = xi < 1
        safe = ember.where(finite, xi, ember.full_like(xi, 0.5))
        return ember.where(finite, self.loc + self.scale / (1 - safe), ember.full_like(xi, float("nan")))

    @property
    def variance(self):
        xi = self.concentration
        finite = xi < 0.5
        safe = ember.where(finite, xi, ember.full_like(xi, 0.25))
        result = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))
        return ember.where(finite, result, ember.full_like(xi, float("nan")))

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = ember.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            ember.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
