import math

import ember
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz and Stegun,
# 9.8.1-9.8.4; relative error below 2e-7): small-argument series in (x / 3.75)^2 and
# large-argument expansions of sqrt(x) e^-x I(x) in 3.75 / x.
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633,
             0.00392377]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654,
             -0.00420059]


def _poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75).pow(2)
    small = _poly(y, _I0_SMALL if order == 0 else _I1_SMALL)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _poly(y, _I0_LARGE if order == 0 else _I1_LARGE).log()
    return ember.where(x < 3.75, small, large)


class VonMises(Distribution):
    """The von Mises (circular normal) distribution on angles, with mean direction `loc` and
    concentration `concentration`; samples lie in [-pi, pi). Sampling is Best and Fisher's (1979)
    rejection method, in double precision."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, ember.Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ember.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _proposal_r(self):
        k = self.concentration.to(ember.float64)
        tau = 1 + (1 + 4 * k.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho.pow(2)) / (2 * rho)
        return ember.where(k < 1e-5, 1 / k + k, r)  # its Taylor expansion for tiny k

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            loc = self.loc.to(ember.float64).expand(shape)
            k = self.concentration.to(ember.float64).expand(shape)
            r = self._proposal_r.expand(shape)
            x = ember.zeros(shape, dtype=ember.float64)
            done = ember.zeros(shape, dtype=ember.bool)
            while not bool(done.all()):
                u1, u2, u3 = ember.rand((3,) + tuple(shape), dtype=ember.float64).unbind()
                z = ember.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                accept = accept & ~done
                x = ember.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        # The circular variance 1 - I1(k) / I0(k).
        k = self.concentration
        return 1 - (_log_modified_bessel_fn(k, order=1) - _log_modified_bessel_fn(k, order=0)).exp()
