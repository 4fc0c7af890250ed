"""Window functions of length M (ember.signal.windows). sym=True gives the symmetric window used in
filter design; sym=False the periodic one for spectral analysis (the first M points of the
symmetric window of M + 1). Values are computed in float64 and rounded to the requested dtype."""
import math
import operator

import ember
from ember._spectral import _kaiser
from ember.fft import _on_device


def _check(name, M, dtype, layout):
    if isinstance(M, (bool, float)) or not hasattr(M, "__index__"):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    M = operator.index(M)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout != getattr(ember, "strided", layout):
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = ember.get_default_dtype() if dtype is None else dtype
    if dtype not in (ember.float32, ember.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return M, dtype


def _short(M, dtype, requires_grad, device=None):
    """The windows of length 0 and 1 (empty, and [1])."""
    w = _on_device(ember.ones(M, dtype=dtype), device)
    return w.requires_grad_() if requires_grad else w


def _done(w, dtype, requires_grad, device=None):
    w = _on_device(w.to(dtype), device)
    return w.requires_grad_() if requires_grad else w


def _positions(M, sym):
    """(n, span): float64 positions 0 .. M - 1 and the span of the symmetric window they sample."""
    return ember.arange(M, dtype=ember.float64), (M - 1 if sym else M)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Cosine (sine) window: sin(pi (n + 1/2) / M)."""
    M, dtype = _check("cosine", M, dtype, layout)
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    return _done(ember.sin((n + 0.5) * (math.pi / (span + 1))), dtype, requires_grad, device)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Exponential (Poisson) window: exp(-|n - center| / tau); center defaults to the middle."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    M, dtype = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    c = span / 2.0 if center is None else center
    return _done(ember.exp(-ember.abs(n - c) / tau), dtype, requires_grad, device)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Gaussian window: exp(-(n - c)^2 / (2 std^2)) around the middle c."""
    M, dtype = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    d = n - span / 2.0
    return _done(ember.exp(-(d * d) / (2.0 * std * std)), dtype, requires_grad, device)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Kaiser window: I0(beta sqrt(1 - (2 n / span - 1)^2)) / I0(beta)."""
    M, dtype = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    return _done(_kaiser(n, span, beta), dtype, requires_grad, device)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Sum of cosines: sum_k (-1)^k a[k] cos(2 pi k n / span)."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    M, dtype = _check("general_cosine", M, dtype, layout)
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    w = ember.zeros(M, dtype=ember.float64)
    for k, c in enumerate(a):
        term = ember.cos(n * (2 * math.pi * k / span)) * c
        w = w + term if k % 2 == 0 else w - term
    return _done(w, dtype, requires_grad, device)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Generalized Hamming window: alpha - (1 - alpha) cos(2 pi n / span)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Hamming window (general_hamming with alpha = 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Hann window (general_hamming with alpha = 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Blackman window (general_cosine with a = [0.42, 0.5, 0.08])."""
    _check("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Bartlett (triangular) window: 1 - |2 n / span - 1|."""
    M, dtype = _check("bartlett", M, dtype, layout)
    if M <= 1:
        return _short(M, dtype, requires_grad, device)
    n, span = _positions(M, sym)
    return _done(1 - ember.abs(n * (2.0 / span) - 1), dtype, requires_grad, device)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall window (the minimum 4-term Blackman-Harris coefficients)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
