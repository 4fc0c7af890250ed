"""Shared helpers: build the same tensor in ember and torch, compare results."""
import math

import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


def both(data, dtype):
    """The same values as an (ember, torch) pair; data is a nested list."""
    t = torch.tensor(data, dtype=getattr(torch, dtype))
    e = ember.tensor(t.tolist(), dtype=getattr(ember, dtype))
    return e, t


def dtype_name(dt):
    return str(dt).split(".")[-1]


def assert_same(e, t, rtol=None, atol=None, check_stride=False):
    """ember result `e` equals torch result `t`: dtype, shape, values (nan-aware)."""
    assert dtype_name(e.dtype) == dtype_name(t.dtype), f"dtype {e.dtype} vs {t.dtype}"
    assert tuple(e.shape) == tuple(t.shape), f"shape {tuple(e.shape)} vs {tuple(t.shape)}"
    if check_stride:
        assert e.stride() == t.stride()
    ev, tv = e.tolist(), t.tolist()
    if rtol is None:
        rtol = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5,
                "complex128": 1e-12}.get(dtype_name(t.dtype), 0)
    if atol is None:
        atol = rtol
    _cmp(ev, tv, rtol, atol)


def _cmp(a, b, rtol, atol):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _cmp(x, y, rtol, atol)
        return
    if isinstance(b, complex):  # nan/inf part by part, otherwise relative to |b|
        assert isinstance(a, complex), f"{a} vs {b}"
        if not (math.isfinite(b.real) and math.isfinite(b.imag)):
            _cmp(a.real, b.real, rtol, atol)
            _cmp(a.imag, b.imag, rtol, atol)
            return
        assert abs(a - b) <= atol + rtol * abs(b), f"{a} vs {b}"
        return
    if isinstance(b, float):
        if math.isnan(b):
            assert math.isnan(a), f"{a} vs nan"
            return
        if math.isinf(b):
            assert a == b, f"{a} vs {b}"
            return
        assert abs(a - b) <= atol + rtol * abs(b), f"{a} vs {b}"
    else:
        assert a == b, f"{a} vs {b}"


def same_error(fn_e, fn_t):
    """Both calls raise, and with the same exception type."""
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(Exception) as ee:
        fn_e()
    assert type(ee.value) is type(te.value), f"ember raised {type(ee.value).__name__}: {ee.value}; " \
        f"torch raised {type(te.value).__name__}: {te.value}"


def pytest_terminal_summary(terminalreporter):
    """Says how many op-table rows the gradgradcheck covers when test_ops.py ran."""
    import sys
    mod = sys.modules.get("test_ops")
    if mod is not None and hasattr(mod, "gradgrad_summary"):
        terminalreporter.write_line(mod.gradgrad_summary())
