"""torch.special's orthogonal polynomials (Note [Orthogonal polynomials], ops/polynomials.cpp) against
torch 2.13: every family and its shifted forms over degrees 0-30 (and torch's truncation of
non-integer, negative and non-finite degrees), float32/float64, broadcasting and type promotion of
x and n, out=, no graph, and torch's errors."""
import numpy as np
import pytest

import ember
from conftest import torch

FAMILIES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
            "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
            "legendre_polynomial_p", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
            "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"]
DEGREES = [0, 1, 2, 3, 4, 5, 7, 9, 12, 20, 30, -1, -0.5, 0.9, 3.5, float("nan"), float("inf"), -float("inf")]
# ±1 and 0 are where torch's closed forms take over; inf too. (NaN x: torch's vectorized loop
# returns a neighbour's value for some families; ember gives NaN, checked separately.)
XS = np.concatenate([np.linspace(-3, 3, 61), [1.0, -1.0, 0.0, 0.5, -0.5, 1e-3, np.inf, -np.inf]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FAMILIES)
def test_matches_torch(name, dtype):
    rtol = 2e-4 if dtype == "float32" else 1e-9
    x = XS.astype(dtype)
    for n in DEGREES:
        t = getattr(torch.special, name)(torch.tensor(x), n).numpy()
        e = getattr(ember.special, name)(ember.tensor(x), n)
        assert e.dtype == getattr(ember, dtype) and not e.requires_grad
        e = e.numpy()
        finite = np.isfinite(t)
        scale = max(1.0, float(np.abs(t[finite]).max())) if finite.any() else 1.0
        # at the largest degrees float32 rounding in torch's own recurrence dominates
        np.testing.assert_allclose(e, t, rtol=rtol, atol=rtol * scale * (1 if abs(n) < 20 else 50),
                                   err_msg=f"{name} n={n}")


@pytest.mark.parametrize("name", FAMILIES[:8])
def test_nan_input_and_degree_tensor(name):
    f = getattr(ember.special, name)
    out = f(ember.tensor([float("nan")] * 3, dtype=ember.float64), ember.tensor([0.0, 1.0, 4.0], dtype=ember.float64))
    assert out[0].item() == 1.0 and np.isnan(out[1:].numpy()).all()
    # n as a tensor broadcast against x, degrees mixed within one vector group
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.5, 1.5, (5, 1))
    n = np.array([0, 6, 1, 3, 11, 2, 9, 4, 7])
    t = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    e = f(ember.tensor(x), ember.tensor(n)).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10 * max(1.0, float(np.abs(t).max())))


def test_promotion_scalars_out_and_layouts():
    for lib in (torch, ember):
        assert str(lib.special.chebyshev_polynomial_t(lib.tensor([1, 2]), 3).dtype).endswith("float32")
        assert str(lib.special.hermite_polynomial_h(lib.tensor([1, 2]), lib.tensor([2, 3])).dtype).endswith("float32")
        assert str(lib.special.legendre_polynomial_p(lib.tensor([0.5], dtype=lib.float64), 2).dtype).endswith("float64")
    np.testing.assert_allclose(ember.special.hermite_polynomial_h(ember.tensor([1, 2]), ember.tensor([2, 3])).numpy(),
                               [2.0, 40.0])
    np.testing.assert_allclose(ember.special.chebyshev_polynomial_t(0.5, ember.tensor([0, 1, 2, 3])).numpy(),
                               torch.special.chebyshev_polynomial_t(0.5, torch.tensor([0, 1, 2, 3])).numpy())
    x = ember.tensor(np.linspace(-1, 1, 24).reshape(4, 6)).t()  # non-contiguous
    out = ember.empty(6, 4, dtype=ember.float64)
    r = ember.special.legendre_polynomial_p(x, 5, out=out)
    assert r is out
    ref = torch.special.legendre_polynomial_p(torch.tensor(np.linspace(-1, 1, 24).reshape(4, 6)).t(), 5)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12, atol=1e-14)
    xg = ember.randn(5, requires_grad=True)
    assert not ember.special.hermite_polynomial_he(xg, 3).requires_grad  # no graph, as torch's
    empty = ember.special.laguerre_polynomial_l(ember.zeros(0, 3), 4)
    assert tuple(empty.shape) == (0, 3)


def test_errors_as_torch():
    for lib in (torch, ember):
        with pytest.raises(NotImplementedError):
            lib.special.chebyshev_polynomial_t(lib.zeros(3, dtype=lib.float16), 2)
        with pytest.raises(NotImplementedError):
            lib.special.hermite_polynomial_h(lib.zeros(3, dtype=lib.complex64), 2)
        with pytest.raises(RuntimeError):
            lib.special.legendre_polynomial_p(lib.zeros(3), lib.zeros(4))  # shapes do not broadcast
    with pytest.raises(RuntimeError):
        ember._C._orthogonal_polynomial("legendre_polynomial_p", ember.zeros(3), ember.zeros(4))
    with pytest.raises(ValueError):
        ember._C._orthogonal_polynomial("nope", ember.zeros(3), ember.zeros(3))


def test_threads_give_the_same_bits():
    x = ember.randn(100003, dtype=ember.float64)
    n = ember.randint(0, 15, (100003,)).double()
    before = ember.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            ember.set_num_threads(threads)
            outs.append(ember.special.chebyshev_polynomial_u(x, n).numpy())
    finally:
        ember.set_num_threads(before)
    assert np.array_equal(outs[0], outs[1])
