"""Op table rows for the unary family, activations and the pointwise binary/ternary ops.

Every row lists ALL dtypes: where torch rejects a dtype, the generic test checks that ember raises
the same exception type, so dtype support is tested both ways.
"""
import math

from op_db import ALL, COMPLEX, FLOATS, OpInfo, Sample, binary_samples, make_tensor, unary_samples

ALL = ALL + COMPLEX  # torch's support (or its error) is checked for complex too
# Holomorphic ops (and abs, sgn, softsign) whose complex gradients are checked in complex128 too.
_COMPLEX_GRAD = {"abs", "sgn", "positive", "F.softsign", "F.tanhshrink", "square", "exp", "exp2", "expm1", "log",
                 "log2", "log10", "log1p", "sqrt", "rsqrt",
                 "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                 "acosh", "atanh", "sigmoid"}


def _unary(name, low=None, high=None, call=None, extra=None, **kw):
    """A unary row: the standard layouts over [low, high), plus `extra(dtype)` samples."""
    def samples(dt):
        lo, hi = low, high
        if dt not in FLOATS and dt not in COMPLEX and low is not None:  # integer draws: keep a non-empty range
            lo, hi = math.floor(low), max(math.ceil(high), math.floor(low) + 1)
        return unary_samples(dt, lo, hi) + (extra(dt) if extra else [])
    if name in _COMPLEX_GRAD:
        kw.setdefault("grad_dtypes", ("float64", "complex128"))
    return OpInfo(name, call=call, samples=samples, dtypes=kw.pop("dtypes", ALL), domain=(low, high), **kw)


def _functional(name, low=None, high=None, extra=None, **kw):
    """A torch.nn.functional activation, called as lib.nn.functional.<name>(x, **kwargs)."""
    call = lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)  # noqa: E731
    return _unary(f"F.{name}", low, high, call=call, extra=extra, method=False, **kw)


def _kw(**kwargs):
    """Extra samples: a 2-d tensor with the given keyword arguments."""
    def extra(dt):
        return [Sample(f"kw_{k}", make_tensor((4, 5), dt, 11), **{k: v}) for k, v in kwargs.items()]
    return extra


def _binary(name, low=None, high=None, other_low=None, other_high=None, numbers=True, **kw):
    """A binary row; numbers=False: torch has no Python-number `other` (test_unary.py checks the TypeError)."""
    def samples(dt):
        s = binary_samples(dt, low, high, other_low, other_high)
        return s if numbers else [x for x in s if x.name != "python_scalar"]
    return OpInfo(name, samples=samples, dtypes=kw.pop("dtypes", ALL), **kw)


_BOOL_OUT = dict(grad=False)

UNARY = [
    # sgn: real gradients are 0 (torch's has no storage to compare with), complex ones are checked.
    _unary("abs"), _unary("sign"), _unary("sgn", grad_dtypes=("complex128",)), _unary("square"), _unary("positive"),
    _unary("exp"), _unary("exp2"), _unary("expm1"),
    _unary("log", 0.1, 10), _unary("log2", 0.1, 10), _unary("log10", 0.1, 10), _unary("log1p", -0.9, 10),
    _unary("sqrt", 0.1, 10), _unary("rsqrt", 0.1, 10), _unary("reciprocal", 0.5, 3),
    _unary("sin"), _unary("cos"), _unary("tan", -1.2, 1.2),
    _unary("asin", -0.9, 0.9), _unary("acos", -0.9, 0.9), _unary("atan"),
    _unary("sinh"), _unary("cosh"), _unary("tanh"),
    _unary("asinh"), _unary("acosh", 1.1, 5), _unary("atanh", -0.9, 0.9),
    _unary("sigmoid"), _unary("logit", 0.05, 0.95, extra=lambda dt: [
        Sample("eps", make_tensor((4, 5), dt, 12, 0.0, 1.0), eps=0.2)]),
    _unary("erf"), _unary("erfc"), _unary("erfinv", -0.9, 0.9),
    _unary("lgamma", 0.1, 5),
    # torch's trigamma (digamma's derivative) is good to ~1e-9 only: test_unary.py checks it against scipy.
    _unary("digamma", 0.1, 5, grad_rtol=1e-8),
    *[_unary(f"polygamma_{n}", 0.1, 5, call=lambda lib, x, n=n: lib.polygamma(n, x), method=False,
             grad_rtol=1e-8 if n == 0 else None, tol_per_dtype={"float64": 1e-8} if n == 1 else None)
      for n in range(5)],
    _unary("polygamma_method", 0.1, 5, call=lambda lib, x: x.polygamma(3), method=False),
    _unary("special.polygamma", -3, 5, call=lambda lib, x: lib.special.polygamma(2, x), method=False),
    _unary("floor"), _unary("ceil"), _unary("trunc"), _unary("frac"),
    _unary("round", extra=_kw(decimals=2)),
    _unary("round_neg_decimals", call=lambda lib, x: lib.round(x * 100, decimals=-1)),
    _unary("nan_to_num", extra=lambda dt: [Sample("args", make_tensor((3,), dt, 13), nan=1.0, posinf=2.0,
                                                  neginf=-2.0)]),
    _unary("isnan", **_BOOL_OUT), _unary("isinf", **_BOOL_OUT), _unary("isfinite", **_BOOL_OUT),
    _unary("isposinf", **_BOOL_OUT), _unary("isneginf", **_BOOL_OUT), _unary("signbit", **_BOOL_OUT),
    _unary("logical_not", **_BOOL_OUT), _unary("bitwise_not", **_BOOL_OUT),
    _unary("selu"), _unary("celu", extra=_kw(alpha=0.5)), _unary("threshold", call=lambda lib, x: lib.threshold(x, 0.5, -2)),
    _unary("clamp", call=lambda lib, x: lib.clamp(x, -1, 2)),
    _unary("clamp_min", call=lambda lib, x: lib.clamp_min(x, 0.5)),
    _unary("clamp_max", call=lambda lib, x: lib.clamp(x, max=1)),
    _unary("clip", call=lambda lib, x: lib.clip(x, 0.5, 1.5)),
]

ACTIVATIONS = [
    _functional("relu"), _functional("relu6", -8, 8), _functional("leaky_relu", extra=_kw(negative_slope=0.2)),
    _functional("elu", extra=_kw(alpha=0.5)), _functional("selu"), _functional("celu", extra=_kw(alpha=2.0)),
    _functional("gelu", -5, 5, extra=_kw(approximate="tanh")),
    _functional("silu"),  # complex values; torch has no complex gradient for it (it raises, as ember)
    _functional("mish"),
    _functional("softplus", extra=lambda dt: [Sample("beta_threshold", make_tensor((4, 5), dt, 14), beta=2,
                                                     threshold=1.5)]),
    _functional("softsign"), _functional("hardtanh", extra=lambda dt: [
        Sample("bounds", make_tensor((4, 5), dt, 15), min_val=-0.5, max_val=2.0)]),
    _functional("hardsigmoid", -5, 5, grad_rtol=1e-7),  # torch's gradient uses a float 1/6: test_unary.py
    _functional("hardswish", -5, 5), _functional("logsigmoid"),
    OpInfo("F.threshold", call=lambda lib, x: lib.nn.functional.threshold(x, 0.5, 2.0),
           samples=lambda dt: unary_samples(dt), dtypes=ALL, method=False),
    _functional("tanhshrink"),
]

BINARY = [
    _binary("atan2", numbers=False), _binary("maximum", numbers=False), _binary("minimum", numbers=False),
    _binary("fmax", numbers=False), _binary("fmin", numbers=False), _binary("hypot", numbers=False),
    _binary("copysign"),
    _binary("fmod", other_low=1, other_high=5),
    _binary("logical_and", numbers=False, grad=False), _binary("logical_or", numbers=False, grad=False),
    _binary("logical_xor", numbers=False, grad=False),
    _binary("bitwise_and", grad=False), _binary("bitwise_or", grad=False), _binary("bitwise_xor", grad=False),
    _binary("bitwise_left_shift", grad=False), _binary("bitwise_right_shift", grad=False),
    _binary("isclose", numbers=False, grad=False),
    # Values only: the gradient exists for the second argument alone (both libraries raise for the
    # first), which the generic gradient tests cannot express; test_distributions.py gradchecks it.
    _binary("igamma", 0.1, 6, 0.1, 6, numbers=False, dtypes=FLOATS, grad=False),
    _binary("igammac", 0.1, 6, 0.1, 6, numbers=False, dtypes=FLOATS, grad=False),
    OpInfo("isclose_tol", call=lambda lib, a, b: lib.isclose(a, b, rtol=0.5, atol=0.5, equal_nan=True),
           samples=lambda dt: binary_samples(dt)[:4], dtypes=ALL, grad=False),
]


def _ternary_samples(dt, low=None, high=None, low3=None, high3=None):
    mk = lambda shape, seed, lo=low, hi=high: make_tensor(shape, dt, seed, lo, hi)  # noqa: E731
    return [
        Sample("same", mk((3, 4), 1), mk((3, 4), 2), mk((3, 4), 3, low3, high3)),
        Sample("broadcast", mk((3, 1), 4), mk((4,), 5), mk((3, 4), 6, low3, high3)),
        Sample("0d", mk((), 7), mk((3,), 8), mk((), 9, low3, high3)),
        Sample("transposed", mk((4, 3), 10).t(), mk((3, 4), 11), mk((4, 3), 12, low3, high3).t()),
        Sample("empty", mk((0, 3), 13), mk((3,), 14), mk((0, 3), 15, low3, high3)),
    ]


def _where_samples(dt):
    cond = lambda shape, seed: make_tensor(shape, "bool", seed)  # noqa: E731
    mk = lambda shape, seed: make_tensor(shape, dt, seed)  # noqa: E731
    return [
        Sample("same", cond((3, 4), 1), mk((3, 4), 2), mk((3, 4), 3)),
        Sample("broadcast", cond((3, 1), 4), mk((4,), 5), mk((3, 4), 6)),
        Sample("scalar_other", cond((3, 4), 7), mk((3, 4), 8), 2),
        Sample("scalar_both", cond((5,), 9), 1.5, 0),
        Sample("transposed", cond((4, 3), 10).t(), mk((4, 3), 11).t(), mk((3, 4), 12)),
    ]


TERNARY = [
    OpInfo("lerp", samples=lambda dt: _ternary_samples(dt, -2, 2, 0, 1)
           + [Sample("scalar_weight", make_tensor((3, 4), dt, 20), make_tensor((3, 4), dt, 21), 0.7)],
           dtypes=ALL, grad_dtypes=("float64", "complex128")),
    OpInfo("addcmul", samples=lambda dt: _ternary_samples(dt)
           + [Sample("value", make_tensor((3, 4), dt, 22), make_tensor((4,), dt, 23), make_tensor((3, 4), dt, 24),
                     value=2)], dtypes=ALL, grad_dtypes=("float64", "complex128")),
    OpInfo("addcdiv", samples=lambda dt: _ternary_samples(dt, low3=1, high3=3)
           + [Sample("value", make_tensor((3, 4), dt, 25), make_tensor((4,), dt, 26),
                     make_tensor((3, 4), dt, 27, 1, 3), value=-0.5)], dtypes=ALL, grad_dtypes=("float64", "complex128")),
    # (torch's clamp backward fails when self broadcasts against the bounds: no "0d" self here)
    OpInfo("clamp_tensor", call=lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
           samples=lambda dt: [x for x in _ternary_samples(dt) if x.name != "0d"]
           + [Sample("0d_bounds", make_tensor((3, 4), dt, 30), make_tensor((), dt, 31), make_tensor((), dt, 32))],
           dtypes=ALL),
    OpInfo("clamp_min_tensor", call=lambda lib, x, lo: lib.clamp(x, min=lo),
           samples=lambda dt: [Sample(s.name, *s.args[:2]) for s in _ternary_samples(dt)], dtypes=ALL),
    OpInfo("clamp_max_tensor", call=lambda lib, x, hi: lib.clamp_max(x, hi),
           samples=lambda dt: [Sample(s.name, *s.args[:2]) for s in _ternary_samples(dt)], dtypes=ALL),
    # grad=False: the bool condition cannot require grad; test_unary.py checks where's gradients.
    OpInfo("where", samples=_where_samples, dtypes=ALL, grad=False),
]

OPS = UNARY + ACTIVATIONS + BINARY + TERNARY
