import math
from numbers import Number

import ember
import ember.nn.functional as F
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019):
    density C(p) p^x (1 - p)^(1 - x). Near p = 1/2 (inside `lims`) the closed forms cancel
    catastrophically, so Taylor expansions around 1/2 are used there."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # Checked before clamping: the clamped values would always pass.
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = ember.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        # Inside the unstable region, a harmless stand-in (the Taylor branch is taken there).
        return ember.where(self._outside_unstable_region(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        """log C(p) = log(log((1 - p) / p) / (1 - 2p))."""
        p = self._cut_probs()
        log_norm = ember.log(ember.abs(ember.log1p(-p) - ember.log(p))) - ember.log(ember.abs(1.0 - 2.0 * p))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (ember.log1p(-p) - ember.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ember.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        vs = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (ember.log1p(-p) - ember.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype)
        with ember.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ember.rand(shape, dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (ember.pow(p, value) * ember.pow(1.0 - p, 1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inner = ember.where(self._outside_unstable_region(), cdfs, value)
        return ember.where(value <= 0.0, ember.zeros_like(inner),
                           ember.where(value >= 1.0, ember.ones_like(inner), inner))

    def icdf(self, value):
        p = self._cut_probs()
        x = (ember.log1p(-p + value * (2.0 * p - 1.0)) - ember.log1p(-p)) / (ember.log(p) - ember.log1p(-p))
        return ember.where(self._outside_unstable_region(), x, value)

    def entropy(self):
        log_q = ember.log1p(-self.probs)
        log_p = ember.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        # log((e^x - 1) / x), with its Taylor expansion near x = 0.
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ember.where(outside, x, ember.full_like(x, self._lims[0] - 0.5))
        log_norm = ember.log(ember.abs(ember.exp(cut) - 1.0)) - ember.log(ember.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ember.where(outside, log_norm, taylor)
