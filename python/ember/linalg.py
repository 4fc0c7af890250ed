"""ember.linalg: torch.linalg's API over LAPACK (functions bound in python/src/bind_linalg.cpp).

Decompositions return named tuples with torch's field names. Failures caused by the input's
values (a singular matrix, a matrix that is not positive-definite) raise LinAlgError, a
RuntimeError subclass as in torch.
"""
from collections import namedtuple

from ember import _C
from ember._argcheck import torch_type_name

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
    r = _L.cross(input, other, dim)
    if out is not None:  # torch refuses an out= sharing any memory with an input, even exactly
        from ember._argcheck import check_out_overlap
        check_out_overlap(out, (input, other), allow_full=False)
    return _finish(r, out)


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
    if type(ord) not in (int, float):
        ord = _ord_number(ord)
    return _C._linalg_vector_norm(x, float(ord), dim, keepdim, dtype=dtype, out=out)


def _ord_number(ord):
    """torch's parser takes a Number (a 0-d tensor too) for vector_norm's ord: a string, even 'inf',
    None or a tensor of other shapes is a TypeError, never float()'s ValueError."""
    if isinstance(ord, (str, bytes)) or ord is None or (isinstance(ord, _C.Tensor) and ord.dim() != 0):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    return ord


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of A over the two dims `dim`: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 1/-1 (largest/smallest column sum of |A|), inf/-inf (the same over rows), 2/-2
    (largest/smallest singular value). `dtype` casts A first."""
    return _C._linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


# ---- matrix_exp: scaling and squaring with diagonal Padé approximants ----
# Note [matrix_exp]: exp(A) = r_m(A / 2^s)^(2^s) with r_m the [m/m] Padé approximant (Higham 2005,
# "The scaling and squaring method for the matrix exponential revisited"). theta_m is the largest
# 1-norm for which r_m's backward error stays below the unit roundoff (2^-53 for double, 2^-24 for
# single; values recomputed from the error series). The degree is the smallest whose theta covers the
# batch's largest norm; beyond the last one each matrix gets its own s. Everything is ember ops
# (matmul, linalg.solve, where), so autograd differentiates the approximant itself, which is as
# accurate as the forward value (Al-Mohy & Higham 2009).
_EXPM_THETA_DOUBLE = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
                      (9, 2.097847961257068e0), (13, 5.371920351148152e0))
_EXPM_THETA_SINGLE = ((3, 4.258730034897931e-1), (5, 1.880152698533769e0), (7, 3.925724846433284e0))


def _pade_coefficients(m):
    """c_j of the [m/m] Padé numerator of exp (c_0 = 1); the denominator is sum c_j (-x)^j."""
    from math import factorial
    return [factorial(2 * m - j) * factorial(m) / (factorial(2 * m) * factorial(j) * factorial(m - j))
            for j in range(m + 1)]


def _pade(A, m):
    """r_m(A) = (V - U)^{-1} (V + U), U the odd part of the numerator and V the even part."""
    import ember
    c = _pade_coefficients(m)
    n = A.shape[-1]
    eye = ember.eye(n, dtype=A.dtype)
    A2 = A @ A
    if m == 13:  # Higham's evaluation: six products instead of twelve
        A4 = A2 @ A2
        A6 = A4 @ A2
        U = A @ (A6 @ (c[13] * A6 + c[11] * A4 + c[9] * A2) + c[7] * A6 + c[5] * A4 + c[3] * A2 + c[1] * eye)
        V = A6 @ (c[12] * A6 + c[10] * A4 + c[8] * A2) + c[6] * A6 + c[4] * A4 + c[2] * A2 + c[0] * eye
    else:
        powers = [eye, A2]  # A^0, A^2, A^4, ...
        for _ in range(2, m // 2 + 1):
            powers.append(powers[-1] @ A2)
        U = A @ sum(c[2 * i + 1] * powers[i] for i in range(m // 2 + 1))
        V = sum(c[2 * i] * powers[i] for i in range(m // 2 + 1))
    return solve(V - U, V + U)


def matrix_exp(A):
    """exp(A) = sum_k A^k / k! of square matrices (*, n, n), by scaling and squaring (Note [matrix_exp])."""
    import math

    import ember
    if type(A).__name__ == "BatchedTensor":  # under vmap: its batch joins the (*, n, n) batch dims
        from ember._functorch.batched import leading_batch
        return leading_batch(matrix_exp, A)
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg_matrix_exp(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype_name(A.dtype)}")
    if A.dtype in (ember.float16, ember.bfloat16):  # computed in float32, as LAPACK has no half types
        return matrix_exp(A.float()).to(A.dtype)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:  # (a copy: exp saves its result, which the caller may change in place, as torch allows)
        return A.exp().clone()
    double = A.dtype in (ember.float64, ember.complex128)
    thetas = _EXPM_THETA_DOUBLE if double else _EXPM_THETA_SINGLE
    batch = tuple(A.shape[:-2])
    X = A.reshape(-1, n, n)
    norms = X.detach().abs().sum(-2).amax(-1).tolist()  # 1-norms
    if not all(math.isfinite(v) for v in norms):
        norms = [v if math.isfinite(v) else 0.0 for v in norms]  # inf/nan propagate through the products
    top = max(norms)
    for m, theta in thetas:
        if top <= theta:  # (a copy: the solve inside saves its result, which the caller may change in place)
            return _pade(X, m).reshape(A.shape).clone()
    m, theta = thetas[-1]
    s = [max(0, math.ceil(math.log2(v / theta))) if v > 0 else 0 for v in norms]
    scale = ember.tensor([2.0 ** -si for si in s], dtype=X.real.dtype if X.is_complex() else X.dtype)
    R = _pade(X * scale.view(-1, 1, 1), m)
    smax = max(s)
    if min(s) == smax:
        for _ in range(smax):
            R = R @ R
    else:  # squarings differ between matrices: square those that still need it
        need = ember.tensor(s).view(-1, 1, 1)
        for j in range(smax):
            R = ember.where(need > j, R @ R, R)
    return R.reshape(batch + (n, n)).clone() if smax == 0 else R.reshape(batch + (n, n))


# ---- householder_product (torch.orgqr) ----
def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k (*, m, n), H_i = I - tau_i v_i v_i^H, with v_i column i of A
    below the diagonal and 1 on it (LAPACK's orgqr/ungqr, as geqrf stores the reflectors)."""
    import ember
    op = "torch.linalg.householder_product"
    for i, (arg, v) in enumerate((("input", A), ("tau", tau))):
        if not isinstance(v, _C.Tensor):
            raise TypeError(f"linalg_householder_product(): argument '{arg}' (position {i + 1}) must be Tensor, "
                            f"not {type(v).__name__}")
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    batch = tuple(A.shape[:-2])
    if tuple(tau.shape[:-1]) != batch:
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {_dtype_name(tau.dtype)} does not match input dtype "
                           f"{_dtype_name(A.dtype)}")
    if not (A.dtype in (ember.float32, ember.float64) or A.is_complex()):
        raise NotImplementedError(f"\"householder_product\" not implemented for '{_dtype_name(A.dtype)}'")
    k = tau.shape[-1]
    from ember.autograd import forward_ad
    if not ((ember.is_grad_enabled() and (A.requires_grad or tau.requires_grad)) or forward_ad._current_level >= 0):
        return _finish(_L.orgqr_values(A, tau), out)  # no derivative needed: LAPACK orgqr
    # Reflectors applied right to left to the first n columns of I: Q <- Q - tau_i v_i (v_i^H Q),
    # in ember ops so that reverse and forward mode (and double backward) come from the parts.
    Q = ember.eye(m, n, dtype=A.dtype).expand(batch + (m, n))
    if k > 0:
        V = A[..., :k].tril(-1) + ember.eye(m, k, dtype=A.dtype)
        for i in reversed(range(k)):
            v = V[..., i:i + 1]
            Q = Q - (v * tau[..., i:i + 1].unsqueeze(-1)) @ (v.mH @ Q)
    else:  # no reflectors: the identity's columns, still part of the graph (zero gradients, as torch)
        Q = Q + (A[..., :0].sum(-1, keepdim=True) + tau.sum(-1)[..., None, None])
    return _finish(Q, out)


def _dtype_name(dtype):
    return str(dtype).replace("ember.", "")


GeqrfResult = namedtuple("geqrf", ["a", "tau"])


def _geqrf(input, *, out=None):
    """torch.geqrf: QR in LAPACK's compact form (R above the diagonal, reflectors below, tau)."""
    return _finish(GeqrfResult(*_L.geqrf(input)), out)


def _orgqr(input, tau):
    """torch.orgqr: householder_product."""
    return householder_product(input, tau)


def _attach_methods_extra():
    T = _C.Tensor
    T.matrix_exp = lambda self: matrix_exp(self)
    T.orgqr = lambda self, input2: householder_product(self, input2)
    T.geqrf = lambda self: _geqrf(self)


_attach_methods_extra()


# ---- torch.linalg names built from the functions above (python/ember/_api_math.py for the solvers) ----
from ember._api_math import solve_triangular  # noqa: E402,F401
from ember import _C as _C2  # noqa: E402

_ExResult = {}


def _ex(name, fields):
    if name not in _ExResult:
        _ExResult[name] = namedtuple(name, fields)
    return _ExResult[name]


def _info_of(fn, A):
    """fn(A) per matrix of a batch; info 0 where it succeeds, 1 where it raises LinAlgError."""
    try:
        return fn(A), _C2.zeros(A.shape[:-2], dtype=_C2.int32)
    except LinAlgError:
        pass
    batch = A.reshape(-1, A.shape[-2], A.shape[-1])
    outs, infos = [], []
    for m in batch:
        try:
            outs.append(fn(m))
            infos.append(0)
        except LinAlgError:
            outs.append(_C2.full(m.shape, float("nan"), dtype=m.dtype))
            infos.append(1)
    out = _C2.stack(outs).reshape(A.shape) if outs else _C2.empty(A.shape, dtype=A.dtype)
    return out, _C2.tensor(infos, dtype=_C2.int32).reshape(A.shape[:-2])


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info 0 where A is positive-definite, nonzero where the factorization failed."""
    if check_errors:
        L = cholesky(A, upper=upper)
        return _ex("linalg_cholesky_ex", ["L", "info"])(L, _C2.zeros(A.shape[:-2], dtype=_C2.int32))
    L, info = _info_of(lambda m: cholesky(m, upper=upper), A)
    return _finish(_ex("linalg_cholesky_ex", ["L", "info"])(L, info), out)


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): info nonzero where A is singular."""
    if check_errors:
        return _ex("linalg_inv_ex", ["inverse", "info"])(inv(A), _C2.zeros(A.shape[:-2], dtype=_C2.int32))
    X, info = _info_of(inv, A)
    return _finish(_ex("linalg_inv_ex", ["inverse", "info"])(X, info), out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): info nonzero where A is singular."""
    info = inv_ex(A).info
    if check_errors and bool((info != 0).any()):
        solve(A, B, left=left)
    X = solve(A, B, left=left) if not bool((info != 0).any()) else _C2.full(
        solve(_C2.eye(A.shape[-1], dtype=A.dtype).expand(A.shape), B, left=left).shape, float("nan"), dtype=A.dtype)
    return _finish(_ex("linalg_solve_ex", ["result", "info"])(X, info), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.diagonal with defaults for batches of matrices."""
    return _C2.diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) along dim, broadcasting x and y."""
    for t in (x, y):
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                               f"{torch_type_name(t.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{torch_type_name(x.dtype)} and y of type {torch_type_name(y.dtype)} instead")
    return _finish((x.conj() * y).sum(dim), out)


def vander(x, *, N=None):
    """Rows [1, x, x^2, ..., x^(N-1)] for x (..., n): increasing powers, as torch.linalg.vander."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1 and N is not None and N < 1:
        raise RuntimeError(f"N must be greater than 1.")
    if n == 0:
        return x.new_ones(tuple(x.shape) + (0,))
    pows = [_C2.ones_like(x)]
    for _ in range(1, n):
        pows.append(pows[-1] * x)
    return _C2.stack(pows, -1)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices; the first may be 1-d (a row) and the last 1-d (a column)."""
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, _C2.Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    if any(t.dtype == _C2.bool for t in tensors):
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    for i, t in enumerate(tensors):
        lim = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.dim() not in lim:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {'1D or 2D' if len(lim) == 2 else '2D'} but got "
                               f"{t.dim()}D")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    ts = [tensors[0].unsqueeze(0) if first_vec else tensors[0]] + tensors[1:-1] + [
        tensors[-1].unsqueeze(-1) if last_vec else tensors[-1]]
    r = ts[0]
    for t in ts[1:]:
        r = r.mm(t)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return _finish(r, out)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a matrix: prod(shape[:ind]) x prod(shape[ind:]); result shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows = 1
    for s in A.shape[:ind]:
        rows *= s
    cols = 1
    for s in A.shape[ind:]:
        cols *= s
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _finish(inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind])), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.dim()) = B."""
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    xshape = tuple(A.shape[B.dim():])
    n = 1
    for s in xshape:
        n *= s
    if B.numel() != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(result_shape) == prod(other.shape), "
                           f"but got {n} != {B.numel()}")
    return _finish(solve(A.reshape(B.numel(), n), B.reshape(-1)).reshape(xshape), out)


def cond(A, p=None, *, out=None):
    """The condition number of A in norm p (None or 2: ratio of extreme singular values)."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _finish(r, out)
    return _finish(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


# ---- LU (LAPACK getrf/getrs via ember._C._linalg; differentiable, the backward beside it in lapack.cpp) ----
_lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])
_LUFactor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_LUFactorEx = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LU = namedtuple("linalg_lu", ["P", "L", "U"])


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): LAPACK getrf's compact LU with 1-based pivots; info > 0 at a zero pivot."""
    return _finish(_LUFactorEx(*_L.lu_factor_ex(A, pivot, check_errors, "torch.linalg.lu_factor_ex")), out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of A = P L U; raises when U has a zero on its diagonal, as torch."""
    LU, piv, _ = _L.lu_factor_ex(A, pivot, True, "torch.linalg.lu_factor")
    return _finish(_LUFactor(LU, piv), out)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U."""
    LU, piv, _ = _L.lu_factor_ex(A, pivot, False, "torch.linalg.lu")
    return _finish(_LU(*_L.lu_unpack(LU, piv)), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    from ember import _api_math
    return _api_math.lu_solve_linalg(LU, pivots, B, left=left, adjoint=adjoint, out=out)


# ---- LDL (LAPACK sytrf/sytrs via ember._C._linalg; values only, as torch) ----
_LDLFactor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
_LDLFactorEx = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): A = L D L^T (L D L^H with hermitian) by Bunch-Kaufman pivoting of A's lower triangle."""
    LD, piv, info = _L.ldl_factor_ex(A, hermitian)
    if check_errors and bool((info != 0).any()):
        bad = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
        raise LinAlgError(f"torch.linalg.ldl_factor_ex: The factorization could not be completed because the input "
                          f"is not invertible (D[{bad},{bad}] is zero).")
    return _finish(_LDLFactorEx(LD, piv, info), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots); raises LinAlgError when a diagonal block of D is exactly singular."""
    LD, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return _finish(_LDLFactor(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ldl_factor's result."""
    if pivots.dtype == _C2.int64:  # torch accepts int64 pivots too
        pivots = pivots.to(_C2.int32)
    return _finish(_L.ldl_solve(LD, pivots, B, hermitian), out)


# ---- general eigenproblem (LAPACK geev in C++, differentiable) ----
_Eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of a general square matrix, both complex; unit-norm eigenvectors."""
    return _finish(_Eig(*_L.eig(A)), out)


def eigvals(A, *, out=None):
    """The (complex) eigenvalues of a general square matrix."""
    return _finish(_L.eigvals(A), out)


from ember._argcheck import tensor_args as _tensor_args  # noqa: E402

_tensor_args(globals(), ["vecdot"], positions=(0, 1), api_prefix="linalg_")
