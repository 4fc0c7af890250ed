import ember
import ember.nn.functional as F
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with `concentration` over the last dimension.

    rsample normalizes Gamma(concentration_i) draws; gradients flow through the Gamma samples'
    implicit reparameterization (an unbiased pathwise estimator; torch differentiates the
    marginal CDFs instead, so single-sample gradients differ while their expectation agrees)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",), event_dims=1)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = ember._standard_gamma(self.concentration.expand(shape))
        y = g / g.sum(-1, keepdim=True)
        return y.clamp(min=ember.finfo(y.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1)) - ember.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # With every concentration below 1 the density peaks at the vertex of the largest one.
        vertex = F.one_hot(cm1.argmax(dim=-1), cm1.shape[-1]).to(mode.dtype)
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        return ember.where(all_below_one, vertex, mode)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (ember.lgamma(c).sum(-1) - ember.lgamma(a0) - (k - a0) * ember.digamma(a0)
                - ((c - 1.0) * ember.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))
