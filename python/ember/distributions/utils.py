"""Helpers shared by the distributions (torch.distributions.utils)."""
import math
from functools import update_wrapper
from numbers import Number

import ember

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers become tensors of the first tensor's dtype
    (the default dtype when there is none)."""
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or ember.Tensor.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        dtype = ember.get_default_dtype()
        for v in values:
            if isinstance(v, ember.Tensor):
                dtype = v.dtype
                break
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, dtype=dtype) for v in values]
    return ember.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device=None):
    return ember.randn(shape, dtype=dtype)


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions of value."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary outcomes, else softmax over the last dimension."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into [eps, 1 - eps] of their dtype."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (log-odds when binary, else log-probabilities)."""
    p = clamp_probs(probs)
    if is_binary:
        return ember.log(p) - ember.log1p(-p)
    return ember.log(p)


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag, device=None):
    r = ember.arange(n)
    return r.reshape(-1, 1) + diag >= r  # column <= row + diag


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (at and below diagonal `diag`) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a square lower-triangular matrix from its entries."""
    m = vec.shape[-1]
    # Solve n (n + 1 + 2 diag) / 2 + ... = m for n (the number of entries at and below diagonal diag).
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-9:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular "
                         f"part of a square D x D matrix.")
    n = round(n)
    mask = _tril_mask(n, diag)
    rows, cols = ember.nonzero(mask, as_tuple=True)
    flat = (rows * n + cols)
    out = vec.new_zeros(vec.shape[:-1] + (n * n,))
    out = out.index_add(-1, flat, vec)
    return out.reshape(vec.shape[:-1] + (n, n))



def _mvlgamma(x, p):
    """log of the multivariate gamma function Gamma_p(x) = pi^(p(p-1)/4) prod_j Gamma(x - j/2), j < p."""
    half = ember.arange(p, dtype=x.dtype) / 2
    return p * (p - 1) / 4 * math.log(math.pi) + ember.lgamma(x.unsqueeze(-1) - half).sum(-1)


def _mvdigamma(x, p):
    """d/dx of _mvlgamma: sum_j digamma(x - j/2), j < p."""
    half = ember.arange(p, dtype=x.dtype) / 2
    return ember.digamma(x.unsqueeze(-1) - half).sum(-1)
