"""ember.linalg: torch.linalg's API over LAPACK (functions bound in python/src/bind_linalg.cpp).

Decompositions return named tuples with torch's field names. Failures caused by the input's
values (a singular matrix, a matrix that is not positive-definite) raise LinAlgError, a
RuntimeError subclass as in torch.
"""
from collections import namedtuple

from ember import _C

_L = _C._linalg
LinAlgError = _C.LinAlgError

# torch.return_types-style result tuples.
SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
QRResult = namedtuple("linalg_qr", ["Q", "R"])
SVDResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])

matmul = _C.matmul


def _finish(res, out):
    """Writes a result (or a tuple of results) into `out` when given, as torch's out= does."""
    if out is None:
        return res
    if isinstance(res, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(res):
            raise TypeError(f"out must be a tuple of {len(res)} tensors")
        for o, r in zip(out, res):
            o.resize_(*r.shape).copy_(r)
        return type(res)(*out) if hasattr(res, "_fields") else tuple(out)
    out.resize_(*res.shape).copy_(res)
    return out


def _no_driver(name, driver):
    if driver is not None:
        raise RuntimeError(f"ember.linalg.{name}: keyword argument `driver=` is only supported on CUDA inputs "
                           f"with cuSOLVER backend.")


def inv(A, *, out=None):
    """Inverse of a square matrix (or batch); LinAlgError when singular."""
    return _finish(_L.inv(A), out)


def det(A, *, out=None):
    """Determinant of a square matrix (or batch)."""
    return _finish(_L.det(A), out)


def slogdet(A, *, out=None):
    """(sign, log|det|) of a square matrix (or batch)."""
    return _finish(SlogdetResult(*_L.slogdet(A)), out)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left=True) or X A = B; B may be a vector or a batch of vectors."""
    return _finish(_L.solve(A, B, left), out)


def cholesky(A, *, upper=False, out=None):
    """Cholesky factor L (A = L L^T), or U = L^T with upper=True; LinAlgError if A is not PD."""
    return _finish(_L.cholesky(A, upper), out)


def qr(A, mode="reduced", *, out=None):
    """QR decomposition; mode 'reduced', 'complete' or 'r' (Q empty)."""
    return _finish(QRResult(*_L.qr(A, mode)), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    _no_driver("svd", driver)
    """A = U diag(S) Vh; singular values descending."""
    return _finish(SVDResult(*_L.svd(A, full_matrices)), out)


def svdvals(A, *, driver=None, out=None):
    _no_driver("svdvals", driver)
    """Singular values, descending."""
    return _finish(_L.svdvals(A), out)


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, reading the UPLO triangle."""
    return _finish(EighResult(*_L.eigh(A, UPLO)), out)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of a symmetric matrix."""
    return _finish(_L.eigvalsh(A, UPLO), out)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B (driver gelsy, as torch's CPU default)."""
    return LstsqResult(*_L.lstsq(A, B, rcond, driver))


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse; singular values at or below max(atol, rtol * max(S)) are dropped."""
    return _finish(_L.pinv(A, _num(atol), _num(rtol), hermitian), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None, tol=None):
    """Number of singular values above max(atol, rtol * max(S))."""
    if tol is not None:
        atol, rtol = tol, 0.0
    for name, v in (("atol", atol), ("rtol", rtol)):
        if v is not None and not isinstance(v, (int, float, _C.Tensor)):
            raise TypeError(f"linalg_matrix_rank(): argument '{name}' must be Tensor or float, not {type(v).__name__}")
    if any(isinstance(v, _C.Tensor) and v.dim() > 0 for v in (atol, rtol)):
        return _finish(_matrix_rank_tensor_tol(A, atol, rtol, hermitian), out)
    return _finish(_L.matrix_rank(A, _num(atol), _num(rtol), hermitian), out)


def _matrix_rank_tensor_tol(A, atol, rtol, hermitian):
    """Tolerances given as tensors broadcast against A's batch shape, as torch's."""
    import ember
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    if rtol is None:
        rtol = 0.0 if atol is not None else ember.finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    smax = S.amax(-1) if S.shape[-1] > 0 else ember.zeros(S.shape[:-1], dtype=S.dtype)
    tol = ember.maximum(ember.as_tensor(atol if atol is not None else 0.0, dtype=S.dtype),
                        ember.as_tensor(rtol, dtype=S.dtype) * smax)
    return (S > tol.unsqueeze(-1)).sum(-1)


def matrix_power(A, n, *, out=None):
    """A to the integer power n (negative n uses the inverse)."""
    return _finish(_L.matrix_power(A, n), out)


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along dim (inputs broadcast)."""
    return _finish(_L.cross(input, other, dim), out)


def norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """Vector or matrix norm: ord None/number for vectors, 'fro'/'nuc'/±1/±2/±inf for matrices."""
    if dtype is not None:
        A = A.to(dtype)
    return _finish(_L.norm(A, ord, dim, keepdim), out)


def _num(x):
    if x is None or isinstance(x, (int, float)):
        return x
    return float(x.item())  # a 0-d tensor tolerance


# Top-level functions torch keeps outside torch.linalg (see ember/__init__.py).
SvdResult = namedtuple("svd", ["U", "S", "V"])


def _svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: returns V (not Vh); some=True gives the reduced factors."""
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        import ember
        m, n = input.shape[-2], input.shape[-1]
        return SvdResult(ember.zeros(*input.shape[:-2], m, m if not some else min(m, n), dtype=input.dtype),
                         S, ember.zeros(*input.shape[:-2], n, n if not some else min(m, n), dtype=input.dtype))
    return _finish(SvdResult(U, S, Vh.mH), out)


def _cholesky(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch): lower factor unless upper=True."""
    return _finish(cholesky(input, upper=upper), out)


def _qr(input, some=True, *, out=None):
    """torch.qr: reduced when some=True, complete otherwise."""
    Q, R = qr(input, "reduced" if some else "complete")
    return _finish(namedtuple("qr", ["Q", "R"])(Q, R), out)


def _slogdet(input):
    r = slogdet(input)
    return namedtuple("slogdet", ["sign", "logabsdet"])(r.sign, r.logabsdet)


def _attach_methods():
    T = _C.Tensor
    T.inverse = lambda self: inv(self)
    T.det = lambda self: det(self)
    T.slogdet = lambda self: _slogdet(self)
    T.cholesky = lambda self, upper=False: cholesky(self, upper=upper)
    T.qr = lambda self, some=True: _qr(self, some)
    T.svd = lambda self, some=True, compute_uv=True: _svd(self, some, compute_uv)
    T.matrix_power = lambda self, n: matrix_power(self, n)
    T.pinverse = lambda self, rcond=1e-15: pinv(self, rtol=rcond)


_attach_methods()


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ord-norm of x over `dim` (all elements when None): ord 0 counts nonzeros,
    inf/-inf take the largest/smallest absolute value, other ord give sum(|x|**ord)**(1/ord).
    `dtype` casts x first. (Reduction family: python/src/bind_reduce.cpp.)"""
    return _C._linalg_vector_norm(x, float(ord), dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of A over the two dims `dim`: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 1/-1 (largest/smallest column sum of |A|), inf/-inf (the same over rows), 2/-2
    (largest/smallest singular value). `dtype` casts A first."""
    return _C._linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
