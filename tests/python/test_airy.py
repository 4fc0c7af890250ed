"""special.airy_ai against an mpmath reference and against torch (values, dtypes, non-finite inputs, errors)."""
import math

import pytest

import ember
from conftest import torch


def E(t):
    return ember.from_dlpack(t.contiguous()).clone()


def T(e):
    return torch.from_dlpack(e.contiguous())


def _envelope(x, ref):
    """The size Ai oscillates within for x < 0 (|x|^-1/4 / sqrt(pi)); |Ai| itself for x >= 0."""
    return torch.where(x < 0, x.abs().clamp_min(1) ** -0.25 / math.sqrt(math.pi), ref.abs())


X = torch.linspace(-50, 50, 2001, dtype=torch.float64)


def test_airy_ai_float64_matches_mpmath_to_rounding():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    ref = torch.tensor([float(mpmath.airyai(v)) for v in X.tolist()], dtype=torch.float64)
    got = T(ember.special.airy_ai(E(X)))
    assert ((got - ref).abs() / _envelope(X, ref)).max() < 1e-13


def test_airy_ai_float64_matches_torch():
    got, exp = T(ember.special.airy_ai(E(X))), torch.special.airy_ai(X)
    err = (got - exp).abs() / _envelope(X, exp)
    # torch's rational approximations near the switch to its asymptotic form (-4.7 < x < -2.09) are good to
    # ~6e-6 of the amplitude (ours are within 1e-13 of mpmath there, see above); elsewhere both agree closely
    near = (X > -4.7) & (X < -2.09)
    assert err[~near].max() < 1e-12
    assert err[near].max() < 1e-5


def test_airy_ai_large_and_non_finite_arguments():
    x = torch.tensor([-1e20, -1e10, -1e5, -1000.0, -50.5, 60.0, 100.0, 1e10, 1e300, -1e300, math.inf, -math.inf,
                      math.nan, 0.0, -0.0], dtype=torch.float64)
    got, exp = T(ember.special.airy_ai(E(x))), torch.special.airy_ai(x)
    torch.testing.assert_close(got, exp, rtol=1e-12, atol=0, equal_nan=True)


def test_airy_ai_float32_and_dtypes():
    x = X.float()
    got, exp = ember.special.airy_ai(E(x)), torch.special.airy_ai(x)
    assert got.dtype == ember.float32
    # torch computes in float: its own error is up to ~2e-5 of the amplitude
    assert ((T(got).double() - exp.double()).abs() / _envelope(X, exp.double()).clamp_min(1e-30))[X < 10].max() < 5e-5
    for dt in ("int64", "int32", "bool", "uint8"):
        xi = torch.tensor([0, 1, 1], dtype=getattr(torch, dt))
        g = ember.special.airy_ai(E(xi))
        assert g.dtype == ember.float32
        torch.testing.assert_close(T(g), torch.special.airy_ai(xi))
    assert tuple(ember.special.airy_ai(ember.zeros(0, 3)).shape) == (0, 3)
    o = ember.empty(2)
    r = ember.special.airy_ai(ember.ones(2), out=o)
    assert r is o
    torch.testing.assert_close(T(o), torch.special.airy_ai(torch.ones(2)))


def test_airy_ai_has_no_gradient_like_torch():
    t = torch.tensor([1.0], requires_grad=True)
    assert torch.special.airy_ai(t).grad_fn is None
    e = ember.tensor([1.0], requires_grad=True)
    y = ember.special.airy_ai(e)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2, dtype=lib.float16),
                                  lambda lib: lib.ones(2, dtype=lib.bfloat16),
                                  lambda lib: lib.ones(2, dtype=lib.complex64), lambda lib: 1.0])
def test_airy_ai_errors_match_torch(make):
    with pytest.raises(Exception) as te:
        torch.special.airy_ai(make(torch))
    with pytest.raises(Exception) as ee:
        ember.special.airy_ai(make(ember))
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


def test_airy_ai_under_vmap_has_no_fallback():
    from ember._functorch import batched
    x = torch.linspace(-20, 20, 12, dtype=torch.float64).reshape(3, 4)
    batched.fallback_counts.clear()
    got = ember.vmap(ember.special.airy_ai, in_dims=1)(E(x))
    assert batched.fallback_counts == {}
    torch.testing.assert_close(T(got), torch.special.airy_ai(x).T, rtol=1e-12, atol=1e-14)
