"""torch.pdist (Note [pdist], ops/distance.cpp) against torch: every norm, short and long rows, layouts,
gradients, the missing second derivative, thread counts and errors."""
import math

import numpy as np
import pytest

import ember
from conftest import torch

NORMS = [0.0, 1.0, 2.0, 3.0, math.inf, 0.5]


def E(t):
    return ember.from_numpy(t.detach().numpy().copy())


@pytest.mark.parametrize("p", NORMS)
@pytest.mark.parametrize("shape", [(7, 5), (33, 64), (12, 129), (5, 300), (2, 1), (1, 4), (0, 3), (4, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_match_torch(p, shape, dtype):
    g = torch.Generator().manual_seed(shape[0] * 1000 + shape[1])
    x = torch.randn(*shape, dtype=getattr(torch, dtype), generator=g)
    if shape[0] > 3:
        x[3] = x[1]  # a pair at distance 0 (gradient 0 there, as torch)
        x[2, :1] = x[0, :1]  # equal coordinates (p < 1, inf)
    xt, xe = x.clone().requires_grad_(), E(x).requires_grad_()
    yt, ye = torch.pdist(xt, p), ember.pdist(xe, p)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    assert tuple(ye.shape) == tuple(yt.shape) and ye.dtype == getattr(ember, dtype)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=rtol)
    if yt.numel() == 0:
        return
    gy = torch.randn(yt.shape, dtype=yt.dtype, generator=g)
    yt.backward(gy)
    ye.backward(E(gy))
    assert ye.grad_fn.name() == "PdistBackward0"
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=rtol * 10, atol=rtol * 10)


def test_non_contiguous_input_and_functional_form():
    x = torch.randn(9, 6, dtype=torch.float64)
    e = E(x)
    np.testing.assert_allclose(ember.pdist(e.t().contiguous().t()).numpy(), torch.pdist(x).numpy(), rtol=1e-14)
    np.testing.assert_allclose(ember.pdist(e[::2]).numpy(), torch.pdist(x[::2]).numpy(), rtol=1e-14)
    np.testing.assert_allclose(ember.nn.functional.pdist(e, 1.5).numpy(), torch.pdist(x, 1.5).numpy(), rtol=1e-13)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_gradcheck(p):
    x = ember.randn(5, 4, dtype=ember.float64, generator=ember.Generator().manual_seed(1)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: ember.pdist(t, p), (x,))


def test_second_derivative_raises_as_torch():
    """torch has no second derivative of pdist: the gradient taken with create_graph carries a history
    that raises NotImplementedError when differentiated (not a silent zero)."""
    for lib in (torch, ember):
        x = lib.tensor([[0.0, 1.0], [2.0, 0.5], [1.0, 1.0]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.pdist(x).sum(), x, create_graph=True)
        with pytest.raises(NotImplementedError, match="_pdist_backward"):
            g.sum().backward()


def test_same_bits_for_any_thread_count():
    x = E(torch.randn(300, 40))
    before = ember.get_num_threads()
    try:
        outs = []
        for n in (1, 2):
            ember.set_num_threads(n)
            xe = x.clone().requires_grad_()
            y = ember.pdist(xe)
            y.sum().backward()
            outs.append(y.detach().numpy().tobytes() + xe.grad.numpy().tobytes())
        assert outs[0] == outs[1]
    finally:
        ember.set_num_threads(before)


@pytest.mark.parametrize("make", [
    lambda lib: lib.pdist(lib.ones(3)),
    lambda lib: lib.pdist(lib.ones(2, 3, 4)),
    lambda lib: lib.pdist(lib.ones(2, 3), -1),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.float16)),
    lambda lib: lib.pdist(lib.ones(2, 3, dtype=lib.bfloat16)),
])
def test_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(Exception) as got:
        make(ember)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value)
