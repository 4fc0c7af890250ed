"""ember.linalg: the norms of torch.linalg (vector_norm, matrix_norm)."""

from ember import _C

__all__ = ["vector_norm", "matrix_norm"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ord-norm of x over `dim` (all elements when None): ord 0 counts nonzeros,
    inf/-inf take the largest/smallest absolute value, other ord give sum(|x|**ord)**(1/ord).
    `dtype` casts x first."""
    return _C._linalg_vector_norm(x, float(ord), dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of A over the two dims `dim`: 'fro' (Frobenius), 1/-1 (largest/smallest
    column sum of |A|), inf/-inf (largest/smallest row sum). 'nuc' and 2/-2 need a singular value
    decomposition, which Ember does not implement yet (NotImplementedError)."""
    return _C._linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
