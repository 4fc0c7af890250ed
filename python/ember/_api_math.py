"""Math functions of torch.*, torch.special and torch.linalg: the Bessel functions (C++ kernels,
ops/bessel.cpp) and compositions of ember ops: the normal distribution's functions,
the Hurwitz zeta (Euler-Maclaurin), orthogonal polynomials (three-term recurrences), histograms,
gradient, index_reduce and triangular/Cholesky solves. Autograd flows through the parts where torch
has a derivative. Checked against torch in tests/python/test_api_names.py.
"""
import math

import ember as _E
from ember import _C
from ember import return_types
import functools

from ember._argcheck import check_out_overlap, torch_type_name


def _vmap_elementwise(fn):
    """Under vmap, run fn once on the physical values (ember/_functorch/batched.py elementwise); the
    batched module is imported on first use, as it needs ember fully loaded."""
    inner = []

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not any(type(a).__name__ == "BatchedTensor" for a in list(args) + list(kwargs.values())):
            return fn(*args, **kwargs)
        if not inner:
            from ember._functorch.batched import elementwise
            inner.append(elementwise(fn))
        return inner[0](*args, **kwargs)
    return wrapper


def _no_kernel_for(dt, name, half=False):
    """NotImplementedError as torch's dispatch raises for a dtype its CPU kernel lacks: complex, and
    float16/bfloat16 unless `half`."""
    if dt.is_complex or (not half and dt in (_E.float16, _E.bfloat16)):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{torch_type_name(dt)}'")


def _float(x, name=None, half=True):
    """x as a floating tensor (integers to the default dtype); complex inputs, and float16/bfloat16 where
    torch has no kernel for them (half=False), raise NotImplementedError naming the op as torch does."""
    if name is not None and (x.is_complex() or (not half and x.dtype in (_E.float16, _E.bfloat16))):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{str(x.dtype)[6:]}'")
    return x if x.is_floating_point() else x.to(_E.get_default_dtype())


def _bessel(input, fn, name, half=True, grad=True):
    """The C++ Bessel kernel `fn` (ops/bessel.cpp) of input; dtype errors name `name` as torch's do. The
    functions outside the I family have no derivative in torch, so none here."""
    x = _float(input, name, half)
    if grad:
        return _C._bessel(fn, x)
    with _E.no_grad():
        return _C._bessel(fn, x)


def i0(input, *, out=None):
    """Modified Bessel function of the first kind, order 0."""
    return _finish(_bessel(input, "i0", "i0_vml"), out, input)


def i0e(input, *, out=None):
    """exp(-|x|) * i0(x)."""
    return _finish(_bessel(input, "i0e", "i0e"), out, input)


def i1(input, *, out=None):
    """Modified Bessel function of the first kind, order 1 (odd in x)."""
    return _finish(_bessel(input, "i1", "i1"), out, input)


def i1e(input, *, out=None):
    return _finish(_bessel(input, "i1e", "i1e"), out, input)


def modified_bessel_i0(input, *, out=None):
    return _finish(_bessel(input, "i0", "modified_bessel_i0", half=False, grad=False), out, input)


def modified_bessel_i1(input, *, out=None):
    return _finish(_bessel(input, "i1", "modified_bessel_i1", half=False, grad=False), out, input)


def _finish(r, out, *inputs):
    """r, or r written into out; `inputs` of an elementwise op: an out= partially overlapping one of
    them is refused, as torch's TensorIterator does."""
    if out is None:
        return r
    check_out_overlap(out, inputs)
    out.resize_(r.shape).copy_(r)
    return out


def ndtr(input, *, out=None):
    """The standard normal CDF."""
    x = _float(input, "ndtr")
    return _finish(0.5 * _E.erfc(-x / math.sqrt(2)), out)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def ndtri(input, *, out=None):
    """The inverse of ndtr (the normal quantile function)."""
    return _finish(_C._special_unary("ndtri", input), out, input)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def erfcx(input, *, out=None):
    """exp(x^2) * erfc(x), without its overflow and underflow (ops/special_unary.cpp)."""
    return _finish(_C._special_unary("erfcx", input), out, input)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def log_ndtr(input, *, out=None):
    """log(ndtr(x)), accurate in both tails."""
    return _finish(_C._special_unary("log_ndtr", input), out, input)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def entr(input, *, out=None):
    """-x ln x for x > 0, 0 at 0, -inf for x < 0 (ops/special_unary.cpp; torch's derivative -(1 + ln x))."""
    return _finish(_C._special_unary("entr", input), out, input)


def _check_int_range(*values):
    """torch's argument parser reads a Python int scalar as a 64-bit integer (signed, or unsigned above
    int64): beyond both it raises OverflowError."""
    for v in values:
        if isinstance(v, int) and not isinstance(v, bool):
            if v > 2 ** 64 - 1:
                raise OverflowError("int too big to convert")
            if v < -2 ** 63:
                raise OverflowError("can't convert negative int to unsigned")


def xlog1py(input, other, *, out=None):
    """x * log1p(y), 0 where x == 0 (unless y is nan)."""
    _check_int_range(input, other)
    if not isinstance(input, _E.Tensor):
        input = _E.tensor(input, dtype=other.dtype if other.is_floating_point() else _E.get_default_dtype())
    if not isinstance(other, _E.Tensor):
        other = _E.tensor(other, dtype=input.dtype if input.is_floating_point() else _E.get_default_dtype())
    dt = _E.result_type(input, other)
    _no_kernel_for(dt, "xlog1py", half=True)
    if not dt.is_floating_point:
        dt = _E.get_default_dtype()
    x, y = input.to(dt), other.to(dt)
    r = x * _E.log1p(y)
    return _finish(_E.where((x == 0) & ~_E.isnan(y), _E.zeros_like(r), r), out, input, other)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma of dimension p: p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)."""
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got {p})")
    if input.dtype == _E.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    _no_kernel_for(input.dtype, "arange", half=True)  # torch's formula starts from an arange in input's dtype
    input = _float(input)
    r = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        r = r + _E.lgamma(input - j / 2)
    return _finish(r, out)


mvlgamma = multigammaln


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (q + k)^-x (torch.special.zeta(x, q)); Cephes' series in
    ops/special_binary.cpp."""
    _check_int_range(input, other)
    if not isinstance(input, _E.Tensor):
        input = _E.tensor(float(input), dtype=other.dtype if other.is_floating_point() else _E.get_default_dtype())
    if not isinstance(other, _E.Tensor):
        other = _E.tensor(float(other), dtype=input.dtype if input.is_floating_point() else _E.get_default_dtype())
    return _C._special_binary("zeta", input, other, out)


def spherical_bessel_j0(input, *, out=None):
    """sin(x) / x, 1 at 0."""
    x = _float(input, "spherical_bessel_j0", half=False)
    safe = _E.where(x == 0, _E.ones_like(x), x)
    return _finish(_E.where(x == 0, _E.ones_like(x), _E.sin(safe) / safe), out, input)


# ---- orthogonal polynomials: P_n(x), n a number or a tensor (Note [Orthogonal polynomials]) ----

def _poly(x, n, name):
    """P_n(x) of the family `name` with torch's promotion and broadcasting of x and n."""
    if not isinstance(x, _E.Tensor):
        x = _E.tensor(x, dtype=n.dtype if isinstance(n, _E.Tensor) and n.is_floating_point()
                      else _E.get_default_dtype())
    if not isinstance(n, _E.Tensor):
        n = _E.tensor(n)
    dt = _E.result_type(x, n)
    _no_kernel_for(dt, name)
    if not dt.is_floating_point:
        dt = _E.get_default_dtype()
    x, n = _E.broadcast_tensors(x.to(dt), n.to(dt))
    # Note [Orthogonal polynomials] (ops/polynomials.cpp): one C++ kernel
    return _C._orthogonal_polynomial(name, x, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def chebyshev_polynomial_t(input, n, *, out=None):
    r = _poly(input, n, "chebyshev_polynomial_t")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def chebyshev_polynomial_u(input, n, *, out=None):
    r = _poly(input, n, "chebyshev_polynomial_u")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def chebyshev_polynomial_v(input, n, *, out=None):
    r = _poly(input, n, "chebyshev_polynomial_v")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def chebyshev_polynomial_w(input, n, *, out=None):
    r = _poly(input, n, "chebyshev_polynomial_w")
    return _finish(r, out, input, n)


def _shifted(fn):
    def shifted(input, n, *, out=None):
        x = input if isinstance(input, _E.Tensor) else _E.tensor(float(input))
        if out is not None:
            check_out_overlap(out, (input, n))
        return fn(2 * _float(x) - 1, n, out=out)
    shifted.__name__ = "shifted_" + fn.__name__
    return shifted


shifted_chebyshev_polynomial_t = _shifted(chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _shifted(chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _shifted(chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _shifted(chebyshev_polynomial_w)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def hermite_polynomial_h(input, n, *, out=None):
    """Physicists' Hermite polynomials: H_{k+1} = 2x H_k - 2k H_{k-1}."""
    r = _poly(input, n, "hermite_polynomial_h")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def hermite_polynomial_he(input, n, *, out=None):
    """Probabilists' Hermite polynomials: He_{k+1} = x He_k - k He_{k-1}."""
    r = _poly(input, n, "hermite_polynomial_he")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def laguerre_polynomial_l(input, n, *, out=None):
    """L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1)."""
    r = _poly(input, n, "laguerre_polynomial_l")
    return _finish(r, out, input, n)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def legendre_polynomial_p(input, n, *, out=None):
    """P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1)."""
    r = _poly(input, n, "legendre_polynomial_p")
    return _finish(r, out, input, n)


# ---- histograms ----

def _hist_edges(input, bins, range, dim_name="histogram"):
    if isinstance(bins, _E.Tensor):
        return bins
    if range is None:
        lo = input.min().item() if input.numel() else 0.0
        hi = input.max().item() if input.numel() else 0.0
    else:
        lo, hi = float(range[0]), float(range[1])
    if lo > hi:
        raise RuntimeError(f"{dim_name}: min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _E.linspace(lo, hi, bins + 1, dtype=input.dtype)


def _bin_index(x, edges):
    """Bin of each value (the last bin is closed), -1 outside the edges."""
    nb = edges.numel() - 1
    idx = _E.searchsorted(edges, x.contiguous(), right=True) - 1
    idx = _E.where(x == edges[-1], _E.full_like(idx, nb - 1), idx)
    inside = (x >= edges[0]) & (x <= edges[-1])
    return _E.where(inside, idx, _E.full_like(idx, -1))


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) of the flattened input; bins an int or a tensor of increasing edges."""
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{str(input.dtype)[6:]}'")
    if isinstance(bins, int) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    edges = _hist_edges(input, bins, range)
    x = input.reshape(-1)
    idx = _bin_index(x, edges)
    nb = edges.numel() - 1
    w = _E.ones_like(x) if weight is None else weight.reshape(-1).to(x.dtype)
    keep = idx >= 0
    hist = _E.zeros(nb, dtype=x.dtype).index_add(0, idx[keep], w[keep])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram((hist, edges))


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of N points in D dims (input (..., D)); bins an int, a list of ints or of edge tensors."""
    D = input.shape[-1]
    x = input.reshape(-1, D)
    if isinstance(bins, int):
        bins = [bins] * D
    edges = []
    for d in _builtin_range(D):
        r = None if range is None else (range[2 * d], range[2 * d + 1])
        edges.append(_hist_edges(x[:, d], bins[d], r, "histogramdd"))
    sizes = [e.numel() - 1 for e in edges]
    flat = _E.zeros(x.shape[0], dtype=_E.int64)
    keep = _E.ones(x.shape[0], dtype=_E.bool)
    for d in _builtin_range(D):
        i = _bin_index(x[:, d], edges[d])
        keep = keep & (i >= 0)
        flat = flat * sizes[d] + i.clamp(min=0)
    w = _E.ones(x.shape[0], dtype=x.dtype) if weight is None else weight.reshape(-1).to(x.dtype)
    n = 1
    for s in sizes:
        n *= s
    hist = _E.zeros(n, dtype=x.dtype).index_add(0, flat[keep], w[keep]).reshape(sizes)
    if density:
        vol = _E.ones((), dtype=x.dtype)
        for d, e in enumerate(edges):
            shape = [1] * D
            shape[d] = sizes[d]
            vol = vol * (e[1:] - e[:-1]).reshape(shape)
        hist = hist / (hist.sum() * vol)
    return return_types.histogramdd((hist, edges))


_builtin_range = range


# ---- gradient, index_reduce ----

def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided (order 1 or 2) at the edges; spacing a number, a list of
    numbers or a list of coordinate tensors, one per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(_builtin_range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.dim() for d in dims]
    if isinstance(spacing, (int, float)) or (isinstance(spacing, _E.Tensor) and spacing.dim() == 0):
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                           f"{len(dims)} but got a list of length {len(spacing)}")
    x = _float(input)
    outs = []
    for d, h in zip(dims, spacing):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1")
        f = lambda a, b: x.narrow(d, a, b - a)  # noqa: E731
        if isinstance(h, _E.Tensor) and h.dim() == 1:
            c = h.to(x.dtype)
            shape = [1] * x.dim()
            shape[d] = -1
            dx = (c[1:] - c[:-1])
            hl, hr = dx[:-1].reshape(shape), dx[1:].reshape(shape)
            inner = (hl * hl * f(2, n) - hr * hr * f(0, n - 2) + (hr * hr - hl * hl) * f(1, n - 1)) / (
                hl * hr * (hl + hr))
            h0, h1 = dx[0], dx[1] if n > 2 else dx[0]
            hn, hm = dx[-1], dx[-2] if n > 2 else dx[-1]
        else:
            h = float(h)
            inner = (f(2, n) - f(0, n - 2)) / (2 * h)
            h0 = h1 = hn = hm = h
        if edge_order == 1:
            first = (f(1, 2) - f(0, 1)) / h0
            last = (f(n - 1, n) - f(n - 2, n - 1)) / hn
        else:
            a = -(2 * h0 + h1) / (h0 * (h0 + h1))
            b = (h0 + h1) / (h0 * h1)
            c2 = -h0 / (h1 * (h0 + h1))
            first = a * f(0, 1) + b * f(1, 2) + c2 * f(2, 3)
            a = hn / (hm * (hm + hn))
            b = -(hn + hm) / (hm * hn)
            c2 = (2 * hn + hm) / (hn * (hm + hn))
            last = a * f(n - 3, n - 2) + b * f(n - 2, n - 1) + c2 * f(n - 1, n)
        outs.append(_E.cat([first, inner, last], d))
    return tuple(outs)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices along dim folded (prod, mean, amax, amin) into the slices index names."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (_E.int64, _E.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {str(index.dtype)[6:]}")
    if source.dim() == 0 and input.dim() > 0:  # torch reads source.size(dim) first
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = dim % max(input.dim(), 1)
    if input.dim() != source.dim() or any(a != b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    if source.dim() and source.shape[d] != index.numel():
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = -1
    idx = index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())
    return input.scatter_reduce(d, idx.to(_E.int64), source, reduce, include_self=include_self)


# ---- triangular and Cholesky solves (BLAS trsm in C++: ember._C._linalg.solve_triangular) ----

def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (left) or X A = B, A triangular (the other triangle is not read); a zero on the
    diagonal gives inf/nan, as BLAS trsm."""
    return _finish(_E._C._linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular), out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(solution, cloned_coefficient): X with op(A) X = b, op(A) = A or A^T (deprecated torch API)."""
    T = A.mT if transpose else A
    X = _E._C._linalg.solve_triangular(T, b, upper=upper != bool(transpose), unitriangular=unitriangular)
    return _finish(return_types.triangular_solve((X, A.clone())), out)


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B for A = L L^H (or U^H U with upper=True), given the factor (its other triangle unread)."""
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions instead")
    if L.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {L.shape[-2]} by {L.shape[-1]} matrices")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {torch_type_name(B.dtype)} "
                           f"and A of type {torch_type_name(L.dtype)} instead.")
    st = _E._C._linalg.solve_triangular
    if upper:  # A = U^H U: U^H Y = B, then U X = Y
        return _finish(st(L, st(L.mH, B, upper=False), upper=True), out)
    return _finish(st(L.mH, st(L, B, upper=False), upper=True), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (or U^H U) from its Cholesky factor."""
    if L.dim() < 2:
        raise RuntimeError(f"cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    n = L.shape[-1]
    eye = _E.eye(n, dtype=L.dtype).expand(L.shape)
    return _finish(cholesky_solve(eye, L, upper), out)


def nextafter(input, other, *, out=None):
    """The next representable float after input toward other (float32/float64, after type promotion)."""
    dt = _E.result_type(input, other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{torch_type_name(dt)}'")
    x, y = _E.broadcast_tensors(input.to(dt), other.to(dt))
    it = {_E.float16: _E.int16, _E.bfloat16: _E.int16, _E.float32: _E.int32}.get(x.dtype, _E.int64)
    tiny = _E.tensor(1, dtype=it).view(x.dtype)  # the smallest positive subnormal
    bits = x.contiguous().view(it)
    up = (y > x) == (x >= 0)  # moving away from zero: magnitude (and the bit pattern) grows
    moved = _E.where(up, bits + 1, bits - 1).view(x.dtype)
    r = _E.where(x == 0, _E.where(y > 0, tiny.expand(x.shape), -tiny.expand(x.shape)), moved)
    r = _E.where(x == y, y, r)
    r = _E.where(_E.isnan(x) | _E.isnan(y), x + y, r)
    return _finish(r, out, input, other)


# ---- LU: LAPACK getrf / getrs in C++ (ember._C._linalg.lu_factor_ex, lu_unpack, lu_solve) ----

def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) with A = P L U from lu_factor's result."""
    from ember.linalg import _lu_unpack_result
    return _finish(_lu_unpack_result(*_E._C._linalg.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)), out)


def lu_solve_linalg(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (A^H X = B with adjoint; X A = B with left=False) for A given by lu_factor."""
    return _finish(_E._C._linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint), out)


def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (A_LU, pivots) or (A_LU, pivots, infos); deprecated in torch for linalg.lu_factor."""
    LU, piv, info = _E._C._linalg.lu_factor_ex(A, pivot, False, "torch.lu")  # a zero pivot is no error here
    return _finish((LU, piv, info) if get_infos else (LU, piv), out)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots): X with A X = b."""
    return lu_solve_linalg(LU_data, LU_pivots, b, out=out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) @ other (left) or other @ op(Q), Q = H_1 ... H_k from geqrf's (input, tau); op(Q) = Q^H with
    transpose=True. Q is formed with linalg.householder_product (differentiable), padded to square."""
    from ember import linalg
    if input.dim() < 2 or other.dim() < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"torch.ormqr: input.dim() - 1 must be equal to tau.dim(), but got "
                           f"{input.dim() - 1} and {tau.dim()}")
    m = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2], but "
                           f"got {m} and {input.shape[-2]}")
    if tau.shape[-1] > m:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-2]")
    k = input.shape[-1]
    if k < m:
        pad = _E.zeros(tuple(input.shape[:-1]) + (m - k,), dtype=input.dtype)
        square = _E.cat([input, pad], -1)
    else:
        square = input[..., :m]
    Q = linalg.householder_product(square, tau)
    if transpose:
        Q = Q.mH
    return _finish(Q @ other if left else other @ Q, out)


# ---- Bessel K (modified, second kind) and J/Y (first and second kind), orders 0 and 1 ----

def modified_bessel_k0(input, *, out=None):
    return _finish(_bessel(input, "k0", "modified_bessel_k0", half=False, grad=False), out, input)


def modified_bessel_k1(input, *, out=None):
    return _finish(_bessel(input, "k1", "modified_bessel_k1", half=False, grad=False), out, input)


def scaled_modified_bessel_k0(input, *, out=None):
    """exp(x) K_0(x)."""
    return _finish(_bessel(input, "k0e", "scaled_modified_bessel_k0", half=False, grad=False), out, input)


def scaled_modified_bessel_k1(input, *, out=None):
    return _finish(_bessel(input, "k1e", "scaled_modified_bessel_k1", half=False, grad=False), out, input)


def bessel_j0(input, *, out=None):
    return _finish(_bessel(input, "j0", "bessel_j0", half=False, grad=False), out, input)


def bessel_j1(input, *, out=None):
    return _finish(_bessel(input, "j1", "bessel_j1", half=False, grad=False), out, input)


def bessel_y0(input, *, out=None):
    return _finish(_bessel(input, "y0", "bessel_y0", half=False, grad=False), out, input)


def bessel_y1(input, *, out=None):
    return _finish(_bessel(input, "y1", "bessel_y1", half=False, grad=False), out, input)


@_vmap_elementwise
def airy_ai(input, *, out=None):
    """The Airy function Ai(x) (Note [airy_ai] in ops/special_unary.cpp); no gradient, as torch."""
    if not isinstance(input, _E.Tensor):
        raise TypeError(f"special_airy_ai(): argument 'x' (position 1) must be Tensor, not {type(input).__name__}")
    return _finish(_C._special_unary("airy_ai", input), out, input)

# ---- randomized low-rank SVD / PCA (Halko, Martinsson and Tropp's range finder with power iterations) ----

def _range_finder(A, q, niter, M=None):
    """An orthonormal basis Q (*, m, q) of the range of A - M, refined by niter power iterations."""
    from ember import linalg
    X = A if M is None else A - M
    R = _E.randn(tuple(X.shape[:-2]) + (X.shape[-1], q), dtype=X.dtype)
    Q = linalg.qr(X @ R).Q
    for _ in range(niter):
        Q = linalg.qr(X.mH @ Q).Q
        Q = linalg.qr(X @ Q).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of an approximate rank-q SVD, A - M ~ U diag(S) V^H (V, not V^H, as torch)."""
    from ember import linalg
    if q is None:
        q = 6
    m, n = A.shape[-2], A.shape[-1]
    X = A if M is None else A - M
    if m < n:  # work on the tall side
        V, S, U = svd_lowrank(X.mH, q, niter)
        return U, S, V
    Q = _range_finder(X, q, niter)
    B = Q.mH @ X
    Ub, S, Vh = linalg.svd(B, full_matrices=False)
    return Q @ Ub, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A's rows (columns centered unless center=False)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A, q, niter, M=A.mean(-2, keepdim=True))


_SEGMENT = {"sum": ("sum", 0.0), "mean": ("mean", math.nan), "max": ("amax", -math.inf), "min": ("amin", math.inf),
            "prod": ("prod", 1.0)}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduces consecutive segments of data along axis (segment i has lengths[i] elements, or runs from
    offsets[i] to offsets[i+1]); `initial` joins every segment; empty segments hold initial, or sum 0, prod 1,
    max -inf, min inf, mean nan."""
    if reduce not in _SEGMENT:
        raise RuntimeError(f"segment_reduce(): unsupported reduction {reduce}; expected one of "
                           f"{', '.join(_SEGMENT)}")
    if indices is not None:
        raise NotImplementedError("segment_reduce(): indices is not supported yet; use lengths or offsets")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths is None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if lengths.dim() != 1:
        raise NotImplementedError("segment_reduce(): only 1-d lengths/offsets are supported")
    axis = axis % max(data.dim(), 1)
    if axis != lengths.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if int(lengths.sum()) != data.shape[axis]:
        raise RuntimeError(f"segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths"
                           f".dim()-1) when !unsafe.")
    how, empty = _SEGMENT[reduce]
    nseg = lengths.numel()
    ids = _E.repeat_interleave(_E.arange(nseg), lengths.to(_E.int64))
    shape = [1] * data.dim()
    shape[axis] = -1
    idx = ids.reshape(shape).expand(data.shape)
    out_shape = list(data.shape)
    out_shape[axis] = nseg
    if reduce == "mean":  # torch: (sum + initial) / count, initial alone for an empty segment
        total = segment_reduce(data, "sum", lengths=lengths, axis=axis, initial=initial)
        count = lengths.to(data.dtype)
        if initial is not None:
            count = count.clamp(min=1)
        shape_c = [1] * data.dim()
        shape_c[axis] = -1
        return total / count.reshape(shape_c)
    start = _E.full(out_shape, empty if initial is None else initial, dtype=data.dtype)
    return start.scatter_reduce(axis, idx, data, how, include_self=initial is not None)


# Wrong argument types raise TypeError as torch does (ember/_argcheck.py).
from ember._argcheck import tensor_args as _tensor_args  # noqa: E402

_tensor_args(globals(), """i0 i0e i1 i1e modified_bessel_i0 modified_bessel_i1 ndtr ndtri erfcx log_ndtr entr multigammaln spherical_bessel_j0
    modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 bessel_j0 bessel_j1
    bessel_y0 bessel_y1 cholesky_inverse lu_unpack histogram histogramdd gradient""".split())
_tensor_args(globals(), """xlog1py zeta chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v
    chebyshev_polynomial_w shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
    shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l
    legendre_polynomial_p""".split(), positions=(0, 1), any_of=True)
_tensor_args(globals(), ["nextafter", "cholesky_solve", "solve_triangular", "triangular_solve", "lu_solve"],
             positions=(0, 1))
_tensor_args(globals(), ["index_reduce"], positions=(0, 2, 3))
mvlgamma = multigammaln  # the alias, after the check was added
