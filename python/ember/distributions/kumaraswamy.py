import ember
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _raw_moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    return b * ember.exp(ember.lgamma(1 + n / a) + ember.lgamma(b) - ember.lgamma(1 + n / a + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1), density a b x^(a-1) (1 - x^a)^(b-1), sampled as
    (1 - U^(1/b))^(1/a) with a = concentration1, b = concentration0."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(ember.zeros_like(self.concentration0), ember.ones_like(self.concentration0),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _raw_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a), defined for a >= 1 and b >= 1.
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return ember.where((a < 1) | (b < 1), ember.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _raw_moment(a, b, 2) - _raw_moment(a, b, 1).pow(2)

    def entropy(self):
        # (1 - 1/b) + (1 - 1/a) H_b - log(a b), with the harmonic number H_b = digamma(b + 1) + gamma.
        a, b = self.concentration1, self.concentration0
        harmonic = ember.digamma(b + 1) + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - ember.log(a * b)
