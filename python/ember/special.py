"""ember.special: the special functions of torch.special that ember implements (aliases of ember ops)."""
from ember._C import (  # noqa: F401
    digamma, erf, erfc, erfinv, exp2, expm1, log1p, logit, polygamma,
)
from ember._C import digamma as psi  # noqa: F401
from ember._C import lgamma as gammaln  # noqa: F401
from ember._C import sigmoid as expit  # noqa: F401
from ember._C import igamma as gammainc, igammac as gammaincc  # noqa: F401

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "log1p",
           "logit", "polygamma", "psi"]
