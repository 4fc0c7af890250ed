"""torch functions that are aliases of ember ops or short compositions of them, written in Python.

Autograd flows through the ops they are built from. Each is checked against torch in
tests/python/test_composite.py.
"""
import math
import warnings

import ember as _E
from ember import _C
from ember._api_math import _vmap_elementwise
from ember._argcheck import torch_type_name

# ---- aliases (torch's alternative names) ----
divide = _E.div
multiply = _E.mul
subtract = _E.sub
greater, greater_equal, less, less_equal, not_equal = _E.gt, _E.ge, _E.lt, _E.le, _E.ne


def cross(input, other, dim=None, *, out=None):
    """torch.cross: linalg.cross, except that dim=None takes the first dim of size 3 (deprecated)."""
    from ember import linalg
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated. Please either pass the "
                      "dim explicitly or simply use torch.linalg.cross.", UserWarning, stacklevel=2)
        shape = _E.broadcast_shapes(input.shape, other.shape)
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return linalg.cross(input, other, dim=dim, out=out)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along dim (logical xor for bool), after concatenating prepend/append."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for p in (prepend, append):
        if p is not None and p.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = _E.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        hi, lo = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = _E.logical_xor(hi, lo) if x.dtype == _E.bool else _E.sub(hi, lo)
    return x.clone() if x is input else x  # n = 0: a copy, as torch's


def _need_tensor(name, other):
    if not isinstance(other, _C.Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _log_add_exp(name, input, other, out):
    """log(exp(a) + exp(b)) (base 2 for logaddexp2) in ops/special_binary.cpp (Note [logaddexp])."""
    _need_tensor(name, other)
    if input.is_complex() or other.is_complex():
        raise NotImplementedError(f"{name}: complex tensors are not supported by ember yet")
    return _C._special_binary(name, input, other, out)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def logaddexp(input, other, *, out=None):
    return _log_add_exp("logaddexp", input, other, out)


@_vmap_elementwise  # a C++ kernel: vmap runs it on the whole batch at once
def logaddexp2(input, other, *, out=None):
    return _log_add_exp("logaddexp2", input, other, out)


def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input is 0 (unless other is NaN)."""
    if not isinstance(input, _C.Tensor) and not isinstance(other, _C.Tensor):
        raise TypeError("xlogy(): expected at least one Tensor argument")
    x = input if isinstance(input, _C.Tensor) else _E.tensor(input)
    y = other if isinstance(other, _C.Tensor) else _E.tensor(other)
    prod = _E.mul(x, _E.log(y))
    zero = _E.logical_and(_E.eq(x, 0), _E.logical_not(_E.isnan(y)))
    return _finish(_E.where(zero, _E.zeros_like(prod), prod), out)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in `test_elements` (sort + searchsorted)."""
    if not isinstance(elements, _C.Tensor) and not isinstance(test_elements, _C.Tensor):
        raise TypeError("isin(): expected at least one Tensor argument")
    e = elements if isinstance(elements, _C.Tensor) else _E.tensor(elements)
    t = test_elements if isinstance(test_elements, _C.Tensor) else _E.tensor(test_elements)
    if e.is_complex() or t.is_complex():
        raise NotImplementedError("isin() is not implemented for complex tensors")
    dt = _E.result_type(e, t)
    e, t = e.to(dt), t.reshape(-1).to(dt)
    if t.is_floating_point():  # NaN matches nothing; dropped so the sorted search stays monotone
        t = t[_E.logical_not(_E.isnan(t))]
    if t.numel() == 0:
        found = _E.zeros_like(e, dtype=_E.bool)
    else:
        s = _E.sort(t).values
        idx = _E.clamp(_E.searchsorted(s, e.reshape(-1)), max=s.numel() - 1)
        found = _E.eq(s[idx], e.reshape(-1)).reshape(e.shape)
    return _E.logical_not(found) if invert else found


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    if input.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    r = _E.where(_E.eq(input, 0), values, _E.gt(input, 0).to(input.dtype))
    return _finish(r, out)


def _split_dim(name, input, sections, dim, need):
    if input.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                           f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!")
    return _E.tensor_split(input, sections, dim)


def hsplit(input, sections):
    return _split_dim("hsplit", input, sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input, sections):
    return _split_dim("vsplit", input, sections, 0, 2)


def dsplit(input, sections):
    return _split_dim("dsplit", input, sections, 2, 3)


def column_stack(tensors, *, out=None):
    """Stack 0-d/1-d tensors as columns, 2-d+ tensors as they are, along dim 1."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return _finish(_E.hstack(cols), out)


def block_diag(*tensors):
    """Block-diagonal matrix of 0-d, 1-d (one row) and 2-d tensors."""
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return _E.empty(1, 0)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _E.promote_types(dt, m.dtype)
    total = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        c = m.shape[1]
        rows.append(_E.cat([_E.zeros(m.shape[0], left, dtype=dt), m.to(dt),
                            _E.zeros(m.shape[0], total - left - c, dtype=dt)], 1))
        left += c
    return _E.cat(rows, 0)


def _tri_indices(row, col, offset, dtype, upper):
    if dtype not in (_E.int32, _E.int64):
        name = "triu_indices" if upper else "tril_indices"
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_type_name(dtype)}'")
    return _C._tri_indices(row, col, offset, dtype, upper)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, dtype or _E.int64, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, dtype or _E.int64, True)


def deg2rad(input, *, out=None):
    if input.is_complex():
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _finish(_E.mul(input, math.pi / 180), out)


def rad2deg(input, *, out=None):
    if input.is_complex():
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _finish(_E.mul(input, 180 / math.pi), out)


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (gradient 0 there)."""
    x = input if input.is_floating_point() or input.is_complex() else input.to(_E.get_default_dtype())
    zero = _E.eq(x, 0)
    px = _E.mul(_E.where(zero, _E.ones_like(x), x), math.pi)
    return _finish(_E.where(zero, _E.ones_like(x), _E.div(_E.sin(px), px)), out)


def inner(input, other, *, out=None):
    """Sum over the last dims of both (a product when either is 0-d)."""
    if input.dim() == 0 or other.dim() == 0:
        return _finish(_E.mul(input, other), out)
    return _finish(_E.tensordot(input, other, ([-1], [-1])), out)


def float_power(input, exponent, *, out=None):
    """pow in double precision (complex128 when either side is complex)."""
    def is_c(v):
        return v.is_complex() if isinstance(v, _C.Tensor) else isinstance(v, complex)
    dt = _E.complex128 if is_c(input) or is_c(exponent) else _E.float64
    a = input.to(dt) if isinstance(input, _C.Tensor) else input
    b = exponent.to(dt) if isinstance(exponent, _C.Tensor) else exponent
    if not isinstance(a, _C.Tensor):
        return _finish(_E.pow(_E.full_like(b, a), b), out)
    return _finish(_E.pow(a, b), out)


def matrix_power(input, n):
    return _E.linalg.matrix_power(input, n)


def pinverse(input, rcond=1e-15):
    return _E.linalg.pinv(input, rtol=rcond)


def dist(input, other, p=2):
    from ember import linalg
    return linalg.vector_norm(_E.sub(input, other), p)


def diagflat(input, offset=0):
    return _E.diag(input.reshape(-1), offset)


def _trapezoid(y, x, dx, dim, reduce):
    """The trapezoid rule along dim, summed by `reduce` (sum: the integral, cumsum: its running form)."""
    n = y.shape[dim]
    avg = _E.add(y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1))
    if x is None:
        return _E.mul(reduce(avg, dim), (1.0 if dx is None else dx) / 2)
    d = diff(x, dim=dim if x.dim() > 1 else -1)
    if x.dim() == 1:
        d = d.reshape([-1 if i == dim % y.dim() else 1 for i in range(y.dim())])
    return _E.div(reduce(_E.mul(avg, d), dim), 2)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Trapezoid rule along dim, with sample points x (tensor) or spacing dx."""
    if y.shape[dim] == 0:
        return _E.sum(y, dim)
    if x is None:  # evenly spaced: (sum - the ends' halves) * dx, one pass over y instead of three
        ends = _E.mul(_E.add(y.select(dim, 0), y.select(dim, -1)), 0.5)
        r = _E.sub(_E.sum(y, dim), ends)
        return r if dx is None else _E.mul(r, dx)
    return _trapezoid(y, x, dx, dim, _E.sum)


trapz = trapezoid


def logdet(input):
    """log(det(A)): NaN for a negative real determinant, -inf for a singular matrix."""
    from ember import linalg
    sign, logabs = linalg.slogdet(input)
    if input.is_complex():
        return _E.add(logabs, _E.log(sign))
    return _E.where(_E.lt(sign, 0), _E.full_like(logabs, math.nan), logabs)


def is_nonzero(input):
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def isreal(input):
    if not input.is_complex():
        return _E.ones_like(input, dtype=_E.bool)
    return _E.eq(_E.imag(input), 0)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    outer = _E.mul(vec1.unsqueeze(1), vec2.unsqueeze(0))
    r = _E.mul(outer, alpha) if alpha != 1 else outer
    if beta != 0:
        r = _E.add(_E.mul(input, beta) if beta != 1 else input, r)
    else:
        r = _E.add(_E.zeros_like(input), r)
    return _finish(r, out)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M)."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {torch_type_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    big = x1.shape[-2] > 25 or x2.shape[-2] > 25
    if p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                   (compute_mode == "use_mm_for_euclid_dist_if_necessary" and big)):
        if x1.dtype != x2.dtype:
            c_name = {_E.float32: "float", _E.float64: "double"}
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {c_name.get(x1.dtype)} != "
                               f"{c_name.get(x2.dtype)}")
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b in one matmul of [-2a, |a|^2, 1] by [b, 1, |b|^2], as torch's mm
        # modes (the pairwise differences would be a (P, R, M) tensor: 1 GB for 500 x 500 rows of 1000), then
        # clamped to 1e-30 before the root in place (five passes over the result took 1.2x torch's time).
        sq1 = _E.sum(_E.mul(x1, x1), -1, keepdim=True)
        sq2 = _E.sum(_E.mul(x2, x2), -1, keepdim=True)
        a = _E.cat([_E.mul(x1, -2), sq1, _E.ones_like(sq1)], -1)
        b = _E.cat([x2, _E.ones_like(sq2), sq2], -1)
        return _E.matmul(a, b.mT).clamp_min_(1e-30).sqrt_()
    # the direct form (ops/distance.cpp, Note [pdist]) on the broadcast batch
    s1, s2 = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    for k in range(1, min(len(s1), len(s2)) + 1):
        if s1[-k] != s2[-k] and s1[-k] != 1 and s2[-k] != 1:
            raise RuntimeError(f"The size of tensor a ({s1[-k]}) must match the size of tensor b ({s2[-k]}) at "
                               f"non-singleton dimension {max(len(s1), len(s2)) - k}")
    if s1 != s2:
        batch = _E.broadcast_shapes(s1, s2)
        x1, x2 = x1.expand(*batch, *x1.shape[-2:]), x2.expand(*batch, *x2.shape[-2:])
    return _C._cdist(x1, x2, float(p))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows of input (variables) over its columns (observations)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_E.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.is_floating_point() or fweights.is_complex():
            raise RuntimeError("cov(): expected fweights to have integral dtype")
        w = fweights
    if aweights is not None:
        if not aweights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype")
        w = aweights if w is None else _E.mul(w, aweights)
    if w is None:
        avg = _E.mean(x, 1, keepdim=True)
        wsum = float(n)
        norm = wsum - correction
    else:
        w = w.to(x.dtype) if not w.is_complex() else w
        wsum = _E.sum(w)
        avg = _E.div(_E.sum(_E.mul(x, w), 1, keepdim=True), wsum)
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = _E.sub(wsum, correction)
        else:
            norm = _E.sub(wsum, _E.div(_E.mul(_E.sum(_E.mul(w, aweights)), correction), wsum))
    xc = _E.sub(x, avg)
    xw = xc if w is None else _E.mul(xc, w)
    c = _E.matmul(xw, xc.mT.conj() if xc.is_complex() else xc.mT)
    if isinstance(norm, float):
        c = _E.div(c, norm if norm > 0 else 0.0)
    else:
        c = _E.div(c, _E.clamp(norm, min=0))
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of input, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return _E.div(c, c)
    d = _E.sqrt(_E.diagonal(c).real if c.is_complex() else _E.diagonal(c))
    c = _E.div(_E.div(c, d.unsqueeze(1)), d.unsqueeze(0))
    if c.is_complex():
        return _E.complex(_E.clamp(c.real, -1, 1), _E.clamp(c.imag, -1, 1))
    return _E.clamp(c, -1, 1)


def vander(x, N=None, increasing=False):
    """Vandermonde matrix: columns x**0 .. x**(N-1) (reversed unless increasing)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = _E.promote_types(x.dtype, _E.int64)
    p = _E.arange(n).to(dt)
    r = _E.pow(x.to(dt).unsqueeze(1), p.unsqueeze(0)) if n else _E.empty(x.shape[0], 0, dtype=dt)
    return r if increasing else r.flip(1)


def unravel_index(indices, shape):
    """The coordinates of flat indices (taken modulo the size, as torch) in an array of the given shape."""
    if isinstance(shape, int):
        shape = (shape,)
    indices = indices if isinstance(indices, _C.Tensor) else _E.tensor(indices)
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == _E.bool:
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(indices.dtype)[6:])
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    total = 1
    for s in shape:
        total *= s
    flat = _E.remainder(indices.to(_E.int64), total) if total else indices.to(_E.int64)
    out = []
    for s in reversed(shape):
        out.append(_E.remainder(flat, s) if s else flat)
        flat = _E.floor_divide(flat, s) if s else flat
    return tuple(reversed(out))


def _gcd(a, b):
    a, b = _E.abs(a), _E.abs(b)
    while _E.any(_E.ne(b, 0)).item():
        nz = _E.ne(b, 0)
        safe = _E.where(nz, b, _E.ones_like(b))
        a, b = _E.where(nz, b, a), _E.where(nz, _E.remainder(a, safe), b)
    return a


def gcd(input, other, *, out=None):
    """Greatest common divisor, elementwise (integer dtypes; gcd(0, 0) = 0)."""
    if input.is_floating_point() or other.is_floating_point() or input.is_complex() or other.is_complex():
        raise NotImplementedError("\"gcd_cpu\" not implemented for '" + str(_E.result_type(input, other))[6:] + "'")
    a, b = _E.broadcast_tensors(input, other)
    dt = _E.result_type(input, other)
    return _finish(_gcd(a.to(dt), b.to(dt)), out)


def lcm(input, other, *, out=None):
    """Least common multiple, elementwise (integer dtypes; 0 if either is 0)."""
    g = gcd(input, other)
    a, b = _E.broadcast_tensors(input, other)
    safe = _E.where(_E.eq(g, 0), _E.ones_like(g), g)
    return _finish(_E.abs(_E.mul(_E.floor_divide(a.to(g.dtype), safe), b.to(g.dtype))), out)


def _scatter_into(input, src, view_of, what):
    out = input.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"{what}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src."""
    idx = (slice(None),) * (dim % max(input.dim(), 1)) + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[idx], "slice_scatter")


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")


def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm is scaled down to norm maxnorm."""
    if input.is_complex():
        raise RuntimeError("renorm: Expected a floating point input")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = dim % max(input.dim(), 1)
    others = [i for i in range(input.dim()) if i != d]
    norm = _E.linalg.vector_norm(input, p, dim=others, keepdim=True) if others else _E.abs(input)
    # (the factor's dependence on the norm is part of the gradient, as torch's; detaching it was wrong)
    factor = _E.where(_E.gt(norm, maxnorm), _E.div(maxnorm, _E.add(norm, 1e-7)), _E.ones_like(norm))
    return _E.mul(input, factor)


def ldexp(input, other, *, out=None):
    """input * 2**other, in a floating type."""
    dt = _E.promote_types(_E.result_type(input, other), _E.get_default_dtype())
    return _finish(_E.mul(input, _E.exp2(other.to(dt))), out)


def frexp(input, *, out=None):
    """(mantissa in [0.5, 1) with input's sign, int32 exponent) such that input = mantissa * 2**exponent."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.to(_E.float64)
    finite_nz = _E.logical_and(_E.isfinite(x), _E.ne(x, 0))
    safe = _E.where(finite_nz, _E.abs(x), _E.ones_like(x))
    e = _E.add(_E.floor(_E.log2(safe)), 1)
    m = _E.div(x, _E.exp2(e))
    big = _E.ge(_E.abs(m), 1)  # log2 rounded up
    m, e = _E.where(big, _E.div(m, 2), m), _E.where(big, _E.add(e, 1), e)
    small = _E.logical_and(finite_nz, _E.lt(_E.abs(m), 0.5))
    m, e = _E.where(small, _E.mul(m, 2), m), _E.where(small, _E.sub(e, 1), e)
    m = _E.where(finite_nz, m, x).to(input.dtype)
    e = _E.where(finite_nz, e, _E.zeros_like(e)).to(_E.int32)
    r = _E.return_types.frexp((m, e)) if hasattr(_E.return_types, "frexp") else (m, e)
    if out is not None:
        out[0].copy_(m)
        out[1].copy_(e)
        return out
    return r


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Running trapezoid-rule integral along dim (one element shorter than y there)."""
    if y.shape[dim] == 0:
        return y.narrow(dim, 0, 0)
    return _trapezoid(y, x, dx, dim, _E.cumsum)


def pdist(input, p=2):
    """p-norm distances between the rows of a 2-d input, pairs i < j in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return _C._pdist(input, p)  # Note [pdist] (ops/distance.cpp)


def _finish(r, out):
    if out is None:
        return r
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    out.copy_(r)
    return out


# Names exported as ember.<name>; the Tensor methods are attached below.
__all__ = ["divide", "multiply", "subtract", "greater", "greater_equal", "less", "less_equal", "not_equal",
           "cross", "diff", "logaddexp", "logaddexp2", "xlogy", "isin", "heaviside", "hsplit", "vsplit", "dsplit",
           "column_stack", "block_diag", "tril_indices", "triu_indices", "deg2rad", "rad2deg", "sinc", "inner",
           "float_power", "dist", "diagflat", "trapezoid", "trapz", "logdet", "is_nonzero", "isreal", "addr",
           "cdist", "matrix_power", "pinverse", "cov", "corrcoef", "vander", "unravel_index", "gcd", "lcm", "slice_scatter", "select_scatter", "diagonal_scatter", "renorm", "ldexp", "frexp", "cumulative_trapezoid", "pdist"]

_METHODS = ["cross", "diff", "logaddexp", "logaddexp2", "xlogy", "heaviside", "hsplit", "vsplit", "dsplit",
            "deg2rad", "rad2deg", "sinc", "inner", "float_power", "dist", "diagflat", "logdet", "is_nonzero",
            "isreal", "addr", "cov", "corrcoef", "gcd", "lcm", "slice_scatter", "select_scatter", "diagonal_scatter",
            "renorm", "ldexp", "frexp"]


def _attach():
    T = _C.Tensor
    for name in _METHODS:
        if not hasattr(T, name):
            setattr(T, name, globals()[name])
    # The aliases and their in-place forms: the method of the op they alias.
    for alias, op in [("divide", "div"), ("multiply", "mul"), ("subtract", "sub"), ("greater", "gt"),
                      ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"),
                      ("divide_", "div_"), ("multiply_", "mul_"), ("subtract_", "sub_"), ("greater_", "gt_"),
                      ("greater_equal_", "ge_"), ("less_", "lt_"), ("less_equal_", "le_"), ("not_equal_", "ne_")]:
        if hasattr(T, op) and not hasattr(T, alias):
            setattr(T, alias, getattr(T, op))

    # In-place forms: compute out of place, then write back (the result must be castable to self's dtype).
    def inplace(name, fn):
        def method(self, *args, **kwargs):
            r = fn(self, *args, **kwargs)
            if not _E.can_cast(r.dtype, self.dtype):
                raise RuntimeError(f"result type {str(r.dtype)[6:]} can't be cast to the desired output type "
                                   f"{str(self.dtype)[6:]}")
            return self.copy_(r)
        method.__name__ = name
        return method

    g = globals()
    for name in ("deg2rad", "rad2deg", "sinc", "xlogy", "heaviside", "gcd", "lcm", "ldexp", "renorm", "addr"):
        if not hasattr(T, name + "_"):
            setattr(T, name + "_", inplace(name + "_", g[name]))

    def float_power_(self, exponent):
        if self.dtype not in (_E.float64, _E.complex128):
            raise RuntimeError(f"the base given to float_power_ has dtype {str(self.dtype)[6:]} but the operation's "
                               f"result requires dtype {'complex128' if self.is_complex() else 'float64'}")
        return self.copy_(float_power(self, exponent))
    T.float_power_ = float_power_
    for name in ("addmm", "addmv", "baddbmm", "addbmm"):
        if not hasattr(T, name + "_"):
            setattr(T, name + "_", inplace(name + "_", getattr(_E, name)))


_attach()
