import math

import ember
from ember.distributions import constraints
from ember.distributions.beta import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import _mvlgamma, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over correlation matrices (Lewandowski, Kurowicka and Joe, 2009),
    expressed on their lower Cholesky factors: density proportional to det(C)^(concentration - 1)
    for C = L L^T, i.e. prod_k L_kk^(dim - k + 2 concentration - 2) (k = 2..dim) in L's entries.

    Sampling is the onion method on Cholesky rows: row k (0-based, k entries left of the
    diagonal) is sqrt(y) u with u uniform on the unit sphere in R^k and
    y ~ Beta(k / 2, concentration + (dim - 1 - k) / 2), and diagonal sqrt(1 - y). (torch 2.13
    draws y ~ Beta(k - 1/2, ...), which disagrees with its own log_prob for dim >= 3.)"""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = ember.Size((dim, dim))
        # The Beta of each row's squared off-diagonal norm; row 0 has none (any Beta will do).
        k = ember.arange(dim, dtype=self.concentration.dtype)
        conc1 = (k / 2).clamp(min=0.5)
        conc0 = self.concentration.unsqueeze(-1) + (dim - 1 - k) / 2
        self._beta = Beta(conc1, conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            z = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            norm = z.norm(dim=-1, keepdim=True)
            u = z / ember.where(norm > 0, norm, ember.ones_like(norm))  # row 0 is all zeros
            w = ember.sqrt(y) * u
            diag = (1 - (w * w).sum(-1)).clamp(min=ember.finfo(w.dtype).tiny).sqrt()
            return w + ember.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        rows = ember.arange(2, d + 1, dtype=diag.dtype)
        power = 2 * (self.concentration - 1).unsqueeze(-1) + d - rows
        unnormalized = (power * diag.log()).sum(-1)
        # log normalizer: sum_k [lgamma(beta_k) + (k/2) log pi] - (d - 1) lgamma(alpha), with
        # beta_k = concentration + (d - 1 - k) / 2 and alpha = concentration + (d - 1) / 2.
        alpha = self.concentration + 0.5 * (d - 1)
        log_norm = 0.5 * (d - 1) * math.log(math.pi) + _mvlgamma(alpha - 0.5, d - 1) - (d - 1) * ember.lgamma(alpha)
        return unnormalized - log_norm
