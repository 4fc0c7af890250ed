"""ember.fft: discrete Fourier transforms with torch.fft's API.

Every transform is one or two calls of three C++ primitives (csrc/ember/ops/fft.h, computed by
FFTW): complex-to-complex, real-to-complex (one-sided) and complex-to-real, each over any set of
dims, with a normalization mode (none, 1/sqrt(n), 1/n). This module does what torch does around
them: dtype promotion (integers to the default float dtype), the `n`/`s` zero-padding or
trimming, the choice of `dim`, the `norm` names and torch's argument errors. Gradients (reverse
and forward mode) come from the primitives and from the padding/trimming ops around them.
"""
import math as _math
import operator as _operator

import ember
from ember import _C
from ember._argcheck import torch_type_name as _type_name

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

# Normalization modes of the primitives (torch's fft_norm_mode).
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward):
    """The primitive's normalization for a transform in the given direction (torch's norm names)."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    if not isinstance(norm, str):
        raise TypeError(f"argument 'norm' must be str or None, not {type(norm).__name__}")
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _int_arg(v, fname, argname):
    if isinstance(v, bool) or isinstance(v, float) or not hasattr(v, "__index__"):
        raise TypeError(f"fft_{fname}(): argument '{argname}' must be int, not {type(v).__name__}")
    return _operator.index(v)


def _ints_arg(v, fname, argname):
    """An int or a sequence of ints (torch's IntArrayRef arguments)."""
    if hasattr(v, "__index__") and not isinstance(v, bool) and not isinstance(v, ember.Tensor):
        return [_operator.index(v)]
    try:
        items = list(v)
    except TypeError:
        raise TypeError(f"fft_{fname}(): argument '{argname}' must be tuple of ints, not {type(v).__name__}") from None
    for x in items:
        if isinstance(x, (bool, float)) or not hasattr(x, "__index__"):
            raise TypeError(f"fft_{fname}(): argument '{argname}' must be tuple of ints, not {type(v).__name__}")
    return [_operator.index(x) for x in items]


def _input(x, fname):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _promote(x, require_complex=False):
    """torch's promotion for FFTs: integers and bool compute in the default float dtype; half
    precision is not supported on CPU; complex transforms of real input take the complex dtype."""
    dt = x.dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        x = x.to(ember.get_default_dtype())
    elif dt not in (ember.float32, ember.float64):
        raise RuntimeError(f"Unsupported dtype {_type_name(dt)}")
    if require_complex:
        x = x.to(ember.complex128 if x.dtype == ember.float64 else ember.complex64)
    return x


def _require_real(x, fname):
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {_type_name(x.dtype)}")


def _resize(x, dims, sizes):
    """Zero-pads or trims x to `sizes` along `dims` (at the end, as torch)."""
    for d, s in zip(dims, sizes):
        n = x.shape[d]
        if s < n:
            x = x.narrow(d, 0, s)
        elif s > n:
            shape = list(x.shape)
            shape[d] = s - n
            x = ember.cat([x, ember.zeros(shape, dtype=x.dtype)], d)
    return x


def _finish(result, out, fname):
    if out is None:
        return result
    if not isinstance(out, ember.Tensor):
        raise TypeError(f"fft_{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_type_name(result.dtype)}, but got "
                           f"{_type_name(out.dtype)} instead")
    with ember.no_grad():
        out.resize_(result.shape)
        out.copy_(result)
    return out


# ---- one-dimensional transforms ----

def _one_dim(x, n, dim, fname):
    """Common argument handling: (input, wrapped dim, n or None)."""
    x = _input(x, fname)
    dim = _int_arg(dim, fname, "dim")
    if n is not None:
        n = _int_arg(n, fname, "n")
    return x, dim, n


def _c2c_1d(x, n, dim, norm, forward, fname, out):
    x, dim, n = _one_dim(x, n, dim, fname)
    x = _promote(x)
    d = _wrap(dim, x.dim())
    n = x.shape[d] if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n])
    mode = _norm_mode(norm, forward)
    if x.dtype.is_complex:
        r = _C._fft_c2c(x, [d], mode, forward)
    else:  # a real signal: its full spectrum from r2c (conjugated for the inverse direction)
        r = _C._fft_r2c(x, [d], mode, False)
        if not forward:
            r = r.conj()
    return _finish(r, out, fname)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform of input along dim (zero-padded or trimmed to n)."""
    return _c2c_1d(input, n, dim, norm, True, "fft", out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform."""
    return _c2c_1d(input, n, dim, norm, False, "ifft", out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Fourier transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    x, dim, n = _one_dim(input, n, dim, "rfft")
    _require_real(x, "rfft")
    x = _promote(x)
    d = _wrap(dim, x.dim())
    n = x.shape[d] if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n])
    return _finish(_C._fft_r2c(x, [d], _norm_mode(norm, True), True), out, "rfft")


def _c2r_1d(x, n, dim, norm, forward, fname, out):
    x, dim, n = _one_dim(x, n, dim, fname)
    x = _promote(x, require_complex=True)
    d = _wrap(dim, x.dim())
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n // 2 + 1])
    if forward:  # hfft: the forward transform of a Hermitian signal is c2r of its conjugate
        x = x.conj()
    return _finish(_C._fft_c2r(x, [d], _norm_mode(norm, forward), n), out, fname)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of rfft: a real signal of length n (default 2 * (m - 1)) from m half-spectrum values."""
    return _c2r_1d(input, n, dim, norm, False, "irfft", out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Fourier transform of a Hermitian-symmetric signal given by its first half: a real result."""
    return _c2r_1d(input, n, dim, norm, True, "hfft", out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of hfft: the n // 2 + 1 first values of the inverse transform of a real signal."""
    x, dim, n = _one_dim(input, n, dim, "ihfft")
    _require_real(x, "ihfft")
    x = _promote(x)
    d = _wrap(dim, x.dim())
    n = x.shape[d] if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n])
    return _finish(_C._fft_r2c(x, [d], _norm_mode(norm, False), True).conj(), out, "ihfft")


# ---- N-dimensional transforms ----

def _shape_and_dims(x, s, dim, fname):
    """torch's rules for (s, dim): dims wrapped and unique; s without dim covers the last len(s)
    dims; no s: the input's sizes; an s entry of -1 keeps the input's size."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in _ints_arg(dim, fname, "dim")]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = _ints_arg(s, fname, "s")
        if dims is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if dims is None:
            if len(s) > ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if v == -1 else v for v, d in zip(s, dims)]
    else:
        if dims is None:
            dims = list(range(ndim))
        shape = [x.shape[d] for d in dims]
    for v in shape:
        _check_points(v)
    return shape, dims, s


def _c2c_nd(x, s, dim, norm, forward, fname, out):
    x = _input(x, fname)
    shape, dims, _ = _shape_and_dims(x, s, dim, fname)
    x = _resize(_promote(x), dims, shape)
    mode = _norm_mode(norm, forward)
    if x.dtype.is_complex:
        r = _C._fft_c2c(x, dims, mode, forward)
    elif not dims:
        r = x.to(ember.complex128 if x.dtype == ember.float64 else ember.complex64)
    else:
        r = _C._fft_r2c(x, dims, mode, False)
        if not forward:
            r = r.conj()
    return _finish(r, out, fname)


def _r2c_nd(x, s, dim, norm, forward, fname, out):
    x = _input(x, fname)
    base = fname.replace("2", "n")  # torch's messages name the N-d function
    if forward and x.dtype.is_complex:
        raise RuntimeError(f"{base} expects a real-valued input tensor, but got {_type_name(x.dtype)}")
    shape, dims, _ = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{base} must transform at least one axis")
    x = _promote(x)
    if x.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_type_name(x.dtype)}")
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, forward)
    if forward:  # rfftn
        return _finish(_C._fft_r2c(x, dims, mode, True), out, fname)
    # ihfftn: a one-sided r2c over the last dim, then the inverse c2c over the others, conjugated
    r = _C._fft_r2c(x, [dims[-1]], mode, True).conj()
    if len(dims) > 1:
        r = _C._fft_c2c(r, dims[:-1], mode, False)
    return _finish(r, out, fname)


def _c2r_nd(x, s, dim, norm, forward, fname, out):
    x = _input(x, fname)
    shape, dims, s_given = _shape_and_dims(x, s, dim, fname)
    if not dims:
        raise RuntimeError(f"{fname.replace('2', 'n')} must transform at least one axis")
    x = _promote(x, require_complex=True)
    last = dims[-1]
    if s_given is not None and s_given[-1] != -1:
        n = shape[-1]
    else:
        n = 2 * (x.shape[last] - 1)
    _check_points(n)
    shape[-1] = n // 2 + 1
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, forward)
    if not forward:  # irfftn
        return _finish(_C._fft_c2r(x, dims, mode, n), out, fname)
    # hfftn: the forward c2c over all but the last dim, then c2r of the conjugate over the last
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], mode, True)
    return _finish(_C._fft_c2r(x.conj(), [last], mode, n), out, fname)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional discrete Fourier transform over dim (default: all dims, or the last len(s))."""
    return _c2c_nd(input, s, dim, norm, True, "fftn", out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse discrete Fourier transform."""
    return _c2c_nd(input, s, dim, norm, False, "ifftn", out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional transform of real input; the last transformed dim keeps s[-1] // 2 + 1 values."""
    return _r2c_nd(input, s, dim, norm, True, "rfftn", out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional inverse of hfftn: one-sided inverse transform of real input."""
    return _r2c_nd(input, s, dim, norm, False, "ihfftn", out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of rfftn: a real result, s[-1] (default 2 * (m - 1)) long in the last transformed dim."""
    return _c2r_nd(input, s, dim, norm, False, "irfftn", out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional transform of a Hermitian signal given by its one-sided half: a real result."""
    return _c2r_nd(input, s, dim, norm, True, "hfftn", out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional discrete Fourier transform (fftn over dim, the last two dims by default)."""
    return _c2c_nd(input, s, dim, norm, True, "fft2", out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional inverse discrete Fourier transform."""
    return _c2c_nd(input, s, dim, norm, False, "ifft2", out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional transform of real input (rfftn over dim)."""
    return _r2c_nd(input, s, dim, norm, True, "rfft2", out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of rfft2."""
    return _c2r_nd(input, s, dim, norm, False, "irfft2", out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional transform of a Hermitian signal (hfftn over dim)."""
    return _c2r_nd(input, s, dim, norm, True, "hfft2", out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of hfft2."""
    return _r2c_nd(input, s, dim, norm, False, "ihfft2", out)


# ---- helpers ----

def _freq_dtype(dtype, fname):
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    return dtype


def _freq_scale(n, d):
    nd = n * d
    if nd == 0:  # n or d is 0: as C++'s 1.0 / 0.0
        return _math.copysign(_math.inf, nd) if isinstance(nd, float) else _math.inf
    return 1.0 / nd


def _on_device(t, device):
    """Factories take device= as torch's: CPU, or ember's error for a device it lacks."""
    return t if device is None else t.to(device)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies of an n-point transform with sample spacing d:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    n = _int_arg(n, "fftfreq", "n")
    dtype = _freq_dtype(dtype, "fftfreq")
    if n < 0:
        ember.empty(n)  # torch's "Trying to create tensor with negative dimension" error
    r = ember.cat([ember.arange(0, (n + 1) // 2, dtype=dtype), ember.arange(-(n // 2), 0, dtype=dtype)])
    r = _on_device(r * _freq_scale(n, d), device)
    r = _finish(r, out, "fftfreq")
    return r.requires_grad_(requires_grad) if requires_grad else r


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies of rfft's result for an n-point signal: [0, 1, ..., n // 2] / (d * n)."""
    n = _int_arg(n, "rfftfreq", "n")
    dtype = _freq_dtype(dtype, "rfftfreq")
    if n < 0:
        ember.empty(n)
    r = ember.arange(0, n // 2 + 1, dtype=dtype) * _freq_scale(n, d)  # n = 0: [nan], as torch
    r = _finish(_on_device(r, device), out, "rfftfreq")
    return r.requires_grad_(requires_grad) if requires_grad else r


def _shift(x, dim, fname, inverse):
    x = _input(x, fname)
    dims = list(range(x.dim())) if dim is None else [_wrap(d, x.dim()) for d in _ints_arg(dim, fname, "dim")]
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return ember.roll(x, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero-frequency term to the centre of dim (all dims by default)."""
    return _shift(input, dim, "fftshift", False)


def ifftshift(input, dim=None):
    """Inverse of fftshift."""
    return _shift(input, dim, "ifftshift", True)
