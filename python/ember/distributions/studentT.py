import math

import ember
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with `df` degrees of freedom, location `loc` and scale `scale`."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return ember.where(self.df > 1, self.loc, ember.full_like(self.loc, float("nan")))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2).clamp(min=1e-30)  # replaced below where df <= 2
        inf = ember.full_like(df, float("inf"))
        nan = ember.full_like(df, float("nan"))
        return ember.where(df > 2, finite, ember.where(df > 1, inf, nan))

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    def rsample(self, sample_shape=ember.Size()):
        # T = loc + scale * X / sqrt(Z / df) with X ~ N(0, 1), Z ~ Chi2(df).
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ember.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + ember.lgamma(0.5 * df)
                    - ember.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * ember.log1p(y ** 2.0 / df) - log_norm

    def entropy(self):
        df = self.df
        lbeta = ember.lgamma(0.5 * df) + math.lgamma(0.5) - ember.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (ember.digamma(0.5 * (df + 1)) - ember.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
