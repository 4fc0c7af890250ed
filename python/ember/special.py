"""ember.special: torch.special's functions (aliases of ember ops, or compositions in _api_math.py)."""
from ember._C import (  # noqa: F401
    digamma, erf, erfc, erfinv, exp2, expm1, log1p, logit, polygamma, round, logsumexp, softmax, log_softmax,
)
from ember._C import digamma as psi  # noqa: F401
from ember._C import lgamma as gammaln  # noqa: F401
from ember._C import sigmoid as expit  # noqa: F401
from ember._C import igamma as gammainc, igammac as gammaincc  # noqa: F401
from ember._composite import sinc, xlogy  # noqa: F401
from ember._api_math import (  # noqa: F401
    i0, i0e, i1, i1e, ndtr, ndtri, log_ndtr, erfcx, entr, xlog1py, multigammaln, zeta, spherical_bessel_j0,
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
    legendre_polynomial_p, airy_ai, modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0,
    scaled_modified_bessel_k1, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
)

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "log1p",
           "logit", "polygamma", "psi", "round", "logsumexp", "softmax", "log_softmax", "sinc", "xlogy", "i0", "i0e",
           "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "xlog1py", "multigammaln", "zeta",
           "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]
