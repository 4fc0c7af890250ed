from numbers import Number

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F-distribution with `df1` and `df2` degrees of freedom: (X1 / df1) / (X2 / df2) for
    independent chi-squared X1, X2."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = ember.Size() if isinstance(df1, Number) and isinstance(df2, Number) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return ember.where(df2 > 2, df2 / (df2 - 2), ember.full_like(df2, float("nan")))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, ember.full_like(mode, float("nan")))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        v = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ember.where(df2 > 4, v, ember.full_like(v, float("nan")))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        # The Gammas have rate df: X1 / X2 is (chi2_1 / df1) / (chi2_2 / df2) already.
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = ember.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1 = self.df1 * 0.5
        h2 = self.df2 * 0.5
        log_beta = ember.lgamma(h1) + ember.lgamma(h2) - ember.lgamma(h1 + h2)
        ratio = self.df1 / self.df2
        return h1 * ratio.log() + (h1 - 1) * value.log() - (h1 + h2) * ember.log1p(ratio * value) - log_beta
